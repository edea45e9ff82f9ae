/* outage: what a database that could not be written for a while (disk
 * full, read-only, I/O errors) leaves behind: each spell stored as a
 * db-write-failed event once writes succeed again, and the run's end
 * written patiently before the process exits. Decides nothing about the
 * targets. */
#ifndef WEARMON_OUTAGE_H
#define WEARMON_OUTAGE_H

#include <stdatomic.h>
#include <stdint.h>

#include "db/db.h"

struct outage {
	int pending;            /* a spell that ended, not stored yet */
	struct db_outage spell; /* when pending */
};

/* Store the spell of failing writes that ended last (db_outage_take) as a
 * db-write-failed event of run_id, and log that the database is writable
 * again. One that cannot be stored yet is kept for the next call. Call it
 * about once a second from the main thread. Returns 0, or -errno while a
 * spell waits to be stored. */
int outage_record(struct outage *o, struct db *db, const char *db_path, int64_t run_id);

/* Record the end of run_id (exit status and reason), trying again each
 * second for up to patience seconds while the database cannot be written
 * (a stop asked for during the wait, *stop turning nonzero, ends it); the
 * watchdog is fed meanwhile. Then stores the spell that ended
 * (outage_record), or logs the one the database could not be told of.
 * Returns 0 or -errno (logged). */
int outage_run_end(struct outage *o, struct db *db, const char *db_path, int64_t run_id, int status,
		   const char *reason, double patience, const atomic_int *stop);

#endif
