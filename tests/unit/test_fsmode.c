/* Unit tests of fsmode: the mkfs command line built from the configuration,
 * when a start formats or mounts again, and which mount points the sweep at
 * start takes for its own and removes. */
#include "unit.h"
#include "unit_tmp.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "device/fsmode.h"

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

static void test_own_name(void **state)
{
	static const struct {
		const char *entry, *name;
		int own;
	} cases[] = {
		{ "wearmon-fs-Ab3dE9", "fs", 1 },     { "wearmon-lab.1_x-000000", "lab.1_x", 1 },
		{ "wearmon-fs-Ab3dE", "fs", 0 },    /* five characters */
		{ "wearmon-fs-Ab3dE9x", "fs", 0 },  /* seven */
		{ "wearmon-fs-Ab3-E9", "fs", 0 },   /* not mkdtemp's alphabet */
		{ "wearmon-fs-a-Ab3dE9", "fs", 0 }, /* target fs-a's, not fs's */
		{ "wearmon-fs-a-Ab3dE9", "fs-a", 1 }, { "wearmon-fsx-Ab3dE9", "fs", 0 },
		{ "wearmon-Ab3dE9", "", 0 },          { "wearmonfs-Ab3dE9", "fs", 0 },
		{ "xwearmon-fs-Ab3dE9", "fs", 0 },    { "wearmon-fs-", "fs", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(fsmode_own_name(cases[i].entry, cases[i].name), cases[i].own);
}

static void test_plan(void **state)
{
	static const struct {
		int format_each_size;
		struct fsmode_resume r;
		enum fsmode_plan want;
	} cases[] = {
		/* a new campaign: the filesystem is made before its first size */
		{ 0,
		  { .resume = 0, .cycle = 1, .first_cycle = 1, .cycles_done = 0 },
		  FSMODE_FORMAT_START },
		{ 0,
		  { .resume = 0, .cycle = 4, .first_cycle = 4, .cycles_done = 0 },
		  FSMODE_FORMAT_START },
		/* the first size of the first cycle again: formatted before it */
		{ 0,
		  { .resume = 1, .cycle = 1, .first_cycle = 1, .size_index = 0 },
		  FSMODE_FORMAT_START },
		/* mid-cycle, a later cycle, or the next cycle: made earlier */
		{ 0,
		  { .resume = 1, .cycle = 1, .first_cycle = 1, .size_index = 1 },
		  FSMODE_REMOUNT },
		{ 0,
		  { .resume = 1, .cycle = 2, .first_cycle = 1, .size_index = 0, .cycles_done = 1 },
		  FSMODE_REMOUNT },
		{ 0,
		  { .resume = 1, .cycle = 1, .first_cycle = 1, .size_index = 3 },
		  FSMODE_REMOUNT },
		{ 0,
		  { .resume = 0, .cycle = 3, .first_cycle = 1, .cycles_done = 2 },
		  FSMODE_REMOUNT },
		/* format_each_size: every size makes its own */
		{ 1,
		  { .resume = 1, .cycle = 1, .first_cycle = 1, .size_index = 2 },
		  FSMODE_FORMAT_EACH_SIZE },
		{ 1, { .resume = 0, .cycle = 1, .first_cycle = 1 }, FSMODE_FORMAT_EACH_SIZE },
		/* the action after the last size: on the last size's filesystem */
		{ 1,
		  { .resume = 1, .cycle = 2, .first_cycle = 1, .size_index = 3, .at_action = 1 },
		  FSMODE_REMOUNT },
		{ 0,
		  { .resume = 1, .cycle = 1, .first_cycle = 1, .size_index = 1, .at_action = 1 },
		  FSMODE_REMOUNT },
		/* inside a size, rows of it done: the filesystem holding their
		 * data stays, with format_each_size or at the campaign's start */
		{ 1,
		  { .resume = 1, .cycle = 1, .first_cycle = 1, .size_index = 2, .mid_size = 1 },
		  FSMODE_REMOUNT },
		{ 0,
		  { .resume = 1, .cycle = 1, .first_cycle = 1, .size_index = 0, .mid_size = 1 },
		  FSMODE_REMOUNT },
	};
	static struct cfg_target t;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t.format_each_size = cases[i].format_each_size;
		assert_int_equal(fsmode_plan_of(&t, &cases[i].r), cases[i].want);
	}
}

static int exists(const char *dir, const char *entry)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, entry);
	return access(p, F_OK) == 0;
}

static void make(const char *dir, const char *entry, const char *file)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, entry);
	assert_int_equal(mkdir(p, 0700), 0);
	if (file) {
		snprintf(p, sizeof(p), "%s/%s/%s", dir, entry, file);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
	}
}

/* Only empty directories of an own name that no process holds locked. */
static void test_sweep_dirs(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX];
	assert_int_equal(unit_tmpdir(dir, sizeof(dir), "fsmode"), 0);
	make(dir, "wearmon-lab1-Ab3dE9", NULL);   /* removed */
	make(dir, "wearmon-lab2-Zz99zz", NULL);   /* removed */
	make(dir, "wearmon-lab1-full01", "data"); /* not empty */
	make(dir, "wearmon-lab1-held01", NULL);   /* locked: a running daemon's */
	make(dir, "wearmon-lab1-Ab3dE9x", NULL);  /* not the pattern */
	make(dir, "wearmon-other-Ab3dE9", NULL);  /* not a target of ours */
	snprintf(p, sizeof(p), "%s/wearmon-lab1-file01", dir);
	FILE *f = fopen(p, "w"); /* a file, not a directory */
	assert_non_null(f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/wearmon-lab1-held01", dir);
	int held = open(p, O_RDONLY | O_DIRECTORY);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX | LOCK_NB), 0);
	const struct fsmode_own own[] = { { "lab1", 0 }, { "lab2", 0 } };
	assert_int_equal(fsmode_sweep(dir, own, 2), 2);
	assert_false(exists(dir, "wearmon-lab1-Ab3dE9"));
	assert_false(exists(dir, "wearmon-lab2-Zz99zz"));
	assert_true(exists(dir, "wearmon-lab1-full01/data"));
	assert_true(exists(dir, "wearmon-lab1-held01"));
	assert_true(exists(dir, "wearmon-lab1-Ab3dE9x"));
	assert_true(exists(dir, "wearmon-other-Ab3dE9"));
	assert_true(exists(dir, "wearmon-lab1-file01"));
	close(held);
	assert_int_equal(fsmode_sweep(dir, own, 2), 1); /* no longer held */
	assert_int_equal(fsmode_sweep(dir, own, 0), 0);
	unit_rmtree(dir);
	assert_int_equal(fsmode_sweep(dir, own, 2), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mkfs_argv),
		cmocka_unit_test(test_own_name),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_sweep_dirs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
