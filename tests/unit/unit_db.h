/* unit_db.h: a private directory (unit_tmp.h) holding a database of the
 * current schema, made by db_open and closed again, for the tests that
 * read one. Include after unit.h (or cmocka.h). */
#ifndef WEARMON_UNIT_DB_H
#define WEARMON_UNIT_DB_H

#include <stdio.h>

#include "db/db.h"
#include "unit_tmp.h"

struct unit_db {
	char dir[64];   /* /tmp/wearmon-test-NAME.XXXXXX, removed whole */
	char path[128]; /* dir/history.db */
};

/* Make u's directory and database. Returns 0, or -1 with the reason on
 * stderr (the directory, if made, stays for unit_db_remove). */
static inline int unit_db_make(struct unit_db *u, const char *name)
{
	struct db *db = NULL;
	char err[512];

	if (unit_tmpdir(u->dir, sizeof(u->dir), name)) {
		fprintf(stderr, "unit_db_make: no directory for %s\n", name);
		u->dir[0] = '\0';
		return -1;
	}
	snprintf(u->path, sizeof(u->path), "%s/history.db", u->dir);
	if (db_open(u->path, 0, &db, err, sizeof(err)) != 0) {
		fprintf(stderr, "unit_db_make: %s: %s\n", u->path, err);
		return -1;
	}
	db_close(db);
	return 0;
}

/* Remove u's directory and everything in it. */
static inline void unit_db_remove(struct unit_db *u)
{
	if (u->dir[0])
		unit_rmtree(u->dir);
}

#endif
