/* db_read: typed readers built on db_query (db_sql.h): the alert
 * baselines, the latest rate of a size (wearmond --check), the drive's
 * write amplification, the latest events of a target, the alerts raised,
 * and the rows a resumed size has done. Reads only. */
#ifndef WEARMON_DB_READ_H
#define WEARMON_DB_READ_H

#include <stddef.h>
#include <stdint.h>

#include "config/names.h"

struct db;

/* Which earlier iterations an iteration is compared with: same target,
 * size, workload and block size, status done, mibps_avg > 0, in the
 * current campaign (cycle number >= targets.campaign_first_cycle), row id
 * below before_id; among them rule picks one. */
struct db_baseline_key {
	int64_t target_id;
	uint64_t size_bytes;
	const char *workload;
	uint32_t block_size;
	int64_t before_id;      /* INT64_MAX: every iteration so far */
	enum cfg_baseline rule; /* BASELINE_FIRST: the earliest; BASELINE_BEST:
					 the highest mibps_avg (earliest on a tie);
					 BASELINE_PREVIOUS: the latest */
};

/* Which earlier rate db_rate_latest looks for. */
struct db_rate_key {
	int64_t target_id;
	uint64_t size_bytes;
	const char *workload; /* measured phase: its workload and block size */
	uint32_t block_size;
	int fill; /* 1: the fill's rate at that size (workload ignored) */
};

/* The latest done iteration's rate for k (the measured phase's mibps_avg,
 * or the fill's fill_mibps) and the number of its cycle: what `wearmond
 * --check` estimates a cycle's duration from. Returns 0, -ENOENT when the
 * target has none, or -errno. */
int db_rate_latest(struct db *db, const struct db_rate_key *k, double *mibps, long *cycle);

/* The drive's write amplification over iteration id (device_wa, schema
 * 18). Returns 0, -ENOENT when unknown (NULL, or no such row), or -errno. */
int db_iteration_device_wa(struct db *db, int64_t id, double *wa);

/* The baseline MiB/s for k (and the iteration it comes from, may be NULL).
 * Returns 0, -ENOENT when there is none yet, or -errno. */
int db_baseline(struct db *db, const struct db_baseline_key *k, double *mibps,
		int64_t *iteration_id);

/* The kind of the target's most recent event among kind_a and kind_b,
 * copied to kind. Returns 0, -ENOENT when it has neither, or -errno. */
int db_event_latest(struct db *db, int64_t target_id, const char *kind_a, const char *kind_b,
		    char *kind, size_t len);

/* Called with each alert raised in a target's latest cycle: its kind,
 * severity (as stored) and cycle number. Return 0 to go on. */
typedef int (*db_raised_fn)(void *arg, const char *kind, const char *severity, long cycle);

/* The alerts (events with a MESSAGE_ID) of the target's latest cycle.
 * Returns 0 or -errno (logged). */
int db_alerts_raised(struct db *db, int64_t target_id, db_raised_fn fn, void *arg);

/* A row stored 'done' in the size a resumed cycle goes on with: which row
 * of the size's plan it was, and the figures the rows after it build on
 * (the mean of the repeats, the steady-state window). */
struct db_done_row {
	char phase[16];             /* fill, measure or verify ("" for NULL) */
	char workload[32];          /* iterations.workload */
	int repeat_index;           /* 0 for NULL */
	int round_index;            /* 0 for NULL */
	double mibps_avg, iops_avg; /* -1 for NULL */
};

/* The rows of size size_index of cycle cycle_id stored 'done', in the
 * order they ran; *rows is malloc'd (NULL when there is none). Returns 0
 * or -errno (logged). */
int db_size_rows_done(struct db *db, int64_t cycle_id, int size_index, struct db_done_row **rows,
		      size_t *n);

#endif
