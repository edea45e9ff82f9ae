/* db_hir: the rows of the host idle recovery protocol (table hir_bursts,
 * schema 22, and hir_purges, schema 27; daemon/hir.c runs it) and how far
 * a cycle's protocol got, for a restart. */
#ifndef WEARMON_DB_HIR_H
#define WEARMON_DB_HIR_H

#include <stdint.h>

#include "config/names.h"
#include "db/db_iter.h"

struct db;
struct db_wear_state;

/* What a row of hir_bursts measured (stored as its name: "precondition",
 * "burst", "baseline"). */
enum db_hir_kind { DB_HIR_PRECONDITION, DB_HIR_BURST, DB_HIR_BASELINE };

/* One round, burst or return to baseline of the protocol. */
struct db_hir_row {
	int64_t cycle_id, target_id, run_id;
	enum db_hir_kind kind;
	int wait_state;      /* 1-based index of the wait state; 0: precondition */
	double wait_seconds; /* the wait state's length; < 0: NULL (precondition) */
	double idle_seconds; /* idle measured before it; < 0: NULL */
	long repetition;     /* precondition: round; burst: 1..repetitions;
				baseline: 1 after its wait state, 0 on resume */
	char started_at[32];
	double seconds;
	uint64_t bytes, ops;
	double mibps, iops, lat_mean_us, lat_p99_us; /* < 0: NULL */
	struct db_device_evidence device;            /* all unknown: NULL */
	int steady; /* last precondition round: 1 steady, 0 max_rounds passed;
		       -1: NULL */
};

/* Store one row, its id into *id (may be NULL). Returns 0 or -errno. */
int db_hir_insert(struct db *db, const struct db_hir_row *r, int64_t *id);

/* The idle wait that followed row id (a burst, or a baseline a restart
 * wrote before the next burst, repetition 0): its measured seconds and the
 * host and media bytes the drive counted over it (< 0: NULL, unknown).
 * Returns 0, -ENOENT (no such row of those kinds) or -errno. */
int db_hir_idle(struct db *db, int64_t id, double seconds, int64_t host_bytes, int64_t media_bytes);

/* How the protocol purged the drive before its precondition (stored as
 * its name: "secure-erase", "trim", "none"). */
enum db_hir_purge { DB_PURGE_SECURE_ERASE, DB_PURGE_TRIM, DB_PURGE_NONE };

/* One purge attempt of a cycle (a row of hir_purges). */
struct db_hir_purge_row {
	int64_t cycle_id, target_id, run_id;
	enum db_hir_purge method;
	const char *erase; /* secure-erase: the secure_erase method; else NULL */
	enum act_outcome outcome;
	char started_at[32];
	double seconds;
	uint64_t bytes;   /* erased or trimmed */
	const char *note; /* why none ran, what was tried first, the error;
			     NULL: nothing to say */
};

/* Store a purge attempt and, in the same transaction, the wear state it
 * leaves (NULL: unchanged), so the record and the mapped extents change
 * together. Returns 0 or -errno (nothing stored). */
int db_hir_purge_insert(struct db *db, const struct db_hir_purge_row *r,
			const struct db_wear_state *wear);

/* A command tagged tag (the purge's secure_erase_command) of target_id
 * that exited 0 in cycle_id after the cycle's last purge row ended: an
 * erase that ran to its end with no row to say so, because a stop or a
 * kill came between the two. Returns 1 with its start (len bytes) and
 * seconds, 0 when there is none, or -errno. */
int db_hir_erased(struct db *db, int64_t target_id, const char *tag, int64_t cycle_id,
		  char *started_at, size_t len, double *seconds);

/* Name of a purge method. */
const char *db_hir_purge_name(enum db_hir_purge m);

/* How far the protocol of a cycle got, from its rows: whether it purged
 * the drive, whether the precondition ended (a round with steady set), the last wait state with
 * a burst or its own baseline (0: none), the bursts of that state and
 * whether its baseline (repetition 1) is stored. */
struct db_hir_progress {
	int purged; /* a purge ran (outcome ok), or none could or was asked
		       for (method none): hir_purges, schema 27 */
	int preconditioned;
	int rounds; /* precondition rounds stored */
	int state;
	long bursts;
	int baseline_done;
};

/* Read the progress of cycle_id into *p. Returns 0 or -errno. */
int db_hir_progress(struct db *db, int64_t cycle_id, struct db_hir_progress *p);

/* Name of a kind. */
const char *db_hir_kind_name(enum db_hir_kind k);

#endif
