/* Unit tests of access (where random offsets fall) and of the jesd219
 * preset: the text of a distribution, the histograms of a million sizes
 * and offsets through the generator and through the null engine against
 * the preset's table, the share of the hottest tenth of Zipf and Pareto
 * against its analytic value, and the cost of one offset against the
 * uniform draw (printed). */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/access.h"
#include "io/engine.h"
#include "io/workload.h"

#define DRAWS 1000000u
#define UNIT (64u << 10) /* the jesd219 mix's largest size: its units */
#define NUNITS 16000u    /* 5 % and 20 % of them are whole units */
#define SPAN ((uint64_t)NUNITS * UNIT)
#define SPAN_OFF (1u << 20)
#define TOL 0.5 /* percentage points */

/* JESD219's enterprise workload, as the standard gives it. */
static const struct {
	uint32_t size;
	double pct;
} jesd_sizes[] = {
	{ 512, 4 },  { 1024, 1 },  { 1536, 1 },  { 2048, 1 },  { 2560, 1 },  { 3072, 1 },
	{ 3584, 1 }, { 4096, 67 }, { 8192, 10 }, { 16384, 7 }, { 32768, 3 }, { 65536, 3 },
};
#define NSIZES (sizeof(jesd_sizes) / sizeof(jesd_sizes[0]))
static const double jesd_zone_end[3] = { 5, 20, 100 }; /* percent of the span */
static const double jesd_zone_pct[3] = { 50, 30, 20 };

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct workload_preset *preset(const char *name)
{
	const struct workload_preset *v = workload_preset_find(name);

	if (!v)
		fail_msg("no workload %s", name);
	return v;
}

/* The spec the jesd219 preset gives a device of 512-byte sectors. */
static struct workload_spec jesd_spec(void)
{
	const struct workload_preset *w = preset("jesd219");
	struct workload_spec s = { .order = w->order,
				   .read_pct = w->read_pct,
				   .random_pct = w->random_pct,
				   .nbs = w->nbs,
				   .align = w->align,
				   .access = w->access,
				   .sector = 512 };
	char msg[256];
	memcpy(s.bs, w->bs, sizeof(s.bs));
	assert_int_equal(workload_check(&s, SPAN, msg, sizeof(msg)), 0);
	return s;
}

/* The zone (0..2) of a byte offset into the span. */
static unsigned zone_of(uint64_t at)
{
	double pct = (double)at * 100.0 / (double)SPAN;
	return pct < jesd_zone_end[0] ? 0 : pct < jesd_zone_end[1] ? 1 : 2;
}

/* Each size's and each zone's share of n operations is the table's within
 * TOL points; prints the largest deviation. */
static void check_jesd_shares(const uint64_t *by_size, const uint64_t *by_zone, uint64_t n,
			      const char *what)
{
	double worst_size = 0, worst_zone = 0;
	for (unsigned i = 0; i < NSIZES; i++) {
		double got = 100.0 * (double)by_size[i] / (double)n;
		double d = fabs(got - jesd_sizes[i].pct);
		if (d > TOL)
			fail_msg("%s: %u bytes: %.3f %%, not %.0f %%", what, jesd_sizes[i].size,
				 got, jesd_sizes[i].pct);
		worst_size = d > worst_size ? d : worst_size;
	}
	for (unsigned z = 0; z < 3; z++) {
		double got = 100.0 * (double)by_zone[z] / (double)n;
		double d = fabs(got - jesd_zone_pct[z]);
		if (d > TOL)
			fail_msg("%s: zone %u: %.3f %% of the I/Os, not %.0f %%", what, z + 1, got,
				 jesd_zone_pct[z]);
		worst_zone = d > worst_zone ? d : worst_zone;
	}
	printf("  %s: %llu I/Os; largest deviation: sizes %.3f points, zones %.3f points\n", what,
	       (unsigned long long)n, worst_size, worst_zone);
}

/* ---- the text of a distribution ---- */

static void test_parse(void **state)
{
	static const char *const good[][2] = {
		{ "uniform", "uniform" },
		{ " Zoned:50/5:30/15:20/ ", "zoned:50/5:30/15:20/80" },
		{ "zoned:50/5:30/15:20/80", "zoned:50/5:30/15:20/80" },
		{ "zoned:0/50:100/", "zoned:0/50:100/50" },
		{ "zipf:1.2", "zipf:1.2" },
		{ "pareto:0.2", "pareto:0.2" },
	};
	static const char *const bad[][2] = {
		{ "random", "is not a distribution" },
		{ "uniform:3", "is not a distribution" },
		{ "zipf", "is not a distribution" },
		{ "zoned:50/5:30/15:30/80", "add up to 110%" },
		{ "zoned:50/5:30/15:20/70", "span add up to 90%" },
		{ "zoned:50/:50/", "more than one zone" },
		{ "zoned:50", "is not IO%/LBA%" },
		{ "zoned:101/5:0/95", "must be 0..100" },
		{ "zipf:0", "theta above 0" },
		{ "zipf:11", "theta above 0" },
		{ "pareto:1", "an h above 0 and below 1" },
		{ "pareto:x", "an h above 0 and below 1" },
	};
	(void)state;
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct access_spec a;
		char msg[256] = "", text[160];
		assert_int_equal(access_parse(good[i][0], &a, msg, sizeof(msg)), 0);
		assert_string_equal(access_text(&a, text, sizeof(text)), good[i][1]);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct access_spec a;
		char msg[256] = "";
		assert_int_equal(access_parse(bad[i][0], &a, msg, sizeof(msg)), -EINVAL);
		if (!strstr(msg, bad[i][1]))
			fail_msg("%s: \"%s\" lacks \"%s\"", bad[i][0], msg, bad[i][1]);
	}
}

/* A zone that takes I/Os but holds no whole unit of the span is refused. */
static void test_check_small_span(void **state)
{
	struct access_spec a;
	char msg[256] = "";
	(void)state;
	assert_int_equal(access_parse("zoned:50/1:50/99", &a, msg, sizeof(msg)), 0);
	assert_int_equal(access_check(&a, 100 * 4096, 4096, msg, sizeof(msg)), 0);
	assert_int_equal(access_check(&a, 50 * 4096, 4096, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "access zone 1 (1% of the span) holds no whole block"));
}

/* ---- jesd219 through the generator ---- */

/* A million writes of the jesd219 preset: each size's share and each
 * zone's within half a point of the standard's; every write inside the
 * span, inside one unit (so inside one zone), sizes under 4 KiB on 512
 * bytes, the others on 4 KiB. */
static void test_jesd219_generator(void **state)
{
	struct workload_spec s = jesd_spec();
	struct workload_gen g;
	uint64_t by_size[NSIZES] = { 0 }, by_zone[3] = { 0 };
	(void)state;
	assert_int_equal(s.nbs, NSIZES);
	for (unsigned i = 0; i < NSIZES; i++)
		assert_int_equal(s.bs[i].size, jesd_sizes[i].size);
	workload_init(&g, &s, SPAN_OFF, SPAN, 219);
	for (unsigned k = 0; k < DRAWS; k++) {
		struct workload_op op;
		workload_next(&g, &op);
		uint64_t at = op.offset - SPAN_OFF;
		assert_true(op.is_write);
		assert_true(op.offset >= SPAN_OFF && at + op.len <= SPAN);
		assert_int_equal(at / UNIT, (at + op.len - 1) / UNIT);
		assert_int_equal(at % (op.len < 4096 ? 512 : 4096), 0);
		assert_int_equal(op.len, s.bs[op.bs].size);
		by_size[op.bs]++;
		by_zone[zone_of(at)]++;
	}
	check_jesd_shares(by_size, by_zone, DRAWS, "generator");
}

/* The same through the null engine: its per-size and per-hundredth counts
 * of the completed I/Os, over a little more than a million writes. */
static void test_jesd219_null_engine(void **state)
{
	struct workload_spec s = jesd_spec();
	struct engine_ctx *c;
	struct engine_phase p;
	struct engine_result *r = calloc(1, sizeof(*r));
	uint64_t by_zone[3] = { 0 };
	(void)state;
	assert_non_null(r);
	assert_int_equal(engine_create_null(32, UNIT, 1e6, &c), 0);
	memset(&p, 0, sizeof(p));
	p.fd = -1;
	p.span_offset = SPAN_OFF;
	p.span_len = SPAN;
	p.spec = &s;
	p.queue_depth = 32;
	p.amount = 8ull << 30; /* 7.6 KiB a write on average: 1.1 million */
	p.sample_interval = 1;
	p.seed = 219;
	assert_int_equal(engine_run(c, &p, r), 0);
	assert_true(r->ops >= DRAWS);
	assert_int_equal(r->writes, r->ops);
	for (unsigned b = 0; b < ENGINE_LBA_BINS; b++)
		by_zone[b < 5 ? 0 : b < 20 ? 1 : 2] += r->lba_ops[b];
	check_jesd_shares(r->bs_ops, by_zone, r->ops, "null engine");
	free(r);
	engine_destroy(c);
}

/* ---- Zipf and Pareto against their analytic shares ---- */

/* Share of draws of a over n units that land on the hottest tenth of its
 * ranks (found through the table's own placement, so the permutation is
 * checked to be one too). */
static double hot_tenth(const struct access_spec *a, uint64_t n)
{
	struct access_table *t = malloc(sizeof(*t));
	uint8_t *hot = calloc(n, 1);
	uint64_t rng = 46, in = 0, marked = 0;
	assert_non_null(t);
	assert_non_null(hot);
	access_init(t, a, n);
	for (uint64_t r = 0; r < n / 10; r++) {
		uint64_t u = access_place(t, r);
		assert_true(u < n);
		marked += !hot[u];
		hot[u] = 1;
	}
	assert_int_equal(marked, n / 10); /* no two ranks on one unit */
	for (unsigned k = 0; k < DRAWS; k++) {
		uint64_t u = access_draw(t, splitmix(&rng), splitmix(&rng));
		assert_true(u < n);
		in += hot[u];
	}
	free(hot);
	free(t);
	return 100.0 * (double)in / DRAWS;
}

/* Zipf: the ranks 1..n/10 of weights k^-theta out of 1..n. */
static double zipf_hot(double theta, uint64_t n)
{
	double hot = 0, all = 0;
	for (uint64_t k = n; k >= 1; k--) {
		double w = pow((double)k, -theta);
		all += w;
		hot += k <= n / 10 ? w : 0;
	}
	return 100.0 * hot / all;
}

/* fio's Pareto: a rank at u^p of the span, p = ln h / ln(1 - h); for
 * p >= 1 the hot end is 0 (share of x < 0.1: 0.1^(1/p)), else it is the
 * far end (share of x > 0.9: 1 - 0.9^(1/p)). */
static double pareto_hot(double h)
{
	double ip = log(1 - h) / log(h);
	return 100.0 * (h <= 0.5 ? pow(0.1, ip) : 1 - pow(0.9, ip));
}

static void test_zipf_pareto_hot_tenth(void **state)
{
	static const struct {
		const char *text;
		uint64_t n;
	} cases[] = {
		{ "zipf:0.8", 10000 },  { "zipf:1.2", 10007 },    { "zipf:1.2", 1000000 },
		{ "zipf:2.5", 4096 },   { "pareto:0.2", 10000 },  { "pareto:0.1", 999983 },
		{ "pareto:0.4", 3000 }, { "pareto:0.8", 100000 },
	};
	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct access_spec a;
		char msg[256];
		assert_int_equal(access_parse(cases[i].text, &a, msg, sizeof(msg)), 0);
		double want =
			a.kind == ACCESS_ZIPF ? zipf_hot(a.param, cases[i].n) : pareto_hot(a.param);
		double got = hot_tenth(&a, cases[i].n);
		printf("  %s over %llu units: hottest tenth %.3f %% (analytic %.3f %%)\n",
		       cases[i].text, (unsigned long long)cases[i].n, got, want);
		if (fabs(got - want) > TOL)
			fail_msg("%s over %llu units: %.3f %%, analytic %.3f %%", cases[i].text,
				 (unsigned long long)cases[i].n, got, want);
	}
}

/* ---- what an offset costs ---- */

/* Nanoseconds per workload_next of spec s (printed, not judged: the
 * machine's speed is no test's business). */
static double ns_per_op(const struct workload_spec *s, uint64_t *sink)
{
	struct workload_gen g;
	struct workload_op op;
	workload_init(&g, s, 0, SPAN, 5);
	double t0 = now_s();
	for (unsigned k = 0; k < 4 * DRAWS; k++) {
		workload_next(&g, &op);
		*sink += op.offset;
	}
	return (now_s() - t0) * 1e9 / (4.0 * DRAWS);
}

static void test_cost_per_offset(void **state)
{
	static const char *const kinds[] = { "uniform", "zoned:50/5:30/15:20/80", "zipf:1.2",
					     "pareto:0.2" };
	struct workload_spec s = { .order = WO_RANDOM,
				   .random_pct = 100,
				   .nbs = 1,
				   .bs = { { 4096, 1 } },
				   .sector = 512 };
	uint64_t sink = 0;
	char msg[256];
	(void)state;
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		assert_int_equal(access_parse(kinds[i], &s.access, msg, sizeof(msg)), 0);
		assert_int_equal(workload_check(&s, SPAN, msg, sizeof(msg)), 0);
		printf("  4 KiB random writes, access %s: %.1f ns per offset\n", kinds[i],
		       ns_per_op(&s, &sink));
	}
	struct workload_spec j = jesd_spec();
	printf("  jesd219 (size mix, alignment, zones): %.1f ns per offset\n",
	       ns_per_op(&j, &sink));
	assert_true(sink != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_check_small_span),
		cmocka_unit_test(test_jesd219_generator),
		cmocka_unit_test(test_jesd219_null_engine),
		cmocka_unit_test(test_zipf_pareto_hot_tenth),
		cmocka_unit_test(test_cost_per_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
