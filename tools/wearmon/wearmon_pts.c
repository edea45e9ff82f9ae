/* wearmon_pts: the report's pages of the PTS tests (pts =; rows of
 * iterations.pts_*, schema 28), one section per test in the order of the
 * specification's report: its setup, the convergence of its tracking
 * variables, the steady-state window (table and chart), its result tables
 * and charts, and the trend of its headline figure across the campaign's
 * cycles. The rows come from common/db/query/query_pts.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "db/query/query_report.h"
#include "wearmon.h"
#include "wearmon_report.h"

#define MAXS 16   /* series of one chart */
#define MAXP 4096 /* points of one series */
#define WINDOW 5  /* rounds of the steady-state window */

/* The tests in the report's order, and their pages' titles. */
static const struct {
	const char *name, *title, *unit;
} tests[] = {
	{ "iops", "PTS IOPS test", "IOPS" },
	{ "throughput", "PTS throughput test", "MiB/s" },
	{ "latency", "PTS latency test", "µs" },
	{ "wsat", "PTS write saturation (WSAT)", "IOPS" },
	{ "xsr", "PTS cross-stimulus recovery (XSR)", "MiB/s" },
	{ "dirth", "PTS demand intensity / response-time histogram (DIRTH)", "IOPS" },
};

/* Series being drawn: points of up to MAXS lines. */
struct plot {
	double x[MAXS][MAXP], y[MAXS][MAXP];
	size_t n[MAXS];
	char label[MAXS][64];
	struct chart_series s[MAXS];
	size_t ns;
};

static struct plot pl; /* large; the report is single-threaded */

/* The series labelled label (a new one when there is room), or -1. */
static int series(const char *label)
{
	for (size_t i = 0; i < pl.ns; i++)
		if (!strcmp(pl.label[i], label))
			return (int)i;
	if (pl.ns == MAXS)
		return -1;
	util_strlcpy(pl.label[pl.ns], label, sizeof(pl.label[0]));
	pl.n[pl.ns] = 0;
	return (int)pl.ns++;
}

static void point(const char *label, double x, double y)
{
	int k = series(label);
	if (k >= 0 && pl.n[k] < MAXP && !isnan(y)) {
		pl.x[k][pl.n[k]] = x;
		pl.y[k][pl.n[k]++] = y;
	}
}

/* Draw the series gathered with c's titles, in a figure with caption. */
static int draw(struct rep *r, struct chart *c, const char *caption)
{
	for (size_t i = 0; i < pl.ns; i++)
		pl.s[i] = (struct chart_series){
			.label = pl.label[i], .x = pl.x[i], .y = pl.y[i], .n = pl.n[i], .lines = 1
		};
	c->series = pl.s;
	c->nseries = pl.ns;
	c->fragment = 1;
	fputs("<figure>\n", r->f);
	int ret = pl.ns ? (chart_svg(r->f, c) ? WM_EXIT_ERROR : 0) : 0;
	if (!pl.ns)
		fputs("<p class=\"note\">Nothing to draw.</p>\n", r->f);
	fputs("<figcaption>", r->f);
	rep_esc(r, caption);
	fputs("</figcaption>\n</figure>\n", r->f);
	pl.ns = 0;
	return ret;
}

/* "65/35" of a row's read percent. */
static const char *mix(const struct wm_table *t, int i, char *buf, size_t len)
{
	int64_t rd = wm_int(t, i, "read_percent", 0);
	snprintf(buf, len, "%lld/%lld", (long long)rd, (long long)(100 - rd));
	return buf;
}

/* "4 KiB", "0.5 KiB" of a block size. */
static const char *kib(double bs, char *buf, size_t len)
{
	snprintf(buf, len, "%g KiB", bs / 1024);
	return buf;
}

/* The tracking variable's value of row i, in the test's unit. */
static double tracked(const char *test, const struct wm_table *t, int i)
{
	if (!strcmp(test, "throughput") || !strcmp(test, "xsr"))
		return wm_num(t, i, "mibps_avg");
	if (!strcmp(test, "latency"))
		return wm_num(t, i, "lat_mean_us");
	return wm_num(t, i, "iops_avg");
}

/* A tracking variable's name: block size and mix. */
static const char *track_name(const struct wm_table *t, int i, char *buf, size_t len)
{
	char a[24], b[16];
	snprintf(buf, len, "%s %s R/W", kib(wm_num(t, i, "block_size"), a, sizeof(a)),
		 mix(t, i, b, sizeof(b)));
	return buf;
}

/* The last cycle's rows are [lo, n): the cycle whose results are shown. */
static int last_cycle_from(const struct wm_table *t)
{
	int lo = t->nrows;
	int64_t c = t->nrows ? wm_int(t, t->nrows - 1, "cycle", 0) : 0;
	while (lo > 0 && wm_int(t, lo - 1, "cycle", 0) == c)
		lo--;
	return lo;
}

static void kv(struct rep *r, const char *key, const char *val)
{
	fputs("<dt>", r->f);
	rep_esc(r, key);
	fputs("</dt><dd>", r->f);
	rep_esc(r, val && *val ? val : "–");
	fputs("</dd>\n", r->f);
}

/* The test's setup: variant, active range, demand, cells, data. */
static void setup(struct rep *r, const struct wm_table *s, int i)
{
	char b[160], x[32], y[32];

	fputs("<dl>\n", r->f);
	kv(r, "variant", wm_str(s, i, "variant"));
	snprintf(b, sizeof(b), "%g%% of the region: %s from offset %s", wm_num(s, i, "active_pct"),
		 rep_bytes(wm_num(s, i, "range_bytes"), x, sizeof(x)),
		 rep_bytes(wm_num(s, i, "region_offset"), y, sizeof(y)));
	kv(r, "active range", b);
	if (wm_int(s, i, "threads", 0) != wm_int(s, i, "threads_min", 0) ||
	    wm_int(s, i, "depth", 0) != wm_int(s, i, "depth_min", 0))
		snprintf(b, sizeof(b), "threads %lld–%lld by queue depth %lld–%lld (swept)",
			 (long long)wm_int(s, i, "threads_min", 0),
			 (long long)wm_int(s, i, "threads", 0),
			 (long long)wm_int(s, i, "depth_min", 0),
			 (long long)wm_int(s, i, "depth", 0));
	else
		snprintf(b, sizeof(b), "%lld thread(s) at queue depth %lld (TC %lld, QD %lld)",
			 (long long)wm_int(s, i, "threads", 0), (long long)wm_int(s, i, "depth", 0),
			 (long long)wm_int(s, i, "threads", 0),
			 (long long)wm_int(s, i, "depth", 0));
	kv(r, "demand intensity", b);
	snprintf(b, sizeof(b), "%lld cells in %lld cycle(s) (%lld–%lld), %.3g s each on average",
		 (long long)wm_int(s, i, "cells", 0), (long long)wm_int(s, i, "cycles", 0),
		 (long long)wm_int(s, i, "first_cycle", 0),
		 (long long)wm_int(s, i, "last_cycle", 0), wm_num(s, i, "cell_seconds"));
	kv(r, "cells", b);
	snprintf(b, sizeof(b), "%s (compressibility %lld%%, dedupe %lld%%)",
		 wm_int(s, i, "compressibility_max", 0) ? "partly compressible" : "random data",
		 (long long)wm_int(s, i, "compressibility_max", 0),
		 (long long)wm_int(s, i, "dedupe_percent", 0));
	kv(r, "data pattern", b);
	if (wm_int(s, i, "fill_bytes", 0) > 0)
		snprintf(b, sizeof(b), "%s written sequentially before the test (fill = yes)",
			 rep_bytes(wm_num(s, i, "fill_bytes"), x, sizeof(x)));
	else
		snprintf(b, sizeof(b), "none (fill = no)");
	kv(r, "preconditioning", b);
	fputs("</dl>\n", r->f);
}

/* Whether rows i and j are the same access pattern. */
static int same_cell(const struct wm_table *t, int i, int j)
{
	return wm_int(t, i, "block_size", 0) == wm_int(t, j, "block_size", 0) &&
	       wm_int(t, i, "read_percent", 0) == wm_int(t, j, "read_percent", 0) &&
	       wm_int(t, i, "jobs", 0) == wm_int(t, j, "jobs", 0) &&
	       wm_int(t, i, "queue_depth", 0) == wm_int(t, j, "queue_depth", 0);
}

/* The last tracking row of each tracking variable in rows [lo, hi): their
 * indexes into out[0..max). Returns how many. */
static int finals(const struct wm_table *t, int lo, int hi, int *out, int max)
{
	int n = 0;
	for (int i = hi - 1; i >= lo; i--) {
		if (wm_int(t, i, "tracking", 0) != 1)
			continue;
		int seen = 0;
		for (int k = 0; k < n; k++)
			seen |= same_cell(t, out[k], i);
		if (!seen && n < max)
			out[n++] = i;
	}
	return n;
}

/* Rows [lo, hi) of the same pattern as row f in rounds from..to: their
 * mean (or max) of column col. */
static double over_window(const struct wm_table *t, int lo, int hi, int f, int64_t from, int64_t to,
			  const char *col, int take_max)
{
	double sum = 0, m = NAN;
	int n = 0;
	for (int i = lo; i < hi; i++) {
		int64_t rd = wm_int(t, i, "round", 0);
		double v = wm_num(t, i, col);
		if (rd < from || rd > to || !same_cell(t, i, f) || isnan(v) ||
		    strcmp(wm_str(t, i, "status") ? wm_str(t, i, "status") : "", "done"))
			continue;
		sum += v;
		n++;
		m = isnan(m) || v > m ? v : m;
	}
	return take_max ? m : n ? sum / n : NAN;
}

/* Convergence: the tracking variables (iops: every block size of 100%
 * writes, as the specification draws it) by round, in the last cycle. */
static int convergence(struct rep *r, const char *test, const struct wm_table *t, int lo)
{
	char name[64], cap[200];
	int iops = !strcmp(test, "iops");
	for (int i = lo; i < t->nrows; i++) {
		int w = iops ? wm_int(t, i, "read_percent", -1) == 0
			     : wm_int(t, i, "tracking", 0) == 1;
		if (w)
			point(track_name(t, i, name, sizeof(name)), wm_num(t, i, "round"),
			      tracked(test, t, i));
	}
	struct chart c = { .title = "Convergence",
			   .xlabel = "round",
			   .x_integer = 1,
			   .ylabel = iops                       ? "IOPS"
				     : !strcmp(test, "latency") ? "mean latency µs"
				     : test[0] == 'd'           ? "IOPS"
								: "MiB/s",
			   .y_log = iops };
	snprintf(cap, sizeof(cap), "The tracking variable%s of every round of cycle %lld%s.",
		 iops ? "" : "s", (long long)wm_int(t, lo, "cycle", 0),
		 iops ? " (100% writes at every block size; 4 KiB is the tracking variable)" : "");
	return draw(r, &c, cap);
}

/* The steady-state window of each tracking variable at its last round. */
static int window_table(struct rep *r, const char *test, const struct wm_table *t, int lo, int *fin,
			int nf)
{
	char name[64], b[48];
	rep_thead(r, "Steady-state measurement window",
		  "<tracking variable|rounds|<values|mean|range %|slope per round|excursion %|"
		  "<verdict");
	for (int k = 0; k < nf; k++) {
		int f = fin[k];
		int64_t a = wm_int(t, f, "ss_first_round", 1), z = wm_int(t, f, "round", 0);
		fputs("<tr><td class=\"l\">", r->f);
		rep_esc(r, track_name(t, f, name, sizeof(name)));
		fprintf(r->f, "</td><td>%lld–%lld</td><td class=\"l\">", (long long)a,
			(long long)z);
		for (int i = lo; i < t->nrows; i++)
			if (same_cell(t, i, f) && wm_int(t, i, "round", 0) >= a &&
			    wm_int(t, i, "round", 0) <= z)
				fprintf(r->f, "%s ", rep_num(tracked(test, t, i), 1, b, sizeof(b)));
		fputs("</td>", r->f);
		rep_td_num(r, wm_num(t, f, "ss_mean"), 1);
		rep_td_num(r, wm_num(t, f, "ss_range_pct"), 1);
		rep_td_num(r, wm_num(t, f, "ss_slope"), 2);
		rep_td_num(r, wm_num(t, f, "ss_excursion_pct"), 1);
		int ok = wm_int(t, f, "ss_reached", 0) == 1;
		fprintf(r->f, "<td class=\"l%s\">steady state %s</td></tr>\n", ok ? "" : " bad",
			ok ? "reached" : "NOT reached");
	}
	rep_tend(r);
	return 0;
}

/* The window of tracking row f drawn: its values, the least-squares line
 * and the band of ±10% around the mean. */
static int window_chart(struct rep *r, const char *test, const struct wm_table *t, int lo, int f)
{
	static double fx[2], fy[2], lo_[2], hi_[2];
	char name[64], title[120], sub[160];
	int64_t a = wm_int(t, f, "ss_first_round", 1), z = wm_int(t, f, "round", 0);
	double mean = wm_num(t, f, "ss_mean"), slope = wm_num(t, f, "ss_slope");

	for (int i = lo; i < t->nrows; i++)
		if (same_cell(t, i, f) && wm_int(t, i, "round", 0) >= a &&
		    wm_int(t, i, "round", 0) <= z)
			point("each round", wm_num(t, i, "round"), tracked(test, t, i));
	fx[0] = (double)a;
	fx[1] = (double)z;
	for (int k = 0; k < 2; k++) {
		fy[k] = mean + slope * (fx[k] - (fx[0] + fx[1]) / 2);
		lo_[k] = mean * 0.9;
		hi_[k] = mean * 1.1;
	}
	int k = series("least-squares line");
	if (k >= 0) {
		memcpy(pl.x[k], fx, sizeof(fx));
		memcpy(pl.y[k], fy, sizeof(fy));
		pl.n[k] = 2;
	}
	snprintf(title, sizeof(title), "Steady-state window: %s",
		 track_name(t, f, name, sizeof(name)));
	snprintf(sub, sizeof(sub), "range %.1f%%, excursion %.1f%% of the mean; steady state %s",
		 wm_num(t, f, "ss_range_pct"), wm_num(t, f, "ss_excursion_pct"),
		 wm_int(t, f, "ss_reached", 0) == 1 ? "reached" : "NOT reached");
	struct chart c = { .title = title,
			   .subtitle = sub,
			   .xlabel = "round",
			   .x_integer = 1,
			   .ylabel = test[0] == 'l'   ? "µs"
				     : test[0] == 't' ? "MiB/s"
						      : "IOPS",
			   .band = { fx, lo_, hi_, 2, "#009E73" },
			   .band_legend = "mean ± 10% (range limit 20%)" };
	return draw(r, &c,
		    "Over the window: (a) max − min ≤ 20% of the mean, (b) the least-squares"
		    " line changes by ≤ 10% of the mean.");
}

/* The window of the test's final tracking row f: rounds a..z of the last
 * cycle's rows [lo, n); the whole last round range when f < 0. */
static void window_of(const struct wm_table *t, int f, int64_t *a, int64_t *z)
{
	*a = f >= 0 ? wm_int(t, f, "ss_first_round", 1) : 1;
	*z = f >= 0 ? wm_int(t, f, "round", 1) : INT64_MAX;
}

/* IOPS: the matrix averaged over the window, and IOPS by block size per
 * mix. */
static int iops_results(struct rep *r, const struct wm_table *t, int lo, int f)
{
	static const int mixes[] = { 100, 95, 65, 50, 35, 5, 0 };
	char b[32], m[16];
	int64_t a, z;
	window_of(t, f, &a, &z);
	rep_thead(r, "IOPS by block size and R/W mix (mean over the window's rounds)",
		  "<block size|100/0|95/5|65/35|50/50|35/65|5/95|0/100");
	for (int i = lo; i < t->nrows && wm_int(t, i, "round", 0) == wm_int(t, lo, "round", 0);
	     i++) {
		if (wm_int(t, i, "read_percent", -1) != 100)
			continue;
		fprintf(r->f, "<tr><td class=\"l\">%s</td>",
			kib(wm_num(t, i, "block_size"), b, sizeof(b)));
		for (size_t k = 0; k < ARRAY_SIZE(mixes); k++) {
			double v = NAN;
			for (int j = lo; j < t->nrows && isnan(v); j++)
				if (wm_int(t, j, "read_percent", -1) == mixes[k] &&
				    wm_int(t, j, "block_size", 0) == wm_int(t, i, "block_size", 0))
					v = over_window(t, lo, t->nrows, j, a, z, "iops_avg", 0);
			rep_td_num(r, v, 0);
			if (!isnan(v)) {
				snprintf(m, sizeof(m), "%d/%d R/W", mixes[k], 100 - mixes[k]);
				point(m, log2(wm_num(t, i, "block_size") / 1024), v);
			}
		}
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
	struct chart c = { .title = "IOPS by block size, one line per R/W mix",
			   .xlabel =
				   "block size, log2 KiB (−1 = 0.5 KiB, 2 = 4 KiB, 10 = 1024 KiB)",
			   .ylabel = "IOPS",
			   .y_log = 1 };
	return draw(r, &c, "Steady-state IOPS of every cell, averaged over the window.");
}

/* Throughput: MiB/s of each block size, writes and reads. */
static int tp_results(struct rep *r, const struct wm_table *t, int lo, const int *fin, int nf)
{
	char name[64];
	rep_thead(r, "Throughput (mean over each variable's window)",
		  "<block size and direction|MiB/s|<steady state");
	for (int k = nf - 1; k >= 0; k--) {
		int f = fin[k];
		fputs("<tr><td class=\"l\">", r->f);
		rep_esc(r, track_name(t, f, name, sizeof(name)));
		fputs("</td>", r->f);
		rep_td_num(r,
			   over_window(t, lo, t->nrows, f, wm_int(t, f, "ss_first_round", 1),
				       wm_int(t, f, "round", 0), "mibps_avg", 0),
			   1);
		fprintf(r->f, "<td class=\"l\">%s</td></tr>\n",
			wm_int(t, f, "ss_reached", 0) == 1 ? "reached" : "NOT reached");
	}
	rep_tend(r);
	return 0;
}

/* Latency: mean, maximum and five nines of every cell over the window. */
static int lat_results(struct rep *r, const struct wm_table *t, int lo, int f)
{
	char b[32], m[16];
	int64_t a, z;
	window_of(t, f, &a, &z);
	rep_thead(r,
		  "Latency per cell over the window (µs): mean of the means, the highest"
		  " maximum and five nines",
		  "<R/W mix|<block size|mean µs|max µs|99.999% µs");
	for (int i = lo; i < t->nrows && wm_int(t, i, "round", 0) == wm_int(t, lo, "round", 0);
	     i++) {
		double mean = over_window(t, lo, t->nrows, i, a, z, "lat_mean_us", 0);
		fprintf(r->f, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td>",
			mix(t, i, m, sizeof(m)), kib(wm_num(t, i, "block_size"), b, sizeof(b)));
		rep_td_num(r, mean, 1);
		rep_td_num(r, over_window(t, lo, t->nrows, i, a, z, "lat_max_us", 1), 1);
		rep_td_num(r, over_window(t, lo, t->nrows, i, a, z, "lat_p99999_us", 1), 1);
		fputs("</tr>\n", r->f);
		snprintf(b, sizeof(b), "mean, %s R/W", mix(t, i, m, sizeof(m)));
		point(b, wm_num(t, i, "block_size") / 1024, mean);
		snprintf(b, sizeof(b), "99.999%%, %s R/W", m);
		point(b, wm_num(t, i, "block_size") / 1024,
		      over_window(t, lo, t->nrows, i, a, z, "lat_p99999_us", 1));
	}
	rep_tend(r);
	struct chart c = { .title = "Mean and five-nines latency by block size",
			   .xlabel = "block size, KiB",
			   .ylabel = "µs",
			   .y_log = 1 };
	return draw(r, &c, "One thread at queue depth 1; one line per R/W mix and figure.");
}

/* WSAT: IOPS of every cell against the bytes the test had written by its
 * end, one line per cycle. */
static int wsat_results(struct rep *r, const struct wm_table *t)
{
	char label[32];
	double gib = 0;
	int64_t cyc = -1;
	for (int i = 0; i < t->nrows; i++) {
		if (wm_int(t, i, "cycle", 0) != cyc) {
			cyc = wm_int(t, i, "cycle", 0);
			gib = 0;
		}
		gib += wm_num(t, i, "bytes") / 1073741824.0;
		snprintf(label, sizeof(label), "cycle %lld", (long long)cyc);
		point(label, gib, wm_num(t, i, "iops_avg"));
	}
	struct chart c = { .title = "Write saturation: IOPS against total GiB written",
			   .xlabel = "GiB written by the test (TGBW)",
			   .ylabel = "IOPS",
			   .x_from_zero = 1 };
	return draw(r, &c,
		    "4 KiB random writes from the preconditioned state, one point per cell;"
		    " each cycle's line starts again at 0.");
}

/* XSR: MiB/s of every cell of the last cycle against its time, with the
 * transitions between the access groups marked. */
static int xsr_results(struct rep *r, const struct wm_table *t, int lo)
{
	static struct chart_mark mk[4];
	static char ml[4][48];
	double sec = 0;
	int nm = 0;
	rep_thead(r, "Access groups (last cycle)",
		  "<access group|<pattern|cells|mean MiB/s|first cell MiB/s|last cell MiB/s");
	for (int i = lo, g0 = lo; i < t->nrows; i++) {
		const char *part = wm_str(t, i, "part") ? wm_str(t, i, "part") : "";
		if (i > lo && wm_int(t, i, "round", 0) != wm_int(t, i - 1, "round", 0) && nm < 4) {
			snprintf(ml[nm], sizeof(ml[0]), "to %s", part);
			mk[nm] = (struct chart_mark){ .vertical = 1, .at = sec, .label = ml[nm] };
			nm++;
		}
		point("MiB/s of each cell", sec, wm_num(t, i, "mibps_avg"));
		sec += wm_num(t, i, "seconds");
		int last = i + 1 == t->nrows ||
			   wm_int(t, i + 1, "round", 0) != wm_int(t, i, "round", 0);
		if (!last)
			continue;
		char b[32], pat[48];
		snprintf(pat, sizeof(pat), "%s %s writes", kib(wm_num(t, i, "block_size"), b, 32),
			 wm_int(t, i, "random_percent", 0) ? "random" : "sequential");
		fputs("<tr><td class=\"l\">", r->f);
		rep_esc(r, part);
		fprintf(r->f, "</td><td class=\"l\">%s</td><td>%d</td>", pat, i - g0 + 1);
		rep_td_num(r, over_window(t, g0, i + 1, i, 0, INT64_MAX, "mibps_avg", 0), 1);
		rep_td_num(r, wm_num(t, g0, "mibps_avg"), 1);
		rep_td_num(r, wm_num(t, i, "mibps_avg"), 1);
		fputs("</tr>\n", r->f);
		g0 = i + 1;
	}
	rep_tend(r);
	struct chart c = { .title = "Cross-stimulus recovery: MiB/s of each cell",
			   .xlabel = "seconds from the test's first cell",
			   .ylabel = "MiB/s",
			   .x_from_zero = 1,
			   .marks = mk,
			   .nmarks = (size_t)nm,
			   .marks_legend = "transition between access groups" };
	return draw(r, &c, "The transitions from sequential to random writes and back.");
}

/* The bins of a histogram's JSON ({"bins":[[low_us,count],...]}) as points
 * of series label, in percent of its I/Os, against log10 of the bin. */
static void hist_points(const char *json, const char *label)
{
	double x[512], c[512], total = 0;
	int n = 0;
	const char *p = json ? strstr(json, "[[") : NULL;
	while (p && n < 512) {
		char *e;
		x[n] = strtod(p + (p[1] == '[' ? 2 : 1), &e);
		if (*e != ',')
			break;
		c[n] = strtod(e + 1, &e);
		total += c[n++];
		p = strstr(e, ",[");
	}
	for (int i = 0; i < n && total > 0; i++)
		point(label, x[i] > 0 ? log10(x[i]) : 0, c[i] * 100 / total);
}

/* DIRTH: the demand intensity curve of the sweep's last round, the chosen
 * points and their response-time histograms. */
static int dirth_results(struct rep *r, const struct wm_table *t, int lo)
{
	char label[48];
	int64_t last = -1;
	for (int i = lo; i < t->nrows; i++)
		if (!strcmp(wm_str(t, i, "part") ? wm_str(t, i, "part") : "", "sweep"))
			last = wm_int(t, i, "round", 0);
	for (int i = lo; i < t->nrows; i++) {
		if (wm_int(t, i, "round", 0) != last)
			continue;
		snprintf(label, sizeof(label), "%lld thread(s)",
			 (long long)wm_int(t, i, "jobs", 0));
		point(label, wm_num(t, i, "iops_avg"), wm_num(t, i, "lat_mean_us"));
	}
	struct chart c = { .title = "Demand intensity: mean response time against IOPS",
			   .xlabel = "IOPS",
			   .ylabel = "mean response time µs",
			   .x_from_zero = 1 };
	int ret = draw(r, &c,
		       "The sweep's last round: one line per thread count, queue depth rising"
		       " along it (8 KiB random, 65/35 R/W).");
	rep_thead(r, "Chosen points", "<point|threads|depth|IOPS|mean µs|99.999% µs|max µs");
	for (int i = lo; i < t->nrows; i++) {
		const char *part = wm_str(t, i, "part");
		if (!part || !strcmp(part, "sweep"))
			continue;
		fputs("<tr><td class=\"l\">", r->f);
		rep_esc(r, part);
		fprintf(r->f, "</td><td>%lld</td><td>%lld</td>", (long long)wm_int(t, i, "jobs", 0),
			(long long)wm_int(t, i, "queue_depth", 0));
		rep_td_num(r, wm_num(t, i, "iops_avg"), 0);
		rep_td_num(r, wm_num(t, i, "lat_mean_us"), 1);
		rep_td_num(r, wm_num(t, i, "lat_p99999_us"), 1);
		rep_td_num(r, wm_num(t, i, "lat_max_us"), 1);
		fputs("</tr>\n", r->f);
		snprintf(label, sizeof(label), "%s: %lld thread(s), depth %lld", part,
			 (long long)wm_int(t, i, "jobs", 0),
			 (long long)wm_int(t, i, "queue_depth", 0));
		hist_points(wm_str(t, i, "lat_hist"), label);
	}
	rep_tend(r);
	struct chart h = { .title = "Response-time histograms at the chosen points",
			   .xlabel = "response time, log10 µs (1 = 10 µs, 3 = 1 ms)",
			   .ylabel = "% of the I/Os" };
	if (!ret)
		ret = draw(r, &h, "Four bins per power of two of the response time.");
	return ret;
}

/* The headline of the test in cycle rows [a, b): into label/value pairs
 * (the tracking variables' window means; wsat the mean IOPS of its last
 * five cells; xsr each access group's mean MiB/s; dirth the most IOPS of
 * the sweep's last round). Returns how many. */
static int headline(const char *test, const struct wm_table *t, int a, int b, char lab[][64],
		    double *val, int max)
{
	int fin[8], n = 0;
	if (!strcmp(test, "wsat")) {
		double s = 0;
		int k = 0;
		for (int i = b - 1; i >= a && k < WINDOW; i--, k++)
			s += wm_num(t, i, "iops_avg");
		util_strlcpy(lab[0], "IOPS of the last 5 cells", 64);
		val[0] = k ? s / k : NAN;
		return 1;
	}
	if (!strcmp(test, "xsr")) {
		for (int g = 1; g <= 3 && n < max; g++) {
			snprintf(lab[n], 64, "MiB/s of access group %d", g);
			val[n] = NAN;
			for (int i = a; i < b && isnan(val[n]); i++)
				if (wm_int(t, i, "round", 0) == g)
					val[n] = over_window(t, a, b, i, g, g, "mibps_avg", 0);
			n++;
		}
		return n;
	}
	if (!strcmp(test, "dirth")) {
		val[0] = NAN;
		for (int i = a; i < b; i++)
			if (wm_int(t, i, "tracking", 0) != 1 && wm_str(t, i, "part") &&
			    !strcmp(wm_str(t, i, "part"), "max"))
				val[0] = wm_num(t, i, "iops_avg");
		util_strlcpy(lab[0], "IOPS at the maximum point", 64);
		return 1;
	}
	int nf = finals(t, a, b, fin, 8);
	for (int k = nf - 1; k >= 0 && n < max; k--, n++) {
		track_name(t, fin[k], lab[n], 64);
		val[n] = wm_num(t, fin[k], "ss_mean");
	}
	return n;
}

/* The headline figure of every cycle of the campaign, drawn and tabled. */
static int trend(struct rep *r, const char *test, const char *unit, const struct wm_table *t)
{
	char lab[8][64], cap[160];
	double val[8];
	rep_thead(r, "Headline figure by cycle", "cycle|<figure|value");
	for (int a = 0, b; a < t->nrows; a = b) {
		for (b = a; b < t->nrows && wm_int(t, b, "cycle", 0) == wm_int(t, a, "cycle", 0);
		     b++)
			;
		int n = headline(test, t, a, b, lab, val, 8);
		for (int k = 0; k < n; k++) {
			fprintf(r->f, "<tr><td>%lld</td><td class=\"l\">",
				(long long)wm_int(t, a, "cycle", 0));
			rep_esc(r, lab[k]);
			fputs("</td>", r->f);
			rep_td_num(r, val[k], 1);
			fputs("</tr>\n", r->f);
			point(lab[k], (double)wm_int(t, a, "cycle", 0), val[k]);
		}
	}
	rep_tend(r);
	snprintf(cap, sizeof(cap),
		 "The test's headline figure (%s) in every cycle of the campaign.", unit);
	struct chart c = {
		.title = "Trend across cycles", .xlabel = "cycle", .ylabel = unit, .x_integer = 1
	};
	return draw(r, &c, cap);
}

/* The steady-state part of a page: convergence, window table and chart. */
static int steady_part(struct rep *r, const char *test, const struct wm_table *t, int lo, int *fin,
		       int nf)
{
	int ret = convergence(r, test, t, lo);
	if (!ret && nf)
		ret = window_table(r, test, t, lo, fin, nf);
	for (int k = nf - 1; !ret && k >= 0; k--)
		ret = window_chart(r, test, t, lo, fin[k]);
	if (!nf)
		rep_para(r, "No round of the last cycle has finished.");
	return ret;
}

/* One test's page, from its row i of the tests table s. */
static int page(struct rep *r, size_t k, const struct wm_table *s, int i)
{
	struct wm_table t = { 0 };
	const char *test = tests[k].name;
	char id[32];
	int fin[8], ret;

	snprintf(id, sizeof(id), "pts-%s", test);
	rep_section(r, id, tests[k].title);
	setup(r, s, i);
	ret = wm_fetch_named(
		r->wm, &t, &qpts_queries[QPTS_CELLS],
		(struct db_value[]){ WM_INT(r->tid), WM_INT(r->lo), WM_INT(r->hi), WM_STR(test) },
		4);
	if (ret || t.nrows == 0)
		goto out;
	int lo = last_cycle_from(&t);
	int nf = finals(&t, lo, t.nrows, fin, 8);
	int steady = strcmp(test, "wsat") && strcmp(test, "xsr");
	if (steady)
		ret = steady_part(r, test, &t, lo, fin, nf);
	if (!ret && !strcmp(test, "iops"))
		ret = iops_results(r, &t, lo, nf ? fin[0] : -1);
	else if (!ret && !strcmp(test, "throughput"))
		ret = tp_results(r, &t, lo, fin, nf);
	else if (!ret && !strcmp(test, "latency"))
		ret = lat_results(r, &t, lo, nf ? fin[0] : -1);
	else if (!ret && !strcmp(test, "wsat"))
		ret = wsat_results(r, &t);
	else if (!ret && !strcmp(test, "xsr"))
		ret = xsr_results(r, &t, lo);
	else if (!ret && !strcmp(test, "dirth"))
		ret = dirth_results(r, &t, lo);
	if (!ret)
		ret = trend(r, test, tests[k].unit, &t);
out:
	fputs("</section>\n", r->f);
	wm_table_free(&t);
	return ret;
}

int rep_write_pts(struct rep *r, int after_hir)
{
	struct wm_table s = { 0 };
	int ret = wm_fetch_named(r->wm, &s, &qpts_queries[QPTS_TESTS], REP_SCOPE(r));

	/* the specification's order: iops, throughput, latency, wsat, then
	 * host idle recovery (its own section), xsr, dirth */
	for (size_t k = after_hir ? 4 : 0; !ret && k < (after_hir ? ARRAY_SIZE(tests) : 4); k++)
		for (int i = 0; !ret && i < s.nrows; i++)
			if (wm_str(&s, i, "test") && !strcmp(wm_str(&s, i, "test"), tests[k].name))
				ret = page(r, k, &s, i);
	wm_table_free(&s);
	return ret;
}
