/* plan: a target's configuration resolved into a const plan (plan.h). */
#include "plan.h"

#include <errno.h>
#include <string.h>

uint64_t plan_amount(const struct cfg_amount *a, uint64_t size, uint32_t bs)
{
	uint64_t n = a->is_multiple ? (uint64_t)(a->multiple * (double)size) : a->bytes;
	n = n / bs * bs;
	return n ? n : bs;
}

/* The phases of a size, as cfg_measure_phases gives them (the workload key
 * alone when the list cannot be had). */
static void build_phases(const struct cfg_target *t, uint32_t lbs, struct plan *p)
{
	int ph[CFG_MAX_PHASES];
	char msg[256];
	int n = cfg_measure_phases(t, ph, msg, sizeof(msg));

	if (n < 0) {
		ph[0] = (int)t->workload;
		n = 1;
	}
	p->nphases = n;
	for (int i = 0; i < n; i++) {
		struct plan_phase *f = &p->phase[i];
		f->is_fill = ph[i] == CFG_PHASE_FILL;
		f->workload = f->is_fill ? t->workload : (enum cfg_workload)ph[i];
		f->name = cfg_workload_name(f->workload);
		if (f->is_fill) {
			f->block_size = (uint32_t)t->fill_block_size;
			continue;
		}
		cfg_workload_spec(t, f->workload, &f->spec, msg, sizeof(msg));
		f->spec.sector = lbs; /* where I/Os under block_align start */
		f->block_size = workload_max_bs(&f->spec);
	}
}

/* Every measured phase's amount at every size of the layout. */
static void build_amounts(const struct cfg_target *t, struct plan *p)
{
	const struct cfg_layout *l = &p->layout;
	for (int i = 0; i < p->nphases; i++) {
		struct plan_phase *f = &p->phase[i];
		for (int s = 0; s < l->nsizes && !f->is_fill; s++)
			f->amount[s] = plan_amount(&t->amount, l->sizes[s], f->block_size);
	}
}

/* Largest block and deepest queue: what the engines are sized for. */
static void build_limits(const struct cfg_target *t, struct plan *p)
{
	p->max_bs = t->block_size > t->fill_block_size ? t->block_size : t->fill_block_size;
	for (int i = 0; i < p->nphases; i++)
		if (p->phase[i].block_size > p->max_bs)
			p->max_bs = p->phase[i].block_size;
	if (t->hir && p->max_bs < HIR_BLOCK)
		p->max_bs = HIR_BLOCK;
	p->max_qd = (unsigned)(t->queue_depth > t->fill_queue_depth ? t->queue_depth
								    : t->fill_queue_depth);
	p->jobs = (unsigned)t->jobs;
	p->engine = t->ioengine;
	p->engine_name = cfg_ioengine_name(t->ioengine);
	p->io_uring_sqpoll = (unsigned)t->io_uring_sqpoll;
}

/* The PTS tests, and the one size they run at: the active range. The
 * variant's defaults are wearmon's reading of the demand intensity the
 * specification leaves to the operator (conf/wearmon.conf.5, pts). */
static void build_pts(const struct cfg_target *t, struct plan *p)
{
	struct plan_pts *s = &p->pts;
	int client = t->pts_variant == PTS_CLIENT;

	if (!t->pts.n)
		return;
	s->active = 1;
	for (int i = 0; i < t->pts.n; i++) {
		if (t->pts.t[i] == PTS_HIR)
			s->hir = 1;
		else
			s->test[s->n++] = t->pts.t[i];
	}
	s->variant = t->pts_variant;
	s->cell = t->pts_cell;
	s->threads = t->pts_threads ? (unsigned)t->pts_threads : client ? 2u : 4u;
	s->depth = t->pts_queue_depth ? (unsigned)t->pts_queue_depth : client ? 16u : 32u;
	s->sweep_threads = t->pts_threads ? (unsigned)t->pts_threads : 32u;
	s->sweep_depth = t->pts_queue_depth ? (unsigned)t->pts_queue_depth : 32u;
	s->active_pct = cfg_pts_active_pct(t);
	s->range = cfg_pts_range(t, p->layout.region_size);
	s->lbs = p->layout.logical_block_size;
	s->xsr_segment = t->pts_xsr_segment;
	s->wsat_bytes = plan_amount(&t->pts_wsat_amount, s->range, 4096);
	s->max_rounds = (unsigned)t->max_rounds;
	if (s->hir && p->max_bs < HIR_BLOCK)
		p->max_bs = HIR_BLOCK;
	/* one size: the active range, filled (fill = yes) before the tests */
	p->layout.nsizes = 1;
	p->layout.sizes[0] = s->range;
}

/* The keys every row of a size reads, as the rows use them. */
static void build_rows(const struct cfg_target *t, struct plan_rows *r)
{
	r->fill_block_size = (uint32_t)t->fill_block_size;
	r->fill_queue_depth = (unsigned)t->fill_queue_depth;
	r->queue_depth = (unsigned)t->queue_depth;
	r->repeat = (int)t->repeat;
	r->steady_snia = t->steady_state == STEADY_SNIA;
	r->max_rounds = (unsigned)t->max_rounds;
	r->duration = t->duration;
	r->sample_interval = t->sample_interval;
	r->device_poll_interval = t->device_poll_interval;
	r->compressibility = (unsigned)t->compressibility;
	r->dedupe_pct = (unsigned)t->dedupe_percent;
	r->verify = t->verify;
	r->verify_stop = t->on_verify_error == ON_ERROR_STOP;
}

int plan_build(const struct cfg *c, const struct cfg_target *t, uint64_t capacity, uint32_t lbs,
	       struct plan *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->t = t;
	build_phases(t, lbs, out);
	int fill_row = 0;
	for (int i = 0; i < out->nphases; i++)
		fill_row |= out->phase[i].is_fill;
	out->precondition = t->fill && !fill_row;
	out->readback = t->verify_phase && t->verify == VERIFY_CRC32C;
	build_limits(t, out);
	build_rows(t, &out->rows);
	int ret = cfg_resolve(c, t, capacity, lbs, &out->layout, err, errlen);
	if (ret)
		return ret;
	build_pts(t, out);
	build_amounts(t, out);
	return 0;
}
