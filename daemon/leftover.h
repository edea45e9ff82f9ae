/* leftover: the commands wearmond starts, recorded in its database
 * (base/cmd.h's recorder: who each one is, when it started and ended),
 * and, at start, those an earlier run left running (a kill -9 outside
 * systemd: the leader dies of its parent-death signal, what it started
 * lives on in its process group): each is ended before any target opens
 * its device, so that no two commands ever overlap, and what was done is
 * stored. Knows nothing of the targets' cycles. */
#ifndef WEARMON_LEFTOVER_H
#define WEARMON_LEFTOVER_H

#include <stdatomic.h>
#include <stdint.h>

#include "db/db.h"
#include "sched.h"

/* After SIGTERM to a leftover's process group, how long it may take to
 * go before SIGKILL; after SIGKILL, how long a process in uninterruptible
 * I/O is waited for before the start gives up. */
#define LEFTOVER_TERM_S 2.0
#define LEFTOVER_KILL_S 10.0

/* What the start found of one command of an earlier run. */
struct leftover_cmd {
	int64_t id, run_id, target_id;
	struct proc_ident ident;
	char tag[160];
	char started_at[40];
	int sig;        /* what ended it: 0 (nothing was left), SIGTERM, SIGKILL */
	double seconds; /* how long that took */
};

/* Everything the start found, until the run is recorded. */
struct leftover {
	struct leftover_cmd *v;
	size_t n, cap;
};

/* Before anything touches a device: read the database at path (read-only;
 * none yet is fine) for commands never recorded as ended, and end the
 * process group of each that still runs (SIGTERM, then SIGKILL, within the
 * bounds above). Returns 0, or -EBUSY when one still runs after that (the
 * start must not go on; logged). */
int leftover_end(const char *path, struct leftover *l);

/* Store what leftover_end did, under run_id: each row ended ("ended at
 * start" with the signal it took, or "gone at start"), and an event
 * (kind leftover-command) for each that was still running. Errors are
 * logged: a row left unended is found gone by the next start. */
void leftover_record(struct db *db, int64_t run_id, const struct leftover *l);

void leftover_free(struct leftover *l);

/* Record every command started from now on in db under run_id, the
 * starting thread's owner (cmd_set_owner) being a target's row id among
 * st[0..n). */
void leftover_recorder_start(struct db *db, int64_t run_id, const struct sched_target *st, int n,
			     const atomic_int *stop);

/* No more recording (before the database closes). */
void leftover_recorder_stop(void);

#endif
