/* sched: one thread per target running cycles of sizes and the action
 * between cycles. Owns the target's state, progress and lock; each size
 * is handed to iter (iter.h) in one struct iter_env, and iter reports back
 * through a callback that sched implements. Owns no configuration parsing
 * and no process-wide state besides the stop flag it reads. */
#ifndef WEARMON_SCHED_H
#define WEARMON_SCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "alert.h"
#include "config/cfg.h"
#include "config/plan.h"
#include "db/db.h"
#include "device/fsmode.h"
#include "iter.h"
#include "device/tgt.h"
#include "watch.h"
#include "device/wear.h"

enum sched_state { SCHED_RUNNING, SCHED_DONE, SCHED_STOPPED, SCHED_FAILED };

/* The phase a target is in; text (sched_phase_name) only for STATUS= and
 * the progress table. */
enum sched_phase {
	PH_START,  /* opening, before the first cycle */
	PH_FORMAT, /* mkfs (filesystem mode) */
	PH_HEALTH, /* the health snapshot at a cycle's start */
	PH_FILL,
	PH_MEASURE,
	PH_VERIFY, /* the read-back row of verify_phase */
	PH_ACTION, /* the between-cycles action (see action) */
	PH_PAUSE,
	PH_HIR, /* host idle recovery (hir.h) after the sizes */
};

/* What a target is doing now, for STATUS= and logs. */
struct sched_progress {
	long cycle, iteration;
	int64_t cycle_id; /* the cycle's row; 0 before the first */
	int size_index, nsizes;
	uint64_t size_bytes;
	enum sched_phase phase;
	enum cfg_action action;   /* when phase is PH_ACTION */
	double mibps;             /* last sample of the current phase */
	double iops;              /* ... its IOPS */
	uint64_t phase_goal;      /* bytes the I/O phase moves at most; 0 unknown */
	long campaign_first;      /* first cycle of the current campaign (0 unknown):
				       cycle - campaign_first + 1 is the cycle's
				       place in it ("cycle 1 of 2") */
	uint64_t phase_bytes;     /* moved so far in the current phase */
	double baseline_mibps;    /* < 0: none yet */
	double phase_started;     /* util_now() when the phase began */
	double iteration_started; /* util_now() when the iteration began; 0 none */
	long cycles;              /* configured cycles (0 = forever) */
	double duration;          /* configured duration of a measured phase */
	char stage[128];          /* the phase's stage in words ("" none: host
				       idle recovery's, hir.h) */
	double stage_remaining;   /* seconds the phase's plan had left when the
				       stage began; < 0 unknown */
	double stage_started;     /* util_now() then */
};

struct sched_target {
	const struct cfg *cfg;
	const struct cfg_target *t;
	struct tgt tg;
	struct plan plan; /* t resolved for tg: what the cycles read */
	struct db *db;
	int64_t run_id, target_id;
	pthread_t thread;
	int started;
	enum sched_state state; /* __atomic_store_n by the thread, __atomic_load_n
				       by main at any time (STATUS=, exit) */
	char error[1024];
	struct alert_ctx *alert;
	pthread_mutex_t lock; /* guards prog and the pending config */
	struct sched_progress prog;
	struct { /* the stage of the last progress row; main thread only */
		long cycle, iteration;
		int phase;
	} published;
	atomic_int *stop;     /* stop flag; NULL at sched_start: signals_stop */
	iter_progress_fn tap; /* NULL, or told each report of iter once it is
				       in prog (tests stop a run at a chosen point) */
	void *tap_arg;
	struct iter_limits limits; /* what the engines are sized for (start) */
	struct wear_state wear;    /* mapped extents, host bytes */
	struct fsmode fs;          /* filesystem mode state */
	struct watch watch;        /* the sizes seen at start (watch.h) */
	const struct cfg *pending_cfg;
	const struct cfg_target *pending_t;
	int new_campaign;   /* set before sched_start: the operator asked for a
				       new campaign (--new-campaign) */
	char *campaign_key; /* cfg_campaign_key of t at start (sched_start) */
};

/* Start the target's thread. Returns 0 or -errno. */
int sched_start(struct sched_target *st);

/* Wait for the thread. Returns its final state. */
enum sched_state sched_join(struct sched_target *st);

/* Text of a progress's phase: "start", "format", "health", "fill",
 * "measure", "verify", the action's name ("trim", "idle", ...), "pause",
 * "hir". */
const char *sched_phase_name(const struct sched_progress *p);

/* Copy the target's progress (thread-safe). */
void sched_progress_get(struct sched_target *st, struct sched_progress *out);

/* Offer a reloaded configuration for this target; the thread adopts it at
 * its next cycle boundary (and keeps the old one if it does not fit the
 * device). c must stay valid until the process ends. */
void sched_offer_config(struct sched_target *st, const struct cfg *c, const struct cfg_target *t);

/* Whether the target still holds c, as its configuration or the one
 * offered (thread-safe). Returns 1 or 0. */
int sched_uses_config(struct sched_target *st, const struct cfg *c);

/* Name of a state ("running", "done", "stopped", "failed"). */
const char *sched_state_name(enum sched_state s);

#endif
