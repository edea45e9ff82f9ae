/* query_status: what wearmon status reads: the daemon's runs, the targets,
 * and for each target its last iteration, the last done one and their
 * baselines, progress, the previous run of the same size, its last cycle
 * and alert, and the seconds of each size its ETA is made of. Each reads
 * one target's newest rows through an index. */
#include "db/query/query.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db/query/query_int.h"
#include "db/query/query_sql.h"

/* last_seen: the newest time the run is known to have been alive, its
 * start or the newest progress row (rewritten every second while a daemon
 * runs), for a run that recorded no stop. */
#define RUNS_SQL(last_seen)                                                                        \
	"SELECT id, started_at, ended_at, pid, hostname, exit_status, exit_reason,"                \
	" CASE WHEN ended_at IS NULL THEN " last_seen " END AS last_seen"                          \
	" FROM runs WHERE ended_at IS NULL OR id IN"                                               \
	" (SELECT max(id) FROM runs GROUP BY hostname)"                                            \
	" ORDER BY id DESC"
#define LAST_SEEN_PROGRESS "max(started_at, coalesce((SELECT max(updated_at) FROM progress), ''))"
#define TARGETS_SQL "SELECT id, name, device, kind, capacity_bytes FROM targets ORDER BY name"
#define TARGET_SQL                                                                                 \
	"SELECT id, name, device, kind, capacity_bytes FROM targets"                               \
	" WHERE name = ? ORDER BY name"

/* before the progress table (7) a run was last seen at its start */
static const struct query_named runs_v6 = { "status: runs (before progress 7)",
					    RUNS_SQL("started_at"), QF_NONE, NULL, 0 };

/* The last iteration of target ?1 (done ones only when done is
 * DONE_ONLY), the host of the run that started it, and the plan of its
 * cycle (nsizes, cycles: QS_PLAN_NSIZES_CYCLE and the like). */
/* campaign_cycle: the cycle's place in its campaign, which "cycle 1 of 2"
 * counts (the numbers go on across campaigns; cycles_cfg is a campaign's
 * count). baseline_iteration: the baseline row's number in its cycle. */
#define LAST_IT_SQL(base_mibps, base_cycle, base_num, base_join, nsizes, cycles, campaign, done)   \
	"SELECT i.*, c.number AS cycle, c.status AS cycle_status,"                                 \
	" (SELECT hostname FROM runs WHERE id = i.run_id) AS run_host, " base_mibps                \
	" AS baseline_mibps, " base_cycle " AS baseline_cycle, " base_num                          \
	" AS baseline_iteration, " nsizes " AS nsizes, " cycles " AS cycles_cfg, " campaign        \
	" AS campaign_cycle FROM iterations i JOIN cycles c ON c.id = i.cycle_id" base_join        \
	" WHERE i.target_id = ?1" done " ORDER BY i.id DESC LIMIT 1"
#define DONE_ONLY " AND i.status = 'done'"
/* from schema 13 a cycle knows its campaign's first cycle (NULL for the
 * cycles of campaigns before the migration: counted from 1) */
#define CAMPAIGN_CYCLE "c.number - coalesce(c.campaign_first_cycle, 1) + 1"
#define LAST_IT_KEY(nsizes, cycles, campaign, done)                                                \
	LAST_IT_SQL(QS_BASE_KEY_MIBPS, QS_BASE_KEY_CYCLE, "bi.number", QS_BASE_KEY_JOIN, nsizes,   \
		    cycles, campaign, done)
#define LAST_IT_VIEW(done)                                                                         \
	LAST_IT_SQL(QS_BASE_VIEW_MIBPS, QS_BASE_VIEW_CYCLE, "NULL", QS_BASE_VIEW_JOIN,             \
		    QS_ROWS_NSIZES, "NULL", "c.number", done)

/* Each chain of the last iteration: the plan from its cycle (schema 19,
 * the table's entry), from progress (12), from the rows with the baseline
 * by key (9), then with the baseline through the view. */
#define LAST_IT_CHAIN(id, what, done)                                                              \
	static const struct query_named id##_view = { "status: " what " (before schema 9)",        \
						      LAST_IT_VIEW(done), QF_NONE, NULL, 1 };      \
	static const struct query_named id##_rows = { "status: " what " (before progress 8)",      \
						      LAST_IT_KEY(QS_ROWS_NSIZES, "NULL",          \
								  "c.number", done),               \
						      QF_BASELINE_ROW, &id##_view, 1 };            \
	static const struct query_named id##_progress = {                                          \
		"status: " what " (before schema 19)",                                             \
		LAST_IT_KEY(QS_PLAN_NSIZES_PROGRESS, QS_PLAN_CYCLES_PROGRESS, "c.number", done),   \
		QF_PROGRESS_PLAN, &id##_rows, 1                                                    \
	}

LAST_IT_CHAIN(last_it, "last iteration", "");
LAST_IT_CHAIN(last_done, "last done iteration", DONE_ONLY);

#define FRESH " AND julianday('now') - julianday(updated_at) < 10.0 / 86400"
/* From progress 9 (iteration_seconds) the row whatever its age, with its
 * age: a row is current when its daemon holds the lock (query_run_state),
 * which a jump of the wall clock cannot make look stale. */
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

/* before progress 7 there is no progress to read */
static const struct query_named progress_7 = { "status: progress (progress 7)", PROGRESS_7_SQL,
					       QF_PROGRESS_PHASE, NULL, 1 };
static const struct query_named progress_8 = { "status: progress (progress 8)", PROGRESS_8_SQL,
					       QF_PROGRESS_PLAN, &progress_7, 1 };

#define SAME_SIZE_SQL                                                                              \
	"SELECT (julianday(ended_at) - julianday(started_at))"                                     \
	" * 86400 AS wall, fill_seconds, cycle_id,"                                                \
	" (SELECT number FROM cycles WHERE id = cycle_id) AS cycle"                                \
	" FROM iterations WHERE target_id = ? AND size_bytes = ?"                                  \
	" AND workload = ? AND block_size = ? AND status = 'done'"                                 \
	" AND ended_at IS NOT NULL ORDER BY id DESC LIMIT 1"

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

/* The stage of a phase of several (host idle recovery), with the seconds
 * its plan had left when the row was written and the row's age. */
#define STAGE_SQL                                                                                  \
	"SELECT phase, stage, remaining_seconds, cycle,"                                           \
	" (julianday('now') - julianday(updated_at)) * 86400 AS age"                               \
	" FROM progress WHERE target_id = ? AND stage IS NOT NULL"

/* The done rows of the current cycle ?2 and of the last done cycle ?3, by
 * cycle and size: their seconds (each row's own wall time, so that a
 * stop, a restart and the gap between them count nothing), and whether
 * the size's last row is among them (more_rows, schema 4: before it, no
 * rows and no ETA). Found through iterations_target_started from the
 * older cycle's start. */
#define SIZE_SECONDS_SQL                                                                           \
	"SELECT cycle_id, size_index, sum((julianday(ended_at) - julianday(started_at))"           \
	" * 86400) AS secs, max(more_rows = 0) AS complete FROM iterations"                        \
	" WHERE target_id = ?1 AND started_at >= (SELECT min(started_at) FROM cycles"              \
	" WHERE id IN (?2, ?3)) AND cycle_id IN (?2, ?3) AND status = 'done'"                      \
	" AND ended_at IS NOT NULL GROUP BY cycle_id, size_index"

/* clang-format off */
const struct query_named query_status_queries[QSTATUS__COUNT] = {
	[QSTATUS_RUNS] = { "status: runs", RUNS_SQL(LAST_SEEN_PROGRESS), QF_PROGRESS_PHASE,
			   &runs_v6, 0 },
	[QSTATUS_TARGETS] = { "status: targets", TARGETS_SQL, QF_NONE, NULL, 0 },
	[QSTATUS_TARGET] = { "status: the target", TARGET_SQL, QF_NONE, NULL, 0 },
	[QSTATUS_LAST_IT] = { "status: last iteration",
			      LAST_IT_KEY(QS_PLAN_NSIZES_CYCLE, QS_PLAN_CYCLES_CYCLE, CAMPAIGN_CYCLE, ""),
			      QF_CYCLE_PLAN, &last_it_progress, 1 },
	[QSTATUS_LAST_DONE] = { "status: last done iteration",
				LAST_IT_KEY(QS_PLAN_NSIZES_CYCLE, QS_PLAN_CYCLES_CYCLE, CAMPAIGN_CYCLE,
					    DONE_ONLY),
				QF_CYCLE_PLAN, &last_done_progress, 1 },
	[QSTATUS_PROGRESS] = { "status: progress", PROGRESS_9_SQL, QF_PROGRESS_SECONDS,
			       &progress_8, 1 },
	[QSTATUS_SAME_SIZE] = { "status: last of the same size", SAME_SIZE_SQL, QF_NONE, NULL, 1 },
	[QSTATUS_DONE_CYCLE] = { "status: last done cycle", DONE_CYCLE_SQL, QF_NONE, NULL, 1 },
	[QSTATUS_SIZE_SECONDS] = { "status: seconds of each size", SIZE_SECONDS_SQL, QF_MORE_ROWS,
				   NULL, 1 },
	[QSTATUS_LAST_CYCLE] = { "status: last cycle", LAST_CYCLE_SQL, QF_NONE, NULL, 1 },
	[QSTATUS_LAST_ALERT] = { "status: last alert", LAST_ALERT_SQL, QF_NONE, NULL, 1 },
	[QSTATUS_STAGE] = { "status: stage of the phase", STAGE_SQL, QF_PROGRESS_STAGE, NULL, 1 },
};
/* clang-format on */

/* Status query id of this file with its parameters, rows into s. */
#define RUN(db, sc, id, s, ...)                                                                    \
	query_named_sink(db, sc, &query_status_queries[id], QS_PARAMS(__VA_ARGS__), s)

int query_status_runs(struct db *db, const struct query_sink *s)
{
	return query_named_sink(db, NULL, &query_status_queries[QSTATUS_RUNS], NULL, 0, s);
}

/* This machine's name, as wearmond records it in runs.hostname. */
static int this_host(char *buf, size_t len)
{
	if (gethostname(buf, len - 1) != 0)
		return -errno;
	buf[len - 1] = '\0';
	return 0;
}

/* Whether pid's main thread has exited (a zombie, or dead): its process
 * is ending even while another of its threads still holds its files. */
static int exiting(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and parentheses */
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
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
	 * its exit (common/db/db_guard.c). Its exit ends with the last thread:
	 * one still in the kernel (an I/O to a slow device) keeps the lock
	 * while the main thread is already a zombie, and that daemon is gone
	 * all the same. */
	if (pid <= 0 || !db_lock_held_by(db_path, (pid_t)pid) || exiting((pid_t)pid))
		return QUERY_RUN_DEAD;
	return QUERY_RUN_ALIVE;
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

int query_stage(struct db *db, const struct query_schema *sc, int64_t target_id,
		const struct query_sink *s)
{
	return RUN(db, sc, QSTATUS_STAGE, s, QS_INT(target_id));
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

/* ---- the ETA of the cycle and the campaign ------------------------------ */

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
	struct query_sink rows = { eta_row, &e, err, errlen };
	double known = 0, sum = 0, rest = 0, cur;
	int nknown = 0, n = in->nsizes;
	int ret;

	*out = (struct query_eta){ .cycle_eta = NAN, .campaign_eta = NAN, .cycle_seconds = NAN };
	if (n <= 0 || n > ETA_MAX_SIZES || in->size_index < 0 || in->size_index >= n)
		return 0;
	for (int k = 0; k < ETA_MAX_SIZES; k++)
		e.cur[k] = e.prev[k] = NAN;
	ret = RUN(db, in->sc, QSTATUS_SIZE_SECONDS, &rows, QS_INT(in->target_id),
		  QS_INT(in->cycle_id), QS_INT(in->prev_cycle_id));
	if (ret)
		return ret;
	for (int k = 0; k < n; k++)
		if (!isnan(size_seconds(&e, k))) {
			known += size_seconds(&e, k);
			nknown++;
		}
	if (!nknown)
		return 0; /* nothing measured yet to go by (or no more_rows) */
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
