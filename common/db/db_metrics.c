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

#define MAX_COLS 16
/* the events that count as alerts */
#define COUNTED_SEVERITY "severity IN ('emerg', 'alert', 'crit', 'err', 'warning', 'notice')"

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

/* The figures of an iteration row i, in the order of last_map. */
#define LAST_COLS                                                                                  \
	"workload, mibps_avg, iops_avg, lat_p99_us,"                                               \
	" (julianday(ended_at) - 2440587.5) * 86400.0,"                                            \
	" (julianday(ended_at) - julianday(started_at)) * 86400.0, size_bytes,"                    \
	" (SELECT b.mibps_avg FROM iterations b WHERE b.id = i.baseline_iteration_id)"
#define NLAST 8

/* Map an iteration's LAST_COLS into t's last_* figures; columns after
 * them go to extra[]. */
static void last_map(struct row_map *m, struct metrics_target *t, double *base, double *extra,
		     int nextra)
{
	double *dst[NLAST] = { NULL,
			       &t->last_bps,
			       &t->last_iops,
			       &t->last_p99_seconds,
			       &t->last_end_unix,
			       &t->last_seconds,
			       &t->last_size_bytes,
			       base };

	memset(m, 0, sizeof(*m));
	memcpy(m->dst, dst, sizeof(dst));
	for (int k = 0; k < nextra && NLAST + k < MAX_COLS; k++)
		m->dst[NLAST + k] = &extra[k];
	m->scale[1] = 1048576.0;
	m->scale[3] = 1e-6;
	m->text_col = 0;
	m->text = t->last_workload;
	m->textlen = sizeof(t->last_workload);
}

static void last_ratio(struct metrics_target *t, double base)
{
	if (!isnan(t->last_bps) && base > 0)
		t->last_ratio = t->last_bps / 1048576.0 / base;
}

/* The last done iteration (not a read-back) and its ratio to the baseline
 * stored with it (iterations.baseline_iteration_id: the one its alerts, the
 * degradation view and the CLI compare it with). */
static int last_iteration(struct db *db, int64_t target_id, struct metrics_target *t)
{
	static const char sql[] = "SELECT " LAST_COLS " FROM iterations i WHERE target_id = ?"
				  " AND status = 'done' AND (phase IS NULL OR phase <> 'verify')"
				  " ORDER BY id DESC LIMIT 1";
	double base = NAN;
	struct row_map m;

	last_map(&m, t, &base, NULL, 0);
	int ret = one_row(db, sql, target_id, &m);
	if (!ret && m.found)
		last_ratio(t, base);
	return ret;
}

static int wear_and_health(struct db *db, int64_t target_id, struct metrics_target *t)
{
	/* i.id, not w.iteration_id: the index on (target_id, id) gives the
	 * target's rows newest first, so the last one is read, not sorted */
	/* op_effective: the newest figure, a health snapshot's after the wear
	 * row's iteration (an action's TRIM or erase) included: the mapped
	 * bytes of both are the same extents (device/wear.h); rows stored
	 * later, one by one, replace it as they come (op_update). A snapshot
	 * in the same millisecond as the iteration's end counts as after it:
	 * it is stored after the wear row (a fast TRIM takes less than a
	 * millisecond on a small device), and one taken before shows the
	 * same extents as the wear row. */
	/* host bytes: the target's counter, which host idle recovery rows
	 * add to as well (device/wear.h: wear_after_hir) */
	static const char wear[] =
		"SELECT t.host_bytes_total, coalesce((SELECT h.op_effective FROM health h"
		" WHERE h.target_id = i.target_id AND h.op_effective IS NOT NULL"
		" AND h.at >= i.ended_at ORDER BY h.at DESC, h.id DESC LIMIT 1), w.op_effective),"
		" w.op_configured FROM wear w"
		" JOIN iterations i ON i.id = w.iteration_id JOIN targets t ON t.id = i.target_id"
		" WHERE i.target_id = ? ORDER BY i.id DESC LIMIT 1";
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
		"SELECT kind, count(*) FROM events WHERE target_id = ? AND " COUNTED_SEVERITY
		" GROUP BY kind ORDER BY kind";
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

/* ---- the figures kept in memory (struct db_metrics_state) ------------- */

#define WA_ROWS "nand_bytes_delta IS NOT NULL AND host_bytes_delta IS NOT NULL"

/* A key read as a double (row_map); NULL (NaN) is 0: no such row. */
static int64_t id_of(double v)
{
	return isnan(v) ? 0 : (int64_t)v;
}

static void add_to(double *x, double v)
{
	if (!isnan(v))
		*x = isnan(*x) ? v : *x + v;
}

static void wa_update(struct db_metrics_state *s)
{
	s->t.write_amplification = s->wa_rows && s->host_sum != 0 ? s->nand_sum / s->host_sum : NAN;
}

int db_metrics_seed(struct db *db, struct db_metrics_state *s)
{
	static const char sql[] =
		"SELECT (SELECT max(id) FROM iterations WHERE target_id = ?1 AND status = 'done'),"
		" (SELECT max(id) FROM iterations WHERE target_id = ?1 AND status = 'done'"
		" AND (phase IS NULL OR phase <> 'verify')),"
		" (SELECT max(w.iteration_id) FROM wear w JOIN iterations i ON i.id ="
		" w.iteration_id WHERE i.target_id = ?1),"
		" (SELECT id FROM health WHERE target_id = ?1 ORDER BY at DESC, id DESC LIMIT 1),"
		" (SELECT sum(nand_bytes_delta) FROM health WHERE target_id = ?1 AND " WA_ROWS "),"
		" (SELECT sum(host_bytes_delta) FROM health WHERE target_id = ?1 AND " WA_ROWS "),"
		" (SELECT count(*) FROM health WHERE target_id = ?1 AND " WA_ROWS "),"
		" (SELECT at FROM health WHERE target_id = ?1 ORDER BY at DESC, id DESC LIMIT 1)";
	double v[7] = { 0, 0, 0, 0, 0, 0, 0 };
	struct row_map m = {
		.dst = { &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6] },
		.text_col = 7,
		.text = s->health_at,
		.textlen = sizeof(s->health_at),
	};
	int ret;

	s->first_kinds = s->t.nalerts;
	ret = db_metrics_collect(db, s->target_id, &s->t);
	if (!ret)
		ret = one_row(db, sql, s->target_id, &m);
	s->last_done_id = (int64_t)v[0];
	s->last_shown_id = (int64_t)v[1];
	s->wear_iteration = (int64_t)v[2];
	s->health_id = (int64_t)v[3];
	s->nand_sum = v[4];
	s->host_sum = v[5];
	s->wa_rows = (long)v[6];
	return ret;
}

static void clear_last(struct metrics_target *t)
{
	t->last_workload[0] = '\0';
	t->last_bps = t->last_iops = t->last_p99_seconds = t->last_ratio = NAN;
	t->last_end_unix = t->last_seconds = t->last_size_bytes = NAN;
}

/* An iteration that ended: its errors add up; a newer done one is the
 * last iteration shown. */
static int apply_iteration(struct db *db, int64_t id, db_metrics_find_fn find, void *arg)
{
	static const char sql[] = "SELECT " LAST_COLS ", target_id, status = 'done',"
				  " status = 'done' AND (phase IS NULL OR phase <> 'verify'),"
				  " errors, verify_errors FROM iterations i WHERE id = ?";
	struct metrics_target row;
	double base = NAN, x[5] = { NAN, NAN, NAN, NAN, NAN };
	struct row_map m;

	clear_last(&row);
	last_map(&m, &row, &base, x, 5);
	int ret = one_row(db, sql, id, &m);
	struct db_metrics_state *s = ret || !m.found ? NULL : find(arg, id_of(x[0]));
	if (!s)
		return ret;
	add_to(&s->t.io_errors, x[3]);
	add_to(&s->t.verify_errors, x[4]);
	if (x[1] == 1 && id > s->last_done_id)
		s->last_done_id = id;
	if (x[2] == 1 && id > s->last_shown_id) {
		s->last_shown_id = id;
		last_ratio(&row, base);
		util_strlcpy(s->t.last_workload, row.last_workload, sizeof(s->t.last_workload));
		s->t.last_bps = row.last_bps;
		s->t.last_iops = row.last_iops;
		s->t.last_p99_seconds = row.last_p99_seconds;
		s->t.last_ratio = row.last_ratio;
		s->t.last_end_unix = row.last_end_unix;
		s->t.last_seconds = row.last_seconds;
		s->t.last_size_bytes = row.last_size_bytes;
	}
	return 0;
}

/* The effective over-provisioning shown is the one stored last (a wear
 * row's or a health snapshot's): both count the mapped bytes as they are
 * when the row is written (device/wear.h), an action's TRIM or erase
 * included. */
static void op_update(struct db_metrics_state *s, double op)
{
	if (!isnan(op))
		s->t.op_effective = op;
}

/* A wear row of a newer iteration is the one shown. */
static int apply_wear(struct db *db, int64_t iteration_id, db_metrics_find_fn find, void *arg)
{
	static const char sql[] = "SELECT t.host_bytes_total, w.op_effective, w.op_configured,"
				  " i.target_id FROM wear w JOIN iterations i ON i.id ="
				  " w.iteration_id JOIN targets t ON t.id = i.target_id"
				  " WHERE w.iteration_id = ?";
	double v[4] = { NAN, NAN, NAN, NAN };
	struct row_map m = { .dst = { &v[0], &v[1], &v[2], &v[3] }, .text_col = -1 };
	int ret = one_row(db, sql, iteration_id, &m);
	struct db_metrics_state *s = ret || !m.found ? NULL : find(arg, id_of(v[3]));

	if (!s || iteration_id < s->wear_iteration)
		return ret;
	s->wear_iteration = iteration_id;
	s->t.host_written_bytes = v[0];
	s->t.op_configured = v[2];
	op_update(s, v[1]);
	return 0;
}

/* A host idle recovery row's writes were added to the counters: its host
 * bytes and effective over-provisioning are the newest. */
static int apply_hir_wear(struct db *db, int64_t id, db_metrics_find_fn find, void *arg)
{
	static const char sql[] = "SELECT h.host_bytes_total, h.op_effective, h.target_id"
				  " FROM hir_bursts h WHERE h.id = ?";
	double v[3] = { NAN, NAN, NAN };
	struct row_map m = { .dst = { &v[0], &v[1], &v[2] }, .text_col = -1 };
	int ret = one_row(db, sql, id, &m);
	struct db_metrics_state *s = ret || !m.found ? NULL : find(arg, id_of(v[2]));

	if (!s)
		return ret;
	s->t.host_written_bytes = v[0];
	op_update(s, v[1]);
	return 0;
}

/* A health snapshot: the newest (by at, then id) is shown; its deltas add
 * to the write amplification of the whole history. */
static int apply_health(struct db *db, int64_t id, db_metrics_find_fn find, void *arg)
{
	static const char sql[] = "SELECT percentage_used, available_spare, media_errors,"
				  " temperature_c, nand_bytes_written, target_id, nand_bytes_delta,"
				  " host_bytes_delta, op_effective, at FROM health WHERE id = ?";
	char at[40] = "";
	double v[9] = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN };
	struct row_map m = {
		.dst = { &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8] },
		.text_col = 9,
		.text = at,
		.textlen = sizeof(at),
	};
	int ret = one_row(db, sql, id, &m);
	struct db_metrics_state *s = ret || !m.found ? NULL : find(arg, id_of(v[5]));

	if (!s)
		return ret;
	if (!isnan(v[6]) && !isnan(v[7])) {
		s->nand_sum += v[6];
		s->host_sum += v[7];
		s->wa_rows++;
	}
	int cmp = strcmp(at, s->health_at);
	if (cmp > 0 || (cmp == 0 && id > s->health_id)) {
		util_strlcpy(s->health_at, at, sizeof(s->health_at));
		s->health_id = id;
		s->t.life_used_ratio = v[0] * 0.01;
		s->t.spare_ratio = v[1] * 0.01;
		s->t.media_errors = v[2];
		s->t.temperature_celsius = v[3];
		s->t.nand_written_bytes = v[4];
	}
	op_update(s, v[8]);
	wa_update(s);
	return 0;
}

/* One more alert of kind. A kind not seen yet goes where the seed's
 * query (ORDER BY kind, after the kinds the caller put first) puts it. */
static void add_alert(struct db_metrics_state *s, const char *kind)
{
	struct metrics_target *t = &s->t;
	int at = s->first_kinds;

	for (int i = 0; i < t->nalerts; i++)
		if (!strcmp(t->alerts[i].kind, kind)) {
			t->alerts[i].count += 1;
			return;
		}
	if (t->nalerts == METRICS_MAX_KINDS)
		return;
	while (at < t->nalerts && strcmp(t->alerts[at].kind, kind) < 0)
		at++;
	memmove(&t->alerts[at + 1], &t->alerts[at],
		(size_t)(t->nalerts - at) * sizeof(t->alerts[0]));
	util_strlcpy(t->alerts[at].kind, kind, sizeof(t->alerts[0].kind));
	t->alerts[at].count = 1;
	t->nalerts++;
}

/* An event of severity notice or above counts as an alert of its kind. */
static int apply_event(struct db *db, int64_t id, db_metrics_find_fn find, void *arg)
{
	static const char sql[] =
		"SELECT kind, target_id, " COUNTED_SEVERITY " FROM events WHERE id = ?";
	char kind[48] = "";
	double v[2] = { NAN, NAN };
	struct row_map m = {
		.dst = { NULL, &v[0], &v[1] },
		.text_col = 0,
		.text = kind,
		.textlen = sizeof(kind),
	};
	int ret = one_row(db, sql, id, &m);
	struct db_metrics_state *s = ret || !m.found || v[1] != 1 ? NULL : find(arg, id_of(v[0]));

	if (s)
		add_alert(s, kind);
	return ret;
}

int db_metrics_apply(struct db *db, enum db_row_kind kind, int64_t id, db_metrics_find_fn find,
		     void *arg)
{
	switch (kind) {
	case DB_ROW_ITERATION: return apply_iteration(db, id, find, arg);
	case DB_ROW_WEAR: return apply_wear(db, id, find, arg);
	case DB_ROW_HIR_WEAR: return apply_hir_wear(db, id, find, arg);
	case DB_ROW_HEALTH: return apply_health(db, id, find, arg);
	case DB_ROW_EVENT: return apply_event(db, id, find, arg);
	}
	return -EINVAL;
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
