/* test_query_plans: every named query of the charts and the report
 * (common/db/query/) on a database of the current schema: it prepares,
 * and its plan (EXPLAIN QUERY PLAN) has no subquery run per row and no
 * full scan of samples or iterations, so its time follows the rows of the
 * target it reads, not the whole history. */
#include "unit.h"

#include "unit_db.h"

#include <regex.h>

#include "db/db.h"
#include "base/util.h"
#include "db/query/query.h"
#include "db/query/query_charts.h"
#include "db/query/query_report.h"
#include "db/query/query_int.h"

struct fx {
	struct unit_db u;
	sqlite3 *conn;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	*state = fx;
	if (unit_db_make(&fx->u, "plans"))
		return -1;
	return sqlite3_open_v2(fx->u.path, &fx->conn, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK ? 0
											       : -1;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	sqlite3_close(fx->conn);
	unit_db_remove(&fx->u);
	free(fx);
	return 0;
}

/* How many parameters sql takes: its highest ?N, else how many ? it has. */
static int parameters_of(const char *sql)
{
	int most = 0, bare = 0;

	for (const char *p = strchr(sql, '?'); p; p = strchr(p + 1, '?')) {
		if (p[1] >= '1' && p[1] <= '9')
			most = atoi(p + 1) > most ? atoi(p + 1) : most;
		else
			bare++;
	}
	return most ? most : bare;
}

/* Whether sql names table under alias (" table alias", " table AS alias"). */
static int aliases(const char *sql, const char *table, const char *alias)
{
	char pat[160];
	regex_t re;
	int hit;

	snprintf(pat, sizeof(pat), "(^|[^a-z_])%s( AS)? %s([^a-z_0-9]|$)", table, alias);
	assert_int_equal(regcomp(&re, pat, REG_EXTENDED | REG_ICASE), 0);
	hit = regexec(&re, sql, 0, NULL, 0) == 0;
	regfree(&re);
	return hit || !strcmp(alias, table);
}

/* A plan line that scans samples or iterations in full: "SCAN x" where x
 * is either table or an alias of one. */
static int full_scan(const char *sql, const char *detail)
{
	char name[64];

	if (sscanf(detail, "SCAN %63[a-z_0-9]", name) != 1)
		return 0;
	return aliases(sql, "samples", name) || aliases(sql, "iterations", name);
}

static void check_plan(struct fx *fx, const char *name, const char *sql)
{
	char *ex = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(fx->conn, ex, -1, &st, NULL), lines = 0;

	if (rc != SQLITE_OK)
		fail_msg("query %s does not prepare: %s", name, sqlite3_errmsg(fx->conn));
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(st, 3);

		if (getenv("WEARMON_SHOW_PLANS"))
			fprintf(stderr, "%s: %s\n", name, d);
		if (strstr(d, "CORRELATED"))
			fail_msg("query %s runs a subquery per row: %s", name, d);
		if (full_scan(sql, d))
			fail_msg("query %s scans a whole table: %s", name, d);
		lines++;
	}
	assert_true(lines > 0);
	sqlite3_finalize(st);
	sqlite3_free(ex);
}

static void test_chart_queries(void **state)
{
	for (size_t i = 0; i < QC__COUNT; i++) {
		assert_non_null(qc_queries[i].name);
		check_plan(*state, qc_queries[i].name, qc_queries[i].sql);
	}
}

static void test_report_queries(void **state)
{
	for (size_t i = 0; i < QR__COUNT; i++) {
		assert_non_null(qr_queries[i].name);
		check_plan(*state, qr_queries[i].name, qr_queries[i].sql);
	}
}

/* export --target: found by index, through iterations for samples. */
static void test_export_target_queries(void **state)
{
	static const struct {
		const char *name;
		enum query_target_key key;
	} cases[] = {
		{ "samples", QUERY_TARGET_ITERATION },
		{ "sample_minutes", QUERY_TARGET_ITERATION },
		{ "iterations", QUERY_TARGET_ID },
		{ "cycles", QUERY_TARGET_ID },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *sql = query_export_target_sql(cases[i].name, cases[i].key);

		assert_non_null(sql);
		check_plan(*state, cases[i].name, sql);
		free(sql);
	}
	assert_null(query_export_target_sql("targets", QUERY_TARGET_NONE));
	/* a view that names its target only (cycle_summary): filtered by name */
	char *sql = query_export_target_sql("cycle_summary", QUERY_TARGET_NAME);
	assert_non_null(sql);
	assert_non_null(strstr(sql, "FROM \"cycle_summary\" WHERE target = ?1"));
	free(sql);
}

#define V1_SCHEMA "tests/unit/fixtures/schema-v1.sql"

/* Every named query (query_registry.c) resolves on ro, a database of
 * schema version, to a SQL text that runs there, unless it reads a table
 * that schema lacks (health and wear came with schema 3). */
static void run_every_named(struct db *ro, int version)
{
	const struct db_value params[] = { { .type = DB_INT, .i = 1 },
					   { .type = DB_INT, .i = 0 },
					   { .type = DB_INT, .i = 9 },
					   { .type = DB_INT, .i = 4096 } };
	struct query_schema sc;
	const char *sql;
	char err[512];

	assert_int_equal(query_schema_of(ro, &sc, err, sizeof(err)), 0);
	assert_int_equal(sc.version, version);
	for (size_t k = 0; k < query_ntables; k++)
		for (size_t i = 0; i < query_tables[k].n; i++) {
			const struct query_named *q = &query_tables[k].q[i];

			if (q == &qr_queries[QR_STEADY_ROUNDS] && version < 5)
				continue; /* runs only for a verdict row (schema 5) */
			if (!(sql = query_named_sql(&sc, q)))
				continue; /* that schema has no such rows */
			if (db_query(ro, sql, params, parameters_of(sql), NULL, NULL, err,
				     sizeof(err)) &&
			    !strstr(err, "no such table"))
				fail_msg("query %s on schema %d: %s", q->name, version, err);
		}
}

extern const char *const db_migrations[];

/* A database of each schema version, made by its migrations alone and
 * read as the CLI reads it (read-only, no migration): every named query
 * takes the variant of its chain that the version's columns allow (a
 * chain's facts come in the order of the versions that added them). */
static void test_every_schema_version(void **state)
{
	struct fx *fx = *state;
	char path[160], err[512], version_sql[64];

	for (int v = 1; v <= DB_SCHEMA_VERSION; v++) {
		struct db *ro = NULL;

		snprintf(path, sizeof(path), "%s/v%d.db", fx->u.dir, v);
		for (int m = 1; m <= v; m++)
			unit_exec(path, db_migrations[m]);
		snprintf(version_sql, sizeof(version_sql), "PRAGMA user_version = %d", v);
		unit_exec(path, version_sql);
		if (db_open(path, 1, &ro, err, sizeof(err)))
			fail_msg("schema %d: %s", v, err);
		run_every_named(ro, v);
		db_close(ro);
	}
}

/* On a database of the first schema (read-only, as the CLI opens it) each
 * named query (query_registry.c) resolves to a SQL text that runs there, unless it reads a
 * table that schema lacks (health and wear came with schema 3): the older
 * variants reach back to it. */
static void test_old_schema_variants(void **state)
{
	static char v1[65536];
	struct fx *fx = *state;
	char path[160], err[512];
	struct query_schema sc;
	struct db *ro = NULL;
	const char *sql;
	FILE *f = fopen(V1_SCHEMA, "r");
	size_t n;

	if (!f) {
		print_message("  %s not found (run from the source tree)\n", V1_SCHEMA);
		skip();
	}
	n = fread(v1, 1, sizeof(v1) - 1, f);
	fclose(f);
	v1[n] = '\0';
	snprintf(path, sizeof(path), "%s/v1.db", fx->u.dir);
	unit_exec(path, v1);
	unit_exec(path, "PRAGMA user_version = 1");
	assert_int_equal(db_open(path, 1, &ro, err, sizeof(err)), 0);
	run_every_named(ro, 1);
	assert_int_equal(query_schema_of(ro, &sc, err, sizeof(err)), 0);
	/* the variant chain: before baseline_iteration_id (9), before
	 * lat_p9999_us and read_percent (4) */
	sql = query_named_sql(&sc, &qr_queries[QR_ITERATIONS]);
	assert_null(strstr(sql, "lat_p9999_us AS"));
	assert_non_null(strstr(sql, "NULL AS lat_p9999_us"));
	assert_non_null(strstr(sql, "iteration_baseline"));
	for (size_t i = 0; i < QC__COUNT; i++) {
		sql = query_named_sql(&sc, &qc_queries[i]);
		assert_null(strstr(sql, "read_percent"));
		assert_null(strstr(sql, "lat_p9999_us"));
	}
	/* status: the baseline through the view, nsizes from the rows, no progress */
	sql = query_named_sql(&sc, &query_status_queries[QSTATUS_LAST_IT]);
	assert_non_null(strstr(sql, "iteration_baseline"));
	assert_null(strstr(sql, "FROM progress"));
	assert_null(query_named_sql(&sc, &query_status_queries[QSTATUS_PROGRESS]));
	db_close(ro);
}

/* The check itself: a correlated sum per row and a scan are caught. */
static void test_the_check_catches_them(void **state)
{
	struct fx *fx = *state;

	assert_true(full_scan("SELECT 1 FROM iterations i", "SCAN i"));
	assert_true(full_scan("SELECT 1 FROM samples", "SCAN samples"));
	assert_false(full_scan("SELECT 1 FROM cycles c", "SCAN c"));
	assert_false(full_scan("SELECT 1 FROM iterations i", "SEARCH i USING INDEX x (y=?)"));
	(void)fx;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_chart_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_target_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_the_check_catches_them, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_schema_variants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_schema_version, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
