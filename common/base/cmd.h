/* cmd: external commands as children we control: an empty signal mask and
 * default handlers, a minimal environment, their own process group, output
 * to the log, a time limit, and the whole group killed on stop or timeout.
 * Knows nothing of configs, targets or the database. */
#ifndef WEARMON_CMD_H
#define WEARMON_CMD_H

#include <spawn.h>
#include <stdatomic.h>
#include <sys/types.h>

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

/* Spawn attributes: empty signal mask, default disposition of the signals
 * the daemon handles or ignores, a new process group, stdin from
 * /dev/null. Returns 0 or an errno (nothing to destroy then). */
int cmd_attrs(posix_spawnattr_t *at, posix_spawn_file_actions_t *fa);

/* posix_spawn(3) (posix_spawnp(3) when path has no '/'), while no
 * cmd_close_exclusive runs: every child this process starts goes through
 * here. Returns 0 or an errno, as posix_spawn does. */
int cmd_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
	      const posix_spawnattr_t *at, char *const argv[], char *const envp[]);

/* Close a descriptor that something waits to have released: a device
 * opened O_EXCL (mkfs, mount and the next exclusive open are refused while
 * any copy of it is open), a file on a filesystem about to be unmounted.
 * A child started by another thread holds copies of every descriptor from
 * its fork until its exec closes those marked O_CLOEXEC; this waits for a
 * child being started (cmd_spawn) to reach its exec first. The kernel
 * may still finish that child's closing a moment later: callers that need
 * the device at once wait for it with a bound (device/tgt.h:
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
