/* Unit tests of eol: the end-of-life forecast from a wear indicator that
 * moves in whole percent, on tables of series: steady, noisy, sparse,
 * flat, too few steps, a glitch and a reset of the indicator, times going
 * back, a drive past its end, the rating and the words. */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/eol.h"

#define DAY 86400.0
#define T0 1.8e9 /* 2027-01-15 */
#define MAXR 4096

/* A drive wearing under a steady workload: host bytes at host_per_day,
 * wear at pct_per_day on average, each reading span's rate off by up to
 * noise (a fraction) at random; readings every every_days, each moved by
 * up to jitter of that at random. */
struct gen {
	double pct_per_day, host_per_day, every_days, noise, jitter, start_used;
	unsigned long long seed;
	int drive_host; /* 0: only wearmond's host counter */
};

static double rnd(unsigned long long *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*x >> 11) * 0x1p-53;
}

/* Readings until the indicator reads upto (or MAXR); the true time and
 * host bytes at 100 % (the drive worn on past the readings) into *end_t,
 * *end_h. Returns how many readings. */
static size_t generate(const struct gen *g, double upto, struct eol_reading *r, double *end_t,
		       double *end_h)
{
	unsigned long long x = g->seed;
	double t = 0, u = g->start_used, h = 0;
	size_t n = 0;
	int reading = 1;

	*end_t = *end_h = NAN;
	while (n < MAXR && (reading || isnan(*end_t))) {
		double used = floor(u);
		if (reading)
			r[n++] = (struct eol_reading){ T0 + t * DAY, used, g->drive_host ? h : NAN,
						       h * 0.9, 2.5 * h };
		reading = reading && used < upto;
		double dt = g->every_days * (1 + g->jitter * (2 * rnd(&x) - 1));
		double du = g->pct_per_day * dt * (1 + g->noise * (2 * rnd(&x) - 1));
		double dh = g->host_per_day * dt;
		if (u < 100 && u + du >= 100) {
			double f = (100 - u) / du;
			*end_t = T0 + (t + f * dt) * DAY;
			*end_h = h + f * dh;
		}
		t += dt;
		u += du;
		h += dh;
	}
	return n;
}

static struct eol_reading rs[MAXR];

/* A steady drive read often: the forecast from 30 % of its life lands
 * within 2 % of the true end, and its interval covers it, for time and
 * host bytes; at 10 % the interval still covers it. */
static void test_steady(void **state)
{
	const struct gen g = { .pct_per_day = 0.5,
			       .host_per_day = 3e12,
			       .every_days = 0.3,
			       .seed = 1,
			       .drive_host = 1 };
	struct eol_forecast f;
	double et, eh;
	double at[] = { 10, 30, 60 };

	for (size_t k = 0; k < 3; k++) {
		size_t n = generate(&g, at[k], rs, &et, &eh);
		assert_int_equal(eol_fit(rs, n, NULL, &f), 0);
		assert_int_equal(f.status, EOL_OK);
		assert_int_equal(f.host_counter, EOL_HOST_DRIVE);
		assert_int_equal(f.nsteps, (int)at[k]);
		/* truth: 200 days, 600 TB */
		assert_true(fabs(f.end_t.at - (T0 + 200 * DAY)) < 0.02 * 200 * DAY);
		assert_true(f.end_t.lo <= T0 + 200 * DAY && T0 + 200 * DAY <= f.end_t.hi);
		assert_true(fabs(f.end_host.at - 600e12) < 0.02 * 600e12);
		assert_true(f.end_host.lo <= 600e12 && 600e12 <= f.end_host.hi);
		assert_true(fabs(f.pct_per_day - 0.5) < 0.02);
		assert_true(fabs(f.host_per_pct - 6e12) < 0.02 * 6e12);
		/* media bytes are 2.5 x host here */
		assert_true(fabs(f.end_media.at / f.end_host.at - 2.5) < 1e-6);
	}
}

/* Noisy rates and irregular readings: over 40 drives, the forecast from
 * 30 % of life is within 10 % of each one's end, and the 95 % interval
 * covers the true end for nearly all. */
static void test_noisy(void **state)
{
	int covered = 0;

	for (unsigned long long s = 1; s <= 40; s++) {
		const struct gen g = { .pct_per_day = 1.7,
				       .host_per_day = 5e12,
				       .every_days = 0.45,
				       .noise = 0.5,
				       .jitter = 0.6,
				       .seed = s * 7919,
				       .drive_host = 1 };
		struct eol_forecast f;
		double et, eh;
		size_t n = generate(&g, 100, rs, &et, &eh), m = 0;

		while (m < n && rs[m].used < 30)
			m++;
		assert_int_equal(eol_fit(rs, m + 1, NULL, &f), 0);
		assert_int_equal(f.status, EOL_OK);
		double life = et - T0;
		assert_true(fabs(f.end_t.at - et) < 0.10 * life);
		covered += f.end_t.lo <= et && et <= f.end_t.hi;
	}
	assert_true(covered >= 36);
}

/* Readings further apart than a step: spans of several levels, each
 * placed by the steady rate; still on time. */
static void test_sparse(void **state)
{
	const struct gen g = { .pct_per_day = 2,
			       .host_per_day = 1e12,
			       .every_days = 1.6,
			       .jitter = 0.2,
			       .seed = 3,
			       .drive_host = 1 };
	struct eol_forecast f;
	double et, eh;
	size_t n = generate(&g, 30, rs, &et, &eh);

	assert_int_equal(eol_fit(rs, n, NULL, &f), 0);
	assert_int_equal(f.status, EOL_OK);
	assert_true(f.brackets < f.nsteps);
	assert_true(fabs(f.end_t.at - et) < 0.05 * (et - T0));
	assert_true(f.end_t.lo <= et && et <= f.end_t.hi);
}

/* What each short or odd series says, and that it does not forecast. */
static void test_no_forecast(void **state)
{
	static const struct {
		double used[8];
		int n;
		enum eol_status status;
		int steps;
		const char *words;
	} cases[] = {
		{ { NAN, NAN, NAN }, 3, EOL_NO_INDICATOR, 0, "no wear indicator" },
		{ { 0 }, 0, EOL_NO_INDICATOR, 0, "no wear indicator" },
		{ { 5 }, 1, EOL_TOO_FEW, 0, "stepped 0 times (to 5 %)" },
		{ { 5, 5, 5, 5, 5 }, 5, EOL_FLAT, 0, "stayed at 5 % over 4.0 days" },
		{ { 0, 0, 1, 1, 2 }, 5, EOL_TOO_FEW, 2, "stepped 2 times (to 2 %)" },
		{ { 0, 1 }, 2, EOL_TOO_FEW, 1, "stepped 1 time (to 1 %)" },
		/* ten levels, but seen between two readings only */
		{ { 0, 10 }, 2, EOL_TOO_FEW, 10, "stepped 10 times" },
		{ { 40, NAN, 41, NAN, 42 }, 5, EOL_TOO_FEW, 2, "stepped 2 times (to 42 %)" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct eol_reading r[8];
		struct eol_forecast f;
		char w[512];

		for (int i = 0; i < cases[c].n; i++)
			r[i] = (struct eol_reading){ T0 + i * DAY, cases[c].used[i], 1e9 * i,
						     1e9 * i, NAN };
		assert_int_equal(eol_fit(r, (size_t)cases[c].n, NULL, &f), 0);
		if (f.status != cases[c].status || f.nsteps != cases[c].steps || !isnan(f.end_t.at))
			fail_msg("case %zu: status %s, %d steps, end %g", c,
				 eol_status_name(f.status), f.nsteps, f.end_t.at);
		eol_words(&f, T0, w, sizeof(w));
		if (!strstr(w, cases[c].words))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", c, w, cases[c].words);
	}
}

/* A reading below an earlier one that later readings climb back over is
 * a glitch: the forecast is the one without it. One that stays below is
 * a reset (another drive, a cleared counter): the series starts there. */
static void test_non_monotonic(void **state)
{
	const struct gen g = { .pct_per_day = 1,
			       .host_per_day = 2e12,
			       .every_days = 0.5,
			       .seed = 5,
			       .drive_host = 1 };
	struct eol_forecast clean, glitch, reset;
	double et, eh;
	size_t n = generate(&g, 30, rs, &et, &eh);
	static struct eol_reading r[MAXR + 8];

	assert_int_equal(eol_fit(rs, n, NULL, &clean), 0);
	memcpy(r, rs, n * sizeof(*r));
	r[20].used = 0; /* one bad reading mid-way */
	r[21].used = 3;
	assert_int_equal(eol_fit(r, n, NULL, &glitch), 0);
	assert_int_equal(glitch.status, EOL_OK);
	assert_int_equal(glitch.readings, clean.readings - 2);
	assert_true(fabs(glitch.end_t.at - clean.end_t.at) < 0.02 * (et - T0));
	/* from reading 40 on, the indicator starts again from 0 (another
	 * drive) and stays below where it was */
	memcpy(r, rs, n * sizeof(*r));
	for (size_t i = 40; i < n; i++)
		r[i].used = rs[i].used - rs[40].used;
	assert_int_equal(eol_fit(r, n, NULL, &reset), 0);
	assert_true(reset.first_t == r[40].t && reset.first_used == 0);
	assert_int_equal(reset.nsteps, (int)r[n - 1].used);
	assert_int_equal(reset.status, EOL_OK);
	/* times going back are refused */
	memcpy(r, rs, n * sizeof(*r));
	r[7].t = r[6].t - 1;
	assert_int_equal(eol_fit(r, n, NULL, &reset), -EINVAL);
}

/* Past 100 %: the end as observed (the step to 100), not extrapolated. */
static void test_reached(void **state)
{
	const struct gen g = { .pct_per_day = 4,
			       .host_per_day = 1e12,
			       .every_days = 0.2,
			       .seed = 9,
			       .drive_host = 1 };
	struct eol_forecast f;
	double et, eh;
	char w[512];
	size_t n = generate(&g, 103, rs, &et, &eh);

	assert_int_equal(eol_fit(rs, n, NULL, &f), 0);
	assert_int_equal(f.status, EOL_REACHED);
	assert_true(f.end_t.lo <= et + 0.2 * DAY && et - 0.2 * DAY <= f.end_t.hi);
	assert_true(fabs(f.end_host.at - eh) < 0.01 * eh);
	eol_words(&f, rs[n - 1].t, w, sizeof(w));
	assert_non_null(strstr(w, "reached 100 % used on 2027-02-09"));
	assert_non_null(strstr(w, "it now reads 103 %"));
}

/* The rating: TBW, or DWPD x capacity x 365 x years; the ratio at the end,
 * when host writes reach it, and the words against the warranty. */
static void test_rating(void **state)
{
	const struct gen g = { .pct_per_day = 0.5,
			       .host_per_day = 3e12,
			       .every_days = 0.25,
			       .seed = 11,
			       .drive_host = 1 };
	struct eol_rating tbw = { .tbw_bytes = 480e12,
				  .warranty_years = 5,
				  .warranty_start = T0 - 100 * DAY };
	struct eol_rating dwpd = {
		.dwpd = 1, .warranty_years = 3, .capacity = 1e12, .warranty_start = NAN
	};
	struct eol_forecast f;
	double et, eh;
	char w[1024];
	size_t n = generate(&g, 30, rs, &et, &eh);

	assert_true(eol_rated_bytes(&dwpd) == 1095e12);
	assert_true(isnan(eol_rated_bytes(&(struct eol_rating){ .dwpd = 1, .capacity = 1e12 })));
	assert_int_equal(eol_fit(rs, n, &tbw, &f), 0);
	/* 600 TB at the end of a 480 TBW rating: 125 % */
	assert_true(fabs(f.rated_ratio.at - 1.25) < 0.02);
	/* 480 TB at 3 TB a day: day 160 */
	assert_true(fabs(f.rated_t.at - (T0 + 160 * DAY)) < 0.5 * DAY);
	assert_true(f.rated_t.lo <= T0 + 160 * DAY && T0 + 160 * DAY <= f.rated_t.hi);
	assert_true(f.warranty_end == T0 + (5 * 365.25 - 100) * DAY);
	eol_words(&f, rs[n - 1].t, w, sizeof(w));
	if (!strstr(w, "At this workload the drive reaches 100 % used in 140") ||
	    !strstr(w, " written by the host (125 % of its rated 480 TBW).") ||
	    !strstr(w, " At this workload it reaches its rated 480 TBW in 100") ||
	    !strstr(w, "days, before the warranty ends (2031-10-07)."))
		fail_msg("words: %s", w);
	/* a rating passed already */
	struct eol_rating low = { .tbw_bytes = 50e12 };
	assert_int_equal(eol_fit(rs, n, &low, &f), 0);
	assert_true(f.rated_t.at > T0 + 16 * DAY && f.rated_t.at < T0 + 17 * DAY);
	eol_words(&f, rs[n - 1].t, w, sizeof(w));
	assert_non_null(strstr(w, "Its host writes passed the rated 50.0 TBW on 2027-02-01"));
}

/* Without the drive's host counter, wearmond's own, and the words say so;
 * a short life reads in minutes with the time of day. */
static void test_host_counter_and_units(void **state)
{
	const struct gen g = { .pct_per_day = 2000,
			       .host_per_day = 1e12,
			       .every_days = 0.0002,
			       .seed = 13,
			       .drive_host = 0 };
	struct eol_forecast f;
	double et, eh;
	char w[1024];
	size_t n = generate(&g, 30, rs, &et, &eh);

	assert_int_equal(eol_fit(rs, n, NULL, &f), 0);
	assert_int_equal(f.status, EOL_OK);
	assert_int_equal(f.host_counter, EOL_HOST_OWN);
	/* wearmond counted 0.9 of the host bytes here: 0.9 x 1 TB a day x 1/20 day */
	assert_true(fabs(f.end_host.at - 0.9 * 1e12 / 20) < 0.02 * 4.5e10);
	eol_words(&f, rs[n - 1].t, w, sizeof(w));
	if (!strstr(w, "minutes (2027-01-15 ") || !strstr(w, " UTC)") ||
	    !strstr(w, "(Host bytes as wearmond wrote them: the drive counts none.)"))
		fail_msg("words: %s", w);
	assert_string_equal(eol_host_name(f.host_counter), "wearmon");
	assert_string_equal(eol_status_name(f.status), "ok");
}

static void test_t975(void **state)
{
	static const struct {
		int dof;
		double t;
	} cases[] = { { 1, 12.706 }, { 2, 4.303 },  { 10, 2.228 }, { 30, 2.042 },
		      { 40, 2.021 }, { 60, 2.000 }, { 120, 1.980 } };
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		assert_true(fabs(eol_t975(cases[c].dof) - cases[c].t) < 1e-9);
	assert_true(isnan(eol_t975(0)));
	for (int d = 2; d < 2000; d++)
		assert_true(eol_t975(d) < eol_t975(d - 1) && eol_t975(d) > 1.96);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady),        cmocka_unit_test(test_noisy),
		cmocka_unit_test(test_sparse),        cmocka_unit_test(test_no_forecast),
		cmocka_unit_test(test_non_monotonic), cmocka_unit_test(test_reached),
		cmocka_unit_test(test_rating),        cmocka_unit_test(test_host_counter_and_units),
		cmocka_unit_test(test_t975),
	};
	return cmocka_run_group_tests_name("eol", tests, NULL, NULL);
}
