/* query_registry: every statement of common/db/query/ by name, so that tests
 * can look at each one's query plan on a real database. */
#include "db/query/query.h"

#include "base/util.h"
#include "db/query/query_int.h"

const struct query_named query_named[] = {
	{ "history --target --since", 1, query_history_target_sql },
	{ "alerts --target --since", 0, query_alerts_sql },
	{ "show: the iteration", 1, query_show_iteration_sql },
	{ "show: samples per phase", 1, query_show_phases_sql },
	{ "show: sample trace", 1, query_show_trace_sql },
	{ "show: samples", 1, query_show_samples_sql },
	{ "show: health of the cycle", 1, query_show_health_sql },
	{ "show: events", 1, query_show_events_sql },
	{ "status: last iteration", 1, query_last_iteration_sql },
	{ "status: last done iteration", 1, query_last_done_sql },
	{ "status: progress", 1, query_fresh_progress_sql },
	{ "status: last of the same size", 1, query_last_same_size_sql },
	{ "status: last done cycle", 1, query_last_done_cycle_sql },
	{ "status: seconds of each size", 1, query_size_seconds_sql },
	{ "status: last cycle", 1, query_last_cycle_sql },
	{ "status: last alert", 1, query_last_alert_sql },
};

const size_t query_nnamed = ARRAY_SIZE(query_named);
