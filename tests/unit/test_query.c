/* test_query: the named reads of common/db/query/ on a database made by
 * db_open: each one's query plan reads one target's or one iteration's
 * rows through an index (no scan of samples or iterations, no view
 * materialised whole), and the schema facts they depend on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/query/query.h"
#include "unit_tmp.h"

struct fx {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct db *db = NULL;
	char err[512];

	if (!fx || unit_tmpdir(fx->dir, sizeof(fx->dir), "query"))
		return -1;
	*state = fx;
	snprintf(fx->path, sizeof(fx->path), "%s/history.db", fx->dir);
	if (db_open(fx->path, 0, &db, err, sizeof(err)) != 0) {
		fprintf(stderr, "setup: %s\n", err);
		return -1;
	}
	db_close(db);
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	unit_rmtree(fx->dir);
	free(fx);
	return 0;
}

/* The plan of sql, one detail a line, into out. */
static void plan_of(sqlite3 *conn, const char *sql, char *out, size_t len)
{
	char *explain = NULL;
	sqlite3_stmt *st = NULL;
	size_t used = 0;

	out[0] = '\0';
	assert_true(asprintf(&explain, "EXPLAIN QUERY PLAN %s", sql) > 0);
	if (sqlite3_prepare_v2(conn, explain, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(conn));
	while (sqlite3_step(st) == SQLITE_ROW && used < len)
		used += (size_t)snprintf(out + used, len - used, "%s\n",
					 (const char *)sqlite3_column_text(st, 3));
	sqlite3_finalize(st);
	free(explain);
}

/* Whether a plan scans a table whole: a line "SCAN x" (with or without an
 * index: a full index scan grows with the table too) or a view built
 * whole. */
static int scans(const char *plan, const char *name)
{
	char line[512];

	for (const char *p = plan; *p;) {
		size_t n = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (!strncmp(line, "SCAN ", 5) || strstr(line, "MATERIALIZE"))
			return 1;
		p += n + (p[n] == '\n');
	}
	(void)name;
	return 0;
}

static void test_schema_facts(void **state)
{
	struct fx *fx = *state;
	struct query_schema sc;
	struct db *db;
	char err[512];

	assert_int_equal(db_open(fx->path, 1, &db, err, sizeof(err)), 0);
	assert_int_equal(query_schema_of(db, &sc, err, sizeof(err)), 0);
	assert_int_equal(sc.version, DB_SCHEMA_VERSION);
	assert_int_equal(sc.progress, 9);
	assert_int_equal(sc.cycle_plan, 1);
	db_close(db);
}

/* Every per-target read finds its rows by index; the plans print with
 * cmocka's output when one fails. */
static void test_per_target_reads_do_not_scan(void **state)
{
	struct fx *fx = *state;
	struct query_schema sc = { DB_SCHEMA_VERSION, 9, 1 };
	char plan[4096];
	sqlite3 *conn;
	int bad = 0;

	assert_int_equal(sqlite3_open_v2(fx->path, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_true(query_nnamed >= 10);
	for (size_t k = 0; k < query_nnamed; k++) {
		char *sql = query_named[k].sql(&sc);

		assert_non_null(sql);
		plan_of(conn, sql, plan, sizeof(plan));
		if (getenv("QUERY_PLANS"))
			fprintf(stderr, "%s:\n%s\n", query_named[k].name, plan);
		if (query_named[k].per_target && scans(plan, query_named[k].name)) {
			fprintf(stderr, "%s scans:\n%s\n%s\n", query_named[k].name, sql, plan);
			bad++;
		}
		free(sql);
	}
	sqlite3_close(conn);
	assert_int_equal(bad, 0);
}

/* The baseline is looked up by the row's baseline_iteration_id: the view
 * iteration_baseline is not in any statement of a current schema. */
static void test_baseline_by_key(void **state)
{
	struct query_schema now = { DB_SCHEMA_VERSION, 9, 1 }, old = { 8, 7, 0 };

	(void)state;
	for (size_t k = 0; k < query_nnamed; k++) {
		char *sql = query_named[k].sql(&now);

		assert_null(strstr(sql, "iteration_baseline"));
		free(sql);
	}
	assert_non_null(strstr(query_baseline_of(&old)->join, "iteration_baseline"));
	assert_non_null(strstr(query_baseline_of(&now)->join, "bi.id = i.baseline_iteration_id"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_facts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_target_reads_do_not_scan, setup, teardown),
		cmocka_unit_test(test_baseline_by_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
