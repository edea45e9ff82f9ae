/* test_ftl: unit tests of simssd's FTL, thermal model, option table and
 * control commands. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl.h"
#include "ftl.h"
#include "opts.h"
#include "thermal.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)
#define US 1000ull
#define MS 1000000ull

/* cmocka 1.1 has no assert_double_equal. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* 4 MiB drive, 16 KiB blocks (4 pages), 2 channels, 1 ms program. */
static struct ftl_config small(void)
{
	struct ftl_config c = {
		.capacity = 4 * MiB,
		.page = 4096,
		.erase_block = 16 * KiB,
		.spare_pct = 10,
		.channels = 2,
		.t_prog = 1 * MS,
		.t_read = 100 * US,
		.t_erase = 2 * MS,
		.cache = 0,
		.gc_free = 1,
	};
	return c;
}

static struct ftl *make(const struct ftl_config *c)
{
	struct ftl *f = NULL;

	assert_int_equal(ftl_create(c, &f), 0);
	assert_non_null(f);
	return f;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_config_rejects_bad_geometry(void **state)
{
	static const struct {
		const char *field;
		uint64_t value;
	} bad[] = {
		{ "page", 1000 },  { "page", 256 },    { "erase_block", 6000 },
		{ "channels", 0 }, { "channels", 65 }, { "capacity", 4 * MiB + 512 },
		{ "capacity", 0 }, { "spare", 0 },     { "gc_free", 0 },
	};
	const char *why;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ftl_config c = small();

		if (!strcmp(bad[i].field, "page"))
			c.page = (uint32_t)bad[i].value;
		else if (!strcmp(bad[i].field, "erase_block"))
			c.erase_block = (uint32_t)bad[i].value;
		else if (!strcmp(bad[i].field, "channels"))
			c.channels = (uint32_t)bad[i].value;
		else if (!strcmp(bad[i].field, "capacity"))
			c.capacity = bad[i].value;
		else if (!strcmp(bad[i].field, "spare"))
			c.spare_pct = (double)bad[i].value; /* no room for GC */
		else
			c.gc_free = (uint32_t)bad[i].value;
		assert_int_equal(ftl_config_check(&c, &why), -EINVAL);
		assert_non_null(why);
	}
	{
		struct ftl_config c = small();

		assert_int_equal(ftl_config_check(&c, &why), 0);
	}
}

static void test_fresh_sequential_write_spreads_over_channels(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	uint64_t ack;

	/* 8 pages on 2 channels: 4 programs each, back to back. */
	assert_int_equal(ftl_write(f, 0, 32 * KiB, NULL, 0, &ack), 0);
	assert_int_equal(ack, 4 * MS);
	assert_near(ftl_fresh_write_rate(&c), 2 * 4096 / 1e-3, 1e-6);
	assert_int_equal(ftl_check(f), 0);
	ftl_destroy(f);
}

static void test_cache_acknowledges_ahead_of_flash(void **state)
{
	struct ftl_config c = small();
	struct ftl *f;
	uint64_t ack;

	c.cache = 16 * KiB; /* 4 pages over 2 channels: 2 ms of lead */
	f = make(&c);
	assert_int_equal(ftl_write(f, 0, 16 * KiB, NULL, 0, &ack), 0);
	assert_int_equal(ack, 0);
	assert_int_equal(ftl_write(f, 16 * KiB, 16 * KiB, NULL, 0, &ack), 0);
	assert_int_equal(ack, 2 * MS); /* flash done at 4 ms, minus the lead */
	ftl_destroy(f);
}

static void test_overwrite_invalidates_old_copy(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	struct ftl_stats st;
	uint64_t ack;

	assert_int_equal(ftl_write(f, 0, 4096, NULL, 0, &ack), 0);
	assert_int_equal(ftl_write(f, 0, 4096, NULL, 0, &ack), 0);
	ftl_get_stats(f, &st);
	assert_int_equal(st.valid_pages, 1);
	assert_int_equal(st.host_bytes_written, 8192);
	assert_int_equal(st.flash_bytes_written, 8192);
	assert_int_equal(ftl_check(f), 0);
	ftl_destroy(f);
}

static void test_partial_page_write_reads_old_page_first(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	struct ftl_stats st;
	uint64_t ack;

	assert_int_equal(ftl_write(f, 0, 4096, NULL, 0, &ack), 0);
	assert_int_equal(ftl_write(f, 512, 512, NULL, 10 * MS, &ack), 0);
	ftl_get_stats(f, &st);
	assert_int_equal(st.flash_bytes_read, 4096);
	assert_int_equal(st.host_bytes_written, 4096 + 512);
	/* A whole page is programmed for the 512 bytes. */
	assert_int_equal(st.flash_bytes_written, 2 * 4096);
	assert_true(ack >= 10 * MS + 1 * MS);
	ftl_destroy(f);
}

static void test_read_costs_only_mapped_pages(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	uint64_t ack, done;

	assert_int_equal(ftl_read(f, 0, 64 * KiB, 0, &done), 0);
	assert_int_equal(done, 0);
	assert_int_equal(ftl_write(f, 0, 8192, NULL, 0, &ack), 0);
	/* Two pages on two channels, read after the programs finish. */
	assert_int_equal(ftl_read(f, 0, 8192, 5 * MS, &done), 0);
	assert_int_equal(done, 5 * MS + 100 * US);
	ftl_destroy(f);
}

static void test_out_of_range_is_rejected(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	uint64_t t;

	assert_int_equal(ftl_write(f, 4 * MiB - 4096, 8192, NULL, 0, &t), -EINVAL);
	assert_int_equal(ftl_read(f, 4 * MiB, 1, 0, &t), -EINVAL);
	assert_int_equal(ftl_trim(f, UINT64_MAX, 2, 0, &t), -EINVAL);
	assert_int_equal(ftl_write(f, 0, 0, NULL, 7, &t), 0);
	assert_int_equal(t, 7);
	ftl_destroy(f);
}

/* Random 4 KiB overwrites of the first span bytes; returns the WA. */
static double random_pass(struct ftl *f, uint64_t span, uint64_t pages, uint64_t *seed)
{
	struct ftl_stats a, b;
	uint64_t i, ack, now = 0;

	ftl_get_stats(f, &a);
	for (i = 0; i < pages; i++) {
		uint64_t off = rng(seed) % (span / 4096) * 4096;

		assert_int_equal(ftl_write(f, off, 4096, NULL, now, &ack), 0);
		now = ack;
	}
	ftl_get_stats(f, &b);
	return (double)(b.flash_bytes_written - a.flash_bytes_written) /
	       (double)(b.host_bytes_written - a.host_bytes_written);
}

static void test_gc_keeps_maps_consistent_and_amplifies(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	struct ftl_stats st;
	uint64_t ack, seed = 42, pages = c.capacity / 4096;
	double wa;

	assert_int_equal(ftl_write(f, 0, c.capacity, NULL, 0, &ack), 0);
	random_pass(f, c.capacity, 2 * pages, &seed);
	wa = random_pass(f, c.capacity, pages, &seed);
	ftl_get_stats(f, &st);
	assert_int_equal(ftl_check(f), 0);
	assert_int_equal(st.valid_pages, pages);
	assert_true(wa > 2.0);
	assert_true(st.gc_bytes_moved > 0);
	assert_true(st.erases > 0 && st.erase_max >= st.erase_min);
	ftl_destroy(f);
}

static void test_unused_space_lowers_write_amplification(void **state)
{
	struct ftl_config c = small();
	struct ftl *full = make(&c), *part = make(&c);
	uint64_t ack, seed = 7, pages = c.capacity / 4096;
	uint64_t span = c.capacity / 5 * 4 / 4096 * 4096;
	double wa_full, wa_part;

	assert_int_equal(ftl_write(full, 0, c.capacity, NULL, 0, &ack), 0);
	assert_int_equal(ftl_write(part, 0, span, NULL, 0, &ack), 0);
	random_pass(full, c.capacity, 2 * pages, &seed);
	random_pass(part, span, 2 * pages, &seed);
	wa_full = random_pass(full, c.capacity, pages, &seed);
	wa_part = random_pass(part, span, pages, &seed);
	assert_true(wa_part * 1.5 < wa_full);
	ftl_destroy(full);
	ftl_destroy(part);
}

/* Random 4 KiB overwrites of span bytes from *now, each sent when the last
 * is acknowledged. Returns the WA; *now ends at the last acknowledgement. */
static double burst_at(struct ftl *f, uint64_t span, uint64_t pages, uint64_t seed, uint64_t *now)
{
	struct ftl_stats a, b;
	uint64_t ack;

	ftl_get_stats(f, &a);
	for (uint64_t i = 0; i < pages; i++) {
		assert_int_equal(
			ftl_write(f, rng(&seed) % (span / 4096) * 4096, 4096, NULL, *now, &ack), 0);
		*now = ack;
	}
	ftl_get_stats(f, &b);
	return (double)(b.flash_bytes_written - a.flash_bytes_written) /
	       (double)(b.host_bytes_written - a.host_bytes_written);
}

/* An idle drive reclaims blocks up to bg_free per channel once its flash
 * has been idle for bg_idle, counted as flash writes, not host ones; the
 * next burst then amplifies less than on a drive without it. */
static void test_background_gc_reclaims_while_idle(void **state)
{
	struct ftl_config c = small();
	uint64_t pages = c.capacity / 4096, t_bg = 0, t_plain = 0, end, ack;
	struct ftl_stats before, after;

	c.bg_free = 4;
	c.bg_idle = 100 * MS;
	struct ftl *bg = make(&c);
	c.bg_free = 0;
	struct ftl *plain = make(&c);
	assert_int_equal(ftl_write(bg, 0, c.capacity, NULL, 0, &ack), 0);
	assert_int_equal(ftl_write(plain, 0, c.capacity, NULL, 0, &ack), 0);
	burst_at(bg, c.capacity, 2 * pages, 11, &t_bg);
	burst_at(plain, c.capacity, 2 * pages, 11, &t_plain);
	assert_int_equal(t_bg, t_plain); /* no background work while busy */
	ftl_flush(bg, t_bg, &end);
	ftl_get_stats(bg, &before);
	assert_true(before.free_blocks < 2 * 4);
	ftl_idle(bg, end + 50 * MS); /* not idle long enough yet */
	ftl_get_stats(bg, &after);
	assert_int_equal(after.bg_gc_erases, 0);
	ftl_idle(bg, end + 10000 * MS);
	ftl_get_stats(bg, &after);
	assert_int_equal(ftl_check(bg), 0);
	assert_int_equal(after.free_blocks, 2 * 4);
	assert_true(after.bg_gc_erases > 0);
	assert_int_equal(after.erases - before.erases, after.bg_gc_erases);
	assert_int_equal(after.flash_bytes_written - before.flash_bytes_written,
			 after.bg_gc_bytes_moved);
	assert_int_equal(after.host_bytes_written, before.host_bytes_written);
	t_bg = t_plain = end + 10000 * MS;
	double wa_bg = burst_at(bg, c.capacity, pages / 8, 12, &t_bg);
	double wa_plain = burst_at(plain, c.capacity, pages / 8, 12, &t_plain);
	assert_true(wa_bg < wa_plain);
	assert_true(t_bg < t_plain); /* the burst also ends sooner */
	ftl_destroy(bg);
	ftl_destroy(plain);
}

static void test_trim_everything_frees_all_blocks(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	struct ftl_stats st;
	uint64_t ack, done, seed = 3;

	assert_int_equal(ftl_write(f, 0, c.capacity, NULL, 0, &ack), 0);
	random_pass(f, c.capacity, c.capacity / 4096, &seed);
	assert_int_equal(ftl_trim(f, 0, c.capacity, ack, &done), 0);
	ftl_get_stats(f, &st);
	assert_int_equal(st.valid_pages, 0);
	assert_int_equal(st.trimmed_bytes, c.capacity);
	/* All but the blocks still open for writing are erased at once. */
	assert_true(st.free_blocks >= st.total_blocks - 2 * c.channels);
	assert_true(done > ack);
	assert_int_equal(ftl_check(f), 0);
	ftl_destroy(f);
}

static void test_trim_ignores_partial_pages(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	struct ftl_stats st;
	uint64_t ack, done;

	assert_int_equal(ftl_write(f, 0, 16 * KiB, NULL, 0, &ack), 0);
	assert_int_equal(ftl_trim(f, 512, 3 * 4096, 0, &done), 0);
	ftl_get_stats(f, &st);
	assert_int_equal(st.valid_pages, 2); /* pages 1 and 2 went */
	assert_int_equal(st.trimmed_bytes, 8192);
	ftl_destroy(f);
}

static void test_secure_erase_resets_mapping_and_counts_wear(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	struct ftl_stats st;
	uint64_t ack, done;

	assert_int_equal(ftl_write(f, 0, c.capacity, NULL, 0, &ack), 0);
	assert_int_equal(ftl_secure_erase(f, ack, &done), 0);
	ftl_get_stats(f, &st);
	assert_int_equal(st.valid_pages, 0);
	assert_int_equal(st.free_blocks, st.total_blocks);
	assert_int_equal(st.erase_max, 1);
	assert_true(done >= ack + c.t_erase);
	assert_int_equal(ftl_check(f), 0);
	/* Fresh again: the same write costs what it cost the first time. */
	assert_int_equal(ftl_write(f, 0, 32 * KiB, NULL, done, &ack), 0);
	assert_int_equal(ack, done + 4 * MS);
	ftl_destroy(f);
}

/* Endurance: percentage used is the mean erase count over the endurance,
 * each erase counted wear_accel times; the host bytes written when it
 * first reaches 100 % are kept. Off by default. */
static void test_endurance_ends_life(void **state)
{
	struct ftl_config c = small();
	struct simssd_opts o;
	struct ftl_stats st;
	struct ftl *f;
	uint64_t ack = 0, host_before = 0, now = 0;
	double used = 0;

	assert_int_equal(opts_defaults(&o), 0);
	opts_to_ftl(&o, &c);
	assert_int_equal(c.endurance, 0);
	assert_int_equal(c.wear_accel, 1);
	assert_int_equal(opts_set(&o, "endurance=10"), 0);
	assert_int_equal(opts_set(&o, "wear_accel=4"), 0);
	assert_int_equal(opts_set(&o, "wear_accel=0"), -ERANGE);
	opts_free(&o);
	c = small();
	c.endurance = 10;
	c.wear_accel = 4;
	f = make(&c);
	for (int pass = 0; pass < 8; pass++) {
		assert_int_equal(ftl_write(f, 0, c.capacity, NULL, now, &ack), 0);
		now = ack;
		ftl_get_stats(f, &st);
		assert_near(st.life_used_pct, 100.0 * st.erase_avg / 10, 1e-9);
		assert_true(st.life_used_pct >= used);
		assert_int_equal(st.erase_max % 4, 0);
		if (st.life_used_pct < 100)
			assert_int_equal(st.life_end_host_bytes, 0);
		else if (used < 100) /* crossed in this pass */
			assert_true(st.life_end_host_bytes >= host_before &&
				    st.life_end_host_bytes <= st.host_bytes_written);
		used = st.life_used_pct;
		host_before = st.host_bytes_written;
	}
	assert_true(used >= 100);
	/* a secure erase wears every used block too */
	uint64_t end = st.life_end_host_bytes, done;
	assert_int_equal(ftl_secure_erase(f, now, &done), 0);
	ftl_get_stats(f, &st);
	assert_true(st.life_used_pct > used);
	assert_int_equal(st.life_end_host_bytes, end);
	ftl_destroy(f);
}

/* The stats text names the endurance figures only when there is one. */
static void test_endurance_stats_text(void **state)
{
	struct ftl_config c = small();
	struct ctl_faults faults;
	struct ftl_stats st;
	char buf[4096];
	struct ftl *f;
	uint64_t ack;

	memset(&faults, 0, sizeof(faults));
	c.endurance = 3;
	c.wear_accel = 2;
	f = make(&c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ftl_write(f, 0, c.capacity, NULL, 0, &ack), 0);
	ftl_get_stats(f, &st);
	ctl_format_stats(&c, &st, &faults, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nendurance 3\nwear_accel 2\npercentage_used "));
	char want[64];
	snprintf(want, sizeof(want), "\npercentage_used %u\n", (unsigned)floor(st.life_used_pct));
	assert_non_null(strstr(buf, want));
	c.endurance = 0;
	ctl_format_stats(&c, &st, &faults, 0, buf, sizeof(buf));
	assert_null(strstr(buf, "percentage_used"));
	ftl_destroy(f);
}

static void test_compressed_pages_cost_their_size(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	struct ftl_stats st;
	uint8_t units[8];
	uint64_t ack;

	memset(units, 2, sizeof(units)); /* each page packs to a quarter */
	assert_int_equal(ftl_units_per_page(f), 8);
	assert_int_equal(ftl_write(f, 0, 32 * KiB, units, 0, &ack), 0);
	assert_int_equal(ack, 1 * MS); /* 4 quarter programs per channel */
	ftl_get_stats(f, &st);
	assert_int_equal(st.flash_bytes_written, 8 * 2 * FTL_UNIT);
	assert_int_equal(st.valid_bytes_flash, 8 * 2 * FTL_UNIT);
	assert_int_equal(ftl_check(f), 0);
	ftl_destroy(f);
}

static void test_opts_parse_sizes_and_times(void **state)
{
	static const struct {
		const char *s;
		uint64_t bytes;
	} sizes[] = {
		{ "4096", 4096 },       { "4k", 4096 },   { "512M", 512 * MiB },
		{ "1GiB", 1024 * MiB }, { "1.5K", 1536 }, { "64KiB", 64 * KiB },
	};
	static const struct {
		const char *s;
		uint64_t ns;
	} times[] = {
		{ "250ns", 250 },    { "200us", 200 * US }, { "1.5ms", 1500 * US },
		{ "2s", 2000 * MS }, { "50", 50 * US },
	};
	static const char *bad[] = { "", "k", "4x", "-1", "1.2.3" };
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(opts_parse_size(sizes[i].s, &v), 0);
		assert_int_equal(v, sizes[i].bytes);
	}
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		assert_int_equal(opts_parse_time(times[i].s, &v), 0);
		assert_int_equal(v, times[i].ns);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(opts_parse_size(bad[i], &v), -EINVAL);
}

static void test_opts_table(void **state)
{
	struct simssd_opts o;
	struct ftl_config c;
	const char *why;

	assert_int_equal(opts_defaults(&o), 0);
	opts_to_ftl(&o, &c);
	assert_int_equal(ftl_config_check(&c, &why), 0);
	assert_int_equal(opts_set(&o, "capacity=16M"), 0);
	assert_int_equal(o.capacity, 16 * MiB);
	assert_int_equal(opts_set(&o, "t_prog=2ms"), 0);
	assert_int_equal(o.t_prog, 2 * MS);
	assert_int_equal(opts_set(&o, "spare=12.5%"), 0);
	assert_near(o.spare, 12.5, 1e-9);
	assert_int_equal(opts_set(&o, "bg_gc_free=8"), 0);
	assert_int_equal(opts_set(&o, "bg_gc_idle=250ms"), 0);
	opts_to_ftl(&o, &c);
	assert_int_equal(c.bg_free, 8);
	assert_int_equal(c.bg_idle, 250 * MS);
	assert_int_equal(opts_set(&o, "compress=yes"), 0);
	assert_int_equal(o.compress, 1);
	assert_int_equal(opts_set(&o, "store=/tmp/x"), 0);
	assert_string_equal(o.store, "/tmp/x");
	assert_int_equal(opts_set(&o, "allow_other"), -ENOENT);
	assert_int_equal(opts_set(&o, "max_threads=4"), -ENOENT);
	assert_int_equal(opts_set(&o, "channels=65"), -ERANGE);
	assert_int_equal(opts_set(&o, "channels=two"), -EINVAL);
	assert_int_equal(opts_set(&o, "compress=maybe"), -EINVAL);
	opts_free(&o);
}

static void test_ctl_parse(void **state)
{
	static const char *bad[] = {
		"",
		"secure-erase now",
		"fault",
		"fault ioerror 0",
		"fault ioerror 0 0",
		"fault ioerror 0 4k sideways",
		"fault latency",
		"fault latency x",
		"fault latency 5 -1",
		"fault explode",
		"erase",
		"fault stats-latency",
		"fault stats-latency soon",
		"fault stats-latency 5 -1",
	};
	struct ctl_cmd c;
	size_t i;

	assert_int_equal(ctl_parse("secure-erase", &c), 0);
	assert_int_equal(c.kind, CTL_SECURE_ERASE);
	assert_int_equal(ctl_parse("fault ioerror 1M 4k read", &c), 0);
	assert_int_equal(c.kind, CTL_IOERROR);
	assert_int_equal(c.off, MiB);
	assert_int_equal(c.len, 4096);
	assert_int_equal(c.ops, CTL_OP_READ);
	assert_int_equal(ctl_parse(" fault  latency 250 3 ", &c), 0);
	assert_int_equal(c.latency_ns, 250 * MS);
	assert_int_equal(c.count, 3);
	assert_int_equal(ctl_parse("fault latency 2.5", &c), 0);
	assert_int_equal(c.latency_ns, 2500 * US);
	assert_int_equal(c.count, 1);
	assert_int_equal(ctl_parse("fault stats-latency 20s 0", &c), 0);
	assert_int_equal(c.kind, CTL_STATS_LATENCY);
	assert_int_equal(c.latency_ns, 20000 * MS);
	assert_int_equal(c.count, 0);
	assert_int_equal(ctl_parse("fault vanish", &c), 0);
	assert_int_equal(c.kind, CTL_VANISH);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ctl_parse(bad[i], &c), -EINVAL);
}

static void test_ctl_faults(void **state)
{
	struct ctl_faults f;
	struct ctl_cmd c;
	uint64_t d;

	memset(&f, 0, sizeof(f));
	assert_int_equal(ctl_parse("fault ioerror 8192 4096 read", &c), 0);
	assert_int_equal(ctl_apply(&f, &c), 0);
	assert_int_equal(ctl_check_io(&f, CTL_OP_READ, 8192 + 4095, 1, &d), -EIO);
	assert_int_equal(ctl_check_io(&f, CTL_OP_READ, 0, 8192, &d), 0);
	assert_int_equal(ctl_check_io(&f, CTL_OP_WRITE, 8192, 4096, &d), 0);
	assert_int_equal(ctl_parse("fault latency 10 2", &c), 0);
	assert_int_equal(ctl_apply(&f, &c), 0);
	assert_int_equal(ctl_check_io(&f, CTL_OP_READ, 0, 1, &d), 0);
	assert_int_equal(d, 10 * MS);
	assert_int_equal(ctl_check_io(&f, CTL_OP_READ, 0, 1, &d), 0);
	assert_int_equal(ctl_check_io(&f, CTL_OP_READ, 0, 1, &d), 0);
	assert_int_equal(d, 0);
	assert_int_equal(ctl_parse("fault vanish", &c), 0);
	assert_int_equal(ctl_apply(&f, &c), 0);
	assert_int_equal(ctl_check_io(&f, CTL_OP_TRIM, 0, 1, &d), -EIO);
	assert_int_equal(ctl_parse("fault clear", &c), 0);
	assert_int_equal(ctl_apply(&f, &c), 0);
	assert_int_equal(ctl_check_io(&f, CTL_OP_READ, 8192, 1, &d), 0);
	assert_int_equal(f.errors, 2);
}

/* The stats file's answer is held COUNT times (0: until cleared); disk
 * requests are not. */
static void test_ctl_stats_latency(void **state)
{
	struct ctl_faults f;
	struct ctl_cmd c;
	uint64_t d;

	memset(&f, 0, sizeof(f));
	assert_int_equal(ctl_stats_delay(&f), 0);
	assert_int_equal(ctl_parse("fault stats-latency 30 2", &c), 0);
	assert_int_equal(ctl_apply(&f, &c), 0);
	assert_int_equal(ctl_check_io(&f, CTL_OP_READ, 0, 1, &d), 0);
	assert_int_equal(d, 0);
	assert_int_equal(ctl_stats_delay(&f), 30 * MS);
	assert_int_equal(ctl_stats_delay(&f), 30 * MS);
	assert_int_equal(ctl_stats_delay(&f), 0);
	assert_int_equal(ctl_parse("fault stats-latency 1s 0", &c), 0);
	assert_int_equal(ctl_apply(&f, &c), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(ctl_stats_delay(&f), 1000 * MS);
	assert_int_equal(f.stats_delayed, 7);
	assert_int_equal(ctl_parse("fault clear", &c), 0);
	assert_int_equal(ctl_apply(&f, &c), 0);
	assert_int_equal(ctl_stats_delay(&f), 0);
}

static void test_stats_text(void **state)
{
	struct ftl_config c = small();
	struct ftl *f = make(&c);
	struct ctl_faults faults;
	struct ftl_stats st;
	char buf[4096], tiny[16];
	uint64_t ack;

	memset(&faults, 0, sizeof(faults));
	assert_int_equal(ftl_write(f, 0, 8192, NULL, 0, &ack), 0);
	ftl_get_stats(f, &st);
	assert_true(ctl_format_stats(&c, &st, &faults, 0, buf, sizeof(buf)) < sizeof(buf) - 1);
	assert_non_null(strstr(buf, "\nhost_bytes_written 8192\n"));
	assert_non_null(strstr(buf, "\nwrite_amplification 1.0000\n"));
	assert_non_null(strstr(buf, "\nfresh_write_bytes_per_s 8192000\n"));
	assert_non_null(strstr(buf, "\nerase_count_max 0\n"));
	assert_non_null(strstr(buf, "\nfault_stats_latency_ns 0\nfault_stats_delayed 0\n"));
	assert_int_equal(ctl_format_stats(&c, &st, &faults, 0, tiny, sizeof(tiny)),
			 sizeof(tiny) - 1);
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	ftl_destroy(f);
}

/* ---- thermal model ---------------------------------------------------------- */

#define SEC 1000000000ull

static struct thermal_config warm(double throttle_c)
{
	struct thermal_config c = { .ambient_c = 35,
				    .rise_c = 0.5,
				    .tau_ns = 20 * SEC,
				    .throttle_c = throttle_c,
				    .throttle_bps = MiB };
	return c;
}

/* Write chunk bytes every step ns from *now for span ns. Returns the
 * latest completion time thermal_write gave. */
static uint64_t write_for(struct thermal *t, uint64_t *now, uint64_t span, uint64_t chunk,
			  uint64_t step)
{
	uint64_t end = *now + span, done = 0;
	for (; *now < end; *now += step) {
		uint64_t d = thermal_write(t, chunk, *now);
		done = d > done ? d : done;
	}
	return done;
}

/* Written at r MiB/s, it settles at ambient + rise * r; idle, back at
 * ambient; a faster rate settles hotter. */
static void test_thermal_follows_the_write_rate(void **state)
{
	struct thermal_config c = warm(0);
	struct thermal t, fast;
	uint64_t now = 0, now2 = 0;
	thermal_init(&t, &c, 0);
	thermal_init(&fast, &c, 0);
	assert_near(t.temp_c, 35, 1e-9);
	write_for(&t, &now, 10 * c.tau_ns, MiB, 50 * MS);     /* 20 MiB/s */
	write_for(&fast, &now2, 10 * c.tau_ns, MiB, 10 * MS); /* 100 MiB/s */
	assert_near(t.temp_c, 35 + 0.5 * 20, 0.3);
	assert_near(fast.temp_c, 35 + 0.5 * 100, 1.0);
	thermal_advance(&t, now + c.tau_ns);
	assert_true(t.temp_c < 35 + 0.5 * 20 * 0.4); /* e^-1 of the rise left */
	thermal_advance(&t, now + 10 * c.tau_ns);
	assert_near(t.temp_c, 35, 0.01);
	assert_int_equal(t.throttle_ns, 0); /* no throttle temperature: never */
	assert_int_equal(fast.throttle_ns, 0);
}

/* Hot enough: writes are held to the throttle rate and the time counts;
 * idle, it cools below the hysteresis and stops counting. */
static void test_thermal_throttles_above_its_temperature(void **state)
{
	struct thermal_config c = warm(60);
	struct thermal t;
	uint64_t now = 0;
	thermal_init(&t, &c, 0);
	assert_int_equal(write_for(&t, &now, 5 * SEC, MiB, 10 * MS) <= now, 1);
	assert_false(t.throttled); /* 100 MiB/s for a quarter tau: not yet 60 C */
	write_for(&t, &now, 10 * c.tau_ns, MiB, 10 * MS);
	assert_true(t.throttled);
	assert_true(t.throttle_ns > 0);
	/* a throttled MiB takes a second at 1 MiB/s, queued behind the others */
	uint64_t a = thermal_write(&t, MiB, now), b = thermal_write(&t, MiB, now);
	assert_true(a >= now + SEC);
	assert_int_equal(b - a, SEC);
	uint64_t counted = t.throttle_ns;
	thermal_advance(&t, now + 10 * c.tau_ns);
	assert_false(t.throttled);
	assert_true(t.temp_c < 60 - THERMAL_HYSTERESIS_C);
	uint64_t after = t.throttle_ns;
	assert_true(after > counted && after < counted + 10 * c.tau_ns);
	thermal_advance(&t, now + 20 * c.tau_ns);
	assert_int_equal(t.throttle_ns, after); /* cool: no more throttle time */
	assert_int_equal(thermal_write(&t, 4096, now + 20 * c.tau_ns), now + 20 * c.tau_ns);
}

static void test_thermal_text(void **state)
{
	struct thermal_config c = warm(70);
	struct thermal t;
	char buf[256], tiny[8];
	thermal_init(&t, &c, 0);
	t.throttle_ns = 1500 * MS;
	assert_true(thermal_format(&t, buf, sizeof(buf)) < sizeof(buf) - 1);
	assert_string_equal(buf, "temperature_c 35.0\nthrottled 0\nthrottle_seconds 1.500\n"
				 "throttle_ms 1500\nthrottle_temp_c 70.0\n");
	assert_int_equal(thermal_format(&t, tiny, sizeof(tiny)), sizeof(tiny) - 1);
}

/* An injected heat: the drive reads hotter for its length, throttles when
 * that reaches the throttle temperature, counts the throttle to the
 * millisecond and ends it when the heat goes (the model's own temperature
 * is far below the end of the hysteresis). */
static void test_thermal_heat_fault(void **state)
{
	struct thermal_config c = warm(60);
	struct thermal t;
	char buf[256];
	thermal_init(&t, &c, 0);
	thermal_spike(&t, 30, 2500 * MS, 10 * SEC);
	assert_true(t.throttled);
	thermal_advance(&t, 11 * SEC);
	assert_true(t.throttled);
	thermal_format(&t, buf, sizeof(buf));
	assert_non_null(strstr(buf, "temperature_c 65.0\nthrottled 1\n"));
	assert_int_equal(t.throttle_ns, SEC);
	assert_int_equal(thermal_write(&t, MiB, 11 * SEC) >= 12 * SEC, 1); /* held */
	thermal_advance(&t, 20 * SEC); /* the heat ended at 12.5 s */
	assert_false(t.throttled);
	assert_true(t.throttle_ns == 2500 * MS);
	thermal_format(&t, buf, sizeof(buf));
	assert_non_null(strstr(buf, "throttle_ms 2500\n"));
	/* a heat that stays under the throttle temperature throttles nothing */
	thermal_spike(&t, 10, SEC, 30 * SEC);
	thermal_advance(&t, 40 * SEC);
	assert_true(t.throttle_ns == 2500 * MS);
	struct ctl_cmd cmd;
	assert_int_equal(ctl_parse("fault heat 30 2", &cmd), 0);
	assert_int_equal(cmd.kind, CTL_HEAT);
	assert_true(cmd.heat_c == 30 && cmd.latency_ns == 2 * SEC);
	assert_int_equal(ctl_parse("fault heat 12.5 500ms", &cmd), 0);
	assert_true(cmd.heat_c == 12.5 && cmd.latency_ns == 500 * MS);
	assert_int_equal(ctl_parse("fault heat 0 2", &cmd), -EINVAL);
	assert_int_equal(ctl_parse("fault heat 20", &cmd), -EINVAL);
	assert_int_equal(ctl_parse("fault heat 20 0", &cmd), -EINVAL);
}

/* A drive's identity as its identify data gives it: up to 20 characters
 * of serial, 40 of model, 8 of firmware, printable; none by default. */
static void test_identity_options(void **state)
{
	struct simssd_opts o;
	char buf[256];
	assert_int_equal(opts_defaults(&o), 0);
	assert_int_equal(opts_format_identity(&o, buf, sizeof(buf)), 0);
	assert_int_equal(opts_set(&o, "serial=SIM0123456789ABCDEF0"), 0);
	assert_int_equal(opts_set(&o, "model=WEARMON SIMSSD 256M MLC FTL TEST DRIVE X"), 0);
	assert_int_equal(opts_set(&o, "firmware=SIM1.0.0"), 0);
	opts_format_identity(&o, buf, sizeof(buf));
	assert_string_equal(buf, "serial SIM0123456789ABCDEF0\n"
				 "model WEARMON SIMSSD 256M MLC FTL TEST DRIVE X\n"
				 "firmware SIM1.0.0\n");
	assert_int_equal(opts_set(&o, "serial=SIM0123456789ABCDEF01"), -ERANGE);
	assert_int_equal(opts_set(&o, "firmware=SIM1.0.0X"), -ERANGE);
	assert_int_equal(opts_set(&o, "model= leading"), -EINVAL);
	assert_int_equal(opts_set(&o, "model=tab\there"), -EINVAL);
	opts_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_rejects_bad_geometry),
		cmocka_unit_test(test_fresh_sequential_write_spreads_over_channels),
		cmocka_unit_test(test_cache_acknowledges_ahead_of_flash),
		cmocka_unit_test(test_overwrite_invalidates_old_copy),
		cmocka_unit_test(test_partial_page_write_reads_old_page_first),
		cmocka_unit_test(test_read_costs_only_mapped_pages),
		cmocka_unit_test(test_out_of_range_is_rejected),
		cmocka_unit_test(test_gc_keeps_maps_consistent_and_amplifies),
		cmocka_unit_test(test_unused_space_lowers_write_amplification),
		cmocka_unit_test(test_background_gc_reclaims_while_idle),
		cmocka_unit_test(test_trim_everything_frees_all_blocks),
		cmocka_unit_test(test_trim_ignores_partial_pages),
		cmocka_unit_test(test_secure_erase_resets_mapping_and_counts_wear),
		cmocka_unit_test(test_endurance_ends_life),
		cmocka_unit_test(test_endurance_stats_text),
		cmocka_unit_test(test_compressed_pages_cost_their_size),
		cmocka_unit_test(test_opts_parse_sizes_and_times),
		cmocka_unit_test(test_opts_table),
		cmocka_unit_test(test_ctl_parse),
		cmocka_unit_test(test_ctl_faults),
		cmocka_unit_test(test_ctl_stats_latency),
		cmocka_unit_test(test_stats_text),
		cmocka_unit_test(test_thermal_follows_the_write_rate),
		cmocka_unit_test(test_thermal_throttles_above_its_temperature),
		cmocka_unit_test(test_thermal_text),
		cmocka_unit_test(test_thermal_heat_fault),
		cmocka_unit_test(test_identity_options),
	};

	return cmocka_run_group_tests_name("simssd_ftl", tests, NULL, NULL);
}
