/* wear: mapped extents, over-provisioning, host bytes and health. */
#include "device/wear.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/wmap.h"

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
	if (!e->n || e->v[e->n - 1][1] < start) { /* after the last: ascending input */
		e->v[e->n][0] = start;
		e->v[e->n][1] = end;
		e->n++;
		return 0;
	}
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
		if (a < start && b > end) { /* split in two */
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
		} else { /* covered: drop it */
			memmove(&e->v[i], &e->v[i + 1], (e->n - i - 1) * sizeof(*e->v));
			e->n--;
			i--;
		}
	}
	return 0;
}

int wear_ext_union(struct wear_extents *e, const struct wear_extents *add)
{
	struct wear_extents u = { 0 };
	size_t i = 0, j = 0;
	if (ext_reserve(&u, e->n + add->n))
		return -ENOMEM;
	while (i < e->n || j < add->n) {
		const uint64_t *r = j >= add->n || (i < e->n && e->v[i][0] <= add->v[j][0])
					    ? e->v[i++]
					    : add->v[j++];
		if (u.n && r[0] <= u.v[u.n - 1][1]) { /* overlaps or touches the last */
			if (r[1] > u.v[u.n - 1][1])
				u.v[u.n - 1][1] = r[1];
			continue;
		}
		u.v[u.n][0] = r[0];
		u.v[u.n][1] = r[1];
		u.n++;
	}
	u.n = wmap_coarsen(u.v, u.n, WMAP_MAX_EXTENTS);
	wear_ext_free(e);
	*e = u;
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

double wear_write_fraction(enum cfg_workload w)
{
	switch (w) {
	case WL_SEQREAD:
	case WL_RANDREAD:
	case WL_BACKREAD:
	case WL_STRIDEREAD: return 0.0;
	case WL_SEQWRITE:
	case WL_RANDWRITE:
	case WL_REWRITE:
	case WL_RANDRW:
	case WL_SEQRW:
	case WL_DATABASE:
	case WL_FILESERVER:
	case WL_WEBSERVER:
	case WL_WORKSTATION:
	case WL_STREAMING:
	case WL_JESD219:
	case WL__COUNT: break;
	}
	return 1.0;
}

/* ---- loading and saving ---- */

static int load_extent(void *arg, uint64_t start, uint64_t end)
{
	return wear_ext_add(arg, start, end);
}

int wear_load(struct db *db, int64_t target_id, struct wear_state *w)
{
	memset(w, 0, sizeof(*w));
	w->db = db;
	w->target_id = target_id;
	w->last_nand = w->last_host = -1;
	int ret = db_wear_load(db, target_id, load_extent, &w->ext, &w->host_total,
			       &w->host_since_erase);
	/* the drive's counters at the latest snapshot, so the first snapshot
	 * after a restart still has its deltas */
	if (!ret)
		ret = db_health_last_counters(db, target_id, &w->last_host, &w->last_nand);
	return ret;
}

void wear_free(struct wear_state *w)
{
	wear_ext_free(&w->ext);
}

void wear_db_state(const struct wear_state *w, struct db_wear_state *s)
{
	*s = (struct db_wear_state){
		.target_id = w->target_id,
		.ext = (const uint64_t(*)[2])w->ext.v,
		.next = w->ext.n,
		.host_total = w->host_total,
		.host_since_erase = w->host_since_erase,
	};
}

/* Store the state with rows. Returns 0 or -errno. */
static int commit(struct wear_state *w, const struct db_wear_row *rows, size_t n, const char *what)
{
	struct db_wear_state s;
	char err[512];
	wear_db_state(w, &s);
	int ret = db_wear_store(w->db, &s, rows, n, err, sizeof(err));
	if (ret)
		log_msg(LOG_ERR, "storing %s: %s", what, err);
	return ret;
}

/* dst, empty, becomes a copy of src. Returns 0 or -ENOMEM. */
static int ext_copy(struct wear_extents *dst, const struct wear_extents *src)
{
	if (ext_reserve(dst, src->n))
		return -ENOMEM;
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof(*src->v));
	dst->n = src->n;
	return 0;
}

/* The iterations of one size not yet accounted for, as many as there are:
 * their rows with the iteration and its host bytes, the rest filled in by
 * wear_after_size. */
struct pending {
	struct db_wear_row *v;
	size_t n, cap;
};

static int collect(void *arg, int64_t id, uint64_t fill_bytes, uint64_t bytes, int workload)
{
	struct pending *p = arg;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct db_wear_row *v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	double frac = workload >= 0 ? wear_write_fraction((enum cfg_workload)workload) : 1.0;
	p->v[p->n++] = (struct db_wear_row){
		.iteration_id = id,
		.host_bytes_written = fill_bytes + (uint64_t)((double)bytes * frac),
	};
	return 0;
}

/* Add what iteration id wrote to e: the ranges its writes completed
 * (written_extents), or, for a row that stored none, [span_offset,
 * span_offset + span_len): the caller gives the whole span for a row that
 * wrote (a database of schema 17 or older, or no memory for the map), 0
 * for one that did not. Returns 0 or -errno. */
static int add_written(struct db *db, int64_t id, uint64_t span_offset, uint64_t span_len,
		       struct wear_extents *e)
{
	struct wear_extents it = { 0 };
	int ret = db_wear_written(db, id, load_extent, &it);
	if (!ret && !it.n)
		ret = wear_ext_add(&it, span_offset, span_offset + span_len);
	if (!ret)
		ret = wear_ext_union(e, &it);
	wear_ext_free(&it);
	return ret;
}

/* Where the rows of p are, and what each one wrote: add_written's span
 * for an iteration; for a host idle recovery row, the ranges in
 * hir_written when it is row hir_row, else the span (a row whose
 * accounting failed after it was stored: an upper bound). */
struct span {
	uint64_t offset, len;
	int64_t hir_row;
	const struct wear_extents *hir_written;
};

static int add_row_written(const struct wear_state *w, const struct db_wear_row *r,
			   const struct span *sp, struct wear_extents *e)
{
	if (!r->hir_id)
		return add_written(w->db, r->iteration_id, sp->offset,
				   r->host_bytes_written ? sp->len : 0, e);
	if (r->hir_id == sp->hir_row && sp->hir_written)
		return wear_ext_union(e, sp->hir_written);
	if (!r->host_bytes_written)
		return 0;
	struct wear_extents all = { 0 };
	int ret = wear_ext_add(&all, sp->offset, sp->offset + sp->len);
	if (!ret)
		ret = wear_ext_union(e, &all);
	wear_ext_free(&all);
	return ret;
}

/* Account for the rows of p (their host bytes filled in) in order: each
 * one's writes into the mapped extents and the host counters, its wear
 * figures after it; then store them with the new state, in one
 * transaction. The one definition of what the host wrote, for
 * iterations and host idle recovery alike. */
static int account(struct wear_state *w, struct pending *p, const struct span *sp,
		   uint64_t capacity, uint64_t region_bytes, int64_t fs_mapped)
{
	/* the state with these rows; it replaces w's only once stored, so
	 * that a failed store leaves them pending and counted nowhere */
	struct wear_state next = *w;
	char what[64];

	next.ext = (struct wear_extents){ 0 };
	int ret = ext_copy(&next.ext, &w->ext);
	for (size_t i = 0; !ret && i < p->n; i++) {
		struct db_wear_row *r = &p->v[i];
		if (fs_mapped < 0)
			ret = add_row_written(w, r, sp, &next.ext);
		next.host_total += r->host_bytes_written;
		next.host_since_erase += r->host_bytes_written;
		uint64_t mapped = fs_mapped >= 0 ? (uint64_t)fs_mapped : wear_ext_total(&next.ext);
		r->capacity_bytes = capacity;
		r->region_bytes = region_bytes;
		r->op_configured = 1.0 - (double)region_bytes / (double)capacity;
		r->mapped_bytes = mapped;
		r->op_effective = 1.0 - (double)mapped / (double)capacity;
		r->host_bytes_since_erase = next.host_since_erase;
		r->host_bytes_total = next.host_total;
	}
	snprintf(what, sizeof(what), "the wear of %zu row(s)", p->n);
	if (!ret)
		ret = commit(&next, p->v, p->n, what);
	if (!ret) {
		wear_ext_free(&w->ext);
		w->ext = next.ext;
		w->host_total = next.host_total;
		w->host_since_erase = next.host_since_erase;
	} else {
		wear_ext_free(&next.ext);
	}
	return ret;
}

int wear_after_size(struct wear_state *w, int64_t cycle_id, int size_index, uint64_t span_offset,
		    uint64_t span_len, uint64_t capacity, uint64_t region_bytes, int64_t fs_mapped)
{
	struct pending p = { 0 };
	struct span sp = { span_offset, span_len, 0, NULL };
	int ret = db_wear_pending(w->db, cycle_id, size_index, collect, &p);
	if (!ret)
		ret = account(w, &p, &sp, capacity, region_bytes, fs_mapped);
	free(p.v);
	return ret;
}

static int collect_hir(void *arg, int64_t id, uint64_t bytes)
{
	struct pending *p = arg;
	int ret = collect(p, 0, 0, bytes, -1);
	if (!ret)
		p->v[p->n - 1].hir_id = id;
	return ret;
}

int wear_after_hir(struct wear_state *w, int64_t cycle_id, uint64_t span_offset, uint64_t span_len,
		   uint64_t capacity, uint64_t region_bytes, int64_t row_id,
		   const struct wear_extents *written)
{
	struct pending p = { 0 };
	struct span sp = { span_offset, span_len, row_id, written };
	int ret = db_wear_pending_hir(w->db, cycle_id, collect_hir, &p);
	if (!ret)
		ret = account(w, &p, &sp, capacity, region_bytes, -1);
	free(p.v);
	return ret;
}

int wear_apply(struct wear_state *w, int trim, uint64_t start, uint64_t end)
{
	if (trim)
		return wear_ext_remove(&w->ext, start, end);
	wear_ext_clear(&w->ext);
	w->host_since_erase = 0;
	return 0;
}

int wear_trimmed(struct wear_state *w, uint64_t start, uint64_t end)
{
	int ret = wear_apply(w, 1, start, end);
	if (ret)
		return ret;
	return commit(w, NULL, 0, "trimmed extents");
}

int wear_erased(struct wear_state *w)
{
	wear_apply(w, 0, 0, 0);
	return commit(w, NULL, 0, "erase");
}
