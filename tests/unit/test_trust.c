/* Unit tests for daemon/trust.c: the symlinks another user could have
 * placed on a path, and the directories above a file, on real directories
 * under /tmp. Cases that hand a link or directory to another user need root
 * (lchown) and are skipped otherwise. */
#include "unit.h"
#include "unit_tmp.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include "trust.h"

#define OTHER_UID 65534 /* nobody */

static char base[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	return unit_tmpdir(base, sizeof(base), "trust");
}

static int teardown(void **state)
{
	(void)state;
	unit_rmtree(base);
	return 0;
}

/* base/name made as a directory of mode mode (chmod: umask aside). */
static const char *mkdir_mode(const char *name, mode_t mode, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", base, name);
	assert_int_equal(mkdir(out, 0700), 0);
	assert_int_equal(chmod(out, mode), 0);
	return out;
}

static void link_at(const char *target, const char *at, uid_t owner)
{
	assert_int_equal(symlink(target, at), 0);
	if (owner)
		assert_int_equal(lchown(at, owner, owner), 0);
}

static void need_root(void)
{
	if (geteuid() != 0)
		skip();
}

struct link_case {
	const char *name;
	mode_t dir_mode; /* of the directory holding the link */
	uid_t owner;     /* of the link */
	int want;
	const char *says; /* in err when refused */
};

static void test_links_table(void **state)
{
	static const struct link_case cases[] = {
		{ "private", 0700, 0, 0, NULL },
		{ "sticky-root", 01777, 0, 0, NULL },
		{ "open-root", 0777, 0, -EPERM,
		  "others can write without the sticky bit (mode 0777)" },
		{ "group-root", 0770, 0, -EPERM, "its group can write without the sticky bit" },
		{ "sticky-other", 01777, OTHER_UID, -EPERM, "owned by uid 65534" },
		{ "open-other", 0757, OTHER_UID, -EPERM, "owned by uid 65534" },
		{ "private-other", 0755, OTHER_UID, 0, NULL },
	};
	char real[PATH_MAX], dir[PATH_MAX], link[PATH_MAX + 8], path[PATH_MAX + 16];
	char err[1024];
	(void)state;

	mkdir_mode("real", 0700, real, sizeof(real));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct link_case *c = &cases[i];
		if (c->owner && geteuid() != 0)
			continue;
		mkdir_mode(c->name, c->dir_mode, dir, sizeof(dir));
		snprintf(link, sizeof(link), "%s/db", dir);
		link_at(real, link, c->owner);
		snprintf(path, sizeof(path), "%s/w.db", link);
		err[0] = '\0';
		int ret = trust_links("database", path, err, sizeof(err));
		if (ret != c->want)
			fail_msg("%s: %d, want %d: %s", c->name, ret, c->want, err);
		if (c->says && (!strstr(err, c->says) || !strstr(err, link)))
			fail_msg("%s: %s", c->name, err);
	}
}

static void test_links_chain_last_and_missing(void **state)
{
	char a[PATH_MAX], b[PATH_MAX], l1[PATH_MAX + 8], l2[PATH_MAX + 8], p[PATH_MAX + 32];
	char err[1024];
	(void)state;

	mkdir_mode("a", 0700, a, sizeof(a));
	mkdir_mode("b", 0777, b, sizeof(b));
	/* a/one -> ../b/two -> /tmp: the second link is in an open directory */
	snprintf(l1, sizeof(l1), "%s/one", a);
	snprintf(l2, sizeof(l2), "%s/two", b);
	link_at("../b/two", l1, 0);
	link_at("/tmp", l2, 0);
	snprintf(p, sizeof(p), "%s/x.db", l1);
	assert_int_equal(trust_links("database", p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, l2));
	/* the last component a link in an open directory */
	snprintf(p, sizeof(p), "%s/w.db", b);
	link_at("/tmp/nonexistent", p, 0);
	assert_int_equal(trust_links("database", p, err, sizeof(err)), -EPERM);
	/* nothing exists beyond a: nothing to follow */
	snprintf(p, sizeof(p), "%s/missing/w.db", a);
	assert_int_equal(trust_links("database", p, err, sizeof(err)), 0);
	/* a loop of links */
	snprintf(l1, sizeof(l1), "%s/x", a);
	snprintf(l2, sizeof(l2), "%s/y", a);
	link_at(l2, l1, 0);
	link_at(l1, l2, 0);
	snprintf(p, sizeof(p), "%s/w.db", l1);
	assert_int_equal(trust_links("database", p, err, sizeof(err)), -ELOOP);
}

static void test_dirs(void **state)
{
	char d[PATH_MAX], f[PATH_MAX + 8], err[1024];
	(void)state;

	mkdir_mode("bin", 0755, d, sizeof(d));
	snprintf(f, sizeof(f), "%s/run.sh", d);
	fclose(fopen(f, "w"));
	assert_int_equal(trust_dirs("program", f, err, sizeof(err)), 0); /* /tmp is sticky */
	assert_int_equal(chmod(d, 0775), 0);
	assert_int_equal(trust_dirs("program", f, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by its group without the sticky bit (mode 0775)"));
	assert_int_equal(chmod(d, 01777), 0);
	assert_int_equal(trust_dirs("program", f, err, sizeof(err)), 0);
	snprintf(f, sizeof(f), "%s/none.sh", d);
	assert_int_equal(trust_dirs("program", f, err, sizeof(err)), -ENOENT);
}

static void test_dirs_foreign_owner(void **state)
{
	char d[PATH_MAX], f[PATH_MAX + 8], err[1024];
	(void)state;

	need_root();
	mkdir_mode("theirs", 0755, d, sizeof(d));
	snprintf(f, sizeof(f), "%s/run.sh", d);
	fclose(fopen(f, "w"));
	assert_int_equal(chown(d, OTHER_UID, OTHER_UID), 0);
	assert_int_equal(trust_dirs("program", f, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "is owned by uid 65534"));
	assert_non_null(strstr(err, d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_links_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_chain_last_and_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirs_foreign_owner, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
