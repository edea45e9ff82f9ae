/* query_status: what wearmon status reads: the daemon's runs, the targets,
 * and for each target its last iteration, the last done one and their
 * baselines, progress, the previous run of the same size, its last cycle
 * and alert. Each reads one target's newest rows through an index. */
#include "db/query/query.h"

#include "db/query/query_int.h"
#include "db/query/query_sql.h"

#define RUNS_SQL                                                                                   \
	"SELECT started_at, ended_at, pid, hostname, exit_status, exit_reason"                     \
	" FROM runs WHERE ended_at IS NULL OR id = (SELECT max(id) FROM runs)"                     \
	" ORDER BY id DESC"
#define TARGETS_SQL "SELECT id, name, device, kind, capacity_bytes FROM targets ORDER BY name"
#define TARGET_SQL                                                                                 \
	"SELECT id, name, device, kind, capacity_bytes FROM targets"                               \
	" WHERE name = ? ORDER BY name"

/* The last iteration of target ?1 (done ones only when done is
 * DONE_ONLY). nsizes and cycles come from the configuration as the daemon
 * published it (progress version 8), else from the rows. */
#define LAST_IT_SQL(base_mibps, base_cycle, base_join, nsizes, cycles, done)                       \
	"SELECT i.*, c.number AS cycle, c.status AS cycle_status, " base_mibps                     \
	" AS baseline_mibps, " base_cycle " AS baseline_cycle, " nsizes " AS nsizes, " cycles      \
	" AS cycles_cfg FROM iterations i JOIN cycles c ON c.id = i.cycle_id" base_join            \
	" WHERE i.target_id = ?1" done " ORDER BY i.id DESC LIMIT 1"
#define DONE_ONLY " AND i.status = 'done'"
#define PLAN_NSIZES "(SELECT nsizes FROM progress WHERE target_id = i.target_id)"
#define PLAN_CYCLES "(SELECT cycles FROM progress WHERE target_id = i.target_id)"
#define ROWS_NSIZES "(SELECT max(size_index) + 1 FROM iterations WHERE target_id = i.target_id)"
#define LAST_IT_KEY(done)                                                                          \
	LAST_IT_SQL(QS_BASE_KEY_MIBPS, QS_BASE_KEY_CYCLE, QS_BASE_KEY_JOIN, PLAN_NSIZES,           \
		    PLAN_CYCLES, done)
#define LAST_IT_VIEW_PLAN(done)                                                                    \
	LAST_IT_SQL(QS_BASE_VIEW_MIBPS, QS_BASE_VIEW_CYCLE, QS_BASE_VIEW_JOIN, PLAN_NSIZES,        \
		    PLAN_CYCLES, done)
#define LAST_IT_VIEW_ROWS(done)                                                                    \
	LAST_IT_SQL(QS_BASE_VIEW_MIBPS, QS_BASE_VIEW_CYCLE, QS_BASE_VIEW_JOIN, ROWS_NSIZES,        \
		    "NULL", done)

/* Each chain: the baseline by key (schema 9, whose progress has the plan),
 * then by the view with the plan (8), then by the view and the rows. */
static const struct query_named last_it_rows = { "status: last iteration (before progress 8)",
						 LAST_IT_VIEW_ROWS(""), QF_NONE, NULL, 1 };
static const struct query_named last_it_plan = { "status: last iteration (before schema 9)",
						 LAST_IT_VIEW_PLAN(""), QF_PROGRESS_PLAN,
						 &last_it_rows, 1 };
static const struct query_named last_done_rows = {
	"status: last done iteration (before progress 8)", LAST_IT_VIEW_ROWS(DONE_ONLY), QF_NONE,
	NULL, 1
};
static const struct query_named last_done_plan = { "status: last done iteration (before schema 9)",
						   LAST_IT_VIEW_PLAN(DONE_ONLY), QF_PROGRESS_PLAN,
						   &last_done_rows, 1 };

#define FRESH " AND julianday('now') - julianday(updated_at) < 10.0 / 86400"
#define PROGRESS_8_SQL                                                                             \
	"SELECT phase, mibps, phase_bytes, phase_seconds, duration_seconds"                        \
	" FROM progress WHERE target_id = ? AND iteration = ? AND cycle = ?" FRESH
#define PROGRESS_7_SQL                                                                             \
	"SELECT phase, mibps, phase_bytes FROM progress"                                           \
	" WHERE target_id = ? AND iteration = ? AND cycle = ?" FRESH

/* before progress 7 there is no progress to read */
static const struct query_named progress_7 = { "status: progress (progress 7)", PROGRESS_7_SQL,
					       QF_PROGRESS_PHASE, NULL, 1 };

#define SAME_SIZE_SQL                                                                              \
	"SELECT (julianday(ended_at) - julianday(started_at))"                                     \
	" * 86400 AS wall, fill_seconds, cycle_id,"                                                \
	" (SELECT number FROM cycles WHERE id = cycle_id) AS cycle"                                \
	" FROM iterations WHERE target_id = ? AND size_bytes = ?"                                  \
	" AND workload = ? AND block_size = ? AND status = 'done'"                                 \
	" AND ended_at IS NOT NULL ORDER BY id DESC LIMIT 1"

#define DONE_CYCLE_SQL                                                                             \
	"SELECT number, (julianday(ended_at) - julianday(started_at))"                             \
	" * 86400 AS wall, (julianday('now') - julianday((SELECT started_at"                       \
	" FROM cycles WHERE id = ?2))) * 86400 AS elapsed FROM cycles"                             \
	" WHERE target_id = ?1 AND status = 'done' AND ended_at IS NOT NULL"                       \
	" ORDER BY number DESC LIMIT 1"
#define LAST_CYCLE_SQL                                                                             \
	"SELECT number, status, action, action_outcome"                                            \
	" FROM cycles WHERE target_id = ? ORDER BY number DESC LIMIT 1"
#define LAST_ALERT_SQL                                                                             \
	"SELECT e.at, e.severity, e.kind, e.message,"                                              \
	" c.number AS cycle, i.number AS iteration, e.iteration_id"                                \
	" FROM events e LEFT JOIN cycles c ON c.id = e.cycle_id"                                   \
	" LEFT JOIN iterations i ON i.id = e.iteration_id"                                         \
	" WHERE e.target_id = ? AND e.severity IN ('emerg', 'alert',"                              \
	" 'crit', 'err', 'warning', 'notice')"                                                     \
	" ORDER BY e.at DESC, e.id DESC LIMIT 1"

/* clang-format off */
const struct query_named query_status_queries[QSTATUS__COUNT] = {
	[QSTATUS_RUNS] = { "status: runs", RUNS_SQL, QF_NONE, NULL, 0 },
	[QSTATUS_TARGETS] = { "status: targets", TARGETS_SQL, QF_NONE, NULL, 0 },
	[QSTATUS_TARGET] = { "status: the target", TARGET_SQL, QF_NONE, NULL, 0 },
	[QSTATUS_LAST_IT] = { "status: last iteration", LAST_IT_KEY(""), QF_BASELINE_ROW,
			&last_it_plan, 1 },
	[QSTATUS_LAST_DONE] = { "status: last done iteration", LAST_IT_KEY(DONE_ONLY), QF_BASELINE_ROW,
			  &last_done_plan, 1 },
	[QSTATUS_PROGRESS] = { "status: progress", PROGRESS_8_SQL, QF_PROGRESS_PLAN, &progress_7, 1 },
	[QSTATUS_SAME_SIZE] = { "status: last of the same size", SAME_SIZE_SQL, QF_NONE, NULL, 1 },
	[QSTATUS_DONE_CYCLE] = { "status: last done cycle", DONE_CYCLE_SQL, QF_NONE, NULL, 1 },
	[QSTATUS_LAST_CYCLE] = { "status: last cycle", LAST_CYCLE_SQL, QF_NONE, NULL, 1 },
	[QSTATUS_LAST_ALERT] = { "status: last alert", LAST_ALERT_SQL, QF_NONE, NULL, 1 },
};
/* clang-format on */

/* Status query id of this file with its parameters, rows into s. */
#define RUN(db, sc, id, s, ...)                                                                    \
	query_named_sink(db, sc, &query_status_queries[id], QS_PARAMS(__VA_ARGS__), s)

int query_status_runs(struct db *db, const struct query_sink *s)
{
	return query_named_sink(db, NULL, &query_status_queries[QSTATUS_RUNS], NULL, 0, s);
}

int query_status_targets(struct db *db, const char *name, const struct query_sink *s)
{
	if (!name)
		return query_named_sink(db, NULL, &query_status_queries[QSTATUS_TARGETS], NULL, 0,
					s);
	return RUN(db, NULL, QSTATUS_TARGET, s, { .type = DB_TEXT, .s = name });
}

int query_last_iteration(struct db *db, const struct query_schema *sc, int64_t target_id, int done,
			 const struct query_sink *s)
{
	return RUN(db, sc, done ? QSTATUS_LAST_DONE : QSTATUS_LAST_IT, s, QS_INT(target_id));
}

int query_fresh_progress(struct db *db, const struct query_schema *sc, int64_t target_id,
			 int64_t cycle, int64_t iteration, const struct query_sink *s)
{
	return RUN(db, sc, QSTATUS_PROGRESS, s, QS_INT(target_id), QS_INT(iteration),
		   QS_INT(cycle));
}

int query_last_same_size(struct db *db, const struct query_same_size *k, const struct query_sink *s)
{
	return RUN(db, NULL, QSTATUS_SAME_SIZE, s, QS_INT(k->target_id), QS_INT(k->size_bytes),
		   { .type = k->workload ? DB_TEXT : DB_NULL, .s = k->workload },
		   QS_INT(k->block_size));
}

int query_last_done_cycle(struct db *db, int64_t target_id, int64_t cycle_id,
			  const struct query_sink *s)
{
	return RUN(db, NULL, QSTATUS_DONE_CYCLE, s, QS_INT(target_id), QS_INT(cycle_id));
}

int query_last_cycle(struct db *db, int64_t target_id, const struct query_sink *s)
{
	return RUN(db, NULL, QSTATUS_LAST_CYCLE, s, QS_INT(target_id));
}

int query_last_alert(struct db *db, int64_t target_id, const struct query_sink *s)
{
	return RUN(db, NULL, QSTATUS_LAST_ALERT, s, QS_INT(target_id));
}
