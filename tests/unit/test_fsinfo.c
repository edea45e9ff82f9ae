/* test_fsinfo: the filesystem of a path, as messages name it. */
#include "unit.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/fsinfo.h"

struct contains_case {
	const char *mnt, *path;
	int want;
};

static void test_contains(void **state)
{
	static const struct contains_case cases[] = {
		{ "/", "/var/lib/w.db", 1 },          { "/var", "/var/lib/w.db", 1 },
		{ "/var/lib", "/var/lib", 1 },        { "/var/lib", "/var/library/w.db", 0 },
		{ "/var/lib/w", "/var/lib/w.db", 0 }, { "/srv", "/var/lib/w.db", 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (fsinfo_contains(cases[i].mnt, cases[i].path) != cases[i].want)
			fail_msg("%s contains %s: want %d", cases[i].mnt, cases[i].path,
				 cases[i].want);
}

/* A path that does not exist is taken in its directory; the text names
 * the mount point and the free space. */
static void test_of_and_text(void **state)
{
	struct fsinfo fi;
	char text[PATH_MAX + 400];
	(void)state;

	assert_int_equal(fsinfo_of("/proc/self/no-such-file", &fi), 0);
	assert_string_equal(fi.mount, "/proc");
	assert_string_equal(fi.type, "proc");
	fsinfo_text(&fi, text, sizeof(text));
	assert_non_null(strstr(text, "filesystem /proc (proc"));
	assert_non_null(strstr(text, " free of "));
	assert_int_equal(fsinfo_of("/no-such-dir/x", &fi), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contains),
		cmocka_unit_test(test_of_and_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
