/* test_cause: the cause of a fall in rate judged from the dip against the
 * window before it (tables of windows), the windows cut from a series of
 * readings, the dip found in the samples, the readings placed on the
 * phases' clocks (series.h), and the evidence as journal fields. */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "series.h"

#define MIB_I64 ((int64_t)1 << 20)

/* A window of dur ms: wa (< 0 unknown), throttled thr ms (< 0 not
 * counted), peak temperature (< 0 unknown), host stall ms. */
static struct cause_window win(int64_t dur, double wa, int64_t thr, int64_t peak, int64_t stall)
{
	struct cause_window w = {
		.known = 1,
		.start_ms = 10000,
		.end_ms = 10000 + dur,
		.wa = wa,
		.host_bytes = wa >= 0 ? 64 * MIB_I64 : -1,
		.has_throttle = thr >= 0,
		.throttle_ms = thr >= 0 ? thr : 0,
		.has_temp = peak >= 0,
		.peak_temp_c = peak,
		.host_stall_ms = stall,
	};
	return w;
}

static void test_judge_table(void **state)
{
	static const struct {
		const char *what;
		double dwa;
		int64_t dthr, dpeak, dstall;
		int before; /* 0: no window before */
		double bwa;
		int64_t bthr, bpeak, bstall;
		enum cause_kind want;
	} c[] = {
		/* one fault alone (dips of 3 s, windows before of 3 s) */
		{ "latency alone: nothing moved", 1.0, 0, 40, 0, 1, 1.0, 0, 40, 0, CAUSE_UNKNOWN },
		{ "latency on a drive whose WA was already high: not wear", 3.1, 0, 40, 0, 1, 3.0,
		  0, 40, 0, CAUSE_UNKNOWN },
		{ "heat: throttled half the dip", 1.0, 1500, 70, 0, 1, 1.0, 0, 45, 0,
		  CAUSE_THERMAL },
		{ "wear: WA doubled in the dip", 2.4, 0, 40, 0, 1, 1.2, 0, 40, 0, CAUSE_WEAR },
		{ "wear at the threshold, 1.25x", 1.25, 0, 40, 0, 1, 1.0, 0, 40, 0, CAUSE_WEAR },
		{ "just under it", 1.24, 0, 40, 0, 1, 1.0, 0, 40, 0, CAUSE_UNKNOWN },
		{ "host: stalled a third of the dip", 1.0, 0, 40, 1000, 1, 1.0, 0, 40, 0,
		  CAUSE_HOST },
		/* pairs */
		{ "heat and wear: the throttle caps the rate", 2.4, 1500, 70, 0, 1, 1.0, 0, 45, 0,
		  CAUSE_THERMAL },
		{ "heat and a stalled host", 1.0, 1500, 70, 1000, 1, 1.0, 0, 45, 0, CAUSE_THERMAL },
		{ "wear and a stalled host", 2.4, 0, 40, 1000, 1, 1.0, 0, 40, 0, CAUSE_WEAR },
		{ "latency and heat", 1.0, 900, 60, 0, 1, 1.0, 0, 45, 0, CAUSE_THERMAL },
		{ "latency and a stalled host", 1.0, 0, 40, 600, 1, 1.0, 0, 40, 0, CAUSE_HOST },
		{ "latency and high WA before and in it", 3.0, 0, 40, 0, 1, 2.9, 0, 40, 0,
		  CAUSE_UNKNOWN },
		/* the thresholds against the window before */
		{ "throttled all along: not what changed", 1.0, 1500, 70, 0, 1, 1.0, 1400, 70, 0,
		  CAUSE_UNKNOWN },
		{ "throttle under a tenth of the dip", 1.0, 299, 60, 0, 1, 1.0, 0, 45, 0,
		  CAUSE_UNKNOWN },
		{ "throttle a tenth of the dip", 1.0, 300, 60, 0, 1, 1.0, 0, 45, 0, CAUSE_THERMAL },
		{ "stalled all along", 1.0, 0, 40, 1000, 1, 1.0, 0, 40, 1000, CAUSE_UNKNOWN },
		{ "no throttle counter: 5 C hotter", 1.0, -1, 50, 0, 1, 1.0, -1, 45, 0,
		  CAUSE_THERMAL },
		{ "no throttle counter: 4 C hotter", 1.0, -1, 49, 0, 1, 1.0, -1, 45, 0,
		  CAUSE_UNKNOWN },
		/* what is not known */
		{ "no window before: throttle alone decides", 1.0, 1500, 70, 0, 0, 0, 0, 0, 0,
		  CAUSE_THERMAL },
		{ "no window before: wear cannot be told", 3.0, 0, 40, 0, 0, 0, 0, 0, 0,
		  CAUSE_UNKNOWN },
		{ "no window before: a stall", 1.0, 0, 40, 1000, 0, 0, 0, 0, 0, CAUSE_HOST },
		{ "WA unknown in the dip", -1, 0, 40, 0, 1, 1.0, 0, 40, 0, CAUSE_UNKNOWN },
		{ "WA unknown before", 3.0, 0, 40, 0, 1, -1, 0, 40, 0, CAUSE_UNKNOWN },
		{ "a drive that reports nothing", -1, -1, -1, 0, 1, -1, -1, -1, 0, CAUSE_UNKNOWN },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct cause_window d = win(3000, c[i].dwa, c[i].dthr, c[i].dpeak, c[i].dstall);
		struct cause_window b = win(3000, c[i].bwa, c[i].bthr, c[i].bpeak, c[i].bstall);
		enum cause_kind got = cause_judge(&d, c[i].before ? &b : NULL);
		if (got != c[i].want)
			fail_msg("%s: got %s, want %s", c[i].what, cause_name(got),
				 cause_name(c[i].want));
	}
	struct cause_window none = { 0 };
	assert_int_equal(cause_judge(&none, NULL), CAUSE_UNKNOWN);
	assert_string_equal(cause_name(CAUSE_THERMAL), "thermal");
	assert_string_equal(cause_name(CAUSE_WEAR), "wear");
	assert_string_equal(cause_name(CAUSE_HOST), "host");
	assert_string_equal(cause_name(CAUSE_UNKNOWN), "unknown");
	assert_string_equal(cause_before_name(CAUSE_BEFORE_BASELINE), "baseline");
}

/* A reading at t s of the measured phase: host and media MiB since the
 * first, temperature, throttle and stall ms. */
static struct db_dev_point pt(int64_t t_s, int64_t host, int64_t media, int64_t temp, int64_t thr,
			      int64_t stall)
{
	struct db_dev_point p = { .phase = DB_PHASE_MEASURE, .t_ms = t_s * 1000 };
	const int64_t v[DB_SERIES__COUNT] = {
		[DB_SERIES_HOST_BYTES] = host * MIB_I64,
		[DB_SERIES_MEDIA_BYTES] = media * MIB_I64,
		[DB_SERIES_TEMP_C] = temp,
		[DB_SERIES_THROTTLE_MS] = thr,
		[DB_SERIES_HOST_STALL_MS] = stall,
	};
	for (int f = 0; f < DB_SERIES__COUNT; f++) {
		p.has[f] = 1;
		p.val[f] = v[f];
	}
	return p;
}

/* Windows cut from readings: bounded by the readings around them, the
 * counters' growth between, the highest temperature within. */
static void test_windows(void **state)
{
	struct db_dev_point s[] = {
		{ .phase = DB_PHASE_FILL, .t_ms = 0 },
		pt(0, 0, 0, 40, 0, 0),
		pt(1, 10, 30, 41, 0, 0),
		pt(2, 20, 60, 42, 0, 0),
		pt(3, 30, 90, 55, 400, 0),
		pt(4, 32, 96, 60, 1400, 0),
		pt(5, 34, 102, 58, 2400, 0),
		pt(6, 44, 132, 44, 2400, 0),
	};
	size_t n = sizeof(s) / sizeof(s[0]);
	struct cause_window w;

	cause_window(s, n, DB_PHASE_MEASURE, 3000, 5000, &w); /* the dip */
	assert_true(w.known);
	assert_int_equal(w.start_ms, 3000);
	assert_int_equal(w.end_ms, 5000);
	assert_int_equal(w.host_bytes, 4 * MIB_I64);
	assert_true(w.wa == 3.0);
	assert_int_equal(w.throttle_ms, 2000);
	assert_int_equal(w.peak_temp_c, 60);
	cause_window(s, n, DB_PHASE_MEASURE, 1000, 3000, &w); /* before it */
	assert_int_equal(w.throttle_ms, 400);
	assert_int_equal(w.peak_temp_c, 55);
	assert_true(w.wa == 3.0);                             /* the same WA: latency, not wear */
	cause_window(s, n, DB_PHASE_MEASURE, 3500, 4200, &w); /* widened to readings */
	assert_int_equal(w.start_ms, 3000);
	assert_int_equal(w.end_ms, 5000);
	cause_window(s, n, DB_PHASE_MEASURE, 0, INT64_MAX, &w); /* the phase */
	assert_int_equal(w.end_ms, 6000);
	assert_int_equal(w.host_bytes, 44 * MIB_I64);
	cause_window(s, n, DB_PHASE_MEASURE, 4000, 5000, &w);
	assert_int_equal(w.host_bytes, 2 * MIB_I64);
	assert_true(w.wa == 3.0);
	s[6].val[DB_SERIES_HOST_BYTES] = 32 * MIB_I64 + 512 * 1024; /* under 1 MiB: unknown */
	cause_window(s, n, DB_PHASE_MEASURE, 4000, 5000, &w);
	assert_true(w.wa < 0);
	cause_window(s, n, DB_PHASE_FILL, 0, 1000, &w); /* one reading: unknown */
	assert_false(w.known);
	cause_window(s, 0, DB_PHASE_MEASURE, 0, 1000, &w);
	assert_false(w.known);
	/* a counter that went back (a reset drive) is unknown, not negative */
	s[7].val[DB_SERIES_THROTTLE_MS] = 0;
	cause_window(s, n, DB_PHASE_MEASURE, 5000, 6000, &w);
	assert_true(w.known && !w.has_throttle);
}

static struct db_sample smp(int64_t t_s, double mibps, double stall_ms)
{
	return (struct db_sample){ .phase = DB_PHASE_MEASURE,
				   .t_ms = t_s * 1000,
				   .seconds = 1,
				   .mibps = mibps,
				   .host_stall_ms = stall_ms };
}

/* Where the rate fell below a limit, and how long it held before. */
static void test_dip_below(void **state)
{
	struct db_sample s[] = {
		{ .phase = DB_PHASE_FILL, .t_ms = 1000, .seconds = 1, .mibps = 1 },
		smp(1, 100, 0),
		smp(2, 100, 0),
		smp(3, 100, 0),
		smp(4, 10, 0),
		smp(5, 0, 900),
		smp(6, 12, 0),
		smp(7, 100, 0),
	};
	int64_t a, b;
	size_t held;

	assert_int_equal(cause_dip_below(s, 8, 50, &a, &b, &held), 0);
	assert_int_equal(a, 3000);
	assert_int_equal(b, 6000);
	assert_int_equal(held, 3);
	assert_int_equal(cause_dip_below(s, 8, 5, &a, &b, &held), -ENOENT); /* stalled: no */
	assert_int_equal(a, 0);
	assert_int_equal(b, 7000);
	assert_int_equal(held, 0);
	assert_int_equal(cause_dip_below(s + 4, 4, 50, &a, &b, &held), 0); /* low at once */
	assert_int_equal(held, 0);
}

static struct devpoll_reading rd(uint64_t t_ms, int64_t host, int64_t temp)
{
	struct devpoll_reading r = { .t_ns = t_ms * 1000000ull };
	devstat_set(&r.d, DEVSTAT_HOST_BYTES, host);
	devstat_set(&r.d, DEVSTAT_TEMP_C, temp);
	devstat_set(&r.d, DEVSTAT_THROTTLE_MS, 5000);
	return r;
}

/* Readings on the phases' clocks: before the fill at its start, then each
 * phase's own time; counters since the first; the host's stalls up to
 * each; two in one millisecond keep the later. */
static void test_series_build(void **state)
{
	struct devpoll_reading v[] = {
		rd(999, 1000, 40),  rd(1500, 2000, 41), rd(2000, 3000, 42),
		rd(3000, 4000, 43), rd(3000, 4500, 44), rd(5200, 9000, 45),
	};
	const struct series_clock c = { .fill_t0 = 1000000000ull, .measure_t0 = 2000000000ull };
	const struct hstall st[] = { { .start = 4000000000ull, .end = 5000000000ull } };
	struct db_dev_point *p;
	size_t n;

	assert_int_equal(series_build(v, 6, &c, st, 1, &p, &n), 0);
	assert_int_equal(n, 5);
	static const struct {
		enum db_phase ph;
		int64_t t, host, temp, stall;
	} want[] = {
		{ DB_PHASE_FILL, 0, 0, 40, 0 },
		{ DB_PHASE_FILL, 500, 1000, 41, 0 },
		{ DB_PHASE_MEASURE, 0, 2000, 42, 0 },
		{ DB_PHASE_MEASURE, 1000, 3500, 44, 0 },
		{ DB_PHASE_MEASURE, 3200, 8000, 45, 1000 },
	};
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(p[i].phase, want[i].ph);
		assert_int_equal(p[i].t_ms, want[i].t);
		assert_int_equal(p[i].val[DB_SERIES_HOST_BYTES], want[i].host);
		assert_int_equal(p[i].val[DB_SERIES_TEMP_C], want[i].temp);
		assert_int_equal(p[i].val[DB_SERIES_HOST_STALL_MS], want[i].stall);
		assert_int_equal(p[i].val[DB_SERIES_THROTTLE_MS], 0);
		assert_false(p[i].has[DB_SERIES_MEDIA_BYTES]); /* the drive has none */
	}
	free(p);
	/* no fill: the reading before the measured phase is its start */
	const struct series_clock m = { .measure_t0 = 1000000000ull };
	assert_int_equal(series_build(v, 2, &m, NULL, 0, &p, &n), 0);
	assert_int_equal(p[0].phase, DB_PHASE_MEASURE);
	assert_int_equal(p[0].t_ms, 0);
	assert_int_equal(p[1].t_ms, 500);
	free(p);
	assert_int_equal(series_build(v, 0, &m, NULL, 0, &p, &n), 0);
	assert_null(p);
	assert_int_equal(n, 0);
}

/* Every evidence field named, known figures written, unknown ones empty;
 * the JSON and the words say the same. */
static void test_texts(void **state)
{
	struct cause_evidence ev = {
		.cause = CAUSE_THERMAL,
		.dip = win(3000, 1.5, 1500, 70, 0),
		.from = CAUSE_BEFORE_ITERATION,
		.throttle_res_ms = 1,
	};
	struct cause_texts tx;
	size_t n;
	const char *const *names = cause_field_names(&n);

	ev.before = win(3000, -1, 0, 45, 0);
	cause_texts(&ev, &tx);
	assert_int_equal(n, CAUSE_FIELDS);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(tx.fields[i].name, names[i]);
		assert_non_null(tx.fields[i].value);
	}
	assert_string_equal(tx.vals[CAUSE_F_DIP_START_S], "10.000");
	assert_string_equal(tx.vals[CAUSE_F_DIP_END_S], "13.000");
	assert_string_equal(tx.vals[CAUSE_F_DIP_DEVICE_WA], "1.5000");
	assert_string_equal(tx.vals[CAUSE_F_DIP_THROTTLE_MS], "1500");
	assert_string_equal(tx.vals[CAUSE_F_DIP_PEAK_TEMP_C], "70");
	assert_string_equal(tx.vals[CAUSE_F_BEFORE], "iteration");
	assert_string_equal(tx.vals[CAUSE_F_BEFORE_DEVICE_WA], "");
	assert_string_equal(tx.vals[CAUSE_F_BEFORE_ITERATION_ID], "");
	assert_string_equal(tx.vals[CAUSE_F_THROTTLE_RESOLUTION_MS], "1");
	assert_non_null(strstr(tx.json, "\"cause\":\"thermal\",\"device_wa\":1.5000,"
					"\"baseline_device_wa\":null,\"throttle_seconds\":1.500,"
					"\"peak_temp_c\":70,"));
	assert_non_null(strstr(tx.json, "\"before\":\"iteration\""));
	assert_non_null(strstr(tx.words, "likely cause: thermal (from 10.000 s to 13.000 s"));
	assert_non_null(strstr(tx.words, "device WA 1.5000 against unknown"));
	struct cause_evidence none = { .cause = CAUSE_UNKNOWN, .dip = { .wa = -1 } };
	none.before.wa = -1;
	cause_texts(&none, &tx);
	for (size_t i = 0; i < n; i++)
		if (i != CAUSE_F_BEFORE && tx.vals[i][0])
			fail_msg("%s is %s for a drive that reported nothing", names[i],
				 tx.vals[i]);
	assert_non_null(strstr(tx.words, "likely cause: unknown (the drive reported no"));
	assert_non_null(strstr(tx.json, "\"device_wa\":null"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge_table), cmocka_unit_test(test_windows),
		cmocka_unit_test(test_dip_below),   cmocka_unit_test(test_series_build),
		cmocka_unit_test(test_texts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
