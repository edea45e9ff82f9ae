/* query: what the named reads share (running a statement into a sink, the
 * schema facts, the baseline lookup), the lookups every command makes, and
 * export's reads. */
#include "db/query/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

int query_run(struct db *db, const char *sql, const struct db_value *p, int np,
	      const struct query_sink *s)
{
	return db_query(db, sql, p, np, s->fn, s->arg, s->err, s->errlen);
}

/* db_row_fn: the first column of the first row as an integer. */
static int first_int(void *arg, int n, const struct db_value *v, const char *const *names)
{
	int64_t *out = arg;

	*out = n > 0 && (v[0].type == DB_INT || v[0].type == DB_REAL) ? v[0].i : 0;
	return 0;
}

/* One integer read by sql into *out (0 when no row). */
static int query_int(struct db *db, const char *sql, const struct db_value *p, int np, int64_t *out,
		     char *err, size_t errlen)
{
	*out = 0;
	return db_query(db, sql, p, np, first_int, out, err, errlen);
}

int query_schema_of(struct db *db, struct query_schema *sc, char *err, size_t errlen)
{
	int64_t v = 0;
	int phase = 0, plan = 0, mono = 0, cplan = 0;
	int ret = query_int(db, "PRAGMA user_version", NULL, 0, &v, err, errlen);

	if (!ret)
		ret = query_has_column(db, "progress", "phase", &phase, err, errlen);
	if (!ret)
		ret = query_has_column(db, "progress", "nsizes", &plan, err, errlen);
	if (!ret)
		ret = query_has_column(db, "progress", "iteration_seconds", &mono, err, errlen);
	if (!ret)
		ret = query_has_column(db, "cycles", "nsizes", &cplan, err, errlen);
	if (ret)
		return ret;
	sc->version = (int)v;
	sc->progress = mono ? 9 : plan ? 8 : phase ? 7 : 0;
	sc->cycle_plan = cplan;
	return 0;
}

const struct query_baseline *query_baseline_of(const struct query_schema *sc)
{
	/* Two LEFT JOINs give what the view's inner joins give: a baseline
	 * row whose cycle is missing counts as none. */
	static const struct query_baseline by_key = {
		.mibps = "CASE WHEN bc.id IS NOT NULL THEN bi.mibps_avg END",
		.cycle = "bc.number",
		.join = " LEFT JOIN iterations bi ON bi.id = i.baseline_iteration_id"
			" LEFT JOIN cycles bc ON bc.id = bi.cycle_id",
	};
	static const struct query_baseline by_view = {
		.mibps = "b.baseline_mibps",
		.cycle = "b.baseline_cycle",
		.join = " LEFT JOIN iteration_baseline b ON b.iteration_id = i.id",
	};

	return sc->version >= 9 ? &by_key : &by_view;
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

int query_has_column(struct db *db, const char *table, const char *column, int *has, char *err,
		     size_t errlen)
{
	int64_t n;
	int ret = query_int(db, "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?",
			    (struct db_value[]){ { .type = DB_TEXT, .s = table },
						 { .type = DB_TEXT, .s = column } },
			    2, &n, err, errlen);

	*has = n > 0;
	return ret;
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
