/* db_sql: the generic doors, for the CLI's reads and for tests: db_query
 * runs one read-only statement of the caller's SQL, db_write the caller's
 * writing statements in one transaction; both check the bind count. */
#include "db/db_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
