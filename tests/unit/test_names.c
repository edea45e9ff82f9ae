/* test_names: every enum value's text, the text of a value out of range,
 * and the config's choice tables being the same names, NULL-ended. */
#include "unit.h"

#include "device/act.h"
#include "config/cfg.h"
#include "config/names.h"
#include "device/tgt.h"

static void test_names_by_value(void **state)
{
	(void)state;
	assert_string_equal(cfg_workload_name(WL_SEQWRITE), "seqwrite");
	assert_string_equal(cfg_workload_name(WL_STREAMING), "streaming");
	assert_string_equal(cfg_action_name(ACT_NONE), "none");
	assert_string_equal(cfg_action_name(ACT_SECURE_ERASE), "secure-erase");
	assert_string_equal(cfg_action_name(ACT_IDLE), "idle");
	assert_string_equal(cfg_verify_name(VERIFY_NONE), "none");
	assert_string_equal(cfg_verify_name(VERIFY_CRC32C), "crc32c");
	assert_string_equal(cfg_baseline_name(BASELINE_FIRST), "first");
	assert_string_equal(cfg_baseline_name(BASELINE_PREVIOUS), "previous");
	assert_string_equal(act_outcome_name(ACT_OUT_OK), "ok");
	assert_string_equal(act_outcome_name(ACT_OUT_INTERRUPTED), "interrupted");
	assert_string_equal(tgt_kind_name(TGT_BLOCK), "block");
	assert_string_equal(tgt_kind_name(TGT_FILE), "file");
}

static void test_names_out_of_range(void **state)
{
	(void)state;
	assert_string_equal(cfg_workload_name(WL__COUNT), "unknown");
	assert_string_equal(cfg_workload_name((enum cfg_workload) - 1), "unknown");
	assert_string_equal(cfg_action_name(ACT__COUNT), "unknown");
	assert_string_equal(cfg_verify_name((enum cfg_verify)(VERIFY_CRC32C + 1)), "unknown");
	assert_string_equal(cfg_baseline_name(BASELINE__COUNT), "unknown");
	assert_string_equal(act_outcome_name(ACT_OUT__COUNT), "?");
	assert_string_equal(act_outcome_name((enum act_outcome) - 1), "?");
	assert_string_equal(tgt_kind_name((enum tgt_kind)7), "?");
}

/* The tables the config parses with give each value the text the lookups
 * print, and end where the enums do. */
static void test_choice_tables_match(void **state)
{
	(void)state;
	for (int i = 0; i < WL__COUNT; i++)
		assert_string_equal(cfg_workload_names[i], cfg_workload_name((enum cfg_workload)i));
	assert_null(cfg_workload_names[WL__COUNT]);
	for (int i = 0; i < ACT__COUNT; i++)
		assert_string_equal(cfg_action_names[i], cfg_action_name((enum cfg_action)i));
	assert_null(cfg_action_names[ACT__COUNT]);
	for (int i = 0; i <= VERIFY_CRC32C; i++)
		assert_string_equal(cfg_verify_names[i], cfg_verify_name((enum cfg_verify)i));
	assert_null(cfg_verify_names[VERIFY_CRC32C + 1]);
	for (int i = 0; i < BASELINE__COUNT; i++)
		assert_string_equal(cfg_baseline_names[i], cfg_baseline_name((enum cfg_baseline)i));
	assert_null(cfg_baseline_names[BASELINE__COUNT]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_by_value),
		cmocka_unit_test(test_names_out_of_range),
		cmocka_unit_test(test_choice_tables_match),
	};

	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
