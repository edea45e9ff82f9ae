/* engine: one measured I/O phase on an O_DIRECT descriptor: keeps the
 * queue full (the next I/Os prepared ahead in spare slots while the queue
 * is busy), batches submissions and completions, times every I/O and cuts
 * the phase into samples; several jobs (threads, a context each) summed
 * into one result (engine_jobs.h). The same runner drives every engine of
 * engine_list.h (io_uring, libaio, sync, and null, which runs the loop
 * without a device), chosen once per context. Knows nothing of configs or
 * databases. */
#ifndef WEARMON_ENGINE_H
#define WEARMON_ENGINE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hist.h"
#include "base/stats.h"
#include "base/wmap.h"
#include "io/engine_list.h"
#include "io/workload.h"

#define ENGINE_BAD_MAX 16        /* bad sectors remembered per phase */
#define ENGINE_MAX_JOBS 64       /* threads of one phase at most */
#define ENGINE_NULL_MIBPS 1000.0 /* speed of ioengine = null */
#define ENGINE_LBA_BINS 100      /* hundredths of the span in engine_result.lba_ops */

struct engine_ctx;
struct engine_sample;

/* What one phase does. */
struct engine_phase {
	int fd;                           /* opened O_DIRECT, read-write for writes */
	uint64_t span_offset;             /* first byte of the span */
	uint64_t span_len;                /* bytes; at least the largest block size */
	const struct workload_spec *spec; /* the workload; NULL: the three fields below */
	uint32_t block_size;              /* with spec NULL: one block size, */
	int is_write;                     /* writes only or reads only, */
	int is_random;                    /* uniform offsets over the span, else sequential */
	unsigned queue_depth;
	uint64_t amount;          /* bytes to transfer (the last I/O may pass it) */
	int verify;               /* stamp CRC-32C sector headers, check reads */
	int verify_stop;          /* stop at the first bad sector */
	double duration;          /* seconds, 0 = until amount is done */
	unsigned compressibility; /* 0..100, writes only */
	unsigned dedupe_pct;      /* 0..100: 4 KiB units repeating earlier ones */
	uint64_t seed;            /* offsets and data */
	uint64_t start;           /* bytes into the span where sequential and
				       backward orders begin (0: its start) */
	uint64_t t0;              /* util_now_ns() time samples count from,
				       so jobs share intervals; 0: the start */
	double sample_interval;   /* seconds */
	const atomic_int *stop;   /* nonzero: drain and return */
	struct wmap *written;     /* NULL, or marked with every write that
				     completed in full (the jobs share it) */
	/* Called once per sample interval with the sample's real length:
	 * every byte the phase moved is in exactly one sample. A part shorter
	 * than the interval (the phase's end) joins the sample before it, so
	 * every sample lasts at least an interval unless the phase is shorter;
	 * each is therefore passed on when the next one ends. */
	void (*on_sample)(void *arg, const struct engine_sample *s);
	void *arg;
};

/* One sample interval. */
struct engine_sample {
	double t;       /* seconds since phase start, at its end */
	double seconds; /* length of this sample */
	uint64_t bytes, ops;
	double mibps, iops;
	double mibps_min_1s;    /* lowest 1-second window ending in the sample
				       (sample_interval > 1 s), else -1 */
	struct lat_qos lat_us;  /* latency of the I/Os completed in it */
	unsigned index;         /* interval it ends in: 0, 1, ... from t0 */
	const struct hist *lat; /* its I/Os; valid during the callback only */
};

/* A sector that failed verification. */
struct engine_bad {
	uint64_t offset; /* device byte offset of the sector */
	int reason;      /* enum verify_reason */
};

/* What a phase did. */
struct engine_result {
	uint64_t bytes, ops, errors;
	double seconds;
	double mibps, iops;                        /* averages over the phase */
	double mibps_min, mibps_max, mibps_stddev; /* over the samples weighted by
						      their length; -1 (unknown) with
						      fewer than two full samples */
	unsigned nsamples;
	double mean_depth; /* I/Os in flight on average: their time in flight
			      (submission to reaped completion) over the
			      phase's time, summed over jobs */
	struct hist lat;   /* every completed I/O */
	int interrupted;   /* stop flag seen */
	/* A stop drains: nothing is submitted once the flag is seen, and
	 * the I/Os already in flight are waited for (the kernel completes
	 * them before the process could exit anyway). stop_inflight is how
	 * many were in flight then, stop_drain_seconds how long the drive
	 * took to complete them (the longest job's); both 0 without a stop. */
	unsigned stop_inflight;
	double stop_drain_seconds;
	int first_errno; /* 0 when none */
	uint64_t first_error_offset;
	uint64_t reads, writes;                /* completed operations */
	uint64_t random_ios;                   /* completed operations that did
						      not continue their job's
						      previous I/O (see engine_run) */
	uint64_t verify_errors;                /* bad sectors read */
	unsigned nbad;                         /* entries in bad */
	struct engine_bad bad[ENGINE_BAD_MAX]; /* the first bad sectors */
	char refused[160];                     /* why engine_run refused the phase
						      (-EINVAL); "" otherwise */
	/* What the phase's completed I/Os were, by class: per entry of the
	 * workload's block size mix (in its order), and by the hundredth of
	 * the span they start in. */
	uint64_t bs_ops[WORKLOAD_MAX_BS];
	uint64_t lba_ops[ENGINE_LBA_BINS];
};

/* What a context is sized for, and how its engine runs. */
struct engine_opts {
	unsigned max_qd;   /* deepest queue */
	uint32_t max_bs;   /* largest block */
	double null_mibps; /* the null engine's simulated speed (> 0) */
	int sqpoll;        /* io_uring: a kernel thread takes the submissions
			      (IORING_SETUP_SQPOLL), one per context */
};

/* Create a context of engine kind for up to o->max_qd I/Os of up to
 * o->max_bs bytes: the engine's queue, and aligned buffers for max_qd and
 * as many spare slots (at most 16 MiB of them, but never fewer than the
 * smaller of 32 and max_qd), allocated once. ENGINE_AUTO takes
 * engine_auto's choice, and libaio when that engine cannot be set up for
 * this context. Returns 0 or -errno (-EINVAL: no such engine, or a zero
 * size; the engine's own, e.g. -EPERM, -ENOSYS, -ENOMEM). */
int engine_open(enum engine_kind kind, const struct engine_opts *o, struct engine_ctx **out);

/* The engine ioengine = auto runs: the first of engine_list.h that auto
 * may choose (io_uring, then libaio) and whose probe passes; why gets one
 * line saying so (each refusal and the choice). Probed once per process.
 * Returns the kind. */
enum engine_kind engine_auto(char *why, size_t len);

/* Whether engine k can run here, asked afresh (io_uring: a ring set up and
 * closed; the others always can). Returns 0, or -errno with the reason
 * in why (-ENOSYS: no io_uring in the kernel; -EPERM: refused, by a
 * seccomp filter or kernel.io_uring_disabled). */
int engine_probe(enum engine_kind k, char *why, size_t len);

/* The libaio engine (engine_open with ENGINE_LIBAIO). Returns 0 or -errno. */
int engine_create(unsigned max_qd, uint32_t max_bs, struct engine_ctx **out);

/* Create a null engine context, as fio's null engine: every I/O completes
 * at once and in full without a system call; no data is generated, written
 * or read, so reads are never verified (verify stamps nothing, finds
 * nothing). Time is simulated: the clock starts at the phase's start and
 * each I/O advances it by its length at mibps (> 0), so rates, latencies,
 * samples and a duration limit behave as on a device of that speed, and a
 * phase ends as soon as the CPU has walked its offsets. Returns 0, -EINVAL
 * for mibps <= 0, or -ENOMEM. */
int engine_create_null(unsigned max_qd, uint32_t max_bs, double mibps, struct engine_ctx **out);

/* Whether c's clock is simulated (the null engine). Returns 1 or 0. */
int engine_is_null(const struct engine_ctx *c);

/* c's engine: its ioengine name ("io_uring", ...). */
const char *engine_name(const struct engine_ctx *c);

/* One line on how c runs, for the log: its engine, why auto chose it,
 * and what the engine set up ("io_uring (ioengine = auto: ...),
 * registered files and buffers"). Valid while c lives. */
const char *engine_describe(const struct engine_ctx *c);

/* The workload phase p runs: its spec, or one made of its simple fields. */
void engine_phase_spec(const struct engine_phase *p, struct workload_spec *out);

/* Release (NULL is fine). */
void engine_destroy(struct engine_ctx *c);

/* Install the handler of the I/O threads' wake-up signal (SIGRTMIN+4, a
 * no-op) now, rather than when the first phase starts, so that the signal
 * sent from outside at any time does not end the process. Idempotent;
 * 0, or -EINVAL when sigaction refused. */
int engine_signals_init(void);

/* Run one phase. An I/O counts in random_ios unless it continues the
 * previous I/O the job issued: starts where it ended, ends where it
 * started (backward), or is at the same offset (rewrite); so sequential
 * orders count only their first I/O and wraps, uniform random ones all but
 * chance neighbours, strided reads every I/O. Returns 0 when it ran (check errors/interrupted in r),
 * -EINVAL for a bad phase, or -errno when the engine itself fails. */
int engine_run(struct engine_ctx *c, const struct engine_phase *p, struct engine_result *r);

#include "io/engine_jobs.h"

#endif
