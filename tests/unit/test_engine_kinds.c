/* Unit tests of the engine family: the list and its names, ioengine =
 * auto's choice when the kernel or a seccomp filter refuses io_uring, what
 * the io_uring engine registers and how it runs when it may not pin its
 * buffers, and the sync engine's one I/O at a time. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/engine.h"

#define SPAN (2u << 20)

/* Every engine has a name, auto first, and the queued engines are one
 * campaign under the name older versions stored. */
static void test_names(void **state)
{
	(void)state;
	assert_string_equal(engine_kind_names[ENGINE_AUTO], "auto");
	assert_string_equal(engine_kind_name(ENGINE_IO_URING), "io_uring");
	assert_string_equal(engine_kind_name(ENGINE_LIBAIO), "libaio");
	assert_string_equal(engine_kind_name(ENGINE_SYNC), "sync");
	assert_string_equal(engine_kind_name(ENGINE_NULL), "null");
	assert_null(engine_kind_names[ENGINE__COUNT]);
	assert_string_equal(engine_kind_name(ENGINE__COUNT), "?");
	assert_string_equal(engine_kind_campaign(ENGINE_AUTO), "libaio");
	assert_string_equal(engine_kind_campaign(ENGINE_IO_URING), "libaio");
	assert_string_equal(engine_kind_campaign(ENGINE_LIBAIO), "libaio");
	assert_string_equal(engine_kind_campaign(ENGINE_SYNC), "sync");
	assert_string_equal(engine_kind_campaign(ENGINE_NULL), "null");
}

/* In the calling process from now on, io_uring_setup fails with err
 * before the kernel sees it, as a unit's SystemCallFilter= with
 * SystemCallErrorNumber= makes it. Returns 0 or -1. */
static int refuse_io_uring(int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -1 : 0;
}

/* What a child refused io_uring with err saw: the probe's return and
 * reason, and the engine auto opened with its description, as one line. */
static void auto_under_filter(int err, char *out, size_t len)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char why[200], line[512];
		struct engine_ctx *c = NULL;
		struct engine_opts o = { .max_qd = 4, .max_bs = 4096 };
		close(fds[0]);
		if (refuse_io_uring(err))
			_exit(2);
		int ret = engine_probe(ENGINE_IO_URING, why, sizeof(why));
		int opened = engine_open(ENGINE_AUTO, &o, &c);
		int n = snprintf(line, sizeof(line), "%d|%s|%s|%s", ret, why,
				 opened ? "-" : engine_name(c), opened ? "-" : engine_describe(c));
		engine_destroy(c);
		_exit(write(fds[1], line, (size_t)n) == n ? 0 : 3);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], out, len - 1);
	close(fds[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	out[n > 0 ? n : 0] = '\0';
}

/* auto runs io_uring where io_uring_setup works, and libaio, saying why,
 * where a seccomp filter (EPERM) or the kernel (ENOSYS) refuses it. */
static void test_auto_choice(void **state)
{
	char line[512], why[200];
	(void)state;
	assert_int_equal(engine_probe(ENGINE_IO_URING, why, sizeof(why)), 0);
	assert_string_equal(why, "io_uring_setup works here");
	assert_int_equal(engine_probe(ENGINE_LIBAIO, why, sizeof(why)), 0);

	auto_under_filter(EPERM, line, sizeof(line));
	print_message("  EPERM: %s\n", line);
	assert_non_null(strstr(line, "-1|io_uring_setup: EPERM"));
	assert_non_null(strstr(line, "|libaio|libaio (ioengine = auto: io_uring refused: "
				     "io_uring_setup: EPERM, a seccomp filter (a unit's "
				     "SystemCallFilter?))"));

	auto_under_filter(ENOSYS, line, sizeof(line));
	print_message("  ENOSYS: %s\n", line);
	assert_non_null(strstr(line, "-38|io_uring_setup: ENOSYS, not in this kernel|libaio|"));
}

static int tmpfile_direct(char *path, size_t len)
{
	snprintf(path, len, "/var/tmp/wearmon-kinds-XXXXXX");
	int tmp = mkstemp(path);
	if (tmp < 0)
		return -1;
	close(tmp);
	int fd = open(path, O_RDWR | O_DIRECT);
	if (fd < 0 || ftruncate(fd, SPAN))
		return -1;
	return fd;
}

/* A verified write then read-back of the whole span on c. Returns 0, or
 * the line of the first check that failed (usable in a forked child). */
static int write_read_verified(struct engine_ctx *c, int fd, unsigned qd, struct engine_result *r)
{
	struct engine_phase p = { .fd = fd,
				  .span_len = SPAN,
				  .block_size = 65536,
				  .is_write = 1,
				  .queue_depth = qd,
				  .amount = SPAN,
				  .verify = 1,
				  .seed = 7,
				  .sample_interval = 0.05 };
	if (engine_run(c, &p, r) || r->errors || r->bytes != SPAN)
		return __LINE__;
	p.is_write = 0;
	if (engine_run(c, &p, r) || r->errors || r->bytes != SPAN || r->verify_errors)
		return __LINE__;
	return 0;
}

/* io_uring registers the file and the buffers; SQPOLL when asked. */
static void test_uring_registers(void **state)
{
	char path[64];
	struct engine_ctx *c;
	struct engine_result *r = malloc(sizeof(*r));
	struct engine_opts o = { .max_qd = 8, .max_bs = 65536 };
	int fd = tmpfile_direct(path, sizeof(path));
	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(engine_open(ENGINE_IO_URING, &o, &c), 0);
	assert_string_equal(engine_describe(c),
			    "io_uring, registered file, registered buffers, SQPOLL off");
	assert_int_equal(write_read_verified(c, fd, 8, r), 0);
	engine_destroy(c);
	o.sqpoll = 1;
	assert_int_equal(engine_open(ENGINE_IO_URING, &o, &c), 0);
	assert_string_equal(engine_describe(c),
			    "io_uring, registered file, registered buffers, SQPOLL on");
	assert_int_equal(write_read_verified(c, fd, 8, r), 0);
	engine_destroy(c);
	close(fd);
	unlink(path);
	free(r);
}

/* Without CAP_IPC_LOCK and with a small RLIMIT_MEMLOCK (a unit that drops
 * the capability), the buffers cannot be pinned: io_uring says so and
 * runs unregistered, every write still verified. */
static void test_uring_unpinned(void **state)
{
	char path[64];
	int fd = tmpfile_direct(path, sizeof(path));
	(void)state;
	assert_true(fd >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		struct rlimit lim = { 65536, 65536 };
		struct engine_opts o = { .max_qd = 8, .max_bs = 65536 };
		struct engine_ctx *c;
		struct engine_result *r = malloc(sizeof(*r));
		if (syscall(SYS_capget, &h, d))
			_exit(2);
		d[0].effective &= ~(1u << CAP_IPC_LOCK);
		if (syscall(SYS_capset, &h, d) || setrlimit(RLIMIT_MEMLOCK, &lim))
			_exit(3);
		if (engine_open(ENGINE_IO_URING, &o, &c))
			_exit(4);
		if (!strstr(engine_describe(c), "unregistered buffers (Cannot allocate memory)"))
			_exit(5);
		int bad = write_read_verified(c, fd, 8, r);
		engine_destroy(c);
		_exit(bad ? 6 : 0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(fd);
	unlink(path);
}

/* Buffers over the registration cap (32 slots and their spares of
 * 16 MiB: 1 GiB) are not pinned at open, which would take most of a
 * second that a stop cannot cut short; the I/Os go unregistered, the
 * start line says why, and writes and verified reads still work. */
static void test_uring_large_buffers_unregistered(void **state)
{
	char path[64];
	struct engine_ctx *c;
	struct engine_result *r = malloc(sizeof(*r));
	struct engine_opts o = { .max_qd = 32, .max_bs = 16u << 20 };
	int fd = tmpfile_direct(path, sizeof(path));
	(void)state;
	assert_true(fd >= 0);
	assert_non_null(r);
	assert_int_equal(engine_open(ENGINE_IO_URING, &o, &c), 0);
	assert_string_equal(engine_describe(c),
			    "io_uring, registered file, unregistered buffers (1024 MiB, over the "
			    "256 MiB pinned at most), SQPOLL off");
	assert_int_equal(write_read_verified(c, fd, 8, r), 0);
	engine_destroy(c);
	free(r);
	close(fd);
	unlink(path);
}

/* sync does one I/O at a time whatever the queue depth: the depth it
 * keeps is at most one, and every I/O is still timed and counted. */
static void test_sync_one_at_a_time(void **state)
{
	char path[64];
	struct engine_ctx *c;
	struct engine_result *r = malloc(sizeof(*r));
	struct engine_opts o = { .max_qd = 16, .max_bs = 65536 };
	int fd = tmpfile_direct(path, sizeof(path));
	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(engine_open(ENGINE_SYNC, &o, &c), 0);
	assert_int_equal(write_read_verified(c, fd, 16, r), 0);
	print_message("  sync at queue depth 16: mean depth %.3f\n", r->mean_depth);
	assert_true(r->mean_depth > 0 && r->mean_depth <= 1.0 + 1e-9);
	assert_int_equal(r->lat.count, SPAN / 65536);
	engine_destroy(c);
	close(fd);
	unlink(path);
	free(r);
}

/* auto's choice that cannot be set up for a context (a queue deeper than
 * an io_uring ring may be: 32768 entries) falls to the next engine auto
 * may choose, and says why. */
static void test_auto_falls_back_per_context(void **state)
{
	struct engine_ctx *c = NULL;
	struct engine_opts o = { .max_qd = 40000, .max_bs = 512 };
	char why[200];
	(void)state;
	assert_int_equal(engine_auto(why, sizeof(why)), ENGINE_IO_URING);
	assert_int_equal(engine_open(ENGINE_AUTO, &o, &c), 0);
	print_message("  %s\n", engine_describe(c));
	assert_string_equal(engine_name(c), "libaio");
	assert_string_equal(engine_describe(c), "libaio (ioengine = auto: io_uring_setup works "
						"here; io_uring: Invalid argument, so libaio)");
	engine_destroy(c);
}

/* Every engine of the list opens (its table is complete) under its own
 * name; a kind the list does not have, or no size, opens nothing. */
static void test_open_refuses(void **state)
{
	struct engine_ctx *c = NULL;
	struct engine_opts o = { .max_qd = 4, .max_bs = 4096, .null_mibps = 100 };
	(void)state;
	for (int k = ENGINE_AUTO + 1; k < ENGINE__COUNT; k++) {
		assert_int_equal(engine_open((enum engine_kind)k, &o, &c), 0);
		assert_string_equal(engine_name(c), engine_kind_name((enum engine_kind)k));
		engine_destroy(c);
		c = NULL;
	}
	o.null_mibps = 0;
	assert_int_equal(engine_open(ENGINE__COUNT, &o, &c), -EINVAL);
	o.max_qd = 0;
	assert_int_equal(engine_open(ENGINE_LIBAIO, &o, &c), -EINVAL);
	o.max_qd = 4;
	assert_int_equal(engine_open(ENGINE_NULL, &o, &c), -EINVAL); /* no speed */
	assert_null(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_auto_choice),
		cmocka_unit_test(test_uring_registers),
		cmocka_unit_test(test_uring_unpinned),
		cmocka_unit_test(test_uring_large_buffers_unregistered),
		cmocka_unit_test(test_sync_one_at_a_time),
		cmocka_unit_test(test_auto_falls_back_per_context),
		cmocka_unit_test(test_open_refuses),
	};
	return cmocka_run_group_tests_name("engine kinds", tests, NULL, NULL);
}
