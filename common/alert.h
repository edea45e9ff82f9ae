/* alert: decides when a target's figures deserve an alert (throughput
 * crash, collapse inside an iteration, recovery after an action, failures),
 * logs it to the journal with its MESSAGE_ID, stores it in events and runs
 * alert_command. Never changes what the scheduler does. */
#ifndef WEARMON_ALERT_H
#define WEARMON_ALERT_H

#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "db.h"

struct alert_ctx;

/* Who the alerts are about. Strings are borrowed for the ctx lifetime. */
struct alert_target {
	const char *name, *device, *serial;
	struct db *db;
	int64_t target_id, run_id;
	long campaign_first_cycle;   /* "baseline = first" looks from here */
};

/* Create a context for one target. Returns 0 or -errno. */
int alert_init(const struct alert_target *who, const struct cfg_target *t,
	       struct alert_ctx **out);

/* Free (NULL is fine). */
void alert_free(struct alert_ctx *a);

/* Adopt a reloaded configuration (alert thresholds, command). */
void alert_set_config(struct alert_ctx *a, const struct cfg_target *t);

/* Evaluate a finished iteration (row id it_id) and its samples. */
void alert_iteration(struct alert_ctx *a, long cycle, const struct db_iteration *it,
		     int64_t it_id, const struct db_sample *samples, size_t nsamples);

/* Note the action that ended a cycle (outcome "ok", "unsupported", ...). */
void alert_action(struct alert_ctx *a, long cycle, int64_t cycle_id, const char *action,
		  const char *outcome, const char *error);

/* Failures: kind is one of "io-error", "device-gone", "identity-mismatch",
 * "action-failed", "db-write-failed". priority is LOG_ERR or LOG_CRIT. */
void alert_failure(struct alert_ctx *a, const char *kind, int priority, long cycle,
		   int64_t iteration_id, const char *message);

#endif
