/* db_views: the views whose definition changed without a schema version
 * (their columns only grew, no stored data changed): a writable open
 * recreates a stored view whose text is not the current one, a reader
 * gets the current one as a TEMP view of its own connection (readers
 * never write the file; a TEMP view hides the stored one of its name). */
#include "db/db_int.h"
#include "db/db_views.h"

#include <errno.h>
#include <string.h>

#define CYCLE_SUMMARY_HEAD "CREATE VIEW cycle_summary AS\n"
#define CYCLE_SUMMARY_TEMP "CREATE TEMP VIEW cycle_summary AS\n"

/* clang-format off */
static const char cycle_summary[] = CYCLE_SUMMARY_HEAD DB_CYCLE_SUMMARY_STORED_SQL;
static const char cycle_summary_temp_stored[] = CYCLE_SUMMARY_TEMP DB_CYCLE_SUMMARY_STORED_SQL;
/* schema 4 to 17: no figures stored per cycle, computed from the rows */
static const char cycle_summary_temp[] =
	CYCLE_SUMMARY_TEMP DB_CYCLE_SUMMARY_SQL(DB_MEASURE_ROW("i"), DB_FILL_ROW("i"));
/* before schema 4 no row has a phase: every row measured its size */
static const char cycle_summary_temp_v3[] =
	CYCLE_SUMMARY_TEMP DB_CYCLE_SUMMARY_SQL(DB_MEASURE_ROW_V3("i"), DB_FILL_ROW_V3("i"));
/* clang-format on */

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

static int views_error(struct db *db, const char *what, char *msg, int rc, char *err, size_t errlen)
{
	db_seterr(err, errlen, "database %s: cannot %s the view cycle_summary: %s", db->path, what,
		  msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	rc = db_map_rc(rc, sqlite3_system_errno(db->conn));
	return rc ? rc : -EIO;
}

int db_views_update(struct db *db, char *err, size_t errlen)
{
	char *msg = NULL;
	int same = view_is(db, "cycle_summary", cycle_summary);
	int rc;

	if (same < 0)
		return views_error(db, "read", NULL, -same, err, errlen);
	if (same)
		return 0;
	rc = sqlite3_exec(db->conn, "BEGIN IMMEDIATE", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->conn, "DROP VIEW IF EXISTS cycle_summary", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->conn, cycle_summary, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->conn, "COMMIT", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		return 0;
	if (!sqlite3_get_autocommit(db->conn))
		sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
	return views_error(db, "update", msg, rc, err, errlen);
}

/* The TEMP cycle_summary for a reader of a database of schema `version`. */
static const char *reader_view(int version)
{
	if (version >= DB_CYCLE_STORED_SCHEMA)
		return cycle_summary_temp_stored;
	return version >= 4 ? cycle_summary_temp : cycle_summary_temp_v3;
}

int db_views_reader(struct db *db, int version, char *err, size_t errlen)
{
	char *msg = NULL;
	int same, rc;

	if (version < 2) /* no cycle_summary before schema 2 */
		return 0;
	same = view_is(db, "cycle_summary", cycle_summary);
	if (same < 0)
		return views_error(db, "read", NULL, -same, err, errlen);
	if (same)
		return 0;
	rc = sqlite3_exec(db->conn, reader_view(version), NULL, NULL, &msg);
	return rc == SQLITE_OK ? 0 : views_error(db, "define", msg, rc, err, errlen);
}
