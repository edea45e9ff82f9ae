/* test_notify: the STATUS= text (a table of targets and expected lines) and
 * the sd_notify wrappers against a datagram socket the test binds. */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

struct status_case {
	const char *what;
	struct notify_target t[3];
	int n;
	const char *want;
};

static const struct status_case status_cases[] = {
	{ "measuring with a baseline",
	  { { .name = "lab1",
	      .phase = "measure",
	      .measuring = 1,
	      .cycle = 3,
	      .size_index = 3,
	      .nsizes = 10,
	      .size_bytes = 6 * GiB + 400 * MiB,
	      .mibps = 412.34,
	      .baseline_mibps = 474 } },
	  1,
	  "lab1: cycle 3 size 4/10 (6.39 GiB) measure 412.3 MiB/s 87% of baseline" },
	{ "no baseline yet",
	  { { .name = "lab1",
	      .phase = "measure",
	      .measuring = 1,
	      .cycle = 1,
	      .size_index = 0,
	      .nsizes = 2,
	      .size_bytes = 32 * MiB,
	      .mibps = 100,
	      .baseline_mibps = -1 } },
	  1,
	  "lab1: cycle 1 size 1/2 (32.00 MiB) measure 100.0 MiB/s" },
	{ "fill shows MiB/s but no ratio",
	  { { .name = "a",
	      .phase = "fill",
	      .cycle = 2,
	      .size_index = 1,
	      .nsizes = 2,
	      .size_bytes = 64 * MiB,
	      .mibps = 50,
	      .baseline_mibps = 100 } },
	  1,
	  "a: cycle 2 size 2/2 (64.00 MiB) fill 50.0 MiB/s" },
	{ "phase just started: no MiB/s",
	  { { .name = "a",
	      .phase = "trim",
	      .cycle = 2,
	      .size_index = 1,
	      .nsizes = 2,
	      .size_bytes = 64 * MiB,
	      .mibps = 0,
	      .baseline_mibps = 100 } },
	  1,
	  "a: cycle 2 size 2/2 (64.00 MiB) trim" },
	{ "before the first iteration",
	  { { .name = "a", .phase = "start", .cycle = 0 } },
	  1,
	  "a: start" },
	{ "finished targets show their state",
	  { { .name = "a", .state = "done", .phase = "pause", .cycle = 4, .nsizes = 1 },
	    { .name = "b", .state = "failed", .cycle = 1, .nsizes = 1 } },
	  2,
	  "a: done; b: failed" },
	{ "several targets",
	  { { .name = "a",
	      .phase = "measure",
	      .measuring = 1,
	      .cycle = 1,
	      .size_index = 0,
	      .nsizes = 1,
	      .size_bytes = 1 * GiB,
	      .mibps = 10,
	      .baseline_mibps = 40 },
	    { .name = "b",
	      .phase = "pause",
	      .cycle = 7,
	      .size_index = 0,
	      .nsizes = 1,
	      .size_bytes = 1 * GiB },
	    { .name = "c", .phase = NULL, .cycle = 0 } },
	  3,
	  "a: cycle 1 size 1/1 (1.00 GiB) measure 10.0 MiB/s 25% of baseline; "
	  "b: cycle 7 size 1/1 (1.00 GiB) pause; c: starting" },
	{ "no targets", { { 0 } }, 0, "" },
	{ "a newline in a name stays on one line",
	  { { .name = "x\ny", .state = "done" } },
	  1,
	  "x y: done" },
};

static void test_status_table(void **state)
{
	char buf[512];

	for (size_t i = 0; i < sizeof(status_cases) / sizeof(status_cases[0]); i++) {
		const struct status_case *c = &status_cases[i];
		notify_format_status(buf, sizeof(buf), c->t, c->n);
		if (strcmp(buf, c->want))
			fail_msg("%s:\n got  \"%s\"\n want \"%s\"", c->what, buf, c->want);
	}
}

/* Many targets in a small buffer: whole parts only, then "(+K more)". */
static void test_status_truncates(void **state)
{
	struct notify_target t[20];
	char buf[64], names[20][8];

	for (int i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "t%02d", i);
		t[i] = (struct notify_target){ .name = names[i], .state = "done" };
	}
	notify_format_status(buf, sizeof(buf), t, 20);
	assert_true(strlen(buf) < sizeof(buf));
	assert_string_equal(buf, "t00: done; t01: done; t02: done; t03: done; (+16 more)");
	notify_format_status(buf, 8, t, 20);
	assert_true(strlen(buf) < 8);
	assert_int_equal(strncmp(buf, "(+20", 4), 0);
}

/* ---- the wrappers, with a socket standing in for systemd ---- */

struct listener {
	char dir[64];
	char path[128];
	int fd;
};

static int setup_socket(void **state)
{
	struct listener *l = calloc(1, sizeof(*l));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	assert_non_null(l);
	snprintf(l->dir, sizeof(l->dir), "/tmp/wearmon-notify.XXXXXX");
	assert_non_null(mkdtemp(l->dir));
	snprintf(l->path, sizeof(l->path), "%s/notify", l->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", l->path);
	l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(l->fd >= 0);
	assert_int_equal(bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setenv("NOTIFY_SOCKET", l->path, 1);
	*state = l;
	return 0;
}

static int teardown_socket(void **state)
{
	struct listener *l = *state;

	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	close(l->fd);
	unlink(l->path);
	rmdir(l->dir);
	free(l);
	return 0;
}

/* The next datagram, NUL-terminated, or "" when none arrived. */
static const char *next_msg(struct listener *l, char *buf, size_t len)
{
	ssize_t n = recv(l->fd, buf, len - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_wrappers_send(void **state)
{
	struct listener *l = *state;
	char buf[2048];

	assert_true(notify_enabled());
	assert_int_equal(notify_ready("lab1: start"), 0);
	assert_string_equal(next_msg(l, buf, sizeof(buf)), "READY=1\nSTATUS=lab1: start");
	assert_int_equal(notify_ready(NULL), 0);
	assert_string_equal(next_msg(l, buf, sizeof(buf)), "READY=1");
	assert_int_equal(notify_status("lab1: cycle 1"), 0);
	assert_string_equal(next_msg(l, buf, sizeof(buf)), "STATUS=lab1: cycle 1");
	assert_int_equal(notify_watchdog(), 0);
	assert_string_equal(next_msg(l, buf, sizeof(buf)), "WATCHDOG=1");
	assert_int_equal(notify_stopping(), 0);
	assert_string_equal(next_msg(l, buf, sizeof(buf)), "STOPPING=1");
	assert_int_equal(notify_reloading(), 0);
	next_msg(l, buf, sizeof(buf));
	unsigned long long usec = 0;
	assert_int_equal(sscanf(buf, "RELOADING=1\nMONOTONIC_USEC=%llu", &usec), 1);
	assert_true(usec > 0);
	assert_string_equal(next_msg(l, buf, sizeof(buf)), "");
}

static void test_watchdog_usec(void **state)
{
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "20000000", 1);
	assert_int_equal(notify_watchdog_usec(), 20000000);
	setenv("WATCHDOG_USEC", "nonsense", 1);
	assert_int_equal(notify_watchdog_usec(), 0);
}

/* Without NOTIFY_SOCKET every call succeeds and sends nothing. */
static void test_silent_without_socket(void **state)
{
	struct listener *l = *state;
	char buf[256];

	unsetenv("NOTIFY_SOCKET");
	assert_false(notify_enabled());
	assert_int_equal(notify_ready("x"), 0);
	assert_int_equal(notify_status("x"), 0);
	assert_int_equal(notify_watchdog(), 0);
	assert_int_equal(notify_reloading(), 0);
	assert_int_equal(notify_stopping(), 0);
	assert_string_equal(next_msg(l, buf, sizeof(buf)), "");
	setenv("NOTIFY_SOCKET", "", 1);
	assert_false(notify_enabled());
	assert_int_equal(notify_ready(NULL), 0);
}

/* A socket that is set but gone is an error the caller may log. */
static void test_error_when_socket_missing(void **state)
{
	setenv("NOTIFY_SOCKET", "/nonexistent/wearmon-notify", 1);
	assert_true(notify_ready(NULL) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_table),
		cmocka_unit_test(test_status_truncates),
		cmocka_unit_test_setup_teardown(test_wrappers_send, setup_socket, teardown_socket),
		cmocka_unit_test_setup_teardown(test_watchdog_usec, setup_socket, teardown_socket),
		cmocka_unit_test_setup_teardown(test_silent_without_socket, setup_socket,
						teardown_socket),
		cmocka_unit_test_setup_teardown(test_error_when_socket_missing, setup_socket,
						teardown_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
