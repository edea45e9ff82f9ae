/* query_report: the named queries behind "wearmon report" (?1 target,
 * ?2..?3 the campaign's cycles, unless said otherwise). Each is linear in
 * the target's rows: the baseline is the row baseline_iteration_id names
 * (a primary-key join, not the view materialised per row). Never writes. */
#ifndef WEARMON_QUERY_REPORT_H
#define WEARMON_QUERY_REPORT_H

#include "db/query/query_named.h"

enum qr_id {
	QR_TARGET,        /* ?1 name (NULL: every target) */
	QR_CAMPAIGNS,     /* ?1 target: first, lo, hi cycle of each campaign */
	QR_ITERATIONS,    /* every row with baseline, ratio, bytes written by then */
	QR_FIRST_TRACED,  /* the first done row with 3 measured samples */
	QR_CYCLES,        /* cycles with min / avg / max and ratio */
	QR_WRITE_AMP,     /* the campaign's write amplification */
	QR_ALERT_COUNTS,  /* alerts by severity, steady-state phases */
	QR_REGION,        /* region and over-provisioning */
	QR_HEALTH,        /* first and last health snapshot */
	QR_RUNS,          /* the daemon runs that measured the campaign */
	QR_STEADY,        /* the steady-state verdict rows */
	QR_STEADY_ROUNDS, /* ?1 verdict row: the rounds of its phase */
	QR_EVENTS,        /* events of the campaign */
	QR_SAMPLES,       /* ?1 iteration: its samples */
	QR_DEVICE,        /* rows with the drive's own figures (device_*) */
	QR_CAUSES,        /* crash and collapse alerts: cause and evidence */
	QR__COUNT
};

/* Every report query, by id (also what the query-plan test reads). */
extern const struct query_named qr_queries[QR__COUNT];

/* The PTS pages (query_pts.c; schema 28): the tests of the campaign, one
 * row each; every cell of test ?4, oldest first. */
enum qpts_id { QPTS_TESTS, QPTS_CELLS, QPTS__COUNT };
extern const struct query_named qpts_queries[QPTS__COUNT];

#endif
