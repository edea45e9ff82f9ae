/* proc: processes as procfs shows them: who a process is (pid, process
 * group, session, start time, the boot it started in), so that a record of
 * a command made by an earlier run matches that command only and never a
 * process that reused its pid; and the end of such a command's process
 * group, which is no child of ours. Knows nothing of commands, configs or
 * the database. */
#ifndef WEARMON_PROC_H
#define WEARMON_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* Who a process is, for good: a pid is reused, a pid with its start time
 * in one boot is not. */
struct proc_ident {
	pid_t pid;        /* the process (a command's: also its process group) */
	pid_t sid;        /* its session */
	uint64_t start;   /* start time, clock ticks after boot (stat field 22) */
	char boot_id[40]; /* /proc/sys/kernel/random/boot_id */
};

/* The fields of /proc/PID/stat that tell who a process is. */
struct proc_stat {
	pid_t pid;
	char state; /* R, S, D, Z, ... */
	pid_t ppid, pgrp, sid;
	uint64_t start; /* field 22 */
};

/* Parse the text of a /proc/PID/stat (its name may hold blanks and
 * parentheses). Pure. Returns 0 or -EINVAL. */
int proc_parse_stat(const char *text, struct proc_stat *out);

/* Read procfs under root instead of /proc (tests; NULL: /proc again). */
void proc_set_root(const char *root);

/* The state letter of process pid now (R, S, D, Z, ...) into *state.
 * Returns 0 or -errno (-ESRCH: no such process). */
int proc_state(pid_t pid, char *state);

/* Who process pid is now. Returns 0 or -errno (-ESRCH: no such process). */
int proc_ident_of(pid_t pid, struct proc_ident *out);

/* The live processes (zombies do not count: their files are closed) of
 * the process group that id leads: its leader when it still is that
 * process (same start time), and any other member of the group in its
 * session started after it (a pid is not reused while its group has a
 * member). None when the boot changed. Returns how many, or -errno. */
int proc_group_left(const struct proc_ident *id);

/* End the process group that id leads, as proc_group_left counts it:
 * SIGTERM, up to term_s seconds for it to go, then SIGKILL, up to kill_s
 * (a process in uninterruptible I/O dies only when the I/O ends). *sig
 * says what it took: 0 (nothing was left), SIGTERM or SIGKILL. Returns 0
 * when nothing is left, -ETIMEDOUT when something still is, or -errno. */
int proc_group_end(const struct proc_ident *id, double term_s, double kill_s, int *sig);

#endif
