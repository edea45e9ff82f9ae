/* test_blkinfo: what a block device holds, in words (blkinfo_describe),
 * over a table of what libblkid could have found; and blkinfo_probe's
 * refusal of what is no block device. */
#include "unit.h"
#include "unit_tmp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "device/blkinfo.h"

struct describe_case {
	const char *what;
	struct blkinfo b;
	const char *want;
};

static void test_blkinfo_describe_table(void **state)
{
	(void)state;
	static const struct describe_case cases[] = {
		{ "unreadable", { .probed = 0 }, "unknown: libblkid could not read the device" },
		{ "empty",
		  { .probed = 1 },
		  "no filesystem, RAID member or partition table that libblkid knows, not "
		  "mounted" },
		{ "ext4 with a label",
		  { .probed = 1,
		    .fstype = "ext4",
		    .usage = "filesystem",
		    .label = "data",
		    .uuid = "0b1c" },
		  "ext4 filesystem labelled \"data\" (UUID 0b1c), not mounted" },
		{ "mounted xfs, no label",
		  { .probed = 1, .fstype = "xfs", .usage = "filesystem", .mounted_at = "/srv" },
		  "xfs filesystem, mounted on /srv" },
		{ "RAID member",
		  { .probed = 1, .fstype = "linux_raid_member", .usage = "raid" },
		  "linux_raid_member RAID member, not mounted" },
		{ "LUKS",
		  { .probed = 1, .fstype = "crypto_LUKS", .usage = "crypto" },
		  "crypto_LUKS encrypted volume, not mounted" },
		{ "gpt with two partitions",
		  { .probed = 1,
		    .pttype = "gpt",
		    .nparts = 2,
		    .part = { { .name = "sdb1", .fstype = "vfat", .label = "EFI" },
			      { .name = "sdb2", .fstype = "ext4", .mounted_at = "/home" } } },
		  "gpt partition table, 2 partitions: sdb1: vfat \"EFI\", not mounted; sdb2: "
		  "ext4, mounted on /home" },
		{ "a table, one partition without a filesystem",
		  { .probed = 1, .pttype = "dos", .nparts = 1, .part = { { .name = "sdc1" } } },
		  "dos partition table, 1 partition: sdc1: no filesystem, not mounted" },
	};
	char out[1024];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		blkinfo_describe(&cases[i].b, out, sizeof(out));
		if (strcmp(out, cases[i].want))
			fail_msg("%s: got \"%s\", want \"%s\"", cases[i].what, out, cases[i].want);
	}
}

/* A short buffer cuts the words, never overruns. */
static void test_blkinfo_describe_truncates(void **state)
{
	(void)state;
	const struct blkinfo b = { .probed = 1, .fstype = "ext4", .label = "a long label" };
	char out[12];

	memset(out, 'x', sizeof(out));
	blkinfo_describe(&b, out, sizeof(out));
	assert_int_equal(strlen(out), sizeof(out) - 1);
	assert_string_equal(out, "ext4 filesy");
}

static void test_blkinfo_probe_wants_a_block_device(void **state)
{
	(void)state;
	char dir[64], file[96];
	struct blkinfo b;

	assert_int_equal(unit_tmpdir(dir, sizeof(dir), "blkinfo"), 0);
	snprintf(file, sizeof(file), "%s/f", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(blkinfo_probe(file, &b), -ENOTBLK);
	assert_int_equal(b.probed, 0);
	assert_int_equal(b.rotational, -1);
	snprintf(file, sizeof(file), "%s/none", dir);
	assert_int_equal(blkinfo_probe(file, &b), -ENOENT);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blkinfo_describe_table),
		cmocka_unit_test(test_blkinfo_describe_truncates),
		cmocka_unit_test(test_blkinfo_probe_wants_a_block_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
