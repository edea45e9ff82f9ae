/* Unit tests of stats: running statistics, the time-weighted rate
 * figures and the rule min <= avg <= max. */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "base/stats.h"
#include "base/util.h"

/* A phase's share and time left (wearmon status and the daemon's terminal
 * line): by bytes, by time, the larger share and the sooner end. */
static void test_phase_progress(void **state)
{
	static const struct {
		double done, goal, secs, duration, rate, fraction, eta;
	} cases[] = {
		/* by bytes: a quarter of 100 MiB moved, 25 MiB/s: 3 s left */
		{ 25 * MIB, 100 * MIB, 10, 0, 25, 0.25, 3 },
		/* by time: half of a 60 s phase, the bytes further behind */
		{ 10 * MIB, 100 * MIB, 30, 60, 1, 0.5, 30 },
		/* bytes ahead of time: their share, their sooner end */
		{ 80 * MIB, 100 * MIB, 6, 60, 10, 0.8, 2 },
		/* never 100 % while it runs */
		{ 100 * MIB, 100 * MIB, 5, 0, 20, 0.99, NAN },
		/* no goal, no duration, no rate: unknown */
		{ 5 * MIB, 0, 5, 0, 0, NAN, NAN },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct stats_phase f;
		stats_phase_progress(cases[i].done, cases[i].goal, cases[i].secs, cases[i].duration,
				     cases[i].rate, &f);
		if (isnan(cases[i].fraction))
			assert_true(isnan(f.fraction));
		else
			assert_true(fabs(f.fraction - cases[i].fraction) < 1e-9);
		if (isnan(cases[i].eta))
			assert_true(isnan(f.eta));
		else
			assert_true(fabs(f.eta - cases[i].eta) < 1e-9);
	}
}

static void test_runstat(void **state)
{
	static const double xs[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct runstat r;
	stats_run_init(&r);
	assert_true(stats_run_stddev(&r) == 0.0);
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		stats_run_add(&r, xs[i]);
	assert_true(fabs(r.mean - 5.0) < 1e-12);
	assert_true(fabs(stats_run_stddev(&r) - sqrt(32.0 / 7.0)) < 1e-12);
	assert_true(r.min == 2 && r.max == 9);
}

/* Two full samples at 346.2 and 346.8 MiB/s and a
 * last 0.35 s one at 200 MiB/s. The weighted mean is the phase average
 * (bytes over time) and lies between min and max. */
static void test_wstat_partial_sample(void **state)
{
	struct wstat w;
	struct rate_figs f;
	double avg = (346.2 + 346.8 + 200 * 0.35) / 2.35;

	stats_weighted_init(&w);
	stats_weighted_add(&w, 346.2, 1);
	stats_weighted_add(&w, 346.8, 1);
	stats_weighted_add(&w, 200, 0.35);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.nfull, 2);
	assert_true(fabs(w.mean - avg) < 1e-9);
	double m2 = (346.2 - avg) * (346.2 - avg) + (346.8 - avg) * (346.8 - avg) +
		    0.35 * (200 - avg) * (200 - avg);
	assert_true(fabs(stats_weighted_stddev(&w) - sqrt(m2 / 1.35)) < 1e-9);
	assert_int_equal(stats_rate_figs(&w, avg, &f), 0);
	assert_true(f.min == 200 && f.max == 346.8);
	assert_true(f.min <= f.avg && f.avg <= f.max);
	/* zero-length samples carry no time */
	stats_weighted_add(&w, 0, 0);
	assert_int_equal(w.n, 3);
}

/* Full samples only: the usual sample stddev (n - 1). */
static void test_wstat_full_is_sample_stddev(void **state)
{
	static const double xs[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct wstat w;

	stats_weighted_init(&w);
	assert_true(stats_weighted_stddev(&w) < 0);
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		stats_weighted_add(&w, xs[i], 1);
	assert_true(fabs(stats_weighted_stddev(&w) - sqrt(32.0 / 7.0)) < 1e-12);
}

/* Fewer than two full samples: min, max and stddev unknown (-1). */
static void test_rate_figs_too_short(void **state)
{
	static const struct {
		double x[2], w[2];
		unsigned n;
	} cases[] = {
		{ { 0 }, { 0 }, 0 },
		{ { 300 }, { 1 }, 1 },
		{ { 300, 100 }, { 1, 0.5 }, 2 },
		{ { 300, 100 }, { 0.6, 0.5 }, 2 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct wstat w;
		struct rate_figs f;
		stats_weighted_init(&w);
		for (unsigned i = 0; i < cases[c].n; i++)
			stats_weighted_add(&w, cases[c].x[i], cases[c].w[i]);
		assert_int_equal(stats_rate_figs(&w, 250, &f), 0);
		assert_true(f.avg == 250);
		assert_true(f.min < 0 && f.max < 0 && f.stddev < 0);
	}
}

/* The rule min <= avg <= max: rounding is mended quietly, a real miss is
 * mended and reported, unknown figures are left alone. */
static void test_rate_bound(void **state)
{
	static const struct {
		struct rate_figs in;
		double min, max;
		int ret;
	} cases[] = {
		{ { 100, 90, 110, 1 }, 90, 110, 0 },
		{ { 100, 100 + 1e-12, 110, 1 }, 100, 110, 0 },
		{ { 100, 90, 100 - 1e-12, 1 }, 90, 100, 0 },
		{ { 327.3, 346.2, 346.8, 0.4 }, 327.3, 346.8, -ERANGE },
		{ { 224.5, 228.4, 228.4, -1 }, 224.5, 228.4, -ERANGE },
		{ { 400, 346.2, 346.8, 0.4 }, 346.2, 400, -ERANGE },
		{ { 100, -1, -1, -1 }, -1, -1, 0 },
		{ { -1, 5, 6, 1 }, 5, 6, 0 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rate_figs f = cases[c].in;
		assert_int_equal(stats_rate_bound(&f), cases[c].ret);
		assert_true(f.min == cases[c].min && f.max == cases[c].max);
		assert_true(f.avg == cases[c].in.avg && f.stddev == cases[c].in.stddev);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_progress),
		cmocka_unit_test(test_runstat),
		cmocka_unit_test(test_wstat_partial_sample),
		cmocka_unit_test(test_wstat_full_is_sample_stddev),
		cmocka_unit_test(test_rate_figs_too_short),
		cmocka_unit_test(test_rate_bound),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
