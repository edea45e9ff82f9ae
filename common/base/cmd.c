/* cmd: run an external command under our control. */
#include "base/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

/* After SIGTERM to its group, how long a stopped command may take to go.
 * With KILL_WAIT_S and POLL_MS it bounds what a command adds to a stop,
 * which must end the daemon within a second (wearmond(8), SIGNALS). */
#define TERM_GRACE_S 0.25
/* After SIGKILL: a process in uninterruptible I/O dies only when the I/O
 * ends; a stop does not wait longer than this for it. */
#define KILL_WAIT_S 0.4
/* How often the stop flag and the clock are looked at. */
#define POLL_MS 50

/* Held while a child is started: from the fork to its exec the child has
 * copies of all our descriptors (cmd_close_exclusive). */
static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;

int cmd_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
	      const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	pthread_mutex_lock(&spawn_lock);
	/* glibc's posix_spawn returns once the child has called exec (it
	 * shares our memory until then, CLONE_VFORK) */
	int rc = strchr(path, '/') ? posix_spawn(pid, path, fa, at, argv, envp)
				   : posix_spawnp(pid, path, fa, at, argv, envp);
	pthread_mutex_unlock(&spawn_lock);
	return rc;
}

void cmd_close_exclusive(int fd)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&spawn_lock);
	close(fd);
	pthread_mutex_unlock(&spawn_lock);
}

static const char *const end_names[] = {
	[CMD_EXITED] = "exited",
	[CMD_SIGNALED] = "signaled",
	[CMD_TIMED_OUT] = "timed out",
	[CMD_STOPPED] = "stopped",
};

const char *cmd_end_name(enum cmd_end e)
{
	return (unsigned)e < ARRAY_SIZE(end_names) ? end_names[e] : "?";
}

char *const *cmd_min_env(void)
{
	static char *const env[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8",
		NULL,
	};
	return env;
}

int cmd_attrs(posix_spawnattr_t *at, posix_spawn_file_actions_t *fa)
{
	sigset_t none, defs;
	int rc;

	sigemptyset(&none);
	sigemptyset(&defs);
	sigaddset(&defs, SIGPIPE);
	sigaddset(&defs, SIGTERM);
	sigaddset(&defs, SIGINT);
	sigaddset(&defs, SIGHUP);
	sigaddset(&defs, SIGCHLD);
	if ((rc = posix_spawnattr_init(at)))
		return rc;
	if ((rc = posix_spawn_file_actions_init(fa))) {
		posix_spawnattr_destroy(at);
		return rc;
	}
	rc = posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						  POSIX_SPAWN_SETPGROUP);
	if (!rc)
		rc = posix_spawnattr_setsigmask(at, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(at, &defs);
	if (!rc)
		rc = posix_spawnattr_setpgroup(at, 0);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
	if (rc) {
		posix_spawn_file_actions_destroy(fa);
		posix_spawnattr_destroy(at);
	}
	return rc;
}

/* Output collected so far: complete lines are logged, the tail kept. */
struct outbuf {
	const char *tag;
	char line[512];
	size_t len;
	char *tail;
	size_t tailsize;
};

static void keep_tail(struct outbuf *o, const char *line)
{
	size_t have = strlen(o->tail), add = strlen(line) + 1;
	if (add >= o->tailsize) {
		util_strlcpy(o->tail, line + add - o->tailsize, o->tailsize);
		return;
	}
	if (have + add >= o->tailsize) {
		memmove(o->tail, o->tail + (have + add - o->tailsize + 1), o->tailsize);
		have = strlen(o->tail);
	}
	snprintf(o->tail + have, o->tailsize - have, "%s%s", have ? " " : "", line);
}

static void flush_line(struct outbuf *o)
{
	o->line[o->len] = 0;
	o->len = 0;
	if (!o->line[0])
		return;
	log_msg(LOG_INFO, "%s: %s", o->tag, o->line);
	keep_tail(o, o->line);
}

static void take_output(struct outbuf *o, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n' || o->len == sizeof(o->line) - 1)
			flush_line(o);
		if (buf[i] != '\n')
			o->line[o->len++] = buf[i];
	}
}

/* Read what the pipe holds, waiting up to ms. Returns 1 after reading,
 * -1 when nothing came, 0 at EOF (or with no pipe). */
static int pump(int fd, struct outbuf *o, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[1024];
	if (fd < 0) {
		if (ms > 0)
			poll(NULL, 0, ms);
		return 0;
	}
	if (poll(&p, 1, ms) <= 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n > 0)
		take_output(o, buf, (size_t)n);
	if (n < 0 && errno == EINTR)
		return -1;
	return n > 0;
}

static int start(const struct cmd_req *rq, int out_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc = cmd_attrs(&at, &fa);
	if (rc)
		return rc;
	rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
	if (!rc)
		rc = cmd_spawn(pid, rq->argv[0], &fa, &at, rq->argv, cmd_min_env());
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc;
}

/* Wait up to secs for the leader. Returns 1 with *status when reaped. */
static int reap_within(pid_t pid, double secs, int fd, struct outbuf *o, int *status)
{
	double end = util_now() + secs;
	for (;;) {
		pid_t got = waitpid(pid, status, WNOHANG);
		if (got == pid || (got < 0 && errno != EINTR))
			return got == pid;
		if (util_now() >= end)
			return 0;
		pump(fd, o, 20);
	}
}

/* Kill the group: SIGTERM, then SIGKILL after a short grace. Returns the
 * leader's wait status. */
static int kill_group(pid_t pid, int fd, struct outbuf *o)
{
	int status = 0;
	kill(-pid, SIGTERM);
	if (!reap_within(pid, TERM_GRACE_S, fd, o, &status)) {
		kill(-pid, SIGKILL);
		if (!reap_within(pid, KILL_WAIT_S, fd, o, &status)) {
			/* the drive's doing, and no alert (the caller says
			 * what the kill meant): notice */
			log_msg(LOG_NOTICE,
				"%s: pid %d still in uninterruptible I/O %.1f s after "
				"SIGKILL; not waiting for it",
				o->tag, (int)pid, KILL_WAIT_S);
			return SIGKILL; /* as a wait status: killed by SIGKILL */
		}
	}
	kill(-pid, SIGKILL); /* what the leader left behind in its group */
	return status;
}

/* Wait for the leader, pumping output; kill on stop or time limit. */
static int wait_child(const struct cmd_req *rq, int fd, struct outbuf *o, struct cmd_result *r)
{
	double t0 = util_now();
	int status = 0;
	pid_t got;
	while ((got = waitpid(r->pid, &status, WNOHANG)) == 0) {
		if (rq->stop && atomic_load(rq->stop)) {
			r->end = CMD_STOPPED;
			return kill_group(r->pid, fd, o);
		}
		if (rq->timeout > 0 && util_now() - t0 >= rq->timeout) {
			r->end = CMD_TIMED_OUT;
			return kill_group(r->pid, fd, o);
		}
		if (!pump(fd, o, POLL_MS))
			fd = -1; /* EOF: the command closed its output; keep waiting */
	}
	if (got < 0)
		return -1;
	while (fd >= 0 && pump(fd, o, 0) > 0)
		; /* what is already in the pipe (not waiting for grandchildren) */
	r->end = WIFEXITED(status) ? CMD_EXITED : CMD_SIGNALED;
	return status;
}

int cmd_run(const struct cmd_req *rq, struct cmd_result *r)
{
	struct outbuf o = { .tag = rq->tag ? rq->tag : rq->argv[0],
			    .tail = r->output,
			    .tailsize = sizeof(r->output) };
	int pfd[2];
	memset(r, 0, sizeof(*r));
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	double t0 = util_now();
	int rc = start(rq, pfd[1], &r->pid);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		return -rc;
	}
	int status = wait_child(rq, pfd[0], &o, r);
	if (o.len)
		flush_line(&o);
	close(pfd[0]);
	r->seconds = util_now() - t0;
	if (status < 0)
		return -ECHILD;
	if (r->end == CMD_EXITED)
		r->status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		r->status = WTERMSIG(status);
	return 0;
}
