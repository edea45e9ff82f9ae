/* Unit tests of the file-target refusals (common/device/tgt_file.c) on real files
 * in a temporary directory, with fixture sysfs and procfs trees: a file
 * with data, wearmon's own files by another name, a loop device's backing
 * file, a writer in procfs, the fdinfo flags, and a file created only by
 * tgt_prepare. (Real loop devices and processes: test_filetarget.py.) */
#include "unit.h"
#include "unit_tmp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "config/cfg.h"
#include "device/tgt.h"

struct fx {
	char dir[64];
	char img[128];
	char sys[128], proc[128]; /* tgt_set_roots keeps the pointers */
	struct cfg *c;
	struct tgt tg;
	char err[1024];
	int owned; /* what the owned callback answers */
};

static void put(const struct fx *f, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", f->dir, rel);
	for (char *p = path + strlen(f->dir) + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
	}
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static int owned_cb(void *arg, dev_t dev, ino_t ino)
{
	(void)dev;
	(void)ino;
	return ((struct fx *)arg)->owned;
}

/* data.img: 4 KiB of data; empty sysfs and procfs trees. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || unit_tmpdir(f->dir, sizeof(f->dir), "tgtfile"))
		return -1;
	snprintf(f->img, sizeof(f->img), "%s/data.img", f->dir);
	char block[4096];
	memset(block, 'x', sizeof(block));
	FILE *fp = fopen(f->img, "w");
	if (!fp || fwrite(block, 1, sizeof(block), fp) != sizeof(block) || fsync(fileno(fp)))
		return -1;
	fclose(fp);
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->dir);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->dir);
	put(f, "sys/class/block/.keep", "");
	put(f, "proc/.keep", "");
	tgt_set_roots(f->sys, f->proc);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	tgt_set_roots(NULL, NULL);
	tgt_close(&f->tg);
	cfg_free(f->c);
	unit_rmtree(f->dir);
	free(f);
	return 0;
}

/* tgt_check of device (check_only) with extra keys and guard g. */
static int check(struct fx *f, const char *device, const char *extra, const struct tgt_guard *g)
{
	char text[1024];
	snprintf(text, sizeof(text), "[wearmon]\ndatabase = %s/w.db\n[target t]\ndevice = %s\n%s",
		 f->dir, device, extra);
	cfg_free(f->c);
	f->c = NULL;
	if (cfg_parse_string(text, "t.conf", &f->c, f->err, sizeof(f->err)))
		fail_msg("%s", f->err);
	tgt_close(&f->tg);
	f->err[0] = 0;
	return tgt_check(f->c, &f->c->targets[0], g, 1, &f->tg, f->err, sizeof(f->err));
}

static void test_fdinfo_flags(void **state)
{
	static const struct {
		const char *text;
		int want;
	} cases[] = {
		{ "pos:\t0\nflags:\t0100002\nmnt_id:\t29\n", 1 }, /* O_RDWR|O_LARGEFILE */
		{ "pos:\t0\nflags:\t02100001\n", 1 },             /* O_WRONLY|O_CLOEXEC */
		{ "pos:\t0\nflags:\t0100000\n", 0 },              /* O_RDONLY */
		{ "flags:\t02000000\n", 0 },                      /* O_RDONLY|O_CLOEXEC */
		{ "pos:\t0\n", -EINVAL },
		{ "pos:\t0\nxflags:\t02\n", -EINVAL },
		{ "flags:\tzz\n", -EINVAL },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(tgt_fdinfo_writes(cases[i].text), cases[i].want);
}

static void test_data_needs_allow_destroy(void **state)
{
	struct fx *f = *state;
	struct tgt_guard g = { .owned = owned_cb, .owned_arg = f };
	assert_int_equal(check(f, f->img, "", &g), -EPERM);
	assert_non_null(strstr(f->err, "t.conf:3: allow_destroy: refusing to write to file "));
	assert_non_null(strstr(f->err, "it holds data (4096 bytes) that wearmon did not create"));
	assert_int_equal(check(f, f->img, "allow_destroy = yes\n", &g), 0);
	assert_int_equal(f->tg.own_it, 0);
	/* recorded as wearmon's, and marked (where the filesystem keeps marks) */
	f->owned = 1;
	int marks = setxattr(f->img, TGT_XATTR, "t", 1, 0) == 0;
	assert_int_equal(check(f, f->img, "", &g), 0);
	/* recorded, but without the mark: another file at a reused inode */
	if (marks) {
		assert_int_equal(removexattr(f->img, TGT_XATTR), 0);
		assert_int_equal(check(f, f->img, "", &g), -EPERM);
	}
}

static void test_sparse_file_is_accepted(void **state)
{
	struct fx *f = *state;
	char path[160];
	snprintf(path, sizeof(path), "%s/sparse.img", f->dir);
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
	close(fd);
	assert_int_equal(check(f, path, "", NULL), 0);
	assert_int_equal(f->tg.own_it, 1);
	assert_int_equal(f->tg.capacity, 1 << 20);
}

static void test_own_files_by_any_name(void **state)
{
	struct fx *f = *state;
	struct tgt_guard g = { .nown = 2 };
	struct tgt_own_file own[2] = { { .what = "the database" }, { .what = "the metrics file" } };
	char hard[160], missing[160];
	g.own = own;
	snprintf(own[0].path, sizeof(own[0].path), "%s", f->img);
	snprintf(own[1].path, sizeof(own[1].path), "%s/w.prom", f->dir);
	snprintf(hard, sizeof(hard), "%s/hard.img", f->dir);
	assert_int_equal(link(f->img, hard), 0);
	assert_int_equal(check(f, hard, "allow_destroy = yes\n", &g), -EPERM);
	assert_non_null(strstr(f->err, "t.conf:4: device: refusing "));
	assert_non_null(strstr(f->err, "hard.img: it is the database "));
	/* not there yet, but it would be created as the metrics file */
	snprintf(missing, sizeof(missing), "%s/sys/../w.prom", f->dir);
	assert_int_equal(check(f, missing, "file_size = 1M\n", &g), -EPERM);
	assert_non_null(strstr(f->err, "it would be created as the metrics file "));
}

static void test_backing_file_of_a_loop_device(void **state)
{
	struct fx *f = *state;
	char text[200];
	snprintf(text, sizeof(text), "%s\n", f->img);
	put(f, "sys/class/block/loop99/loop/backing_file", text);
	assert_int_equal(check(f, f->img, "allow_destroy = yes\n", NULL), -EBUSY);
	assert_non_null(strstr(f->err, "it is the backing file of the attached loop device "
				       "/dev/loop99; detach it (losetup -d /dev/loop99)"));
	/* the kernel says that file was deleted: this one only has its name */
	snprintf(text, sizeof(text), "%s (deleted)\n", f->img);
	put(f, "sys/class/block/loop99/loop/backing_file", text);
	assert_int_equal(check(f, f->img, "allow_destroy = yes\n", NULL), 0);
}

static void test_writer_in_procfs(void **state)
{
	struct fx *f = *state;
	char fd_link[160];
	struct tgt_guard g = { 0 };
	put(f, "proc/4242/comm", "dd\n");
	put(f, "proc/4242/fdinfo/3", "pos:\t0\nflags:\t0100001\nmnt_id:\t29\n");
	put(f, "proc/4242/fd/.keep", "");
	snprintf(fd_link, sizeof(fd_link), "%s/proc/4242/fd/3", f->dir);
	assert_int_equal(symlink(f->img, fd_link), 0);
	assert_int_equal(check(f, f->img, "allow_destroy = yes\n", &g), -EBUSY);
	assert_non_null(strstr(f->err, "process 4242 (dd) has it open for writing"));
	g.writer_ok = 4242; /* the daemon of this database, seen by --check */
	assert_int_equal(check(f, f->img, "allow_destroy = yes\n", &g), 0);
	g.writer_ok = 0;
	put(f, "proc/4242/fdinfo/3", "pos:\t0\nflags:\t0100000\n");
	assert_int_equal(check(f, f->img, "allow_destroy = yes\n", &g), 0);
}

static void test_created_only_when_prepared(void **state)
{
	struct fx *f = *state;
	char path[160], text[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/new.img", f->dir);
	assert_int_equal(check(f, path, "file_size = 1M\n", NULL), 0);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(f->tg.own_it, 1);
	/* a dangling link is not followed to create its target */
	snprintf(text, sizeof(text), "%s/link.img", f->dir);
	assert_int_equal(symlink(path, text), 0);
	assert_int_equal(check(f, text, "file_size = 1M\n", NULL), -ENOENT);
	assert_non_null(strstr(f->err, "it is a symbolic link to a file that does not exist"));
	assert_int_equal(check(f, path, "file_size = 1M\n", NULL), 0);
	int ret = tgt_prepare(f->c, &f->c->targets[0], &f->tg, f->err, sizeof(f->err));
	if (ret == -EINVAL && strstr(f->err, "O_DIRECT"))
		skip(); /* a /tmp without O_DIRECT */
	assert_int_equal(ret, 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 1 << 20);
	assert_int_equal(f->tg.created, 1);
	assert_true(f->tg.backing_ino == st.st_ino && f->tg.backing_dev == st.st_dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdinfo_flags),
		cmocka_unit_test_setup_teardown(test_data_needs_allow_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sparse_file_is_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_files_by_any_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backing_file_of_a_loop_device, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_writer_in_procfs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_created_only_when_prepared, setup, teardown),
	};
	return cmocka_run_group_tests_name("tgt_file", tests, NULL, NULL);
}
