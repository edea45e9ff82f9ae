/* Unit tests of verify: CRC-32C check values, stamped sectors pass, and
 * every kind of damage is caught at the right offset. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "io/verify.h"

/* Standard check values (RFC 3720 B.4 and the CRC catalogue). */
static void test_crc32c_check_values(void **state)
{
	static unsigned char zeros[32], ones[32], inc[32];
	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	assert_int_equal(verify_crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(verify_crc32c(0, zeros, 32), 0x8A9136AAu);
	assert_int_equal(verify_crc32c(0, ones, 32), 0x62A8AB43u);
	assert_int_equal(verify_crc32c(0, inc, 32), 0x46DD794Eu);
	assert_int_equal(verify_crc32c(0, "", 0), 0);
}

/* Continuing a CRC over pieces, at any alignment, equals one pass. */
static void test_crc32c_incremental(void **state)
{
	static unsigned char buf[1000];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	uint32_t whole = verify_crc32c(0, buf, sizeof(buf));
	for (size_t cut = 0; cut < 40; cut++) {
		uint32_t c = verify_crc32c(0, buf, cut);
		assert_int_equal(verify_crc32c(c, buf + cut, sizeof(buf) - cut), whole);
	}
	assert_int_equal(verify_crc32c(0, buf + 3, 997),
			 verify_crc32c(verify_crc32c(0, buf + 3, 500), buf + 503, 497));
}

static unsigned char *stamped(size_t len, uint64_t off)
{
	void *mem = NULL;
	assert_int_equal(posix_memalign(&mem, 4096, len), 0);
	unsigned char *b = mem;
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(rand() & 0xff);
	verify_stamp(b, len, off, 7, 42);
	return b;
}

static void test_stamp_then_check(void **state)
{
	static const size_t lens[] = { 512, 4096, 65536, 1u << 20 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *b = stamped(lens[i], 1u << 30);
		uint64_t bad = 0;
		enum verify_reason why = VERIFY_OK;
		assert_int_equal(verify_check(b, lens[i], 1u << 30, &bad, &why), 0);
		struct verify_header h;
		memcpy(&h, b + 512 * (lens[i] / 512 - 1), sizeof(h));
		assert_int_equal(h.magic, VERIFY_MAGIC);
		assert_int_equal(h.offset, (1u << 30) + lens[i] - 512);
		assert_int_equal(h.generation, 7);
		assert_int_equal(h.seed, 42);
		free(b);
	}
}

struct damage {
	const char *name;
	size_t at;         /* byte flipped, or SIZE_MAX: read elsewhere */
	uint64_t read_off; /* offset the check assumes */
	unsigned nbad;
	uint64_t bad;
	enum verify_reason why;
};

static void test_damage_found(void **state)
{
	enum { LEN = 8192, OFF = 1 << 20 };
	static const struct damage cases[] = {
		{ "payload bit in sector 3", 3 * 512 + 100, OFF, 1, OFF + 3 * 512, VERIFY_BAD_CRC },
		{ "crc field", 5 * 512 + 5, OFF, 1, OFF + 5 * 512, VERIFY_BAD_CRC },
		{ "generation", 2 * 512 + 17, OFF, 1, OFF + 2 * 512, VERIFY_BAD_CRC },
		{ "magic", 15 * 512 + 1, OFF, 1, OFF + 15 * 512, VERIFY_BAD_MAGIC },
		{ "misplaced", SIZE_MAX, OFF + 4096, 16, OFF + 4096, VERIFY_BAD_OFFSET },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct damage *c = &cases[i];
		unsigned char *b = stamped(LEN, OFF);
		uint64_t bad = 0;
		enum verify_reason why = VERIFY_OK;
		if (c->at != SIZE_MAX)
			b[c->at] ^= 0x10;
		print_message("  %s\n", c->name);
		assert_int_equal(verify_check(b, LEN, c->read_off, &bad, &why), c->nbad);
		assert_int_equal(bad, c->bad);
		assert_int_equal(why, c->why);
		assert_non_null(strstr(verify_reason_name(why), " "));
		free(b);
	}
}

/* Zeros (a trimmed or never written sector) are not wearmon data. */
static void test_zeros_rejected(void **state)
{
	unsigned char *b = calloc(1, 4096);
	uint64_t bad = 1;
	enum verify_reason why = VERIFY_OK;
	assert_int_equal(verify_check(b, 4096, 0, &bad, &why), 8);
	assert_int_equal(bad, 0);
	assert_int_equal(why, VERIFY_BAD_MAGIC);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_check_values),
		cmocka_unit_test(test_crc32c_incremental),
		cmocka_unit_test(test_stamp_then_check),
		cmocka_unit_test(test_damage_found),
		cmocka_unit_test(test_zeros_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
