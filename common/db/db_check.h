/* db_check: the integrity of a database file read whole (PRAGMA
 * integrity_check or quick_check) on its own read-only connection, for
 * wearmond's background check and `wearmon check`. Never writes. */
#ifndef WEARMON_DB_CHECK_H
#define WEARMON_DB_CHECK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#define DB_CHECK_PROBLEMS 10 /* problems reported at most */

/* Lets another thread end a running check at once (db_check_interrupt),
 * even inside one large table. Zero it, then db_check_ctl_init. */
struct db_check_ctl {
	pthread_mutex_t lock;
	void *conn; /* the check's connection while it runs */
	int stop;
};

void db_check_ctl_init(struct db_check_ctl *ctl);
void db_check_ctl_fini(struct db_check_ctl *ctl);

/* End the check that uses ctl (now or when it starts): it returns -EINTR. */
void db_check_interrupt(struct db_check_ctl *ctl);

struct db_check_opts {
	int quick;                /* quick_check (no index contents) */
	int stepwise;             /* one table and its indexes per read transaction,
				   so that a writer's WAL can be checkpointed between
				   them; skips the whole-file page accounting */
	unsigned pause_ms;        /* stepwise: rest between tables */
	struct db_check_ctl *ctl; /* may be NULL */
};

struct db_check_result {
	int tables;                          /* tables checked */
	int problems;                        /* problem lines (up to DB_CHECK_PROBLEMS) */
	char first[DB_CHECK_PROBLEMS * 160]; /* the first problems, "; " between */
};

/* Check the database at path. Returns 0 (no problem), -EBADMSG (damaged:
 * r says where), -EINTR (stopped), or -errno when the file cannot be read
 * (err names it). */
int db_check_file(const char *path, const struct db_check_opts *o, struct db_check_result *r,
		  char *err, size_t errlen);

#endif
