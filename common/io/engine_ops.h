/* engine_ops: what an I/O engine implements and the state it shares with
 * the phase runner (engine.c): the slots the runner prepares, the
 * completions the engine hands back, and the table of functions, one const
 * table per engine (engine_libaio.c, engine_uring.c, engine_sync.c,
 * engine_null.c), listed once in engine_list.h. The runner never asks which
 * engine it runs; an engine never touches the runner's phase. Private to
 * common/io. */
#ifndef WEARMON_ENGINE_OPS_H
#define WEARMON_ENGINE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "base/hist.h"
#include "io/engine.h"

/* One I/O, prepared by the runner, carried out by the engine. */
struct engine_slot {
	uint64_t offset;   /* device byte offset */
	uint32_t len;      /* bytes */
	int is_write;      /* else a read */
	unsigned index;    /* its number in the context (a registered buffer) */
	void *buf;         /* write data, generated afresh per write */
	void *rbuf;        /* reads land here: buf, or its own buffer in mixed
			      runs so write data stays intact */
	uint64_t layout;   /* datagen_block_over's tag for buf, 0: unknown */
	uint64_t t_submit; /* engine time it was handed to the kernel */
	int is_random;     /* does not continue the job's previous I/O */
	unsigned bs;       /* its entry in the workload's block size mix */
};

/* A completed I/O. */
struct engine_done {
	struct engine_slot *sl;
	long res;   /* bytes moved, or -errno */
	uint64_t t; /* when it completed, in engine time; 0: when reaped */
};

struct engine_ctx;

/* An engine. Every function but the optional ones must be set. */
struct engine_ops {
	const char *name;
	int moves_data; /* buffers hold generated data; reads are verified */
	int simulated;  /* its clock is simulated: no I/O reaches a device */
	int for_auto;   /* ioengine = auto may choose it (engine_list.h order) */
	int queued;     /* keeps the queue depth in flight (one campaign with
			   the other queued engines: engine_kind_campaign) */
	/* Optional: whether the engine can run here. Returns 0, or -errno
	 * with the reason in why. */
	int (*probe)(char *why, size_t len);
	/* Set up the engine's own state (c->priv) once the runner has
	 * allocated slots and buffers. Returns 0 or -errno. */
	int (*open)(struct engine_ctx *c, const struct engine_opts *o);
	void (*close)(struct engine_ctx *c);
	/* Optional: the slots' read buffers changed (mixed runs allocate their
	 * own). Returns 0 or -errno. */
	int (*buffers)(struct engine_ctx *c);
	/* The engine's time in ns. */
	uint64_t (*now)(const struct engine_ctx *c);
	/* A phase on fd begins (t0: its start asked for, 0: now) and ends.
	 * start returns 0 or -errno. */
	int (*start)(struct engine_ctx *c, int fd, uint64_t t0);
	void (*stop)(struct engine_ctx *c);
	/* Hand v[0..n) to the kernel. Returns how many were taken, or -errno
	 * (-EAGAIN: none now, try after completions). */
	int (*submit)(struct engine_ctx *c, struct engine_slot **v, unsigned n);
	/* At least min and at most max completions into c->done: every one
	 * there, waiting while fewer than min are; fewer (0 too) when a wake
	 * ends a wait (a wake bounds every wait: engine_wake.h). Returns the
	 * count or -errno. */
	int (*reap)(struct engine_ctx *c, unsigned min, unsigned max);
	/* Optional: the completion time of d reaped at t (the null engine's
	 * simulated device); without it, d->t or else t. */
	uint64_t (*done_at)(struct engine_ctx *c, const struct engine_done *d, uint64_t t);
};

/* A context: one thread's engine, sized once. */
struct engine_ctx {
	const struct engine_ops *ops;
	void *priv;     /* the engine's own state */
	char note[160]; /* how it runs (engine_describe) */
	unsigned max_qd;
	uint32_t max_bs;
	void *mem;                /* write buffers, one per slot */
	void *rmem;               /* read buffers, allocated by the first mix */
	size_t mem_len, rmem_len; /* their mapped lengths (util_buf_alloc) */
	unsigned nslots;          /* max_qd and the spares */
	unsigned nspare;          /* the spares */
	struct engine_slot *slots;
	unsigned *free_idx;
	unsigned nfree;
	unsigned *ready; /* ring of prepared slots, oldest first */
	unsigned rhead, nready;
	struct engine_done *done;   /* completions of one reap (max_qd) */
	struct engine_slot **batch; /* the I/Os of one submission */
	struct hist sample_lat;
};

#define ENGINE_OPS_(id, name, ops) extern const struct engine_ops ops;
ENGINE_LIST(ENGINE_OPS_)
#undef ENGINE_OPS_

/* The table of engine k (not ENGINE_AUTO), or NULL. */
const struct engine_ops *engine_ops_of(enum engine_kind k);

#endif
