/* Tests for cmd: real children under /bin/sh: exit status and output, an
 * empty signal mask whatever the caller blocks, a minimal environment, the
 * time limit and the stop flag, the parent-death signal, no descriptor of
 * ours in the child, and the record made before it execs. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cmd.h"
#include "base/proc.h"

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

/* Children started through cmd_start while another thread closes with
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

/* Nothing of ours but stdin, stdout and stderr reaches the command, not
 * even a descriptor without O_CLOEXEC. */
static void test_no_descriptor_of_ours(void **state)
{
	struct cmd_result r;
	int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC */
	assert_true(fd >= 0);
	int ret = run_sh("ls /proc/$$/fd", 10, NULL, &r);
	close(fd);
	assert_int_equal(ret, 0);
	assert_string_equal(r.output, "0 1 2");
}

/* A command started from a thread that then ends: the kernel kills it
 * (the parent-death signal follows the thread that started it). */
static void *start_and_end(void *arg)
{
	char *argv[] = { "/bin/sleep", "30", NULL };
	struct cmd_child c = { .argv = argv, .envp = cmd_min_env(), .out_fd = -1, .tag = "t" };
	int64_t rec;
	if (cmd_start(&c, (pid_t *)arg, &rec))
		*(pid_t *)arg = -1;
	return NULL;
}

static void test_parent_death_signal(void **state)
{
	pthread_t th;
	pid_t pid = 0;
	int status = 0;
	assert_int_equal(pthread_create(&th, NULL, start_and_end, &pid), 0);
	pthread_join(th, NULL);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), CMD_PARENT_DEATH_SIGNAL);
}

/* What a recorder saw. */
static struct seen {
	int started, ended, refuse;
	int64_t owner;
	struct proc_ident id;
	char tag[64], argv0[64];
	int wait, ended_null;
	enum cmd_end end;
} seen;

static int64_t saw_start(void *arg, int64_t owner, const char *tag, char *const argv[],
			 const struct proc_ident *id, int wait)
{
	seen.started++;
	seen.owner = owner;
	seen.id = *id;
	seen.wait = wait;
	snprintf(seen.tag, sizeof(seen.tag), "%s", tag);
	snprintf(seen.argv0, sizeof(seen.argv0), "%s", argv[0]);
	/* the child waits at its gate: alive, in its own group, not exec'd */
	assert_int_equal(kill(id->pid, 0), 0);
	assert_int_equal(getpgid(id->pid), id->pid);
	return seen.refuse ? -EIO : 42;
}

static void saw_end(void *arg, int64_t rec, const struct cmd_result *r, int wait)
{
	assert_int_equal(rec, 42);
	seen.ended++;
	seen.ended_null = !r;
	if (r)
		seen.end = r->end;
}

static void test_recorded_before_exec(void **state)
{
	struct cmd_recorder rc = { .started = saw_start, .ended = saw_end };
	struct cmd_result r;
	char path[] = "/tmp/wearmon-test-cmd-ran.XXXXXX", script[128];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	snprintf(script, sizeof(script), "touch %s", path);
	memset(&seen, 0, sizeof(seen));
	cmd_set_recorder(&rc);
	cmd_set_owner(7);
	assert_int_equal(run_sh(script, 10, NULL, &r), 0);
	assert_int_equal(seen.started, 1);
	assert_int_equal(seen.owner, 7);
	assert_int_equal(seen.id.pid, r.pid);
	/* the child leads its own group in our session; the session's id
	 * reads 0 where its leader lives in an outer PID namespace */
	struct proc_ident self;
	assert_int_equal(proc_ident_of(getpid(), &self), 0);
	assert_true(seen.id.start > 0 && strlen(seen.id.boot_id) == 36);
	assert_int_equal(seen.id.sid, self.sid);
	assert_string_equal(seen.tag, "test");
	assert_string_equal(seen.argv0, "/bin/sh");
	assert_int_equal(seen.wait, 1);
	assert_int_equal(seen.ended, 1);
	assert_int_equal(seen.end, CMD_EXITED);
	assert_int_equal(access(path, F_OK), 0);
	unlink(path);
	/* a command that cannot be recorded does not run */
	seen.refuse = 1;
	assert_int_equal(run_sh(script, 10, NULL, &r), -EIO);
	assert_int_equal(access(path, F_OK), -1);
	cmd_set_recorder(NULL);
	cmd_set_owner(0);
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
		cmocka_unit_test(test_no_descriptor_of_ours),
		cmocka_unit_test(test_parent_death_signal),
		cmocka_unit_test(test_recorded_before_exec),
	};

	return cmocka_run_group_tests_name("cmd", tests, NULL, NULL);
}
