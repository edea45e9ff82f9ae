/* sched: the per-target cycle loop; the target's progress and lock are
 * its own (iter reports through progress_cb). */
#include "sched.h"

/* Every switch over an enum names each value (issue 12): -Wswitch-enum here. */
#pragma GCC diagnostic error "-Wswitch-enum"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "device/act.h"
#include "iter.h"
#include "base/log.h"
#include "signals.h"
#include "base/util.h"

static const char *const state_names[] = { "running", "done", "stopped", "failed" };

const char *sched_state_name(enum sched_state s)
{
	return (unsigned)s < ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

static const char *const phase_names[] = {
	[PH_START] = "start",   [PH_FORMAT] = "format",   [PH_HEALTH] = "health",
	[PH_FILL] = "fill",     [PH_MEASURE] = "measure", [PH_VERIFY] = "verify",
	[PH_ACTION] = "action", [PH_PAUSE] = "pause",
};

const char *sched_phase_name(const struct sched_progress *p)
{
	if (p->phase == PH_ACTION)
		return cfg_action_name(p->action);
	return (unsigned)p->phase < ARRAY_SIZE(phase_names) ? phase_names[p->phase] : "?";
}

static void set_phase(struct sched_target *st, enum sched_phase phase, enum cfg_action act)
{
	pthread_mutex_lock(&st->lock);
	st->prog.phase = phase;
	st->prog.action = act;
	st->prog.mibps = 0;
	st->prog.phase_bytes = 0;
	st->prog.phase_started = util_now();
	pthread_mutex_unlock(&st->lock);
}

static void sched_set_phase(struct sched_target *st, enum sched_phase phase)
{
	set_phase(st, phase, ACT_NONE);
}

static enum sched_phase phase_of(enum iter_phase p)
{
	switch (p) {
	case ITER_FILL: return PH_FILL;
	case ITER_MEASURE: return PH_MEASURE;
	case ITER_VERIFY: return PH_VERIFY;
	}
	return PH_MEASURE;
}

/* iter's reports (iter.h: iter_progress_fn), into the progress. */
static void progress_cb(void *arg, const struct iter_progress *p)
{
	struct sched_target *st = arg;
	switch (p->what) {
	case ITER_PHASE: sched_set_phase(st, phase_of(p->phase)); break;
	case ITER_ROW:
		pthread_mutex_lock(&st->lock);
		st->prog.iteration = p->iteration;
		st->prog.size_index = p->size_index;
		st->prog.size_bytes = p->size_bytes;
		pthread_mutex_unlock(&st->lock);
		break;
	case ITER_SAMPLE:
		pthread_mutex_lock(&st->lock);
		st->prog.mibps = p->mibps;
		st->prog.phase_bytes += p->bytes;
		pthread_mutex_unlock(&st->lock);
		break;
	}
	if (st->tap)
		st->tap(st->tap_arg, p);
}

void sched_progress_get(struct sched_target *st, struct sched_progress *out)
{
	pthread_mutex_lock(&st->lock);
	*out = st->prog;
	pthread_mutex_unlock(&st->lock);
}

void sched_offer_config(struct sched_target *st, const struct cfg *c, const struct cfg_target *t)
{
	pthread_mutex_lock(&st->lock);
	st->pending_cfg = c;
	st->pending_t = t;
	pthread_mutex_unlock(&st->lock);
}

int sched_uses_config(struct sched_target *st, const struct cfg *c)
{
	pthread_mutex_lock(&st->lock);
	int used = st->cfg == c || st->pending_cfg == c;
	pthread_mutex_unlock(&st->lock);
	return used;
}

/* Sleep up to secs, returning early when a stop is requested. */
static void nap(const struct sched_target *st, double secs)
{
	double end = util_now() + secs;
	while (!atomic_load(st->stop)) {
		double left = end - util_now();
		if (left <= 0)
			break;
		struct timespec ts = { 0, (long)((left < 0.1 ? left : 0.1) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

/* A target-level problem: logged, alerted, remembered as the reason. */
static enum sched_state fail(struct sched_target *st, enum alert_kind kind, int prio, long cycle,
			     const char *msg)
{
	util_strlcpy(st->error, msg, sizeof(st->error));
	alert_failure(st->alert, kind, prio, cycle, 0, msg);
	return SCHED_FAILED;
}

/* Check the device is still the one we opened (expect_serial too).
 * Returns 0 or -errno after raising the identity alert. */
static int check_identity(struct sched_target *st, long cycle)
{
	char err[1024];
	int ret = tgt_check_identity(st->cfg, st->t, &st->tg, err, sizeof(err));
	if (!ret)
		ret = watch_check(&st->watch, &st->tg, err, sizeof(err));
	if (ret)
		fail(st, ret == -ENODEV ? ALERT_DEVICE_GONE : ALERT_IDENTITY, LOG_CRIT, cycle, err);
	return ret;
}

/* Filesystem mode: a fresh filesystem and test file. Returns 0, -EINTR
 * when a stop cut mkfs short (no alert), or -errno after an alert. */
static int fs_prepare(struct sched_target *st, long cycle)
{
	char err[1024];
	int ret = 0;
	sched_set_phase(st, PH_FORMAT);
	if (st->fs.mounted)
		ret = fsmode_teardown(&st->fs, &st->tg, err, sizeof(err));
	if (!ret)
		ret = fsmode_setup(&st->fs, &st->tg, st->t, st->stop, err, sizeof(err));
	if (ret == -EINTR) {
		log_msg(LOG_NOTICE, "target %s: stop requested while making the filesystem: %s",
			st->t->name, err);
	} else if (ret) {
		char msg[1100];
		snprintf(msg, sizeof(msg), "filesystem mode: %s", err);
		fail(st, ALERT_ACTION_FAILED, LOG_ERR, cycle, msg);
	} else {
		log_msg(LOG_INFO, "target %s: made %s on %s, test file %s", st->t->name,
			cfg_filesystem_name(st->t->filesystem), st->tg.path, st->fs.file);
	}
	return ret;
}

/* Secure erase in filesystem mode needs the raw device back. */
static int fs_release(struct sched_target *st, long cycle)
{
	char err[1024];
	int ret = fsmode_teardown(&st->fs, &st->tg, err, sizeof(err));
	if (!ret)
		ret = tgt_reopen(&st->tg, err, sizeof(err));
	if (ret)
		fail(st, ALERT_ACTION_FAILED, LOG_ERR, cycle, err);
	return ret;
}

/* Filesystem mode at start: a new filesystem only where the configuration
 * makes one before the size the target resumes at (fsmode.h:
 * fsmode_plan_of), else the one made earlier, mounted again while it is
 * still there and wearmon's. Returns as fs_prepare does. */
static int fs_resume(struct sched_target *st, const struct db_resume *res)
{
	const struct cfg_target *t = st->t;
	struct fsmode_resume r = {
		.resume = res->resume,
		.cycle = res->cycle_number,
		.first_cycle = res->campaign_first_cycle,
		.cycles_done = res->campaign_cycles_done,
		.size_index = res->next_size_index,
		.at_action = res->next_size_index >= st->plan.layout.nsizes,
	};
	const char *fsname = cfg_filesystem_name(t->filesystem);
	char err[1024];
	switch (fsmode_plan_of(t, &r)) {
	case FSMODE_FORMAT_EACH_SIZE: /* run_size makes it */
		if (r.resume)
			log_msg(LOG_INFO,
				"target %s: cycle %ld: size %d starts on a new %s: "
				"format_each_size = yes",
				t->name, r.cycle, r.size_index + 1, fsname);
		return 0;
	case FSMODE_FORMAT_START:
		log_msg(LOG_INFO, "target %s: making %s on %s: cycle %ld starts the campaign",
			t->name, fsname, st->tg.path, r.cycle);
		return fs_prepare(st, r.cycle);
	case FSMODE_REMOUNT: break;
	}
	sched_set_phase(st, PH_FORMAT);
	int ret = fsmode_remount(&st->fs, &st->tg, t, err, sizeof(err));
	if (!ret) {
		log_msg(LOG_NOTICE,
			"target %s: cycle %ld: mounted the %s made earlier on %s again, not "
			"reformatted: this configuration makes it only %s%s; test file %s",
			t->name, r.cycle, fsname, st->tg.path,
			t->format_each_size ? "before each size, and the cycle resumes at its "
					      "between-cycles action"
					    : "at the start of the campaign",
			cfg_has_action(t, ACT_SECURE_ERASE) ? " and after secure-erase" : "",
			st->fs.file);
		return 0;
	}
	log_msg(LOG_NOTICE, "target %s: cycle %ld: reformatting %s: %s", t->name, r.cycle,
		st->tg.path, err);
	return fs_prepare(st, r.cycle);
}

/* What a successful action did to the mapped extents, applied in memory
 * and returned for db_action_end to store with the action's end (NULL:
 * nothing to store). */
static const struct db_wear_state *action_effect(struct sched_target *st, enum cfg_action act,
						 const struct act_env *env,
						 struct db_wear_state *ws)
{
	uint64_t a = 0, b = 0;
	int ret = 0;
	switch (act_effect(act, env, &a, &b)) {
	case EFFECT_TRIMMED: ret = wear_apply(&st->wear, 1, a, b); break;
	case EFFECT_ERASED: ret = wear_apply(&st->wear, 0, 0, 0); break;
	case EFFECT_NONE: return NULL;
	}
	if (ret) {
		log_msg(LOG_ERR, "target %s: the effect of %s on the mapped extents is lost: %s",
			st->t->name, cfg_action_name(act), strerror(-ret));
		return NULL;
	}
	wear_db_state(&st->wear, ws);
	return ws;
}

/* A health snapshot at one point of the cycle (wear.h: WEAR_CYCLE_START,
 * WEAR_CYCLE_END, WEAR_AFTER_ACTION), with what the host has mapped. */
static void health(struct sched_target *st, int64_t cycle_id, enum wear_point point)
{
	int64_t mapped = st->t->filesystem != FS_NONE ? fsmode_allocated(&st->fs) : -1;
	wear_health(&st->wear, &st->tg, cycle_id, point, mapped);
}

static int is_destructive(enum cfg_action a)
{
	return a == ACT_TRIM || a == ACT_SECURE_ERASE;
}

struct action_args {
	struct sched_target *st;
	int64_t cycle_id;
	const struct db_action *a;
	const struct db_wear_state *wear; /* the end: the state it leaves, or NULL */
};

static int store_action_start(void *arg)
{
	const struct action_args *x = arg;
	return db_action_start(x->st->db, x->cycle_id, x->a);
}

static int store_action_end(void *arg)
{
	const struct action_args *x = arg;
	return db_action_end(x->st->db, x->cycle_id, x->a, x->wear);
}

/* Record that the action starts, before it runs, waiting out a locked
 * database (iter_db_patient). Returns RUNNING, STOPPED when a stop came
 * while the database was locked (the action has not started), or FAILED. */
static enum sched_state action_begin(struct sched_target *st, int64_t cycle_id, long cycle,
				     enum cfg_action act)
{
	struct db_action a = { .kind = act };
	struct action_args x = { st, cycle_id, &a, NULL };
	char what[96], msg[256];
	util_iso_now(a.started_at, sizeof(a.started_at));
	snprintf(what, sizeof(what), "cycle %ld: recording the start of %s", cycle,
		 cfg_action_name(act));
	int ret = iter_db_patient(st->t->name, what, st->stop, store_action_start, &x);
	if (!ret)
		return SCHED_RUNNING;
	if (ret == -EBUSY && atomic_load(st->stop))
		return SCHED_STOPPED;
	snprintf(msg, sizeof(msg),
		 "cycle %ld: cannot record the start of %s in the database (%s); not running it",
		 cycle, cfg_action_name(act), strerror(-ret));
	fail(st, ALERT_DB_WRITE, LOG_CRIT, cycle, msg);
	return SCHED_FAILED;
}

/* Log, store and alert an action's outcome; the end is stored with the
 * wear state it leaves, waiting out a locked database even once a stop is
 * requested (without it a restart could not tell a finished action from
 * one a crash cut short). Returns 0, or -1 when it could not be stored
 * (st->error says so). */
static int record_action(struct sched_target *st, int64_t cycle_id, long cycle, enum cfg_action act,
			 const struct act_result *r, int effective,
			 const struct db_wear_state *wear)
{
	struct db_action a = {
		.kind = act,
		.seconds = r->seconds,
		.bytes = r->bytes,
		.outcome = r->outcome,
		.error = r->error[0] ? r->error : NULL,
	};
	struct action_args x = { st, cycle_id, &a, wear };
	char what[96], msg[256];
	int prio = effective ? LOG_INFO : r->outcome == ACT_OUT_INTERRUPTED ? LOG_NOTICE : LOG_ERR;
	if (act == ACT_FITRIM && effective)
		log_msg(LOG_INFO,
			"target %s: cycle %ld: fitrim: emptied the test file (%llu bytes "
			"allocated) first",
			st->t->name, cycle, (unsigned long long)r->freed);
	if (act != ACT_NONE)
		log_msg(prio,
			"target %s: cycle %ld: %s: %s, %llu bytes in "
			"%.2f s%s%s",
			st->t->name, cycle, cfg_action_name(act), act_outcome_name(r->outcome),
			(unsigned long long)a.bytes, a.seconds, a.error ? ": " : "",
			a.error ? a.error : "");
	snprintf(what, sizeof(what), "cycle %ld: recording the end of %s", cycle,
		 cfg_action_name(act));
	int ret = iter_db_patient(st->t->name, what, NULL, store_action_end, &x);
	if (ret) {
		snprintf(msg, sizeof(msg),
			 "cycle %ld: cannot record the end of %s in the database (%s); a restart "
			 "records it interrupted and does not run it again",
			 cycle, cfg_action_name(act), strerror(-ret));
		fail(st, ALERT_DB_WRITE, LOG_CRIT, cycle, msg);
		return -1;
	}
	if (effective)
		alert_action(st->alert, cycle, cycle_id, act, r->outcome == ACT_OUT_OK, a.error);
	return 0;
}

/* An action that failed or is unsupported: alerted, then stop or go on
 * as on_action_error says. */
static enum sched_state action_failed(struct sched_target *st, long cycle, enum cfg_action act,
				      const struct act_result *r)
{
	char msg[1024];
	snprintf(msg, sizeof(msg), "action %s %s%s%s", cfg_action_name(act),
		 act_outcome_name(r->outcome), r->error[0] ? ": " : "", r->error);
	alert_failure(st->alert, ALERT_ACTION_FAILED, LOG_ERR, cycle, 0, msg);
	if (st->t->on_action_error == ON_ERROR_CONTINUE) {
		log_msg(LOG_WARNING,
			"target %s: on_action_error = continue: going on with the next "
			"cycle",
			st->t->name);
		return SCHED_RUNNING;
	}
	util_strlcpy(st->error, msg, sizeof(st->error));
	return SCHED_FAILED;
}

/* Whether an outcome lets the campaign go on as planned. */
static int outcome_effective(enum act_outcome o)
{
	switch (o) {
	case ACT_OUT_OK:
	case ACT_OUT_SKIPPED: return 1;
	case ACT_OUT_UNSUPPORTED:
	case ACT_OUT_FAILED:
	case ACT_OUT_INTERRUPTED:
	case ACT_OUT__COUNT: break;
	}
	return 0;
}

/* The action after a cycle, recorded in the cycle row as started before it
 * runs and as ended after it (common/db/schema.md: a start without an end is
 * never run again). Returns RUNNING to go on, STOPPED when a stop cut it
 * short (it runs again on restart) or came before it started, or FAILED
 * when it failed (or is unsupported) and on_action_error = stop. */
static enum sched_state between_cycles(struct sched_target *st, int64_t cycle_id, long cycle)
{
	enum cfg_action act = cfg_action_after(st->t, cycle);
	int fsmode = st->t->filesystem != FS_NONE;
	struct act_env env = {
		.tg = &st->tg,
		.t = st->t,
		.region_offset = st->plan.layout.region_offset,
		.region_size = st->plan.layout.region_size,
		.stop = st->stop,
		.mountpoint = st->fs.mounted ? st->fs.mnt : NULL,
		.test_file = st->fs.mounted ? st->fs.file : NULL,
		.command_timeout = st->t->command_timeout,
	};
	struct act_result r;
	struct db_wear_state ws;
	const struct db_wear_state *wear = NULL;
	enum sched_state s;
	if (is_destructive(act) && check_identity(st, cycle))
		return SCHED_FAILED;
	if (act == ACT_SECURE_ERASE && fsmode && fs_release(st, cycle))
		return SCHED_FAILED;
	if ((s = action_begin(st, cycle_id, cycle, act)) != SCHED_RUNNING)
		return s;
	set_phase(st, PH_ACTION, act);
	int ret = act_run(act, &env, &r);
	int effective = !ret && outcome_effective(r.outcome);
	if (!ret && r.outcome == ACT_OUT_OK)
		wear = action_effect(st, act, &env, &ws);
	if (record_action(st, cycle_id, cycle, act, &r, effective, wear))
		return SCHED_FAILED;
	if (act != ACT_NONE && r.outcome != ACT_OUT_INTERRUPTED) {
		sched_set_phase(st, PH_HEALTH);
		health(st, cycle_id, WEAR_AFTER_ACTION);
	}
	if (r.outcome == ACT_OUT_INTERRUPTED)
		return SCHED_STOPPED; /* filesystem mode: target_setup makes it again */
	if (act == ACT_SECURE_ERASE && fsmode && (ret = fs_prepare(st, cycle)))
		return ret == -EINTR ? SCHED_STOPPED : SCHED_FAILED;
	return effective ? SCHED_RUNNING : action_failed(st, cycle, act, &r);
}

/* Publish where the cycle is (iter reports the row within it). */
static void publish_cycle(struct sched_target *st, long cycle)
{
	pthread_mutex_lock(&st->lock);
	st->prog.cycle = cycle;
	st->prog.nsizes = st->plan.layout.nsizes;
	st->prog.cycles = (long)st->t->cycles;
	st->prog.duration = st->t->duration;
	pthread_mutex_unlock(&st->lock);
}

struct wear_args {
	struct sched_target *st;
	int64_t cycle_id;
	int i;
};

static int store_wear(void *arg)
{
	const struct wear_args *a = arg;
	struct sched_target *st = a->st;
	int fsmode = st->t->filesystem != FS_NONE;
	return wear_after_size(&st->wear, a->cycle_id, a->i, st->plan.layout.region_offset,
			       st->plan.layout.sizes[a->i], st->tg.capacity,
			       st->plan.layout.region_size,
			       fsmode ? fsmode_allocated(&st->fs) : -1);
}

/* The wear rows of size i's iterations and the state they leave (wear.h:
 * wear_after_size), waiting out a locked database as an iteration's row
 * does (iter_db_patient). One that cannot be stored is logged and the
 * target goes on, as with its health snapshots: those iterations have no
 * wear row and the host byte counters leave them out. */
static void record_wear(struct sched_target *st, int64_t cycle_id, long cycle, int i)
{
	struct wear_args a = { st, cycle_id, i };
	char sz[32], what[96];
	snprintf(what, sizeof(what), "cycle %ld: recording the wear of size %d", cycle, i + 1);
	int ret = iter_db_patient(st->t->name, what, st->stop, store_wear, &a);
	if (ret)
		log_msg(LOG_ERR,
			"target %s: cycle %ld: wear of size %d of %d (%s) not recorded (%s): its "
			"iterations have no wear row and are not in the host byte counters",
			st->t->name, cycle, i + 1, st->plan.layout.nsizes,
			util_fmt_bytes(st->plan.layout.sizes[i], sz, sizeof(sz)), strerror(-ret));
}

/* One size, and the device state it leaves behind. */
static enum it_status run_size(struct sched_target *st, struct iter_ctx *ic, int64_t cycle_id,
			       long cycle, int i, long *number)
{
	int fsmode = st->t->filesystem != FS_NONE, ret;
	if (fsmode && st->t->format_each_size && (ret = fs_prepare(st, cycle)))
		return ret == -EINTR ? IT_INTERRUPTED : IT_FAILED;
	struct iter_env env = {
		.t = st->t,
		.tg = &st->tg,
		.plan = &st->plan,
		.watch = &st->watch,
		.db = st->db,
		.run_id = st->run_id,
		.target_id = st->target_id,
		.cycle_id = cycle_id,
		.cycle = cycle,
		.alert = st->alert,
		.stop = st->stop,
		.progress = progress_cb,
		.arg = st,
		.error = st->error,
		.error_len = sizeof(st->error),
	};
	publish_cycle(st, cycle);
	enum it_status s = iter_run(&env, ic, i, number);
	record_wear(st, cycle_id, cycle, i);
	return s;
}

/* The health phase at a cycle's start, published as that cycle's (the
 * first cycle has no iteration yet that would publish it). */
static void health_phase_at(struct sched_target *st, long cycle, int start, long number)
{
	pthread_mutex_lock(&st->lock);
	st->prog.cycle = cycle;
	st->prog.iteration = number;
	st->prog.size_index = start;
	st->prog.nsizes = st->plan.layout.nsizes;
	st->prog.size_bytes = start < st->plan.layout.nsizes ? st->plan.layout.sizes[start] : 0;
	st->prog.cycles = (long)st->t->cycles;
	pthread_mutex_unlock(&st->lock);
	sched_set_phase(st, PH_HEALTH);
}

/* One cycle from size start on. Returns the state to end in, or RUNNING. */
static enum sched_state run_cycle(struct sched_target *st, struct iter_ctx *ic, int64_t cycle_id,
				  long cycle, int start, long number)
{
	if (check_identity(st, cycle)) {
		db_cycle_end(st->db, cycle_id, DB_FAILED);
		return SCHED_FAILED;
	}
	health_phase_at(st, cycle, start, number);
	health(st, cycle_id, WEAR_CYCLE_START);
	for (int i = start; i < st->plan.layout.nsizes; i++) {
		enum it_status s = run_size(st, ic, cycle_id, cycle, i, &number);
		if (s != IT_DONE) {
			if (s == IT_INTERRUPTED)
				health(st, cycle_id, WEAR_CYCLE_END);
			db_cycle_end(st->db, cycle_id, iter_db_status(s));
			return s == IT_INTERRUPTED ? SCHED_STOPPED : SCHED_FAILED;
		}
	}
	/* the cycle's own wear, apart from the action's */
	sched_set_phase(st, PH_HEALTH);
	health(st, cycle_id, WEAR_CYCLE_END);
	if (atomic_load(st->stop)) {
		db_cycle_end(st->db, cycle_id, DB_INTERRUPTED); /* the action runs on restart */
		return SCHED_STOPPED;
	}
	enum sched_state s = between_cycles(st, cycle_id, cycle);
	if (s != SCHED_RUNNING) {
		db_cycle_end(st->db, cycle_id, s == SCHED_STOPPED ? DB_INTERRUPTED : DB_FAILED);
		return s;
	}
	if (db_cycle_end(st->db, cycle_id, DB_DONE)) {
		char msg[128];
		snprintf(msg, sizeof(msg), "cannot record the end of cycle %ld", cycle);
		return fail(st, ALERT_DB_WRITE, LOG_CRIT, cycle, msg);
	}
	return SCHED_RUNNING;
}

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
static void adopt_pending(struct sched_target *st, const struct iter_ctx *ic)
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
		log_msg(LOG_NOTICE, "target %s: resuming cycle %ld at its between-cycles action",
			name, res->cycle_number);
	else if (res->resume)
		log_msg(LOG_NOTICE,
			"target %s: resuming cycle %ld at size %d of %d (iteration %ld)", name,
			res->cycle_number, res->next_size_index + 1, st->plan.layout.nsizes,
			res->next_iteration);
}

/* Where the target goes on, before anything touches the device. Returns
 * RUNNING (cycles to run), DONE (its campaign is complete), STOPPED or
 * FAILED. */
static enum sched_state resume_point(struct sched_target *st, struct db_resume *res)
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
	if (!res->campaign_complete)
		return SCHED_RUNNING;
	log_msg(LOG_NOTICE, "target %s: campaign complete (%ld cycles), nothing to do", st->t->name,
		res->campaign_cycles_done);
	return SCHED_DONE;
}

static int store_campaign_done(void *arg)
{
	const struct sched_target *st = arg;
	return db_campaign_done(st->db, st->target_id);
}

/* The campaign has its cycles: say so in the database, so that restarts
 * leave it complete (a failure is logged: the next start marks it). */
static enum sched_state campaign_done(struct sched_target *st)
{
	int ret = iter_db_patient(st->t->name, "recording the campaign complete", st->stop,
				  store_campaign_done, st);
	if (ret)
		log_msg(LOG_ERR, "target %s: cannot record the campaign complete: %s", st->t->name,
			strerror(-ret));
	return SCHED_DONE;
}

struct cycle_args {
	struct sched_target *st;
	long cycle;
	int64_t *cycle_id;
};

static int begin_cycle(void *arg)
{
	struct cycle_args *a = arg;
	return db_cycle_begin(a->st->db, a->st->target_id, a->st->run_id, a->cycle, a->cycle_id);
}

static enum sched_state cycles_loop(struct sched_target *st, struct iter_ctx *ic,
				    struct db_resume *res)
{
	long cycle = res->cycle_number, done = res->campaign_cycles_done;
	int ret;
	if (st->t->filesystem != FS_NONE && !(st->t->cycles && done >= st->t->cycles) &&
	    (ret = fs_resume(st, res)))
		return ret == -EINTR && !st->error[0] ? SCHED_STOPPED : SCHED_FAILED;
	for (;;) {
		if (atomic_load(st->stop))
			return SCHED_STOPPED;
		adopt_pending(st, ic);
		if (st->t->cycles && done >= st->t->cycles)
			return campaign_done(st);
		int64_t cycle_id;
		int start = 0;
		long number = 1;
		if (res->resume) {
			cycle_id = res->cycle_id;
			start = res->next_size_index;
			number = res->next_iteration;
			res->resume = 0;
		} else if ((ret = iter_db_patient(st->t->name, "recording a new cycle", st->stop,
						  begin_cycle,
						  &(struct cycle_args){ st, cycle, &cycle_id }))) {
			if (ret == -EBUSY && atomic_load(st->stop))
				return SCHED_STOPPED;
			char msg[160];
			snprintf(msg, sizeof(msg), "cannot record cycle %ld: %s", cycle,
				 strerror(-ret));
			return fail(st, ALERT_DB_WRITE, LOG_CRIT, cycle, msg);
		}
		enum sched_state s = run_cycle(st, ic, cycle_id, cycle, start, number);
		if (s != SCHED_RUNNING)
			return s;
		done++;
		cycle++;
		if (!st->t->cycles || done < st->t->cycles) {
			sched_set_phase(st, PH_PAUSE);
			nap(st, st->t->pause);
		}
	}
}

/* An event that is no alert (no MESSAGE_ID): logged and stored. */
static void note(struct sched_target *st, int prio, const char *kind, const char *msg)
{
	struct db_event e = {
		.target_id = st->target_id,
		.run_id = st->run_id,
		.severity = log_prio_name(prio),
		.kind = kind,
		.message = msg,
		.value = -1,
		.baseline = -1,
	};
	log_msg(prio, "target %s: %s", st->t->name, msg);
	db_event(st->db, &e, NULL);
}

/* Device state to carry on from, and what changed since the last run. */
static int target_setup(struct sched_target *st)
{
	char fw[64], msg[1024];
	if (wear_load(st->db, st->target_id, &st->wear)) {
		fail(st, ALERT_DB_WRITE, LOG_CRIT, 0, "cannot load the wear state");
		return -1;
	}
	st->wear.stop = &signals_stop; /* a stop abandons a snapshot the device holds */
	if (wear_firmware_changed(&st->wear, st->tg.firmware, fw, sizeof(fw)) == 1) {
		snprintf(msg, sizeof(msg),
			 "firmware changed from %s to %s since the last snapshot "
			 "(results before and after may differ)",
			 fw, st->tg.firmware);
		note(st, LOG_NOTICE, "firmware-changed", msg);
	}
	if (st->t->ioengine == IOENGINE_NULL) {
		snprintf(msg, sizeof(msg),
			 "ioengine = null: no I/O reaches %s; the figures of this "
			 "run are simulated (%.0f MiB/s)",
			 st->tg.path, st->limits.null_mibps);
		note(st, LOG_NOTICE, "null-engine", msg);
	}
	if (st->tg.signature[0]) {
		snprintf(msg, sizeof(msg),
			 "%s held a %s; allow_destroy = yes, so it is being "
			 "overwritten",
			 st->tg.path, st->tg.signature);
		note(st, LOG_WARNING, "signature-overwritten", msg);
	}
	return 0;
}

static void target_cleanup(struct sched_target *st)
{
	char err[512];
	if ((st->fs.mounted || st->fs.mnt[0]) &&
	    fsmode_teardown(&st->fs, &st->tg, err, sizeof(err)))
		log_msg(LOG_ERR, "target %s: %s", st->t->name, err);
	wear_free(&st->wear);
}

static void *target_main(void *arg)
{
	struct sched_target *st = arg;
	struct iter_ctx *ic = NULL;

	signals_block_in_thread();
	struct db_resume res = { 0 };
	/* a complete campaign (or no resume point) leaves the device alone */
	enum sched_state s = resume_point(st, &res);
	if (s == SCHED_RUNNING) {
		if (target_setup(st) || iter_init(&st->limits, st->error, sizeof(st->error), &ic))
			s = atomic_load(st->stop) && !st->error[0] ? SCHED_STOPPED : SCHED_FAILED;
		else
			s = cycles_loop(st, ic, &res);
	}
	__atomic_store_n(&st->state, s, __ATOMIC_SEQ_CST);
	iter_fini(ic);
	target_cleanup(st);
	if (st->state == SCHED_FAILED)
		log_msg(LOG_ERR, "target %s: stopped: %s", st->t->name, st->error);
	else
		log_msg(LOG_INFO, "target %s: %s", st->t->name, sched_state_name(st->state));
	return NULL;
}

int sched_start(struct sched_target *st)
{
	struct alert_target who = {
		.name = st->t->name,
		.device = st->tg.path,
		.serial = st->tg.serial[0] ? st->tg.serial : NULL,
		.db = st->db,
		.target_id = st->target_id,
		.run_id = st->run_id,
	};
	int ret = -ENOMEM;
	st->campaign_key = cfg_campaign_key(st->t);
	if (!st->campaign_key || (ret = alert_init(&who, st->t, &st->alert)))
		goto fail;
	if (!st->stop)
		st->stop = &signals_stop;
	pthread_mutex_init(&st->lock, NULL);
	iter_limits_of(&st->plan, &st->limits);
	watch_init(&st->watch, &st->tg, st->t->filesystem != FS_NONE);
	st->prog.baseline_mibps = -1;
	st->prog.phase = PH_START;
	__atomic_store_n(&st->state, SCHED_RUNNING, __ATOMIC_SEQ_CST);
	ret = -pthread_create(&st->thread, NULL, target_main, st);
	if (ret) {
		alert_free(st->alert);
		st->alert = NULL;
		pthread_mutex_destroy(&st->lock);
		goto fail;
	}
	st->started = 1;
	return 0;
fail:
	free(st->campaign_key);
	st->campaign_key = NULL;
	return ret;
}

enum sched_state sched_join(struct sched_target *st)
{
	if (st->started) {
		pthread_join(st->thread, NULL);
		st->started = 0;
		alert_free(st->alert);
		st->alert = NULL;
		free(st->campaign_key);
		st->campaign_key = NULL;
		pthread_mutex_destroy(&st->lock);
	}
	return st->state;
}
