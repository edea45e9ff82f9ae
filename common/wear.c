/* wear: mapped extents, over-provisioning, host bytes and health. */
#include "wear.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

/* ---- extents (pure) ---- */

static int ext_reserve(struct wear_extents *e, size_t n)
{
	if (n <= e->cap)
		return 0;
	size_t cap = e->cap ? e->cap * 2 : 8;
	while (cap < n)
		cap *= 2;
	void *v = realloc(e->v, cap * sizeof(*e->v));
	if (!v)
		return -ENOMEM;
	e->v = v;
	e->cap = cap;
	return 0;
}

int wear_ext_add(struct wear_extents *e, uint64_t start, uint64_t end)
{
	if (start >= end)
		return 0;
	if (ext_reserve(e, e->n + 1))
		return -ENOMEM;
	/* first extent that ends at or after start (touching ones merge) */
	size_t i = 0;
	while (i < e->n && e->v[i][1] < start)
		i++;
	size_t j = i;
	while (j < e->n && e->v[j][0] <= end) {
		if (e->v[j][0] < start)
			start = e->v[j][0];
		if (e->v[j][1] > end)
			end = e->v[j][1];
		j++;
	}
	/* replace v[i..j) with the merged extent */
	memmove(&e->v[i + 1], &e->v[j], (e->n - j) * sizeof(*e->v));
	e->n = e->n - (j - i) + 1;
	e->v[i][0] = start;
	e->v[i][1] = end;
	return 0;
}

int wear_ext_remove(struct wear_extents *e, uint64_t start, uint64_t end)
{
	if (start >= end)
		return 0;
	for (size_t i = 0; i < e->n; i++) {
		uint64_t a = e->v[i][0], b = e->v[i][1];
		if (b <= start || a >= end)
			continue;
		if (a < start && b > end) {     /* split in two */
			if (ext_reserve(e, e->n + 1))
				return -ENOMEM;
			memmove(&e->v[i + 2], &e->v[i + 1], (e->n - i - 1) * sizeof(*e->v));
			e->n++;
			e->v[i][1] = start;
			e->v[i + 1][0] = end;
			e->v[i + 1][1] = b;
			return 0;
		}
		if (a < start) {
			e->v[i][1] = start;
		} else if (b > end) {
			e->v[i][0] = end;
		} else {                        /* covered: drop it */
			memmove(&e->v[i], &e->v[i + 1], (e->n - i - 1) * sizeof(*e->v));
			e->n--;
			i--;
		}
	}
	return 0;
}

uint64_t wear_ext_total(const struct wear_extents *e)
{
	uint64_t t = 0;
	for (size_t i = 0; i < e->n; i++)
		t += e->v[i][1] - e->v[i][0];
	return t;
}

void wear_ext_clear(struct wear_extents *e)
{
	e->n = 0;
}

void wear_ext_free(struct wear_extents *e)
{
	free(e->v);
	memset(e, 0, sizeof(*e));
}

double wear_write_fraction(const char *w)
{
	size_t n = strlen(w);
	if (n >= 4 && !strcmp(w + n - 4, "read"))
		return 0.0;
	return 1.0;
}

/* ---- loading and saving ---- */

static int load_extent(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct wear_state *w = arg;
	return wear_ext_add(&w->ext, (uint64_t)v[0].i, (uint64_t)v[1].i);
}

static int load_counters(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct wear_state *w = arg;
	w->host_total = (uint64_t)v[0].i;
	w->host_since_erase = (uint64_t)v[1].i;
	return 0;
}

/* The drive's counters at the target's latest snapshot, so the first
 * snapshot after a restart still has its deltas. */
static int load_health(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct wear_state *w = arg;
	w->last_host = v[0].type == DB_INT ? v[0].i : -1;
	w->last_nand = v[1].type == DB_INT ? v[1].i : -1;
	return 0;
}

int wear_load(struct db *db, int64_t target_id, struct wear_state *w)
{
	char err[512];
	struct db_value p = { .type = DB_INT, .i = target_id };
	memset(w, 0, sizeof(*w));
	w->db = db;
	w->target_id = target_id;
	w->last_nand = w->last_host = -1;
	int ret = db_query(db, "SELECT start_byte, end_byte FROM mapped_extents WHERE target_id = ?"
			   " ORDER BY start_byte", &p, 1, load_extent, w, err, sizeof(err));
	if (!ret)
		ret = db_query(db, "SELECT host_bytes_total, host_bytes_since_erase FROM targets"
			       " WHERE id = ?", &p, 1, load_counters, w, err, sizeof(err));
	if (!ret)
		ret = db_query(db, "SELECT host_bytes_written, nand_bytes_written FROM health"
			       " WHERE target_id = ? ORDER BY id DESC LIMIT 1", &p, 1, load_health, w,
			       err, sizeof(err));
	if (ret)
		log_msg(LOG_ERR, "loading wear state: %s", err);
	return ret;
}

void wear_free(struct wear_state *w)
{
	wear_ext_free(&w->ext);
}

/* A batch of statements for db_write, with their parameters. */
struct batch {
	const char **sql;
	struct db_value **params;
	int *np;
	int n, cap;
};

static struct db_value *batch_add(struct batch *b, const char *sql, int np)
{
	if (b->n == b->cap) {
		int cap = b->cap ? b->cap * 2 : 16;
		const char **s = realloc(b->sql, (size_t)cap * sizeof(*s));
		if (s)
			b->sql = s;
		struct db_value **p = realloc(b->params, (size_t)cap * sizeof(*p));
		if (p)
			b->params = p;
		int *n = realloc(b->np, (size_t)cap * sizeof(*n));
		if (n)
			b->np = n;
		if (!s || !p || !n)
			return NULL;
		b->cap = cap;
	}
	struct db_value *v = calloc((size_t)np + 1, sizeof(*v));
	if (!v)
		return NULL;
	b->sql[b->n] = sql;
	b->params[b->n] = v;
	b->np[b->n] = np;
	b->n++;
	return v;
}

static void batch_free(struct batch *b)
{
	for (int i = 0; i < b->n; i++)
		free(b->params[i]);
	free(b->sql);
	free(b->params);
	free(b->np);
}

static struct db_value vint(int64_t i)
{
	struct db_value v = { .type = DB_INT, .i = i };
	return v;
}

static struct db_value vreal(double r)
{
	struct db_value v = { .type = DB_REAL, .r = r };
	return v;
}

/* Statements that replace the target's extents and counters. */
static int batch_state(struct batch *b, const struct wear_state *w)
{
	struct db_value *p = batch_add(b, "DELETE FROM mapped_extents WHERE target_id = ?", 1);
	if (!p)
		return -ENOMEM;
	p[0] = vint(w->target_id);
	for (size_t i = 0; i < w->ext.n; i++) {
		p = batch_add(b, "INSERT INTO mapped_extents (target_id, start_byte, end_byte)"
			      " VALUES (?, ?, ?)", 3);
		if (!p)
			return -ENOMEM;
		p[0] = vint(w->target_id);
		p[1] = vint((int64_t)w->ext.v[i][0]);
		p[2] = vint((int64_t)w->ext.v[i][1]);
	}
	p = batch_add(b, "UPDATE targets SET host_bytes_total = ?, host_bytes_since_erase = ?"
		      " WHERE id = ?", 3);
	if (!p)
		return -ENOMEM;
	p[0] = vint((int64_t)w->host_total);
	p[1] = vint((int64_t)w->host_since_erase);
	p[2] = vint(w->target_id);
	return 0;
}

static int commit(struct wear_state *w, struct batch *b, const char *what)
{
	char err[512];
	int ret = batch_state(b, w);
	if (!ret)
		ret = db_write(w->db, b->sql, (const struct db_value *const *)b->params, b->np, b->n,
			       err, sizeof(err));
	if (ret)
		log_msg(LOG_ERR, "storing %s: %s", what, ret == -ENOMEM ? "out of memory" : err);
	batch_free(b);
	return ret;
}

/* Iterations of one size not yet accounted for. */
struct pending {
	int64_t id[64];
	uint64_t written[64];
	int n;
};

static int collect(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct pending *p = arg;
	if (p->n == (int)ARRAY_SIZE(p->id))
		return 0;
	double frac = v[3].s ? wear_write_fraction(v[3].s) : 1.0;
	p->id[p->n] = v[0].i;
	p->written[p->n] = (uint64_t)v[1].i + (uint64_t)((double)v[2].i * frac);
	p->n++;
	return 0;
}

int wear_after_size(struct wear_state *w, int64_t cycle_id, int size_index,
		    uint64_t span_offset, uint64_t span_len, uint64_t capacity,
		    uint64_t region_bytes, int64_t fs_mapped)
{
	struct pending p = { .n = 0 };
	struct db_value q[] = { vint(cycle_id), vint(size_index) };
	char err[512];
	int ret = db_query(w->db, "SELECT i.id, coalesce(i.fill_bytes, 0), coalesce(i.bytes, 0),"
			   " i.workload FROM iterations i LEFT JOIN wear x ON x.iteration_id = i.id"
			   " WHERE i.cycle_id = ? AND i.size_index = ? AND x.iteration_id IS NULL"
			   " AND i.status != 'running' ORDER BY i.id", q, 2, collect, &p, err,
			   sizeof(err));
	if (ret) {
		log_msg(LOG_ERR, "reading iterations for wear: %s", err);
		return ret;
	}
	struct batch b = { 0 };
	for (int i = 0; i < p.n; i++) {
		if (p.written[i] && fs_mapped < 0)
			wear_ext_add(&w->ext, span_offset, span_offset + span_len);
		w->host_total += p.written[i];
		w->host_since_erase += p.written[i];
		uint64_t mapped = fs_mapped >= 0 ? (uint64_t)fs_mapped : wear_ext_total(&w->ext);
		struct db_value *v = batch_add(&b, "INSERT INTO wear (iteration_id, capacity_bytes,"
			" region_bytes, op_configured, mapped_bytes, op_effective, host_bytes_written,"
			" host_bytes_since_erase, host_bytes_total) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", 9);
		if (!v) {
			batch_free(&b);
			return -ENOMEM;
		}
		v[0] = vint(p.id[i]);
		v[1] = vint((int64_t)capacity);
		v[2] = vint((int64_t)region_bytes);
		v[3] = vreal(1.0 - (double)region_bytes / (double)capacity);
		v[4] = vint((int64_t)mapped);
		v[5] = vreal(1.0 - (double)mapped / (double)capacity);
		v[6] = vint((int64_t)p.written[i]);
		v[7] = vint((int64_t)w->host_since_erase);
		v[8] = vint((int64_t)w->host_total);
	}
	return commit(w, &b, "wear of an iteration");
}

int wear_trimmed(struct wear_state *w, uint64_t start, uint64_t end)
{
	struct batch b = { 0 };
	int ret = wear_ext_remove(&w->ext, start, end);
	if (ret)
		return ret;
	return commit(w, &b, "trimmed extents");
}

int wear_erased(struct wear_state *w)
{
	struct batch b = { 0 };
	wear_ext_clear(&w->ext);
	w->host_since_erase = 0;
	return commit(w, &b, "erase");
}
