/* iter: one size of one cycle: the fill, the measured phase(s), and their
 * rows in the database. Owns the I/O engines of a target thread. It is told
 * which cycle it runs in (number and row id, for its rows, logs and alerts)
 * but never starts or ends a cycle, runs an action or adopts a reload: that
 * is sched's. It reads the target and publishes progress through struct
 * sched_target (sched.h). */
#ifndef WEARMON_ITER_H
#define WEARMON_ITER_H

#include <stdint.h>

#include "cfg.h"
#include "db.h"

enum it_status { IT_DONE, IT_INTERRUPTED, IT_FAILED };

/* The row (and cycle) status an iteration's end is stored as. */
enum db_status iter_db_status(enum it_status s);

struct iter_ctx;
struct sched_target;

/* What the engines of a target are sized for: fixed for the process. */
struct iter_limits {
	unsigned max_qd;            /* deepest queue of any phase */
	uint64_t max_bs;            /* largest block of any phase */
	unsigned jobs;              /* engines (threads) per measured phase */
};

/* The limits a configuration needs. */
void iter_limits_of(const struct cfg_target *t, struct iter_limits *l);

/* Whether t fits within limits l (a reload must, or wait for a restart). */
int iter_within(const struct iter_limits *l, const struct cfg_target *t);

/* Allocate engines sized for the target's current configuration.
 * Returns 0 or -errno (message in st->error). */
int iter_init(struct sched_target *st, struct iter_ctx **out);

/* Release (NULL is fine). */
void iter_fini(struct iter_ctx *ic);

/* Measure size number size_index of the cycle; rows are numbered from
 * *number on and *number is advanced past the last row used. */
enum it_status iter_run(struct sched_target *st, struct iter_ctx *ic, int64_t cycle_id,
			long cycle, int size_index, long *number);

#endif
