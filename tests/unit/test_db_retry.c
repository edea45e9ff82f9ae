/* test_db_retry: the locked-database retry policy (db/db.h: db_retry):
 * a lock waited out for as long as it lasts, other errors tried a number
 * of times, errors no retry mends, a stop, patience, and what the caller
 * is told. Tries are 1 ms apart here, not the daemon's second. */
#include "unit.h"

#include <errno.h>
#include <stdatomic.h>

#include "db/db.h"

/* A write that fails with errs[0], errs[1], ... and then succeeds. */
struct script {
	const int *errs;
	int n, calls;
	atomic_int *stop_at; /* set when the call stop_call is made */
	int stop_call;
};

static int scripted(void *arg)
{
	struct script *s = arg;
	int i = s->calls++;
	if (s->stop_at && i + 1 == s->stop_call)
		atomic_store(s->stop_at, 1);
	return i < s->n ? s->errs[i] : 0;
}

struct told {
	int fails, dones, last_tries;
	double last_busy;
};

static void on_fail(void *ctx, int ret, int tries, double busy_s)
{
	struct told *t = ctx;
	t->fails++;
	t->last_tries = tries;
	t->last_busy = busy_s;
}

static void on_done(void *ctx, int tries, double busy_s)
{
	struct told *t = ctx;
	t->dones++;
	t->last_tries = tries;
	t->last_busy = busy_s;
}

/* The daemon's policy for a target's writes (daemon/iter.c). */
static struct db_retry patient(struct told *t, const atomic_int *stop)
{
	return (struct db_retry){ .wait_busy = 1,
				  .tries = DB_RETRY_TRIES,
				  .patience = DB_RETRY_FOREVER,
				  .stop = stop,
				  .step = 0.001,
				  .on_fail = on_fail,
				  .on_done = on_done,
				  .ctx = t };
}

static void test_retry_waits_out_a_lock(void **state)
{
	(void)state;
	const int errs[] = { -EBUSY, -EBUSY, -EBUSY, -EBUSY, -EBUSY, -EBUSY, -EBUSY, -EBUSY };
	struct script s = { errs, 8, 0, NULL, 0 };
	struct told t = { 0 };
	atomic_int stop = 0;
	struct db_retry r = patient(&t, &stop);
	assert_int_equal(db_retry(&r, scripted, &s), 0);
	assert_int_equal(s.calls, 9); /* more than DB_RETRY_TRIES: a lock is no try */
	assert_int_equal(t.fails, 8);
	assert_int_equal(t.dones, 1);
	assert_int_equal(t.last_tries, 0);
	assert_true(t.last_busy >= 0);
}

static void test_retry_counts_other_errors(void **state)
{
	(void)state;
	const int errs[] = { -EIO, -EIO, -EIO, -EIO, -EIO, -EIO };
	struct script s = { errs, 6, 0, NULL, 0 };
	struct told t = { 0 };
	struct db_retry r = patient(&t, NULL);
	assert_int_equal(db_retry(&r, scripted, &s), -EIO);
	assert_int_equal(s.calls, DB_RETRY_TRIES);
	assert_int_equal(t.fails, DB_RETRY_TRIES - 1);
	assert_int_equal(t.last_tries, DB_RETRY_TRIES - 1);
	assert_true(t.last_busy < 0);
	assert_int_equal(t.dones, 0);

	/* two failures, then success: told how many */
	struct script ok = { errs, 2, 0, NULL, 0 };
	struct told t2 = { 0 };
	r = patient(&t2, NULL);
	assert_int_equal(db_retry(&r, scripted, &ok), 0);
	assert_int_equal(t2.dones, 1);
	assert_int_equal(t2.last_tries, 2);
	assert_true(t2.last_busy < 0);
}

/* A stop ends the wait for a lock at the next failed try. */
static void test_retry_stop_ends_lock_wait(void **state)
{
	(void)state;
	const int errs[] = { -EBUSY, -EBUSY, -EBUSY, -EBUSY, -EBUSY, -EBUSY };
	atomic_int stop = 0;
	struct script s = { errs, 6, 0, &stop, 3 };
	struct told t = { 0 };
	struct db_retry r = patient(&t, &stop);
	assert_int_equal(db_retry(&r, scripted, &s), -EBUSY);
	assert_int_equal(s.calls, 3);
}

/* The run's end (daemon/outage.c): any error tried until patience runs
 * out, some never again, a stop during the wait ends it, one set before
 * does not. */
static void test_retry_run_end_policy(void **state)
{
	(void)state;
	static const int no_retry[] = { -ENOENT, -EINVAL, 0 };
	const int busy[] = { -EBUSY, -EBUSY, -EBUSY };
	const int gone[] = { -ENOENT, -EBUSY };
	atomic_int stop = 0;
	struct db_retry r = {
		.patience = 10.0, .final = no_retry, .stop = &stop, .stop_ends = 1, .step = 0.001
	};

	struct script s1 = { busy, 3, 0, NULL, 0 };
	assert_int_equal(db_retry(&r, scripted, &s1), 0);
	assert_int_equal(s1.calls, 4);

	struct script s2 = { gone, 2, 0, NULL, 0 };
	assert_int_equal(db_retry(&r, scripted, &s2), -ENOENT);
	assert_int_equal(s2.calls, 1);

	struct script s3 = { busy, 3, 0, &stop, 2 };
	assert_int_equal(db_retry(&r, scripted, &s3), -EBUSY);
	assert_int_equal(s3.calls, 2);

	/* stopping already: the wait goes on (the run end's short patience) */
	struct script s4 = { busy, 3, 0, NULL, 0 };
	assert_int_equal(db_retry(&r, scripted, &s4), 0);
	assert_int_equal(s4.calls, 4);

	/* no patience: one try */
	atomic_store(&stop, 0);
	r.patience = 0;
	struct script s5 = { busy, 3, 0, NULL, 0 };
	assert_int_equal(db_retry(&r, scripted, &s5), -EBUSY);
	assert_int_equal(s5.calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_waits_out_a_lock),
		cmocka_unit_test(test_retry_counts_other_errors),
		cmocka_unit_test(test_retry_stop_ends_lock_wait),
		cmocka_unit_test(test_retry_run_end_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
