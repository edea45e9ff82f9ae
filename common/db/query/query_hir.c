/* query_hir: the host idle recovery of a target's cycles (table
 * hir_bursts, schema 22; daemon/hir.c writes it), for wearmon show and the
 * report's recovery chart. Reads by target and cycle through the index
 * hir_bursts_target. */
#include "db/query/query.h"

#include "db/query/query_int.h"
#include "db/query/query_sql.h"

#define HIR_FROM(kind)                                                                             \
	" FROM hir_bursts h JOIN cycles c ON c.id = h.cycle_id"                                    \
	" WHERE h.target_id = ?1 AND h.kind = '" kind "'" QS_SCOPE("c.number")

/* per wait state; the return to baseline that followed it joined */
#define STATES_SQL                                                                                  \
	"SELECT c.number AS cycle, h.cycle_id, h.wait_state, max(h.wait_seconds) AS wait_seconds,"  \
	" count(*) AS bursts,"                                                                      \
	" CASE WHEN sum(h.seconds) > 0 THEN sum(h.bytes) / 1048576.0 / sum(h.seconds) END"          \
	" AS mibps, min(h.mibps) AS mibps_min, max(h.mibps) AS mibps_max,"                          \
	" CASE WHEN sum(h.seconds) > 0 THEN sum(h.ops) / sum(h.seconds) END AS iops,"               \
	" sum(h.lat_mean_us * h.ops) / sum(h.ops) AS lat_mean_us, max(h.lat_p99_us) AS lat_p99_us," \
	" sum(h.device_host_bytes) AS host_bytes, sum(h.device_media_bytes) AS media_bytes,"        \
	" CASE WHEN count(h.device_host_bytes) = count(*)"                                          \
	" AND count(h.device_media_bytes) = count(*) AND sum(h.device_host_bytes) > 0"              \
	" THEN 1.0 * sum(h.device_media_bytes) / sum(h.device_host_bytes) END AS device_wa,"        \
	" max(h.device_peak_temp_c) AS peak_temp_c, max(b.mibps) AS baseline_mibps"                 \
	" FROM hir_bursts h JOIN cycles c ON c.id = h.cycle_id"                                     \
	" LEFT JOIN hir_bursts b ON b.cycle_id = h.cycle_id AND b.kind = 'baseline'"                \
	" AND b.wait_state = h.wait_state AND b.repetition = 1"                                     \
	" WHERE h.target_id = ?1 AND h.kind = 'burst'" QS_SCOPE(                                    \
		"c.number") " GROUP BY h.cycle_id, h.wait_state ORDER BY c.number, h.wait_state"

#define PRECONDITIONS_SQL                                                                          \
	"SELECT c.number AS cycle, h.cycle_id, count(*) AS rounds, min(h.mibps) AS mibps_min,"     \
	" max(h.mibps) AS mibps_max, max(h.steady) AS steady" HIR_FROM(                            \
		"precondition") " GROUP BY h.cycle_id ORDER BY c.number"

/* clang-format off */
const struct query_named query_hir_queries[QHIR__COUNT] = {
	/* a schema without the table has no such rows */
	[QHIR_STATES] = { "hir: bursts per wait state", STATES_SQL, QF_HIR, NULL, 1 },
	[QHIR_PRECONDITIONS] = { "hir: preconditions", PRECONDITIONS_SQL, QF_HIR, NULL, 1 },
};
/* clang-format on */

int query_hir_states(struct db *db, int64_t target_id, int64_t lo, int64_t hi,
		     const struct query_sink *s)
{
	return query_named_sink(db, NULL, &query_hir_queries[QHIR_STATES],
				QS_PARAMS(QS_INT(target_id), QS_INT(lo), QS_INT(hi)), s);
}

int query_hir_preconditions(struct db *db, int64_t target_id, int64_t lo, int64_t hi,
			    const struct query_sink *s)
{
	return query_named_sink(db, NULL, &query_hir_queries[QHIR_PRECONDITIONS],
				QS_PARAMS(QS_INT(target_id), QS_INT(lo), QS_INT(hi)), s);
}
