/* query_status: what wearmon status reads: the daemon's runs, the targets,
 * and for each target its last iteration, the last done one and their
 * baselines, progress, the previous run of the same size, its last cycle
 * and alert. Each reads one target's newest rows through an index. */
#include "db/query/query.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/query/query_int.h"

#define INT_PARAM(v) ((struct db_value){ .type = DB_INT, .i = (v) })

/* last_seen: the newest time the run is known to have been alive, its
 * start or the newest progress row (rewritten every second while a daemon
 * runs), for a run that recorded no stop. */
#define RUNS_SQL(last_seen)                                                                        \
	"SELECT id, started_at, ended_at, pid, hostname, exit_status, exit_reason,"                \
	" CASE WHEN ended_at IS NULL THEN " last_seen " END AS last_seen"                          \
	" FROM runs WHERE ended_at IS NULL OR id IN"                                               \
	" (SELECT max(id) FROM runs GROUP BY hostname)"                                            \
	" ORDER BY id DESC"

int query_status_runs(struct db *db, const struct query_sink *s)
{
	struct query_schema sc;
	int ret = query_schema_of(db, &sc, s->err, s->errlen);

	if (ret)
		return ret;
	return query_run(db,
			 sc.progress ? RUNS_SQL("max(started_at, coalesce((SELECT max(updated_at)"
						" FROM progress), ''))")
				     : RUNS_SQL("started_at"),
			 NULL, 0, s);
}

/* This machine's name, as wearmond records it in runs.hostname. */
static int this_host(char *buf, size_t len)
{
	if (gethostname(buf, len - 1) != 0)
		return -errno;
	buf[len - 1] = '\0';
	return 0;
}

enum query_run_state query_run_state(const char *db_path, const char *hostname, int64_t pid,
				     int ended)
{
	char host[256] = "";

	if (ended)
		return QUERY_RUN_STOPPED;
	if (this_host(host, sizeof(host)) || !hostname || strcmp(hostname, host) != 0)
		return QUERY_RUN_ELSEWHERE;
	/* the lock, not /proc: a killed daemon's pid lingers as a zombie until
	 * its parent reaps it, and may be reused; the kernel drops the lock at
	 * its exit (common/db/db_guard.c) */
	return pid > 0 && db_lock_holder(db_path) == (pid_t)pid ? QUERY_RUN_ALIVE : QUERY_RUN_DEAD;
}

const char *query_run_state_name(enum query_run_state s)
{
	switch (s) {
	case QUERY_RUN_ALIVE: return "running";
	case QUERY_RUN_STOPPED: return "stopped";
	case QUERY_RUN_DEAD: return "gone";
	case QUERY_RUN_ELSEWHERE: return "elsewhere";
	}
	return "?";
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

/* The plan of the cycle c of iteration i, the one definition that status
 * and show count "size 2 of 3" and "cycle 2 of 5" from: the sizes and
 * cycles the cycle was started with (cycles.nsizes, cycles_planned, v19),
 * else as the daemon published them for that cycle (progress, version 8),
 * else (sizes only) the sizes the target's rows reached. */
const char *query_plan_nsizes(const struct query_schema *sc)
{
	if (sc->cycle_plan)
		return "coalesce(c.nsizes, (SELECT nsizes FROM progress p WHERE"
		       " p.target_id = i.target_id AND p.cycle = c.number),"
		       " (SELECT max(size_index) + 1 FROM iterations WHERE target_id = i.target_id))";
	if (sc->progress >= 8)
		return "coalesce((SELECT nsizes FROM progress p WHERE"
		       " p.target_id = i.target_id AND p.cycle = c.number),"
		       " (SELECT max(size_index) + 1 FROM iterations WHERE target_id = i.target_id))";
	return "(SELECT max(size_index) + 1 FROM iterations WHERE target_id = i.target_id)";
}

const char *query_plan_cycles(const struct query_schema *sc)
{
	if (sc->cycle_plan)
		return "coalesce(c.cycles_planned, (SELECT cycles FROM progress p WHERE"
		       " p.target_id = i.target_id AND p.cycle = c.number))";
	if (sc->progress >= 8)
		return "(SELECT cycles FROM progress p WHERE p.target_id = i.target_id"
		       " AND p.cycle = c.number)";
	return "NULL";
}

/* The last iteration of target ?1 (done ones only when done), with its
 * cycle's plan. */
static char *last_it_sql(const struct query_schema *sc, int done)
{
	const struct query_baseline *b = query_baseline_of(sc);
	char *sql = NULL;

	if (asprintf(&sql,
		     "SELECT i.*, c.number AS cycle, c.status AS cycle_status,"
		     " (SELECT hostname FROM runs WHERE id = i.run_id) AS run_host,"
		     " %s AS baseline_mibps, %s AS baseline_cycle, %s AS nsizes, %s AS cycles_cfg"
		     " FROM iterations i JOIN cycles c ON c.id = i.cycle_id%s"
		     " WHERE i.target_id = ?1%s ORDER BY i.id DESC LIMIT 1",
		     b->mibps, b->cycle, query_plan_nsizes(sc), query_plan_cycles(sc), b->join,
		     done ? " AND i.status = 'done'" : "") < 0)
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
/* From version 9 the row whatever its age, with its age: a row is current
 * when its daemon holds the lock (query_run_state), which a jump of the
 * wall clock cannot make look stale. */
#define PROGRESS_9_SQL                                                                             \
	"SELECT phase, mibps, phase_bytes, phase_seconds, duration_seconds, iteration_seconds,"    \
	" (julianday('now') - julianday(updated_at)) * 86400 AS age"                               \
	" FROM progress WHERE target_id = ? AND iteration = ? AND cycle = ?"
#define PROGRESS_8_SQL                                                                             \
	"SELECT phase, mibps, phase_bytes, phase_seconds, duration_seconds"                        \
	" FROM progress WHERE target_id = ? AND iteration = ? AND cycle = ?" FRESH
#define PROGRESS_7_SQL                                                                             \
	"SELECT phase, mibps, phase_bytes FROM progress"                                           \
	" WHERE target_id = ? AND iteration = ? AND cycle = ?" FRESH

static const char *progress_sql(const struct query_schema *sc)
{
	return sc->progress >= 9   ? PROGRESS_9_SQL
	       : sc->progress >= 8 ? PROGRESS_8_SQL
				   : PROGRESS_7_SQL;
}

char *query_fresh_progress_sql(const struct query_schema *sc)
{
	return strdup(progress_sql(sc));
}

int query_fresh_progress(struct db *db, const struct query_schema *sc, int64_t target_id,
			 int64_t cycle, int64_t iteration, const struct query_sink *s)
{
	if (sc->progress < 7)
		return 0;
	return query_run(
		db, progress_sql(sc),
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
	"SELECT id, number, (julianday(ended_at) - julianday(started_at))"                         \
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

/* ---- the ETA of the cycle and the campaign ------------------------------ */

/* The done rows of the current cycle ?2 and of the last done cycle ?3, by
 * cycle and size: their seconds (each row's own wall time, so that a
 * stop, a restart and the gap between them count nothing), and whether
 * the size's last row is among them. Found through
 * iterations_target_started from the older cycle's start. */
#define SIZE_SECONDS_SQL                                                                           \
	"SELECT cycle_id, size_index, sum((julianday(ended_at) - julianday(started_at))"           \
	" * 86400) AS secs, max(more_rows = 0) AS complete FROM iterations"                        \
	" WHERE target_id = ?1 AND started_at >= (SELECT min(started_at) FROM cycles"              \
	" WHERE id IN (?2, ?3)) AND cycle_id IN (?2, ?3) AND status = 'done'"                      \
	" AND ended_at IS NOT NULL GROUP BY cycle_id, size_index"

char *query_size_seconds_sql(const struct query_schema *sc)
{
	return strdup(SIZE_SECONDS_SQL);
}

#define ETA_MAX_SIZES 256

struct eta_rows {
	const struct query_eta_in *in;
	double cur[ETA_MAX_SIZES], prev[ETA_MAX_SIZES]; /* NAN: not complete there */
	double cur_done;                                /* current size's done rows so far */
	double prev_sum;                                /* every done row of the last done cycle */
};

static int eta_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct eta_rows *e = arg;
	int64_t cycle = v[0].i, k = v[1].i;
	double secs = v[2].type == DB_NULL ? 0 : v[2].r;
	int complete = v[3].type == DB_INT && v[3].i;

	if (n < 4 || k < 0 || k >= ETA_MAX_SIZES || secs < 0)
		return 0;
	if (cycle == e->in->cycle_id && k == e->in->size_index)
		e->cur_done = secs;
	if (cycle == e->in->cycle_id && complete)
		e->cur[k] = secs;
	if (cycle == e->in->prev_cycle_id) {
		e->prev_sum += secs;
		if (complete)
			e->prev[k] = secs;
	}
	return 0;
}

/* The seconds of size k: as this cycle measured it, else as the last done
 * cycle did; NAN when neither has. */
static double size_seconds(const struct eta_rows *e, int k)
{
	return !isnan(e->cur[k]) ? e->cur[k] : e->prev[k];
}

int query_campaign_eta(struct db *db, const struct query_eta_in *in, struct query_eta *out,
		       char *err, size_t errlen)
{
	struct eta_rows e = { .in = in };
	double known = 0, sum = 0, rest = 0, cur;
	int nknown = 0, n = in->nsizes;
	int ret;

	*out = (struct query_eta){ .cycle_eta = NAN, .campaign_eta = NAN, .cycle_seconds = NAN };
	if (n <= 0 || n > ETA_MAX_SIZES || in->size_index < 0 || in->size_index >= n ||
	    in->schema_version < 4)
		return 0;
	for (int k = 0; k < ETA_MAX_SIZES; k++)
		e.cur[k] = e.prev[k] = NAN;
	ret = db_query(db, SIZE_SECONDS_SQL,
		       (struct db_value[]){ INT_PARAM(in->target_id), INT_PARAM(in->cycle_id),
					    INT_PARAM(in->prev_cycle_id) },
		       3, eta_row, &e, err, errlen);
	if (ret)
		return ret;
	for (int k = 0; k < n; k++)
		if (!isnan(size_seconds(&e, k))) {
			known += size_seconds(&e, k);
			nknown++;
		}
	if (!nknown)
		return 0; /* nothing measured yet to go by */
	out->sizes_estimated = n - nknown;
	/* a size never measured: the mean of those that were */
	for (int k = 0; k < n; k++) {
		double s = size_seconds(&e, k);
		sum += isnan(s) ? known / nknown : s;
		if (k > in->size_index)
			rest += isnan(s) ? known / nknown : s;
	}
	/* the time a cycle spends outside its iterations: health snapshots,
	 * the action, as the last done cycle spent it */
	if (in->prev_wall > 0 && in->prev_wall > e.prev_sum)
		out->between_seconds = in->prev_wall - e.prev_sum;
	cur = size_seconds(&e, in->size_index);
	if (isnan(cur))
		cur = known / nknown;
	cur = fmax(0, cur - e.cur_done - fmax(0, in->iteration_elapsed));
	if (in->iteration_eta >= 0)
		cur = fmax(cur, in->iteration_eta);
	out->cycle_seconds = sum + out->between_seconds;
	out->cycle_eta = cur + rest + out->between_seconds;
	if (in->cycles > 0 && in->cycle <= in->cycles)
		out->campaign_eta =
			out->cycle_eta + (double)(in->cycles - in->cycle) * out->cycle_seconds;
	return 0;
}
