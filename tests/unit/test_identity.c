/* test_identity: one comparison of identities (base/identity.h): which
 * part differs, unknown parts under the two rules, and the device and
 * file checks on stat results. */
#include "unit.h"
#include "unit_tmp.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/util.h"
#include "base/identity.h"

static const struct identity drive = {
	.kind = "block",
	.serial = "S3Z1NB0K",
	.model = "Samsung SSD 860",
	.capacity = 500107862016ULL,
	.rdev = 0x800,
};

struct diff_case {
	const char *what;
	struct identity now;
	unsigned parts, strict;
	unsigned want;
};

static void test_identity_diff_table(void **state)
{
	(void)state;
	const unsigned all = ID_KIND | ID_SERIAL | ID_MODEL | ID_CAPACITY | ID_RDEV;
	const struct diff_case cases[] = {
		{ "same", drive, all, 0, 0 },
		{ "other serial",
		  { .kind = "block",
		    .serial = "X",
		    .model = drive.model,
		    .capacity = drive.capacity },
		  all,
		  0,
		  ID_SERIAL },
		{ "serial unknown, lenient",
		  { .kind = "block",
		    .serial = "",
		    .model = drive.model,
		    .capacity = drive.capacity },
		  all,
		  0,
		  0 },
		{ "serial unknown, strict",
		  { .kind = "block", .model = drive.model, .capacity = drive.capacity },
		  ID_SERIAL,
		  ID_SERIAL,
		  ID_SERIAL },
		{ "capacity and kind",
		  { .kind = "file", .serial = drive.serial, .model = drive.model, .capacity = 1 },
		  all,
		  ID_KIND | ID_CAPACITY,
		  ID_KIND | ID_CAPACITY },
		{ "part not asked", { .kind = "file" }, ID_SERIAL, 0, 0 },
		{ "device number", { .rdev = 0x810 }, ID_RDEV, ID_RDEV, ID_RDEV },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned got =
			identity_diff(&drive, &cases[i].now, cases[i].parts, cases[i].strict);
		if (got != cases[i].want)
			fail_msg("%s: differs in 0x%x, want 0x%x", cases[i].what, got,
				 cases[i].want);
	}
}

/* A loop device's backing file: its path strictly (one gone is a change),
 * its device and inode only where both sides know them. */
static void test_identity_backing(void **state)
{
	(void)state;
	struct identity was = { .backing = "/srv/a.img", .backing_dev = 0x803, .backing_ino = 12 };
	struct identity moved = { .backing = "/srv/b.img",
				  .backing_dev = 0x803,
				  .backing_ino = 12 };
	struct identity other = { .backing = "/srv/a.img",
				  .backing_dev = 0x803,
				  .backing_ino = 13 };
	struct identity old_row = { .backing = "/srv/a.img" }; /* before schema 15: no inode */
	struct identity none = { 0 };
	const unsigned parts = ID_BACKING | ID_BACKING_ID, strict = ID_BACKING;

	assert_int_equal(identity_diff(&was, &moved, parts, strict), ID_BACKING);
	assert_int_equal(identity_diff(&was, &other, parts, strict), ID_BACKING_ID);
	assert_int_equal(identity_diff(&old_row, &other, parts, strict), 0);
	assert_int_equal(identity_diff(&was, &none, ID_BACKING, strict), ID_BACKING);
	assert_int_equal(identity_diff(&none, &none, parts, strict), 0);
}

static void test_identity_part_names(void **state)
{
	(void)state;
	assert_string_equal(identity_part_name(ID_SERIAL), "serial");
	assert_string_equal(identity_part_name(ID_BACKING_ID), "backing file identity");
	assert_string_equal(identity_part_name(ID_FILE), "file identity");
	assert_string_equal(identity_part_name(ID_SERIAL | ID_MODEL), "?");
	assert_string_equal(identity_part_name(0), "?");
}

static void test_identity_is_device(void **state)
{
	(void)state;
	struct stat st;
	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFBLK | 0660;
	st.st_rdev = makedev(7, 3);
	assert_true(identity_is_device(&st, makedev(7, 3)));
	assert_false(identity_is_device(&st, makedev(7, 4)));
	st.st_mode = S_IFREG | 0600; /* a node replaced by a file */
	assert_false(identity_is_device(&st, makedev(7, 3)));
}

/* Two real files: each is itself, not the other. */
static void test_identity_same_file(void **state)
{
	(void)state;
	char dir[64], a[96], b[96];
	struct stat sa, sb;
	assert_int_equal(unit_tmpdir(dir, sizeof(dir), "identity"), 0);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	FILE *f = fopen(a, "w");
	assert_non_null(f);
	fclose(f);
	f = fopen(b, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(stat(a, &sa), 0);
	assert_int_equal(stat(b, &sb), 0);
	assert_true(identity_same_file(&sa, sa.st_dev, sa.st_ino));
	assert_false(identity_same_file(&sb, sa.st_dev, sa.st_ino));
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_diff_table),
		cmocka_unit_test(test_identity_backing),
		cmocka_unit_test(test_identity_part_names),
		cmocka_unit_test(test_identity_is_device),
		cmocka_unit_test(test_identity_same_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
