/* Unit tests for daemon/watch.c: a regular-file target truncated or
 * extended after it was opened, on a real file under /tmp. */
#include "unit.h"
#include "unit_tmp.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "watch.h"

static void test_file_size_changes_are_named(void **state)
{
	char dir[64], err[1024];
	struct tgt tg = { .fd = -1 };
	struct watch w;
	(void)state;

	assert_int_equal(unit_tmpdir(dir, sizeof(dir), "watch"), 0);
	snprintf(tg.path, sizeof(tg.path), "%s/t.img", dir);
	tg.fd = open(tg.path, O_RDWR | O_CREAT, 0600);
	assert_true(tg.fd >= 0);
	assert_int_equal(ftruncate(tg.fd, 4096 * 4), 0);
	watch_init(&w, &tg, 0);
	assert_int_equal(watch_check(&w, &tg, err, sizeof(err)), 0);
	assert_int_equal(truncate(tg.path, 4096), 0);
	assert_int_equal(watch_check(&w, &tg, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, tg.path));
	assert_non_null(strstr(err, "16384 bytes at start, 4096 bytes now (truncated"));
	assert_int_equal(truncate(tg.path, 4096 * 8), 0);
	assert_int_equal(watch_check(&w, &tg, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, "32768 bytes now (extended"));
	/* filesystem mode: the test file is wearmond's own to size */
	watch_init(&w, &tg, 1);
	assert_int_equal(truncate(tg.path, 4096), 0);
	assert_int_equal(watch_check(&w, &tg, err, sizeof(err)), 0);
	close(tg.fd);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_size_changes_are_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
