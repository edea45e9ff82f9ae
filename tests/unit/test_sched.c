/* test_sched: the scheduler's cycle loop on the null engine (ioengine =
 * null): a temporary regular-file target and a temporary SQLite database,
 * real sched and iter code, and the rows read back with SQL: cycles over
 * several sizes, a stop mid-cycle and the resume, the between-cycles
 * actions (idle, trim) and a stop during one. */
#include "unit.h"
#include "unit_tmp.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sched.h"

struct fx {
	char dir[64];
	char out[8192]; /* q()'s rows */
	atomic_int stop;
	struct sched_target *st; /* while a run is going */
	long stop_cycle;         /* the tap stops when the measured phase */
	int stop_size;           /* of this cycle and size begins */
	struct cfg *offer;       /* a reload offered by offer_reload */
	int held;                /* sched_uses_config(offer) once offered */
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	if (unit_tmpdir(fx->dir, sizeof(fx->dir), "sched")) {
		free(fx);
		return -1;
	}
	fx->stop_cycle = -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
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

/* Three sizes of a 1 MiB file, fill and a 4 KiB (the default) random
 * write each, on the null engine; extra adds keys to the target. */
static const char base_conf[] = "[wearmon]\n"
				"database = %s/history.db\n"
				"[target t]\n"
				"device = %s/target.img\n"
				"file_size = 1M\n"
				"sizes = 256K 512K 1M\n"
				"fill_block_size = 64k\n"
				"fill_queue_depth = 4\n"
				"queue_depth = 8\n"
				"sample_interval = 0.1s\n"
				"ioengine = null\n"
				"%s";

/* A run of the daemon's target thread. */
struct run {
	struct cfg *c;
	struct db *db;
	struct sched_target st;
};

/* Start the target thread on the configuration with extra, as main does:
 * open, resolve, record the run, start. */
static void start_daemon(struct fx *fx, const char *extra, iter_progress_fn tap, struct run *r)
{
	char text[2048], err[2048];
	struct sched_target *st = &r->st;

	snprintf(text, sizeof(text), base_conf, fx->dir, fx->dir, extra);
	if (cfg_parse_string(text, "test.conf", &r->c, err, sizeof(err)))
		fail_msg("%s", err);
	memset(st, 0, sizeof(*st));
	st->cfg = r->c;
	st->t = &r->c->targets[0];
	if (tgt_open(r->c, st->t, r->c->database, 0, &st->tg, err, sizeof(err)) ||
	    plan_build(r->c, st->t, st->tg.capacity, st->tg.logical_block_size, &st->plan, err,
		       sizeof(err)) ||
	    db_open(r->c->database, 0, &r->db, err, sizeof(err)))
		fail_msg("%s", err);
	struct db_target_info info = {
		.name = st->tg.name,
		.device = st->tg.path,
		.kind = st->tg.kind,
		.capacity_bytes = st->tg.capacity,
		.logical_block_size = st->tg.logical_block_size,
	};
	assert_int_equal(db_run_begin(r->db, "test.conf", &st->run_id), 0);
	assert_int_equal(db_target_upsert(r->db, &info, &st->target_id), 0);
	st->db = r->db;
	atomic_store(&fx->stop, 0);
	st->stop = &fx->stop;
	st->tap = tap;
	st->tap_arg = fx;
	fx->st = st;
	assert_int_equal(sched_start(st), 0);
}

/* Wait for the thread and close everything. Returns its final state. */
static enum sched_state finish_daemon(struct fx *fx, struct run *r)
{
	enum sched_state s = sched_join(&r->st);
	fx->st = NULL;
	db_run_end(r->db, r->st.run_id, 0, "test");
	db_close(r->db);
	tgt_close(&r->st.tg);
	cfg_free(r->c);
	return s;
}

static enum sched_state run_daemon(struct fx *fx, const char *extra, iter_progress_fn tap)
{
	struct run r;
	start_daemon(fx, extra, tap, &r);
	return finish_daemon(fx, &r);
}

/* Stop when the measured phase of fx->stop_cycle, size fx->stop_size begins. */
static void stop_at_measure(void *arg, const struct iter_progress *p)
{
	struct fx *fx = arg;
	struct sched_progress pr;
	if (p->what != ITER_PHASE || p->phase != ITER_MEASURE)
		return;
	sched_progress_get(fx->st, &pr);
	assert_int_equal(pr.phase, PH_MEASURE);
	if (pr.cycle == fx->stop_cycle && pr.size_index == fx->stop_size)
		atomic_store(&fx->stop, 1);
}

#define ROWS                                                                                       \
	"SELECT c.number, i.number, i.size_index, i.size_bytes, i.status "                         \
	"FROM iterations i JOIN cycles c ON c.id = i.cycle_id ORDER BY i.id"

static void test_cycles_over_sizes(void **state)
{
	struct fx *fx = *state;
	assert_int_equal(run_daemon(fx, "cycles = 2\n", NULL), SCHED_DONE);
	assert_string_equal(q(fx, "SELECT number, status, action, action_outcome FROM cycles "
				  "ORDER BY number"),
			    "1|done|none|skipped\n2|done|none|skipped\n");
	assert_string_equal(q(fx, ROWS),
			    "1|1|0|262144|done\n1|2|1|524288|done\n1|3|2|1048576|done\n"
			    "2|1|0|262144|done\n2|2|1|524288|done\n2|3|2|1048576|done\n");
	/* every row moved its amount (1x) after a fill of its size, at the
	 * null engine's simulated 1000 MiB/s, and kept its samples */
	assert_string_equal(q(fx, "SELECT count(*) FROM iterations WHERE workload = 'randwrite' "
				  "AND bytes = size_bytes AND fill_bytes = size_bytes "
				  "AND abs(mibps_avg - 1000) < 1 AND abs(fill_mibps - 1000) < 1 "
				  "AND ops = size_bytes / 4096 AND verify = 'none'"),
			    "6\n");
	/* the run says its figures are simulated */
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT severity, kind, replace(message, '%s', 'DIR') FROM events", fx->dir);
	assert_string_equal(q(fx, sql), "notice|null-engine|ioengine = null: no I/O reaches "
					"DIR/target.img; the figures of this run are simulated "
					"(1000 MiB/s)\n");
	assert_string_equal(q(fx, "SELECT phase, count(DISTINCT iteration_id), sum(bytes) / 1024 "
				  "FROM samples GROUP BY phase ORDER BY phase"),
			    "fill|6|3584\nmeasure|6|3584\n");
}

static void test_stop_then_resume(void **state)
{
	struct fx *fx = *state;
	fx->stop_cycle = 1;
	fx->stop_size = 1;
	assert_int_equal(run_daemon(fx, "cycles = 2\n", stop_at_measure), SCHED_STOPPED);
	assert_string_equal(q(fx, "SELECT number, status FROM cycles"), "1|interrupted\n");
	/* the interrupted row keeps its fill but has no figures */
	assert_string_equal(q(fx, ROWS), "1|1|0|262144|done\n1|2|1|524288|interrupted\n");
	assert_string_equal(q(fx, "SELECT fill_bytes, mibps_avg IS NULL FROM iterations "
				  "WHERE status = 'interrupted'"),
			    "524288|1\n");

	fx->stop_cycle = -1;
	assert_int_equal(run_daemon(fx, "cycles = 2\n", stop_at_measure), SCHED_DONE);
	assert_string_equal(q(fx, "SELECT number, status FROM cycles ORDER BY number"),
			    "1|done\n2|done\n");
	/* cycle 1 goes on at its second size with the next number */
	assert_string_equal(q(fx, ROWS),
			    "1|1|0|262144|done\n1|2|1|524288|interrupted\n"
			    "1|3|1|524288|done\n1|4|2|1048576|done\n"
			    "2|1|0|262144|done\n2|2|1|524288|done\n2|3|2|1048576|done\n");
	assert_string_equal(
		q(fx, "SELECT count(*) FROM (SELECT cycle_id, size_index FROM "
		      "iterations WHERE status = 'done' GROUP BY 1, 2 HAVING count(*) > 1)"),
		"0\n");
}

static void test_stop_in_last_size_resumes_at_action(void **state)
{
	struct fx *fx = *state;
	fx->stop_cycle = 2;
	fx->stop_size = 2;
	assert_int_equal(run_daemon(fx, "cycles = 3\nbetween_cycles = idle\nidle = 0.01s\n",
				    stop_at_measure),
			 SCHED_STOPPED);
	assert_string_equal(
		q(fx, "SELECT number, status, action_outcome FROM cycles ORDER BY number"),
		"1|done|ok\n2|interrupted|\n");
	fx->stop_cycle = -1;
	assert_int_equal(run_daemon(fx, "cycles = 3\nbetween_cycles = idle\nidle = 0.01s\n", NULL),
			 SCHED_DONE);
	assert_string_equal(q(fx, "SELECT number, status, action, action_outcome FROM cycles "
				  "ORDER BY number"),
			    "1|done|idle|ok\n2|done|idle|ok\n3|done|idle|ok\n");
	assert_string_equal(
		q(fx, "SELECT i.number, i.size_index, i.status FROM iterations i "
		      "JOIN cycles c ON c.id = i.cycle_id WHERE c.number = 2 ORDER BY i.id"),
		"1|0|done\n2|1|done\n3|2|interrupted\n4|2|done\n");
}

static void test_actions_recorded(void **state)
{
	struct fx *fx = *state;
	assert_int_equal(
		run_daemon(fx, "cycles = 2\nbetween_cycles = idle trim\nidle = 0.05s\n", NULL),
		SCHED_DONE);
	assert_string_equal(q(fx, "SELECT number, status, action, action_outcome, action_error "
				  "FROM cycles ORDER BY number"),
			    "1|done|idle|ok|\n2|done|trim|ok|\n");
	/* idle waited its time; trim punched the whole region out of the file */
	assert_string_equal(q(fx,
			      "SELECT action_seconds >= 0.05 AND action_seconds < 5 FROM cycles "
			      "WHERE action = 'idle'"),
			    "1\n");
	assert_string_equal(q(fx, "SELECT action_bytes FROM cycles WHERE action = 'trim'"),
			    "1048576\n");
}

/* At the first row, offer a configuration with 8 KiB blocks. */
static void offer_reload(void *arg, const struct iter_progress *p)
{
	struct fx *fx = arg;
	char text[2048], err[2048];
	if (p->what != ITER_ROW || fx->offer)
		return;
	snprintf(text, sizeof(text), base_conf, fx->dir, fx->dir, "block_size = 8k\ncycles = 2\n");
	if (cfg_parse_string(text, "reload.conf", &fx->offer, err, sizeof(err)))
		fail_msg("%s", err);
	sched_offer_config(fx->st, fx->offer, &fx->offer->targets[0]);
	fx->held = sched_uses_config(fx->st, fx->offer);
}

/* A reload takes effect at the next cycle, never inside one. */
static void test_reload_at_cycle_boundary(void **state)
{
	struct fx *fx = *state;
	assert_int_equal(run_daemon(fx, "cycles = 2\n", offer_reload), SCHED_DONE);
	assert_true(fx->held);
	assert_string_equal(q(fx, "SELECT c.number, group_concat(DISTINCT i.block_size), "
				  "count(*), sum(i.ops) FROM iterations i JOIN cycles c ON "
				  "c.id = i.cycle_id GROUP BY 1 ORDER BY 1"),
			    "1|4096|3|448\n2|8192|3|224\n");
	cfg_free(fx->offer);
}

/* Wait (up to 5 s) until the target is in its between-cycles action. */
static enum cfg_action wait_for_action(struct sched_target *st)
{
	struct sched_progress p;
	for (int i = 0; i < 5000; i++) {
		sched_progress_get(st, &p);
		if (p.phase == PH_ACTION)
			return p.action;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return ACT_NONE;
}

static void test_stop_during_idle(void **state)
{
	struct fx *fx = *state;
	struct run r;
	start_daemon(fx, "cycles = 1\nbetween_cycles = idle\nidle = 60s\n", NULL, &r);
	enum cfg_action a = wait_for_action(&r.st);
	atomic_store(&fx->stop, 1);
	assert_int_equal(finish_daemon(fx, &r), SCHED_STOPPED);
	assert_int_equal(a, ACT_IDLE);
	assert_string_equal(q(fx, "SELECT number, status, action, action_outcome, "
				  "action_seconds < 5 FROM cycles"),
			    "1|interrupted|idle|interrupted|1\n");
	/* the restart runs the action again, and no size again */
	assert_int_equal(run_daemon(fx, "cycles = 1\nbetween_cycles = idle\nidle = 0.01s\n", NULL),
			 SCHED_DONE);
	assert_string_equal(q(fx, "SELECT number, status, action, action_outcome FROM cycles"),
			    "1|done|idle|ok\n");
	assert_string_equal(q(fx, "SELECT count(*), count(DISTINCT size_index) FROM iterations"),
			    "3|3\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cycles_over_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_then_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_in_last_size_resumes_at_action, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_actions_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_at_cycle_boundary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_during_idle, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
