/* db_int: what the db module's files share: the connection, the table of
 * prepared statements and their counted binding, the locking and error
 * helpers (db_conn.c, the bottom of the module, which calls no other db
 * file but db_stmt.c and db_outage.c). Nothing outside the db module
 * includes it. */
#ifndef WEARMON_DB_INT_H
#define WEARMON_DB_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* db_migrations[v] turns a version v-1 database into version v. */
extern const char *const db_migrations[];

/* A reader of a database older than the view iteration_baseline gets it
 * as a TEMP view of the same logic (version from PRAGMA user_version).
 * Returns 0 or -errno with a message in err. */
int db_schema_reader_views(struct db *db, int version, char *err, size_t errlen);

/* The views defined apart from the schema versions (db_views.c): a
 * writable open recreates a stored one whose text is not the current
 * one (db_views_update), a reader of such a file gets the current one
 * as a TEMP view (db_views_reader, version from PRAGMA user_version).
 * Both return 0 or -errno with a message in err. */
int db_views_update(struct db *db, char *err, size_t errlen);
int db_views_reader(struct db *db, int version, char *err, size_t errlen);

/* The indexes of the CLI's reads (db_index.c), IF NOT EXISTS: run after
 * every migration of a writable open. Returns 0 or -errno with a message
 * in err. */
int db_index_create(struct db *db, char *err, size_t errlen);

/* Schema 16's samples (db_schema.c): the end of the move of the old table
 * (drops it, the view reads sample_data only); the move of the rows of
 * iterations ?1..?2; the rollup of iteration ?1's samples into minutes. */
extern const char db_schema_samples_done[];
extern const char db_schema_samples_move[];
extern const char db_schema_samples_fold[];
/* sample_data's columns, and the values of all but the first (the
 * iteration) from a row x in schema 15's columns and units. */
extern const char db_schema_sample_cols[];
extern const char db_schema_sample_from_15[];

enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_RUN_BEGIN,
	ST_RUN_END,
	ST_RUN_CONFIG,
	ST_TARGET_UPSERT,
	ST_MARK_INTERRUPTED,
	ST_RUNNING_COUNT,
	ST_TARGET_ID,
	ST_CAMPAIGN,
	ST_LAST_CYCLE,
	ST_CYCLE_PROGRESS,
	ST_CYCLE_REOPEN,
	ST_CAMPAIGN_NEW,
	ST_CYCLE_BEGIN,
	ST_CYCLE_PLAN,
	ST_ACTION_START,
	ST_ACTION_END,
	ST_ACTION_CRASHED,
	ST_ACTION_CLOSE,
	ST_CAMPAIGN_KEY,
	ST_CAMPAIGN_DONE,
	ST_CYCLE_END,
	ST_IT_BEGIN,
	ST_IT_END,
	ST_IT_IO,
	ST_IT_STALL,
	ST_IT_DEPTH,
	ST_IT_DEVICE,
	ST_SAMPLE,
	ST_SERIES,
	ST_EVENT,
	ST_EXTENTS_DELETE,
	ST_EXTENT_INSERT,
	ST_WRITTEN_INSERT,
	ST_WRITTEN_DELETE,
	ST_WRITTEN_RECOVER,
	ST_WEAR_COUNTERS,
	ST_WEAR_INSERT,
	ST_HEALTH_INSERT,
	ST_PROGRESS,
	ST_ADOPT_FAIL_CYCLES,
	ST_ADOPT_STALE,
	ST_ADOPT_CAMPAIGN,
	ST_ADOPT_WEAR,
	ST_ADOPT_EVENT,
	ST_OWNED_ADD,
	ST_FS_MADE_ADD,
	ST_HIR_INSERT,
	ST_HIR_PROGRESS,
	ST_HIR_WEAR,
	ST_CMD_START,
	ST_CMD_END,
	ST_CMD_LEFTOVER,
	ST_HIR_IDLE,
	ST_HIR_PURGE,
	ST_IT_PTS,
	ST_TARGET_RATING,
	ST_HIR_ERASED,
	ST__COUNT
};

/* A prepared statement: how many values its binding code binds, its SQL. */
struct db_stmt {
	int nparams;
	const char *sql;
};

/* Every statement, by id (db_stmt.c). */
extern const struct db_stmt db_stmts[ST__COUNT];

struct db {
	sqlite3 *conn;
	pthread_mutex_t lock;
	int readonly;
	char *path;
	sqlite3_stmt *st[ST__COUNT]; /* prepared on first use, kept until close */
	int watch_fd;                /* writers: our own descriptor of the file,
					  to notice it deleted or replaced; -1 */
	char last_err[256];          /* SQLite's text for the last failure */
	const atomic_int *stop;      /* set: a lock is waited for briefly (db_set_stop) */
	int busy_ms;                 /* how long a write waits for a lock (on_busy) */
	int quiet_busy;              /* a locked database is the caller's to say (db_progress) */
	db_rowhook_fn row_hook;      /* db_set_row_hook; NULL: none */
	void *row_arg;
	char tx_what[48];            /* the first write of the open transaction */
	int outage_on, outage_ended; /* a spell of failing writes: going on; */
	uint64_t outage_since_ns;    /* one ended, not yet taken (db_outage.c) */
	struct db_outage outage, outage_done;
	uint64_t vm_steps; /* SQLite VM steps of every db_query (db_query_steps) */
};

/* A statement being bound: placeholders are numbered in call order and the
 * first failure sticks, so a binding sequence needs one check at the end. */
struct db_bind {
	struct db *db;
	enum stmt_id id;
	sqlite3_stmt *st;
	int i;
	int rc;
};

/* Start binding the cached statement id, preparing it on first use. */
void db_bind_start(struct db *db, enum stmt_id id, struct db_bind *b);

/* The next value: an integer, an unsigned one (> INT64_MAX fails), a real,
 * NULL, text (NULL when s is NULL; s must live until the step), text NULL
 * when empty too, a row id NULL when 0, a figure NULL when negative, an
 * integer NULL when negative. */
void db_bind_i64(struct db_bind *b, int64_t v);
void db_bind_u64(struct db_bind *b, uint64_t v);
void db_bind_dbl(struct db_bind *b, double v);
void db_bind_null(struct db_bind *b);
void db_bind_text(struct db_bind *b, const char *s);
void db_bind_opt_text(struct db_bind *b, const char *s);
void db_bind_id(struct db_bind *b, int64_t id);
void db_bind_fig(struct db_bind *b, double v);
void db_bind_opt_i64(struct db_bind *b, int64_t v);

/* Whether bound values equal st's placeholders (logs the statement when
 * not). Returns 0 or -EINVAL. */
int db_bind_count_check(sqlite3_stmt *st, int bound, const char *what);

/* Run a bound statement to completion, after the count check. Returns 0,
 * -EINVAL (count), or -errno. */
int db_bind_run(struct db_bind *b, const char *what);

/* Step to the first row. Returns 1 with a row (read it, then call
 * db_bind_finish), 0 when there is none, or -errno (both finished). */
int db_bind_row(struct db_bind *b, const char *what);

/* Reset the statement; log and map rc. Returns 0 or -errno. */
int db_bind_finish(struct db_bind *b, int rc, const char *what);

/* The drive's readings of iteration id (device_series), in the caller's
 * transaction (db_series.c). Returns 0 or -errno. */
int db_series_store(struct db *db, int64_t id, const struct db_dev_point *v, size_t n);

/* Iteration id's readings down to the last of each minute of a phase
 * (with the minute's highest temperature), in the caller's transaction,
 * as its samples are rolled up. Returns 0 or -errno. */
int db_series_fold(struct db *db, int64_t id);

/* Require that the last UPDATE touched a row. Returns 0 or -ENOENT. */
int db_changed(struct db *db, int64_t id, const char *what);

/* The message of a failed writing call, as db_write words it: "database
 * PATH: " and SQLite's text of the last failure (strerror(-ret) if none). */
void db_failure(struct db *db, int ret, char *err, size_t errlen);

/* Run statement id with no values. Returns 0 or -errno. */
int db_exec_id(struct db *db, enum stmt_id id, const char *what);

/* Writers: open db->watch_fd on the file SQLite opened. Returns 0 or -errno. */
int db_watch_open(struct db *db, char *err, size_t errlen);

/* Note how a statement of the db module ended (rc), for the spells of
 * failing writes that db_outage_take hands out: a storage failure (disk
 * full, read-only, I/O error) of a writing statement starts or extends a
 * spell, a committed write ends it. Called with db->lock held. */
void db_outage_note(struct db *db, enum stmt_id id, sqlite3_stmt *st, int rc, const char *what);

/* printf into err (when err and errlen). */
/* Tells the row hook (if any) that a row was stored; call after db_leave. */
void db_row_written(struct db *db, enum db_row_kind kind, int64_t id);

void db_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The errno for a SQLite result code; sys is the OS errno behind it. */
int db_map_rc(int rc, int sys);

/* The busy policy on a newly opened connection: wait for another
 * program's lock (db_set_busy_timeout, db_set_stop). */
void db_busy_init(struct db *db);

/* Lock db for a writing call. Returns 0 (locked) or -errno (not locked). */
int db_enter(struct db *db);

/* db_enter for a call that reports its failures in err (emptied first):
 * on failure err says "database PATH: why". On success the connection's
 * last error is cleared too. Returns 0 (locked) or -errno (not locked). */
int db_enter_msg(struct db *db, char *err, size_t errlen);

/* Unlock. */
void db_leave(struct db *db);

/* BEGIN IMMEDIATE. Returns 0 or -errno. */
int db_tx_begin(struct db *db);

/* Commit when ret is 0, else roll back. Returns ret or the commit error. */
int db_tx_end(struct db *db, int ret);

/* Whether s is a status a row ends with: done, interrupted or failed
 * (db_cycle.c; db_iter.c ends iterations with them). Returns 1 or 0. */
int db_status_final(enum db_status s);

/* Replace a target's mapped extents and host counters with s, inside the
 * caller's transaction (db_wear.c). Returns 0 or -errno. */
int db_wear_put_state(struct db *db, const struct db_wear_state *s);

#endif
