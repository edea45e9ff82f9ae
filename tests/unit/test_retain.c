/* test_retain: the main loop's upkeep of samples on a real schema-15
 * database (the fixture): the move first, step by step at the pace of
 * the clock given, then rollups only with a retention, every byte kept. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "retain.h"
#include "unit_tmp.h"

#define FIXTURE_V15 "tests/unit/fixtures/schema-v15.sql"

static char dir[64], path[128];

static long long one_int(const char *sql)
{
	char out[64];
	return strtoll(unit_rows(path, sql, out, sizeof(out)), NULL, 10);
}

static void test_move_then_rollup(void **state)
{
	static char sql[65536];
	FILE *f = fopen(FIXTURE_V15, "r");
	struct db *db = NULL;
	struct retain r;
	char err[256];
	double now = 1000;
	int steps = 0;

	(void)state;
	if (!f) {
		print_message("  %s not found (run from the source tree)\n", FIXTURE_V15);
		skip();
	}
	sql[fread(sql, 1, sizeof(sql) - 1, f)] = '\0';
	fclose(f);
	assert_int_equal(unit_tmpdir(dir, sizeof(dir), "retain"), 0);
	snprintf(path, sizeof(path), "%s/w.db", dir);
	unit_exec(path, sql);
	long long bytes = one_int("SELECT sum(bytes) FROM samples");
	assert_int_equal(db_open(path, 0, &db, err, sizeof(err)), 0);

	retain_init(&r);
	assert_int_equal(retain_tick(&r, db, 0, now), 1);       /* first batch at once */
	assert_int_equal(retain_tick(&r, db, 0, now + 0.1), 0); /* not yet due */
	while (retain_tick(&r, db, 0, now += 1) == 1)
		steps++;
	assert_int_equal(steps, 0); /* 4 iterations: one batch moved them all */
	assert_int_equal(r.migrating, 0);
	assert_int_equal(one_int("SELECT count(*) FROM sqlite_master WHERE name = 'samples_v15'"),
			 0);
	assert_int_equal(one_int("SELECT count(*) FROM sample_data"), 10);

	/* retention 0 (forever): nothing is rolled up however old */
	unit_exec(path, "UPDATE iterations SET ended_at = '2020-01-01T00:00:00.000Z'");
	for (int i = 0; i < 5; i++)
		assert_int_equal(retain_tick(&r, db, 0, now += 100), 0);
	assert_int_equal(one_int("SELECT count(*) FROM sample_data"), 10);

	/* a day's retention: all 4 iterations end as minutes, bytes kept */
	while (retain_tick(&r, db, 86400, now += 100) == 1)
		;
	assert_int_equal(one_int("SELECT count(*) FROM sample_data"), 0);
	assert_int_equal(one_int("SELECT count(DISTINCT iteration_id) FROM sample_minutes"), 4);
	assert_int_equal(one_int("SELECT sum(bytes) FROM sample_minutes"), bytes);
	assert_int_equal(one_int("SELECT sum(samples) FROM sample_minutes"), 10);
	db_close(db);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move_then_rollup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
