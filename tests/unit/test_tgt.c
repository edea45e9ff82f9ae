/* Unit tests of tgt's in-use checks against fixture sysfs/procfs trees:
 * holders (md/dm) on the disk or a partition, mounts of a partition,
 * and a clean disk. The trees are made in a temporary directory. */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tgt.h"

struct fx {
	char root[64];
	char sys[96], proc[96];
};

static void mkdirs(const char *path)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	}
	mkdir(buf, 0755);
}

static void put(const struct fx *f, const char *rel, const char *text)
{
	char path[512], dir[512];
	snprintf(path, sizeof(path), "%s/%s", f->root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	mkdirs(dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void sub(const struct fx *f, const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", f->root, rel);
	mkdirs(path);
}

/* A disk "sdz" (8:240) with partitions sdz1 (8:241) and sdz2 (8:242). */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/wearmon-test-tgt.XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
	put(f, "sys/class/block/sdz/dev", "8:240\n");
	put(f, "sys/class/block/sdz/sdz1/dev", "8:241\n");
	put(f, "sys/class/block/sdz/sdz2/dev", "8:242\n");
	sub(f, "sys/class/block/sdz/holders");
	sub(f, "sys/class/block/sdz1/holders");
	sub(f, "sys/class/block/sdz2/holders");
	put(f, "proc/self/mountinfo", "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n");
	put(f, "proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
	tgt_set_roots(f->sys, f->proc);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];
	tgt_set_roots(NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->root);
	int rc = system(cmd);
	free(f);
	return rc ? -1 : 0;
}

static int in_use(char *why, size_t len)
{
	/* a database path whose filesystem is certainly not the fixture disk */
	return tgt_in_use("sdz", makedev(8, 240), "/tmp/w.db", why, len);
}

static void test_clean_disk(void **state)
{
	char why[512] = "";
	assert_int_equal(in_use(why, sizeof(why)), 0);
}

static void test_holder_on_a_partition(void **state)
{
	struct fx *f = *state;
	char why[512];
	sub(f, "sys/class/block/sdz2/holders/md127");
	assert_int_equal(in_use(why, sizeof(why)), -EBUSY);
	assert_string_equal(why, "/dev/sdz2 is held by md127 (md/dm/LVM); release it or choose "
				 "another device");
}

static void test_holder_on_the_disk(void **state)
{
	struct fx *f = *state;
	char why[512];
	sub(f, "sys/class/block/sdz/holders/dm-3");
	assert_int_equal(in_use(why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "/dev/sdz is held by dm-3"));
}

static void test_mounted_partition(void **state)
{
	struct fx *f = *state;
	char why[512];
	put(f, "proc/self/mountinfo",
	    "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	    "40 22 8:241 / /srv/data rw,relatime shared:9 - xfs /dev/sdz1 rw\n");
	assert_int_equal(in_use(why, sizeof(why)), -EBUSY);
	assert_string_equal(why, "/dev/sdz1 is mounted on /srv/data; unmount it or choose "
				 "another device");
}

/* A mount of another disk whose minor merely starts alike is no match. */
static void test_other_disk_mounted(void **state)
{
	struct fx *f = *state;
	char why[512] = "";
	put(f, "proc/self/mountinfo",
	    "40 22 8:24 / /mnt rw - ext4 /dev/sdb8 rw\n"
	    "41 22 65:240 / /mnt2 rw - ext4 /dev/sdbz rw\n");
	assert_int_equal(in_use(why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holder_on_a_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holder_on_the_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mounted_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_disk_mounted, setup, teardown),
	};
	return cmocka_run_group_tests_name("tgt", tests, NULL, NULL);
}
