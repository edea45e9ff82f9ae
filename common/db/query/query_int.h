/* query_int: the tables of named queries of common/db/query/ that
 * query_registry.c lists with the charts' and the report's, and the
 * history's statement for the tests of query plans. Nothing outside
 * common/db/query/ and the tests includes it. */
#ifndef WEARMON_QUERY_INT_H
#define WEARMON_QUERY_INT_H

#include "db/query/query.h"

/* status (query_status.c) */
enum query_status_id {
	QSTATUS_RUNS,
	QSTATUS_TARGETS,
	QSTATUS_TARGET,
	QSTATUS_LAST_IT,
	QSTATUS_LAST_DONE,
	QSTATUS_PROGRESS,
	QSTATUS_SAME_SIZE,
	QSTATUS_DONE_CYCLE,
	QSTATUS_SIZE_SECONDS,
	QSTATUS_LAST_CYCLE,
	QSTATUS_LAST_ALERT,
	QSTATUS_STAGE,
	QSTATUS__COUNT
};
extern const struct query_named query_status_queries[QSTATUS__COUNT];

/* show (query_show.c) */
enum query_show_id {
	QSHOW_ITERATION,
	QSHOW_PHASES,
	QSHOW_TRACE,
	QSHOW_SAMPLES,
	QSHOW_HEALTH_BY_IT,
	QSHOW_HEALTH_BY_CYCLE,
	QSHOW_EVENTS,
	QSHOW_EVENTS_ALL,
	QSHOW_EVIDENCE,
	QSHOW__COUNT
};
extern const struct query_named query_show_queries[QSHOW__COUNT];

/* host idle recovery (query_hir.c) */
enum query_hir_id { QHIR_STATES, QHIR_PRECONDITIONS, QHIR_PURGES, QHIR__COUNT };
extern const struct query_named query_hir_queries[QHIR__COUNT];

/* the endurance forecast (query_forecast.c) */
enum query_forecast_id { QFC_SCOPE, QFC_EDGES, QFC_SNAPSHOTS, QFC__COUNT };
extern const struct query_named query_forecast_queries[QFC__COUNT];

/* alerts (query_history.c): query_alerts with both filters */
extern const struct query_named query_alerts_queries[1];

/* The history statement of one target since a time, for this schema
 * (malloc'd; NULL: out of memory). It is built per filter and per
 * database (its columns are those of iterations), so it is no entry of
 * the tables. */
char *query_history_target_sql(const struct query_schema *sc);

#endif
