/* sched_resume: where a target thread goes on (the resume point in the
 * database, the campaign's end) and a reload adopted at a cycle boundary. */
#include "sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "sched_int.h"

/* Take a reloaded configuration at a cycle boundary, when it still fits
 * the device this thread holds open. Called with st->lock held: main frees
 * a configuration once it is neither st->cfg nor st->pending_cfg. */
static void adopt_locked(struct sched_target *st)
{
	const struct cfg *c = st->pending_cfg;
	const struct cfg_target *t = st->pending_t;
	st->pending_cfg = NULL;
	st->pending_t = NULL;
	if (!c)
		return;
	char err[CFG_ERR_MAX];
	struct plan p; /* resolved here, once, for every cycle from this one */
	int ret =
		plan_build(c, t, st->tg.capacity, st->tg.logical_block_size, &p, err, sizeof(err));
	if (strcmp(t->device, st->t->device)) {
		log_msg(LOG_ERR, "target %s: reload changes device to %s; keeping %s until restart",
			t->name, t->device, st->t->device);
		return;
	}
	if (!iter_within(&st->limits, &p)) {
		log_msg(LOG_ERR,
			"target %s: reload changes the I/O engine or raises queue depth, "
			"block size or jobs beyond what this process allocated; keeping the old "
			"configuration until restart",
			t->name);
		return;
	}
	if (ret) {
		log_msg(LOG_ERR,
			"target %s: reloaded configuration does not fit the device, keeping "
			"the old one: %s",
			t->name, err);
		return;
	}
	st->cfg = c;
	st->t = t;
	st->plan = p;
	alert_set_config(st->alert, t);
	log_msg(LOG_INFO, "target %s: reloaded configuration in effect from this cycle", t->name);
}

static int store_campaign_key(void *arg)
{
	const struct sched_target *st = arg;
	return db_campaign_key(st->db, st->target_id, st->campaign_key);
}

/* A reload goes on with the campaign under way; its campaign keys become
 * the campaign's, so a restart compares with what ran last. */
void sched_adopt_pending(struct sched_target *st, const struct iter_ctx *ic)
{
	pthread_mutex_lock(&st->lock);
	const struct cfg_target *before = st->t;
	adopt_locked(st);
	int adopted = st->t != before;
	pthread_mutex_unlock(&st->lock);
	char *key = adopted ? cfg_campaign_key(st->t) : NULL;
	if (!key || !strcmp(key, st->campaign_key)) {
		free(key);
		return;
	}
	free(st->campaign_key);
	st->campaign_key = key;
	int ret = iter_db_patient(st->t->name, "recording the reloaded campaign keys", st->stop,
				  store_campaign_key, st);
	if (ret)
		log_msg(LOG_ERR,
			"target %s: cannot record the reloaded campaign keys (%s); the next start "
			"compares with the old ones",
			st->t->name, strerror(-ret));
}

struct resume_args {
	struct sched_target *st;
	struct db_resume *res;
};

static int read_resume(void *arg)
{
	struct resume_args *a = arg;
	struct db_campaign_req q = {
		.cycles = (long)a->st->t->cycles,
		.key = a->st->campaign_key,
		.new_campaign = a->st->new_campaign,
	};
	return db_resume_point(a->st->db, a->st->target_id, &q, a->res);
}

/* Log what the resume point found and decided. */
static void resume_log(const struct sched_target *st, const struct db_resume *res)
{
	const char *name = st->t->name;
	if (res->interrupted_marked)
		log_msg(LOG_NOTICE,
			"target %s: %ld iteration(s) left running by an earlier process marked interrupted",
			name, res->interrupted_marked);
	if (res->action_crashed)
		log_msg(LOG_WARNING,
			"target %s: cycle %ld: its between-cycles action was cut short by a crash "
			"or kill; recorded as interrupted and not run again",
			name, res->action_crashed);
	if (res->action_closed)
		log_msg(LOG_NOTICE, "target %s: cycle %ld: its action had ended; cycle closed",
			name, res->action_closed);
	if (res->campaign_new && st->new_campaign)
		log_msg(LOG_NOTICE,
			"target %s: a new campaign begins at cycle %ld (--new-campaign)", name,
			res->cycle_number);
	else if (res->campaign_new)
		log_msg(LOG_NOTICE,
			"target %s: campaign keys changed (%s): a new campaign begins at cycle %ld",
			name, res->changed, res->cycle_number);
	if (res->resume && res->next_size_index >= st->plan.layout.nsizes)
		log_msg(LOG_NOTICE, "target %s: resuming cycle %ld at its %sbetween-cycles action",
			name, res->cycle_number,
			st->t->hir ? "host idle recovery (what its rows lack), then its " : "");
	else if (res->resume)
		log_msg(LOG_NOTICE,
			"target %s: resuming cycle %ld at size %d of %d (iteration %ld)", name,
			res->cycle_number, res->next_size_index + 1, st->plan.layout.nsizes,
			res->next_iteration);
}

/* The rows of the size a resumed cycle goes on with that a run before the
 * restart finished: a kill during a size's later rows (its read-back, a
 * repeat, a round) leaves the earlier ones done, and they are not measured
 * again (iter.h: iter_resume). Returns 0 or -errno (st->error set). */
static int rows_done(struct sched_target *st, const struct db_resume *res, struct iter_resume *rs)
{
	struct db_done_row *rows = NULL;
	size_t n = 0;
	memset(rs, 0, sizeof(*rs));
	if (!res->resume || res->next_size_index >= st->plan.layout.nsizes)
		return 0;
	int ret = db_size_rows_done(st->db, res->cycle_id, res->next_size_index, &rows, &n);
	if (ret) {
		snprintf(st->error, sizeof(st->error),
			 "cannot read the rows done of size %d of cycle %ld: %s",
			 res->next_size_index + 1, res->cycle_number, strerror(-ret));
		return ret;
	}
	rs->row = rows;
	rs->n = n;
	if (n && st->plan.pts.n)
		log_msg(LOG_NOTICE,
			"target %s: cycle %ld: size %d has %zu row(s) done before the restart; "
			"its PTS tests run again from their first round, in new rows",
			st->t->name, res->cycle_number, res->next_size_index + 1, n);
	else if (n)
		log_msg(LOG_NOTICE,
			"target %s: cycle %ld: size %d has %zu row(s) done before the restart; "
			"it goes on with the row that was cut",
			st->t->name, res->cycle_number, res->next_size_index + 1, n);
	return 0;
}

/* Where the target goes on, before anything touches the device. Returns
 * RUNNING (cycles to run), DONE (its campaign is complete), STOPPED or
 * FAILED. */
enum sched_state sched_resume_point(struct sched_target *st, struct db_resume *res,
				    struct iter_resume *rs)
{
	struct resume_args ra = { st, res };
	int ret = iter_db_patient(st->t->name, "reading the resume point", st->stop, read_resume,
				  &ra);
	if (ret == -EBUSY && atomic_load(st->stop))
		return SCHED_STOPPED; /* stopped while the database was locked */
	if (ret) {
		snprintf(st->error, sizeof(st->error), "cannot read resume point: %s",
			 strerror(-ret));
		return SCHED_FAILED;
	}
	resume_log(st, res);
	if (rows_done(st, res, rs))
		return SCHED_FAILED;
	if (!res->campaign_complete)
		return SCHED_RUNNING;
	log_msg(LOG_NOTICE,
		"target %s: campaign complete (%ld cycles), nothing to do; to begin a new "
		"campaign: wearmond --new-campaign %s -c %s",
		st->t->name, res->campaign_cycles_done, st->t->name, st->cfg->path);
	return SCHED_DONE;
}

static int store_campaign_done(void *arg)
{
	const struct sched_target *st = arg;
	return db_campaign_done(st->db, st->target_id);
}

/* The campaign has its cycles: say so in the database, so that restarts
 * leave it complete (a failure is logged: the next start marks it). */
enum sched_state sched_campaign_done(struct sched_target *st)
{
	int ret = iter_db_patient(st->t->name, "recording the campaign complete", st->stop,
				  store_campaign_done, st);
	if (ret)
		log_msg(LOG_ERR, "target %s: cannot record the campaign complete: %s", st->t->name,
			strerror(-ret));
	return SCHED_DONE;
}
