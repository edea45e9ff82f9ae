/* query_named: runs a named query, choosing its SQL for the database's
 * schema by one probe of the column the current SQL needs. */
#include "db/query/query_named.h"

#include <stdio.h>
#include <string.h>

static int count_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	*(int *)arg = n > 0 && v[0].type == DB_INT && v[0].i > 0;
	return 0;
}

int dbq_sql(struct db *db, const struct dbq_named *q, const char **sql, char *err, size_t errlen)
{
	const struct db_value p[] = { { .type = DB_TEXT, .s = q->table },
				      { .type = DB_TEXT, .s = q->column } };
	int has = 1, ret = 0;

	if (q->old && q->table && q->column)
		ret = db_query(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", p,
			       2, count_row, &has, err, errlen);
	if (ret || has) {
		*sql = q->sql;
		return ret;
	}
	return dbq_sql(db, q->old, sql, err, errlen);
}

int dbq_run(struct db *db, const struct dbq_named *q, const struct db_value *params, int nparams,
	    db_row_fn fn, void *arg, char *err, size_t errlen)
{
	const char *sql = NULL;
	int ret = dbq_sql(db, q, &sql, err, errlen);

	if (!ret)
		ret = db_query(db, sql, params, nparams, fn, arg, err, errlen);
	if (ret < 0 && err && errlen && err[0]) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s (query %s)", err, q->name);
		snprintf(err, errlen, "%s", msg);
	}
	return ret;
}
