/* query_status: what wearmon status reads: the daemon's runs, the targets,
 * and for each target its last iteration, the last done one and their
 * baselines, progress, the previous run of the same size, its last cycle
 * and alert. Each reads one target's newest rows through an index. */
#include "db/query/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/query/query_int.h"

#define INT_PARAM(v) ((struct db_value){ .type = DB_INT, .i = (v) })

int query_status_runs(struct db *db, const struct query_sink *s)
{
	return query_run(db,
			 "SELECT started_at, ended_at, pid, hostname, exit_status, exit_reason"
			 " FROM runs WHERE ended_at IS NULL OR id = (SELECT max(id) FROM runs)"
			 " ORDER BY id DESC",
			 NULL, 0, s);
}

int query_status_targets(struct db *db, const char *name, const struct query_sink *s)
{
	if (!name)
		return query_run(db,
				 "SELECT id, name, device, kind, capacity_bytes FROM targets"
				 " ORDER BY name",
				 NULL, 0, s);
	return query_run(db,
			 "SELECT id, name, device, kind, capacity_bytes FROM targets"
			 " WHERE name = ? ORDER BY name",
			 (struct db_value[]){ { .type = DB_TEXT, .s = name } }, 1, s);
}

/* The last iteration of target ?1 (done ones only when done). nsizes and
 * cycles come from the configuration as the daemon published it (progress
 * version 8), else from the rows. */
static char *last_it_sql(const struct query_schema *sc, int done)
{
	const struct query_baseline *b = query_baseline_of(sc);
	int plan = sc->progress >= 8;
	char *sql = NULL;

	if (asprintf(&sql,
		     "SELECT i.*, c.number AS cycle, c.status AS cycle_status,"
		     " %s AS baseline_mibps, %s AS baseline_cycle, %s AS nsizes, %s AS cycles_cfg"
		     " FROM iterations i JOIN cycles c ON c.id = i.cycle_id%s"
		     " WHERE i.target_id = ?1%s ORDER BY i.id DESC LIMIT 1",
		     b->mibps, b->cycle,
		     plan ? "(SELECT nsizes FROM progress WHERE target_id = i.target_id)"
			  : "(SELECT max(size_index) + 1 FROM iterations"
			    " WHERE target_id = i.target_id)",
		     plan ? "(SELECT cycles FROM progress WHERE target_id = i.target_id)" : "NULL",
		     b->join, done ? " AND i.status = 'done'" : "") < 0)
		return NULL;
	return sql;
}

char *query_last_iteration_sql(const struct query_schema *sc)
{
	return last_it_sql(sc, 0);
}

char *query_last_done_sql(const struct query_schema *sc)
{
	return last_it_sql(sc, 1);
}

int query_last_iteration(struct db *db, const struct query_schema *sc, int64_t target_id, int done,
			 const struct query_sink *s)
{
	char *sql = last_it_sql(sc, done);
	int ret;

	if (!sql) {
		snprintf(s->err, s->errlen, "out of memory");
		return -ENOMEM;
	}
	ret = query_run(db, sql, (struct db_value[]){ INT_PARAM(target_id) }, 1, s);
	free(sql);
	return ret;
}

#define FRESH " AND julianday('now') - julianday(updated_at) < 10.0 / 86400"
#define PROGRESS_8_SQL                                                                             \
	"SELECT phase, mibps, phase_bytes, phase_seconds, duration_seconds"                        \
	" FROM progress WHERE target_id = ? AND iteration = ? AND cycle = ?" FRESH
#define PROGRESS_7_SQL                                                                             \
	"SELECT phase, mibps, phase_bytes FROM progress"                                           \
	" WHERE target_id = ? AND iteration = ? AND cycle = ?" FRESH

char *query_fresh_progress_sql(const struct query_schema *sc)
{
	return strdup(sc->progress >= 8 ? PROGRESS_8_SQL : PROGRESS_7_SQL);
}

int query_fresh_progress(struct db *db, const struct query_schema *sc, int64_t target_id,
			 int64_t cycle, int64_t iteration, const struct query_sink *s)
{
	if (sc->progress < 7)
		return 0;
	return query_run(
		db, sc->progress >= 8 ? PROGRESS_8_SQL : PROGRESS_7_SQL,
		(struct db_value[]){ INT_PARAM(target_id), INT_PARAM(iteration), INT_PARAM(cycle) },
		3, s);
}

#define SAME_SIZE_SQL                                                                              \
	"SELECT (julianday(ended_at) - julianday(started_at))"                                     \
	" * 86400 AS wall, fill_seconds, cycle_id,"                                                \
	" (SELECT number FROM cycles WHERE id = cycle_id) AS cycle"                                \
	" FROM iterations WHERE target_id = ? AND size_bytes = ?"                                  \
	" AND workload = ? AND block_size = ? AND status = 'done'"                                 \
	" AND ended_at IS NOT NULL ORDER BY id DESC LIMIT 1"

char *query_last_same_size_sql(const struct query_schema *sc)
{
	return strdup(SAME_SIZE_SQL);
}

int query_last_same_size(struct db *db, const struct query_same_size *k, const struct query_sink *s)
{
	return query_run(
		db, SAME_SIZE_SQL,
		(struct db_value[]){ INT_PARAM(k->target_id),
				     INT_PARAM(k->size_bytes),
				     { .type = k->workload ? DB_TEXT : DB_NULL, .s = k->workload },
				     INT_PARAM(k->block_size) },
		4, s);
}

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

char *query_last_done_cycle_sql(const struct query_schema *sc)
{
	return strdup(DONE_CYCLE_SQL);
}

char *query_last_cycle_sql(const struct query_schema *sc)
{
	return strdup(LAST_CYCLE_SQL);
}

char *query_last_alert_sql(const struct query_schema *sc)
{
	return strdup(LAST_ALERT_SQL);
}

int query_last_done_cycle(struct db *db, int64_t target_id, int64_t cycle_id,
			  const struct query_sink *s)
{
	return query_run(db, DONE_CYCLE_SQL,
			 (struct db_value[]){ INT_PARAM(target_id), INT_PARAM(cycle_id) }, 2, s);
}

int query_last_cycle(struct db *db, int64_t target_id, const struct query_sink *s)
{
	return query_run(db, LAST_CYCLE_SQL, (struct db_value[]){ INT_PARAM(target_id) }, 1, s);
}

int query_last_alert(struct db *db, int64_t target_id, const struct query_sink *s)
{
	return query_run(db, LAST_ALERT_SQL, (struct db_value[]){ INT_PARAM(target_id) }, 1, s);
}
