/* outage: spells of failing database writes as events, and a run end that
 * waits for the database. */
#include "outage.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alert.h"
#include "base/log.h"
#include "notify.h"
#include "base/util.h"

/* s as a JSON string's contents (quotes, backslashes and control
 * characters escaped; cut short rather than overflow). */
static void json_text(char *out, size_t len, const char *s)
{
	size_t n = 0;

	for (; *s && n + 7 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			n += (size_t)snprintf(out + n, len - n, "\\%c", c);
		else if (c < 0x20)
			n += (size_t)snprintf(out + n, len - n, "\\u%04x", c);
		else
			out[n++] = (char)c;
	}
	out[n] = '\0';
}

/* "store iteration results (5), store progress (12)" */
static void list_whats(const struct db_outage *s, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < s->nwhats && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s (%ld)", i ? ", " : "",
				      s->whats[i].what, s->whats[i].count);
	if (s->other && n < len)
		snprintf(out + n, len - n, "%sother writes (%ld)", n ? ", " : "", s->other);
}

/* The event's data: when, how long, what was not written. */
static void spell_json(const struct db_outage *s, char *out, size_t len)
{
	char err[420], what[64];
	size_t n;

	json_text(err, sizeof(err), s->error);
	n = (size_t)snprintf(out, len,
			     "{\"started_at\":\"%s\",\"ended_at\":\"%s\",\"seconds\":%.3f,"
			     "\"failed_writes\":%ld,\"error\":\"%s\",\"not_written\":[",
			     s->started_at, s->ended_at, s->seconds, s->failed, err);
	for (int i = 0; i < s->nwhats && n < len; i++) {
		json_text(what, sizeof(what), s->whats[i].what);
		n += (size_t)snprintf(out + n, len - n, "%s{\"what\":\"%s\",\"count\":%ld}",
				      i ? "," : "", what, s->whats[i].count);
	}
	if (n < len)
		snprintf(out + n, len - n, "],\"other_writes\":%ld}", s->other);
}

int outage_record(struct outage *o, struct db *db, const char *db_path, int64_t run_id)
{
	char msg[1024], whats[600], data[2048];

	if (!o->pending) {
		o->pending = db_outage_take(db, &o->spell);
		/* one figure: the message, the value and the data's seconds all
		 * read this millisecond-rounded length */
		o->spell.seconds = round(o->spell.seconds * 1000.0) / 1000.0;
	}
	if (!o->pending)
		return 0;
	const struct db_outage *s = &o->spell;
	list_whats(s, whats, sizeof(whats));
	snprintf(msg, sizeof(msg),
		 "database %s could not be written for %.1f s (%s to %s): %s; %ld write(s) "
		 "failed, not written: %s",
		 db_path, s->seconds, s->started_at, s->ended_at, s->error, s->failed, whats);
	spell_json(s, data, sizeof(data));
	struct db_event e = {
		.run_id = run_id,
		.severity = log_prio_name(LOG_CRIT),
		.kind = alert_kind_name(ALERT_DB_WRITE),
		.message_id = alert_message_id(ALERT_DB_WRITE),
		.message = msg,
		.value = s->seconds,
		.baseline = -1,
		.data = data,
	};
	int ret = db_event(db, &e, NULL);
	if (ret)
		return ret; /* failing again: a new spell, this one waits */
	o->pending = 0;
	log_msg(LOG_NOTICE, "%s is writable again; recorded as a %s event: %s", db_path, e.kind,
		msg);
	return 0;
}

/* The spell still going on at exit: the journal is all that will know. */
static void log_unrecorded(struct db *db, const char *db_path)
{
	struct db_outage s;
	char whats[600];

	if (!db_outage_now(db, &s))
		return;
	list_whats(&s, whats, sizeof(whats));
	log_msg(LOG_ERR,
		"database %s could not be written since %s (%.0f s): %s; %ld write(s) failed, "
		"not written: %s; this is not stored in the database",
		db_path, s.started_at, s.seconds, s.error, s.failed, whats);
}

/* The run's end, written under db_retry's policy (db.h). */
struct run_end {
	struct db *db;
	int64_t run_id;
	int status;
	const char *reason, *db_path;
	double patience;
	int waited; /* a try failed and another followed */
};

static int write_run_end(void *arg)
{
	const struct run_end *e = arg;
	return db_run_end(e->db, e->run_id, e->status, e->reason);
}

static void run_end_failed(void *ctx, int ret, int tries, double busy_s)
{
	struct run_end *e = ctx;
	if (!e->waited)
		log_msg(LOG_WARNING,
			"cannot record the end of the run (exit status %d, %s) in %s: %s; "
			"trying again each second for up to %.0f s",
			e->status, e->reason, e->db_path, strerror(-ret), e->patience);
	e->waited = 1;
	notify_watchdog();
}

int outage_run_end(struct outage *o, struct db *db, const char *db_path, int64_t run_id, int status,
		   const char *reason, double patience, const atomic_int *stop)
{
	static const int no_retry[] = { -ENOENT, -EINVAL, 0 }; /* no run row, or bad input */
	struct run_end e = { db, run_id, status, reason, db_path, patience, 0 };
	const struct db_retry r = {
		.patience = patience,
		.final = no_retry,
		.stop = stop,
		.stop_ends = 1, /* a stop during the wait ends it; one before it does not */
		.on_fail = run_end_failed,
		.ctx = &e,
	};
	int ret = db_retry(&r, write_run_end, &e);
	int waited = e.waited;
	if (ret) {
		log_msg(LOG_ERR,
			"could not record the end of the run (exit status %d, %s) in %s: %s; "
			"its runs row keeps no ended_at, as after a kill -9",
			status, reason, db_path, strerror(-ret));
		log_unrecorded(db, db_path);
		return ret;
	}
	if (waited)
		log_msg(LOG_NOTICE, "recorded the end of the run in %s once it could be written",
			db_path);
	if (outage_record(o, db, db_path, run_id)) {
		log_unrecorded(db, db_path);
		if (o->pending)
			log_msg(LOG_ERR,
				"database %s: the spell of failed writes from %s to %s is not "
				"stored in it",
				db_path, o->spell.started_at, o->spell.ended_at);
	}
	return 0;
}
