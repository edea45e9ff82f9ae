/* daemon: the process's state shared by its top (main.c), its start-up
 * checks (startup.c) and its reloads (reload.c). Nothing here runs I/O:
 * the target threads are sched's (sched.h). */
#ifndef WEARMON_DAEMON_H
#define WEARMON_DAEMON_H

#include <sys/types.h>

#include "config/cfg.h"
#include "console.h"
#include "db/db.h"
#include "device/tgt.h"
#include "guard.h"
#include "integrity.h"
#include "leftover.h"
#include "outage.h"
#include "publish.h"
#include "retain.h"
#include "sched.h"

struct opts {
	const char *config;
	int check;
	int foreground;
	int journal;
	int debug;                    /* log LOG_DEBUG messages too */
	int json;                     /* --check --json: the plan as JSON */
	const char *new_campaign[64]; /* --new-campaign: target names, or "all" */
	int nnew;
};

/* The running process: its targets and every configuration loaded. While
 * the threads run, main reads only st[i].tg (name and device never change;
 * st[i].t moves to a reloaded configuration under the thread's feet). */
struct daemon {
	const struct opts *o;
	struct sched_target *st; /* one per target of the first configuration */
	int nst, started;
	struct cfg **cfgs; /* all loaded, freed at exit: threads may
				       still point into any of them */
	int ncfgs;
	double wd_every; /* seconds between WATCHDOG=1, 0 = none */
	double next_wd, next_status;
	int stopping;
	int db_lost;                            /* the database file was deleted or replaced */
	int lock_fd;                            /* one daemon per database; -1 */
	int db_created;                         /* the lock created the (empty) database file */
	struct publish pub;                     /* metrics_file */
	struct console console;                 /* status lines on a terminal */
	struct db *history;                     /* the database read-only while targets are
			       checked (which files are wearmon's); NULL */
	struct tgt_own_file own[GUARD_OWN_MAX]; /* files no target may be */
	int nown;
	struct db *db; /* once the run is recorded */
	int64_t run_id;
	struct outage outage;   /* spells of failing writes, stored afterwards */
	struct integrity integ; /* the background integrity check */
	int db_damaged;         /* it found the database damaged */
	struct retain retain;   /* moving and rolling up samples (retain.h) */
	int all_done;           /* every target's campaign is complete */
	struct leftover left;   /* commands of earlier runs ended at start */
};

/* After a start-up error ret of path: when its filesystem is full or
 * read-only (db_transient), log which filesystem and its free space. */
void startup_log_room(const char *path, int ret);

/* Log each line of a multi-line error at prio. */
void daemon_log_lines(int prio, const char *text);

/* alert_command of t must be something we can run, found now rather than
 * at the first alert days later. Returns 0 or -EINVAL with the error in err. */
int startup_check_command(const struct cfg *c, const struct cfg_target *t, char *err, size_t len);

/* --new-campaign: mark the named targets (or all). Returns 0 or -EINVAL
 * (an unknown name, logged). */
int startup_mark_new_campaigns(const struct opts *o, const struct cfg *c, struct sched_target *st);

/* Every check of the targets, changing nothing: each target, the pairs,
 * and with --check the identities recorded in the database. Returns 0 or
 * -errno (logged). */
int startup_check_targets(struct daemon *d, const struct cfg *c, pid_t holder);

/* Every target's identity against the database, before anything is
 * written. Returns 0, -EMEDIUMTYPE (each mismatch logged) or -errno. */
int startup_identities_ok(struct db *db, const struct cfg *c, struct sched_target *st);

/* Once every check passed: create and extend the file targets. Returns 0
 * or -errno (logged). */
int startup_prepare_targets(const struct cfg *c, struct sched_target *st);

/* Store the targets of run run_id. Returns 0 or -errno. */
int startup_register_targets(struct db *db, const struct cfg *c, struct sched_target *st,
			     int64_t run_id);

/* Close every target; remove_created: unlink the files this start created. */
void startup_close_targets(struct daemon *d, int remove_created);

/* Keep c until exit. Returns 0 or -ENOMEM (c is then not kept). */
int reload_keep_cfg(struct daemon *d, struct cfg *c);

/* SIGHUP: parse, validate and offer the configuration file again; one with
 * errors is refused and the running one stays. The caller sends READY=1. */
void reload_config(struct daemon *d);

/* Free the reloaded configurations no thread uses any more. */
void reload_sweep(struct daemon *d);

#endif
