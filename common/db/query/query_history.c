/* query_history: the iterations one by one (wearmon history) and the
 * alerts (wearmon alerts). A filter left out is left out of the SQL too,
 * so the planner can use the index that the filters given allow. */
#include "db/query/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "db/query/query_int.h"

/* iterations columns already in the lead under another name, or ids */
static const char *const history_skip[] = { "id", "number", "cycle_id", "run_id", "target_id" };
static const char *const history_lead[] = { "id", "target", "cycle", "iteration" };
static const char *const history_tail[] = { "baseline_mibps", "baseline_cycle", "ratio" };

#define ALERT_SEVERITIES "('emerg', 'alert', 'crit', 'err', 'warning', 'notice')"

static int listed(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* The filters given, as " AND ..." with one ? each, and their values. */
struct filters {
	char sql[160];
	struct db_value v[3];
	int n;
};

static void add_filter(struct filters *fl, const char *cond, struct db_value v)
{
	size_t len = strlen(fl->sql);

	snprintf(fl->sql + len, sizeof(fl->sql) - len, " AND %s", cond);
	fl->v[fl->n++] = v;
}

static void history_filters(const struct query_history_filter *f, struct filters *fl)
{
	memset(fl, 0, sizeof(*fl));
	if (f->target)
		add_filter(fl, "t.name = ?", (struct db_value){ .type = DB_TEXT, .s = f->target });
	if (f->cycle)
		add_filter(fl, "c.number = ?", (struct db_value){ .type = DB_INT, .i = f->cycle });
	if (f->since && f->since[0])
		add_filter(fl, "i.started_at >= ?",
			   (struct db_value){ .type = DB_TEXT, .s = f->since });
}

/* Room for the columns of iterations (a few dozen today). */
#define MAX_COLS 256

/* db_row_fn: appends the column name of a pragma_table_info row. */
static int add_name(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct query_history *q = arg;

	/* a column the tail computes for every schema (iterations.ratio,
	 * stored from v21 on) comes once, there */
	if (n < 1 || v[0].type != DB_TEXT ||
	    listed(history_skip, ARRAY_SIZE(history_skip), v[0].s) ||
	    listed(history_tail, ARRAY_SIZE(history_tail), v[0].s))
		return 0;
	if (q->nnames >= (int)ARRAY_SIZE(history_lead) + MAX_COLS)
		return -E2BIG;
	return (q->names[q->nnames] = strdup(v[0].s)) ? (q->nnames++, 0) : -ENOMEM;
}

/* q->names: the lead, every column of iterations but ids (room for 256),
 * the tail. */
static int history_names(struct db *db, struct query_history *q, char *err, size_t errlen)
{
	int ret;

	q->names = calloc(ARRAY_SIZE(history_lead) + ARRAY_SIZE(history_tail) + MAX_COLS,
			  sizeof(*q->names));
	if (!q->names)
		return -ENOMEM;
	for (size_t k = 0; k < ARRAY_SIZE(history_lead); k++)
		if (!(q->names[q->nnames++] = strdup(history_lead[k])))
			return -ENOMEM;
	ret = query_columns(db, "iterations", &(struct query_sink){ add_name, q, err, errlen });
	if (ret)
		return ret;
	for (size_t k = 0; k < ARRAY_SIZE(history_tail); k++)
		if (!(q->names[q->nnames++] = strdup(history_tail[k])))
			return -ENOMEM;
	return 0;
}

/* The statement of q->names for this schema and f. */
static int history_sql(const struct query_schema *sc, const struct query_history_filter *f,
		       struct query_history *q)
{
	const struct query_baseline *b = query_baseline_of(sc);
	int lead = ARRAY_SIZE(history_lead), tail = ARRAY_SIZE(history_tail);
	struct filters fl;
	size_t len = 0;
	FILE *out = open_memstream(&q->sql, &len);

	if (!out)
		return -ENOMEM;
	history_filters(f, &fl);
	fputs("SELECT i.id, t.name AS target, c.number AS cycle, i.number AS iteration", out);
	for (int k = lead; k < q->nnames - tail; k++)
		fprintf(out, ", i.\"%s\"", q->names[k]); /* names from sqlite_master */
	fprintf(out,
		", CASE WHEN i.status = 'done' THEN %s END AS baseline_mibps,"
		" CASE WHEN i.status = 'done' THEN %s END AS baseline_cycle,"
		" CASE WHEN i.status = 'done' THEN i.mibps_avg / %s END AS ratio"
		" FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
		" JOIN targets t ON t.id = i.target_id%s WHERE 1%s ORDER BY ",
		b->mibps, b->cycle, b->mibps, b->join, fl.sql);
	/* by position: a name may be an iterations column, an alias, or both */
	for (int k = 0; f->sort && k < q->nnames; k++)
		if (!strcmp(q->names[k], f->sort + (f->sort[0] == '-'))) {
			fprintf(out, "%d%s, ", k + 1, f->sort[0] == '-' ? " DESC" : "");
			break;
		}
	fputs("t.name, c.number, i.number", out);
	return fclose(out) ? -ENOMEM : 0;
}

/* f->sort names a column of the statement. Returns 0 or -EINVAL with the
 * columns there are in err. */
static int sort_known(const struct query_history_filter *f, const struct query_history *q,
		      char *err, size_t errlen)
{
	const char *name = f->sort ? f->sort + (f->sort[0] == '-') : NULL;
	size_t used;

	for (int k = 0; name && k < q->nnames; k++)
		if (!strcmp(q->names[k], name))
			return 0;
	if (!name)
		return 0;
	used = (size_t)snprintf(err, errlen, "--sort: history has no column \"%s\"; it has", name);
	for (int k = 0; k < q->nnames && used < errlen; k++)
		used += (size_t)snprintf(err + used, errlen - used, " %s", q->names[k]);
	return -EINVAL;
}

int query_history_prepare(struct db *db, const struct query_history_filter *f,
			  struct query_history *q, char *err, size_t errlen)
{
	struct query_schema sc;
	int ret;

	memset(q, 0, sizeof(*q));
	ret = query_schema_of(db, &sc, err, errlen);
	if (!ret)
		ret = history_names(db, q, err, errlen);
	if (!ret)
		ret = sort_known(f, q, err, errlen);
	if (!ret)
		ret = history_sql(&sc, f, q);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (ret == -E2BIG)
		snprintf(err, errlen, "iterations has too many columns");
	if (ret)
		query_history_free(q);
	return ret;
}

int query_history_run(struct db *db, const struct query_history *q,
		      const struct query_history_filter *f, const struct query_sink *s)
{
	struct filters fl;

	history_filters(f, &fl);
	return query_run(db, q->sql, fl.v, fl.n, s);
}

void query_history_free(struct query_history *q)
{
	for (int k = 0; q->names && k < q->nnames; k++)
		free(q->names[k]);
	free(q->names);
	free(q->sql);
	memset(q, 0, sizeof(*q));
}

/* ---- alerts ------------------------------------------------------------- */

#define ALERTS_SQL                                                                                 \
	"SELECT e.id, e.at, t.name AS target, e.severity, e.kind, c.number AS cycle,"              \
	" i.number AS iteration, e.iteration_id, e.value, e.baseline, e.message,"                  \
	" e.message_id"                                                                            \
	" FROM events e"                                                                           \
	" LEFT JOIN targets t ON t.id = e.target_id"                                               \
	" LEFT JOIN cycles c ON c.id = e.cycle_id"                                                 \
	" LEFT JOIN iterations i ON i.id = e.iteration_id"                                         \
	" WHERE e.severity IN " ALERT_SEVERITIES

int query_alerts(struct db *db, const char *target, const char *since, const struct query_sink *s)
{
	struct filters fl = { 0 };
	char sql[sizeof(ALERTS_SQL) + sizeof(fl.sql) + 32];

	if (target)
		add_filter(&fl, "t.name = ?", (struct db_value){ .type = DB_TEXT, .s = target });
	if (since && since[0])
		add_filter(&fl, "e.at >= ?", (struct db_value){ .type = DB_TEXT, .s = since });
	snprintf(sql, sizeof(sql), "%s%s ORDER BY e.at, e.id", ALERTS_SQL, fl.sql);
	return query_run(db, sql, fl.v, fl.n, s);
}

/* query_alerts with both filters, as the plan tests read it */
const struct query_named query_alerts_queries[1] = {
	{ "alerts --target --since", ALERTS_SQL " AND t.name = ? AND e.at >= ? ORDER BY e.at, e.id",
	  QF_NONE, NULL, 0 },
};

char *query_history_target_sql(const struct query_schema *sc)
{
	static const char *names[ARRAY_SIZE(history_lead) + ARRAY_SIZE(history_tail)];
	struct query_history q = { .names = (char **)names, .nnames = ARRAY_SIZE(names) };
	struct query_history_filter f = { .target = "t", .since = "s" };

	for (size_t k = 0; k < ARRAY_SIZE(history_lead); k++)
		names[k] = history_lead[k];
	for (size_t k = 0; k < ARRAY_SIZE(history_tail); k++)
		names[ARRAY_SIZE(history_lead) + k] = history_tail[k];
	return history_sql(sc, &f, &q) ? NULL : q.sql;
}
