/* Tests for cmd: real children under /bin/sh: exit status and output, an
 * empty signal mask whatever the caller blocks, a minimal environment, the
 * time limit and the stop flag. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/cmd.h"

static int run_sh(const char *script, double timeout, const atomic_int *stop, struct cmd_result *r)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct cmd_req rq = { .argv = argv, .timeout = timeout, .stop = stop, .tag = "test" };
	return cmd_run(&rq, r);
}

static void test_exit_status_and_output(void **state)
{
	struct cmd_result r;
	assert_int_equal(run_sh("echo hello; echo world >&2; exit 3", 10, NULL, &r), 0);
	assert_int_equal(r.end, CMD_EXITED);
	assert_int_equal(r.status, 3);
	assert_string_equal(r.output, "hello world");
	assert_true(r.pid > 0);
	assert_string_equal(cmd_end_name(r.end), "exited");
}

static void test_mask_is_empty_even_when_caller_blocks(void **state)
{
	sigset_t set, old;
	struct cmd_result r;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	/* the shell's own mask, read by the shell itself */
	int ret = run_sh("while read k v r; do [ \"$k\" = SigBlk: ] && echo $v; done "
			 "< /proc/$$/status; true",
			 10, NULL, &r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	assert_int_equal(ret, 0);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.output, "0000000000000000");
}

static void test_environment_is_minimal(void **state)
{
	struct cmd_result r;
	setenv("WEARMON_UNIT_SECRET", "leaked", 1);
	assert_int_equal(run_sh("echo ${WEARMON_UNIT_SECRET:-unset} $PATH", 10, NULL, &r), 0);
	assert_non_null(strstr(r.output, "unset /usr/local/sbin:"));
}

/* cmd_close_exclusive closes (the descriptor is gone) and takes -1. */
static void test_close_exclusive(void **state)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	cmd_close_exclusive(fd);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	cmd_close_exclusive(-1);
}

/* Children started through cmd_spawn while another thread closes with
 * cmd_close_exclusive: each close completes and each child runs. */
static void *spawner(void *arg)
{
	int *ok = arg;
	for (int i = 0; i < 20; i++) {
		struct cmd_result r;
		*ok += run_sh("exit 0", 10, NULL, &r) == 0 && r.status == 0;
	}
	return NULL;
}

static void test_close_while_spawning(void **state)
{
	pthread_t th;
	int ok = 0;
	assert_int_equal(pthread_create(&th, NULL, spawner, &ok), 0);
	for (int i = 0; i < 200; i++) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		cmd_close_exclusive(fd);
	}
	pthread_join(th, NULL);
	assert_int_equal(ok, 20);
}

static void test_own_process_group(void **state)
{
	struct cmd_result r;
	assert_int_equal(run_sh("cut -d' ' -f5 /proc/$$/stat", 10, NULL, &r), 0);
	assert_int_equal(atoi(r.output), r.pid);
}

static void test_time_limit_kills(void **state)
{
	struct cmd_result r;
	assert_int_equal(run_sh("sleep 30", 0.3, NULL, &r), 0);
	assert_int_equal(r.end, CMD_TIMED_OUT);
	assert_true(r.seconds >= 0.3 && r.seconds < 5);
	assert_string_equal(cmd_end_name(r.end), "timed out");
}

static void test_stop_kills(void **state)
{
	static atomic_int stop = 1;
	struct cmd_result r;
	assert_int_equal(run_sh("trap '' TERM; sleep 30", 0, &stop, &r), 0);
	assert_int_equal(r.end, CMD_STOPPED);
	assert_true(r.seconds < 3); /* TERM ignored: SIGKILL after the grace */
}

static void test_missing_program(void **state)
{
	char *argv[] = { "/nonexistent/wearmon-cmd", NULL };
	struct cmd_req rq = { .argv = argv, .timeout = 1 };
	struct cmd_result r;
	int ret = cmd_run(&rq, &r);
	/* glibc reports exec failure from posix_spawn, or as status 127 */
	assert_true(ret == -ENOENT || (ret == 0 && r.status == 127));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status_and_output),
		cmocka_unit_test(test_mask_is_empty_even_when_caller_blocks),
		cmocka_unit_test(test_environment_is_minimal),
		cmocka_unit_test(test_own_process_group),
		cmocka_unit_test(test_close_exclusive),
		cmocka_unit_test(test_close_while_spawning),
		cmocka_unit_test(test_time_limit_kills),
		cmocka_unit_test(test_stop_kills),
		cmocka_unit_test(test_missing_program),
	};

	return cmocka_run_group_tests_name("cmd", tests, NULL, NULL);
}
