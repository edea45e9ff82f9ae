/* query_named: a read-only query with a name, its SQL for the current
 * schema and, where an older schema lacks a column it reads, the same
 * query for that schema (a chain); run through db_query. Owns no connection; never writes. */
#ifndef WEARMON_QUERY_NAMED_H
#define WEARMON_QUERY_NAMED_H

#include <stddef.h>

#include "db/db.h"

struct dbq_named {
	const char *name;            /* what the query reads, for messages and tests */
	const char *sql;             /* for a database that has table.column */
	const char *table, *column;  /* NULL: every schema this build reads */
	const struct dbq_named *old; /* the same query for one that lacks it */
};

/* Run q with params, each row to fn (db_row_fn: rows stream, nothing is
 * kept). Returns 0, fn's nonzero value, or -errno with a message naming
 * the query in err. */
int dbq_run(struct db *db, const struct dbq_named *q, const struct db_value *params, int nparams,
	    db_row_fn fn, void *arg, char *err, size_t errlen);

/* The SQL that dbq_run would run for q on db into *sql. Returns 0 or
 * -errno with a message in err. */
int dbq_sql(struct db *db, const struct dbq_named *q, const char **sql, char *err, size_t errlen);

/* What one point of a sample chart or table is (column `point`): a
 * sample lasts the target's sample_interval (wearmon.conf(5), 1 s by
 * default; the last of a phase up to twice that, common/db/schema.md). */
#define QC_POINT_SAMPLE "sample (one sample_interval)"
#define QC_POINT_MINUTE "per-minute rollup: min/avg/max"
#define QC_POINT_MINUTE_MAX "per-minute rollup: the highest 1-second value"

/* The series of the cycles chart (and their names in the report). */
#define QC_SERIES_MAX "highest sample"
#define QC_SERIES_AVG "average of the sizes"
#define QC_SERIES_MIN "lowest sample"

#endif
