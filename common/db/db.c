/* db: the SQLite history of wearmon (opening and migrating, every insert, the
 * resume query, the progress row) behind one connection serialised by a
 * mutex: the top of the db module, which calls its other files and which
 * none of them calls. SQLite result codes become negative errno in
 * db_conn.c and never leave the module. */
#include "db/db_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/fsinfo.h"
#include "base/log.h"
#include "base/stats.h"
#include "base/util.h"
#include "config/cfg_diff.h"

static const char *const status_names[DB_STATUS__COUNT] = {
	[DB_RUNNING] = "running",
	[DB_DONE] = "done",
	[DB_INTERRUPTED] = "interrupted",
	[DB_FAILED] = "failed",
};

const char *db_status_name(enum db_status s)
{
	return (unsigned)s < DB_STATUS__COUNT ? status_names[s] : "?";
}

static const char *const phase_names[DB_PHASE__COUNT] = {
	[DB_PHASE_UNKNOWN] = NULL,
	[DB_PHASE_FILL] = "fill",
	[DB_PHASE_MEASURE] = "measure",
	[DB_PHASE_VERIFY] = "verify",
};

const char *db_phase_name(enum db_phase p)
{
	return (unsigned)p < DB_PHASE__COUNT ? phase_names[p] : NULL;
}

static int is_final_status(enum db_status s)
{
	switch (s) {
	case DB_DONE:
	case DB_INTERRUPTED:
	case DB_FAILED: return 1;
	case DB_RUNNING:
	case DB_STATUS__COUNT: break;
	}
	return 0;
}

/* ---- opening, checking and migrating ---------------------------------- */

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
 * that created each (db_schema.c): a file of an older version has them all. */
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
#define PROGRESS_BUSY_MS 100 /* db_progress: a lock met is skipped */

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

/* ---- runs and targets --------------------------------------------------- */

int db_run_begin(struct db *db, const char *config_path, int64_t *run_id)
{
	char host[256] = "";
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	db_bind_start(db, ST_RUN_BEGIN, &b);
	db_bind_i64(&b, getpid());
	db_bind_text(&b, WEARMON_VERSION);
	db_bind_text(&b, config_path);
	db_bind_opt_text(&b, host);
	ret = db_bind_run(&b, "record run start");
	if (ret == 0)
		*run_id = sqlite3_last_insert_rowid(db->conn);
	db_leave(db);
	return ret;
}

int db_run_config(struct db *db, int64_t run_id, const char *config_text)
{
	char kernel[3 * sizeof(((struct utsname *)0)->release) + 8] = "";
	struct utsname u;
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	if (uname(&u) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	db_bind_start(db, ST_RUN_CONFIG, &b);
	db_bind_opt_text(&b, config_text);
	db_bind_opt_text(&b, kernel);
	db_bind_i64(&b, run_id);
	ret = db_bind_run(&b, "record run configuration");
	if (ret == 0)
		ret = db_changed(db, run_id, "record run configuration");
	db_leave(db);
	return ret;
}

int db_run_end(struct db *db, int64_t run_id, int exit_status, const char *reason)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_RUN_END, &b);
	db_bind_i64(&b, exit_status);
	db_bind_text(&b, reason);
	db_bind_i64(&b, run_id);
	ret = db_bind_run(&b, "record run end");
	if (ret == 0)
		ret = db_changed(db, run_id, "record run end");
	db_leave(db);
	return ret;
}

/* Identity columns describe the device as last seen, so NULLs overwrite. */
int db_target_upsert(struct db *db, const struct db_target_info *t, int64_t *target_id)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_TARGET_UPSERT, &b);
	db_bind_text(&b, t->name);
	db_bind_text(&b, t->device);
	db_bind_text(&b, tgt_kind_name(t->kind));
	db_bind_u64(&b, t->capacity_bytes);
	db_bind_i64(&b, t->logical_block_size);
	db_bind_text(&b, t->serial);
	db_bind_text(&b, t->model);
	db_bind_text(&b, t->firmware);
	db_bind_text(&b, t->backing_file);
	if (t->backing_ino) {
		db_bind_u64(&b, t->backing_dev);
		db_bind_u64(&b, t->backing_ino);
	} else {
		db_bind_null(&b);
		db_bind_null(&b);
	}
	ret = db_bind_row(&b, "store target");
	if (ret == 1) {
		*target_id = sqlite3_column_int64(b.st, 0);
		/* step to the end so the statement's own commit happens here */
		ret = db_bind_run(&b, "store target");
	} else if (ret == 0) {
		ret = -EIO;
	}
	db_leave(db);
	return ret;
}

/* ---- resume ------------------------------------------------------------- */

/* Runs a one-value query on target_id into *v. Returns 0 or -errno. */
static int count_of(struct db *db, enum stmt_id id, int64_t target_id, long *v, const char *what)
{
	struct db_bind b;
	int ret;

	db_bind_start(db, id, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_row(&b, what);
	if (ret <= 0)
		return ret < 0 ? ret : -EIO;
	*v = (long)sqlite3_column_int64(b.st, 0);
	return db_bind_finish(&b, SQLITE_OK, NULL);
}

static int mark_interrupted(struct db *db, int64_t target_id, long *marked, int peek)
{
	struct db_bind b;
	int ret;

	if (peek)
		return count_of(db, ST_RUNNING_COUNT, target_id, marked,
				"count running iterations");
	db_bind_start(db, ST_WRITTEN_RECOVER, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_run(&b, "recover what interrupted fills wrote");
	if (ret)
		return ret;
	db_bind_start(db, ST_MARK_INTERRUPTED, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_run(&b, "mark interrupted iterations");
	*marked = ret == 0 ? sqlite3_changes(db->conn) : 0;
	return ret;
}

/* The campaign's first cycle and done cycles; its stored key (NULL: none
 * yet, malloc'd) in *key. */
static int campaign_read(struct db *db, int64_t target_id, struct db_resume *r, char **key)
{
	struct db_bind b;
	int ret;

	db_bind_start(db, ST_CAMPAIGN, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_row(&b, "read campaign");
	if (ret == 0) {
		log_msg(LOG_ERR, "database %s: no target with id %lld", db->path,
			(long long)target_id);
		return -ENOENT;
	}
	if (ret < 0)
		return ret;
	r->campaign_first_cycle = sqlite3_column_int64(b.st, 0);
	r->campaign_cycles_done = sqlite3_column_int64(b.st, 1);
	const unsigned char *k = sqlite3_column_text(b.st, 2);
	*key = k ? strdup((const char *)k) : NULL;
	return db_bind_finish(&b, k && !*key ? SQLITE_NOMEM : SQLITE_OK, "read campaign key");
}

/* Fills next_size_index and next_iteration of the cycle r->cycle_id. */
static int cycle_progress(struct db *db, struct db_resume *r)
{
	struct db_bind b;
	int ret;

	db_bind_start(db, ST_CYCLE_PROGRESS, &b);
	db_bind_i64(&b, r->cycle_id);
	ret = db_bind_row(&b, "read cycle progress");
	if (ret <= 0)
		return ret < 0 ? ret : -EIO;
	r->next_size_index = sqlite3_column_int(b.st, 0);
	r->next_iteration = sqlite3_column_int64(b.st, 1);
	return db_bind_finish(&b, SQLITE_OK, NULL);
}

static int run_on_cycle(struct db *db, enum stmt_id id, int64_t cycle_id, const char *what)
{
	struct db_bind b;

	db_bind_start(db, id, &b);
	db_bind_i64(&b, cycle_id);
	return db_bind_run(&b, what);
}

/* How a cycle's recorded action ended (ST_LAST_CYCLE's last column). */
enum action_end { END_OTHER, END_INTERRUPTED, END_EFFECTIVE };

/* An unfinished cycle whose action has a recorded start is never resumed
 * unless a stop recorded it 'interrupted' (then it runs again): without an
 * end a crash cut the action short, and it is closed as 'interrupted' and
 * the cycle counted done (the action is not run again); with another end
 * only the cycle's own end was lost, and the cycle is closed done (ok,
 * skipped) or failed. Returns 1 when the cycle was closed, 0 when it
 * resumes, or -errno. */
static int close_after_action(struct db *db, struct db_resume *r, int started, int ended,
			      enum action_end how, int peek)
{
	struct db_bind b;
	int ret;

	if (!started || (ended && how == END_INTERRUPTED))
		return 0;
	if (!ended) {
		ret = peek ? 0
			   : run_on_cycle(db, ST_ACTION_CRASHED, r->cycle_id,
					  "close a crashed action");
		r->action_crashed = r->cycle_number;
		return ret ? ret : 1;
	}
	r->action_closed = r->cycle_number;
	r->action_closed_done = how == END_EFFECTIVE;
	if (peek)
		return 1;
	db_bind_start(db, ST_ACTION_CLOSE, &b);
	db_bind_text(&b, db_status_name(how == END_EFFECTIVE ? DB_DONE : DB_FAILED));
	db_bind_i64(&b, r->cycle_id);
	ret = db_bind_run(&b, "close a cycle after its action");
	return ret ? ret : 1;
}

/* Decides resume or a new cycle from the target's highest-numbered cycle. */
static int last_cycle(struct db *db, int64_t target_id, struct db_resume *r, int peek)
{
	struct db_bind b;
	int ret, unfinished, started, ended;
	enum action_end how;

	r->cycle_number = 1;
	r->next_iteration = 1;
	db_bind_start(db, ST_LAST_CYCLE, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_row(&b, "find last cycle");
	if (ret <= 0)
		return ret;
	r->cycle_id = sqlite3_column_int64(b.st, 0);
	r->cycle_number = sqlite3_column_int64(b.st, 1);
	unfinished = sqlite3_column_int(b.st, 2);
	started = sqlite3_column_int(b.st, 3);
	ended = sqlite3_column_int(b.st, 4);
	how = (enum action_end)sqlite3_column_int(b.st, 5);
	db_bind_finish(&b, SQLITE_OK, NULL);
	if (unfinished) {
		ret = close_after_action(db, r, started, ended, how, peek);
		if (ret < 0)
			return ret;
		unfinished = !ret;
	}
	if (!unfinished) {
		r->cycle_id = 0;
		r->cycle_number++;
		return 0;
	}
	r->resume = 1;
	ret = peek ? 0 : run_on_cycle(db, ST_CYCLE_REOPEN, r->cycle_id, "reopen cycle");
	return ret ? ret : cycle_progress(db, r);
}
/* Every unfinished cycle of the target fails and a new campaign begins
 * with the next cycle number, under key. */
static int campaign_start(struct db *db, int64_t target_id, const char *key, struct db_resume *r,
			  int peek)
{
	struct db_bind b;
	int ret = 0;

	if (r->resume) {
		if (!peek) {
			db_bind_start(db, ST_ADOPT_FAIL_CYCLES, &b);
			db_bind_i64(&b, target_id);
			ret = db_bind_run(&b, "end the old campaign's cycle");
		}
		r->resume = 0;
		r->cycle_id = 0;
		r->cycle_number++;
		r->next_size_index = 0;
		r->next_iteration = 1;
	}
	if (ret)
		return ret;
	r->campaign_first_cycle = r->cycle_number;
	r->campaign_cycles_done = 0;
	r->campaign_new = 1;
	if (peek)
		return 0;
	db_bind_start(db, ST_CAMPAIGN_NEW, &b);
	db_bind_i64(&b, r->cycle_number);
	db_bind_text(&b, key);
	db_bind_i64(&b, target_id);
	return db_bind_run(&b, "start campaign");
}

static int target_stmt(struct db *db, enum stmt_id id, int64_t target_id, const char *text,
		       const char *what)
{
	struct db_bind b;

	db_bind_start(db, id, &b);
	if (text)
		db_bind_text(&b, text);
	db_bind_i64(&b, target_id);
	return db_bind_run(&b, what);
}

/* Whether the campaign goes on, is complete, or a new one begins. */
static int campaign_decide(struct db *db, int64_t target_id, const struct db_campaign_req *q,
			   const char *stored, struct db_resume *r)
{
	int changed = stored && q->key &&
		      cfg_campaign_diff(stored, q->key, r->changed, sizeof(r->changed));

	if (q->new_campaign || changed)
		return campaign_start(db, target_id, q->key, r, q->peek);
	if (!stored && q->key && !q->peek) {
		int ret = target_stmt(db, ST_CAMPAIGN_KEY, target_id, q->key, "store campaign key");
		if (ret)
			return ret;
	}
	if (r->resume || q->cycles <= 0 || r->campaign_cycles_done < q->cycles)
		return 0;
	r->campaign_complete = 1;
	return q->peek ? 0
		       : target_stmt(db, ST_CAMPAIGN_DONE, target_id, NULL,
				     "mark campaign complete");
}

/* In one transaction:
 * 1. iterations of this target still 'running' were cut short by a crash or
 *    kill: they become 'interrupted' with an error saying so (their ended_at
 *    stays NULL: the time is unknown); one cut short in its fill keeps, in
 *    written_extents, the prefix the last progress row counted. Cycles keep their status: a 'running'
 *    cycle whose run has ended is simply resumable.
 * 2. When the highest-numbered cycle is 'running' or 'interrupted', it is
 *    resumed (status set back to 'running'): the next size is 1 + the highest
 *    size_index measured 'done' in it (0 if none), the next iteration number
 *    1 + its highest iteration number (1 if none); unless its action was
 *    recorded as started (close_after_action).
 * 3. Otherwise a new cycle follows: number = highest + 1 (1 if none).
 * 4. Campaign (campaign_decide): a new one begins when asked or when a
 *    campaign key changed; else one with req->cycles > 0 done cycles is
 *    complete and stays so. */
/* With peek nothing was written, so the cycle a start would close as done
 * is not among the done cycles counted yet. */
static void peek_count_closed(struct db_resume *r)
{
	long closed = r->action_crashed       ? r->action_crashed
		      : r->action_closed_done ? r->action_closed
					      : 0;
	if (closed && closed >= r->campaign_first_cycle)
		r->campaign_cycles_done++;
}

int db_resume_point(struct db *db, int64_t target_id, const struct db_campaign_req *req,
		    struct db_resume *out)
{
	char *stored = NULL;
	int peek = req->peek, ret = peek ? (db ? 0 : -EINVAL) : db_enter(db);

	if (ret)
		return ret;
	if (peek) /* a read-only connection, which db_enter refuses */
		pthread_mutex_lock(&db->lock);
	memset(out, 0, sizeof(*out));
	ret = peek ? 0 : db_tx_begin(db);
	if (ret)
		goto out;
	ret = mark_interrupted(db, target_id, &out->interrupted_marked, peek);
	if (ret == 0)
		ret = last_cycle(db, target_id, out, peek);
	if (ret == 0)
		ret = campaign_read(db, target_id, out, &stored);
	if (ret == 0 && peek)
		peek_count_closed(out);
	if (ret == 0)
		ret = campaign_decide(db, target_id, req, stored, out);
	if (!peek)
		ret = db_tx_end(db, ret);
out:
	free(stored);
	db_leave(db);
	return ret;
}

int db_target_id(struct db *db, const char *name, int64_t *id)
{
	struct db_bind b;
	int ret;

	if (!db)
		return -EINVAL;
	pthread_mutex_lock(&db->lock);
	db_bind_start(db, ST_TARGET_ID, &b);
	db_bind_text(&b, name);
	ret = db_bind_row(&b, "find target");
	if (ret > 0) {
		*id = sqlite3_column_int64(b.st, 0);
		ret = db_bind_finish(&b, SQLITE_OK, NULL);
	} else if (ret == 0) {
		ret = -ENOENT;
	}
	db_leave(db);
	return ret;
}

int db_campaign_key(struct db *db, int64_t target_id, const char *key)
{
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = target_stmt(db, ST_CAMPAIGN_KEY, target_id, key, "store campaign key");
	if (ret == 0)
		ret = db_changed(db, target_id, "store campaign key");
	db_leave(db);
	return ret;
}

int db_campaign_done(struct db *db, int64_t target_id)
{
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = target_stmt(db, ST_CAMPAIGN_DONE, target_id, NULL, "mark campaign complete");
	if (ret == 0)
		ret = db_changed(db, target_id, "mark campaign complete");
	db_leave(db);
	return ret;
}

/* ---- cycles ------------------------------------------------------------- */

int db_cycle_begin(struct db *db, int64_t target_id, int64_t run_id, long number, int64_t *cycle_id)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_CYCLE_BEGIN, &b);
	db_bind_i64(&b, target_id);
	db_bind_i64(&b, run_id);
	db_bind_i64(&b, number);
	ret = db_bind_run(&b, "start cycle");
	if (ret == 0)
		*cycle_id = sqlite3_last_insert_rowid(db->conn);
	db_leave(db);
	return ret;
}

int db_cycle_plan(struct db *db, int64_t cycle_id, int nsizes, long cycles)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_CYCLE_PLAN, &b);
	db_bind_i64(&b, nsizes);
	db_bind_i64(&b, cycles);
	db_bind_i64(&b, cycle_id);
	ret = db_bind_run(&b, "record the cycle's plan");
	db_leave(db);
	return ret;
}

int db_action_start(struct db *db, int64_t cycle_id, const struct db_action *a)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_ACTION_START, &b);
	db_bind_text(&b, cfg_action_name(a->kind));
	db_bind_opt_text(&b, a->started_at);
	db_bind_i64(&b, cycle_id);
	ret = db_bind_run(&b, "record the action's start");
	if (ret == 0)
		ret = db_changed(db, cycle_id, "record the action's start");
	db_leave(db);
	return ret;
}

int db_action_end(struct db *db, int64_t cycle_id, const struct db_action *a,
		  const struct db_wear_state *wear)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = db_tx_begin(db);
	if (ret)
		goto out;
	db_bind_start(db, ST_ACTION_END, &b);
	db_bind_dbl(&b, a->seconds);
	db_bind_u64(&b, a->bytes);
	db_bind_text(&b, act_outcome_name(a->outcome));
	db_bind_text(&b, a->error);
	db_bind_i64(&b, cycle_id);
	ret = db_bind_run(&b, "record the action's end");
	if (ret == 0)
		ret = db_changed(db, cycle_id, "record the action's end");
	if (ret == 0 && wear)
		ret = db_wear_put_state(db, wear);
	ret = db_tx_end(db, ret);
out:
	db_leave(db);
	return ret;
}

int db_cycle_end(struct db *db, int64_t cycle_id, enum db_status status)
{
	struct db_bind b;
	int ret;

	if (!is_final_status(status))
		return -EINVAL;
	ret = db_enter(db);
	if (ret)
		return ret;
	db_bind_start(db, ST_CYCLE_END, &b);
	db_bind_text(&b, db_status_name(status));
	db_bind_i64(&b, cycle_id);
	ret = db_bind_run(&b, "end cycle");
	if (ret == 0)
		ret = db_changed(db, cycle_id, "end cycle");
	db_leave(db);
	return ret;
}

/* ---- iterations, samples, events --------------------------------------- */

int db_iteration_begin(struct db *db, const struct db_iteration *it, int64_t *id)
{
	char why[512];
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = db_file_check(db, why, sizeof(why));
	if (ret) {
		log_msg(LOG_CRIT, "%s", why);
		db_leave(db);
		return ret;
	}
	db_bind_start(db, ST_IT_BEGIN, &b);
	db_bind_i64(&b, it->cycle_id);
	db_bind_i64(&b, it->run_id);
	db_bind_i64(&b, it->target_id);
	db_bind_i64(&b, it->number);
	db_bind_i64(&b, it->size_index);
	db_bind_u64(&b, it->size_bytes);
	db_bind_u64(&b, it->region_offset);
	db_bind_text(&b, it->workload);
	db_bind_i64(&b, it->block_size);
	db_bind_i64(&b, it->queue_depth);
	db_bind_i64(&b, it->compressibility);
	db_bind_u64(&b, it->amount_bytes);
	db_bind_opt_text(&b, it->started_at);
	db_bind_text(&b, db_phase_name(it->phase));
	if (it->repeat_index > 0)
		db_bind_i64(&b, it->repeat_index);
	else
		db_bind_null(&b);
	db_bind_i64(&b, it->more_rows ? 1 : 0);
	db_bind_text(&b, it->block_sizes);
	db_bind_fig(&b, it->read_percent);
	db_bind_fig(&b, it->random_percent);
	db_bind_text(&b, cfg_verify_name(it->verify));
	if (it->round_index > 0)
		db_bind_i64(&b, it->round_index);
	else
		db_bind_null(&b);
	if (it->jobs > 0)
		db_bind_i64(&b, it->jobs);
	else
		db_bind_null(&b);
	db_bind_i64(&b, it->dedupe_percent);
	db_bind_text(&b, it->baseline);
	db_bind_id(&b, it->baseline_iteration_id);
	ret = db_bind_run(&b, "start iteration");
	if (ret == 0)
		*id = sqlite3_last_insert_rowid(db->conn);
	db_leave(db);
	return ret;
}

/* The verdict of steady state: on the last round of a phase only. */
static void steady_update(struct db_bind *b, const struct db_iteration *it)
{
	if (!it->steady_summary) {
		for (int i = 0; i < 7; i++)
			db_bind_null(b);
		return;
	}
	db_bind_i64(b, it->steady_reached ? 1 : 0);
	if (it->steady_round > 0)
		db_bind_i64(b, it->steady_round);
	else
		db_bind_null(b);
	db_bind_dbl(b, it->steady_mean_mibps);
	db_bind_dbl(b, it->steady_range_mibps);
	db_bind_dbl(b, it->steady_range_pct);
	db_bind_dbl(b, it->steady_excursion_mibps);
	db_bind_dbl(b, it->steady_excursion_pct);
}

/* The I/O counts of the row, when the engine counted them. */
static int iteration_io(struct db *db, int64_t id, const struct db_iteration *it)
{
	struct db_bind b;

	if (!it->io_counted)
		return 0;
	db_bind_start(db, ST_IT_IO, &b);
	db_bind_u64(&b, it->reads);
	db_bind_u64(&b, it->writes);
	db_bind_u64(&b, it->random_ios);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store iteration I/O counts");
}

/* The host's stall, when it had one (else the column stays NULL). */
static int iteration_stall(struct db *db, int64_t id, const struct db_iteration *it)
{
	struct db_bind b;

	if (!(it->host_stall_seconds > 0))
		return 0;
	db_bind_start(db, ST_IT_STALL, &b);
	db_bind_dbl(&b, it->host_stall_seconds);
	db_bind_i64(&b, it->lat_host_stall ? 1 : 0);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store the host stall");
}

/* The queue kept (schema 17), when the engine measured it. */
static int iteration_depth(struct db *db, int64_t id, const struct db_iteration *it)
{
	struct db_bind b;

	if (!(it->mean_depth > 0))
		return 0;
	db_bind_start(db, ST_IT_DEPTH, &b);
	db_bind_dbl(&b, it->mean_depth);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store the mean queue depth");
}

/* One range the iteration wrote (written_extents). */
static int written_insert(struct db *db, int64_t id, const uint64_t r[2])
{
	struct db_bind b;

	db_bind_start(db, ST_WRITTEN_INSERT, &b);
	db_bind_i64(&b, id);
	db_bind_u64(&b, r[0]);
	db_bind_u64(&b, r[1]);
	return db_bind_run(&b, "store a written extent");
}

/* The drive's own evidence (schema 20), when it had any. */
static int iteration_device(struct db *db, int64_t id, const struct db_iteration *it)
{
	const struct db_device_evidence *d = &it->device;
	struct db_bind b;
	int any = d->wa >= 0;

	for (int f = 0; f < DB_DEV__COUNT; f++)
		any |= d->has[f];
	if (!any)
		return 0;
	db_bind_start(db, ST_IT_DEVICE, &b);
	for (int f = 0; f < DB_DEV__COUNT; f++)
		if (d->has[f])
			db_bind_i64(&b, d->val[f]);
		else
			db_bind_null(&b);
	if (d->wa >= 0)
		db_bind_dbl(&b, d->wa);
	else
		db_bind_null(&b);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store the drive's evidence");
}

/* A PTS cell's place and figures (nothing for any other row). */
static int iteration_pts(struct db *db, int64_t id, const struct db_iteration *it)
{
	const struct db_pts *p = it->pts;
	struct db_bind b;

	if (!p)
		return 0;
	db_bind_start(db, ST_IT_PTS, &b);
	db_bind_text(&b, p->test);
	db_bind_text(&b, p->variant);
	db_bind_i64(&b, p->round);
	db_bind_i64(&b, p->cell);
	db_bind_text(&b, p->part);
	db_bind_dbl(&b, p->active_pct);
	db_bind_i64(&b, p->tracking ? 1 : 0);
	db_bind_fig(&b, p->lat_p99999_us);
	if (p->ss_summary) {
		db_bind_i64(&b, p->ss_reached ? 1 : 0);
		db_bind_i64(&b, p->ss_first_round);
		db_bind_dbl(&b, p->ss_mean);
		db_bind_dbl(&b, p->ss_range_pct);
		db_bind_dbl(&b, p->ss_slope);
		db_bind_dbl(&b, p->ss_excursion_pct);
	} else {
		for (int i = 0; i < 6; i++)
			db_bind_null(&b);
	}
	db_bind_text(&b, p->lat_hist);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store a PTS cell");
}

/* The fill columns stay NULL when nothing was filled (fill = no). */
static int iteration_update(struct db *db, int64_t id, const struct db_iteration *it)
{
	int filled = it->fill_bytes > 0;
	struct rate_figs f = { it->mibps_avg, it->mibps_min, it->mibps_max, it->mibps_stddev };
	struct db_bind b;
	int ret;

	if (stats_rate_bound(&f))
		log_msg(LOG_WARNING,
			"iteration %lld: min %.3f avg %.3f max %.3f MiB/s out of "
			"order, stored bounded",
			(long long)id, it->mibps_min, it->mibps_avg, it->mibps_max);
	db_bind_start(db, ST_IT_END, &b);
	db_bind_opt_text(&b, it->ended_at);
	if (it->phase_not_run) {
		db_bind_null(&b);
		db_bind_null(&b);
		db_bind_null(&b);
	} else {
		db_bind_u64(&b, it->bytes);
		db_bind_u64(&b, it->ops);
		db_bind_dbl(&b, it->seconds);
	}
	db_bind_fig(&b, f.avg);
	db_bind_fig(&b, f.min);
	db_bind_fig(&b, f.max);
	db_bind_fig(&b, f.stddev);
	db_bind_fig(&b, it->iops_avg);
	db_bind_fig(&b, it->lat_mean_us);
	db_bind_fig(&b, it->lat_us.p50);
	db_bind_fig(&b, it->lat_us.p99);
	db_bind_fig(&b, it->lat_us.p999);
	db_bind_fig(&b, it->lat_us.max);
	if (filled) {
		db_bind_fig(&b, it->fill_mibps);
		db_bind_dbl(&b, it->fill_seconds);
		db_bind_u64(&b, it->fill_bytes);
	} else {
		db_bind_null(&b);
		db_bind_null(&b);
		db_bind_null(&b);
	}
	db_bind_u64(&b, it->errors);
	db_bind_text(&b, db_status_name(it->status));
	db_bind_text(&b, it->error);
	db_bind_fig(&b, it->lat_us.p90);
	db_bind_fig(&b, it->lat_us.p9999);
	if (it->verify != VERIFY_NONE)
		db_bind_u64(&b, it->verify_errors);
	else
		db_bind_null(&b);
	if (it->repeat_summary) {
		db_bind_dbl(&b, it->mibps_repeat_mean);
		db_bind_dbl(&b, it->mibps_repeat_stddev);
		db_bind_dbl(&b, it->iops_repeat_mean);
		db_bind_dbl(&b, it->iops_repeat_stddev);
	} else {
		for (int i = 0; i < 4; i++)
			db_bind_null(&b);
	}
	db_bind_i64(&b, it->more_rows ? 1 : 0);
	steady_update(&b, it);
	db_bind_i64(&b, id);
	ret = db_bind_run(&b, "store iteration results");
	return ret ? ret : db_changed(db, id, "store iteration results");
}

/* sample_data.phase: 0 fill, 1 measure (the read-back's samples are
 * stored as measure, daemon/iter.c). */
static int64_t sample_phase(enum db_phase p)
{
	return p == DB_PHASE_FILL ? 0 : 1;
}

static int sample_insert(struct db *db, int64_t id, const struct db_sample *s)
{
	const double *lat[] = { &s->lat_us.p50,  &s->lat_us.p90,   &s->lat_us.p99,
				&s->lat_us.p999, &s->lat_us.p9999, &s->lat_us.max };
	struct db_bind b;

	db_bind_start(db, ST_SAMPLE, &b);
	db_bind_i64(&b, id);
	db_bind_i64(&b, sample_phase(s->phase));
	db_bind_i64(&b, s->t_ms);
	db_bind_opt_i64(&b, db_sample_ns(s->seconds, 1e9));
	db_bind_u64(&b, s->bytes);
	db_bind_u64(&b, s->ops);
	for (size_t i = 0; i < ARRAY_SIZE(lat); i++)
		db_bind_opt_i64(&b, db_sample_ns(*lat[i], 1e3));
	db_bind_opt_i64(&b, s->host_stall_ms > 0 ? db_sample_ns(s->host_stall_ms, 1e6) : -1);
	db_bind_fig(&b, s->mibps_min_1s);
	return db_bind_run(&b, "store sample");
}

int db_iteration_end(struct db *db, int64_t id, const struct db_iteration *it,
		     const struct db_sample *samples, size_t nsamples)
{
	int ret;

	if (!is_final_status(it->status) || (nsamples && !samples))
		return -EINVAL;
	ret = db_enter(db);
	if (ret)
		return ret;
	ret = db_tx_begin(db);
	if (ret)
		goto out;
	ret = iteration_update(db, id, it);
	if (ret == 0)
		ret = iteration_io(db, id, it);
	if (ret == 0)
		ret = iteration_stall(db, id, it);
	if (ret == 0)
		ret = iteration_depth(db, id, it);
	for (size_t i = 0; ret == 0 && i < it->nwritten; i++)
		ret = written_insert(db, id, it->written[i]);
	if (ret == 0)
		ret = iteration_device(db, id, it);
	if (ret == 0)
		ret = iteration_pts(db, id, it);
	if (ret == 0)
		ret = db_series_store(db, id, it->series, it->nseries);
	for (size_t i = 0; ret == 0 && i < nsamples; i++)
		ret = sample_insert(db, id, &samples[i]);
	ret = db_tx_end(db, ret);
out:
	db_leave(db);
	if (!ret)
		db_row_written(db, DB_ROW_ITERATION, id);
	return ret;
}

int db_event(struct db *db, const struct db_event *e, int64_t *event_id)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_EVENT, &b);
	db_bind_id(&b, e->target_id);
	db_bind_id(&b, e->run_id);
	db_bind_id(&b, e->cycle_id);
	db_bind_id(&b, e->iteration_id);
	db_bind_text(&b, e->severity);
	db_bind_text(&b, e->kind);
	db_bind_text(&b, e->message_id);
	db_bind_text(&b, e->message);
	db_bind_fig(&b, e->value);
	db_bind_fig(&b, e->baseline);
	db_bind_text(&b, e->data);
	ret = db_bind_run(&b, "store event");
	int64_t id = ret == 0 ? sqlite3_last_insert_rowid(db->conn) : 0;
	if (event_id)
		*event_id = id;
	db_leave(db);
	if (id)
		db_row_written(db, DB_ROW_EVENT, id);
	return ret;
}

int db_progress(struct db *db, int64_t target_id, const struct db_progress *p)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db->last_err[0] = '\0';
	db_bind_start(db, ST_PROGRESS, &b);
	db_bind_i64(&b, target_id);
	db_bind_i64(&b, p->cycle);
	db_bind_i64(&b, p->iteration);
	db_bind_u64(&b, p->size_bytes);
	db_bind_text(&b, p->phase);
	db_bind_fig(&b, p->mibps);
	db_bind_u64(&b, p->phase_bytes);
	if (p->nsizes > 0)
		db_bind_i64(&b, p->nsizes);
	else
		db_bind_null(&b);
	db_bind_i64(&b, p->cycles);
	db_bind_fig(&b, p->phase_seconds);
	if (p->duration > 0)
		db_bind_dbl(&b, p->duration);
	else
		db_bind_null(&b);
	db_bind_fig(&b, p->iteration_seconds);
	if (p->stage && p->stage[0])
		db_bind_text(&b, p->stage);
	else
		db_bind_null(&b);
	db_bind_fig(&b, p->remaining_seconds);
	/* Progress is rewritten every second: a row that meets another
	 * program's lock is skipped at once rather than waited for with the
	 * connection held, which would keep the targets' own writes (and the
	 * lock warnings they give) waiting behind it. */
	int busy_ms = db->busy_ms;
	db->busy_ms = PROGRESS_BUSY_MS;
	db->quiet_busy = 1;
	ret = db_bind_run(&b, "store progress");
	db->quiet_busy = 0;
	db->busy_ms = busy_ms;
	if (ret && ret != -EBUSY) {
		char err[512];
		db_failure(db, ret, err, sizeof(err));
		log_msg(LOG_ERR, "storing progress: %s", err);
	}
	db_leave(db);
	return ret;
}
