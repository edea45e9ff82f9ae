/* test_db_samples: samples as integers (schema 16): the conversions to
 * whole nanoseconds, figures read back through the view samples as the
 * engine computed them, the rollup of an old iteration into minutes with
 * every byte, and the move of a schema-15 database in batches. */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "db/db.h"
#include "unit_tmp.h"

#define FIXTURE_V15 "tests/unit/fixtures/schema-v15.sql"

struct fx {
	char dir[64], path[128];
	struct db *db;
	int64_t run, tgt, cyc;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char err[256];
	struct db_target_info t = { .name = "lab1",
				    .device = "/dev/sdx",
				    .kind = TGT_BLOCK,
				    .capacity_bytes = 1ull << 30,
				    .logical_block_size = 512 };

	if (!fx || unit_tmpdir(fx->dir, sizeof(fx->dir), "samples"))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/w.db", fx->dir);
	if (db_open(fx->path, 0, &fx->db, err, sizeof(err)) ||
	    db_run_begin(fx->db, "/x", &fx->run) || db_target_upsert(fx->db, &t, &fx->tgt) ||
	    db_cycle_begin(fx->db, fx->tgt, fx->run, 1, &fx->cyc))
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	db_close(fx->db);
	unit_rmtree(fx->dir);
	free(fx);
	return 0;
}

/* The first column of sql's first row, as SQLite holds it. */
static double one_dbl(struct fx *fx, const char *sql)
{
	sqlite3 *c = NULL;
	sqlite3_stmt *st = NULL;
	double v = NAN;

	assert_int_equal(sqlite3_open_v2(fx->path, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(c);
	return v;
}

static long long one_int(struct fx *fx, const char *sql)
{
	char out[128];
	return strtoll(unit_rows(fx->path, sql, out, sizeof(out)), NULL, 10);
}

/* A done iteration number n with nm measured samples of 1 s (the last
 * 0.25 s) and 2 fill samples, as the engine makes them from integers. */
static int64_t store(struct fx *fx, long n, int nm, struct db_sample *s)
{
	struct db_iteration it = { .cycle_id = fx->cyc,
				   .run_id = fx->run,
				   .target_id = fx->tgt,
				   .number = n,
				   .size_bytes = 1 << 30,
				   .workload = "randwrite",
				   .block_size = 4096,
				   .queue_depth = 32,
				   .amount_bytes = 1 << 30,
				   .status = DB_RUNNING };
	int64_t id = 0;
	uint64_t total = 0;
	static struct db_dev_point series[160];
	size_t k = 0;

	assert_int_equal(db_iteration_begin(fx->db, &it, &id), 0);
	for (int i = 0; i < nm + 2; i++) {
		uint64_t ns = i == nm + 1 ? 250000000u : 1000000000u;
		double secs = (double)ns / 1e9;
		memset(&s[i], 0, sizeof(s[i]));
		s[i].phase = i < 2 ? DB_PHASE_FILL : DB_PHASE_MEASURE;
		s[i].t_ms = (i < 2 ? i + 1 : i - 1) * 1000;
		s[i].seconds = secs;
		s[i].bytes = 400000000ull + (uint64_t)i * 1234567;
		s[i].ops = 97000 + (uint64_t)i * 13;
		s[i].mibps = (double)s[i].bytes / 1048576.0 / secs;
		s[i].iops = (double)s[i].ops / secs;
		s[i].lat_us = (struct lat_qos){ 62720 / 1e3,   113152 / 1e3,
						125024 / 1e3,  (double)(125024 + i) / 1e3,
						2000016 / 1e3, (double)(3000016 + i * 7) / 1e3 };
		s[i].mibps_min_1s = -1;
		s[i].host_stall_ms = i == 5 ? 1234567 / 1e6 : 0;
		total += i >= 2 ? s[i].bytes : 0;
		/* the drive read at each phase's start and each sample's end */
		if (i == 0 || i == 2)
			series[k++] = (struct db_dev_point){ .phase = s[i].phase };
		struct db_dev_point *p = &series[k++];
		*p = (struct db_dev_point){ .phase = s[i].phase, .t_ms = s[i].t_ms };
		p->has[DB_SERIES_HOST_BYTES] = p->has[DB_SERIES_TEMP_C] = 1;
		p->val[DB_SERIES_HOST_BYTES] = (int64_t)(i + 1) << 20;
		p->val[DB_SERIES_TEMP_C] = 40 + i % 7;
	}
	it.series = series;
	it.nseries = k;
	it.status = DB_DONE;
	it.bytes = total;
	it.seconds = nm - 0.75;
	it.mibps_avg = (double)total / 1048576.0 / it.seconds;
	it.mibps_min = it.mibps_max = -1;
	it.mibps_stddev = -1;
	assert_int_equal(db_iteration_end(fx->db, id, &it, s, (size_t)nm + 2), 0);
	return id;
}

/* Whole nanoseconds of what the engine and the histogram measured, and
 * NULL (-1) for what is not a length. */
static void test_ns_conversions(void **state)
{
	static const struct {
		double v, unit;
		int64_t ns;
	} cases[] = {
		{ 1.0, 1e9, 1000000000 },
		{ 0.25, 1e9, 250000000 },
		{ 62.72, 1e3, 62720 },
		{ 2000.016, 1e3, 2000016 },
		{ 1.234567, 1e6, 1234567 },
		{ 0, 1e9, 0 },
		{ -1, 1e3, -1 },
		{ NAN, 1e9, -1 },
		{ INFINITY, 1e3, -1 },
		{ 1e12, 1e9, -1 },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(db_sample_ns(cases[i].v, cases[i].unit), cases[i].ns);
	/* every histogram value in µs, every length of a sample in s, back */
	for (uint64_t v = 1; v < (1ull << 45); v = v * 3 + 1) {
		assert_int_equal(db_sample_ns((double)v / 1e3, 1e3), (int64_t)v);
		assert_int_equal(db_sample_ns((double)v / 1e9, 1e9), (int64_t)v);
		assert_int_equal(db_sample_ns((double)v / 1e6, 1e6), (int64_t)v);
	}
}

/* The view gives the figures the writer had, bit for bit. */
static void test_view_reads_back(void **state)
{
	struct fx *fx = *state;
	struct db_sample s[12];
	char sql[256];
	int64_t id = store(fx, 1, 10, s);

	for (int i = 0; i < 12; i++) {
		const char *ph = i < 2 ? "fill" : "measure";
		const char *cols[] = { "mibps", "iops", "lat_p50_us", "lat_p999_us", "lat_max_us" };
		double want[] = { s[i].mibps, s[i].iops, s[i].lat_us.p50, s[i].lat_us.p999,
				  s[i].lat_us.max };
		for (size_t k = 0; k < ARRAY_SIZE(cols); k++) {
			snprintf(sql, sizeof(sql),
				 "SELECT %s FROM samples WHERE iteration_id = %lld"
				 " AND phase = '%s' AND t_ms = %lld",
				 cols[k], (long long)id, ph, (long long)s[i].t_ms);
			assert_true(one_dbl(fx, sql) == want[k]);
		}
	}
	assert_int_equal(
		one_int(fx, "SELECT count(*) FROM samples WHERE host_stall_ms IS NOT NULL"), 1);
	assert_true(one_dbl(fx, "SELECT host_stall_ms FROM samples"
				" WHERE host_stall_ms > 0") == 1234567 / 1e6);
	assert_int_equal(one_int(fx, "SELECT count(*) FROM samples WHERE mibps_min_1s IS NULL"),
			 12);
}

/* 130 s measured: minutes 0, 1, 2 of 60, 60, 10 samples; every byte kept,
 * the rate's extremes and the latencies' highest; a recent iteration is
 * left alone. */
static void test_rollup_minutes(void **state)
{
	struct fx *fx = *state;
	static struct db_sample s[140], r[12];
	int64_t cursor = 0, id = store(fx, 1, 130, s);
	int64_t recent = store(fx, 2, 10, r);
	char out[512], sql[160];
	long long bytes = one_int(fx, "SELECT sum(bytes) FROM samples WHERE iteration_id = 1");

	(void)recent;
	unit_exec(fx->path, "UPDATE iterations SET ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now',"
			    " '-1 hour') WHERE number = 1");
	assert_int_equal(db_samples_rollup(fx->db, 60, 8, &cursor), 1);
	assert_int_equal(cursor, 0); /* the pass reached the end */
	assert_string_equal(
		unit_rows(fx->path,
			  "SELECT phase, minute, samples, duration_ms FROM sample_minutes"
			  " ORDER BY phase, minute",
			  out, sizeof(out)),
		"fill|0|2|2000.0\nmeasure|0|60|60000.0\nmeasure|1|60|60000.0\n"
		"measure|2|10|9250.0\n");
	snprintf(sql, sizeof(sql),
		 "SELECT sum(bytes) FROM sample_minutes WHERE iteration_id = %lld", (long long)id);
	assert_int_equal(one_int(fx, sql), bytes);
	assert_int_equal(one_int(fx, "SELECT count(*) FROM samples WHERE iteration_id = 1"), 0);
	assert_int_equal(one_int(fx, "SELECT count(*) FROM samples WHERE iteration_id = 2"), 12);
	/* minute 0 of measure: samples 2..61, the rate rising with i */
	assert_true(one_dbl(fx, "SELECT mibps_min FROM sample_minutes"
				" WHERE phase = 'measure' AND minute = 0") == s[2].mibps);
	assert_true(one_dbl(fx, "SELECT mibps_max FROM sample_minutes"
				" WHERE phase = 'measure' AND minute = 0") == s[61].mibps);
	assert_true(one_dbl(fx, "SELECT lat_max_us FROM sample_minutes"
				" WHERE phase = 'measure' AND minute = 0") == s[61].lat_us.max);
	assert_true(one_dbl(fx, "SELECT host_stall_ms FROM sample_minutes"
				" WHERE phase = 'measure' AND minute = 0") == 1234567 / 1e6);
	/* the drive's readings folded with them: each phase's first, the last
	 * of each minute with the minute's highest temperature */
	assert_string_equal(
		unit_rows(fx->path,
			  "SELECT phase, t_ms, host_bytes >> 20, temp_c FROM device_series"
			  " WHERE iteration_id = 1 ORDER BY phase, t_ms",
			  out, sizeof(out)),
		"0|0||\n0|2000|2|41\n1|0||\n1|60000|62|46\n1|120000|122|46\n"
		"1|130000|132|46\n");
	assert_int_equal(one_int(fx, "SELECT count(*) FROM device_series WHERE iteration_id = 2"),
			 14);
	struct db_dev_point *v;
	size_t n;
	assert_int_equal(db_series_read(fx->db, 2, &v, &n), 0);
	assert_int_equal(n, 14);
	assert_int_equal(v[0].phase, DB_PHASE_FILL);
	assert_false(v[0].has[DB_SERIES_HOST_BYTES]);
	assert_int_equal(v[13].phase, DB_PHASE_MEASURE);
	assert_int_equal(v[13].t_ms, 10000);
	assert_int_equal(v[13].val[DB_SERIES_HOST_BYTES], 12 << 20);
	assert_false(v[13].has[DB_SERIES_MEDIA_BYTES]);
	free(v);
	/* nothing more is old enough */
	assert_int_equal(db_samples_rollup(fx->db, 60, 8, &cursor), 0);
}

/* A schema-15 database (the fixture) moved one iteration per batch: the
 * progress counts up, the last call drops the old table, the view reads
 * what the old table held. */
static void test_migrate_in_batches(void **state)
{
	struct fx *fx = *state;
	struct db_samples_progress p;
	char before[4096], after[4096], err[256], path[160];
	static const char q[] = "SELECT iteration_id, phase, t_ms, printf('%.15g', mibps),"
				" printf('%.15g', iops), lat_p50_us, lat_max_us, duration_ms, bytes"
				" FROM samples ORDER BY 1, 2, 3";
	FILE *f = fopen(FIXTURE_V15, "r");
	static char sql[65536];
	struct db *db = NULL;

	if (!f) {
		print_message("  %s not found (run from the source tree)\n", FIXTURE_V15);
		skip();
	}
	sql[fread(sql, 1, sizeof(sql) - 1, f)] = '\0';
	fclose(f);
	snprintf(path, sizeof(path), "%s/v15.db", fx->dir);
	unit_exec(path, sql);
	unit_rows(path, q, before, sizeof(before));
	assert_int_equal(db_open(path, 0, &db, err, sizeof(err)), 0);
	for (long n = 1; n <= 4; n++) {
		assert_int_equal(db_samples_migrate(db, 1, &p), 1);
		assert_int_equal(p.done, n);
		assert_int_equal(p.total, 4);
	}
	assert_int_equal(db_samples_migrate(db, 1, &p), 0);
	assert_int_equal(db_samples_migrate(db, 1, &p), 0); /* nothing left to do */
	db_close(db);
	assert_string_equal(unit_rows(path, q, after, sizeof(after)), before);
	assert_string_equal(
		unit_rows(path, "SELECT count(*) FROM sqlite_master WHERE name = 'samples_v15'",
			  after, sizeof(after)),
		"0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ns_conversions),
		cmocka_unit_test_setup_teardown(test_view_reads_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollup_minutes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_in_batches, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
