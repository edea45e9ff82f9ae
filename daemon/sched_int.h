/* sched_int: what sched.c, sched_actions.c and sched_resume.c share about
 * one target thread; nothing outside the scheduler includes it. */
#ifndef WEARMON_SCHED_INT_H
#define WEARMON_SCHED_INT_H

#include "sched.h"

/* The phase st is in (published for STATUS= and the progress table);
 * act names the action with PH_ACTION. */
void sched_set_action_phase(struct sched_target *st, enum sched_phase phase, enum cfg_action act);
void sched_set_phase(struct sched_target *st, enum sched_phase phase);

/* Where st is in its phase, in words, and the seconds the phase's plan has
 * left from now (< 0 unknown), for the progress table; a new phase or
 * iteration clears it. */
void sched_set_stage(struct sched_target *st, const char *stage, double remaining);

/* A target-level problem: logged, alerted, remembered as the reason.
 * Returns SCHED_FAILED. */
enum sched_state sched_fail(struct sched_target *st, enum alert_kind kind, int prio, long cycle,
			    const char *msg);

/* Check the device is still the one opened (expect_serial too) and no
 * size changed under the daemon. Returns 0 or -errno after the alert. */
int sched_check_identity(struct sched_target *st, long cycle);

/* A health snapshot at one point of the cycle (wear.h). */
void sched_health(struct sched_target *st, int64_t cycle_id, enum wear_point point);

/* Filesystem mode: a fresh filesystem and test file. Returns 0, -EINTR
 * when a stop cut mkfs short (no alert), or -errno after an alert. */
int sched_fs_prepare(struct sched_target *st, long cycle);

/* Filesystem mode at start: the filesystem to go on with, or a fresh one
 * (which holds none of the rows of rs: they are then run again, rs->n =
 * 0). Returns 0, -EINTR or -errno after an alert. */
int sched_fs_resume(struct sched_target *st, const struct db_resume *res, struct iter_resume *rs);

/* The action after cycle number cycle and its records. Returns RUNNING to
 * go on, STOPPED or FAILED. */
enum sched_state sched_between_cycles(struct sched_target *st, int64_t cycle_id, long cycle);

/* Adopt a reloaded configuration offered (sched_offer_config), at a cycle
 * boundary, when it fits the device this thread holds open. */
void sched_adopt_pending(struct sched_target *st, const struct iter_ctx *ic);

/* Where the target goes on, before anything touches the device, and in
 * rs the rows of the size it goes on with that were done before (rs->row
 * malloc'd, or NULL). Returns RUNNING (cycles to run), DONE (campaign
 * complete), STOPPED or FAILED. */
enum sched_state sched_resume_point(struct sched_target *st, struct db_resume *res,
				    struct iter_resume *rs);

/* The campaign has its cycles: recorded (a failure is logged). Returns
 * SCHED_DONE. */
enum sched_state sched_campaign_done(struct sched_target *st);

#endif
