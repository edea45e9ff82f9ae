/* engine: libaio O_DIRECT phase runner with batched submit and reap; the
 * null engine runs the same loop on a simulated clock without a device.
 * The two are backends in one const table (backends[]). */
#include "io/engine.h"

#include <errno.h>
#include <libaio.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/datagen.h"
#include "base/util.h"
#include "io/verify.h"

#define AIO_RING_MAGIC 0xa10a10a1u
#define REAP_TIMEOUT_NS (100 * 1000 * 1000)
#define WINDOW_NS 1000000000ull /* mibps_min_1s windows */
/* What one io_submit carries. The engine refills the queue whenever any
 * I/O has completed and waits for at least one completion, never for a
 * batch: the queue stays full. A call carries every prepared I/O that fits
 * in the queue, so that all the replacements of one reap enter the queue
 * together (in calls of at most 8, a reap of 100 at QD128 left the last of
 * them out of the queue for 12 calls, and the queue averaged 112-117 of
 * 128: tools/bench/results/2026-12-05T1031Z-vm.md; the block layer still
 * passes a long call's requests on every 32, at its plug's limit). I/Os
 * that must be prepared inline, when none is ready, go at most BATCH_MAX
 * per call, so that the first reach the device while the next are
 * generated. (The engine used to wait for a quarter of the queue to be
 * free and to submit one I/O per call below 32 in flight: on a second
 * machine that cost 30 % of 4k randwrite QD32 against this;
 * tools/bench/results/2026-12-04-engine-changes.md, item 11.) */
#define BATCH_MAX 8
/* ... and at most this many bytes per call (one I/O at least): io_submit
 * blocks while the device's queue is full, and a call of 32 I/Os of
 * 16 MiB held a stop for up to 0.85 s on a loop device before the engine
 * could see it (a stop submits nothing new, but waits for the call it is
 * in). Large blocks lose nothing by it: a call per 16 MiB is nothing
 * beside the transfer. */
#define BATCH_BYTES (16u << 20)
/* Slots beyond the queue depth: while I/Os are in flight the engine fills
 * them with the next blocks, so that a completion is replaced at once by a
 * ready I/O rather than after its data has been generated (the queue used
 * to average 26 of 32 at 4k). As many as the queue depth, so that a reap
 * of the whole queue finds every replacement ready (with at most 32 spares
 * 4k randwrite QD128 kept 112-117 of 128 in flight, the I/Os past the 32nd
 * of a large reap waiting for their data: tools/bench/results/
 * 2026-12-05T1031Z-vm.md), but their buffers bounded by SPARE_BYTES, so
 * that a deep queue of large blocks does not double the memory; never
 * fewer than SPARE_MIN (or the depth), as before that bound. */
#define SPARE_MIN 32
#define SPARE_BYTES (16u << 20)

/* The completion ring the kernel maps at the io_context_t address. */
struct aio_ring {
	unsigned id, nr, head, tail, magic, compat_features, incompat_features;
	unsigned header_length;
	struct io_event io_events[];
};

struct slot {
	struct iocb iocb;
	uint64_t t_submit;
	int is_random;   /* does not continue the job's previous I/O */
	void *buf;       /* write data, generated afresh per write */
	uint64_t layout; /* datagen_block_over's tag for buf, 0: unknown */
	void *rbuf;      /* reads land here: buf, or its own buffer
				       in mixed runs so write data stays intact */
};

struct engine_ctx;

/* A backend: how I/Os are submitted, reaped and timed. */
struct engine_ops {
	const char *name;
	int moves_data; /* buffers hold generated data; reads are verified */
	/* The backend's time in ns. */
	uint64_t (*now)(const struct engine_ctx *c);
	/* A phase begins (t0: its start asked for, 0: now) and ends. */
	void (*start)(struct engine_ctx *c, uint64_t t0);
	void (*stop)(struct engine_ctx *c);
	/* Submit v[0..n). Returns how many were taken, or -errno. */
	int (*submit)(struct engine_ctx *c, struct iocb **v, unsigned n);
	/* At least min and at most max completions into c->events, or 0 when
	 * woken without any. Returns the count or -errno. */
	int (*reap)(struct engine_ctx *c, unsigned min, unsigned max);
	/* The completion time of an I/O of res bytes reaped at t. */
	uint64_t (*done_at)(struct engine_ctx *c, long res, uint64_t t);
};

struct engine_ctx {
	const struct engine_ops *ops;
	io_context_t io;
	unsigned max_qd;
	uint32_t max_bs;
	void *mem;
	void *rmem;               /* read buffers, allocated by the first mix */
	size_t mem_len, rmem_len; /* their mapped lengths (util_buf_alloc) */
	unsigned nslots;          /* max_qd and the spares (spare_slots) */
	unsigned nspare;          /* the spares */
	struct slot *slots;
	unsigned *free_idx;
	unsigned nfree;
	unsigned *ready; /* ring of prepared slots, oldest first */
	unsigned rhead, nready;
	struct io_event *events;
	struct iocb **batch; /* the I/Os of one io_submit */
	struct hist sample_lat;
	double null_ns_per_byte; /* the null engine's simulated device speed */
	uint64_t clock;          /* its simulated time, in ns */
	unsigned npend;          /* its completions waiting in events */
	/* the waker (see waker_start): a timer per running thread */
	int waking;
	timer_t wake_timer;
	sigset_t saved_mask;
};

/* Samples on their way out: each is held until the next one shows whether
 * the two are to be one (out_sample), so that every sample passed on is at
 * least an interval long unless the whole phase is shorter. */
struct sample_out {
	const struct engine_phase *p; /* on_sample, arg */
	double interval;              /* seconds */
	struct wstat *w;              /* the samples passed on, by length */
	unsigned n;                   /* how many */
	int held;
	struct engine_sample smp;
	struct hist lat;
};

/* Per-run state kept out of the public result. */
struct run {
	const struct engine_phase *p;
	struct engine_result *r;
	struct workload_spec spec;
	struct workload_gen gen;
	struct datagen data;
	uint64_t amount, issued_bytes, writes_issued;
	uint64_t prev_off, prev_end; /* the job's previous I/O, for random_ios */
	unsigned inflight;
	unsigned spare;        /* slots prepared ahead at most */
	uint64_t inflight_ns;  /* time in flight of the completed I/Os */
	unsigned produced;     /* samples cut (their index) */
	struct sample_out out; /* their way out */
	uint64_t t0, next_sample, last_sample;
	uint64_t s_bytes, s_ops;
	uint64_t interval_ns;
	uint64_t win_next, win_bytes; /* 1-second windows, when interval > 1 s */
	double win_min;               /* lowest window of the sample; < 0 none */
	struct wstat mibps;
	int stopping;
	uint64_t stop_seen; /* util_now_ns() when the stop flag was seen; 0 */
};

static const struct engine_ops backends[2];
#define LIBAIO (&backends[0])
#define NULL_ENGINE (&backends[1])

/* Spare slots for a context of max_qd I/Os of up to max_bs bytes: the
 * queue depth, at most SPARE_BYTES of buffers unless that is fewer than
 * SPARE_MIN. */
static unsigned spare_slots(unsigned max_qd, uint32_t max_bs)
{
	size_t cap = SPARE_BYTES / (max_bs ? max_bs : 1);

	if (cap < SPARE_MIN)
		cap = SPARE_MIN;
	return max_qd < cap ? max_qd : (unsigned)cap;
}

/* The parts both engines share: slots, free list, events, batch. */
static struct engine_ctx *ctx_alloc(const struct engine_ops *ops, unsigned max_qd, uint32_t max_bs)
{
	struct engine_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ops = ops;
	c->max_qd = max_qd;
	c->max_bs = max_bs;
	c->nspare = spare_slots(max_qd, max_bs);
	c->nslots = max_qd + c->nspare;
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	c->free_idx = calloc(c->nslots, sizeof(*c->free_idx));
	c->ready = calloc(c->nslots, sizeof(*c->ready));
	c->events = calloc(max_qd, sizeof(*c->events));
	c->batch = calloc(max_qd, sizeof(*c->batch));
	if (!c->slots || !c->free_idx || !c->ready || !c->events || !c->batch) {
		engine_destroy(c);
		return NULL;
	}
	return c;
}

int engine_create(unsigned max_qd, uint32_t max_bs, struct engine_ctx **out)
{
	struct engine_ctx *c = ctx_alloc(LIBAIO, max_qd, max_bs);
	int ret = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->mem = util_buf_alloc((size_t)c->nslots * max_bs, &c->mem_len);
	if (!c->mem)
		goto fail;
	for (unsigned i = 0; i < c->nslots; i++)
		c->slots[i].buf = (char *)c->mem + (size_t)i * max_bs;
	ret = io_setup((int)max_qd, &c->io);
	if (ret < 0) {
		c->io = 0;
		goto fail;
	}
	*out = c;
	return 0;
fail:
	engine_destroy(c);
	return ret;
}

int engine_create_null(unsigned max_qd, uint32_t max_bs, double mibps, struct engine_ctx **out)
{
	if (!(mibps > 0))
		return -EINVAL;
	struct engine_ctx *c = ctx_alloc(NULL_ENGINE, max_qd, max_bs);
	if (!c)
		return -ENOMEM;
	c->null_ns_per_byte = 1e9 / (mibps * 1048576.0);
	*out = c;
	return 0;
}

int engine_is_null(const struct engine_ctx *c)
{
	return c->ops == NULL_ENGINE;
}

/* The engine's time: the clock, or the simulated one of the null engine. */
static uint64_t now(const struct engine_ctx *c)
{
	return c->ops->now(c);
}

void engine_destroy(struct engine_ctx *c)
{
	if (!c)
		return;
	if (c->io)
		io_destroy(c->io);
	util_buf_free(c->mem, c->mem_len);
	util_buf_free(c->rmem, c->rmem_len);
	free(c->slots);
	free(c->free_idx);
	free(c->ready);
	free(c->events);
	free(c->batch);
	free(c);
}

/* Take completions straight from the mapped ring: no system call when the
 * kernel has already posted them. Returns how many were copied. */
static unsigned ring_reap(struct engine_ctx *c, unsigned max)
{
	struct aio_ring *ring = (struct aio_ring *)c->io;
	unsigned n = 0;

	if (!ring || ring->magic != AIO_RING_MAGIC || ring->incompat_features)
		return 0;
	unsigned head = ring->head;
	unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	while (head != tail && n < max) {
		c->events[n++] = ring->io_events[head];
		head = (head + 1) % ring->nr;
	}
	if (n)
		__atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
	return n;
}

/* The waker. A wait for completions must end within about REAP_TIMEOUT_NS
 * even when none come (a stalled device still gets its empty samples, a
 * stop is still seen). A timeout on every io_getevents does that, but arms
 * and cancels a kernel timer at every wait: at QD1 on a RAM-backed loop
 * device that was 1.5 us of a 23 us p50 (tools/bench/results/2026-12-04-engine-changes.md,
 * item 4). Instead, while a phase runs, one periodic timer per
 * running thread sends WAKE_SIG to that thread every REAP_TIMEOUT_NS, and
 * the thread waits in io_getevents with no timeout; the signal ends the
 * wait (EINTR, the system call is never restarted). The thread keeps
 * WAKE_SIG unblocked for the phase: a wait that io_pgetevents opened with
 * a signal mask cost 2 to 3 us per wait here (item 10 there), more than the
 * timer did. A signal that lands while the thread is not waiting sets
 * wake_pending, and the next wait returns at once instead of sleeping, so
 * a wake is lost only if it lands between that check and the system call
 * (then the wait lasts one more period). The handler's SA_RESTART keeps
 * every other system call the thread makes (io_submit, futexes) as if no
 * signal came. Where the timer is not to be had, the timed wait is used. */
#define WAKE_SIG (SIGRTMIN + 4)
#ifndef sigev_notify_thread_id /* glibc before 2.41 names only the union */
#define sigev_notify_thread_id _sigev_un._tid
#endif

static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static int wake_handler_ok;
/* A WAKE_SIG came to this thread since its last wait. */
static _Thread_local volatile sig_atomic_t wake_pending;

static void on_wake(int sig)
{
	(void)sig;
	wake_pending = 1;
}

static void wake_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_wake;
	sa.sa_flags = SA_RESTART;
	wake_handler_ok = sigaction(WAKE_SIG, &sa, NULL) == 0;
}

int engine_signals_init(void)
{
	if (pthread_once(&wake_once, wake_install))
		return -EINVAL;
	return wake_handler_ok ? 0 : -EINVAL;
}

static void waker_start(struct engine_ctx *c, uint64_t t0)
{
	sigset_t unblock;
	struct sigevent ev;
	struct itimerspec its = { { 0, REAP_TIMEOUT_NS }, { 0, REAP_TIMEOUT_NS } };

	(void)t0;
	c->waking = 0;
	if (engine_signals_init())
		return;
	sigemptyset(&unblock);
	sigaddset(&unblock, WAKE_SIG);
	if (pthread_sigmask(SIG_UNBLOCK, &unblock, &c->saved_mask))
		return;
	wake_pending = 0;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = WAKE_SIG;
	ev.sigev_notify_thread_id = gettid();
	if (!timer_create(CLOCK_MONOTONIC, &ev, &c->wake_timer)) {
		if (!timer_settime(c->wake_timer, 0, &its, NULL)) {
			c->waking = 1;
			return;
		}
		timer_delete(c->wake_timer);
	}
	pthread_sigmask(SIG_SETMASK, &c->saved_mask, NULL); /* no timer: the timed wait */
}

/* The timer gone, the thread's signal mask as it was (a WAKE_SIG still
 * pending then reaches the handler, or stays pending where the thread had
 * it blocked, harmless either way). */
static void waker_stop(struct engine_ctx *c)
{
	if (!c->waking)
		return;
	timer_delete(c->wake_timer);
	pthread_sigmask(SIG_SETMASK, &c->saved_mask, NULL);
	c->waking = 0;
}

/* Take what the ring holds, else wait for at least min completions (or
 * the waker, or the timeout without it): the kernel wakes a waiter once
 * min have arrived, not at each one. Returns the count (0 when woken
 * without completions, or when a wake came while the thread was busy) or
 * -errno. */
static int aio_reap(struct engine_ctx *c, unsigned min, unsigned max)
{
	unsigned n = ring_reap(c, max);
	if (n)
		return (int)n;
	int ret;
	if (c->waking) {
		if (wake_pending) {
			wake_pending = 0;
			return 0;
		}
		ret = io_getevents(c->io, (long)min, (long)max, c->events, NULL);
		if (ret == -EINTR) {
			wake_pending = 0;
			return 0;
		}
		return ret;
	}
	struct timespec ts = { 0, REAP_TIMEOUT_NS };
	ret = io_getevents(c->io, (long)min, (long)max, c->events, &ts);
	if (ret == -EINTR)
		return 0;
	return ret;
}

static uint64_t aio_now(const struct engine_ctx *c)
{
	(void)c;
	return util_now_ns();
}

static int aio_submit(struct engine_ctx *c, struct iocb **v, unsigned n)
{
	return io_submit(c->io, (long)n, v);
}

static uint64_t aio_done_at(struct engine_ctx *c, long res, uint64_t t)
{
	(void)c;
	(void)res;
	return t;
}

/* The null engine, as fio's: everything submitted completes at once and in
 * full, one I/O after the other on a simulated clock. */
static uint64_t null_now(const struct engine_ctx *c)
{
	return c->clock;
}

static void null_start(struct engine_ctx *c, uint64_t t0)
{
	c->clock = t0 ? t0 : util_now_ns();
}

static void null_stop(struct engine_ctx *c)
{
	(void)c;
}

static int null_submit(struct engine_ctx *c, struct iocb **v, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_event *ev = &c->events[c->npend++];
		memset(ev, 0, sizeof(*ev));
		ev->data = v[i]->data;
		ev->obj = v[i];
		ev->res = v[i]->u.c.nbytes;
	}
	return (int)n;
}

static int null_reap(struct engine_ctx *c, unsigned min, unsigned max)
{
	unsigned got = c->npend;

	(void)min;
	(void)max;
	c->npend = 0;
	return (int)got;
}

static uint64_t null_done_at(struct engine_ctx *c, long res, uint64_t t)
{
	(void)t;
	return c->clock += (uint64_t)((double)res * c->null_ns_per_byte) + 1;
}

static const struct engine_ops backends[2] = {
	{
		.name = "libaio",
		.moves_data = 1,
		.now = aio_now,
		.start = waker_start,
		.stop = waker_stop,
		.submit = aio_submit,
		.reap = aio_reap,
		.done_at = aio_done_at,
	},
	{
		.name = "null",
		.now = null_now,
		.start = null_start,
		.stop = null_stop,
		.submit = null_submit,
		.reap = null_reap,
		.done_at = null_done_at,
	},
};

/* The phase's workload: its spec, or one made of the simple fields. */
static void phase_spec(const struct engine_phase *p, struct workload_spec *out)
{
	if (p->spec) {
		*out = *p->spec;
		return;
	}
	memset(out, 0, sizeof(*out));
	out->order = p->is_random ? WO_RANDOM : WO_SEQ;
	out->random_pct = p->is_random ? 100 : 0;
	out->read_pct = p->is_write ? 0 : 100;
	out->nbs = 1;
	out->bs[0].size = p->block_size;
	out->bs[0].weight = 1;
}

/* Returns 0, or -EINVAL with the reason in why (workload_check's own, or ours). */
static int check_phase(const struct engine_ctx *c, const struct engine_phase *p,
		       const struct workload_spec *spec, char *why, size_t len)
{
	uint32_t max_bs = workload_max_bs(spec);

	if (workload_check(spec, p->span_len, why, len))
		return -EINVAL;
	if (max_bs > c->max_bs)
		snprintf(why, len,
			 "block size %u is above the %u bytes the engine was "
			 "sized for",
			 max_bs, c->max_bs);
	else if (!p->queue_depth || p->queue_depth > c->max_qd)
		snprintf(why, len,
			 "queue depth %u is 0 or above the %u the engine was "
			 "sized for",
			 p->queue_depth, c->max_qd);
	else if (p->span_len % max_bs)
		snprintf(why, len,
			 "the span of %llu bytes is not a multiple of the block "
			 "size %u",
			 (unsigned long long)p->span_len, max_bs);
	else if (p->span_offset % 512)
		snprintf(why, len, "the span offset %llu is not a multiple of 512",
			 (unsigned long long)p->span_offset);
	else if (p->sample_interval <= 0)
		snprintf(why, len, "the sample interval is not positive");
	else if (!p->amount && p->duration <= 0)
		snprintf(why, len, "neither an amount nor a duration ends the phase");
	else
		return 0;
	return -EINVAL;
}

/* Mixed runs read into buffers of their own. Returns 0 or -ENOMEM. */
static int use_read_buffers(struct engine_ctx *c, int mixed)
{
	if (!c->ops->moves_data)
		return 0;
	if (mixed && !c->rmem) {
		c->rmem = util_buf_alloc((size_t)c->nslots * c->max_bs, &c->rmem_len);
		if (!c->rmem)
			return -ENOMEM;
	}
	for (unsigned i = 0; i < c->nslots; i++)
		c->slots[i].rbuf =
			mixed ? (char *)c->rmem + (size_t)i * c->max_bs : c->slots[i].buf;
	return 0;
}

static void record_bad(struct engine_result *r, uint64_t offset, unsigned n, int why)
{
	if (r->nbad < ENGINE_BAD_MAX) {
		r->bad[r->nbad].offset = offset;
		r->bad[r->nbad].reason = why;
		r->nbad++;
	}
	r->verify_errors += n;
}

/* A sample ending t seconds into the phase, secs long, from its counts
 * and the latency histogram of its I/Os. */
static void make_sample(struct engine_sample *smp, unsigned index, double t, double secs,
			uint64_t bytes, uint64_t ops, double min_1s, const struct hist *lat)
{
	smp->index = index;
	smp->t = t;
	smp->seconds = secs;
	smp->bytes = bytes;
	smp->ops = ops;
	smp->mibps = secs > 0 ? (double)bytes / 1048576.0 / secs : 0;
	smp->iops = secs > 0 ? (double)ops / secs : 0;
	smp->mibps_min_1s = min_1s;
	smp->lat = lat;
	hist_qos(lat, &smp->lat_us);
}

static void out_init(struct sample_out *o, const struct engine_phase *p, struct wstat *w)
{
	o->p = p;
	o->interval = p->sample_interval;
	o->w = w;
	o->n = 0;
	o->held = 0;
}

/* Pass the held sample on, and count it in min, max and stddev. */
static void out_pass(struct sample_out *o)
{
	if (!o->held)
		return;
	o->smp.lat = &o->lat;
	if (o->p->on_sample)
		o->p->on_sample(o->p->arg, &o->smp);
	stats_weighted_add(o->w, o->smp.mibps, o->smp.seconds / o->interval);
	o->n++;
	o->held = 0;
}

/* Whether a sample of secs seconds is shorter than an interval. */
static int out_short(const struct sample_out *o, double secs)
{
	return secs < o->interval * WSTAT_FULL;
}

/* b, which follows a, becomes part of it: one sample from a's start to
 * b's end, with both their bytes, I/Os and slowest windows. */
static void sample_fold(struct engine_sample *a, struct hist *alat, const struct engine_sample *b)
{
	double min_1s = a->mibps_min_1s;

	if (b->mibps_min_1s >= 0 && (min_1s < 0 || b->mibps_min_1s < min_1s))
		min_1s = b->mibps_min_1s;
	hist_merge(alat, b->lat);
	make_sample(a, a->index, b->t, a->seconds + b->seconds, a->bytes + b->bytes,
		    a->ops + b->ops, min_1s, alat);
}

/* A sample is cut: a part shorter than an interval (the end of a phase,
 * or a merged interval that some jobs had left early) joins its
 * neighbour, so min and max come from whole intervals while
 * every byte stays in exactly one sample. */
static void out_sample(struct sample_out *o, const struct engine_sample *smp)
{
	if (o->held && (out_short(o, o->smp.seconds) || out_short(o, smp->seconds))) {
		sample_fold(&o->smp, &o->lat, smp);
		return;
	}
	out_pass(o);
	o->smp = *smp;
	o->lat = *smp->lat;
	o->held = 1;
}

static void emit_sample(struct engine_ctx *c, struct run *s, uint64_t end)
{
	struct engine_sample smp;

	make_sample(&smp, s->produced++, (double)(end - s->t0) / 1e9,
		    (double)(end - s->last_sample) / 1e9, s->s_bytes, s->s_ops, s->win_min,
		    &c->sample_lat);
	s->win_min = -1;
	out_sample(&s->out, &smp);
	hist_merge(&s->r->lat, &c->sample_lat);
	hist_reset(&c->sample_lat);
	s->s_bytes = s->s_ops = 0;
	s->last_sample = end;
}

/* min, max and stddev of the phase from its samples, bounded by its
 * average (unknown, -1, with fewer than two full samples). */
static void set_rate_figs(struct engine_result *r, const struct wstat *w)
{
	struct rate_figs f;

	stats_rate_figs(w, r->mibps, &f);
	r->mibps_min = f.min;
	r->mibps_max = f.max;
	r->mibps_stddev = f.stddev;
}

static void record_error(struct run *s, int err, uint64_t offset)
{
	if (!s->r->errors) {
		s->r->first_errno = err;
		s->r->first_error_offset = offset;
	}
	s->r->errors++;
	s->stopping = 1;
}

/* Whether op continues the previous I/O of the job: starts where it ended
 * or (backward) ends where it started, or repeats it. The first I/O of a
 * phase continues nothing: it counts as random. */
static int continues(struct run *s, const struct workload_op *op)
{
	int seq = s->prev_end && (op->offset == s->prev_end || op->offset == s->prev_off ||
				  op->offset + op->len == s->prev_off);

	s->prev_off = op->offset;
	s->prev_end = op->offset + op->len;
	return seq;
}

/* Mark batch[0..n) as submitted now: an I/O's latency runs from just
 * before the io_submit call that carries it. */
static void stamp(struct engine_ctx *c, unsigned n)
{
	uint64_t t = now(c);
	for (unsigned i = 0; i < n; i++)
		((struct slot *)c->batch[i]->data)->t_submit = t;
}

/* Take a free slot and prepare the job's next I/O in it (fresh data for a
 * write). Returns its iocb. */
static struct iocb *prepare(struct engine_ctx *c, struct run *s)
{
	const struct engine_phase *p = s->p;
	struct slot *sl = &c->slots[c->free_idx[--c->nfree]];
	struct workload_op op;

	workload_next(&s->gen, &op);
	sl->is_random = !continues(s, &op);
	if (op.is_write && !c->ops->moves_data) {
		io_prep_pwrite(&sl->iocb, p->fd, NULL, op.len, (long long)op.offset);
	} else if (op.is_write) {
		/* Fresh contents for every write (datagen.h: layout, dedupe). */
		sl->layout = datagen_block_over(&s->data, sl->buf, op.len, sl->layout);
		if (p->verify) {
			verify_stamp(sl->buf, op.len, op.offset, ++s->writes_issued, p->seed);
			sl->layout = 0; /* the stamps overwrote zeros */
		}
		io_prep_pwrite(&sl->iocb, p->fd, sl->buf, op.len, (long long)op.offset);
	} else {
		io_prep_pread(&sl->iocb, p->fd, sl->rbuf, op.len, (long long)op.offset);
		if (sl->rbuf == sl->buf)
			sl->layout = 0;
	}
	sl->iocb.data = sl;
	s->issued_bytes += op.len;
	return &sl->iocb;
}

/* Take the oldest prepared I/O (there is one). */
static struct iocb *take_ready(struct engine_ctx *c)
{
	struct slot *sl = &c->slots[c->ready[c->rhead]];

	c->rhead = (c->rhead + 1) % c->nslots;
	c->nready--;
	return &sl->iocb;
}

/* The I/Os of the next io_submit into c->batch: every prepared one that
 * fits in the queue, then, up to BATCH_MAX in the call, new ones prepared
 * now (the phase's amount permitting). Returns how many. */
static unsigned gather(struct engine_ctx *c, struct run *s)
{
	unsigned room = s->p->queue_depth - s->inflight, n = 0;
	uint64_t bytes = 0;

	while (n < room && c->nready &&
	       (!n || bytes + c->slots[c->ready[c->rhead]].iocb.u.c.nbytes <= BATCH_BYTES)) {
		c->batch[n] = take_ready(c);
		bytes += c->batch[n++]->u.c.nbytes;
	}
	while (n < room && n < BATCH_MAX && s->issued_bytes < s->amount && bytes < BATCH_BYTES) {
		c->batch[n] = prepare(c, s);
		bytes += c->batch[n++]->u.c.nbytes;
	}
	return n;
}

/* An I/O the kernel did not take goes back to the front of the ready
 * queue, its data and offset kept. */
static void unready(struct engine_ctx *c, struct iocb *io)
{
	struct slot *sl = io->data;

	c->rhead = (c->rhead + c->nslots - 1) % c->nslots;
	c->ready[c->rhead] = (unsigned)(sl - c->slots);
	c->nready++;
}

/* Whether the stop flag is up; the first time, the phase starts draining
 * (the clock is the real one: the drive's time, even under the null
 * engine's simulated clock). */
static int stop_seen(struct run *s)
{
	if (!s->p->stop || !atomic_load(s->p->stop))
		return 0;
	if (!s->stop_seen) {
		s->stop_seen = util_now_ns();
		s->r->stop_inflight = s->inflight;
	}
	s->r->interrupted = 1;
	s->stopping = 1;
	return 1;
}

/* Generation ahead of submission: while the queue is full, prepare the next
 * I/Os (fresh data for writes) in the spare slots. */
static void prepare_ahead(struct engine_ctx *c, struct run *s)
{
	while (c->nready < s->spare && c->nfree && s->issued_bytes < s->amount) {
		/* a large block takes milliseconds to generate: a stop is
		 * not kept waiting for a queue's worth */
		if (stop_seen(s))
			return;
		struct iocb *io = prepare(c, s);
		c->ready[(c->rhead + c->nready++) % c->nslots] =
			(unsigned)((struct slot *)io->data - c->slots);
	}
}

/* Fill the queue: submit the prepared I/Os (preparing more when none is
 * ready; see BATCH_MAX) until the queue is full or the phase has issued
 * its amount. */
static void submit(struct engine_ctx *c, struct run *s)
{
	const struct engine_phase *p = s->p;

	while (s->inflight < p->queue_depth) {
		/* each io_submit may block while the device's queue is full
		 * (large blocks, deep queues): no new one after a stop */
		if (stop_seen(s))
			return;
		unsigned n = gather(c, s), done = 0;
		if (!n)
			return;
		stamp(c, n);
		while (done < n) {
			int ret = c->ops->submit(c, c->batch + done, n - done);
			if (ret <= 0) {
				if (ret != -EAGAIN || s->inflight + done == 0)
					record_error(s, ret ? -ret : EIO,
						     (uint64_t)c->batch[done]->u.c.offset);
				break; /* EAGAIN: retry after some completions */
			}
			done += (unsigned)ret;
		}
		s->inflight += done;
		if (done < n) {
			/* What the kernel did not take is submitted again later. */
			for (unsigned i = n; i-- > done;)
				unready(c, c->batch[i]);
			return;
		}
	}
}

/* A read of verified data: check every sector it brought. */
static void check_read(struct run *s, const struct slot *sl)
{
	uint64_t bad;
	enum verify_reason why;
	unsigned n = verify_check(sl->rbuf, sl->iocb.u.c.nbytes, (uint64_t)sl->iocb.u.c.offset,
				  &bad, &why);
	if (!n)
		return;
	record_bad(s->r, bad, n, (int)why);
	if (s->p->verify_stop)
		s->stopping = 1;
}

/* Close the 1-second windows and samples that ended by t, in time order. */
static void tick(struct engine_ctx *c, struct run *s, uint64_t t)
{
	for (;;) {
		if (s->win_next <= t && s->win_next <= s->next_sample) {
			double w = (double)s->win_bytes / 1048576.0;
			if (s->win_min < 0 || w < s->win_min)
				s->win_min = w;
			s->win_bytes = 0;
			s->win_next += WINDOW_NS;
		} else if (s->next_sample <= t) {
			emit_sample(c, s, s->next_sample);
			s->next_sample += s->interval_ns;
		} else {
			return;
		}
	}
}

static int complete(struct engine_ctx *c, struct run *s)
{
	/* at least one: the queue is refilled as soon as a slot is free */
	int got = c->ops->reap(c, 1, s->inflight);
	if (got < 0)
		return got;
	uint64_t t = now(c);
	for (int i = 0; i < got; i++) {
		struct io_event *ev = &c->events[i];
		struct slot *sl = ev->data;
		long res = (long)ev->res;
		int is_write = sl->iocb.aio_lio_opcode == IO_CMD_PWRITE;
		t = c->ops->done_at(c, res, t);
		s->inflight_ns += t - sl->t_submit;
		if (res != (long)sl->iocb.u.c.nbytes) {
			record_error(s, res < 0 ? (int)-res : EIO, (uint64_t)sl->iocb.u.c.offset);
		} else {
			hist_add(&c->sample_lat, t - sl->t_submit);
			s->r->bytes += (uint64_t)res;
			s->r->ops++;
			s->s_bytes += (uint64_t)res;
			s->s_ops++;
			s->win_bytes += (uint64_t)res;
			s->r->writes += (uint64_t)is_write;
			s->r->random_ios += (uint64_t)sl->is_random;
			if (is_write && s->p->written)
				wmap_mark(s->p->written, (uint64_t)sl->iocb.u.c.offset,
					  (uint64_t)res);
			if (!is_write && s->p->verify && c->ops->moves_data)
				check_read(s, sl);
		}
		c->free_idx[c->nfree++] = (unsigned)(sl - c->slots);
		s->inflight--;
	}
	/* Stalls show as empty samples rather than vanishing. */
	tick(c, s, t);
	return 0;
}

static void run_init(struct engine_ctx *c, const struct engine_phase *p, struct engine_result *r,
		     struct run *s)
{
	memset(r, 0, sizeof(*r));
	hist_reset(&r->lat);
	hist_reset(&c->sample_lat);
	s->p = p;
	s->r = r;
	s->amount = p->amount ? p->amount : UINT64_MAX;
	s->interval_ns = (uint64_t)(p->sample_interval * 1e9);
	s->win_min = -1;
	workload_init(&s->gen, &s->spec, p->span_offset, p->span_len, p->seed ^ 0x5bd1e995u);
	if (p->start)
		workload_start(&s->gen, p->start);
	datagen_init(&s->data, p->compressibility, p->dedupe_pct, p->seed);
	/* The device (or the loop worker on the other CPU) reads each block
	 * next, not this thread (tools/bench/results/2026-12-04-engine-changes.md,
	 * item 12). */
	datagen_stream(&s->data, 1);
	stats_weighted_init(&s->mibps);
	out_init(&s->out, p, &s->mibps);
	s->spare = p->queue_depth < c->nspare ? p->queue_depth : c->nspare;
	c->nfree = c->nready = c->rhead = 0;
	for (unsigned i = 0; i < p->queue_depth + s->spare; i++)
		c->free_idx[c->nfree++] = p->queue_depth + s->spare - 1 - i;
	/* a new generator: what the buffers hold is not its layout */
	for (unsigned i = 0; i < c->nslots; i++)
		c->slots[i].layout = 0;
}

int engine_run(struct engine_ctx *c, const struct engine_phase *p, struct engine_result *r)
{
	struct run s;
	int ret;

	memset(&s, 0, sizeof(s));
	phase_spec(p, &s.spec);
	r->refused[0] = '\0';
	ret = check_phase(c, p, &s.spec, r->refused, sizeof(r->refused));
	if (ret)
		return ret;
	ret = use_read_buffers(c, s.spec.read_pct > 0 && s.spec.read_pct < 100);
	if (ret)
		return ret;
	run_init(c, p, r, &s);
	c->ops->start(c, p->t0);
	s.t0 = s.last_sample = p->t0 ? p->t0 : now(c);
	s.next_sample = s.t0 + s.interval_ns;
	/* Windows only mean something inside samples longer than one. */
	s.win_next = s.interval_ns > WINDOW_NS ? s.t0 + WINDOW_NS : UINT64_MAX;
	uint64_t limit = p->duration > 0 ? s.t0 + (uint64_t)(p->duration * 1e9) : UINT64_MAX;

	for (;;) {
		stop_seen(&s);
		if (now(c) >= limit)
			s.stopping = 1;
		if (!s.stopping) {
			submit(c, &s);
			prepare_ahead(c, &s);
		}
		/* what was prepared but not submitted when stopping is dropped */
		if (!s.inflight && (s.stopping || (s.issued_bytes >= s.amount && !c->nready)))
			break;
		ret = complete(c, &s);
		if (ret < 0)
			break;
	}
	c->ops->stop(c);
	if (s.stop_seen)
		r->stop_drain_seconds = (double)(util_now_ns() - s.stop_seen) / 1e9;
	if (ret < 0)
		return ret;
	uint64_t end = now(c);
	/* The trailing part is a sample of its real length, however short;
	 * one shorter than an interval joins the sample before it. */
	if (end > s.last_sample || s.s_bytes || !s.produced)
		emit_sample(c, &s, end);
	out_pass(&s.out);
	r->nsamples = s.out.n;
	r->seconds = (double)(end - s.t0) / 1e9;
	r->mean_depth = end > s.t0 ? (double)s.inflight_ns / (double)(end - s.t0) : 0;
	r->mibps = r->seconds > 0 ? (double)r->bytes / 1048576.0 / r->seconds : 0;
	r->iops = r->seconds > 0 ? (double)r->ops / r->seconds : 0;
	set_rate_figs(r, &s.mibps);
	r->reads = r->ops - r->writes;
	return 0;
}

/* ---- several jobs: threads summed into one result ---- */

#define PENDING 8 /* intervals merged at once */

/* One interval's samples from the jobs, until every job has given it. */
struct pend {
	int used;
	unsigned index, got;
	double t, min_1s;
	uint64_t bytes, ops;
	struct hist lat;
};

/* The jobs' samples, combined per interval and passed on in order. */
struct merge {
	pthread_mutex_t lock;
	const struct engine_phase *p; /* the caller's: on_sample, arg */
	unsigned njobs;
	unsigned reported[ENGINE_MAX_JOBS]; /* samples each job has given */
	int finished[ENGINE_MAX_JOBS];
	unsigned next; /* first interval not passed on */
	double last_t;
	unsigned nsamples;
	struct wstat mibps;
	struct sample_out out;
	struct pend pend[PENDING];
};

struct job {
	struct merge *m;
	unsigned id;
	struct engine_ctx *c;
	struct engine_phase p;
	struct engine_result r;
	int ret;
	pthread_t thread;
};

static void merge_emit(struct merge *m, struct pend *e)
{
	struct engine_sample smp;

	make_sample(&smp, m->nsamples++, e->t, e->t - m->last_t, e->bytes, e->ops, e->min_1s,
		    &e->lat);
	m->last_t = e->t;
	out_sample(&m->out, &smp);
	e->used = 0;
}

/* Whether every job has given interval k or will give no more. */
static int merge_ready(const struct merge *m, unsigned k)
{
	for (unsigned j = 0; j < m->njobs; j++)
		if (m->reported[j] <= k && !m->finished[j])
			return 0;
	return 1;
}

/* Pass on the intervals that are complete (all of them when force). */
static void merge_flush(struct merge *m, int force)
{
	for (;;) {
		struct pend *e = &m->pend[m->next % PENDING];
		int any = 0;
		for (unsigned i = 0; i < PENDING; i++)
			any |= m->pend[i].used;
		if (!any || (!force && !merge_ready(m, m->next)))
			return;
		if (e->used && e->index == m->next)
			merge_emit(m, e);
		m->next++;
	}
}

/* A job's sample: add it to its interval. Jobs more than PENDING intervals
 * apart push the oldest interval out with the jobs it has; a job's sample
 * of an interval already passed on goes into the first open one, so that
 * every byte is still in exactly one sample. */
static void job_sample(void *arg, const struct engine_sample *smp)
{
	struct job *jb = arg;
	struct merge *m = jb->m;

	pthread_mutex_lock(&m->lock);
	while (smp->index >= m->next + PENDING) {
		struct pend *old = &m->pend[m->next % PENDING];
		if (old->used)
			merge_emit(m, old);
		m->next++;
	}
	{
		int late = smp->index < m->next;
		unsigned k = late ? m->next : smp->index;
		struct pend *e = &m->pend[k % PENDING];
		if (!e->used) {
			memset(e, 0, offsetof(struct pend, lat));
			hist_reset(&e->lat);
			e->used = 1;
			e->index = k;
			e->min_1s = -1;
		}
		double t = late ? m->last_t + m->p->sample_interval : smp->t;
		e->got++;
		e->bytes += smp->bytes;
		e->ops += smp->ops;
		e->t = t > e->t ? t : e->t;
		/* the jobs' slowest windows need not coincide: their sum is a
		 * lower bound of the slowest window of the sum */
		if (smp->mibps_min_1s >= 0)
			e->min_1s = (e->min_1s < 0 ? 0 : e->min_1s) + smp->mibps_min_1s;
		hist_merge(&e->lat, smp->lat);
	}
	jb->m->reported[jb->id] = smp->index + 1;
	merge_flush(m, 0);
	pthread_mutex_unlock(&m->lock);
}

static void *job_main(void *arg)
{
	struct job *jb = arg;

	jb->ret = engine_run(jb->c, &jb->p, &jb->r);
	pthread_mutex_lock(&jb->m->lock);
	jb->m->finished[jb->id] = 1;
	merge_flush(jb->m, 0);
	pthread_mutex_unlock(&jb->m->lock);
	return NULL;
}

/* Job j's phase: its share of the amount, its own seed and start. */
static void job_phase(const struct engine_phase *p, unsigned j, unsigned n, uint64_t unit,
		      struct job *jb)
{
	uint64_t share = p->amount / n / unit * unit;

	jb->p = *p;
	jb->p.on_sample = job_sample;
	jb->p.arg = jb;
	if (p->amount)
		jb->p.amount = j ? share : p->amount - share * (n - 1);
	jb->p.seed = p->seed ^ ((uint64_t)j * 0x9e3779b97f4a7c15ull);
	jb->p.start = (p->start + p->span_len / n * j) % p->span_len / unit * unit;
}

/* Sum the jobs' results into r. */
static void jobs_sum(const struct job *jobs, unsigned n, const struct merge *m,
		     struct engine_result *r)
{
	memset(r, 0, sizeof(*r));
	hist_reset(&r->lat);
	for (unsigned j = 0; j < n; j++) {
		const struct engine_result *x = &jobs[j].r;
		r->bytes += x->bytes;
		r->ops += x->ops;
		r->reads += x->reads;
		r->writes += x->writes;
		r->random_ios += x->random_ios;
		r->verify_errors += x->verify_errors;
		r->interrupted |= x->interrupted;
		r->stop_inflight += x->stop_inflight;
		if (x->stop_drain_seconds > r->stop_drain_seconds)
			r->stop_drain_seconds = x->stop_drain_seconds;
		r->seconds = x->seconds > r->seconds ? x->seconds : r->seconds;
		hist_merge(&r->lat, &x->lat);
		if (x->errors && !r->errors) {
			r->first_errno = x->first_errno;
			r->first_error_offset = x->first_error_offset;
		}
		r->errors += x->errors;
		for (unsigned b = 0; b < x->nbad && r->nbad < ENGINE_BAD_MAX; b++)
			r->bad[r->nbad++] = x->bad[b];
	}
	r->mibps = r->seconds > 0 ? (double)r->bytes / 1048576.0 / r->seconds : 0;
	r->iops = r->seconds > 0 ? (double)r->ops / r->seconds : 0;
	double depth_s = 0;
	for (unsigned j = 0; j < n; j++)
		depth_s += jobs[j].r.mean_depth * jobs[j].r.seconds;
	r->mean_depth = r->seconds > 0 ? depth_s / r->seconds : 0;
	r->nsamples = m->out.n;
	set_rate_figs(r, &m->mibps);
}

int engine_run_jobs(struct engine_ctx *const *ctx, unsigned njobs, const struct engine_phase *p,
		    struct engine_result *r)
{
	struct workload_spec spec;
	struct merge *m;
	struct job *jobs;
	unsigned started = 0;
	int ret = 0;

	r->refused[0] = '\0';
	if (njobs == 1)
		return engine_run(ctx[0], p, r);
	if (!njobs || njobs > ENGINE_MAX_JOBS)
		return -EINVAL;
	phase_spec(p, &spec);
	uint64_t unit = workload_max_bs(&spec);
	/* an amount too small for every job to move a block runs fewer jobs */
	if (p->amount && unit && p->amount / unit < njobs)
		njobs = p->amount / unit ? (unsigned)(p->amount / unit) : 1;
	m = calloc(1, sizeof(*m));
	jobs = calloc(njobs, sizeof(*jobs));
	if (!m || !jobs) {
		ret = -ENOMEM;
		goto out;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->p = p;
	m->njobs = njobs;
	stats_weighted_init(&m->mibps);
	out_init(&m->out, p, &m->mibps);
	uint64_t t0 = util_now_ns();
	for (unsigned j = 0; j < njobs; j++) {
		jobs[j].m = m;
		jobs[j].id = j;
		jobs[j].c = ctx[j];
		job_phase(p, j, njobs, unit ? unit : 512, &jobs[j]);
		jobs[j].p.t0 = p->t0 ? p->t0 : t0;
	}
	for (; started < njobs; started++) {
		ret = -pthread_create(&jobs[started].thread, NULL, job_main, &jobs[started]);
		if (ret)
			break;
	}
	pthread_mutex_lock(&m->lock);
	for (unsigned j = started; j < njobs; j++)
		m->finished[j] = 1; /* never started: nothing to wait for */
	pthread_mutex_unlock(&m->lock);
	for (unsigned j = 0; j < started; j++)
		pthread_join(jobs[j].thread, NULL);
	for (unsigned j = 0; j < started && !ret; j++) {
		ret = jobs[j].ret;
		if (ret)
			snprintf(r->refused, sizeof(r->refused), "job %u: %s", j + 1,
				 jobs[j].r.refused[0] ? jobs[j].r.refused : strerror(-ret));
	}
	if (!ret) {
		merge_flush(m, 1);
		out_pass(&m->out);
		jobs_sum(jobs, njobs, m, r);
	}
	pthread_mutex_destroy(&m->lock);
out:
	free(jobs);
	free(m);
	return ret;
}
