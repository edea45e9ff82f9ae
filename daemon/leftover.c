/* leftover: the commands' records, and those an earlier run left running,
 * ended at start. */
#include "leftover.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cmd.h"
#include "base/log.h"
#include "base/util.h"
#include "iter.h"

static struct {
	struct db *db;
	int64_t run_id;
	const struct sched_target *st;
	int n;
	const atomic_int *stop;
} rc;

static int collect(void *arg, const struct db_command *c)
{
	struct leftover *l = arg;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct leftover_cmd *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	struct leftover_cmd *x = &l->v[l->n++];
	memset(x, 0, sizeof(*x));
	x->id = c->id;
	x->run_id = c->run_id;
	x->target_id = c->target_id;
	x->ident = *c->ident;
	util_strlcpy(x->tag, c->tag, sizeof(x->tag));
	util_strlcpy(x->started_at, c->started_at, sizeof(x->started_at));
	return 0;
}

/* What was done to x, in words, for the log and its event. */
static void describe(const struct leftover_cmd *x, char *buf, size_t len)
{
	snprintf(buf, len,
		 "%s (pid %d, started %s by run %lld) was still running, left by an earlier run: "
		 "its process group %s after %.1f s, before anything else ran",
		 x->tag, (int)x->ident.pid, x->started_at, (long long)x->run_id,
		 x->sig == SIGKILL ? "ignored SIGTERM and was killed with SIGKILL"
				   : "ended on SIGTERM",
		 x->seconds);
}

/* End one, logged. Returns 0 or -EBUSY when it still runs. */
static int end_one(struct leftover_cmd *x)
{
	char msg[512];
	double t0 = util_now();
	int ret = proc_group_end(&x->ident, LEFTOVER_TERM_S, LEFTOVER_KILL_S, &x->sig);
	x->seconds = util_now() - t0;
	if (ret == -ETIMEDOUT) {
		log_msg(LOG_ERR,
			"%s (pid %d, started %s by an earlier run) still runs %.0f s after SIGKILL "
			"(uninterruptible I/O?): not starting while it does",
			x->tag, (int)x->ident.pid, x->started_at, x->seconds);
		return -EBUSY;
	}
	if (ret < 0)
		log_msg(LOG_WARNING, "cannot look for what is left of %s (pid %d): %s", x->tag,
			(int)x->ident.pid, strerror(-ret));
	if (x->sig) {
		describe(x, msg, sizeof(msg));
		log_msg(LOG_WARNING, "%s", msg);
	}
	return 0;
}

int leftover_end(const char *path, struct leftover *l)
{
	struct stat sb;
	struct db *db = NULL;
	char err[512];
	int bad = 0;

	memset(l, 0, sizeof(*l));
	if (stat(path, &sb) || !S_ISREG(sb.st_mode) || !sb.st_size)
		return 0;
	if (db_open(path, 1, &db, err, sizeof(err)))
		return 0; /* the writer's open says what is wrong with it */
	int ret = db_commands_open(db, collect, l);
	db_close(db);
	if (ret < 0)
		log_msg(LOG_WARNING,
			"database %s: cannot read the commands of earlier runs (%s): any still "
			"running is not looked for",
			path, strerror(-ret));
	for (size_t i = 0; i < l->n; i++)
		bad |= end_one(&l->v[i]) != 0;
	return bad ? -EBUSY : 0;
}

void leftover_record(struct db *db, int64_t run_id, const struct leftover *l)
{
	char msg[512];
	for (size_t i = 0; i < l->n; i++) {
		const struct leftover_cmd *x = &l->v[i];
		int ret = db_command_end(db, x->id, x->sig ? "ended at start" : "gone at start",
					 x->sig ? x->sig : -1, run_id);
		if (!ret && x->sig) {
			describe(x, msg, sizeof(msg));
			struct db_event e = {
				.target_id = x->target_id,
				.run_id = run_id,
				.severity = "warning",
				.kind = "leftover-command",
				.message = msg,
				.value = x->seconds,
				.baseline = -1,
			};
			ret = db_event(db, &e, NULL);
		}
		if (ret)
			log_msg(LOG_ERR, "cannot record the end of %s (pid %d): %s", x->tag,
				(int)x->ident.pid, strerror(-ret));
	}
}

void leftover_free(struct leftover *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- the recorder ---- */

static const char *owner_name(int64_t owner)
{
	for (int i = 0; i < rc.n; i++)
		if (rc.st[i].target_id == owner)
			return rc.st[i].t->name;
	return "-";
}

struct start_op {
	const struct db_command_start *c;
	int64_t *id;
};

static int op_start(void *arg)
{
	const struct start_op *o = arg;
	return db_command_start(rc.db, o->c, o->id);
}

static int64_t rec_started(void *arg, int64_t owner, const char *tag, char *const argv[],
			   const struct proc_ident *id, int wait)
{
	struct db_command_start c = {
		.run_id = rc.run_id, .target_id = owner, .tag = tag, .argv = argv, .ident = id
	};
	int64_t rid = 0;
	struct start_op o = { &c, &rid };
	int ret = wait ? iter_db_patient(owner_name(owner), "recording a command before it runs",
					 rc.stop, op_start, &o)
		       : op_start(&o);
	if (!ret)
		return rid;
	log_msg(LOG_ERR, "%s: %s: cannot record it (%s); %s", tag, argv[0], strerror(-ret),
		wait ? "not run" : "run unrecorded");
	return ret;
}

struct end_op {
	int64_t rec;
	const struct cmd_result *r;
};

static int op_end(void *arg)
{
	const struct end_op *o = arg;
	return db_command_end(rc.db, o->rec, o->r ? cmd_end_name(o->r->end) : "not run",
			      o->r ? o->r->status : -1, 0);
}

/* Waiting out a locked database as an action's end does, unless a stop
 * came (or, !wait, the main loop is the caller: one try); a row left
 * unended is found gone by the next start. */
static void rec_ended(void *arg, int64_t rec, const struct cmd_result *r, int wait)
{
	struct end_op o = { rec, r };
	int ret = wait ? iter_db_patient(owner_name(cmd_owner()), "recording the end of a command",
					 rc.stop, op_end, &o)
		       : op_end(&o);
	if (ret)
		log_msg(LOG_WARNING,
			"cannot record the end of command %lld (%s): the next start finds it gone",
			(long long)rec, strerror(-ret));
}

void leftover_recorder_start(struct db *db, int64_t run_id, const struct sched_target *st, int n,
			     const atomic_int *stop)
{
	struct cmd_recorder r = { .started = rec_started, .ended = rec_ended };
	rc.db = db;
	rc.run_id = run_id;
	rc.st = st;
	rc.n = n;
	rc.stop = stop;
	cmd_set_recorder(&r);
}

void leftover_recorder_stop(void)
{
	cmd_set_recorder(NULL);
	memset(&rc, 0, sizeof(rc));
}
