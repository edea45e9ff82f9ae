/* db_wear: the wear tables: a target's mapped extents and host counters
 * (mapped_extents, targets.host_bytes_*), and the wear row of each
 * iteration accounted for. */
#include "db/db_int.h"

#include <errno.h>
#include <string.h>

#include "config/names.h"
#include "base/log.h"

struct extents_arg {
	db_extent_fn fn;
	void *arg;
};

static int each_extent(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct extents_arg *e = arg;
	return e->fn(e->arg, (uint64_t)v[0].i, (uint64_t)v[1].i);
}

static int counters(void *arg, int n, const struct db_value *v, const char *const *names)
{
	uint64_t *out = arg;
	out[0] = (uint64_t)v[0].i;
	out[1] = (uint64_t)v[1].i;
	return 0;
}

int db_wear_load(struct db *db, int64_t target_id, db_extent_fn fn, void *arg, uint64_t *host_total,
		 uint64_t *host_since_erase)
{
	struct db_value p = { .type = DB_INT, .i = target_id };
	struct extents_arg e = { fn, arg };
	uint64_t c[2] = { 0, 0 };
	char err[512];
	int ret = db_query(db,
			   "SELECT start_byte, end_byte FROM mapped_extents WHERE target_id = ?"
			   " ORDER BY start_byte",
			   &p, 1, each_extent, &e, err, sizeof(err));

	if (!ret)
		ret = db_query(db,
			       "SELECT host_bytes_total, host_bytes_since_erase FROM targets"
			       " WHERE id = ?",
			       &p, 1, counters, c, err, sizeof(err));
	if (ret)
		log_msg(LOG_ERR, "loading wear state: %s", err);
	*host_total = c[0];
	*host_since_erase = c[1];
	return ret;
}

struct pending_arg {
	db_pending_fn fn;
	void *arg;
};

/* The stored workload name as an enum cfg_workload; -1 for the "fill" and
 * "verify" rows (and anything else). */
static int workload_of(const char *name)
{
	for (int w = 0; name && w < WL__COUNT; w++)
		if (!strcmp(cfg_workload_name((enum cfg_workload)w), name))
			return w;
	return -1;
}

static int each_pending(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct pending_arg *p = arg;
	return p->fn(p->arg, v[0].i, (uint64_t)v[1].i, (uint64_t)v[2].i,
		     workload_of(v[3].type == DB_TEXT ? v[3].s : NULL));
}

int db_wear_pending(struct db *db, int64_t cycle_id, int size_index, db_pending_fn fn, void *arg)
{
	struct db_value q[] = { { .type = DB_INT, .i = cycle_id },
				{ .type = DB_INT, .i = size_index } };
	struct pending_arg p = { fn, arg };
	char err[512];
	int ret = db_query(db,
			   "SELECT i.id, coalesce(i.fill_bytes, 0), coalesce(i.bytes, 0),"
			   " i.workload FROM iterations i LEFT JOIN wear x ON x.iteration_id = i.id"
			   " WHERE i.cycle_id = ? AND i.size_index = ? AND x.iteration_id IS NULL"
			   " AND i.status != 'running' ORDER BY i.id",
			   q, 2, each_pending, &p, err, sizeof(err));
	if (ret < 0)
		log_msg(LOG_ERR, "reading iterations for wear: %s", err);
	return ret;
}

struct pending_hir_arg {
	db_pending_hir_fn fn;
	void *arg;
};

static int each_pending_hir(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct pending_hir_arg *p = arg;
	return p->fn(p->arg, v[0].i, (uint64_t)v[1].i);
}

int db_wear_pending_hir(struct db *db, int64_t cycle_id, db_pending_hir_fn fn, void *arg)
{
	struct db_value q = { .type = DB_INT, .i = cycle_id };
	struct pending_hir_arg p = { fn, arg };
	char err[512];
	int ret = db_query(db,
			   "SELECT id, bytes FROM hir_bursts WHERE cycle_id = ?"
			   " AND host_bytes_total IS NULL ORDER BY id",
			   &q, 1, each_pending_hir, &p, err, sizeof(err));
	if (ret < 0)
		log_msg(LOG_ERR, "reading host idle recovery rows for wear: %s", err);
	return ret < 0 ? ret : 0;
}

/* A host idle recovery row's wear figures (hir_bursts, schema 23). */
static int hir_wear(struct db *db, const struct db_wear_row *r)
{
	struct db_bind b;

	db_bind_start(db, ST_HIR_WEAR, &b);
	db_bind_u64(&b, r->mapped_bytes);
	db_bind_dbl(&b, r->op_effective);
	db_bind_u64(&b, r->host_bytes_since_erase);
	db_bind_u64(&b, r->host_bytes_total);
	db_bind_i64(&b, r->hir_id);
	return db_bind_run(&b, "store the wear of a host idle recovery row");
}

static int wear_row(struct db *db, const struct db_wear_row *r)
{
	struct db_bind b;

	if (r->hir_id)
		return hir_wear(db, r);

	db_bind_start(db, ST_WEAR_INSERT, &b);
	db_bind_i64(&b, r->iteration_id);
	db_bind_u64(&b, r->capacity_bytes);
	db_bind_u64(&b, r->region_bytes);
	db_bind_dbl(&b, r->op_configured);
	db_bind_u64(&b, r->mapped_bytes);
	db_bind_dbl(&b, r->op_effective);
	db_bind_u64(&b, r->host_bytes_written);
	db_bind_u64(&b, r->host_bytes_since_erase);
	db_bind_u64(&b, r->host_bytes_total);
	return db_bind_run(&b, "store wear of an iteration");
}

/* The iteration's written ranges are in mapped_extents now. */
static int written_forget(struct db *db, int64_t iteration_id)
{
	struct db_bind b;

	db_bind_start(db, ST_WRITTEN_DELETE, &b);
	db_bind_i64(&b, iteration_id);
	return db_bind_run(&b, "forget the written extents of an iteration");
}

int db_wear_written(struct db *db, int64_t iteration_id, db_extent_fn fn, void *arg)
{
	struct db_value p = { .type = DB_INT, .i = iteration_id };
	struct extents_arg e = { fn, arg };
	char err[512];
	int ret = db_query(db,
			   "SELECT start_byte, end_byte FROM written_extents WHERE iteration_id = ?"
			   " ORDER BY start_byte",
			   &p, 1, each_extent, &e, err, sizeof(err));
	if (ret < 0)
		log_msg(LOG_ERR, "reading the written extents of iteration %lld: %s",
			(long long)iteration_id, err);
	return ret < 0 ? ret : 0;
}

int db_wear_put_state(struct db *db, const struct db_wear_state *s)
{
	struct db_bind b;
	int ret;

	db_bind_start(db, ST_EXTENTS_DELETE, &b);
	db_bind_i64(&b, s->target_id);
	ret = db_bind_run(&b, "replace mapped extents");
	for (size_t i = 0; !ret && i < s->next; i++) {
		db_bind_start(db, ST_EXTENT_INSERT, &b);
		db_bind_i64(&b, s->target_id);
		db_bind_u64(&b, s->ext[i][0]);
		db_bind_u64(&b, s->ext[i][1]);
		ret = db_bind_run(&b, "store a mapped extent");
	}
	if (ret)
		return ret;
	db_bind_start(db, ST_WEAR_COUNTERS, &b);
	db_bind_u64(&b, s->host_total);
	db_bind_u64(&b, s->host_since_erase);
	db_bind_i64(&b, s->target_id);
	return db_bind_run(&b, "store host byte counters");
}

int db_wear_store(struct db *db, const struct db_wear_state *s, const struct db_wear_row *rows,
		  size_t nrows, char *err, size_t errlen)
{
	int ret = db_enter_msg(db, err, errlen);

	if (ret)
		return ret;
	ret = db_tx_begin(db);
	if (ret)
		goto out;
	for (size_t i = 0; !ret && i < nrows; i++)
		ret = wear_row(db, &rows[i]);
	for (size_t i = 0; !ret && i < nrows; i++)
		if (!rows[i].hir_id)
			ret = written_forget(db, rows[i].iteration_id);
	if (!ret)
		ret = db_wear_put_state(db, s);
	ret = db_tx_end(db, ret);
out:
	if (ret)
		db_failure(db, ret, err, errlen);
	db_leave(db);
	for (size_t i = 0; !ret && i < nrows; i++)
		db_row_written(db, rows[i].hir_id ? DB_ROW_HIR_WEAR : DB_ROW_WEAR,
			       rows[i].hir_id ? rows[i].hir_id : rows[i].iteration_id);
	return ret;
}
