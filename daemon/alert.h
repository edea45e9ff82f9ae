/* alert: decides when a target's figures deserve an alert (throughput
 * crash, collapse inside an iteration, recovery after an action, failures),
 * logs it to the journal with its MESSAGE_ID, stores it in events and runs
 * alert_command. Never changes what the scheduler does. */
#ifndef WEARMON_ALERT_H
#define WEARMON_ALERT_H

#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

#include "config/cfg.h"
#include "db/db.h"

struct alert_ctx;

/* Every alert kind. Their names (alert_kind_name) are fixed forever: the
 * catalog, saved journal filters and scripts use them. */
enum alert_kind {
	ALERT_CRASH,            /* throughput-crash */
	ALERT_COLLAPSE,         /* throughput-collapse */
	ALERT_RECOVERED,        /* throughput-recovered */
	ALERT_IO_ERROR,         /* io-error */
	ALERT_DEVICE_GONE,      /* device-gone */
	ALERT_IDENTITY,         /* identity-mismatch */
	ALERT_ACTION_FAILED,    /* action-failed */
	ALERT_DB_WRITE,         /* db-write-failed */
	ALERT_ITERATION_FAILED, /* iteration-failed */
	ALERT_DATA_INTEGRITY,   /* data-integrity */
	ALERT_HOST_STALL,       /* host-stall: wearmond did not run, not the drive */
	ALERT_KIND__COUNT
};

/* Who the alerts are about. Strings are borrowed for the ctx lifetime. */
struct alert_target {
	const char *name, *device, *serial, *model, *firmware;
	struct db *db;
	int64_t target_id, run_id;
	long campaign_first_cycle; /* "baseline = first" looks from here */
};

/* Create a context for one target. Returns 0 or -errno. */
int alert_init(const struct alert_target *who, const struct cfg_target *t, struct alert_ctx **out);

/* Free (NULL is fine). */
void alert_free(struct alert_ctx *a);

/* Adopt a reloaded configuration (alert thresholds, command). */
void alert_set_config(struct alert_ctx *a, const struct cfg_target *t);

/* Choose the baseline of an iteration about to be stored (its size,
 * workload and block size set) under the target's `baseline` rule: sets
 * it->baseline, baseline_iteration_id (0: none yet) and baseline_mibps.
 * The one definition: the row stores it, the alerts, the degradation view
 * and the CLI read it. */
void alert_baseline_of(struct alert_ctx *a, struct db_iteration *it);

/* Evaluate a finished iteration (row id it_id) and its samples against the
 * baseline alert_baseline_of chose for it; a crash or collapse names its
 * cause from the dip in the samples and the drive's readings it->series
 * (cause.h). */
void alert_iteration(struct alert_ctx *a, long cycle, const struct db_iteration *it, int64_t it_id,
		     const struct db_sample *samples, size_t nsamples);

/* The host stalled during a stored iteration (it->host_stall_seconds > 0;
 * suspended_s of it the host was suspended): a warning to the journal with
 * its MESSAGE_ID and an events row (value: the seconds) every time,
 * alert_command the first time in a cycle. */
void alert_host_stall(struct alert_ctx *a, long cycle, const struct db_iteration *it, int64_t it_id,
		      double suspended_s);

/* Note the action that ended a cycle; took_effect: it ran with outcome ok
 * (so later figures are judged as "after ACTION"). */
void alert_action(struct alert_ctx *a, long cycle, int64_t cycle_id, enum cfg_action action,
		  int took_effect, const char *error);

/* Failures: kind is ALERT_IO_ERROR, ALERT_DEVICE_GONE, ALERT_IDENTITY,
 * ALERT_ACTION_FAILED, ALERT_DB_WRITE, ALERT_ITERATION_FAILED or
 * ALERT_DATA_INTEGRITY. priority is LOG_ERR or LOG_CRIT. */
void alert_failure(struct alert_ctx *a, enum alert_kind kind, int priority, long cycle,
		   int64_t iteration_id, const char *message);

/* The data-integrity alert for a bad sector at offset (events.value holds
 * the offset, data the JSON details). Returns 1 when raised, 0 when one was
 * already raised in this cycle (the caller then records it alone). */
int alert_integrity(struct alert_ctx *a, long cycle, int64_t cycle_id, int64_t iteration_id,
		    uint64_t offset, const char *message, const char *data);

/* Baseline MiB/s of a size under the target's current workload, for
 * STATUS= (thread-safe; cached until the next iteration ends). Returns 0,
 * -ENOENT when none is known yet, or -errno. */
int alert_baseline(struct alert_ctx *a, uint64_t size_bytes, double *mibps);

/* Reap finished alert commands and kill those past their time limit.
 * Call often from the main loop; never blocks. */
void alert_reap(void);

/* At exit: wait up to grace seconds for alert commands still running.
 * Returns how many are left (they are not killed). */
int alert_finish(double grace);

/* ---- the table of alert kinds and the pure decisions (tested alone) ---- */

struct alert_kind_info {
	const char *kind;       /* as in events.kind */
	const char *message_id; /* 32 hex digits, in systemd/wearmon.catalog */
};

/* Every alert kind, by enum alert_kind. Returns the table; *n = rows. */
const struct alert_kind_info *alert_kinds(size_t *n);

/* Name of kind as stored in events.kind. Returns it ("?" out of range). */
const char *alert_kind_name(enum alert_kind k);

/* MESSAGE_ID of kind. Returns it, or NULL out of range. */
const char *alert_message_id(enum alert_kind k);

/* The kind a stored name stands for. Returns an enum alert_kind, or -1
 * for a name that is no alert kind. */
int alert_kind_parse(const char *name);

#define ALERT_NONE (-1)
#define ALERT_COLLAPSE_RUN 3       /* consecutive samples that make a collapse */
#define ALERT_COMMAND_TIMEOUT 30.0 /* seconds before alert_command is killed */

/* Throughput crash: avg against baseline with thresholds in percent (0 =
 * off). Returns LOG_CRIT, LOG_WARNING or ALERT_NONE. */
int alert_check_crash(double avg, double baseline, double below_pct, double critical_pct);

/* Collapse: ALERT_COLLAPSE_RUN consecutive "measure" samples below below_pct
 * of avg (0 = off); a sample in which the host stalled (host_stall_ms > 0)
 * is the host's, never the drive's, and breaks a run. Returns the index of the first sample of the first such
 * run (*low = the lowest MiB/s in it), or -1. */
long alert_check_collapse(const struct db_sample *s, size_t n, double avg, double below_pct,
			  double *low);

/* Recovery: avg back at or above above_pct of baseline. Returns 1 or 0. */
int alert_check_recovery(double avg, double baseline, double above_pct);

#endif
