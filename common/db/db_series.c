/* db_series: the drive's readings during an iteration (device_series,
 * schema 25): stored with the iteration's results, read back for the cause
 * of an alert, and folded to one row a minute when its samples are. */
#include "db/db_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* device_series.phase: 0 fill, 1 measure, as sample_data's. */
static int64_t series_phase(enum db_phase p)
{
	return p == DB_PHASE_FILL ? 0 : 1;
}

int db_series_store(struct db *db, int64_t id, const struct db_dev_point *v, size_t n)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		struct db_bind b;
		db_bind_start(db, ST_SERIES, &b);
		db_bind_i64(&b, id);
		db_bind_i64(&b, series_phase(v[i].phase));
		db_bind_i64(&b, v[i].t_ms);
		for (int f = 0; f < DB_SERIES__COUNT; f++)
			if (v[i].has[f])
				db_bind_i64(&b, v[i].val[f]);
			else
				db_bind_null(&b);
		ret = db_bind_run(&b, "store the drive's readings");
	}
	return ret;
}

struct series_read {
	struct db_dev_point *v;
	size_t n, cap;
};

static int keep_point(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct series_read *r = arg;

	if (n != 2 + DB_SERIES__COUNT)
		return -EINVAL;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct db_dev_point *p = realloc(r->v, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->v = p;
		r->cap = cap;
	}
	struct db_dev_point *p = &r->v[r->n++];
	memset(p, 0, sizeof(*p));
	p->phase = v[0].i ? DB_PHASE_MEASURE : DB_PHASE_FILL;
	p->t_ms = v[1].i;
	for (int f = 0; f < DB_SERIES__COUNT; f++) {
		p->has[f] = v[2 + f].type != DB_NULL;
		p->val[f] = v[2 + f].i;
	}
	return 0;
}

int db_series_read(struct db *db, int64_t iteration_id, struct db_dev_point **out, size_t *n)
{
	static const char sql[] = "SELECT phase, t_ms, host_bytes, media_bytes, temp_c,"
				  " throttle_ms, host_stall_ms FROM device_series"
				  " WHERE iteration_id = ? ORDER BY phase, t_ms";
	struct db_value p[] = { { .type = DB_INT, .i = iteration_id } };
	struct series_read r = { 0 };
	char err[256];
	int ret = db_query(db, sql, p, 1, keep_point, &r, err, sizeof(err));

	if (ret) {
		free(r.v);
		return ret < 0 ? ret : -EIO;
	}
	*out = r.v;
	*n = r.n;
	return 0;
}

/* clang-format off */
/* The highest temperature of each minute of a phase goes to the minute's
 * last reading (the first reading of a phase, t_ms 0, keeps its own)... */
static const char fold_temp[] =
	"UPDATE device_series SET temp_c = (SELECT max(s.temp_c) FROM device_series s"
	"  WHERE s.iteration_id = ?1 AND s.phase = device_series.phase AND s.t_ms <> 0"
	"  AND max(s.t_ms - 1, 0) / 60000 = max(device_series.t_ms - 1, 0) / 60000)"
	" WHERE iteration_id = ?1 AND t_ms <> 0";
/* ... and only that reading stays: the counters run from the iteration's
 * first reading, so any two kept readings still give what happened between
 * them exactly. */
static const char fold_drop[] =
	"DELETE FROM device_series WHERE iteration_id = ?1 AND t_ms <> 0"
	" AND (phase, t_ms) NOT IN (SELECT phase, max(t_ms) FROM device_series"
	"  WHERE iteration_id = ?1 AND t_ms <> 0 GROUP BY phase, max(t_ms - 1, 0) / 60000)";
/* clang-format on */

int db_series_fold(struct db *db, int64_t id)
{
	const char *const sql[] = { fold_temp, fold_drop };
	int ret = 0;

	for (size_t i = 0; !ret && i < ARRAY_SIZE(sql); i++) {
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(db->conn, sql[i], -1, &st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(st, 1, id);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		ret = rc == SQLITE_DONE ? 0 : db_map_rc(rc, 0);
		sqlite3_finalize(st);
	}
	return ret;
}
