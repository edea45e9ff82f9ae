/* db_views: the views whose definition changed without a schema version
 * (their columns only grew, no stored data changed): a writable open
 * recreates a stored view whose text is not the current one, a reader
 * gets the current one as a TEMP view of its own connection (readers
 * never write the file; a TEMP view hides the stored one of its name). */
#include "db/db_int.h"
#include "db/db_views.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CYCLE_SUMMARY_HEAD "CREATE VIEW cycle_summary AS\n"
#define CYCLE_SUMMARY_TEMP "CREATE TEMP VIEW cycle_summary AS\n"
#define HISTORY_HEAD "CREATE VIEW history AS\n"
#define HISTORY_TEMP "CREATE TEMP VIEW history AS\n"

/* clang-format off */
static const char cycle_summary[] = CYCLE_SUMMARY_HEAD DB_CYCLE_SUMMARY_STORED_SQL;
static const char cycle_summary_temp_stored[] = CYCLE_SUMMARY_TEMP DB_CYCLE_SUMMARY_STORED_SQL;
/* schema 4 to 20: no figures stored per cycle, computed from the rows */
static const char cycle_summary_temp[] =
	CYCLE_SUMMARY_TEMP DB_CYCLE_SUMMARY_SQL(DB_MEASURE_ROW("i"), DB_FILL_ROW("i"));
/* before schema 4 no row has a phase: every row measured its size */
static const char cycle_summary_temp_v3[] =
	CYCLE_SUMMARY_TEMP DB_CYCLE_SUMMARY_SQL(DB_MEASURE_ROW_V3("i"), DB_FILL_ROW_V3("i"));
/* the drive's figures next to the rate (their columns came with schema
 * 20: an older file keeps the view of its schema, db_migrations.c) */
static const char history[] = HISTORY_HEAD DB_HISTORY_SQL;
static const char history_temp[] = HISTORY_TEMP DB_HISTORY_SQL;
/* clang-format on */

/* A view defined here: its name, current text, and the TEMP view a reader
 * of a file of schema `version` gets (NULL: the stored one stays). */
struct view_def {
	const char *name, *sql;
	const char *(*temp)(int version);
};

static const char *cycle_summary_for(int version)
{
	if (version < 2) /* no cycle_summary before schema 2 */
		return NULL;
	if (version >= DB_CYCLE_STORED_SCHEMA)
		return cycle_summary_temp_stored;
	return version >= 4 ? cycle_summary_temp : cycle_summary_temp_v3;
}

static const char *history_for(int version)
{
	return version >= 20 ? history_temp : NULL;
}

static const struct view_def views[] = {
	{ "cycle_summary", cycle_summary, cycle_summary_for },
	{ "history", history, history_for },
};

/* Whether the stored view `name` has the text `sql`: 1 yes, 0 no (or no
 * such view), negative SQLite code on error. */
static int view_is(struct db *db, const char *name, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(
		db->conn, "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?1", -1,
		&st, NULL);
	int same = 0;

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			const char *have = (const char *)sqlite3_column_text(st, 0);
			same = have && strcmp(have, sql) == 0;
			rc = SQLITE_DONE;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? same : -rc;
}

static int views_error(struct db *db, const char *what, const char *name, char *msg, int rc,
		       char *err, size_t errlen)
{
	db_seterr(err, errlen, "database %s: cannot %s the view %s: %s", db->path, what, name,
		  msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	rc = db_map_rc(rc, sqlite3_system_errno(db->conn));
	return rc ? rc : -EIO;
}

/* Recreates the stored view v when its text is not the current one. */
static int view_update(struct db *db, const struct view_def *v, char *err, size_t errlen)
{
	char *msg = NULL, drop[64];
	int same = view_is(db, v->name, v->sql);
	int rc;

	if (same < 0)
		return views_error(db, "read", v->name, NULL, -same, err, errlen);
	if (same)
		return 0;
	snprintf(drop, sizeof(drop), "DROP VIEW IF EXISTS %s", v->name);
	rc = sqlite3_exec(db->conn, "BEGIN IMMEDIATE", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->conn, drop, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->conn, v->sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->conn, "COMMIT", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		return 0;
	if (!sqlite3_get_autocommit(db->conn))
		sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
	return views_error(db, "update", v->name, msg, rc, err, errlen);
}

int db_views_update(struct db *db, char *err, size_t errlen)
{
	int ret = 0;

	for (size_t k = 0; !ret && k < sizeof(views) / sizeof(views[0]); k++)
		ret = view_update(db, &views[k], err, errlen);
	return ret;
}

/* Defines v's TEMP view for a reader when the stored one is not current. */
static int view_reader(struct db *db, const struct view_def *v, int version, char *err,
		       size_t errlen)
{
	const char *temp = v->temp(version);
	char *msg = NULL;
	int same, rc;

	if (!temp)
		return 0;
	same = view_is(db, v->name, v->sql);
	if (same < 0)
		return views_error(db, "read", v->name, NULL, -same, err, errlen);
	if (same)
		return 0;
	rc = sqlite3_exec(db->conn, temp, NULL, NULL, &msg);
	return rc == SQLITE_OK ? 0 : views_error(db, "define", v->name, msg, rc, err, errlen);
}

int db_views_reader(struct db *db, int version, char *err, size_t errlen)
{
	int ret = 0;

	for (size_t k = 0; !ret && k < sizeof(views) / sizeof(views[0]); k++)
		ret = view_reader(db, &views[k], version, err, errlen);
	return ret;
}
