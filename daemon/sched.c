/* sched: the per-target cycle loop. */
#include "sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "act.h"
#include "engine.h"
#include "log.h"
#include "signals.h"
#include "util.h"

#define DB_RETRIES 5

enum it_status { IT_DONE, IT_INTERRUPTED, IT_FAILED };

/* Samples of one iteration, kept in memory until its transaction. */
struct samples {
	struct sched_target *st;
	struct db_sample *v;
	size_t n, cap;
	const char *phase;
	int oom;
};

static const char *const state_names[] = { "running", "done", "stopped", "failed" };

const char *sched_state_name(enum sched_state s)
{
	return (unsigned)s < ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

static void set_phase(struct sched_target *st, const char *phase)
{
	pthread_mutex_lock(&st->lock);
	st->prog.phase = phase;
	st->prog.mibps = 0;
	pthread_mutex_unlock(&st->lock);
}

void sched_progress_get(struct sched_target *st, struct sched_progress *out)
{
	pthread_mutex_lock(&st->lock);
	*out = st->prog;
	pthread_mutex_unlock(&st->lock);
}

void sched_offer_config(struct sched_target *st, const struct cfg *c, const struct cfg_target *t)
{
	pthread_mutex_lock(&st->lock);
	st->pending_cfg = c;
	st->pending_t = t;
	pthread_mutex_unlock(&st->lock);
}

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

/* Sleep up to secs, returning early when a stop is requested. */
static void nap(double secs)
{
	double end = util_now() + secs;
	while (!sig_stop) {
		double left = end - util_now();
		if (left <= 0)
			break;
		struct timespec ts = { 0, (long)((left < 0.1 ? left : 0.1) * 1e9) };
		nanosleep(&ts, NULL);
	}
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
		set_phase(st, "fill");
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
	set_phase(st, "measure");
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
static enum it_status run_iteration(struct sched_target *st, struct eng_ctx *eng, int64_t cycle_id,
				    long cycle, long number, int size_index)
{
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
	enum it_status status = measure(st, eng, size, &it, &sm, err, sizeof(err));
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

/* The action after a cycle. Returns 0 or -errno (recorded either way). */
static int between_cycles(struct sched_target *st, int64_t cycle_id, long cycle)
{
	struct act_env env = {
		.tg = &st->tg, .t = st->t, .region_offset = st->layout.region_offset,
		.region_size = st->layout.region_size, .stop = &sig_stop,
	};
	struct act_result r;
	set_phase(st, cfg_action_name(st->t->between_cycles));
	int ret = act_run(st->t->between_cycles, &env, &r);
	struct db_action a = {
		.kind = cfg_action_name(st->t->between_cycles), .seconds = r.seconds,
		.bytes = r.bytes, .outcome = r.outcome, .error = r.error[0] ? r.error : NULL,
	};
	memcpy(a.started_at, r.started_at, sizeof(a.started_at));
	if (st->t->between_cycles != ACT_NONE)
		log_msg(ret ? LOG_ERR : LOG_INFO, "target %s: cycle %ld: %s: %s, %llu bytes in %.2f s%s%s",
			st->t->name, cycle, a.kind, a.outcome, (unsigned long long)a.bytes, a.seconds,
			a.error ? ": " : "", a.error ? a.error : "");
	int dret = db_cycle_action(st->db, cycle_id, &a);
	if (ret) {
		snprintf(st->error, sizeof(st->error), "action %s failed: %s", a.kind, r.error);
		alert_failure(st->alert, "action-failed", LOG_ERR, cycle, 0, st->error);
	} else {
		alert_action(st->alert, cycle, cycle_id, a.kind, a.outcome, a.error);
	}
	return ret ? ret : dret;
}

/* One cycle from size start on. Returns the state to end in, or RUNNING. */
static enum sched_state run_cycle(struct sched_target *st, struct eng_ctx *eng, int64_t cycle_id,
				  long cycle, int start, long number)
{
	for (int i = start; i < st->layout.nsizes; i++) {
		enum it_status s = run_iteration(st, eng, cycle_id, cycle, number++, i);
		if (s == IT_INTERRUPTED) {
			db_cycle_end(st->db, cycle_id, "interrupted");
			return SCHED_STOPPED;
		}
		if (s == IT_FAILED) {
			db_cycle_end(st->db, cycle_id, "failed");
			return SCHED_FAILED;
		}
	}
	if (between_cycles(st, cycle_id, cycle)) {
		db_cycle_end(st->db, cycle_id, "failed");
		return SCHED_FAILED;
	}
	if (db_cycle_end(st->db, cycle_id, "done")) {
		snprintf(st->error, sizeof(st->error), "cannot record the end of cycle %ld", cycle);
		return SCHED_FAILED;
	}
	return SCHED_RUNNING;
}

/* Take a reloaded configuration at a cycle boundary, when it still fits
 * the device this thread holds open. */
static void adopt_pending(struct sched_target *st)
{
	pthread_mutex_lock(&st->lock);
	const struct cfg *c = st->pending_cfg;
	const struct cfg_target *t = st->pending_t;
	st->pending_cfg = NULL;
	st->pending_t = NULL;
	pthread_mutex_unlock(&st->lock);
	if (!c)
		return;
	char err[CFG_ERR_MAX];
	struct cfg_layout l;
	if (strcmp(t->device, st->t->device)) {
		log_msg(LOG_ERR, "target %s: reload changes device to %s; keeping %s until restart",
			t->name, t->device, st->t->device);
		return;
	}
	if (t->queue_depth > st->max_qd || t->fill_queue_depth > st->max_qd ||
	    t->block_size > st->max_bs || t->fill_block_size > st->max_bs) {
		log_msg(LOG_ERR, "target %s: reload raises queue depth or block size beyond what this "
			"process allocated; keeping the old configuration until restart", t->name);
		return;
	}
	if (cfg_resolve(c, t, st->tg.capacity, st->tg.logical_block_size, &l, err, sizeof(err))) {
		log_msg(LOG_ERR, "target %s: reloaded configuration does not fit the device, keeping "
			"the old one: %s", t->name, err);
		return;
	}
	st->cfg = c;
	st->t = t;
	st->layout = l;
	alert_set_config(st->alert, t);
	log_msg(LOG_INFO, "target %s: reloaded configuration in effect from this cycle", t->name);
}

static enum sched_state cycles_loop(struct sched_target *st, struct eng_ctx *eng)
{
	struct db_resume res;
	int ret = db_resume_point(st->db, st->target_id, (long)st->t->cycles, &res);
	if (ret) {
		snprintf(st->error, sizeof(st->error), "cannot read resume point: %s", strerror(-ret));
		return SCHED_FAILED;
	}
	if (res.interrupted_marked)
		log_msg(LOG_NOTICE, "target %s: %ld iteration(s) left running by an earlier process marked interrupted",
			st->t->name, res.interrupted_marked);
	if (res.resume)
		log_msg(LOG_NOTICE, "target %s: resuming cycle %ld at size %d of %d (iteration %ld)",
			st->t->name, res.cycle_number, res.next_size_index + 1, st->layout.nsizes,
			res.next_iteration);
	long cycle = res.cycle_number, done = res.campaign_cycles_done;
	for (;;) {
		if (sig_stop)
			return SCHED_STOPPED;
		adopt_pending(st);
		if (st->t->cycles && done >= st->t->cycles)
			return SCHED_DONE;
		int64_t cycle_id;
		int start = 0;
		long number = 1;
		if (res.resume) {
			cycle_id = res.cycle_id;
			start = res.next_size_index;
			number = res.next_iteration;
			res.resume = 0;
		} else if ((ret = db_cycle_begin(st->db, st->target_id, st->run_id, cycle, &cycle_id))) {
			snprintf(st->error, sizeof(st->error), "cannot record cycle %ld: %s", cycle, strerror(-ret));
			return SCHED_FAILED;
		}
		enum sched_state s = run_cycle(st, eng, cycle_id, cycle, start, number);
		if (s != SCHED_RUNNING)
			return s;
		done++;
		cycle++;
		if (!st->t->cycles || done < st->t->cycles) {
			set_phase(st, "pause");
			nap(st->t->pause);
		}
	}
}

static void *target_main(void *arg)
{
	struct sched_target *st = arg;
	struct eng_ctx *eng = NULL;
	unsigned qd = (unsigned)(st->t->queue_depth > st->t->fill_queue_depth ? st->t->queue_depth
									     : st->t->fill_queue_depth);
	uint64_t bs = st->t->block_size > st->t->fill_block_size ? st->t->block_size : st->t->fill_block_size;

	sig_block_in_thread();
	st->max_qd = qd;
	st->max_bs = bs;
	int ret = eng_create(qd, (uint32_t)bs, &eng);
	if (ret) {
		snprintf(st->error, sizeof(st->error), "cannot set up libaio (queue depth %u): %s", qd,
			 strerror(-ret));
		__atomic_store_n(&st->state, SCHED_FAILED, __ATOMIC_SEQ_CST);
	} else {
		__atomic_store_n(&st->state, cycles_loop(st, eng), __ATOMIC_SEQ_CST);
	}
	eng_destroy(eng);
	if (st->state == SCHED_FAILED)
		log_msg(LOG_ERR, "target %s: stopped: %s", st->t->name, st->error);
	else
		log_msg(LOG_INFO, "target %s: %s", st->t->name, sched_state_name(st->state));
	return NULL;
}

int sched_start(struct sched_target *st)
{
	struct alert_target who = {
		.name = st->t->name, .device = st->tg.path,
		.serial = st->tg.serial[0] ? st->tg.serial : NULL, .db = st->db,
		.target_id = st->target_id, .run_id = st->run_id,
	};
	int ret = alert_init(&who, st->t, &st->alert);
	if (ret)
		return ret;
	pthread_mutex_init(&st->lock, NULL);
	st->prog.baseline_mibps = -1;
	st->prog.phase = "start";
	__atomic_store_n(&st->state, SCHED_RUNNING, __ATOMIC_SEQ_CST);
	ret = pthread_create(&st->thread, NULL, target_main, st);
	if (ret)
		return -ret;
	st->started = 1;
	return 0;
}

enum sched_state sched_join(struct sched_target *st)
{
	if (st->started) {
		pthread_join(st->thread, NULL);
		st->started = 0;
		alert_free(st->alert);
		st->alert = NULL;
		pthread_mutex_destroy(&st->lock);
	}
	return st->state;
}
