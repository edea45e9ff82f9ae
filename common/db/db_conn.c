/* db_conn: the bottom of the db module, which every other db file calls
 * and which calls none of them but the statement table (db_stmt.c) and the
 * note of failing writes (db_outage.c): SQLite codes to errno, locking,
 * transactions, the busy policy, and binding and running the cached
 * statements. Every statement's bound values are counted against the
 * placeholders SQLite found in it before it runs, so a value added to the
 * SQL but not to the binding (or the reverse) fails loudly instead of
 * shifting columns. */
#include "db/db_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

#define BUSY_TIMEOUT_MS 10000
#define BUSY_STOP_MS 500 /* the wait for a lock once a stop was asked for */
#define BUSY_STEP_MS 10

/* SQLite's busy handler: wait busy_ms (BUSY_TIMEOUT_MS unless
 * db_set_busy_timeout) for another program's lock, or at most BUSY_STOP_MS
 * once db_set_stop's flag is set, so that a database
 * someone keeps locked cannot hold a stopping daemon, whose last writes
 * each meet the lock, past systemd's TimeoutStopSec. */
static int on_busy(void *arg, int count)
{
	const struct db *db = arg;
	int waited = count * BUSY_STEP_MS;

	if (waited >= db->busy_ms || (db->stop && atomic_load(db->stop) && waited >= BUSY_STOP_MS))
		return 0;
	usleep(BUSY_STEP_MS * 1000);
	return 1;
}

void db_busy_init(struct db *db)
{
	db->busy_ms = BUSY_TIMEOUT_MS;
	sqlite3_busy_handler(db->conn, on_busy, db);
}

void db_set_stop(struct db *db, const atomic_int *stop)
{
	pthread_mutex_lock(&db->lock);
	db->stop = stop;
	pthread_mutex_unlock(&db->lock);
}

void db_set_row_hook(struct db *db, db_rowhook_fn fn, void *arg)
{
	db->row_hook = fn;
	db->row_arg = arg;
}

void db_row_written(struct db *db, enum db_row_kind kind, int64_t id)
{
	if (db->row_hook)
		db->row_hook(db->row_arg, kind, id);
}

void db_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The errno for a SQLite result code; sys is the OS errno behind it, if any. */
int db_map_rc(int rc, int sys)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW: return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED: return -EBUSY;
	case SQLITE_FULL: return sys == EDQUOT ? -EDQUOT : -ENOSPC;
	case SQLITE_READONLY: return -EROFS;
	case SQLITE_NOTADB: return -EINVAL;
	case SQLITE_CANTOPEN:
		if (sys == EROFS || sys == ENOSPC || sys == EDQUOT)
			return -sys;
		return (sys == EACCES || sys == EPERM) ? -EACCES : -ENOENT;
	case SQLITE_NOMEM: return -ENOMEM;
	case SQLITE_RANGE: return -ERANGE;
	case SQLITE_CONSTRAINT:
		/* a duplicate is "exists"; CHECK, NOT NULL, FOREIGN KEY: bad input */
		if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
			return -EEXIST;
		return -EINVAL;
	default:
		/* a write or an fsync that met a full or read-only filesystem
		 * (SQLITE_IOERR_*) */
		if (sys == ENOSPC || sys == EDQUOT || sys == EROFS)
			return -sys;
		return -EIO;
	}
}

/* BEGIN IMMEDIATE: take the write lock now, so no statement inside the
 * transaction can fail with SQLITE_BUSY half-way. Returns 0 or -errno. */
int db_tx_begin(struct db *db)
{
	return db_exec_id(db, ST_BEGIN, "begin transaction");
}

/* Commits when ret is 0, else rolls back. Returns ret or the commit error. */
int db_tx_end(struct db *db, int ret)
{
	if (ret == 0)
		ret = db_exec_id(db, ST_COMMIT, "commit");
	if (ret != 0 && !sqlite3_get_autocommit(db->conn))
		db_exec_id(db, ST_ROLLBACK, "rollback");
	return ret;
}

/* Locks db for a writing call. Returns 0 (locked) or -errno (not locked). */
int db_enter(struct db *db)
{
	if (!db)
		return -EINVAL;
	if (db->readonly)
		return -EROFS;
	pthread_mutex_lock(&db->lock);
	return 0;
}

int db_enter_msg(struct db *db, char *err, size_t errlen)
{
	int ret = db_enter(db);

	db_seterr(err, errlen, "%s", "");
	if (ret) {
		db_seterr(err, errlen, "database %s: %s", db ? db->path : "(none)",
			  ret == -EROFS ? "opened read-only" : strerror(-ret));
		return ret;
	}
	db->last_err[0] = '\0';
	return 0;
}

void db_leave(struct db *db)
{
	pthread_mutex_unlock(&db->lock);
}

void db_set_busy_timeout(struct db *db, int ms)
{
	pthread_mutex_lock(&db->lock);
	db->busy_ms = ms; /* on_busy's bound: the stop flag keeps working */
	pthread_mutex_unlock(&db->lock);
}

/* Logs what failed with SQLite's text. Returns the errno for rc. */
static int report(struct db *db, int rc, const char *what)
{
	const char *msg = sqlite3_extended_errcode(db->conn) == rc ? sqlite3_errmsg(db->conn)
								   : sqlite3_errstr(rc);

	log_msg(LOG_ERR, "database %s: %s: %s", db->path, what, msg);
	snprintf(db->last_err, sizeof(db->last_err), "%s: %s", what, msg);
	return db_map_rc(rc, sqlite3_system_errno(db->conn));
}

void db_bind_start(struct db *db, enum stmt_id id, struct db_bind *b)
{
	b->db = db;
	b->id = id;
	b->i = 0;
	b->rc = SQLITE_OK;
	if (!db->st[id])
		b->rc = sqlite3_prepare_v3(db->conn, db_stmts[id].sql, -1,
					   SQLITE_PREPARE_PERSISTENT, &db->st[id], NULL);
	b->st = db->st[id];
}

void db_bind_i64(struct db_bind *b, int64_t v)
{
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_int64(b->st, ++b->i, v);
}

void db_bind_u64(struct db_bind *b, uint64_t v)
{
	if (b->rc == SQLITE_OK && v > INT64_MAX)
		b->rc = SQLITE_RANGE;
	db_bind_i64(b, (int64_t)v);
}

void db_bind_dbl(struct db_bind *b, double v)
{
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_double(b->st, ++b->i, v);
}

void db_bind_null(struct db_bind *b)
{
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_null(b->st, ++b->i);
}

void db_bind_text(struct db_bind *b, const char *s)
{
	if (!s)
		db_bind_null(b);
	else if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_text(b->st, ++b->i, s, -1, SQLITE_STATIC);
}

void db_bind_opt_text(struct db_bind *b, const char *s)
{
	db_bind_text(b, (s && *s) ? s : NULL);
}

void db_bind_id(struct db_bind *b, int64_t id)
{
	if (id == 0)
		db_bind_null(b);
	else
		db_bind_i64(b, id);
}

void db_bind_fig(struct db_bind *b, double v)
{
	if (v < 0)
		db_bind_null(b);
	else
		db_bind_dbl(b, v);
}

void db_bind_opt_i64(struct db_bind *b, int64_t v)
{
	if (v < 0)
		db_bind_null(b);
	else
		db_bind_i64(b, v);
}

int db_bind_count_check(sqlite3_stmt *st, int bound, const char *what)
{
	int want = sqlite3_bind_parameter_count(st);

	if (bound == want)
		return 0;
	log_msg(LOG_ERR, "database: %s: %d values bound to a statement with %d placeholders: %s",
		what, bound, want, sqlite3_sql(st));
	return -EINVAL;
}

int db_bind_finish(struct db_bind *b, int rc, const char *what)
{
	int ret = 0;

	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = b->db->quiet_busy && (rc & 0xff) == SQLITE_BUSY
			      ? db_map_rc(rc, 0) /* the caller skips it: no log line */
			      : report(b->db, rc, what);
	db_outage_note(b->db, b->id, b->st, rc, what);
	if (b->st) {
		sqlite3_reset(b->st);
		sqlite3_clear_bindings(b->st);
	}
	return ret;
}

/* The count check; a mismatch finishes the statement. Returns 0 or -EINVAL. */
static int counted(struct db_bind *b, const char *what)
{
	int ret;

	if (b->rc != SQLITE_OK)
		return 0;
	ret = db_bind_count_check(b->st, b->i, what);
	if (!ret && b->i != db_stmts[b->id].nparams) {
		log_msg(LOG_ERR, "database: %s: %d values bound, the statement table says %d", what,
			b->i, db_stmts[b->id].nparams);
		ret = -EINVAL;
	}
	if (ret) {
		snprintf(b->db->last_err, sizeof(b->db->last_err), "%s: %d values bound, %d wanted",
			 what, b->i, sqlite3_bind_parameter_count(b->st));
		db_bind_finish(b, SQLITE_OK, what);
	}
	return ret;
}

int db_bind_run(struct db_bind *b, const char *what)
{
	int rc = b->rc;
	int ret = counted(b, what);

	if (ret)
		return ret;
	if (rc == SQLITE_OK)
		rc = sqlite3_step(b->st);
	return db_bind_finish(b, rc, what);
}

int db_bind_row(struct db_bind *b, const char *what)
{
	int rc = b->rc;
	int ret = counted(b, what);

	if (ret)
		return ret;
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(b->st);
		if (rc == SQLITE_ROW)
			return 1;
	}
	return db_bind_finish(b, rc, what);
}

int db_changed(struct db *db, int64_t id, const char *what)
{
	if (sqlite3_changes(db->conn) > 0)
		return 0;
	log_msg(LOG_ERR, "database %s: %s: no row with id %lld", db->path, what, (long long)id);
	return -ENOENT;
}

int db_exec_id(struct db *db, enum stmt_id id, const char *what)
{
	struct db_bind b;

	db_bind_start(db, id, &b);
	return db_bind_run(&b, what);
}

void db_failure(struct db *db, int ret, char *err, size_t errlen)
{
	db_seterr(err, errlen, "database %s: %s", db->path,
		  db->last_err[0] ? db->last_err : strerror(-ret));
}

/* Whether ret is one of r's errors that no retry can mend. */
static int retry_is_final(const struct db_retry *r, int ret)
{
	for (const int *e = r->final; e && *e; e++)
		if (ret == *e)
			return 1;
	return 0;
}

static void retry_nap(const struct db_retry *r)
{
	double s = r->step > 0 ? r->step : DB_RETRY_STEP;
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The second half of the locked-database policy: a write that still
 * failed after on_busy's wait is tried again here, every DB_RETRY_STEP. */
int db_retry(const struct db_retry *r, int (*op)(void *), void *arg)
{
	uint64_t start = util_now_ns(), busy_since = 0;
	int stop_at_start = r->stop && atomic_load(r->stop);
	int tries = 0, ret;

	for (;;) {
		uint64_t tried_at = util_now_ns();
		ret = op(arg);
		uint64_t now = util_now_ns();
		if (!ret) {
			if ((tries || busy_since) && r->on_done)
				r->on_done(r->ctx, tries,
					   busy_since ? (double)(now - busy_since) / 1e9 : -1);
			return 0;
		}
		int stopped = r->stop && atomic_load(r->stop);
		int busy_wait = ret == -EBUSY && r->wait_busy;
		if (retry_is_final(r, ret) || (busy_wait && stopped) ||
		    (r->stop_ends && stopped && !stop_at_start) ||
		    (r->patience >= 0 && (double)(now - start) / 1e9 >= r->patience))
			return ret;
		if (busy_wait && !busy_since)
			busy_since = tried_at; /* the try itself waited the busy timeout */
		if (!busy_wait && r->tries && ++tries >= r->tries)
			return ret;
		tries += !busy_wait && !r->tries;
		if (r->on_fail)
			r->on_fail(r->ctx, ret, tries,
				   busy_wait ? (double)(now - busy_since) / 1e9 : -1);
		retry_nap(r);
	}
}
