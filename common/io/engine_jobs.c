/* engine_jobs: one phase as several jobs, a thread and an engine context
 * each, their samples merged per interval and their results summed. */
#include "io/engine_jobs.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "io/engine_sample.h"

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

	engine_sample_make(&smp, m->nsamples++, e->t, e->t - m->last_t, e->bytes, e->ops, e->min_1s,
			   &e->lat);
	m->last_t = e->t;
	engine_out_push(&m->out, &smp);
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
		for (unsigned k = 0; k < WORKLOAD_MAX_BS; k++)
			r->bs_ops[k] += x->bs_ops[k];
		for (unsigned k = 0; k < ENGINE_LBA_BINS; k++)
			r->lba_ops[k] += x->lba_ops[k];
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
	engine_rate_figs(r, &m->mibps);
}

/* Run the jobs, each in a thread, and wait for them all. Returns 0, the
 * first job's failure (its reason in r->refused) or pthread_create's. */
static int jobs_go(struct job *jobs, unsigned njobs, struct merge *m, struct engine_result *r)
{
	unsigned started = 0;
	int ret = 0;

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
	return ret;
}

int engine_run_jobs(struct engine_ctx *const *ctx, unsigned njobs, const struct engine_phase *p,
		    struct engine_result *r)
{
	struct workload_spec spec;
	struct merge *m;
	struct job *jobs;
	int ret = 0;

	r->refused[0] = '\0';
	if (njobs == 1)
		return engine_run(ctx[0], p, r);
	if (!njobs || njobs > ENGINE_MAX_JOBS)
		return -EINVAL;
	engine_phase_spec(p, &spec);
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
	engine_out_init(&m->out, p, &m->mibps);
	uint64_t t0 = util_now_ns();
	for (unsigned j = 0; j < njobs; j++) {
		jobs[j].m = m;
		jobs[j].id = j;
		jobs[j].c = ctx[j];
		job_phase(p, j, njobs, unit ? unit : 512, &jobs[j]);
		jobs[j].p.t0 = p->t0 ? p->t0 : t0;
	}
	ret = jobs_go(jobs, njobs, m, r);
	if (!ret) {
		merge_flush(m, 1);
		engine_out_pass(&m->out);
		jobs_sum(jobs, njobs, m, r);
	}
	pthread_mutex_destroy(&m->lock);
out:
	free(jobs);
	free(m);
	return ret;
}
