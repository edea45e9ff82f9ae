/* hir: host idle recovery, the SNIA PTS HIR test (hir = yes; wearmond(8),
 * "Host idle recovery"). After a cycle's sizes: a purge of the drive
 * (hir_purge: a secure erase, or TRIM of the span, through device/act.h;
 * a row of hir_purges either way), then 4 KiB random writes over the
 * region in rounds of hir_round until the last rounds are steady
 * (steady.h) or max_rounds pass; then for each wait state of
 * hir_wait_states, hir_repetitions times a burst of hir_burst followed by
 * an idle wait of that state; after each wait state hir_baseline of
 * continuous writing. Every round, burst and baseline is a row of
 * hir_bursts (db.h) with the drive's own counters over it
 * (device/devpoll.h), a burst's row also those over the wait after it
 * (the media bytes the drive writes while idle: its background garbage
 * collection), and its writes are added to the target's host counters
 * and mapped extents as an iteration's are (device/wear.h:
 * wear_after_hir). A cycle's protocol goes on from its rows after a
 * restart (hir_next); a stop ends it at once, dropping only the burst or
 * wait in progress. Owns no thread, state or engine. */
#ifndef WEARMON_HIR_H
#define WEARMON_HIR_H

#include <stdatomic.h>
#include <stddef.h>

#include "config/cfg.h"
#include "config/plan.h"
#include "db/db.h"
#include "device/tgt.h"
#include "device/wear.h"
#include "io/engine.h"
#include "iter.h"

/* What a cycle's protocol does next. */
enum hir_stage { HIR_PURGE, HIR_PRECONDITION, HIR_BURST, HIR_BASELINE, HIR_COMPLETE };

struct hir_step {
	enum hir_stage stage;
	int state;       /* 1-based wait state (burst, baseline) */
	long repetition; /* burst: its number in the wait state */
	int rebaseline;  /* write continuously first (a restart idled the drive) */
};

/* Where a cycle's protocol goes on, from the progress its rows show (p),
 * nstates wait states of reps bursts, with (baseline 1) or without a
 * return to baseline after each: the purge when nothing of the cycle is
 * stored (a purge cut short or failed runs again; rounds of an older
 * protocol without one go on unpurged). Pure. */
void hir_next(const struct db_hir_progress *p, int nstates, long reps, int baseline,
	      struct hir_step *out);

/* Seconds the protocol has left by t's configuration from the start of
 * step s (a burst: with rebaseline, the writing before it; then the burst
 * and its idle wait), round being the precondition round about to run
 * (1-based) of at most max_rounds: the rounds left, then the bursts,
 * waits and baselines of the wait states left (a purge counts as none:
 * its length is the drive's). Pure. */
double hir_remaining(const struct cfg_target *t, const struct hir_step *s, long round);

/* Told where the protocol is: its stage in words and the seconds
 * hir_remaining gives from there. */
typedef void (*hir_stage_fn)(void *arg, const char *stage, double remaining);

/* Everything one cycle's protocol needs, borrowed for the call. */
struct hir_env {
	const struct cfg_target *t;
	const struct plan *plan; /* the region */
	struct tgt *tg;          /* a purge by secure_erase_command reopens its fd */
	struct db *db;
	struct wear_state *wear; /* the target's: every row's writes count
				    there (device/wear.h: wear_after_hir) */
	int64_t run_id, target_id, cycle_id;
	long cycle;
	struct engine_ctx *eng;
	const atomic_int *stop;
	hir_stage_fn stage; /* NULL: nobody asks */
	void *arg;
	char *error; /* why it failed */
	size_t error_len;
};

/* Run (or go on with) the protocol of cycle e->cycle_id. Returns IT_DONE,
 * IT_INTERRUPTED (stop) or IT_FAILED (reason in e->error). */
enum it_status hir_run(const struct hir_env *e);

/* The purge that starts the protocol (hir_run runs it first): the one
 * hir_purge asks for, as device/act.h runs it, applied to e->wear and
 * stored with how it ended (a row of hir_purges; after a stop too, so a
 * restart runs it again, unless its secure_erase_command had ended with
 * status 0: then that erase is the purge). Returns IT_DONE (a purge, or none that the
 * drive allows or the configuration asks for), IT_INTERRUPTED, or
 * IT_FAILED (reason in e->error: one that hir_purge asks for and the
 * drive cannot do, or a failure). */
enum it_status hir_purge(const struct hir_env *e);

#endif
