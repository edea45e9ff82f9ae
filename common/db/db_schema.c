/* db_schema: the schema of the history database around its migration
 * scripts (db_migrations.c): the views a reader of an old file needs, and
 * the statements that finish moving samples on a live file
 * (common/db/schema.md documents every table and column). */
#include "db/db_int.h"
#include "db/db_schema_sql.h"

#include <errno.h>

int db_schema_reader_views(struct db *db, int version, char *err, size_t errlen)
{
	static const char *const sql[] = {
		"CREATE TEMP VIEW iteration_baseline AS\n" ITERATION_BASELINE_BEFORE_9,
		"CREATE TEMP VIEW iteration_baseline AS\n" ITERATION_BASELINE_14,
	};
	char *msg = NULL;
	int rc;

	if (version < 1 || version >= 14)
		return 0;
	rc = sqlite3_exec(db->conn, sql[version >= 9], NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		return 0;
	db_seterr(err, errlen, "database %s: cannot read schema %d: %s", db->path, version,
		  msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	return db_map_rc(rc, 0) ? db_map_rc(rc, 0) : -EIO;
}

/* clang-format off */
const char db_schema_samples_done[] =
	"DROP VIEW samples;\n"
	"DROP TABLE samples_v15;\n"
	"CREATE VIEW samples AS\n"
	SAMPLES_VIEW_16 ";\n"
	SAMPLES_TRIGGERS_16("");

const char db_schema_samples_move[] =
	"INSERT INTO sample_data (" SAMPLE_DATA_COLS_16 ")\n"
	"  SELECT " SAMPLE_FROM_15("x") "\n"
	"  FROM samples_v15 x WHERE x.iteration_id BETWEEN ?1 AND ?2";

const char db_schema_sample_cols[] = SAMPLE_DATA_COLS_16;
const char db_schema_sample_from_15[] = SAMPLE_FROM_15_REST("x");

const char db_schema_samples_fold[] =
	"INSERT INTO sample_minute_data (iteration_id, phase, minute, samples,\n"
	"  duration_ns, bytes, ops, mibps_min, mibps_max, lat_p50_ns, lat_p90_ns,\n"
	"  lat_p99_ns, lat_p999_ns, lat_p9999_ns, lat_max_ns, host_stall_ns,\n"
	"  mibps_avg, iops_avg)\n"
	"  SELECT iteration_id, phase, max(t_ms - 1, 0) / 60000 AS minute, count(*),\n"
	"    sum(duration_ns), sum(bytes), sum(ops), min(rate), max(rate),\n"
	"    max(lat_p50_ns), max(lat_p90_ns), max(lat_p99_ns), max(lat_p999_ns),\n"
	"    max(lat_p9999_ns), max(lat_max_ns), sum(host_stall_ns),\n"
	"    CASE WHEN sum(bytes) IS NULL OR sum(duration_ns) IS NULL THEN avg(rate) END,\n"
	"    CASE WHEN sum(ops) IS NULL OR sum(duration_ns) IS NULL THEN avg(iorate) END\n"
	"  FROM (SELECT d.*, " SAMPLE_MIBPS_16("d") " AS rate,\n"
	"          " SAMPLE_IOPS_16("d") " AS iorate\n"
	"        FROM sample_data d WHERE d.iteration_id = ?1)\n"
	"  GROUP BY phase, minute";
/* clang-format on */
