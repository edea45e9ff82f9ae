/* db_cycle: runs, targets, campaigns and cycles: a daemon's start and
 * stop, a target's row, where a target continues after a (re)start (the
 * resume point) and whether its campaign is complete, a cycle's rows and
 * the action between cycles. */
#include "db/db_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/fsinfo.h"
#include "base/log.h"
#include "base/stats.h"
#include "base/util.h"
#include "config/cfg_diff.h"

static const char *const status_names[DB_STATUS__COUNT] = {
	[DB_RUNNING] = "running",
	[DB_DONE] = "done",
	[DB_INTERRUPTED] = "interrupted",
	[DB_FAILED] = "failed",
};

const char *db_status_name(enum db_status s)
{
	return (unsigned)s < DB_STATUS__COUNT ? status_names[s] : "?";
}

int db_status_final(enum db_status s)
{
	switch (s) {
	case DB_DONE:
	case DB_INTERRUPTED:
	case DB_FAILED: return 1;
	case DB_RUNNING:
	case DB_STATUS__COUNT: break;
	}
	return 0;
}

/* ---- runs and targets --------------------------------------------------- */

int db_run_begin(struct db *db, const char *config_path, int64_t *run_id)
{
	char host[256] = "";
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	db_bind_start(db, ST_RUN_BEGIN, &b);
	db_bind_i64(&b, getpid());
	db_bind_text(&b, WEARMON_VERSION);
	db_bind_text(&b, config_path);
	db_bind_opt_text(&b, host);
	ret = db_bind_run(&b, "record run start");
	if (ret == 0)
		*run_id = sqlite3_last_insert_rowid(db->conn);
	db_leave(db);
	return ret;
}

int db_run_config(struct db *db, int64_t run_id, const char *config_text)
{
	char kernel[3 * sizeof(((struct utsname *)0)->release) + 8] = "";
	struct utsname u;
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	if (uname(&u) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	db_bind_start(db, ST_RUN_CONFIG, &b);
	db_bind_opt_text(&b, config_text);
	db_bind_opt_text(&b, kernel);
	db_bind_i64(&b, run_id);
	ret = db_bind_run(&b, "record run configuration");
	if (ret == 0)
		ret = db_changed(db, run_id, "record run configuration");
	db_leave(db);
	return ret;
}

int db_run_end(struct db *db, int64_t run_id, int exit_status, const char *reason)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_RUN_END, &b);
	db_bind_i64(&b, exit_status);
	db_bind_text(&b, reason);
	db_bind_i64(&b, run_id);
	ret = db_bind_run(&b, "record run end");
	if (ret == 0)
		ret = db_changed(db, run_id, "record run end");
	db_leave(db);
	return ret;
}

/* Identity columns describe the device as last seen, so NULLs overwrite. */
int db_target_upsert(struct db *db, const struct db_target_info *t, int64_t *target_id)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_TARGET_UPSERT, &b);
	db_bind_text(&b, t->name);
	db_bind_text(&b, t->device);
	db_bind_text(&b, tgt_kind_name(t->kind));
	db_bind_u64(&b, t->capacity_bytes);
	db_bind_i64(&b, t->logical_block_size);
	db_bind_text(&b, t->serial);
	db_bind_text(&b, t->model);
	db_bind_text(&b, t->firmware);
	db_bind_text(&b, t->backing_file);
	if (t->backing_ino) {
		db_bind_u64(&b, t->backing_dev);
		db_bind_u64(&b, t->backing_ino);
	} else {
		db_bind_null(&b);
		db_bind_null(&b);
	}
	ret = db_bind_row(&b, "store target");
	if (ret == 1) {
		*target_id = sqlite3_column_int64(b.st, 0);
		/* step to the end so the statement's own commit happens here */
		ret = db_bind_run(&b, "store target");
	} else if (ret == 0) {
		ret = -EIO;
	}
	db_leave(db);
	return ret;
}

/* ---- resume ------------------------------------------------------------- */

/* Runs a one-value query on target_id into *v. Returns 0 or -errno. */
static int count_of(struct db *db, enum stmt_id id, int64_t target_id, long *v, const char *what)
{
	struct db_bind b;
	int ret;

	db_bind_start(db, id, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_row(&b, what);
	if (ret <= 0)
		return ret < 0 ? ret : -EIO;
	*v = (long)sqlite3_column_int64(b.st, 0);
	return db_bind_finish(&b, SQLITE_OK, NULL);
}

static int mark_interrupted(struct db *db, int64_t target_id, long *marked, int peek)
{
	struct db_bind b;
	int ret;

	if (peek)
		return count_of(db, ST_RUNNING_COUNT, target_id, marked,
				"count running iterations");
	db_bind_start(db, ST_WRITTEN_RECOVER, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_run(&b, "recover what interrupted fills wrote");
	if (ret)
		return ret;
	db_bind_start(db, ST_MARK_INTERRUPTED, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_run(&b, "mark interrupted iterations");
	*marked = ret == 0 ? sqlite3_changes(db->conn) : 0;
	return ret;
}

/* The campaign's first cycle and done cycles; its stored key (NULL: none
 * yet, malloc'd) in *key. */
static int campaign_read(struct db *db, int64_t target_id, struct db_resume *r, char **key)
{
	struct db_bind b;
	int ret;

	db_bind_start(db, ST_CAMPAIGN, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_row(&b, "read campaign");
	if (ret == 0) {
		log_msg(LOG_ERR, "database %s: no target with id %lld", db->path,
			(long long)target_id);
		return -ENOENT;
	}
	if (ret < 0)
		return ret;
	r->campaign_first_cycle = sqlite3_column_int64(b.st, 0);
	r->campaign_cycles_done = sqlite3_column_int64(b.st, 1);
	const unsigned char *k = sqlite3_column_text(b.st, 2);
	*key = k ? strdup((const char *)k) : NULL;
	return db_bind_finish(&b, k && !*key ? SQLITE_NOMEM : SQLITE_OK, "read campaign key");
}

/* Fills next_size_index and next_iteration of the cycle r->cycle_id. */
static int cycle_progress(struct db *db, struct db_resume *r)
{
	struct db_bind b;
	int ret;

	db_bind_start(db, ST_CYCLE_PROGRESS, &b);
	db_bind_i64(&b, r->cycle_id);
	ret = db_bind_row(&b, "read cycle progress");
	if (ret <= 0)
		return ret < 0 ? ret : -EIO;
	r->next_size_index = sqlite3_column_int(b.st, 0);
	r->next_iteration = sqlite3_column_int64(b.st, 1);
	return db_bind_finish(&b, SQLITE_OK, NULL);
}

static int run_on_cycle(struct db *db, enum stmt_id id, int64_t cycle_id, const char *what)
{
	struct db_bind b;

	db_bind_start(db, id, &b);
	db_bind_i64(&b, cycle_id);
	return db_bind_run(&b, what);
}

/* How a cycle's recorded action ended (ST_LAST_CYCLE's last column). */
enum action_end { END_OTHER, END_INTERRUPTED, END_EFFECTIVE };

/* An unfinished cycle whose action has a recorded start is never resumed
 * unless a stop recorded it 'interrupted' (then it runs again): without an
 * end a crash cut the action short, and it is closed as 'interrupted' and
 * the cycle counted done (the action is not run again); with another end
 * only the cycle's own end was lost, and the cycle is closed done (ok,
 * skipped) or failed. Returns 1 when the cycle was closed, 0 when it
 * resumes, or -errno. */
static int close_after_action(struct db *db, struct db_resume *r, int started, int ended,
			      enum action_end how, int peek)
{
	struct db_bind b;
	int ret;

	if (!started || (ended && how == END_INTERRUPTED))
		return 0;
	if (!ended) {
		ret = peek ? 0
			   : run_on_cycle(db, ST_ACTION_CRASHED, r->cycle_id,
					  "close a crashed action");
		r->action_crashed = r->cycle_number;
		return ret ? ret : 1;
	}
	r->action_closed = r->cycle_number;
	r->action_closed_done = how == END_EFFECTIVE;
	if (peek)
		return 1;
	db_bind_start(db, ST_ACTION_CLOSE, &b);
	db_bind_text(&b, db_status_name(how == END_EFFECTIVE ? DB_DONE : DB_FAILED));
	db_bind_i64(&b, r->cycle_id);
	ret = db_bind_run(&b, "close a cycle after its action");
	return ret ? ret : 1;
}

/* Decides resume or a new cycle from the target's highest-numbered cycle. */
static int last_cycle(struct db *db, int64_t target_id, struct db_resume *r, int peek)
{
	struct db_bind b;
	int ret, unfinished, started, ended;
	enum action_end how;

	r->cycle_number = 1;
	r->next_iteration = 1;
	db_bind_start(db, ST_LAST_CYCLE, &b);
	db_bind_i64(&b, target_id);
	ret = db_bind_row(&b, "find last cycle");
	if (ret <= 0)
		return ret;
	r->cycle_id = sqlite3_column_int64(b.st, 0);
	r->cycle_number = sqlite3_column_int64(b.st, 1);
	unfinished = sqlite3_column_int(b.st, 2);
	started = sqlite3_column_int(b.st, 3);
	ended = sqlite3_column_int(b.st, 4);
	how = (enum action_end)sqlite3_column_int(b.st, 5);
	db_bind_finish(&b, SQLITE_OK, NULL);
	if (unfinished) {
		ret = close_after_action(db, r, started, ended, how, peek);
		if (ret < 0)
			return ret;
		unfinished = !ret;
	}
	if (!unfinished) {
		r->cycle_id = 0;
		r->cycle_number++;
		return 0;
	}
	r->resume = 1;
	ret = peek ? 0 : run_on_cycle(db, ST_CYCLE_REOPEN, r->cycle_id, "reopen cycle");
	return ret ? ret : cycle_progress(db, r);
}
/* Every unfinished cycle of the target fails and a new campaign begins
 * with the next cycle number, under key. */
static int campaign_start(struct db *db, int64_t target_id, const char *key, struct db_resume *r,
			  int peek)
{
	struct db_bind b;
	int ret = 0;

	if (r->resume) {
		if (!peek) {
			db_bind_start(db, ST_ADOPT_FAIL_CYCLES, &b);
			db_bind_i64(&b, target_id);
			ret = db_bind_run(&b, "end the old campaign's cycle");
		}
		r->resume = 0;
		r->cycle_id = 0;
		r->cycle_number++;
		r->next_size_index = 0;
		r->next_iteration = 1;
	}
	if (ret)
		return ret;
	r->campaign_first_cycle = r->cycle_number;
	r->campaign_cycles_done = 0;
	r->campaign_new = 1;
	if (peek)
		return 0;
	db_bind_start(db, ST_CAMPAIGN_NEW, &b);
	db_bind_i64(&b, r->cycle_number);
	db_bind_text(&b, key);
	db_bind_i64(&b, target_id);
	return db_bind_run(&b, "start campaign");
}

static int target_stmt(struct db *db, enum stmt_id id, int64_t target_id, const char *text,
		       const char *what)
{
	struct db_bind b;

	db_bind_start(db, id, &b);
	if (text)
		db_bind_text(&b, text);
	db_bind_i64(&b, target_id);
	return db_bind_run(&b, what);
}

/* Whether the campaign goes on, is complete, or a new one begins. */
static int campaign_decide(struct db *db, int64_t target_id, const struct db_campaign_req *q,
			   const char *stored, struct db_resume *r)
{
	int changed = stored && q->key &&
		      cfg_campaign_diff(stored, q->key, r->changed, sizeof(r->changed));

	if (q->new_campaign || changed)
		return campaign_start(db, target_id, q->key, r, q->peek);
	if (!stored && q->key && !q->peek) {
		int ret = target_stmt(db, ST_CAMPAIGN_KEY, target_id, q->key, "store campaign key");
		if (ret)
			return ret;
	}
	if (r->resume || q->cycles <= 0 || r->campaign_cycles_done < q->cycles)
		return 0;
	r->campaign_complete = 1;
	return q->peek ? 0
		       : target_stmt(db, ST_CAMPAIGN_DONE, target_id, NULL,
				     "mark campaign complete");
}

/* In one transaction:
 * 1. iterations of this target still 'running' were cut short by a crash or
 *    kill: they become 'interrupted' with an error saying so (their ended_at
 *    stays NULL: the time is unknown); one cut short in its fill keeps, in
 *    written_extents, the prefix the last progress row counted. Cycles keep their status: a 'running'
 *    cycle whose run has ended is simply resumable.
 * 2. When the highest-numbered cycle is 'running' or 'interrupted', it is
 *    resumed (status set back to 'running'): the next size is 1 + the highest
 *    size_index measured 'done' in it (0 if none), the next iteration number
 *    1 + its highest iteration number (1 if none); unless its action was
 *    recorded as started (close_after_action).
 * 3. Otherwise a new cycle follows: number = highest + 1 (1 if none).
 * 4. Campaign (campaign_decide): a new one begins when asked or when a
 *    campaign key changed; else one with req->cycles > 0 done cycles is
 *    complete and stays so. */
/* With peek nothing was written, so the cycle a start would close as done
 * is not among the done cycles counted yet. */
static void peek_count_closed(struct db_resume *r)
{
	long closed = r->action_crashed       ? r->action_crashed
		      : r->action_closed_done ? r->action_closed
					      : 0;
	if (closed && closed >= r->campaign_first_cycle)
		r->campaign_cycles_done++;
}

int db_resume_point(struct db *db, int64_t target_id, const struct db_campaign_req *req,
		    struct db_resume *out)
{
	char *stored = NULL;
	int peek = req->peek, ret = peek ? (db ? 0 : -EINVAL) : db_enter(db);

	if (ret)
		return ret;
	if (peek) /* a read-only connection, which db_enter refuses */
		pthread_mutex_lock(&db->lock);
	memset(out, 0, sizeof(*out));
	ret = peek ? 0 : db_tx_begin(db);
	if (ret)
		goto out;
	ret = mark_interrupted(db, target_id, &out->interrupted_marked, peek);
	if (ret == 0)
		ret = last_cycle(db, target_id, out, peek);
	if (ret == 0)
		ret = campaign_read(db, target_id, out, &stored);
	if (ret == 0 && peek)
		peek_count_closed(out);
	if (ret == 0)
		ret = campaign_decide(db, target_id, req, stored, out);
	if (!peek)
		ret = db_tx_end(db, ret);
out:
	free(stored);
	db_leave(db);
	return ret;
}

int db_target_id(struct db *db, const char *name, int64_t *id)
{
	struct db_bind b;
	int ret;

	if (!db)
		return -EINVAL;
	pthread_mutex_lock(&db->lock);
	db_bind_start(db, ST_TARGET_ID, &b);
	db_bind_text(&b, name);
	ret = db_bind_row(&b, "find target");
	if (ret > 0) {
		*id = sqlite3_column_int64(b.st, 0);
		ret = db_bind_finish(&b, SQLITE_OK, NULL);
	} else if (ret == 0) {
		ret = -ENOENT;
	}
	db_leave(db);
	return ret;
}

int db_campaign_key(struct db *db, int64_t target_id, const char *key)
{
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = target_stmt(db, ST_CAMPAIGN_KEY, target_id, key, "store campaign key");
	if (ret == 0)
		ret = db_changed(db, target_id, "store campaign key");
	db_leave(db);
	return ret;
}

int db_campaign_done(struct db *db, int64_t target_id)
{
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = target_stmt(db, ST_CAMPAIGN_DONE, target_id, NULL, "mark campaign complete");
	if (ret == 0)
		ret = db_changed(db, target_id, "mark campaign complete");
	db_leave(db);
	return ret;
}

/* ---- cycles ------------------------------------------------------------- */

int db_cycle_begin(struct db *db, int64_t target_id, int64_t run_id, long number, int64_t *cycle_id)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_CYCLE_BEGIN, &b);
	db_bind_i64(&b, target_id);
	db_bind_i64(&b, run_id);
	db_bind_i64(&b, number);
	ret = db_bind_run(&b, "start cycle");
	if (ret == 0)
		*cycle_id = sqlite3_last_insert_rowid(db->conn);
	db_leave(db);
	return ret;
}

int db_cycle_plan(struct db *db, int64_t cycle_id, int nsizes, long cycles)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_CYCLE_PLAN, &b);
	db_bind_i64(&b, nsizes);
	db_bind_i64(&b, cycles);
	db_bind_i64(&b, cycle_id);
	ret = db_bind_run(&b, "record the cycle's plan");
	db_leave(db);
	return ret;
}

int db_action_start(struct db *db, int64_t cycle_id, const struct db_action *a)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_ACTION_START, &b);
	db_bind_text(&b, cfg_action_name(a->kind));
	db_bind_opt_text(&b, a->started_at);
	db_bind_i64(&b, cycle_id);
	ret = db_bind_run(&b, "record the action's start");
	if (ret == 0)
		ret = db_changed(db, cycle_id, "record the action's start");
	db_leave(db);
	return ret;
}

int db_action_end(struct db *db, int64_t cycle_id, const struct db_action *a,
		  const struct db_wear_state *wear)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = db_tx_begin(db);
	if (ret)
		goto out;
	db_bind_start(db, ST_ACTION_END, &b);
	db_bind_dbl(&b, a->seconds);
	db_bind_u64(&b, a->bytes);
	db_bind_text(&b, act_outcome_name(a->outcome));
	db_bind_text(&b, a->error);
	db_bind_i64(&b, cycle_id);
	ret = db_bind_run(&b, "record the action's end");
	if (ret == 0)
		ret = db_changed(db, cycle_id, "record the action's end");
	if (ret == 0 && wear)
		ret = db_wear_put_state(db, wear);
	ret = db_tx_end(db, ret);
out:
	db_leave(db);
	return ret;
}

int db_cycle_end(struct db *db, int64_t cycle_id, enum db_status status)
{
	struct db_bind b;
	int ret;

	if (!db_status_final(status))
		return -EINVAL;
	ret = db_enter(db);
	if (ret)
		return ret;
	db_bind_start(db, ST_CYCLE_END, &b);
	db_bind_text(&b, db_status_name(status));
	db_bind_i64(&b, cycle_id);
	ret = db_bind_run(&b, "end cycle");
	if (ret == 0)
		ret = db_changed(db, cycle_id, "end cycle");
	db_leave(db);
	return ret;
}
