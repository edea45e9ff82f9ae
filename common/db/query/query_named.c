/* query_named: the schema facts of a database, read once, and the choice
 * of each named query's SQL from them: the one place where the named reads
 * of common/db/query/ handle the differences between schema versions. The
 * bottom of the folder: it calls db_query and nothing of common/db/query/. */
#include "db/query/query_named.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"

/* The column that tells each fact, by enum query_fact. */
static const struct {
	const char *table, *column;
} facts[QF__COUNT] = {
	[QF_READ_PERCENT] = { "iterations", "read_percent" },
	[QF_LAT_P9999] = { "iterations", "lat_p9999_us" },
	[QF_STEADY] = { "iterations", "steady_reached" },
	[QF_CAMPAIGN_FIRST] = { "cycles", "campaign_first_cycle" },
	[QF_BASELINE_ROW] = { "iterations", "baseline_iteration_id" },
	[QF_NAND_DELTA] = { "health", "nand_bytes_delta" },
	[QF_RUN_CONFIG] = { "runs", "config" },
	[QF_SAMPLE_P999] = { "samples", "lat_p999_us" },
	[QF_SAMPLE_P9999] = { "samples", "lat_p9999_us" },
	[QF_MINUTES] = { "sample_minute_data", "mibps_max" },
	[QF_PROGRESS_PHASE] = { "progress", "phase" },
	[QF_PROGRESS_PLAN] = { "progress", "nsizes" },
	[QF_HEALTH_BY_IT] = { "health", "iteration_id" },
	[QF_HEALTH_BY_CYCLE] = { "health", "cycle_id" },
	[QF_PHASE] = { "iterations", "phase" },
	[QF_MORE_ROWS] = { "iterations", "more_rows" },
	[QF_PROGRESS_SECONDS] = { "progress", "iteration_seconds" },
	[QF_CYCLE_PLAN] = { "cycles", "nsizes" },
	[QF_DEVICE] = { "iterations", "device_wa" },
	[QF_CYCLE_STORED] = { "cycles", "ratio_avg" },
	[QF_HIR] = { "hir_bursts", "wait_state" },
	[QF_PROGRESS_STAGE] = { "progress", "stage" },
	[QF_HIR_IDLE] = { "hir_bursts", "idle_media_bytes" },
	[QF_HIR_PURGE] = { "hir_purges", "method" },
	[QF_PTS] = { "iterations", "pts_test" },
	[QF_RATING] = { "targets", "rated_tbw" },
	[QF_LEVEL_EDGE] = { "health", "level_edge" },
};

/* db_row_fn: the first column of the first row as an integer. */
static int first_int(void *arg, int n, const struct db_value *v, const char *const *names)
{
	int64_t *out = arg;

	*out = n > 0 && (v[0].type == DB_INT || v[0].type == DB_REAL) ? v[0].i : 0;
	return 0;
}

int query_int(struct db *db, const char *sql, const struct db_value *p, int np, int64_t *out,
	      char *err, size_t errlen)
{
	*out = 0;
	return db_query(db, sql, p, np, first_int, out, err, errlen);
}

int query_has_column(struct db *db, const char *table, const char *column, int *has, char *err,
		     size_t errlen)
{
	const struct db_value p[] = { { .type = DB_TEXT, .s = table },
				      { .type = DB_TEXT, .s = column } };
	int64_t n;
	int ret = query_int(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", p, 2,
			    &n, err, errlen);

	*has = n > 0;
	return ret;
}

int query_schema_of(struct db *db, struct query_schema *sc, char *err, size_t errlen)
{
	int64_t v;
	int ret = query_int(db, "PRAGMA user_version", NULL, 0, &v, err, errlen);

	memset(sc, 0, sizeof(*sc));
	sc->has[QF_NONE] = 1;
	for (size_t f = QF_NONE + 1; !ret && f < ARRAY_SIZE(facts); f++) {
		int has = 0;

		ret = query_has_column(db, facts[f].table, facts[f].column, &has, err, errlen);
		sc->has[f] = (unsigned char)has;
	}
	if (ret)
		return ret;
	sc->version = (int)v;
	sc->progress = sc->has[QF_PROGRESS_SECONDS] ? 9
		       : sc->has[QF_PROGRESS_PLAN]  ? 8
		       : sc->has[QF_PROGRESS_PHASE] ? 7
						    : 0;
	return 0;
}

const char *query_named_sql(const struct query_schema *sc, const struct query_named *q)
{
	while (q && !sc->has[q->needs])
		q = q->old;
	return q ? q->sql : NULL;
}

int query_named_run(struct db *db, const struct query_schema *sc, const struct query_named *q,
		    const struct db_value *params, int nparams, db_row_fn fn, void *arg, char *err,
		    size_t errlen)
{
	struct query_schema own;
	const char *sql;
	int ret = 0;

	if (!sc) {
		ret = query_schema_of(db, &own, err, errlen);
		sc = &own;
	}
	if (!ret && (sql = query_named_sql(sc, q)))
		ret = db_query(db, sql, params, nparams, fn, arg, err, errlen);
	if (ret < 0 && err && errlen && err[0]) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s (query %s)", err, q->name);
		snprintf(err, errlen, "%s", msg);
	}
	return ret;
}
