/* query_show: everything about one iteration (wearmon show): its row, its
 * samples, the health snapshots and events around it. Each reads by the
 * iteration's (or its cycle's) id, so its cost is that iteration's rows. */
#include "db/query/query.h"

#include "db/query/query_int.h"
#include "db/query/query_sql.h"

/* nsizes: the plan of the iteration's cycle (QS_PLAN_NSIZES_CYCLE) */
#define ITERATION_SQL(base_mibps, base_cycle, base_join, nsizes)                                   \
	"SELECT i.*, t.name AS target, t.device, t.kind AS device_kind,"                           \
	" c.number AS cycle, " base_mibps " AS baseline_mibps, " base_cycle " AS baseline_cycle,"  \
	" " nsizes " AS nsizes"                                                                    \
	" FROM iterations i"                                                                       \
	" JOIN cycles c ON c.id = i.cycle_id"                                                      \
	" JOIN targets t ON t.id = i.target_id" base_join " WHERE i.id = ?"

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
/* the cause and evidence of its crash and collapse alerts */
#define EVIDENCE_SQL                                                                               \
	"SELECT " QS_EVIDENCE_COLS " FROM events e WHERE e.iteration_id = ?1"                      \
	" AND e.kind IN " QS_EVIDENCE_KINDS " AND json_valid(e.data) ORDER BY e.at, e.id"

#define ITERATION_KEY(nsizes)                                                                      \
	ITERATION_SQL(QS_BASE_KEY_MIBPS, QS_BASE_KEY_CYCLE, QS_BASE_KEY_JOIN, nsizes)

/* The chain of the iteration: the plan from its cycle (schema 19), from
 * progress (12), from the rows with the baseline by key (9), then through
 * the view. */
static const struct query_named iteration_view = {
	"show: the iteration (before schema 9)",
	ITERATION_SQL(QS_BASE_VIEW_MIBPS, QS_BASE_VIEW_CYCLE, QS_BASE_VIEW_JOIN, QS_ROWS_NSIZES),
	QF_NONE, NULL, 1
};
static const struct query_named iteration_rows = { "show: the iteration (before progress 8)",
						   ITERATION_KEY(QS_ROWS_NSIZES), QF_BASELINE_ROW,
						   &iteration_view, 1 };
static const struct query_named iteration_progress = { "show: the iteration (before schema 19)",
						       ITERATION_KEY(QS_PLAN_NSIZES_PROGRESS),
						       QF_PROGRESS_PLAN, &iteration_rows, 1 };

/* clang-format off */
const struct query_named query_show_queries[QSHOW__COUNT] = {
	[QSHOW_ITERATION] = { "show: the iteration", ITERATION_KEY(QS_PLAN_NSIZES_CYCLE),
			  QF_CYCLE_PLAN, &iteration_progress, 1 },
	[QSHOW_PHASES] = { "show: samples per phase", PHASES_SQL, QF_NONE, NULL, 1 },
	[QSHOW_TRACE] = { "show: sample trace", TRACE_SQL, QF_NONE, NULL, 1 },
	[QSHOW_SAMPLES] = { "show: samples", SAMPLES_SQL, QF_NONE, NULL, 1 },
	/* a schema without the column has no such rows */
	[QSHOW_HEALTH_BY_IT] = { "show: health of the iteration", HEALTH_BY_IT_SQL, QF_HEALTH_BY_IT,
			     NULL, 1 },
	[QSHOW_HEALTH_BY_CYCLE] = { "show: health of the cycle", HEALTH_BY_CYCLE_SQL,
				QF_HEALTH_BY_CYCLE, NULL, 1 },
	[QSHOW_EVENTS] = { "show: events", EVENTS_SQL, QF_NONE, NULL, 1 },
	[QSHOW_EVENTS_ALL] = { "show: events, every column", EVENTS_ALL_SQL, QF_NONE, NULL, 1 },
	/* alerts before schema 20 name no cause */
	[QSHOW_EVIDENCE] = { "show: cause of its alerts", EVIDENCE_SQL, QF_DEVICE, NULL, 1 },
};
/* clang-format on */

/* Show query id of this file with its parameters, rows into s. */
#define RUN(db, sc, id, s, ...)                                                                    \
	query_named_sink(db, sc, &query_show_queries[id], QS_PARAMS(__VA_ARGS__), s)

int query_show_iteration(struct db *db, int64_t id, const struct query_sink *s)
{
	return RUN(db, NULL, QSHOW_ITERATION, s, QS_INT(id));
}

int query_show_sample_phases(struct db *db, int64_t id, const struct query_sink *s)
{
	return RUN(db, NULL, QSHOW_PHASES, s, QS_INT(id));
}

int query_show_sample_trace(struct db *db, int64_t id, const struct query_sink *s)
{
	return RUN(db, NULL, QSHOW_TRACE, s, QS_INT(id));
}

int query_show_samples(struct db *db, int64_t id, const struct query_sink *s)
{
	return RUN(db, NULL, QSHOW_SAMPLES, s, QS_INT(id));
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
	struct query_schema sc;
	int ret = query_schema_of(db, &sc, s->err, s->errlen);

	if (!ret)
		ret = RUN(db, &sc, QSHOW_HEALTH_BY_IT, &counting, QS_INT(id));
	if (!ret && c.n == 0)
		ret = RUN(db, &sc, QSHOW_HEALTH_BY_CYCLE, s, QS_INT(cycle_id));
	return ret;
}

int query_show_events(struct db *db, int64_t id, int64_t cycle_id, const struct query_sink *s)
{
	return RUN(db, NULL, QSHOW_EVENTS, s, QS_INT(id), QS_INT(cycle_id));
}

int query_show_events_all(struct db *db, int64_t id, int64_t cycle_id, const struct query_sink *s)
{
	return RUN(db, NULL, QSHOW_EVENTS_ALL, s, QS_INT(id), QS_INT(cycle_id));
}

int query_show_evidence(struct db *db, int64_t id, const struct query_sink *s)
{
	return RUN(db, NULL, QSHOW_EVIDENCE, s, QS_INT(id));
}
