/* test_plan: a configuration resolved once into a plan (config/plan.h):
 * the phases of a size with their specs, the amounts at every size, the
 * limits the engines are sized for, and a plan that does not fit. */
#include "unit.h"

#include <errno.h>
#include <string.h>

#include "config/cfg.h"
#include "config/plan.h"

static struct cfg *parse(const char *text)
{
	struct cfg *c = NULL;
	char err[CFG_ERR_MAX];
	if (cfg_parse_string(text, "p.conf", &c, err, sizeof(err)))
		fail_msg("%s", err);
	return c;
}

/* measure = fill, randwrite, streaming: three phases in order, each
 * with its spec, the fill as a row (so no precondition). */
static void test_plan_phases(void **state)
{
	(void)state;
	struct cfg *c = parse("[target a]\n"
			      "device = /dev/a\n"
			      "sizes = 1M 4M\n"
			      "block_size = 8k\n"
			      "fill_block_size = 128k\n"
			      "queue_depth = 16\n"
			      "fill_queue_depth = 4\n"
			      "jobs = 2\n"
			      "measure = fill, randwrite, streaming\n"
			      "ioengine = null\n");
	static struct plan p;
	char err[CFG_ERR_MAX];
	assert_int_equal(plan_build(c, &c->targets[0], 64ULL << 20, 512, &p, err, sizeof(err)), 0);
	assert_ptr_equal(p.t, &c->targets[0]);
	assert_int_equal(p.layout.nsizes, 2);
	assert_int_equal(p.nphases, 3);
	assert_true(p.phase[0].is_fill);
	assert_int_equal(p.phase[0].block_size, 128 * 1024);
	assert_false(p.phase[1].is_fill);
	assert_int_equal(p.phase[1].workload, WL_RANDWRITE);
	assert_string_equal(p.phase[1].name, "randwrite");
	assert_int_equal(p.phase[1].spec.order, WO_RANDOM);
	assert_int_equal(p.phase[1].spec.read_pct, 0);
	assert_int_equal(p.phase[1].spec.nbs, 1);
	assert_int_equal(p.phase[1].spec.bs[0].size, 8192);
	assert_int_equal(p.phase[1].block_size, 8192);
	assert_string_equal(p.phase[2].name, "streaming");
	assert_int_equal(p.phase[2].spec.nbs, 3);
	assert_int_equal(p.phase[2].block_size, 256 * 1024);
	/* amount = 1x (the default): the size itself, at each size */
	assert_int_equal(p.phase[1].amount[0], 1 << 20);
	assert_int_equal(p.phase[1].amount[1], 4 << 20);
	assert_false(p.precondition);
	assert_false(p.readback);
	assert_int_equal(p.max_bs, 256 * 1024);
	assert_int_equal(p.max_qd, 16);
	assert_int_equal(p.jobs, 2);
	assert_int_equal(p.engine, ENGINE_NULL);
	assert_string_equal(p.engine_name, "null");
	cfg_free(c);
}

/* Without measure: the workload key alone; fill = yes fills first; the
 * read-back follows with verify_phase and crc32c. */
static void test_plan_workload_alone(void **state)
{
	(void)state;
	struct cfg *c = parse("[target a]\n"
			      "device = /dev/a\n"
			      "sizes = 1M\n"
			      "workload = seqread\n"
			      "fill = yes\n"
			      "verify = crc32c\n"
			      "verify_phase = yes\n"
			      "amount = 3000000\n");
	static struct plan p;
	char err[CFG_ERR_MAX];
	assert_int_equal(plan_build(c, &c->targets[0], 64ULL << 20, 512, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nphases, 1);
	assert_int_equal(p.phase[0].workload, WL_SEQREAD);
	assert_int_equal(p.phase[0].spec.read_pct, 100);
	assert_true(p.precondition);
	assert_true(p.readback);
	/* bytes rounded down to whole blocks of the phase */
	uint32_t bs = p.phase[0].block_size;
	assert_int_equal(p.phase[0].amount[0], 3000000 / bs * bs);
	cfg_free(c);
}

static void test_plan_amount(void **state)
{
	(void)state;
	struct cfg_amount twice = { .is_multiple = 1, .multiple = 2.0 };
	struct cfg_amount tiny = { .bytes = 100 };
	struct cfg_amount odd = { .bytes = 10000 };
	assert_int_equal(plan_amount(&twice, 1 << 20, 4096), 2 << 20);
	assert_int_equal(plan_amount(&tiny, 1 << 20, 4096), 4096); /* at least a block */
	assert_int_equal(plan_amount(&odd, 1 << 20, 4096), 8192);
}

/* A plan that does not fit the device: cfg_resolve's message, and the
 * phases and limits are there all the same (a reload compares them). */
static void test_plan_does_not_fit(void **state)
{
	(void)state;
	struct cfg *c = parse("[target a]\n"
			      "device = /dev/a\n"
			      "sizes = 1M 8M\n"
			      "queue_depth = 64\n");
	static struct plan p;
	char err[CFG_ERR_MAX] = "";
	assert_int_equal(plan_build(c, &c->targets[0], 4ULL << 20, 512, &p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "sizes"));
	assert_int_equal(p.nphases, 1);
	assert_int_equal(p.max_qd, 64);
	cfg_free(c);
}

/* The keys every row reads, resolved into the plan as the rows use them
 * (daemon/iter.c reads these, not the keys). */
static void test_plan_rows(void **state)
{
	(void)state;
	struct cfg *c = parse("[target a]\n"
			      "device = /dev/a\n"
			      "sizes = 1M\n"
			      "fill_block_size = 64k\n"
			      "fill_queue_depth = 2\n"
			      "queue_depth = 8\n"
			      "repeat = 3\n"
			      "steady_state = none\n"
			      "max_rounds = 7\n"
			      "duration = 5s\n"
			      "sample_interval = 2s\n"
			      "device_poll_interval = 0.5s\n"
			      "compressibility = 40\n"
			      "dedupe_percent = 0\n"
			      "verify = crc32c\n"
			      "on_verify_error = continue\n"
			      "ioengine = null\n");
	static struct plan p;
	char err[CFG_ERR_MAX];
	if (plan_build(c, &c->targets[0], 64ULL << 20, 512, &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(p.rows.fill_block_size, 64 * 1024);
	assert_int_equal(p.rows.fill_queue_depth, 2);
	assert_int_equal(p.rows.queue_depth, 8);
	assert_int_equal(p.rows.repeat, 3);
	assert_false(p.rows.steady_snia);
	assert_int_equal(p.rows.max_rounds, 7);
	assert_true(p.rows.duration == 5.0);
	assert_true(p.rows.sample_interval == 2.0);
	assert_true(p.rows.device_poll_interval == 0.5);
	assert_int_equal(p.rows.compressibility, 40);
	assert_int_equal(p.rows.dedupe_pct, 0);
	assert_int_equal(p.rows.verify, VERIFY_CRC32C);
	assert_false(p.rows.verify_stop);
	cfg_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_phases), cmocka_unit_test(test_plan_workload_alone),
		cmocka_unit_test(test_plan_amount), cmocka_unit_test(test_plan_does_not_fit),
		cmocka_unit_test(test_plan_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
