/* engine_sample: a phase's samples on their way out, shared by one job's
 * run (engine.c) and the merge of several jobs (engine_jobs.c): each sample
 * is held until the next one shows whether the two are to be one, so that
 * every sample passed on is at least an interval long unless the whole
 * phase is shorter; and the phase's rate figures from them. Knows nothing
 * of engines or devices. */
#ifndef WEARMON_ENGINE_SAMPLE_H
#define WEARMON_ENGINE_SAMPLE_H

#include <stdint.h>

#include "base/hist.h"
#include "base/stats.h"
#include "io/engine.h"

/* Samples on their way out. */
struct sample_out {
	const struct engine_phase *p; /* on_sample, arg */
	double interval;              /* seconds */
	struct wstat *w;              /* the samples passed on, by length */
	unsigned n;                   /* how many */
	int held;
	struct engine_sample smp;
	struct hist lat;
};

/* A sample ending t seconds into the phase, secs long, from its counts
 * and the latency histogram of its I/Os. */
void engine_sample_make(struct engine_sample *smp, unsigned index, double t, double secs,
			uint64_t bytes, uint64_t ops, double min_1s, const struct hist *lat);

/* Start the way out of p's samples, counting them into w. */
void engine_out_init(struct sample_out *o, const struct engine_phase *p, struct wstat *w);

/* A sample is cut: hold it, or fold it into the held one when either is
 * shorter than an interval. */
void engine_out_push(struct sample_out *o, const struct engine_sample *smp);

/* Pass the held sample on (the phase's end). */
void engine_out_pass(struct sample_out *o);

/* min, max and stddev of r's rate from its samples w, bounded by its
 * average (unknown, -1, with fewer than two full samples). */
void engine_rate_figs(struct engine_result *r, const struct wstat *w);

#endif
