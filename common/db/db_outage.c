/* db_outage: the spells in which the database could not be written (disk
 * full, read-only, I/O errors), kept from each statement's outcome so that
 * the daemon can store a spell once writes succeed again. */
#include "db/db_int.h"

#include <string.h>

#include "base/util.h"

/* A failure of the storage under the database, as opposed to a lock held
 * by another program (waited for) or a statement of ours that is wrong. */
static int storage_failure(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL:
	case SQLITE_IOERR:
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_CORRUPT:
	case SQLITE_PERM:
	case SQLITE_NOLFS:
	case SQLITE_PROTOCOL: return 1;
	default: return 0;
	}
}

static void count_what(struct db_outage *o, const char *what, long n)
{
	for (int i = 0; i < o->nwhats; i++) {
		if (!strcmp(o->whats[i].what, what)) {
			o->whats[i].count += n;
			return;
		}
	}
	if (o->nwhats == DB_OUTAGE_WHATS) {
		o->other += n;
		return;
	}
	util_strlcpy(o->whats[o->nwhats].what, what, sizeof(o->whats[0].what));
	o->whats[o->nwhats++].count = n;
}

static void failed(struct db *db, const char *what)
{
	struct db_outage *o = &db->outage;

	if (!db->outage_on) {
		memset(o, 0, sizeof(*o));
		util_iso_now(o->started_at, sizeof(o->started_at));
		util_strlcpy(o->error, sqlite3_errmsg(db->conn), sizeof(o->error));
		db->outage_since_ns = util_now_ns();
		db->outage_on = 1;
	}
	o->failed++;
	count_what(o, what, 1);
}

/* Two spells that ended before the daemon took the first: one record with
 * the first's start and error, the second's end, and their failing time
 * and failures added. */
static void merge_done(struct db_outage *into, const struct db_outage *o)
{
	util_strlcpy(into->ended_at, o->ended_at, sizeof(into->ended_at));
	into->seconds += o->seconds;
	into->failed += o->failed;
	into->other += o->other;
	for (int i = 0; i < o->nwhats; i++)
		count_what(into, o->whats[i].what, o->whats[i].count);
}

static void succeeded(struct db *db)
{
	struct db_outage *o = &db->outage;

	db->outage_on = 0;
	util_iso_now(o->ended_at, sizeof(o->ended_at));
	o->seconds = (double)(util_now_ns() - db->outage_since_ns) / 1e9;
	if (db->outage_ended)
		merge_done(&db->outage_done, o);
	else
		db->outage_done = *o;
	db->outage_ended = 1;
}

void db_outage_note(struct db *db, enum stmt_id id, sqlite3_stmt *st, int rc, const char *what)
{
	int tx = id == ST_BEGIN || id == ST_COMMIT;

	/* BEGIN and COMMIT count as reading for sqlite3_stmt_readonly */
	if (id == ST_ROLLBACK || (!tx && (!st || sqlite3_stmt_readonly(st))))
		return;
	if (id == ST_BEGIN) {
		db->tx_what[0] = '\0';
	} else if (!tx && !db->tx_what[0] && what && !sqlite3_get_autocommit(db->conn)) {
		/* a transaction is named by its first write */
		util_strlcpy(db->tx_what, what, sizeof(db->tx_what));
	}
	if (storage_failure(rc)) {
		const char *label = db->tx_what[0] && (tx || !sqlite3_get_autocommit(db->conn))
					    ? db->tx_what
				    : tx || !what ? "a transaction"
						  : what;
		failed(db, label);
	} else if (rc == SQLITE_DONE && db->outage_on && sqlite3_get_autocommit(db->conn)) {
		succeeded(db);
	}
	if (id == ST_COMMIT)
		db->tx_what[0] = '\0';
}

int db_outage_take(struct db *db, struct db_outage *o)
{
	int ended;

	if (!db)
		return 0;
	pthread_mutex_lock(&db->lock);
	ended = db->outage_ended;
	if (ended)
		*o = db->outage_done;
	db->outage_ended = 0;
	pthread_mutex_unlock(&db->lock);
	return ended;
}

int db_outage_now(struct db *db, struct db_outage *o)
{
	int on;

	if (!db)
		return 0;
	pthread_mutex_lock(&db->lock);
	on = db->outage_on;
	if (on) {
		*o = db->outage;
		o->seconds = (double)(util_now_ns() - db->outage_since_ns) / 1e9;
	}
	pthread_mutex_unlock(&db->lock);
	return on;
}
