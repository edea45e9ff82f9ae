/* sched_actions: what a target thread does between the sizes and cycles
 * (sched.c runs them): the action after a cycle and its records, the
 * health snapshots, and filesystem mode's mkfs, release and resume. */
#include "sched.h"

/* Every switch over an enum names each value: -Wswitch-enum here. */
#pragma GCC diagnostic error "-Wswitch-enum"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "device/act.h"
#include "sched_int.h"

/* Filesystem mode: a fresh filesystem and test file. Returns 0, -EINTR
 * when a stop cut mkfs short (no alert), or -errno after an alert. */
int sched_fs_prepare(struct sched_target *st, long cycle)
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
		sched_fail(st, ALERT_ACTION_FAILED, LOG_ERR, cycle, msg);
	} else {
		log_msg(LOG_INFO, "target %s: made %s on %s, test file %s", st->t->name,
			cfg_filesystem_name(st->t->filesystem), st->tg.path, st->fs.file);
		/* its UUID, so that a restart knows the filesystem as its own */
		if (st->fs.uuid[0] &&
		    db_fs_made_add(st->db, st->target_id, st->fs.uuid,
				   cfg_filesystem_name(st->t->filesystem), st->tg.path))
			log_msg(LOG_WARNING, "target %s: cannot record the filesystem made (%s)",
				st->t->name, st->fs.uuid);
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
		sched_fail(st, ALERT_ACTION_FAILED, LOG_ERR, cycle, err);
	return ret;
}

/* Filesystem mode at start: a new filesystem only where the configuration
 * makes one before the size the target resumes at (fsmode.h:
 * fsmode_plan_of), else the one made earlier, mounted again while it is
 * still there and wearmon's; a new one holds nothing of the rows done in
 * the size the cycle goes on with, which then run again (rs->n = 0).
 * Returns as sched_fs_prepare does. */
int sched_fs_resume(struct sched_target *st, const struct db_resume *res, struct iter_resume *rs)
{
	const struct cfg_target *t = st->t;
	struct fsmode_resume r = {
		.resume = res->resume,
		.cycle = res->cycle_number,
		.first_cycle = res->campaign_first_cycle,
		.cycles_done = res->campaign_cycles_done,
		.size_index = res->next_size_index,
		.at_action = res->next_size_index >= st->plan.layout.nsizes,
		.mid_size = res->resume && rs->n > 0,
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
		return sched_fs_prepare(st, r.cycle);
	case FSMODE_REMOUNT: break;
	}
	sched_set_phase(st, PH_FORMAT);
	int ret = fsmode_remount(&st->fs, &st->tg, t, err, sizeof(err));
	if (!ret) {
		log_msg(LOG_NOTICE,
			"target %s: cycle %ld: mounted the %s made earlier on %s again, not "
			"reformatted: this configuration makes it only %s%s; test file %s",
			t->name, r.cycle, fsname, st->tg.path,
			!t->format_each_size ? "at the start of the campaign"
			: r.mid_size ? "before each size, and the cycle goes on within a size"
				     : "before each size, and the cycle resumes at its "
				       "between-cycles action",
			cfg_has_action(t, ACT_SECURE_ERASE) ? " and after secure-erase" : "",
			st->fs.file);
		return 0;
	}
	log_msg(LOG_NOTICE, "target %s: cycle %ld: reformatting %s: %s%s", t->name, r.cycle,
		st->tg.path, err,
		r.mid_size ? "; the rows of the size done before the restart run again" : "");
	rs->n = 0;
	return sched_fs_prepare(st, r.cycle);
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
void sched_health(struct sched_target *st, int64_t cycle_id, enum wear_point point)
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
	sched_fail(st, ALERT_DB_WRITE, LOG_CRIT, cycle, msg);
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
		sched_fail(st, ALERT_DB_WRITE, LOG_CRIT, cycle, msg);
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
		log_msg(LOG_NOTICE,
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
enum sched_state sched_between_cycles(struct sched_target *st, int64_t cycle_id, long cycle)
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
	if (is_destructive(act) && sched_check_identity(st, cycle))
		return SCHED_FAILED;
	if (act == ACT_SECURE_ERASE && fsmode && fs_release(st, cycle))
		return SCHED_FAILED;
	if ((s = action_begin(st, cycle_id, cycle, act)) != SCHED_RUNNING)
		return s;
	sched_set_action_phase(st, PH_ACTION, act);
	if (act != ACT_NONE)
		log_msg(LOG_INFO, "target %s: cycle %ld: %s begins", st->t->name, cycle,
			cfg_action_name(act));
	int ret = act_run(act, &env, &r);
	int effective = !ret && outcome_effective(r.outcome);
	if (!ret && r.outcome == ACT_OUT_OK)
		wear = action_effect(st, act, &env, &ws);
	if (record_action(st, cycle_id, cycle, act, &r, effective, wear))
		return SCHED_FAILED;
	if (act != ACT_NONE && r.outcome != ACT_OUT_INTERRUPTED) {
		sched_set_phase(st, PH_HEALTH);
		sched_health(st, cycle_id, WEAR_AFTER_ACTION);
	}
	if (r.outcome == ACT_OUT_INTERRUPTED)
		return SCHED_STOPPED; /* filesystem mode: target_setup makes it again */
	if (act == ACT_SECURE_ERASE && fsmode && (ret = sched_fs_prepare(st, cycle)))
		return ret == -EINTR ? SCHED_STOPPED : SCHED_FAILED;
	return effective ? SCHED_RUNNING : action_failed(st, cycle, act, &r);
}
