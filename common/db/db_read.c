/* db_read: generic reading (db_query, for the CLI) and writing (db_write),
 * both bind-count checked, and the typed readers built on them: alert
 * baselines, the latest events of a target; and the progress row. */
#include "db/db_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

/* ---- reading (for tools) ------------------------------------------------ */

static int bind_value(sqlite3_stmt *st, int i, const struct db_value *v)
{
	switch (v->type) {
	case DB_INT: return sqlite3_bind_int64(st, i, v->i);
	case DB_REAL: return sqlite3_bind_double(st, i, v->r);
	case DB_TEXT:
		return v->s ? sqlite3_bind_text(st, i, v->s, -1, SQLITE_STATIC)
			    : sqlite3_bind_null(st, i);
	case DB_NULL: break;
	}
	return sqlite3_bind_null(st, i);
}

/* Numbers fill both i and r, so a caller need not know how SQLite stored
 * a figure (an integral REAL may come back as INTEGER after arithmetic). */
static void column_value(sqlite3_stmt *st, int col, struct db_value *v)
{
	memset(v, 0, sizeof(*v));
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER:
		v->type = DB_INT;
		v->i = sqlite3_column_int64(st, col);
		v->r = (double)v->i;
		break;
	case SQLITE_FLOAT:
		v->type = DB_REAL;
		v->r = sqlite3_column_double(st, col);
		v->i = (int64_t)v->r;
		break;
	case SQLITE_NULL: v->type = DB_NULL; break;
	default:
		v->type = DB_TEXT;
		v->s = (const char *)sqlite3_column_text(st, col);
		break;
	}
}

/* Steps st to its end, handing each row to fn. Returns 0, fn's first
 * nonzero value, or a SQLite error code turned into -errno by the caller
 * (*rc_out keeps it). */
static int step_rows(sqlite3_stmt *st, db_row_fn fn, void *arg, int *rc_out)
{
	int n = sqlite3_column_count(st), rc = SQLITE_DONE, ret = 0;
	struct db_value *vals = calloc((size_t)n + 1, sizeof(*vals));
	const char **names = calloc((size_t)n + 1, sizeof(*names));

	if (!vals || !names) {
		ret = -ENOMEM;
		goto out;
	}
	for (int c = 0; c < n; c++)
		names[c] = sqlite3_column_name(st, c);
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < n; c++)
			column_value(st, c, &vals[c]);
		ret = fn ? fn(arg, n, vals, names) : 0;
	}
	if (ret == 0)
		*rc_out = rc;
out:
	free(vals);
	free(names);
	return ret;
}

int db_query(struct db *db, const char *sql, const struct db_value *params, int nparams,
	     db_row_fn fn, void *arg, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	db_seterr(err, errlen, "%s", "");
	if (!db) {
		db_seterr(err, errlen, "no database open");
		return -EINVAL;
	}
	pthread_mutex_lock(&db->lock);
	rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
	if (rc == SQLITE_OK && st && !sqlite3_stmt_readonly(st)) {
		db_seterr(err, errlen, "database %s: refusing a statement that writes", db->path);
		ret = -EPERM;
		goto out;
	}
	if (rc == SQLITE_OK && st && db_bind_count_check(st, nparams, "query")) {
		db_seterr(err, errlen,
			  "database %s: %d values for a statement with %d placeholders", db->path,
			  nparams, sqlite3_bind_parameter_count(st));
		ret = -EINVAL;
		goto out;
	}
	for (int i = 0; rc == SQLITE_OK && i < nparams; i++)
		rc = bind_value(st, i + 1, &params[i]);
	if (rc == SQLITE_OK && st)
		ret = step_rows(st, fn, arg, &rc);
	if (ret == -ENOMEM)
		db_seterr(err, errlen, "database %s: out of memory", db->path);
	if (ret == 0 && rc != SQLITE_OK && rc != SQLITE_DONE) {
		db_seterr(err, errlen, "database %s: %s", db->path, sqlite3_errmsg(db->conn));
		ret = db_map_rc(rc, sqlite3_system_errno(db->conn));
		if (ret == 0)
			ret = -EIO;
	}
out:
	if (st)
		db->vm_steps += (uint64_t)sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->lock);
	return ret;
}

uint64_t db_query_steps(struct db *db)
{
	return db ? db->vm_steps : 0;
}

int db_write(struct db *db, const char *const *sqls, const struct db_value *const *params,
	     const int *nparams, int nstmts, char *err, size_t errlen)
{
	int ret;

	ret = db_enter_msg(db, err, errlen);
	if (ret)
		return ret;
	ret = db_tx_begin(db);
	if (ret)
		db_seterr(err, errlen, "database %s: %s", db->path, db->last_err);
	for (int k = 0; ret == 0 && k < nstmts; k++) {
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(db->conn, sqls[k], -1, &st, NULL);
		if (rc == SQLITE_OK && st && db_bind_count_check(st, nparams[k], "write")) {
			db_seterr(err, errlen,
				  "database %s: %d values for a statement with %d"
				  " placeholders",
				  db->path, nparams[k], sqlite3_bind_parameter_count(st));
			ret = -EINVAL;
		}
		for (int i = 0; rc == SQLITE_OK && i < nparams[k]; i++)
			rc = bind_value(st, i + 1, &params[k][i]);
		while (!ret && rc == SQLITE_OK && st && (rc = sqlite3_step(st)) == SQLITE_ROW)
			rc = SQLITE_OK;
		if (!ret && rc != SQLITE_DONE && rc != SQLITE_OK) {
			db_seterr(err, errlen, "database %s: %s", db->path,
				  sqlite3_errmsg(db->conn));
			ret = db_map_rc(rc, sqlite3_system_errno(db->conn));
			if (ret == 0)
				ret = -EIO;
		}
		sqlite3_finalize(st);
	}
	if (ret == 0) {
		ret = db_tx_end(db, 0);
		if (ret)
			db_seterr(err, errlen, "database %s: %s", db->path, db->last_err);
	} else {
		db_tx_end(db, ret);
	}
	db_leave(db);
	return ret;
}

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

int db_baseline(struct db *db, const struct db_baseline_key *k, double *mibps,
		int64_t *iteration_id)
{
	static const char sql[] =
		"SELECT i.mibps_avg, i.id FROM iterations i"
		" JOIN cycles c ON c.id = i.cycle_id"
		" JOIN targets t ON t.id = i.target_id"
		" WHERE i.target_id = ? AND i.size_bytes = ? AND i.workload = ?"
		" AND i.block_size = ? AND i.id < ? AND i.status = 'done'"
		" AND i.mibps_avg > 0 AND c.number >= t.campaign_first_cycle"
		" ORDER BY CASE ? WHEN 'best' THEN -i.mibps_avg WHEN 'previous' THEN -i.id"
		" ELSE 0 END, c.number, i.id LIMIT 1";
	struct db_value p[] = {
		{ .type = DB_INT, .i = k->target_id },
		{ .type = DB_INT, .i = (int64_t)k->size_bytes },
		{ .type = DB_TEXT, .s = k->workload },
		{ .type = DB_INT, .i = k->block_size },
		{ .type = DB_INT, .i = k->before_id },
		{ .type = DB_TEXT, .s = cfg_baseline_name(k->rule) },
	};
	struct first_row f = { 0 };
	char err[256];
	int ret = db_query(db, sql, p, (int)ARRAY_SIZE(p), keep_first, &f, err, sizeof(err));

	if (ret < 0) {
		log_msg(LOG_ERR, "%s", err);
		return ret;
	}
	if (!f.found)
		return -ENOENT;
	*mibps = f.r;
	if (iteration_id)
		*iteration_id = f.i;
	return 0;
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
	char err[256];
	int ret = db_query(db, sql, p, (int)ARRAY_SIZE(p), keep_first, &f, err, sizeof(err));

	if (ret < 0) {
		log_msg(LOG_ERR, "%s", err);
		return ret;
	}
	return f.found ? 0 : -ENOENT;
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

int db_progress(struct db *db, int64_t target_id, const struct db_progress *p)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db->last_err[0] = '\0';
	db_bind_start(db, ST_PROGRESS, &b);
	db_bind_i64(&b, target_id);
	db_bind_i64(&b, p->cycle);
	db_bind_i64(&b, p->iteration);
	db_bind_u64(&b, p->size_bytes);
	db_bind_text(&b, p->phase);
	db_bind_fig(&b, p->mibps);
	db_bind_u64(&b, p->phase_bytes);
	if (p->nsizes > 0)
		db_bind_i64(&b, p->nsizes);
	else
		db_bind_null(&b);
	db_bind_i64(&b, p->cycles);
	db_bind_fig(&b, p->phase_seconds);
	if (p->duration > 0)
		db_bind_dbl(&b, p->duration);
	else
		db_bind_null(&b);
	ret = db_bind_run(&b, "store progress");
	if (ret) {
		char err[512];
		db_failure(db, ret, err, sizeof(err));
		log_msg(LOG_ERR, "storing progress: %s", err);
	}
	db_leave(db);
	return ret;
}
