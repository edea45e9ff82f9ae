/* Unit tests of wmap: units marked by writes, runs as byte ranges, the
 * unit growing with the span within the memory bound, unique blocks of
 * random writes, and coarsening a long list of ranges. */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/wmap.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)
#define TiB (1024ull * GiB)

struct ranges {
	uint64_t v[16][2];
	size_t n;
};

static int keep(void *arg, uint64_t start, uint64_t end)
{
	struct ranges *r = arg;
	assert_true(r->n < 16);
	r->v[r->n][0] = start;
	r->v[r->n][1] = end;
	r->n++;
	return 0;
}

/* Writes mark the units they touch; runs come back ascending and merged,
 * cut at the span; writes outside the span are ignored. */
static void test_marks_and_ranges(void **state)
{
	struct wmap m;
	struct ranges r = { .n = 0 };
	uint64_t off = 1 * MiB, len = 1 * MiB + 6 * KiB; /* the last unit is 2 KiB */
	assert_int_equal(wmap_init(&m, off, len), 0);
	assert_int_equal(wmap_unit(&m), 4096);
	assert_int_equal(wmap_bytes(&m), 0);
	wmap_mark(&m, off + 8 * KiB, 8 * KiB);        /* units 2, 3 */
	wmap_mark(&m, off + 16 * KiB, 4 * KiB);       /* 4: joins them */
	wmap_mark(&m, off + 100 * KiB, 512);          /* a part of 25 */
	wmap_mark(&m, off + len - 1 * KiB, 64 * KiB); /* the tail, cut */
	wmap_mark(&m, 0, 64 * KiB);                   /* before the span */
	wmap_mark(&m, off + 254 * KiB, 2 * KiB);      /* unit 63 only */
	wmap_mark(&m, off + 256 * KiB, 0);            /* nothing */
	assert_int_equal(wmap_ranges(&m, keep, &r), 0);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.v[0][0], off + 8 * KiB);
	assert_int_equal(r.v[0][1], off + 20 * KiB);
	assert_int_equal(r.v[1][0], off + 100 * KiB);
	assert_int_equal(r.v[1][1], off + 104 * KiB);
	assert_int_equal(r.v[2][0], off + 252 * KiB);
	assert_int_equal(r.v[2][1], off + 256 * KiB);
	assert_int_equal(r.v[3][0], off + 1 * MiB + 4 * KiB);
	assert_int_equal(r.v[3][1], off + len);
	assert_int_equal(wmap_bytes(&m), 12 * KiB + 4 * KiB + 4 * KiB + 2 * KiB);
	/* a fill of the whole span is one range */
	wmap_mark(&m, off, len);
	r.n = 0;
	assert_int_equal(wmap_ranges(&m, keep, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(wmap_bytes(&m), len);
	wmap_free(&m);
}

/* The unit is 4 KiB up to 64 GiB, then grows so that no map passes
 * WMAP_MAX_BITS bits (2 MiB): a 4 TiB span has 256 KiB units. */
static void test_unit_bounded(void **state)
{
	static const struct {
		uint64_t len, unit;
	} cases[] = {
		{ 32 * MiB, 4 * KiB }, { 64 * GiB, 4 * KiB },  { 64 * GiB + 4 * KiB, 8 * KiB },
		{ 1 * TiB, 64 * KiB }, { 4 * TiB, 256 * KiB },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wmap m;
		assert_int_equal(wmap_init(&m, 0, cases[i].len), 0);
		assert_int_equal(wmap_unit(&m), cases[i].unit);
		assert_true(m.nwords * 8 <= WMAP_MAX_BITS / 8);
		wmap_free(&m);
	}
}

/* 4 KiB writes at random, 0.1 times the blocks of a span: the map counts
 * each block once, as a set of offsets does, about 1 - e^-0.1 of them. */
static void test_random_writes_count_unique_blocks(void **state)
{
	const uint64_t blocks = 8192; /* 32 MiB */
	struct wmap m;
	unsigned char *seen = calloc(blocks, 1);
	uint64_t x = 88172645463325252ull, unique = 0;
	assert_non_null(seen);
	assert_int_equal(wmap_init(&m, 0, blocks * 4096), 0);
	for (uint64_t i = 0; i < blocks / 10; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t b = x % blocks;
		unique += !seen[b];
		seen[b] = 1;
		wmap_mark(&m, b * 4096, 4096);
	}
	assert_int_equal(wmap_bytes(&m), unique * 4096);
	double frac = (double)unique / (double)blocks;
	assert_true(fabs(frac - (1 - exp(-0.1))) < 0.01);
	uint64_t(*v)[2] = NULL;
	size_t n = 0;
	assert_int_equal(wmap_extents(&m, &v, &n), 0);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		total += v[i][1] - v[i][0];
		if (i)
			assert_true(v[i][0] > v[i - 1][1]);
	}
	assert_int_equal(total, unique * 4096);
	free(v);
	free(seen);
	wmap_free(&m);
}

/* Coarsening joins across the smallest gaps only, keeps order and covers
 * every range: what was written is never lost, only gaps added. */
static void test_coarsen(void **state)
{
	uint64_t v[6][2] = { { 0, 10 },    { 12, 20 },   { 100, 110 },
			     { 111, 120 }, { 200, 210 }, { 1000, 1010 } };
	assert_int_equal(wmap_coarsen(v, 6, 6), 6);
	assert_int_equal(wmap_coarsen(v, 6, 4), 4); /* gaps 1 and 2 join */
	assert_int_equal(v[0][0], 0);
	assert_int_equal(v[0][1], 20);
	assert_int_equal(v[1][0], 100);
	assert_int_equal(v[1][1], 120);
	assert_int_equal(v[2][0], 200);
	assert_int_equal(v[3][1], 1010);
	assert_int_equal(wmap_coarsen(v, 4, 1), 1);
	assert_int_equal(v[0][0], 0);
	assert_int_equal(v[0][1], 1010);
	/* equal gaps: only as many as needed join */
	uint64_t w[4][2] = { { 0, 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 } };
	assert_int_equal(wmap_coarsen(w, 4, 3), 3);
	assert_int_equal(w[0][1], 3);
	assert_int_equal(w[1][0], 4);
	assert_int_equal(w[2][1], 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marks_and_ranges),
		cmocka_unit_test(test_unit_bounded),
		cmocka_unit_test(test_random_writes_count_unique_blocks),
		cmocka_unit_test(test_coarsen),
	};
	return cmocka_run_group_tests_name("wmap", tests, NULL, NULL);
}
