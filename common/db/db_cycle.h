/* db_cycle: runs, targets, campaigns and cycles: a daemon's start and
 * stop, a target's row, where a target continues after a (re)start and
 * whether its campaign is complete, a cycle's rows and the action
 * between cycles. States come in as enums and are stored as text. */
#ifndef WEARMON_DB_CYCLE_H
#define WEARMON_DB_CYCLE_H

#include <stdint.h>

#include "config/names.h"

struct db;

struct db_target_info {
	const char *name;
	const char *device;
	enum tgt_kind kind;
	uint64_t capacity_bytes;
	uint32_t logical_block_size;
	const char *serial;       /* may be NULL */
	const char *model;        /* may be NULL */
	const char *firmware;     /* may be NULL */
	const char *backing_file; /* loop devices; may be NULL */
	/* the file behind the target (a file target's own, a loop device's
	 * backing file): device number and inode; ino 0: none (NULL) */
	uint64_t backing_dev, backing_ino;
};

/* State of a cycle or an iteration row, stored as text (db_status_name). */
enum db_status { DB_RUNNING, DB_DONE, DB_INTERRUPTED, DB_FAILED, DB_STATUS__COUNT };

/* Where a target continues after a (re)start. */
struct db_resume {
	int resume;                /* 1: an unfinished cycle continues */
	int64_t cycle_id;          /* when resume */
	long cycle_number;         /* cycle to continue, or the next new one */
	int next_size_index;       /* first size not measured (when resume) */
	long next_iteration;       /* iteration number to use next */
	long campaign_first_cycle; /* first cycle of the current campaign */
	long campaign_cycles_done; /* cycles finished since then */
	long interrupted_marked;   /* 'running' rows turned 'interrupted' */
	int campaign_complete;     /* 1: the campaign has its cycles; start none */
	int campaign_new;          /* 1: a new campaign begins at cycle_number */
	char changed[256];         /* campaign keys that changed (when that began it) */
	long action_crashed;       /* cycle whose action a crash cut short, now
					 closed as 'interrupted' (not run again); 0 */
	long action_closed;        /* cycle whose action had ended but not the
					 cycle, now closed; 0 */
	int action_closed_done;    /* that cycle closed as done (else failed) */
};

/* What a start asks of a target's campaign (db_resume_point). */
struct db_campaign_req {
	long cycles;      /* configured cycles, 0 = forever */
	const char *key;  /* cfg_campaign_key() of the configuration */
	int new_campaign; /* the operator asked for a new campaign */
	int peek;         /* decide only and write nothing (wearmond --check):
			     works on a database opened read-only */
};

/* An action between cycles. */
struct db_action {
	enum cfg_action kind; /* stored as cfg_action_name() */
	char started_at[32];
	double seconds;
	uint64_t bytes;
	enum act_outcome outcome; /* stored as act_outcome_name() */
	const char *error;        /* NULL when none */
};

/* Record a daemon start. Returns 0 or -errno. */
int db_run_begin(struct db *db, const char *config_path, int64_t *run_id);

/* Store on the run what it was started with: the resolved configuration
 * text (every key's effective value) and the kernel it runs on (uname).
 * Returns 0 or -errno. */
int db_run_config(struct db *db, int64_t run_id, const char *config_text);

/* Record a daemon stop. Returns 0 or -errno. */
int db_run_end(struct db *db, int64_t run_id, int exit_status, const char *reason);

/* Insert or update a target by name. Returns 0 or -errno. */
int db_target_upsert(struct db *db, const struct db_target_info *t, int64_t *target_id);

/* Find where target continues (common/db/schema.md, "Resume and campaigns"):
 * marks stale 'running' iterations interrupted, closes the record of an
 * action a crash cut short, and says whether the campaign is complete or a
 * new one begins (req). With req->peek the same decision is made and
 * nothing is written (interrupted_marked then counts the rows a start
 * would mark). Returns 0 or -errno. */
int db_resume_point(struct db *db, int64_t target_id, const struct db_campaign_req *req,
		    struct db_resume *out);

/* The id of the target named name. Returns 0, -ENOENT when the database
 * has no such target, or -errno. Works read-only. */
int db_target_id(struct db *db, const char *name, int64_t *id);

/* Store key as the campaign's keys (a reload changed them). Returns 0 or
 * -errno. */
int db_campaign_key(struct db *db, int64_t target_id, const char *key);

/* Mark the target's campaign complete (targets.campaign_done_at, kept if
 * already set). Returns 0 or -errno. */
int db_campaign_done(struct db *db, int64_t target_id);

/* Start a cycle row (status running). Returns 0 or -errno. */
int db_cycle_begin(struct db *db, int64_t target_id, int64_t run_id, long number,
		   int64_t *cycle_id);

/* Record the plan the cycle runs: nsizes sizes, and cycles configured
 * (0 = forever), so that readers count "size 2 of 3" from it (v19).
 * Returns 0 or -errno. */
int db_cycle_plan(struct db *db, int64_t cycle_id, int nsizes, long cycles);

/* Record that a's action starts (kind and started_at; "" = now), before
 * it runs; clears what an earlier try of it stored. Returns 0 or -errno. */
int db_action_start(struct db *db, int64_t cycle_id, const struct db_action *a);

struct db_wear_state;

/* Record how the action ended (seconds, bytes, outcome, error, and the end
 * time), with the wear state it leaves when wear is not NULL, in one
 * transaction. Returns 0 or -errno (nothing written). */
int db_action_end(struct db *db, int64_t cycle_id, const struct db_action *a,
		  const struct db_wear_state *wear);

/* Close a cycle with status done, interrupted or failed. Returns 0,
 * -EINVAL for another status, or -errno. */
int db_cycle_end(struct db *db, int64_t cycle_id, enum db_status status);

/* Text of a status ("running", "done", "interrupted", "failed"). */
const char *db_status_name(enum db_status s);

#endif
