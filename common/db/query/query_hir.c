/* query_hir: the host idle recovery of a target's cycles (table
 * hir_bursts, schema 22; its purges, hir_purges, and the idle waits'
 * counters, schema 27; daemon/hir.c writes them), for wearmon show and
 * the report's recovery charts. Reads by target and cycle through the
 * indexes hir_bursts_target and hir_purges_target. */
#include "db/query/query.h"

#include "db/query/query_int.h"
#include "db/query/query_sql.h"

#define HIR_FROM(kind)                                                                             \
	" FROM hir_bursts h JOIN cycles c ON c.id = h.cycle_id"                                    \
	" WHERE h.target_id = ?1 AND h.kind = '" kind "'" QS_SCOPE("c.number")

/* per wait state; the return to baseline that followed it joined; the
 * idle waits' columns (IDLE_COLS) where the schema has them */
#define STATES_SQL(idle)                                                                                \
	"SELECT c.number AS cycle, h.cycle_id, h.wait_state, max(h.wait_seconds) AS wait_seconds," idle \
	" count(*) AS bursts,"                                                                          \
	" CASE WHEN sum(h.seconds) > 0 THEN sum(h.bytes) / 1048576.0 / sum(h.seconds) END"              \
	" AS mibps, min(h.mibps) AS mibps_min, max(h.mibps) AS mibps_max,"                              \
	" CASE WHEN sum(h.seconds) > 0 THEN sum(h.ops) / sum(h.seconds) END AS iops,"                   \
	" sum(h.lat_mean_us * h.ops) / sum(h.ops) AS lat_mean_us, max(h.lat_p99_us) AS lat_p99_us,"     \
	" sum(h.device_host_bytes) AS host_bytes, sum(h.device_media_bytes) AS media_bytes,"            \
	" CASE WHEN count(h.device_host_bytes) = count(*)"                                              \
	" AND count(h.device_media_bytes) = count(*) AND sum(h.device_host_bytes) > 0"                  \
	" THEN 1.0 * sum(h.device_media_bytes) / sum(h.device_host_bytes) END AS device_wa,"            \
	" max(h.device_peak_temp_c) AS peak_temp_c, max(b.mibps) AS baseline_mibps"                     \
	" FROM hir_bursts h JOIN cycles c ON c.id = h.cycle_id"                                         \
	" LEFT JOIN hir_bursts b ON b.cycle_id = h.cycle_id AND b.kind = 'baseline'"                    \
	" AND b.wait_state = h.wait_state AND b.repetition = 1"                                         \
	" WHERE h.target_id = ?1 AND h.kind = 'burst'" QS_SCOPE(                                        \
		"c.number") " GROUP BY h.cycle_id, h.wait_state ORDER BY c.number, h.wait_state"

/* The idle waits after the bursts (the PTS order), each with the media
 * bytes the drive wrote while idle: their number, idle seconds, media
 * bytes in all and per wait (over the waits that have the figure), and
 * the rate of those writes; the host bytes the drive counted meanwhile
 * (0 unless something else wrote to it). */
#define IDLE_COLS                                                                                  \
	" count(h.idle_after_seconds) AS waits, sum(h.idle_after_seconds) AS idle_seconds,"        \
	" sum(h.idle_media_bytes) AS idle_media_bytes,"                                            \
	" avg(h.idle_media_bytes) AS idle_media_per_wait,"                                         \
	" sum(h.idle_media_bytes) / 1048576.0 / sum(CASE WHEN h.idle_media_bytes IS NOT NULL"      \
	" THEN h.idle_after_seconds END) AS idle_media_mibps,"                                     \
	" sum(h.idle_host_bytes) AS idle_host_bytes,"
#define IDLE_NULLS                                                                                 \
	" NULL AS waits, NULL AS idle_seconds, NULL AS idle_media_bytes,"                          \
	" NULL AS idle_media_per_wait, NULL AS idle_media_mibps, NULL AS idle_host_bytes,"

#define PURGES_SQL                                                                                 \
	"SELECT c.number AS cycle, p.cycle_id, p.method, p.erase, p.outcome, p.started_at,"        \
	" p.seconds, p.bytes, p.note FROM hir_purges p JOIN cycles c ON c.id = p.cycle_id"         \
	" WHERE p.target_id = ?1" QS_SCOPE("c.number") " ORDER BY c.number, p.id"

#define PRECONDITIONS_SQL                                                                          \
	"SELECT c.number AS cycle, h.cycle_id, count(*) AS rounds, min(h.mibps) AS mibps_min,"     \
	" max(h.mibps) AS mibps_max, max(h.steady) AS steady" HIR_FROM(                            \
		"precondition") " GROUP BY h.cycle_id ORDER BY c.number"

/* clang-format off */
/* before schema 27: the bursts followed their waits, uncounted */
static const struct query_named states_25 = {
	"hir: bursts per wait state (schema 22)", STATES_SQL(IDLE_NULLS), QF_HIR, NULL, 1 };

const struct query_named query_hir_queries[QHIR__COUNT] = {
	/* a schema without the table has no such rows */
	[QHIR_STATES] = { "hir: bursts per wait state", STATES_SQL(IDLE_COLS), QF_HIR_IDLE,
			  &states_25, 1 },
	[QHIR_PRECONDITIONS] = { "hir: preconditions", PRECONDITIONS_SQL, QF_HIR, NULL, 1 },
	[QHIR_PURGES] = { "hir: purges", PURGES_SQL, QF_HIR_PURGE, NULL, 1 },
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

int query_hir_purges(struct db *db, int64_t target_id, int64_t lo, int64_t hi,
		     const struct query_sink *s)
{
	return query_named_sink(db, NULL, &query_hir_queries[QHIR_PURGES],
				QS_PARAMS(QS_INT(target_id), QS_INT(lo), QS_INT(hi)), s);
}
