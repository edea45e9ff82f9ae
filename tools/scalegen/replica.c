/* replica: copies of one target's history under ids of their own, for
 * scalegen --replicate (tools/scalegen/README.md, "Targets copied"). It
 * reads the tables and their references from the schema itself, so a
 * column added later is copied too; it knows nothing of the campaign. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "replica.h"

#define MAX_TABLES 32 /* tables a copy reaches */
#define SQL_MAX 16384 /* one table's copy statement */

struct table {
	char name[64];
	int has_id;  /* an id column */
	int64_t off; /* added to its ids in copy k: (k - 1) x its largest id */
};

struct schema {
	int n;
	struct table t[MAX_TABLES];
};

/* One copy statement being built: the columns and what each becomes. */
struct copy {
	const struct schema *sc;
	const struct table *tab;
	int64_t src, dst, k; /* the source's target id, the copy's, and copy k >= 1 */
	const char *src_name, *dst_name;
	char cols[SQL_MAX], sel[SQL_MAX], where[256];
};

static int add_table(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct schema *sc = arg;

	(void)n, (void)names;
	if (sc->n == MAX_TABLES)
		return -E2BIG;
	util_strlcpy(sc->t[sc->n++].name, v[0].s, sizeof(sc->t[0].name));
	return 0;
}

static int keep_int(void *arg, int n, const struct db_value *v, const char *const *names)
{
	(void)n, (void)names;
	*(int64_t *)arg = v[0].type == DB_NULL ? 0 : v[0].i;
	return 0;
}

static const struct table *table_named(const struct schema *sc, const char *name)
{
	for (int i = 0; i < sc->n; i++)
		if (strcmp(sc->t[i].name, name) == 0)
			return &sc->t[i];
	return NULL;
}

/* The tables in creation order (a table refers only to earlier ones) and
 * the largest id of each that has one. */
static int read_schema(struct db *db, struct schema *sc)
{
	char sql[256], err[512];
	int ret = db_query(db,
			   "SELECT name FROM sqlite_master WHERE type = 'table'"
			   " AND name NOT LIKE 'sqlite%' ORDER BY rowid",
			   NULL, 0, add_table, sc, err, sizeof(err));

	for (int i = 0; ret == 0 && i < sc->n; i++) {
		struct db_value p = { .type = DB_TEXT, .s = sc->t[i].name };
		int64_t has = 0;
		ret = db_query(db, "SELECT count(*) FROM pragma_table_info(?) WHERE name = 'id'",
			       &p, 1, keep_int, &has, err, sizeof(err));
		sc->t[i].has_id = has > 0;
		snprintf(sql, sizeof(sql), "SELECT max(id) FROM \"%s\"", sc->t[i].name);
		if (ret == 0 && has)
			ret = db_query(db, sql, NULL, 0, keep_int, &sc->t[i].off, err, sizeof(err));
	}
	if (ret)
		fprintf(stderr, "scalegen: reading the schema: %s\n", err);
	return ret;
}

static void append(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char *buf, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + len, SQL_MAX - len, fmt, ap);
	va_end(ap);
}

/* What column c (referring to table ref, or NULL) of a copied row becomes. */
static void column_value(struct copy *c, const char *col, const char *ref)
{
	const struct table *r = ref ? table_named(c->sc, ref) : NULL;
	const char *tab = c->tab->name;
	int64_t it_off = table_named(c->sc, "iterations")->off * c->k;

	if (strcmp(col, "id") == 0 && c->tab->has_id)
		append(c->sel, "id + %lld", (long long)(c->tab->off * c->k));
	else if (ref && strcmp(ref, "targets") == 0)
		append(c->sel, "%lld", (long long)c->dst);
	else if (r && r->has_id && strcmp(ref, "runs") != 0)
		append(c->sel, "\"%s\" + %lld", col, (long long)(r->off * c->k));
	else if (strcmp(col, "baseline_iteration_id") == 0)
		append(c->sel, "CASE WHEN %s > 0 THEN %s + %lld ELSE %s END", col, col,
		       (long long)it_off, col);
	else if (strcmp(tab, "events") == 0 && strcmp(col, "message") == 0)
		append(c->sel, "replace(message, 'target %s:', 'target %s:')", c->src_name,
		       c->dst_name);
	else if (strcmp(tab, "events") == 0 && strcmp(col, "data") == 0)
		append(c->sel,
		       "CASE WHEN json_valid(data) AND json_extract(data, '$.baseline_iteration_id')"
		       " > 0 THEN json_set(data, '$.baseline_iteration_id', json_extract(data,"
		       " '$.baseline_iteration_id') + %lld) ELSE data END",
		       (long long)it_off);
	else
		append(c->sel, "\"%s\"", col);
}

/* Each column of the copied table: its name, and which of ssd1's rows
 * are copied (by target, iteration or cycle). */
static int add_column(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct copy *c = arg;
	const char *col = v[0].s, *ref = v[1].type == DB_TEXT ? v[1].s : NULL;

	(void)n, (void)names;
	append(c->cols, "%s\"%s\"", c->cols[0] ? ", " : "", col);
	if (c->sel[0])
		append(c->sel, ", ");
	column_value(c, col, ref);
	if (!ref)
		return 0;
	if (strcmp(ref, "targets") == 0)
		snprintf(c->where, sizeof(c->where), "WHERE \"%s\" = %lld", col, (long long)c->src);
	else if (!c->where[0] && (strcmp(ref, "iterations") == 0 || strcmp(ref, "cycles") == 0))
		snprintf(c->where, sizeof(c->where),
			 "WHERE \"%s\" IN (SELECT id FROM %s WHERE target_id = %lld)", col, ref,
			 (long long)c->src);
	return 0;
}

/* The statement copying the source's rows of one table to copy k, in
 * *sql (malloc'd), or NULL when the table holds no target's rows (runs),
 * is the targets' own (written by db_target_upsert) or progress (written
 * by db_progress for every target). */
static int copy_sql(struct db *db, const struct schema *sc, const struct table *tab,
		    const struct replica_target *from, const struct replica_target *to, int k,
		    char **sql)
{
	struct copy *c = calloc(1, sizeof(*c));
	struct db_value p = { .type = DB_TEXT, .s = tab->name };
	char err[512];
	int ret;

	*sql = NULL;
	if (!c)
		return -ENOMEM;
	*c = (struct copy){ .sc = sc,
			    .tab = tab,
			    .src = from->id,
			    .dst = to->id,
			    .k = k,
			    .src_name = from->name,
			    .dst_name = to->name };
	ret = db_query(db,
		       "SELECT p.name, f.\"table\" FROM pragma_table_info(?1) p"
		       " LEFT JOIN pragma_foreign_key_list(?1) f ON f.\"from\" = p.name"
		       " ORDER BY p.cid",
		       &p, 1, add_column, c, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: the columns of %s: %s\n", tab->name, err);
	if (ret == 0 && c->where[0] && strcmp(tab->name, "targets") != 0 &&
	    strcmp(tab->name, "progress") != 0 && (*sql = malloc(3 * SQL_MAX)))
		snprintf(*sql, 3 * SQL_MAX, "INSERT INTO \"%s\" (%s) SELECT %s FROM \"%s\" %s",
			 tab->name, c->cols, c->sel, tab->name, c->where);
	free(c);
	return ret;
}

/* Copy k of the source's rows, in one transaction. */
static int replicate_one(struct db *db, const struct schema *sc, const struct replica_target *from,
			 const struct replica_target *to, int k)
{
	const char *sqls[MAX_TABLES];
	const struct db_value *pp[MAX_TABLES] = { NULL };
	int np[MAX_TABLES] = { 0 }, n = 0, ret = 0;
	char *own[MAX_TABLES];
	char err[512];

	for (int i = 0; ret == 0 && i < sc->n; i++) {
		ret = copy_sql(db, sc, &sc->t[i], from, to, k, &own[n]);
		if (ret == 0 && own[n])
			sqls[n] = own[n], n++;
	}
	if (ret == 0 && (ret = db_write(db, sqls, pp, np, n, err, sizeof(err))))
		fprintf(stderr, "scalegen: copying %s to %s: %s\n", from->name, to->name, err);
	for (int i = 0; i < n; i++)
		free(own[i]);
	return ret;
}

int replica_copy(struct db *db, const struct replica_target *from, const struct replica_target *to,
		 int n)
{
	struct schema sc = { 0 };
	int ret = read_schema(db, &sc);

	for (int k = 1; ret == 0 && k <= n; k++)
		ret = replicate_one(db, &sc, from, &to[k - 1], k);
	return ret;
}
