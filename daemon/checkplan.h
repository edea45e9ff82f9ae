/* checkplan: what `wearmond --check` shows before anything is written: for
 * each target the device and what is on it now, in words what will be
 * destroyed, the region, sizes and phases, the bytes a cycle writes and an
 * estimate of its duration, the action between cycles, the campaign's
 * state in the database, and every refusal with its reason; as text or as
 * one JSON document (daemon/wearmond.8, "CHECK"). Reads only: the devices
 * through blkinfo, the database opened read-only. The figures are computed
 * once here (checkplan_build) and the two printers only format them. */
#ifndef WEARMON_CHECKPLAN_H
#define WEARMON_CHECKPLAN_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daemon.h"
#include "device/blkinfo.h"

/* One step of a size, in the order it runs. */
struct checkplan_step {
	const char *what;    /* "fill", a workload name, "read-back" */
	int is_fill;         /* the sequential fill of the whole size */
	uint32_t block_size; /* bytes (the largest of a mix) */
	unsigned queue_depth;
	uint64_t bytes;   /* bytes one run moves (amount, or the size) */
	uint64_t written; /* of which writes, in all runs */
	int runs;         /* repeat, or max_rounds with steady_state */
	int up_to;        /* 1: runs is a maximum (steady state rounds) */
	double mibps;     /* earlier measured rate, < 0 none */
	long rate_cycle;  /* the cycle that rate comes from */
	double seconds;   /* estimate of all runs, < 0 unknown */
	double cap;       /* duration limit of one run, 0 none */
};

#define CHECKPLAN_MAX_STEPS (CFG_MAX_PHASES + 2)

struct checkplan_size {
	uint64_t bytes;
	struct checkplan_step step[CHECKPLAN_MAX_STEPS];
	int nsteps;
};

/* The campaign as a start would find it (db_resume_point, peeked). */
enum checkplan_state {
	CP_UNKNOWN,      /* the database could not be read */
	CP_NEW,          /* no history of the target */
	CP_NEW_CAMPAIGN, /* a new campaign begins (--new-campaign, keys changed) */
	CP_NEXT_CYCLE,   /* the campaign goes on with a new cycle */
	CP_RESUMES,      /* an unfinished cycle goes on */
	CP_COMPLETE,     /* nothing to run */
	CP__COUNT
};

struct checkplan_target {
	struct sched_target *st;
	int ready;           /* no refusal */
	int is_block;        /* the path is a block device */
	struct blkinfo bi;   /* block devices */
	char contents[1024]; /* blkinfo_describe, or a file's state */
	char destroys[1280]; /* in words */
	char pinned[256];    /* how the target is known again: serial, or what */
	char serial[128], model[128], firmware[64];
	uint64_t capacity;
	int have_plan; /* st->plan holds the layout */
	struct checkplan_size *size;
	int nsizes;
	uint64_t cycle_written, cycle_read;
	double cycle_seconds;  /* estimate, < 0 when a step is unknown */
	double known_seconds;  /* sum of the steps that have one */
	int unknown_steps;     /* steps without an earlier rate */
	double measured_bound; /* with duration: most time of the measured runs */
	enum checkplan_state state;
	struct db_resume res;
	int64_t target_id; /* in the database, 0: none */
	char state_text[768];
};

struct checkplan {
	const char *config;   /* the -c path */
	const struct cfg *c;  /* NULL when the configuration was refused */
	pid_t holder;         /* the wearmond running the database, 0 */
	const char *refusals; /* every refusal logged, one a line; NULL none */
	int db_exists;
	struct checkplan_target *t;
	int n;
};

/* Before anything is checked: gather every refusal logged from now on
 * (log_set_tap), for the JSON document. */
void checkplan_start(void);

/* After the checks of every target: build the plan of each and print it
 * (as JSON with json), with every refusal. Returns 1 when anything was
 * refused (exit 78), else 0. */
int checkplan_report(struct daemon *d, const struct cfg *c, pid_t holder, int refused, int json);

/* --check --json when no plan could be made (the configuration or a path
 * of [wearmon] refused): the document with the refusals alone. Nothing
 * when the report was printed already. */
void checkplan_fail_json(const char *config);

/* Name of a state ("new", "resumes", ...), as the JSON document gives it. */
const char *checkplan_state_name(enum checkplan_state s);

/* Write the document (checkplan_json.c). */
void checkplan_print_json(FILE *f, const struct checkplan *p, int refused);

/* Free what checkplan_build allocated. */
void checkplan_free(struct checkplan *p);

#endif
