/* retain: the daemon's upkeep of its samples, a little at a time from the
 * main loop: the move of schema 15's samples into compact rows after an
 * upgrade, then the per-minute rollup of samples older than
 * sample_retention (common/db/db_samples.c does the SQL). Knows nothing of
 * targets; each step is one short transaction. */
#ifndef WEARMON_RETAIN_H
#define WEARMON_RETAIN_H

#include <stdint.h>

struct db;

struct retain {
	double next;    /* util_now() of the next step */
	int migrating;  /* old samples may remain to be moved */
	double logged;  /* util_now() of the last progress message */
	int64_t cursor; /* where the rollup pass goes on */
	int errors;     /* failed steps in a row */
};

/* Ready for a database just opened: the move first, then rollups. */
void retain_init(struct retain *r);

/* Do the next step if it is due at now (util_now()): a batch of the move,
 * else, with retention > 0 (seconds), a batch of rollups. Returns 1 when a
 * step did work, 0 when none was due or there was nothing to do. */
int retain_tick(struct retain *r, struct db *db, double retention, double now);

#endif
