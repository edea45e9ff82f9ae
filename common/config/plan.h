/* plan: a target's configuration resolved once, at start-up and at each
 * reload, into what the cycle loop reads: the region and sizes, the phases
 * of a size with their workload specs, the amount of every phase at every
 * size and the limits the engines are sized for. Built from cfg (cfg.h);
 * never touches a device or the database, and never changes once built. */
#ifndef WEARMON_PLAN_H
#define WEARMON_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "config/cfg.h"
#include "io/workload.h"

/* One measured phase of a size (measure =, or the workload key alone). */
struct plan_phase {
	int is_fill;                    /* "fill" in measure: the fill, as a row */
	enum cfg_workload workload;     /* the workload (t->workload for a fill row) */
	const char *name;               /* cfg_workload_name of workload */
	struct workload_spec spec;      /* measured phases: the resolved spec */
	uint32_t block_size;            /* largest block of spec; fill: fill_block_size */
	uint64_t amount[CFG_MAX_SIZES]; /* measured phases: bytes at each size */
};

/* The PTS tests of pts =, resolved once: what daemon/pts.c runs. */
struct plan_pts {
	int active;                     /* pts is set: the cycle runs the tests, not
					 the sizes' measured phases */
	enum cfg_pts test[CFG_MAX_PTS]; /* the tests pts.c runs, in order (not hir) */
	int n;
	int hir; /* hir is listed: the protocol of hir.h runs */
	enum cfg_pts_variant variant;
	double cell;                         /* seconds of one cell */
	unsigned threads, depth;             /* demand intensity of the tests but latency */
	unsigned sweep_threads, sweep_depth; /* dirth: the largest swept */
	double active_pct;                   /* of the region */
	uint64_t range;                      /* bytes from the region's start: size 0 */
	uint32_t lbs;                        /* no cell of a smaller block runs */
	double xsr_segment;                  /* seconds of each xsr access group */
	uint64_t wsat_bytes;                 /* wsat: bytes to write */
	unsigned max_rounds;                 /* rounds at most until steady state */
};

/* What every row of a size takes from the target's keys, resolved once
 * at load and reload (daemon/iter.c reads these, not the keys). */
struct plan_rows {
	uint32_t fill_block_size;    /* the fill's and the read-back's block */
	unsigned fill_queue_depth;   /* and their queue */
	unsigned queue_depth;        /* a measured phase's queue */
	int repeat;                  /* runs of each measured phase */
	int steady_snia;             /* steady_state = snia: rounds until steady */
	unsigned max_rounds;         /* rounds at most with steady_snia */
	double duration;             /* seconds a phase runs at most, 0 no limit */
	double sample_interval;      /* seconds per sample */
	double device_poll_interval; /* seconds between readings of the drive */
	unsigned compressibility;    /* % of each block compressible */
	unsigned dedupe_pct;         /* % of writes repeating a block */
	enum cfg_verify verify;      /* crc32c headers in written data or none */
	int verify_stop;             /* on_verify_error = stop */
};

struct plan {
	const struct cfg_target *t; /* what it was built from (borrowed) */
	struct cfg_layout layout;   /* region and sizes on the device */
	struct plan_phase phase[CFG_MAX_PHASES];
	int nphases;
	int precondition;         /* fill = yes and no "fill" row: fill before a size */
	int readback;             /* verify_phase with crc32c: a read-back row */
	uint64_t max_bs;          /* largest block of any phase and of the fill */
	unsigned max_qd;          /* deepest queue of the fill and the measured phases */
	unsigned jobs;            /* engines of each measured phase */
	enum engine_kind engine;  /* ioengine: auto or an engine */
	const char *engine_name;  /* cfg_ioengine_name of engine */
	unsigned io_uring_sqpoll; /* a kernel thread takes io_uring's submissions */
	struct plan_pts pts;      /* the PTS tests; pts.active 0: none */
	struct plan_rows rows;    /* the rows' keys */
};

/* Resolve target t of c for a device of capacity bytes and logical block
 * size lbs into out. Returns 0, or -EINVAL with "FILE:LINE: key: message"
 * in err (cfg_resolve's messages): then out holds the phases and limits,
 * not the layout nor the amounts. */
int plan_build(const struct cfg *c, const struct cfg_target *t, uint64_t capacity, uint32_t lbs,
	       struct plan *out, char *err, size_t errlen);

/* Bytes a measured phase of block size bs moves at size: amount (a multiple
 * of the size, or bytes) rounded down to whole blocks, at least one block.
 * Pure: exported for tests. */
uint64_t plan_amount(const struct cfg_amount *a, uint64_t size, uint32_t bs);

#endif
