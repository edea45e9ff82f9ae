/* unit_tmp.h: what the unit tests that write files share: a private
 * directory under /tmp, removed whole at teardown, and the rows of a query
 * on a database in it, printed as the sqlite3 CLI prints them, and a
 * statement run on it. Include
 * after unit.h. */
#ifndef WEARMON_UNIT_TMP_H
#define WEARMON_UNIT_TMP_H

#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Make /tmp/wearmon-test-NAME.XXXXXX into dir. Returns 0 or -1. */
static inline int unit_tmpdir(char *dir, size_t len, const char *name)
{
	if ((size_t)snprintf(dir, len, "/tmp/wearmon-test-%s.XXXXXX", name) >= len)
		return -1;
	return mkdtemp(dir) ? 0 : -1;
}

static inline int unit_rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

/* Remove dir and everything in it (symbolic links are not followed). */
static inline void unit_rmtree(const char *dir)
{
	nftw(dir, unit_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

struct unit_rows {
	char *out;
	size_t len;
};

static inline int unit_row_cb(void *arg, int n, char **v, char **names)
{
	struct unit_rows *r = arg;
	size_t used = strlen(r->out);
	(void)names;
	for (int i = 0; i < n && used < r->len; i++)
		used += (size_t)snprintf(r->out + used, r->len - used, "%s%s", i ? "|" : "",
					 v[i] ? v[i] : "");
	if (used < r->len)
		snprintf(r->out + used, r->len - used, "\n");
	return 0;
}

/* The rows of sql on the database at path, read-only, as the sqlite3 CLI
 * prints them: "a|b\n" each, into out. A failing query fails the test. */
static inline const char *unit_rows(const char *path, const char *sql, char *out, size_t len)
{
	struct unit_rows r = { out, len };
	sqlite3 *db;
	char *err = NULL;

	out[0] = '\0';
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_exec(db, sql, unit_row_cb, &r, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err ? err : "?");
	sqlite3_close(db);
	return out;
}

/* Run sql (one statement or several) on the database at path, made when
 * missing, waiting up to 5 s for a lock. A failing statement fails the
 * test, naming it. */
static inline void unit_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *err = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err ? err : "?");
	sqlite3_close(db);
}

#endif
