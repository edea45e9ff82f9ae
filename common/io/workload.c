/* workload: offset generators of the access patterns, one per order. */
#include "io/workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define BS_MIN 512u
#define BS_MAX (64u << 20)
#define WEIGHT_MAX 1000000u
#define TWO32 4294967296.0

/* IOzone / sysbench / fio patterns, then IOMeter access specifications as
 * published by Tom's Hardware (the shares are checked by
 * tests/integration/test_presets.py). streaming defaults to reads;
 * read_percent = 0 makes it the streaming-write specification. */
#define K 1024u
static const struct workload_preset named[] = {
	{ .name = "seqwrite", .order = WO_SEQ },
	{ .name = "seqread", .order = WO_SEQ, .read_pct = 100 },
	{ .name = "randwrite", .order = WO_RANDOM, .random_pct = 100 },
	{ .name = "randread", .order = WO_RANDOM, .read_pct = 100, .random_pct = 100 },
	{ .name = "rewrite", .order = WO_RECORD },
	{ .name = "backread", .order = WO_BACKWARD, .read_pct = 100 },
	{ .name = "strideread", .order = WO_STRIDE, .read_pct = 100 },
	{ .name = "randrw", .order = WO_RANDOM, .read_pct = 50, .random_pct = 100 },
	{ .name = "seqrw", .order = WO_SEQ, .read_pct = 50 },
	{ .name = "database",
	  .order = WO_RANDOM,
	  .read_pct = 67,
	  .random_pct = 100,
	  .nbs = 1,
	  .bs = { { 8 * K, 1 } } },
	{ .name = "fileserver",
	  .order = WO_RANDOM,
	  .read_pct = 80,
	  .random_pct = 100,
	  .nbs = 8,
	  .bs = { { 512, 10 },
		  { 1 * K, 5 },
		  { 2 * K, 5 },
		  { 4 * K, 60 },
		  { 8 * K, 2 },
		  { 16 * K, 4 },
		  { 32 * K, 4 },
		  { 64 * K, 10 } } },
	{ .name = "webserver",
	  .order = WO_RANDOM,
	  .read_pct = 100,
	  .random_pct = 100,
	  .nbs = 10,
	  .bs = { { 512, 22 },
		  { 1 * K, 15 },
		  { 2 * K, 8 },
		  { 4 * K, 23 },
		  { 8 * K, 15 },
		  { 16 * K, 2 },
		  { 32 * K, 6 },
		  { 64 * K, 7 },
		  { 128 * K, 1 },
		  { 512 * K, 1 } } },
	{ .name = "workstation",
	  .order = WO_RANDOM,
	  .read_pct = 80,
	  .random_pct = 80,
	  .nbs = 1,
	  .bs = { { 8 * K, 1 } } },
	{ .name = "streaming",
	  .order = WO_SEQ,
	  .read_pct = 100,
	  .nbs = 3,
	  .bs = { { 64 * K, 34 }, { 128 * K, 33 }, { 256 * K, 33 } } },
	/* JEDEC JESD219's enterprise endurance workload: its transfer sizes,
	 * those of 4 KiB and more on 4 KiB boundaries, the smaller ones on any
	 * sector, and its addresses (half of the writes to the first 5 % of
	 * the span, 30 % to the next 15 %, the rest to the last 80 %);
	 * tests/unit/test_access.c holds a million writes to each share within
	 * half a point. */
	{ .name = "jesd219",
	  .order = WO_RANDOM,
	  .random_pct = 100,
	  .nbs = 12,
	  .bs = { { 512, 4 },
		  { 1 * K, 1 },
		  { 1536, 1 },
		  { 2 * K, 1 },
		  { 2560, 1 },
		  { 3 * K, 1 },
		  { 3584, 1 },
		  { 4 * K, 67 },
		  { 8 * K, 10 },
		  { 16 * K, 7 },
		  { 32 * K, 3 },
		  { 64 * K, 3 } },
	  .align = 4 * K,
	  .access = { .kind = ACCESS_ZONED,
		      .nzones = 3,
		      .zone = { { 50, 5 }, { 30, 15 }, { 20, 80 } } } },
	{ .name = NULL },
};
#undef K

const struct workload_preset *workload_presets(unsigned *n)
{
	*n = (unsigned)(ARRAY_SIZE(named) - 1);
	return named;
}

const struct workload_preset *workload_preset_find(const char *name)
{
	for (const struct workload_preset *v = named; v->name; v++)
		if (!strcmp(v->name, name))
			return v;
	return NULL;
}

/* wyrand: one add and one 64x64->128 multiply per number. */
static inline uint64_t rnd(struct workload_gen *g)
{
	g->rng += 0xa0761d6478bd642full;
	unsigned __int128 t = (unsigned __int128)g->rng * (g->rng ^ 0xe7037ed1a0b428dbull);
	return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

/* Uniform in [0, n). */
static inline uint64_t below(struct workload_gen *g, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rnd(g) * n) >> 64);
}

/* ---- the generators: each places one operation of mix entry bs ---- */

typedef void (*order_fn)(struct workload_gen *g, struct workload_op *op, unsigned bs);

static void seq_next(struct workload_gen *g, struct workload_op *op, unsigned bs)
{
	uint32_t len = g->bs_size[bs];
	if (g->cursor + len > g->span_len)
		g->cursor = 0;
	op->offset = g->span_offset + g->cursor;
	g->cursor += len;
}

/* Uniform over the places of the span on the size's grid: without an
 * alignment rule the grid is the size itself, (span - len) / len + 1 =
 * span / len places, as the generator always drew them. */
static void random_next(struct workload_gen *g, struct workload_op *op, unsigned bs)
{
	uint64_t a = g->bs_align[bs];
	op->offset = g->span_offset + below(g, (g->span_len - g->bs_size[bs]) / a + 1) * a;
}

/* The access distribution picks a unit (grid bytes, the largest block);
 * the I/O starts at a uniform place on its own grid inside it, so that it
 * never crosses into the next unit (nor into the next zone). */
static void skewed_next(struct workload_gen *g, struct workload_op *op, unsigned bs)
{
	uint64_t unit = access_draw(&g->access, rnd(g), rnd(g));
	uint64_t len = g->bs_size[bs], at = 0;

	if (len < g->grid)
		at = below(g, (g->grid - len) / g->bs_align[bs] + 1) * g->bs_align[bs];
	op->offset = g->span_offset + unit * g->grid + at;
}

static void backward_next(struct workload_gen *g, struct workload_op *op, unsigned bs)
{
	uint32_t len = g->bs_size[bs];
	if (g->cursor < len)
		g->cursor = g->span_len;
	g->cursor -= len;
	op->offset = g->span_offset + g->cursor;
}

/* Blocks start, start + stride, start + 2 stride ... then start + 1: after
 * stride passes every grid block has been read once. */
static void stride_next(struct workload_gen *g, struct workload_op *op, unsigned bs)
{
	uint64_t blk = g->stride_start + g->stride_k * g->stride;
	if (blk >= g->grid_n) {
		g->stride_start++;
		if (g->stride_start >= g->stride || g->stride_start >= g->grid_n)
			g->stride_start = 0;
		g->stride_k = 0;
		blk = g->stride_start;
	}
	g->stride_k++;
	op->offset = g->span_offset + blk * g->grid;
}

static void record_next(struct workload_gen *g, struct workload_op *op, unsigned bs)
{
	op->offset = g->span_offset;
}

/* IOMeter's "% random": a random operation with probability random_pct,
 * else the one that follows the previous operation. */
static void mixed_next(struct workload_gen *g, struct workload_op *op, unsigned bs)
{
	if ((uint32_t)rnd(g) < g->random_thr) {
		g->random_next(g, op, bs);
		g->cursor = op->offset - g->span_offset + g->bs_size[bs];
	} else {
		seq_next(g, op, bs);
	}
}

static const order_fn orders[WO__COUNT] = {
	[WO_SEQ] = seq_next,       [WO_RANDOM] = random_next, [WO_BACKWARD] = backward_next,
	[WO_STRIDE] = stride_next, [WO_RECORD] = record_next,
};

/* The entry of the mix the next operation takes. */
static inline unsigned pick_bs(struct workload_gen *g)
{
	if (g->nbs == 1)
		return 0;
	uint32_t r = (uint32_t)(rnd(g) >> 32);
	for (unsigned i = 0; i + 1 < g->nbs; i++)
		if (r < g->bs_thr[i])
			return i;
	return g->nbs - 1;
}

static void op_next(struct workload_gen *g, struct workload_op *op)
{
	unsigned bs = pick_bs(g);
	if (g->write_all)
		op->is_write = 1;
	else if (g->read_all)
		op->is_write = 0;
	else
		op->is_write = (uint32_t)rnd(g) >= g->read_thr;
	op->len = g->bs_size[bs];
	op->bs = bs;
	g->order_next(g, op, bs);
}

static uint32_t pct_thr(unsigned pct)
{
	double t = (double)pct / 100.0 * TWO32;
	return t >= TWO32 ? UINT32_MAX : (uint32_t)t;
}

/* Sequential and random orders follow random_pct (IOMeter); the others
 * ignore it. The random part is uniform or follows the distribution. */
static order_fn choose_order(const struct workload_spec *s, order_fn random)
{
	if (s->order != WO_SEQ && s->order != WO_RANDOM)
		return orders[s->order];
	if (s->random_pct >= 100)
		return random;
	if (s->random_pct == 0)
		return seq_next;
	return mixed_next;
}

/* Where the I/Os of each size of the mix may start (workload_spec.align). */
static void init_align(struct workload_gen *g, const struct workload_spec *s)
{
	uint32_t sector = s->sector ? s->sector : 512;

	for (unsigned i = 0; i < s->nbs; i++) {
		uint32_t size = s->bs[i].size;
		g->bs_align[i] = !s->align ? size : size >= s->align ? s->align : sector;
	}
}

void workload_init(struct workload_gen *g, const struct workload_spec *s, uint64_t span_offset,
		   uint64_t span_len, uint64_t seed)
{
	uint64_t total = 0, cum = 0;

	memset(g, 0, sizeof(*g));
	g->next = op_next;
	g->random_next = s->access.kind == ACCESS_UNIFORM ? random_next : skewed_next;
	g->order_next = choose_order(s, g->random_next);
	g->span_offset = span_offset;
	g->span_len = span_len;
	g->rng = seed ^ 0x9e3779b97f4a7c15ull;
	g->read_all = s->read_pct >= 100;
	g->write_all = s->read_pct == 0;
	g->read_thr = pct_thr(s->read_pct);
	g->random_thr = pct_thr(s->random_pct);
	g->nbs = s->nbs;
	for (unsigned i = 0; i < s->nbs; i++)
		total += s->bs[i].weight;
	for (unsigned i = 0; i < s->nbs; i++) {
		cum += s->bs[i].weight;
		g->bs_size[i] = s->bs[i].size;
		g->bs_thr[i] =
			cum >= total ? UINT32_MAX : (uint32_t)((double)cum / (double)total * TWO32);
	}
	init_align(g, s);
	g->grid = workload_max_bs(s);
	g->grid_n = span_len / g->grid;
	g->stride = s->stride ? s->stride : 1;
	if (s->order == WO_BACKWARD)
		g->cursor = span_len;
	if (g->random_next == skewed_next)
		access_init(&g->access, &s->access, g->grid_n);
}

void workload_start(struct workload_gen *g, uint64_t at)
{
	if (!g->grid || !g->grid_n)
		return;
	uint64_t c = at % g->span_len / g->grid * g->grid;
	if (g->order_next == backward_next)
		g->cursor = c ? g->span_len - c : g->span_len;
	else if (g->order_next == seq_next || g->order_next == mixed_next)
		g->cursor = c;
}

uint32_t workload_max_bs(const struct workload_spec *s)
{
	uint32_t m = 0;
	for (unsigned i = 0; i < s->nbs; i++)
		if (s->bs[i].size > m)
			m = s->bs[i].size;
	return m;
}

int workload_check(const struct workload_spec *s, uint64_t span_len, char *msg, size_t len)
{
	if (!s->nbs || s->nbs > WORKLOAD_MAX_BS || (unsigned)s->order >= WO__COUNT ||
	    s->read_pct > 100 || s->random_pct > 100) {
		snprintf(msg, len, "invalid workload specification");
		return -EINVAL;
	}
	for (unsigned i = 0; i < s->nbs; i++) {
		if (s->bs[i].size < BS_MIN || s->bs[i].size % BS_MIN || !s->bs[i].weight) {
			snprintf(msg, len, "block size %u is not a multiple of 512 with a weight",
				 s->bs[i].size);
			return -EINVAL;
		}
		/* a preset's small sizes cannot go to a drive of larger blocks */
		if (s->sector && s->bs[i].size % s->sector) {
			snprintf(msg, len,
				 "block size %u is not a multiple of the logical block size %u",
				 s->bs[i].size, s->sector);
			return -EINVAL;
		}
	}
	if (s->align % BS_MIN || s->sector % BS_MIN || (s->sector && s->align % s->sector)) {
		snprintf(msg, len, "alignment %u is not a multiple of 512 and of the sector %u",
			 s->align, s->sector);
		return -EINVAL;
	}
	if (span_len < workload_max_bs(s)) {
		snprintf(msg, len, "the span of %llu bytes is smaller than the block size %u",
			 (unsigned long long)span_len, workload_max_bs(s));
		return -EINVAL;
	}
	if (s->order == WO_STRIDE && (!s->stride || s->stride > span_len / workload_max_bs(s))) {
		snprintf(msg, len, "stride %llu is 0 or larger than the %llu blocks of the span",
			 (unsigned long long)s->stride,
			 (unsigned long long)(span_len / workload_max_bs(s)));
		return -EINVAL;
	}
	return access_check(&s->access, span_len, workload_max_bs(s), msg, len);
}

/* One "SIZE[:WEIGHT]" entry. Returns 0 or -EINVAL with msg. */
static int parse_entry(char *tok, struct workload_bs *e, char *msg, size_t len)
{
	char *colon = strchr(tok, ':');
	uint64_t size;
	long long w = 1;

	if (colon) {
		*colon = '\0';
		if (util_parse_int(colon + 1, 1, WEIGHT_MAX, &w) < 0) {
			snprintf(msg, len, "weight \"%s\" of %s is not an integer 1..%u", colon + 1,
				 tok, WEIGHT_MAX);
			return -EINVAL;
		}
	}
	if (util_parse_bytes(tok, &size) < 0 || size < BS_MIN || size > BS_MAX || size % BS_MIN) {
		snprintf(msg, len,
			 "\"%s\" is not a block size of 512 bytes..64 MiB, "
			 "a multiple of 512",
			 tok);
		return -EINVAL;
	}
	e->size = (uint32_t)size;
	e->weight = (unsigned)w;
	return 0;
}

int workload_parse_block_sizes(const char *text, struct workload_spec *spec, char *msg, size_t len)
{
	char buf[512], *tok[WORKLOAD_MAX_BS];
	int n = util_split_list(text, buf, sizeof(buf), tok, WORKLOAD_MAX_BS, "block sizes", msg,
				len);

	if (n < 0)
		return -EINVAL;
	for (int k = 0; k < n; k++) {
		struct workload_bs e;
		if (parse_entry(tok[k], &e, msg, len) < 0)
			return -EINVAL;
		for (int i = 0; i < k; i++) {
			if (spec->bs[i].size == e.size) {
				snprintf(msg, len, "block size %u is listed twice", e.size);
				return -EINVAL;
			}
		}
		spec->bs[k] = e;
	}
	if (!n) {
		snprintf(msg, len, "no block sizes (use e.g. 4k or 512:10 4k:60 64k:30)");
		return -EINVAL;
	}
	spec->nbs = (unsigned)n;
	return 0;
}
