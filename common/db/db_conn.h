/* db_conn: what a caller sets on a connection and how it waits: the hook
 * told of each row the daemon's figures depend on, the busy timeout, the
 * stop flag that shortens waits for a lock, and the retry policy of a
 * write (common/db/db_conn.c, the bottom of the db module). */
#ifndef WEARMON_DB_CONN_H
#define WEARMON_DB_CONN_H

#include <stdatomic.h>
#include <stdint.h>

struct db;

/* A row that the daemon's figures depend on (db_set_row_hook). */
enum db_row_kind {
	DB_ROW_ITERATION, /* an iteration ended: its id */
	DB_ROW_WEAR,      /* a wear row: its iteration_id */
	DB_ROW_HIR_WEAR,  /* a hir_bursts row's wear figures: its id */
	DB_ROW_HEALTH,    /* a health snapshot: its id */
	DB_ROW_EVENT,     /* an event: its id */
};

/* Called once a row of kind is committed, by the thread that wrote it,
 * outside the connection's lock (it may query db). */
typedef void (*db_rowhook_fn)(void *arg, enum db_row_kind kind, int64_t id);

/* Set db's row hook (NULL: none), before any thread writes. */
void db_set_row_hook(struct db *db, db_rowhook_fn fn, void *arg);

/* How long a writer waits for a lock held by another connection (tests
 * shorten it). */
void db_set_busy_timeout(struct db *db, int ms);
/* Once *stop is nonzero, a write waits 0.5 s for another program's lock
 * instead of 10 s (the daemon's stop flag: its last writes must fit in
 * systemd's stop timeout). */
void db_set_stop(struct db *db, const atomic_int *stop);

/* The locked-database policy, in one place (common/db/db_conn.c): a statement
 * waits up to the busy timeout for another program's lock (10 s, 0.5 s
 * once stopping); a write that still fails is tried again by db_retry,
 * every DB_RETRY_STEP seconds, as the caller's policy says. */
#define DB_RETRY_STEP 1.0
#define DB_RETRY_TRIES 5 /* tries of a write failing for another reason */
#define DB_RETRY_FOREVER (-1.0)

struct db_retry {
	int wait_busy;    /* -EBUSY: wait for as long as the lock lasts; tries
				     do not count it; a stop set ends the wait */
	int tries;        /* other errors: tries in all (0: until patience) */
	double patience;  /* seconds in all, no try starts after them;
				     DB_RETRY_FOREVER: no limit */
	const int *final; /* errors no retry mends, 0-ended (NULL: none) */
	const atomic_int *stop;
	int stop_ends; /* a stop set after the first try ends the retries */
	double step;   /* seconds between tries (0: DB_RETRY_STEP) */
	/* After a failed try that is tried again: ret, the failures counted
	 * as tries so far, the seconds the lock has lasted (-1: not busy). */
	void (*on_fail)(void *ctx, int ret, int tries, double busy_s);
	/* Success after failures: the same counts. */
	void (*on_done)(void *ctx, int tries, double busy_s);
	void *ctx;
};

/* Run op(arg), a database write, until it succeeds or r's policy gives up.
 * Returns 0 or the last -errno of op. */
int db_retry(const struct db_retry *r, int (*op)(void *), void *arg);

#endif
