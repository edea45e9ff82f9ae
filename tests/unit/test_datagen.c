/* Unit tests of datagen, judged as a compressing or deduplicating layer
 * would judge the written stream: many consecutive blocks made exactly as
 * the engine makes them (datagen_block before every write), compressed whole
 * by zstd level 3, by zstd level 3 with a 128 MiB long-distance window
 * (zstd --long=27), and block by block by zstd and zlib. */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "io/datagen.h"

static const unsigned levels[] = { 0, 2, 25, 50, 75, 98, 100 };
static const size_t sizes[] = { 512, 4096, 65536, 1 << 20, 16 << 20 };
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* The stream the engine writes: len bytes of bs-byte blocks. */
static unsigned char *make_stream(unsigned p, unsigned d, size_t bs, size_t len, uint64_t seed)
{
	struct datagen g;
	unsigned char *s = malloc(len);
	assert_non_null(s);
	memset(s, 0xa5, len); /* nothing of this may survive */
	datagen_init(&g, p, d, seed);
	for (size_t off = 0; off < len; off += bs)
		datagen_block(&g, s + off, bs);
	return s;
}

static double removed(size_t in, size_t out)
{
	return 100.0 * (1.0 - (double)out / (double)in);
}

/* Percent removed by zstd level 3 over the whole buffer; window_log 0:
 * the default window, else long-distance matching over 2^window_log. */
static double zstd_whole(const void *buf, size_t len, int window_log)
{
	ZSTD_CCtx *cx = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(len);
	void *dst = malloc(cap);
	assert_non_null(cx);
	assert_non_null(dst);
	ZSTD_CCtx_setParameter(cx, ZSTD_c_compressionLevel, 3);
	if (window_log) {
		ZSTD_CCtx_setParameter(cx, ZSTD_c_enableLongDistanceMatching, 1);
		ZSTD_CCtx_setParameter(cx, ZSTD_c_windowLog, window_log);
	}
	size_t r = ZSTD_compress2(cx, dst, cap, buf, len);
	assert_false(ZSTD_isError(r));
	free(dst);
	ZSTD_freeCCtx(cx);
	return removed(len, r);
}

/* Percent removed block by block: zstd level 3 (zlib_level < 0) or zlib at
 * zlib_level. */
static double per_block(const unsigned char *buf, size_t len, size_t bs, int zlib_level)
{
	size_t cap = ZSTD_compressBound(bs) + compressBound(bs), out = 0;
	unsigned char *dst = malloc(cap);
	assert_non_null(dst);
	for (size_t off = 0; off < len; off += bs) {
		if (zlib_level < 0) {
			size_t r = ZSTD_compress(dst, cap, buf + off, bs, 3);
			assert_false(ZSTD_isError(r));
			out += r;
		} else {
			uLongf n = cap;
			assert_int_equal(compress2(dst, &n, buf + off, bs, zlib_level), Z_OK);
			out += n;
		}
	}
	free(dst);
	return removed(len, out);
}

/* A stream long enough to hold several blocks of every size. */
static size_t stream_len(size_t bs)
{
	return bs >= (1 << 20) ? 2 * bs : 4 << 20;
}

/* Removed share within [p - tol, p + 1]: never more compressible than asked. */
static void check(const char *what, unsigned p, size_t bs, double got, double tol)
{
	print_message("  %7zu B %3u%% %-12s %7.2f%%\n", bs, p, what, got);
	if (got > (double)p + 1.0 || got < (double)p - tol)
		fail_msg("compressibility %u%% at %zu-byte blocks: %s removed %.2f%%", p, bs, what,
			 got);
}

/* Whole stream: zstd -3 and zstd --long=27 remove p% within 1 point at
 * every level and block size. */
static void test_whole_stream(void **state)
{
	for (size_t s = 0; s < NSIZES; s++) {
		for (size_t l = 0; l < NLEVELS; l++) {
			size_t len = stream_len(sizes[s]);
			unsigned char *st = make_stream(levels[l], 0, sizes[s], len, 42 + l);
			check("zstd -3", levels[l], sizes[s], zstd_whole(st, len, 0), 1.0);
			check("zstd long27", levels[l], sizes[s], zstd_whole(st, len, 27), 1.0);
			free(st);
		}
	}
}

/* Per block: each block compressed on its own by zstd and zlib removes p%
 * within 1 point from 64 KiB up, and never more than p + 1 at any size.
 * Below that the compressors' own per-block costs come on top of the data
 * (measured here: zstd's frame and block headers, 10 bytes, and its rule
 * of storing a block raw unless it saves 1/64 of it; zlib's header,
 * checksum and Huffman table, 11 to 80 bytes; its fixed code spends 9 bits
 * on half the byte values): up to 2.3 points at 4 KiB and 6.5 points at
 * 512 bytes, where test_layout_per_unit checks the bytes themselves. */
static double per_block_tolerance(size_t bs)
{
	return bs >= 65536 ? 1.0 : bs >= 4096 ? 3.0 : 7.0;
}

static void test_per_block(void **state)
{
	for (size_t s = 0; s < NSIZES; s++) {
		double tol = per_block_tolerance(sizes[s]);
		for (size_t l = 0; l < NLEVELS; l++) {
			size_t len = stream_len(sizes[s]);
			if (len > (8u << 20))
				len = sizes[s]; /* one 16 MiB block is enough per block */
			unsigned char *st = make_stream(levels[l], 0, sizes[s], len, 7 + l);
			check("zstd/block", levels[l], sizes[s], per_block(st, len, sizes[s], -1),
			      tol);
			check("zlib/block", levels[l], sizes[s], per_block(st, len, sizes[s], 6),
			      tol);
			free(st);
		}
	}
}

/* Every unit of a block holds floor(n * (100-p) / 100) random bytes and
 * zeros (zeros first in every other block shorter than a page): at
 * 512-byte blocks, exactly the share fio's compress_chunk sets. */
static void test_layout_per_unit(void **state)
{
	static const size_t bss[] = { 512, 1536, 4096, 6144 };
	for (size_t b = 0; b < sizeof(bss) / sizeof(bss[0]); b++) {
		for (size_t l = 0; l < NLEVELS - 1; l++) {
			size_t bs = bss[b];
			unsigned char *st = make_stream(levels[l], 0, bs, 64 * bs, 3);
			size_t unit = 0;
			for (size_t off = 0; off < 64 * bs; off += bs) {
				for (size_t u = 0; u < bs; u += DATAGEN_PAGE, unit++) {
					size_t n = bs - u < DATAGEN_PAGE ? bs - u : DATAGEN_PAGE;
					size_t r = datagen_random_bytes(n, levels[l]);
					const unsigned char *x = st + off + u;
					size_t z0 = n < DATAGEN_PAGE && unit % 2 ? 0 : r;
					for (size_t i = z0; i < z0 + n - r; i++)
						assert_int_equal(x[i], 0);
					x += z0 ? 0 : n - r; /* the random bytes */
					/* random bytes: about one in 256 is zero */
					size_t z = 0;
					for (size_t i = 0; i < r; i++)
						z += !x[i];
					assert_true(z <= r / 128 + 8);
				}
			}
			free(st);
		}
	}
	assert_int_equal(datagen_random_bytes(512, 2), 501);
	assert_int_equal(datagen_random_bytes(512, 98), 10);
	assert_int_equal(datagen_random_bytes(4096, 100), 0);
}

static uint64_t page_hash(const unsigned char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	return h;
}

struct hpage {
	uint64_t h;
	size_t idx;
};

static int cmp_hpage(const void *a, const void *b)
{
	const struct hpage *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Pages of n bytes equal to an earlier page (hash, then memcmp). */
static size_t count_repeats(const unsigned char *s, size_t len, size_t n)
{
	size_t np = len / n, rep = 0;
	struct hpage *hp = malloc(np * sizeof(*hp));
	assert_non_null(hp);
	for (size_t i = 0; i < np; i++)
		hp[i] = (struct hpage){ page_hash(s + i * n, n), i };
	qsort(hp, np, sizeof(*hp), cmp_hpage);
	for (size_t i = 1; i < np; i++) {
		for (size_t j = i; j-- > 0 && hp[j].h == hp[i].h;) {
			if (!memcmp(s + hp[j].idx * n, s + hp[i].idx * n, n)) {
				rep++;
				break;
			}
		}
	}
	free(hp);
	return rep;
}

/* dedupe_percent = d: d% (within 2 points) of the 4 KiB pages repeat an
 * earlier page, at every block size from 4 KiB up (blocks shorter than a
 * page repeat as whole blocks); with d = 0 no page ever repeats, even at
 * compressibility 100 and 512-byte blocks. */
static void test_dedupe_share(void **state)
{
	static const unsigned ds[] = { 0, 5, 20, 50, 90 };
	static const size_t bss[] = { 512, 4096, 65536, 1 << 20 };
	static const unsigned ps[] = { 0, 50, 98 };
	enum { LEN = 32 << 20 };
	for (size_t b = 0; b < sizeof(bss) / sizeof(bss[0]); b++) {
		for (size_t k = 0; k < sizeof(ds) / sizeof(ds[0]); k++) {
			unsigned p = ds[k] ? ps[(b + k) % 3] : 100;
			size_t unit = bss[b] < DATAGEN_PAGE && ds[k] ? bss[b] : DATAGEN_PAGE;
			unsigned char *st = make_stream(p, ds[k], bss[b], LEN, 11 + k);
			double share =
				100.0 * (double)count_repeats(st, LEN, unit) / (double)(LEN / unit);
			print_message("  dedupe %2u%% at %7zu B, p %3u%%: %6.2f%% of %zu-byte "
				      "units repeat\n",
				      ds[k], bss[b], p, share, unit);
			if (fabs(share - ds[k]) > 2.0)
				fail_msg("dedupe %u%% at %zu B: %.2f%% repeat", ds[k], bss[b],
					 share);
			if (!ds[k])
				assert_int_equal(count_repeats(st, LEN, DATAGEN_PAGE), 0);
			free(st);
		}
	}
}

/* At compressibility 100 a unit's only unique bytes are its stamps, and a
 * block shorter than a page need not cover a 4 KiB boundary of the stream:
 * dedupe still repeats d% of the units and no others. */
static void test_dedupe_all_zeros(void **state)
{
	static const size_t bss[] = { 512, 4096, 65536 };
	enum { LEN = 8 << 20 };
	for (size_t b = 0; b < sizeof(bss) / sizeof(bss[0]); b++) {
		size_t unit = bss[b] < DATAGEN_PAGE ? bss[b] : DATAGEN_PAGE;
		unsigned char *st = make_stream(100, 20, bss[b], LEN, 21);
		double share = 100.0 * (double)count_repeats(st, LEN, unit) / (double)(LEN / unit);
		print_message("  dedupe 20%% at %6zu B, p 100%%: %6.2f%% repeat\n", bss[b], share);
		assert_true(fabs(share - 20) <= 2.0);
		free(st);
	}
}

/* Mixed block sizes under a page: repeats copy an earlier block of the
 * same length, so the share still holds. */
static void test_dedupe_mixed_sizes(void **state)
{
	enum { N = 6000, A = 512, B = 1536 };
	struct datagen g;
	unsigned char *a = malloc((size_t)N / 2 * A), *b = malloc((size_t)N / 2 * B);
	assert_non_null(a);
	assert_non_null(b);
	datagen_init(&g, 25, 30, 4);
	for (size_t i = 0; i < N / 2; i++) {
		datagen_block(&g, a + i * A, A);
		datagen_block(&g, b + i * B, B);
	}
	size_t rep =
		count_repeats(a, (size_t)N / 2 * A, A) + count_repeats(b, (size_t)N / 2 * B, B);
	double share = 100.0 * (double)rep / N;
	print_message("  dedupe 30%% at 512 B and 1536 B blocks: %.2f%% repeat\n", share);
	assert_true(fabs(share - 30) <= 2.0);
	free(a);
	free(b);
}

/* Repeats do not change the layout: at d = 50 every 4 KiB block still
 * removes p% when compressed alone. */
static void test_dedupe_keeps_compressibility(void **state)
{
	unsigned char *st = make_stream(50, 50, 4096, 4 << 20, 5);
	check("zstd/block d50", 50, 4096, per_block(st, 4 << 20, 4096, -1),
	      per_block_tolerance(4096));
	check("zlib/block d50", 50, 4096, per_block(st, 4 << 20, 4096, 6),
	      per_block_tolerance(4096));
	free(st);
}

static void test_same_seed_same_data(void **state)
{
	size_t len = 1 << 20;
	unsigned char *a = make_stream(25, 0, 4096, len, 9);
	unsigned char *b = make_stream(25, 0, 4096, len, 9);
	unsigned char *c = make_stream(25, 0, 4096, len, 10);
	assert_memory_equal(a, b, len);
	assert_true(memcmp(a, c, len) != 0);
	free(a);
	free(b);
	free(c);
}

/* The engine generates into slot buffers it reuses: whatever a buffer
 * held before (here the previous block, at every level), the block it gets
 * is the one a clean buffer would get, so the streams above are what the
 * engine writes. */
static void test_slot_reuse_same_stream(void **state)
{
	for (size_t l = 0; l < NLEVELS; l++) {
		for (size_t d = 0; d <= 40; d += 40) {
			enum { BS = 1536, N = 64 };
			unsigned char *want = make_stream(levels[l], (unsigned)d, BS, BS * N, 21);
			unsigned char slot[BS];
			struct datagen g;
			memset(slot, 0x5a, sizeof(slot));
			datagen_init(&g, levels[l], (unsigned)d, 21);
			for (size_t i = 0; i < N; i++) {
				datagen_block(&g, slot, BS);
				assert_memory_equal(slot, want + i * BS, BS);
			}
			free(want);
		}
	}
}

/* The engine's path: datagen_block_over into QD slot buffers in turn, each
 * with the tag its last fill returned. Whatever the sizes in between (a
 * 512-byte block moves the stamps' place in the page at p = 100), and with
 * one buffer scribbled on and its tag reset now and then (a read into it),
 * every block equals the one datagen_block makes in a clean stream; with
 * stream (datagen_stream, non-temporal stores, as the engine has it) too,
 * with the buffers skew bytes off a 64-byte boundary (16: stores the
 * non-temporal path cannot take, so plain ones). */
static void over_stream(unsigned p, unsigned d, const size_t *bs, size_t nbs, size_t n, int stream,
			size_t skew)
{
	enum { QD = 3 };
	size_t total = 0, max = 0;
	for (size_t i = 0; i < n; i++) {
		total += bs[i % nbs];
		max = bs[i % nbs] > max ? bs[i % nbs] : max;
	}
	unsigned char *want = malloc(total);
	unsigned char *slot = aligned_alloc(64, QD * max + 64);
	uint64_t tag[QD] = { 0 };
	struct datagen g, h;
	assert_non_null(want);
	assert_non_null(slot);
	datagen_init(&g, p, d, 33);
	datagen_init(&h, p, d, 33);
	datagen_stream(&h, stream);
	memset(slot, 0x5a, QD * max + 64);
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = bs[i % nbs];
		unsigned char *b = slot + skew + (i % QD) * max;
		if (i % 7 == 6) { /* a read landed in this buffer */
			memset(b, 0xc3, max);
			tag[i % QD] = 0;
		}
		datagen_block(&g, want + off, len);
		tag[i % QD] = datagen_block_over(&h, b, len, tag[i % QD]);
		assert_memory_equal(b, want + off, len);
		off += len;
	}
	free(want);
	free(slot);
}

static void test_block_over_same_stream(void **state)
{
	/* mixed: each buffer sees changing sizes; shifted: pages at 512
	 * bytes into the stream's pages, the same in each buffer for a while */
	static const size_t page[] = { 4096 }, big[] = { 65536 },
			    mixed[] = { 4096, 512, 8192, 4096 }, odd[] = { 1536, 4096 },
			    shifted[] = { 512, 4096, 4096, 4096, 4096, 4096, 4096, 4096 };
	static const struct {
		int stream;
		size_t skew;
	} ways[] = { { 0, 0 }, { 1, 0 }, { 1, 16 } };
	for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
		int st = ways[w].stream;
		size_t sk = ways[w].skew;
		for (size_t l = 0; l < NLEVELS; l++) {
			for (unsigned d = 0; d <= 40; d += 40) {
				over_stream(levels[l], d, page, 1, 40, st, sk);
				over_stream(levels[l], d, big, 1, 12, st, sk);
				over_stream(levels[l], d, mixed, 4, 60, st, sk);
				over_stream(levels[l], d, shifted, 8, 64, st, sk);
				over_stream(levels[l], d, odd, 2, 40, st, sk);
			}
		}
	}
}

/* The tag is a promise about the buffer: with it, the zeros in place are
 * kept, not written again (which is what makes a compressible block cheap);
 * so scribbling on them under a kept tag shows in the block. */
static void test_block_over_keeps_zeros(void **state)
{
	enum { BS = 65536 };
	unsigned char *b = malloc(BS);
	struct datagen g;
	assert_non_null(b);
	datagen_init(&g, 50, 0, 5);
	uint64_t tag = datagen_block_over(&g, b, BS, 0);
	assert_true(tag != 0);
	assert_int_equal(b[BS - 1], 0); /* a page's second half is zeros */
	b[BS - 1] = 0x77;
	tag = datagen_block_over(&g, b, BS, tag);
	assert_int_equal(b[BS - 1], 0x77);
	datagen_block_over(&g, b, BS, 0);
	assert_int_equal(b[BS - 1], 0);
	free(b);
}

/* datagen_random fills any length, tail included, with fresh bytes. */
static void test_random_any_length(void **state)
{
	struct datagen g;
	unsigned char buf[200], prev[200];
	datagen_init(&g, 0, 0, 1);
	memset(prev, 0, sizeof(prev));
	for (size_t n = 1; n < sizeof(buf); n += 13) {
		memset(buf, 0, sizeof(buf));
		datagen_random(&g, buf, n);
		for (size_t i = n; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 0);
		if (n >= 16)
			assert_true(memcmp(buf + n - 16, prev + n - 16, 16) != 0);
		memcpy(prev, buf, sizeof(buf));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_stream),
		cmocka_unit_test(test_per_block),
		cmocka_unit_test(test_layout_per_unit),
		cmocka_unit_test(test_dedupe_share),
		cmocka_unit_test(test_dedupe_mixed_sizes),
		cmocka_unit_test(test_dedupe_all_zeros),
		cmocka_unit_test(test_dedupe_keeps_compressibility),
		cmocka_unit_test(test_same_seed_same_data),
		cmocka_unit_test(test_slot_reuse_same_stream),
		cmocka_unit_test(test_block_over_same_stream),
		cmocka_unit_test(test_block_over_keeps_zeros),
		cmocka_unit_test(test_random_any_length),
	};
	return cmocka_run_group_tests_name("datagen", tests, NULL, NULL);
}
