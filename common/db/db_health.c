/* db_health: health and events: the health table (one snapshot of a
 * drive's counters per row, and what the latest one recorded), the
 * drive's rated endurance, and the events and alerts stored. */
#include "db/db_int.h"

#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

int db_health_insert(struct db *db, const struct db_health *h, char *err, size_t errlen)
{
	struct db_bind b;
	int ret = db_enter_msg(db, err, errlen);

	if (ret)
		return ret;
	db_bind_start(db, ST_HEALTH_INSERT, &b);
	db_bind_i64(&b, h->target_id);
	db_bind_id(&b, h->cycle_id);
	db_bind_text(&b, h->source);
	for (int c = 0; c < DB_H__COUNT; c++)
		if (h->has[c])
			db_bind_i64(&b, h->val[c]);
		else
			db_bind_null(&b);
	db_bind_fig(&b, h->write_amplification);
	db_bind_text(&b, h->data);
	db_bind_text(&b, h->point);
	db_bind_opt_i64(&b, h->host_bytes_delta);
	db_bind_opt_i64(&b, h->nand_bytes_delta);
	db_bind_u64(&b, h->mapped_bytes);
	if (h->has_op_effective)
		db_bind_dbl(&b, h->op_effective);
	else
		db_bind_null(&b);
	ret = db_bind_run(&b, "store a health snapshot");
	int64_t id = ret ? 0 : sqlite3_last_insert_rowid(db->conn);
	if (ret)
		db_failure(db, ret, err, errlen);
	db_leave(db);
	if (id)
		db_row_written(db, DB_ROW_HEALTH, id);
	return ret;
}

static int last_counters(void *arg, int n, const struct db_value *v, const char *const *names)
{
	int64_t *out = arg;
	out[0] = v[0].type == DB_INT ? v[0].i : -1;
	out[1] = v[1].type == DB_INT ? v[1].i : -1;
	return 0;
}

int db_health_last_counters(struct db *db, int64_t target_id, int64_t *host, int64_t *nand)
{
	struct db_value p = { .type = DB_INT, .i = target_id };
	int64_t c[2] = { -1, -1 };
	char err[512];
	int ret = db_query(db,
			   "SELECT host_bytes_written, nand_bytes_written FROM health"
			   " WHERE target_id = ? ORDER BY id DESC LIMIT 1",
			   &p, 1, last_counters, c, err, sizeof(err));
	if (ret)
		log_msg(LOG_ERR, "loading wear state: %s", err);
	*host = c[0];
	*nand = c[1];
	return ret;
}

struct text_out {
	char *buf;
	size_t len;
};

static int keep_text(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct text_out *out = arg;
	if (v[0].type == DB_TEXT)
		util_strlcpy(out->buf, v[0].s, out->len);
	return 1;
}

int db_health_firmware(struct db *db, int64_t target_id, char *buf, size_t len)
{
	struct db_value p = { .type = DB_INT, .i = target_id };
	struct text_out out = { buf, len };
	char err[256];
	int ret;

	buf[0] = 0;
	ret = db_query(db,
		       "SELECT json_extract(data, '$.firmware') FROM health"
		       " WHERE target_id = ? ORDER BY id DESC LIMIT 1",
		       &p, 1, keep_text, &out, err, sizeof(err));
	return ret < 0 ? ret : 0;
}

int db_target_rating(struct db *db, int64_t target_id, const struct db_rating *r)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_TARGET_RATING, &b);
	if (r->tbw_bytes)
		db_bind_u64(&b, r->tbw_bytes);
	else
		db_bind_null(&b);
	if (r->dwpd > 0)
		db_bind_dbl(&b, r->dwpd);
	else
		db_bind_null(&b);
	if (r->warranty_years > 0)
		db_bind_dbl(&b, r->warranty_years);
	else
		db_bind_null(&b);
	db_bind_opt_text(&b, r->warranty_start);
	db_bind_i64(&b, target_id);
	ret = db_bind_run(&b, "store the target's rated endurance");
	db_leave(db);
	return ret;
}

int db_event(struct db *db, const struct db_event *e, int64_t *event_id)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_EVENT, &b);
	db_bind_id(&b, e->target_id);
	db_bind_id(&b, e->run_id);
	db_bind_id(&b, e->cycle_id);
	db_bind_id(&b, e->iteration_id);
	db_bind_text(&b, e->severity);
	db_bind_text(&b, e->kind);
	db_bind_text(&b, e->message_id);
	db_bind_text(&b, e->message);
	db_bind_fig(&b, e->value);
	db_bind_fig(&b, e->baseline);
	db_bind_text(&b, e->data);
	ret = db_bind_run(&b, "store event");
	int64_t id = ret == 0 ? sqlite3_last_insert_rowid(db->conn) : 0;
	if (event_id)
		*event_id = id;
	db_leave(db);
	if (id)
		db_row_written(db, DB_ROW_EVENT, id);
	return ret;
}
