/* cmd: run an external command under our control. */
#include "base/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

/* Held while a child is started, from its fork until it has closed its
 * copies of our descriptors (cmd_close_exclusive). */
static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;

static struct cmd_recorder recorder;
static _Thread_local int64_t thread_owner;

void cmd_set_recorder(const struct cmd_recorder *r)
{
	if (r)
		recorder = *r;
	else
		memset(&recorder, 0, sizeof(recorder));
}

void cmd_set_owner(int64_t owner)
{
	thread_owner = owner;
}

int64_t cmd_owner(void)
{
	return thread_owner;
}

void cmd_record_end(int64_t rec, const struct cmd_result *r, int wait)
{
	if (rec > 0 && recorder.ended)
		recorder.ended(recorder.arg, rec, r, wait);
}

/* What the child does between fork and exec, all in descriptors and
 * system calls (async-signal-safe: the other threads' locks are frozen in
 * its copy of our memory). */
struct child_plan {
	const char *path;
	char *const *argv, *const *envp;
	int out_fd, null_fd; /* its output (-1: ours); /dev/null for stdin */
	int ack_w, gate_r;   /* it says "closed" on ack_w; it execs on 'g' from gate_r */
	pid_t parent;
};

static void close_between(unsigned lo, unsigned hi)
{
	if (lo > hi)
		return;
	if (close_range(lo, hi, 0) == 0)
		return;
	for (unsigned fd = lo; fd <= hi && fd < 65536; fd++)
		close((int)fd);
}

/* Every descriptor but 0, 1, 2, a and b. */
static void close_all_but(int a, int b)
{
	unsigned lo = (unsigned)(a < b ? a : b), hi = (unsigned)(a < b ? b : a);
	close_between(3, lo - 1);
	close_between(lo + 1, hi - 1);
	close_between(hi + 1, ~0U);
}

/* fd, or a copy of it above 0, 1 and 2 when it is one of them (a daemon
 * started with one closed), so that setting them up clobbers nothing. */
static int above_std(int fd)
{
	return fd >= 0 && fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
}

static _Noreturn void child_main(const struct child_plan *plan)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct child_plan moved = *plan, *p = &moved;
	sigset_t none;
	char go = 0;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL); /* the ones that cannot change just fail */
	p->out_fd = above_std(p->out_fd);
	p->null_fd = above_std(p->null_fd);
	p->ack_w = above_std(p->ack_w);
	p->gate_r = above_std(p->gate_r);
	/* the parent-death signal before checking that the parent lives: it
	 * may have died in between, and then no signal would ever come */
	if (prctl(PR_SET_PDEATHSIG, CMD_PARENT_DEATH_SIGNAL) || getppid() != p->parent ||
	    setpgid(0, 0) || dup2(p->null_fd, 0) < 0)
		_exit(127);
	if (p->out_fd >= 0 && (dup2(p->out_fd, 1) < 0 || dup2(p->out_fd, 2) < 0))
		_exit(127);
	close_all_but(p->ack_w, p->gate_r);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (write(p->ack_w, "r", 1) != 1)
		_exit(127);
	while (read(p->gate_r, &go, 1) < 0 && errno == EINTR)
		;
	if (go == 'g')
		execve(p->path, p->argv, p->envp);
	int e = go == 'g' ? errno : ECANCELED;
	if (write(p->ack_w, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* argv0 as a path: as it is with a '/', else the first executable of that
 * name in envp's PATH (the default PATH without one). Returns 0 or
 * -ENOENT. */
static int resolve(const char *argv0, char *const *envp, char *out, size_t len)
{
	const char *path = cmd_min_env()[0] + 5;
	if (strchr(argv0, '/')) {
		util_strlcpy(out, argv0, len);
		return 0;
	}
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "PATH=", 5))
			path = envp[i] + 5;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(out, len, "%.*s/%s", (int)n, p, argv0);
		if (n && access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}

/* A byte (or an int) from fd, retried on EINTR. Returns bytes read or -errno. */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	ssize_t n;
	while ((n = read(fd, buf, len)) < 0 && errno == EINTR)
		;
	return n < 0 ? -errno : n;
}

/* Fork the child of plan p (ack and gate pipes made), and wait for it to
 * have closed our descriptors. Returns its pid or -errno. */
static pid_t fork_child(struct child_plan *p, int ack[2], int gate[2])
{
	sigset_t all, old;
	char r = 0;
	sigfillset(&all);
	p->ack_w = ack[1];
	p->gate_r = gate[0];
	p->parent = getpid();
	/* no handler of ours may run in the child before it resets them */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&spawn_lock);
	pid_t pid = fork();
	if (pid == 0)
		child_main(p);
	int err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(ack[1]);
	close(gate[0]);
	ssize_t n = pid > 0 ? read_full(ack[0], &r, 1) : 0;
	pthread_mutex_unlock(&spawn_lock);
	if (pid < 0)
		return -err;
	if (n == 1 && r == 'r')
		return pid;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -ECHILD;
}

/* Record the child and let it exec. Returns 0 with *rec, or -errno (the
 * child is gone). */
static int release(const struct cmd_child *c, pid_t pid, int ack_r, int gate_w, int64_t *rec)
{
	struct proc_ident id;
	int e = 0, ret = proc_ident_of(pid, &id);
	*rec = 0;
	if (!ret && recorder.started) {
		int64_t got =
			recorder.started(recorder.arg, thread_owner, c->tag ? c->tag : c->argv[0],
					 c->argv, &id, !c->best_effort);
		ret = got < 0 && !c->best_effort ? (int)got : 0;
		*rec = got > 0 ? got : 0;
	}
	if (!ret && write(gate_w, "g", 1) != 1)
		ret = -errno;
	close(gate_w);
	if (!ret && read_full(ack_r, &e, sizeof(e)) == (ssize_t)sizeof(e))
		ret = -e; /* exec failed */
	if (!ret)
		return 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cmd_record_end(*rec, NULL, !c->best_effort);
	return ret;
}

int cmd_start(const struct cmd_child *c, pid_t *pid, int64_t *rec)
{
	char path[4096];
	int ack[2] = { -1, -1 }, gate[2] = { -1, -1 };
	struct child_plan p = {
		.path = path, .argv = c->argv, .envp = c->envp, .out_fd = c->out_fd
	};
	int ret = resolve(c->argv[0], c->envp, path, sizeof(path));
	if (ret)
		return ret;
	p.null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (p.null_fd < 0 || pipe2(ack, O_CLOEXEC) || pipe2(gate, O_CLOEXEC)) {
		ret = -errno;
		goto out;
	}
	pid_t got = fork_child(&p, ack, gate);
	ack[1] = gate[0] = -1; /* closed by fork_child */
	if (got < 0) {
		ret = got;
		goto out;
	}
	ret = release(c, got, ack[0], gate[1], rec);
	gate[1] = -1; /* closed by release */
	if (!ret)
		*pid = got;
out:
	for (int i = 0; i < 2; i++) {
		if (ack[i] >= 0)
			close(ack[i]);
		if (gate[i] >= 0)
			close(gate[i]);
	}
	if (p.null_fd >= 0)
		close(p.null_fd);
	return ret;
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

/* After SIGKILL, wait up to KILL_WAIT_S for the leader; *in_io: the time
 * it spent meanwhile in uninterruptible I/O (state D), which is the
 * drive's, not ours. Returns 1 with *status when reaped. */
static int reap_killed(pid_t pid, int fd, struct outbuf *o, int *status, double *in_io)
{
	double t = util_now(), end = t + KILL_WAIT_S;
	*in_io = 0;
	for (;;) {
		pid_t got = waitpid(pid, status, WNOHANG);
		if (got == pid || (got < 0 && errno != EINTR))
			return got == pid;
		double now = util_now();
		char state = 0;
		if (!proc_state(pid, &state) && state == 'D')
			*in_io += now - t;
		t = now;
		if (now >= end)
			return 0;
		pump(fd, o, 20);
	}
}

/* Kill the group: SIGTERM, then SIGKILL after a short grace. A stop says
 * how long the leader's I/O held it after SIGKILL, as it says of the I/Os
 * in flight (daemon/iter.c). Returns the leader's wait status. */
static int kill_group(pid_t pid, int fd, struct outbuf *o, int stopping)
{
	int status = 0;
	double in_io = 0;
	kill(-pid, SIGTERM);
	if (!reap_within(pid, TERM_GRACE_S, fd, o, &status)) {
		kill(-pid, SIGKILL);
		int reaped = reap_killed(pid, fd, o, &status, &in_io);
		if (stopping && in_io > 0)
			log_msg(LOG_INFO,
				"stop: %s: waited %.3f s for the drive to complete the I/O of pid %d "
				"(in uninterruptible I/O after SIGKILL)",
				o->tag, in_io, (int)pid);
		if (!reaped) {
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
			return kill_group(r->pid, fd, o, 1);
		}
		if (rq->timeout > 0 && util_now() - t0 >= rq->timeout) {
			r->end = CMD_TIMED_OUT;
			return kill_group(r->pid, fd, o, 0);
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
	int64_t rec = 0;
	struct cmd_child c = {
		.argv = rq->argv, .envp = cmd_min_env(), .out_fd = pfd[1], .tag = rq->tag
	};
	int rc = cmd_start(&c, &r->pid, &rec);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		return rc;
	}
	int status = wait_child(rq, pfd[0], &o, r);
	if (o.len)
		flush_line(&o);
	close(pfd[0]);
	r->seconds = util_now() - t0;
	if (status >= 0 && r->end == CMD_EXITED)
		r->status = WEXITSTATUS(status);
	else if (status >= 0 && WIFSIGNALED(status))
		r->status = WTERMSIG(status);
	cmd_record_end(rec, r, 1);
	return status < 0 ? -ECHILD : 0;
}
