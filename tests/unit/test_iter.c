/* test_iter: one size at a time through iter's narrow interface (struct
 * iter_env, the progress callback) on the null engine, against a temporary
 * regular-file target and SQLite database: the reports a size makes, the
 * read-back row, a stop from the callback, and a throughput crash alert
 * when the simulated device slows down. */
#include "unit.h"
#include "unit_tmp.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iter.h"

#define MAX_REPORTS 256

struct fx {
	char dir[64];
	char out[8192]; /* q()'s rows */
	struct cfg *c;
	struct tgt tg;
	struct plan plan;
	struct db *db;
	struct alert_ctx *alert;
	int64_t run_id, target_id;
	atomic_int stop;
	char error[512];
	struct iter_progress rep[MAX_REPORTS];
	int nrep;
	int stop_at_sample; /* set stop at the first measured sample */
	int measuring;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	if (unit_tmpdir(fx->dir, sizeof(fx->dir), "iter")) {
		free(fx);
		return -1;
	}
	fx->tg.fd = -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	alert_free(fx->alert);
	if (fx->db)
		db_close(fx->db);
	tgt_close(&fx->tg);
	cfg_free(fx->c);
	unit_rmtree(fx->dir);
	free(fx);
	return 0;
}

/* The rows of a query as the sqlite3 CLI prints them: "a|b\n" each. */
static const char *q(struct fx *fx, const char *sql)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/history.db", fx->dir);
	return unit_rows(path, sql, fx->out, sizeof(fx->out));
}

static const char base_conf[] = "[wearmon]\n"
				"database = %s/history.db\n"
				"[target t]\n"
				"device = %s/target.img\n"
				"file_size = 1M\n"
				"sizes = 256K 1M\n"
				"fill_block_size = 64k\n"
				"fill_queue_depth = 4\n"
				"block_size = 4k\n"
				"queue_depth = 8\n"
				"sample_interval = 0.1s\n"
				"ioengine = null\n"
				"%s";

/* Open the target and the database as main and sched do. */
static void open_all(struct fx *fx, const char *extra)
{
	char text[2048], err[2048];
	snprintf(text, sizeof(text), base_conf, fx->dir, fx->dir, extra);
	if (cfg_parse_string(text, "test.conf", &fx->c, err, sizeof(err)))
		fail_msg("%s", err);
	const struct cfg_target *t = &fx->c->targets[0];
	if (tgt_open(fx->c, t, fx->c->database, 0, &fx->tg, err, sizeof(err)) ||
	    plan_build(fx->c, t, fx->tg.capacity, fx->tg.logical_block_size, &fx->plan, err,
		       sizeof(err)) ||
	    db_open(fx->c->database, 0, &fx->db, err, sizeof(err)))
		fail_msg("%s", err);
	struct db_target_info info = {
		.name = fx->tg.name,
		.device = fx->tg.path,
		.kind = fx->tg.kind,
		.capacity_bytes = fx->tg.capacity,
		.logical_block_size = fx->tg.logical_block_size,
	};
	assert_int_equal(db_run_begin(fx->db, "test.conf", &fx->run_id), 0);
	assert_int_equal(db_target_upsert(fx->db, &info, &fx->target_id), 0);
	struct alert_target who = {
		.name = t->name,
		.device = fx->tg.path,
		.db = fx->db,
		.target_id = fx->target_id,
		.run_id = fx->run_id,
	};
	assert_int_equal(alert_init(&who, t, &fx->alert), 0);
}

static void record(void *arg, const struct iter_progress *p)
{
	struct fx *fx = arg;
	if (fx->nrep < MAX_REPORTS)
		fx->rep[fx->nrep++] = *p;
	if (p->what == ITER_PHASE)
		fx->measuring = p->phase == ITER_MEASURE;
	if (p->what == ITER_SAMPLE && fx->measuring && fx->stop_at_sample)
		atomic_store(&fx->stop, 1);
}

/* One cycle (number cycle) of every size on a null engine of mibps, as
 * sched runs it. Returns how the last size ended. */
static enum it_status run_cycle(struct fx *fx, long cycle, double mibps)
{
	struct iter_limits lim;
	struct iter_ctx *ic;
	int64_t cycle_id;
	long next = 1;
	enum it_status s = IT_DONE;

	iter_limits_of(&fx->plan, &lim);
	lim.null_mibps = mibps;
	assert_int_equal(iter_init(&lim, fx->error, sizeof(fx->error), &ic), 0);
	assert_int_equal(db_cycle_begin(fx->db, fx->target_id, fx->run_id, cycle, &cycle_id), 0);
	struct iter_env e = {
		.t = &fx->c->targets[0],
		.tg = &fx->tg,
		.plan = &fx->plan,
		.db = fx->db,
		.run_id = fx->run_id,
		.target_id = fx->target_id,
		.cycle_id = cycle_id,
		.cycle = cycle,
		.alert = fx->alert,
		.stop = &fx->stop,
		.progress = record,
		.arg = fx,
		.error = fx->error,
		.error_len = sizeof(fx->error),
	};
	for (int i = 0; i < fx->plan.layout.nsizes && s == IT_DONE; i++)
		s = iter_run(&e, ic, i, &next);
	assert_int_equal(db_cycle_end(fx->db, cycle_id, iter_db_status(s)), 0);
	iter_fini(ic);
	return s;
}

/* The reports other than samples, as text: "row 1 0 262144, fill, ..." */
static const char *reports(struct fx *fx, uint64_t *sample_bytes)
{
	static char buf[1024];
	size_t used = 0;
	static const char *const names[] = { "fill", "measure", "verify" };
	buf[0] = '\0';
	*sample_bytes = 0;
	for (int i = 0; i < fx->nrep; i++) {
		const struct iter_progress *p = &fx->rep[i];
		switch (p->what) {
		case ITER_ROW:
			used += (size_t)snprintf(buf + used, sizeof(buf) - used,
						 "%srow %ld %d %llu", used ? ", " : "",
						 p->iteration, p->size_index,
						 (unsigned long long)p->size_bytes);
			break;
		case ITER_PHASE:
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, ", %s",
						 names[p->phase]);
			break;
		case ITER_SAMPLE: *sample_bytes += p->bytes; break;
		}
	}
	return buf;
}

static void test_reports_and_readback(void **state)
{
	struct fx *fx = *state;
	uint64_t bytes;
	open_all(fx, "verify = crc32c\nverify_phase = yes\n");
	assert_int_equal(run_cycle(fx, 1, 1000), IT_DONE);
	assert_string_equal(reports(fx, &bytes),
			    "row 1 0 262144, fill, measure, row 2 0 262144, verify, "
			    "row 3 1 1048576, fill, measure, row 4 1 1048576, verify");
	/* every byte the rows moved was reported in a sample */
	assert_string_equal(q(fx, "SELECT sum(fill_bytes) + sum(bytes) FROM iterations"),
			    "3932160\n");
	assert_int_equal(bytes, 3932160);
	assert_string_equal(
		q(fx, "SELECT number, size_index, workload, phase, verify, status, "
		      "verify_errors FROM iterations ORDER BY id"),
		"1|0|randwrite|measure|crc32c|done|0\n2|0|verify|verify|crc32c|done|0\n"
		"3|1|randwrite|measure|crc32c|done|0\n4|1|verify|verify|crc32c|done|0\n");
	/* the read-back's samples are stored as measure samples */
	assert_string_equal(
		q(fx, "SELECT i.number, s.phase, count(*) FROM samples s JOIN iterations i "
		      "ON i.id = s.iteration_id GROUP BY 1, 2 ORDER BY 1, 2"),
		"1|fill|1\n1|measure|1\n2|measure|1\n3|fill|1\n3|measure|1\n4|measure|1\n");
}

/* measure = fill,randread: the fill is a row of its own, so no size is
 * preconditioned again before the read. */
static void test_fill_row_and_workload_rows(void **state)
{
	struct fx *fx = *state;
	uint64_t bytes;
	open_all(fx, "measure = fill,randread\n");
	assert_int_equal(run_cycle(fx, 1, 1000), IT_DONE);
	assert_string_equal(reports(fx, &bytes), "row 1 0 262144, fill, row 2 0 262144, measure, "
						 "row 3 1 1048576, fill, row 4 1 1048576, measure");
	assert_string_equal(
		q(fx, "SELECT number, workload, phase, block_size, read_percent, "
		      "coalesce(fill_bytes, 0), bytes FROM iterations ORDER BY id"),
		"1|fill|fill|65536|0|0|262144\n2|randread|measure|4096|100|0|262144\n"
		"3|fill|fill|65536|0|0|1048576\n4|randread|measure|4096|100|0|1048576\n");
	assert_int_equal(bytes, 2 * (262144 + 1048576));
}

static void test_stop_from_callback(void **state)
{
	struct fx *fx = *state;
	open_all(fx, "");
	fx->stop_at_sample = 1;
	/* 1 MiB/s: the first 0.1 s sample of 256 KiB ends the phase early */
	assert_int_equal(run_cycle(fx, 1, 1.0), IT_INTERRUPTED);
	assert_string_equal(q(fx, "SELECT number, status, fill_bytes, bytes > 0, bytes < 262144, "
				  "mibps_avg IS NULL, iops_avg IS NULL FROM iterations"),
			    "1|interrupted|262144|1|1|1|1\n");
	assert_string_equal(q(fx, "SELECT status FROM cycles"), "interrupted\n");
}

static void test_crash_alert_when_slower(void **state)
{
	struct fx *fx = *state;
	open_all(fx, "alert_below = 50%\nalert_critical = 25%\nbaseline = first\n");
	assert_int_equal(run_cycle(fx, 1, 1000), IT_DONE);
	assert_string_equal(q(fx, "SELECT count(*) FROM events"), "0\n");
	assert_int_equal(run_cycle(fx, 2, 400), IT_DONE); /* 40%: a warning */
	assert_int_equal(run_cycle(fx, 3, 200), IT_DONE); /* 20%: critical */
	assert_string_equal(q(fx,
			      "SELECT c.number, e.kind, e.severity, round(e.value), "
			      "round(e.baseline) FROM events e JOIN cycles c ON c.id = e.cycle_id "
			      "ORDER BY e.id"),
			    "2|throughput-crash|warning|400.0|1000.0\n"
			    "3|throughput-crash|crit|200.0|1000.0\n");
	/* each row names the baseline it was compared with */
	assert_string_equal(q(fx, "SELECT c.number, round(i.mibps_avg), b.number "
				  "FROM iterations i JOIN cycles c ON c.id = i.cycle_id "
				  "LEFT JOIN iterations b ON b.id = i.baseline_iteration_id "
				  "WHERE i.size_index = 0 ORDER BY i.id"),
			    "1|1000.0|\n2|400.0|1\n3|200.0|1\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reports_and_readback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fill_row_and_workload_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_from_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_alert_when_slower, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
