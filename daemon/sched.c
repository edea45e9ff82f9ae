/* sched: the per-target cycle loop; the target's progress and lock are
 * its own (iter reports through progress_cb). */
#include "sched.h"

/* Every switch over an enum names each value (a new value fails the build): -Wswitch-enum. */
#pragma GCC diagnostic error "-Wswitch-enum"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"
#include "base/cmd.h"
#include "base/log.h"
#include "hir.h"
#include "pts.h"
#include "signals.h"

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
	case ITER_PHASE:
		sched_set_phase(st, phase_of(p->phase));
		pthread_mutex_lock(&st->lock);
		st->prog.phase_goal = p->goal;
		pthread_mutex_unlock(&st->lock);
		break;
	case ITER_ROW: /* a new iteration: nothing of the last one's phase is its */
		pthread_mutex_lock(&st->lock);
		st->prog.iteration = p->iteration;
		st->prog.size_index = p->size_index;
		st->prog.size_bytes = p->size_bytes;
		st->prog.phase = PH_START;
		st->prog.action = ACT_NONE;
		st->prog.mibps = 0;
		st->prog.iops = 0;
		st->prog.phase_goal = 0;
		st->prog.phase_bytes = 0;
		st->prog.phase_started = util_now();
		st->prog.iteration_started = st->prog.phase_started;
		st->prog.stage[0] = '\0';
		st->prog.stage_remaining = -1;
		pthread_mutex_unlock(&st->lock);
		break;
	case ITER_SAMPLE:
		pthread_mutex_lock(&st->lock);
		st->prog.mibps = p->mibps;
		st->prog.iops = p->iops;
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

/* One size, and the device state it leaves behind. rs: the rows of it done
 * before a restart (NULL: none); the filesystem that holds them stays. */
static enum it_status run_size(struct sched_target *st, struct iter_ctx *ic, int64_t cycle_id,
			       long cycle, int i, long *number, struct iter_resume *rs)
{
	int fsmode = st->t->filesystem != FS_NONE, ret;
	int goes_on = rs && rs->n;
	if (fsmode && st->t->format_each_size && !goes_on && (ret = sched_fs_prepare(st, cycle)))
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
		.resume = rs,
	};
	publish_cycle(st, cycle);
	/* pts = : the PTS tests at the one size, the active range */
	enum it_status s = st->plan.pts.active ? pts_run(&env, &st->limits, i, number)
					       : iter_run(&env, ic, i, number);
	record_wear(st, cycle_id, cycle, i);
	return s;
}

/* hir.h: hir_stage_fn, into the progress. */
static void hir_stage(void *arg, const char *stage, double remaining)
{
	sched_set_stage(arg, stage, remaining);
}

/* Host idle recovery after the cycle's sizes (hir = yes; hir.h): runs,
 * or goes on with, what the cycle's rows lack. */
static enum it_status run_hir(struct sched_target *st, struct iter_ctx *ic, int64_t cycle_id,
			      long cycle)
{
	struct hir_env env = {
		.t = st->t,
		.plan = &st->plan,
		.tg = &st->tg,
		.db = st->db,
		.wear = &st->wear,
		.run_id = st->run_id,
		.target_id = st->target_id,
		.cycle_id = cycle_id,
		.cycle = cycle,
		.eng = iter_engine(ic),
		.stop = st->stop,
		.stage = hir_stage,
		.arg = st,
		.error = st->error,
		.error_len = sizeof(st->error),
	};
	sched_set_phase(st, PH_HIR);
	/* its purge erases or trims: the device must still be the one opened,
	 * as before a between-cycles action (alerted there) */
	if (st->t->hir_purge != HIR_PURGE_NONE && sched_check_identity(st, cycle))
		return IT_FAILED;
	enum it_status s = hir_run(&env);
	if (s == IT_FAILED)
		alert_failure(st->alert, ALERT_ITERATION_FAILED, LOG_ERR, cycle, 0, st->error);
	return s;
}

/* The health phase at a cycle's start, published as that cycle's (the
 * first cycle has no iteration yet that would publish it). */
static void health_phase_at(struct sched_target *st, int64_t cycle_id, long cycle, int start,
			    long number)
{
	pthread_mutex_lock(&st->lock);
	st->prog.cycle = cycle;
	st->prog.cycle_id = cycle_id;
	st->prog.iteration = number;
	st->prog.iteration_started = 0; /* its clock starts with its row (ITER_ROW) */
	st->prog.size_index = start;
	st->prog.nsizes = st->plan.layout.nsizes;
	st->prog.size_bytes = start < st->plan.layout.nsizes ? st->plan.layout.sizes[start] : 0;
	st->prog.cycles = (long)st->t->cycles;
	pthread_mutex_unlock(&st->lock);
	sched_set_phase(st, PH_HEALTH);
}

/* The rating the endurance forecast compares with, as the configuration
 * the cycle runs with gives it (a reload changes it from the next cycle). */
static void record_rating(struct sched_target *st, long cycle)
{
	const struct cfg_target *t = st->t;
	struct db_rating r = { t->rated_tbw, t->rated_dwpd, t->warranty_years, t->warranty_start };

	if (db_target_rating(st->db, st->target_id, &r))
		log_msg(LOG_WARNING,
			"target %s: cycle %ld: its rated endurance not recorded; the endurance "
			"forecast compares with the one recorded before",
			t->name, cycle);
}

/* One cycle from size start on (rs: its rows done before a restart, or
 * NULL). Returns the state to end in, or RUNNING. */
static enum sched_state run_cycle(struct sched_target *st, struct iter_ctx *ic, int64_t cycle_id,
				  long cycle, int start, long number, struct iter_resume *rs)
{
	if (sched_check_identity(st, cycle)) {
		db_cycle_end(st->db, cycle_id, DB_FAILED);
		return SCHED_FAILED;
	}
	health_phase_at(st, cycle_id, cycle, start, number);
	if (db_cycle_plan(st->db, cycle_id, st->plan.layout.nsizes, (long)st->t->cycles))
		log_msg(LOG_WARNING,
			"target %s: cycle %ld: its plan (sizes, cycles) not recorded; status "
			"counts the sizes from the progress row instead",
			st->t->name, cycle);
	record_rating(st, cycle);
	sched_health(st, cycle_id, WEAR_CYCLE_START);
	for (int i = start; i < st->plan.layout.nsizes; i++) {
		enum it_status s =
			run_size(st, ic, cycle_id, cycle, i, &number, i == start ? rs : NULL);
		if (s != IT_DONE) {
			if (s == IT_INTERRUPTED)
				sched_health(st, cycle_id, WEAR_CYCLE_END);
			db_cycle_end(st->db, cycle_id, iter_db_status(s));
			return s == IT_INTERRUPTED ? SCHED_STOPPED : SCHED_FAILED;
		}
	}
	if (st->t->hir || st->plan.pts.hir) {
		enum it_status s = run_hir(st, ic, cycle_id, cycle);
		if (s != IT_DONE) {
			if (s == IT_INTERRUPTED)
				sched_health(st, cycle_id, WEAR_CYCLE_END);
			db_cycle_end(st->db, cycle_id, iter_db_status(s));
			return s == IT_INTERRUPTED ? SCHED_STOPPED : SCHED_FAILED;
		}
	}
	/* the cycle's own wear, apart from the action's */
	sched_set_phase(st, PH_HEALTH);
	sched_health(st, cycle_id, WEAR_CYCLE_END);
	if (atomic_load(st->stop)) {
		db_cycle_end(st->db, cycle_id, DB_INTERRUPTED); /* the action runs on restart */
		return SCHED_STOPPED;
	}
	enum sched_state s = sched_between_cycles(st, cycle_id, cycle);
	if (s != SCHED_RUNNING) {
		db_cycle_end(st->db, cycle_id, s == SCHED_STOPPED ? DB_INTERRUPTED : DB_FAILED);
		return s;
	}
	if (db_cycle_end(st->db, cycle_id, DB_DONE)) {
		char msg[128];
		snprintf(msg, sizeof(msg), "cannot record the end of cycle %ld", cycle);
		return sched_fail(st, ALERT_DB_WRITE, LOG_CRIT, cycle, msg);
	}
	return SCHED_RUNNING;
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
				    struct db_resume *res, struct iter_resume *rs)
{
	long cycle = res->cycle_number, done = res->campaign_cycles_done;
	int ret;

	pthread_mutex_lock(&st->lock);
	st->prog.campaign_first = res->campaign_first_cycle;
	pthread_mutex_unlock(&st->lock);
	if (st->t->filesystem != FS_NONE && !(st->t->cycles && done >= st->t->cycles) &&
	    (ret = sched_fs_resume(st, res, rs)))
		return ret == -EINTR && !st->error[0] ? SCHED_STOPPED : SCHED_FAILED;
	for (;;) {
		if (atomic_load(st->stop))
			return SCHED_STOPPED;
		sched_adopt_pending(st, ic);
		if (st->t->cycles && done >= st->t->cycles)
			return sched_campaign_done(st);
		int64_t cycle_id;
		int start = 0;
		long number = 1;
		struct iter_resume *goes_on = res->resume ? rs : NULL;
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
			return sched_fail(st, ALERT_DB_WRITE, LOG_CRIT, cycle, msg);
		}
		enum sched_state s = run_cycle(st, ic, cycle_id, cycle, start, number, goes_on);
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
		sched_fail(st, ALERT_DB_WRITE, LOG_CRIT, 0, "cannot load the wear state");
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
	if (st->tg.signature[0] && st->tg.signature_uuid[0] &&
	    db_fs_made(st->db, st->target_id, st->tg.signature_uuid) == 1) {
		log_msg(LOG_INFO, "target %s: %s holds the %s wearmon made (UUID %s)", st->t->name,
			st->tg.path, st->tg.signature, st->tg.signature_uuid);
	} else if (st->tg.signature[0]) {
		snprintf(msg, sizeof(msg),
			 "%s held a %s; allow_destroy = yes, so it is being "
			 "overwritten",
			 st->tg.path, st->tg.signature);
		note(st, LOG_WARNING, "signature-overwritten", msg);
	}
	return 0;
}

/* The engine the target runs on, once per start: which and why (the
 * choice of ioengine = auto), and an event when its figures are
 * simulated. */
static void engine_note(struct sched_target *st, const struct engine_ctx *e)
{
	char msg[512];

	log_msg(LOG_INFO, "target %s: I/O engine %s", st->t->name, engine_describe(e));
	if (engine_is_null(e)) {
		snprintf(msg, sizeof(msg),
			 "ioengine = null: no I/O reaches %s; the figures of this "
			 "run are simulated (%.0f MiB/s)",
			 st->tg.path, st->limits.null_mibps);
		note(st, LOG_NOTICE, "null-engine", msg);
	}
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
	cmd_set_owner(st->target_id); /* the commands of this thread are the target's */
	struct db_resume res = { 0 };
	struct iter_resume rs = { 0 };
	/* a complete campaign (or no resume point) leaves the device alone */
	enum sched_state s = sched_resume_point(st, &res, &rs);
	if (s == SCHED_RUNNING) {
		if (target_setup(st) || iter_init(&st->limits, st->error, sizeof(st->error), &ic)) {
			s = atomic_load(st->stop) && !st->error[0] ? SCHED_STOPPED : SCHED_FAILED;
		} else {
			engine_note(st, iter_engine(ic));
			s = cycles_loop(st, ic, &res, &rs);
		}
		/* a stop before the reopened cycle ran again: it stays
		 * interrupted, as the stop found it, not running */
		if (s == SCHED_STOPPED && res.resume)
			db_cycle_end(st->db, res.cycle_id, DB_INTERRUPTED);
	}
	free((void *)rs.row);
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
		.model = st->tg.model[0] ? st->tg.model : NULL,
		.firmware = st->tg.firmware[0] ? st->tg.firmware : NULL,
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
	st->prog.stage_remaining = -1;
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
