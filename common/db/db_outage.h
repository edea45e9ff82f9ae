/* db_outage: the spells in which the database could not be written (disk
 * full, read-only, I/O errors), kept from each statement's outcome so that
 * the daemon can store a spell once writes succeed again. */
#ifndef WEARMON_DB_OUTAGE_H
#define WEARMON_DB_OUTAGE_H

struct db;

#define DB_OUTAGE_WHATS 8

/* A spell in which the database could not be written (disk full,
 * read-only, I/O errors; a lock held by another program is waited for and
 * is no such spell): from the first write that failed to the next one that
 * succeeded. */
struct db_outage {
	char started_at[32], ended_at[32]; /* ISO 8601 UTC; ended_at "" while on */
	double seconds;                    /* how long, so far while on */
	long failed;                       /* writes that failed */
	char error[200];                   /* SQLite's text of the first failure */
	int nwhats;
	struct {
		char what[48]; /* e.g. "store iteration results" */
		long count;
	} whats[DB_OUTAGE_WHATS]; /* what could not be written, how often */
	long other;               /* failures of further kinds */
};

/* The spell that ended since the last call (two that ended in between are
 * merged). Returns 1 with it in *o, 0 when none ended. */
int db_outage_take(struct db *db, struct db_outage *o);

/* The spell going on now. Returns 1 with it in *o, 0 when writes succeed. */
int db_outage_now(struct db *db, struct db_outage *o);

#endif
