/* Unit tests of act: discard ranges aligned to the device's granularity. */
#include "unit.h"

#include <errno.h>

#include "act.h"

static void test_discard_alignment(void **state)
{
	static const struct {
		uint64_t off, len, gran, want_off, want_len;
		int ret;
	} cases[] = {
		{ 0, 1 << 20, 4096, 0, 1 << 20, 0 },
		{ 100, 8192, 4096, 4096, 4096, 0 },      /* start rounded up, end down */
		{ 4096, 4095, 4096, 0, 0, -EINVAL },     /* nothing aligned inside */
		{ 1 << 20, 3 << 20, 1 << 20, 1 << 20, 3 << 20, 0 },
		{ 512, 1024, 0, 512, 1024, 0 },          /* granularity 0: sectors */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t o = 0, l = 0;
		int ret = act_align_range(cases[i].off, cases[i].len, cases[i].gran, &o, &l);
		assert_int_equal(ret, cases[i].ret);
		if (!ret) {
			assert_int_equal(o, cases[i].want_off);
			assert_int_equal(l, cases[i].want_len);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discard_alignment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
