/* cmd: external commands as children we control: an empty signal mask and
 * default handlers, a minimal environment, their own process group, a
 * parent-death signal, no descriptor of ours but their output, output to
 * the log, a time limit, and the whole group killed on stop or timeout;
 * each one recorded (cmd_recorder) before it may exec. Knows nothing of
 * configs, targets or the database. */
#ifndef WEARMON_CMD_H
#define WEARMON_CMD_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/proc.h"

/* How a command ended. */
enum cmd_end {
	CMD_EXITED,    /* exited by itself (status = exit status) */
	CMD_SIGNALED,  /* killed by a signal we did not send (status = signal) */
	CMD_TIMED_OUT, /* killed (whole group) at the time limit */
	CMD_STOPPED,   /* killed (whole group) because a stop was requested */
};

/* A command to run. */
struct cmd_req {
	char *const *argv;      /* argv[0]: program (searched in PATH unless it has a '/') */
	double timeout;         /* seconds; <= 0: no limit */
	const atomic_int *stop; /* nonzero: kill the group and return; may be NULL */
	const char *tag;        /* prefix of the logged output lines, e.g. "target t1: mkfs" */
};

/* What happened. */
struct cmd_result {
	enum cmd_end end;
	int status; /* exit status or signal number */
	double seconds;
	pid_t pid;        /* also the process group id */
	char output[512]; /* last output lines (blanks for newlines) */
};

/* The signal the kernel sends a command's leader when the thread that
 * started it dies (PR_SET_PDEATHSIG): the daemon killed by SIGKILL or a
 * crash. SIGKILL, not SIGTERM: nobody is left to follow a SIGTERM the
 * command ignores with a SIGKILL, and a command that outlives the daemon
 * would overlap the next run's own (an erase twice at once). The rest of
 * its process group is ended by the next start (proc_group_end). */
#define CMD_PARENT_DEATH_SIGNAL SIGKILL

/* Records each command started (the daemon: its database), so that the
 * next start finds one an earlier run left running (proc.h). Set once,
 * before any command starts. */
struct cmd_recorder {
	/* The child exists, in its own process group with its parent-death
	 * signal, and has not exec'd yet: it does only once this returned a
	 * record id (> 0); -errno: it is killed and the start fails with that
	 * (unless best_effort: then it runs unrecorded). owner: what the
	 * starting thread declared (cmd_set_owner); wait: 1 to wait out a
	 * database locked by another program, 0 for one try. */
	int64_t (*started)(void *arg, int64_t owner, const char *tag, char *const argv[],
			   const struct proc_ident *id, int wait);
	/* How it ended (cmd_run's result); r NULL: it never exec'd. wait as
	 * for started. */
	void (*ended)(void *arg, int64_t rec, const struct cmd_result *r, int wait);
	void *arg;
};

/* Install the recorder (NULL: none; commands run unrecorded). */
void cmd_set_recorder(const struct cmd_recorder *r);

/* What the calling thread's commands are recorded under (the daemon: the
 * target's row id; 0: nothing). Per thread. */
void cmd_set_owner(int64_t owner);

/* What the calling thread declared (0: nothing). */
int64_t cmd_owner(void);

/* A child to start. */
struct cmd_child {
	char *const *argv; /* argv[0]: program (searched in PATH unless it has a '/') */
	char *const *envp; /* its whole environment */
	int out_fd;        /* its stdout and stderr; -1: ours */
	const char *tag;   /* what it is, for the log and its record */
	int best_effort;   /* recorded if that works at once, else run unrecorded
			      (a command that never touches a device) */
};

/* Start a child as cmd.h says (stdin /dev/null), recorded before it execs.
 * Its parent-death signal comes when the calling thread ends, not only the
 * process: the caller's thread must outlive it. Returns 0 with its pid (also its process group) and record id (0: none
 * recorded) in *pid and *rec, or -errno (nothing left running). */
int cmd_start(const struct cmd_child *c, pid_t *pid, int64_t *rec);

/* Tell the recorder how a child of cmd_start ended (rec 0: nothing; r
 * NULL: it never exec'd), waiting out a locked database when wait. */
void cmd_record_end(int64_t rec, const struct cmd_result *r, int wait);

/* Close a descriptor that something waits to have released: a device
 * opened O_EXCL (mkfs, mount and the next exclusive open are refused while
 * any copy of it is open), a file on a filesystem about to be unmounted.
 * A child started by another thread holds copies of every descriptor from
 * its fork until it closes them, before it is recorded and execs; this
 * waits for a child being started (cmd_start) to have closed them first.
 * The kernel may still finish that child's closing a moment later: callers
 * that need the device at once wait for it with a bound (device/tgt.h:
 * tgt_busy_wait). */
void cmd_close_exclusive(int fd);

/* Minimal environment for commands (PATH, LANG=C.UTF-8), NULL-terminated. */
char *const *cmd_min_env(void);

/* Run a command to its end (see cmd_end), logging its stdout and stderr
 * line by line. Returns 0 when it ran (see r->end, r->status), or -errno
 * when it could not be started. */
int cmd_run(const struct cmd_req *rq, struct cmd_result *r);

/* Name of an end ("exited", "signaled", "timed out", "stopped"). */
const char *cmd_end_name(enum cmd_end e);

#endif
