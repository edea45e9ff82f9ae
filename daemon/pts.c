/* pts: the PTS tests as presets, their cells and rounds. */
#include "pts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "io/engine.h"
#include "steady.h"

#define KIB 1024u

/* The IOPS test's matrix: R/W mixes (percent read) by block sizes, in the
 * specification's order; its tracking variable is 4 KiB random writes. */
static const unsigned iops_reads[] = { 100, 95, 65, 50, 35, 5, 0 };
static const uint32_t iops_bs[] = { 1024 * KIB, 128 * KIB, 64 * KIB, 32 * KIB,
				    16 * KIB,   8 * KIB,   4 * KIB,  512 };
/* The latency test: three mixes by three block sizes at one thread and
 * depth 1; its tracking variable is the mean latency of 4 KiB writes. */
static const unsigned lat_reads[] = { 100, 65, 0 };
static const uint32_t lat_bs[] = { 512, 4 * KIB, 8 * KIB };
/* Cross-stimulus recovery: sequential 1 MiB writes, 8 KiB random writes,
 * sequential 1 MiB writes again. */
static const char *const xsr_parts[] = { "seq-before", "random", "seq-after" };

static void cell_set(struct pts_cell *c, const char *name, int random, unsigned read_pct,
		     uint32_t bs, unsigned jobs, unsigned depth)
{
	memset(c, 0, sizeof(*c));
	util_strlcpy(c->name, name, sizeof(c->name));
	c->spec.order = random ? WO_RANDOM : WO_SEQ;
	c->spec.read_pct = read_pct;
	c->spec.random_pct = random ? 100 : 0;
	c->spec.nbs = 1;
	c->spec.bs[0] = (struct workload_bs){ bs, 1 };
	c->jobs = jobs;
	c->depth = depth;
}

unsigned pts_groups(enum cfg_pts test, const struct plan_pts *p)
{
	switch (test) {
	case PTS_THROUGHPUT: return p->variant == PTS_CLIENT ? 1 : 2;
	case PTS_XSR: return 3;
	case PTS_IOPS:
	case PTS_LATENCY:
	case PTS_WSAT:
	case PTS_HIR:
	case PTS_DIRTH:
	case PTS__COUNT: break;
	}
	return 1;
}

/* The demand intensities swept: powers of two from top down to 1 (top
 * itself first when it is none). Returns how many. */
static unsigned sweep(unsigned top, unsigned *out)
{
	unsigned n = 0, v = 1;
	while (v * 2 <= top)
		v *= 2;
	if (v != top)
		out[n++] = top;
	for (; v >= 1; v /= 2)
		out[n++] = v;
	return n;
}

static unsigned dirth_cells(const struct plan_pts *p, struct pts_cell *out, unsigned max)
{
	unsigned tc[16], qd[16], n = 0;
	unsigned nt = sweep(p->sweep_threads, tc), nq = sweep(p->sweep_depth, qd);
	char name[40];

	for (unsigned i = 0; i < nt; i++)
		for (unsigned j = 0; j < nq && n < max; j++) {
			snprintf(name, sizeof(name), "pts-dirth-t%uq%u", tc[i], qd[j]);
			cell_set(&out[n], name, 1, 65, 8 * KIB, tc[i], qd[j]);
			out[n].part = "sweep";
			/* the tracking variable: IOPS at the highest demand */
			out[n].track = n == 0;
			n++;
		}
	return n;
}

static unsigned matrix(const char *test, const unsigned *reads, unsigned nr, const uint32_t *bs,
		       unsigned nb, unsigned jobs, unsigned depth, uint32_t track_bs, uint32_t lbs,
		       struct pts_cell *out, unsigned max)
{
	unsigned n = 0;
	char name[40];

	for (unsigned i = 0; i < nr; i++)
		for (unsigned j = 0; j < nb && n < max; j++) {
			if (bs[j] < lbs) /* a 4Kn drive has no 0.5 KiB I/O */
				continue;
			snprintf(name, sizeof(name), "pts-%s-%u:%u", test, reads[i],
				 100 - reads[i]);
			cell_set(&out[n], name, 1, reads[i], bs[j], jobs, depth);
			out[n].track = reads[i] == 0 && bs[j] == track_bs;
			n++;
		}
	return n;
}

unsigned pts_round_cells(enum cfg_pts test, const struct plan_pts *p, unsigned g,
			 struct pts_cell *out, unsigned max)
{
	uint32_t tp_bs = p->variant == PTS_CLIENT || g ? 1024 * KIB : 128 * KIB;

	if (!max)
		return 0;
	switch (test) {
	case PTS_IOPS:
		return matrix("iops", iops_reads, ARRAY_SIZE(iops_reads), iops_bs,
			      ARRAY_SIZE(iops_bs), p->threads, p->depth, 4 * KIB, p->lbs, out, max);
	case PTS_LATENCY:
		return matrix("latency", lat_reads, ARRAY_SIZE(lat_reads), lat_bs,
			      ARRAY_SIZE(lat_bs), 1, 1, 4 * KIB, p->lbs, out, max);
	case PTS_THROUGHPUT:
		if (max < 2)
			return 0;
		cell_set(&out[0], "pts-throughput-write", 0, 0, tp_bs, p->threads, p->depth);
		cell_set(&out[1], "pts-throughput-read", 0, 100, tp_bs, p->threads, p->depth);
		out[0].track = 1;
		out[1].track = 2;
		return 2;
	case PTS_WSAT: cell_set(&out[0], "pts-wsat", 1, 0, 4 * KIB, p->threads, p->depth); return 1;
	case PTS_XSR:
		cell_set(&out[0], g == 1 ? "pts-xsr-random" : "pts-xsr-seq", g == 1, 0,
			 g == 1 ? 8 * KIB : 1024 * KIB, p->threads, p->depth);
		out[0].part = xsr_parts[g < 3 ? g : 2];
		return 1;
	case PTS_DIRTH: return dirth_cells(p, out, max);
	case PTS_HIR:
	case PTS__COUNT: break;
	}
	return 0;
}

double pts_tracked(enum cfg_pts test, double iops, double mibps, double lat_mean_us)
{
	switch (test) {
	case PTS_THROUGHPUT: return mibps;
	case PTS_LATENCY: return lat_mean_us;
	case PTS_IOPS:
	case PTS_WSAT:
	case PTS_HIR:
	case PTS_XSR:
	case PTS_DIRTH:
	case PTS__COUNT: break;
	}
	return iops;
}

unsigned pts_dirth_points(const struct pts_cell *cells, const double *iops, unsigned n,
			  unsigned pick[3])
{
	int hi = -1, lo = -1, mid = -1;

	for (unsigned i = 0; i < n; i++) {
		if (iops[i] < 0)
			continue;
		if (hi < 0 || iops[i] > iops[hi])
			hi = (int)i;
		if (cells[i].jobs == 1 && cells[i].depth == 1)
			lo = (int)i;
	}
	if (hi < 0)
		return 0;
	int least = lo < 0; /* no 1-thread depth-1 cell known: the lowest IOPS */
	for (unsigned i = 0; least && i < n; i++)
		if (iops[i] >= 0 && (lo < 0 || iops[i] < iops[lo]))
			lo = (int)i;
	double half = (iops[hi] + iops[lo]) / 2;
	for (unsigned i = 0; i < n; i++)
		if (iops[i] >= 0 && (int)i != hi && (int)i != lo &&
		    (mid < 0 || fabs(iops[i] - half) < fabs(iops[mid] - half)))
			mid = (int)i;
	pick[0] = (unsigned)hi;
	pick[1] = (unsigned)(mid >= 0 ? mid : hi);
	pick[2] = (unsigned)lo;
	return 1u + (mid >= 0) + (lo != hi);
}

int pts_hist_json(const struct hist *h, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "{\"bins\":[");
	const unsigned per = HIST_SUB / 4; /* four bins per power of two */
	int first = 1;

	for (unsigned b = 0; b < HIST_BUCKETS && used < len; b += per) {
		uint64_t count = 0;
		for (unsigned k = b; k < b + per; k++)
			count += h->bucket[k];
		if (!count)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s[%.3f,%llu]", first ? "" : ",",
					 (double)hist_bucket_low(b) / 1e3,
					 (unsigned long long)count);
		first = 0;
	}
	if (used < len)
		used += (size_t)snprintf(buf + used, len - used, "]}");
	if (used >= len) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return 0;
}

void pts_describe(enum cfg_pts test, const struct plan_pts *p, char *buf, size_t len)
{
	static struct pts_cell c[PTS_MAX_CELLS];
	unsigned n = pts_round_cells(test, p, 0, c, PTS_MAX_CELLS), ng = pts_groups(test, p);
	const char *name = cfg_pts_name(test);

	switch (test) {
	case PTS_WSAT:
		snprintf(buf, len,
			 "%s: 4 KiB random writes in cells of %gs at %u thread(s) of depth"
			 " %u until %llu bytes are written",
			 name, p->cell, p->threads, p->depth, (unsigned long long)p->wsat_bytes);
		return;
	case PTS_XSR:
		snprintf(buf, len,
			 "%s: 3 access groups of %gs (1 MiB sequential, 8 KiB random, 1 MiB"
			 " sequential writes) in cells of %gs at %u thread(s) of depth %u",
			 name, p->xsr_segment, p->cell, p->threads, p->depth);
		return;
	case PTS_IOPS:
	case PTS_THROUGHPUT:
	case PTS_LATENCY:
	case PTS_DIRTH:
		snprintf(buf, len,
			 "%s: %s%u cells of %gs a round at %s%u thread(s) of depth %s%u, until"
			 " steady state or %u rounds%s",
			 name, ng > 1 ? "for each block size, " : "", n, p->cell,
			 test == PTS_DIRTH ? "1.." : "", n ? c[0].jobs : 0,
			 test == PTS_DIRTH ? "1.." : "", n ? c[0].depth : 0, p->max_rounds,
			 test == PTS_DIRTH ? ", then a cell at each chosen point" : "");
		return;
	case PTS_HIR:
	case PTS__COUNT: break;
	}
	snprintf(buf, len, "%s: host idle recovery (hir = yes), after the other tests", name);
}

/* One test's run: its engines, rounds and tracking series. */
struct run {
	const struct iter_env *e;
	struct iter_ctx *ic;
	const struct plan_pts *p;
	enum cfg_pts test;
	int size_index, last_test, precondition;
	long *next;
	const struct pts_cell *cur; /* the cell running now, */
	struct db_pts row;          /* its place, stored with it */
	double *y[PTS_MAX_TRACK];   /* each tracking variable by round */
	int ntrack, steady[PTS_MAX_TRACK];
	unsigned rounds;            /* rounds that may run */
	double iops[PTS_MAX_CELLS]; /* the last round's, by cell */
	uint64_t written;           /* bytes the test wrote so far */
	int last_in_round;          /* the cell ends a round of rounds to steady state */
	int final;                  /* the cell is the test's last, whatever it measures */
	int ends;                   /* the test ended with the cell */
	int want_hist;              /* the cell stores its histogram */
	char hist[8192];
};

/* A tracking cell done: its variable's window ending at this round. */
static void track(struct run *st, const struct db_iteration *it)
{
	struct steady_window w;
	unsigned k = (unsigned)st->cur->track - 1, r = (unsigned)st->row.round;

	st->y[k][r - 1] = pts_tracked(st->test, it->iops_avg, it->mibps_avg, it->lat_mean_us);
	st->steady[k] = steady_check(st->y[k], r, &w);
	st->row.ss_summary = 1;
	st->row.ss_reached = st->steady[k];
	st->row.ss_first_round = (int)(r - w.n + 1);
	st->row.ss_mean = w.mean;
	st->row.ss_range_pct = w.range_pct;
	st->row.ss_slope = w.slope;
	st->row.ss_excursion_pct = w.excursion_pct;
}

static int all_steady(const struct run *st)
{
	for (int k = 0; k < st->ntrack; k++)
		if (!st->steady[k])
			return 0;
	return 1;
}

/* iter.h: iter_cell_fn. The cell's own figures, before it is stored. */
static void cell_done(void *arg, struct db_iteration *it, const struct engine_result *r)
{
	struct run *st = arg;
	int round = st->row.round;

	st->row.lat_p99999_us = r->ops ? (double)hist_percentile(&r->lat, 99.999) / 1e3 : -1;
	if (r->ops)
		st->written += (uint64_t)((double)r->bytes * (double)r->writes / (double)r->ops);
	if (st->row.cell >= 1 && st->row.cell <= PTS_MAX_CELLS)
		st->iops[st->row.cell - 1] = it->iops_avg;
	if (st->cur->track)
		track(st, it);
	if (st->want_hist && !pts_hist_json(&r->lat, st->hist, sizeof(st->hist)))
		st->row.lat_hist = st->hist;
	st->ends = st->final ||
		   (st->last_in_round && (all_steady(st) || round >= (int)st->rounds)) ||
		   (st->test == PTS_WSAT && st->written >= st->p->wsat_bytes);
	/* the size ends with the last cell of the last test */
	it->more_rows = !(st->ends && st->last_test);
}

/* Run cell c as cell number `cell` of round `round`. */
static enum it_status run_cell(struct run *st, const struct pts_cell *c, int round, int cell,
			       double seconds)
{
	struct db_pts row = {
		.test = cfg_pts_name(st->test),
		.variant = cfg_pts_variant_name(st->p->variant),
		.round = round,
		.cell = cell,
		.part = c->part,
		.active_pct = st->p->active_pct,
		.tracking = c->track != 0,
		.lat_p99999_us = -1,
	};
	struct iter_cell ic = {
		.spec = &c->spec,
		.workload = c->name,
		.jobs = c->jobs,
		.queue_depth = c->depth,
		.seconds = seconds,
		.precondition = st->precondition,
		/* the workload-independent preconditioning: twice the range */
		.fill_amount = 2 * st->p->range,
		.more = 1,
		.pts = &st->row,
		.done = cell_done,
		.arg = st,
	};
	st->row = row;
	st->cur = c;
	st->ends = 0;
	st->precondition = 0;
	return iter_run_cell(st->e, st->ic, st->size_index, st->next, &ic);
}

/* Rounds of cells[0..n) until every tracking variable is steady or the
 * rounds run out. final: the rounds end the test. */
static enum it_status rounds_to_steady(struct run *st, const struct pts_cell *cells, unsigned n,
				       int final)
{
	enum it_status s = IT_DONE;

	memset(st->steady, 0, sizeof(st->steady));
	for (unsigned r = 1; r <= st->rounds && s == IT_DONE; r++) {
		for (unsigned i = 0; i < n && s == IT_DONE; i++) {
			st->last_in_round = final && i + 1 == n;
			s = run_cell(st, &cells[i], (int)r, (int)i + 1, st->p->cell);
		}
		if (s == IT_DONE && (all_steady(st) || r == st->rounds)) {
			log_msg(LOG_INFO, "target %s: cycle %ld: PTS %s: steady state %s %u rounds",
				st->e->t->name, st->e->cycle, cfg_pts_name(st->test),
				all_steady(st) ? "reached after" : "NOT reached in", r);
			break;
		}
	}
	st->last_in_round = 0;
	return s;
}

/* Cell c again and again as round `round`: for seconds (xsr), or until
 * the test's bytes are written (wsat, seconds < 0). final: it ends the
 * test. */
static enum it_status repeated(struct run *st, const struct pts_cell *c, int round, double seconds,
			       int final)
{
	enum it_status s = IT_DONE;
	double cell = st->p->cell;
	long n = seconds < 0 ? LONG_MAX : (long)ceil(seconds / cell - 1e-9);

	for (long k = 1; k <= n && s == IT_DONE && !st->ends; k++) {
		st->final = final && k == n;
		s = run_cell(st, c, round, (int)(k < INT32_MAX ? k : INT32_MAX), cell);
	}
	st->final = 0;
	return s;
}

/* Demand intensity: the sweep to steady state, then one cell at each of
 * its chosen points storing its response-time histogram. */
static enum it_status dirth(struct run *st, const struct pts_cell *cells, unsigned n)
{
	static const char *const names[] = { "max", "mid", "min" };
	unsigned pick[3];

	for (unsigned i = 0; i < PTS_MAX_CELLS; i++)
		st->iops[i] = -1;
	enum it_status s = rounds_to_steady(st, cells, n, 0);
	int round = st->row.round + 1;
	unsigned np = s == IT_DONE ? pts_dirth_points(cells, st->iops, n, pick) : 0;
	for (unsigned k = 0, done = 0; k < 3 && s == IT_DONE && np; k++) {
		/* a point that is the maximum's own cell is not run twice (the
		 * 1-thread depth-1 cell can be the fastest on a busy host) */
		if (k && pick[k] == pick[0])
			continue;
		struct pts_cell c = cells[pick[k]];
		c.part = names[k];
		c.track = 0;
		st->want_hist = 1;
		st->final = ++done == np;
		s = run_cell(st, &c, round, (int)done, st->p->cell);
	}
	st->want_hist = 0;
	st->final = 0;
	return s;
}

/* The rounds and groups of st->test. */
static enum it_status run_test(struct run *st, struct pts_cell *cells)
{
	unsigned ng = pts_groups(st->test, st->p);
	enum it_status s = IT_DONE;

	for (unsigned g = 0; g < ng && s == IT_DONE; g++) {
		unsigned n = pts_round_cells(st->test, st->p, g, cells, PTS_MAX_CELLS);
		int last = g + 1 == ng;
		switch (st->test) {
		case PTS_IOPS:
		case PTS_LATENCY:
		case PTS_THROUGHPUT: s = rounds_to_steady(st, cells, n, last); break;
		case PTS_DIRTH: s = dirth(st, cells, n); break;
		case PTS_XSR: s = repeated(st, cells, (int)g + 1, st->p->xsr_segment, last); break;
		case PTS_WSAT: s = repeated(st, cells, 1, -1, 1); break;
		case PTS_HIR:
		case PTS__COUNT: break;
		}
	}
	return s;
}

/* The engines a test needs: its cells' threads, depth and blocks, and
 * the fill's. */
static void test_limits(enum cfg_pts test, const struct plan_pts *p, const struct iter_limits *base,
			const struct cfg_target *t, struct pts_cell *cells, struct iter_limits *l)
{
	*l = *base;
	l->jobs = 1;
	l->max_qd = (unsigned)t->fill_queue_depth;
	l->max_bs = t->fill_block_size;
	for (unsigned g = 0; g < pts_groups(test, p); g++) {
		unsigned n = pts_round_cells(test, p, g, cells, PTS_MAX_CELLS);
		for (unsigned i = 0; i < n; i++) {
			l->jobs = cells[i].jobs > l->jobs ? cells[i].jobs : l->jobs;
			l->max_qd = cells[i].depth > l->max_qd ? cells[i].depth : l->max_qd;
			if (workload_max_bs(&cells[i].spec) > l->max_bs)
				l->max_bs = workload_max_bs(&cells[i].spec);
		}
	}
}

/* One test, with engines of its own. */
static enum it_status one_test(struct run *st, const struct iter_limits *base)
{
	struct pts_cell *cells = calloc(PTS_MAX_CELLS, sizeof(*cells));
	struct iter_limits l;
	enum it_status s = IT_FAILED;
	char err[256];

	st->y[0] = calloc(st->rounds + 1, sizeof(double));
	st->y[1] = calloc(st->rounds + 1, sizeof(double));
	st->ntrack = st->test == PTS_THROUGHPUT ? 2 : 1;
	if (!cells || !st->y[0] || !st->y[1]) {
		snprintf(st->e->error, st->e->error_len, "PTS %s: out of memory",
			 cfg_pts_name(st->test));
		goto out;
	}
	test_limits(st->test, st->p, base, st->e->t, cells, &l);
	int ret = iter_init(&l, err, sizeof(err), &st->ic);
	if (ret) {
		snprintf(st->e->error, st->e->error_len, "PTS %s: %s", cfg_pts_name(st->test), err);
		goto out;
	}
	log_msg(LOG_INFO, "target %s: cycle %ld: PTS %s (%s) begins", st->e->t->name, st->e->cycle,
		cfg_pts_name(st->test), cfg_pts_variant_name(st->p->variant));
	s = run_test(st, cells);
	iter_fini(st->ic);
	st->ic = NULL;
out:
	free(st->y[0]);
	free(st->y[1]);
	free(cells);
	return s;
}

enum it_status pts_run(const struct iter_env *e, const struct iter_limits *base, int size_index,
		       long *next)
{
	const struct plan_pts *p = &e->plan->pts;
	enum it_status s = IT_DONE;

	for (int i = 0; i < p->n && s == IT_DONE; i++) {
		struct run *st = calloc(1, sizeof(*st));
		if (!st) {
			snprintf(e->error, e->error_len, "PTS: out of memory");
			return IT_FAILED;
		}
		st->e = e;
		st->p = p;
		st->test = p->test[i];
		st->size_index = size_index;
		st->next = next;
		st->last_test = i + 1 == p->n;
		st->precondition = e->plan->precondition;
		st->rounds = p->max_rounds;
		s = one_test(st, base);
		free(st);
	}
	return s;
}
