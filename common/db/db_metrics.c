/* db_metrics: the stored figures of a target for the metrics (its last
 * finished iteration, over-provisioning, health, error and alert counts),
 * read from the database with indexed queries. */
#include "db/db_metrics.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "db/db.h"
#include "base/log.h"
#include "base/util.h"

#define MAX_COLS 10

/* Where each column of a one-row query goes: a double (scaled; NULL leaves
 * it unknown) or, for text_col, a string. */
struct row_map {
	double *dst[MAX_COLS];
	double scale[MAX_COLS];
	int text_col; /* -1: none */
	char *text;
	size_t textlen;
	int found;
};

static int fill_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct row_map *m = arg;
	m->found = 1;
	for (int c = 0; c < n && c < MAX_COLS; c++) {
		if (v[c].type == DB_NULL)
			continue;
		if (c == m->text_col && v[c].type == DB_TEXT)
			util_strlcpy(m->text, v[c].s, m->textlen);
		else if (m->dst[c])
			*m->dst[c] = v[c].r * (m->scale[c] ? m->scale[c] : 1);
	}
	return 1; /* one row is all we want */
}

/* Run sql (one ? = target_id) and map its first row. Returns 0 or -errno. */
static int one_row(struct db *db, const char *sql, int64_t target_id, struct row_map *m)
{
	struct db_value p = { .type = DB_INT, .i = target_id };
	char err[256];
	int ret = db_query(db, sql, &p, 1, fill_row, m, err, sizeof(err));
	if (ret < 0) {
		log_msg(LOG_ERR, "metrics: %s", err);
		return ret;
	}
	return 0;
}

#define UNIX(col) "(julianday(" col ") - 2440587.5) * 86400.0"

/* The last done iteration (not a read-back) and its ratio to the baseline
 * stored with it (iterations.baseline_iteration_id: the one its alerts, the
 * degradation view and the CLI compare it with). */
static int last_iteration(struct db *db, int64_t target_id, struct metrics_target *t)
{
	static const char sql[] = "SELECT workload, mibps_avg, iops_avg, lat_p99_us, " UNIX(
		"ended_at") ","
			    " (julianday(ended_at) - julianday(started_at)) * 86400.0, size_bytes,"
			    " (SELECT b.mibps_avg FROM iterations b WHERE b.id = i.baseline_iteration_id)"
			    " FROM iterations i WHERE target_id = ? AND status = 'done'"
			    " AND (phase IS NULL OR phase <> 'verify') ORDER BY id DESC LIMIT 1";
	double base = NAN;
	struct row_map m = {
		.dst = { NULL, &t->last_bps, &t->last_iops, &t->last_p99_seconds, &t->last_end_unix,
			 &t->last_seconds, &t->last_size_bytes, &base },
		.scale = { 0, 1048576.0, 1, 1e-6 },
		.text_col = 0,
		.text = t->last_workload,
		.textlen = sizeof(t->last_workload),
	};
	int ret = one_row(db, sql, target_id, &m);
	if (ret || !m.found || isnan(t->last_bps))
		return ret;
	if (base > 0)
		t->last_ratio = t->last_bps / 1048576.0 / base;
	return 0;
}

static int wear_and_health(struct db *db, int64_t target_id, struct metrics_target *t)
{
	/* i.id, not w.iteration_id: the index on (target_id, id) gives the
	 * target's rows newest first, so the last one is read, not sorted */
	static const char wear[] =
		"SELECT w.host_bytes_total, w.op_effective, w.op_configured FROM wear w"
		" JOIN iterations i ON i.id = w.iteration_id WHERE i.target_id = ?"
		" ORDER BY i.id DESC LIMIT 1";
	/* The latest snapshot's counters; write amplification over the whole
	 * history (flash bytes over host bytes of every snapshot's deltas),
	 * since the latest snapshot may be one with no host writes since the
	 * one before (a cycle's start after its action). */
	static const char health[] =
		"SELECT h.percentage_used, h.available_spare, h.media_errors, h.temperature_c,"
		" h.nand_bytes_written, (SELECT sum(x.nand_bytes_delta) * 1.0"
		" / sum(x.host_bytes_delta) FROM health x WHERE x.target_id = h.target_id"
		" AND x.nand_bytes_delta IS NOT NULL AND x.host_bytes_delta IS NOT NULL)"
		" FROM health h WHERE h.target_id = ? ORDER BY h.at DESC, h.id DESC LIMIT 1";
	struct row_map w = {
		.dst = { &t->host_written_bytes, &t->op_effective, &t->op_configured },
		.text_col = -1,
	};
	struct row_map h = {
		.dst = { &t->life_used_ratio, &t->spare_ratio, &t->media_errors,
			 &t->temperature_celsius, &t->nand_written_bytes, &t->write_amplification },
		.scale = { 0.01, 0.01 },
		.text_col = -1,
	};
	int ret = one_row(db, wear, target_id, &w);
	return ret ? ret : one_row(db, health, target_id, &h);
}

static int add_kind(void *arg, int n, const struct db_value *v, const char *const *names)
{
	if (n == 2 && v[0].type == DB_TEXT)
		metrics_add_alert(arg, v[0].s, v[1].r);
	return 0;
}

static int errors_and_alerts(struct db *db, int64_t target_id, struct metrics_target *t)
{
	static const char errors[] =
		"SELECT total(errors), total(verify_errors) FROM iterations WHERE target_id = ?";
	static const char alerts[] =
		"SELECT kind, count(*) FROM events WHERE target_id = ? AND severity IN"
		" ('emerg', 'alert', 'crit', 'err', 'warning', 'notice') GROUP BY kind ORDER BY kind";
	struct row_map e = { .dst = { &t->io_errors, &t->verify_errors }, .text_col = -1 };
	struct db_value p = { .type = DB_INT, .i = target_id };
	char err[256];
	int ret = one_row(db, errors, target_id, &e);
	if (ret)
		return ret;
	ret = db_query(db, alerts, &p, 1, add_kind, t, err, sizeof(err));
	if (ret < 0)
		log_msg(LOG_ERR, "metrics: %s", err);
	return ret < 0 ? ret : 0;
}

int db_metrics_collect(struct db *db, int64_t target_id, struct metrics_target *t)
{
	int ret = last_iteration(db, target_id, t);
	if (!ret)
		ret = wear_and_health(db, target_id, t);
	if (!ret)
		ret = errors_and_alerts(db, target_id, t);
	return ret;
}

int db_metrics_last_done(struct db *db, int64_t target_id, int64_t *id)
{
	static const char sql[] =
		"SELECT max(id) FROM iterations WHERE target_id = ? AND status = 'done'";
	double v = NAN;
	struct row_map m = { .dst = { &v }, .text_col = -1 };
	int ret = one_row(db, sql, target_id, &m);
	*id = ret || isnan(v) ? 0 : (int64_t)v;
	return ret;
}

/* Kinds come as stored in events.kind, which may hold kinds this build does
 * not know (a merged or newer database): they are counted by name. */
void metrics_add_alert(struct metrics_target *t, const char *kind, double n)
{
	for (int i = 0; i < t->nalerts; i++)
		if (!strcmp(t->alerts[i].kind, kind)) {
			t->alerts[i].count += n;
			return;
		}
	if (t->nalerts == METRICS_MAX_KINDS)
		return;
	util_strlcpy(t->alerts[t->nalerts].kind, kind, sizeof(t->alerts[0].kind));
	t->alerts[t->nalerts++].count = n;
}
