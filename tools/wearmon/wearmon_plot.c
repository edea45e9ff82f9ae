/* wearmon_plot: "wearmon plot": turns a target's history into one of five
 * charts (sizes, cycles, samples, wear, latency) and writes it as SVG
 * through wearmon_svg; the report draws its charts through wm_plot_draw.
 * Reads through the named queries of common/db/query/query_charts.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "db/query/query_charts.h"
#include "wearmon.h"
#include "wearmon_plot.h"

static int plot_alloc(struct plot *p, size_t nmarks)
{
	size_t n = (size_t)p->t.nrows + 1;

	p->x = calloc(n, sizeof(*p->x));
	p->y = calloc(n, sizeof(*p->y));
	p->s = calloc(n, sizeof(*p->s));
	p->label = calloc(n, sizeof(*p->label));
	p->m = calloc(nmarks + 1, sizeof(*p->m));
	p->mlabel = calloc(nmarks + 1, sizeof(*p->mlabel));
	p->bx = calloc(n, sizeof(*p->bx));
	p->blo = calloc(n, sizeof(*p->blo));
	p->bhi = calloc(n, sizeof(*p->bhi));
	if (p->x && p->y && p->s && p->label && p->m && p->mlabel && p->bx && p->blo && p->bhi)
		return 0;
	wm_err("out of memory");
	return WM_EXIT_ERROR;
}

static void plot_free(struct plot *p)
{
	wm_table_free(&p->t);
	free(p->x);
	free(p->y);
	free(p->s);
	free(p->label);
	free(p->m);
	free(p->mlabel);
	free(p->bx);
	free(p->blo);
	free(p->bhi);
}

/* Names the series that starts at a row. */
typedef void (*labeler)(const struct plot *p, int row, char *buf, size_t len);

/* Cuts rows into series where a key column changes; x and y come from the
 * columns xcol (divided by xscale) and ycol. */
static void split_series(struct plot *p, const char *const *key, size_t nkey, const char *xcol,
			 double xscale, const char *ycol, labeler name)
{
	for (int r = 0; r < p->t.nrows; r++) {
		int same = r > 0;

		for (size_t k = 0; same && k < nkey; k++) {
			const struct wm_cell *a = wm_cell(&p->t, r, key[k]);
			const struct wm_cell *b = wm_cell(&p->t, r - 1, key[k]);

			same = a->type == b->type &&
			       (a->type == DB_TEXT ? !strcmp(a->s, b->s) : a->r == b->r);
		}
		if (!same) {
			struct chart_series *s = &p->s[p->ns];

			name(p, r, p->label[p->ns], LABEL_MAX);
			*s = (struct chart_series){
				.label = p->label[p->ns], .x = p->x + r, .y = p->y + r, .lines = 1
			};
			p->ns++;
		}
		p->x[r] = wm_num(&p->t, r, xcol) / xscale;
		p->y[r] = wm_num(&p->t, r, ycol);
		p->s[p->ns - 1].n++;
	}
	p->ch.series = p->s;
	p->ch.nseries = p->ns;
}

/* Unit for bytes on an axis: MiB below 2 GiB, then GiB, then TiB. */
static double byte_unit(double max, const char **name)
{
	if (max < 2 * GIB) {
		*name = "MiB";
		return MIB;
	}
	if (max < 2048 * GIB) {
		*name = "GiB";
		return GIB;
	}
	*name = "TiB";
	return GIB * 1024;
}

/* Whether the rows hold more than one workload / block size. */
static int mixed_workloads(const struct wm_table *t)
{
	for (int r = 1; r < t->nrows; r++)
		if (strcmp(wm_str(t, r, "workload"), wm_str(t, 0, "workload")) ||
		    wm_int(t, r, "block_size", 0) != wm_int(t, 0, "block_size", 0))
			return 1;
	return 0;
}

static char *workload_text(const struct wm_table *t, int r, char *buf, size_t len)
{
	char bs[32];

	snprintf(buf, len, "%s %s", wm_str(t, r, "workload"),
		 wm_fmt_bytes(wm_num(t, r, "block_size"), bs, sizeof(bs)));
	return buf;
}

/* ---- the four kinds ----------------------------------------------------- */

static void label_cycle(const struct plot *p, int r, char *buf, size_t len)
{
	char wl[48];

	if (p->mixed)
		snprintf(buf, len, "cycle %lld %s", (long long)wm_int(&p->t, r, "cycle", 0),
			 workload_text(&p->t, r, wl, sizeof(wl)));
	else
		snprintf(buf, len, "cycle %lld", (long long)wm_int(&p->t, r, "cycle", 0));
}

static void label_size(const struct plot *p, int r, char *buf, size_t len)
{
	char sz[32], wl[48];

	wm_fmt_bytes(wm_num(&p->t, r, "size_bytes"), sz, sizeof(sz));
	if (p->mixed)
		snprintf(buf, len, "%s %s", sz, workload_text(&p->t, r, wl, sizeof(wl)));
	else
		snprintf(buf, len, "size %s", sz);
}

/* The measured phase's average MiB/s of p's rows against the byte column
 * xcol, in the byte unit that suits its largest value (p->xscale), one
 * series per key; the x axis reads "xname (unit<xnote>)" from zero. */
static void rate_by_bytes(struct plot *p, const char *const *key, size_t nkey, const char *xcol,
			  labeler name, const char *xname, const char *xnote)
{
	const char *unit;
	double max = 0;

	for (int r = 0; r < p->t.nrows; r++)
		max = fmax(max, wm_num(&p->t, r, xcol));
	p->xscale = byte_unit(max, &unit);
	p->mixed = mixed_workloads(&p->t);
	split_series(p, key, nkey, xcol, p->xscale, "mibps_avg", name);
	snprintf(p->xlabel, sizeof(p->xlabel), "%s (%s%s)", xname, unit, xnote);
	p->ch.xlabel = p->xlabel;
	p->ch.ylabel = "average MiB/s of the measured phase";
	p->ch.x_from_zero = 1;
}

/* A cycle not done is partial: its legend says what it reached ("cycle 3,
 * interrupted: 2 of 4 sizes", against the most sizes a cycle reached). */
static void label_partial(struct plot *p)
{
	size_t most = 0;
	char b[64];

	for (size_t s = 0; s < p->ns; s++)
		most = p->s[s].n > most ? p->s[s].n : most;
	for (size_t s = 0; s < p->ns; s++) {
		const char *st = wm_str(&p->t, (int)(p->s[s].x - p->x), "cycle_status");
		size_t len = strlen(p->label[s]);

		if (st && strcmp(st, "done"))
			snprintf(p->label[s] + len, LABEL_MAX - len, ", %s",
				 wm_fmt_partial(st, (long long)p->s[s].n, (long long)most, b,
						sizeof(b)));
	}
}

static int plot_sizes(struct wm *wm, int64_t tid, struct plot *p)
{
	static const char *const key[] = { "workload", "block_size", "cycle" };
	/* repeats of a size (schema 4) average into one point */
	int ret = wm_fetch_named(wm, &p->t, &qc_queries[QC_SIZES], SCOPED(wm, tid));

	if (ret || p->t.nrows == 0 || (ret = plot_alloc(p, 0)))
		return ret;
	rate_by_bytes(p, key, ARRAY_SIZE(key), "size_bytes", label_cycle, "size", "");
	label_partial(p);
	p->ch.ordered = !p->mixed;
	return 0;
}

/* The series' name is a column of the rows ("series" or "phase"). */
static void label_column(const struct plot *p, int r, char *buf, size_t len)
{
	const char *s = wm_str(&p->t, r, "series");

	snprintf(buf, len, "%s", s ? s : wm_str(&p->t, r, "phase"));
}

static int plot_cycles(struct wm *wm, int64_t tid, struct plot *p)
{
	static const char *const key[] = { "series" };
	size_t nb = 0;
	/* three series (max, avg, min) of one row per cycle, for split_series */
	int ret = wm_fetch_named(wm, &p->t, &qc_queries[QC_CYCLES], SCOPED(wm, tid));

	if (ret || p->t.nrows == 0 || (ret = plot_alloc(p, (size_t)p->t.nrows)))
		return ret;
	split_series(p, key, ARRAY_SIZE(key), "cycle", 1, "mibps", label_column);
	for (size_t s = 0; s < p->ns; s++) {
		static const char *const colors[] = { "#009E73", "#0072B2", "#D55E00" };
		static const int styles[] = { 3, 1, 5 }; /* triangle up, circle, down */

		p->s[s].style = styles[s % 3];
		p->s[s].color = colors[s % 3];
	}
	/* the band between the max and min series (same cycles, same order) */
	for (nb = 0; p->ns == 3 && nb < p->s[0].n; nb++) {
		p->bx[nb] = p->s[0].x[nb];
		p->bhi[nb] = p->s[0].y[nb];
		p->blo[nb] = p->s[2].y[nb];
	}
	p->ch.band = (struct chart_band){ p->bx, p->blo, p->bhi, nb, "#0072B2" };
	p->ch.band_legend = "range of the samples";
	p->ch.xlabel = "cycle";
	p->ch.ylabel = "MiB/s";
	p->ch.x_integer = 1;
	ret = wm_plot_cycle_marks(p, wm, tid);
	return ret ? ret : wm_plot_partial_marks(p);
}

static double series_mean(const struct chart_series *s)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		if (!isnan(s->y[i])) {
			sum += s->y[i];
			n++;
		}
	return n ? sum / (double)n : NAN;
}

/* What a point of a sample chart is: one sample unless the
 * query fell back to per-minute rollups (common/db/query/query_charts.h). */
static const char *point_kind(const struct wm_table *t)
{
	const char *k = wm_str(t, 0, "point");

	return k ? k : QC_POINT_SAMPLE;
}

static int plot_samples(struct wm *wm, int64_t it, struct plot *p)
{
	static const char *const key[] = { "phase" };
	char sz[32], bs[32];
	/* the measured phase follows the fill on one time axis */
	int ret = wm_fetch_named(wm, &p->t, &qc_queries[qc_samples_source(0, 0)],
				 (struct db_value[]){ WM_INT(it) }, 1);

	if (ret || p->t.nrows == 0 || (ret = plot_alloc(p, 1)))
		return ret;
	snprintf(p->subtitle, sizeof(p->subtitle),
		 "cycle %lld, iteration %lld, size %s,"
		 " %s %s QD%lld, %s; %s; a point: %s",
		 (long long)wm_int(&p->t, 0, "cycle", 0), (long long)wm_int(&p->t, 0, "number", 0),
		 wm_fmt_bytes(wm_num(&p->t, 0, "size_bytes"), sz, sizeof(sz)),
		 wm_str(&p->t, 0, "workload"),
		 wm_fmt_bytes(wm_num(&p->t, 0, "block_size"), bs, sizeof(bs)),
		 (long long)wm_int(&p->t, 0, "queue_depth", 0), wm_str(&p->t, 0, "status"),
		 wm_str(&p->t, 0, "device"), point_kind(&p->t));
	split_series(p, key, ARRAY_SIZE(key), "t_ms", 1000, "mibps", label_column);
	for (size_t s = 0; s < p->ns; s++) {
		int fill = !strcmp(p->s[s].label, "fill");

		p->s[s].color = fill ? "#7a7a7a" : "#0072B2";
		p->s[s].style = fill ? 2 : 1;
	}
	/* a fill 10x faster than the measured phase would squash it to a line */
	p->ch.y_log = p->ns == 2 && chart_wants_log(series_mean(&p->s[0]), series_mean(&p->s[1]));
	/* an interrupted phase has no average (NULL; 0.0 in rows before v10) */
	if (!isnan(wm_num(&p->t, 0, "mibps_avg")) &&
	    strcmp(wm_str(&p->t, 0, "status"), "interrupted")) {
		snprintf(p->mlabel[0], LABEL_MAX, "measured average %.1f MiB/s",
			 wm_num(&p->t, 0, "mibps_avg"));
		p->m[p->nm++] = (struct chart_mark){ .at = wm_num(&p->t, 0, "mibps_avg"),
						     .label = p->mlabel[0],
						     .color = "#0072B2" };
	}
	p->ch.marks = p->m;
	p->ch.nmarks = p->nm;
	p->ch.xlabel = "time since the iteration started (s)";
	p->ch.ylabel = "MiB/s per sample";
	p->ch.x_from_zero = 1;
	return 0;
}

static int plot_wear(struct wm *wm, int64_t tid, struct plot *p)
{
	static const char *const key[] = { "workload", "block_size", "size_bytes" };
	/* every row's running sum, the done rows as points */
	int ret = wm_fetch_named(wm, &p->t, &qc_queries[QC_WEAR], SCOPED(wm, tid));

	if (ret || p->t.nrows == 0 || (ret = plot_alloc(p, (size_t)p->t.nrows)))
		return ret;
	rate_by_bytes(p, key, ARRAY_SIZE(key), "written", label_size, "host bytes written",
		      ", fill + writes");
	p->ch.break_at_marks = 1; /* an action is a jump, not a trend */
	return wm_plot_wear_marks(wm, tid, p->xscale, p);
}

/* p50 / p99 / p99.9 / p99.99 of every done iteration at its ID, on a log
 * axis (they span decades): total latency, submission to reaped completion
 * (iterations.lat_mean_us, common/db/schema.md). */
static int plot_latency(struct wm *wm, int64_t tid, struct plot *p)
{
	static const char *const key[] = { "series" };
	double max = 0;
	int ret = wm_fetch_named(wm, &p->t, &qc_queries[QC_LATENCY], SCOPED(wm, tid));

	if (ret || p->t.nrows == 0 || (ret = plot_alloc(p, (size_t)p->t.nrows)))
		return ret;
	split_series(p, key, ARRAY_SIZE(key), "seq", 1, "us", label_column);
	for (int r = 0; r < p->t.nrows; r++)
		max = fmax(max, p->y[r]);
	for (int r = 0; max >= 20000 && r < p->t.nrows; r++)
		p->y[r] /= 1000; /* milliseconds read better than 6-digit µs */
	p->yscale = max >= 20000 ? 1000 : 1;
	p->ch.xlabel = "iteration ID (wearmon history), done rows";
	p->ch.ylabel = max >= 20000 ? "total latency (ms)" : "total latency (µs)";
	p->ch.x_integer = 1;
	p->ch.y_log = 1;
	p->ch.break_at_marks = 1;
	return wm_plot_latency_marks(wm, tid, p);
}

/* The latency percentiles of every sample of one iteration's measured
 * phase against time: QoS over time, where a stall shows. */
static int plot_latency_trace(struct wm *wm, int64_t it, struct plot *p)
{
	static const char *const key[] = { "series" };
	double max = 0;
	int ret = wm_fetch_named(wm, &p->t, &qc_queries[qc_samples_source(1, 0)],
				 (struct db_value[]){ WM_INT(it) }, 1);

	if (ret || p->t.nrows == 0 || (ret = plot_alloc(p, 0)))
		return ret;
	split_series(p, key, ARRAY_SIZE(key), "t_ms", 1000, "us", label_column);
	for (int r = 0; r < p->t.nrows; r++)
		max = fmax(max, isnan(p->y[r]) ? 0 : p->y[r]);
	for (int r = 0; max >= 20000 && r < p->t.nrows; r++)
		p->y[r] /= 1000;
	/* past sample_retention: the highest of each minute's samples */
	int minutes = !strcmp(point_kind(&p->t), QC_POINT_MINUTE_MAX);
	p->ch.xlabel = "time since the measured phase started (s)";
	if (minutes)
		p->ch.ylabel = max >= 20000 ? "highest total latency per minute (ms)"
					    : "highest total latency per minute (µs)";
	else
		p->ch.ylabel = max >= 20000 ? "total latency per sample (ms)"
					    : "total latency per sample (µs)";
	p->ch.x_from_zero = 1;
	p->ch.y_log = 1;
	return 0;
}

/* A target's charts over time (cycles, wear, latency of every iteration)
 * mark its later campaigns; a chart of sizes or of one iteration has no
 * time axis to mark them on. */
static int has_campaign_axis(const char *kind, int64_t it)
{
	return !strcmp(kind, "cycles") || !strcmp(kind, "wear") ||
	       (!strcmp(kind, "latency") && !it);
}

/* ---- titles, target choice, output -------------------------------------- */

static const char *kind_title(const char *kind)
{
	static const struct {
		const char *kind, *title;
	} names[] = {
		{ "sizes", "MiB/s by size, one line per cycle" },
		{ "cycles", "min / average / max MiB/s per cycle" },
		{ "samples", "trace of iteration" },
		{ "wear", "MiB/s against host bytes written" },
		{ "latency", "latency percentiles per iteration" },
		{ "latency-trace", "latency percentiles over time, iteration" },
	};
	size_t k = 0;

	while (k + 1 < ARRAY_SIZE(names) && strcmp(names[k].kind, kind))
		k++;
	return names[k].title;
}

static void titles(struct wm *wm, struct plot *p, const char *kind, const struct wm_table *tg,
		   int64_t it)
{
	char cap[32], wl[64] = "", id[32] = "";

	if (it)
		snprintf(id, sizeof(id), " %lld", (long long)it);
	snprintf(p->title, sizeof(p->title), "%s: %s%s", wm_str(tg, 0, "name"), kind_title(kind),
		 id);
	if (wm_str(tg, 0, "workload"))
		snprintf(wl, sizeof(wl), "%s QD%lld, ", workload_text(tg, 0, cap, sizeof(cap)),
			 (long long)wm_int(tg, 0, "queue_depth", 0));
	if (p->subtitle[0])
		goto out; /* the chart made its own */
	snprintf(p->subtitle, sizeof(p->subtitle), "%s%s (%s), cycles %lld-%lld; %s", wl,
		 wm_str(tg, 0, "device"),
		 wm_fmt_bytes(wm_num(tg, 0, "capacity_bytes"), cap, sizeof(cap)),
		 (long long)(wm->cycle_hi ? wm->cycle_lo : wm_int(tg, 0, "first_cycle", 0)),
		 (long long)(wm->cycle_hi ? wm->cycle_hi : wm_int(tg, 0, "last_cycle", 0)),
		 wm->db_path);
out:
	p->ch.title = p->title;
	p->ch.subtitle = p->subtitle;
}

/* The target to plot: the iteration's, the named one, or the only one.
 * *none is set when the database has no target yet. Returns 0 or an exit
 * status (message printed). */
static int pick_target(struct wm *wm, const struct wm_args *a, struct wm_table *tg, int *none)
{
	int64_t id;
	int ret = wm_fetch_named(
		wm, tg, &qc_queries[QC_TARGET_PICK],
		(struct db_value[]){ WM_TEXT(a->target),
				     a->iteration ? WM_INT(a->iteration) : WM_NULLV },
		2);

	*none = 0;
	if (ret || tg->nrows == 1)
		return ret;
	if (a->iteration) {
		wm_err("no iteration with ID %lld%s%s in %s", (long long)a->iteration,
		       a->target ? " of target " : "", a->target ? a->target : "", wm->db_path);
		return WM_EXIT_ERROR;
	}
	if (a->target)
		return wm_target_id(wm, a->target, &id);
	if (tg->nrows == 0) {
		*none = 1;
		return 0;
	}
	return wm_usage_error("plot: %s holds several targets (%s): choose one with "
			      "--target",
			      wm->db_path, wm_str(tg, 0, "names"));
}

static int build_kind(struct wm *wm, const char *kind, int64_t tid, int64_t it, struct plot *p)
{
	if (!strcmp(kind, "sizes"))
		return plot_sizes(wm, tid, p);
	if (!strcmp(kind, "cycles"))
		return plot_cycles(wm, tid, p);
	if (!strcmp(kind, "samples"))
		return plot_samples(wm, it, p);
	if (!strcmp(kind, "latency"))
		return it ? plot_latency_trace(wm, it, p) : plot_latency(wm, tid, p);
	return plot_wear(wm, tid, p);
}

int wm_plot_draw(struct wm *wm, FILE *f, const char *kind, int64_t tid, int64_t it, int fragment)
{
	struct plot p = { 0 };
	struct wm_table tg = { 0 };
	int ret = wm_fetch_named(wm, &tg, &qc_queries[QC_TARGET],
				 (struct db_value[]){ WM_INT(tid) }, 1);

	if (!ret && tg.nrows == 0)
		ret = 1;
	if (!ret)
		ret = build_kind(wm, kind, tid, it, &p);
	if (!ret && p.ns == 0)
		ret = 1;
	if (!ret && has_campaign_axis(kind, it))
		ret = wm_plot_campaign_marks(wm, kind, tid, "", "#000000", p.xscale, &p);
	if (!ret) {
		titles(wm, &p, it && !strcmp(kind, "latency") ? "latency-trace" : kind, &tg, it);
		p.ch.fragment = fragment;
		ret = chart_svg(f, &p.ch) ? WM_EXIT_ERROR : 0;
	}
	wm_table_free(&tg);
	plot_free(&p);
	return ret;
}

/* ---- several targets in one chart -------------------------------------- */

#define MULTI_MAX 16
#define NSTYLES 6 /* marker and dash styles of wearmon_svg */

/* The charts of each named target, merged into one: series relabelled
 * "NAME: ...", coloured by target; campaign starts marked. */
struct multi {
	struct plot sub[MULTI_MAX];
	int64_t tid[MULTI_MAX];
	char name[MULTI_MAX][LABEL_MAX];
	size_t n;
	struct plot all;
	char list[MULTI_MAX * LABEL_MAX];
};

/* Splits "a,b,c" into m->name and looks each target up. Returns 0 or an
 * exit status (message printed, naming the bad name). */
static int multi_targets(struct wm *wm, const char *arg, struct multi *m)
{
	const char *s = arg;

	while (*s) {
		size_t len = strcspn(s, ",");

		if (len == 0 || len >= LABEL_MAX || m->n == MULTI_MAX)
			return wm_usage_error("plot: --target '%s': %s", arg,
					      m->n == MULTI_MAX ? "at most 16 targets"
								: "empty or too long name");
		snprintf(m->name[m->n], LABEL_MAX, "%.*s", (int)len, s);
		if (wm_target_id(wm, m->name[m->n], &m->tid[m->n]))
			return WM_EXIT_ERROR;
		m->n++;
		s += len + (s[len] == ',');
	}
	return 0;
}

/* Brings every chart to the largest x unit (bytes) and y unit (ms);
 * *xref and *yref: the charts whose axis labels fit. */
static void multi_units(struct multi *m, size_t *xref, size_t *yref)
{
	size_t first = 0;

	while (m->sub[first].ns == 0)
		first++;
	*xref = *yref = first;
	for (size_t i = first + 1; i < m->n; i++) {
		if (m->sub[i].ns == 0)
			continue;
		if (m->sub[i].xscale > m->sub[*xref].xscale)
			*xref = i;
		if (m->sub[i].yscale > m->sub[*yref].yscale)
			*yref = i;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct plot *p = &m->sub[i];

		for (int r = 0; r < p->t.nrows; r++) {
			if (p->xscale > 0)
				p->x[r] *= p->xscale / m->sub[*xref].xscale;
			if (p->yscale > 0)
				p->y[r] *= p->yscale / m->sub[*yref].yscale;
		}
	}
}

/* Copies target i's series into the merged chart. */
static void multi_series(struct multi *m, size_t i)
{
	struct plot *p = &m->all, *sub = &m->sub[i];

	for (size_t j = 0; j < sub->ns; j++, p->ns++) {
		snprintf(p->label[p->ns], LABEL_MAX, "%s: %s", m->name[i], sub->s[j].label);
		p->s[p->ns] = sub->s[j];
		p->s[p->ns].label = p->label[p->ns];
		p->s[p->ns].color = chart_palette(i);
		p->s[p->ns].style = (int)((i + j) % NSTYLES) + 1;
	}
}

static void multi_titles(struct wm *wm, const char *kind, struct multi *m, size_t xref, size_t yref)
{
	struct plot *p = &m->all;
	size_t at = 0;

	for (size_t i = 0; i < m->n; i++)
		at += (size_t)snprintf(m->list + at, sizeof(m->list) - at, "%s%s", i ? ", " : "",
				       m->name[i]);
	snprintf(p->subtitle, sizeof(p->subtitle), "targets %s; %s", m->list, wm->db_path);
	snprintf(p->title, sizeof(p->title), "%s: %s", m->list, kind_title(kind));
	p->ch.title = p->title;
	p->ch.subtitle = p->subtitle;
	snprintf(p->xlabel, sizeof(p->xlabel), "%s", m->sub[xref].ch.xlabel);
	p->ch.xlabel = p->xlabel;
	p->ch.ylabel = m->sub[yref].ch.ylabel;
}

/* Builds each target's chart and merges them. Returns 0, 1 (nothing to
 * draw) or WM_EXIT_ERROR. */
static int multi_build(struct wm *wm, const char *kind, struct multi *m)
{
	struct plot *p = &m->all;
	size_t total = 0, xref, yref;
	char prefix[LABEL_MAX + 1];
	int ret = 0;

	for (size_t i = 0; !ret && i < m->n; i++) {
		ret = build_kind(wm, kind, m->tid[i], 0, &m->sub[i]);
		total += m->sub[i].ns;
	}
	if (ret || total == 0)
		return ret ? ret : 1;
	multi_units(m, &xref, &yref);
	p->s = calloc(total, sizeof(*p->s));
	p->label = calloc(total, sizeof(*p->label));
	if (!p->s || !p->label) {
		wm_err("out of memory");
		return WM_EXIT_ERROR;
	}
	for (size_t i = 0; i < m->n; i++)
		multi_series(m, i);
	p->ch = m->sub[xref].ch;
	p->ch.marks = NULL;
	p->ch.nmarks = 0;
	p->ch.marks_legend = NULL;
	for (size_t i = 0; !ret && has_campaign_axis(kind, 0) && i < m->n; i++) {
		snprintf(prefix, sizeof(prefix), "%s ", m->name[i]);
		ret = wm_plot_campaign_marks(wm, kind, m->tid[i], prefix, chart_palette(i),
					     m->sub[xref].xscale, p);
	}
	p->ch.series = p->s;
	p->ch.nseries = p->ns;
	p->ch.band = (struct chart_band){ 0 };
	p->ch.band_legend = NULL;
	p->ch.ordered = 0;
	p->ch.break_at_marks = 0;
	multi_titles(wm, kind, m, xref, yref);
	return ret;
}

/* The chart of several targets (a->target "a,b,..."). Returns 0, 1
 * (nothing to draw) or WM_EXIT_ERROR. */
static int multi_draw(struct wm *wm, FILE *f, const struct wm_args *a, struct multi *m)
{
	int ret = multi_build(wm, a->kind, m);

	if (!ret && chart_svg(f, &m->all.ch))
		ret = WM_EXIT_ERROR;
	for (size_t i = 0; i < m->n; i++)
		plot_free(&m->sub[i]);
	plot_free(&m->all);
	return ret;
}

/* Draws the chart to path ("-": stdout) through a temporary file, so a
 * reader never sees half a picture. Returns 0, 1 (nothing to draw, no
 * file left) or WM_EXIT_ERROR. */
static int draw(struct wm *wm, FILE *f, const struct wm_args *a, int64_t tid, struct multi *m)
{
	return m ? multi_draw(wm, f, a, m) : wm_plot_draw(wm, f, a->kind, tid, a->iteration, 0);
}

static int write_chart(struct wm *wm, const struct wm_args *a, int64_t tid, struct multi *m)
{
	char tmp[4096];
	FILE *f;
	int ret;

	if (!strcmp(a->output, "-"))
		return draw(wm, stdout, a, tid, m);
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", a->output, (long)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		wm_err("cannot write %s: %s", a->output, strerror(errno));
		return WM_EXIT_ERROR;
	}
	ret = draw(wm, f, a, tid, m);
	if (fclose(f) != 0 && !ret)
		ret = WM_EXIT_ERROR;
	if (ret || rename(tmp, a->output) != 0) {
		if (ret != 1)
			wm_err("cannot write %s: %s", a->output, strerror(errno));
		unlink(tmp);
		return ret ? ret : WM_EXIT_ERROR;
	}
	return 0;
}

static int check_plot_args(const struct wm_args *a)
{
	static const char *const kinds[] = { "sizes", "cycles", "samples", "wear", "latency" };
	size_t k = 0;

	if (a->npos > 0)
		return wm_usage_error("plot: unexpected argument '%s'", a->pos[0]);
	if (!a->kind)
		return wm_usage_error("plot: missing --kind sizes|cycles|samples|wear|latency");
	while (k < ARRAY_SIZE(kinds) && strcmp(kinds[k], a->kind))
		k++;
	if (k == ARRAY_SIZE(kinds))
		return wm_usage_error("plot: --kind is sizes, cycles, samples, wear or latency,"
				      " not '%s'",
				      a->kind);
	if (!a->output)
		return wm_usage_error("plot: missing -o FILE.svg");
	if (!strcmp(a->kind, "samples") && !a->iteration)
		return wm_usage_error("plot: --kind samples needs --iteration ID "
				      "(the ID column of 'wearmon history')");
	if (strcmp(a->kind, "samples") && strcmp(a->kind, "latency") && a->iteration)
		return wm_usage_error("plot: --iteration goes with --kind samples or latency");
	return -1;
}

/* "wearmon plot --target a,b": one chart of several targets. */
static int plot_multi(struct wm *wm, const struct wm_args *a)
{
	struct multi *m = calloc(1, sizeof(*m));
	int ret = m ? 0 : WM_EXIT_ERROR;

	if (!m)
		wm_err("out of memory");
	else if (!strcmp(a->kind, "samples") || a->iteration)
		ret = wm_usage_error("plot: --target with several names draws --kind sizes,"
				     " cycles, wear or latency, without --iteration");
	else if (!(ret = multi_targets(wm, a->target, m)) &&
		 (ret = write_chart(wm, a, 0, m)) == 1) {
		printf("%s: nothing to plot for targets %s (no finished iteration yet)\n", a->kind,
		       a->target);
		ret = 0;
	}
	free(m);
	return ret;
}

int wm_cmd_plot(struct wm *wm, int argc, char **argv)
{
	struct wm_table tg = { 0 };
	struct wm_args a;
	int none, ret = wm_parse_args(wm, argc, argv, "tkoi", &a);

	if (ret >= 0 || (ret = check_plot_args(&a)) >= 0 || (ret = wm_open(wm)))
		return ret;
	if (a.target && strchr(a.target, ',')) {
		ret = plot_multi(wm, &a);
		wm_report_steps(wm);
		return ret;
	}
	ret = pick_target(wm, &a, &tg, &none);
	if (ret || none) {
		if (none)
			printf("%s: nothing to plot\n", WM_NO_ITERATIONS);
		goto out;
	}
	ret = write_chart(wm, &a, wm_int(&tg, 0, "id", 0), NULL);
	if (ret == 1 && wm_has_iterations(wm) == 0)
		printf("%s: nothing to plot\n", WM_NO_ITERATIONS);
	else if (ret == 1)
		printf("%s: nothing to plot for target %s (%s)\n", a.kind, wm_str(&tg, 0, "name"),
		       a.iteration ? "this iteration has no samples yet"
				   : "no finished iteration yet");
	if (ret == 1)
		ret = 0;
out:
	wm_report_steps(wm);
	wm_table_free(&tg);
	return ret;
}
