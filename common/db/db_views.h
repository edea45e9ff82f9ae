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

/* The view's SELECT (m, fl as above). */
#define DB_CYCLE_SUMMARY_SQL(m, fl)                                                                \
	"  SELECT t.name AS target, c.number AS cycle, c.started_at, c.ended_at,\n"                \
	"         c.status, (SELECT count(*) FROM iterations d\n"                                  \
	"           WHERE d.cycle_id = c.id AND d.status = 'done') AS iterations,\n"               \
	"         f.lo AS mibps_min, f.mean AS mibps_avg, f.hi AS mibps_max,\n"                    \
	"         c.action, c.action_outcome, c.action_seconds, c.action_bytes,\n"                 \
	"         c.id AS cycle_id, coalesce(f.sizes, 0) AS sizes,\n"                              \
	"         f.fill_mean AS fill_mibps_avg\n"                                                 \
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
