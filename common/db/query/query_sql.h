/* query_sql: SQL fragments that the named queries of common/db/query/
 * share (only their .c files include it). */
#ifndef WEARMON_QUERY_SQL_H
#define WEARMON_QUERY_SQL_H

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

#endif
