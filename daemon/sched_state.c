/* sched_state: a target's state and phase names, its published phase, and
 * the two ways a target fails (sched_fail, the identity check), which the
 * cycle loop (sched.c) and the between-cycles actions (sched_actions.c)
 * both use; calls neither of them. */
#include "sched.h"

#include <errno.h>

#include "base/log.h"
#include "sched_int.h"

static const char *const state_names[] = { "running", "done", "stopped", "failed" };

const char *sched_state_name(enum sched_state s)
{
	return (unsigned)s < ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

static const char *const phase_names[] = {
	[PH_START] = "start",   [PH_FORMAT] = "format",   [PH_HEALTH] = "health",
	[PH_FILL] = "fill",     [PH_MEASURE] = "measure", [PH_VERIFY] = "verify",
	[PH_ACTION] = "action", [PH_PAUSE] = "pause",     [PH_HIR] = "hir",
};

const char *sched_phase_name(const struct sched_progress *p)
{
	if (p->phase == PH_ACTION)
		return cfg_action_name(p->action);
	return (unsigned)p->phase < ARRAY_SIZE(phase_names) ? phase_names[p->phase] : "?";
}

void sched_set_action_phase(struct sched_target *st, enum sched_phase phase, enum cfg_action act)
{
	pthread_mutex_lock(&st->lock);
	st->prog.phase = phase;
	st->prog.action = act;
	st->prog.mibps = 0;
	st->prog.iops = 0;
	st->prog.phase_goal = 0;
	st->prog.phase_bytes = 0;
	st->prog.phase_started = util_now();
	st->prog.stage[0] = '\0';
	st->prog.stage_remaining = -1;
	pthread_mutex_unlock(&st->lock);
}

void sched_set_stage(struct sched_target *st, const char *stage, double remaining)
{
	pthread_mutex_lock(&st->lock);
	util_strlcpy(st->prog.stage, stage, sizeof(st->prog.stage));
	st->prog.stage_remaining = remaining;
	st->prog.stage_started = util_now();
	pthread_mutex_unlock(&st->lock);
}

void sched_set_phase(struct sched_target *st, enum sched_phase phase)
{
	sched_set_action_phase(st, phase, ACT_NONE);
}

/* A target-level problem: logged, alerted, remembered as the reason. */
enum sched_state sched_fail(struct sched_target *st, enum alert_kind kind, int prio, long cycle,
			    const char *msg)
{
	util_strlcpy(st->error, msg, sizeof(st->error));
	alert_failure(st->alert, kind, prio, cycle, 0, msg);
	return SCHED_FAILED;
}

/* Check the device is still the one we opened (expect_serial too).
 * Returns 0 or -errno after raising the identity alert. */
int sched_check_identity(struct sched_target *st, long cycle)
{
	char err[1024];
	int ret = tgt_check_identity(st->cfg, st->t, &st->tg, err, sizeof(err));
	if (!ret)
		ret = watch_check(&st->watch, &st->tg, err, sizeof(err));
	if (ret)
		sched_fail(st, ret == -ENODEV ? ALERT_DEVICE_GONE : ALERT_IDENTITY, LOG_CRIT, cycle,
			   err);
	return ret;
}
