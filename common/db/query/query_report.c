/* query_report: the SQL of the report, in one place (the CLI files hold
 * none). */
#include "db/query/query_report.h"

#include "db/query/query_sql.h"
#include "db/db_views.h"

#define TARGET_SQL                                                                                 \
	"SELECT t.*, (SELECT group_concat(name, ', ')"                                             \
	" FROM targets) AS names FROM targets t WHERE ?1 IS NULL OR t.name = ?1"                   \
	" ORDER BY t.name"

/* By the first cycle each cycle recorded (schema 8), older cycles as one
 * campaign. */
#define CAMPAIGNS_SQL(first)                                                                       \
	"SELECT " first " AS first, min(number) AS lo, max(number) AS hi"                          \
	" FROM cycles WHERE target_id = ?1 GROUP BY 1 ORDER BY 2"

/* Every row of the target with its baseline (the row baseline_iteration_id
 * names) and the host bytes written by its end (whole history, as the wear
 * chart counts them), kept to the campaign after the running sum. */
#define ITERATIONS_SQL(p9999, written, base, join)                                                 \
	"SELECT * FROM (SELECT i.id, c.number AS cycle, i.number AS iteration,"                    \
	" i.size_bytes, i.workload, i.block_size, i.queue_depth, i.status, i.error,"               \
	" i.started_at, i.seconds, i.mibps_avg, i.mibps_min, i.mibps_max, i.iops_avg,"             \
	" i.fill_mibps, i.lat_p50_us, i.lat_p99_us, i.lat_p999_us, " p9999 " AS lat_p9999_us,"     \
	" " base ", sum(" written ") OVER (ORDER BY i.id) AS written"                              \
	" FROM iterations i JOIN cycles c ON c.id = i.cycle_id" join " WHERE i.target_id = ?1)"    \
	" WHERE cycle BETWEEN ?2 AND ?3 ORDER BY id"

#define BASE_ROW                                                                                   \
	"bi.mibps_avg AS baseline, bc.number AS baseline_cycle,"                                   \
	" i.mibps_avg / bi.mibps_avg AS ratio"
#define BASE_ROW_JOIN QS_BASE_KEY_JOIN
/* before schema 9 no row names its baseline: db_open's TEMP view chooses it */
#define BASE_VIEW                                                                                  \
	"b.baseline_mibps AS baseline, b.baseline_cycle,"                                          \
	" i.mibps_avg / b.baseline_mibps AS ratio"
#define BASE_VIEW_JOIN QS_BASE_VIEW_JOIN

/* Rows come in id order and stop at the first with 3 measured samples. */
#define FIRST_TRACED_SQL                                                                           \
	"SELECT i.id FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                         \
	" JOIN samples s ON s.iteration_id = i.id AND s.phase = 'measure'"                         \
	" WHERE i.target_id = ?1 AND i.status = 'done'" QS_SCOPE(                                  \
		"c.number") " GROUP BY i.id HAVING count(*) >= 3 ORDER BY i.id LIMIT 1"

/* The same over the per-minute rollups that replaced samples (v16): the
 * first of either. */
#define FIRST_TRACED_MINUTES_SQL                                                                   \
	"SELECT i.id FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                         \
	" JOIN sample_minutes m ON m.iteration_id = i.id AND m.phase = 'measure'"                  \
	" WHERE i.target_id = ?1 AND i.status = 'done'" QS_SCOPE(                                  \
		"c.number") " GROUP BY i.id HAVING sum(m.samples) >= 3 ORDER BY i.id LIMIT 1"
#define FIRST_TRACED_ROLLUP_SQL                                                                    \
	"SELECT min(id) AS id FROM (SELECT * FROM (" FIRST_TRACED_SQL ")"                          \
	" UNION ALL SELECT * FROM (" FIRST_TRACED_MINUTES_SQL ")) HAVING count(*) > 0"

/* The figures of every cycle from DB_CYCLE_FIGURES_SQL (common/db/db_views.h,
 * as the view cycle_summary and the cycles chart; stored per cycle from
 * schema 21), the counts and the ratio to baseline from its rows. */
#define CYCLES_FIGS_SQL(ratio, join, m, figs, figjoin)                                             \
	"SELECT c.id, c.number AS cycle, c.status, c.started_at,"                                  \
	" c.ended_at, c.action, c.action_outcome, c.action_seconds, c.action_bytes,"               \
	" c.action_error, sum(i.status = 'done') AS done,"                                         \
	" sum(i.status IN ('interrupted', 'failed')) AS cut, " figs ","                            \
	" avg(CASE WHEN i.status = 'done' AND " m " THEN i.mibps_avg / " ratio " END) AS ratio"    \
	" FROM cycles c LEFT JOIN iterations i ON i.cycle_id = c.id" join figjoin                  \
	" WHERE c.target_id = ?1 AND c.number BETWEEN ?2 AND ?3"                                   \
	" GROUP BY c.id ORDER BY c.number"
/* before schema 21: the figures computed from the target's rows */
#define CYCLES_SQL(ratio, join, m, fl)                                                             \
	CYCLES_FIGS_SQL(ratio, join, m,                                                            \
			"f.lo, f.mean, f.hi, f.sizes, f.fill_mean, NULL AS nsizes",                \
			" LEFT JOIN (" DB_CYCLE_FIGURES_SQL(                                       \
				m, fl, " AND i.target_id = ?1") ") f"                              \
								"  ON f.cycle_id = c.id")
/* from schema 21: the figures stored per cycle (DB_CYCLE_STORE_SQL); sizes
 * NULL, as computed, for a cycle without a done row */
#define CYCLES_STORED_SQL(ratio, join)                                                             \
	CYCLES_FIGS_SQL(ratio, join, DB_MEASURE_ROW("i"),                                          \
			"c.mibps_min AS lo, c.mibps_avg AS mean, c.mibps_max AS hi,"               \
			" CASE WHEN c.done_iterations > 0 THEN c.sizes END AS sizes,"              \
			" c.fill_mibps_avg AS fill_mean, c.nsizes",                                \
			"")

/* Over all the snapshots' deltas from schema 9, else the last figure the
 * drive reported. */
#define WRITE_AMP_SQL                                                                              \
	"SELECT sum(h.nand_bytes_delta) * 1.0 / sum(h.host_bytes_delta) AS wa"                     \
	" FROM health h JOIN cycles c ON c.id = h.cycle_id WHERE h.target_id = ?1"                 \
	" AND c.number BETWEEN ?2 AND ?3 AND h.nand_bytes_delta IS NOT NULL"                       \
	" AND h.host_bytes_delta IS NOT NULL"
#define WRITE_AMP_ALT                                                                              \
	"SELECT (SELECT h.write_amplification FROM health h JOIN cycles c ON c.id = h.cycle_id"    \
	" WHERE h.target_id = ?1 AND c.number BETWEEN ?2 AND ?3 AND"                               \
	" h.write_amplification IS NOT NULL ORDER BY h.at DESC LIMIT 1) AS wa"

/* Alerts by severity; steady-state phases (zeros before schema 5). */
#define ALERT_COUNTS_SQL(phases)                                                                   \
	"SELECT (SELECT count(*) FROM events e JOIN cycles c ON c.id = e.cycle_id"                 \
	"  WHERE e.target_id = ?1 AND c.number BETWEEN ?2 AND ?3 AND"                              \
	"  e.severity IN ('emerg', 'alert', 'crit', 'err')) AS bad,"                               \
	" (SELECT count(*) FROM events e JOIN cycles c ON c.id = e.cycle_id"                       \
	"  WHERE e.target_id = ?1 AND c.number BETWEEN ?2 AND ?3 AND"                              \
	"  e.severity = 'warning') AS warn,"                                                       \
	" (SELECT count(*) FROM events e JOIN cycles c ON c.id = e.cycle_id"                       \
	"  WHERE e.target_id = ?1 AND c.number BETWEEN ?2 AND ?3 AND"                              \
	"  e.severity = 'notice') AS notice, " phases
#define PHASES_SQL                                                                                 \
	"(SELECT count(*) FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                    \
	" WHERE i.target_id = ?1 AND c.number BETWEEN ?2 AND ?3 AND"                               \
	" i.steady_reached IS NOT NULL) AS phases, (SELECT count(*) FROM iterations i"             \
	" JOIN cycles c ON c.id = i.cycle_id WHERE i.target_id = ?1 AND c.number"                  \
	" BETWEEN ?2 AND ?3 AND i.steady_reached = 1) AS steady"

#define REGION_SQL                                                                                 \
	"SELECT w.region_bytes, w.op_configured,"                                                  \
	" min(w.op_effective) AS op_min, max(w.op_effective) AS op_max"                            \
	" FROM wear w JOIN iterations i ON i.id = w.iteration_id"                                  \
	" JOIN cycles c ON c.id = i.cycle_id WHERE i.target_id = ?1"                               \
	" AND c.number BETWEEN ?2 AND ?3"

#define HEALTH_SQL                                                                                 \
	"SELECT h.*, c.number AS cycle FROM health h JOIN cycles c ON"                             \
	" c.id = h.cycle_id WHERE h.target_id = ?1 AND c.number BETWEEN ?2"                        \
	" AND ?3 AND h.id IN ((SELECT min(x.id) FROM health x JOIN cycles y"                       \
	" ON y.id = x.cycle_id WHERE x.target_id = ?1 AND y.number BETWEEN ?2"                     \
	" AND ?3), (SELECT max(x.id) FROM health x JOIN cycles y ON"                               \
	" y.id = x.cycle_id WHERE x.target_id = ?1 AND y.number BETWEEN ?2"                        \
	" AND ?3)) ORDER BY h.id"

#define RUNS_SQL(cols)                                                                             \
	"SELECT r.id, r.started_at, r.ended_at, r.version,"                                        \
	" r.hostname, r.config_path, r.exit_reason, " cols " FROM runs r WHERE r.id IN"            \
	" (SELECT i.run_id FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                   \
	"  WHERE i.target_id = ?1 AND c.number BETWEEN ?2 AND ?3 UNION"                            \
	"  SELECT c.run_id FROM cycles c WHERE c.target_id = ?1 AND c.number"                      \
	"  BETWEEN ?2 AND ?3) ORDER BY r.id"

#define STEADY_SQL                                                                                 \
	"SELECT i.id, c.number AS cycle, i.size_bytes,"                                            \
	" i.workload, i.round_index, i.steady_reached, i.steady_round,"                            \
	" i.steady_mean_mibps, i.steady_range_pct, i.steady_excursion_pct"                         \
	" FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                                    \
	" WHERE i.target_id = ?1 AND c.number BETWEEN ?2 AND ?3 AND"                               \
	" i.steady_reached IS NOT NULL ORDER BY i.id"
/* before schema 5 no phase was measured in rounds */
#define STEADY_ALT "SELECT NULL AS id WHERE ?1 IS NULL AND ?2 IS NULL AND ?3 IS NULL AND 0"

/* The done rows of the verdict row's cycle, size and workload since the
 * last round 1 before it: the rounds of one series, those done before a
 * restart included (a resume continues the round that was cut, and the
 * window counts the rounds before it, wearmond(8)); v is the verdict row,
 * read once. */
#define STEADY_ROUNDS_SQL                                                                          \
	"WITH v AS (SELECT cycle_id, size_index, workload FROM iterations WHERE id = ?1)"          \
	" SELECT i.round_index, i.mibps_avg FROM v JOIN iterations i ON i.cycle_id = v.cycle_id"   \
	" WHERE i.size_index = v.size_index AND i.workload = v.workload AND"                       \
	" i.round_index IS NOT NULL AND i.status = 'done' AND i.id <= ?1 AND"                      \
	" i.id >= coalesce((SELECT max(p.id) FROM iterations p, v w WHERE p.cycle_id ="            \
	" w.cycle_id AND p.size_index = w.size_index AND p.workload = w.workload AND"              \
	" p.round_index = 1 AND p.status = 'done' AND p.id <= ?1), 0) ORDER BY i.id"

#define EVENTS_SQL                                                                                 \
	"SELECT e.at, e.severity, e.kind, c.number AS cycle,"                                      \
	" e.message FROM events e LEFT JOIN cycles c ON c.id = e.cycle_id"                         \
	" WHERE e.target_id = ?1 AND ((c.number BETWEEN ?2 AND ?3) OR"                             \
	" (e.cycle_id IS NULL AND e.at >= (SELECT min(started_at) FROM cycles"                     \
	"  WHERE target_id = ?1 AND number BETWEEN ?2 AND ?3) AND e.at <="                         \
	"  coalesce((SELECT min(started_at) FROM cycles WHERE target_id = ?1"                      \
	"  AND number > ?3), '9999')))"                                                            \
	" AND e.severity != 'debug' ORDER BY e.at, e.id"

/* The 1-second samples, or the per-minute rollups that replaced them
 * (rate: the minute's average; latencies: its highest). */
#define SAMPLES_ROLLUP_SQL                                                                         \
	"SELECT * FROM (SELECT phase, t_ms, mibps, iops, lat_p50_us, lat_p99_us, lat_p999_us,"     \
	" lat_p9999_us, NULL AS mibps_min, NULL AS mibps_max, bytes,"                              \
	" '" QC_POINT_SAMPLE "' AS point FROM samples WHERE iteration_id = ?1"                     \
	" UNION ALL SELECT phase, (minute + 1) * 60000, mibps_avg, iops_avg, lat_p50_us,"          \
	" lat_p99_us, lat_p999_us, lat_p9999_us, mibps_min, mibps_max, bytes,"                     \
	" '" QC_POINT_MINUTE "'"                                                                   \
	" FROM sample_minutes WHERE iteration_id = ?1"                                             \
	" AND NOT EXISTS (SELECT 1 FROM samples WHERE iteration_id = ?1))"                         \
	" ORDER BY phase = 'measure', t_ms"

#define SAMPLES_SQL(cols)                                                                          \
	"SELECT phase, t_ms, mibps, iops, lat_p50_us, lat_p99_us, " cols                           \
	" FROM samples WHERE iteration_id = ?1 ORDER BY phase = 'measure', t_ms"

/* The drive's own figures of every row that has any (schema 20). */
#define DEVICE_SQL                                                                                        \
	"SELECT i.id, c.number AS cycle, i.number AS iteration, i.size_bytes, i.workload,"                \
	" i.mibps_avg, i.device_host_bytes, i.device_media_bytes, i.device_wa,"                           \
	" i.device_peak_temp_c, i.device_throttle_seconds, i.device_media_errors,"                        \
	" i.device_spare_pct FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                        \
	" WHERE i.target_id = ?1" QS_SCOPE(                                                               \
		"c.number") " AND (i.device_wa IS NOT NULL OR"                                            \
			    " i.device_peak_temp_c IS NOT NULL OR i.device_throttle_seconds IS NOT NULL)" \
			    " ORDER BY i.id"

/* The cause and evidence of every crash and collapse alert (schema 20),
 * as show reads them (QS_EVIDENCE_COLS). */
#define CAUSES_SQL                                                                                 \
	"SELECT " QS_EVIDENCE_COLS ", c.number AS cycle, i.number AS iteration"                    \
	" FROM events e JOIN cycles c ON c.id = e.cycle_id"                                        \
	" LEFT JOIN iterations i ON i.id = e.iteration_id"                                         \
	" WHERE e.target_id = ?1" QS_SCOPE(                                                        \
		"c.number") " AND e.kind IN " QS_EVIDENCE_KINDS                                    \
			    " AND json_valid(e.data) ORDER BY e.at, e.id"

#define OLD(n, sql, fact, older)                                                                   \
	static const struct query_named n = { #n " (older schema)", sql, fact, older, 0 }

OLD(campaigns_v7, CAMPAIGNS_SQL("1"), QF_NONE, NULL);
/* before lat_p9999_us and read_percent (4), then before baseline_iteration_id (9) */
OLD(iterations_v3, ITERATIONS_SQL("NULL", QS_WRITTEN_NAME, BASE_VIEW, BASE_VIEW_JOIN), QF_NONE,
    NULL);
OLD(iterations_v8, ITERATIONS_SQL("i.lat_p9999_us", QS_WRITTEN_PCT, BASE_VIEW, BASE_VIEW_JOIN),
    QF_READ_PERCENT, &iterations_v3);
/* the cycles before schema 4 (no phase of the size), then before 9 */
OLD(cycles_v3,
    CYCLES_SQL("b.baseline_mibps", BASE_VIEW_JOIN, DB_MEASURE_ROW_V3("i"), DB_FILL_ROW_V3("i")),
    QF_NONE, NULL);
OLD(cycles_v8,
    CYCLES_SQL("b.baseline_mibps", BASE_VIEW_JOIN, DB_MEASURE_ROW("i"), DB_FILL_ROW("i")), QF_PHASE,
    &cycles_v3);
OLD(cycles_v20, CYCLES_SQL("bi.mibps_avg", BASE_ROW_JOIN, DB_MEASURE_ROW("i"), DB_FILL_ROW("i")),
    QF_BASELINE_ROW, &cycles_v8);
OLD(write_amp_v8, WRITE_AMP_ALT, QF_NONE, NULL);
OLD(alert_counts_v4, ALERT_COUNTS_SQL("0 AS phases, 0 AS steady"), QF_NONE, NULL);
OLD(runs_v12, RUNS_SQL("NULL AS kernel, NULL AS config"), QF_NONE, NULL);
OLD(steady_v4, STEADY_ALT, QF_NONE, NULL);
OLD(first_traced_v15, FIRST_TRACED_SQL, QF_NONE, NULL);
OLD(samples_v3, SAMPLES_SQL("NULL AS lat_p999_us, NULL AS lat_p9999_us"), QF_NONE, NULL);
OLD(samples_v15, SAMPLES_SQL("lat_p999_us, lat_p9999_us"), QF_SAMPLE_P9999, &samples_v3);

/* clang-format off */
const struct query_named qr_queries[QR__COUNT] = {
	[QR_TARGET] = { "report_target", TARGET_SQL, QF_NONE, NULL, 0 },
	[QR_CAMPAIGNS] = { "report_campaigns",
			   CAMPAIGNS_SQL("coalesce(campaign_first_cycle, (SELECT min(number)"
					 " FROM cycles WHERE target_id = ?1))"),
			   QF_CAMPAIGN_FIRST, &campaigns_v7, 0 },
	[QR_ITERATIONS] = { "report_iterations",
			    ITERATIONS_SQL("i.lat_p9999_us", QS_WRITTEN_PCT, BASE_ROW,
					   BASE_ROW_JOIN),
			    QF_BASELINE_ROW, &iterations_v8, 0 },
	[QR_FIRST_TRACED] = { "report_first_traced", FIRST_TRACED_ROLLUP_SQL, QF_MINUTES,
				&first_traced_v15, 0 },
	[QR_CYCLES] = { "report_cycles", CYCLES_STORED_SQL("bi.mibps_avg", BASE_ROW_JOIN),
			QF_CYCLE_STORED, &cycles_v20, 0 },
	[QR_WRITE_AMP] = { "report_write_amplification", WRITE_AMP_SQL,
			   QF_NAND_DELTA, &write_amp_v8, 0 },
	[QR_ALERT_COUNTS] = { "report_alert_counts", ALERT_COUNTS_SQL(PHASES_SQL),
			      QF_STEADY, &alert_counts_v4, 0 },
	[QR_REGION] = { "report_region", REGION_SQL, QF_NONE, NULL, 0 },
	[QR_HEALTH] = { "report_health", HEALTH_SQL, QF_NONE, NULL, 0 },
	[QR_RUNS] = { "report_runs", RUNS_SQL("r.kernel, r.config"), QF_RUN_CONFIG,
		      &runs_v12, 0 },
	[QR_STEADY] = { "report_steady", STEADY_SQL, QF_STEADY,
			&steady_v4, 0 },
	[QR_STEADY_ROUNDS] = { "report_steady_rounds", STEADY_ROUNDS_SQL, QF_NONE, NULL, 0 },
	[QR_EVENTS] = { "report_events", EVENTS_SQL, QF_NONE, NULL, 0 },
	[QR_SAMPLES] = { "report_samples", SAMPLES_ROLLUP_SQL, QF_MINUTES,
			 &samples_v15, 0 },
	/* before schema 20 no row or alert has any */
	[QR_DEVICE] = { "report_device_evidence", DEVICE_SQL, QF_DEVICE, NULL, 0 },
	[QR_CAUSES] = { "report_alert_causes", CAUSES_SQL, QF_DEVICE, NULL, 0 },
};
/* clang-format on */
