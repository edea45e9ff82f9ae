/* engine: the phase runner every engine shares (engine.h): keeping the
 * queue full, spare slots prepared ahead, timing, samples, verify and
 * fresh data; and the contexts, made once for the engine the ioengine key
 * names (engine_list.h). The engine itself is a table of functions
 * (engine_ops.h), called here and nowhere else. */
#include "io/engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "io/datagen.h"
#include "io/engine_ops.h"
#include "io/engine_sample.h"
#include "io/verify.h"

#define WINDOW_NS 1000000000ull /* mibps_min_1s windows */
/* What one submission carries. The runner refills the queue after every
 * reap (a reap takes every completion there and waits for at least
 * REAP_MIN of them, below). A submission carries every prepared I/O
 * that fits in the queue, so that all the replacements of one reap enter
 * the queue together (in calls of at most 8, a reap of 100 at QD128 left
 * the last of them out of the queue for 12 calls, and the queue averaged
 * 112-117 of 128: tools/bench/results/2026-12-05T1031Z-vm.md; the block
 * layer still passes a long call's requests on every 32, at its plug's
 * limit). I/Os that must be prepared inline, when none is ready, go at
 * most BATCH_MAX per call, so that the first reach the device while the
 * next are generated. (The runner used to wait for a quarter of the queue
 * to be free and to submit one I/O per call below 32 in flight: on a
 * second machine that cost 30 % of 4k randwrite QD32 against this;
 * tools/bench/results/2026-12-04-engine-changes.md, item 11.) */
#define BATCH_MAX 8
/* ... and at most this many bytes per call (one I/O at least): a
 * submission may block while the device's queue is full, and a call of 32
 * I/Os of 16 MiB held a stop for up to 0.85 s on a loop device before the
 * runner could see it (a stop submits nothing new, but waits for the call
 * it is in). Large blocks lose nothing by it: a call per 16 MiB is nothing
 * beside the transfer. */
#define BATCH_BYTES (16u << 20)
/* The completions a reap waits for before the queue is refilled: an
 * eighth of the queue (4 at QD32, 16 at QD128; one below QD16, so a
 * shallow queue is refilled at each completion). Completions of 4 KiB
 * writes on a loop device come one or two at a time; refilled at each,
 * io_uring made 0.62 to 0.77 system calls per I/O (a submission per
 * reap), against 0.18 when the reap waits for 4 (a submission per four
 * I/Os or more, and most reaps find their four without a wait), with 18 %
 * less CPU per GiB at the same rate and the same queue kept (31.87 of
 * 32): tools/bench/results/2026-12-08-reap-batch.md. What it costs: an
 * I/O that completes first in a batch is timed to the batch's reap, up to
 * REAP_MIN - 1 completions later (at the queue's pace, at most an eighth
 * of the mean latency, about a sixteenth on average). */
#define REAP_MIN(qd) ((qd) >= 16 ? (qd) / 8 : 1u)
/* Slots beyond the queue depth: while I/Os are in flight the runner fills
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
	uint64_t stop_seen_ns; /* util_now_ns() when the stop flag was seen; 0 */
};

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

/* The parts every engine shares: slots, free list, completions, batch,
 * and the write buffers of an engine that moves data. */
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
	c->done = calloc(max_qd, sizeof(*c->done));
	c->batch = calloc(max_qd, sizeof(*c->batch));
	if (!c->slots || !c->free_idx || !c->ready || !c->done || !c->batch)
		goto fail;
	if (ops->moves_data) {
		c->mem = util_buf_alloc((size_t)c->nslots * max_bs, &c->mem_len);
		if (!c->mem)
			goto fail;
	}
	for (unsigned i = 0; i < c->nslots; i++) {
		c->slots[i].index = i;
		c->slots[i].buf = c->mem ? (char *)c->mem + (size_t)i * max_bs : NULL;
		c->slots[i].rbuf = c->slots[i].buf;
	}
	return c;
fail:
	engine_destroy(c);
	return NULL;
}

int engine_probe(enum engine_kind k, char *why, size_t len)
{
	const struct engine_ops *ops = engine_ops_of(k);

	if (len)
		why[0] = '\0';
	if (!ops)
		return -EINVAL;
	return ops->probe ? ops->probe(why, len) : 0;
}

/* engine_auto's choice, made once per process. */
static pthread_once_t auto_once = PTHREAD_ONCE_INIT;
static enum engine_kind auto_kind = ENGINE_LIBAIO;
static char auto_why[200];

/* The first engine auto may choose that passes its probe, in the list's
 * order; auto_why names the refusals before it and why it runs. */
static void auto_choose(void)
{
	size_t used = 0;

	for (int k = ENGINE_AUTO + 1; k < ENGINE__COUNT; k++) {
		const struct engine_ops *ops = engine_ops_of((enum engine_kind)k);
		char why[160];
		if (!ops->for_auto)
			continue;
		int ret = engine_probe((enum engine_kind)k, why, sizeof(why));
		if (used < sizeof(auto_why) && (ret || why[0]))
			used += (size_t)snprintf(auto_why + used, sizeof(auto_why) - used,
						 ret ? "%s%s refused: %s" : "%s%.0s%s",
						 used ? "; " : "", ops->name, why);
		if (!ret) {
			auto_kind = (enum engine_kind)k;
			return;
		}
	}
}

enum engine_kind engine_auto(char *why, size_t len)
{
	pthread_once(&auto_once, auto_choose);
	if (len)
		util_strlcpy(why, auto_why, len);
	return auto_kind;
}

/* Whether a table has every function the runner calls unasked: one that
 * lacks any is our bug, refused rather than called. */
static int ops_complete(const struct engine_ops *ops)
{
	return ops->name && ops->open && ops->close && ops->now && ops->start && ops->stop &&
	       ops->submit && ops->reap;
}

/* A context of the engine with table ops. Returns 0 or -errno (-ENOSYS:
 * an incomplete table). */
static int open_ops(const struct engine_ops *ops, const struct engine_opts *o,
		    struct engine_ctx **out)
{
	struct engine_ctx *c;
	int ret;

	if (!ops_complete(ops))
		return -ENOSYS;
	c = ctx_alloc(ops, o->max_qd, o->max_bs);
	if (!c)
		return -ENOMEM;
	snprintf(c->note, sizeof(c->note), "%s", ops->name);
	ret = ops->open(c, o);
	if (ret) {
		c->ops = NULL; /* nothing of the engine's own to close */
		engine_destroy(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* auto's context: its choice, and when that engine cannot be set up for
 * this context (a ring refused for memory, say), the next engine auto may
 * choose in the list's order, each failure added to why. Returns 0 or the
 * last engine's -errno. */
static int open_auto(const struct engine_opts *o, struct engine_ctx **out)
{
	char why[200];
	int ret = -EINVAL, tried = 0;

	for (int k = (int)engine_auto(why, sizeof(why)); k < ENGINE__COUNT; k++) {
		const struct engine_ops *ops = engine_ops_of((enum engine_kind)k);
		size_t used = strlen(why);
		if (!ops->for_auto)
			continue;
		if (tried++)
			snprintf(why + used, sizeof(why) - used, ", so %s", ops->name);
		ret = open_ops(ops, o, out);
		if (!ret) {
			char note[sizeof((*out)->note)];
			snprintf(note, sizeof(note), "%s (ioengine = auto: %s)", (*out)->note, why);
			memcpy((*out)->note, note, sizeof(note));
			return 0;
		}
		used = strlen(why);
		snprintf(why + used, sizeof(why) - used, "; %s: %s", ops->name, strerror(-ret));
	}
	return ret;
}

int engine_open(enum engine_kind kind, const struct engine_opts *o, struct engine_ctx **out)
{
	if (!o->max_qd || !o->max_bs)
		return -EINVAL;
	if (kind == ENGINE_AUTO)
		return open_auto(o, out);
	const struct engine_ops *ops = engine_ops_of(kind);
	return ops ? open_ops(ops, o, out) : -EINVAL;
}

int engine_create(unsigned max_qd, uint32_t max_bs, struct engine_ctx **out)
{
	struct engine_opts o = { .max_qd = max_qd, .max_bs = max_bs };
	return engine_open(ENGINE_LIBAIO, &o, out);
}

int engine_create_null(unsigned max_qd, uint32_t max_bs, double mibps, struct engine_ctx **out)
{
	struct engine_opts o = { .max_qd = max_qd, .max_bs = max_bs, .null_mibps = mibps };
	if (!(mibps > 0))
		return -EINVAL;
	return engine_open(ENGINE_NULL, &o, out);
}

int engine_is_null(const struct engine_ctx *c)
{
	return c->ops->simulated;
}

const char *engine_name(const struct engine_ctx *c)
{
	return c->ops->name;
}

const char *engine_describe(const struct engine_ctx *c)
{
	return c->note;
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
	if (c->ops && c->ops->close)
		c->ops->close(c);
	util_buf_free(c->mem, c->mem_len);
	util_buf_free(c->rmem, c->rmem_len);
	free(c->slots);
	free(c->free_idx);
	free(c->ready);
	free(c->done);
	free(c->batch);
	free(c);
}

void engine_phase_spec(const struct engine_phase *p, struct workload_spec *out)
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

/* Mixed runs read into buffers of their own, allocated by the first and
 * made known to the engine (registered buffers). Returns 0 or -errno. */
static int use_read_buffers(struct engine_ctx *c, int mixed)
{
	if (!c->ops->moves_data)
		return 0;
	if (mixed && !c->rmem) {
		c->rmem = util_buf_alloc((size_t)c->nslots * c->max_bs, &c->rmem_len);
		if (!c->rmem)
			return -ENOMEM;
		int ret = c->ops->buffers ? c->ops->buffers(c) : 0;
		if (ret) {
			util_buf_free(c->rmem, c->rmem_len);
			c->rmem = NULL;
			return ret;
		}
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

static void emit_sample(struct engine_ctx *c, struct run *s, uint64_t end)
{
	struct engine_sample smp;

	engine_sample_make(&smp, s->produced++, (double)(end - s->t0) / 1e9,
			   (double)(end - s->last_sample) / 1e9, s->s_bytes, s->s_ops, s->win_min,
			   &c->sample_lat);
	s->win_min = -1;
	engine_out_push(&s->out, &smp);
	hist_merge(&s->r->lat, &c->sample_lat);
	hist_reset(&c->sample_lat);
	s->s_bytes = s->s_ops = 0;
	s->last_sample = end;
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
 * before the submission that carries it. */
static void stamp(struct engine_ctx *c, unsigned n)
{
	uint64_t t = now(c);
	for (unsigned i = 0; i < n; i++)
		c->batch[i]->t_submit = t;
}

/* Take a free slot and prepare the job's next I/O in it (fresh data for a
 * write). Returns the slot. */
static struct engine_slot *prepare(struct engine_ctx *c, struct run *s)
{
	const struct engine_phase *p = s->p;
	struct engine_slot *sl = &c->slots[c->free_idx[--c->nfree]];
	struct workload_op op;

	workload_next(&s->gen, &op);
	sl->is_random = !continues(s, &op);
	sl->bs = op.bs;
	sl->offset = op.offset;
	sl->len = op.len;
	sl->is_write = op.is_write;
	if (op.is_write && c->ops->moves_data) {
		/* Fresh contents for every write (datagen.h: layout, dedupe). */
		sl->layout = datagen_block_over(&s->data, sl->buf, op.len, sl->layout);
		if (p->verify) {
			verify_stamp(sl->buf, op.len, op.offset, ++s->writes_issued, p->seed);
			sl->layout = 0; /* the stamps overwrote zeros */
		}
	} else if (!op.is_write && sl->rbuf == sl->buf) {
		sl->layout = 0;
	}
	s->issued_bytes += op.len;
	return sl;
}

/* Take the oldest prepared I/O (there is one). */
static struct engine_slot *take_ready(struct engine_ctx *c)
{
	struct engine_slot *sl = &c->slots[c->ready[c->rhead]];

	c->rhead = (c->rhead + 1) % c->nslots;
	c->nready--;
	return sl;
}

/* The I/Os of the next submission into c->batch: every prepared one that
 * fits in the queue, then, up to BATCH_MAX in the call, new ones prepared
 * now (the phase's amount permitting). Returns how many. */
static unsigned gather(struct engine_ctx *c, struct run *s)
{
	unsigned room = s->p->queue_depth - s->inflight, n = 0;
	uint64_t bytes = 0;

	while (n < room && c->nready &&
	       (!n || bytes + c->slots[c->ready[c->rhead]].len <= BATCH_BYTES)) {
		c->batch[n] = take_ready(c);
		bytes += c->batch[n++]->len;
	}
	while (n < room && n < BATCH_MAX && s->issued_bytes < s->amount && bytes < BATCH_BYTES) {
		c->batch[n] = prepare(c, s);
		bytes += c->batch[n++]->len;
	}
	return n;
}

/* An I/O the kernel did not take goes back to the front of the ready
 * queue, its data and offset kept. */
static void unready(struct engine_ctx *c, struct engine_slot *sl)
{
	c->rhead = (c->rhead + c->nslots - 1) % c->nslots;
	c->ready[c->rhead] = sl->index;
	c->nready++;
}

/* Whether the phase is to stop: the stop flag, seen once and kept; the
 * first time, the phase starts draining (the clock is the real one: the
 * drive's time, even under the null engine's simulated clock). */
static int stop_seen(struct run *s)
{
	if (!s->r->interrupted && s->p->stop && atomic_load(s->p->stop)) {
		s->r->interrupted = 1;
		s->stopping = 1;
		s->stop_seen_ns = util_now_ns();
		s->r->stop_inflight = s->inflight;
	}
	return s->stopping;
}

/* Generation ahead of submission: while the queue is full, prepare the next
 * I/Os (fresh data for writes) in the spare slots; a stop ends it (a large
 * block takes milliseconds to generate: a stop does not wait for a queue's
 * worth of them). */
static void prepare_ahead(struct engine_ctx *c, struct run *s)
{
	while (c->nready < s->spare && c->nfree && s->issued_bytes < s->amount && !stop_seen(s)) {
		struct engine_slot *sl = prepare(c, s);
		c->ready[(c->rhead + c->nready++) % c->nslots] = sl->index;
	}
}

/* Fill the queue: submit the prepared I/Os (preparing more when none is
 * ready; see BATCH_MAX) until the queue is full, the phase has issued its
 * amount or is to stop (nothing new goes out once the stop flag is seen). */
static void submit(struct engine_ctx *c, struct run *s)
{
	const struct engine_phase *p = s->p;

	while (s->inflight < p->queue_depth && !stop_seen(s)) {
		unsigned n = gather(c, s), done = 0;
		if (!n)
			return;
		stamp(c, n);
		while (done < n) {
			int ret = c->ops->submit(c, c->batch + done, n - done);
			if (ret <= 0) {
				if (ret != -EAGAIN || s->inflight + done == 0)
					record_error(s, ret ? -ret : EIO, c->batch[done]->offset);
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
static void check_read(struct run *s, const struct engine_slot *sl)
{
	uint64_t bad;
	enum verify_reason why;
	unsigned n = verify_check(sl->rbuf, sl->len, sl->offset, &bad, &why);
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

/* One completed I/O of res bytes at t, counted. */
static void count_done(struct engine_ctx *c, struct run *s, struct engine_slot *sl, long res,
		       uint64_t t)
{
	s->inflight_ns += t - sl->t_submit;
	if (res != (long)sl->len) {
		record_error(s, res < 0 ? (int)-res : EIO, sl->offset);
		return;
	}
	hist_add(&c->sample_lat, t - sl->t_submit);
	s->r->bytes += (uint64_t)res;
	s->r->ops++;
	s->s_bytes += (uint64_t)res;
	s->s_ops++;
	s->win_bytes += (uint64_t)res;
	s->r->writes += (uint64_t)sl->is_write;
	s->r->random_ios += (uint64_t)sl->is_random;
	s->r->bs_ops[sl->bs]++;
	s->r->lba_ops[(sl->offset - s->p->span_offset) * ENGINE_LBA_BINS / s->p->span_len]++;
	if (sl->is_write && s->p->written)
		wmap_mark(s->p->written, sl->offset, (uint64_t)res);
	if (!sl->is_write && s->p->verify && c->ops->moves_data)
		check_read(s, sl);
}

static int complete(struct engine_ctx *c, struct run *s)
{
	unsigned want = REAP_MIN(s->p->queue_depth);
	/* never more than are in flight (the drain at a phase's end) */
	if (want > s->inflight && s->inflight)
		want = s->inflight;
	int got = c->ops->reap(c, want, s->inflight);
	if (got < 0)
		return got;
	uint64_t t = now(c);
	for (int i = 0; i < got; i++) {
		const struct engine_done *d = &c->done[i];
		struct engine_slot *sl = d->sl;
		if (c->ops->done_at)
			t = c->ops->done_at(c, d, t);
		count_done(c, s, sl, d->res, d->t ? d->t : t);
		c->free_idx[c->nfree++] = sl->index;
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
	engine_out_init(&s->out, p, &s->mibps);
	s->spare = p->queue_depth < c->nspare ? p->queue_depth : c->nspare;
	c->nfree = c->nready = c->rhead = 0;
	for (unsigned i = 0; i < p->queue_depth + s->spare; i++)
		c->free_idx[c->nfree++] = p->queue_depth + s->spare - 1 - i;
	/* a new generator: what the buffers hold is not its layout */
	for (unsigned i = 0; i < c->nslots; i++)
		c->slots[i].layout = 0;
}

/* The phase's loop: fill the queue, prepare ahead, reap; until the amount
 * is done, the duration is over, an error or a stop. Returns 0 or the
 * engine's -errno. */
static int run_loop(struct engine_ctx *c, struct run *s, uint64_t limit)
{
	int ret = 0;

	for (;;) {
		if (now(c) >= limit)
			s->stopping = 1;
		if (!stop_seen(s)) {
			submit(c, s);
			prepare_ahead(c, s);
		}
		/* what was prepared but not submitted when stopping is dropped */
		if (!s->inflight && (s->stopping || (s->issued_bytes >= s->amount && !c->nready)))
			return 0;
		ret = complete(c, s);
		if (ret < 0)
			return ret;
	}
}

/* The phase's figures once its loop has ended at end. */
static void run_finish(struct engine_ctx *c, struct run *s, uint64_t end)
{
	struct engine_result *r = s->r;

	/* The trailing part is a sample of its real length, however short;
	 * one shorter than an interval joins the sample before it. */
	if (end > s->last_sample || s->s_bytes || !s->produced)
		emit_sample(c, s, end);
	engine_out_pass(&s->out);
	r->nsamples = s->out.n;
	r->seconds = (double)(end - s->t0) / 1e9;
	r->mean_depth = end > s->t0 ? (double)s->inflight_ns / (double)(end - s->t0) : 0;
	r->mibps = r->seconds > 0 ? (double)r->bytes / 1048576.0 / r->seconds : 0;
	r->iops = r->seconds > 0 ? (double)r->ops / r->seconds : 0;
	engine_rate_figs(r, &s->mibps);
	r->reads = r->ops - r->writes;
}

int engine_run(struct engine_ctx *c, const struct engine_phase *p, struct engine_result *r)
{
	struct run s;
	int ret;

	memset(&s, 0, sizeof(s));
	engine_phase_spec(p, &s.spec);
	r->refused[0] = '\0';
	ret = check_phase(c, p, &s.spec, r->refused, sizeof(r->refused));
	if (ret)
		return ret;
	ret = use_read_buffers(c, s.spec.read_pct > 0 && s.spec.read_pct < 100);
	if (ret)
		return ret;
	run_init(c, p, r, &s);
	ret = c->ops->start(c, p->fd, p->t0);
	if (ret)
		return ret;
	s.t0 = s.last_sample = p->t0 ? p->t0 : now(c);
	s.next_sample = s.t0 + s.interval_ns;
	/* Windows only mean something inside samples longer than one. */
	s.win_next = s.interval_ns > WINDOW_NS ? s.t0 + WINDOW_NS : UINT64_MAX;
	uint64_t limit = p->duration > 0 ? s.t0 + (uint64_t)(p->duration * 1e9) : UINT64_MAX;
	ret = run_loop(c, &s, limit);
	c->ops->stop(c);
	if (s.stop_seen_ns)
		r->stop_drain_seconds = (double)(util_now_ns() - s.stop_seen_ns) / 1e9;
	if (ret < 0)
		return ret;
	run_finish(c, &s, now(c));
	return 0;
}
