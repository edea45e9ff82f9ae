/* db_schema_sql: the SQL fragments that the migration scripts
 * (db_migrations.c) and the statements that finish a schema change on a
 * live file (db_schema.c) are both built from, so each is written once.
 * Only db_migrations.c and db_schema.c include it. */
#ifndef WEARMON_DB_SCHEMA_SQL_H
#define WEARMON_DB_SCHEMA_SQL_H

/* The baseline of each iteration that has one: the row its
 * baseline_iteration_id names (chosen by alert_baseline_of when it started,
 * the one its alerts compared with), that row's MiB/s and cycle. The one
 * definition of it: the view iteration_baseline of migration 14, which the
 * CLI reads (and the degradation view until migration 18, which joins the
 * row by the same id and reads the ratio stored with the iteration), and
 * the same view made TEMP for a reader of a database from schema 9 to 13.
 * Released text: a change needs a new migration. */
#define ITERATION_BASELINE_14                                                                      \
	"  SELECT i.id AS iteration_id, b.id AS baseline_iteration_id,\n"                          \
	"         b.number AS baseline_iteration, b.mibps_avg AS baseline_mibps,\n"                \
	"         bc.number AS baseline_cycle\n"                                                   \
	"  FROM iterations i\n"                                                                    \
	"  JOIN iterations b ON b.id = i.baseline_iteration_id\n"                                  \
	"  JOIN cycles bc ON bc.id = b.cycle_id"

/* Before schema 9 no row stored its baseline: readers (which never
 * migrate) choose the one migration 9 stores, the "first" rule with the
 * cycles before the current campaign as one earlier campaign. */
#define ITERATION_BASELINE_BEFORE_9                                                                \
	"  SELECT i.id AS iteration_id, b.id AS baseline_iteration_id,\n"                          \
	"         b.number AS baseline_iteration, b.mibps_avg AS baseline_mibps,\n"                \
	"         bc.number AS baseline_cycle\n"                                                   \
	"  FROM iterations i\n"                                                                    \
	"  JOIN iterations b ON b.id = (SELECT y.id FROM iterations y\n"                           \
	"    JOIN cycles yc ON yc.id = y.cycle_id\n"                                               \
	"    JOIN targets yt ON yt.id = y.target_id\n"                                             \
	"    JOIN cycles ic ON ic.id = i.cycle_id\n"                                               \
	"    WHERE y.target_id = i.target_id AND y.size_bytes = i.size_bytes\n"                    \
	"      AND y.workload = i.workload AND y.block_size = i.block_size\n"                      \
	"      AND y.id < i.id AND y.status = 'done' AND y.mibps_avg > 0\n"                        \
	"      AND (yc.number >= yt.campaign_first_cycle)\n"                                       \
	"        = (ic.number >= yt.campaign_first_cycle)\n"                                       \
	"    ORDER BY yc.number, y.id LIMIT 1)\n"                                                  \
	"  JOIN cycles bc ON bc.id = b.cycle_id"

/* Schema 16 stores a sample as integers (sample_data): the phase as 0
 * (fill) or 1 (measure), its length, stalled time and latencies in
 * nanoseconds, bytes and operations; the rates follow from them, computed
 * as the engine computes them (common/io/engine.c, make_sample), so that
 * the view samples shows the figures and units of schema 15. mibps and
 * iops are stored only for a row whose bytes, operations or length are
 * unknown (rows from before schema 10). Released text: a change needs a
 * new migration. */
#define SAMPLE_MIBPS_16(d)                                                                         \
	"CASE WHEN " d ".bytes IS NULL OR " d ".duration_ns IS NULL THEN " d ".mibps"              \
	" WHEN " d ".duration_ns > 0 THEN " d ".bytes / 1048576.0 / (" d ".duration_ns / 1e9)"     \
	" ELSE 0.0 END"
#define SAMPLE_IOPS_16(d)                                                                          \
	"CASE WHEN " d ".ops IS NULL OR " d ".duration_ns IS NULL THEN " d ".iops"                 \
	" WHEN " d ".duration_ns > 0 THEN " d ".ops / (" d ".duration_ns / 1e9)"                   \
	" ELSE 0.0 END"
#define SAMPLE_PHASE_16(d) "CASE " d ".phase WHEN 0 THEN 'fill' ELSE 'measure' END"

/* The columns of schema 15's samples table, in its order, from sample_data. */
#define SAMPLES_VIEW_16                                                                                                               \
	"  SELECT d.iteration_id, " SAMPLE_PHASE_16(                                                                                  \
		"d") " AS phase, d.t_ms,\n"                                                                                           \
		     "         " SAMPLE_MIBPS_16(                                                                                     \
			     "d") " AS mibps,\n"                                                                                      \
				  "         " SAMPLE_IOPS_16(                                                                         \
					  "d") " AS iops,\n"                                                                          \
					       "         d.lat_p50_ns / 1e3 AS lat_p50_us, d.lat_p99_ns / 1e3 AS lat_p99_us,\n"       \
					       "         d.lat_max_ns / 1e3 AS lat_max_us, d.lat_p90_ns / 1e3 AS lat_p90_us,\n"       \
					       "         d.lat_p999_ns / 1e3 AS lat_p999_us, d.lat_p9999_ns / 1e3 AS lat_p9999_us,\n" \
					       "         d.mibps_min_1s, d.duration_ns / 1e6 AS duration_ms, d.bytes,\n"              \
					       "         d.host_stall_ns / 1e6 AS host_stall_ms\n"                                    \
					       "  FROM sample_data d"

/* The same columns from the table of schema 15 (renamed samples_v15 by
 * migration 16 until db_samples_migrate has moved its rows). */
#define SAMPLES_LEGACY_16                                                                          \
	"  SELECT iteration_id, phase, t_ms, mibps, iops, lat_p50_us, lat_p99_us,\n"               \
	"         lat_max_us, lat_p90_us, lat_p999_us, lat_p9999_us, mibps_min_1s,\n"              \
	"         duration_ms, bytes, host_stall_ms\n"                                             \
	"  FROM samples_v15"

/* A row in schema 15's columns and units (x) as the values of sample_data's
 * columns, in SAMPLE_DATA_COLS_16's order: exact for what the engine
 * wrote (integers behind every REAL), rounded to the nanosecond else. */
#define SAMPLE_DATA_COLS_16                                                                        \
	"iteration_id, phase, t_ms, duration_ns, bytes, ops, lat_p50_ns, lat_p90_ns,"              \
	" lat_p99_ns, lat_p999_ns, lat_p9999_ns, lat_max_ns, host_stall_ns, mibps_min_1s,"         \
	" mibps, iops"
#define NS_16(x, col, f) "CAST(round(" x "." col " * " f ") AS INTEGER)"
#define SAMPLE_FROM_15(x) x ".iteration_id, " SAMPLE_FROM_15_REST(x)
#define SAMPLE_FROM_15_REST(x)                                                                                    \
	"CASE " x ".phase WHEN 'fill' THEN 0 WHEN 'measure' THEN 1 END,"                                          \
	" " x ".t_ms, " NS_16(                                                                                    \
		x, "duration_ms",                                                                                 \
		"1e6") ", " x ".bytes,"                                                                           \
		       " CASE WHEN " x ".duration_ms >= 0 THEN"                                                   \
		       " CAST(round(" x ".iops * " x ".duration_ms / 1e3) AS INTEGER) END,"                       \
		       " " NS_16(x, "lat_p50_us", "1e3") ", " NS_16(                                              \
			       x, "lat_p90_us",                                                                   \
			       "1e3") ","                                                                         \
				      " " NS_16(x, "lat_p99_us", "1e3") ", " NS_16(                               \
					      x, "lat_p999_us",                                                   \
					      "1e3") ","                                                          \
						     " " NS_16(x, "lat_p9999_us", "1e3") ", " NS_16(              \
							     x, "lat_max_us",                                     \
							     "1e3") ","                                           \
								    " " NS_16(                                    \
									    x, "host_stall_ms",                   \
									    "1e6") ", " x                         \
										   ".mibps_min_1s,"               \
										   " CASE WHEN " x                \
										   ".bytes IS NULL OR " x         \
										   ".duration_ms IS NULL THEN " x \
										   ".mibps END,"                  \
										   " CASE WHEN " x                \
										   ".duration_ms IS NULL THEN " x \
										   ".iops END"

/* Writes through the view: an INSERT in schema 15's columns is stored
 * converted, a DELETE removes the row wherever it is. */
#define SAMPLES_TRIGGERS_16(legacy_delete)                                                                                   \
	"CREATE TRIGGER samples_insert INSTEAD OF INSERT ON samples BEGIN\n"                                                 \
	"  INSERT INTO sample_data (" SAMPLE_DATA_COLS_16 ")\n"                                                              \
	"  VALUES (" SAMPLE_FROM_15(                                                                                         \
		"NEW") ");\n"                                                                                                \
		       "END;\n"                                                                                              \
		       "CREATE TRIGGER samples_delete INSTEAD OF DELETE ON samples BEGIN\n"                                  \
		       "  DELETE FROM sample_data WHERE iteration_id = OLD.iteration_id\n"                                   \
		       "    AND phase = (CASE OLD.phase WHEN 'fill' THEN 0 ELSE 1 END) AND t_ms = OLD.t_ms;\n" legacy_delete \
		       "END;\n"
#define SAMPLES_LEGACY_DELETE_16                                                                   \
	"  DELETE FROM samples_v15 WHERE iteration_id = OLD.iteration_id\n"                        \
	"    AND phase = OLD.phase AND t_ms = OLD.t_ms;\n"

/* The per-minute rollups that replace an iteration's samples after
 * sample_retention (db_samples_rollup), in familiar units: the count of
 * samples, their length and bytes summed, the rate's min, average (by
 * time) and max, each latency percentile's highest value. */
#define SAMPLE_MINUTES_VIEW_16                                                                                 \
	"  SELECT m.iteration_id, " SAMPLE_PHASE_16(                                                           \
		"m") " AS phase, m.minute,\n"                                                                  \
		     "         m.samples, m.duration_ns / 1e6 AS duration_ms, m.bytes, m.ops,\n"               \
		     "         m.mibps_min,\n"                                                                 \
		     "         CASE WHEN m.bytes IS NULL OR m.duration_ns IS NULL THEN m.mibps_avg\n"          \
		     "              WHEN m.duration_ns > 0 THEN m.bytes / 1048576.0 / (m.duration_ns / 1e9)\n" \
		     "              ELSE 0.0 END AS mibps_avg,\n"                                              \
		     "         m.mibps_max,\n"                                                                 \
		     "         CASE WHEN m.ops IS NULL OR m.duration_ns IS NULL THEN m.iops_avg\n"             \
		     "              WHEN m.duration_ns > 0 THEN m.ops / (m.duration_ns / 1e9)\n"               \
		     "              ELSE 0.0 END AS iops_avg,\n"                                               \
		     "         m.lat_p50_ns / 1e3 AS lat_p50_us, m.lat_p90_ns / 1e3 AS lat_p90_us,\n"          \
		     "         m.lat_p99_ns / 1e3 AS lat_p99_us, m.lat_p999_ns / 1e3 AS lat_p999_us,\n"        \
		     "         m.lat_p9999_ns / 1e3 AS lat_p9999_us, m.lat_max_ns / 1e3 AS lat_max_us,\n"      \
		     "         m.host_stall_ns / 1e6 AS host_stall_ms\n"                                       \
		     "  FROM sample_minute_data m"

#endif
