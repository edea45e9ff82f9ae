/* engine_sample: samples held, folded and passed on; a phase's rate
 * figures from them. */
#include "io/engine_sample.h"

void engine_sample_make(struct engine_sample *smp, unsigned index, double t, double secs,
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

void engine_out_init(struct sample_out *o, const struct engine_phase *p, struct wstat *w)
{
	o->p = p;
	o->interval = p->sample_interval;
	o->w = w;
	o->n = 0;
	o->held = 0;
}

/* Pass the held sample on, and count it in min, max and stddev. */
void engine_out_pass(struct sample_out *o)
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
	engine_sample_make(a, a->index, b->t, a->seconds + b->seconds, a->bytes + b->bytes,
			   a->ops + b->ops, min_1s, alat);
}

/* A part shorter than an interval (the end of a phase, or a merged
 * interval that some jobs had left early) joins its neighbour, so min and
 * max come from whole intervals while every byte stays in exactly one
 * sample. */
void engine_out_push(struct sample_out *o, const struct engine_sample *smp)
{
	if (o->held && (out_short(o, o->smp.seconds) || out_short(o, smp->seconds))) {
		sample_fold(&o->smp, &o->lat, smp);
		return;
	}
	engine_out_pass(o);
	o->smp = *smp;
	o->lat = *smp->lat;
	o->held = 1;
}

void engine_rate_figs(struct engine_result *r, const struct wstat *w)
{
	struct rate_figs f;

	stats_rate_figs(w, r->mibps, &f);
	r->mibps_min = f.min;
	r->mibps_max = f.max;
	r->mibps_stddev = f.stddev;
}
