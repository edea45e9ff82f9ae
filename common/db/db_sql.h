/* db_sql: the generic doors, for the CLI's reads and for tests: db_query
 * runs one read-only statement of the caller's SQL, db_write the caller's
 * writing statements in one transaction; both check the bind count. */
#ifndef WEARMON_DB_SQL_H
#define WEARMON_DB_SQL_H

#include <stddef.h>
#include <stdint.h>

struct db;

enum db_type { DB_NULL, DB_INT, DB_REAL, DB_TEXT };

/* A query parameter or result column. Results fill both i and r for numbers;
 * s (DB_TEXT) is valid only during the row callback. */
struct db_value {
	enum db_type type;
	int64_t i;
	double r;
	const char *s;
};

/* Called with each result row (n columns and their names). Return 0 to go
 * on; anything else stops the query and becomes db_query's result. */
typedef int (*db_row_fn)(void *arg, int n, const struct db_value *v, const char *const *names);

/* Run one read-only SQL statement with params bound to its ? in order,
 * calling fn per row. A statement that would write is refused (-EPERM).
 * Returns 0, fn's first nonzero value, or -errno with a message in err. */
int db_query(struct db *db, const char *sql, const struct db_value *params, int nparams,
	     db_row_fn fn, void *arg, char *err, size_t errlen);

/* SQLite VM steps that every db_query on db has taken so far: a measure of
 * the work a read did that does not depend on the machine's speed. */
uint64_t db_query_steps(struct db *db);

/* Run nstmts writing statements (sqls[k] with nparams[k] params[k]) in one
 * transaction: all or nothing. Returns 0 or -errno with a message in err. */
int db_write(struct db *db, const char *const *sqls, const struct db_value *const *params,
	     const int *nparams, int nstmts, char *err, size_t errlen);

#endif
