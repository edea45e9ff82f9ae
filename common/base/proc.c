/* proc: who a process is, from procfs, and the end of a process group
 * that is no child of ours. */
#include "base/proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

/* How often a group being ended is looked at again. */
#define POLL_MS 20

static const char *proc_root = "/proc";

void proc_set_root(const char *root)
{
	proc_root = root ? root : "/proc";
}

int proc_parse_stat(const char *text, struct proc_stat *out)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	char *end;
	if (!open || !close || close < open || close[1] != ' ')
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->pid = (pid_t)strtol(text, &end, 10);
	if (end == text || out->pid <= 0)
		return -EINVAL;
	const char *p = close + 2;
	/* fields 3 (state) to 22 (starttime), numbered as proc(5) does */
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return -EINVAL;
		if (field == 3)
			out->state = *p;
		long long v = field == 3 ? 0 : strtoll(p, &end, 10);
		if (field != 3 && end == p)
			return -EINVAL;
		if (field == 4)
			out->ppid = (pid_t)v;
		else if (field == 5)
			out->pgrp = (pid_t)v;
		else if (field == 6)
			out->sid = (pid_t)v;
		else if (field == 22)
			out->start = (uint64_t)v;
		while (*p && *p != ' ')
			p++;
	}
	return 0;
}

/* The text of root/rel into buf. Returns 0 or -errno. */
static int read_text(const char *rel, char *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", proc_root, rel);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int ret = n < 0 ? -errno : 0;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return ret;
}

static int boot_id(char *buf, size_t len)
{
	int ret = read_text("sys/kernel/random/boot_id", buf, len);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

static int stat_of(pid_t pid, struct proc_stat *st)
{
	char rel[32], text[1024];
	snprintf(rel, sizeof(rel), "%d/stat", (int)pid);
	int ret = read_text(rel, text, sizeof(text));
	if (ret)
		return ret == -ENOENT ? -ESRCH : ret;
	return proc_parse_stat(text, st);
}

int proc_state(pid_t pid, char *state)
{
	struct proc_stat st;
	int ret = stat_of(pid, &st);
	if (!ret)
		*state = st.state;
	return ret;
}

int proc_ident_of(pid_t pid, struct proc_ident *out)
{
	struct proc_stat st;
	memset(out, 0, sizeof(*out));
	int ret = stat_of(pid, &st);
	if (ret)
		return ret;
	out->pid = st.pid;
	out->sid = st.sid;
	out->start = st.start;
	return boot_id(out->boot_id, sizeof(out->boot_id));
}

/* Whether st is a live process of the group that id leads. */
static int in_group(const struct proc_ident *id, const struct proc_stat *st)
{
	if (st->state == 'Z' || st->state == 'X')
		return 0;
	if (st->pid == id->pid)
		return st->start == id->start;
	return st->pgrp == id->pid && st->sid == id->sid && st->start >= id->start;
}

/* Count the group's live processes; *leader: whether its leader is one. */
static int group_scan(const struct proc_ident *id, int *leader)
{
	char now[40];
	*leader = 0;
	if (boot_id(now, sizeof(now)) || strcmp(now, id->boot_id))
		return 0; /* another boot: nothing of that run lives */
	DIR *d = opendir(proc_root);
	if (!d)
		return -errno;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct proc_stat st;
		if (!isdigit((unsigned char)e->d_name[0]) || stat_of((pid_t)atoi(e->d_name), &st) ||
		    !in_group(id, &st))
			continue;
		n++;
		*leader |= st.pid == id->pid;
	}
	closedir(d);
	return n;
}

int proc_group_left(const struct proc_ident *id)
{
	int leader;
	return group_scan(id, &leader);
}

/* Send sig to the group (and to its leader, should it have left the
 * group), then wait up to secs for nothing to be left. Returns what is
 * left (0: gone) or -errno. */
static int signal_and_wait(const struct proc_ident *id, int sig, double secs)
{
	int leader, n = group_scan(id, &leader);
	if (n <= 0)
		return n;
	kill(-id->pid, sig);
	if (leader)
		kill(id->pid, sig);
	double end = util_now() + secs;
	while ((n = group_scan(id, &leader)) > 0 && util_now() < end) {
		struct timespec ts = { 0, POLL_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
	return n;
}

int proc_group_end(const struct proc_ident *id, double term_s, double kill_s, int *sig)
{
	int leader;
	*sig = 0;
	int n = group_scan(id, &leader);
	if (n <= 0)
		return n;
	*sig = SIGTERM;
	n = signal_and_wait(id, SIGTERM, term_s);
	if (n > 0) {
		*sig = SIGKILL;
		n = signal_and_wait(id, SIGKILL, kill_s);
	}
	return n > 0 ? -ETIMEDOUT : n;
}
