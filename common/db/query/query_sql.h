/* query_sql: SQL fragments that the named queries of common/db/query/
 * share (only their .c files include it). */
#ifndef WEARMON_QUERY_SQL_H
#define WEARMON_QUERY_SQL_H

/* An array of parameters (struct db_value) and its length. */
#define QS_PARAMS(...)                                                                             \
	(struct db_value[]){ __VA_ARGS__ },                                                        \
		(int)(sizeof((struct db_value[]){ __VA_ARGS__ }) / sizeof(struct db_value))
#define QS_INT(v) ((struct db_value){ .type = DB_INT, .i = (v) })

/* Cycle numbers ?2..?3 (a report's campaign; 0..INT64_MAX: all). */
#define QS_SCOPE(number) " AND " number " BETWEEN ?2 AND ?3"

/* Host bytes iteration i wrote: its fill, plus what its workload wrote: by
 * read_percent where the schema has it (4), else by the name. */
#define QS_WRITTEN_BY_NAME                                                                         \
	"CASE WHEN i.workload = 'fill' OR i.workload LIKE '%write%'"                               \
	" THEN 1.0 ELSE 0.0 END"
#define QS_WRITTEN_PCT                                                                             \
	"coalesce(i.fill_bytes, 0) + coalesce(i.bytes, 0) * coalesce((100 - i.read_percent)"       \
	" / 100.0, " QS_WRITTEN_BY_NAME ")"
#define QS_WRITTEN_NAME "coalesce(i.fill_bytes, 0) + coalesce(i.bytes, 0) * " QS_WRITTEN_BY_NAME

/* How an iteration i finds its baseline (query_baseline_of): by the row
 * its baseline_iteration_id names (fact QF_BASELINE_ROW; two LEFT JOINs
 * give what the view's inner joins give: a baseline row whose cycle is
 * missing counts as none), or before that through the reader's TEMP view
 * iteration_baseline (db_open). */
#define QS_BASE_KEY_MIBPS "CASE WHEN bc.id IS NOT NULL THEN bi.mibps_avg END"
#define QS_BASE_KEY_CYCLE "bc.number"
#define QS_BASE_KEY_JOIN                                                                           \
	" LEFT JOIN iterations bi ON bi.id = i.baseline_iteration_id"                              \
	" LEFT JOIN cycles bc ON bc.id = bi.cycle_id"
#define QS_BASE_VIEW_MIBPS "b.baseline_mibps"
#define QS_BASE_VIEW_CYCLE "b.baseline_cycle"
#define QS_BASE_VIEW_JOIN " LEFT JOIN iteration_baseline b ON b.iteration_id = i.id"

/* The plan of iteration i's cycle c, which status and show count "size 2
 * of 3" and "cycle 2 of 5" from: the sizes and cycles the cycle was
 * started with (cycles.nsizes, cycles_planned: fact QF_CYCLE_PLAN, schema
 * 19), else as the daemon published them for that cycle (progress: fact
 * QF_PROGRESS_PLAN), else (sizes only) the sizes the target's rows
 * reached. Each fact's schema has the next one's. */
#define QS_ROWS_NSIZES "(SELECT max(size_index) + 1 FROM iterations WHERE target_id = i.target_id)"
#define QS_PROGRESS_PLAN(col)                                                                      \
	"(SELECT " col " FROM progress p WHERE p.target_id = i.target_id AND p.cycle = c.number)"
#define QS_PLAN_NSIZES_CYCLE                                                                       \
	"coalesce(c.nsizes, " QS_PROGRESS_PLAN("nsizes") ", " QS_ROWS_NSIZES ")"
#define QS_PLAN_NSIZES_PROGRESS "coalesce(" QS_PROGRESS_PLAN("nsizes") ", " QS_ROWS_NSIZES ")"
#define QS_PLAN_CYCLES_CYCLE "coalesce(c.cycles_planned, " QS_PROGRESS_PLAN("cycles") ")"
#define QS_PLAN_CYCLES_PROGRESS QS_PROGRESS_PLAN("cycles")

/* The evidence a crash or collapse alert stored (event e, daemon/alert.c's
 * evidence_text): what show and the report print of it, so both read the
 * same members. Alerts before schema 20 carry none (fact QF_DEVICE). */
#define QS_EVIDENCE_KINDS "('throughput-crash', 'throughput-collapse')"
#define QS_EVIDENCE_COLS                                                                           \
	"e.id AS event_id, e.at, e.kind, e.iteration_id,"                                          \
	" json_extract(e.data, '$.cause') AS cause,"                                               \
	" json_extract(e.data, '$.device_wa') AS device_wa,"                                       \
	" json_extract(e.data, '$.baseline_device_wa') AS baseline_device_wa,"                     \
	" json_extract(e.data, '$.throttle_seconds') AS throttle_seconds,"                         \
	" json_extract(e.data, '$.peak_temp_c') AS peak_temp_c,"                                   \
	" json_extract(e.data, '$.host_stall_seconds') AS host_stall_seconds"

#endif
