/* names: the enum-to-text tables that the daemon, the database and the CLI
 * share (workloads, actions, outcomes, target kinds, ...). Depends on
 * nothing but libc and must call no other module, so that a program which
 * only prints these names links no config parser and no device code. */
#ifndef WEARMON_NAMES_H
#define WEARMON_NAMES_H

/* The functions stay declared with their enums (cfg.h, act.h, tgt.h):
 * cfg_workload_name, cfg_action_name, cfg_verify_name, cfg_baseline_name,
 * act_outcome_name, tgt_kind_name. These are the tables behind them, the
 * config's choices for those keys: names by value, NULL-ended. */
extern const char *const cfg_workload_names[];
extern const char *const cfg_action_names[];
extern const char *const cfg_verify_names[];
extern const char *const cfg_baseline_names[];

#endif
