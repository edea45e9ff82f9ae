/* test_hstall: the stall accounting fed with timestamps (ticks late, on
 * time, early; suspends seen as CLOCK_BOOTTIME running ahead), stalls cut
 * along sample intervals, and the ticker thread started and stopped. */
#include "unit.h"

#include "base/hstall.h"

#define MS 1000000ull
#define S 1000000000ull
#define P HSTALL_TICK_NS

static void test_tick_table(void **state)
{
	static const struct {
		const char *what;
		uint64_t mono, boot; /* after a tick at (100 s, 200 s) */
		int want;
		uint64_t start, end, susp;
	} c[] = {
		{ "on time", 100 * S + P, 200 * S + P, 0, 0, 0, 0 },
		{ "a little late: scheduling", 100 * S + P + 900 * MS, 200 * S + P + 900 * MS, 0, 0,
		  0, 0 },
		{ "late by the minimum", 100 * S + P + S, 200 * S + P + S, 1, 100 * S + P,
		  100 * S + P + S, 0 },
		{ "stopped 6 s", 100 * S + P + 6 * S, 200 * S + P + 6 * S, 1, 100 * S + P,
		  100 * S + P + 6 * S, 0 },
		{ "woken early by a request", 100 * S + 10 * MS, 200 * S + 10 * MS, 0, 0, 0, 0 },
		{ "suspended 30 s: CLOCK_MONOTONIC on time", 100 * S + P, 200 * S + P + 30 * S, 1,
		  100 * S + P, 100 * S + P, 30 * S },
		{ "suspended and late", 100 * S + P + 2 * S, 200 * S + P + 7 * S, 1, 100 * S + P,
		  100 * S + P + 2 * S, 5 * S },
		{ "suspended under the minimum, late over it", 100 * S + P + 3 * S,
		  200 * S + P + 3 * S + 500 * MS, 1, 100 * S + P, 100 * S + P + 3 * S, 0 },
		{ "CLOCK_BOOTTIME behind: no suspend", 100 * S + P, 200 * S, 0, 0, 0, 0 },
		{ "a clock going back: nothing", 99 * S, 199 * S, 0, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct hstall_watch w = { 0 };
		struct hstall s = { 0 };
		assert_int_equal(hstall_tick(&w, 100 * S, 200 * S, P, &s), 0); /* the first */
		int got = hstall_tick(&w, c[i].mono, c[i].boot, P, &s);
		if (got != c[i].want)
			fail_msg("%s: got %d want %d", c[i].what, got, c[i].want);
		if (got &&
		    (s.start != c[i].start || s.end != c[i].end || s.suspended_ns != c[i].susp))
			fail_msg("%s: [%llu, %llu) +%llu", c[i].what, (unsigned long long)s.start,
				 (unsigned long long)s.end, (unsigned long long)s.suspended_ns);
		/* the watch moves on: the same tick again is early, no stall */
		assert_int_equal(hstall_tick(&w, c[i].mono, c[i].boot, P, &s), 0);
	}
}

/* A stream of ticks as the ticker sees them: on time, then nothing for 6 s
 * (SIGSTOP), then on time again. One stall, of the stop less one period at
 * most. */
static void test_tick_stream(void **state)
{
	struct hstall_watch w = { 0 };
	struct hstall s, got[4];
	uint64_t t = 5 * S;
	int n = 0;

	for (int i = 0; i < 50; i++, t += P)
		if (hstall_tick(&w, t, t + 7 * S, P, &s))
			got[n++] = s;
	t += 6 * S - P;                               /* the tick due at t - P + P came 6 s later */
	for (int i = 0; i < 50; i++, t += P + 3 * MS) /* a busy host: 3 ms late each */
		if (n < 4 && hstall_tick(&w, t, t + 7 * S, P, &s))
			got[n++] = s;
	assert_int_equal(n, 1);
	assert_true(got[0].end - got[0].start >= 6 * S - P);
	assert_true(got[0].end - got[0].start <= 6 * S);
	assert_int_equal(got[0].suspended_ns, 0);
}

static void test_within_table(void **state)
{
	static const struct hstall v[] = {
		{ 10 * S, 20 * S, 0 },
		{ 30 * S, 40 * S, 5 * S },
	};
	static const struct {
		uint64_t a, b, want, susp;
	} c[] = {
		{ 0, 10 * S, 0, 0 },              /* before: touching is not overlapping */
		{ 5 * S, 15 * S, 5 * S, 0 },      /* the start */
		{ 12 * S, 18 * S, 6 * S, 0 },     /* inside */
		{ 15 * S, 35 * S, 10 * S, 0 },    /* the end of one, the start of the other */
		{ 35 * S, 40 * S, 5 * S, 5 * S }, /* the suspend goes where its stall ends */
		{ 40 * S, 50 * S, 0, 0 },         /* after: the suspend is not counted again */
		{ 0, 100 * S, 20 * S, 5 * S },    /* everything */
		{ 25 * S, 25 * S, 0, 0 },         /* empty */
		{ 20 * S, 10 * S, 0, 0 },         /* backwards */
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t susp = 0;
		uint64_t got = hstall_within(v, 2, c[i].a, c[i].b, &susp);
		if (got != c[i].want || susp != c[i].susp)
			fail_msg("case %zu: got %llu +%llu", i, (unsigned long long)got,
				 (unsigned long long)susp);
	}
	assert_int_equal(hstall_within(v, 2, 0, 100 * S, NULL), 20 * S);
	assert_int_equal(hstall_within(NULL, 0, 0, 100 * S, NULL), 0);
}

/* Consecutive samples share the stalled time out: each stalled
 * nanosecond in exactly one sample, as every byte is. */
static void test_within_samples_partition(void **state)
{
	static const struct hstall v[] = { { 3300 * MS, 9700 * MS, 2 * S } };
	uint64_t sum = 0, susp = 0, in3 = 0, in9 = 0;

	for (uint64_t a = 0; a < 20 * S; a += S) {
		uint64_t x = hstall_within(v, 1, a, a + S, &susp);
		sum += x;
		in3 = a == 3 * S ? x : in3;
		in9 = a == 9 * S ? x : in9;
	}
	assert_int_equal(sum, 6400 * MS);
	assert_int_equal(susp, 2 * S);
	assert_int_equal(in3, 700 * MS);
	assert_int_equal(in9, 700 * MS);
}

/* The ticker starts, answers at once, sees no stall on a running host,
 * and stops; twice, and a second start is harmless. */
static void test_ticker(void **state)
{
	struct hstall v[HSTALL_KEEP];

	assert_int_equal(hstall_since(0, v, HSTALL_KEEP), 0); /* not started: none */
	for (int round = 0; round < 2; round++) {
		assert_int_equal(hstall_init(), 0);
		assert_int_equal(hstall_init(), 0);
		for (int i = 0; i < 20; i++)
			assert_int_equal(hstall_since(0, v, HSTALL_KEEP), 0);
		hstall_fini();
		hstall_fini();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tick_table),
		cmocka_unit_test(test_tick_stream),
		cmocka_unit_test(test_within_table),
		cmocka_unit_test(test_within_samples_partition),
		cmocka_unit_test(test_ticker),
	};
	return cmocka_run_group_tests_name("hstall", tests, NULL, NULL);
}
