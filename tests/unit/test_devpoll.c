/* Unit tests of devpoll (common/device/devpoll.h) against a counters file
 * beside a pretend loop device's image: deltas from the first reading to
 * the last, the peak temperature of a poll in between, no source without
 * the file, and a stop abandoning nothing that has answered. */
#include "unit.h"

#include <stdatomic.h>
#include <time.h>

#include "unit_tmp.h"

#include "device/devpoll.h"

struct fx {
	char dir[64];
	char stats[128];
	struct tgt tg;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	if (!fx || unit_tmpdir(fx->dir, sizeof(fx->dir), "devpoll"))
		return -1;
	snprintf(fx->stats, sizeof(fx->stats), "%s/stats", fx->dir);
	fx->tg.is_block = 1;
	snprintf(fx->tg.sysname, sizeof(fx->tg.sysname), "loop9");
	snprintf(fx->tg.backing_file, sizeof(fx->tg.backing_file), "%s/disk.img", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	unit_rmtree(fx->dir);
	free(fx);
	return 0;
}

static void write_stats(const struct fx *fx, long host, long flash, int temp)
{
	char tmp[160];
	snprintf(tmp, sizeof(tmp), "%s.new", fx->stats);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fprintf(f, "capacity 1000\nhost_bytes_written %ld\nflash_bytes_written %ld\n", host, flash);
	if (temp > -300)
		fprintf(f, "temperature_c %d\nthrottle_seconds %d\n", temp, temp > 80 ? 3 : 0);
	fclose(f);
	assert_int_equal(rename(tmp, fx->stats), 0); /* a reader sees one or the other */
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

static void test_no_counters_no_source(void **state)
{
	struct fx *fx = *state;
	struct devpoll *p = (struct devpoll *)fx; /* must be cleared */
	struct devstat_delta x;
	assert_int_equal(devpoll_has_source(&fx->tg), 0);
	assert_int_equal(devpoll_begin(&fx->tg, 0.01, NULL, &p), 0);
	assert_null(p);
	devpoll_end(p, &x);
	assert_false(x.host_bytes.has || x.media_bytes.has || x.peak_temp_c.has);
	assert_true(x.wa < 0);
}

/* A hot moment between the start and the end shows as the peak. */
static void test_deltas_and_peak(void **state)
{
	struct fx *fx = *state;
	struct devpoll *p;
	struct devstat_delta x;
	write_stats(fx, 1000, 1500, 40);
	assert_int_equal(devpoll_has_source(&fx->tg), 1);
	assert_int_equal(devpoll_begin(&fx->tg, 0.02, NULL, &p), 0);
	assert_non_null(p);
	write_stats(fx, 3000, 6000, 90);
	sleep_s(0.3); /* many polls see it */
	write_stats(fx, 5000, 9500, 50);
	devpoll_end(p, &x);
	assert_int_equal(x.host_bytes.v, 4000);
	assert_int_equal(x.media_bytes.v, 8000);
	assert_true(x.wa == 2.0);
	assert_int_equal(x.peak_temp_c.v, 90);
	assert_true(x.throttle_ms.has);
	assert_int_equal(x.throttle_ms.v, 0); /* 0 at both ends */
	assert_false(x.media_errors.has);
}

/* The last reading is taken after the end is asked for, not before. */
static void test_end_reads_after_the_last_write(void **state)
{
	struct fx *fx = *state;
	struct devpoll *p;
	struct devstat_delta x;
	atomic_int stop = 0;
	write_stats(fx, 0, 0, -1000);
	assert_int_equal(devpoll_begin(&fx->tg, 60, &stop, &p), 0);
	write_stats(fx, 4096, 4096, -1000);
	devpoll_end(p, &x);
	assert_int_equal(x.host_bytes.v, 4096);
	assert_true(x.wa == 1.0);
	assert_false(x.peak_temp_c.has);
}

/* Every reading is kept, oldest first, with when it was begun; a mark
 * takes one at once, without waiting for the (long) interval. */
static void test_series_and_mark(void **state)
{
	struct fx *fx = *state;
	struct devpoll *p;
	struct devstat_delta x;
	struct devpoll_reading *v;
	size_t n;
	write_stats(fx, 0, 0, 40);
	assert_int_equal(devpoll_begin(&fx->tg, 60, NULL, &p), 0);
	write_stats(fx, 4096, 8192, 70);
	devpoll_mark(p);
	sleep_s(0.3); /* the marked reading is taken meanwhile */
	write_stats(fx, 8192, 12288, 50);
	devpoll_end_series(p, &x, &v, &n);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].d.f[DEVSTAT_HOST_BYTES].v, 0);
	assert_int_equal(v[1].d.f[DEVSTAT_HOST_BYTES].v, 4096);
	assert_int_equal(v[1].d.f[DEVSTAT_TEMP_C].v, 70);
	assert_int_equal(v[2].d.f[DEVSTAT_HOST_BYTES].v, 8192);
	assert_true(v[0].t_ns < v[1].t_ns && v[1].t_ns < v[2].t_ns);
	assert_true(v[2].t_ns - v[0].t_ns < 30000000000ull); /* not the 60 s interval */
	assert_int_equal(x.peak_temp_c.v, 70);
	assert_int_equal(x.throttle_res_ms, 1000); /* throttle_seconds: whole seconds */
	free(v);
	devpoll_mark(NULL); /* no source: nothing to do */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_counters_no_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deltas_and_peak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_reads_after_the_last_write, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_series_and_mark, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
