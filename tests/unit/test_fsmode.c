/* Unit tests of fsmode: the mkfs command line built from the configuration. */
#include "unit.h"

#include <errno.h>
#include <string.h>

#include "fsmode.h"

static void test_mkfs_argv(void **state)
{
	static struct cfg_target t;
	char buf[256], *argv[16];
	memset(&t, 0, sizeof(t));
	t.filesystem = FS_EXT4;
	strcpy(t.mkfs_options, " -E  nodiscard -b 4096 ");
	int n = fsmode_mkfs_argv(&t, "/dev/loop7", buf, sizeof(buf), argv, 16);
	assert_int_equal(n, 8);
	const char *want[] = { "mkfs.ext4", "-F", "-q",   "-E",
			       "nodiscard", "-b", "4096", "/dev/loop7" };
	for (int i = 0; i < n; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[n]);
	t.filesystem = FS_XFS;
	t.mkfs_options[0] = 0;
	n = fsmode_mkfs_argv(&t, "/dev/sdz", buf, sizeof(buf), argv, 16);
	assert_int_equal(n, 4);
	assert_string_equal(argv[0], "mkfs.xfs");
	assert_string_equal(argv[1], "-f");
	strcpy(t.mkfs_options, "a b c d e f g h i j k l m n");
	assert_int_equal(fsmode_mkfs_argv(&t, "/dev/sdz", buf, sizeof(buf), argv, 16), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mkfs_argv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
