/* query: what the named reads share (running a statement into a sink, the
 * baseline lookup), the lookups every command makes, and
 * export's reads. */
#include "db/query/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "db/query/query_sql.h"

int query_run(struct db *db, const char *sql, const struct db_value *p, int np,
	      const struct query_sink *s)
{
	return db_query(db, sql, p, np, s->fn, s->arg, s->err, s->errlen);
}

int query_named_sink(struct db *db, const struct query_schema *sc, const struct query_named *q,
		     const struct db_value *p, int np, const struct query_sink *s)
{
	return query_named_run(db, sc, q, p, np, s->fn, s->arg, s->err, s->errlen);
}

const struct query_baseline *query_baseline_of(const struct query_schema *sc)
{
	static const struct query_baseline by_key = { QS_BASE_KEY_MIBPS, QS_BASE_KEY_CYCLE,
						      QS_BASE_KEY_JOIN };
	static const struct query_baseline by_view = { QS_BASE_VIEW_MIBPS, QS_BASE_VIEW_CYCLE,
						       QS_BASE_VIEW_JOIN };

	return sc->has[QF_BASELINE_ROW] ? &by_key : &by_view;
}

/* ---- lookups ------------------------------------------------------------ */

#define TARGET_LOOKUP_SQL                                                                          \
	"SELECT id, (SELECT group_concat(name, ', ') FROM"                                         \
	" (SELECT name FROM targets ORDER BY name)) AS known"                                      \
	" FROM (SELECT 1) LEFT JOIN targets ON name = ?"

int query_target_lookup(struct db *db, const char *name, const struct query_sink *s)
{
	return query_run(db, TARGET_LOOKUP_SQL,
			 (struct db_value[]){ { .type = name ? DB_TEXT : DB_NULL, .s = name } }, 1,
			 s);
}

int query_any_iteration(struct db *db, int *any, char *err, size_t errlen)
{
	int64_t v;
	int ret =
		query_int(db, "SELECT EXISTS (SELECT 1 FROM iterations)", NULL, 0, &v, err, errlen);

	*any = v != 0;
	return ret;
}

int query_columns(struct db *db, const char *table, const struct query_sink *s)
{
	return query_run(db, "SELECT name FROM pragma_table_info(?) ORDER BY cid",
			 (struct db_value[]){ { .type = DB_TEXT, .s = table } }, 1, s);
}

int query_snapshot(struct db *db, int begin, char *err, size_t errlen)
{
	return db_query(db, begin ? "BEGIN" : "COMMIT", NULL, 0, NULL, NULL, err, errlen);
}

/* ---- export ------------------------------------------------------------- */

int query_export_names(struct db *db, const struct query_sink *s)
{
	return query_run(db,
			 "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')"
			 " AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, name",
			 NULL, 0, s);
}

int query_export_rows(struct db *db, const char *name, const struct query_sink *s)
{
	char *sql = NULL;
	int ret;

	if (strchr(name, '"')) { /* never a name query_export_names lists */
		snprintf(s->err, s->errlen, "no table or view named '%s'", name);
		return -EINVAL;
	}
	if (asprintf(&sql, "SELECT * FROM \"%s\"", name) < 0) {
		snprintf(s->err, s->errlen, "out of memory");
		return -ENOMEM;
	}
	ret = query_run(db, sql, NULL, 0, s);
	free(sql);
	return ret;
}

char *query_export_target_sql(const char *name, enum query_target_key key)
{
	char *sql = NULL;
	int n = -1;

	if (key == QUERY_TARGET_ID)
		n = asprintf(&sql,
			     "SELECT * FROM \"%s\" WHERE target_id ="
			     " (SELECT id FROM targets WHERE name = ?1)",
			     name);
	else if (key == QUERY_TARGET_ITERATION)
		n = asprintf(&sql,
			     "SELECT x.* FROM iterations i JOIN \"%s\" x ON x.iteration_id = i.id"
			     " WHERE i.target_id = (SELECT id FROM targets WHERE name = ?1)"
			     " ORDER BY i.id",
			     name);
	else if (key == QUERY_TARGET_NAME)
		n = asprintf(&sql, "SELECT * FROM \"%s\" WHERE target = ?1", name);
	return n < 0 ? NULL : sql;
}

int query_export_target_rows(struct db *db, const char *name, enum query_target_key key,
			     const char *target, const struct query_sink *s)
{
	struct db_value p = { .type = DB_TEXT, .s = target };
	char *sql;
	int ret;

	if (strchr(name, '"') || key == QUERY_TARGET_NONE) {
		snprintf(s->err, s->errlen,
			 "%s has no target_id, iteration_id or target (name) column", name);
		return -EINVAL;
	}
	if (!(sql = query_export_target_sql(name, key))) {
		snprintf(s->err, s->errlen, "out of memory");
		return -ENOMEM;
	}
	ret = query_run(db, sql, &p, 1, s);
	free(sql);
	return ret;
}
