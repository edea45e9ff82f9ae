/* db_samples: samples as small integer rows (schema 16, db_schema.c): the
 * move of schema 15's rows into them, in batches a kill can interrupt, and
 * the rollup of old iterations' samples into per-minute rows. Knows no
 * configuration: the caller passes the retention and batch sizes. */
#include "db/db_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "base/log.h"

int64_t db_sample_ns(double value, double ns_per_unit)
{
	double ns = value * ns_per_unit;

	if (!isfinite(ns) || ns < 0 || ns >= 9.2e18)
		return -1;
	return llround(ns);
}

/* Runs sql with up to two integer parameters (a, b; bound when the SQL
 * has them) to its first row; *out gets column 0. Returns 0, -ENOENT (no
 * row, or NULL) or -errno. */
static int one_i64(struct db *db, const char *sql, int64_t a, int64_t b, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
	int n = rc == SQLITE_OK ? sqlite3_bind_parameter_count(st) : 0;

	if (rc == SQLITE_OK && n >= 1)
		rc = sqlite3_bind_int64(st, 1, a);
	if (rc == SQLITE_OK && n >= 2)
		rc = sqlite3_bind_int64(st, 2, b);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	int ret = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : db_map_rc(rc, 0);
	if (!ret && sqlite3_column_type(st, 0) == SQLITE_NULL)
		ret = -ENOENT;
	else if (!ret)
		*out = sqlite3_column_int64(st, 0);
	if (ret && ret != -ENOENT)
		log_msg(LOG_ERR, "database %s: %s", db->path, sqlite3_errmsg(db->conn));
	sqlite3_finalize(st);
	return ret;
}

/* Runs sql (one statement) with the integer parameters a and b. Returns 0
 * or -errno. */
static int run_i64(struct db *db, const char *sql, int64_t a, int64_t b)
{
	int64_t unused;
	int ret = one_i64(db, sql, a, b, &unused);

	return ret == -ENOENT ? 0 : ret;
}

/* Runs a script of several statements. Returns 0 or -errno. */
static int run_script(struct db *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db->conn, sql, NULL, NULL, &msg);

	if (rc == SQLITE_OK)
		return 0;
	log_msg(LOG_ERR, "database %s: %s", db->path, msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	return db_map_rc(rc, 0);
}

/* The old rows of iterations lo..hi into sample_data, in the caller's
 * transaction. Returns 0 or -errno. */
static int move_rows(struct db *db, int64_t lo, int64_t hi)
{
	int ret = run_i64(db, db_schema_samples_move, lo, hi);

	if (!ret)
		ret = run_i64(db, "DELETE FROM samples_v15 WHERE iteration_id BETWEEN ?1 AND ?2",
			      lo, hi);
	return ret;
}

/* One batch of the move, with db entered: 1 when more remain, 0 after the
 * last (the old table dropped), -errno. */
static int migrate_batch(struct db *db, int batch, struct db_samples_progress *p)
{
	int64_t legacy = 0, lo = 0, hi = 0, last = 0, n = 0;
	int ret = one_i64(db,
			  "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
			  " AND name = 'samples_v15'",
			  0, 0, &legacy);

	if (ret || !legacy)
		return ret;
	ret = db_tx_begin(db);
	if (!ret)
		ret = one_i64(db, "SELECT min(iteration_id) FROM samples_v15", 0, 0, &lo);
	if (ret == -ENOENT) { /* all moved: the view reads sample_data alone */
		ret = run_script(db, db_schema_samples_done);
		return db_tx_end(db, ret);
	}
	if (!ret)
		ret = one_i64(db, "SELECT max(iteration_id) FROM samples_v15", 0, 0, &last);
	if (!ret)
		ret = one_i64(db,
			      "SELECT max(id) FROM (SELECT id FROM iterations WHERE id >= ?1"
			      " ORDER BY id LIMIT ?2)",
			      lo, batch, &hi);
	if (ret == -ENOENT) /* samples of no iteration: FOREIGN KEY was off */
		hi = last, ret = 0;
	if (!ret)
		ret = move_rows(db, lo, hi);
	if (!ret)
		ret = one_i64(db, "SELECT count(*) FROM iterations WHERE id <= ?1", last, 0, &n);
	p->total = (long)n;
	if (!ret)
		ret = one_i64(db, "SELECT count(*) FROM iterations WHERE id <= ?1", hi, 0, &n);
	p->done = (long)n < p->total ? (long)n : p->total;
	ret = db_tx_end(db, ret);
	return ret ? ret : 1;
}

int db_samples_migrate(struct db *db, int batch, struct db_samples_progress *p)
{
	int ret = db_enter(db);

	p->done = p->total = 0;
	if (ret)
		return ret;
	ret = migrate_batch(db, batch > 0 ? batch : 1, p);
	db_leave(db);
	return ret;
}

/* The iteration after *cursor that still has samples, and whether it ended
 * more than retention seconds ago. Returns 0, -ENOENT (none left) or
 * -errno. */
static int next_with_samples(struct db *db, double retention, int64_t *cursor, int *old)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(
		db->conn,
		"SELECT s.id, i.status <> 'running' AND i.ended_at IS NOT NULL AND i.ended_at <"
		" strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('-%.3f seconds', ?2))"
		" FROM (SELECT min(iteration_id) AS id FROM sample_data WHERE iteration_id > ?1) s"
		" LEFT JOIN iterations i ON i.id = s.id",
		-1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, *cursor);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_double(st, 2, retention);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	int ret = rc == SQLITE_ROW ? 0 : db_map_rc(rc, 0);
	if (!ret && sqlite3_column_type(st, 0) == SQLITE_NULL)
		ret = -ENOENT;
	if (!ret) {
		*cursor = sqlite3_column_int64(st, 0);
		*old = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	return ret;
}

/* Iteration id's samples into minutes, in the caller's transaction.
 * Returns 0 or -errno. */
static int fold_iteration(struct db *db, int64_t id)
{
	int ret = run_i64(db, db_schema_samples_fold, id, 0);

	if (!ret)
		ret = run_i64(db, "DELETE FROM sample_data WHERE iteration_id = ?1", id, 0);
	if (!ret)
		ret = db_series_fold(db, id);
	return ret;
}

/* Iterations visited per call at most, old enough or not: bounds the time
 * a call holds the connection while the window's iterations are passed;
 * and iterations rolled up per transaction at most. */
#define ROLLUP_VISIT 256
#define ROLLUP_MAX 64

int db_samples_rollup(struct db *db, double retention, int batch, int64_t *cursor)
{
	int64_t ids[ROLLUP_MAX];
	int n = 0, old = 0, ret = db_enter(db);

	if (ret)
		return ret;
	batch = batch < 1 ? 1 : batch > ROLLUP_MAX ? ROLLUP_MAX : batch;
	/* found by reads; the write lock is taken only when there is work */
	for (int seen = 0; !ret && n < batch && seen < ROLLUP_VISIT; seen++) {
		ret = next_with_samples(db, retention, cursor, &old);
		if (ret == -ENOENT) {
			*cursor = 0;
			ret = 0;
			break;
		}
		if (!ret && old)
			ids[n++] = *cursor;
	}
	if (!ret && n) {
		ret = db_tx_begin(db);
		for (int i = 0; !ret && i < n; i++)
			ret = fold_iteration(db, ids[i]);
		ret = db_tx_end(db, ret);
	}
	db_leave(db);
	return ret ? ret : n;
}
