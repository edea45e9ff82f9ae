/* query_charts: the SQL of the charts, in one place (the CLI files hold
 * none). Where the marks need "what happened by the end of cycle N" they
 * aggregate per cycle once and run one window sum, never a subquery per
 * cycle over the whole history. */
#include "db/query/query_charts.h"

#include "db/query/query_sql.h"
#include "db/db_views.h"

/* cycle_status: a cycle not done is drawn as partial */
#define SIZES_SQL                                                                                  \
	"SELECT c.number AS cycle, c.status AS cycle_status, i.size_bytes, i.workload,"            \
	" i.block_size, avg(i.mibps_avg) AS mibps_avg FROM iterations i"                           \
	" JOIN cycles c ON c.id = i.cycle_id"                                                      \
	" WHERE i.target_id = ?1 AND i.status = 'done'" QS_SCOPE(                                  \
		"c.number") " GROUP BY c.number, i.workload, i.block_size, i.size_bytes"           \
			    " ORDER BY i.workload, i.block_size, c.number, i.size_bytes"

/* three series (max, avg, min) of one row per cycle, the figures of
 * DB_CYCLE_FIGURES_SQL (common/db/db_views.h: the view cycle_summary and
 * the report's table read the same), stored per cycle from schema 21;
 * before, CROSS JOIN: the figures once, each cycle by its key, never the
 * figures again per cycle */
#define CYCLE_FIGS(m, fl) DB_CYCLE_FIGURES_SQL(m, fl, " AND i.target_id = ?1")
#define CYCLES_SERIES_SQL(cycles)                                                                  \
	"SELECT s.series, s.ord, c.cycle, c.cycle_status, c.sizes, c.nsizes, CASE s.ord"           \
	" WHEN 0 THEN c.hi WHEN 1 THEN c.mean ELSE c.lo END AS mibps"                              \
	" FROM (SELECT '" QC_SERIES_MAX "' AS series, 0 AS ord UNION ALL"                          \
	" SELECT '" QC_SERIES_AVG "', 1 UNION ALL"                                                 \
	" SELECT '" QC_SERIES_MIN "', 2) s, (" cycles ") c"                                        \
	" WHERE c.mean IS NOT NULL ORDER BY s.ord, c.cycle"
/* before schema 21: the figures computed from the target's rows */
#define CYCLES_SQL(m, fl)                                                                          \
	CYCLES_SERIES_SQL(                                                                         \
		"SELECT cy.number AS cycle, cy.status AS cycle_status, f.sizes,"                   \
		" NULL AS nsizes, f.lo, f.mean, f.hi"                                              \
		"  FROM (" CYCLE_FIGS(                                                             \
			m, fl) ") f CROSS JOIN cycles cy"                                          \
			       "  ON cy.id = f.cycle_id"                                           \
			       "  WHERE cy.target_id = ?1 AND cy.number BETWEEN ?2 AND ?3")
/* from schema 21: the figures stored per cycle (DB_CYCLE_STORE_SQL) */
#define CYCLES_STORED_SQL                                                                          \
	CYCLES_SERIES_SQL("SELECT number AS cycle, status AS cycle_status, sizes, nsizes,"         \
			  " mibps_min AS lo, mibps_avg AS mean, mibps_max AS hi FROM cycles"       \
			  " WHERE target_id = ?1 AND number BETWEEN ?2 AND ?3")

#define CYCLE_ACTIONS_SQL                                                                          \
	"SELECT number, action, action_outcome FROM cycles"                                        \
	" WHERE target_id = ?1 AND action IS NOT NULL AND action != 'none'" QS_SCOPE(              \
		"number") " ORDER BY number"

/* The measured phase follows the fill on one time axis: the fill's end
 * is read once (f), not per sample. */
#define SAMPLES_SQL                                                                                \
	"SELECT s.phase, s.mibps,"                                                                 \
	" (s.t_ms + CASE s.phase WHEN 'measure' THEN f.end_ms ELSE 0 END) AS t_ms,"                \
	" i.mibps_avg, i.size_bytes, i.workload, i.block_size, i.queue_depth,"                     \
	" i.status, i.number, c.number AS cycle, t.device"                                         \
	" FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                                    \
	" JOIN targets t ON t.id = i.target_id"                                                    \
	" JOIN (SELECT coalesce(max(t_ms), 0) AS end_ms FROM samples"                              \
	"  WHERE iteration_id = ?1 AND phase = 'fill') f"                                          \
	" JOIN samples s ON s.iteration_id = i.id"                                                 \
	" WHERE i.id = ?1 ORDER BY s.phase = 'measure', s.t_ms"

/* An iteration's points: its samples, or once sample_retention
 * replaced them (common/db/schema.md), its per-minute rollups, each at
 * the end of its minute. */
#define QC_POINTS                                                                                  \
	"WITH src AS (SELECT phase, t_ms, mibps, NULL AS mibps_min, NULL AS mibps_max, bytes,"     \
	"  '" QC_POINT_SAMPLE "' AS point FROM samples WHERE iteration_id = ?1"                    \
	" UNION ALL SELECT phase, (minute + 1) * 60000, mibps_avg, mibps_min, mibps_max, bytes,"   \
	"  '" QC_POINT_MINUTE "' FROM sample_minutes WHERE iteration_id = ?1"                      \
	"  AND NOT EXISTS (SELECT 1 FROM samples WHERE iteration_id = ?1)) "

#define SAMPLES_ROLLUP_SQL                                                                         \
	QC_POINTS                                                                                  \
	"SELECT s.phase, s.mibps, s.mibps_min, s.mibps_max, s.bytes, s.point,"                     \
	" (s.t_ms + CASE s.phase WHEN 'measure' THEN f.end_ms ELSE 0 END) AS t_ms,"                \
	" i.mibps_avg, i.size_bytes, i.workload, i.block_size, i.queue_depth,"                     \
	" i.status, i.number, c.number AS cycle, t.device"                                         \
	" FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                                    \
	" JOIN targets t ON t.id = i.target_id"                                                    \
	" JOIN (SELECT coalesce(max(t_ms), 0) AS end_ms FROM src WHERE phase = 'fill') f"          \
	" JOIN src s WHERE i.id = ?1 ORDER BY s.phase = 'measure', s.t_ms"

/* The running sum over every row (interrupted ones wrote too), then the
 * done rows as points. */
#define WEAR_SQL(written)                                                                          \
	"SELECT * FROM (SELECT i.id, i.status, i.size_bytes,"                                      \
	" i.workload, i.block_size, i.mibps_avg, sum(" written ") OVER (ORDER BY i.id)"            \
	" AS written, c.number AS cycle"                                                           \
	" FROM iterations i JOIN cycles c ON c.id = i.cycle_id WHERE i.target_id = ?1)"            \
	" WHERE status = 'done'" QS_SCOPE(                                                         \
		"cycle") " ORDER BY workload, block_size, size_bytes, id"

/* Bytes written by the end of each cycle with an action: per cycle once,
 * then one running sum in cycle order (row ids follow the cycles). A cycle
 * without rows has none (no mark). */
#define WEAR_MARKS_SQL(written)                                                                    \
	"SELECT number, action, written FROM (SELECT c.number, c.action,"                          \
	" CASE WHEN count(i.id) > 0 THEN sum(coalesce(sum(" written "), 0))"                       \
	" OVER (ORDER BY c.number) END AS written"                                                 \
	" FROM cycles c LEFT JOIN iterations i ON i.cycle_id = c.id"                               \
	" WHERE c.target_id = ?1 GROUP BY c.id)"                                                   \
	" WHERE action IS NOT NULL AND action != 'none'" QS_SCOPE("number") " ORDER BY number"

/* p50 / p99 / p99.9 / p99.99 of every done iteration at its ID (the ID of
 * `wearmon history` and `show`, iterations.id), so that a gap shows a row
 * that did not end done. */
#define LATENCY_SQL(p9999)                                                                         \
	"SELECT s.series, s.ord, x.seq, CASE s.ord WHEN 0 THEN"                                    \
	" x.p50 WHEN 1 THEN x.p99 WHEN 2 THEN x.p999 ELSE x.p9999 END AS us"                       \
	" FROM (SELECT 'p50' AS series, 0 AS ord UNION ALL SELECT 'p99', 1"                        \
	" UNION ALL SELECT 'p99.9', 2 UNION ALL SELECT 'p99.99', 3) s,"                            \
	" (SELECT i.id AS seq, i.lat_p50_us AS p50,"                                               \
	"  i.lat_p99_us AS p99, i.lat_p999_us AS p999, " p9999 " AS p9999 FROM iterations i"       \
	"  JOIN cycles c ON c.id = i.cycle_id"                                                     \
	"  WHERE i.target_id = ?1 AND i.status = 'done'" QS_SCOPE(                                 \
		"c.number") ") x"                                                                  \
			    " WHERE s.ord < 3 OR x.p9999 IS NOT NULL ORDER BY s.ord, x.seq"

/* The last iteration ID of each cycle with an action (its mark sits
 * after it); a cycle without rows: the last ID before it. */
#define LATENCY_MARKS_SQL                                                                          \
	"SELECT number, action, seq FROM (SELECT c.number, c.action,"                              \
	" coalesce(max(max(i.id)) OVER (ORDER BY c.number), 0) AS seq"                             \
	" FROM cycles c LEFT JOIN iterations i ON i.cycle_id = c.id"                               \
	" WHERE c.target_id = ?1 GROUP BY c.id)"                                                   \
	" WHERE action IS NOT NULL AND action != 'none'" QS_SCOPE("number") " ORDER BY number"

/* The percentiles of an iteration's measured phase over time: its
 * 1-second samples, or once sample_retention replaced them
 * (common/db/schema.md), the highest of each minute's samples
 * (sample_minutes), at the end of its minute; column `point` says which. */
#define LATENCY_TRACE_ROLLUP_SQL                                                                   \
	"WITH x AS (SELECT t_ms, lat_p50_us AS p50, lat_p99_us AS p99, lat_p999_us AS p999,"       \
	"  lat_p9999_us AS p9999, '" QC_POINT_SAMPLE "' AS point FROM samples"                     \
	"  WHERE iteration_id = ?1 AND phase = 'measure'"                                          \
	" UNION ALL SELECT (minute + 1) * 60000, lat_p50_us, lat_p99_us, lat_p999_us,"             \
	"  lat_p9999_us, '" QC_POINT_MINUTE_MAX "' FROM sample_minutes"                            \
	"  WHERE iteration_id = ?1 AND phase = 'measure'"                                          \
	"  AND NOT EXISTS (SELECT 1 FROM samples WHERE iteration_id = ?1))"                        \
	" SELECT s.series, s.ord, x.t_ms, x.point, CASE s.ord WHEN 0 THEN"                         \
	" x.p50 WHEN 1 THEN x.p99 WHEN 2 THEN x.p999 ELSE x.p9999 END AS us"                       \
	" FROM (SELECT 'p50' AS series, 0 AS ord UNION ALL SELECT 'p99', 1"                        \
	" UNION ALL SELECT 'p99.9', 2 UNION ALL SELECT 'p99.99', 3) s, x"                          \
	" ORDER BY s.ord, x.t_ms"

#define LATENCY_TRACE_SQL(cols, more)                                                              \
	"SELECT s.series, s.ord, x.t_ms, CASE s.ord WHEN 0 THEN"                                   \
	" x.p50 WHEN 1 THEN x.p99 WHEN 2 THEN x.p999 ELSE x.p9999 END AS us"                       \
	" FROM (SELECT 'p50' AS series, 0 AS ord UNION ALL SELECT 'p99', 1"                        \
	" UNION ALL SELECT 'p99.9', 2 UNION ALL SELECT 'p99.99', 3) s,"                            \
	" (SELECT t_ms, lat_p50_us AS p50, lat_p99_us AS p99, " cols " FROM samples"               \
	"  WHERE iteration_id = ?1 AND phase = 'measure') x"                                       \
	" WHERE s.ord < 2 OR " more " ORDER BY s.ord, x.t_ms"

/* Campaign starts of target ?1 after its first cycle (the CTE "starts",
 * one row a campaign; not "b", the views' alias of iterations, which
 * tools/scalegen/scale.py's plan check counts as a full scan), numbered
 * from 2 (the campaigns the report counts), kept to the cycles ?2..?3, with where each
 * sits on the axis (x, from the per-cycle figures of the cycles before
 * it: bytes written w, the last iteration ID d; iteration ids follow the
 * cycles). The starts: each cycle's campaign_first_cycle and the
 * target's (CAMPAIGN_STARTS), or before cycles had one (fact
 * QF_CAMPAIGN_FIRST) the target's alone (CAMPAIGN_STARTS_TARGET). */
#define CAMPAIGN_STARTS                                                                            \
	"SELECT campaign_first_cycle AS f FROM cycles WHERE target_id = ?1"                        \
	"  AND campaign_first_cycle IS NOT NULL"                                                   \
	"  UNION SELECT campaign_first_cycle FROM targets WHERE id = ?1"
#define CAMPAIGN_STARTS_TARGET "SELECT campaign_first_cycle AS f FROM targets WHERE id = ?1"
#define CAMPAIGN_SQL_FROM(starts, x, written)                                                         \
	"WITH starts AS (" starts "),"                                                                \
	" per AS (SELECT c.number, sum(" written ") AS w, max(i.id) AS d"                             \
	"  FROM iterations i JOIN cycles c ON c.id = i.cycle_id WHERE i.target_id = ?1"               \
	"  GROUP BY c.number)"                                                                        \
	" SELECT n, x FROM (SELECT starts.f, " x                                                      \
	" AS x, row_number() OVER (ORDER BY starts.f) + 1 AS n"                                       \
	"  FROM starts LEFT JOIN per ON per.number < starts.f"                                        \
	"  WHERE starts.f > (SELECT min(number) FROM cycles WHERE target_id = ?1) GROUP BY starts.f)" \
	" WHERE f > ?2 AND f <= ?3 ORDER BY f"
#define CAMPAIGN_SQL(x, written) CAMPAIGN_SQL_FROM(CAMPAIGN_STARTS, x, written)
#define CAMPAIGN_TARGET_SQL(x, written) CAMPAIGN_SQL_FROM(CAMPAIGN_STARTS_TARGET, x, written)

/* The targets a chart may be of: ?1 name, ?2 an iteration of it (NULL:
 * any), with the names of all. */
#define TARGET_PICK_SQL                                                                            \
	"SELECT t.id, t.name, (SELECT group_concat(name, ', ') FROM targets) AS names"             \
	" FROM targets t WHERE (?1 IS NULL OR t.name = ?1) AND (?2 IS NULL OR t.id ="              \
	"  (SELECT target_id FROM iterations WHERE id = ?2)) ORDER BY t.name"

/* What the titles say of target ?1: its first and last cycle and the
 * workload of its last row (each one index lookup). */
#define TARGET_SQL                                                                                 \
	"SELECT t.id, t.name, t.device, t.capacity_bytes,"                                         \
	" (SELECT min(number) FROM cycles WHERE target_id = ?1) AS first_cycle,"                   \
	" (SELECT max(number) FROM cycles WHERE target_id = ?1) AS last_cycle,"                    \
	" l.workload, l.block_size, l.queue_depth,"                                                \
	" (SELECT group_concat(name, ', ') FROM targets) AS names"                                 \
	" FROM targets t LEFT JOIN iterations l ON l.id = (SELECT max(id)"                         \
	"  FROM iterations WHERE target_id = ?1) WHERE t.id = ?1"

#define OLD(n, sql)                                                                                \
	static const struct query_named n = { #n " (older schema)", sql, QF_NONE, NULL, 0 }

OLD(samples_v15, SAMPLES_SQL);
OLD(cycles_v3, CYCLES_SQL(DB_MEASURE_ROW_V3("i"), DB_FILL_ROW_V3("i")));
static const struct query_named cycles_v20 = { "cycles_v20 (older schema)",
					       CYCLES_SQL(DB_MEASURE_ROW("i"), DB_FILL_ROW("i")),
					       QF_PHASE, &cycles_v3, 0 };
OLD(wear_v3, WEAR_SQL(QS_WRITTEN_NAME));
OLD(wear_marks_v3, WEAR_MARKS_SQL(QS_WRITTEN_NAME));
OLD(latency_v3, LATENCY_SQL("NULL"));
OLD(latency_trace_v3, LATENCY_TRACE_SQL("NULL AS p999, NULL AS p9999", "0"));
static const struct query_named latency_trace_v15 = {
	"latency_trace_v15 (older schema)",
	LATENCY_TRACE_SQL("lat_p999_us AS p999, lat_p9999_us AS p9999", "1"), QF_SAMPLE_P999,
	&latency_trace_v3, 0
};
/* campaign starts before cycles.campaign_first_cycle (13): the target's
 * alone, with read_percent (4), then without */
OLD(campaigns_cycles_v3, CAMPAIGN_TARGET_SQL("starts.f - 0.5", QS_WRITTEN_NAME));
OLD(campaigns_wear_v3, CAMPAIGN_TARGET_SQL("coalesce(sum(per.w), 0)", QS_WRITTEN_NAME));
OLD(campaigns_latency_v3, CAMPAIGN_TARGET_SQL("coalesce(max(per.d), 0) + 0.5", QS_WRITTEN_NAME));
#define OLDER(n, sql, fact, older)                                                                 \
	static const struct query_named n = { #n " (older schema)", sql, fact, older, 0 }
OLDER(campaigns_cycles_v12, CAMPAIGN_TARGET_SQL("starts.f - 0.5", QS_WRITTEN_PCT), QF_READ_PERCENT,
      &campaigns_cycles_v3);
OLDER(campaigns_wear_v12, CAMPAIGN_TARGET_SQL("coalesce(sum(per.w), 0)", QS_WRITTEN_PCT),
      QF_READ_PERCENT, &campaigns_wear_v3);
OLDER(campaigns_latency_v12, CAMPAIGN_TARGET_SQL("coalesce(max(per.d), 0) + 0.5", QS_WRITTEN_PCT),
      QF_READ_PERCENT, &campaigns_latency_v3);

/* clang-format off */
const struct query_named qc_queries[QC__COUNT] = {
	[QC_TARGET_PICK] = { "chart_target_pick", TARGET_PICK_SQL, QF_NONE, NULL, 0 },
	[QC_TARGET] = { "chart_target", TARGET_SQL, QF_NONE, NULL, 0 },
	[QC_SIZES] = { "chart_sizes", SIZES_SQL, QF_NONE, NULL, 0 },
	[QC_CYCLES] = { "chart_cycles", CYCLES_STORED_SQL, QF_CYCLE_STORED, &cycles_v20, 0 },
	[QC_CYCLE_ACTIONS] = { "chart_cycle_actions", CYCLE_ACTIONS_SQL, QF_NONE, NULL, 0 },
	[QC_SAMPLES] = { "chart_samples", SAMPLES_ROLLUP_SQL, QF_MINUTES,
			 &samples_v15, 0 },
	[QC_WEAR] = { "chart_wear", WEAR_SQL(QS_WRITTEN_PCT), QF_READ_PERCENT, &wear_v3, 0 },
	[QC_WEAR_MARKS] = { "chart_wear_marks", WEAR_MARKS_SQL(QS_WRITTEN_PCT), QF_READ_PERCENT,
			    &wear_marks_v3, 0 },
	[QC_LATENCY] = { "chart_latency", LATENCY_SQL("i.lat_p9999_us"),
			 QF_LAT_P9999, &latency_v3, 0 },
	[QC_LATENCY_MARKS] = { "chart_latency_marks", LATENCY_MARKS_SQL, QF_NONE, NULL, 0 },
	[QC_LATENCY_TRACE] = { "chart_latency_trace", LATENCY_TRACE_ROLLUP_SQL, QF_MINUTES,
			       &latency_trace_v15, 0 },
	[QC_CAMPAIGN_CYCLES] = { "chart_campaigns_cycles",
				 CAMPAIGN_SQL("starts.f - 0.5", QS_WRITTEN_PCT), QF_CAMPAIGN_FIRST,
				 &campaigns_cycles_v12, 0 },
	[QC_CAMPAIGN_WEAR] = { "chart_campaigns_wear",
			       CAMPAIGN_SQL("coalesce(sum(per.w), 0)", QS_WRITTEN_PCT),
			       QF_CAMPAIGN_FIRST, &campaigns_wear_v12, 0 },
	[QC_CAMPAIGN_LATENCY] = { "chart_campaigns_latency",
				  CAMPAIGN_SQL("coalesce(max(per.d), 0) + 0.5", QS_WRITTEN_PCT),
				  QF_CAMPAIGN_FIRST, &campaigns_latency_v12, 0 },
};
/* clang-format on */

enum qc_id qc_samples_source(int latency, double span_s)
{
	(void)span_s; /* one table of samples so far */
	return latency ? QC_LATENCY_TRACE : QC_SAMPLES;
}
