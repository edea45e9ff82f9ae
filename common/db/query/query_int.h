/* query_int: the statement builders that query_named.c lists for the
 * tests of query plans. Nothing outside common/db/query/ includes it. */
#ifndef WEARMON_QUERY_INT_H
#define WEARMON_QUERY_INT_H

#include "db/query/query.h"

/* Each returns the statement's text for sc (malloc'd; NULL: out of
 * memory), its filters all given. */
char *query_alerts_sql(const struct query_schema *sc);
char *query_history_target_sql(const struct query_schema *sc);
char *query_show_iteration_sql(const struct query_schema *sc);
char *query_show_phases_sql(const struct query_schema *sc);
char *query_show_trace_sql(const struct query_schema *sc);
char *query_show_samples_sql(const struct query_schema *sc);
char *query_show_health_sql(const struct query_schema *sc);
char *query_show_events_sql(const struct query_schema *sc);
char *query_last_iteration_sql(const struct query_schema *sc);
char *query_last_done_sql(const struct query_schema *sc);
char *query_fresh_progress_sql(const struct query_schema *sc);
char *query_last_same_size_sql(const struct query_schema *sc);
char *query_last_done_cycle_sql(const struct query_schema *sc);
char *query_size_seconds_sql(const struct query_schema *sc);
char *query_last_cycle_sql(const struct query_schema *sc);
char *query_last_alert_sql(const struct query_schema *sc);

#endif
