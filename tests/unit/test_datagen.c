/* Unit tests of datagen: compressibility measured with zlib, uniqueness. */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "datagen.h"

/* Percent of buf that zlib (level 6) removes. */
static double compressed_away(const void *buf, size_t len)
{
	uLongf out_len = compressBound(len);
	unsigned char *out = malloc(out_len);
	assert_non_null(out);
	assert_int_equal(compress2(out, &out_len, buf, len, 6), Z_OK);
	free(out);
	return 100.0 * (1.0 - (double)out_len / (double)len);
}

/* Each level at 4 KiB and 1 MiB blocks lands within 3 points, measured over
 * blocks exactly as the engine writes them (filled once, stamped per write). */
static void test_compressibility_levels(void **state)
{
	static const unsigned levels[] = { 0, 2, 25, 50, 75, 98, 100 };
	static const size_t sizes[] = { 4096, 1 << 20 };
	for (size_t s = 0; s < 2; s++) {
		size_t bs = sizes[s];
		unsigned char *buf = malloc(bs);
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
			struct dgen g;
			dgen_init(&g, levels[l], 42 + l);
			dgen_fill(&g, buf, bs);
			double sum = 0;
			for (int k = 0; k < 8; k++) {
				dgen_stamp(&g, buf, bs);
				sum += compressed_away(buf, bs);
			}
			double got = sum / 8;
			double want = levels[l];
			if (fabs(got - want) > 3.0)
				fail_msg("compressibility %u%% at %zu bytes: measured %.2f%%", levels[l], bs, got);
		}
		free(buf);
	}
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
	/* the compressible share is zeros at the end of each 512-byte chunk */
	for (int i = 256; i < 512; i++)
		assert_int_equal(x[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compressibility_levels),
		cmocka_unit_test(test_stamps_unique),
		cmocka_unit_test(test_pages_within_block_differ),
		cmocka_unit_test(test_same_seed_same_data),
	};
	return cmocka_run_group_tests_name("datagen", tests, NULL, NULL);
}
