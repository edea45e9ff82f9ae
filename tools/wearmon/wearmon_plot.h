/* wearmon_plot: what the chart builders (wearmon_plot.c) and their marks
 * (wearmon_plot_marks.c) share: one chart's rows, points, series and
 * marks. Private to these two files. */
#ifndef WEARMON_PLOT_H
#define WEARMON_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "wearmon.h"

/* Queries of a target's charts (common/db/query/query_charts.c) take the
 * target as ?1 and keep to the cycles of wm->cycle_lo..cycle_hi (a
 * report's campaign). */
#define SCOPED(wm, tid)                                                                            \
	(struct db_value[]){ WM_INT(tid), WM_INT((wm)->cycle_hi ? (wm)->cycle_lo : 0),             \
			     WM_INT((wm)->cycle_hi ? (wm)->cycle_hi : INT64_MAX) },                \
		3
#define LABEL_MAX 64

/* Everything one chart needs; rows of t become points, in series order. */
struct plot {
	struct wm_table t;
	double *x, *y; /* one point per row */
	struct chart_series *s;
	char (*label)[LABEL_MAX];
	size_t ns;
	struct chart_mark *m;
	char (*mlabel)[LABEL_MAX];
	size_t nm;
	double *bx, *blo, *bhi; /* band, for cycles */
	double xscale, yscale;  /* bytes per x unit, µs per y unit (0: none) */
	int mixed;              /* rows hold several workloads / block sizes */
	struct chart ch;
	char title[192], subtitle[320], xlabel[64];
};

/* A dashed line after each cycle that ended with an action (the cycles
 * chart). Returns 0 or an exit status. */
int wm_plot_cycle_marks(struct plot *p, struct wm *wm, int64_t tid);

/* A dotted line through each cycle not done, whose figures are of the
 * sizes it reached (the cycles chart). Returns 0 or WM_EXIT_ERROR. */
int wm_plot_partial_marks(struct plot *p);

/* A dashed line where each action ran, at the bytes written by then (the
 * wear chart, x in bytes / scale). Returns 0 or an exit status. */
int wm_plot_wear_marks(struct wm *wm, int64_t tid, double scale, struct plot *p);

/* A dashed line after the last iteration ID of each cycle that ended with
 * an action (the latency chart). Returns 0 or an exit status. */
int wm_plot_latency_marks(struct wm *wm, int64_t tid, struct plot *p);

/* A mark "PREFIXcampaign N" where each later campaign of target tid
 * starts, on a chart of kind cycles, wear or latency (x in bytes / xscale
 * for wear); colour col, one legend entry for all. Returns 0 or
 * WM_EXIT_ERROR. */
int wm_plot_campaign_marks(struct wm *wm, const char *kind, int64_t tid, const char *prefix,
			   const char *col, double xscale, struct plot *p);

#endif
