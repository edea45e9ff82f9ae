/* db_views: the SQL of the figures that a view and the CLI's readers
 * share, so that each is defined once (common/db/schema.md, "Views"). Only
 * .c files of common/db/ and common/db/query/ include it. */
#ifndef WEARMON_DB_VIEWS_H
#define WEARMON_DB_VIEWS_H

/* A row that measures its size's workload: `measure` (NULL in rows from
 * before schema 4); the fill measured as a phase (`fill`) and the
 * read-back (`verify`) are kept apart. */
#define DB_MEASURE_ROW(i) "(" i ".phase IS NULL OR " i ".phase = 'measure')"

/* Before schema 4 (no phase column) every row measured its size. */
#define DB_MEASURE_ROW_V3(i) "1"
#define DB_FILL_ROW_V3(i) "0"
#define DB_FILL_ROW(i) i ".phase = 'fill'"

/* One row per size of a cycle (iterations of one size_index): the lowest
 * and highest sample and the mean of the averages of its done measure rows
 * (repeats and steady-state rounds of the size count as one size; a row
 * too short for min and max counts with its average), and the mean of its
 * done `fill` rows. m and fl: DB_MEASURE_ROW and DB_FILL_ROW (or their _V3
 * forms) on alias i; `where` narrows the iterations read ("" or
 * " AND ..."). */
#define DB_CYCLE_SIZES_SQL(m, fl, where)                                                           \
	"SELECT i.cycle_id, i.size_index,"                                                         \
	" min(CASE WHEN " m " THEN coalesce(i.mibps_min, i.mibps_avg) END) AS lo,"                 \
	" avg(CASE WHEN " m " THEN i.mibps_avg END) AS mean,"                                      \
	" max(CASE WHEN " m " THEN coalesce(i.mibps_max, i.mibps_avg) END) AS hi,"                 \
	" avg(CASE WHEN " fl " THEN i.mibps_avg END) AS fill_mean"                                 \
	" FROM iterations i WHERE i.status = 'done'" where " GROUP BY i.cycle_id, i.size_index"

/* One row per cycle with done iterations: min / avg / max over its sizes
 * (every size counts once), how many sizes measured, the fill rows'
 * mean apart. The one definition of a cycle's figures: the view
 * cycle_summary, the report's "Results per cycle" and the cycles chart
 * read it. */
#define DB_CYCLE_FIGURES_SQL(m, fl, where)                                                         \
	"SELECT s.cycle_id, min(s.lo) AS lo, avg(s.mean) AS mean, max(s.hi) AS hi,"                \
	" count(s.mean) AS sizes, avg(s.fill_mean) AS fill_mean"                                   \
	" FROM (" DB_CYCLE_SIZES_SQL(m, fl, where) ") s GROUP BY s.cycle_id"

/* The schema version from which cycles store their figures and
 * iterations their ratio to baseline (common/db/db_migrations.c). */
#define DB_CYCLE_STORED_SCHEMA 21

/* A done iteration's ratio to its baseline (the row its
 * baseline_iteration_id names), as the view degradation shows it; `it`
 * names the row (NEW in a trigger). */
#define DB_ITERATION_RATIO_SQL(it)                                                                 \
	"CASE WHEN " it ".status = 'done' THEN " it ".mibps_avg / (SELECT b.mibps_avg"             \
	" FROM iterations b WHERE b.id = " it ".baseline_iteration_id) END"

/* One figure (a column of DB_CYCLE_FIGURES_SQL) of cycle `id` alone. */
#define DB_CYCLE_FIGURE(col, id)                                                                   \
	"(SELECT f." col " FROM (" DB_CYCLE_FIGURES_SQL(DB_MEASURE_ROW("i"), DB_FILL_ROW("i"),     \
							" AND i.cycle_id = " id) ") f)"

/* Stores the figures of cycle `id` (an SQL expression: NEW.cycle_id in a
 * trigger, cycles.id in the migration) in its row, from
 * DB_CYCLE_FIGURES_SQL narrowed to that cycle, with its done iterations
 * and their mean ratio to baseline (schema 21, common/db/schema.md): what
 * the view cycle_summary reads, so that it costs one row per cycle. One
 * subquery per column, not a row value: the schema stays readable by
 * sqlite3 before 3.15 (common/db/schema.md, "Schema versions"). */
/* clang-format off */
#define DB_CYCLE_DONE_SQL(agg, id)                                                                 \
	"(SELECT " agg " FROM iterations d WHERE d.cycle_id = " id " AND d.status = 'done')"
#define DB_CYCLE_SET(col, fig, id) " " col " = " DB_CYCLE_FIGURE(fig, id) ","
#define DB_CYCLE_STORE_SQL(id)                                                                     \
	"UPDATE cycles SET done_iterations = " DB_CYCLE_DONE_SQL("count(*)", id) ","               \
	DB_CYCLE_SET("mibps_min", "lo", id) DB_CYCLE_SET("mibps_avg", "mean", id)                  \
	DB_CYCLE_SET("mibps_max", "hi", id) DB_CYCLE_SET("fill_mibps_avg", "fill_mean", id)        \
	" sizes = coalesce(" DB_CYCLE_FIGURE("sizes", id) ", 0),"                                  \
	" ratio_avg = " DB_CYCLE_DONE_SQL("avg(d.ratio)", id) " WHERE id = " id
/* clang-format on */

/* The view's SELECT from schema 21: the figures stored per cycle
 * (DB_CYCLE_STORE_SQL), one row read per cycle. */
#define DB_CYCLE_SUMMARY_STORED_SQL                                                                \
	"  SELECT t.name AS target, c.number AS cycle, c.started_at, c.ended_at,\n"                \
	"         c.status, coalesce(c.done_iterations, 0) AS iterations,\n"                       \
	"         c.mibps_min, c.mibps_avg, c.mibps_max,\n"                                        \
	"         c.action, c.action_outcome, c.action_seconds, c.action_bytes,\n"                 \
	"         c.id AS cycle_id, coalesce(c.sizes, 0) AS sizes,\n"                              \
	"         c.fill_mibps_avg, c.ratio_avg\n"                                                 \
	"  FROM cycles c\n"                                                                        \
	"  JOIN targets t ON t.id = c.target_id"

/* The view's SELECT before schema 21, for a reader of an older database
 * (m, fl as above; iteration_baseline is a TEMP view before schema 14). */
#define DB_CYCLE_SUMMARY_SQL(m, fl)                                                                \
	"  SELECT t.name AS target, c.number AS cycle, c.started_at, c.ended_at,\n"                \
	"         c.status, (SELECT count(*) FROM iterations d\n"                                  \
	"           WHERE d.cycle_id = c.id AND d.status = 'done') AS iterations,\n"               \
	"         f.lo AS mibps_min, f.mean AS mibps_avg, f.hi AS mibps_max,\n"                    \
	"         c.action, c.action_outcome, c.action_seconds, c.action_bytes,\n"                 \
	"         c.id AS cycle_id, coalesce(f.sizes, 0) AS sizes,\n"                              \
	"         f.fill_mean AS fill_mibps_avg,\n"                                                \
	"         (SELECT avg(d.mibps_avg / b.baseline_mibps) FROM iterations d\n"                 \
	"           JOIN iteration_baseline b ON b.iteration_id = d.id\n"                          \
	"           WHERE d.cycle_id = c.id AND d.status = 'done') AS ratio_avg\n"                 \
	"  FROM cycles c\n"                                                                        \
	"  JOIN targets t ON t.id = c.target_id\n"                                                 \
	"  LEFT JOIN (" DB_CYCLE_FIGURES_SQL(m, fl, "") ") f ON f.cycle_id = c.id"

/* The view history's SELECT: one row per iteration in words, the drive's
 * write amplification, peak temperature and throttle time (schema 20)
 * last, next to the rate (common/db/schema.md, "history"). */
#define DB_HISTORY_SQL                                                                             \
	"  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,\n"                   \
	"         i.size_bytes, i.mibps_avg, i.mibps_min, i.mibps_max, i.iops_avg,\n"              \
	"         i.lat_p99_us, i.status, i.workload, i.block_size, i.fill_mibps,\n"               \
	"         i.started_at, i.id AS iteration_id, i.device_wa,\n"                              \
	"         i.device_peak_temp_c, i.device_throttle_seconds\n"                               \
	"  FROM iterations i\n"                                                                    \
	"  JOIN cycles c ON c.id = i.cycle_id\n"                                                   \
	"  JOIN targets t ON t.id = i.target_id"

#endif
