/* test_util: unit parsing, formatting and string helpers. */
#include "unit.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "base/util.h"

/* Fail naming the case, since one test walks a whole table. */
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail_msg(__VA_ARGS__);                                                     \
	} while (0)

struct bytes_case {
	const char *in;
	int rc;
	uint64_t want;
};

static const struct bytes_case bytes_cases[] = {
	{ "0", 0, 0 },
	{ "4096", 0, 4096 },
	{ "4k", 0, 4096 },
	{ "4K", 0, 4096 },
	{ "128KiB", 0, 131072 },
	{ "128kib", 0, 131072 },
	{ "1.5G", 0, 1610612736ULL },
	{ "2T", 0, 2ULL << 40 },
	{ "1P", 0, 1ULL << 50 },
	{ "64M", 0, 64ULL << 20 },
	{ "64MiB", 0, 64ULL << 20 },
	{ "1kB", 0, 1000 },
	{ "1KB", 0, 1000 },
	{ "2MB", 0, 2000000 },
	{ "1GB", 0, 1000000000ULL },
	{ "1TB", 0, 1000000000000ULL },
	{ "512B", 0, 512 },
	{ " 8 k ", 0, 8192 },
	{ "0.5k", 0, 512 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "12Q", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "   ", -EINVAL, 0 },
	{ "k", -EINVAL, 0 },
	{ "4 k b", -EINVAL, 0 },
	{ "1.", -EINVAL, 0 },
	{ ".5k", -EINVAL, 0 },
	{ "1..5k", -EINVAL, 0 },
	{ "1e3", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1.1k", -EINVAL, 0 }, /* 1126.4 bytes: not whole */
	{ "10%", -EINVAL, 0 },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "99999999999999999999999", -ERANGE, 0 },
	{ "16384P", -ERANGE, 0 }, /* 2^64 */
};

static void test_parse_bytes(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bytes_cases); i++) {
		const struct bytes_case *c = &bytes_cases[i];
		uint64_t v = 12345;
		int rc = util_parse_bytes(c->in, &v);

		EXPECT(rc == c->rc, "\"%s\": rc %d, want %d", c->in, rc, c->rc);
		EXPECT(v == (rc == 0 ? c->want : 12345), "\"%s\": %llu, want %llu", c->in,
		       (unsigned long long)v, (unsigned long long)c->want);
	}
}

struct qty_case {
	const char *in;
	int rc;
	int is_percent;
	double percent;
	uint64_t bytes;
};

static const struct qty_case qty_cases[] = {
	{ "10%", 0, 1, 10.0, 0 },    { "12.5%", 0, 1, 12.5, 0 },   { "0%", 0, 1, 0.0, 0 },
	{ "100%", 0, 1, 100.0, 0 },  { " 80 % ", 0, 1, 80.0, 0 },  { "1G", 0, 0, 0, 1ULL << 30 },
	{ "4096", 0, 0, 0, 4096 },   { "101%", -ERANGE, 0, 0, 0 }, { "-5%", -EINVAL, 0, 0, 0 },
	{ "%", -EINVAL, 0, 0, 0 },   { "5%%", -EINVAL, 0, 0, 0 },  { "1G%", -EINVAL, 0, 0, 0 },
	{ "abc", -EINVAL, 0, 0, 0 }, { "", -EINVAL, 0, 0, 0 },
};

static void test_parse_qty(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(qty_cases); i++) {
		const struct qty_case *c = &qty_cases[i];
		struct qty q = { 0 };
		int rc = util_parse_qty(c->in, &q);

		EXPECT(rc == c->rc, "\"%s\": rc %d, want %d", c->in, rc, c->rc);
		if (rc)
			continue;
		EXPECT(q.is_percent == c->is_percent, "\"%s\": is_percent", c->in);
		EXPECT(fabs(q.percent - c->percent) < 1e-9 && q.bytes == c->bytes,
		       "\"%s\": %g%% %llu bytes", c->in, q.percent, (unsigned long long)q.bytes);
	}
}

struct resolve_case {
	struct qty q;
	uint64_t capacity, align, want;
};

static const struct resolve_case resolve_cases[] = {
	{ { .bytes = 1000 }, 1ULL << 30, 4096, 1000 }, /* bytes untouched */
	{ { .percent = 50, .is_percent = 1 }, 1ULL << 30, 4096, 1ULL << 29 },
	{ { .percent = 100, .is_percent = 1 }, 1000000, 512, 999936 },
	{ { .percent = 10, .is_percent = 1 }, 10000, 512, 512 },
	{ { .percent = 12.5, .is_percent = 1 }, 8000, 1, 1000 },
	{ { .percent = 0, .is_percent = 1 }, 1ULL << 40, 4096, 0 },
	{ { .percent = 80, .is_percent = 1 }, 16ULL << 40, 4096, 14073748832256ULL },
	{ { .percent = 1, .is_percent = 1 }, 1000, 512, 0 },
};

static void test_qty_resolve(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(resolve_cases); i++) {
		const struct resolve_case *c = &resolve_cases[i];

		uint64_t v = util_qty_resolve(&c->q, c->capacity, c->align);

		EXPECT(v == c->want, "case %zu: %llu, want %llu", i, (unsigned long long)v,
		       (unsigned long long)c->want);
	}
}

struct dur_case {
	const char *in;
	int rc;
	double want;
};

static const struct dur_case dur_cases[] = {
	{ "0", 0, 0 },
	{ "300", 0, 300 },
	{ "300s", 0, 300 },
	{ "5m", 0, 300 },
	{ "5min", 0, 300 },
	{ "1.5h", 0, 5400 },
	{ "2d", 0, 172800 },
	{ "250ms", 0, 0.25 },
	{ "0.1s", 0, 0.1 },
	{ "100us", 0, 0.0001 },
	{ " 10 s ", 0, 10 },
	{ "10S", 0, 10 },
	{ "5x", -EINVAL, 0 },
	{ "-1s", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "s", -EINVAL, 0 },
	{ "1e400", -EINVAL, 0 },
	{ "1 2s", -EINVAL, 0 },
	{ "99999999999d", -ERANGE, 0 },
};

static void test_parse_duration(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(dur_cases); i++) {
		const struct dur_case *c = &dur_cases[i];
		double v = -1;
		int rc = util_parse_duration(c->in, &v);

		EXPECT(rc == c->rc, "\"%s\": rc %d, want %d", c->in, rc, c->rc);
		EXPECT(rc || fabs(v - c->want) < 1e-9, "\"%s\": %g, want %g", c->in, v, c->want);
	}
}

struct bool_case {
	const char *in;
	int rc, want;
};

static const struct bool_case bool_cases[] = {
	{ "yes", 0, 1 },         { "no", 0, 0 },
	{ "true", 0, 1 },        { "false", 0, 0 },
	{ "on", 0, 1 },          { "off", 0, 0 },
	{ "1", 0, 1 },           { "0", 0, 0 },
	{ "YES", 0, 1 },         { " No ", 0, 0 },
	{ "maybe", -EINVAL, 0 }, { "", -EINVAL, 0 },
	{ "2", -EINVAL, 0 },     { "yes please", -EINVAL, 0 },
	{ "y", -EINVAL, 0 },
};

static void test_parse_bool(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bool_cases); i++) {
		const struct bool_case *c = &bool_cases[i];
		int v = -1;
		int rc = util_parse_bool(c->in, &v);

		EXPECT(rc == c->rc, "\"%s\": rc %d, want %d", c->in, rc, c->rc);
		EXPECT(rc || v == c->want, "\"%s\": %d, want %d", c->in, v, c->want);
	}
}

struct int_case {
	const char *in;
	long long min, max;
	int rc;
	long long want;
};

static const struct int_case int_cases[] = {
	{ "32", 1, 1024, 0, 32 },        { "1", 1, 1024, 0, 1 },
	{ "1024", 1, 1024, 0, 1024 },    { " 7 ", 0, 10, 0, 7 },
	{ "-3", -5, 5, 0, -3 },          { "0", 1, 1024, -ERANGE, 0 },
	{ "1025", 1, 1024, -ERANGE, 0 }, { "99999999999999999999", 0, LLONG_MAX, -ERANGE, 0 },
	{ "abc", 0, 10, -EINVAL, 0 },    { "", 0, 10, -EINVAL, 0 },
	{ "12x", 0, 100, -EINVAL, 0 },   { "1.5", 0, 100, -EINVAL, 0 },
	{ "4k", 0, 100000, -EINVAL, 0 },
};

static void test_parse_int(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(int_cases); i++) {
		const struct int_case *c = &int_cases[i];
		long long v = -1;
		int rc = util_parse_int(c->in, c->min, c->max, &v);

		EXPECT(rc == c->rc, "\"%s\": rc %d, want %d", c->in, rc, c->rc);
		EXPECT(rc || v == c->want, "\"%s\": %lld, want %lld", c->in, v, c->want);
	}
}

struct double_case {
	const char *in;
	int rc;
	double want;
};

static const struct double_case double_cases[] = {
	{ "2.5", 0, 2.5 },      { "1", 0, 1 },           { "-0.5", 0, -0.5 },
	{ "1e3", 0, 1000 },     { " 3 ", 0, 3 },         { "", -EINVAL, 0 },
	{ "inf", -EINVAL, 0 },  { "nan", -EINVAL, 0 },   { "0x10", -EINVAL, 0 },
	{ "1.5x", -EINVAL, 0 }, { "1e999", -EINVAL, 0 }, { "e", -EINVAL, 0 },
	{ "1 2", -EINVAL, 0 },
};

static void test_parse_double(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(double_cases); i++) {
		const struct double_case *c = &double_cases[i];
		double v = -1;
		int rc = util_parse_double(c->in, &v);

		EXPECT(rc == c->rc, "\"%s\": rc %d, want %d", c->in, rc, c->rc);
		EXPECT(rc || fabs(v - c->want) < 1e-12, "\"%s\": %g, want %g", c->in, v, c->want);
	}
}

static void test_fmt_bytes(void **state)
{
	static const struct {
		uint64_t in;
		const char *want;
	} cases[] = {
		{ 0, "0 B" },
		{ 512, "512 B" },
		{ 1023, "1023 B" },
		{ 1024, "1.00 KiB" },
		{ 1536, "1.50 KiB" },
		{ 1610612736ULL, "1.50 GiB" },
		{ 1ULL << 40, "1.00 TiB" },
		{ UINT64_MAX, "16.00 EiB" },
	};
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_string_equal(util_fmt_bytes(cases[i].in, buf, sizeof(buf)), cases[i].want);
}

static void test_iso_now(void **state)
{
	char buf[32];
	int y, mo, d, h, mi, s, ms;
	char z;

	assert_ptr_equal(util_iso_now(buf, sizeof(buf)), buf);
	assert_int_equal(strlen(buf), 24);
	assert_int_equal(
		sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &s, &ms, &z), 8);
	assert_true(y >= 2024);
	assert_int_equal(z, 'Z');
}

static void test_clocks(void **state)
{
	double a = util_now();
	uint64_t na = util_now_ns();
	double b = util_now();
	uint64_t nb = util_now_ns();

	assert_true(b >= a);
	assert_true(nb >= na);
	assert_true(fabs((double)na / 1e9 - a) < 1.0);
}

static void test_strlcpy(void **state)
{
	char buf[5];

	assert_int_equal(util_strlcpy(buf, "abc", sizeof(buf)), 3);
	assert_string_equal(buf, "abc");
	assert_int_equal(util_strlcpy(buf, "abcdefgh", sizeof(buf)), 8);
	assert_string_equal(buf, "abcd");
	buf[0] = 'x';
	assert_int_equal(util_strlcpy(buf, "zz", 0), 2);
	assert_int_equal(buf[0], 'x');
}

static void test_strip(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "  a b  ", "a b" }, { "\tx\n", "x" },     { "", "" },
		{ "   ", "" },        { "plain", "plain" },
	};
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		util_strlcpy(buf, cases[i].in, sizeof(buf));
		assert_ptr_equal(util_strip(buf), buf);
		assert_string_equal(buf, cases[i].want);
	}
}

/* I/O buffers: whole 2 MiB, aligned to them, writable end to end, and
 * gone after util_buf_free (msync fails with ENOMEM on unmapped pages). */
static void test_buf_alloc(void **state)
{
	static const size_t sizes[] = { 0, 1, 4096, 2u << 20, (2u << 20) + 1, 8u << 20 };
	const size_t huge = 2u << 20;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t len = 0;
		unsigned char *b = util_buf_alloc(sizes[i], &len);
		assert_non_null(b);
		assert_int_equal((uintptr_t)b % huge, 0);
		assert_int_equal(len % huge, 0);
		assert_true(len >= sizes[i] && len >= huge && len < sizes[i] + huge + 1);
		b[0] = 1;
		b[len - 1] = 2;
		assert_int_equal(msync(b, len, MS_ASYNC), 0);
		util_buf_free(b, len);
		errno = 0;
		assert_int_equal(msync(b, len, MS_ASYNC), -1);
		assert_int_equal(errno, ENOMEM);
	}
	util_buf_free(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_bytes),  cmocka_unit_test(test_parse_qty),
		cmocka_unit_test(test_qty_resolve),  cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_bool),   cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_parse_double), cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_iso_now),      cmocka_unit_test(test_clocks),
		cmocka_unit_test(test_strlcpy),      cmocka_unit_test(test_strip),
		cmocka_unit_test(test_buf_alloc),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
