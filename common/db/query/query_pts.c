/* query_pts: the named queries of the report's PTS pages (?1 target, ?2..?3
 * the campaign's cycles; ?4 a test's name): the tests a campaign ran and
 * every cell of one of them (iterations.pts_*, schema 28; daemon/pts.c
 * writes them). Read through the index iterations_pts. Never writes. */
#include "db/query/query_report.h"

#include "db/query/query_sql.h"

#define PTS_FROM                                                                                   \
	" FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                                    \
	" WHERE i.target_id = ?1 AND i.pts_test IS NOT NULL" QS_SCOPE("c.number")

/* the tests of the campaign and how they ran */
#define TESTS_SQL                                                                                  \
	"SELECT i.pts_test AS test, min(i.pts_variant) AS variant,"                                \
	" count(*) AS cells, count(DISTINCT i.cycle_id) AS cycles,"                                \
	" min(c.number) AS first_cycle, max(c.number) AS last_cycle,"                              \
	" min(i.jobs) AS threads_min, max(i.jobs) AS threads,"                                     \
	" min(i.queue_depth) AS depth_min, max(i.queue_depth) AS depth,"                           \
	" min(i.pts_active_pct) AS active_pct, min(i.size_bytes) AS range_bytes,"                  \
	" min(i.region_offset) AS region_offset, min(i.compressibility) AS compressibility,"       \
	" max(i.compressibility) AS compressibility_max, max(i.dedupe_percent) AS dedupe_percent," \
	" avg(i.seconds) AS cell_seconds, max(i.fill_bytes) AS fill_bytes,"                        \
	" sum(i.status <> 'done') AS not_done" PTS_FROM " GROUP BY i.pts_test"

/* every cell of test ?4, oldest first */
#define CELLS_SQL                                                                                  \
	"SELECT c.number AS cycle, i.id, i.number, i.pts_round AS round, i.pts_cell AS cell,"      \
	" i.pts_part AS part, i.status, i.read_percent, i.random_percent, i.block_size, i.jobs,"   \
	" i.queue_depth, i.seconds, i.bytes, i.ops, i.iops_avg, i.mibps_avg, i.lat_mean_us,"       \
	" i.lat_max_us, i.lat_p99_us, i.lat_p99999_us, i.pts_tracking AS tracking,"                \
	" i.pts_ss_reached AS ss_reached, i.pts_ss_first_round AS ss_first_round,"                 \
	" i.pts_ss_mean AS ss_mean, i.pts_ss_range_pct AS ss_range_pct,"                           \
	" i.pts_ss_slope AS ss_slope, i.pts_ss_excursion_pct AS ss_excursion_pct,"                 \
	" i.pts_lat_hist AS lat_hist"                                                              \
	" FROM iterations i JOIN cycles c ON c.id = i.cycle_id"                                    \
	" WHERE i.target_id = ?1 AND i.pts_test = ?4" QS_SCOPE("c.number") " ORDER BY i.id"

/* clang-format off */
const struct query_named qpts_queries[QPTS__COUNT] = {
	/* a schema without the columns ran no test */
	[QPTS_TESTS] = { "report_pts_tests", TESTS_SQL, QF_PTS, NULL, 1 },
	[QPTS_CELLS] = { "report_pts_cells", CELLS_SQL, QF_PTS, NULL, 1 },
};
/* clang-format on */
