/* db_metrics: what the metrics read from the database (db_metrics.c), kept
 * beside the db module so that no SQL lives in metrics.c. */
#ifndef WEARMON_DB_METRICS_H
#define WEARMON_DB_METRICS_H

#include <stdint.h>

#include "db/db.h"

#define METRICS_MAX_KINDS 24
#define METRICS_STR 256

/* How many alerts of one kind a target raised (events of that kind). */
struct metrics_alert {
	char kind[48];
	double count;
};

/* State of a target's thread (label state of wearmon_target_state). */
enum metrics_state {
	METRICS_RUNNING,
	METRICS_DONE,
	METRICS_STOPPED,
	METRICS_FAILED,
	METRICS_STATE__COUNT
};

/* Every figure of one target. A double that is NaN is not known and its
 * sample is left out; strings may be empty. */
struct metrics_target {
	char name[64], device[METRICS_STR], serial[128], workload[32];
	enum metrics_state state;
	char phase[32]; /* what it does now; "" when not running */
	/* now */
	double cycle, iteration, size_index, sizes_configured, size_bytes;
	double throughput_bps;   /* last sample of the current phase */
	double throughput_ratio; /* that / the baseline (measure phase only) */
	/* the last finished iteration (done) */
	char last_workload[32];
	double last_bps, last_iops, last_p99_seconds, last_ratio;
	double last_end_unix, last_seconds, last_size_bytes;
	/* wear and over-provisioning (the wear row of the last iteration) */
	double host_written_bytes, op_effective, op_configured;
	/* the latest health snapshot */
	double life_used_ratio, media_errors, temperature_celsius;
	double nand_written_bytes, spare_ratio, write_amplification;
	/* error counters over the whole history */
	double io_errors, verify_errors;
	/* the endurance forecast (common/base/eol.h), read after each health
	 * snapshot; days left as of the file's write */
	double eol_end_unix, eol_end_lo_unix, eol_end_hi_unix;
	double eol_days_left, eol_days_left_lo, eol_days_left_hi;
	double eol_host_bytes_at_end, eol_rated_ratio;
	struct metrics_alert alerts[METRICS_MAX_KINDS];
	int nalerts;
};

/* A target's stored figures kept in memory by wearmond (daemon/publish.c),
 * so that publishing reads no history: seeded once by db_metrics_seed,
 * then brought up to date by db_metrics_apply for each row written. */
struct db_metrics_state {
	int64_t target_id;
	struct metrics_target t; /* the stored figures (db_metrics_collect's) */
	int64_t last_done_id;    /* newest done iteration (any phase); 0: none */
	int64_t last_shown_id;   /* the one in t.last_* (done, not a read-back) */
	int64_t wear_iteration;  /* the wear row in t */
	char health_at[40];      /* the health snapshot in t: at, id */
	int64_t health_id;
	double nand_sum, host_sum; /* deltas of the snapshots that have both */
	long wa_rows;              /* how many such snapshots */
	int first_kinds;           /* t.alerts[0..first_kinds): the caller's
					 kinds, in its order; the rest by name */
};

/* Fill s (s->target_id and s->t initialised by the caller) from the
 * database: db_metrics_collect and one query for the keys and sums.
 * Returns 0 or -errno (logged). */
int db_metrics_seed(struct db *db, struct db_metrics_state *s);

/* Gives the state of target_id, or NULL (not ours). */
typedef struct db_metrics_state *(*db_metrics_find_fn)(void *arg, int64_t target_id);

/* Read the row just written (kind, id as db_set_row_hook tells) by its
 * primary key and fold it into its target's state. Returns 0 or -errno. */
int db_metrics_apply(struct db *db, enum db_row_kind kind, int64_t id, db_metrics_find_fn find,
		     void *arg);

/* Count n more alerts of kind in t (a kind beyond METRICS_MAX_KINDS is
 * dropped). */
void metrics_add_alert(struct metrics_target *t, const char *kind, double n);

/* Fill t's stored figures for the target: last done iteration (and its ratio
 * to the baseline stored with it, as the alerts chose it), the latest
 * wear row and health snapshot, error totals and alert counts by kind.
 * Returns 0 or -errno (logged). */
int db_metrics_collect(struct db *db, int64_t target_id, struct metrics_target *t);

/* The id of the target's newest done iteration in *id (0: none). A cheap
 * query, run every second to notice an iteration end. Returns 0 or -errno. */
int db_metrics_last_done(struct db *db, int64_t target_id, int64_t *id);

#endif
