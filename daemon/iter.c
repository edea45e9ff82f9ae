/* iter: the rows of one size: preconditioning fill, the measured phases
 * (measure =, each repeat times or in rounds until steady state), the
 * read-back, and their database rows. */
#include "iter.h"
#include "iter_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/engine.h"
#include "base/hstall.h"
#include "base/log.h"
#include "base/wmap.h"
#include "device/devpoll.h"
#include "series.h"
#include "steady.h"
#include "base/util.h"
#include "io/verify.h"
#include "io/workload.h"

struct iter_ctx {
	struct engine_ctx *eng[ENGINE_MAX_JOBS]; /* one per job */
	unsigned njobs;
	struct iter_limits lim;
};

/* The rounds of one phase under steady_state = snia. */
struct rounds {
	double *y; /* MiB/s of each round done */
	unsigned n, max;
	int more_after; /* rows of the size follow the phase */
	int done;       /* steady, or max rounds passed */
};

/* What one row measures. */
struct row {
	enum iter_phase kind;         /* the fill as a row, a workload, the read-back */
	const struct plan_phase *ph;  /* kind ITER_MEASURE: the plan's phase */
	int repeat_index;             /* 1..repeat */
	int more;                     /* further rows of the size follow */
	int precondition;             /* run the fill = yes fill first */
	int summary;                  /* last of several runs: store mean and stddev */
	struct runstat *mibps, *iops; /* runs of this phase so far */
	int round_index;              /* 1..max_rounds; 0 without rounds */
	struct rounds *rounds;        /* NULL without rounds */
	const struct iter_cell *cell; /* a preset test's cell; NULL: none */
};

void iter_limits_of(const struct plan *p, struct iter_limits *l)
{
	l->max_qd = p->max_qd;
	l->max_bs = p->max_bs;
	l->jobs = p->jobs;
	l->engine = p->engine;
	l->engine_name = p->engine_name;
	l->null_mibps = ENGINE_NULL_MIBPS;
	l->io_uring_sqpoll = p->io_uring_sqpoll;
}

int iter_within(const struct iter_limits *l, const struct plan *p)
{
	return p->max_qd <= l->max_qd && p->max_bs <= l->max_bs && p->jobs <= l->jobs &&
	       p->engine == l->engine;
}

static int engine_for(const struct iter_limits *l, struct engine_ctx **out)
{
	struct engine_opts o = { .max_qd = l->max_qd,
				 .max_bs = (uint32_t)l->max_bs,
				 .null_mibps = l->null_mibps,
				 .sqpoll = (int)l->io_uring_sqpoll };
	return engine_open(l->engine, &o, out);
}

int iter_init(const struct iter_limits *l, char *err, size_t errlen, struct iter_ctx **out)
{
	struct iter_ctx *ic = calloc(1, sizeof(*ic));
	if (!ic)
		return -ENOMEM;
	ic->lim = *l;
	int ret = 0;
	while (ic->njobs < ic->lim.jobs && !ret) {
		ret = engine_for(&ic->lim, &ic->eng[ic->njobs]);
		ic->njobs += !ret;
	}
	if (ret) {
		snprintf(err, errlen, "cannot set up %s (queue depth %u, job %u): %s",
			 ic->lim.engine_name, ic->lim.max_qd, ic->njobs + 1, strerror(-ret));
		iter_fini(ic);
		return ret;
	}
	*out = ic;
	return 0;
}

struct engine_ctx *iter_engine(struct iter_ctx *ic)
{
	return ic->eng[0];
}

void iter_fini(struct iter_ctx *ic)
{
	if (!ic)
		return;
	for (unsigned j = 0; j < ic->njobs; j++)
		engine_destroy(ic->eng[j]);
	free(ic);
}

/* Samples of one iteration, kept in memory until its transaction. */
struct samples {
	const struct iter_env *e;
	struct db_sample *v;
	double *t_end; /* each sample's end in seconds from its phase's t0
			  (exact, where v[i].t_ms is rounded) */
	size_t n, cap;
	uint64_t suspended_ns; /* host suspends in the row's phases (hstall.h) */
	enum iter_phase phase; /* of the samples coming */
	enum iter_phase last;  /* of v[n - 1] */
	int oom;
	struct wmap *written;        /* what the row's writes completed (phase_setup) */
	struct devpoll *dp;          /* the drive's readings; NULL: none */
	struct series_clock clock;   /* when its phases began */
	struct db_dev_point *series; /* the readings as rows (series.h) */
};

/* The stored phase of a row or sample (samples.phase, iterations.phase). */
static enum db_phase phase_stored(enum iter_phase p)
{
	switch (p) {
	case ITER_FILL: return DB_PHASE_FILL;
	case ITER_MEASURE: return DB_PHASE_MEASURE;
	case ITER_VERIFY: return DB_PHASE_VERIFY;
	}
	return DB_PHASE_UNKNOWN;
}

static void report(const struct iter_env *e, const struct iter_progress *p)
{
	if (e->progress)
		e->progress(e->arg, p);
}

/* A phase begins: tell the caller, and its samples take its name. */
static void enter_phase(const struct iter_env *e, struct samples *sm, enum iter_phase ph,
			uint64_t goal)
{
	struct iter_progress p = { .what = ITER_PHASE, .phase = ph, .goal = goal };
	/* the read-back's samples are stored as "measure" (samples.phase) */
	sm->phase = ph == ITER_FILL ? ITER_FILL : ITER_MEASURE;
	report(e, &p);
}

static void on_sample(void *arg, const struct engine_sample *s)
{
	struct samples *sm = arg;
	struct iter_progress p = {
		.what = ITER_SAMPLE, .mibps = s->mibps, .iops = s->iops, .bytes = s->bytes
	};
	report(sm->e, &p);
	if (sm->n == sm->cap) {
		size_t cap = sm->cap ? sm->cap * 2 : 256;
		struct db_sample *v = realloc(sm->v, cap * sizeof(*v));
		if (v)
			sm->v = v;
		double *t = v ? realloc(sm->t_end, cap * sizeof(*t)) : NULL;
		if (!t) {
			sm->oom = 1;
			return;
		}
		sm->t_end = t;
		sm->cap = cap;
	}
	sm->t_end[sm->n] = s->t;
	struct db_sample *d = &sm->v[sm->n++];
	d->phase = phase_stored(sm->phase);
	d->t_ms = (int64_t)(s->t * 1000.0 + 0.5);
	/* a final sample shorter than a millisecond still needs a key of its own */
	if (sm->n > 1 && sm->last == sm->phase && d->t_ms <= d[-1].t_ms)
		d->t_ms = d[-1].t_ms + 1;
	sm->last = sm->phase;
	d->seconds = s->seconds;
	d->bytes = s->bytes;
	d->mibps = s->mibps;
	d->iops = s->iops;
	d->ops = s->ops;
	d->lat_us = s->lat_us;
	d->mibps_min_1s = s->mibps_min_1s;
	d->host_stall_ms = 0; /* known when the phase has ended (phase_stalls) */
}

/* The host's stalls (hstall.h) in the samples v[first..n) of a phase that
 * started at t0 (util_now_ns): each sample's host_stall_ms, and in *w the
 * rates of the samples that had none, weighted by their length as the
 * engine weighs them. Returns the stalled time of the phase in seconds. The
 * null engine's clock is simulated: no stall reaches its figures. */
static double phase_stalls(struct samples *sm, size_t first, uint64_t t0, int null, struct wstat *w)
{
	struct hstall v[HSTALL_KEEP];
	size_t nv = null ? 0 : hstall_since(t0, v, HSTALL_KEEP);
	uint64_t total = 0;

	stats_weighted_init(w);
	uint64_t a = t0; /* a sample starts where the one before ended */
	for (size_t i = first; i < sm->n; i++) {
		struct db_sample *d = &sm->v[i];
		uint64_t b = t0 + (uint64_t)(sm->t_end[i] * 1e9);
		uint64_t susp = 0, st = hstall_within(v, nv, a, b, &susp);
		a = b;
		d->host_stall_ms = (double)st / 1e6;
		total += st;
		sm->suspended_ns += susp;
		if (!st && !susp)
			stats_weighted_add(w, d->mibps,
					   d->seconds / sm->e->plan->rows.sample_interval);
	}
	return (double)total / 1e9;
}

struct end_args {
	const struct iter_env *e;
	int64_t id;
	const struct db_iteration *it;
	const struct samples *sm;
};

static int store_end(void *arg)
{
	const struct end_args *a = arg;
	uint64_t t = util_now_ns();
	int ret = db_iteration_end(a->e->db, a->id, a->it, a->sm->v, a->sm->n);
	/* What the history costs the loop: one transaction per iteration
	 * (wearmond --debug; make bench reads this line). */
	log_msg(LOG_DEBUG, "target %s: iteration %ld stored in %.3f ms (%zu samples)",
		a->e->t->name, a->it->number, (double)(util_now_ns() - t) / 1e6, a->sm->n);
	return ret;
}

/* Store the iteration's figures and samples, waiting out a locked
 * database (iter_db_patient). */
static int db_retry_end(const struct iter_env *e, int64_t id, const struct db_iteration *it,
			const struct samples *sm)
{
	struct end_args a = { e, id, it, sm };
	char what[64];
	snprintf(what, sizeof(what), "storing iteration %ld", it->number);
	return iter_db_patient(e->t->name, what, e->stop, store_end, &a);
}

struct begin_args {
	const struct iter_env *e;
	struct db_iteration *it;
	int64_t *id;
};

static int store_begin(void *arg)
{
	const struct begin_args *a = arg;
	return db_iteration_begin(a->e->db, a->it, a->id);
}

static void phase_setup(const struct iter_env *e, struct engine_phase *p, uint64_t size,
			uint64_t seed, struct samples *sm)
{
	memset(p, 0, sizeof(*p));
	p->fd = e->tg->fd;
	p->span_offset = e->plan->layout.region_offset;
	p->span_len = size;
	p->compressibility = e->plan->rows.compressibility;
	p->dedupe_pct = e->plan->rows.dedupe_pct;
	p->seed = seed;
	p->sample_interval = e->plan->rows.sample_interval;
	p->t0 = util_now_ns(); /* the samples' times count from here (phase_stalls) */
	p->stop = e->stop;
	p->on_sample = on_sample;
	p->arg = sm;
	p->written = sm->written;
	p->verify = e->plan->rows.verify == VERIFY_CRC32C;
	p->verify_stop = e->plan->rows.verify_stop;
}

static void describe_error(const struct engine_result *r, const char *phase, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %llu I/O error(s), first at offset %llu: %s", phase,
		 (unsigned long long)r->errors, (unsigned long long)r->first_error_offset,
		 strerror(r->first_errno));
}

/* The preconditioning fill (fill = yes), its figures in the row's fill_*. */
static enum it_status precondition(const struct iter_env *e, struct engine_ctx *eng, uint64_t size,
				   uint64_t amount, struct db_iteration *it, struct samples *sm,
				   struct engine_result *r, char *err, size_t elen)
{
	struct engine_phase p;

	enter_phase(e, sm, ITER_FILL, amount);
	phase_setup(e, &p, size, util_now_ns() ^ ((uint64_t)e->target_id << 40) ^ 0xf111, sm);
	p.block_size = e->plan->rows.fill_block_size;
	p.queue_depth = e->plan->rows.fill_queue_depth;
	p.is_write = 1;
	p.amount = amount;
	sm->clock.fill_t0 = p.t0;
	size_t first = sm->n;
	if (engine_run(eng, &p, r) < 0) {
		snprintf(err, elen, "fill: cannot run the I/O engine%s%s",
			 r->refused[0] ? ": " : "", r->refused);
		return IT_FAILED;
	}
	iter_log_drain(e->t->name, "fill", r);
	struct wstat w;
	double stall = phase_stalls(sm, first, p.t0, engine_is_null(eng), &w);
	it->host_stall_seconds += stall;
	it->fill_mibps = r->interrupted ? -1 : r->mibps;
	if (stall > 0 && !r->interrupted)
		it->fill_mibps = r->seconds > stall
					 ? (double)r->bytes / 1048576.0 / (r->seconds - stall)
					 : -1;
	it->fill_seconds = r->seconds;
	it->fill_bytes = r->bytes;
	it->errors += r->errors;
	if (r->errors) {
		describe_error(r, "fill", err, elen);
		return IT_FAILED;
	}
	return r->interrupted ? IT_INTERRUPTED : IT_DONE;
}

/* The engine phase of a row. */
static void row_phase(const struct iter_env *e, const struct row *rw, uint64_t size,
		      const struct db_iteration *it, struct engine_phase *p)
{
	const struct plan_rows *rows = &e->plan->rows;

	p->queue_depth = (unsigned)it->queue_depth;
	p->amount = it->amount_bytes;
	if (rw->kind != ITER_MEASURE) {
		/* fill and read-back: the whole size, sequential */
		p->block_size = rows->fill_block_size;
		p->is_write = rw->kind == ITER_FILL;
		p->verify |= rw->kind == ITER_VERIFY;
		return;
	}
	if (rw->cell) {
		p->spec = rw->cell->spec;
		p->duration = rw->cell->seconds;
		return;
	}
	p->spec = &rw->ph->spec;
	p->duration = rows->duration;
}

static const struct lat_qos no_latency = { -1, -1, -1, -1, -1, -1 }; /* stored NULL */
static void store_figures(struct db_iteration *it, const struct engine_result *r)
{
	it->bytes = r->bytes;
	it->ops = r->ops;
	it->errors += r->errors;
	it->seconds = r->seconds;
	it->mibps_avg = r->mibps;
	it->mibps_min = r->mibps_min;
	it->mibps_max = r->mibps_max;
	it->mibps_stddev = r->mibps_stddev;
	it->iops_avg = r->iops;
	it->lat_mean_us = r->ops ? hist_mean(&r->lat) / 1e3 : -1; /* no I/O: none, not 0 */
	it->lat_us = no_latency;
	if (r->ops)
		hist_qos(&r->lat, &it->lat_us);
	it->verify_errors = r->verify_errors;
	it->io_counted = 1;
	it->reads = r->reads;
	it->writes = r->writes;
	it->random_ios = r->random_ios;
	it->mean_depth = r->mean_depth;
}

/* The measured phase's figures over the time the host ran: the stalled
 * time out of the averages, the samples it touched (w holds the others)
 * out of min, max and stddev; min <= avg <= max as always. Unknown when
 * the host ran no time at all. */
static void figures_without_stall(struct db_iteration *it, const struct engine_result *r,
				  const struct wstat *w, double stall)
{
	double ran = r->seconds - stall;
	struct rate_figs f = { -1, -1, -1, -1 };

	if (ran > 0)
		stats_rate_figs(w, (double)r->bytes / 1048576.0 / ran, &f);
	it->mibps_avg = f.avg;
	it->mibps_min = f.min;
	it->mibps_max = f.max;
	it->mibps_stddev = f.stddev;
	it->iops_avg = ran > 0 ? (double)r->ops / ran : -1;
}

/* An interrupted row measured a phase cut short at an arbitrary point:
 * its rates and latencies are unknown (NULL), not zero. What it did
 * (bytes, ops, seconds) stays. */
static void forget_figures(struct db_iteration *it)
{
	it->mibps_avg = it->mibps_min = it->mibps_max = it->mibps_stddev = -1;
	it->iops_avg = it->lat_mean_us = it->mean_depth = -1;
	it->lat_us = no_latency;
}

/* Precondition (when asked) then the row's phase. Fills it and r. */
static enum it_status measure(const struct iter_env *e, struct iter_ctx *ic, uint64_t size,
			      const struct row *rw, struct db_iteration *it, struct samples *sm,
			      struct engine_result *r, char *err, size_t elen)
{
	struct engine_phase p;
	enum it_status status = IT_DONE;
	uint64_t seed = util_now_ns() ^ ((uint64_t)e->target_id << 40) ^ (uint64_t)it->number;

	if (rw->precondition) {
		uint64_t fill = rw->cell && rw->cell->fill_amount ? rw->cell->fill_amount : size;
		status = precondition(e, ic->eng[0], size, fill, it, sm, r, err, elen);
		if (status == IT_INTERRUPTED)
			forget_figures(it);
		it->phase_not_run = status != IT_DONE;
		if (status != IT_DONE)
			return status;
	}
	enter_phase(e, sm, rw->kind, it->amount_bytes);
	/* a `measure = fill` row's samples are those of its measured phase
	 * (samples.phase = 'measure', summing to its bytes; schema.md) */
	sm->phase = ITER_MEASURE;
	phase_setup(e, &p, size, seed + 1, sm);
	row_phase(e, rw, size, it, &p);
	sm->clock.measure_t0 = p.t0;
	devpoll_mark(sm->dp); /* the drive at the phase's start */
	size_t first = sm->n;
	if (engine_run_jobs(ic->eng, it->jobs, &p, r) < 0) {
		snprintf(err, elen, "%s: cannot run the I/O engine%s%s", it->workload,
			 r->refused[0] ? ": " : "", r->refused);
		return IT_FAILED;
	}
	iter_log_drain(e->t->name, it->workload, r);
	store_figures(it, r);
	struct wstat w;
	double stall = phase_stalls(sm, first, p.t0, engine_is_null(ic->eng[0]), &w);
	it->host_stall_seconds += stall;
	it->lat_host_stall = stall > 0; /* I/Os in flight waited through it */
	if (stall > 0 || sm->suspended_ns)
		figures_without_stall(it, r, &w, stall);
	if (r->errors) {
		describe_error(r, it->workload, err, elen);
		status = IT_FAILED;
	} else if (r->verify_errors && p.verify_stop) {
		snprintf(err, elen,
			 "%s: data integrity: %llu bad sector(s), first at offset %llu: %s",
			 it->workload, (unsigned long long)r->verify_errors,
			 (unsigned long long)r->bad[0].offset,
			 verify_reason_name((enum verify_reason)r->bad[0].reason));
		status = IT_FAILED;
	} else if (r->interrupted) {
		status = IT_INTERRUPTED;
		forget_figures(it);
	}
	return status;
}

enum db_status iter_db_status(enum it_status s)
{
	switch (s) {
	case IT_DONE: return DB_DONE;
	case IT_INTERRUPTED: return DB_INTERRUPTED;
	case IT_FAILED: break;
	}
	return DB_FAILED;
}

/* "512:10 4k:90" */
static const char *mix_text(const struct workload_spec *s, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < s->nbs && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u:%u", i ? " " : "",
					 s->bs[i].size, s->bs[i].weight);
	return buf;
}

/* A preset test's cell before it starts: its pattern, threads and depth;
 * no amount (it runs for its time: amount_bytes 0). */
static void cell_describe(const struct iter_cell *c, struct db_iteration *it, char *mix,
			  size_t mixlen)
{
	const struct workload_spec *spec = c->spec;
	it->phase = DB_PHASE_MEASURE;
	it->jobs = c->jobs;
	it->workload = c->workload;
	it->block_size = workload_max_bs(spec);
	it->block_sizes = spec->nbs > 1 ? mix_text(spec, mix, mixlen) : NULL;
	it->queue_depth = c->queue_depth;
	it->amount_bytes = 0;
	it->read_percent = (int)spec->read_pct;
	it->random_percent = spec->order == WO_RANDOM ? 100 : (int)spec->random_pct;
	it->pts = c->pts;
}

/* The row's description before it starts. */
static void row_describe(const struct iter_env *e, const struct row *rw, int size_index,
			 uint64_t size, struct db_iteration *it, char *mix, size_t mixlen)
{
	const struct plan_rows *rows = &e->plan->rows;

	it->verify = rows->verify;
	it->repeat_index = rw->repeat_index;
	it->round_index = rw->round_index;
	it->jobs = 1; /* fill and read-back: one job */
	it->more_rows = rw->more;
	if (rw->kind != ITER_MEASURE) {
		int fill = rw->kind == ITER_FILL;
		it->phase = phase_stored(rw->kind);
		it->workload = db_phase_name(it->phase);
		it->block_size = rows->fill_block_size;
		it->queue_depth = rows->fill_queue_depth;
		it->amount_bytes = size;
		it->read_percent = fill ? 0 : 100;
		it->random_percent = 0;
		return;
	}
	if (rw->cell) {
		cell_describe(rw->cell, it, mix, mixlen);
		return;
	}
	const struct workload_spec *spec = &rw->ph->spec;
	it->phase = DB_PHASE_MEASURE;
	it->jobs = e->plan->jobs;
	it->workload = rw->ph->name;
	it->block_size = rw->ph->block_size;
	it->block_sizes = spec->nbs > 1 ? mix_text(spec, mix, mixlen) : NULL;
	it->queue_depth = rows->queue_depth;
	it->amount_bytes = rw->ph->amount[size_index];
	it->read_percent = (int)spec->read_pct;
	/* random_pct shapes the sequential and random orders only */
	it->random_percent =
		spec->order == WO_RANDOM || spec->order == WO_SEQ ? (int)spec->random_pct : 0;
}

static void publish(const struct iter_env *e, long number, int size_index, uint64_t size)
{
	struct iter_progress p = {
		.what = ITER_ROW,
		.iteration = number,
		.size_index = size_index,
		.size_bytes = size,
	};
	report(e, &p);
}

/* Repeats: every done run counts; the last one carries mean and stddev. */
static void repeat_figures(const struct row *rw, struct db_iteration *it)
{
	stats_run_add(rw->mibps, it->mibps_avg);
	stats_run_add(rw->iops, it->iops_avg);
	if (!rw->summary)
		return;
	it->repeat_summary = 1;
	it->mibps_repeat_mean = rw->mibps->mean;
	it->mibps_repeat_stddev = stats_run_stddev(rw->mibps);
	it->iops_repeat_mean = rw->iops->mean;
	it->iops_repeat_stddev = stats_run_stddev(rw->iops);
}

/* A round done: judge the window. The phase ends when it is steady or at
 * max_rounds; only then does the row learn that no more rounds follow, and
 * it carries the verdict (reached or not, honestly) and the window. */
static void round_figures(const struct iter_env *e, const struct row *rw, struct db_iteration *it)
{
	struct rounds *rd = rw->rounds;
	struct steady_window w;
	char sz[32];

	rd->y[rd->n++] = it->mibps_avg;
	int steady = steady_check(rd->y, rd->n, &w);
	if (!steady && rd->n < rd->max)
		return;
	rd->done = 1;
	it->more_rows = rd->more_after;
	it->steady_summary = 1;
	it->steady_reached = steady;
	it->steady_round = steady ? (int)rd->n : 0;
	it->steady_mean_mibps = w.mean;
	it->steady_range_mibps = w.range;
	it->steady_range_pct = w.range_pct;
	it->steady_excursion_mibps = w.excursion;
	it->steady_excursion_pct = w.excursion_pct;
	log_msg(LOG_INFO,
		"target %s: cycle %ld size %s %s: steady state %s %u rounds: "
		"window mean %.1f MiB/s, range %.1f%%, excursion %.1f%% (limits %.0f%%, %.0f%%)",
		e->t->name, e->cycle, util_fmt_bytes(it->size_bytes, sz, sizeof(sz)), it->workload,
		steady ? "reached after" : "NOT reached in", rd->n, w.mean, w.range_pct,
		w.excursion_pct, STEADY_RANGE_PCT, STEADY_EXCURSION_PCT);
}

/* The target's file or device changed size during the row: the row fails
 * with that reason first (an I/O error it caused follows it). */
static enum it_status watch_row(const struct iter_env *e, enum it_status s, char *err, size_t len)
{
	char why[600], before[512];

	if (!e->watch || !watch_check(e->watch, e->tg, why, sizeof(why)))
		return s;
	util_strlcpy(before, err, sizeof(before));
	snprintf(err, len, "%s%s%s", why, before[0] ? "; then " : "", before);
	return IT_FAILED;
}

/* Measure a row while the drive is polled for its own evidence
 * (devpoll.h): from before its fill to after its last I/O. */
static enum it_status measure_polled(const struct iter_env *e, struct iter_ctx *ic, uint64_t size,
				     const struct row *rw, struct db_iteration *it,
				     struct samples *sm, struct engine_result *r, char *err,
				     size_t elen)
{
	struct devpoll *dp = NULL;
	struct devstat_delta x;
	struct devpoll_reading *rv;
	size_t rn;
	int rc = devpoll_begin(e->tg, e->plan->rows.device_poll_interval, e->stop, &dp);

	if (rc < 0 && rc != -EINTR)
		log_msg(LOG_WARNING,
			"target %s: iteration %ld: cannot poll %s for its own counters: %s",
			e->t->name, it->number, e->tg->path, strerror(-rc));
	sm->dp = dp;
	enum it_status status = measure(e, ic, size, rw, it, sm, r, err, elen);
	sm->dp = NULL;
	devpoll_end_series(dp, &x, &rv, &rn);
	devpoll_evidence(&x, &it->device);
	struct hstall st[HSTALL_KEEP];
	size_t nst =
		rn && !engine_is_null(ic->eng[0]) ? hstall_since(rv[0].t_ns, st, HSTALL_KEEP) : 0;
	if (series_build(rv, rn, &sm->clock, st, nst, &sm->series, &it->nseries))
		log_msg(LOG_WARNING, "target %s: iteration %ld: no memory for the drive's readings",
			e->t->name, it->number);
	it->series = sm->series;
	free(rv);
	return status;
}

/* A row of the size that a run before a restart finished (iter_resume):
 * not run again; its stored figures go where the rows after it need them
 * (the repeats' mean, the steady-state window). Returns 1 when rw is that
 * row, 0 when it runs. */
static int done_before(const struct iter_env *e, const struct row *rw, uint64_t size)
{
	struct iter_resume *r = e->resume;
	if (!r || r->next >= r->n)
		return 0;
	if (rw->cell) { /* a preset test runs again from its first round */
		r->n = r->next;
		return 0;
	}
	const struct db_done_row *d = &r->row[r->next];
	enum db_phase ph = phase_stored(rw->kind);
	const char *wl = rw->kind == ITER_MEASURE ? rw->ph->name : db_phase_name(ph);
	if (strcmp(d->phase, db_phase_name(ph)) || strcmp(d->workload, wl) ||
	    d->repeat_index != rw->repeat_index || d->round_index != rw->round_index) {
		r->n = r->next; /* the plan went another way: this row and the rest run */
		return 0;
	}
	r->next++;
	struct db_iteration it = {
		.size_bytes = size,
		.workload = wl,
		.mibps_avg = d->mibps_avg,
		.iops_avg = d->iops_avg,
	};
	char sz[32], rnd[24] = "";
	if (rw->round_index)
		snprintf(rnd, sizeof(rnd), " round %d", rw->round_index);
	log_msg(LOG_INFO,
		"target %s: cycle %ld size %s %s%s: done before the restart, not run again",
		e->t->name, e->cycle, util_fmt_bytes(size, sz, sizeof(sz)), wl, rnd);
	repeat_figures(rw, &it);
	if (rw->rounds)
		round_figures(e, rw, &it);
	return 1;
}

/* The samples' memory, once the row is stored (or cannot be). */
static void samples_free(struct samples *sm)
{
	free(sm->v);
	free(sm->t_end);
	free(sm->series);
}

/* The row described and stored as running before it starts, waiting out
 * a locked database. Returns 0 or -errno, the failure in e->error and
 * alerted. */
static int row_begin(const struct iter_env *e, const struct row *rw, int size_index, long number,
		     struct db_iteration *it, char *mix, size_t mixlen, int64_t *id)
{
	uint64_t size = e->plan->layout.sizes[size_index];
	memset(it, 0, sizeof(*it));
	it->cycle_id = e->cycle_id;
	it->run_id = e->run_id;
	it->target_id = e->target_id;
	it->number = number;
	it->size_index = size_index;
	it->size_bytes = size;
	it->region_offset = e->plan->layout.region_offset;
	it->compressibility = (int)e->plan->rows.compressibility;
	it->dedupe_percent = (int)e->plan->rows.dedupe_pct;
	row_describe(e, rw, size_index, size, it, mix, mixlen);
	it->status = DB_RUNNING;
	util_iso_now(it->started_at, sizeof(it->started_at));
	publish(e, number, size_index, size);
	alert_baseline_of(e->alert, it);
	struct begin_args ba = { e, it, id };
	char what[64];
	snprintf(what, sizeof(what), "recording the start of iteration %ld", number);
	int ret = iter_db_patient(e->t->name, what, e->stop, store_begin, &ba);
	if (ret) {
		snprintf(e->error, e->error_len, "cannot record iteration start: %s",
			 strerror(-ret));
		alert_failure(e->alert, ALERT_DB_WRITE, LOG_CRIT, e->cycle, 0, e->error);
	}
	return ret;
}

/* Measure a begun row, the ranges it wrote into it (*written, the
 * caller's to free) and its device watched; the row's status. */
static enum it_status measure_row(const struct iter_env *e, struct iter_ctx *ic, uint64_t size,
				  const struct row *rw, struct db_iteration *it, struct samples *sm,
				  struct engine_result *r, char *err, size_t elen,
				  uint64_t (**written)[2])
{
	struct wmap wm;
	/* without a map the row stores no written extents, and its wear
	 * counts the whole span (wear.h: wear_after_size) */
	if (!wmap_init(&wm, it->region_offset, size))
		sm->written = &wm;
	enum it_status status = measure_polled(e, ic, size, rw, it, sm, r, err, elen);
	if (sm->written && !wmap_extents(&wm, written, &it->nwritten))
		it->written = (const uint64_t(*)[2])(*written);
	wmap_free(&wm);
	sm->written = NULL; /* wm dies here */
	status = watch_row(e, status, err, elen);
	if (sm->oom && status == IT_DONE) {
		snprintf(err, elen, "out of memory for samples");
		status = IT_FAILED;
	}
	return status;
}

/* One row: begin, measure, store, report. */
static enum it_status run_row(const struct iter_env *e, struct iter_ctx *ic, int size_index,
			      long *next, const struct row *rw)
{
	if (done_before(e, rw, e->plan->layout.sizes[size_index]))
		return IT_DONE;
	long number = (*next)++;
	struct db_iteration it;
	struct samples sm = { .e = e };
	char err[512] = "", mix[256];
	int64_t id = 0;
	uint64_t size = e->plan->layout.sizes[size_index];
	struct engine_result *r = malloc(sizeof(*r));

	if (!r) {
		snprintf(e->error, e->error_len, "out of memory");
		return IT_FAILED;
	}
	if (row_begin(e, rw, size_index, number, &it, mix, sizeof(mix), &id)) {
		free(r);
		return IT_FAILED;
	}
	uint64_t(*written)[2] = NULL;
	enum it_status status =
		measure_row(e, ic, size, rw, &it, &sm, r, err, sizeof(err), &written);
	if (e->plan->rows.verify == VERIFY_CRC32C)
		iter_report_integrity(e, id, r);
	if (status == IT_DONE && rw->cell && rw->cell->done)
		rw->cell->done(rw->cell->arg, &it, r);
	free(r);
	if (status == IT_DONE)
		repeat_figures(rw, &it);
	if (status == IT_DONE && rw->rounds)
		round_figures(e, rw, &it);
	it.status = iter_db_status(status);
	it.error = err[0] ? err : NULL;
	/* a suspend is not in the phases' seconds, but it is the host's stall */
	it.host_stall_seconds += (double)sm.suspended_ns / 1e9;
	util_iso_now(it.ended_at, sizeof(it.ended_at));
	int ret = db_retry_end(e, id, &it, &sm);
	free(written);
	iter_log_iteration(e, &it);
	if (ret) {
		snprintf(e->error, e->error_len, "cannot store iteration %ld: %s", number,
			 strerror(-ret));
		alert_failure(e->alert, ALERT_DB_WRITE, LOG_CRIT, e->cycle, id, e->error);
		samples_free(&sm);
		return IT_FAILED;
	}
	if (it.host_stall_seconds > 0)
		alert_host_stall(e->alert, e->cycle, &it, id, (double)sm.suspended_ns / 1e9);
	if (status == IT_DONE)
		alert_iteration(e->alert, e->cycle, &it, id, sm.v, sm.n);
	samples_free(&sm);
	if (status == IT_FAILED) {
		snprintf(e->error, e->error_len, "iteration %ld failed: %s", number, err);
		alert_failure(e->alert, it.errors ? ALERT_IO_ERROR : ALERT_ITERATION_FAILED,
			      LOG_ERR, e->cycle, id, e->error);
	}
	return status;
}

enum it_status iter_run_cell(const struct iter_env *e, struct iter_ctx *ic, int size_index,
			     long *next, const struct iter_cell *c)
{
	struct runstat a, b;
	stats_run_init(&a);
	stats_run_init(&b);
	struct row rw = {
		.kind = ITER_MEASURE,
		.repeat_index = 1,
		.more = c->more,
		.precondition = c->precondition,
		.mibps = &a,
		.iops = &b,
		.cell = c,
	};
	return run_row(e, ic, size_index, next, &rw);
}

/* steady_state = snia: rounds of one phase, each its own row, until the
 * last STEADY_WINDOW are steady or max_rounds pass. */
static enum it_status run_rounds(const struct iter_env *e, struct iter_ctx *ic, int size_index,
				 long *next, struct row *rw)
{
	struct rounds rd = { .max = e->plan->rows.max_rounds, .more_after = rw->more };
	enum it_status s = IT_DONE;

	rd.y = calloc(rd.max, sizeof(*rd.y));
	if (!rd.y) {
		snprintf(e->error, e->error_len, "out of memory");
		return IT_FAILED;
	}
	rw->rounds = &rd;
	rw->more = 1; /* until a round ends the phase */
	for (unsigned k = 1; k <= rd.max && !rd.done && s == IT_DONE; k++) {
		rw->round_index = (int)k;
		s = run_row(e, ic, size_index, next, rw);
		rw->precondition = 0;
	}
	rw->rounds = NULL; /* rd dies here */
	free(rd.y);
	return s;
}

/* Every row of one size of one cycle, in order: each measured phase
 * (repeat times, or in rounds), then the read-back. The first failure or
 * interruption ends the size; a resume goes on with the row that was cut
 * (e->resume: the rows done before are not run again). */
enum it_status iter_run(const struct iter_env *e, struct iter_ctx *ic, int size_index, long *next)
{
	const struct plan *pl = e->plan;
	const struct plan_rows *rows = &pl->rows;
	int n = pl->nphases;
	int pre = pl->precondition;

	for (int i = 0; i < n; i++) {
		const struct plan_phase *ph = &pl->phase[i];
		struct runstat mibps, iops;
		stats_run_init(&mibps);
		stats_run_init(&iops);
		for (int k = 1; k <= rows->repeat; k++) {
			struct row rw = {
				.kind = ph->is_fill ? ITER_FILL : ITER_MEASURE,
				.ph = ph,
				.repeat_index = k,
				.precondition = pre,
				.more = pl->readback || i + 1 < n ||
					k<rows->repeat, .summary = rows->repeat> 1 &&
						k == rows->repeat,
				.mibps = &mibps,
				.iops = &iops,
			};
			enum it_status s = rows->steady_snia
						   ? run_rounds(e, ic, size_index, next, &rw)
						   : run_row(e, ic, size_index, next, &rw);
			if (s != IT_DONE)
				return s;
			pre = 0;
		}
	}
	if (!pl->readback)
		return IT_DONE;
	struct runstat a, b;
	stats_run_init(&a);
	stats_run_init(&b);
	struct row rw = { .kind = ITER_VERIFY, .repeat_index = 1, .mibps = &a, .iops = &b };
	return run_row(e, ic, size_index, next, &rw);
}
