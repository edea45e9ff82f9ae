/* db_open: opening a history database: creating and migrating a writable
 * one (one script a version, db_migrations.c), checking that a file is
 * wearmon's and whole, that its place takes writes; closing it. SQLite
 * result codes become negative errno in db_conn.c and never leave the
 * module. */
#include "db/db_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsinfo.h"
#include "base/util.h"

/* Runs a one-value query; text results are copied to buf when given.
 * Returns a SQLite result code. */
static int query_value(sqlite3 *conn, const char *sql, int *ival, char *buf, size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(conn, sql, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (ival)
			*ival = sqlite3_column_int(st, 0);
		if (buf)
			snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

static int open_conn(struct db *db, char *err, size_t errlen)
{
	int flags =
		db->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	int rc = sqlite3_open_v2(db->path, &db->conn, flags | SQLITE_OPEN_NOMUTEX, NULL);
	int ret;

	if (rc == SQLITE_OK) {
		sqlite3_extended_result_codes(db->conn, 1);
		db_busy_init(db);
		return 0;
	}
	ret = db_map_rc(rc, db->conn ? sqlite3_system_errno(db->conn) : 0);
	db_seterr(err, errlen, "cannot open database %s: %s (%s)", db->path,
		  db->conn ? sqlite3_errmsg(db->conn) : sqlite3_errstr(rc), strerror(-ret));
	return ret;
}

/* The tables of schema version 1 and those added later, with the version
 * that created each (db_migrations.c): a file of an older version has them all. */
static const struct {
	const char *name;
	int since;
} schema_tables[] = {
	{ "targets", 1 },     { "runs", 1 },     { "cycles", 1 },           { "iterations", 1 },
	{ "samples", 1 },     { "events", 1 },   { "mapped_extents", 3 },   { "wear", 3 },
	{ "health", 3 },      { "progress", 7 }, { "written_extents", 18 }, { "hir_bursts", 22 },
	{ "hir_purges", 26 },
};

/* A SQLite database that is not wearmon's: refused before anything writes
 * to it (journal mode, migrations). Returns -EINVAL. */
static int refuse_foreign(struct db *db, const char *why, char *err, size_t errlen)
{
	db_seterr(err, errlen, "%s is not a wearmon database (%s); choose another database path",
		  db->path, why);
	return -EINVAL;
}

/* The first table that a wearmon database of this version has and the
 * file lacks, or NULL. Sets *rc to a SQLite result code. */
static const char *missing_table(struct db *db, int version, int *rc)
{
	char sql[128];
	int n = 0;

	*rc = SQLITE_OK;
	for (size_t i = 0; i < sizeof(schema_tables) / sizeof(schema_tables[0]); i++) {
		if (schema_tables[i].since > version)
			continue;
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'",
			 schema_tables[i].name);
		*rc = query_value(db->conn, sql, &n, NULL, 0);
		if (*rc != SQLITE_OK || n == 0)
			return *rc == SQLITE_OK ? schema_tables[i].name : NULL;
	}
	return NULL;
}

/* Whether a SQLite file of this user_version is wearmon's. Migration 11 set
 * our application_id: another id is foreign at any version, and so is none
 * (0) from version 11 on. A file of versions 1 to 10 without one must have
 * the tables of its version; one of version 0 must have no tables (a new
 * database). Returns 0, -EINVAL (foreign) or -errno. */
static int check_owner(struct db *db, int version, char *err, size_t errlen)
{
	char why[160];
	const char *lacks = NULL;
	int id = 0, objects = 0;
	int rc = query_value(db->conn, "PRAGMA application_id", &id, NULL, 0);

	if (rc == SQLITE_OK && version == 0)
		rc = query_value(db->conn, "SELECT count(*) FROM sqlite_master", &objects, NULL, 0);
	if (rc == SQLITE_OK && id == 0 && version >= 1 && version < 11)
		lacks = missing_table(db, version, &rc);
	if (rc != SQLITE_OK) {
		db_seterr(err, errlen, "cannot read database %s: %s", db->path,
			  sqlite3_errmsg(db->conn));
		return db_map_rc(rc, sqlite3_system_errno(db->conn));
	}
	if (id != 0 && id != DB_APPLICATION_ID) {
		snprintf(why, sizeof(why), "SQLite application_id %d, wearmon's is %d", id,
			 DB_APPLICATION_ID);
		return refuse_foreign(db, why, err, errlen);
	}
	if (id == 0 && version >= 11) {
		snprintf(why, sizeof(why),
			 "SQLite application_id 0 at schema version %d, where wearmon's is %d",
			 version, DB_APPLICATION_ID);
		return refuse_foreign(db, why, err, errlen);
	}
	if (lacks) {
		snprintf(why, sizeof(why), "schema version %d but no %s table", version, lacks);
		return refuse_foreign(db, why, err, errlen);
	}
	if (version == 0 && (objects > 0 || db->readonly))
		return refuse_foreign(db, objects > 0 ? "tables but no schema version" : "empty",
				      err, errlen);
	return 0;
}

/* The file's length against its pages: not a whole number of pages, or
 * fewer than the header counts while no WAL holds the rest, is a file cut
 * short. Returns NULL or what is wrong (in why). */
static const char *check_length(struct db *db, char *why, size_t len)
{
	/* the WAL SQLite reads: beside the file the path resolves to, which
	 * for a symlink is not beside the link */
	sqlite3_filename main = sqlite3_db_filename(db->conn, "main");
	const char *wal = main ? sqlite3_filename_wal(main) : NULL;
	struct stat st, ws;
	int page = 0, pages = 0;

	if (query_value(db->conn, "PRAGMA page_size", &page, NULL, 0) != SQLITE_OK ||
	    query_value(db->conn, "PRAGMA page_count", &pages, NULL, 0) != SQLITE_OK)
		return sqlite3_errmsg(db->conn);
	if (page <= 0 || !wal || stat(db->path, &st) != 0)
		return NULL;
	if (st.st_size % page)
		snprintf(why, len, "its length %lld is not a multiple of its page size %d",
			 (long long)st.st_size, page);
	else if (st.st_size < (off_t)pages * page && (stat(wal, &ws) != 0 || ws.st_size <= 32))
		snprintf(why, len, "%lld bytes where its header counts %d pages of %d",
			 (long long)st.st_size, pages, page);
	else
		return NULL;
	return why;
}

/* Reads the first and last row of table name (a rowid table) or its first
 * (WITHOUT ROWID): the root page and the b-tree's two edges, a few pages.
 * Returns a SQLite result code. */
static int touch_table(sqlite3 *conn, const char *name, int rowid)
{
	static const char *const fmt[] = { "SELECT 1 FROM \"%w\" LIMIT 1",
					   "SELECT rowid FROM \"%w\" ORDER BY rowid LIMIT 1",
					   "SELECT rowid FROM \"%w\" ORDER BY rowid DESC LIMIT 1" };
	int rc = SQLITE_OK;

	for (int i = rowid ? 1 : 0; rc == SQLITE_OK && i < (rowid ? 3 : 1); i++) {
		char *sql = sqlite3_mprintf(fmt[i], name);
		rc = sql ? query_value(conn, sql, NULL, NULL, 0) : SQLITE_NOMEM;
		sqlite3_free(sql);
	}
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The first table whose edges cannot be read (why says how), or NULL. */
static const char *check_tables(struct db *db, char *why, size_t len)
{
	static const char sql[] = "SELECT name, wr FROM pragma_table_list"
				  " WHERE schema = 'main' AND type = 'table' ORDER BY name";
	sqlite3_stmt *st = NULL;
	const char *bad = NULL;
	int rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);

	while (rc == SQLITE_OK && !bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		rc = touch_table(db->conn, name, !sqlite3_column_int(st, 1));
		if (rc != SQLITE_OK) {
			snprintf(why, len, "table %s: %s", name, sqlite3_errmsg(db->conn));
			bad = why;
		}
	}
	if (!bad && rc != SQLITE_DONE) {
		snprintf(why, len, "its tables: %s", sqlite3_errmsg(db->conn));
		bad = why;
	}
	sqlite3_finalize(st);
	return bad;
}

/* A cheap look at start instead of reading every page (which would take
 * minutes at a year of history): the file's length against its header,
 * and the root and edge pages of every table. The whole file is checked
 * later, in the background (daemon/integrity.c) or by `wearmon check`.
 * Returns 0 or -EINVAL. */
static int check_pages(struct db *db, char *err, size_t errlen)
{
	char why[600];
	const char *bad = check_length(db, why, sizeof(why));

	if (!bad)
		bad = check_tables(db, why, sizeof(why));
	if (!bad)
		return 0;
	db_seterr(err, errlen,
		  "database %s is damaged (%s); move it aside or restore a copy, then start"
		  " again",
		  db->path, bad);
	return -EINVAL;
}

/* SQLite would block opening a FIFO and misread a device: only regular
 * files (or nothing yet, for a writer) are databases. Returns 0 or -errno. */
static int check_file_type(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return 0;
	db_seterr(err, errlen, "database %s is not a regular file (%s)", path,
		  S_ISDIR(st.st_mode)    ? "a directory"
		  : S_ISFIFO(st.st_mode) ? "a FIFO"
		  : S_ISSOCK(st.st_mode) ? "a socket"
		  : S_ISBLK(st.st_mode)  ? "a block device"
		  : S_ISCHR(st.st_mode)  ? "a character device"
					 : "not a file");
	return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
}

/* Reads user_version and refuses what this build cannot use: not a SQLite
 * file, a foreign SQLite database, or a newer schema. Only reads: runs
 * before setup_writer changes the journal mode. Returns 0 or -errno. */
static int check_schema(struct db *db, int *version, char *err, size_t errlen)
{
	int rc = query_value(db->conn, "PRAGMA user_version", version, NULL, 0);
	int ret;

	if ((rc & 0xff) == SQLITE_NOTADB) {
		db_seterr(err, errlen, "%s is not a SQLite database", db->path);
		return -EINVAL;
	}
	if (rc != SQLITE_OK) {
		db_seterr(err, errlen, "cannot read database %s: %s", db->path,
			  sqlite3_errmsg(db->conn));
		return db_map_rc(rc, sqlite3_system_errno(db->conn));
	}
	ret = check_owner(db, *version, err, errlen);
	if (ret)
		return ret;
	if (*version > DB_SCHEMA_VERSION) {
		db_seterr(err, errlen,
			  "database %s has schema version %d, newer than "
			  "version %d that this wearmon knows; use a newer wearmon",
			  db->path, *version, DB_SCHEMA_VERSION);
		return -ENOTSUP;
	}
	return 0;
}

static db_slow_fn slow_hook;

void db_set_slow_hook(db_slow_fn fn)
{
	slow_hook = fn;
}

/* What a migration of the file may take at most: a minute, and a second
 * for every SLOW_BYTES_PER_S of the file (a generous bound: rewriting
 * is done well above that rate on any disk). */
#define SLOW_BYTES_PER_S (8ULL << 20)

static void announce_migration(struct db *db, int from)
{
	char what[PATH_MAX + 96];
	struct stat st;
	uint64_t bytes = stat(db->path, &st) == 0 ? (uint64_t)st.st_size : 0;

	if (!slow_hook || from < 1)
		return;
	snprintf(what, sizeof(what), "updating database %s from schema version %d to %d", db->path,
		 from, DB_SCHEMA_VERSION);
	slow_hook(what, (60ULL + bytes / SLOW_BYTES_PER_S) * 1000000ULL);
}

/* Migration 16 kept schema 15's samples table as samples_v15, for
 * db_samples_migrate to move in batches; one without rows (a new
 * database) is done with at once. Returns a SQLite result code. */
static int samples_moved_if_empty(struct db *db)
{
	int empty = 0;
	int rc = query_value(db->conn, "SELECT NOT EXISTS (SELECT 1 FROM samples_v15)", &empty,
			     NULL, 0);

	if (rc == SQLITE_OK && empty)
		rc = sqlite3_exec(db->conn, db_schema_samples_done, NULL, NULL, NULL);
	return rc;
}

/* Brings the schema to DB_SCHEMA_VERSION in one transaction. The version is
 * read again under the write lock: another process may have migrated. */
static int migrate(struct db *db, char *err, size_t errlen)
{
	char sql[64];
	int v = 0, rc;

	rc = sqlite3_exec(db->conn, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = query_value(db->conn, "PRAGMA user_version", &v, NULL, 0);
	if (rc == SQLITE_OK && v < DB_SCHEMA_VERSION)
		announce_migration(db, v);
	for (int next = v + 1; rc == SQLITE_OK && next <= DB_SCHEMA_VERSION; next++)
		rc = sqlite3_exec(db->conn, db_migrations[next], NULL, NULL, NULL);
	if (rc == SQLITE_OK && v < 16)
		rc = samples_moved_if_empty(db);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", DB_SCHEMA_VERSION);
	if (rc == SQLITE_OK && v < DB_SCHEMA_VERSION)
		rc = sqlite3_exec(db->conn, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->conn, "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return 0;
	db_seterr(err, errlen,
		  "database %s: schema update from version %d to %d "
		  "failed: %s",
		  db->path, v, DB_SCHEMA_VERSION, sqlite3_errmsg(db->conn));
	if (!sqlite3_get_autocommit(db->conn))
		sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
	return db_map_rc(rc, sqlite3_system_errno(db->conn));
}

/* WAL lets the sqlite3 CLI read while we write. The -wal and -shm files are
 * kept after close (PERSIST_WAL, truncated to journal_size_limit) so that a
 * reader unable to create files in the directory (sqlite3 -readonly as a
 * user, database owned by root) can still open it while the daemon is down.
 * synchronous=FULL: in WAL mode NORMAL never corrupts the file but may lose
 * the last transactions on power loss, since the WAL is only synced at
 * checkpoints; FULL syncs the WAL at every commit, so a committed iteration
 * survives a power cut. It costs one fsync per transaction, about one per
 * iteration (minutes apart). */
static int setup_writer(struct db *db, int version, char *err, size_t errlen)
{
	char mode[16] = "";
	int on = 1, ret;
	int rc = query_value(db->conn, "PRAGMA journal_mode = WAL", NULL, mode, sizeof(mode));

	if (rc == SQLITE_OK && strcmp(mode, "wal") != 0) {
		db_seterr(err, errlen,
			  "database %s: cannot use WAL journal mode "
			  "(got '%s'); is it on a network filesystem?",
			  db->path, mode);
		return -EIO;
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_file_control(db->conn, "main", SQLITE_FCNTL_PERSIST_WAL, &on);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->conn,
				  "PRAGMA synchronous = FULL;"
				  "PRAGMA journal_size_limit = 16777216;"
				  "PRAGMA foreign_keys = ON",
				  NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		db_seterr(err, errlen, "database %s: %s", db->path, sqlite3_errmsg(db->conn));
		return db_map_rc(rc, sqlite3_system_errno(db->conn));
	}
	ret = version < DB_SCHEMA_VERSION ? migrate(db, err, errlen) : 0;
	if (!ret)
		ret = db_views_update(db, err, errlen);
	return ret ? ret : db_index_create(db, err, errlen);
}

int db_open(const char *path, int readonly, struct db **out, char *err, size_t errlen)
{
	struct db *db;
	int version = 0, ret;

	db_seterr(err, errlen, "%s", "");
	*out = NULL;
	db = calloc(1, sizeof(*db));
	if (!db || !(db->path = strdup(path))) {
		free(db);
		db_seterr(err, errlen, "database %s: out of memory", path);
		return -ENOMEM;
	}
	pthread_mutex_init(&db->lock, NULL);
	db->readonly = readonly;
	db->watch_fd = -1;
	ret = check_file_type(path, err, errlen);
	if (!ret)
		ret = open_conn(db, err, errlen);
	if (ret)
		goto out_err;
	ret = check_schema(db, &version, err, errlen);
	if (ret)
		goto out_err;
	if (!readonly && version > 0)
		ret = check_pages(db, err, errlen);
	if (!ret && !readonly)
		ret = setup_writer(db, version, err, errlen);
	if (!ret && readonly)
		ret = db_schema_reader_views(db, version, err, errlen);
	if (!ret && readonly)
		ret = db_views_reader(db, version, err, errlen);
	if (!ret && !readonly)
		ret = db_watch_open(db, err, errlen);
	if (ret)
		goto out_err;
	*out = db;
	return 0;
out_err:
	db_close(db);
	return ret;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(db->st[i]);
	/* a writer leaves its log empty: the file then holds the whole history
	 * whatever name a reader opens it by (a log lives beside the name it
	 * was written through); the last connection to close removes it */
	if (!db->readonly)
		sqlite3_exec(db->conn, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	sqlite3_close(db->conn);
	/* after SQLite's own close: closing any descriptor of the file drops
	 * the process's POSIX locks on it, SQLite's included */
	if (db->watch_fd >= 0)
		close(db->watch_fd);
	pthread_mutex_destroy(&db->lock);
	free(db->path);
	free(db);
}

int db_check_path(const char *path, char *err, size_t errlen)
{
	char *copy = strdup(path);
	const char *dir;
	struct stat st;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	if (stat(dir, &st) != 0) {
		ret = errno == ENOENT ? -ENOENT : -EACCES;
		db_seterr(err, errlen, "database directory %s: %s", dir, strerror(errno));
	} else if (!S_ISDIR(st.st_mode)) {
		ret = -ENOTDIR;
		db_seterr(err, errlen, "database directory %s is not a directory", dir);
	} else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
		ret = errno == EROFS ? -EROFS : -EACCES;
		db_seterr(err, errlen, "database directory %s is not writable: %s", dir,
			  strerror(errno));
	} else if ((ret = check_file_type(path, err, errlen))) {
		/* check_file_type said what it is */
	} else if (faccessat(AT_FDCWD, path, F_OK, 0) == 0 &&
		   faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS) != 0) {
		ret = errno == EROFS ? -EROFS : -EACCES;
		db_seterr(err, errlen, "database %s is not writable: %s", path, strerror(errno));
	}
	free(copy);
	return ret;
}

int db_check_room(const char *path, char *err, size_t errlen)
{
	char fs[PATH_MAX + 400], need[32];
	struct fsinfo fi;
	int ret = fsinfo_of(path, &fi);

	if (ret) /* no directory: db_check_path says so */
		return 0;
	fsinfo_text(&fi, fs, sizeof(fs));
	if (fi.readonly) {
		db_seterr(err, errlen,
			  "database %s cannot be written: its %s; wearmond exits 1 and is "
			  "started again (systemd: RestartSec) until it can write",
			  path, fs);
		return -EROFS;
	}
	if (fi.free < DB_FREE_MIN) {
		db_seterr(err, errlen,
			  "database %s cannot be written: its %s, where a start needs %s; "
			  "wearmond exits 1 and is started again (systemd: RestartSec) once "
			  "there is room",
			  path, fs, util_fmt_bytes(DB_FREE_MIN, need, sizeof(need)));
		return -ENOSPC;
	}
	return 0;
}

int db_transient(int ret)
{
	return ret == -ENOSPC || ret == -EDQUOT || ret == -EROFS;
}
