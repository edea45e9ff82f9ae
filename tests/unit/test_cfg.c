/* test_cfg: the configuration parser, its key table, its error messages and
 * cfg_resolve. Run from the repository root (loads conf/wearmon.conf). */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "io/engine.h"
#include "io/workload.h"

#define EXAMPLE_CONF "conf/wearmon.conf"
#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail_msg(__VA_ARGS__);                                                     \
	} while (0)

static struct cfg *parse_ok(const char *text)
{
	char err[CFG_ERR_MAX] = "";
	struct cfg *c = NULL;
	int rc = cfg_parse_string(text, "t.conf", &c, err, sizeof(err));

	EXPECT(rc == 0, "rc %d: %s", rc, err);
	assert_non_null(c);
	return c;
}

/* Number of lines in err that start with prefix. */
static int count_prefix(const char *err, const char *prefix)
{
	int n = 0;

	for (const char *l = err; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		n += strncmp(l, prefix, strlen(prefix)) == 0;
	return n;
}

static int count_lines(const char *err)
{
	int n = *err ? 1 : 0;

	for (; *err; err++)
		n += *err == '\n';
	return n;
}

/* ---- good input ---- */

static const char full_conf[] = "; a full configuration\n"
				"[wearmon]\n"
				"database = /tmp/wm.db\n"
				"\n"
				"[target lab1]\n"
				"device = /dev/loop7\n"
				"file_size = 2G\n"
				"allow_destroy = yes\n"
				"region_offset = 1M\n"
				"region_size = 80%\n"
				"sizes = 10%:100%:10%\n"
				"fill = no\n"
				"fill_block_size = 1M\n"
				"fill_queue_depth = 8\n"
				"workload = seqread\n"
				"block_size = 64KiB\n"
				"queue_depth = 1024\n"
				"amount = 2.5x\n"
				"duration = 5m\n"
				"compressibility = 75\n"
				"between_cycles = trim\n"
				"trim_scope = device\n"
				"cycles = 3\n"
				"pause = 1.5h\n"
				"sample_interval = 250ms\n";

static void test_full_config(void **state)
{
	struct cfg *c = parse_ok(full_conf);
	const struct cfg_target *t = &c->targets[0];

	assert_string_equal(c->path, "t.conf");
	assert_string_equal(c->database, "/tmp/wm.db");
	assert_int_equal(c->database_line, 3);
	assert_int_equal(c->section_line, 2);
	assert_int_equal(c->ntargets, 1);
	assert_string_equal(t->name, "lab1");
	assert_int_equal(t->section_line, 5);
	assert_string_equal(t->device, "/dev/loop7");
	assert_int_equal(t->file_size, 2 * GiB);
	assert_int_equal(t->allow_destroy, 1);
	assert_false(t->region_offset.is_percent);
	assert_int_equal(t->region_offset.bytes, MiB);
	assert_true(t->region_size.is_percent);
	assert_true(fabs(t->region_size.percent - 80) < 1e-9);
	assert_true(t->sizes.is_range);
	assert_true(fabs(t->sizes.start.percent - 10) < 1e-9);
	assert_true(fabs(t->sizes.end.percent - 100) < 1e-9);
	assert_true(fabs(t->sizes.step.percent - 10) < 1e-9);
	assert_int_equal(t->fill, 0);
	assert_int_equal(t->fill_block_size, MiB);
	assert_int_equal(t->fill_queue_depth, 8);
	assert_int_equal(t->workload, WL_SEQREAD);
	assert_int_equal(t->block_size, 65536);
	assert_int_equal(t->queue_depth, 1024);
	assert_true(t->amount.is_multiple);
	assert_true(fabs(t->amount.multiple - 2.5) < 1e-9);
	assert_true(fabs(t->duration - 300) < 1e-9);
	assert_int_equal(t->compressibility, 75);
	assert_int_equal(t->between_cycles.n, 1);
	assert_int_equal(t->between_cycles.a[0], ACT_TRIM);
	assert_int_equal(t->trim_scope, TRIM_DEVICE);
	assert_int_equal(t->cycles, 3);
	assert_true(fabs(t->pause - 5400) < 1e-9);
	assert_true(fabs(t->sample_interval - 0.25) < 1e-9);
	assert_int_equal(cfg_line(t, "device"), 6);
	assert_int_equal(cfg_line(t, "sample_interval"), 25);
	assert_int_equal(cfg_line(t, "no_such_key"), 0);
	cfg_free(c);
}

/* A list of actions is taken in turn, one per cycle. */
static void test_action_list(void **state)
{
	struct cfg *c = parse_ok("[target t1]\ndevice = /dev/x\n"
				 "between_cycles = none, trim idle\n");
	const struct cfg_target *t = &c->targets[0];
	static const enum cfg_action want[] = { ACT_NONE, ACT_TRIM, ACT_IDLE, ACT_NONE, ACT_TRIM };

	assert_int_equal(t->between_cycles.n, 3);
	for (long cycle = 1; cycle <= 5; cycle++)
		assert_int_equal(cfg_action_after(t, cycle), want[cycle - 1]);
	assert_true(cfg_has_action(t, ACT_IDLE));
	assert_false(cfg_has_action(t, ACT_SECURE_ERASE));
	cfg_free(c);
}

static void test_metrics_file(void **state)
{
	struct cfg *c = parse_ok("[wearmon]\nmetrics_file = /var/lib/ne/wearmon.prom\n"
				 "[target t1]\ndevice = /dev/x\n");
	assert_string_equal(c->metrics_file, "/var/lib/ne/wearmon.prom");
	cfg_free(c);
}

/* sample_retention: a duration, 30 days by default, forever (or 0) keeps
 * every sample. */
static void test_sample_retention(void **state)
{
	static const struct {
		const char *text;
		double seconds;
	} cases[] = {
		{ "", 30 * 86400.0 },
		{ "sample_retention = 2s\n", 2 },
		{ "sample_retention = 90d\n", 90 * 86400.0 },
		{ "sample_retention = forever\n", 0 },
		{ "sample_retention = Forever\n", 0 },
		{ "sample_retention = 0\n", 0 },
	};
	char text[256];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(text, sizeof(text), "[wearmon]\n%s[target t1]\ndevice = /dev/x\n",
			 cases[i].text);
		struct cfg *c = parse_ok(text);
		assert_true(c->sample_retention == cases[i].seconds);
		cfg_free(c);
	}
}

static void test_defaults(void **state)
{
	struct cfg *c = parse_ok("[target t1]\ndevice = /dev/x\n");
	const struct cfg_target *t = &c->targets[0];
	size_t n;
	const struct cfg_key *k = cfg_keys(&n);

	assert_string_equal(c->database, "/var/lib/wearmon/wearmon.db");
	assert_int_equal(c->database_line, 0);
	assert_string_equal(c->metrics_file, ""); /* off by default */
	assert_int_equal(c->section_line, 0);
	assert_int_equal(t->file_size, 0);
	assert_int_equal(t->allow_destroy, 0);
	assert_int_equal(t->region_offset.bytes, 0);
	assert_false(t->region_offset.is_percent);
	assert_true(t->region_size.is_percent && t->region_size.percent == 100);
	assert_false(t->sizes.is_range);
	assert_int_equal(t->sizes.n, 1);
	assert_true(t->sizes.list[0].is_percent && t->sizes.list[0].percent == 100);
	assert_int_equal(t->fill, 1);
	assert_int_equal(t->fill_block_size, 128 * 1024);
	assert_int_equal(t->fill_queue_depth, 16);
	assert_int_equal(t->workload, WL_RANDWRITE);
	assert_int_equal(t->block_size, 4096);
	assert_int_equal(t->queue_depth, 32);
	assert_true(t->amount.is_multiple && t->amount.multiple == 1.0);
	assert_true(t->duration == 0);
	assert_int_equal(t->compressibility, 0);
	assert_int_equal(t->between_cycles.n, 1);
	assert_int_equal(t->between_cycles.a[0], ACT_NONE);
	assert_int_equal(t->trim_scope, TRIM_REGION);
	assert_int_equal(t->cycles, 0);
	assert_true(t->pause == 0);
	assert_true(t->sample_interval == 1.0);
	assert_true(t->alert_below == 50 && t->alert_critical == 25);
	assert_int_equal(t->baseline, BASELINE_FIRST);
	assert_true(t->sample_crash_below == 20 && t->recovered_above == 90);
	assert_string_equal(t->alert_command, "");
	for (size_t i = 0; i < n; i++)
		EXPECT(t->lines[i] == (strcmp(k[i].name, "device") == 0 ? 2 : 0), "%s: line %d",
		       k[i].name, t->lines[i]);
	cfg_free(c);
}

/* [wearmon] sets defaults for every target, even when it comes last. */
static void test_wearmon_defaults(void **state)
{
	struct cfg *c = parse_ok("[target a]\n"
				 "device = /dev/a\n"
				 "[target b]\n"
				 "device = /dev/b\n"
				 "queue_depth = 4\n"
				 "[wearmon]\n"
				 "queue_depth = 8\n"
				 "block_size = 8k\n"
				 "between_cycles = trim\n");

	assert_int_equal(c->ntargets, 2);
	assert_string_equal(c->targets[0].name, "a");
	assert_int_equal(c->targets[0].queue_depth, 8);
	assert_int_equal(cfg_line(&c->targets[0], "queue_depth"), 7);
	assert_string_equal(c->targets[1].name, "b");
	assert_int_equal(c->targets[1].queue_depth, 4);
	assert_int_equal(cfg_line(&c->targets[1], "queue_depth"), 5);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(c->targets[i].block_size, 8192);
		assert_int_equal(c->targets[i].between_cycles.a[0], ACT_TRIM);
		assert_int_equal(cfg_line(&c->targets[i], "block_size"), 8);
		assert_int_equal(cfg_line(&c->targets[i], "compressibility"), 0);
	}
	cfg_free(c);
}

/* The resolved text names every key of every target with where its value
 * came from, and never holds the erase password. */
static void test_resolved_text(void **state)
{
	struct cfg *c = parse_ok("[wearmon]\n"
				 "database = /tmp/x.db\n"
				 "queue_depth = 8\n"
				 "[target a]\n"
				 "device = /dev/a\n"
				 "secure_erase_password = s3cret\n"
				 "[target b]\n"
				 "device = /dev/b\n"
				 "queue_depth = 4\n");
	size_t nkeys;
	const struct cfg_key *k = cfg_keys(&nkeys);
	const char *b;

	assert_non_null(c->text);
	assert_non_null(strstr(c->text, "[wearmon]\ndatabase = /tmp/x.db\n"));
	assert_non_null(strstr(c->text, "[target a]\ndevice = /dev/a\n"));
	assert_non_null(strstr(c->text, "\nqueue_depth = 8   ; from [wearmon]\n"));
	assert_non_null(strstr(c->text, "\nblock_size = 4k   ; default\n"));
	assert_null(strstr(c->text, "s3cret"));
	assert_non_null(strstr(c->text, "\nsecure_erase_password = (not stored)\n"));
	b = strstr(c->text, "[target b]\n");
	assert_non_null(b);
	assert_non_null(strstr(b, "\nqueue_depth = 4\n"));
	for (size_t i = 0; i < nkeys; i++) {
		char line[96];

		snprintf(line, sizeof(line), "\n%s = ", k[i].name);
		EXPECT(strstr(k[i].global ? c->text : b, line), "key %s missing", k[i].name);
	}
	cfg_free(c);
}

struct syntax_case {
	const char *name;
	const char *text;
	uint64_t bytes0; /* sizes.list[0] expected */
	int nsizes;
};

/* What inih allows and what we add: indentation, quotes, inline comments,
 * CRLF, a BOM, ':' as separator. */
static const struct syntax_case syntax_cases[] = {
	{ "quotes and inline comment",
	  "[target t]\ndevice = /d\nsizes = \"1G 2G 4G\" ; three sizes\n", GiB, 3 },
	{ "indented keys", "[target t]\n  device = /d\n\tsizes = 1G, 2G\n", GiB, 2 },
	{ "CRLF", "[target t]\r\ndevice = /d\r\nsizes = 2G 3G\r\n", 2 * GiB, 2 },
	{ "BOM", "\xef\xbb\xbf[target t]\ndevice = /d\nsizes = 1M\n", MiB, 1 },
	{ "colon separator", "[target t]\ndevice: /d\nsizes: 4k 8k\n", 4096, 2 },
	{ "hash comment", "# c\n[target t] ; c\ndevice = /d ; c\nsizes = 1G\n", GiB, 1 },
	{ "spaces in header", "[ target   t ]\ndevice = /d\nsizes = 1G\n", GiB, 1 },
	{ "no final newline", "[target t]\ndevice = /d\nsizes = 1G", GiB, 1 },
};

static void test_syntax_variants(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(syntax_cases); i++) {
		const struct syntax_case *sc = &syntax_cases[i];
		char err[CFG_ERR_MAX] = "";
		struct cfg *c = NULL;
		int rc = cfg_parse_string(sc->text, "t.conf", &c, err, sizeof(err));

		EXPECT(rc == 0, "%s: rc %d: %s", sc->name, rc, err);
		EXPECT(strcmp(c->targets[0].name, "t") == 0, "%s: name", sc->name);
		EXPECT(strcmp(c->targets[0].device, "/d") == 0, "%s: device \"%s\"", sc->name,
		       c->targets[0].device);
		EXPECT(c->targets[0].sizes.n == sc->nsizes, "%s: %d sizes", sc->name,
		       c->targets[0].sizes.n);
		EXPECT(c->targets[0].sizes.list[0].bytes == sc->bytes0, "%s: size", sc->name);
		cfg_free(c);
	}
}

/* ---- bad input: each case names the exact error line it must produce ---- */

struct bad_case {
	const char *name;
	const char *text;
	const char *want; /* a line of err starts with this */
	int nerr;         /* lines in err */
};

#define T "[target lab1]\ndevice = /dev/x\n" /* lines 1-2 */

static const struct bad_case bad_cases[] = {
	{ "unknown key", T "blocksize = 4k\n",
	  "t.conf:3: blocksize: unknown key \"blocksize\" in [target lab1]", 1 },
	{ "unknown key in [wearmon]", "[wearmon]\nfoo = 1\n" T,
	  "t.conf:2: foo: unknown key \"foo\" in [wearmon]", 1 },
	{ "unknown section", T "[targets x]\nfoo = 1\n",
	  "t.conf:3: [targets x]: unknown section (use [wearmon] or [target NAME])", 1 },
	{ "bad unit", T "block_size = 12Q\n",
	  "t.conf:3: block_size: \"12Q\" is not a byte size (use e.g. 4096, 4k, 128KiB, 1G)", 1 },
	{ "negative bytes", T "file_size = -1\n", "t.conf:3: file_size: \"-1\" is not a byte size",
	  1 },
	{ "empty bytes", T "fill_block_size =\n",
	  "t.conf:3: fill_block_size: \"\" is not a byte size", 1 },
	{ "bytes overflow", T "file_size = 99999999999999999999\n",
	  "t.conf:3: file_size: \"99999999999999999999\" is too large", 1 },
	{ "block_size below range", T "block_size = 256\n",
	  "t.conf:3: block_size: \"256\" is out of range 512 bytes..67108864 bytes (64.00 MiB)",
	  1 },
	{ "block_size above range", T "block_size = 128M\n",
	  "t.conf:3: block_size: \"128M\" is out of range 512 bytes..", 1 },
	{ "block_size not multiple of 512", T "block_size = 1000\n",
	  "t.conf:3: block_size: \"1000\" (1000) is not a multiple of 512", 1 },
	{ "queue_depth 0", T "queue_depth = 0\n",
	  "t.conf:3: queue_depth: \"0\" is out of range 1..1024", 1 },
	{ "fill_queue_depth 1025", T "fill_queue_depth = 1025\n",
	  "t.conf:3: fill_queue_depth: \"1025\" is out of range 1..1024", 1 },
	{ "queue_depth not a number", T "queue_depth = lots\n",
	  "t.conf:3: queue_depth: \"lots\" is not an integer", 1 },
	{ "compressibility 101", T "compressibility = 101\n",
	  "t.conf:3: compressibility: \"101\" is out of range 0..100", 1 },
	{ "cycles negative", T "cycles = -1\n",
	  "t.conf:3: cycles: \"-1\" is out of range (at least 0)", 1 },
	{ "sample_interval too short", T "sample_interval = 50ms\n",
	  "t.conf:3: sample_interval: \"50ms\" is out of range 0.1s..3600s", 1 },
	{ "sample_interval too long", T "sample_interval = 2h\n",
	  "t.conf:3: sample_interval: \"2h\" is out of range 0.1s..3600s", 1 },
	{ "bad duration", T "pause = soon\n",
	  "t.conf:3: pause: \"soon\" is not a duration (use e.g.", 1 },
	{ "bad boolean", T "fill = maybe\n",
	  "t.conf:3: fill: \"maybe\" is not a boolean (use yes or no)", 1 },
	{ "bad workload", T "workload = randomwrite\n",
	  "t.conf:3: workload: \"randomwrite\" is not one of: seqwrite, seqread, "
	  "randwrite, randread",
	  1 },
	{ "bad action", T "between_cycles = erase\n",
	  "t.conf:3: between_cycles: \"erase\" is not one of: none, trim", 1 },
	{ "bad action in a list", T "between_cycles = none, bogus\n",
	  "t.conf:3: between_cycles: \"bogus\" is not one of: none, trim", 1 },
	{ "too many actions",
	  T "between_cycles = none none none none none none none none "
	    "none none none none none none none none none\n",
	  "t.conf:3: between_cycles: more than 16 actions", 1 },
	{ "bad trim_scope", T "trim_scope = all\n",
	  "t.conf:3: trim_scope: \"all\" is not one of: region, device", 1 },
	{ "bad amount", T "amount = lots\n", "t.conf:3: amount: \"lots\" is not an amount", 1 },
	{ "zero amount", T "amount = 0x\n", "t.conf:3: amount: \"0x\" is not an amount", 1 },
	{ "percent over 100", T "region_size = 120%\n",
	  "t.conf:3: region_size: \"120%\" is out of range 0%..100%", 1 },
	{ "bad qty", T "region_offset = 12Q\n",
	  "t.conf:3: region_offset: \"12Q\" is not a byte size or percentage", 1 },
	{ "range with two parts", T "sizes = 1G:2G\n",
	  "t.conf:3: sizes: \"1G:2G\" is not a range (use start:end:step", 1 },
	{ "range with four parts", T "sizes = 1G:2G:1G:1G\n",
	  "t.conf:3: sizes: \"1G:2G:1G:1G\" is not a range", 1 },
	{ "range step 0", T "sizes = 1G:2G:0\n", "t.conf:3: sizes: step must be more than 0", 1 },
	{ "range bad part", T "sizes = 1G:2X:1G\n",
	  "t.conf:3: sizes: end \"2X\" is not a byte size or percentage", 1 },
	{ "list bad item", T "sizes = 1G 2G 3Q\n",
	  "t.conf:3: sizes: size \"3Q\" is not a byte size or percentage", 1 },
	{ "empty sizes", T "sizes =\n", "t.conf:3: sizes: no sizes given", 1 },
	{ "duplicate key", T "queue_depth = 4\nqueue_depth = 8\n",
	  "t.conf:4: queue_depth: duplicate key in [target lab1] (first set on line 3)", 1 },
	{ "duplicate key in [wearmon]", "[wearmon]\ndatabase = /a\ndatabase = /b\n" T,
	  "t.conf:3: database: duplicate key in [wearmon] (first set on line 2)", 1 },
	{ "duplicate target", T T,
	  "t.conf:3: [target lab1]: duplicate target name (first on line 1)", 1 },
	{ "duplicate [wearmon]", "[wearmon]\n[wearmon]\n" T,
	  "t.conf:2: [wearmon]: duplicate section (first on line 1)", 1 },
	{ "missing device", "[target lab1]\nqueue_depth = 4\n",
	  "t.conf:1: device: required key missing in [target lab1]", 1 },
	{ "empty device", T "[target lab2]\ndevice =\n", "t.conf:4: device: must not be empty", 1 },
	{ "no target", "[wearmon]\ndatabase = /tmp/x.db\n",
	  "t.conf: no [target NAME] section (at least one target is required)", 1 },
	{ "empty file", "", "t.conf: no [target NAME] section", 1 },
	{ "inih syntax error", T "just some words\n",
	  "t.conf:3: syntax error: expected \"key = value\", \"[section]\" or a comment", 1 },
	{ "inline comment hides '='", T "queue_depth ; = 4\n",
	  "t.conf:3: syntax error: expected \"key = value\"", 1 },
	{ "header without ']'", T "[target lab2\ndevice = /dev/y\n",
	  "t.conf:3: syntax error: section header without a closing ']'", 1 },
	{ "missing key name", T "= 4\n", "t.conf:3: syntax error: missing key name", 1 },
	{ "key before any section", "queue_depth = 4\n" T,
	  "t.conf:1: queue_depth: key outside any section", 1 },
	{ "global key in target", T "database = /x.db\n",
	  "t.conf:3: database: only allowed in [wearmon], not in [target lab1]", 1 },
	{ "empty database", "[wearmon]\ndatabase =\n" T, "t.conf:2: database: must not be empty",
	  1 },
	{ "target without name", "[target]\ndevice = /d\n",
	  "t.conf:1: [target]: missing target name (use [target NAME])", 1 },
	{ "bad target name", "[target lab 1]\ndevice = /d\n",
	  "t.conf:1: [target lab 1]: target name \"lab 1\" may only hold letters", 1 },
	{ "long target name",
	  "[target a123456789012345678901234567890123456789012345678901234567890123]\n"
	  "device = /d\n",
	  "t.conf:1: [target a12345678901234567890123456789012345678901234567890123456789"
	  "0123]: target name is longer than 63 characters",
	  1 },
	{ "line too long",
	  T "device_comment = "
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	  "t.conf:3: syntax error: line is longer than", 1 },
	{ "alert_below over 100%", T "alert_below = 150%\n",
	  "t.conf:3: alert_below: \"150%\" is out of range 0%..100%", 1 },
	{ "alert_critical not a percentage", T "alert_critical = quarter\n",
	  "t.conf:3: alert_critical: \"quarter\" is not a percentage (use e.g. 50%)", 1 },
	{ "sample_crash_below negative", T "sample_crash_below = -5%\n",
	  "t.conf:3: sample_crash_below: \"-5%\" is out of range 0%..100%", 1 },
	{ "bad baseline", T "baseline = worst\n",
	  "t.conf:3: baseline: \"worst\" is not one of: first, best", 1 },
	{ "relative metrics_file", "[wearmon]\nmetrics_file = wearmon.prom\n" T,
	  "t.conf:2: metrics_file: \"wearmon.prom\" is not an absolute path", 1 },
	{ "sample_retention not a duration", "[wearmon]\nsample_retention = always\n" T,
	  "t.conf:2: sample_retention: \"always\" is not a duration (use e.g. 0, 30s, 5m, "
	  "1.5h, 2d, 250ms)",
	  1 },
	{ "sample_retention in a target", T "sample_retention = 1d\n",
	  "t.conf:3: sample_retention: only allowed in [wearmon], not in [target lab1]", 1 },
	{ "metrics_file in a target", T "metrics_file = /m.prom\n",
	  "t.conf:3: metrics_file: only allowed in [wearmon], not in [target lab1]", 1 },
	{ "relative alert_command", T "alert_command = notify.sh\n",
	  "t.conf:3: alert_command: \"notify.sh\" is not an absolute path", 1 },
	{ "error in [wearmon] default reported once",
	  "[wearmon]\nblock_size = 3k1\n" T "[target lab2]\ndevice = /d\n",
	  "t.conf:2: block_size: \"3k1\" is not a byte size", 1 },
};

static void test_bad_input(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *bc = &bad_cases[i];
		char err[CFG_ERR_MAX] = "";
		struct cfg *c = (struct cfg *)1;
		int rc = cfg_parse_string(bc->text, "t.conf", &c, err, sizeof(err));

		EXPECT(rc == -EINVAL, "%s: rc %d", bc->name, rc);
		EXPECT(c == NULL, "%s: *out not NULL", bc->name);
		EXPECT(count_prefix(err, bc->want) == 1, "%s: want a line \"%s\", got:\n%s",
		       bc->name, bc->want, err);
		EXPECT(count_lines(err) == bc->nerr, "%s: want %d error lines, got:\n%s", bc->name,
		       bc->nerr, err);
	}
}

/* All problems are reported, one per line, in line order. */
static void test_all_errors(void **state)
{
	static const char text[] = "[target a]\n"        /* 1: no device */
				   "queue_depth = 0\n"   /* 2 */
				   "[bogus]\n"           /* 3 */
				   "[wearmon]\n"         /* 4 */
				   "fill = perhaps\n"    /* 5 */
				   "[target b]\n"        /* 6 */
				   "device = /d\n"       /* 7 */
				   "workload = write\n"; /* 8 */
	static const char *const want[] = {
		"t.conf:1: device: ", "t.conf:2: queue_depth: ", "t.conf:3: [bogus]: ",
		"t.conf:5: fill: ",   "t.conf:8: workload: ",
	};
	char err[CFG_ERR_MAX];
	struct cfg *c;
	const char *l = err;

	assert_int_equal(cfg_parse_string(text, "t.conf", &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(count_lines(err), ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		EXPECT(strncmp(l, want[i], strlen(want[i])) == 0, "line %zu: %s", i, err);
		l = strchr(l, '\n') + 1;
	}
}

/* A short buffer still gets a terminated, truncated message. */
static void test_err_truncated(void **state)
{
	char err[24];
	struct cfg *c;

	memset(err, 'z', sizeof(err));
	assert_int_equal(cfg_parse_string(T "a = 1\nb = 2\n", "t.conf", &c, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(strncmp(err, "t.conf:3: a: ", 13), 0);
	assert_int_equal(cfg_parse_string(T "a = 1\n", "t.conf", &c, NULL, 0), -EINVAL);
}

/* ---- cfg_resolve ---- */

struct resolve_case {
	const char *name;
	const char *keys; /* lines 3.. of a [target r] section */
	uint64_t capacity;
	uint32_t lbs;
	int rc;
	uint64_t offset, region; /* when rc == 0 */
	int nsizes;
	uint64_t first, last;
	const char *want; /* when rc != 0: a line of err starts so */
};

static const struct resolve_case resolve_cases[] = {
	{ "hir with filesystem mode", "hir = yes\nfilesystem = ext4\n", 100 * GiB, 4096, -EINVAL, 0,
	  0, 0, 0, 0, "t.conf:3: hir: yes with filesystem = ext4" },
	{ "hir purge by secure erase without a method", "hir = yes\nhir_purge = secure-erase\n",
	  100 * GiB, 4096, -EINVAL, 0, 0, 0, 0, 0,
	  "t.conf:4: hir_purge: secure-erase needs a method: set secure_erase" },
	{ "hir purge auto without a method trims", "hir = yes\n", 100 * GiB, 4096, 0, 0, 100 * GiB,
	  1, 100 * GiB, 100 * GiB, NULL },
	{ "defaults", "", 100 * GiB, 4096, 0, 0, 100 * GiB, 1, 100 * GiB, 100 * GiB, NULL },
	{ "10%:100%:10% gives 10 sizes", "sizes = 10%:100%:10%\n", 100 * GiB, 4096, 0, 0, 100 * GiB,
	  10, 10 * GiB, 100 * GiB, NULL },
	{ "percent region and offset",
	  "region_offset = 10%\nregion_size = 80%\n"
	  "sizes = 25%:100%:25%\n",
	  100 * GiB, 4096, 0, 10 * GiB - (10 * GiB) % 4096, 80 * GiB - (80 * GiB) % 4096, 4,
	  (80 * GiB - (80 * GiB) % 4096) / 4 / 4096 * 4096, 80 * GiB - (80 * GiB) % 4096, NULL },
	{ "percent sizes align down", "sizes = 33% 66%\nfill = no\n", 1000 * 4096, 4096, 0, 0,
	  1000 * 4096, 2, 330 * 4096, 660 * 4096, NULL },
	{ "percent sizes align to the fill block", "sizes = 33% 66%\n", 1000 * 4096, 4096, 0, 0,
	  1000 * 4096, 2, 10 * 128 * 1024, 20 * 128 * 1024, NULL },
	{ "percent sizes align to the largest measured block",
	  "sizes = 33% 66%\nfill = no\nmeasure = randwrite,streaming\n", 1000 * 4096, 4096, 0, 0,
	  1000 * 4096, 2, 5 * 256 * 1024, 10 * 256 * 1024, NULL },
	{ "byte sizes off the fill grid refused", "sizes = 1536k 3M\nfill_block_size = 1M\n",
	  64 * 1048576ULL, 512, -EINVAL, .want = "t.conf:4: fill_block_size: size 1 " },
	{ "a phase whose block does not fit refused",
	  "sizes = 128k\nmeasure = randwrite,streaming\n", 64 * 1048576ULL, 512, -EINVAL,
	  .want = "t.conf:4: measure: phase streaming cannot run at size 1" },
	{ "byte range inclusive", "sizes = 1G:4G:1G\n", 4 * GiB, 512, 0, 0, 4 * GiB, 4, GiB,
	  4 * GiB, NULL },
	{ "byte range end not reached", "sizes = 1G:3.5G:1G\n", 4 * GiB, 512, 0, 0, 4 * GiB, 3, GiB,
	  3 * GiB, NULL },
	{ "mixed range", "sizes = 1G:100%:1G\n", 4 * GiB, 4096, 0, 0, 4 * GiB, 4, GiB, 4 * GiB,
	  NULL },
	{ "mixed list", "region_size = 8G\nsizes = 1G 50% 8G\n", 10 * GiB, 4096, 0, 0, 8 * GiB, 3,
	  GiB, 8 * GiB, NULL },
	{ "region past the end", "region_offset = 60%\nregion_size = 50%\n", 100 * GiB, 4096,
	  -EINVAL,
	  .want = "t.conf:4: region_size: region_offset 64424509440 bytes "
		  "(60.00 GiB) + region_size 53687091200 bytes (50.00 GiB) ends at 118111600640 "
		  "bytes (110.00 GiB), past the device end at 107374182400 bytes (100.00 GiB)" },
	{ "offset past the end", "region_offset = 200G\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: region_offset: region_offset 214748364800 bytes" },
	{ "region_size 0", "region_size = 0\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: region_size: the region is empty" },
	{ "region_size rounds to 0", "region_size = 1%\n", 100 * 512, 4096, -EINVAL,
	  .want = "t.conf:3: region_size: the region is empty" },
	{ "misaligned offset", "region_offset = 4608\nregion_size = 1G\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: region_offset: 4608 bytes (4.50 KiB) is not a "
		  "multiple of the logical block size 4096" },
	{ "misaligned region_size", "region_size = 1000000000\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: region_size: 1000000000 bytes" },
	{ "misaligned size", "sizes = 1G 1000\n", 100 * GiB, 512, -EINVAL,
	  .want = "t.conf:3: sizes: size 1000 bytes is not a multiple of the "
		  "logical block size 512" },
	{ "misaligned step", "sizes = 1G:2G:1000\n", 100 * GiB, 512, -EINVAL,
	  .want = "t.conf:3: sizes: step 1000 bytes is not a multiple" },
	{ "size larger than region", "region_size = 4G\nsizes = 1G 8G\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:4: sizes: size 8589934592 bytes (8.00 GiB) is larger "
		  "than the region of 4294967296 bytes (4.00 GiB)" },
	{ "sizes decreasing", "sizes = 2G 1G\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: sizes: sizes must be strictly increasing: "
		  "1073741824 bytes (1.00 GiB) follows 2147483648 bytes (2.00 GiB)" },
	{ "sizes equal", "sizes = 1G 1G\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: sizes: sizes must be strictly increasing" },
	{ "size of 0", "sizes = 0%:100%:50%\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: sizes: size 1 is 0 bytes" },
	{ "range start after end", "sizes = 4G:1G:1G\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: sizes: the range is empty" },
	{ "too many sizes", "sizes = 1M:1G:1M\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:3: sizes: the range gives 1024 sizes, more than 256" },
	{ "alert_critical above alert_below", "alert_below = 30%\nalert_critical = 40%\n",
	  100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:4: alert_critical: 40% is above "
		  "alert_below 30%; the critical threshold must be the lower one" },
	{ "alert_critical above a disabled alert_below", "alert_below = 0\nalert_critical = 40%\n",
	  100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:4: alert_critical: 40% while alert_below = 0 turns crash alerts off; "
		  "set alert_critical = 0 too, or alert_below at or above 40%" },
	{ "alert_below = 0 alone: alert_critical follows", "alert_below = 0\n", 100 * GiB, 4096, 0,
	  0, 100 * GiB, 1, 100 * GiB, 100 * GiB, NULL },
	{ "block_size larger than smallest size", "fill = no\nsizes = 64k 1M\nblock_size = 128k\n",
	  100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:5: block_size: 131072 bytes (128.00 KiB) is larger "
		  "than the smallest size 65536 bytes (64.00 KiB)" },
	{ "fill_block_size larger than smallest size", "sizes = 64k 1M\n", 100 * GiB, 4096, -EINVAL,
	  .want = "t.conf:1: fill_block_size: 131072 bytes (128.00 KiB) is larger" },
	{ "default block_size misaligned (header line)", "", 100 * GiB, 8192, -EINVAL,
	  .want = "t.conf:1: block_size: 4096 bytes (4.00 KiB) is not a multiple "
		  "of the logical block size 8192" },
	{ "bad logical block size", "", 100 * GiB, 1000, -EINVAL,
	  .want = "t.conf:1: device: device reports capacity" },
};

static void test_resolve(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(resolve_cases); i++) {
		const struct resolve_case *rc = &resolve_cases[i];
		char text[512], err[CFG_ERR_MAX] = "";
		struct cfg_layout l;
		struct cfg *c;
		int r;

		snprintf(text, sizeof(text), "[target r]\ndevice = /d\n%s", rc->keys);
		c = parse_ok(text);
		r = cfg_resolve(c, &c->targets[0], rc->capacity, rc->lbs, &l, err, sizeof(err));
		EXPECT(r == rc->rc, "%s: rc %d: %s", rc->name, r, err);
		if (r == 0) {
			EXPECT(l.region_offset == rc->offset, "%s: offset %llu", rc->name,
			       (unsigned long long)l.region_offset);
			EXPECT(l.region_size == rc->region, "%s: region %llu", rc->name,
			       (unsigned long long)l.region_size);
			EXPECT(l.nsizes == rc->nsizes, "%s: %d sizes", rc->name, l.nsizes);
			EXPECT(l.sizes[0] == rc->first && l.sizes[l.nsizes - 1] == rc->last,
			       "%s: sizes %llu..%llu", rc->name, (unsigned long long)l.sizes[0],
			       (unsigned long long)l.sizes[l.nsizes - 1]);
			EXPECT(l.capacity == rc->capacity && l.logical_block_size == rc->lbs,
			       "%s: device", rc->name);
		} else {
			EXPECT(count_prefix(err, rc->want) == 1, "%s: want \"%s\", got:\n%s",
			       rc->name, rc->want, err);
		}
		cfg_free(c);
	}
}

/* alert_below = 0 turns crash alerts off entirely: alert_critical, when
 * not set (here or in [wearmon]), follows it to 0, and the resolved text
 * the runs table stores says so. */
static void test_alert_below_zero(void **state)
{
	struct cfg *c = parse_ok("[wearmon]\nalert_below = 0\n[target r]\ndevice = /d\n"
				 "[target s]\ndevice = /e\nalert_below = 30%\n");

	(void)state;
	assert_true(c->targets[0].alert_below == 0 && c->targets[0].alert_critical == 0);
	assert_true(c->targets[1].alert_below == 30 && c->targets[1].alert_critical == 25);
	assert_non_null(strstr(c->text, "[target r]"));
	assert_non_null(strstr(strstr(c->text, "[target r]"),
			       "alert_critical = 0%   ; default: 0 while alert_below = 0\n"));
	assert_non_null(
		strstr(strstr(c->text, "[target s]"), "alert_critical = 25%   ; default\n"));
	cfg_free(c);
}

/* Every size of 10%:100%:10% is exactly n/10 of the region, aligned. */
static void test_resolve_range_values(void **state)
{
	struct cfg *c = parse_ok(
		"[target r]\ndevice = /d\nsizes = 10%:100%:10%\nblock_size = 512\nfill = no\n");
	uint64_t region = 1000003ULL * 512;
	struct cfg_layout l;
	char err[CFG_ERR_MAX];

	assert_int_equal(cfg_resolve(c, &c->targets[0], region, 512, &l, err, sizeof(err)), 0);
	assert_int_equal(l.nsizes, 10);
	for (int i = 0; i < 10; i++) {
		uint64_t want = region * (uint64_t)(i + 1) / 10;
		assert_int_equal(l.sizes[i], want - want % 512);
	}
	cfg_free(c);
}

/* ---- the key table and the example file ---- */

/* The campaign key: values as parsed, only the campaign's keys. */
static const struct campaign_case {
	const char *a, *b; /* two [target t] bodies */
	const char *changed;
} campaign_cases[] = {
	{ "block_size = 4k\n", "block_size = 4096\n", "" },
	{ "sizes = 50% 100%\n", "sizes = 50%   100%\n", "" },
	{ "cycles = 2\n", "cycles = 5\n", "" },
	{ "alert_below = 40%\npause = 1s\nidle = 5s\n", "alert_below = 60%\n", "" },
	{ "block_size = 4k\n", "block_size = 8k\n", "block_size" },
	{ "sizes = 8M\nqueue_depth = 4\n", "sizes = 16M\nqueue_depth = 8\n", "sizes, queue_depth" },
	{ "between_cycles = trim\n", "between_cycles = none trim\n", "between_cycles" },
	{ "", "measure = fill randwrite\n", "measure" },
	{ "", "ioengine = null\n", "ioengine" },
	/* The queued engines send the drive the same I/Os: one campaign, under
	 * the value older versions stored (ioengine = libaio, then the default). */
	{ "ioengine = libaio\n", "", "" },
	{ "ioengine = libaio\n", "ioengine = io_uring\n", "" },
	{ "ioengine = auto\n", "ioengine = io_uring\nio_uring_sqpoll = yes\n", "" },
	{ "", "ioengine = sync\n", "ioengine" },
	{ "ioengine = sync\n", "ioengine = null\n", "ioengine" },
};

static char *campaign_key_of(const char *body)
{
	char text[512];
	snprintf(text, sizeof(text), "[target t]\ndevice = /dev/null\n%s", body);
	struct cfg *c = parse_ok(text);
	char *key = cfg_campaign_key(&c->targets[0]);
	cfg_free(c);
	assert_non_null(key);
	return key;
}

static void test_campaign_key(void **state)
{
	char names[256];
	for (size_t i = 0; i < sizeof(campaign_cases) / sizeof(campaign_cases[0]); i++) {
		const struct campaign_case *cc = &campaign_cases[i];
		char *a = campaign_key_of(cc->a), *b = campaign_key_of(cc->b);
		int n = cfg_campaign_diff(a, b, names, sizeof(names));
		EXPECT(!strcmp(names, cc->changed), "case %zu: changed \"%s\", want \"%s\"", i,
		       names, cc->changed);
		assert_int_equal(n == 0, cc->changed[0] == 0);
		assert_int_equal(strcmp(a, b) == 0, cc->changed[0] == 0);
		free(a);
		free(b);
	}
	/* a key only one side has (added to the list later) is no change */
	assert_int_equal(cfg_campaign_diff("a=1\n", "a=1\nb=2\n", names, sizeof(names)), 0);
	assert_int_equal(cfg_campaign_diff("a=1\nb=2\n", "a=1\n", names, sizeof(names)), 0);
	assert_int_equal(cfg_campaign_diff("a=1\nb=2\n", "b=3\na=1\n", names, sizeof(names)), 1);
	assert_string_equal(names, "b");
}

static void test_key_table(void **state)
{
	size_t n;
	const struct cfg_key *k = cfg_keys(&n);

	assert_true(n > 0 && n <= CFG_MAX_KEYS);
	for (size_t i = 0; i < n; i++) {
		EXPECT(k[i].help && *k[i].help, "%s: no help", k[i].name);
		EXPECT(cfg_key_index(k[i].name) == (int)i, "%s: index", k[i].name);
		EXPECT(k[i].required ? k[i].def == NULL : k[i].def != NULL,
		       "%s: a key has a default or is required", k[i].name);
		EXPECT(k[i].type < CT__COUNT, "%s: type", k[i].name);
	}
	assert_int_equal(cfg_key_index("nope"), -ENOENT);
	assert_string_equal(cfg_workload_name(WL_RANDWRITE), "randwrite");
	assert_string_equal(cfg_workload_name(WL_SEQREAD), "seqread");
	assert_string_equal(cfg_action_name(ACT_TRIM), "trim");
	assert_string_equal(k[cfg_key_index("trim_scope")].choices[TRIM_DEVICE], "device");
	assert_true(cfg_workload_is_write(WL_SEQWRITE) && !cfg_workload_is_write(WL_RANDREAD));
	assert_true(cfg_workload_is_random(WL_RANDREAD) && !cfg_workload_is_random(WL_SEQWRITE));
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Whether text has a line "KEY = ..." (set, not only mentioned), or
 * ";KEY = ..." (shown, commented out: the key keeps its default). */
static int sets_key(const char *text, const char *key)
{
	size_t len = strlen(key);

	for (const char *l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p;

		if (*l == ';' && l[1] != ' ')
			l++;
		p = l + len;
		if (strncmp(l, key, len) != 0)
			continue;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '=')
			return 1;
	}
	return 0;
}

/* text between the first from and the next to after it (NULL-ended
 * copy, malloc'd), or NULL. */
static char *section_of(const char *text, const char *from, const char *to)
{
	const char *a = strstr(text, from), *b = a ? strstr(a + 1, to) : NULL;
	return a && b ? strndup(a, (size_t)(b - a)) : NULL;
}

/* Every campaign key is in the list wearmond(8) and common/db/schema.md give. */
static void test_campaign_keys_documented(void **state)
{
	char *key = campaign_key_of("");
	char *man = read_text("daemon/wearmond.8"), *schema = read_text("common/db/schema.md");
	char *in_man = section_of(man, ".SS Restart and resume", ".SH OPTIONS");
	char *in_schema = section_of(schema, "## Resume and campaigns", "\n## ");
	assert_non_null(in_man);
	assert_non_null(in_schema);
	int n = 0;
	for (char *line = strtok(key, "\n"); line; line = strtok(NULL, "\n"), n++) {
		char name[64], want[80];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(line, "="), line);
		snprintf(want, sizeof(want), "\n.BR %s ", name);
		EXPECT(strstr(in_man, want), "daemon/wearmond.8: campaign key %s not listed", name);
		snprintf(want, sizeof(want), "`%s`", name);
		EXPECT(strstr(in_schema, want), "common/db/schema.md: campaign key %s not listed",
		       name);
	}
	assert_true(n > 20);
	free(in_man);
	free(in_schema);
	free(man);
	free(schema);
	free(key);
}

static void test_example_conf(void **state)
{
	char err[CFG_ERR_MAX] = "";
	struct cfg *c = NULL;
	struct cfg_layout l;
	size_t n;
	const struct cfg_key *k = cfg_keys(&n);
	char *text;
	int rc = cfg_load(EXAMPLE_CONF, &c, err, sizeof(err));

	EXPECT(rc == 0, "%s: rc %d: %s", EXAMPLE_CONF, rc, err);
	assert_true(c->ntargets >= 1);
	assert_string_equal(c->path, EXAMPLE_CONF);
	rc = cfg_resolve(c, &c->targets[0], 1024 * GiB, 4096, &l, err, sizeof(err));
	EXPECT(rc == 0, "resolve: %s", err);
	text = read_text(EXAMPLE_CONF);
	for (size_t i = 0; i < n; i++) {
		char doc[80];

		EXPECT(sets_key(text, k[i].name), "%s: key %s is not set", EXAMPLE_CONF, k[i].name);
		snprintf(doc, sizeof(doc), "; %s:", k[i].name);
		EXPECT(strstr(text, doc), "%s: key %s has no comment \"%s\"", EXAMPLE_CONF,
		       k[i].name, doc);
	}
	free(text);
	cfg_free(c);
}

/* The shipped example runs every workload as the workload defines it: its
 * lines set no override of a preset's read share, random share or mix. */
static void test_example_keeps_presets(void **state)
{
	char err[CFG_ERR_MAX] = "", msg[256];
	struct cfg *c = NULL;
	unsigned n;
	const struct workload_preset *named = workload_presets(&n);

	assert_int_equal(cfg_load(EXAMPLE_CONF, &c, err, sizeof(err)), 0);
	for (unsigned w = 0; w < n; w++) {
		struct cfg_target t = c->targets[0];
		struct workload_spec s, want = { .nbs = 1, .bs = { { 4096, 1 } } };

		t.workload = (enum cfg_workload)w;
		assert_int_equal(cfg_workload_spec(&t, t.workload, &s, msg, sizeof(msg)), 0);
		if (named[w].nbs) {
			memcpy(want.bs, named[w].bs, sizeof(want.bs));
			want.nbs = named[w].nbs;
		}
		print_message("  %s: read %u%% random %u%% %u sizes\n", named[w].name, s.read_pct,
			      s.random_pct, s.nbs);
		EXPECT(s.read_pct == named[w].read_pct && s.random_pct == named[w].random_pct,
		       "%s: read %u%% random %u%%, the workload says %u%% %u%%", named[w].name,
		       s.read_pct, s.random_pct, named[w].read_pct, named[w].random_pct);
		assert_int_equal(s.nbs, want.nbs);
		assert_memory_equal(s.bs, want.bs, want.nbs * sizeof(want.bs[0]));
	}
	cfg_free(c);
}

/* "Set" is what the file says, never what a value happens to be: a key set
 * to its default is set, [wearmon] sets it for every target, a key left
 * out is not, whatever line numbers say. */
static void test_set_mask(void **state)
{
	struct cfg *c = parse_ok("[target a]\n"
				 "device = /dev/a\n"
				 "read_percent = 50\n"
				 "workload = database\n"
				 "[target b]\n"
				 "device = /dev/b\n"
				 "workload = database\n"
				 "[wearmon]\n"
				 "random_percent = 10\n");
	struct workload_spec s;
	char msg[64];

	assert_true(cfg_is_set(&c->targets[0], "read_percent"));
	assert_true(cfg_is_set(&c->targets[0], "random_percent"));
	assert_false(cfg_is_set(&c->targets[1], "read_percent"));
	assert_true(cfg_is_set(&c->targets[1], "random_percent"));
	assert_false(cfg_is_set(&c->targets[1], "block_size"));
	assert_false(cfg_is_set(&c->targets[1], "no_such_key"));
	assert_int_equal(cfg_workload_spec(&c->targets[0], WL_DATABASE, &s, msg, sizeof(msg)), 0);
	assert_int_equal(s.read_pct, 50);
	assert_int_equal(s.random_pct, 10);
	assert_int_equal(cfg_workload_spec(&c->targets[1], WL_DATABASE, &s, msg, sizeof(msg)), 0);
	assert_int_equal(s.read_pct, 67);
	assert_int_equal(s.random_pct, 10);
	/* A line number alone does not make a key set. */
	c->targets[1].lines[cfg_key_index("read_percent")] = 3;
	assert_false(cfg_is_set(&c->targets[1], "read_percent"));
	assert_int_equal(cfg_workload_spec(&c->targets[1], WL_DATABASE, &s, msg, sizeof(msg)), 0);
	assert_int_equal(s.read_pct, 67);
	cfg_free(c);
}

/* Lists are parsed once, into arrays: measure into phases, block_sizes
 * into sizes in bytes with weights. */
static void test_typed_lists(void **state)
{
	struct cfg *c = parse_ok("[target a]\n"
				 "device = /dev/a\n"
				 "measure = fill, randwrite database\n"
				 "block_sizes = 512:10 4k:60, 64k:30\n"
				 "jobs = 64\n");
	const struct cfg_target *t = &c->targets[0];
	char err[CFG_ERR_MAX] = "";
	struct cfg *bad = NULL;

	assert_int_equal(t->measure.n, 3);
	assert_int_equal(t->measure.phase[0], CFG_PHASE_FILL);
	assert_int_equal(t->measure.phase[1], WL_RANDWRITE);
	assert_int_equal(t->measure.phase[2], WL_DATABASE);
	assert_int_equal(t->block_sizes.n, 3);
	assert_int_equal(t->block_sizes.bs[0].size, 512);
	assert_int_equal(t->block_sizes.bs[1].size, 4096);
	assert_int_equal(t->block_sizes.bs[2].size, 65536);
	assert_int_equal(t->block_sizes.bs[2].weight, 30);
	cfg_free(c);
	/* jobs is bounded by what the engine can run. */
	assert_int_equal(cfg_parse_string("[target a]\ndevice = /dev/a\njobs = 65\n", "t.conf",
					  &bad, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "t.conf:3: jobs: \"65\" is out of range 1..64");
}

/* The host idle recovery keys: the PTS defaults, a short schedule, and
 * each bad value refused with its key and line. */
static void test_hir_keys(void **state)
{
	static const struct {
		const char *line, *want;
	} bad[] = {
		{ "hir_wait_states = 5s 5s", "t.conf:4: hir_wait_states: \"5s\" is not longer" },
		{ "hir_wait_states = 10s 5s", "t.conf:4: hir_wait_states: \"5s\" is not longer" },
		{ "hir_wait_states = 0", "t.conf:4: hir_wait_states: \"0\" is out of range" },
		{ "hir_wait_states = 5s soon",
		  "t.conf:4: hir_wait_states: \"soon\" is not a duration" },
		{ "hir_wait_states = ,", "t.conf:4: hir_wait_states: no wait given" },
		{ "hir_wait_states = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
		  "t.conf:4: hir_wait_states: more than 16 wait states" },
		{ "hir_burst = 10ms", "t.conf:4: hir_burst: \"10ms\" is out of range" },
		{ "hir_repetitions = 0", "t.conf:4: hir_repetitions: \"0\" is out of range" },
		{ "hir_baseline = -1s", "t.conf:4: hir_baseline: " },
		{ "hir_round = 2d", "t.conf:4: hir_round: \"2d\" is out of range" },
		{ "hir = maybe", "t.conf:4: hir: \"maybe\" is not a boolean" },
		{ "hir_purge = sometimes", "t.conf:4: hir_purge: \"sometimes\" is not one of:" },
	};
	struct cfg *c = parse_ok("[target t]\ndevice = /d\n");
	const struct cfg_target *t = &c->targets[0];
	char text[256], err[CFG_ERR_MAX];

	assert_int_equal(t->hir, 0);
	assert_int_equal(t->hir_wait_states.n, 5);
	assert_true(t->hir_wait_states.s[0] == 5 && t->hir_wait_states.s[1] == 10 &&
		    t->hir_wait_states.s[2] == 15 && t->hir_wait_states.s[3] == 25 &&
		    t->hir_wait_states.s[4] == 50);
	assert_true(t->hir_burst == 5 && t->hir_baseline == 1800 && t->hir_round == 60);
	assert_int_equal(t->hir_repetitions, 360);
	assert_int_equal(t->hir_purge, HIR_PURGE_AUTO);
	assert_false(cfg_hir_erases(t)); /* hir = no */
	cfg_free(c);
	c = parse_ok("[target t]\ndevice = /d\nhir = yes\nhir_wait_states = 1s,2s 4s\n"
		     "hir_burst = 500ms\nhir_repetitions = 2\nhir_baseline = 0\nhir_round = 1s\n");
	t = &c->targets[0];
	assert_int_equal(t->hir, 1);
	assert_int_equal(t->hir_wait_states.n, 3);
	assert_true(t->hir_wait_states.s[0] == 1 && t->hir_wait_states.s[2] == 4);
	assert_true(t->hir_burst == 0.5 && t->hir_baseline == 0 && t->hir_round == 1);
	assert_int_equal(t->hir_repetitions, 2);
	assert_int_equal(cfg_line(t, "hir_wait_states"), 4);
	assert_false(cfg_hir_erases(t)); /* auto, no secure_erase: TRIM */
	cfg_free(c);
	/* a purge by the secure_erase method brings its refusals with it
	 * (cfg_secure_erases), as between_cycles = secure-erase does */
	static const struct {
		const char *keys;
		int erases, secure;
	} purge[] = {
		{ "hir = yes\nsecure_erase = nvme-format\n", 1, 1 },
		{ "hir = yes\nsecure_erase = nvme-format\nhir_purge = trim\n", 0, 0 },
		{ "hir = yes\nsecure_erase = nvme-format\nhir_purge = none\n", 0, 0 },
		{ "hir = yes\nsecure_erase = ata\nhir_purge = secure-erase\n", 1, 1 },
		{ "hir = no\nsecure_erase = ata\n", 0, 0 },
		{ "hir = yes\nhir_purge = trim\nbetween_cycles = secure-erase\nsecure_erase = ata\n",
		  0, 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(purge); i++) {
		snprintf(text, sizeof(text), "[target t]\ndevice = /d\n%s", purge[i].keys);
		c = parse_ok(text);
		EXPECT(cfg_hir_erases(&c->targets[0]) == purge[i].erases &&
			       cfg_secure_erases(&c->targets[0]) == purge[i].secure,
		       "%s", purge[i].keys);
		cfg_free(c);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "[target t]\ndevice = /d\nhir = yes\n%s\n",
			 bad[i].line);
		if (!strncmp(bad[i].line, "hir =", 5))
			snprintf(text, sizeof(text), "[target t]\ndevice = /d\n\n%s\n",
				 bad[i].line);
		c = NULL;
		err[0] = '\0';
		assert_int_equal(cfg_parse_string(text, "t.conf", &c, err, sizeof(err)), -EINVAL);
		EXPECT(count_prefix(err, bad[i].want) == 1, "%s: want \"%s\", got:\n%s",
		       bad[i].line, bad[i].want, err);
	}
}

/* The rated endurance: TB in powers of 1000, DWPD with its years, a
 * calendar date; bad values and combinations name file, line and key. */
static void test_rating_keys(void **state)
{
	static const struct {
		const char *lines, *want;
	} bad[] = {
		{ "rated_dwpd = lots", "t.conf:3: rated_dwpd: \"lots\" is not a number" },
		{ "rated_dwpd = 2000", "t.conf:3: rated_dwpd: \"2000\" is out of range 0..1000" },
		{ "warranty_years = -1", "t.conf:3: warranty_years: \"-1\" is out of range" },
		{ "warranty_start = 2026-02-30",
		  "t.conf:3: warranty_start: \"2026-02-30\" is no day" },
		{ "warranty_start = 2026-2-3",
		  "t.conf:3: warranty_start: \"2026-2-3\" is not a date" },
		{ "warranty_start = soon", "t.conf:3: warranty_start: \"soon\" is not a date" },
		/* resolved against a 1 TiB drive */
		{ "rated_tbw = 600", "t.conf:3: rated_tbw: 600 bytes is less than one write of the "
				     "drive (1099511627776 bytes (1.00 TiB)): give the unit" },
		{ "rated_tbw = 600TB\nrated_dwpd = 1\nwarranty_years = 5",
		  "t.conf:4: rated_dwpd: 1 with rated_tbw: set one rating" },
		{ "rated_dwpd = 1", "t.conf:3: rated_dwpd: 1 without warranty_years" },
	};
	struct cfg *c = parse_ok("[target t]\ndevice = /d\nrated_tbw = 600TB\nwarranty_years = 5\n"
				 "warranty_start = 2024-02-29\n");
	const struct cfg_target *t = &c->targets[0];
	char text[256], err[CFG_ERR_MAX];
	struct cfg_layout l;

	assert_true(t->rated_tbw == 600000000000000ull);
	assert_true(t->warranty_years == 5 && t->rated_dwpd == 0);
	assert_string_equal(t->warranty_start, "2024-02-29");
	assert_int_equal(cfg_resolve(c, t, 1024 * GiB, 4096, &l, err, sizeof(err)), 0);
	cfg_free(c);
	c = parse_ok("[target t]\ndevice = /d\nrated_dwpd = 0.3\nwarranty_years = 3\n");
	assert_true(c->targets[0].rated_dwpd == 0.3 && c->targets[0].rated_tbw == 0);
	assert_string_equal(c->targets[0].warranty_start, "");
	cfg_free(c);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "[target t]\ndevice = /d\n%s\n", bad[i].lines);
		c = NULL;
		err[0] = '\0';
		int rc = cfg_parse_string(text, "t.conf", &c, err, sizeof(err));
		if (!rc) {
			rc = cfg_resolve(c, &c->targets[0], 1024 * GiB, 4096, &l, err, sizeof(err));
			cfg_free(c);
		}
		assert_int_equal(rc, -EINVAL);
		EXPECT(count_prefix(err, bad[i].want) == 1, "%s: want \"%s\", got:\n%s",
		       bad[i].lines, bad[i].want, err);
	}
}

static void test_load_missing(void **state)
{
	char err[CFG_ERR_MAX] = "";
	struct cfg *c = (struct cfg *)1;

	assert_int_equal(cfg_load("/nonexistent/wearmon.conf", &c, err, sizeof(err)), -ENOENT);
	assert_null(c);
	assert_string_equal(err,
			    "/nonexistent/wearmon.conf: cannot read: No such file or directory");
	cfg_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_config),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_metrics_file),
		cmocka_unit_test(test_sample_retention),
		cmocka_unit_test(test_action_list),
		cmocka_unit_test(test_wearmon_defaults),
		cmocka_unit_test(test_resolved_text),
		cmocka_unit_test(test_syntax_variants),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_all_errors),
		cmocka_unit_test(test_err_truncated),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_resolve_range_values),
		cmocka_unit_test(test_alert_below_zero),
		cmocka_unit_test(test_key_table),
		cmocka_unit_test(test_campaign_key),
		cmocka_unit_test(test_campaign_keys_documented),
		cmocka_unit_test(test_example_conf),
		cmocka_unit_test(test_example_keeps_presets),
		cmocka_unit_test(test_set_mask),
		cmocka_unit_test(test_typed_lists),
		cmocka_unit_test(test_hir_keys),
		cmocka_unit_test(test_rating_keys),
		cmocka_unit_test(test_load_missing),
	};

	return cmocka_run_group_tests_name("cfg", tests, NULL, NULL);
}
