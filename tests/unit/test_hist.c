/* Unit tests of hist: bucket error bounds, percentiles against exact
 * ones, merging and clamping. */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"

static struct hist *new_hist(void)
{
	struct hist *h = malloc(sizeof(*h));
	assert_non_null(h);
	hist_reset(h);
	return h;
}

/* Every value from 1 us to 60 s is represented within 1%. */
static void test_bucket_error(void **state)
{
	for (double v = 1000; v <= 60e9; v *= 1.0137) {
		uint64_t ns = (uint64_t)v;
		unsigned i = hist_index(ns);
		uint64_t lo = hist_bucket_low(i), w = hist_bucket_width(i);
		assert_true(ns >= lo && ns < lo + w);
		double mid = (double)lo + (double)(w / 2);
		assert_true(fabs(mid - (double)ns) / (double)ns <= 0.01);
	}
}

static void test_small_values_exact(void **state)
{
	for (uint64_t v = 0; v < 128; v++) {
		assert_int_equal(hist_bucket_low(hist_index(v)), v);
		assert_int_equal(hist_bucket_width(hist_index(v)), 1);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Percentiles against the exact answer from sorted samples. */
static void test_percentiles_vs_exact(void **state)
{
	enum { N = 100000 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct hist *h = new_hist();
	srand(7);
	for (int i = 0; i < N; i++) {
		/* log-uniform from 1 us to 10 s */
		double e = 3.0 + 7.0 * ((double)rand() / RAND_MAX);
		v[i] = (uint64_t)pow(10.0, e);
		hist_add(h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	static const double ps[] = { 50, 90, 99, 99.9, 99.99 };
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		size_t rank = (size_t)ceil(ps[k] / 100.0 * N);
		double exact = (double)v[rank - 1];
		double got = (double)hist_percentile(h, ps[k]);
		assert_true(fabs(got - exact) / exact <= 0.01);
	}
	assert_int_equal(hist_percentile(h, 100), v[N - 1]);
	assert_int_equal(hist_percentile(h, 0), v[0]);
	free(v);
	free(h);
}

/* The QoS percentiles in one pass, against exact sorted latencies, on
 * distributions with the tails that matter: a narrow SSD-like body, a long
 * tail up to 60 s, and a few outliers; p99.99 needs only 1 in 10 000. */
static void test_qos_percentiles_vs_exact(void **state)
{
	enum { N = 200000 };
	static const double ps[] = { 50, 90, 99, 99.9, 99.99 };
	uint64_t *v = malloc(N * sizeof(*v));
	for (int dist = 0; dist < 3; dist++) {
		struct hist *h = new_hist();
		srand(11 + dist);
		for (int i = 0; i < N; i++) {
			double u = (double)rand() / RAND_MAX;
			if (dist == 0) /* 80..120 us */
				v[i] = 80000 + (uint64_t)(u * 40000);
			else if (dist == 1) /* log-uniform 1 us .. 60 s */
				v[i] = (uint64_t)pow(10.0, 3.0 + u * log10(60e9 / 1e3));
			else /* body at 20 us, 0.5% at 5..50 ms */
				v[i] = i % 200 ? 20000 + (uint64_t)(u * 2000)
					       : 5000000 + (uint64_t)(u * 45e6);
			hist_add(h, v[i]);
		}
		qsort(v, N, sizeof(*v), cmp_u64);
		uint64_t got[5];
		hist_percentiles(h, ps, 5, got);
		for (int k = 0; k < 5; k++) {
			double exact = (double)v[(size_t)ceil(ps[k] / 100.0 * N) - 1];
			print_message("  dist %d p%g: %llu exact %.0f\n", dist, ps[k],
				      (unsigned long long)got[k], exact);
			assert_true(fabs((double)got[k] - exact) / exact <= 0.01);
			assert_int_equal(got[k], hist_percentile(h, ps[k]));
		}
		assert_int_equal(h->max_ns, v[N - 1]);
		free(h);
	}
	free(v);
}

static void test_empty_and_merge(void **state)
{
	struct hist *a = new_hist(), *b = new_hist();
	assert_int_equal(hist_percentile(a, 99), 0);
	assert_true(hist_mean(a) == 0.0);
	hist_add(a, 1000);
	hist_add(b, 5000);
	hist_add(b, 3000);
	hist_merge(a, b);
	assert_int_equal(a->count, 3);
	assert_int_equal(a->min_ns, 1000);
	assert_int_equal(a->max_ns, 5000);
	assert_true(fabs(hist_mean(a) - 3000.0) < 1e-9);
	free(a);
	free(b);
}

static void test_huge_value_clamped(void **state)
{
	struct hist *h = new_hist();
	hist_add(h, 500ull * 1000 * 1000 * 1000); /* 500 s */
	assert_int_equal(h->max_ns, 500ull * 1000 * 1000 * 1000);
	assert_int_equal(hist_percentile(h, 100), h->max_ns);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_error),
		cmocka_unit_test(test_small_values_exact),
		cmocka_unit_test(test_percentiles_vs_exact),
		cmocka_unit_test(test_qos_percentiles_vs_exact),
		cmocka_unit_test(test_empty_and_merge),
		cmocka_unit_test(test_huge_value_clamped),
	};
	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
