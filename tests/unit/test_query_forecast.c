/* test_query_forecast: query_forecast on a database made by db_open: the
 * health snapshots of a campaign and the rating stored with the target
 * give the forecast that eol_fit gives for the same readings; the scope
 * (campaign, cycle, time) picks the snapshots; every variant of its
 * queries takes the same parameters; a schema without the rating reads
 * none. */
#include "unit.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/eol.h"
#include "db/db.h"
#include "db/query/query.h"
#include "db/query/query_int.h"
#include "unit_db.h"

#define T0 1800000000.0 /* 2027-01-15T08:00:00Z */

static void exec(sqlite3 *c, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(c, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

/* Target 1 (16 GiB, rated 600 TB): campaign 1 is cycles 1-2, campaign 2
 * (from cycle 3) cycles 3-22; one snapshot per cycle, an hour apart, the
 * indicator 1 % per 3 cycles from 10 % in campaign 2, host bytes 1 TB an
 * hour; campaign 1's snapshots read 90 %, which would spoil any fit. */
static void fill(const char *path, struct eol_reading *r, size_t *n)
{
	sqlite3 *c;
	char sql[1024];

	assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
	exec(c, "INSERT INTO targets (id, name, device, kind, capacity_bytes, logical_block_size,"
		" campaign_first_cycle, first_seen, rated_tbw, warranty_years)"
		" VALUES (1, 'lab1', '/dev/x', 'block', 17179869184, 512, 3,"
		" '2027-01-01T00:00:00.000Z', 600000000000000, 5)");
	exec(c, "INSERT INTO runs (id, pid, version) VALUES (1, 1, 'test')");
	*n = 0;
	for (int k = 1; k <= 22; k++) {
		double t = T0 + (k - 1) * 3600.0, used = k < 3 ? 90 : 10 + floor((k - 3) / 3.0);
		time_t tt = (time_t)t, t0 = tt - 60, t1 = tt + 60;
		char at[40], start[40], end[40];
		struct tm tm;

		strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%S.000Z", gmtime_r(&tt, &tm));
		strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%S.000Z", gmtime_r(&t0, &tm));
		strftime(end, sizeof(end), "%Y-%m-%dT%H:%M:%S.000Z", gmtime_r(&t1, &tm));
		snprintf(
			sql, sizeof(sql),
			"INSERT INTO cycles (id, target_id, run_id, number, campaign_first_cycle,"
			" started_at, ended_at) VALUES (%d, 1, 1, %d, %d, '%s', '%s');"
			"INSERT INTO health (target_id, cycle_id, at, source, percentage_used,"
			" host_bytes_written, nand_bytes_written, data) VALUES (1, %d, '%s', 'nvme',"
			" %.0f, %.0f, %.0f, '{\"host_bytes_total\":%.0f}')",
			k, k, k < 3 ? 1 : 3, start, end, k, at, used, k * 1e12, k * 2e12,
			k * 0.5e12);
		exec(c, sql);
		if (k >= 3)
			r[(*n)++] = (struct eol_reading){ t, used, k * 1e12, k * 0.5e12, k * 2e12 };
	}
	sqlite3_close(c);
}

/* The same forecast, but for the rounding of times read back from ISO
 * text (a millisecond over days). */
static void same(const struct eol_forecast *a, const struct eol_forecast *b)
{
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->nsteps, b->nsteps);
	assert_true(fabs(a->end_t.at - b->end_t.at) < 1);
	assert_true(fabs(a->end_t.hi - b->end_t.hi) < 1);
	assert_true(fabs(a->end_host.at - b->end_host.at) < 1);
	assert_true(fabs(a->rated_ratio.at - b->rated_ratio.at) < 1e-12 ||
		    (isnan(a->rated_ratio.at) && isnan(b->rated_ratio.at)));
}

static void test_forecast_of_the_campaign(void **state)
{
	struct unit_db u;
	struct eol_reading r[32], *got = NULL;
	struct eol_rating rating = { .tbw_bytes = 600e12,
				     .warranty_years = 5,
				     .warranty_start = 1798761600,
				     .capacity = 17179869184.0 };
	struct eol_forecast want, f;
	struct query_schema sc;
	struct db *db;
	char err[512] = "";
	size_t n, ngot = 0;

	assert_int_equal(unit_db_make(&u, "forecast"), 0);
	fill(u.path, r, &n);
	assert_int_equal(db_open(u.path, 1, &db, err, sizeof(err)), 0);
	assert_int_equal(query_schema_of(db, &sc, err, sizeof(err)), 0);
	/* the current campaign: cycles 3..22, the rating stored */
	assert_int_equal(eol_fit(r, n, &rating, &want), 0);
	assert_int_equal(want.status, EOL_OK);
	struct query_forecast_scope now = { 1, 0, 0, NULL };
	assert_int_equal(query_forecast(db, &sc, &now, &f, &got, &ngot, err, sizeof(err)), 0);
	assert_int_equal(ngot, n);
	assert_true(fabs(got[0].t - r[0].t) < 1e-3 && got[n - 1].host_own == r[n - 1].host_own);
	free(got);
	same(&f, &want);
	assert_true(fabs(f.rated_ratio.at - f.end_host.at / 600e12) < 1e-12);
	assert_true(fabs(f.warranty_end - (1798761600 + 5 * 365.25 * 86400)) < 1e-3);
	/* the edges the trigger marked: each side of every change of level
	 * (the fit reads them and the span's ends: the same steps) */
	{
		sqlite3 *c;
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_open(u.path, &c), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(c,
						    "SELECT group_concat(cycle_id) FROM"
						    " (SELECT cycle_id FROM health WHERE"
						    " level_edge = 1 ORDER BY id)",
						    -1, &st, NULL),
				 SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0),
				    "1,2,3,5,6,8,9,11,12,14,15,17,18,20,21");
		sqlite3_finalize(st);
		sqlite3_close(c);
	}
	/* as it stood at cycle 12's snapshot: the campaign of cycle 12 up to then */
	struct query_forecast_scope then = { 1, 0, 12, "2027-01-15T19:00:00.000Z" };
	assert_int_equal(query_forecast(db, &sc, &then, &f, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(eol_fit(r, 10, &rating, &want), 0);
	same(&f, &want);
	/* a schema without the rating (before 24): none */
	sc.has[QF_RATING] = 0;
	assert_int_equal(query_forecast(db, &sc, &now, &f, NULL, NULL, err, sizeof(err)), 0);
	assert_true(isnan(f.rated_bytes) && isnan(f.rated_ratio.at));
	assert_int_equal(f.status, EOL_OK);
	db_close(db);
	unit_db_remove(&u);
}

/* Every variant of each forecast query binds what query_forecast binds:
 * the target and two bounds (cycles, or times). */
static void test_every_variant_takes_the_same_parameters(void **state)
{
	struct unit_db u;
	sqlite3 *c;

	assert_int_equal(unit_db_make(&u, "forecast-params"), 0);
	assert_int_equal(sqlite3_open(u.path, &c), SQLITE_OK);
	for (int q = 0; q < QFC__COUNT; q++) {
		int want = 3;
		for (const struct query_named *v = &query_forecast_queries[q]; v; v = v->old) {
			sqlite3_stmt *st = NULL;
			if (sqlite3_prepare_v2(c, v->sql, -1, &st, NULL) != SQLITE_OK)
				fail_msg("%s: %s", v->name, sqlite3_errmsg(c));
			if (sqlite3_bind_parameter_count(st) != want)
				fail_msg("%s: %d parameters, not %d", v->name,
					 sqlite3_bind_parameter_count(st), want);
			sqlite3_finalize(st);
		}
	}
	sqlite3_close(c);
	unit_db_remove(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forecast_of_the_campaign),
		cmocka_unit_test(test_every_variant_takes_the_same_parameters),
	};
	return cmocka_run_group_tests_name("query_forecast", tests, NULL, NULL);
}
