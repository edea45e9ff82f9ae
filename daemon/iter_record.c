/* iter_record: what a row leaves besides its row: the patient database
 * writes (iter_db_patient, for the whole daemon), the data-integrity
 * events of the bad sectors a row met, and the row's journal lines. It
 * calls nothing else of iter. */
#include "iter.h"
#include "iter_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "io/engine.h"
#include "io/verify.h"

#define DB_WAIT_LOG_S 60 /* how often a wait for a locked database is logged */

static void fields_for(const struct iter_env *e, struct log_fields *f, long cycle, long it,
		       uint64_t size)
{
	struct log_fields z = LOG_FIELDS_INIT;
	*f = z;
	f->target = e->t->name;
	f->device = e->t->device;
	f->serial = e->tg->serial[0] ? e->tg->serial : NULL;
	f->model = e->tg->model[0] ? e->tg->model : NULL;
	f->firmware = e->tg->firmware[0] ? e->tg->firmware : NULL;
	f->cycle = cycle;
	f->iteration = it;
	f->size_bytes = (int64_t)size;
}

/* iter_db_patient's log lines, under db_retry's policy (db.h). */
struct patience_log {
	const char *target, *what;
	uint64_t logged; /* when the wait was last logged */
};

static void patient_fail(void *ctx, int ret, int tries, double busy_s)
{
	struct patience_log *l = ctx;
	uint64_t now = util_now_ns();
	if (busy_s < 0) {
		log_msg(LOG_ERR, "target %s: %s failed (%s), retry %d of %d", l->target, l->what,
			strerror(-ret), tries, DB_RETRY_TRIES);
		return;
	}
	/* Another program holds the write lock (a sqlite3 session with an
	 * open transaction, a VACUUM): each try already waited the busy
	 * timeout. Wait for it as long as it takes. */
	if (!l->logged || now - l->logged >= DB_WAIT_LOG_S * 1000000000ull) {
		log_msg(LOG_WARNING,
			"target %s: %s: the database is locked by another "
			"program (an open transaction in a sqlite3 session?) for "
			"%.0f s; waiting for it, measuring nothing meanwhile",
			l->target, l->what, busy_s);
		l->logged = now;
	}
}

static void patient_done(void *ctx, int tries, double busy_s)
{
	const struct patience_log *l = ctx;
	if (busy_s >= 0)
		log_msg(LOG_NOTICE,
			"target %s: %s: done after the database was locked for "
			"%.0f s; nothing was lost",
			l->target, l->what, busy_s);
}

int iter_db_patient(const char *target, const char *what, const atomic_int *stop, int (*op)(void *),
		    void *arg)
{
	struct patience_log l = { .target = target, .what = what };
	const struct db_retry r = {
		.wait_busy = 1,
		.tries = DB_RETRY_TRIES,
		.patience = DB_RETRY_FOREVER,
		.stop = stop,
		.on_fail = patient_fail,
		.on_done = patient_done,
		.ctx = &l,
	};
	return db_retry(&r, op, arg);
}

/* A stop's drain of the I/Os in flight, when the phase was cut. */
void iter_log_drain(const char *target, const char *phase, const struct engine_result *r)
{
	if (!r->interrupted)
		return;
	log_msg(LOG_INFO,
		"target %s: stop: %s: waited %.3f s for the drive to complete the %u I/O(s) "
		"in flight; nothing new was submitted",
		target, phase, r->stop_drain_seconds, r->stop_inflight);
}

/* One data-integrity event naming its offset: the data-integrity alert
 * (journal with its MESSAGE_ID, events, alert_command) the first time in a
 * cycle, after that a journal line and an events row with the same id. */
static void integrity_event(const struct iter_env *e, int64_t it_id, uint64_t offset,
			    const char *what, uint64_t count)
{
	char msg[512], data[256];
	snprintf(msg, sizeof(msg),
		 "target %s: data integrity: cycle %ld: sector at offset %llu: %s", e->t->name,
		 e->cycle, (unsigned long long)offset, what);
	snprintf(data, sizeof(data), "{\"offset\":%llu,\"bad_sectors\":%llu}",
		 (unsigned long long)offset, (unsigned long long)count);
	if (alert_integrity(e->alert, e->cycle, e->cycle_id, it_id, offset, msg, data))
		return;
	struct log_fields f = LOG_FIELDS_INIT;
	f.target = e->t->name;
	f.device = e->tg->path;
	f.serial = e->tg->serial[0] ? e->tg->serial : NULL;
	f.model = e->tg->model[0] ? e->tg->model : NULL;
	f.firmware = e->tg->firmware[0] ? e->tg->firmware : NULL;
	f.message_id = alert_message_id(ALERT_DATA_INTEGRITY);
	f.cycle = e->cycle;
	log_fields(LOG_ERR, &f, "%s", msg);
	struct db_event ev = {
		.target_id = e->target_id,
		.run_id = e->run_id,
		.cycle_id = e->cycle_id,
		.iteration_id = it_id,
		.severity = "err",
		.kind = alert_kind_name(ALERT_DATA_INTEGRITY),
		.message_id = f.message_id,
		.message = msg,
		.value = (double)offset,
		.baseline = -1,
		.data = data,
	};
	int ret = db_event(e->db, &ev, NULL);
	if (ret)
		log_msg(LOG_ERR, "target %s: cannot store a data-integrity event: %s", e->t->name,
			strerror(-ret));
}

/* Every bad sector remembered by the engine, and a read error under
 * verification, becomes a data-integrity event naming its offset. */
void iter_report_integrity(const struct iter_env *e, int64_t it_id, const struct engine_result *r)
{
	char what[160];
	for (unsigned i = 0; i < r->nbad; i++)
		integrity_event(e, it_id, r->bad[i].offset,
				verify_reason_name((enum verify_reason)r->bad[i].reason),
				r->verify_errors);
	if (r->errors) {
		snprintf(what, sizeof(what), "I/O error: %s", strerror(r->first_errno));
		integrity_event(e, it_id, r->first_error_offset, what, r->errors);
	}
}

/* A figure for the log: "-" when unknown. */
static const char *log_fig(double v, char *buf, size_t len)
{
	if (v < 0)
		return "-";
	snprintf(buf, len, "%.1f", v);
	return buf;
}

void iter_log_iteration(const struct iter_env *e, const struct db_iteration *it)
{
	struct log_fields f;
	char sz[32], rnd[24] = "", figs[256], b[4][24], stall[48] = "";
	if (it->round_index)
		snprintf(rnd, sizeof(rnd), " round %d", it->round_index);
	fields_for(e, &f, e->cycle, it->number, it->size_bytes);
	if (it->phase_not_run) /* as stored: nothing measured (NULL), not zeros */
		snprintf(figs, sizeof(figs), "no figures (%s during the fill, %s filled)",
			 db_status_name(it->status),
			 util_fmt_bytes(it->fill_bytes, b[0], sizeof(b[0])));
	else if (it->mibps_avg < 0)
		snprintf(figs, sizeof(figs), "no figures (%s after %.1f s, %s moved)",
			 db_status_name(it->status), it->seconds,
			 util_fmt_bytes(it->bytes, b[0], sizeof(b[0])));
	else
		snprintf(figs, sizeof(figs),
			 "%.1f MiB/s (min %s max %s sd %s) %.0f IOPS "
			 "p99 %.0f us p99.99 %.0f us fill %s MiB/s",
			 it->mibps_avg, log_fig(it->mibps_min, b[0], sizeof(b[0])),
			 log_fig(it->mibps_max, b[1], sizeof(b[1])),
			 log_fig(it->mibps_stddev, b[2], sizeof(b[2])), it->iops_avg,
			 it->lat_us.p99, it->lat_us.p9999,
			 log_fig(it->fill_bytes ? it->fill_mibps : -1, b[3], sizeof(b[3])));
	if (it->host_stall_seconds > 0)
		snprintf(stall, sizeof(stall), " host stall %.1f s (left out)",
			 it->host_stall_seconds);
	f.mibps = it->mibps_avg;
	/* a stop's interrupted row is no alert (journalctl -p warning shows
	 * alerts only); a failed one is, beside its own alert */
	log_fields(it->status == DB_FAILED        ? LOG_WARNING
		   : it->status == DB_INTERRUPTED ? LOG_NOTICE
						  : LOG_INFO,
		   &f, "target %s: cycle %ld iteration %ld size %s %s%s: %s%s [%s]%s%s", e->t->name,
		   e->cycle, it->number, util_fmt_bytes(it->size_bytes, sz, sizeof(sz)),
		   it->workload, rnd, figs, stall, db_status_name(it->status),
		   it->error ? ": " : "", it->error ? it->error : "");
}
