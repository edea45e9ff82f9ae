/* wearmon_plot_marks: the marks of wearmon's charts: a dashed line where
 * each action between cycles ran, a dotted one through each cycle not done
 * (partial), a long-dashed one where each later campaign starts; labelled
 * off the data by wearmon_svg. Reads through the named queries of
 * common/db/query/query_charts.h; calls nothing of wearmon_plot.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "db/query/query_charts.h"
#include "wearmon.h"
#include "wearmon_plot.h"

static int marks_grow(struct plot *p, size_t extra);

/* Mark "ACTION after cycle N" at x = at, from row r of a (columns action,
 * number). */
static void action_mark(struct plot *p, const struct wm_table *a, int r, double at)
{
	snprintf(p->mlabel[p->nm], LABEL_MAX, "%s after cycle %lld", wm_str(a, r, "action"),
		 (long long)wm_int(a, r, "number", 0));
	p->m[p->nm] = (struct chart_mark){ .vertical = 1, .at = at, .label = p->mlabel[p->nm] };
	p->nm++;
}

/* The chart takes the marks made so far, under legend when there are any;
 * frees a and passes ret on. */
static int marks_set(struct plot *p, struct wm_table *a, const char *legend, int ret)
{
	p->ch.marks = p->m;
	p->ch.nmarks = p->nm;
	p->ch.marks_legend = p->nm ? legend : NULL;
	wm_table_free(a);
	return ret;
}

/* A dashed line after each cycle that ended with an action. */
int wm_plot_cycle_marks(struct plot *p, struct wm *wm, int64_t tid)
{
	struct wm_table a = { 0 };
	int ret = wm_fetch_named(wm, &a, &qc_queries[QC_CYCLE_ACTIONS], SCOPED(wm, tid));

	for (int r = 0; !ret && r < a.nrows && (size_t)r < (size_t)p->t.nrows; r++) {
		const char *out = wm_str(&a, r, "action_outcome");

		snprintf(p->mlabel[p->nm], LABEL_MAX, "%s%s%s", wm_str(&a, r, "action"),
			 out && strcmp(out, "ok") ? ": " : "", out && strcmp(out, "ok") ? out : "");
		p->m[p->nm] = (struct chart_mark){ .vertical = 1,
						   .at = (double)wm_int(&a, r, "number", 0) + 0.5,
						   .label = p->mlabel[p->nm] };
		p->nm++;
	}
	return marks_set(p, &a, "action after the cycle", ret);
}

/* A dotted line through each cycle not done, whose figures are of the
 * sizes it reached: "cycle 3, interrupted: 2 of 4 sizes". Returns 0 or
 * WM_EXIT_ERROR. */
int wm_plot_partial_marks(struct plot *p)
{
	char b[64];
	int ret = 0;

	for (int i = 0; !ret && p->ns && i < (int)p->s[0].n; i++) { /* the first series' rows */
		const char *st = wm_str(&p->t, i, "cycle_status");

		if (!st || !strcmp(st, "done") || (ret = marks_grow(p, 1)))
			continue;
		snprintf(p->mlabel[p->nm], LABEL_MAX, "cycle %lld, %s",
			 (long long)wm_int(&p->t, i, "cycle", 0),
			 wm_fmt_partial(st, wm_int(&p->t, i, "sizes", 0),
					wm_int(&p->t, i, "nsizes", 0), b, sizeof(b)));
		p->m[p->nm] = (struct chart_mark){ .vertical = 1,
						   .at = p->s[0].x[i],
						   .label = p->mlabel[p->nm],
						   .color = "#555",
						   .dash = "1 3",
						   .legend = "partial cycle (not done)" };
		p->nm++;
	}
	p->ch.nmarks = p->nm;
	return ret;
}

/* A dashed line where each action ran, at the bytes written by then. */
int wm_plot_wear_marks(struct wm *wm, int64_t tid, double scale, struct plot *p)
{
	struct wm_table a = { 0 };
	int ret = wm_fetch_named(wm, &a, &qc_queries[QC_WEAR_MARKS], SCOPED(wm, tid));

	for (int r = 0; !ret && r < a.nrows && (size_t)r < (size_t)p->t.nrows; r++) {
		if (!isnan(wm_num(&a, r, "written")))
			action_mark(p, &a, r, wm_num(&a, r, "written") / scale);
	}
	return marks_set(p, &a, "action between cycles", ret);
}

/* A dashed line after the last iteration ID of each cycle that ended
 * with an action, on the latency chart's iteration axis. */
int wm_plot_latency_marks(struct wm *wm, int64_t tid, struct plot *p)
{
	struct wm_table a = { 0 };
	int ret = wm_fetch_named(wm, &a, &qc_queries[QC_LATENCY_MARKS], SCOPED(wm, tid));

	for (int r = 0; !ret && r < a.nrows && (size_t)r < (size_t)p->t.nrows; r++)
		action_mark(p, &a, r, wm_num(&a, r, "seq") + 0.5);
	return marks_set(p, &a, "action between cycles", ret);
}

/* Room for extra more marks; mark i keeps its label in mlabel[i]. Returns
 * 0 or WM_EXIT_ERROR (message printed). */
static int marks_grow(struct plot *p, size_t extra)
{
	struct chart_mark *m = realloc(p->m, (p->nm + extra + 1) * sizeof(*m));
	char(*l)[LABEL_MAX] = NULL;

	if (m)
		p->m = m;
	if (m)
		l = realloc(p->mlabel, (p->nm + extra + 1) * sizeof(*l));
	if (!l) {
		wm_err("out of memory");
		return WM_EXIT_ERROR;
	}
	p->mlabel = l;
	for (size_t i = 0; i < p->nm; i++)
		if (p->m[i].label)
			p->m[i].label = p->mlabel[i];
	p->ch.marks = p->m;
	return 0;
}

/* A mark "PREFIXcampaign N" where each later campaign of target tid
 * starts, on a chart of kind cycles, wear or latency (x in bytes / xscale
 * for wear); colour col, one legend entry for all. Returns 0 or
 * WM_EXIT_ERROR. */
int wm_plot_campaign_marks(struct wm *wm, const char *kind, int64_t tid, const char *prefix,
			   const char *col, double xscale, struct plot *p)
{
	struct wm_table a = { 0 };
	enum qc_id q = !strcmp(kind, "cycles") ? QC_CAMPAIGN_CYCLES
		       : !strcmp(kind, "wear") ? QC_CAMPAIGN_WEAR
					       : QC_CAMPAIGN_LATENCY;
	int ret = wm_fetch_named(wm, &a, &qc_queries[q], SCOPED(wm, tid));

	if (!ret && a.nrows)
		ret = marks_grow(p, (size_t)a.nrows);
	for (int r = 0; !ret && r < a.nrows; r++, p->nm++) {
		snprintf(p->mlabel[p->nm], LABEL_MAX, "%scampaign %lld", prefix,
			 (long long)wm_int(&a, r, "n", 0));
		p->m[p->nm] =
			(struct chart_mark){ .vertical = 1,
					     .at = wm_num(&a, r, "x") / (xscale > 0 ? xscale : 1),
					     .label = p->mlabel[p->nm],
					     .color = col,
					     .dash = "10 4",
					     .legend = "start of a campaign" };
	}
	p->ch.nmarks = p->nm;
	wm_table_free(&a);
	return ret;
}
