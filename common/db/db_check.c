/* db_check: a database's integrity, read-only, whole or one table at a
 * time (see db_check.h). SQLite result codes do not leave this file. */
#include "db/db_check.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db_int.h"
#include "base/util.h"

#define CHECK_BUSY_MS 10000
#define MAX_TABLES 256

static void add_problem(struct db_check_result *r, const char *text)
{
	size_t n = strlen(r->first);

	if (r->problems++ >= DB_CHECK_PROBLEMS)
		return;
	snprintf(r->first + n, sizeof(r->first) - n, "%s%s", n ? "; " : "", text);
}

void db_check_ctl_init(struct db_check_ctl *ctl)
{
	pthread_mutex_init(&ctl->lock, NULL);
	ctl->conn = NULL;
	ctl->stop = 0;
}

void db_check_ctl_fini(struct db_check_ctl *ctl)
{
	pthread_mutex_destroy(&ctl->lock);
}

void db_check_interrupt(struct db_check_ctl *ctl)
{
	pthread_mutex_lock(&ctl->lock);
	ctl->stop = 1;
	if (ctl->conn) /* the b-tree walk of integrity_check looks at it */
		sqlite3_interrupt(ctl->conn);
	pthread_mutex_unlock(&ctl->lock);
}

/* Publishes c in ctl (NULL: the check is over). Returns whether a stop was
 * asked for. */
static int ctl_conn(struct db_check_ctl *ctl, sqlite3 *c)
{
	int stop;

	if (!ctl)
		return 0;
	pthread_mutex_lock(&ctl->lock);
	ctl->conn = c;
	stop = ctl->stop;
	pthread_mutex_unlock(&ctl->lock);
	return stop;
}

static int ctl_stopped(struct db_check_ctl *ctl)
{
	int stop;

	if (!ctl)
		return 0;
	pthread_mutex_lock(&ctl->lock);
	stop = ctl->stop;
	pthread_mutex_unlock(&ctl->lock);
	return stop;
}

/* A check's answer: "ok", or one problem a row. A file too damaged to be
 * checked (SQLITE_CORRUPT, SQLITE_NOTADB) counts as one problem.
 * Returns 0, -EBADMSG or -errno. */
static int run_pragma(sqlite3 *c, const char *sql, struct db_check_result *r, char *err,
		      size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(c, sql, -1, &st, NULL), before = r->problems;

	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		/* "*** in database main ***" heads the list: no problem itself */
		if (t && strcmp(t, "ok") && strncmp(t, "*** in database", 15))
			add_problem(r, t);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) {
		add_problem(r, sqlite3_errmsg(c));
		return -EBADMSG;
	}
	if ((rc & 0xff) == SQLITE_INTERRUPT)
		return -EINTR;
	if (rc != SQLITE_DONE) {
		db_seterr(err, errlen, "%s", sqlite3_errmsg(c));
		return db_map_rc(rc, sqlite3_system_errno(c));
	}
	return r->problems > before ? -EBADMSG : 0;
}

/* The main schema's tables, read whole first (no statement stays open
 * across the checks). Returns how many, or -errno (or -EBADMSG). */
static int list_tables(sqlite3 *c, char **names, struct db_check_result *r, char *err,
		       size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int n = 0, rc = sqlite3_prepare_v2(c,
					   "SELECT name FROM pragma_table_list WHERE schema ="
					   " 'main' AND type = 'table' ORDER BY name",
					   -1, &st, NULL);

	while (rc == SQLITE_OK && n < MAX_TABLES && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		names[n] = strdup((const char *)sqlite3_column_text(st, 0));
		rc = names[n++] ? SQLITE_OK : SQLITE_NOMEM;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK || rc == SQLITE_DONE)
		return n;
	for (int i = 0; i < n; i++)
		free(names[i]);
	if ((rc & 0xff) == SQLITE_INTERRUPT)
		return -EINTR;
	if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) {
		add_problem(r, sqlite3_errmsg(c));
		return -EBADMSG;
	}
	db_seterr(err, errlen, "%s", sqlite3_errmsg(c));
	return db_map_rc(rc, sqlite3_system_errno(c));
}

/* Table name and its indexes. Returns 0, -EBADMSG or -errno. */
static int check_table(sqlite3 *c, const char *name, int quick, struct db_check_result *r,
		       char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf("PRAGMA %s(\"%w\")", quick ? "quick_check" : "integrity_check",
				    name);
	int ret = sql ? run_pragma(c, sql, r, err, errlen) : -ENOMEM;

	sqlite3_free(sql);
	r->tables++;
	return ret;
}

/* The pause between two tables, in slices, so that a stop (a daemon that
 * must exit within a second) does not wait it out. */
static void rest(unsigned ms, struct db_check_ctl *ctl)
{
	const unsigned slice = 10;

	for (unsigned t = 0; t < ms && !ctl_stopped(ctl); t += slice) {
		unsigned n = ms - t < slice ? ms - t : slice;
		struct timespec ts = { 0, (long)n * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* One table (and its indexes) per statement; each statement is its own
 * read transaction. Returns 0, -EBADMSG, -EINTR or -errno. */
static int check_steps(sqlite3 *c, const struct db_check_opts *o, struct db_check_result *r,
		       char *err, size_t errlen)
{
	char *names[MAX_TABLES];
	int n = list_tables(c, names, r, err, errlen), ret = 0;

	for (int i = 0; i < n; i++) {
		int one = 0;
		if (ctl_stopped(o->ctl))
			one = -EINTR;
		if (i && o->pause_ms && !one)
			rest(o->pause_ms, o->ctl);
		if ((!ret || ret == -EBADMSG) && !one)
			one = check_table(c, names[i], o->quick, r, err, errlen);
		free(names[i]);
		if (one && (!ret || (ret == -EBADMSG && one != -EINTR)))
			ret = one;
	}
	return n < 0 ? n : ret;
}

int db_check_file(const char *path, const struct db_check_opts *o, struct db_check_result *r,
		  char *err, size_t errlen)
{
	sqlite3 *c = NULL;
	char sql[64];
	int ret, rc;

	memset(r, 0, sizeof(*r));
	db_seterr(err, errlen, "%s", "");
	rc = sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		ret = db_map_rc(rc, c ? sqlite3_system_errno(c) : 0);
		db_seterr(err, errlen, "cannot open database %s: %s", path,
			  c ? sqlite3_errmsg(c) : sqlite3_errstr(rc));
		sqlite3_close(c);
		return ret;
	}
	sqlite3_extended_result_codes(c, 1);
	sqlite3_busy_timeout(c, CHECK_BUSY_MS);
	if (ctl_conn(o->ctl, c)) {
		ctl_conn(o->ctl, NULL);
		sqlite3_close(c);
		return -EINTR;
	}
	if (o->stepwise) {
		ret = check_steps(c, o, r, err, errlen);
	} else {
		snprintf(sql, sizeof(sql), "PRAGMA %s(%d)",
			 o->quick ? "quick_check" : "integrity_check", DB_CHECK_PROBLEMS);
		ret = run_pragma(c, sql, r, err, errlen);
		r->tables = -1; /* the whole file, not counted by table */
	}
	if (ret && ret != -EBADMSG && ret != -EINTR && err && !strstr(err, path)) {
		char msg[512];
		util_strlcpy(msg, err, sizeof(msg));
		db_seterr(err, errlen, "database %s: %s", path, msg);
	}
	ctl_conn(o->ctl, NULL);
	sqlite3_close(c);
	return ret;
}
