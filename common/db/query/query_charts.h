/* query_charts: the named queries behind "wearmon plot" (every kind) and
 * the report's charts. Each reads one target (?1 target, ?2..?3 cycles) or
 * one iteration (?1), in time linear in that target's rows: running sums
 * and marks in one window pass, no subquery per row. Never writes. */
#ifndef WEARMON_QUERY_CHARTS_H
#define WEARMON_QUERY_CHARTS_H

#include "db/query/query_named.h"

enum qc_id {
	QC_TARGET_PICK,      /* targets: ?1 name, ?2 an iteration (NULL: any) */
	QC_TARGET,           /* titles: ?1 target */
	QC_SIZES,            /* MiB/s per size, one row per cycle and size */
	QC_CYCLES,           /* max / average / min per cycle, three series */
	QC_CYCLE_ACTIONS,    /* the actions after the cycles */
	QC_SAMPLES,          /* ?1 iteration: its 1-second samples on one time axis */
	QC_WEAR,             /* done rows with the host bytes written by their end */
	QC_WEAR_MARKS,       /* each action at the host bytes written by then */
	QC_LATENCY,          /* percentiles of every done iteration, in order */
	QC_LATENCY_MARKS,    /* each action after its cycle's last done iteration */
	QC_LATENCY_TRACE,    /* ?1 iteration: percentiles of its measured samples or minutes */
	QC_CAMPAIGN_CYCLES,  /* later campaign starts on the cycles axis */
	QC_CAMPAIGN_WEAR,    /* ... on the host-bytes axis */
	QC_CAMPAIGN_LATENCY, /* ... on the done-iteration axis */
	QC__COUNT
};

/* Every chart query, by id (also what the query-plan test reads). */
extern const struct query_named qc_queries[QC__COUNT];

/* The query that reads one iteration's samples for a chart of its rate
 * (latency 0: QC_SAMPLES) or its latency percentiles (1: QC_LATENCY_TRACE)
 * over span_s seconds (0: unknown). QC_SAMPLES reads the 1-second samples,
 * or the per-minute rollups of an iteration past sample_retention (column
 * `point` says which); QC_LATENCY_TRACE likewise, a minute's percentile
 * the highest of its samples' (QC_POINT_MINUTE_MAX). */
enum qc_id qc_samples_source(int latency, double span_s);

#endif
