/* Unit tests of engine: a real libaio O_DIRECT phase on a temporary file. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"

#define SPAN (4u << 20)

struct fixture {
	char path[64];
	int fd;
	struct eng_ctx *eng;
	int nsamples;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/var/tmp/wearmon-engine-XXXXXX");
	int tmp = mkstemp(f->path);
	if (tmp < 0)
		return -1;
	close(tmp);
	f->fd = open(f->path, O_RDWR | O_DIRECT);
	if (f->fd < 0 || ftruncate(f->fd, SPAN + 65536))
		return -1;
	if (eng_create(16, 65536, &f->eng))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	eng_destroy(f->eng);
	close(f->fd);
	unlink(f->path);
	free(f);
	return 0;
}

static void count_sample(void *arg, const struct eng_sample *s)
{
	struct fixture *f = arg;
	f->nsamples++;
	assert_true(s->seconds > 0);
}

static void base_phase(struct fixture *f, struct eng_phase *p)
{
	memset(p, 0, sizeof(*p));
	p->fd = f->fd;
	p->span_offset = 65536;
	p->span_len = SPAN;
	p->block_size = 4096;
	p->queue_depth = 8;
	p->is_write = 1;
	p->amount = SPAN;
	p->seed = 1;
	p->sample_interval = 0.01;
	p->on_sample = count_sample;
	p->arg = f;
}

/* A sequential write covers the span exactly, and not a byte outside it. */
static void test_seq_write_covers_span(void **state)
{
	struct fixture *f = *state;
	struct eng_phase p;
	static struct eng_result r;
	base_phase(f, &p);
	assert_int_equal(eng_run(f->eng, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.bytes, SPAN);
	assert_int_equal(r.ops, SPAN / 4096);
	assert_int_equal(r.lat.count, SPAN / 4096);
	assert_true(r.nsamples >= 1);
	assert_int_equal((int)r.nsamples, f->nsamples);
	assert_true(r.mibps > 0 && r.mibps_min <= r.mibps_max);

	unsigned char *buf = malloc(SPAN + 65536);
	int rd = open(f->path, O_RDONLY);
	assert_int_equal(pread(rd, buf, SPAN + 65536, 0), SPAN + 65536);
	close(rd);
	for (size_t i = 0; i < 65536; i++)
		assert_int_equal(buf[i], 0);
	/* every block carries a nonzero stamp at its start */
	for (size_t b = 0; b < SPAN / 4096; b++) {
		uint64_t stamp;
		memcpy(&stamp, buf + 65536 + b * 4096, 8);
		assert_true(stamp != 0);
	}
	free(buf);
}

/* Random reads of 1x the span touch most blocks (1 - 1/e expected). */
static void test_random_read_uniform(void **state)
{
	struct fixture *f = *state;
	struct eng_phase p;
	static struct eng_result r;
	base_phase(f, &p);
	p.is_write = 0;
	p.is_random = 1;
	assert_int_equal(eng_run(f->eng, &p, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.ops, SPAN / 4096);
}

static void test_duration_limit(void **state)
{
	struct fixture *f = *state;
	struct eng_phase p;
	static struct eng_result r;
	base_phase(f, &p);
	p.is_random = 1;
	p.amount = 0;
	p.duration = 0.3;
	p.sample_interval = 0.1;
	assert_int_equal(eng_run(f->eng, &p, &r), 0);
	assert_true(r.seconds >= 0.3 && r.seconds < 2.0);
	assert_true(r.nsamples >= 2);
}

static void test_stop_flag(void **state)
{
	struct fixture *f = *state;
	struct eng_phase p;
	static struct eng_result r;
	static volatile sig_atomic_t stop = 1;
	base_phase(f, &p);
	p.stop = &stop;
	assert_int_equal(eng_run(f->eng, &p, &r), 0);
	assert_int_equal(r.interrupted, 1);
	assert_true(r.bytes < SPAN);
}

/* An I/O error is counted with its offset and ends the phase. */
static void test_error_recorded(void **state)
{
	struct fixture *f = *state;
	struct eng_phase p;
	static struct eng_result r;
	int ro = open(f->path, O_RDONLY | O_DIRECT);
	base_phase(f, &p);
	p.fd = ro;
	assert_int_equal(eng_run(f->eng, &p, &r), 0);
	close(ro);
	assert_true(r.errors >= 1);
	assert_int_equal(r.first_errno, EBADF);
	assert_int_equal(r.first_error_offset, 65536);
}

static void test_bad_phase(void **state)
{
	struct fixture *f = *state;
	struct eng_phase p;
	static struct eng_result r;
	base_phase(f, &p);
	p.queue_depth = 17;     /* more than the context holds */
	assert_int_equal(eng_run(f->eng, &p, &r), -EINVAL);
	base_phase(f, &p);
	p.block_size = 1000;    /* not a multiple of 512 */
	assert_int_equal(eng_run(f->eng, &p, &r), -EINVAL);
	base_phase(f, &p);
	p.span_len = 4096 * 3 + 512;
	assert_int_equal(eng_run(f->eng, &p, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_seq_write_covers_span, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_read_uniform, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duration_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_phase, setup, teardown),
	};
	return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
