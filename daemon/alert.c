/* alert: throughput crash, collapse and recovery decisions, failure alerts;
 * each goes to the journal with its MESSAGE_ID, to the events table, and to
 * alert_command. */
#include "alert.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/cmd.h"
#include "base/util.h"
#include "cause.h"

#define MAX_CHILDREN 16
#define MSG_LEN 1024
#define DATA_LEN 1536

extern char **environ;

/* The one table of alert kinds: the name stored in events.kind, passed to
 * alert_command and shown by the CLI, and the MESSAGE_ID. */
static const struct alert_kind_info kinds[ALERT_KIND__COUNT] = {
	[ALERT_CRASH] = { "throughput-crash", "54157799c25f466ebd73eb21f17c70d5" },
	[ALERT_COLLAPSE] = { "throughput-collapse", "12ce431fca0542248eda1c4feda18bbf" },
	[ALERT_RECOVERED] = { "throughput-recovered", "9b1761e0a918485d8854984600ad88e5" },
	[ALERT_IO_ERROR] = { "io-error", "a0e3fce57568460c9dfc870b061b4224" },
	[ALERT_DEVICE_GONE] = { "device-gone", "75b218b5d67241cda9b751aad6649f33" },
	[ALERT_IDENTITY] = { "identity-mismatch", "895e1be49d1a4c5b85de7f8efb1fe302" },
	[ALERT_ACTION_FAILED] = { "action-failed", "fdcf4d0731f64ac5b735063d00f4c95b" },
	[ALERT_DB_WRITE] = { "db-write-failed", "682846020c7040acbf4108a1c3ac1ff3" },
	[ALERT_ITERATION_FAILED] = { "iteration-failed", "9b9312091e894997b13e90afc98abc9e" },
	[ALERT_DATA_INTEGRITY] = { "data-integrity", "8f621bcd43e94192945b60775fe6ccf6" },
	[ALERT_HOST_STALL] = { "host-stall", "bd8b0bd6bb404056a7be916fad3b342b" },
};

struct alert_ctx {
	struct alert_target who;
	pthread_mutex_t lock; /* guards t and the cache (main reads them) */
	const struct cfg_target *t;
	unsigned gen; /* bumped when a baseline may have moved */
	struct {
		int valid, rc;
		unsigned gen;
		uint64_t size;
		double mibps;
	} cache; /* the last alert_baseline answer */
	/* the rest is touched only by the target's thread */
	long raised_cycle[ARRAY_SIZE(kinds)];
	int raised_prio[ARRAY_SIZE(kinds)];
	int64_t cycle_id; /* id of cycle number cycle_no, 0 unknown */
	long cycle_no;
	int degraded;     /* a crash not followed by a recovery yet */
	int after_action; /* the next done iteration follows an ok action */
	char action[32];
};

/* One alert, ready to be logged, stored and passed to alert_command. */
struct alert_event {
	enum alert_kind kind;
	int prio;
	long cycle, iteration; /* < 0: not known */
	int64_t cycle_id, iteration_id;
	int64_t size;                     /* < 0: not known */
	double mibps, baseline;           /* < 0: not known */
	double value;                     /* events.value when not MiB/s (an offset); NAN */
	const char *data;                 /* JSON or NULL */
	const char *cause;                /* CAUSE= (crash, collapse); NULL: none */
	const struct log_field *evidence; /* nevidence fields beyond CAUSE= */
	size_t nevidence;
	char message[MSG_LEN];
};

/* ---- the pure decisions ---- */

int alert_check_crash(double avg, double baseline, double below_pct, double critical_pct)
{
	/* alert_below = 0: no crash alert at all, whatever alert_critical */
	if (!(baseline > 0) || !(avg >= 0) || !(below_pct > 0))
		return ALERT_NONE;
	if (critical_pct > 0 && avg < baseline * critical_pct / 100.0)
		return LOG_CRIT;
	if (below_pct > 0 && avg < baseline * below_pct / 100.0)
		return LOG_WARNING;
	return ALERT_NONE;
}

long alert_check_collapse(const struct db_sample *s, size_t n, double avg, double below_pct,
			  double *low)
{
	double limit = avg * below_pct / 100.0, lo = 0;
	long start = -1;
	int run = 0;

	if (!(below_pct > 0) || !(avg > 0))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i].phase != DB_PHASE_MEASURE)
			continue;
		if (!(s[i].mibps < limit) || s[i].host_stall_ms > 0) {
			run = 0;
			continue;
		}
		if (run++ == 0) {
			start = (long)i;
			lo = s[i].mibps;
		}
		if (s[i].mibps < lo)
			lo = s[i].mibps;
		if (run == ALERT_COLLAPSE_RUN) {
			if (low)
				*low = lo;
			return start;
		}
	}
	return -1;
}

int alert_check_recovery(double avg, double baseline, double above_pct)
{
	return baseline > 0 && avg >= baseline * above_pct / 100.0;
}

const struct alert_kind_info *alert_kinds(size_t *n)
{
	*n = ARRAY_SIZE(kinds);
	return kinds;
}

int alert_kind_parse(const char *name)
{
	for (int i = 0; name && i < ALERT_KIND__COUNT; i++)
		if (!strcmp(kinds[i].kind, name))
			return i;
	return -1;
}

const char *alert_kind_name(enum alert_kind k)
{
	return (unsigned)k < ALERT_KIND__COUNT ? kinds[k].kind : "?";
}

const char *alert_message_id(enum alert_kind k)
{
	return (unsigned)k < ALERT_KIND__COUNT ? kinds[k].message_id : NULL;
}

/* ---- alert_command: spawned without a shell, reaped by the main loop ---- */

/* An alert command waits in pending for the main loop (alert_reap) to
 * start it: its parent-death signal (base/cmd.h) follows the thread that
 * starts it, and a target's thread may end before its last alert's
 * command does, while the main thread lives as long as the process. */
static struct {
	pthread_mutex_t lock;
	struct child {
		pid_t pid;
		int64_t rec; /* its record (cmd_record_end) */
		double started, deadline;
		int killed;
		char what[96];
	} v[MAX_CHILDREN];
	int n;
	struct pending {
		char path[PATH_MAX]; /* a copy: a reload may free the config's */
		char *argv[3];       /* path and kind (kinds[]) */
		char **env;
		char tag[160], what[96];
		int64_t target_id; /* recorded as the command's owner */
	} p[MAX_CHILDREN];
	int np;
} children = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Variables the daemon must not pass on: systemd's, and stale WEARMON_*. */
static int inherited(const char *var)
{
	static const char *const drop[] = {
		"NOTIFY_SOCKET=", "WATCHDOG_PID=",   "WATCHDOG_USEC=", "LISTEN_PID=",
		"LISTEN_FDS=",    "LISTEN_FDNAMES=", "WEARMON_",
	};

	for (size_t i = 0; i < ARRAY_SIZE(drop); i++)
		if (!strncmp(var, drop[i], strlen(drop[i])))
			return 0;
	return 1;
}

/* v with decimals digits, or "" when not known (< 0). */
static void fmt_num(char *buf, size_t len, double v, int decimals)
{
	if (v < 0)
		buf[0] = '\0';
	else
		snprintf(buf, len, "%.*f", decimals, v);
}

/* Append "WEARMON_name=value" to env at *k. Returns 0 or -ENOMEM. */
static int put_var(char **env, size_t *k, const char *name, const char *value)
{
	if (asprintf(&env[*k], "WEARMON_%s=%s", name, value ? value : "") < 0) {
		env[*k] = NULL;
		return -ENOMEM;
	}
	(*k)++;
	return 0;
}

/* environ (filtered) plus WEARMON_*: the alert's context, CAUSE (empty
 * when the kind names none) and the evidence fields of a crash or
 * collapse. NULL when out of memory. Free with free_env. */
static char **command_env(const struct alert_ctx *a, const struct alert_event *e)
{
	char cyc[24], it[24], size[24], mibps[32], base[32];
	size_t n = 0, k = 0;
	char **env;

	fmt_num(cyc, sizeof(cyc), (double)e->cycle, 0);
	fmt_num(it, sizeof(it), (double)e->iteration, 0);
	fmt_num(size, sizeof(size), (double)e->size, 0);
	fmt_num(mibps, sizeof(mibps), e->mibps, 2);
	fmt_num(base, sizeof(base), e->baseline, 2);
	const char *const vars[][2] = {
		{ "TARGET", a->who.name },
		{ "DEVICE", a->who.device },
		{ "SERIAL", a->who.serial },
		{ "MODEL", a->who.model },
		{ "FIRMWARE", a->who.firmware },
		{ "KIND", kinds[e->kind].kind },
		{ "SEVERITY", log_prio_name(e->prio) },
		{ "MESSAGE_ID", kinds[e->kind].message_id },
		{ "MESSAGE", e->message },
		{ "CYCLE", cyc },
		{ "ITERATION", it },
		{ "SIZE_BYTES", size },
		{ "MIBPS", mibps },
		{ "BASELINE_MIBPS", base },
		{ "CAUSE", e->cause },
	};
	while (environ && environ[n])
		n++;
	env = calloc(n + ARRAY_SIZE(vars) + e->nevidence + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (inherited(environ[i]) && !(env[k++] = strdup(environ[i])))
			goto oom;
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++)
		if (put_var(env, &k, vars[i][0], vars[i][1]))
			goto oom;
	for (size_t i = 0; i < e->nevidence; i++)
		if (put_var(env, &k, e->evidence[i].name, e->evidence[i].value))
			goto oom;
	return env;
oom:
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
	return NULL;
}

static void free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* Queue it for the main loop (alert_reap starts it). */
static void run_command(const char *path, const struct alert_ctx *a, const struct alert_event *e)
{
	char **env = command_env(a, e);
	if (!env) {
		log_msg(LOG_ERR, "target %s: cannot run alert_command %s: %s", a->who.name, path,
			strerror(ENOMEM));
		return;
	}
	pthread_mutex_lock(&children.lock);
	int full = children.n + children.np == MAX_CHILDREN;
	if (!full) {
		struct pending *q = &children.p[children.np++];
		util_strlcpy(q->path, path, sizeof(q->path));
		q->argv[0] = q->path;
		q->argv[1] = (char *)kinds[e->kind].kind;
		q->argv[2] = NULL;
		q->env = env;
		q->target_id = a->who.target_id;
		snprintf(q->tag, sizeof(q->tag), "target %s: alert_command", a->who.name);
		snprintf(q->what, sizeof(q->what), "%s (%s, target %s)", path, kinds[e->kind].kind,
			 a->who.name);
	}
	pthread_mutex_unlock(&children.lock);
	if (!full)
		return;
	free_env(env);
	log_msg(LOG_WARNING,
		"target %s: alert_command %s not run for %s: %d earlier "
		"ones still running",
		a->who.name, path, kinds[e->kind].kind, MAX_CHILDREN);
}

/* Start the queued commands (main thread, children.lock held). Recording
 * one is tried once: a locked database does not hold up the main loop,
 * and the command then runs unrecorded. */
static void start_pending(void)
{
	for (int i = 0; i < children.np; i++) {
		struct pending *q = &children.p[i];
		struct cmd_child c = { .argv = q->argv,
				       .envp = q->env,
				       .out_fd = -1,
				       .tag = q->tag,
				       .best_effort = 1 };
		struct child *ch = &children.v[children.n];
		cmd_set_owner(q->target_id);
		int rc = cmd_start(&c, &ch->pid, &ch->rec);
		cmd_set_owner(0);
		if (rc)
			log_msg(LOG_ERR, "%s %s: cannot run: %s", q->tag, q->argv[0],
				strerror(-rc));
		if (!rc) {
			ch->started = util_now();
			ch->deadline = ch->started + ALERT_COMMAND_TIMEOUT;
			ch->killed = 0;
			util_strlcpy(ch->what, q->what, sizeof(ch->what));
			children.n++;
		}
		free_env(q->env);
	}
	children.np = 0;
}

/* Reap one child if it ended. Returns 1 when it is gone. */
static int reap_one(struct child *c, double now)
{
	int status;
	pid_t r = waitpid(c->pid, &status, WNOHANG);

	if (r == 0) {
		if (!c->killed && now > c->deadline) {
			log_msg(LOG_WARNING, "alert_command %s still running after %.0f s; killed",
				c->what, ALERT_COMMAND_TIMEOUT);
			kill(-c->pid, SIGKILL);
			c->killed = 1;
		}
		return 0;
	}
	if (r < 0)
		return errno != EINTR;
	struct cmd_result res = {
		.end = c->killed           ? CMD_TIMED_OUT
		       : WIFEXITED(status) ? CMD_EXITED
					   : CMD_SIGNALED,
		.status = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		.seconds = now - c->started,
		.pid = c->pid,
	};
	cmd_record_end(c->rec, &res, 0); /* the main loop: one try */
	if (WIFEXITED(status) && WEXITSTATUS(status))
		log_msg(LOG_WARNING, "alert_command %s exited with status %d", c->what,
			WEXITSTATUS(status));
	else if (WIFSIGNALED(status) && !c->killed)
		log_msg(LOG_WARNING, "alert_command %s killed by signal %d", c->what,
			WTERMSIG(status));
	return 1;
}

void alert_reap(void)
{
	double now = util_now();

	pthread_mutex_lock(&children.lock);
	start_pending();
	for (int i = 0; i < children.n;) {
		if (reap_one(&children.v[i], now))
			children.v[i] = children.v[--children.n];
		else
			i++;
	}
	pthread_mutex_unlock(&children.lock);
}

int alert_finish(double grace)
{
	double end = util_now() + grace;
	int left;

	for (;;) {
		alert_reap();
		pthread_mutex_lock(&children.lock);
		left = children.n + children.np;
		pthread_mutex_unlock(&children.lock);
		if (!left || util_now() >= end)
			return left;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* ---- raising an alert ---- */

/* The same kind is raised once per cycle, unless it grows more severe. */
static int repeated(struct alert_ctx *a, const struct alert_event *e)
{
	if (e->cycle >= 0 && a->raised_cycle[e->kind] == e->cycle &&
	    e->prio >= a->raised_prio[e->kind])
		return 1;
	a->raised_cycle[e->kind] = e->cycle;
	a->raised_prio[e->kind] = e->prio;
	return 0;
}

/* Log and store an alert. */
static void announce(struct alert_ctx *a, const struct alert_event *e)
{
	const struct alert_kind_info *k = &kinds[e->kind];
	struct log_fields f = LOG_FIELDS_INIT;

	f.target = a->who.name;
	f.device = a->who.device;
	f.serial = a->who.serial;
	f.model = a->who.model;
	f.firmware = a->who.firmware;
	f.message_id = k->message_id;
	f.cycle = e->cycle;
	f.iteration = e->iteration;
	f.size_bytes = e->size;
	f.mibps = e->mibps;
	f.baseline_mibps = e->baseline;
	f.cause = e->cause;
	f.extra = e->evidence;
	f.nextra = e->nevidence;
	log_fields(e->prio, &f, "%s", e->message);
	struct db_event ev = {
		.target_id = a->who.target_id,
		.run_id = a->who.run_id,
		.cycle_id = e->cycle_id,
		.iteration_id = e->iteration_id,
		.severity = log_prio_name(e->prio),
		.kind = k->kind,
		.message_id = k->message_id,
		.message = e->message,
		.value = isnan(e->value) ? e->mibps : e->value,
		.baseline = e->baseline,
		.data = e->data,
	};
	int ret = a->who.db ? db_event(a->who.db, &ev, NULL) : 0;
	if (ret)
		log_msg(LOG_ERR, "target %s: cannot store the %s alert: %s", a->who.name, k->kind,
			strerror(-ret));
}

/* Log, store and pass on an alert. Returns 1, or 0 when it repeated one
 * raised earlier in the same cycle (then nothing happens). */
static int raise_alert(struct alert_ctx *a, const struct alert_event *e)
{
	char command[PATH_MAX];

	if (repeated(a, e))
		return 0;
	announce(a, e);
	pthread_mutex_lock(&a->lock);
	util_strlcpy(command, a->t->alert_command, sizeof(command));
	pthread_mutex_unlock(&a->lock);
	if (command[0])
		run_command(command, a, e);
	return 1;
}

static void event_for(struct alert_event *e, enum alert_kind kind, int prio, long cycle,
		      const struct db_iteration *it, int64_t it_id)
{
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->prio = prio;
	e->cycle = cycle;
	e->iteration = it ? it->number : -1;
	e->cycle_id = it ? it->cycle_id : 0;
	e->iteration_id = it_id;
	e->size = it ? (int64_t)it->size_bytes : -1;
	e->mibps = it ? it->mibps_avg : -1;
	e->value = NAN;
	e->baseline = -1;
}

/* ---- the context ---- */

/* Alerts already raised in the target's latest cycle, so a restart in the
 * middle of a cycle does not raise them again. */
static int note_raised(void *arg, const char *kind, const char *severity, long cycle)
{
	struct alert_ctx *a = arg;
	int k = alert_kind_parse(kind);
	int prio = LOG_ERR;

	if (k < 0)
		return 0;
	for (int p = LOG_EMERG; p <= LOG_DEBUG; p++)
		if (!strcmp(log_prio_name(p), severity))
			prio = p;
	if (a->raised_cycle[k] != cycle || prio < a->raised_prio[k]) {
		a->raised_cycle[k] = cycle;
		a->raised_prio[k] = prio;
	}
	return 0;
}

/* Which of a crash and a recovery the target's events end with. Returns 0,
 * -ENOENT (neither), or -errno. */
static int alert_latest(struct db *db, int64_t target_id, int *kind)
{
	char last[32];
	int ret = db_event_latest(db, target_id, kinds[ALERT_CRASH].kind,
				  kinds[ALERT_RECOVERED].kind, last, sizeof(last));

	*kind = ret ? -1 : alert_kind_parse(last);
	return ret;
}

int alert_init(const struct alert_target *who, const struct cfg_target *t, struct alert_ctx **out)
{
	struct alert_ctx *a = calloc(1, sizeof(*a));
	int last;

	if (!a)
		return -ENOMEM;
	a->who = *who;
	a->t = t;
	pthread_mutex_init(&a->lock, NULL);
	for (int i = 0; i < ALERT_KIND__COUNT; i++)
		a->raised_cycle[i] = -1;
	if (who->db && db_alerts_raised(who->db, who->target_id, note_raised, a))
		log_msg(LOG_WARNING, "target %s: alerts of the current cycle unknown", who->name);
	/* a crash before a restart still waits for its recovery */
	if (who->db && !alert_latest(who->db, who->target_id, &last))
		a->degraded = last == ALERT_CRASH;
	*out = a;
	return 0;
}

void alert_free(struct alert_ctx *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void alert_set_config(struct alert_ctx *a, const struct cfg_target *t)
{
	pthread_mutex_lock(&a->lock);
	a->t = t;
	a->gen++;
	pthread_mutex_unlock(&a->lock);
}

/* The thresholds in force (the thread's own copy of the pointer). */
static const struct cfg_target *config(struct alert_ctx *a)
{
	pthread_mutex_lock(&a->lock);
	const struct cfg_target *t = a->t;
	pthread_mutex_unlock(&a->lock);
	return t;
}

/* The window before the dip from the baseline iteration's measured phase
 * (its readings; for a row from before them, its whole device_wa). */
static void before_baseline(struct alert_ctx *a, const struct db_iteration *it,
			    struct cause_evidence *ev)
{
	struct db_dev_point *bs = NULL;
	size_t bn = 0;
	int64_t id = it->baseline_iteration_id;

	if (!a->who.db || !id)
		return;
	ev->from = CAUSE_BEFORE_BASELINE;
	ev->before_iteration_id = id;
	if (!db_series_read(a->who.db, id, &bs, &bn))
		cause_window(bs, bn, DB_PHASE_MEASURE, 0, INT64_MAX, &ev->before);
	free(bs);
	if (!ev->before.known && !db_iteration_device_wa(a->who.db, id, &ev->before.wa))
		ev->before.known = 1;
}

/* Judge the dip [a_ms, b_ms] of the measured phase of it: against the
 * window of the same length just before it when the rate held before it
 * (held), else against the baseline iteration's measured phase. */
static void judge(struct alert_ctx *a, const struct db_iteration *it, int64_t a_ms, int64_t b_ms,
		  int held, struct cause_evidence *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->before.wa = -1;
	ev->from = CAUSE_BEFORE_NONE;
	cause_window(it->series, it->nseries, DB_PHASE_MEASURE, a_ms, b_ms, &ev->dip);
	if (held && a_ms > 0) {
		int64_t len = b_ms - a_ms;
		ev->from = CAUSE_BEFORE_ITERATION;
		cause_window(it->series, it->nseries, DB_PHASE_MEASURE, a_ms > len ? a_ms - len : 0,
			     a_ms, &ev->before);
	} else {
		before_baseline(a, it, ev);
	}
	if (it->device.has[DB_DEV_THROTTLE_RES_MS])
		ev->throttle_res_ms = it->device.val[DB_DEV_THROTTLE_RES_MS];
	ev->cause = cause_judge(&ev->dip, ev->before.known ? &ev->before : NULL);
}

/* The evidence of ev into e (CAUSE= and the journal fields) and tx (the
 * texts they point to, the JSON members and the words of the message). */
static void evidence_into(struct alert_event *e, const struct cause_evidence *ev,
			  struct cause_texts *tx)
{
	cause_texts(ev, tx);
	e->cause = cause_name(ev->cause);
	e->evidence = tx->fields;
	e->nevidence = CAUSE_FIELDS;
}

static void check_crash(struct alert_ctx *a, const struct cfg_target *t, long cycle,
			const struct db_iteration *it, int64_t it_id, double base, int64_t base_id,
			const struct db_sample *s, size_t n)
{
	struct alert_event e;
	struct cause_evidence ev;
	struct cause_texts tx;
	char data[DATA_LEN], sz[32];
	int prio = alert_check_crash(it->mibps_avg, base, t->alert_below, t->alert_critical);
	int64_t a_ms, b_ms;
	size_t held;

	if (prio == ALERT_NONE)
		return;
	a->degraded = 1;
	event_for(&e, ALERT_CRASH, prio, cycle, it, it_id);
	e.baseline = base;
	/* the dip: where the samples fell below the alert's threshold; none
	 * did (the average did): the whole phase */
	double pct = prio == LOG_CRIT || !(t->alert_below > 0) ? t->alert_critical : t->alert_below;
	cause_dip_below(s, n, base * pct / 100.0, &a_ms, &b_ms, &held);
	judge(a, it, a_ms, b_ms, held >= ALERT_COLLAPSE_RUN, &ev);
	evidence_into(&e, &ev, &tx);
	snprintf(data, sizeof(data),
		 "{\"ratio\":%.4f,\"baseline\":\"%s\",\"baseline_iteration_id\":"
		 "%lld,\"workload\":\"%s\",\"block_size\":%u,%s}",
		 it->mibps_avg / base, it->baseline, (long long)base_id, it->workload,
		 it->block_size, tx.json);
	e.data = data;
	snprintf(e.message, sizeof(e.message),
		 "target %s: throughput crash%s: cycle %ld iteration "
		 "%ld (%s %s): %.1f MiB/s is %.0f%% of the %s baseline %.1f MiB/s (alert below "
		 "%g%%)%s",
		 a->who.name, prio == LOG_CRIT ? " (critical)" : "", cycle, it->number,
		 util_fmt_bytes(it->size_bytes, sz, sizeof(sz)), it->workload, it->mibps_avg,
		 100.0 * it->mibps_avg / base, it->baseline, base,
		 prio == LOG_CRIT ? t->alert_critical : t->alert_below, tx.words);
	raise_alert(a, &e);
}

static void check_recovery(struct alert_ctx *a, const struct cfg_target *t, long cycle,
			   const struct db_iteration *it, int64_t it_id, double base)
{
	struct alert_event e;
	char data[DATA_LEN], sz[32];

	if (!a->degraded || !alert_check_recovery(it->mibps_avg, base, t->recovered_above))
		return;
	a->degraded = 0;
	event_for(&e, ALERT_RECOVERED, LOG_NOTICE, cycle, it, it_id);
	e.baseline = base;
	snprintf(data, sizeof(data), "{\"action\":\"%s\",\"ratio\":%.4f}", a->action,
		 it->mibps_avg / base);
	e.data = data;
	snprintf(e.message, sizeof(e.message),
		 "target %s: throughput recovered after %s: cycle "
		 "%ld iteration %ld (%s %s): %.1f MiB/s is %.0f%% of the baseline %.1f MiB/s",
		 a->who.name, a->action, cycle, it->number,
		 util_fmt_bytes(it->size_bytes, sz, sizeof(sz)), it->workload, it->mibps_avg,
		 100.0 * it->mibps_avg / base, base);
	raise_alert(a, &e);
}

static void check_collapse(struct alert_ctx *a, const struct cfg_target *t, long cycle,
			   const struct db_iteration *it, int64_t it_id, const struct db_sample *s,
			   size_t n)
{
	struct alert_event e;
	struct cause_evidence ev;
	struct cause_texts tx;
	char data[DATA_LEN], sz[32];
	double low = 0;
	long i = alert_check_collapse(s, n, it->mibps_avg, t->sample_crash_below, &low);
	int64_t a_ms, b_ms, x;

	if (i < 0)
		return;
	event_for(&e, ALERT_COLLAPSE, LOG_WARNING, cycle, it, it_id);
	e.mibps = low;
	e.baseline = it->mibps_avg;
	char min[32] = "null"; /* unknown in a phase of fewer than two samples */
	if (it->mibps_min >= 0)
		snprintf(min, sizeof(min), "%.2f", it->mibps_min);
	/* the dip: the run's samples; before it, as long a window of the
	 * phase when there is one */
	cause_sample_span(&s[i], &a_ms, &x);
	b_ms = x;
	for (size_t j = (size_t)i, run = 0; j < n && run < ALERT_COLLAPSE_RUN; j++)
		if (s[j].phase == DB_PHASE_MEASURE) {
			cause_sample_span(&s[j], &x, &b_ms);
			run++;
		}
	judge(a, it, a_ms, b_ms, 1, &ev);
	evidence_into(&e, &ev, &tx);
	snprintf(data, sizeof(data),
		 "{\"first_sample_t_ms\":%lld,\"samples\":%d,"
		 "\"iteration_mibps_avg\":%.2f,\"iteration_mibps_min\":%s,%s}",
		 (long long)s[i].t_ms, ALERT_COLLAPSE_RUN, it->mibps_avg, min, tx.json);
	e.data = data;
	snprintf(e.message, sizeof(e.message),
		 "target %s: throughput collapse inside cycle %ld "
		 "iteration %ld (%s %s): %d samples in a row from %.1f s down to %.1f MiB/s, below "
		 "%g%% of the iteration's average %.1f MiB/s%s",
		 a->who.name, cycle, it->number, util_fmt_bytes(it->size_bytes, sz, sizeof(sz)),
		 it->workload, ALERT_COLLAPSE_RUN, (double)s[i].t_ms / 1000.0, low,
		 t->sample_crash_below, it->mibps_avg, tx.words);
	raise_alert(a, &e);
}

void alert_baseline_of(struct alert_ctx *a, struct db_iteration *it)
{
	const struct cfg_target *t = config(a);
	struct db_baseline_key k = {
		.target_id = a->who.target_id,
		.size_bytes = it->size_bytes,
		.workload = it->workload,
		.block_size = it->block_size,
		.before_id = INT64_MAX,
		.rule = t->baseline,
	};

	it->baseline = cfg_baseline_name(t->baseline);
	it->baseline_iteration_id = 0;
	it->baseline_mibps = -1;
	if (a->who.db &&
	    db_baseline(a->who.db, &k, &it->baseline_mibps, &it->baseline_iteration_id)) {
		it->baseline_iteration_id = 0;
		it->baseline_mibps = -1;
	}
}

void alert_iteration(struct alert_ctx *a, long cycle, const struct db_iteration *it, int64_t it_id,
		     const struct db_sample *samples, size_t nsamples)
{
	const struct cfg_target *t = config(a);
	int after_action = a->after_action;
	int64_t base_id = it->baseline_iteration_id;
	double base = base_id ? it->baseline_mibps : -1;

	a->cycle_id = it->cycle_id;
	a->cycle_no = cycle;
	a->after_action = 0;
	if (base > 0) {
		if (after_action)
			check_recovery(a, t, cycle, it, it_id, base);
		check_crash(a, t, cycle, it, it_id, base, base_id, samples, nsamples);
	}
	check_collapse(a, t, cycle, it, it_id, samples, nsamples);
	pthread_mutex_lock(&a->lock);
	a->gen++;
	pthread_mutex_unlock(&a->lock);
}

void alert_host_stall(struct alert_ctx *a, long cycle, const struct db_iteration *it, int64_t it_id,
		      double suspended_s)
{
	struct alert_event e;
	char data[DATA_LEN], sz[32], susp[64] = "";

	event_for(&e, ALERT_HOST_STALL, LOG_WARNING, cycle, it, it_id);
	e.value = it->host_stall_seconds;
	snprintf(data, sizeof(data), "{\"host_stall_seconds\":%.3f,\"suspended_seconds\":%.3f}",
		 it->host_stall_seconds, suspended_s);
	e.data = data;
	if (suspended_s > 0)
		snprintf(susp, sizeof(susp), ", %.1f s of it suspended", suspended_s);
	snprintf(e.message, sizeof(e.message),
		 "target %s: host stall: cycle %ld iteration %ld (%s %s): wearmond did not run "
		 "for %.1f s%s (stopped, a paused VM or a suspended host), not the drive; that "
		 "time is left out of the rates, min and max and raises no drive alert",
		 a->who.name, cycle, it->number, util_fmt_bytes(it->size_bytes, sz, sizeof(sz)),
		 it->workload, it->host_stall_seconds, susp);
	if (!raise_alert(a, &e))
		announce(a, &e);
}

void alert_action(struct alert_ctx *a, long cycle, int64_t cycle_id, enum cfg_action action,
		  int took_effect, const char *error)
{
	a->cycle_id = cycle_id;
	a->cycle_no = cycle;
	a->after_action = took_effect && action != ACT_NONE;
	if (a->after_action)
		util_strlcpy(a->action, cfg_action_name(action), sizeof(a->action));
}

void alert_failure(struct alert_ctx *a, enum alert_kind kind, int priority, long cycle,
		   int64_t iteration_id, const char *message)
{
	struct alert_event e;

	event_for(&e, kind, priority, cycle, NULL, iteration_id);
	e.cycle_id = cycle == a->cycle_no ? a->cycle_id : 0;
	snprintf(e.message, sizeof(e.message), "target %s: %s: %s", a->who.name, kinds[kind].kind,
		 message);
	raise_alert(a, &e);
}

int alert_integrity(struct alert_ctx *a, long cycle, int64_t cycle_id, int64_t iteration_id,
		    uint64_t offset, const char *message, const char *data)
{
	struct alert_event e;

	event_for(&e, ALERT_DATA_INTEGRITY, LOG_ERR, cycle, NULL, iteration_id);
	e.cycle_id = cycle_id;
	e.value = (double)offset;
	e.data = data;
	util_strlcpy(e.message, message, sizeof(e.message));
	return raise_alert(a, &e);
}

int alert_baseline(struct alert_ctx *a, uint64_t size_bytes, double *mibps)
{
	struct db_baseline_key k = { .target_id = a->who.target_id,
				     .size_bytes = size_bytes,
				     .before_id = INT64_MAX };
	unsigned gen;
	int rc;

	pthread_mutex_lock(&a->lock);
	if (a->cache.valid && a->cache.gen == a->gen && a->cache.size == size_bytes) {
		*mibps = a->cache.mibps;
		rc = a->cache.rc;
		pthread_mutex_unlock(&a->lock);
		return rc;
	}
	gen = a->gen;
	k.workload = cfg_workload_name(a->t->workload);
	k.block_size = (uint32_t)a->t->block_size;
	k.rule = a->t->baseline;
	pthread_mutex_unlock(&a->lock);
	rc = a->who.db ? db_baseline(a->who.db, &k, mibps, NULL) : -ENOENT;
	pthread_mutex_lock(&a->lock);
	if (gen == a->gen && (rc == 0 || rc == -ENOENT)) {
		a->cache.valid = 1;
		a->cache.gen = gen;
		a->cache.size = size_bytes;
		a->cache.rc = rc;
		a->cache.mibps = rc ? -1 : *mibps;
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}
