/* test_db_read: the reading side of the db module on temporary database
 * files: db_query (rows, parameters, refusals, errors), the views of schema
 * version 2 (cycle_summary, degradation, alerts) and the migration to it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_int.h"

#define V1_SCHEMA "tests/unit/fixtures/schema-v1.sql"

struct fx {
	char dir[64];
	char path[128];
	struct db *db;
	int64_t run_id, tgt;
	int has_rule; /* mk_it stores a baseline under rule */
	enum cfg_baseline rule;
};

static int setup(void **state)
{
	struct db_target_info t = {
		.name = "lab1",
		.device = "/dev/loop7",
		.kind = TGT_BLOCK,
		.capacity_bytes = 1ull << 30,
		.logical_block_size = 512,
	};
	struct fx *fx = calloc(1, sizeof(*fx));
	char err[512];

	if (!fx)
		return -1;
	*state = fx;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/wearmon-test-dbr.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/history.db", fx->dir);
	if (db_open(fx->path, 0, &fx->db, err, sizeof(err)) != 0 ||
	    db_run_begin(fx->db, "/etc/wearmon/test.conf", &fx->run_id) != 0 ||
	    db_target_upsert(fx->db, &t, &fx->tgt) != 0) {
		fprintf(stderr, "setup: %s\n", err);
		return -1;
	}
	return 0;
}

/* The database and the -wal and -shm files the daemon keeps beside it. */
static void remove_db(const struct fx *fx)
{
	char p[192];

	unlink(fx->path);
	snprintf(p, sizeof(p), "%s-wal", fx->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", fx->path);
	unlink(p);
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	db_close(fx->db);
	remove_db(fx);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static void raw_exec(const struct fx *fx, const char *sql)
{
	sqlite3 *c = NULL;
	char *msg = NULL;

	assert_int_equal(
		sqlite3_open_v2(fx->path, &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
		SQLITE_OK);
	sqlite3_busy_timeout(c, 5000);
	if (sqlite3_exec(c, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(c);
}

/* ---- collecting rows through db_query ----------------------------------- */

#define MAXROWS 16
#define MAXCOLS 16

/* Rows as text ("NULL" for NULL, numbers printed with %g). */
struct rows {
	int n, ncols;
	char cell[MAXROWS][MAXCOLS][64];
	char name[MAXCOLS][32];
	enum db_type type[MAXROWS][MAXCOLS];
	int stop_after; /* > 0: return 7 after that many rows */
};

static int collect(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct rows *r = arg;

	assert_true(r->n < MAXROWS && n <= MAXCOLS);
	r->ncols = n;
	for (int c = 0; c < n; c++) {
		char *cell = r->cell[r->n][c];

		snprintf(r->name[c], sizeof(r->name[c]), "%s", names[c]);
		r->type[r->n][c] = v[c].type;
		if (v[c].type == DB_NULL)
			snprintf(cell, 64, "NULL");
		else if (v[c].type == DB_TEXT)
			snprintf(cell, 64, "%s", v[c].s);
		else
			snprintf(cell, 64, "%g", v[c].r);
	}
	r->n++;
	return r->stop_after > 0 && r->n >= r->stop_after ? 7 : 0;
}

/* Runs sql and returns the rows; fails the test on error. */
static struct rows *rows_of(struct fx *fx, const char *sql)
{
	static struct rows r;
	char err[512];
	int ret;

	memset(&r, 0, sizeof(r));
	ret = db_query(fx->db, sql, NULL, 0, collect, &r, err, sizeof(err));
	if (ret != 0)
		fail_msg("%s: %d %s", sql, ret, err);
	return &r;
}

/* One row's cells joined by '|'. */
static const char *row_text(const struct rows *r, int i)
{
	static char buf[1024];
	size_t n = 0;

	buf[0] = '\0';
	for (int c = 0; c < r->ncols; c++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", c ? "|" : "",
				      r->cell[i][c]);
	return buf;
}

/* ---- builders ----------------------------------------------------------- */

static int64_t mk_cycle(struct fx *fx, long number)
{
	int64_t id = 0;

	assert_int_equal(db_cycle_begin(fx->db, fx->tgt, fx->run_id, number, &id), 0);
	return id;
}

/* An iteration with the given figures (avg < 0: left running). */
static int64_t mk_it(struct fx *fx, int64_t cyc, long number, uint64_t size, const char *workload,
		     double min, double avg, double max, enum db_status status)
{
	struct db_iteration it = {
		.cycle_id = cyc,
		.run_id = fx->run_id,
		.target_id = fx->tgt,
		.number = number,
		.size_index = (int)number - 1,
		.size_bytes = size,
		.workload = workload,
		.block_size = 4096,
		.queue_depth = 32,
		.amount_bytes = size,
		.status = DB_RUNNING,
	};
	int64_t id = 0;
	struct db_baseline_key k = { .target_id = fx->tgt,
				     .size_bytes = size,
				     .workload = workload,
				     .block_size = 4096,
				     .before_id = INT64_MAX,
				     .rule = fx->rule };

	it.baseline = fx->has_rule ? cfg_baseline_name(fx->rule) : NULL;
	if (fx->has_rule && db_baseline(fx->db, &k, &it.baseline_mibps, &it.baseline_iteration_id))
		it.baseline_iteration_id = 0;
	assert_int_equal(db_iteration_begin(fx->db, &it, &id), 0);
	if (avg < 0)
		return id;
	it.bytes = size;
	it.seconds = 1;
	it.mibps_min = min;
	it.mibps_avg = avg;
	it.mibps_max = max;
	it.status = status;
	assert_int_equal(db_iteration_end(fx->db, id, &it, NULL, 0), 0);
	return id;
}

static void end_cycle(struct fx *fx, int64_t cyc, enum cfg_action action, enum act_outcome outcome)
{
	struct db_action a = {
		.kind = action, .seconds = 2.5, .bytes = 1 << 20, .outcome = outcome
	};

	if (action != ACT_NONE) {
		assert_int_equal(db_action_start(fx->db, cyc, &a), 0);
		assert_int_equal(db_action_end(fx->db, cyc, &a, NULL), 0);
	}
	assert_int_equal(db_cycle_end(fx->db, cyc, DB_DONE), 0);
}

/* ---- db_query ----------------------------------------------------------- */

static void test_query_params_and_types(void **state)
{
	struct fx *fx = *state;
	const struct db_value p[] = {
		{ .type = DB_INT, .i = 41 },
		{ .type = DB_TEXT, .s = "lab1" },
		{ .type = DB_REAL, .r = 2.5 },
		{ .type = DB_NULL },
	};
	struct rows r;
	char err[512];

	memset(&r, 0, sizeof(r));
	assert_int_equal(db_query(fx->db,
				  "SELECT ? + 1 AS a, (SELECT name FROM targets"
				  " WHERE name = ?) AS b, ? * 2 AS c, ? IS NULL AS d",
				  p, 4, collect, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(row_text(&r, 0), "42|lab1|5|1");
	assert_string_equal(r.name[1], "b");
	assert_int_equal(r.type[0][0], DB_INT);
	assert_int_equal(r.type[0][1], DB_TEXT);
	assert_int_equal(r.type[0][2], DB_REAL);
}

static void test_query_no_rows_and_stop(void **state)
{
	struct fx *fx = *state;
	struct rows r;
	char err[512];

	memset(&r, 0, sizeof(r));
	assert_int_equal(db_query(fx->db, "SELECT * FROM iterations", NULL, 0, collect, &r, err,
				  sizeof(err)),
			 0);
	assert_int_equal(r.n, 0);
	r.stop_after = 2;
	assert_int_equal(db_query(fx->db, "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3", NULL, 0,
				  collect, &r, err, sizeof(err)),
			 7);
	assert_int_equal(r.n, 2);
}

static void test_query_refuses_writes(void **state)
{
	struct fx *fx = *state;
	static const char *const writes[] = {
		"DELETE FROM targets",
		"UPDATE targets SET name = 'x'",
		"INSERT INTO runs (pid, version) VALUES (1, 'x')",
		"DROP VIEW history",
	};
	char err[512];

	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		assert_int_equal(db_query(fx->db, writes[i], NULL, 0, NULL, NULL, err, sizeof(err)),
				 -EPERM);
		assert_non_null(strstr(err, fx->path));
	}
	assert_string_equal(row_text(rows_of(fx, "SELECT name FROM targets"), 0), "lab1");
}

static void test_query_errors_named(void **state)
{
	struct fx *fx = *state;
	char err[512];
	int ret = db_query(fx->db, "SELECT * FROM no_such_table", NULL, 0, NULL, NULL, err,
			   sizeof(err));

	assert_true(ret < 0);
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, "no_such_table"));
	assert_int_equal(db_query(NULL, "SELECT 1", NULL, 0, NULL, NULL, err, sizeof(err)),
			 -EINVAL);
}

static void test_query_on_readonly_handle(void **state)
{
	struct fx *fx = *state;
	struct db *ro = NULL;
	struct rows r;
	char err[512];

	mk_it(fx, mk_cycle(fx, 1), 1, 1 << 20, "randwrite", 90, 100, 110, DB_DONE);
	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(db_query(ro, "SELECT target, mibps_avg FROM history", NULL, 0, collect, &r,
				  err, sizeof(err)),
			 0);
	assert_string_equal(row_text(&r, 0), "lab1|100");
	db_close(ro);
}

/* ---- views -------------------------------------------------------------- */

static void test_cycle_summary(void **state)
{
	struct fx *fx = *state;
	int64_t c1 = mk_cycle(fx, 1), c2;
	struct rows *r;

	mk_it(fx, c1, 1, 1 << 20, "randwrite", 80, 100, 120, DB_DONE);
	mk_it(fx, c1, 2, 2 << 20, "randwrite", 40, 50, 300, DB_DONE);
	mk_it(fx, c1, 3, 4 << 20, "randwrite", 1, 2, 900, DB_INTERRUPTED);
	end_cycle(fx, c1, ACT_TRIM, ACT_OUT_OK);
	c2 = mk_cycle(fx, 2);
	mk_it(fx, c2, 1, 1 << 20, "randwrite", -1, -1, -1, DB_RUNNING);

	r = rows_of(fx, "SELECT target, cycle, status, iterations, mibps_min, mibps_avg,"
			" mibps_max, action, action_outcome, action_seconds, action_bytes"
			" FROM cycle_summary ORDER BY cycle");
	assert_int_equal(r->n, 2);
	/* the interrupted iteration counts for nothing */
	assert_string_equal(row_text(r, 0), "lab1|1|done|2|40|75|300|trim|ok|2.5|1.04858e+06");
	assert_string_equal(row_text(r, 1), "lab1|2|running|0|NULL|NULL|NULL|NULL|NULL|NULL|NULL");
}

static void test_degradation(void **state)
{
	struct fx *fx = *state;
	int64_t c1 = mk_cycle(fx, 1), c2, c3;
	struct rows *r;

	fx->has_rule = 1;
	fx->rule = BASELINE_FIRST;
	mk_it(fx, c1, 1, 1 << 20, "randwrite", 0, 200, 0, DB_DONE);
	mk_it(fx, c1, 2, 2 << 20, "randwrite", 0, 999, 0, DB_INTERRUPTED);
	end_cycle(fx, c1, ACT_NONE, ACT_OUT_OK);
	c2 = mk_cycle(fx, 2);
	mk_it(fx, c2, 1, 1 << 20, "randwrite", 0, 100, 0, DB_DONE);
	mk_it(fx, c2, 2, 2 << 20, "randwrite", 0, 80, 0, DB_DONE);
	end_cycle(fx, c2, ACT_NONE, ACT_OUT_OK);
	c3 = mk_cycle(fx, 3);
	mk_it(fx, c3, 1, 1 << 20, "randwrite", 0, 50, 0, DB_DONE);
	mk_it(fx, c3, 2, 2 << 20, "randwrite", 0, 40, 0, DB_DONE);
	mk_it(fx, c3, 3, 2 << 20, "seqwrite", 0, 500, 0, DB_DONE);
	mk_it(fx, c3, 4, 2 << 20, "seqwrite", 0, 300, 0, DB_DONE);

	r = rows_of(fx,
		    "SELECT cycle, size_bytes, workload, mibps_avg, baseline_mibps,"
		    " baseline_cycle, ratio, baseline FROM degradation ORDER BY cycle, iteration");
	assert_int_equal(r->n, 7);
	/* the first measurement has nothing earlier to compare with */
	assert_string_equal(row_text(r, 0), "1|1.04858e+06|randwrite|200|NULL|NULL|NULL|first");
	/* the interrupted first measurement of 2 MiB is no baseline */
	assert_string_equal(row_text(r, 1), "2|1.04858e+06|randwrite|100|200|1|0.5|first");
	assert_string_equal(row_text(r, 2), "2|2.09715e+06|randwrite|80|NULL|NULL|NULL|first");
	assert_string_equal(row_text(r, 3), "3|1.04858e+06|randwrite|50|200|1|0.25|first");
	assert_string_equal(row_text(r, 4), "3|2.09715e+06|randwrite|40|80|2|0.5|first");
	/* another workload on the same size has its own baseline: the row
	 * stored as its baseline when it started */
	assert_string_equal(row_text(r, 5), "3|2.09715e+06|seqwrite|500|NULL|NULL|NULL|first");
	assert_string_equal(row_text(r, 6), "3|2.09715e+06|seqwrite|300|500|3|0.6|first");
	/* the view reads the stored choice, it does not choose: a row stored
	 * under another rule keeps it */
	fx->rule = BASELINE_BEST;
	mk_it(fx, c3, 5, 1 << 20, "randwrite", 0, 50, 0, DB_DONE);
	assert_string_equal(row_text(rows_of(fx, "SELECT baseline_mibps, baseline_cycle, baseline"
						 " FROM degradation WHERE iteration = 5"),
				     0),
			    "200|1|best");
}

/* The rows of the baseline join the CLI uses, one line per iteration. */
static void baseline_lines(struct db *db, char *out, size_t len)
{
	static struct rows r;
	char err[512];
	size_t n = 0;

	memset(&r, 0, sizeof(r));
	if (db_query(db,
		     "SELECT i.id, b.baseline_mibps, b.baseline_cycle, b.baseline_iteration_id"
		     " FROM iterations i LEFT JOIN iteration_baseline b ON b.iteration_id = i.id"
		     " ORDER BY i.id",
		     NULL, 0, collect, &r, err, sizeof(err)))
		fail_msg("%s", err);
	out[0] = '\0';
	for (int i = 0; i < r.n; i++)
		n += (size_t)snprintf(out + n, len - n, "%s;", row_text(&r, i));
}

/* One definition of an iteration's baseline: the view iteration_baseline
 * gives what degradation shows, and a reader of a database from before it
 * (schema 13, and before 9 where no row stored its baseline) gets the same
 * answer from the TEMP view db_open makes, without changing the file. */
static void test_iteration_baseline_for_every_schema(void **state)
{
	struct fx *fx = *state;
	struct db *ro = NULL;
	char now[1024], old[1024], err[512];
	int64_t c1 = mk_cycle(fx, 1), c2;

	fx->has_rule = 1;
	fx->rule = BASELINE_FIRST;
	mk_it(fx, c1, 1, 1 << 20, "randwrite", 0, 200, 0, DB_DONE);
	mk_it(fx, c1, 2, 2 << 20, "randwrite", 0, 90, 0, DB_DONE);
	end_cycle(fx, c1, ACT_NONE, ACT_OUT_OK);
	c2 = mk_cycle(fx, 2);
	mk_it(fx, c2, 1, 1 << 20, "randwrite", 0, 100, 0, DB_DONE);
	mk_it(fx, c2, 2, 2 << 20, "randwrite", 0, 45, 0, DB_DONE);
	baseline_lines(fx->db, now, sizeof(now));
	assert_string_equal(now, "1|NULL|NULL|NULL;2|NULL|NULL|NULL;3|200|1|1;4|90|1|2;");
	assert_string_equal(row_text(rows_of(fx, "SELECT group_concat(iteration_id || '|' ||"
						 " baseline_mibps || '|' || baseline_cycle, ';')"
						 " FROM degradation WHERE ratio IS NOT NULL"),
				     0),
			    "3|200.0|1;4|90.0|1");
	db_close(fx->db);
	fx->db = NULL;
	/* schema 13: the view did not exist, nor schema 21's triggers */
	raw_exec(fx, "DROP VIEW degradation; DROP VIEW iteration_baseline;"
		     " DROP TRIGGER iterations_figures_insert;"
		     " DROP TRIGGER iterations_figures_update; PRAGMA user_version = 13;");
	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	baseline_lines(ro, old, sizeof(old));
	assert_string_equal(old, now);
	db_close(ro);
	/* schema 8: nothing stored, the reader picks what migration 9 would */
	raw_exec(fx, "ALTER TABLE iterations DROP COLUMN baseline_iteration_id;"
		     " PRAGMA user_version = 8;");
	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	baseline_lines(ro, old, sizeof(old));
	assert_string_equal(old, now);
	db_close(ro);
	raw_exec(fx, "SELECT 1");
	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	assert_string_equal(row_text(rows_of(&(struct fx){ .db = ro }, "PRAGMA user_version"), 0),
			    "8");
	db_close(ro);
}

/* ---- db_baseline's cost ---------------------------------------------------- */

static long vm_steps;

static int count_steps(unsigned type, void *ctx, void *p, void *x)
{
	if (type == SQLITE_TRACE_PROFILE)
		vm_steps += sqlite3_stmt_status(p, SQLITE_STMTSTATUS_VM_STEP, 0);
	return 0;
}

/* Done cycles first..last, eight sizes each; 1 MiB runs fastest in cycle 6. */
static void mk_history(struct fx *fx, long first, long last)
{
	for (long c = first; c <= last; c++) {
		int64_t cyc = mk_cycle(fx, c);

		for (long s = 1; s <= 8; s++)
			mk_it(fx, cyc, s, (uint64_t)s << 20, "randwrite", 0, 100.0 + (c == 6), 0,
			      DB_DONE);
		end_cycle(fx, cyc, ACT_NONE, ACT_OUT_OK);
	}
}

/* The VM steps of one db_baseline of 1 MiB under rule; its row id in *id. */
static long baseline_steps(struct fx *fx, enum cfg_baseline rule, int64_t *id)
{
	struct db_baseline_key k = { .target_id = fx->tgt,
				     .size_bytes = 1 << 20,
				     .workload = "randwrite",
				     .block_size = 4096,
				     .before_id = INT64_MAX,
				     .rule = rule };
	double mibps = 0;

	vm_steps = 0;
	sqlite3_trace_v2(fx->db->conn, SQLITE_TRACE_PROFILE, count_steps, NULL);
	assert_int_equal(db_baseline(fx->db, &k, &mibps, id), 0);
	sqlite3_trace_v2(fx->db->conn, 0, NULL, NULL);
	return vm_steps;
}

/* The daemon looks its baseline up per iteration: first and previous cost
 * the same after 100 cycles as after 5 (an index, not a sort of the
 * target's history), and every rule still picks the same row. */
static void test_baseline_cost_does_not_grow(void **state)
{
	struct fx *fx = *state;
	long first5, prev5, first100, prev100, best100;
	int64_t first, prev, id;

	mk_history(fx, 1, 5);
	first5 = baseline_steps(fx, BASELINE_FIRST, &first);
	prev5 = baseline_steps(fx, BASELINE_PREVIOUS, &prev);
	assert_int_equal(first, 1);
	assert_int_equal(prev, 4 * 8 + 1);
	mk_history(fx, 6, 100);
	first100 = baseline_steps(fx, BASELINE_FIRST, &id);
	assert_int_equal(id, 1);
	prev100 = baseline_steps(fx, BASELINE_PREVIOUS, &id);
	assert_int_equal(id, 99 * 8 + 1);
	best100 = baseline_steps(fx, BASELINE_BEST, &id);
	assert_int_equal(id, 5 * 8 + 1);
	print_message("db_baseline VM steps, 5 -> 100 cycles: first %ld -> %ld,"
		      " previous %ld -> %ld; best (sorts its key's rows) %ld\n",
		      first5, first100, prev5, prev100, best100);
	assert_true(first100 <= 2 * first5);
	assert_true(prev100 <= 2 * prev5);
}

static void test_alerts_view(void **state)
{
	static const char *const sev[] = { "info",    "crit", "debug", "notice",
					   "warning", "err",  "emerg", "alert" };
	struct fx *fx = *state;
	int64_t c1 = mk_cycle(fx, 1);
	struct rows *r;
	char sql[256];

	for (size_t i = 0; i < sizeof(sev) / sizeof(sev[0]); i++) {
		struct db_event e = { .target_id = i % 2 ? fx->tgt : 0,
				      .cycle_id = i % 2 ? c1 : 0,
				      .severity = sev[i],
				      .kind = "test",
				      .message = sev[i],
				      .value = -1,
				      .baseline = -1 };
		int64_t id = 0;

		assert_int_equal(db_event(fx->db, &e, &id), 0);
		/* times run backwards, so the view must sort */
		snprintf(sql, sizeof(sql),
			 "UPDATE events SET at ="
			 " '2026-12-02T10:00:0%zu.000Z' WHERE id = %lld",
			 9 - i, (long long)id);
		raw_exec(fx, sql);
	}
	r = rows_of(fx, "SELECT severity, coalesce(target, '-'), coalesce(cycle, '-')"
			" FROM alerts");
	assert_int_equal(r->n, 6);
	assert_string_equal(row_text(r, 0), "alert|lab1|1");
	assert_string_equal(row_text(r, 1), "emerg|-|-");
	assert_string_equal(row_text(r, 2), "err|lab1|1");
	assert_string_equal(row_text(r, 3), "warning|-|-");
	assert_string_equal(row_text(r, 4), "notice|lab1|1");
	assert_string_equal(row_text(r, 5), "crit|lab1|1");
}

/* A real version-1 file (tables of wearmon 0.1.0, one measured cycle):
 * readers leave it alone, the writer migrates it and the views see the
 * old rows. */
static void test_migration_from_v1(void **state)
{
	static char v1[65536];
	struct fx *fx = *state;
	struct db *ro = NULL;
	char err[512];
	struct rows r;
	size_t n;
	FILE *f = fopen(V1_SCHEMA, "r");

	if (!f) {
		print_message("  %s not found (run from the source tree)\n", V1_SCHEMA);
		skip();
	}
	n = fread(v1, 1, sizeof(v1) - 1, f);
	fclose(f);
	v1[n] = '\0';
	db_close(fx->db);
	fx->db = NULL;
	remove_db(fx);
	raw_exec(fx, v1);
	raw_exec(fx,
		 "PRAGMA user_version = 1;"
		 "INSERT INTO targets (name, device, kind, capacity_bytes, logical_block_size)"
		 " VALUES ('old', '/dev/loop9', 'block', 1073741824, 512);"
		 "INSERT INTO runs (pid, version) VALUES (1, '0.1.0');"
		 "INSERT INTO cycles (target_id, run_id, number, status, action, action_outcome)"
		 " VALUES (1, 1, 1, 'done', 'trim', 'ok');"
		 "INSERT INTO iterations (cycle_id, run_id, target_id, number, size_index,"
		 " size_bytes, region_offset, workload, block_size, queue_depth, compressibility,"
		 " amount_bytes, started_at, mibps_min, mibps_avg, mibps_max, status) VALUES"
		 " (1, 1, 1, 1, 0, 1048576, 0, 'randwrite', 4096, 32, 0, 1048576,"
		 " '2026-01-01T00:00:00.000Z', 90, 100, 110, 'done');"
		 "INSERT INTO cycles (target_id, run_id, number, status) VALUES (1, 1, 2, 'done');"
		 "INSERT INTO iterations (cycle_id, run_id, target_id, number, size_index,"
		 " size_bytes, region_offset, workload, block_size, queue_depth, compressibility,"
		 " amount_bytes, started_at, mibps_min, mibps_avg, mibps_max, status) VALUES"
		 " (2, 1, 1, 1, 0, 1048576, 0, 'randwrite', 4096, 32, 0, 1048576,"
		 " '2026-01-02T00:00:00.000Z', 40, 50, 60, 'done')");

	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(db_query(ro,
				  "SELECT (SELECT user_version FROM pragma_user_version),"
				  " group_concat(name) FROM sqlite_master WHERE type = 'view'",
				  NULL, 0, collect, &r, err, sizeof(err)),
			 0);
	assert_string_equal(row_text(&r, 0), "1|history");
	db_close(ro);

	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	r = *rows_of(fx, "PRAGMA user_version");
	assert_int_equal(atoi(r.cell[0][0]), DB_SCHEMA_VERSION);
	assert_string_equal(row_text(rows_of(fx, "SELECT count(*) FROM sqlite_master WHERE"
						 " type = 'view' AND name IN ('cycle_summary',"
						 " 'degradation', 'alerts')"),
				     0),
			    "3");
	assert_string_equal(row_text(rows_of(fx, "SELECT target, cycle, iterations,"
						 " mibps_avg, action FROM cycle_summary"),
				     0),
			    "old|1|1|100|trim");
	/* rows from before schema 9 get the "first" baseline of their history */
	r = *rows_of(fx, "SELECT cycle, baseline_cycle, ratio, baseline FROM degradation"
			 " ORDER BY cycle");
	assert_string_equal(row_text(&r, 0), "1|NULL|NULL|first");
	assert_string_equal(row_text(&r, 1), "2|1|0.5|first");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_query_params_and_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_no_rows_and_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_refuses_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_errors_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_on_readonly_handle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_degradation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_iteration_baseline_for_every_schema, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_baseline_cost_does_not_grow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alerts_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_from_v1, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
