/* db_int: what db.c, db_schema.c and db_read.c share: the connection, its
 * statement cache and the locking and error helpers. Nothing outside the
 * db module includes it. */
#ifndef WEARMON_DB_INT_H
#define WEARMON_DB_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>

#include "db.h"

#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* db_migrations[v] turns a version v-1 database into version v. */
extern const char *const db_migrations[];

enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_RUN_BEGIN,
	ST_RUN_END,
	ST_RUN_CONFIG,
	ST_TARGET_UPSERT,
	ST_MARK_INTERRUPTED,
	ST_CAMPAIGN,
	ST_LAST_CYCLE,
	ST_CYCLE_PROGRESS,
	ST_CYCLE_REOPEN,
	ST_CAMPAIGN_NEW,
	ST_CYCLE_BEGIN,
	ST_CYCLE_ACTION,
	ST_CYCLE_END,
	ST_IT_BEGIN,
	ST_IT_END,
	ST_IT_IO,
	ST_SAMPLE,
	ST_EVENT,
	ST__COUNT
};

struct db {
	sqlite3 *conn;
	pthread_mutex_t lock;
	int readonly;
	char *path;
	sqlite3_stmt *st[ST__COUNT];   /* prepared on first use, kept until close */
	int watch_fd;                  /* writers: our own descriptor of the file,
					  to notice it deleted or replaced; -1 */
	char last_err[256];            /* SQLite's text for the last failure */
};

/* Writers: open db->watch_fd on the file SQLite opened. Returns 0 or -errno. */
int db_watch_open(struct db *db, char *err, size_t errlen);

/* printf into err (when err and errlen). */
void db_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The errno for a SQLite result code; sys is the OS errno behind it. */
int db_map_rc(int rc, int sys);

/* Lock db for a writing call. Returns 0 (locked) or -errno (not locked). */
int db_enter(struct db *db);

/* Unlock. */
void db_leave(struct db *db);

/* BEGIN IMMEDIATE. Returns 0 or -errno. */
int db_tx_begin(struct db *db);

/* Commit when ret is 0, else roll back. Returns ret or the commit error. */
int db_tx_end(struct db *db, int ret);

#endif
