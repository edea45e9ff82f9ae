/* test_query_plans: every named query of the charts and the report
 * (common/db/query/) on a database of the current schema: it prepares,
 * and its plan (EXPLAIN QUERY PLAN) has no subquery run per row and no
 * full scan of samples or iterations, so its time follows the rows of the
 * target it reads, not the whole history. */
#include "unit.h"

#include "unit_tmp.h"

#include <regex.h>

#include "db/db.h"
#include "base/util.h"
#include "db/query/query.h"
#include "db/query/query_charts.h"
#include "db/query/query_report.h"

struct fx {
	char dir[64];
	char path[128];
	sqlite3 *conn;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct db *db = NULL;
	char err[512];

	if (!fx || unit_tmpdir(fx->dir, sizeof(fx->dir), "plans"))
		return -1;
	*state = fx;
	snprintf(fx->path, sizeof(fx->path), "%s/history.db", fx->dir);
	if (db_open(fx->path, 0, &db, err, sizeof(err)) != 0) {
		fprintf(stderr, "setup: %s\n", err);
		return -1;
	}
	db_close(db);
	return sqlite3_open_v2(fx->path, &fx->conn, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK ? 0
											     : -1;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	sqlite3_close(fx->conn);
	unit_rmtree(fx->dir);
	free(fx);
	return 0;
}

/* How many parameters sql takes (1 or 3 here). */
static int sqlite3_bind_parameter_count_of(const char *sql)
{
	return strstr(sql, "?3") ? 3 : 1;
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

/* On a database of the first schema (read-only, as the CLI opens it) each
 * report query resolves to a SQL text that runs there, unless it reads a
 * table that schema lacks (health and wear came with schema 3): the older
 * variants reach back to it. */
static void test_old_schema_variants(void **state)
{
	static char v1[65536];
	struct fx *fx = *state;
	char path[160], err[512], *msg = NULL;
	struct db *ro = NULL;
	sqlite3 *w = NULL;
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
	snprintf(path, sizeof(path), "%s/v1.db", fx->dir);
	assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
	if (sqlite3_exec(w, v1, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(w, "PRAGMA user_version = 1", NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("v1 schema: %s", msg ? msg : "?");
	sqlite3_close(w);
	assert_int_equal(db_open(path, 1, &ro, err, sizeof(err)), 0);
	for (size_t i = 0; i < QR__COUNT; i++) {
		assert_int_equal(dbq_sql(ro, &qr_queries[i], &sql, err, sizeof(err)), 0);
		if (i == QR_STEADY_ROUNDS)
			continue; /* runs only for a verdict row (schema 5) */
		if (db_query(ro, sql,
			     (struct db_value[]){ { .type = DB_INT, .i = 1 },
						  { .type = DB_INT, .i = 0 },
						  { .type = DB_INT, .i = 9 } },
			     sqlite3_bind_parameter_count_of(sql), NULL, NULL, err, sizeof(err)) &&
		    !strstr(err, "no such table"))
			fail_msg("query %s on schema 1: %s", qr_queries[i].name, err);
	}
	/* the variant chain: before baseline_iteration_id (9), before
	 * lat_p9999_us and read_percent (4) */
	assert_int_equal(dbq_sql(ro, &qr_queries[QR_ITERATIONS], &sql, err, sizeof(err)), 0);
	assert_null(strstr(sql, "lat_p9999_us AS"));
	assert_non_null(strstr(sql, "NULL AS lat_p9999_us"));
	assert_non_null(strstr(sql, "iteration_baseline"));
	for (size_t i = 0; i < QC__COUNT; i++) {
		assert_int_equal(dbq_sql(ro, &qc_queries[i], &sql, err, sizeof(err)), 0);
		if (i == QC_CAMPAIGN_CYCLES || i == QC_CAMPAIGN_WEAR || i == QC_CAMPAIGN_LATENCY)
			continue; /* campaigns begin at schema 8 */
		assert_null(strstr(sql, "read_percent"));
		assert_null(strstr(sql, "lat_p9999_us"));
	}
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
