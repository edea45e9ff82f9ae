/* workload: the offset, length and direction of every I/O of a measured
 * phase (IOzone, sysbench, IOMeter and fio access patterns). Pure: no I/O,
 * no allocation, no clock; the engine asks it for one operation at a time. */
#ifndef WEARMON_WORKLOAD_H
#define WEARMON_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "io/access.h"

#define WORKLOAD_MAX_BS 16

/* How offsets follow each other (one generator each). */
enum workload_order {
	WO_SEQ,      /* ascending and contiguous, wrapping to the span start */
	WO_RANDOM,   /* uniform, aligned to the chosen block size */
	WO_BACKWARD, /* descending and contiguous, wrapping to the span end */
	WO_STRIDE,   /* every stride-th grid block, then the next start */
	WO_RECORD,   /* the same record again and again (IOzone rewrite) */
	WO__COUNT
};

/* One entry of a block size mix. */
struct workload_bs {
	uint32_t size;   /* bytes, a multiple of 512 */
	unsigned weight; /* relative share of operations */
};

/* What a phase does. */
struct workload_spec {
	enum workload_order order;
	unsigned read_pct;   /* 0..100: share of operations that read */
	unsigned random_pct; /* WO_SEQ only: share of operations at a
					 random offset (IOMeter); 100 = WO_RANDOM */
	uint64_t stride;     /* WO_STRIDE: distance in grid blocks, >= 1 */
	unsigned nbs;        /* entries in bs, 1..WORKLOAD_MAX_BS */
	struct workload_bs bs[WORKLOAD_MAX_BS];
	/* Where random offsets fall: the zeroed spec is uniform over the
	 * span (each I/O at a multiple of its size); otherwise the span is
	 * cut into units of the largest block size, the distribution picks a
	 * unit and the I/O starts at a random aligned place inside it. */
	struct access_spec access;
	uint32_t align;  /* 0: every I/O starts at a multiple of its own size;
			    else I/Os of align bytes or more at multiples of
			    align, smaller ones at multiples of sector */
	uint32_t sector; /* the smaller I/Os' grid: the logical block size;
			    0 means 512 */
};

/* One operation. */
struct workload_op {
	uint64_t offset; /* bytes from the device start */
	uint32_t len;    /* bytes */
	int is_write;
	unsigned bs; /* its entry in the spec's block size mix */
};

/* Generator state. Fields are private to workload.c. */
struct workload_gen {
	void (*next)(struct workload_gen *g, struct workload_op *op);
	void (*order_next)(struct workload_gen *g, struct workload_op *op, unsigned bs);
	void (*random_next)(struct workload_gen *g, struct workload_op *op, unsigned bs);
	uint64_t span_offset, span_len;
	uint64_t cursor;       /* bytes into the span (seq, backward) */
	uint64_t grid, grid_n; /* stride and record: unit and count */
	uint64_t stride, stride_start, stride_k;
	uint64_t rng;
	uint32_t read_thr, random_thr;    /* out of 2^32 */
	uint32_t bs_thr[WORKLOAD_MAX_BS]; /* cumulative, out of 2^32 */
	uint32_t bs_size[WORKLOAD_MAX_BS];
	uint32_t bs_align[WORKLOAD_MAX_BS]; /* the grid of each size's offsets */
	unsigned nbs;
	int read_all, write_all;
	struct access_table access; /* skewed random offsets: over units of grid */
};

/* A named access pattern. */
struct workload_preset {
	const char *name;
	enum workload_order order;
	unsigned read_pct, random_pct;
	unsigned nbs;                           /* entries of bs; 0: the block_size key */
	struct workload_bs bs[WORKLOAD_MAX_BS]; /* a preset's block size mix */
	uint32_t align;                         /* as workload_spec's; 0: none */
	struct access_spec access;              /* zeroed: uniform */
};

/* Named workloads (the workload key), NULL-terminated by name; *n = count. */
const struct workload_preset *workload_presets(unsigned *n);

/* The named workload called name, or NULL. */
const struct workload_preset *workload_preset_find(const char *name);

/* Parse a mix such as "512:10 1k:5 4k:60 64k:25" (or "4k", weight 1) into
 * spec->bs / spec->nbs. Returns 0, or -EINVAL with a message in msg. */
int workload_parse_block_sizes(const char *text, struct workload_spec *spec, char *msg, size_t len);

/* Largest block size of a spec. */
uint32_t workload_max_bs(const struct workload_spec *spec);

/* Check a spec against a span: every block size fits and divides the span
 * grid, the alignment is a multiple of 512 and every zone of the access
 * distribution holds a unit. Returns 0 or -EINVAL with a message. */
int workload_check(const struct workload_spec *spec, uint64_t span_len, char *msg, size_t len);

/* Start a generator over [span_offset, span_offset + span_len). The spec
 * must pass workload_check. seed selects the random sequence. */
void workload_init(struct workload_gen *g, const struct workload_spec *spec, uint64_t span_offset,
		   uint64_t span_len, uint64_t seed);

/* Begin sequential and backward orders (and IOMeter's sequential runs) at
 * at bytes into the span, on the grid of the largest block size, instead
 * of at its start (its end for backward); other orders ignore it. Jobs
 * sharing a span start apart so that they do not write the same blocks in
 * lockstep. Call after workload_init. */
void workload_start(struct workload_gen *g, uint64_t at);

/* The next operation: O(1), a few multiplications at most. */
static inline void workload_next(struct workload_gen *g, struct workload_op *op)
{
	g->next(g, op);
}

#endif
