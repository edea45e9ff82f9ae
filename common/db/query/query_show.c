/* query_show: everything about one iteration (wearmon show): its row, its
 * samples, the health snapshots and events around it. Each reads by the
 * iteration's (or its cycle's) id, so its cost is that iteration's rows. */
#include "db/query/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/query/query_int.h"

#define INT_PARAM(v) ((struct db_value){ .type = DB_INT, .i = (v) })

char *query_show_iteration_sql(const struct query_schema *sc)
{
	const struct query_baseline *b = query_baseline_of(sc);
	char *sql = NULL;

	if (asprintf(&sql,
		     "SELECT i.*, t.name AS target, t.device, t.kind AS device_kind,"
		     " c.number AS cycle, %s AS baseline_mibps, %s AS baseline_cycle,"
		     " %s AS nsizes"
		     " FROM iterations i"
		     " JOIN cycles c ON c.id = i.cycle_id"
		     " JOIN targets t ON t.id = i.target_id%s WHERE i.id = ?",
		     b->mibps, b->cycle, query_plan_nsizes(sc), b->join) < 0)
		return NULL;
	return sql;
}

/* Runs the statement build makes for this database's schema. */
static int run_built(struct db *db, char *(*build)(const struct query_schema *sc),
		     const struct db_value *p, int np, const struct query_sink *s)
{
	struct query_schema sc;
	char *sql;
	int ret = query_schema_of(db, &sc, s->err, s->errlen);

	if (ret)
		return ret;
	sql = build(&sc);
	if (!sql) {
		snprintf(s->err, s->errlen, "out of memory");
		return -ENOMEM;
	}
	ret = query_run(db, sql, p, np, s);
	free(sql);
	return ret;
}

int query_show_iteration(struct db *db, int64_t id, const struct query_sink *s)
{
	return run_built(db, query_show_iteration_sql, (struct db_value[]){ INT_PARAM(id) }, 1, s);
}

#define PHASES_SQL                                                                                 \
	"SELECT phase, count(*) AS n, max(t_ms) AS t_ms,"                                          \
	" min(mibps) AS lo, avg(mibps) AS mean, max(mibps) AS hi,"                                 \
	" avg(iops) AS iops, max(lat_p99_us) AS p99"                                               \
	" FROM samples WHERE iteration_id = ? GROUP BY phase"                                      \
	" ORDER BY phase = 'measure'"
#define TRACE_SQL                                                                                  \
	"SELECT phase, t_ms, mibps FROM samples"                                                   \
	" WHERE iteration_id = ? ORDER BY phase = 'measure', t_ms"
#define SAMPLES_SQL                                                                                \
	"SELECT * FROM samples WHERE iteration_id = ?"                                             \
	" ORDER BY phase = 'measure', t_ms"
#define HEALTH_BY_IT_SQL "SELECT * FROM health WHERE iteration_id = ?"
#define HEALTH_BY_CYCLE_SQL "SELECT * FROM health WHERE cycle_id = ? ORDER BY id"
#define EVENTS_WHERE                                                                               \
	" FROM events WHERE iteration_id = ?1 OR (cycle_id = ?2 AND iteration_id IS NULL)"         \
	" ORDER BY at, id"
#define EVENTS_SQL                                                                                 \
	"SELECT at, severity, kind, message, iteration_id IS NULL AS of_cycle" EVENTS_WHERE
#define EVENTS_ALL_SQL "SELECT *" EVENTS_WHERE

char *query_show_phases_sql(const struct query_schema *sc)
{
	return strdup(PHASES_SQL);
}

char *query_show_trace_sql(const struct query_schema *sc)
{
	return strdup(TRACE_SQL);
}

char *query_show_samples_sql(const struct query_schema *sc)
{
	return strdup(SAMPLES_SQL);
}

char *query_show_health_sql(const struct query_schema *sc)
{
	return strdup(HEALTH_BY_CYCLE_SQL);
}

char *query_show_events_sql(const struct query_schema *sc)
{
	return strdup(EVENTS_ALL_SQL);
}

int query_show_sample_phases(struct db *db, int64_t id, const struct query_sink *s)
{
	return query_run(db, PHASES_SQL, (struct db_value[]){ INT_PARAM(id) }, 1, s);
}

int query_show_sample_trace(struct db *db, int64_t id, const struct query_sink *s)
{
	return query_run(db, TRACE_SQL, (struct db_value[]){ INT_PARAM(id) }, 1, s);
}

int query_show_samples(struct db *db, int64_t id, const struct query_sink *s)
{
	return query_run(db, SAMPLES_SQL, (struct db_value[]){ INT_PARAM(id) }, 1, s);
}

/* A sink that counts the rows it passes on. */
struct counted {
	const struct query_sink *to;
	long n;
};

static int count_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct counted *c = arg;

	c->n++;
	return c->to->fn ? c->to->fn(c->to->arg, n, v, names) : 0;
}

int query_show_health(struct db *db, int64_t id, int64_t cycle_id, const struct query_sink *s)
{
	struct counted c = { s, 0 };
	struct query_sink counting = { count_row, &c, s->err, s->errlen };
	int by_it = 0, by_cycle = 0;
	int ret = query_has_column(db, "health", "iteration_id", &by_it, s->err, s->errlen);

	if (!ret)
		ret = query_has_column(db, "health", "cycle_id", &by_cycle, s->err, s->errlen);
	if (!ret && by_it)
		ret = query_run(db, HEALTH_BY_IT_SQL, (struct db_value[]){ INT_PARAM(id) }, 1,
				&counting);
	if (!ret && c.n == 0 && by_cycle)
		ret = query_run(db, HEALTH_BY_CYCLE_SQL, (struct db_value[]){ INT_PARAM(cycle_id) },
				1, s);
	return ret;
}

int query_show_events(struct db *db, int64_t id, int64_t cycle_id, const struct query_sink *s)
{
	return query_run(db, EVENTS_SQL, (struct db_value[]){ INT_PARAM(id), INT_PARAM(cycle_id) },
			 2, s);
}

int query_show_events_all(struct db *db, int64_t id, int64_t cycle_id, const struct query_sink *s)
{
	return query_run(db, EVENTS_ALL_SQL,
			 (struct db_value[]){ INT_PARAM(id), INT_PARAM(cycle_id) }, 2, s);
}
