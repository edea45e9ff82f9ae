/* iter: fill and measured phases of one size, recorded as iteration rows. */
#include "iter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "log.h"
#include "signals.h"
#include "util.h"

#define DB_RETRIES 5

struct iter_ctx {
	struct eng_ctx *eng;
	unsigned max_qd;
	uint64_t max_bs;
};

int iter_init(struct sched_target *st, struct iter_ctx **out)
{
	const struct cfg_target *t = st->t;
	struct iter_ctx *ic = calloc(1, sizeof(*ic));
	if (!ic)
		return -ENOMEM;
	ic->max_qd = (unsigned)(t->queue_depth > t->fill_queue_depth ? t->queue_depth
								 : t->fill_queue_depth);
	ic->max_bs = t->block_size > t->fill_block_size ? t->block_size : t->fill_block_size;
	int ret = eng_create(ic->max_qd, (uint32_t)ic->max_bs, &ic->eng);
	if (ret) {
		snprintf(st->error, sizeof(st->error), "cannot set up libaio (queue depth %u): %s",
			 ic->max_qd, strerror(-ret));
		free(ic);
		return ret;
	}
	*out = ic;
	return 0;
}

void iter_fini(struct iter_ctx *ic)
{
	if (!ic)
		return;
	eng_destroy(ic->eng);
	free(ic);
}

int iter_fits(const struct iter_ctx *ic, const struct cfg_target *t)
{
	return t->queue_depth <= ic->max_qd && t->fill_queue_depth <= ic->max_qd &&
	       t->block_size <= ic->max_bs && t->fill_block_size <= ic->max_bs;
}

/* Samples of one iteration, kept in memory until its transaction. */
struct samples {
	struct sched_target *st;
	struct db_sample *v;
	size_t n, cap;
	const char *phase;
	int oom;
};

static void on_sample(void *arg, const struct eng_sample *s)
{
	struct samples *sm = arg;
	pthread_mutex_lock(&sm->st->lock);
	sm->st->prog.mibps = s->mibps;
	pthread_mutex_unlock(&sm->st->lock);
	if (sm->n == sm->cap) {
		size_t cap = sm->cap ? sm->cap * 2 : 256;
		struct db_sample *v = realloc(sm->v, cap * sizeof(*v));
		if (!v) {
			sm->oom = 1;
			return;
		}
		sm->v = v;
		sm->cap = cap;
	}
	struct db_sample *d = &sm->v[sm->n++];
	d->phase = sm->phase;
	d->t_ms = (int64_t)(s->t * 1000.0 + 0.5);
	d->mibps = s->mibps;
	d->iops = s->iops;
	d->lat_p50_us = s->lat_p50_us;
	d->lat_p99_us = s->lat_p99_us;
	d->lat_max_us = s->lat_max_us;
}

static void fields_for(const struct sched_target *st, struct log_fields *f, long cycle,
		       long it, uint64_t size)
{
	struct log_fields z = LOG_FIELDS_INIT;
	*f = z;
	f->target = st->t->name;
	f->device = st->t->device;
	f->serial = st->tg.serial[0] ? st->tg.serial : NULL;
	f->cycle = cycle;
	f->iteration = it;
	f->size_bytes = (int64_t)size;
}

/* Retry a database write a few times: a busy reader or a full disk may
 * pass, and a row is worth waiting for. */
static int db_retry_end(struct sched_target *st, int64_t id, const struct db_iteration *it,
			const struct samples *sm)
{
	int ret = 0;
	for (int i = 0; i < DB_RETRIES; i++) {
		ret = db_iteration_end(st->db, id, it, sm->v, sm->n);
		if (!ret)
			return 0;
		log_msg(LOG_ERR, "target %s: storing iteration %ld failed (%s), retry %d of %d",
			st->t->name, it->number, strerror(-ret), i + 1, DB_RETRIES);
		sleep(1);
	}
	return ret;
}

static void phase_setup(const struct sched_target *st, struct eng_phase *p, uint64_t size,
			uint64_t seed, struct samples *sm)
{
	memset(p, 0, sizeof(*p));
	p->fd = st->tg.fd;
	p->span_offset = st->layout.region_offset;
	p->span_len = size;
	p->compressibility = (unsigned)st->t->compressibility;
	p->seed = seed;
	p->sample_interval = st->t->sample_interval;
	p->stop = &sig_stop;
	p->on_sample = on_sample;
	p->arg = sm;
}

static uint64_t measure_amount(const struct cfg_target *t, uint64_t size)
{
	uint64_t a = t->amount.is_multiple ? (uint64_t)(t->amount.multiple * (double)size)
					   : t->amount.bytes;
	a = a / t->block_size * t->block_size;
	return a ? a : t->block_size;
}

static void describe_error(const struct eng_result *r, const char *phase, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %llu I/O error(s), first at offset %llu: %s", phase,
		 (unsigned long long)r->errors, (unsigned long long)r->first_error_offset,
		 strerror(r->first_errno));
}

/* Fill (when on) then the measured phase. Fills it with the figures. */
static enum it_status measure(struct sched_target *st, struct eng_ctx *eng, uint64_t size,
			      struct db_iteration *it, struct samples *sm, char *err, size_t elen)
{
	const struct cfg_target *t = st->t;
	struct eng_phase p;
	struct eng_result *r = malloc(sizeof(*r));
	enum it_status status = IT_DONE;
	uint64_t seed = util_now_ns() ^ ((uint64_t)st->target_id << 40) ^ (uint64_t)it->number;

	if (!r) {
		snprintf(err, elen, "out of memory");
		return IT_FAILED;
	}
	if (t->fill) {
		sm->phase = "fill";
		sched_set_phase(st, "fill");
		phase_setup(st, &p, size, seed, sm);
		p.block_size = (uint32_t)t->fill_block_size;
		p.queue_depth = (unsigned)t->fill_queue_depth;
		p.is_write = 1;
		p.amount = size;
		if (eng_run(eng, &p, r) < 0) {
			snprintf(err, elen, "fill: cannot run the I/O engine");
			status = IT_FAILED;
			goto out;
		}
		it->fill_mibps = r->mibps;
		it->fill_seconds = r->seconds;
		it->fill_bytes = r->bytes;
		it->errors += r->errors;
		if (r->errors) {
			describe_error(r, "fill", err, elen);
			status = IT_FAILED;
			goto out;
		}
		if (r->interrupted) {
			status = IT_INTERRUPTED;
			goto out;
		}
	}
	sm->phase = "measure";
	sched_set_phase(st, "measure");
	phase_setup(st, &p, size, seed + 1, sm);
	p.block_size = (uint32_t)t->block_size;
	p.queue_depth = (unsigned)t->queue_depth;
	p.is_write = cfg_workload_is_write(t->workload);
	p.is_random = cfg_workload_is_random(t->workload);
	p.amount = it->amount_bytes;
	p.duration = t->duration;
	if (eng_run(eng, &p, r) < 0) {
		snprintf(err, elen, "measure: cannot run the I/O engine");
		status = IT_FAILED;
		goto out;
	}
	it->bytes = r->bytes;
	it->ops = r->ops;
	it->errors += r->errors;
	it->seconds = r->seconds;
	it->mibps_avg = r->mibps;
	it->mibps_min = r->mibps_min;
	it->mibps_max = r->mibps_max;
	it->mibps_stddev = r->mibps_stddev;
	it->iops_avg = r->iops;
	it->lat_mean_us = hist_mean(&r->lat) / 1e3;
	it->lat_p50_us = (double)hist_percentile(&r->lat, 50) / 1e3;
	it->lat_p99_us = (double)hist_percentile(&r->lat, 99) / 1e3;
	it->lat_p999_us = (double)hist_percentile(&r->lat, 99.9) / 1e3;
	it->lat_max_us = (double)r->lat.max_ns / 1e3;
	if (r->errors) {
		describe_error(r, cfg_workload_name(t->workload), err, elen);
		status = IT_FAILED;
	} else if (r->interrupted) {
		status = IT_INTERRUPTED;
	}
out:
	free(r);
	if (sm->oom && status == IT_DONE) {
		snprintf(err, elen, "out of memory for samples");
		status = IT_FAILED;
	}
	return status;
}

static void log_iteration(const struct sched_target *st, const struct db_iteration *it,
			  long cycle)
{
	struct log_fields f;
	char sz[32];
	fields_for(st, &f, cycle, it->number, it->size_bytes);
	f.mibps = it->mibps_avg;
	log_fields(strcmp(it->status, "done") ? LOG_WARNING : LOG_INFO, &f,
		   "target %s: cycle %ld iteration %ld size %s %s: %.1f MiB/s (min %.1f max %.1f sd %.1f) "
		   "%.0f IOPS p99 %.0f us fill %.1f MiB/s [%s]%s%s",
		   st->t->name, cycle, it->number, util_fmt_bytes(it->size_bytes, sz, sizeof(sz)),
		   it->workload, it->mibps_avg, it->mibps_min, it->mibps_max, it->mibps_stddev,
		   it->iops_avg, it->lat_p99_us, it->fill_mibps, it->status,
		   it->error ? ": " : "", it->error ? it->error : "");
}

/* One size of one cycle, recorded as one iteration row. */
enum it_status iter_run(struct sched_target *st, struct iter_ctx *ic, int64_t cycle_id,
			long cycle, int size_index, long *next)
{
	long number = (*next)++;
	struct db_iteration it;
	struct samples sm = { .st = st };
	char err[512] = "";
	int64_t id;
	uint64_t size = st->layout.sizes[size_index];

	memset(&it, 0, sizeof(it));
	it.cycle_id = cycle_id;
	it.run_id = st->run_id;
	it.target_id = st->target_id;
	it.number = number;
	it.size_index = size_index;
	it.size_bytes = size;
	it.region_offset = st->layout.region_offset;
	it.workload = cfg_workload_name(st->t->workload);
	it.block_size = (uint32_t)st->t->block_size;
	it.queue_depth = (unsigned)st->t->queue_depth;
	it.compressibility = (int)st->t->compressibility;
	it.amount_bytes = measure_amount(st->t, size);
	it.status = "running";
	util_iso_now(it.started_at, sizeof(it.started_at));
	pthread_mutex_lock(&st->lock);
	st->prog.cycle = cycle;
	st->prog.iteration = number;
	st->prog.size_index = size_index;
	st->prog.nsizes = st->layout.nsizes;
	st->prog.size_bytes = size;
	pthread_mutex_unlock(&st->lock);
	int ret = db_iteration_begin(st->db, &it, &id);
	if (ret) {
		snprintf(st->error, sizeof(st->error), "cannot record iteration start: %s", strerror(-ret));
		alert_failure(st->alert, "db-write-failed", LOG_CRIT, cycle, 0, st->error);
		return IT_FAILED;
	}
	enum it_status status = measure(st, ic->eng, size, &it, &sm, err, sizeof(err));
	static const char *const names[] = { "done", "interrupted", "failed" };
	it.status = names[status];
	it.error = err[0] ? err : NULL;
	util_iso_now(it.ended_at, sizeof(it.ended_at));
	ret = db_retry_end(st, id, &it, &sm);
	log_iteration(st, &it, cycle);
	if (ret) {
		snprintf(st->error, sizeof(st->error), "cannot store iteration %ld: %s", number, strerror(-ret));
		alert_failure(st->alert, "db-write-failed", LOG_CRIT, cycle, id, st->error);
		free(sm.v);
		return IT_FAILED;
	}
	if (status == IT_DONE)
		alert_iteration(st->alert, cycle, &it, id, sm.v, sm.n);
	free(sm.v);
	if (status == IT_FAILED) {
		snprintf(st->error, sizeof(st->error), "iteration %ld failed: %s", number, err);
		alert_failure(st->alert, it.errors ? "io-error" : "iteration-failed", LOG_ERR,
			      cycle, id, st->error);
	}
	return status;
}

