/* Unit tests of engine: real O_DIRECT phases on a temporary file, the
 * same tests with each engine that moves data (libaio, io_uring, sync),
 * and the null engine on its simulated clock. */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "io/engine.h"
#include "io/engine_ops.h"
#include "io/verify.h"

#define SPAN (4u << 20)

/* The engine the device tests run on (main runs them once per engine). */
static enum engine_kind kind = ENGINE_LIBAIO;

static int open_kind(unsigned qd, uint32_t bs, struct engine_ctx **out)
{
	struct engine_opts o = { .max_qd = qd, .max_bs = bs };
	return engine_open(kind, &o, out);
}

struct fixture {
	char path[64];
	int fd;
	struct engine_ctx *eng;
	int nsamples;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/var/tmp/wearmon-engine-XXXXXX");
	int tmp = mkstemp(f->path);
	if (tmp < 0)
		return -1;
	close(tmp);
	f->fd = open(f->path, O_RDWR | O_DIRECT);
	if (f->fd < 0 || ftruncate(f->fd, SPAN + 65536))
		return -1;
	if (open_kind(16, 65536, &f->eng))
		return -1;
	assert_string_equal(engine_name(f->eng), engine_kind_name(kind));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	engine_destroy(f->eng);
	close(f->fd);
	unlink(f->path);
	free(f);
	return 0;
}

static void count_sample(void *arg, const struct engine_sample *s)
{
	struct fixture *f = arg;
	f->nsamples++;
	assert_true(s->seconds > 0);
}

static void base_phase(struct fixture *f, struct engine_phase *p)
{
	memset(p, 0, sizeof(*p));
	p->fd = f->fd;
	p->span_offset = 65536;
	p->span_len = SPAN;
	p->block_size = 4096;
	p->queue_depth = 8;
	p->is_write = 1;
	p->amount = SPAN;
	p->seed = 1;
	p->sample_interval = 0.01;
	p->on_sample = count_sample;
	p->arg = f;
}

/* A sequential write covers the span exactly, and not a byte outside it. */
static void test_seq_write_covers_span(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	base_phase(f, &p);
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.bytes, SPAN);
	assert_int_equal(r.ops, SPAN / 4096);
	assert_int_equal(r.lat.count, SPAN / 4096);
	assert_int_equal(r.random_ios, 1); /* the first I/O continues nothing */
	assert_true(r.nsamples >= 1);
	assert_int_equal((int)r.nsamples, f->nsamples);
	assert_true(r.mibps > 0 && r.mibps_min <= r.mibps_max);

	unsigned char *buf = malloc(SPAN + 65536);
	int rd = open(f->path, O_RDONLY);
	assert_int_equal(pread(rd, buf, SPAN + 65536, 0), SPAN + 65536);
	close(rd);
	for (size_t i = 0; i < 65536; i++)
		assert_int_equal(buf[i], 0);
	/* every block carries a nonzero stamp at its start */
	for (size_t b = 0; b < SPAN / 4096; b++) {
		uint64_t stamp;
		memcpy(&stamp, buf + 65536 + b * 4096, 8);
		assert_true(stamp != 0);
	}
	free(buf);
}

/* Random reads of 1x the span touch most blocks (1 - 1/e expected). */
static void test_random_read_uniform(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	base_phase(f, &p);
	p.is_write = 0;
	p.is_random = 1;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.ops, SPAN / 4096);
	/* chance neighbours aside (1 in 1024 each), every I/O jumps */
	assert_true(r.random_ios > r.ops * 99 / 100);
}

/* random_ios counts the I/Os that did not continue the previous one: an
 * IOMeter mix's random share, none in a backward or rewrite order. */
static void test_random_ios(void **state)
{
	struct fixture *f = *state;
	static const struct {
		enum workload_order order;
		unsigned random_pct;
	} cases[] = {
		{ WO_SEQ, 30 },
		{ WO_SEQ, 80 },
		{ WO_BACKWARD, 0 },
		{ WO_RECORD, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct workload_spec spec = { .order = cases[i].order,
					      .read_pct = 100,
					      .random_pct = cases[i].random_pct,
					      .nbs = 1,
					      .bs = { { 4096, 1 } } };
		struct engine_phase p;
		static struct engine_result r;
		base_phase(f, &p);
		p.spec = &spec;
		p.amount = 4 * SPAN;
		assert_int_equal(engine_run(f->eng, &p, &r), 0);
		double pct = 100.0 * (double)r.random_ios / (double)r.ops;
		print_message("  order %d random_pct %u: %.2f%% random I/Os of %llu\n",
			      cases[i].order, cases[i].random_pct, pct, (unsigned long long)r.ops);
		assert_true(pct > cases[i].random_pct - 2.0 && pct < cases[i].random_pct + 2.0);
	}
}

static void test_duration_limit(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	base_phase(f, &p);
	p.is_random = 1;
	p.amount = 0;
	p.duration = 0.3;
	p.sample_interval = 0.1;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_true(r.seconds >= 0.3 && r.seconds < 2.0);
	assert_true(r.nsamples >= 2);
}

/* What the engine loop asked of the engine's reap, and what it got. */
static struct reap_log {
	const struct engine_ops *real;
	unsigned calls, short_calls; /* short: fewer than min came back */
	unsigned min_lo, min_hi;     /* the least and the most min asked */
	unsigned at_min[17];         /* calls per min asked, 1 to 16 */
} rl;

static int logged_reap(struct engine_ctx *c, unsigned min, unsigned max)
{
	int n = rl.real->reap(c, min, max);

	rl.calls++;
	rl.min_lo = rl.calls == 1 || min < rl.min_lo ? min : rl.min_lo;
	rl.min_hi = min > rl.min_hi ? min : rl.min_hi;
	if (min <= 16)
		rl.at_min[min]++;
	if (n >= 0 && (unsigned)n < min)
		rl.short_calls++;
	return n;
}

/* One 4k random write phase of the span at queue depth qd, the engine's
 * reaps logged; returns the phase's seconds. */
static double logged_phase(struct fixture *f, struct engine_ctx *eng, unsigned qd)
{
	struct engine_phase p;
	static struct engine_result r;
	struct engine_ops wrap = *eng->ops;

	memset(&rl, 0, sizeof(rl));
	rl.real = eng->ops;
	wrap.reap = logged_reap;
	eng->ops = &wrap;
	base_phase(f, &p);
	p.is_random = 1;
	p.queue_depth = qd;
	uint64_t t0 = util_now_ns();
	int ret = engine_run(eng, &p, &r);
	eng->ops = rl.real;
	assert_int_equal(ret, 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.bytes, SPAN);
	return (double)(util_now_ns() - t0) / 1e9;
}

/* At QD16 and over a reap waits for an eighth of the queue (4 at QD32)
 * before the queue is refilled, and gets at least that many; a shallow
 * queue is refilled at each completion. A reap may come back short only
 * when the periodic wake (every 100 ms) ends its wait. */
static void test_reap_waits_for_an_eighth_of_the_queue(void **state)
{
	struct fixture *f = *state;
	struct engine_ctx *eng;

	assert_int_equal(open_kind(32, 4096, &eng), 0);
	double secs = logged_phase(f, eng, 32);
	print_message("  %s QD32: %u reaps, %u asked for 4, %u short in %.3f s\n",
		      engine_kind_name(kind), rl.calls, rl.at_min[4], rl.short_calls, secs);
	assert_int_equal(rl.min_hi, 4);
	assert_true(rl.min_lo >= 1);
	/* all but the drain at the end ask for the eighth */
	assert_true(rl.at_min[4] + 3 >= rl.calls);
	assert_true(rl.short_calls <= (unsigned)(secs / 0.1) + 1);

	secs = logged_phase(f, eng, 8);
	assert_int_equal(rl.min_lo, 1);
	assert_int_equal(rl.min_hi, 1);
	assert_true(rl.short_calls <= (unsigned)(secs / 0.1) + 1);
	engine_destroy(eng);
}

static void test_stop_flag(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	static atomic_int stop = 1;
	base_phase(f, &p);
	p.stop = &stop;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.interrupted, 1);
	/* nothing is submitted once the flag is up: no I/O, none to drain */
	assert_int_equal(r.bytes, 0);
	assert_int_equal(r.ops, 0);
	assert_int_equal(r.stop_inflight, 0);
	assert_true(r.stop_drain_seconds >= 0 && r.stop_drain_seconds < 1.0);
}

/* An I/O error is counted with its offset and ends the phase. */
static void test_error_recorded(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	int ro = open(f->path, O_RDONLY | O_DIRECT);
	base_phase(f, &p);
	p.fd = ro;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	close(ro);
	assert_true(r.errors >= 1);
	assert_int_equal(r.first_errno, EBADF);
	assert_int_equal(r.first_error_offset, 65536);
}

static void test_bad_phase(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	base_phase(f, &p);
	p.queue_depth = 17; /* more than the context holds */
	assert_int_equal(engine_run(f->eng, &p, &r), -EINVAL);
	assert_non_null(strstr(r.refused, "queue depth 17"));
	base_phase(f, &p);
	p.block_size = 1000; /* not a multiple of 512 */
	assert_int_equal(engine_run(f->eng, &p, &r), -EINVAL);
	assert_non_null(strstr(r.refused, "block size 1000 is not a multiple of 512"));
	base_phase(f, &p);
	p.span_len = 4096 * 3 + 512;
	assert_int_equal(engine_run(f->eng, &p, &r), -EINVAL);
	assert_non_null(strstr(r.refused, "is not a multiple of the block size 4096"));
	base_phase(f, &p);
	p.span_len = 2048; /* workload_check's own reason reaches the caller */
	assert_int_equal(engine_run(f->eng, &p, &r), -EINVAL);
	assert_non_null(strstr(r.refused, "smaller than the block size 4096"));
	base_phase(f, &p);
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_string_equal(r.refused, "");
}

/* A randrw mix: reads and writes in the asked proportion, with a block size
 * mix, all inside the span. */
static void test_mixed_workload(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	struct workload_spec spec = { .order = WO_RANDOM,
				      .read_pct = 70,
				      .random_pct = 100,
				      .nbs = 3,
				      .bs = { { 4096, 60 }, { 16384, 30 }, { 65536, 10 } } };
	base_phase(f, &p);
	p.spec = &spec;
	p.amount = 8 * SPAN;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_true(r.bytes >= 8 * SPAN);
	assert_int_equal(r.reads + r.writes, r.ops);
	double rp = 100.0 * (double)r.reads / (double)r.ops;
	print_message("  %llu ops, %.1f%% reads\n", (unsigned long long)r.ops, rp);
	assert_true(rp > 65 && rp < 75);
}

static void corrupt(const char *path, off_t at)
{
	int fd = open(path, O_RDWR);
	unsigned char b;
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, at), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, at), 1);
	fsync(fd);
	close(fd);
}

/* Written with verify, read back clean; one corrupted byte is found at its
 * sector's offset, and verify_stop ends the phase. */
static void test_verify_catches_corruption(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	base_phase(f, &p);
	p.verify = 1;
	p.compressibility = 50;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	base_phase(f, &p);
	p.is_write = 0;
	p.verify = 1;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.verify_errors, 0);
	assert_int_equal(r.nbad, 0);
	/* the file is read through O_DIRECT: write the damage behind it */
	corrupt(f->path, 65536 + 777 * 512 + 300);
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.verify_errors, 1);
	assert_int_equal(r.nbad, 1);
	assert_int_equal(r.bad[0].offset, 65536 + 777 * 512);
	assert_int_equal(r.bad[0].reason, VERIFY_BAD_CRC);
	assert_int_equal(r.bytes, SPAN);
	p.verify_stop = 1;
	p.queue_depth = 1;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.verify_errors, 1);
	assert_true(r.bytes < SPAN);
}

/* At the context's whole depth (every slot and as many spares in use, the
 * replacements of a reap in one io_submit) each write carries its own
 * block: sequential and then random writes with verify read back clean. */
static void test_full_depth_writes_verified(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	base_phase(f, &p);
	p.queue_depth = 16;
	p.verify = 1;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.bytes, SPAN);
	p.is_random = 1;
	p.amount = 2 * SPAN;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.bytes, 2 * SPAN);
	assert_true(r.mean_depth > 0 && r.mean_depth <= 16 + 1e-9);
	p.is_write = 0;
	p.is_random = 0;
	p.amount = SPAN;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_int_equal(r.bytes, SPAN);
	assert_int_equal(r.verify_errors, 0);
	assert_int_equal(r.nbad, 0);
}

static double last_min_1s = -2, last_p9999, last_p50, last_max;

static void keep_sample(void *arg, const struct engine_sample *s)
{
	if (s->index)
		return; /* the first (full) sample */
	last_min_1s = s->mibps_min_1s;
	last_p50 = s->lat_us.p50;
	last_p9999 = s->lat_us.p9999;
	last_max = s->lat_us.max;
}

/* Samples longer than a second carry the slowest 1-second window, and the
 * QoS percentiles in order. */
static void test_sample_min_1s(void **state)
{
	struct fixture *f = *state;
	struct engine_phase p;
	static struct engine_result r;
	base_phase(f, &p);
	p.is_random = 1;
	p.amount = 0;
	p.duration = 2.05;
	p.sample_interval = 2.0;
	p.on_sample = keep_sample;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_true(r.nsamples >= 1);
	print_message("  min 1 s %.1f MiB/s of %.1f\n", last_min_1s, r.mibps);
	assert_true(last_min_1s > 0 && last_min_1s <= r.mibps * 1.5);
	assert_true(last_p50 > 0 && last_p50 <= last_p9999 && last_p9999 <= last_max);
	base_phase(f, &p);
	p.on_sample = keep_sample;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_true(last_min_1s < 0); /* not applicable to short samples */
}

/* Every sample of a phase, to check that they add up. */
struct trace {
	unsigned n;
	uint64_t bytes;
	double seconds, last_seconds;
	double interval;
	int full_before_last; /* every sample but the last is a full interval */
};

static void trace_sample(void *arg, const struct engine_sample *s)
{
	struct trace *t = arg;
	if (t->n && fabs(t->last_seconds - t->interval) > t->interval * 0.01)
		t->full_before_last = 0;
	t->n++;
	t->bytes += s->bytes;
	t->seconds += s->seconds;
	t->last_seconds = s->seconds;
}

/* A 2.35-interval phase has two samples: one interval, then the second
 * with the last 0.35 folded in (min and max from whole intervals
 * only); the samples hold every byte and span the phase; min <= avg <= max. */
static void test_partial_last_sample(void **state)
{
	struct fixture *f = *state;
	struct trace t = { .interval = 0.1, .full_before_last = 1 };
	struct engine_phase p;
	static struct engine_result r;

	base_phase(f, &p);
	p.is_random = 1;
	p.amount = 0;
	p.duration = 0.235;
	p.sample_interval = t.interval;
	p.queue_depth = 1;
	p.on_sample = trace_sample;
	p.arg = &t;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	print_message("  %u samples, last %.4f s, phase %.4f s, %.1f MiB/s (min %.1f max %.1f "
		      "sd %.1f)\n",
		      t.n, t.last_seconds, r.seconds, r.mibps, r.mibps_min, r.mibps_max,
		      r.mibps_stddev);
	/* Two samples, the last about 135 ms; a loaded machine can stretch
	 * the phase past the limit (the drain, a thread waiting for a CPU),
	 * and then it has as many whole intervals as it lasted, the part
	 * after them folded into the last. */
	unsigned want = (unsigned)(r.seconds / t.interval);
	assert_true(r.seconds >= 0.235);
	assert_int_equal(t.n, want);
	assert_int_equal((int)r.nsamples, want);
	assert_true(t.full_before_last);
	assert_true(fabs(t.last_seconds - (r.seconds - (want - 1) * t.interval)) < 1e-6);
	assert_true(t.last_seconds >= t.interval && t.last_seconds < 2 * t.interval);
	assert_true(t.bytes == r.bytes);
	assert_true(fabs(t.seconds - r.seconds) < 1e-6);
	assert_true(r.mibps_min >= 0 && r.mibps_min <= r.mibps && r.mibps <= r.mibps_max);
	assert_true(r.mibps_stddev >= 0);
	/* the I/Os' time in flight over the phase: at most the queue depth */
	assert_true(r.mean_depth > 0 && r.mean_depth <= p.queue_depth + 1e-9);
}

/* A phase too short for two full samples has no min, max or stddev. */
static void test_short_phase_no_spread(void **state)
{
	struct fixture *f = *state;
	struct trace t = { .interval = 0.1, .full_before_last = 1 };
	struct engine_phase p;
	static struct engine_result r;

	base_phase(f, &p);
	p.is_random = 1;
	p.amount = 0;
	p.duration = 0.15;
	p.sample_interval = t.interval;
	p.on_sample = trace_sample;
	p.arg = &t;
	assert_int_equal(engine_run(f->eng, &p, &r), 0);
	assert_true(t.bytes == r.bytes && r.mibps > 0);
	/* shorter than two intervals: one sample, no spread (a loaded machine
	 * can stretch the phase past two; then it has its whole intervals) */
	if (r.seconds >= 2 * t.interval) {
		assert_int_equal(t.n, (unsigned)(r.seconds / t.interval));
		return;
	}
	assert_int_equal(t.n, 1);
	assert_true(r.mibps_min < 0 && r.mibps_max < 0 && r.mibps_stddev < 0);
}

/* Merged samples: ordered intervals, summed bytes. */
struct merged {
	unsigned n, next_index;
	double last_t, shortest; /* the shortest sample, seconds */
	uint64_t bytes, ops;
	int ordered;
};

static void merged_sample(void *arg, const struct engine_sample *s)
{
	struct merged *m = arg;
	/* a part shorter than the interval joined its neighbour: indexes may skip */
	m->ordered &= s->index >= m->next_index && s->t > m->last_t && s->seconds > 0;
	m->ordered &= s->lat != NULL && s->lat->count == s->ops;
	m->next_index = s->index + 1;
	m->last_t = s->t;
	if (!m->n || s->seconds < m->shortest)
		m->shortest = s->seconds;
	m->bytes += s->bytes;
	m->ops += s->ops;
	m->n++;
}

/* Four jobs of a sequential write: the amount is split exactly, each job
 * starts a quarter of the span further, so together they cover the span
 * once; one result sums them and the samples arrive merged, in order. */
static void test_jobs_sum_and_cover(void **state)
{
	struct fixture *f = *state;
	struct engine_ctx *ctx[4] = { f->eng };
	struct engine_phase p;
	static struct engine_result r;
	struct merged m = { .ordered = 1 };

	for (int j = 1; j < 4; j++)
		assert_int_equal(open_kind(16, 65536, &ctx[j]), 0);
	base_phase(f, &p);
	p.on_sample = merged_sample;
	p.arg = &m;
	p.sample_interval = 0.002;
	assert_int_equal(engine_run_jobs(ctx, 4, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.bytes, SPAN);
	assert_int_equal(r.ops, SPAN / 4096);
	assert_int_equal(r.writes, SPAN / 4096);
	assert_int_equal(r.random_ios, 4); /* each job's first I/O */
	assert_int_equal(r.lat.count, SPAN / 4096);
	assert_true(m.ordered);
	assert_int_equal((int)r.nsamples, (int)m.n);
	/* no merged sample is a part of an interval */
	assert_true(m.n == 1 || m.shortest >= p.sample_interval * 0.999);
	/* every byte in exactly one sample, however far apart the jobs ran */
	assert_true(m.bytes == r.bytes && m.ops == r.ops);
	assert_true(r.mibps > 0 && r.mibps_min <= r.mibps && r.mibps <= r.mibps_max);

	unsigned char *buf = malloc(SPAN);
	int rd = open(f->path, O_RDONLY);
	assert_int_equal(pread(rd, buf, SPAN, 65536), SPAN);
	close(rd);
	for (size_t b = 0; b < SPAN / 4096; b++) {
		uint64_t stamp;
		memcpy(&stamp, buf + b * 4096, 8);
		if (!stamp)
			fail_msg("block %zu of the span was not written", b);
	}
	free(buf);

	/* an amount that does not divide: the shares still add up to it */
	p.amount = 4096 * 1001;
	p.is_random = 1;
	memset(&m, 0, sizeof(m));
	m.ordered = 1;
	assert_int_equal(engine_run_jobs(ctx, 3, &p, &r), 0);
	assert_int_equal(r.bytes, 4096 * 1001);
	assert_int_equal(r.ops, 1001);
	/* fewer blocks than jobs: only as many jobs as blocks */
	p.amount = 4096 * 2;
	assert_int_equal(engine_run_jobs(ctx, 4, &p, &r), 0);
	assert_int_equal(r.ops, 2);
	assert_int_equal(engine_run_jobs(ctx, 0, &p, &r), -EINVAL);
	for (int j = 1; j < 4; j++)
		engine_destroy(ctx[j]);
}

/* ---- the null engine: no device, a simulated clock ---- */

static void null_phase(struct engine_phase *p, int is_write, uint32_t bs, uint64_t amount)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1; /* never used: no I/O reaches a device */
	p->span_len = SPAN;
	p->block_size = bs;
	p->is_write = is_write;
	p->queue_depth = 8;
	p->amount = amount;
	p->sample_interval = 0.01;
	p->seed = 7;
}

/* 4 MiB at a simulated 100 MiB/s: 64 writes in 0.04 s of simulated time. */
static void test_null_engine_rate(void **state)
{
	struct engine_ctx *c;
	struct engine_phase p;
	struct engine_result *r = malloc(sizeof(*r));
	(void)state;
	assert_int_equal(engine_create_null(8, 65536, 100.0, &c), 0);
	assert_true(engine_is_null(c));
	null_phase(&p, 1, 65536, SPAN);
	assert_int_equal(engine_run(c, &p, r), 0);
	assert_int_equal(r->bytes, SPAN);
	assert_int_equal(r->ops, 64);
	assert_int_equal(r->writes, 64);
	assert_int_equal(r->errors, 0);
	assert_false(r->interrupted);
	assert_true(fabs(r->seconds - 0.04) < 0.0004);
	assert_true(fabs(r->mibps - 100.0) < 1.0);
	/* four full samples of 0.01 s (and at most a tiny trailing one) */
	assert_in_range(r->nsamples, 4, 5);
	/* eight queued writes of 0.625 ms each: the last waits for all */
	assert_true(hist_mean(&r->lat) > 2.5e6 && hist_mean(&r->lat) < 5.1e6);
	free(r);
	engine_destroy(c);
}

/* A duration ends a phase on the simulated clock; a stop at once. */
static void test_null_engine_duration_and_stop(void **state)
{
	struct engine_ctx *c;
	struct engine_phase p;
	struct engine_result *r = malloc(sizeof(*r));
	atomic_int stop = 0;
	(void)state;
	assert_int_equal(engine_create_null(8, 65536, 1000.0, &c), 0);
	null_phase(&p, 0, 65536, 0);
	p.is_random = 1;
	p.duration = 0.25;
	assert_int_equal(engine_run(c, &p, r), 0);
	assert_true(fabs(r->seconds - 0.25) < 0.001);
	assert_true(fabs((double)r->bytes / 1048576.0 - 250.0) < 1.0);
	assert_int_equal(r->reads, r->ops);
	atomic_store(&stop, 1);
	p.stop = &stop;
	assert_int_equal(engine_run(c, &p, r), 0);
	assert_true(r->interrupted);
	assert_int_equal(r->bytes, 0);
	free(r);
	engine_destroy(c);
}

/* The written map holds every write that completed: a sequential half of
 * the span is its first half; random writes by two jobs mark each block
 * they wrote once (no more than the writes, less when blocks repeat);
 * reads mark nothing. */
static void test_written_map(void **state)
{
	struct engine_ctx *c[2];
	struct engine_phase p;
	struct engine_result *r = malloc(sizeof(*r));
	struct wmap m;
	(void)state;
	for (int j = 0; j < 2; j++)
		assert_int_equal(engine_create_null(8, 65536, 100.0, &c[j]), 0);
	assert_int_equal(wmap_init(&m, 0, SPAN), 0);
	null_phase(&p, 1, 65536, SPAN / 2);
	p.written = &m;
	assert_int_equal(engine_run(c[0], &p, r), 0);
	assert_int_equal(wmap_bytes(&m), SPAN / 2);
	uint64_t(*v)[2] = NULL;
	size_t n = 0;
	assert_int_equal(wmap_extents(&m, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0][0], 0);
	assert_int_equal(v[0][1], SPAN / 2);
	free(v);
	wmap_free(&m);

	assert_int_equal(wmap_init(&m, 0, SPAN), 0);
	null_phase(&p, 1, 4096, SPAN / 2);
	p.is_random = 1;
	p.written = &m;
	assert_int_equal(engine_run_jobs(c, 2, &p, r), 0);
	assert_int_equal(r->writes, SPAN / 2 / 4096);
	uint64_t got = wmap_bytes(&m);
	assert_true(got < SPAN / 2 && got > SPAN / 4); /* 1 - e^-0.5 of the span */
	wmap_free(&m);

	assert_int_equal(wmap_init(&m, 0, SPAN), 0);
	null_phase(&p, 0, 4096, SPAN);
	p.written = &m;
	assert_int_equal(engine_run(c[0], &p, r), 0);
	assert_int_equal(wmap_bytes(&m), 0);
	wmap_free(&m);
	free(r);
	for (int j = 0; j < 2; j++)
		engine_destroy(c[j]);
}

/* No data moves, so verified reads find nothing; jobs add their rates. */
static void test_null_engine_verify_and_jobs(void **state)
{
	struct engine_ctx *c[2];
	struct engine_phase p;
	struct engine_result *r = malloc(sizeof(*r));
	(void)state;
	assert_int_equal(engine_create_null(8, 65536, 0, &c[0]), -EINVAL);
	for (int j = 0; j < 2; j++)
		assert_int_equal(engine_create_null(8, 65536, 100.0, &c[j]), 0);
	null_phase(&p, 0, 4096, SPAN);
	p.verify = 1;
	assert_int_equal(engine_run_jobs(c, 2, &p, r), 0);
	assert_int_equal(r->bytes, SPAN);
	assert_int_equal(r->verify_errors, 0);
	assert_true(fabs(r->mibps - 200.0) < 2.0);
	free(r);
	for (int j = 0; j < 2; j++)
		engine_destroy(c[j]);
}

/* Run the device tests on every engine that moves data. */
int main(void)
{
	const struct CMUnitTest device[] = {
		cmocka_unit_test_setup_teardown(test_seq_write_covers_span, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_read_uniform, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_ios, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duration_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reap_waits_for_an_eighth_of_the_queue, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_phase, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_workload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_catches_corruption, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_depth_writes_verified, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_min_1s, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobs_sum_and_cover, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_last_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_phase_no_spread, setup, teardown),
	};
	const struct CMUnitTest null[] = {
		cmocka_unit_test(test_null_engine_rate),
		cmocka_unit_test(test_null_engine_duration_and_stop),
		cmocka_unit_test(test_null_engine_verify_and_jobs),
		cmocka_unit_test(test_written_map),
	};
	static const enum engine_kind kinds[] = { ENGINE_LIBAIO, ENGINE_IO_URING, ENGINE_SYNC };
	int failed = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char name[32];
		kind = kinds[i];
		snprintf(name, sizeof(name), "engine %s", engine_kind_name(kind));
		failed += cmocka_run_group_tests_name(name, device, NULL, NULL);
	}
	return failed + cmocka_run_group_tests_name("engine null", null, NULL, NULL);
}
