/* Unit tests of tgt's in-use checks against fixture sysfs/procfs trees:
 * holders (md/dm) on the disk or a partition, mounts of a partition,
 * and a clean disk; the erase methods refused where they would erase more
 * than the target; a SCSI serial from VPD page 0x80. The trees are made
 * in a temporary directory. (Loop devices on block devices are checked
 * with real ones: tests/integration/test_badinput.py.) */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config/cfg.h"
#include "device/tgt.h"

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

/* A target whose between_cycles runs secure-erase with method m. */
static int erase_check(const char *sysname, enum cfg_erase m, char *err, size_t len)
{
	static struct cfg c;
	static struct cfg_target t;
	memset(&c, 0, sizeof(c));
	memset(&t, 0, sizeof(t));
	snprintf(c.path, sizeof(c.path), "lab.conf");
	t.section_line = 7;
	t.between_cycles.a[0] = ACT_TRIM;
	t.between_cycles.a[1] = ACT_SECURE_ERASE;
	t.between_cycles.n = 2;
	t.secure_erase = m;
	char path[64];
	snprintf(path, sizeof(path), "/dev/%s", sysname);
	err[0] = 0;
	return tgt_erase_refusal(&c, &t, sysname, path, err, len);
}

static void test_erase_of_a_partition(void **state)
{
	struct fx *f = *state;
	char err[512];
	put(f, "sys/class/block/sdz1/partition", "1\n");
	assert_int_equal(erase_check("sdz1", ERASE_ATA, err, sizeof(err)), -EPERM);
	assert_string_equal(err, "lab.conf:7: secure_erase: refusing /dev/sdz1: it is a partition, "
				 "and secure_erase = ata erases the whole drive; make the whole "
				 "disk the target, or use blksecdiscard or discard-all, which "
				 "stay within the partition");
	assert_int_equal(erase_check("sdz1", ERASE_NVME_FORMAT, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "nvme-format erases the whole namespace"));
	/* the kernel bounds these to the partition */
	assert_int_equal(erase_check("sdz1", ERASE_BLKSECDISCARD, err, sizeof(err)), 0);
	assert_int_equal(erase_check("sdz1", ERASE_DISCARD_ALL, err, sizeof(err)), 0);
	/* the whole disk may be erased */
	assert_int_equal(erase_check("sdz", ERASE_ATA_ENHANCED, err, sizeof(err)), 0);
}

static void test_sanitize_beside_other_namespaces(void **state)
{
	struct fx *f = *state;
	char err[512];
	sub(f, "sys/class/block/nvme0n1/device/nvme0n1");
	put(f, "sys/class/block/nvme0n1/device/serial", "S1\n");
	assert_int_equal(erase_check("nvme0n1", ERASE_NVME_SANITIZE_BLOCK, err, sizeof(err)), 0);
	sub(f, "sys/class/block/nvme0n1/device/nvme0n2");
	assert_int_equal(erase_check("nvme0n1", ERASE_NVME_SANITIZE_CRYPTO, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err,
			       "its controller has 2 namespaces, and secure_erase = "
			       "nvme-sanitize-crypto erases every namespace of the controller"));
	/* a format stays within its namespace */
	assert_int_equal(erase_check("nvme0n1", ERASE_NVME_CRYPTO_FORMAT, err, sizeof(err)), 0);
}

/* A SCSI disk's serial comes from the binary VPD page 0x80 when sysfs has
 * no text serial: a 4-byte header, then the ASCII serial, space padded. */
static void test_scsi_serial_from_vpd_page(void **state)
{
	struct fx *f = *state;
	char path[512], serial[128], model[128], fw[64];
	static const unsigned char page[] = { 0x00, 0x80, 0x00, 0x0c, ' ', ' ', 'Z', 'A',
					      '1',  '2',  'B',  '3',  'C', '4', ' ', ' ' };
	snprintf(path, sizeof(path), "%s/sys/class/block/sdz/device/vpd_pg80", f->root);
	sub(f, "sys/class/block/sdz/device");
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(page, 1, sizeof(page), fp), sizeof(page));
	fclose(fp);
	put(f, "sys/class/block/sdz/device/model", "ST4000NM0023\n");
	struct tgt tg;
	memset(&tg, 0, sizeof(tg));
	tg.is_block = 1;
	snprintf(tg.sysname, sizeof(tg.sysname), "sdz");
	/* a node that opens but answers no ATA IDENTIFY: sysfs is asked */
	snprintf(tg.real_path, sizeof(tg.real_path), "/dev/null");
	assert_int_equal(tgt_read_identity(&tg, serial, sizeof(serial), model, sizeof(model), fw,
					   sizeof(fw)),
			 0);
	assert_string_equal(serial, "ZA12B3C4");
	assert_string_equal(model, "ST4000NM0023");
}

/* SANITIZE and FORMAT UNIT act on the whole logical unit. */
static void test_scsi_erase_of_a_partition(void **state)
{
	struct fx *f = *state;
	char err[512];
	put(f, "sys/class/block/sdz1/partition", "1\n");
	assert_int_equal(erase_check("sdz1", ERASE_SCSI_SANITIZE_BLOCK, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "scsi-sanitize-block erases the whole logical unit"));
	assert_int_equal(erase_check("sdz1", ERASE_SCSI_FORMAT, err, sizeof(err)), -EPERM);
	assert_int_equal(erase_check("sdz", ERASE_SCSI_SANITIZE_CRYPTO, err, sizeof(err)), 0);
}

/* The command the kernel turns a SCSI disk's discards into, from sysfs. */
static void test_scsi_provisioning_mode(void **state)
{
	struct fx *f = *state;
	char mode[32];
	assert_int_equal(tgt_scsi_provisioning_mode("sdz", mode, sizeof(mode)), -ENOENT);
	assert_string_equal(mode, "");
	sub(f, "sys/class/block/sdz/device/scsi_disk/2:0:1:0");
	put(f, "sys/class/block/sdz/device/scsi_disk/2:0:1:0/provisioning_mode", "writesame_16\n");
	assert_int_equal(tgt_scsi_provisioning_mode("sdz", mode, sizeof(mode)), 0);
	assert_string_equal(mode, "writesame_16");
}

/* A loop device with no identity of its own takes it from the identity
 * file beside its image (the simulated SSD's), the longest a drive
 * reports; without the file it has none. */
static void test_loop_identity_from_the_file_beside_its_image(void **state)
{
	struct fx *f = *state;
	char serial[128], model[128], fw[64];
	struct tgt tg;
	memset(&tg, 0, sizeof(tg));
	tg.is_block = 1;
	snprintf(tg.sysname, sizeof(tg.sysname), "loop7");
	snprintf(tg.real_path, sizeof(tg.real_path), "/dev/null");
	snprintf(tg.backing_file, sizeof(tg.backing_file), "%s/mnt/disk.img", f->root);
	sub(f, "sys/class/block/loop7");
	assert_int_equal(tgt_read_identity(&tg, serial, sizeof(serial), model, sizeof(model), fw,
					   sizeof(fw)),
			 0);
	assert_string_equal(serial, "");
	put(f, "mnt/identity",
	    "serial SIM0123456789ABCDEF0\nmodel WEARMON SIMSSD 256M MLC FTL TEST DRIVE X\n"
	    "firmware SIM1.0.0\nother thing\n");
	assert_int_equal(tgt_read_identity(&tg, serial, sizeof(serial), model, sizeof(model), fw,
					   sizeof(fw)),
			 0);
	assert_string_equal(serial, "SIM0123456789ABCDEF0");
	assert_string_equal(model, "WEARMON SIMSSD 256M MLC FTL TEST DRIVE X");
	assert_string_equal(fw, "SIM1.0.0");
}

/* An attempt refused as busy a given number of times, then done. */
struct busy {
	int refusals, calls, other;
};

static int busy_attempt(void *arg)
{
	struct busy *b = arg;
	b->calls++;
	if (b->other)
		return b->other;
	return b->calls <= b->refusals ? -EBUSY : 0;
}

static void test_busy_wait_tries_again_until_free(void **state)
{
	struct busy b = { .refusals = 3 };
	assert_int_equal(tgt_busy_wait("t1", "opening /dev/x again", busy_attempt, &b, NULL), 0);
	assert_int_equal(b.calls, 4);
}

static void test_busy_wait_returns_other_errors_at_once(void **state)
{
	struct busy b = { .other = -ENOENT };
	assert_int_equal(tgt_busy_wait("t1", "mounting /dev/x", busy_attempt, &b, NULL), -ENOENT);
	assert_int_equal(b.calls, 1);
}

static void test_busy_wait_ends_on_stop(void **state)
{
	atomic_int stop = 1;
	struct busy b = { .refusals = 1000000 };
	assert_int_equal(tgt_busy_wait("t1", "mounting /dev/x", busy_attempt, &b, &stop), -EBUSY);
	assert_int_equal(b.calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holder_on_a_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holder_on_the_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mounted_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_disk_mounted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_erase_of_a_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sanitize_beside_other_namespaces, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_scsi_serial_from_vpd_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scsi_erase_of_a_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scsi_provisioning_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_identity_from_the_file_beside_its_image,
						setup, teardown),
		cmocka_unit_test(test_busy_wait_tries_again_until_free),
		cmocka_unit_test(test_busy_wait_returns_other_errors_at_once),
		cmocka_unit_test(test_busy_wait_ends_on_stop),
	};
	return cmocka_run_group_tests_name("tgt", tests, NULL, NULL);
}
