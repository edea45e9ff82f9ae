/* test_pts: the PTS tests as presets: their keys (defaults, variants,
 * refusals naming file, line and key), the plan they resolve to (one size,
 * the active range), the cells of each test's rounds in the
 * specification's order, the demand-intensity points and the histogram
 * as stored (daemon/pts.h). */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "config/plan.h"
#include "pts.h"

static struct cfg *parse(const char *text)
{
	struct cfg *c = NULL;
	char err[CFG_ERR_MAX];
	if (cfg_parse_string(text, "p.conf", &c, err, sizeof(err)))
		fail_msg("%s", err);
	return c;
}

/* The plan of one target with extra lines, on a device of cap bytes. */
static int plan_of(const char *extra, uint64_t cap, uint32_t lbs, struct plan *p, char *err,
		   size_t len)
{
	char text[512];
	snprintf(text, sizeof(text), "[target a]\ndevice = /dev/a\n%s", extra);
	struct cfg *c = parse(text);
	int ret = plan_build(c, &c->targets[0], cap, lbs, p, err, len);
	p->t = NULL; /* c dies here */
	cfg_free(c);
	return ret;
}

static void test_keys_and_plan(void **state)
{
	struct plan p;
	char err[CFG_ERR_MAX];

	(void)state;
	assert_int_equal(plan_of("", 64 * MIB, 512, &p, err, sizeof(err)), 0);
	assert_false(p.pts.active);
	assert_int_equal(
		plan_of("pts = iops, hir dirth\n", 64 * MIB + 4096, 512, &p, err, sizeof(err)), 0);
	assert_true(p.pts.active && p.pts.hir && p.pts.n == 2);
	assert_true(p.pts.test[0] == PTS_IOPS && p.pts.test[1] == PTS_DIRTH);
	/* enterprise: the whole region, whole MiB, 4 threads of 32, cells of 1 min */
	assert_true(p.pts.range == 64 * MIB && p.pts.active_pct == 100);
	assert_true(p.layout.nsizes == 1 && p.layout.sizes[0] == 64 * MIB);
	assert_true(p.pts.threads == 4 && p.pts.depth == 32 && p.pts.cell == 60);
	assert_true(p.pts.sweep_threads == 32 && p.pts.sweep_depth == 32);
	assert_true(p.pts.max_rounds == 25 && p.pts.xsr_segment == 1800);
	assert_true(p.pts.wsat_bytes == 4 * 64 * MIB);
	/* client: 75% of the region rounded down to MiB, 2 threads of 16 */
	assert_int_equal(plan_of("pts = throughput\npts_variant = client\n", 10 * MIB, 512, &p, err,
				 sizeof(err)),
			 0);
	assert_true(p.pts.range == 7 * MIB && p.pts.threads == 2 && p.pts.depth == 16);
	assert_int_equal(plan_of("pts = dirth\npts_threads = 6\npts_queue_depth = 8\n"
				 "pts_active_range = 50%\npts_wsat_amount = 1G\n",
				 64 * MIB, 4096, &p, err, sizeof(err)),
			 0);
	assert_true(p.pts.sweep_threads == 6 && p.pts.sweep_depth == 8 && p.pts.threads == 6);
	assert_true(p.pts.range == 32 * MIB && p.pts.lbs == 4096 && p.pts.wsat_bytes == 1 << 30);
}

static void test_refusals(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "pts = iops speed", "p.conf:3: pts: \"speed\" is not one of: iops," },
		{ "pts = iops iops", "p.conf:3: pts: \"iops\" is listed twice" },
		{ "pts_variant = laptop", "p.conf:3: pts_variant: \"laptop\" is not one of" },
		{ "pts_cell = 10ms", "p.conf:3: pts_cell: \"10ms\" is out of range" },
		{ "pts_threads = 65", "p.conf:3: pts_threads: \"65\" is out of range" },
		{ "pts_active_range = 120%", "p.conf:3: pts_active_range:" },
	};
	struct cfg *c = NULL;
	char text[256], err[CFG_ERR_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[target a]\ndevice = /dev/a\n%s\n", bad[i].text);
		assert_int_equal(cfg_parse_string(text, "p.conf", &c, err, sizeof(err)), -EINVAL);
		if (strncmp(err, bad[i].want, strlen(bad[i].want)))
			fail_msg("%s: got %s", bad[i].text, err);
	}
	/* the active range must hold a 1 MiB block; the raw region only */
	struct plan p;
	assert_int_equal(plan_of("pts = iops\nregion_size = 1M\npts_variant = client\n", 64 * MIB,
				 512, &p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "p.conf:3: pts: the active range (75% of the region of"));
	assert_int_equal(
		plan_of("pts = iops\nfilesystem = ext4\n", 64 * MIB, 512, &p, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "p.conf:3: pts: with filesystem = ext4"));
	assert_int_equal(plan_of("pts = iops\nfill_block_size = 768k\n", 64 * MIB, 512, &p, err,
				 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "fill_block_size: 786432 bytes (768.00 KiB) does not divide"));
}

static const struct plan_pts enterprise = {
	.active = 1, .threads = 4, .depth = 32, .sweep_threads = 4, .sweep_depth = 2, .lbs = 512
};

static void test_cells(void **state)
{
	static struct pts_cell c[PTS_MAX_CELLS];
	static const unsigned reads[] = { 100, 95, 65, 50, 35, 5, 0 };
	static const uint32_t bs[] = { 1 << 20,  128 << 10, 64 << 10, 32 << 10,
				       16 << 10, 8 << 10,   4 << 10,  512 };
	struct plan_pts p = enterprise;

	(void)state;
	assert_int_equal(pts_round_cells(PTS_IOPS, &p, 0, c, PTS_MAX_CELLS), 56);
	for (unsigned i = 0; i < 56; i++) {
		const struct pts_cell *x = &c[i];
		assert_true(x->spec.order == WO_RANDOM && x->spec.nbs == 1);
		assert_int_equal(x->spec.read_pct, reads[i / 8]);
		assert_int_equal(x->spec.bs[0].size, bs[i % 8]);
		assert_true(x->jobs == 4 && x->depth == 32);
		assert_int_equal(x->track, reads[i / 8] == 0 && bs[i % 8] == 4096);
	}
	/* a 4Kn drive: no cell below 4 KiB */
	p.lbs = 4096;
	assert_int_equal(pts_round_cells(PTS_IOPS, &p, 0, c, PTS_MAX_CELLS), 49);
	assert_int_equal(pts_round_cells(PTS_LATENCY, &p, 0, c, PTS_MAX_CELLS), 6);
	p.lbs = 512;
	assert_int_equal(pts_round_cells(PTS_LATENCY, &p, 0, c, PTS_MAX_CELLS), 9);
	assert_true(c[0].jobs == 1 && c[0].depth == 1 && c[7].track && !c[6].track);
	assert_true(c[7].spec.read_pct == 0 && c[7].spec.bs[0].size == 4096);
	/* throughput: 128 KiB then 1 MiB (client: 1 MiB), sequential W then R */
	assert_int_equal(pts_groups(PTS_THROUGHPUT, &p), 2);
	assert_int_equal(pts_round_cells(PTS_THROUGHPUT, &p, 0, c, PTS_MAX_CELLS), 2);
	assert_true(c[0].spec.order == WO_SEQ && c[0].spec.read_pct == 0 && c[0].track == 1);
	assert_true(c[1].spec.read_pct == 100 && c[1].track == 2);
	assert_int_equal(c[0].spec.bs[0].size, 128 << 10);
	pts_round_cells(PTS_THROUGHPUT, &p, 1, c, PTS_MAX_CELLS);
	assert_int_equal(c[0].spec.bs[0].size, 1 << 20);
	p.variant = PTS_CLIENT;
	assert_int_equal(pts_groups(PTS_THROUGHPUT, &p), 1);
	pts_round_cells(PTS_THROUGHPUT, &p, 0, c, PTS_MAX_CELLS);
	assert_int_equal(c[0].spec.bs[0].size, 1 << 20);
	/* xsr: sequential 1 MiB, random 8 KiB, sequential 1 MiB writes */
	assert_int_equal(pts_groups(PTS_XSR, &p), 3);
	for (unsigned g = 0; g < 3; g++) {
		assert_int_equal(pts_round_cells(PTS_XSR, &p, g, c, PTS_MAX_CELLS), 1);
		assert_int_equal(c[0].spec.bs[0].size, g == 1 ? 8192 : 1 << 20);
		assert_int_equal(c[0].spec.order, g == 1 ? WO_RANDOM : WO_SEQ);
		assert_string_equal(c[0].part, g == 0   ? "seq-before"
					       : g == 1 ? "random"
							: "seq-after");
	}
	/* dirth: threads 4, 2, 1 by depth 2, 1, highest demand first and tracked */
	assert_int_equal(pts_round_cells(PTS_DIRTH, &p, 0, c, PTS_MAX_CELLS), 6);
	static const unsigned tq[6][2] = { { 4, 2 }, { 4, 1 }, { 2, 2 },
					   { 2, 1 }, { 1, 2 }, { 1, 1 } };
	for (unsigned i = 0; i < 6; i++)
		assert_true(c[i].jobs == tq[i][0] && c[i].depth == tq[i][1] && c[i].track == !i &&
			    c[i].spec.read_pct == 65 && c[i].spec.bs[0].size == 8192);
	p.sweep_threads = 6; /* not a power of two: itself, then 4, 2, 1 */
	assert_int_equal(pts_round_cells(PTS_DIRTH, &p, 0, c, PTS_MAX_CELLS), 8);
	assert_true(c[0].jobs == 6 && c[2].jobs == 4 && c[7].jobs == 1);
	assert_int_equal(pts_round_cells(PTS_WSAT, &p, 0, c, PTS_MAX_CELLS), 1);
	assert_true(c[0].spec.bs[0].size == 4096 && c[0].spec.read_pct == 0);
	assert_true(pts_tracked(PTS_IOPS, 1, 2, 3) == 1 &&
		    pts_tracked(PTS_THROUGHPUT, 1, 2, 3) == 2);
	assert_true(pts_tracked(PTS_LATENCY, 1, 2, 3) == 3 && pts_tracked(PTS_DIRTH, 1, 2, 3) == 1);
	/* what wearmond --check says of each */
	char b[320];
	p = enterprise;
	p.cell = 60;
	p.max_rounds = 25;
	pts_describe(PTS_IOPS, &p, b, sizeof(b));
	assert_string_equal(b, "iops: 56 cells of 60s a round at 4 thread(s) of depth 32, until"
			       " steady state or 25 rounds");
	pts_describe(PTS_THROUGHPUT, &p, b, sizeof(b));
	assert_non_null(strstr(b, "throughput: for each block size, 2 cells of 60s a round"));
	pts_describe(PTS_DIRTH, &p, b, sizeof(b));
	assert_non_null(strstr(b, "at 1..4 thread(s) of depth 1..2"));
}

static void test_dirth_points(void **state)
{
	static struct pts_cell c[PTS_MAX_CELLS];
	struct plan_pts p = enterprise;
	unsigned pick[3];

	(void)state;
	unsigned n = pts_round_cells(PTS_DIRTH, &p, 0, c, PTS_MAX_CELLS); /* T4Q2 .. T1Q1 */
	assert_int_equal(n, 6);
	/* the most IOPS, T1Q1, and the one nearest halfway (500) between them */
	double iops[] = { 900, 1000, 700, 480, 300, 100 };
	assert_int_equal(pts_dirth_points(c, iops, n, pick), 3);
	assert_true(pick[0] == 1 && pick[1] == 3 && pick[2] == 5);
	/* T1Q1 unknown: the lowest IOPS stands in for it */
	double gap[] = { 900, 1000, 700, 480, 300, -1 };
	assert_int_equal(pts_dirth_points(c, gap, n, pick), 3);
	assert_true(pick[0] == 1 && pick[2] == 4);
	/* T1Q1 the fastest (a busy host): two points, the maximum and the
	 * one halfway; the third pick is the maximum's own cell, not run */
	double fast1[] = { 900, 600, 700, 480, 300, 1000 };
	assert_int_equal(pts_dirth_points(c, fast1, n, pick), 2);
	assert_true(pick[0] == 5 && pick[2] == 5 && pick[1] != pick[0]);
	/* only one point known */
	double one[] = { -1, -1, 50, -1, -1, -1 };
	assert_int_equal(pts_dirth_points(c, one, n, pick), 1);
	assert_true(pick[0] == 2 && pick[1] == 2 && pick[2] == 2);
	double none[] = { -1, -1, -1, -1, -1, -1 };
	assert_int_equal(pts_dirth_points(c, none, n, pick), 0);
}

static void test_hist_json(void **state)
{
	static struct hist h;
	char buf[4096], small[16];

	(void)state;
	hist_reset(&h);
	for (int i = 0; i < 100; i++)
		hist_add(&h, 100000); /* 100 us */
	hist_add(&h, 5000000);        /* 5 ms */
	assert_int_equal(pts_hist_json(&h, buf, sizeof(buf)), 0);
	assert_int_equal(strncmp(buf, "{\"bins\":[[", 10), 0);
	/* two bins: 100 I/Os at about 100 us, one at about 5 ms */
	double lo1, lo2;
	unsigned long long n1, n2;
	assert_int_equal(sscanf(buf, "{\"bins\":[[%lf,%llu],[%lf,%llu]]}", &lo1, &n1, &lo2, &n2),
			 4);
	assert_true(n1 == 100 && n2 == 1);
	assert_true(lo1 <= 100 && lo1 > 100 / 1.2 && lo2 <= 5000 && lo2 > 5000 / 1.2);
	assert_int_equal(pts_hist_json(&h, small, sizeof(small)), -ENOSPC);
	assert_string_equal(small, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_and_plan), cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_cells),         cmocka_unit_test(test_dirth_points),
		cmocka_unit_test(test_hist_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
