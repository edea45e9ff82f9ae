/* Tests for proc: the fields of /proc/PID/stat however odd the name, who a
 * process is, and ending a process group that ignores SIGTERM. */
#include "unit.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cmd.h"
#include "base/proc.h"

static void test_parse_stat(void **state)
{
	static const struct {
		const char *text;
		int ret;
		pid_t pid, ppid, pgrp, sid;
		char st;
		uint64_t start;
	} cases[] = {
		{ "4242 (sleep) S 1 4240 4000 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 987654 "
		  "5000 100 18446744073709551615\n",
		  0, 4242, 1, 4240, 4000, 'S', 987654 },
		/* a name with blanks and parentheses: the last ')' ends it */
		{ "7 (a) b (c)) Z 2 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12 0 0\n", 0, 7, 2, 7, 7,
		  'Z', 12 },
		{ "7 (x) S 1 2 3", -EINVAL, 0, 0, 0, 0, 0,
		  0 }, /* cut short before the start time */
		{ "(x) S 1 2 3 0", -EINVAL, 0, 0, 0, 0, 0, 0 }, /* no pid */
		{ "7 x S 1 2 3 0", -EINVAL, 0, 0, 0, 0, 0, 0 }, /* no name */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct proc_stat st;
		assert_int_equal(proc_parse_stat(cases[i].text, &st), cases[i].ret);
		if (cases[i].ret)
			continue;
		assert_int_equal(st.pid, cases[i].pid);
		assert_int_equal(st.ppid, cases[i].ppid);
		assert_int_equal(st.pgrp, cases[i].pgrp);
		assert_int_equal(st.sid, cases[i].sid);
		assert_int_equal(st.state, cases[i].st);
		assert_int_equal(st.start, cases[i].start);
	}
}

static void test_ident_of_self(void **state)
{
	struct proc_ident a, b;
	assert_int_equal(proc_ident_of(getpid(), &a), 0);
	assert_int_equal(a.pid, getpid());
	assert_int_equal(a.sid, getsid(0));
	assert_int_equal(strlen(a.boot_id), 36);
	assert_int_equal(proc_ident_of(getpid(), &b), 0);
	assert_int_equal(a.start, b.start);
	/* a pid with another start time is not that process */
	b.start++;
	assert_int_equal(proc_group_left(&b), 0);
	/* another boot: nothing of it runs */
	a.boot_id[0] = a.boot_id[0] == '0' ? '1' : '0';
	assert_int_equal(proc_group_left(&a), 0);
	assert_int_equal(proc_ident_of(0x7ffffff0, &b), -ESRCH);
}

/* A group whose members ignore SIGTERM: SIGKILL ends it. Its leader is
 * our child here; a zombie does not count. */
static void test_group_end(void **state)
{
	char *argv[] = { "/bin/sh", "-c", "trap '' TERM; sleep 30 & sleep 30; wait", NULL };
	struct cmd_child c = { .argv = argv, .envp = cmd_min_env(), .out_fd = -1 };
	struct proc_ident id;
	pid_t pid;
	int64_t rec;
	int sig = -1;
	assert_int_equal(cmd_start(&c, &pid, &rec), 0);
	assert_int_equal(proc_ident_of(pid, &id), 0);
	/* the shell and its sleeps, once they are there */
	for (int i = 0; i < 500 && proc_group_left(&id) < 3; i++)
		usleep(10000);
	assert_int_equal(proc_group_left(&id), 3);
	assert_int_equal(proc_group_end(&id, 0.3, 5, &sig), 0);
	assert_int_equal(sig, SIGKILL);
	assert_int_equal(proc_group_left(&id), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(proc_group_end(&id, 0.3, 5, &sig), 0);
	assert_int_equal(sig, 0); /* nothing left: nothing sent */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_ident_of_self),
		cmocka_unit_test(test_group_end),
	};
	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
