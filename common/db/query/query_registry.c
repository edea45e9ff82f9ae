/* query_registry: every table of named queries of common/db/query/, so
 * that a test can look at each query's plan on a real database. */
#include "db/query/query_named.h"

#include "base/util.h"
#include "db/query/query_charts.h"
#include "db/query/query_int.h"
#include "db/query/query_report.h"

const struct query_table query_tables[] = {
	{ query_status_queries, QSTATUS__COUNT },
	{ query_show_queries, QSHOW__COUNT },
	{ query_hir_queries, QHIR__COUNT },
	{ query_forecast_queries, QFC__COUNT },
	{ query_alerts_queries, ARRAY_SIZE(query_alerts_queries) },
	{ qr_queries, QR__COUNT },
	{ qc_queries, QC__COUNT },
	{ qpts_queries, QPTS__COUNT },
};
const size_t query_ntables = ARRAY_SIZE(query_tables);
