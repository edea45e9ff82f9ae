/* test_alert: the threshold decisions (tables of cases), the kinds table
 * against systemd/wearmon.catalog, and alert_iteration/alert_action/
 * alert_failure end to end on a temporary database with an alert_command.
 * Run from the repository root. */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alert.h"
#include "cause.h"
#include "config/cfg.h"
#include "db/db.h"

#define CATALOG "systemd/wearmon.catalog"
#define MiB (1ULL << 20)

/* ---- pure decisions ---- */

static void test_crash_table(void **state)
{
	static const struct {
		double avg, base, below, crit;
		int want;
	} c[] = {
		{ 100, 100, 50, 25, ALERT_NONE },
		{ 50, 100, 50, 25, ALERT_NONE }, /* at the threshold: not below */
		{ 49.9, 100, 50, 25, LOG_WARNING },
		{ 25, 100, 50, 25, LOG_WARNING },
		{ 24.9, 100, 50, 25, LOG_CRIT },
		{ 0, 100, 50, 25, LOG_CRIT },
		{ 10, 100, 0, 25, ALERT_NONE }, /* alert_below = 0: no crash alert at all */
		{ 30, 100, 0, 25, ALERT_NONE },
		{ 10, 100, 50, 0, LOG_WARNING }, /* critical off */
		{ 10, 100, 0, 0, ALERT_NONE },   /* both off */
		{ 10, 0, 50, 25, ALERT_NONE },   /* no baseline */
		{ 10, -1, 50, 25, ALERT_NONE },
		{ 200, 100, 100, 25, ALERT_NONE }, /* faster than the baseline */
		{ 99, 100, 100, 25, LOG_WARNING },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int got = alert_check_crash(c[i].avg, c[i].base, c[i].below, c[i].crit);
		if (got != c[i].want)
			fail_msg("case %zu: avg %g base %g below %g crit %g: got %d want %d", i,
				 c[i].avg, c[i].base, c[i].below, c[i].crit, got, c[i].want);
	}
}

static void test_recovery_table(void **state)
{
	static const struct {
		double avg, base, above;
		int want;
	} c[] = {
		{ 90, 100, 90, 1 }, { 89.9, 100, 90, 0 }, { 150, 100, 90, 1 },
		{ 0, 100, 0, 1 },   { 50, 0, 90, 0 },     { 50, -1, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (alert_check_recovery(c[i].avg, c[i].base, c[i].above) != c[i].want)
			fail_msg("case %zu: avg %g base %g above %g", i, c[i].avg, c[i].base,
				 c[i].above);
}

/* Row initializers (clang-format would spread each over four lines). */
/* clang-format off */
#define F(v) { .phase = DB_PHASE_FILL, .mibps = (v) }
#define M(v) { .phase = DB_PHASE_MEASURE, .mibps = (v) }
#define H(v) { .phase = DB_PHASE_MEASURE, .mibps = (v), .host_stall_ms = 500 }
/* clang-format on */

static void test_collapse_table(void **state)
{
	static const struct {
		const char *what;
		struct db_sample s[10];
		size_t n;
		double avg, below;
		long want;
		double low;
	} c[] = {
		{ "three low in a row",
		  { M(200), M(10), M(12), M(11), M(200) },
		  5,
		  100,
		  20,
		  1,
		  10 },
		{ "two low are not enough",
		  { M(200), M(10), M(12), M(200), M(10) },
		  5,
		  100,
		  20,
		  -1,
		  0 },
		{ "at the limit is not below", { M(20), M(20), M(20) }, 3, 100, 20, -1, 0 },
		{ "the first run counts",
		  { M(1), M(2), M(3), M(100), M(0), M(0), M(0) },
		  7,
		  100,
		  20,
		  0,
		  1 },
		{ "longer run: lowest of the first three",
		  { M(100), M(19), M(5), M(18), M(1) },
		  5,
		  100,
		  20,
		  1,
		  5 },
		{ "fill samples are skipped",
		  { F(1), F(1), F(1), M(100), M(100) },
		  5,
		  100,
		  20,
		  -1,
		  0 },
		{ "fill between measure samples does not break a run",
		  { M(1), F(500), M(1), M(1) },
		  4,
		  100,
		  20,
		  0,
		  1 },
		{ "samples of a host stall are not the drive's",
		  { M(100), H(40), H(0), H(0), H(0), M(100) },
		  6,
		  100,
		  20,
		  -1,
		  0 },
		{ "a host stall breaks a run",
		  { M(1), M(1), H(1), M(1), M(1), M(100) },
		  6,
		  100,
		  20,
		  -1,
		  0 },
		{ "low samples after a host stall still count",
		  { H(0), M(2), M(3), M(4) },
		  4,
		  100,
		  20,
		  1,
		  2 },
		{ "off at 0%", { M(0), M(0), M(0) }, 3, 100, 0, -1, 0 },
		{ "no average", { M(0), M(0), M(0) }, 3, 0, 20, -1, 0 },
		{ "no samples", { M(0) }, 0, 100, 20, -1, 0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double low = -1;
		long got = alert_check_collapse(c[i].s, c[i].n, c[i].avg, c[i].below, &low);
		if (got != c[i].want)
			fail_msg("%s: got index %ld want %ld", c[i].what, got, c[i].want);
		if (got >= 0 && low != c[i].low)
			fail_msg("%s: low %g want %g", c[i].what, low, c[i].low);
	}
}

/* ---- the kinds table and the catalog ---- */

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_kinds_and_catalog(void **state)
{
	static const char *const needed[] = {
		"throughput-crash", "throughput-collapse", "throughput-recovered",
		"io-error",         "device-gone",         "identity-mismatch",
		"action-failed",    "db-write-failed",     "iteration-failed",
		"data-integrity",   "host-stall",
	};
	size_t n;
	const struct alert_kind_info *k = alert_kinds(&n);
	char *cat = read_text(CATALOG);

	assert_int_equal(n, sizeof(needed) / sizeof(needed[0]));
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (alert_kind_parse(needed[i]) < 0 ||
		    !alert_message_id((enum alert_kind)alert_kind_parse(needed[i])))
			fail_msg("kind %s has no MESSAGE_ID", needed[i]);
	assert_int_equal(alert_kind_parse("no-such-kind"), -1);
	assert_int_equal(n, ALERT_KIND__COUNT);
	for (int i = 0; i < ALERT_KIND__COUNT; i++) {
		/* the enum, the table and the names agree */
		assert_string_equal(alert_kind_name((enum alert_kind)i), k[i].kind);
		assert_int_equal(alert_kind_parse(k[i].kind), i);
	}
	/* the crash and collapse entries list every field an alert carries */
	static const char *const context[] = { "TARGET", "DEVICE",         "SERIAL",
					       "MODEL",  "FIRMWARE",       "MESSAGE_ID",
					       "CYCLE",  "ITERATION",      "SIZE_BYTES",
					       "MIBPS",  "BASELINE_MIBPS", "CAUSE" };
	size_t nf;
	const char *const *ev = cause_field_names(&nf);
	assert_int_equal(sizeof(context) / sizeof(context[0]), LOG_CONTEXT_FIELDS);
	for (int kind = ALERT_CRASH; kind <= ALERT_COLLAPSE; kind++) {
		char head[64];
		snprintf(head, sizeof(head), "\n-- %s\n", k[kind].message_id);
		const char *entry = strstr(cat, head);
		assert_non_null(entry);
		const char *fields = strstr(entry, "\nFields: ");
		assert_non_null(fields);
		const char *end = strstr(fields + 1, "\n\n");
		for (size_t i = 0; i < sizeof(context) / sizeof(context[0]) + nf; i++) {
			const char *name = i < sizeof(context) / sizeof(context[0])
						   ? context[i]
						   : ev[i - sizeof(context) / sizeof(context[0])];
			const char *at = strstr(fields, name);
			if (!at || (end && at > end))
				fail_msg("%s: the %s entry's Fields lack %s", CATALOG, k[kind].kind,
					 name);
		}
	}
	assert_string_equal(alert_kind_name(ALERT_DATA_INTEGRITY), "data-integrity");
	assert_string_equal(alert_kind_name(ALERT_DB_WRITE), "db-write-failed");
	for (size_t i = 0; i < n; i++) {
		char entry[64];
		assert_int_equal(strlen(k[i].message_id), 32);
		assert_int_equal(strspn(k[i].message_id, "0123456789abcdef"), 32);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(k[i].message_id, k[j].message_id);
		snprintf(entry, sizeof(entry), "\n-- %s\n", k[i].message_id);
		if (!strstr(cat, entry))
			fail_msg("%s: no entry for %s (%s)", CATALOG, k[i].kind, k[i].message_id);
	}
	free(cat);
}

/* ---- end to end on a temporary database ---- */

struct fx {
	char dir[64];
	char db_path[128], out[128], script[128];
	struct db *db;
	struct cfg *c;
	int64_t run_id, target_id, cycle_id;
	long cycle;
	struct alert_ctx *a;
};

static int setup_fx(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char err[CFG_ERR_MAX], conf[1024];

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/wearmon-test-alert.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->db_path, sizeof(fx->db_path), "%s/h.db", fx->dir);
	snprintf(fx->out, sizeof(fx->out), "%s/alerts.txt", fx->dir);
	snprintf(fx->script, sizeof(fx->script), "%s/alert.sh", fx->dir);
	FILE *f = fopen(fx->script, "we");
	assert_non_null(f);
	fprintf(f,
		"#!/bin/sh\nenv | grep '^WEARMON_' | sort >> %s\necho \"ARG=$1\" >> %s\n"
		"echo --- >> %s\n",
		fx->out, fx->out, fx->out);
	fclose(f);
	chmod(fx->script, 0755);
	snprintf(conf, sizeof(conf),
		 "[wearmon]\ndatabase = %s\n[target lab1]\ndevice = /dev/null\n"
		 "alert_command = %s\n",
		 fx->db_path, fx->script);
	assert_int_equal(cfg_parse_string(conf, "t.conf", &fx->c, err, sizeof(err)), 0);
	assert_int_equal(db_open(fx->db_path, 0, &fx->db, err, sizeof(err)), 0);
	assert_int_equal(db_run_begin(fx->db, "t.conf", &fx->run_id), 0);
	struct db_target_info ti = { .name = "lab1",
				     .device = "/dev/null",
				     .kind = TGT_BLOCK,
				     .capacity_bytes = 1 << 30,
				     .logical_block_size = 512,
				     .serial = "SN123" };
	assert_int_equal(db_target_upsert(fx->db, &ti, &fx->target_id), 0);
	*state = fx;
	return 0;
}

static int teardown_fx(void **state)
{
	struct fx *fx = *state;
	char cmd[256];

	alert_finish(5);
	alert_free(fx->a);
	db_close(fx->db);
	cfg_free(fx->c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
	if (system(cmd))
		return -1;
	free(fx);
	return 0;
}

static void start_alerts(struct fx *fx)
{
	struct alert_target who = { .name = "lab1",
				    .device = "/dev/null",
				    .serial = "SN123",
				    .model = "WEARMON SIMSSD FTL MLC 4K PAGE TEST UNIT",
				    .firmware = "SIM1.0.0",
				    .db = fx->db,
				    .target_id = fx->target_id,
				    .run_id = fx->run_id };
	alert_free(fx->a);
	fx->a = NULL;
	assert_int_equal(alert_init(&who, &fx->c->targets[0], &fx->a), 0);
}

static void new_cycle(struct fx *fx)
{
	fx->cycle++;
	assert_int_equal(
		db_cycle_begin(fx->db, fx->target_id, fx->run_id, fx->cycle, &fx->cycle_id), 0);
}

/* Store a done iteration of size MiB at mibps and let the alerts see it;
 * samples (may be NULL) are the measured phase, series the drive's
 * readings (may be NULL). */
static void iteration_read(struct fx *fx, long number, uint64_t size, double mibps,
			   const struct db_sample *s, size_t ns, const struct db_dev_point *series,
			   size_t nseries)
{
	struct db_iteration it = {
		.cycle_id = fx->cycle_id,
		.run_id = fx->run_id,
		.target_id = fx->target_id,
		.number = number,
		.size_index = 0,
		.size_bytes = size * MiB,
		.workload = "randwrite",
		.block_size = 4096,
		.queue_depth = 32,
		.amount_bytes = size * MiB,
		.status = DB_RUNNING,
		.series = series,
		.nseries = nseries,
	};
	int64_t id;

	alert_baseline_of(fx->a, &it);
	assert_int_equal(db_iteration_begin(fx->db, &it, &id), 0);
	it.status = DB_DONE;
	it.mibps_avg = it.mibps_min = it.mibps_max = mibps;
	it.seconds = 1;
	assert_int_equal(db_iteration_end(fx->db, id, &it, s, ns), 0);
	alert_iteration(fx->a, fx->cycle, &it, id, s, ns);
}

static void iteration(struct fx *fx, long number, uint64_t size, double mibps,
		      const struct db_sample *s, size_t ns)
{
	iteration_read(fx, number, size, mibps, s, ns, NULL, 0);
}

/* took_effect: the action ended ok */
static void end_cycle(struct fx *fx, enum cfg_action action, int took_effect)
{
	alert_action(fx->a, fx->cycle, fx->cycle_id, action, took_effect, NULL);
	assert_int_equal(db_cycle_end(fx->db, fx->cycle_id, DB_DONE), 0);
}

struct ev {
	char text[4096];
	int n;
};

static int collect(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct ev *e = arg;
	size_t used = strlen(e->text);

	for (int i = 0; i < n; i++) {
		const char *sep = i ? "|" : "";
		if (v[i].type == DB_TEXT)
			used += (size_t)snprintf(e->text + used, sizeof(e->text) - used, "%s%s",
						 sep, v[i].s);
		else if (v[i].type == DB_NULL)
			used += (size_t)snprintf(e->text + used, sizeof(e->text) - used, "%s-",
						 sep);
		else
			used += (size_t)snprintf(e->text + used, sizeof(e->text) - used, "%s%lld",
						 sep, (long long)v[i].i);
	}
	snprintf(e->text + used, sizeof(e->text) - used, "\n");
	e->n++;
	return 0;
}

/* "kind|severity|..." lines of the events table, oldest first. */
static void events(struct fx *fx, struct ev *e)
{
	char err[256];

	memset(e, 0, sizeof(*e));
	assert_int_equal(
		db_query(fx->db,
			 "SELECT kind, severity, length(message_id),"
			 " CAST(round(value) AS INTEGER), CAST(round(baseline) AS INTEGER),"
			 " (SELECT number FROM cycles WHERE id = cycle_id)"
			 " FROM events ORDER BY id",
			 NULL, 0, collect, e, err, sizeof(err)),
		0);
}

static void test_crash_dedup_and_recovery(void **state)
{
	struct fx *fx = *state;
	struct ev e;

	start_alerts(fx);
	new_cycle(fx); /* cycle 1: the baseline */
	iteration(fx, 1, 8, 400, NULL, 0);
	iteration(fx, 2, 16, 300, NULL, 0);
	end_cycle(fx, ACT_NONE, 1);
	new_cycle(fx); /* cycle 2: a warning, then critical, once each */
	iteration(fx, 1, 8, 150, NULL, 0);
	iteration(fx, 2, 16, 140, NULL, 0); /* 47%: a second warning this cycle: quiet */
	iteration(fx, 3, 8, 40, NULL, 0);   /* 10%: critical follows the warning */
	iteration(fx, 4, 8, 30, NULL, 0);   /* critical again: quiet */
	end_cycle(fx, ACT_TRIM, 1);
	new_cycle(fx); /* cycle 3: recovered after trim */
	iteration(fx, 1, 8, 380, NULL, 0);
	iteration(fx, 2, 16, 100, NULL, 0); /* a new crash in a new cycle */
	end_cycle(fx, ACT_TRIM, 0);
	new_cycle(fx); /* cycle 4: fast again but no ok action */
	iteration(fx, 1, 8, 400, NULL, 0);
	events(fx, &e);
	assert_string_equal(e.text, "throughput-crash|warning|32|150|400|2\n"
				    "throughput-crash|crit|32|40|400|2\n"
				    "throughput-recovered|notice|32|380|400|3\n"
				    "throughput-crash|warning|32|100|300|3\n");
}

static void test_best_baseline(void **state)
{
	struct fx *fx = *state;
	struct ev e;

	fx->c->targets[0].baseline = BASELINE_BEST;
	start_alerts(fx);
	new_cycle(fx);
	iteration(fx, 1, 8, 100, NULL, 0);
	new_cycle(fx);
	iteration(fx, 1, 8, 400, NULL, 0); /* above the first: no alert, the new best */
	new_cycle(fx);
	iteration(fx, 1, 8, 150, NULL, 0); /* 37% of the best, 150% of the first */
	events(fx, &e);
	assert_string_equal(e.text, "throughput-crash|warning|32|150|400|3\n");
}

/* baseline = previous: each iteration against the latest one before it;
 * the row, the degradation view and the alert name the same reference. */
static void test_previous_baseline(void **state)
{
	struct fx *fx = *state;
	struct ev e;
	char err[256];

	fx->c->targets[0].baseline = BASELINE_PREVIOUS;
	start_alerts(fx);
	new_cycle(fx);
	iteration(fx, 1, 8, 400, NULL, 0);
	new_cycle(fx);
	iteration(fx, 1, 8, 300, NULL, 0); /* 75% of the previous: no alert */
	new_cycle(fx);
	iteration(fx, 1, 8, 140, NULL, 0); /* 47% of the previous, 35% of the first */
	events(fx, &e);
	assert_string_equal(e.text, "throughput-crash|warning|32|140|300|3\n");
	memset(&e, 0, sizeof(e));
	assert_int_equal(db_query(fx->db,
				  "SELECT cycle, baseline, baseline_cycle,"
				  " CAST(round(baseline_mibps) AS INTEGER),"
				  " CAST(round(100 * ratio) AS INTEGER) FROM degradation"
				  " ORDER BY iteration_id",
				  NULL, 0, collect, &e, err, sizeof(err)),
			 0);
	assert_string_equal(e.text, "1|previous|-|-|-\n2|previous|1|400|75\n3|previous|2|300|47\n");
	memset(&e, 0, sizeof(e));
	assert_int_equal(db_query(fx->db,
				  "SELECT count(*) FROM events e JOIN iterations i"
				  " ON i.id = e.iteration_id WHERE json_extract(e.data,"
				  " '$.baseline_iteration_id') = i.baseline_iteration_id",
				  NULL, 0, collect, &e, err, sizeof(err)),
			 0);
	assert_string_equal(e.text, "1\n");
}

/* Only the same workload and block size make a baseline; a crash before a
 * restart still waits for its recovery. */
static void test_baseline_key_and_restart(void **state)
{
	struct fx *fx = *state;
	struct ev e;

	start_alerts(fx);
	new_cycle(fx);
	iteration(fx, 1, 8, 400, NULL, 0);
	new_cycle(fx);
	iteration(fx, 1, 8, 90, NULL, 0); /* crash */
	end_cycle(fx, ACT_TRIM, 1);
	start_alerts(fx); /* "restart" */
	double b = 0;
	assert_int_equal(alert_baseline(fx->a, 8 * MiB, &b), 0);
	assert_true(b == 400);
	assert_int_equal(alert_baseline(fx->a, 16 * MiB, &b), -ENOENT);
	fx->c->targets[0].block_size = 8192;
	alert_set_config(fx->a, &fx->c->targets[0]);
	assert_int_equal(alert_baseline(fx->a, 8 * MiB, &b), -ENOENT);
	fx->c->targets[0].block_size = 4096;
	alert_set_config(fx->a, &fx->c->targets[0]);
	alert_action(fx->a, fx->cycle, fx->cycle_id, ACT_TRIM, 1, NULL);
	new_cycle(fx);
	iteration(fx, 1, 8, 390, NULL, 0);
	events(fx, &e);
	assert_string_equal(e.text, "throughput-crash|crit|32|90|400|2\n"
				    "throughput-recovered|notice|32|390|400|3\n");
}

/* A restart in the middle of a cycle does not raise that cycle's alerts
 * again; a worse one still comes, and the next cycle starts afresh. */
static void test_restart_mid_cycle_keeps_dedup(void **state)
{
	struct fx *fx = *state;
	struct ev e;

	start_alerts(fx);
	new_cycle(fx);
	iteration(fx, 1, 8, 400, NULL, 0);
	new_cycle(fx);
	iteration(fx, 1, 8, 150, NULL, 0); /* warning */
	start_alerts(fx);                  /* "restart" inside cycle 2 */
	iteration(fx, 2, 8, 160, NULL, 0); /* a second warning this cycle: quiet */
	iteration(fx, 3, 8, 40, NULL, 0);  /* critical follows */
	start_alerts(fx);
	iteration(fx, 4, 8, 30, NULL, 0); /* critical again: quiet */
	end_cycle(fx, ACT_NONE, 0);
	new_cycle(fx);
	iteration(fx, 1, 8, 150, NULL, 0); /* a new cycle: warning again */
	events(fx, &e);
	assert_string_equal(e.text, "throughput-crash|warning|32|150|400|2\n"
				    "throughput-crash|crit|32|40|400|2\n"
				    "throughput-crash|warning|32|150|400|3\n");
}

static void test_collapse_alert(void **state)
{
	struct fx *fx = *state;
	struct db_sample s[6];
	static const double v[6] = { 500, 500, 10, 12, 11, 500 };
	struct ev e;

	for (int i = 0; i < 6; i++)
		s[i] = (struct db_sample){ .phase = DB_PHASE_MEASURE,
					   .t_ms = 1000 * (i + 1),
					   .mibps = v[i] };
	start_alerts(fx);
	new_cycle(fx);
	iteration(fx, 1, 8, 255, s, 6);
	events(fx, &e);
	assert_string_equal(e.text, "throughput-collapse|warning|32|10|255|1\n");
}

/* The drive's readings over 9 s of a measured phase, one a second: it
 * writes 10 MiB/s with write amplification wa; from 4 s to 7 s it
 * throttles (when hot) for 600 ms of each second. */
static void readings(struct db_dev_point *p, double wa, int hot)
{
	int64_t thr = 0;
	for (int i = 0; i < 10; i++) {
		if (hot && i > 4 && i <= 7)
			thr += 600;
		p[i] = (struct db_dev_point){ .phase = DB_PHASE_MEASURE, .t_ms = 1000 * i };
		const int64_t v[DB_SERIES__COUNT] = {
			[DB_SERIES_HOST_BYTES] = 10 * MiB * i,
			[DB_SERIES_MEDIA_BYTES] = (int64_t)(wa * 10 * MiB * i),
			[DB_SERIES_TEMP_C] = hot && i > 4 && i <= 7 ? 75 : 45,
			[DB_SERIES_THROTTLE_MS] = thr,
			[DB_SERIES_HOST_STALL_MS] = 0,
		};
		for (int f = 0; f < DB_SERIES__COUNT; f++) {
			p[i].has[f] = 1;
			p[i].val[f] = v[f];
		}
	}
}

/* The collapse of a drive whose write amplification was already high
 * (3.0 before the dip and in it, against 1.0 at the baseline) is not
 * wear: the dip is judged against the window before it. The same dip
 * with the drive throttling is thermal. The alert's command sees the
 * cause, the evidence and the drive's identity. */
static void test_collapse_cause_from_the_dip(void **state)
{
	struct fx *fx = *state;
	struct db_sample s[9];
	struct db_dev_point calm[10], worn[10], hot[10];
	static const double v[9] = { 300, 300, 300, 300, 10, 12, 11, 300, 300 };
	struct ev e;
	char err[256];

	for (int i = 0; i < 9; i++)
		s[i] = (struct db_sample){ .phase = DB_PHASE_MEASURE,
					   .t_ms = 1000 * (i + 1),
					   .seconds = 1,
					   .mibps = v[i] };
	readings(calm, 1.0, 0);
	readings(worn, 3.0, 0);
	readings(hot, 1.0, 1);
	start_alerts(fx);
	new_cycle(fx);
	iteration_read(fx, 1, 8, 300, NULL, 0, calm, 10); /* the baseline */
	iteration_read(fx, 2, 16, 208, s, 9, worn, 10);
	new_cycle(fx); /* a collapse is raised once a cycle */
	iteration_read(fx, 1, 32, 208, s, 9, hot, 10);
	memset(&e, 0, sizeof(e));
	assert_int_equal(
		db_query(fx->db,
			 "SELECT json_extract(data, '$.cause'),"
			 " json_extract(data, '$.before'),"
			 " CAST(json_extract(data, '$.device_wa') * 10 AS INTEGER),"
			 " CAST(json_extract(data, '$.baseline_device_wa') * 10 AS INTEGER),"
			 " CAST(json_extract(data, '$.dip_start_s') AS INTEGER),"
			 " CAST(json_extract(data, '$.dip_end_s') AS INTEGER),"
			 " CAST(json_extract(data, '$.throttle_seconds') * 1000 AS INTEGER)"
			 " FROM events WHERE kind = 'throughput-collapse' ORDER BY id",
			 NULL, 0, collect, &e, err, sizeof(err)),
		0);
	/* the dip is samples 5-7 (4 s to 7 s), before it 1 s to 4 s */
	assert_string_equal(e.text, "unknown|iteration|30|30|4|7|0\n"
				    "thermal|iteration|10|10|4|7|1800\n");
	assert_int_equal(alert_finish(10), 0);
	char *out = read_text(fx->out);
	const char *want[] = {
		"WEARMON_CAUSE=unknown\n",
		"WEARMON_CAUSE=thermal\n",
		"WEARMON_MODEL=WEARMON SIMSSD FTL MLC 4K PAGE TEST UNIT\n",
		"WEARMON_FIRMWARE=SIM1.0.0\n",
		"WEARMON_DIP_DEVICE_WA=3.0000\n",
		"WEARMON_BEFORE_DEVICE_WA=3.0000\n",
		"WEARMON_DIP_THROTTLE_MS=1800\n",
		"WEARMON_BEFORE_THROTTLE_MS=0\n",
		"WEARMON_DIP_PEAK_TEMP_C=75\n",
		"WEARMON_BEFORE=iteration\n",
		"WEARMON_DIP_START_S=4.000\n",
		"WEARMON_DIP_END_S=7.000\n",
		"WEARMON_THROTTLE_RESOLUTION_MS=\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out, want[i]))
			fail_msg("alert_command output lacks %s:\n%s", want[i], out);
	free(out);
}

/* A crash low from the start of its phase is judged against the baseline
 * iteration's measured phase: there the drive wrote with WA 1.0, here 3.0. */
static void test_crash_against_the_baseline(void **state)
{
	struct fx *fx = *state;
	struct db_sample s[9];
	struct db_dev_point calm[10], worn[10];
	struct ev e;
	char err[256];

	for (int i = 0; i < 9; i++)
		s[i] = (struct db_sample){ .phase = DB_PHASE_MEASURE,
					   .t_ms = 1000 * (i + 1),
					   .seconds = 1,
					   .mibps = 100 };
	readings(calm, 1.0, 0);
	readings(worn, 3.0, 0);
	start_alerts(fx);
	new_cycle(fx);
	iteration_read(fx, 1, 8, 400, NULL, 0, calm, 10);
	new_cycle(fx);
	iteration_read(fx, 1, 8, 100, s, 9, worn, 10);
	memset(&e, 0, sizeof(e));
	assert_int_equal(
		db_query(fx->db,
			 "SELECT json_extract(data, '$.cause'),"
			 " json_extract(data, '$.before'),"
			 " json_extract(data, '$.before_iteration_id') = baseline_iteration_id"
			 " FROM events e JOIN iterations i ON i.id = e.iteration_id"
			 " WHERE kind = 'throughput-crash'",
			 NULL, 0, collect, &e, err, sizeof(err)),
		0);
	assert_string_equal(e.text, "wear|baseline|1\n");
}

/* Failures: stored with their severity; alert_command sees WEARMON_*. */
static void test_failure_and_command(void **state)
{
	struct fx *fx = *state;
	struct ev e;

	start_alerts(fx);
	new_cycle(fx);
	iteration(fx, 1, 8, 400, NULL, 0);
	alert_failure(fx->a, ALERT_IO_ERROR, LOG_ERR, fx->cycle, 0, "write at offset 0: EIO");
	alert_failure(fx->a, ALERT_IO_ERROR, LOG_ERR, fx->cycle, 0, "again"); /* same cycle */
	alert_failure(fx->a, ALERT_DB_WRITE, LOG_CRIT, fx->cycle, 0, "disk full");
	events(fx, &e);
	assert_string_equal(e.text, "io-error|err|32|-|-|1\ndb-write-failed|crit|32|-|-|1\n");
	assert_int_equal(alert_finish(10), 0);
	char *out = read_text(fx->out);
	const char *want[] = {
		"WEARMON_TARGET=lab1\n",
		"WEARMON_DEVICE=/dev/null\n",
		"WEARMON_SERIAL=SN123\n",
		"WEARMON_KIND=io-error\n",
		"WEARMON_SEVERITY=err\n",
		"WEARMON_MESSAGE_ID=a0e3fce57568460c9dfc870b061b4224\n",
		"WEARMON_MESSAGE=target lab1: io-error: write at offset 0: EIO\n",
		"WEARMON_CYCLE=1\n",
		"WEARMON_ITERATION=\n",
		"WEARMON_SIZE_BYTES=\n",
		"WEARMON_MIBPS=\n",
		"WEARMON_BASELINE_MIBPS=\n",
		"WEARMON_CAUSE=\n",
		"ARG=io-error\n",
		"WEARMON_KIND=db-write-failed\n",
		"WEARMON_SEVERITY=crit\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out, want[i]))
			fail_msg("alert_command output lacks %s:\n%s", want[i], out);
	assert_null(strstr(out, "again"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_table),
		cmocka_unit_test(test_recovery_table),
		cmocka_unit_test(test_collapse_table),
		cmocka_unit_test(test_kinds_and_catalog),
		cmocka_unit_test_setup_teardown(test_crash_dedup_and_recovery, setup_fx,
						teardown_fx),
		cmocka_unit_test_setup_teardown(test_best_baseline, setup_fx, teardown_fx),
		cmocka_unit_test_setup_teardown(test_previous_baseline, setup_fx, teardown_fx),
		cmocka_unit_test_setup_teardown(test_baseline_key_and_restart, setup_fx,
						teardown_fx),
		cmocka_unit_test_setup_teardown(test_collapse_alert, setup_fx, teardown_fx),
		cmocka_unit_test_setup_teardown(test_restart_mid_cycle_keeps_dedup, setup_fx,
						teardown_fx),
		cmocka_unit_test_setup_teardown(test_failure_and_command, setup_fx, teardown_fx),
		cmocka_unit_test_setup_teardown(test_collapse_cause_from_the_dip, setup_fx,
						teardown_fx),
		cmocka_unit_test_setup_teardown(test_crash_against_the_baseline, setup_fx,
						teardown_fx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
