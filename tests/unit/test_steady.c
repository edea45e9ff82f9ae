/* Unit tests of steady: the SNIA PTS detector on tables of synthetic rounds. */
#include "unit.h"

#include <math.h>

#include "steady.h"

#define NMAX 16

struct ss_case {
	const char *name;
	double y[NMAX];
	size_t n;
	int steady; /* steady_check over all n */
	int range_ok, excursion_ok;
	size_t first; /* steady_first */
};

static const struct ss_case cases[] = {
	{ "flat", { 100, 100, 100, 100, 100 }, 5, 1, 1, 1, 5 },
	{ "noisy but level", { 95, 105, 98, 102, 100 }, 5, 1, 1, 1, 5 },
	/* 96..104: range 8%, slope 2/round, excursion 8% */
	{ "gentle slope", { 96, 98, 100, 102, 104 }, 5, 1, 1, 1, 5 },
	/* 88..112: range 24% fails, excursion 24% fails */
	{ "drifting slope", { 88, 94, 100, 106, 112 }, 5, 0, 0, 0, 0 },
	/* slope 3.0: excursion 12% fails, range 12% passes */
	{ "slope only", { 94, 97, 100, 103, 106 }, 5, 0, 1, 0, 0 },
	/* range 30% with no trend: excursion 0 */
	{ "too wide a range", { 85, 115, 100, 115, 85 }, 5, 0, 0, 1, 0 },
	/* range exactly 20% of the mean (20 of 100), excursion 4% */
	{ "range on the limit", { 90, 110, 100, 100, 100 }, 5, 1, 1, 1, 5 },
	/* slope 2.5: excursion exactly 10% of the mean, range 10% */
	{ "excursion on the limit", { 95, 97.5, 100, 102.5, 105 }, 5, 1, 1, 1, 5 },
	/* range 20% on its limit, but slope 5: excursion 20% */
	{ "range on, excursion past", { 90, 95, 100, 105, 110 }, 5, 0, 1, 0, 0 },
	/* range a hair past 20% */
	{ "range just past", { 89.99, 110, 100, 100, 100 }, 5, 0, 0, 1, 0 },
	{ "fewer than 5 rounds", { 100, 100, 100, 100 }, 4, 0, 1, 1, 0 },
	{ "one round", { 100 }, 1, 0, 1, 1, 0 },
	{ "no throughput", { 0, 0, 0, 0, 0 }, 5, 0, 0, 0, 0 },
	/* a fresh drive falling to its steady level: windows ending at rounds
	 * 5..8 fail, the one ending at round 9 (90 100 100 100 100) holds */
	{ "steady only at round 9",
	  { 400, 300, 200, 120, 90, 100, 100, 100, 100, 100, 100 },
	  11,
	  1,
	  1,
	  1,
	  9 },
	{ "never steady (saw tooth)",
	  { 50, 150, 50, 150, 50, 150, 50, 150, 50, 150 },
	  10,
	  0,
	  0,
	  1,
	  0 },
};

static void test_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ss_case *c = &cases[i];
		struct steady_window w;
		int got = steady_check(c->y, c->n, &w);
		if (got != c->steady || w.range_ok != c->range_ok ||
		    w.excursion_ok != c->excursion_ok)
			fail_msg("%s: steady %d range_ok %d excursion_ok %d (range %.3f%% "
				 "excursion %.3f%%), want %d %d %d",
				 c->name, got, w.range_ok, w.excursion_ok, w.range_pct,
				 w.excursion_pct, c->steady, c->range_ok, c->excursion_ok);
		size_t first = steady_first(c->y, c->n, &w);
		if (first != c->first)
			fail_msg("%s: first steady round %zu, want %zu", c->name, first, c->first);
	}
}

/* The figures of one window, worked by hand. */
static void test_figures(void **state)
{
	static const double y[] = { 1000, 500, 96, 98, 100, 102, 104 };
	struct steady_window w;
	assert_int_equal(steady_check(y, 7, &w), 1);
	assert_int_equal(w.n, 5);
	assert_true(fabs(w.mean - 100) < 1e-9);
	assert_true(fabs(w.range - 8) < 1e-9 && fabs(w.range_pct - 8) < 1e-9);
	assert_true(fabs(w.slope - 2) < 1e-9);
	assert_true(fabs(w.excursion - 8) < 1e-9 && fabs(w.excursion_pct - 8) < 1e-9);
	/* a falling slope counts by its magnitude */
	static const double down[] = { 104, 102, 100, 98, 96 };
	assert_int_equal(steady_check(down, 5, &w), 1);
	assert_true(fabs(w.slope + 2) < 1e-9 && fabs(w.excursion - 8) < 1e-9);
}

/* steady_first reports the window it stopped at; without one, the last. */
static void test_first_window(void **state)
{
	static const double y[] = { 400, 300, 200, 120, 90, 100, 100, 100, 100, 100 };
	struct steady_window w;
	assert_int_equal(steady_first(y, 10, &w), 9);
	assert_true(fabs(w.mean - 98) < 1e-9 && fabs(w.range - 10) < 1e-9);
	assert_true(fabs(w.excursion - 8) < 1e-9);
	assert_int_equal(steady_first(y, 8, &w), 0);
	assert_int_equal(w.n, 5);
	assert_true(fabs(w.mean - 102) < 1e-9);
	assert_int_equal(steady_first(y, 0, &w), 0);
	assert_int_equal(w.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_first_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
