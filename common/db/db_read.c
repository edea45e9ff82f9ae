/* db_read: typed readers built on db_query (db_sql.c): alert baselines,
 * the latest events of a target, the alerts raised. Reads only. */
#include "db/db_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

/* ---- alert baselines ---------------------------------------------------- */

struct first_row {
	int found;
	double r;
	int64_t i;
	char *s;
	size_t len;
};

/* Keeps the first row's two columns (REAL and INTEGER, or TEXT). */
static int keep_first(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct first_row *f = arg;

	f->found = 1;
	if (f->s && n >= 1 && v[0].type == DB_TEXT)
		util_strlcpy(f->s, v[0].s, f->len);
	else if (n >= 2) {
		f->r = v[0].r;
		f->i = v[1].i;
	}
	return 1;
}

/* Runs sql and keeps its first row in f. Returns 0, -ENOENT when no row
 * came, or the query's error (logged). */
static int first_row_of(struct db *db, const char *sql, const struct db_value *p, int np,
			struct first_row *f)
{
	char err[256];
	int ret = db_query(db, sql, p, np, keep_first, f, err, sizeof(err));

	if (ret < 0) {
		log_msg(LOG_ERR, "%s", err);
		return ret;
	}
	return f->found ? 0 : -ENOENT;
}

/* The baseline query for a rule. All read the key's rows through
 * iterations_baseline (common/db/db_index.c), whose entries end in the row
 * id: first and previous stop at the first row that qualifies (a cycle's
 * iterations have higher ids than an earlier cycle's, so id order is cycle
 * order); best sorts only the key's rows, one per cycle, never all the
 * target's. */
#define BASELINE_SQL                                                                               \
	"SELECT i.mibps_avg, i.id FROM iterations i"                                               \
	" JOIN cycles c ON c.id = i.cycle_id"                                                      \
	" JOIN targets t ON t.id = i.target_id"                                                    \
	" WHERE i.target_id = ? AND i.size_bytes = ? AND i.workload = ?"                           \
	" AND i.block_size = ? AND i.id < ? AND i.status = 'done'"                                 \
	" AND i.mibps_avg > 0 AND c.number >= t.campaign_first_cycle"

static const char *baseline_sql(enum cfg_baseline rule)
{
	switch (rule) {
	case BASELINE_BEST: return BASELINE_SQL " ORDER BY -i.mibps_avg, i.id LIMIT 1";
	case BASELINE_PREVIOUS: return BASELINE_SQL " ORDER BY i.id DESC LIMIT 1";
	case BASELINE_FIRST:
	case BASELINE__COUNT:
	default: return BASELINE_SQL " ORDER BY i.id LIMIT 1";
	}
}

int db_baseline(struct db *db, const struct db_baseline_key *k, double *mibps,
		int64_t *iteration_id)
{
	const char *sql = baseline_sql(k->rule);
	struct db_value p[] = {
		{ .type = DB_INT, .i = k->target_id },
		{ .type = DB_INT, .i = (int64_t)k->size_bytes },
		{ .type = DB_TEXT, .s = k->workload },
		{ .type = DB_INT, .i = k->block_size },
		{ .type = DB_INT, .i = k->before_id },
	};
	struct first_row f = { 0 };
	int ret = first_row_of(db, sql, p, (int)ARRAY_SIZE(p), &f);

	if (ret)
		return ret;
	*mibps = f.r;
	if (iteration_id)
		*iteration_id = f.i;
	return 0;
}

int db_rate_latest(struct db *db, const struct db_rate_key *k, double *mibps, long *cycle)
{
	/* the measured phase: the iterations_baseline index's key */
	static const char measured[] =
		"SELECT i.mibps_avg, c.number FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
		" WHERE i.target_id = ? AND i.size_bytes = ? AND i.workload = ?"
		" AND i.block_size = ? AND i.status = 'done' AND i.mibps_avg > 0"
		" AND coalesce(i.phase, 'measure') = 'measure' ORDER BY i.id DESC LIMIT 1";
	static const char fill[] =
		"SELECT i.fill_mibps, c.number FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
		" WHERE i.target_id = ? AND i.size_bytes = ? AND i.fill_mibps > 0"
		" ORDER BY i.id DESC LIMIT 1";
	struct db_value p[] = {
		{ .type = DB_INT, .i = k->target_id },
		{ .type = DB_INT, .i = (int64_t)k->size_bytes },
		{ .type = DB_TEXT, .s = k->workload },
		{ .type = DB_INT, .i = k->block_size },
	};
	struct first_row f = { 0 };
	int ret = first_row_of(db, k->fill ? fill : measured, p, k->fill ? 2 : 4, &f);

	if (ret)
		return ret;
	*mibps = f.r;
	*cycle = (long)f.i;
	return 0;
}

int db_iteration_device_wa(struct db *db, int64_t id, double *wa)
{
	static const char sql[] = "SELECT device_wa, id FROM iterations"
				  " WHERE id = ? AND device_wa IS NOT NULL";
	struct db_value p[] = { { .type = DB_INT, .i = id } };
	struct first_row f = { 0 };
	int ret = first_row_of(db, sql, p, (int)ARRAY_SIZE(p), &f);

	if (!ret)
		*wa = f.r;
	return ret;
}

int db_event_latest(struct db *db, int64_t target_id, const char *kind_a, const char *kind_b,
		    char *kind, size_t len)
{
	static const char sql[] = "SELECT kind FROM events WHERE target_id = ? AND kind IN (?, ?)"
				  " ORDER BY id DESC LIMIT 1";
	struct db_value p[] = {
		{ .type = DB_INT, .i = target_id },
		{ .type = DB_TEXT, .s = kind_a },
		{ .type = DB_TEXT, .s = kind_b },
	};
	struct first_row f = { .s = kind, .len = len };

	return first_row_of(db, sql, p, (int)ARRAY_SIZE(p), &f);
}

struct raised_arg {
	db_raised_fn fn;
	void *arg;
};

static int each_raised(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct raised_arg *r = arg;

	if (v[0].type != DB_TEXT || v[1].type != DB_TEXT)
		return 0;
	return r->fn(r->arg, v[0].s, v[1].s, (long)v[2].i);
}

int db_alerts_raised(struct db *db, int64_t target_id, db_raised_fn fn, void *arg)
{
	static const char sql[] = "SELECT e.kind, e.severity, c.number FROM events e"
				  " JOIN cycles c ON c.id = e.cycle_id WHERE e.target_id = ?1"
				  " AND e.message_id IS NOT NULL AND c.number ="
				  " (SELECT max(number) FROM cycles WHERE target_id = ?1)";
	struct db_value p = { .type = DB_INT, .i = target_id };
	struct raised_arg r = { fn, arg };
	char err[256];
	int ret = db_query(db, sql, &p, 1, each_raised, &r, err, sizeof(err));

	if (ret < 0)
		log_msg(LOG_WARNING, "%s", err);
	return ret < 0 ? ret : 0;
}

/* ---- the rows a resumed size has done ----------------------------------- */

struct done_rows {
	struct db_done_row *v;
	size_t n, cap;
};

static int keep_done(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct done_rows *d = arg;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct db_done_row *nv = realloc(d->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		d->v = nv;
		d->cap = cap;
	}
	struct db_done_row *r = &d->v[d->n++];
	memset(r, 0, sizeof(*r));
	if (v[0].type == DB_TEXT)
		util_strlcpy(r->phase, v[0].s, sizeof(r->phase));
	if (v[1].type == DB_TEXT)
		util_strlcpy(r->workload, v[1].s, sizeof(r->workload));
	r->repeat_index = v[2].type == DB_INT ? (int)v[2].i : 0;
	r->round_index = v[3].type == DB_INT ? (int)v[3].i : 0;
	r->mibps_avg = v[4].type == DB_NULL ? -1 : v[4].r;
	r->iops_avg = v[5].type == DB_NULL ? -1 : v[5].r;
	return 0;
}

int db_size_rows_done(struct db *db, int64_t cycle_id, int size_index, struct db_done_row **rows,
		      size_t *n)
{
	/* through the index of UNIQUE (cycle_id, number): in the order they ran */
	static const char sql[] =
		"SELECT phase, workload, repeat_index, round_index, mibps_avg, iops_avg"
		" FROM iterations WHERE cycle_id = ? AND size_index = ? AND status = 'done'"
		" ORDER BY number";
	struct db_value p[] = {
		{ .type = DB_INT, .i = cycle_id },
		{ .type = DB_INT, .i = size_index },
	};
	struct done_rows d = { 0 };
	char err[256];
	int ret = db_query(db, sql, p, (int)ARRAY_SIZE(p), keep_done, &d, err, sizeof(err));

	if (ret < 0) {
		log_msg(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
		free(d.v);
		return ret;
	}
	*rows = d.v;
	*n = d.n;
	return 0;
}
