/* db_open: the database file and its schema: opening it (creating and
 * migrating a writable one to DB_SCHEMA_VERSION, one script a version in
 * db_migrations.c), checking that it is wearmon's, whole and in a place that
 * takes writes; closing it. */
#ifndef WEARMON_DB_OPEN_H
#define WEARMON_DB_OPEN_H

#include <stddef.h>
#include <stdint.h>

struct db;

#define DB_SCHEMA_VERSION 29
#define DB_APPLICATION_ID 1464814926 /* 'WMON', PRAGMA application_id */

/* Called before something long that db_open must do before it returns (a
 * schema update): what it is and how long it may take at most from now.
 * One hook for the process, set before any db_open (wearmond sends
 * EXTEND_TIMEOUT_USEC with it); NULL: none. */
typedef void (*db_slow_fn)(const char *what, uint64_t usec);
void db_set_slow_hook(db_slow_fn fn);

/* Open (creating and migrating when writable). readonly opens without
 * creating. Returns 0 or -errno with a message naming path in err:
 * -ENOENT/-EACCES cannot open, -EINVAL not a (wearmon) SQLite database,
 * -ENOTSUP schema newer than DB_SCHEMA_VERSION. */
int db_open(const char *path, int readonly, struct db **out, char *err, size_t errlen);

/* Close (NULL is fine). */
void db_close(struct db *db);

/* Check the directory of path exists and is writable, and that path, when
 * it exists, is a regular file (a directory, FIFO, socket or device is
 * refused). Returns 0 or -errno (-EROFS: a read-only filesystem). */
int db_check_path(const char *path, char *err, size_t errlen);

/* The least free space on the database's filesystem below which a start
 * is not tried: a filesystem with less is full for a start (its first
 * writes: the run, its configuration, a new schema, take a few pages of
 * WAL). One with more may still fill up during the start, which then
 * fails the same way (db_transient). */
#define DB_FREE_MIN (128ULL << 10)

/* Whether the database's filesystem can take writes now: not read-only,
 * at least DB_FREE_MIN free. Both are conditions that can end by waiting.
 * Returns 0, or -EROFS / -ENOSPC with err naming the filesystem (mount
 * point, type, source) and its free space. */
int db_check_room(const char *path, char *err, size_t errlen);

/* Whether ret (-errno) is a condition of the database's or a target's
 * filesystem that waiting can end: full (-ENOSPC, -EDQUOT) or read-only
 * (-EROFS). Returns 1 or 0. */
int db_transient(int ret);

#endif
