/* db_merge: copy another machine's history into this database (wearmon
 * merge), each source target as "HOST/NAME". */
#ifndef WEARMON_DB_MERGE_H
#define WEARMON_DB_MERGE_H

#include <stddef.h>

struct db;

/* What one merge brought. */
struct db_merge_result {
	char host[256];          /* the source's host name (latest run) */
	int targets;             /* targets copied, each as HOST/NAME */
	int unchanged;           /* of them, already here with the same rows */
	long cycles, iterations; /* rows they now have here */
};

/* Copy every target of the database at src_path into db (open for
 * writing) as "HOST/NAME" (rename, when not NULL, is the HOST), in one
 * transaction; runs are kept once each (host, start, pid). Each target's
 * source is recorded in db's merge_sources table: the same rows again
 * change nothing, a newer copy of the same database replaces what the
 * earlier merge brought, another database with the same HOST/NAME is
 * refused. Returns 0, -ENOTSUP (schema newer than DB_SCHEMA_VERSION),
 * -EINVAL (not a wearmon database), -EEXIST (HOST/NAME brought by another
 * database) or -errno, with a message naming src_path in err. */
int db_merge(struct db *db, const char *src_path, const char *rename, struct db_merge_result *r,
	     char *err, size_t errlen);

/* Whether db may be a merge's output: not a daemon's own database (a
 * target not named HOST/NAME, or runs without targets). Returns 0,
 * -EPERM (err says why) or -errno. */
int db_merge_check_out(struct db *db, char *err, size_t errlen);

#endif
