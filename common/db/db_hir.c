/* db_hir: the rows of the host idle recovery protocol (table hir_bursts,
 * schema 22; its purges, hir_purges, schema 27; daemon/hir.c runs it) and
 * how far a cycle's protocol got, for a restart. */
#include "base/util.h"
#include "db/db_int.h"

#include <errno.h>

const char *db_hir_kind_name(enum db_hir_kind k)
{
	switch (k) {
	case DB_HIR_PRECONDITION: return "precondition";
	case DB_HIR_BURST: return "burst";
	case DB_HIR_BASELINE: return "baseline";
	}
	return "unknown";
}

/* A device figure of r, or NULL. */
static void bind_device(struct db_bind *b, const struct db_device_evidence *d,
			enum db_device_field f)
{
	if (d->has[f])
		db_bind_i64(b, d->val[f]);
	else
		db_bind_null(b);
}

static void bind_row(struct db_bind *b, const struct db_hir_row *r)
{
	db_bind_i64(b, r->cycle_id);
	db_bind_i64(b, r->target_id);
	db_bind_id(b, r->run_id);
	db_bind_text(b, db_hir_kind_name(r->kind));
	db_bind_i64(b, r->wait_state);
	db_bind_fig(b, r->wait_seconds);
	db_bind_fig(b, r->idle_seconds);
	db_bind_i64(b, r->repetition);
	db_bind_text(b, r->started_at);
	db_bind_dbl(b, r->seconds);
	db_bind_u64(b, r->bytes);
	db_bind_u64(b, r->ops);
	db_bind_fig(b, r->mibps);
	db_bind_fig(b, r->iops);
	db_bind_fig(b, r->lat_mean_us);
	db_bind_fig(b, r->lat_p99_us);
	bind_device(b, &r->device, DB_DEV_HOST_BYTES);
	bind_device(b, &r->device, DB_DEV_MEDIA_BYTES);
	db_bind_fig(b, r->device.wa);
	bind_device(b, &r->device, DB_DEV_PEAK_TEMP_C);
	db_bind_opt_i64(b, r->steady);
}

int db_hir_insert(struct db *db, const struct db_hir_row *r, int64_t *id)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_HIR_INSERT, &b);
	bind_row(&b, r);
	ret = db_bind_run(&b, "store a host idle recovery row");
	if (!ret && id)
		*id = sqlite3_last_insert_rowid(db->conn);
	db_leave(db);
	return ret;
}

int db_hir_idle(struct db *db, int64_t id, double seconds, int64_t host_bytes, int64_t media_bytes)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_HIR_IDLE, &b);
	db_bind_fig(&b, seconds);
	db_bind_opt_i64(&b, host_bytes);
	db_bind_opt_i64(&b, media_bytes);
	db_bind_i64(&b, id);
	ret = db_bind_run(&b, "store a host idle recovery wait");
	if (!ret)
		ret = db_changed(db, id, "store a host idle recovery wait");
	db_leave(db);
	return ret;
}

const char *db_hir_purge_name(enum db_hir_purge m)
{
	switch (m) {
	case DB_PURGE_SECURE_ERASE: return "secure-erase";
	case DB_PURGE_TRIM: return "trim";
	case DB_PURGE_NONE: return "none";
	}
	return "unknown";
}

int db_hir_purge_insert(struct db *db, const struct db_hir_purge_row *r,
			const struct db_wear_state *wear)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = db_tx_begin(db);
	if (ret)
		goto out;
	db_bind_start(db, ST_HIR_PURGE, &b);
	db_bind_i64(&b, r->cycle_id);
	db_bind_i64(&b, r->target_id);
	db_bind_id(&b, r->run_id);
	db_bind_text(&b, db_hir_purge_name(r->method));
	db_bind_text(&b, r->erase);
	db_bind_text(&b, act_outcome_name(r->outcome));
	db_bind_text(&b, r->started_at);
	db_bind_dbl(&b, r->seconds);
	db_bind_u64(&b, r->bytes);
	db_bind_opt_text(&b, r->note);
	ret = db_bind_run(&b, "store a host idle recovery purge");
	if (!ret && wear)
		ret = db_wear_put_state(db, wear);
	ret = db_tx_end(db, ret);
out:
	db_leave(db);
	return ret;
}

int db_hir_erased(struct db *db, int64_t target_id, const char *tag, int64_t cycle_id,
		  char *started_at, size_t len, double *seconds)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_HIR_ERASED, &b);
	db_bind_i64(&b, target_id);
	db_bind_text(&b, tag);
	db_bind_i64(&b, cycle_id);
	ret = db_bind_row(&b, "read the purge's finished erase");
	if (ret == 1) {
		const unsigned char *at = sqlite3_column_text(b.st, 1);
		util_strlcpy(started_at, at ? (const char *)at : "", len);
		*seconds = sqlite3_column_double(b.st, 2);
		ret = db_bind_finish(&b, SQLITE_OK, NULL);
		ret = ret ? ret : 1;
	}
	db_leave(db);
	return ret;
}

int db_hir_progress(struct db *db, int64_t cycle_id, struct db_hir_progress *p)
{
	struct db_bind b;
	int ret = db_enter(db);

	*p = (struct db_hir_progress){ 0 };
	if (ret)
		return ret;
	db_bind_start(db, ST_HIR_PROGRESS, &b);
	db_bind_i64(&b, cycle_id);
	ret = db_bind_row(&b, "read the host idle recovery progress");
	if (ret == 1) {
		p->purged = sqlite3_column_int(b.st, 0) > 0;
		p->preconditioned = sqlite3_column_int(b.st, 1) > 0;
		p->rounds = sqlite3_column_int(b.st, 2);
		p->state = sqlite3_column_int(b.st, 3);
		p->bursts = (long)sqlite3_column_int64(b.st, 4);
		p->baseline_done = sqlite3_column_int(b.st, 5) > 0;
		ret = db_bind_finish(&b, SQLITE_OK, NULL);
	} else if (ret == 0) {
		ret = -EIO;
	}
	db_leave(db);
	return ret;
}
