/* Unit tests of workload: every pattern's offset sequence on a small span
 * (coverage, order, stride, read share, block-size mix) and mix parsing. */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "io/workload.h"

#define SPAN_OFF (64u << 10)
#define SPAN (1u << 20)
#define BS 4096u
#define NBLK (SPAN / BS)
#define OPS 10000

static const struct workload_preset *find(const char *name)
{
	const struct workload_preset *v = workload_preset_find(name);

	if (!v)
		fail_msg("no workload %s", name);
	return v;
}

/* The spec a named workload gets with block_size = 4k and stride 8. */
static struct workload_spec spec_of(const char *name)
{
	const struct workload_preset *w = find(name);
	struct workload_spec s = { .order = w->order,
				   .read_pct = w->read_pct,
				   .random_pct = w->random_pct,
				   .stride = 8,
				   .nbs = 1,
				   .bs = { { BS, 1 } } };
	char msg[256];
	if (w->nbs) {
		memcpy(s.bs, w->bs, sizeof(s.bs));
		s.nbs = w->nbs;
	}
	assert_int_equal(workload_check(&s, SPAN, msg, sizeof(msg)), 0);
	return s;
}

/* Every operation of every named workload stays inside the span, is aligned
 * to 512 and has a length from its mix. */
static void test_all_inside_span(void **state)
{
	unsigned n;
	const struct workload_preset *v = workload_presets(&n);
	assert_true(n >= 14);
	for (unsigned i = 0; i < n; i++) {
		struct workload_spec s = spec_of(v[i].name);
		struct workload_gen g;
		workload_init(&g, &s, SPAN_OFF, SPAN, i + 1);
		for (int k = 0; k < OPS; k++) {
			struct workload_op op;
			int ok = 0;
			workload_next(&g, &op);
			assert_true(op.offset >= SPAN_OFF);
			assert_true(op.offset + op.len <= SPAN_OFF + SPAN);
			assert_int_equal(op.offset % 512, 0);
			for (unsigned b = 0; b < s.nbs; b++)
				ok |= op.len == s.bs[b].size;
			assert_true(ok);
		}
	}
}

static uint64_t blk(const struct workload_op *op)
{
	return (op->offset - SPAN_OFF) / BS;
}

static void test_seq_order_and_wrap(void **state)
{
	struct workload_spec s = spec_of("seqwrite");
	struct workload_gen g;
	struct workload_op op;
	workload_init(&g, &s, SPAN_OFF, SPAN, 1);
	for (uint64_t k = 0; k < 2 * NBLK + 3; k++) {
		workload_next(&g, &op);
		assert_int_equal(blk(&op), k % NBLK);
		assert_int_equal(op.offset % BS, 0);
		assert_true(op.is_write);
	}
}

static void test_backread_descending(void **state)
{
	struct workload_spec s = spec_of("backread");
	struct workload_gen g;
	struct workload_op op;
	uint64_t prev = 0;
	workload_init(&g, &s, SPAN_OFF, SPAN, 1);
	for (uint64_t k = 0; k < 3 * NBLK; k++) {
		workload_next(&g, &op);
		assert_false(op.is_write);
		if (k % NBLK == 0)
			assert_int_equal(blk(&op), NBLK - 1); /* (re)starts at the top */
		else
			assert_int_equal(blk(&op), prev - 1); /* strictly descending */
		prev = blk(&op);
	}
}

static void test_strideread(void **state)
{
	struct workload_spec s = spec_of("strideread");
	struct workload_gen g;
	struct workload_op op;
	static int seen[NBLK];
	memset(seen, 0, sizeof(seen));
	workload_init(&g, &s, SPAN_OFF, SPAN, 1);
	for (uint64_t k = 0; k < NBLK; k++) {
		workload_next(&g, &op);
		assert_false(op.is_write);
		/* pass p reads p, p + 8, p + 16 ... */
		uint64_t per = NBLK / 8;
		assert_int_equal(blk(&op), (k % per) * 8 + k / per);
		seen[blk(&op)]++;
	}
	for (unsigned b = 0; b < NBLK; b++)
		assert_int_equal(seen[b], 1);
	workload_next(&g, &op);
	assert_int_equal(blk(&op), 0); /* then all over again */
}

static void test_rewrite_same_record(void **state)
{
	struct workload_spec s = spec_of("rewrite");
	struct workload_gen g;
	struct workload_op op;
	workload_init(&g, &s, SPAN_OFF, SPAN, 1);
	for (int k = 0; k < 1000; k++) {
		workload_next(&g, &op);
		assert_int_equal(op.offset, SPAN_OFF);
		assert_int_equal(op.len, BS);
		assert_true(op.is_write);
	}
}

/* Random offsets cover the span uniformly: every block is hit, and no block
 * more than twice its share plus noise. */
static void test_random_coverage(void **state)
{
	static const char *const names[] = { "randwrite", "randread", "randrw" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct workload_spec s = spec_of(names[i]);
		struct workload_gen g;
		static unsigned hits[NBLK];
		memset(hits, 0, sizeof(hits));
		workload_init(&g, &s, SPAN_OFF, SPAN, 42);
		for (int k = 0; k < 40 * (int)NBLK; k++) {
			struct workload_op op;
			workload_next(&g, &op);
			assert_int_equal(op.offset % BS, 0);
			hits[blk(&op)]++;
		}
		for (unsigned b = 0; b < NBLK; b++) {
			assert_true(hits[b] > 10);
			assert_true(hits[b] < 80);
		}
	}
}

struct share_case {
	const char *name;
	unsigned read_pct; /* expected */
};

/* Read share within 2 points over 10 000 operations. */
static void test_read_fraction(void **state)
{
	static const struct share_case cases[] = {
		{ "randrw", 50 },     { "seqrw", 50 },      { "database", 67 },
		{ "fileserver", 80 }, { "webserver", 100 }, { "workstation", 80 },
		{ "randwrite", 0 },   { "seqread", 100 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct workload_spec s = spec_of(cases[i].name);
		struct workload_gen g;
		int reads = 0;
		workload_init(&g, &s, SPAN_OFF, SPAN, 7 + i);
		for (int k = 0; k < OPS; k++) {
			struct workload_op op;
			workload_next(&g, &op);
			reads += !op.is_write;
		}
		double pct = 100.0 * reads / OPS;
		print_message("  %s: %.2f%% reads\n", cases[i].name, pct);
		assert_true(pct >= cases[i].read_pct - 2.0 && pct <= cases[i].read_pct + 2.0);
	}
}

/* An explicit read_percent overrides, to 1 point of precision. */
static void test_read_percent_sweep(void **state)
{
	for (unsigned p = 0; p <= 100; p += 5) {
		struct workload_spec s = spec_of("randrw");
		struct workload_gen g;
		int reads = 0;
		s.read_pct = p;
		workload_init(&g, &s, SPAN_OFF, SPAN, p);
		for (int k = 0; k < OPS; k++) {
			struct workload_op op;
			workload_next(&g, &op);
			reads += !op.is_write;
		}
		double pct = 100.0 * reads / OPS;
		assert_true(pct >= p - 2.0 && pct <= p + 2.0);
	}
}

/* Block-size shares within 2 points of the weights over 10 000 operations,
 * and each offset aligned to its own block size. */
static void test_block_size_mix(void **state)
{
	static const char *const names[] = { "fileserver", "webserver", "streaming" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct workload_spec s = spec_of(names[i]);
		struct workload_gen g;
		unsigned count[WORKLOAD_MAX_BS] = { 0 }, total = 0;
		for (unsigned b = 0; b < s.nbs; b++)
			total += s.bs[b].weight;
		workload_init(&g, &s, SPAN_OFF, SPAN, 99);
		for (int k = 0; k < OPS; k++) {
			struct workload_op op;
			workload_next(&g, &op);
			for (unsigned b = 0; b < s.nbs; b++)
				count[b] += op.len == s.bs[b].size;
			if (s.random_pct == 100)
				assert_int_equal((op.offset - SPAN_OFF) % op.len, 0);
		}
		for (unsigned b = 0; b < s.nbs; b++) {
			double got = 100.0 * count[b] / OPS;
			double want = 100.0 * s.bs[b].weight / total;
			print_message("  %s %u: %.2f%% (want %.2f%%)\n", names[i], s.bs[b].size,
				      got, want);
			assert_true(got >= want - 2.0 && got <= want + 2.0);
		}
	}
}

/* IOMeter's random share: an operation not following the previous one is a
 * random one; workstation asks for 80%. */
static void test_random_percent(void **state)
{
	for (unsigned p = 0; p <= 100; p += 20) {
		struct workload_spec s = spec_of("seqrw");
		struct workload_gen g;
		struct workload_op op;
		uint64_t end = 0;
		int jumps = 0;
		s.random_pct = p;
		s.read_pct = 0;
		workload_init(&g, &s, 0, 64u << 20, p + 3);
		for (int k = 0; k < OPS; k++) {
			workload_next(&g, &op);
			jumps += k && op.offset != end && end != (64u << 20);
			end = op.offset + op.len;
		}
		double pct = 100.0 * jumps / (OPS - 1);
		print_message("  random_percent %u: %.2f%% jumps\n", p, pct);
		assert_true(pct >= p - 2.0 && pct <= p + 2.0);
	}
}

/* The same seed gives the same sequence; another seed another one. */
static void test_reproducible(void **state)
{
	struct workload_spec s = spec_of("fileserver");
	struct workload_gen a, b, c;
	int differ = 0;
	workload_init(&a, &s, SPAN_OFF, SPAN, 5);
	workload_init(&b, &s, SPAN_OFF, SPAN, 5);
	workload_init(&c, &s, SPAN_OFF, SPAN, 6);
	for (int k = 0; k < 1000; k++) {
		struct workload_op x, y, z;
		workload_next(&a, &x);
		workload_next(&b, &y);
		workload_next(&c, &z);
		assert_memory_equal(&x, &y, sizeof(x));
		differ += x.offset != z.offset;
	}
	assert_true(differ > 900);
}

struct parse_case {
	const char *text;
	int ok;
	unsigned n;
	uint32_t first;
	unsigned first_weight;
	const char *msg; /* part of the message on error */
};

static void test_parse_block_sizes(void **state)
{
	static const struct parse_case cases[] = {
		{ "512:10 1k:5 4k:60 64k:25", 1, 4, 512, 10, NULL },
		{ "4k", 1, 1, 4096, 1, NULL },
		{ "8k:3, 16k:1", 1, 2, 8192, 3, NULL },
		{ "64M", 1, 1, 64u << 20, 1, NULL },
		{ "", 0, 0, 0, 0, "no block sizes" },
		{ "4k:0", 0, 0, 0, 0, "weight" },
		{ "4k:x", 0, 0, 0, 0, "weight" },
		{ "1000", 0, 0, 0, 0, "multiple of 512" },
		{ "256", 0, 0, 0, 0, "multiple of 512" },
		{ "128M", 0, 0, 0, 0, "64 MiB" },
		{ "4k 4k", 0, 0, 0, 0, "twice" },
		{ "1k 2k 3k 4k 5k 6k 7k 8k 9k 10k 11k 12k 13k 14k 15k 16k 17k", 0, 0, 0, 0,
		  "more than 16" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct workload_spec s;
		char msg[256] = "";
		memset(&s, 0, sizeof(s));
		int rc = workload_parse_block_sizes(cases[i].text, &s, msg, sizeof(msg));
		print_message("  \"%s\": %d %s\n", cases[i].text, rc, msg);
		if (cases[i].ok) {
			assert_int_equal(rc, 0);
			assert_int_equal(s.nbs, cases[i].n);
			assert_int_equal(s.bs[0].size, cases[i].first);
			assert_int_equal(s.bs[0].weight, cases[i].first_weight);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(strstr(msg, cases[i].msg));
		}
	}
}

static void test_check(void **state)
{
	struct workload_spec s = spec_of("strideread");
	char msg[256];
	s.stride = NBLK;
	assert_int_equal(workload_check(&s, SPAN, msg, sizeof(msg)), 0);
	s.stride = NBLK + 1;
	assert_int_equal(workload_check(&s, SPAN, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "stride"));
	s.stride = 8;
	assert_int_equal(workload_check(&s, BS - 512, msg, sizeof(msg)), -EINVAL);
	s.read_pct = 101;
	assert_int_equal(workload_check(&s, SPAN, msg, sizeof(msg)), -EINVAL);
}

/* cfg's workload names are the generator table's, in the same order. */
static void test_cfg_names_match(void **state)
{
	unsigned n;
	const struct workload_preset *v = workload_presets(&n);
	assert_int_equal(n, WL__COUNT);
	for (unsigned i = 0; i < n; i++)
		assert_string_equal(cfg_workload_name((enum cfg_workload)i), v[i].name);
}

/* Parse a target of body. Returns the configuration, or NULL with the
 * parser's messages in err. */
static struct cfg *try_parse(const char *body, char *err, size_t len)
{
	char text[2048];
	struct cfg *c = NULL;
	snprintf(text, sizeof(text), "[target t]\ndevice = /dev/null\n%s\n", body);
	if (cfg_parse_string(text, "w.conf", &c, err, len) < 0)
		return NULL;
	return c;
}

static struct cfg *parse(const char *body, char *err, size_t len)
{
	struct cfg *c = try_parse(body, err, len);
	assert_non_null(c);
	return c;
}

struct spec_case {
	const char *body;
	int phase; /* workload asked of cfg_workload_spec */
	unsigned read_pct, random_pct, nbs;
	uint32_t bs0;
};

/* What a target's keys make of each workload: presets bring their mix,
 * block_sizes and the percent keys override, other workloads ignore them. */
static void test_cfg_spec(void **state)
{
	static const struct spec_case cases[] = {
		{ "workload = randwrite", WL_RANDWRITE, 0, 100, 1, 4096 },
		{ "block_size = 64k", WL_SEQREAD, 100, 0, 1, 65536 },
		{ "read_percent = 30", WL_RANDRW, 30, 100, 1, 4096 },
		{ "read_percent = 30", WL_RANDWRITE, 0, 100, 1, 4096 },
		{ "random_percent = 10", WL_SEQRW, 50, 10, 1, 4096 },
		{ "block_size = 16k", WL_DATABASE, 67, 100, 1, 8192 },
		{ "", WL_FILESERVER, 80, 100, 8, 512 },
		{ "block_sizes = 8k:1 1M:1", WL_FILESERVER, 80, 100, 2, 8192 },
		{ "read_percent = 0", WL_STREAMING, 0, 0, 3, 65536 },
		{ "block_sizes = 512:10 1k:5 4k:60 64k:25", WL_RANDWRITE, 0, 100, 4, 512 },
		{ "", WL_JESD219, 0, 100, 12, 512 },
		{ "block_sizes = 4k", WL_JESD219, 0, 100, 1, 4096 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[CFG_ERR_MAX], msg[256];
		struct cfg *c = parse(cases[i].body, err, sizeof(err));
		struct workload_spec s;
		print_message("  %s / %s\n", cases[i].body, cfg_workload_name(cases[i].phase));
		assert_int_equal(
			cfg_workload_spec(&c->targets[0], cases[i].phase, &s, msg, sizeof(msg)), 0);
		assert_int_equal(s.read_pct, cases[i].read_pct);
		assert_int_equal(s.random_pct, cases[i].random_pct);
		assert_int_equal(s.nbs, cases[i].nbs);
		assert_int_equal(s.bs[0].size, cases[i].bs0);
		cfg_free(c);
	}
}

/* jesd219 brings its zones and its 4 KiB alignment; access and
 * block_align, once set, replace them (and give the other workloads
 * theirs). */
static void test_cfg_access(void **state)
{
	static const struct {
		const char *body;
		enum cfg_workload w;
		const char *access;
		uint32_t align;
	} cases[] = {
		{ "", WL_JESD219, "zoned:50/5:30/15:20/80", 4096 },
		{ "", WL_RANDWRITE, "uniform", 0 },
		{ "access = uniform\nblock_align = 0", WL_JESD219, "uniform", 0 },
		{ "access = zipf:1.2\nblock_align = 8k", WL_RANDWRITE, "zipf:1.2", 8192 },
		{ "access = zoned:80/20:20/", WL_JESD219, "zoned:80/20:20/80", 4096 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[CFG_ERR_MAX], msg[256], text[160];
		struct cfg *c = parse(cases[i].body, err, sizeof(err));
		struct workload_spec s;
		assert_int_equal(
			cfg_workload_spec(&c->targets[0], cases[i].w, &s, msg, sizeof(msg)), 0);
		assert_string_equal(access_text(&s.access, text, sizeof(text)), cases[i].access);
		assert_int_equal(s.align, cases[i].align);
		cfg_free(c);
	}
}

static void test_cfg_measure_phases(void **state)
{
	char err[CFG_ERR_MAX], msg[256];
	int ph[CFG_MAX_PHASES];
	struct cfg *c = parse("workload = seqread", err, sizeof(err));
	assert_int_equal(cfg_measure_phases(&c->targets[0], ph, msg, sizeof(msg)), 1);
	assert_int_equal(ph[0], WL_SEQREAD);
	cfg_free(c);
	c = parse("measure = fill, randwrite randread,fileserver", err, sizeof(err));
	assert_int_equal(cfg_measure_phases(&c->targets[0], ph, msg, sizeof(msg)), 4);
	assert_int_equal(ph[0], CFG_PHASE_FILL);
	assert_int_equal(ph[1], WL_RANDWRITE);
	assert_int_equal(ph[2], WL_RANDREAD);
	assert_int_equal(ph[3], WL_FILESERVER);
	cfg_free(c);
	/* The parser refuses a list it cannot hold, naming file, line and key. */
	assert_null(try_parse("measure = fill,a,randwrite", err, sizeof(err)));
	assert_non_null(strstr(err, "w.conf:3: measure: \"a\" is neither fill nor a workload"));
	/* The count is checked before the names (one tokenizer for every list). */
	assert_null(try_parse("measure = fill,a,b,c,d,e,f,g,h", err, sizeof(err)));
	assert_non_null(strstr(err, "w.conf:3: measure: more than 8 phases"));
	assert_null(try_parse("measure = fill seqread seqread seqread seqread seqread seqread "
			      "seqread seqread",
			      err, sizeof(err)));
	assert_non_null(strstr(err, "w.conf:3: measure: more than 8 phases"));
}

struct resolve_case {
	const char *body;
	const char *want; /* NULL: resolves; else part of the message */
};

/* cfg_resolve names FILE:LINE: key for what only a device can decide. */
static void test_cfg_resolve(void **state)
{
	static const struct resolve_case cases[] = {
		{ "sizes = 1M\nblock_sizes = 4k:9 64k:1", NULL },
		{ "sizes = 1M\nblock_sizes = 4k:9 2k:1",
		  "w.conf:4: block_sizes: 2048 bytes "
		  "(2.00 KiB) is not a multiple of the logical block size 4096" },
		{ "sizes = 1M\nblock_sizes = 4k 2M",
		  "w.conf:4: block_sizes: 2097152 bytes "
		  "(2.00 MiB) is larger than the smallest size" },
		{ "sizes = 1M\nblock_sizes = 4k:x", "w.conf:4: block_sizes: weight" },
		{ "sizes = 1M\nworkload = strideread\nstride = 256", NULL },
		{ "sizes = 1M\nworkload = strideread\nstride = 257",
		  "w.conf:5: stride: 257 is larger than the 256 blocks of the smallest size" },
		{ "sizes = 1M\nworkload = randread\nstride = 257", NULL },
		{ "sizes = 1M\nmeasure = fill,randwrite,nope", "w.conf:4: measure: \"nope\"" },

		{ "sizes = 64M\nworkload = jesd219",
		  "w.conf:4: workload: phase jesd219 cannot run at size 1 (67108864 bytes (64.00 MiB)): "
		  "block size 512 is not a multiple of the logical block size 4096" },
		{ "sizes = 64M\nworkload = jesd219\nblock_sizes = 4k:67 8k:10 64k:3", NULL },
		{ "sizes = 4M\nworkload = jesd219\nblock_sizes = 4k 64k\naccess = zoned:50/1:50/",
		  "access zone 1 (1% of the span) holds no whole block of 65536 bytes" },
		{ "sizes = 1M\naccess = zipf:0",
		  "w.conf:4: access: zipf: \"0\" is not a theta above 0 and at most 10" },
		{ "sizes = 1M\nblock_align = 1000",
		  "w.conf:4: block_align: \"1000\" (1000) is not a multiple of 512" },
		{ "sizes = 1M\nblock_sizes = 4k 64k\nblock_align = 8k\naccess = pareto:0.2", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[CFG_ERR_MAX] = "";
		struct cfg_layout l;
		/* A value that does not parse is refused by the parser itself. */
		struct cfg *c = try_parse(cases[i].body, err, sizeof(err));
		int rc = c ? cfg_resolve(c, &c->targets[0], 1ull << 30, 4096, &l, err, sizeof(err))
			   : -EINVAL;
		print_message("  %s -> %s\n", cases[i].body, err);
		if (!cases[i].want) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(strstr(err, cases[i].want));
		}
		cfg_free(c);
	}
}

/* workload_start: sequential orders begin where asked (on the block grid) and
 * still wrap inside the span; random ones ignore it. */
static void test_start_offset(void **state)
{
	struct workload_spec s = spec_of("seqwrite");
	struct workload_gen g;
	struct workload_op op;

	workload_init(&g, &s, SPAN_OFF, SPAN, 1);
	workload_start(&g, SPAN / 4 + 100);
	workload_next(&g, &op);
	assert_int_equal(op.offset, SPAN_OFF + SPAN / 4);
	workload_start(&g, SPAN - BS);
	workload_next(&g, &op);
	assert_int_equal(op.offset, SPAN_OFF + SPAN - BS);
	workload_next(&g, &op);
	assert_int_equal(op.offset, SPAN_OFF);
	s = spec_of("backread");
	workload_init(&g, &s, SPAN_OFF, SPAN, 1);
	workload_start(&g, SPAN / 2);
	workload_next(&g, &op);
	assert_int_equal(op.offset, SPAN_OFF + SPAN / 2 - BS);
	s = spec_of("randwrite");
	struct workload_gen a, b;
	workload_init(&a, &s, SPAN_OFF, SPAN, 7);
	workload_init(&b, &s, SPAN_OFF, SPAN, 7);
	workload_start(&b, SPAN / 2);
	for (int i = 0; i < 100; i++) {
		struct workload_op x, y;
		workload_next(&a, &x);
		workload_next(&b, &y);
		assert_int_equal(x.offset, y.offset);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_inside_span),
		cmocka_unit_test(test_seq_order_and_wrap),
		cmocka_unit_test(test_backread_descending),
		cmocka_unit_test(test_strideread),
		cmocka_unit_test(test_rewrite_same_record),
		cmocka_unit_test(test_random_coverage),
		cmocka_unit_test(test_read_fraction),
		cmocka_unit_test(test_read_percent_sweep),
		cmocka_unit_test(test_block_size_mix),
		cmocka_unit_test(test_random_percent),
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_parse_block_sizes),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_cfg_names_match),
		cmocka_unit_test(test_cfg_spec),
		cmocka_unit_test(test_cfg_access),
		cmocka_unit_test(test_cfg_measure_phases),
		cmocka_unit_test(test_cfg_resolve),
		cmocka_unit_test(test_start_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
