/* integrity: wearmond's background check of its database file. A thread
 * at idle CPU and I/O priority reads the whole file with PRAGMA
 * integrity_check, one table per read transaction (db_check.c), after
 * start and then every INTEGRITY_EVERY; the main loop takes the verdict
 * and decides what follows. Never writes. */
#ifndef WEARMON_INTEGRITY_H
#define WEARMON_INTEGRITY_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "db/db_check.h"

#define INTEGRITY_EVERY (7 * 86400.0) /* seconds between checks */
#define INTEGRITY_PAUSE_MS 100        /* rest between two tables */
#define INTEGRITY_JOIN_WAIT 0.1       /* seconds a stop waits for the thread */

/* What integrity_take hands over once a check has ended. */
struct integrity_verdict {
	int ret; /* 0 ok, -EBADMSG damaged, else -errno: could not check */
	struct db_check_result r;
	char err[512];  /* when ret is neither 0 nor -EBADMSG */
	double seconds; /* how long the check took */
};

/* What the thread and the main loop share: on the heap, freed by the last
 * of the two to let go (a stop may leave the thread behind, see
 * integrity_stop). */
struct integrity_shared {
	char path[PATH_MAX];
	atomic_int refs;
	atomic_int stop;      /* asks the thread to end */
	pthread_mutex_t lock; /* with wake: the thread's waits end at a stop */
	pthread_cond_t wake;
	struct db_check_ctl ctl; /* ends a check under way */
	atomic_int ready;        /* a verdict waits in v */
	struct integrity_verdict v;
};

struct integrity {
	pthread_t thread;
	int started;
	struct integrity_shared *sh;
};

/* Start the checking thread on the database at path. Returns 0 or -errno. */
int integrity_start(struct integrity *g, const char *path);

/* Copy a new verdict into v. Returns 1 (one was waiting) or 0. */
int integrity_take(struct integrity *g, struct integrity_verdict *v);

/* Ask the thread to end (a check under way is interrupted) and wait for
 * it, at most INTEGRITY_JOIN_WAIT: a read of the database at the idle I/O
 * class can wait for the disk longer than a stop may take, and the
 * thread, which writes nothing, is then left to end with the process. */
void integrity_stop(struct integrity *g);

#endif
