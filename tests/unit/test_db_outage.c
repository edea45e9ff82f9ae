/* Unit tests for common/db/db_outage.c: a spell of failing writes, from the
 * first write that failed to the next that succeeded, on a real database
 * whose writes are made to fail by a file size limit (RLIMIT_FSIZE at the
 * WAL's current size: the next frame cannot be appended). */
#include "unit.h"
#include "unit_tmp.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "db/db.h"

struct fx {
	char dir[64], path[128], wal[136];
	struct db *db;
	struct rlimit old;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char err[512];

	if (!fx || unit_tmpdir(fx->dir, sizeof(fx->dir), "outage"))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/w.db", fx->dir);
	snprintf(fx->wal, sizeof(fx->wal), "%s-wal", fx->path);
	if (db_open(fx->path, 0, &fx->db, err, sizeof(err)))
		return -1;
	getrlimit(RLIMIT_FSIZE, &fx->old);
	signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG */
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	setrlimit(RLIMIT_FSIZE, &fx->old);
	db_close(fx->db);
	unit_rmtree(fx->dir);
	free(fx);
	return 0;
}

/* Writes fail from now on: no file may grow past the WAL's size. */
static void writes_fail(struct fx *fx)
{
	struct stat st;
	assert_int_equal(stat(fx->wal, &st), 0);
	struct rlimit r = { (rlim_t)st.st_size, fx->old.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &r), 0);
}

static void writes_work(struct fx *fx)
{
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &fx->old), 0);
}

static int event(struct fx *fx, const char *msg)
{
	struct db_event e = {
		.severity = "notice", .kind = "test", .message = msg, .value = -1, .baseline = -1
	};
	return db_event(fx->db, &e, NULL);
}

/* Writes in one transaction through the generic door. */
static int tx_write(struct fx *fx)
{
	static const char *const sqls[] = {
		"INSERT INTO events (severity, kind, message) VALUES ('info', 'a', 'b')",
	};
	static const struct db_value *const params[] = { NULL };
	static const int nparams[] = { 0 };
	char err[256];
	return db_write(fx->db, sqls, params, nparams, 1, err, sizeof(err));
}

static void test_a_spell_from_first_failure_to_first_success(void **state)
{
	struct fx *fx = *state;
	struct db_outage o;

	assert_int_equal(event(fx, "before"), 0);
	assert_int_equal(db_outage_now(fx->db, &o), 0);
	assert_int_equal(db_outage_take(fx->db, &o), 0);
	writes_fail(fx);
	assert_true(event(fx, "lost 1") < 0);
	assert_true(event(fx, "lost 2") < 0);
	assert_true(tx_write(fx) < 0);
	assert_int_equal(db_outage_now(fx->db, &o), 1);
	assert_int_equal(o.failed, 3);
	assert_int_equal(o.nwhats, 2);
	assert_string_equal(o.whats[0].what, "store event");
	assert_int_equal(o.whats[0].count, 2);
	assert_string_equal(o.whats[1].what, "a transaction");
	assert_string_equal(o.ended_at, "");
	assert_non_null(strstr(o.error, "disk I/O error"));
	assert_int_equal(db_outage_take(fx->db, &o), 0); /* not over yet */
	writes_work(fx);
	assert_int_equal(event(fx, "after"), 0);
	assert_int_equal(db_outage_now(fx->db, &o), 0);
	assert_int_equal(db_outage_take(fx->db, &o), 1);
	assert_int_equal(o.failed, 3);
	assert_true(o.started_at[0] && o.ended_at[0] && strcmp(o.started_at, o.ended_at) <= 0);
	assert_true(o.seconds >= 0);
	assert_int_equal(db_outage_take(fx->db, &o), 0); /* handed out once */
}

static void test_two_spells_before_a_take_are_merged(void **state)
{
	struct fx *fx = *state;
	struct db_outage o;

	for (int k = 0; k < 2; k++) {
		writes_fail(fx);
		assert_true(event(fx, "lost") < 0);
		writes_work(fx);
		assert_int_equal(tx_write(fx), 0); /* a committed transaction ends it */
	}
	assert_int_equal(db_outage_take(fx->db, &o), 1);
	assert_int_equal(o.failed, 2);
	assert_int_equal(o.nwhats, 1);
	assert_int_equal(o.whats[0].count, 2);
	assert_int_equal(db_outage_take(fx->db, &o), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_spell_from_first_failure_to_first_success,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_spells_before_a_take_are_merged, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
