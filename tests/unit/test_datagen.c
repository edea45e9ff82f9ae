/* Unit tests of datagen: compressibility as defined in datagen.h (zstd
 * level 1 per block, per 4 KiB page of consecutive small blocks), measured
 * on blocks made exactly as the engine makes them, and uniqueness. */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datagen.h"

/* Every level at every block size, 512 B to 16 MiB: the stream of
 * consecutive writes of one slot buffer (filled once, dgen_block before
 * each write, as the engine does with queue_depth 1, the worst case for
 * small blocks) lands within 3 points in every unit measured. */
static void test_compressibility_table(void **state)
{
	static const unsigned levels[] = { 0, 2, 25, 50, 75, 98, 100 };
	static const size_t sizes[] = { 512, 4096, 65536, 1 << 20, 16 << 20 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t bs = sizes[s], unit = bs < DGEN_PAGE ? DGEN_PAGE : bs;
		size_t units = bs >= (1 << 20) ? 1 : 8;
		unsigned char *slot = malloc(bs), *stream = malloc(unit * units);
		assert_non_null(slot);
		assert_non_null(stream);
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
			struct dgen g;
			dgen_init(&g, levels[l], 42 + l);
			dgen_fill(&g, slot, bs);
			for (size_t off = 0; off < unit * units; off += bs) {
				dgen_block(&g, slot, bs);
				memcpy(stream + off, slot, bs);
			}
			for (size_t u = 0; u < units; u++) {
				double got = dgen_measure(stream + u * unit, unit, bs);
				if (fabs(got - levels[l]) > 3.0)
					fail_msg("compressibility %u%% at %zu-byte blocks: unit %zu "
						 "measured %.2f%%", levels[l], bs, u, got);
			}
			print_message("  %8zu B %3u%%: %6.2f%%\n", bs, levels[l],
				      dgen_measure(stream, unit * units, bs));
		}
		free(slot);
		free(stream);
	}
}

/* Small blocks are generated afresh: N consecutive 512-byte blocks of one
 * slot are pairwise different beyond their stamps. */
static void test_small_blocks_fresh(void **state)
{
	enum { BS = 512, N = 64 };
	struct dgen g;
	unsigned char *v = malloc(BS * N);
	dgen_init(&g, 0, 5);
	dgen_fill(&g, v, BS);
	for (int i = 1; i < N; i++) {
		memcpy(v + i * BS, v + (i - 1) * BS, BS);
		dgen_block(&g, v + i * BS, BS);
	}
	for (int a = 0; a < N; a++)
		for (int b = a + 1; b < N; b++)
			assert_true(memcmp(v + a * BS + 8, v + b * BS + 8, BS - 8) != 0);
	free(v);
}

/* Consecutive writes of the same slot never carry identical contents. */
static void test_stamps_unique(void **state)
{
	enum { BS = 4096, N = 2000 };
	struct dgen g;
	unsigned char *prev = malloc(BS), *buf = malloc(BS);
	dgen_init(&g, 100, 1);
	dgen_fill(&g, buf, BS);
	memcpy(prev, buf, BS);
	for (int i = 0; i < N; i++) {
		dgen_stamp(&g, buf, BS);
		assert_true(memcmp(prev, buf, BS) != 0);
		memcpy(prev, buf, BS);
	}
	free(prev);
	free(buf);
}

/* Every 4 KiB of a large block carries its own stamp, so a controller that
 * deduplicates 4 KiB pages finds no two equal pages inside a block either. */
static void test_pages_within_block_differ(void **state)
{
	enum { BS = 1 << 16 };
	struct dgen g;
	unsigned char *buf = malloc(BS);
	dgen_init(&g, 100, 3);
	dgen_fill(&g, buf, BS);
	dgen_stamp(&g, buf, BS);
	for (int a = 0; a < BS / 4096; a++)
		for (int b = a + 1; b < BS / 4096; b++)
			assert_true(memcmp(buf + a * 4096, buf + b * 4096, 4096) != 0);
	free(buf);
}

static void test_same_seed_same_data(void **state)
{
	struct dgen a, b;
	unsigned char x[1024], y[1024];
	dgen_init(&a, 50, 9);
	dgen_init(&b, 50, 9);
	dgen_fill(&a, x, sizeof(x));
	dgen_fill(&b, y, sizeof(y));
	assert_memory_equal(x, y, sizeof(x));
	/* the compressible share is zeros at the end of each chunk (here the
	 * whole 1 KiB buffer, shorter than a chunk) */
	for (int i = 512; i < 1024; i++)
		assert_int_equal(x[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compressibility_table),
		cmocka_unit_test(test_small_blocks_fresh),
		cmocka_unit_test(test_stamps_unique),
		cmocka_unit_test(test_pages_within_block_differ),
		cmocka_unit_test(test_same_seed_same_data),
	};
	return cmocka_run_group_tests_name("datagen", tests, NULL, NULL);
}
