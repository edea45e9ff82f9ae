/* publish: gathers each target's live progress and stored figures into the
 * metrics of daemon/metrics.c and writes the file atomically. */
#include "publish.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alert.h"
#include "base/log.h"
#include "base/eol.h"
#include "db/db_metrics.h"
#include "db/query/query.h"
#include "metrics.h"
#include "base/util.h"

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void publish_init(struct publish *p, const struct cfg *c)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	util_strlcpy(p->path, c->metrics_file, sizeof(p->path));
	p->start_unix = wall_now();
	if (p->path[0] && metrics_remove_stale(p->path) > 0)
		log_msg(LOG_INFO, "metrics_file: removed temporaries a killed run left beside %s",
			p->path);
}

int publish_check(const struct cfg *c, char *err, size_t len)
{
	char dir[PATH_MAX];
	if (!c->metrics_file[0])
		return 0;
	util_strlcpy(dir, c->metrics_file, sizeof(dir));
	if (access(dirname(dir), W_OK) == 0)
		return 0;
	int e = errno, k = cfg_key_index("metrics_file");
	int line = k >= 0 && c->lines[k] ? c->lines[k] : c->section_line;
	snprintf(err, len, "%s:%d: metrics_file: cannot write in %s: %s", c->path, line, dir,
		 strerror(e));
	return -e;
}

static const struct cfg_target *find_cfg(const struct cfg *c, const char *name)
{
	for (int i = 0; i < c->ntargets; i++)
		if (!strcmp(c->targets[i].name, name))
			return &c->targets[i];
	return NULL;
}

static enum metrics_state metrics_state_of(enum sched_state s)
{
	switch (s) {
	case SCHED_RUNNING: return METRICS_RUNNING;
	case SCHED_DONE: return METRICS_DONE;
	case SCHED_STOPPED: return METRICS_STOPPED;
	case SCHED_FAILED: return METRICS_FAILED;
	}
	return METRICS_FAILED;
}

/* The live part: what the thread is doing now. */
static void live_figures(struct sched_target *st, const struct cfg_target *t,
			 struct metrics_target *m)
{
	struct sched_progress p;
	enum sched_state s = __atomic_load_n(&st->state, __ATOMIC_SEQ_CST);

	sched_progress_get(st, &p);
	m->state = metrics_state_of(s);
	if (s == SCHED_RUNNING)
		util_strlcpy(m->phase, sched_phase_name(&p), sizeof(m->phase));
	if (!p.cycle)
		return;
	m->cycle = (double)p.cycle;
	m->iteration = (double)p.iteration;
	m->size_index = p.size_index;
	m->sizes_configured = p.nsizes;
	m->size_bytes = (double)p.size_bytes;
	if (s != SCHED_RUNNING || !p.phase_bytes)
		return;
	int measuring = p.phase == PH_MEASURE, filling = p.phase == PH_FILL;
	if (!measuring && !filling)
		return;
	m->throughput_bps = p.mibps * 1048576.0;
	double base = p.baseline_mibps;
	if (measuring && !(base > 0) && st->alert && alert_baseline(st->alert, p.size_bytes, &base))
		base = -1;
	if (measuring && base > 0)
		m->throughput_ratio = p.mibps / base;
	if (t)
		util_strlcpy(m->workload, cfg_workload_name(t->workload), sizeof(m->workload));
}

static struct db_metrics_state *fig_of(void *arg, int64_t target_id)
{
	struct publish *p = arg;

	for (int i = 0; i < p->nfig; i++)
		if (p->fig[i].target_id == target_id)
			return &p->fig[i];
	return NULL;
}

/* The endurance forecast of f's target over its current campaign, read
 * again after each of its health snapshots (the only rows it reads); a
 * failed read leaves the previous figures. */
static void forecast(struct publish *p, struct db_metrics_state *f)
{
	struct query_forecast_scope scope = { f->target_id, 0, 0, NULL };
	struct eol_forecast *e = malloc(sizeof(*e));
	char err[512] = "";

	if (!e || query_forecast(p->db, &p->sc, &scope, e, NULL, NULL, err, sizeof(err))) {
		if (err[0])
			log_msg(LOG_WARNING, "metrics_file: endurance forecast: %s", err);
		free(e);
		return;
	}
	f->t.eol_end_unix = e->end_t.at;
	f->t.eol_end_lo_unix = e->end_t.lo;
	f->t.eol_end_hi_unix = e->end_t.hi;
	f->t.eol_host_bytes_at_end = e->end_host.at;
	f->t.eol_rated_ratio = e->rated_ratio.at;
	free(e);
}

/* db's row hook: a row of a target's figures was written (by any
 * thread); read it by its key and fold it in. */
static void row_written(void *arg, enum db_row_kind kind, int64_t id)
{
	struct publish *p = arg;

	pthread_mutex_lock(&p->lock);
	db_metrics_apply(p->db, kind, id, fig_of, p);
	for (int i = 0; kind == DB_ROW_HEALTH && i < p->nfig; i++)
		if (p->fig[i].health_id == id)
			forecast(p, &p->fig[i]);
	pthread_mutex_unlock(&p->lock);
}

void publish_seed(struct publish *p, struct db *db, struct sched_target *st, int n)
{
	if (!p->path[0])
		return;
	char err[512];

	p->db = db;
	p->nfig = n < PUBLISH_MAX_TARGETS ? n : PUBLISH_MAX_TARGETS;
	if (query_schema_of(db, &p->sc, err, sizeof(err)))
		log_msg(LOG_WARNING, "metrics_file: %s", err);
	for (int i = 0; i < p->nfig; i++) {
		struct db_metrics_state *f = &p->fig[i];
		memset(f, 0, sizeof(*f));
		f->target_id = st[i].target_id;
		metrics_target_init(&f->t);
		db_metrics_seed(db, f);
		forecast(p, f);
	}
	db_set_row_hook(db, row_written, p);
}

/* The stored figures of target i as the row hook keeps them. */
static void stored_figures(struct publish *p, int i, struct metrics_target *m)
{
	pthread_mutex_lock(&p->lock);
	if (i < p->nfig)
		*m = p->fig[i].t;
	else
		metrics_target_init(m);
	pthread_mutex_unlock(&p->lock);
}

static void gather(struct publish *p, const struct cfg *c, struct sched_target *st, int i,
		   struct metrics_target *m)
{
	const struct cfg_target *t = find_cfg(c, st->tg.name);

	stored_figures(p, i, m);
	m->eol_days_left = eol_days_to(m->eol_end_unix, wall_now());
	m->eol_days_left_lo = eol_days_to(m->eol_end_lo_unix, wall_now());
	m->eol_days_left_hi = eol_days_to(m->eol_end_hi_unix, wall_now());
	util_strlcpy(m->name, st->tg.name, sizeof(m->name));
	util_strlcpy(m->device, st->tg.path, sizeof(m->device));
	util_strlcpy(m->serial, st->tg.serial, sizeof(m->serial));
	if (t)
		util_strlcpy(m->workload, cfg_workload_name(t->workload), sizeof(m->workload));
	live_figures(st, t, m);
}

/* The newest done iteration of target i (0: none or unknown). */
static int64_t newest_done(struct publish *p, int i)
{
	int64_t id = 0;

	pthread_mutex_lock(&p->lock);
	if (i < p->nfig)
		id = p->fig[i].last_done_id;
	pthread_mutex_unlock(&p->lock);
	return id;
}

static int write_now(struct publish *p, const struct cfg *c, struct sched_target *st, int n,
		     enum metrics_daemon daemon)
{
	struct metrics_target *mt = calloc((size_t)(n ? n : 1), sizeof(*mt));
	struct metrics m = {
		.version = WEARMON_VERSION,
		.start_unix = p->start_unix,
		.updated_unix = wall_now(),
		.daemon = daemon,
		.t = mt,
		.n = n,
	};
	char *text = NULL;
	size_t len = 0;
	int ret = -ENOMEM;

	if (!mt)
		return ret;
	for (int i = 0; i < n; i++)
		gather(p, c, &st[i], i, &mt[i]);
	ret = metrics_render(&m, &text, &len);
	if (!ret)
		ret = metrics_write_file(p->path, text, len);
	free(text);
	free(mt);
	return ret;
}

/* Whether the target is in another phase, or the same phase has its first
 * sample, since the last look; remembers what it saw. */
static int stage_moved(struct publish_stage *seen, struct sched_target *st)
{
	struct sched_progress p;

	sched_progress_get(st, &p);
	struct publish_stage now = { p.cycle, p.iteration, (int)p.phase, p.phase_bytes > 0 };
	int moved = now.cycle != seen->cycle || now.iteration != seen->iteration ||
		    now.phase != seen->phase || now.live != seen->live;
	*seen = now;
	return moved;
}

void publish_tick(struct publish *p, const struct cfg *c, struct sched_target *st, int n,
		  enum metrics_daemon daemon, int force)
{
	double now = util_now();
	int due = force || now >= p->next_at;

	if (!p->path[0])
		return;
	if (n > PUBLISH_MAX_TARGETS)
		n = PUBLISH_MAX_TARGETS;
	for (int i = 0; i < n; i++) {
		int64_t last = newest_done(p, i);
		due |= last != p->last_done[i];
		p->last_done[i] = last;
		due |= stage_moved(&p->stage[i], &st[i]);
	}
	if (!due)
		return;
	p->next_at = now + PUBLISH_EVERY;
	int ret = write_now(p, c, st, n, daemon);
	if (ret && !p->failed)
		log_msg(LOG_WARNING, "metrics_file %s: cannot write: %s (retrying, logged once)",
			p->path, strerror(-ret));
	p->failed = ret != 0;
}
