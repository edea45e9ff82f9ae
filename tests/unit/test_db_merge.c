/* test_db_merge: db_merge on temporary databases built with the db API:
 * targets arrive as HOST/NAME with every row, a second merge changes
 * nothing, a grown source brings its new rows, newer and foreign schemas
 * are refused with nothing written. */
#include "unit.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "unit_tmp.h"

struct fx {
	char dir[64], src[128], out[128], grown[128];
};

static void remove_db(const char *path)
{
	char p[160];
	static const char *const sfx[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/wearmon-test-merge.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->src, sizeof(fx->src), "%s/src.db", fx->dir);
	snprintf(fx->out, sizeof(fx->out), "%s/out.db", fx->dir);
	snprintf(fx->grown, sizeof(fx->grown), "%s/grown.db", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	remove_db(fx->src);
	remove_db(fx->out);
	remove_db(fx->grown);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static int64_t count(const char *path, const char *sql)
{
	sqlite3 *c = NULL;
	sqlite3_stmt *st = NULL;
	int64_t n = -1;
	assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(c);
	return n;
}

/* A source with target lab1: ncycles cycles of one done iteration with two
 * samples and an event each. */
static void make_source(const char *path, int ncycles)
{
	struct db_target_info t = { .name = "lab1",
				    .device = "/dev/sdx",
				    .kind = TGT_BLOCK,
				    .capacity_bytes = 1ull << 30,
				    .logical_block_size = 512,
				    .serial = "SN42" };
	struct db *db = NULL;
	int64_t run, tgt, cyc, it;
	char err[256];
	assert_int_equal(db_open(path, 0, &db, err, sizeof(err)), 0);
	assert_int_equal(db_run_begin(db, "/x.conf", &run), 0);
	assert_int_equal(db_target_upsert(db, &t, &tgt), 0);
	for (int n = 1; n <= ncycles; n++) {
		struct db_iteration r = { .run_id = run,
					  .target_id = tgt,
					  .number = 1,
					  .size_bytes = 1 << 20,
					  .workload = "randwrite",
					  .block_size = 4096,
					  .queue_depth = 4,
					  .amount_bytes = 1 << 20,
					  .status = DB_RUNNING };
		struct db_sample s[2] = {
			{ .phase = DB_PHASE_MEASURE, .t_ms = 500, .mibps = 10 },
			{ .phase = DB_PHASE_MEASURE, .t_ms = 1000, .mibps = 20 }
		};
		struct db_event e = { .target_id = tgt,
				      .run_id = run,
				      .severity = "warning",
				      .kind = "throughput-crash",
				      .message = "slow",
				      .value = -1,
				      .baseline = -1 };
		assert_int_equal(db_cycle_begin(db, tgt, run, n, &cyc), 0);
		r.cycle_id = cyc;
		assert_int_equal(db_iteration_begin(db, &r, &it), 0);
		r.status = DB_DONE;
		r.mibps_avg = 10.0 * n;
		r.bytes = 1 << 20;
		r.seconds = 1;
		assert_int_equal(db_iteration_end(db, it, &r, s, 2), 0);
		e.cycle_id = cyc;
		e.iteration_id = it;
		assert_int_equal(db_event(db, &e, NULL), 0);
		assert_int_equal(db_cycle_end(db, cyc, DB_DONE), 0);
	}
	assert_int_equal(db_run_end(db, run, 0, "cycles done"), 0);
	db_close(db);
	unit_exec(path, "UPDATE runs SET hostname = 'm7'");
}

static int merge_as(const char *out, const char *src, const char *host, struct db_merge_result *r,
		    char *err, size_t len)
{
	struct db *db = NULL;
	assert_int_equal(db_open(out, 0, &db, err, len), 0);
	int ret = db_merge(db, src, host, r, err, len);
	db_close(db);
	return ret;
}

static int merge(const char *out, const char *src, struct db_merge_result *r, char *err, size_t len)
{
	return merge_as(out, src, NULL, r, err, len);
}

static void test_merge_and_again(void **state)
{
	struct fx *fx = *state;
	struct db_merge_result r;
	char err[512] = "";

	/* the source at two cycles, and the same database grown to three */
	make_source(fx->src, 3);
	char sql[200];
	snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", fx->grown);
	unit_exec(fx->src, sql);
	unit_exec(fx->src,
		  "DELETE FROM samples WHERE iteration_id IN (SELECT i.id FROM iterations i"
		  " JOIN cycles c ON c.id = i.cycle_id WHERE c.number = 3);"
		  " DELETE FROM events WHERE cycle_id IN (SELECT id FROM cycles WHERE number = 3);"
		  " DELETE FROM iterations WHERE cycle_id IN (SELECT id FROM cycles"
		  " WHERE number = 3); DELETE FROM cycles WHERE number = 3");
	assert_int_equal(merge(fx->out, fx->src, &r, err, sizeof(err)), 0);
	assert_string_equal(r.host, "m7");
	assert_int_equal(r.targets, 1);
	assert_int_equal(r.cycles, 2);
	assert_int_equal(r.iterations, 2);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM targets WHERE name = 'm7/lab1'"
					" AND serial = 'SN42' AND device = '/dev/sdx'"),
			 1);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM samples"), 4);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM events WHERE iteration_id IN"
					" (SELECT id FROM iterations)"),
			 2);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM runs WHERE hostname = 'm7'"
					" AND ended_at IS NOT NULL"),
			 1);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM history WHERE target = 'm7/lab1'"
					" AND mibps_avg = 10.0 * cycle"),
			 2);
	/* again: the same rows, no more */
	assert_int_equal(merge(fx->out, fx->src, &r, err, sizeof(err)), 0);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM iterations"), 2);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM samples"), 4);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM events"), 2);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM targets"), 1);
	assert_int_equal(r.unchanged, 1);
	/* the last iteration's samples grew (it was running): copied again */
	unit_exec(fx->src, "INSERT INTO samples (iteration_id, phase, t_ms, mibps) SELECT max(id),"
			   " 'measure', 999999, 1 FROM iterations");
	assert_int_equal(merge(fx->out, fx->src, &r, err, sizeof(err)), 0);
	assert_int_equal(r.unchanged, 0);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM samples"), 5);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM iterations"), 2);
	/* a grown copy brings its new rows: replaced, not added (2 + 3) */
	assert_int_equal(merge(fx->out, fx->grown, &r, err, sizeof(err)), 0);
	assert_int_equal(r.unchanged, 0);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM iterations"), 3);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM samples"), 6);
	/* another database with the same host and target name: refused,
	 * naming both, and taken under another host name */
	remove_db(fx->src);
	make_source(fx->src, 1);
	unit_exec(fx->src, "UPDATE iterations SET started_at = '2020-01-01T00:00:00Z'");
	assert_int_equal(merge(fx->out, fx->src, &r, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, fx->src));
	assert_non_null(strstr(err, fx->grown));
	assert_non_null(strstr(err, "m7/lab1"));
	assert_int_equal(count(fx->out, "SELECT count(*) FROM iterations"), 3);
	assert_int_equal(merge_as(fx->out, fx->src, "m8", &r, err, sizeof(err)), 0);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM targets WHERE name = 'm8/lab1'"), 1);
	assert_int_equal(count(fx->out, "SELECT count(*) FROM iterations"), 4);
}

static void test_refused(void **state)
{
	struct fx *fx = *state;
	struct db_merge_result r;
	char err[512] = "";

	make_source(fx->src, 1);
	unit_exec(fx->src, "PRAGMA user_version = 99");
	assert_int_equal(merge(fx->out, fx->src, &r, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "schema version 99 is newer than this wearmon knows"));
	assert_non_null(strstr(err, fx->src));
	assert_int_equal(count(fx->out, "SELECT count(*) FROM targets"), 0);
	remove_db(fx->src);
	unit_exec(fx->src, "CREATE TABLE something (x); PRAGMA user_version = 2");
	assert_int_equal(merge(fx->out, fx->src, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a wearmon database"));
	assert_int_equal(count(fx->out, "SELECT count(*) FROM runs"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_merge_and_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
