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
#include "db/query/query_int.h"
#include "unit_db.h"

struct fx {
	struct unit_db u;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	*state = fx;
	return unit_db_make(&fx->u, "query");
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	unit_db_remove(&fx->u);
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

	assert_int_equal(db_open(fx->u.path, 1, &db, err, sizeof(err)), 0);
	assert_int_equal(query_schema_of(db, &sc, err, sizeof(err)), 0);
	assert_int_equal(sc.version, DB_SCHEMA_VERSION);
	assert_int_equal(sc.progress, 9);
	/* the current schema has every fact but the health rows' own
	 * iteration (query_show_health reads it where a schema stores it) */
	for (int f = 0; f < QF__COUNT; f++)
		assert_int_equal(sc.has[f], f != QF_HEALTH_BY_IT);
	db_close(db);
}

/* The plan of sql on conn; fails (after printing sql and the plan) when a
 * per-target read scans. Returns 1 when it scans. */
static int check_reads(sqlite3 *conn, const char *name, const char *sql, int per_target)
{
	char plan[4096];

	assert_non_null(sql);
	plan_of(conn, sql, plan, sizeof(plan));
	if (getenv("QUERY_PLANS"))
		fprintf(stderr, "%s:\n%s\n", name, plan);
	if (per_target && scans(plan, name)) {
		fprintf(stderr, "%s scans:\n%s\n%s\n", name, sql, plan);
		return 1;
	}
	return 0;
}

/* Every per-target read of every table of named queries (query_registry.c)
 * and the history of one target find their rows by index; the plans
 * print with cmocka's output when one fails. */
static void test_per_target_reads_do_not_scan(void **state)
{
	struct fx *fx = *state;
	struct query_schema sc;
	struct db *db;
	char err[512], *history;
	sqlite3 *conn;
	int bad = 0, per_target = 0;

	assert_int_equal(db_open(fx->u.path, 1, &db, err, sizeof(err)), 0);
	assert_int_equal(query_schema_of(db, &sc, err, sizeof(err)), 0);
	db_close(db);
	assert_int_equal(sqlite3_open_v2(fx->u.path, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	for (size_t k = 0; k < query_ntables; k++)
		for (size_t i = 0; i < query_tables[k].n; i++) {
			const struct query_named *q = &query_tables[k].q[i];
			const char *sql = query_named_sql(&sc, q);

			if (sql) /* NULL: no such rows in this schema */
				bad += check_reads(conn, q->name, sql, q->per_target);
			per_target += q->per_target;
		}
	history = query_history_target_sql(&sc);
	bad += check_reads(conn, "history --target --since", history, 1);
	free(history);
	sqlite3_close(conn);
	assert_true(per_target >= 10);
	assert_int_equal(bad, 0);
}

/* The baseline is looked up by the row's baseline_iteration_id: the view
 * iteration_baseline is in no statement for a current schema, and in the
 * older variants of those that read a baseline. */
static void test_baseline_by_key(void **state)
{
	struct query_schema now, old;
	char *history;

	(void)state;
	memset(&now, 1, sizeof(now));
	/* schema 8: none of the facts of 9 and later that these read */
	old = now;
	old.has[QF_BASELINE_ROW] = old.has[QF_PROGRESS_PLAN] = old.has[QF_CYCLE_PLAN] = 0;
	old.has[QF_PROGRESS_SECONDS] = 0;
	for (size_t k = 0; k < query_ntables; k++)
		for (size_t i = 0; i < query_tables[k].n; i++) {
			const char *sql = query_named_sql(&now, &query_tables[k].q[i]);

			assert_true(sql && !strstr(sql, "iteration_baseline"));
		}
	assert_non_null(strstr(query_named_sql(&old, &query_status_queries[QSTATUS_LAST_IT]),
			       "iteration_baseline"));
	assert_non_null(strstr(query_named_sql(&old, &query_show_queries[QSHOW_ITERATION]),
			       "iteration_baseline"));
	history = query_history_target_sql(&now);
	assert_null(strstr(history, "iteration_baseline"));
	free(history);
	assert_non_null(strstr(query_baseline_of(&old)->join, "iteration_baseline"));
	assert_non_null(strstr(query_baseline_of(&now)->join, "bi.id = i.baseline_iteration_id"));
}

/* A query whose fact the schema lacks takes the next of its chain; one
 * with no chain left has no SQL there (it reads no rows). */
static void test_chain_by_facts(void **state)
{
	const struct query_named *last_done = &query_status_queries[QSTATUS_LAST_DONE];
	const struct query_named *progress = &query_status_queries[QSTATUS_PROGRESS];
	struct query_schema sc;

	(void)state;
	memset(&sc, 1, sizeof(sc));
	assert_ptr_equal(query_named_sql(&sc, last_done), last_done->sql);
	assert_non_null(strstr(query_named_sql(&sc, last_done), "c.nsizes"));
	assert_non_null(strstr(query_named_sql(&sc, progress), "iteration_seconds"));
	/* schema 12..18: the plan as progress published it */
	sc.has[QF_CYCLE_PLAN] = sc.has[QF_PROGRESS_SECONDS] = 0;
	assert_ptr_equal(query_named_sql(&sc, last_done), last_done->old->sql);
	assert_null(strstr(query_named_sql(&sc, last_done), "c.nsizes"));
	assert_non_null(strstr(query_named_sql(&sc, last_done), "FROM progress"));
	assert_non_null(strstr(query_named_sql(&sc, progress), "duration_seconds FROM progress"));
	/* 9..11: no plan in progress, the baseline still by key */
	sc.has[QF_PROGRESS_PLAN] = 0;
	assert_ptr_equal(query_named_sql(&sc, last_done), last_done->old->old->sql);
	assert_null(strstr(query_named_sql(&sc, last_done), "FROM progress"));
	assert_null(strstr(query_named_sql(&sc, last_done), "iteration_baseline"));
	assert_non_null(strstr(query_named_sql(&sc, progress), "phase_bytes FROM progress"));
	/* before 9: the baseline through the view */
	sc.has[QF_BASELINE_ROW] = 0;
	assert_ptr_equal(query_named_sql(&sc, last_done), last_done->old->old->old->sql);
	assert_non_null(strstr(query_named_sql(&sc, last_done), "iteration_baseline"));
	sc.has[QF_PROGRESS_PHASE] = 0;
	assert_null(query_named_sql(&sc, progress));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_facts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_target_reads_do_not_scan, setup, teardown),
		cmocka_unit_test(test_baseline_by_key),
		cmocka_unit_test(test_chain_by_facts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
