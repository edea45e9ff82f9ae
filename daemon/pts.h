/* pts: the tests of the SNIA Solid State Storage Performance Test
 * Specification as presets (pts =; wearmond(8), "PTS tests"): IOPS,
 * throughput, latency, write saturation, cross-stimulus recovery and
 * demand intensity, each cycle, over the active range (plan.h: plan_pts).
 * Every cell is an iteration row (iter.h: iter_run_cell) saying its test,
 * round and cell (db.h: struct db_pts); rounds run until the test's
 * tracking variables are steady (steady.h) or max_rounds pass. Owns the
 * engines of a test for its time; keeps no state between calls. The host
 * idle recovery test is hir.h's. */
#ifndef WEARMON_PTS_H
#define WEARMON_PTS_H

#include <stddef.h>

#include "base/hist.h"
#include "config/plan.h"
#include "io/workload.h"
#include "iter.h"

#define PTS_MAX_CELLS 128 /* cells of one round at most */
#define PTS_MAX_TRACK 2   /* tracking variables of one test at most */

/* One cell of a round: an access pattern at a demand intensity. */
struct pts_cell {
	char name[40];             /* stored as the row's workload */
	struct workload_spec spec; /* one block size, random or sequential */
	unsigned jobs, depth;      /* threads and depth per thread */
	int track;                 /* 1-based tracking variable; 0: none */
	const char *part;          /* xsr: its access group; dirth: "sweep" */
};

/* Groups of a test run one after another, each to its own end:
 * throughput one per block size, xsr its three access groups, the others
 * one. Pure. */
unsigned pts_groups(enum cfg_pts test, const struct plan_pts *p);

/* The cells of one round of group g of test (xsr: one cell, repeated for
 * the group's time; wsat: one, repeated until its bytes) into out[0..max).
 * Returns how many. Pure. */
unsigned pts_round_cells(enum cfg_pts test, const struct plan_pts *p, unsigned g,
			 struct pts_cell *out, unsigned max);

/* The tracking variables of test as y values of a stored row: IOPS
 * (iops, dirth), MiB/s (throughput) or mean latency in us (latency). */
double pts_tracked(enum cfg_pts test, double iops, double mibps, double lat_mean_us);

/* Demand intensity: from the IOPS of the cells of the sweep's last round
 * (iops[0..n), < 0 unknown), the cells of its chosen points into pick:
 * [0] the maximum IOPS, [2] the minimum demand (1 thread, depth 1, else
 * the lowest IOPS), [1] the cell whose IOPS lies nearest halfway between.
 * Returns the number of distinct points (1..3), 0 when none is known. */
unsigned pts_dirth_points(const struct pts_cell *cells, const double *iops, unsigned n,
			  unsigned pick[3]);

/* The response-time histogram of h as JSON into buf: {"bins":[[low_us,
 * count],...]} with four bins per power of two, the empty ones left out.
 * Returns 0, or -ENOSPC (buf holds "" then). */
int pts_hist_json(const struct hist *h, char *buf, size_t len);

/* What test does each cycle under plan p, in words for wearmond --check
 * ("iops: rounds of 56 cells of 60 s at 4 threads of depth 32, until
 * steady state or 25 rounds"), into buf. Pure. */
void pts_describe(enum cfg_pts test, const struct plan_pts *p, char *buf, size_t len);

/* Run the tests of e->plan->pts at size size_index (the active range),
 * rows numbered from *next on; engines of the kind of base. Returns how
 * they ended (IT_FAILED: reason in e->error). */
enum it_status pts_run(const struct iter_env *e, const struct iter_limits *base, int size_index,
		       long *next);

#endif
