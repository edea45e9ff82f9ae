/* engine_jobs: one phase as several jobs, each on an engine context of its
 * own in a thread of its own, their samples merged per interval and their
 * results summed. Knows nothing of which engine the contexts run. */
#ifndef WEARMON_ENGINE_JOBS_H
#define WEARMON_ENGINE_JOBS_H

#include "io/engine.h"

/* Run one phase as njobs jobs (1..ENGINE_MAX_JOBS), job j on ctx[j] in a thread
 * of its own: the same span, each with its own seed (offsets and data) and
 * sequential start, the amount split so that the shares add up to it.
 * Sums them into r (bytes, ops, errors, latency histogram; MiB/s and IOPS
 * over the longest job) and calls p->on_sample once per interval with the
 * jobs' samples of that interval summed (intervals counted from one shared
 * start). njobs = 1 is engine_run on ctx[0]. Returns as engine_run; the first
 * job's failure wins. */
int engine_run_jobs(struct engine_ctx *const *ctx, unsigned njobs, const struct engine_phase *p,
		    struct engine_result *r);

#endif
