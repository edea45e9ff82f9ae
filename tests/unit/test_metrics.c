/* test_metrics: the Prometheus text of a set of figures, byte by byte
 * (families, labels and their escaping, numbers, figures left out), the
 * atomic write, and the figures gathered from a temporary database. */
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_metrics.h"
#include "metrics.h"

#define MiB (1ULL << 20)

static char *render(const struct metrics *m)
{
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(metrics_render(m, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	return text;
}

/* Only what follows the first line matching from (the daemon head is
 * checked once, in test_daemon_head). */
static const char *from(const char *text, const char *start)
{
	const char *p = strstr(text, start);
	if (!p)
		fail_msg("no \"%s\" in:\n%s", start, text);
	return p;
}

static void test_daemon_head(void **state)
{
	struct metrics m = { .version = "1.2.3",
			     .start_unix = 1796300465,
			     .updated_unix = 1796300470.25,
			     .daemon = METRICS_DAEMON_RUNNING };
	char *text = render(&m);
	assert_string_equal(
		text,
		"# HELP wearmon_build_info Version of the running wearmond.\n"
		"# TYPE wearmon_build_info gauge\n"
		"wearmon_build_info{version=\"1.2.3\"} 1\n"
		"# HELP wearmon_daemon_state State of the daemon: 1 for the current one.\n"
		"# TYPE wearmon_daemon_state gauge\n"
		"wearmon_daemon_state{state=\"running\"} 1\n"
		"wearmon_daemon_state{state=\"stopping\"} 0\n"
		"wearmon_daemon_state{state=\"stopped\"} 0\n"
		"# HELP wearmon_daemon_start_time_seconds When the daemon started, in seconds "
		"since the epoch.\n"
		"# TYPE wearmon_daemon_start_time_seconds gauge\n"
		"wearmon_daemon_start_time_seconds 1796300465\n"
		"# HELP wearmon_metrics_updated_timestamp_seconds When the daemon last wrote this "
		"file, in seconds since the epoch.\n"
		"# TYPE wearmon_metrics_updated_timestamp_seconds gauge\n"
		"wearmon_metrics_updated_timestamp_seconds 1796300470.25\n");
	free(text);
}

/* Two targets: one measuring with most figures known, one failed with
 * none; the families without any sample are left out entirely. */
static void test_two_targets(void **state)
{
	struct metrics_target t[2];
	metrics_target_init(&t[0]);
	metrics_target_init(&t[1]);
	strcpy(t[0].name, "lab1");
	strcpy(t[0].device, "/dev/nvme0n1");
	strcpy(t[0].serial, "S1X");
	strcpy(t[0].workload, "randwrite");
	strcpy(t[0].phase, "measure");
	t[0].cycle = 3;
	t[0].throughput_bps = 100 * MiB;
	t[0].throughput_ratio = 0.25;
	strcpy(t[0].last_workload, "seqwrite");
	t[0].last_p99_seconds = 0.000856;
	t[0].host_written_bytes = 123456789012345.0;
	t[0].life_used_ratio = 0.07;
	metrics_add_alert(&t[0], "throughput-crash", 2);
	strcpy(t[1].name, "lab2");
	strcpy(t[1].device, "/srv/f.img");
	t[1].state = METRICS_FAILED;
	t[1].cycle = 12;
	struct metrics m = { .version = "v", .t = t, .n = 2 };
	char *text = render(&m);
	const char *want =
		"# HELP wearmon_throughput_bytes_per_second Throughput of the last sample of the "
		"current fill or measured phase.\n"
		"# TYPE wearmon_throughput_bytes_per_second gauge\n"
		"wearmon_throughput_bytes_per_second{target=\"lab1\",device=\"/dev/nvme0n1\","
		"serial=\"S1X\",workload=\"randwrite\"} 104857600\n"
		"# HELP wearmon_throughput_baseline_ratio Current measured-phase throughput over "
		"the baseline of the same size (1 = as fast).\n"
		"# TYPE wearmon_throughput_baseline_ratio gauge\n"
		"wearmon_throughput_baseline_ratio{target=\"lab1\",device=\"/dev/nvme0n1\","
		"serial=\"S1X\",workload=\"randwrite\"} 0.25\n"
		"# HELP wearmon_last_iteration_latency_p99_seconds 99th percentile total latency "
		"(submit to reap) of the last finished iteration.\n"
		"# TYPE wearmon_last_iteration_latency_p99_seconds gauge\n"
		"wearmon_last_iteration_latency_p99_seconds{target=\"lab1\",device=\"/dev/nvme0n1\","
		"serial=\"S1X\",workload=\"seqwrite\"} 0.000856\n"
		"# HELP wearmon_cycle Cycle number in progress (or the last one).\n"
		"# TYPE wearmon_cycle gauge\n"
		"wearmon_cycle{target=\"lab1\",device=\"/dev/nvme0n1\",serial=\"S1X\"} 3\n"
		"wearmon_cycle{target=\"lab2\",device=\"/srv/f.img\",serial=\"\"} 12\n"
		"# HELP wearmon_host_written_bytes_total Bytes wearmond ever wrote to the target.\n"
		"# TYPE wearmon_host_written_bytes_total counter\n"
		"wearmon_host_written_bytes_total{target=\"lab1\",device=\"/dev/nvme0n1\","
		"serial=\"S1X\"} 123456789012345\n"
		"# HELP wearmon_drive_life_used_ratio Drive's estimate of its rated life used "
		"(NVMe percentage used / 100).\n"
		"# TYPE wearmon_drive_life_used_ratio gauge\n"
		"wearmon_drive_life_used_ratio{target=\"lab1\",device=\"/dev/nvme0n1\","
		"serial=\"S1X\"} 0.07\n"
		"# HELP wearmon_phase_info What the target is doing now (fill, measure, an "
		"action, pause...).\n"
		"# TYPE wearmon_phase_info gauge\n"
		"wearmon_phase_info{target=\"lab1\",device=\"/dev/nvme0n1\",serial=\"S1X\","
		"phase=\"measure\"} 1\n"
		"# HELP wearmon_target_state State of the target's thread: 1 for the current one.\n"
		"# TYPE wearmon_target_state gauge\n"
		"wearmon_target_state{target=\"lab1\",device=\"/dev/nvme0n1\",serial=\"S1X\","
		"state=\"running\"} 1\n"
		"wearmon_target_state{target=\"lab1\",device=\"/dev/nvme0n1\",serial=\"S1X\","
		"state=\"done\"} 0\n"
		"wearmon_target_state{target=\"lab1\",device=\"/dev/nvme0n1\",serial=\"S1X\","
		"state=\"stopped\"} 0\n"
		"wearmon_target_state{target=\"lab1\",device=\"/dev/nvme0n1\",serial=\"S1X\","
		"state=\"failed\"} 0\n"
		"wearmon_target_state{target=\"lab2\",device=\"/srv/f.img\",serial=\"\","
		"state=\"running\"} 0\n"
		"wearmon_target_state{target=\"lab2\",device=\"/srv/f.img\",serial=\"\","
		"state=\"done\"} 0\n"
		"wearmon_target_state{target=\"lab2\",device=\"/srv/f.img\",serial=\"\","
		"state=\"stopped\"} 0\n"
		"wearmon_target_state{target=\"lab2\",device=\"/srv/f.img\",serial=\"\","
		"state=\"failed\"} 1\n"
		"# HELP wearmon_alerts_total Alerts raised, by kind.\n"
		"# TYPE wearmon_alerts_total counter\n"
		"wearmon_alerts_total{target=\"lab1\",device=\"/dev/nvme0n1\",serial=\"S1X\","
		"kind=\"throughput-crash\"} 2\n";
	const char *got = from(text, "# HELP wearmon_throughput_bytes_per_second");
	/* the rest of the alert lines: every known kind of both targets at 0 */
	assert_memory_equal(got, want, strlen(want));
	const char *rest = got + strlen(want);
	assert_non_null(strstr(rest, "wearmon_alerts_total{target=\"lab1\",device=\"/dev/nvme0n1\","
				     "serial=\"S1X\",kind=\"io-error\"} 0\n"));
	assert_non_null(strstr(rest, "wearmon_alerts_total{target=\"lab2\",device=\"/srv/f.img\","
				     "serial=\"\",kind=\"throughput-crash\"} 0\n"));
	assert_null(strstr(text, "wearmon_iteration{")); /* not known: left out */
	assert_null(strstr(text, "wearmon_phase_info{target=\"lab2\""));
	free(text);
}

/* Label values escape backslash, double quote and newline. */
static void test_label_escaping(void **state)
{
	struct metrics_target t;
	metrics_target_init(&t);
	strcpy(t.name, "a\"b\\c\nd");
	strcpy(t.device, "/dev/x");
	t.cycle = 1;
	struct metrics m = { .t = &t, .n = 1 };
	char *text = render(&m);
	assert_non_null(strstr(text, "wearmon_cycle{target=\"a\\\"b\\\\c\\nd\",device=\"/dev/x\","
				     "serial=\"\"} 1\n"));
	free(text);
}

/* The endurance forecast's gauges: each known figure one sample, none
 * for a target without a forecast (its figures NaN). */
static void test_endurance_gauges(void **state)
{
	struct metrics_target t[2];
	metrics_target_init(&t[0]);
	metrics_target_init(&t[1]);
	strcpy(t[0].name, "lab1");
	strcpy(t[1].name, "lab2");
	t[0].eol_end_unix = 1814400000;
	t[0].eol_end_lo_unix = 1813536000;
	t[0].eol_end_hi_unix = 1815264000;
	t[0].eol_days_left = 212.5;
	t[0].eol_days_left_lo = 202.5;
	t[0].eol_days_left_hi = 222.5;
	t[0].eol_host_bytes_at_end = 7.5e14;
	t[0].eol_rated_ratio = 1.25;
	struct metrics m = { .t = t, .n = 2 };
	char *text = render(&m);
	static const char *const want[] = {
		"# TYPE wearmon_endurance_end_timestamp_seconds gauge\n"
		"wearmon_endurance_end_timestamp_seconds{target=\"lab1\",device=\"\",serial=\"\"}"
		" 1814400000\n",
		"wearmon_endurance_end_lower_timestamp_seconds{target=\"lab1\",device=\"\","
		"serial=\"\"} 1813536000\n",
		"wearmon_endurance_end_upper_timestamp_seconds{target=\"lab1\",device=\"\","
		"serial=\"\"} 1815264000\n",
		"wearmon_endurance_days_left{target=\"lab1\",device=\"\",serial=\"\"} 212.5\n",
		"wearmon_endurance_days_left_lower{target=\"lab1\",device=\"\",serial=\"\"} 202.5\n",
		"wearmon_endurance_days_left_upper{target=\"lab1\",device=\"\",serial=\"\"} 222.5\n",
		"wearmon_endurance_host_written_bytes_at_end{target=\"lab1\",device=\"\","
		"serial=\"\"} 750000000000000\n",
		"wearmon_endurance_rated_ratio{target=\"lab1\",device=\"\",serial=\"\"} 1.25\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("want \"%s\" in:\n%s", want[i], text);
	assert_null(strstr(text, "wearmon_endurance_days_left{target=\"lab2\""));
	free(text);
	/* no target with a forecast: no family at all */
	metrics_target_init(&t[0]);
	text = render(&m);
	assert_null(strstr(text, "wearmon_endurance_"));
	free(text);
}

struct value_case {
	double v;
	const char *want;
};

/* Integers exactly (large counters too), fractions as the shortest text
 * that reads back as the same double. */
static void test_values(void **state)
{
	static const struct value_case cases[] = {
		{ 0, " 0\n" },
		{ 7, " 7\n" },
		{ -3, " -3\n" },
		{ 18014398509481988.0, " 18014398509481988\n" },
		{ 123456789012, " 123456789012\n" },
		{ 0.5, " 0.5\n" },
		{ 1.0 / 3, " 0.33333333333333331\n" },
		{ 0.07, " 0.07\n" },
		{ 1796300470.25, " 1796300470.25\n" },
		{ 1e-7, " 1e-07\n" },
		{ INFINITY, " +Inf\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct metrics_target t;
		metrics_target_init(&t);
		strcpy(t.name, "x");
		t.temperature_celsius = cases[i].v;
		struct metrics m = { .t = &t, .n = 1 };
		char *text = render(&m);
		char want[160];
		snprintf(want, sizeof(want),
			 "wearmon_drive_temperature_celsius{target=\"x\","
			 "device=\"\",serial=\"\"}%s",
			 cases[i].want);
		if (!strstr(text, want))
			fail_msg("value %g: want \"%s\" in:\n%s", cases[i].v, want, text);
		free(text);
	}
}

static void test_add_alert(void **state)
{
	struct metrics_target t;
	metrics_target_init(&t);
	int known = t.nalerts;
	assert_true(known >= 5);
	assert_string_equal(t.alerts[0].kind, "throughput-crash");
	metrics_add_alert(&t, "io-error", 2);
	metrics_add_alert(&t, "io-error", 1);
	metrics_add_alert(&t, "something-new", 4);
	assert_int_equal(t.nalerts, known + 1);
	for (int i = 0; i < t.nalerts; i++)
		if (!strcmp(t.alerts[i].kind, "io-error"))
			assert_true(t.alerts[i].count == 3);
	assert_string_equal(t.alerts[known].kind, "something-new");
	for (int i = 0; i < 100; i++) {
		char k[16];
		snprintf(k, sizeof(k), "k%d", i);
		metrics_add_alert(&t, k, 1);
	}
	assert_int_equal(t.nalerts, METRICS_MAX_KINDS);
}

/* ---- the atomic write --------------------------------------------------- */

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_write_file(void **state)
{
	char dir[] = "/tmp/wearmon-test-metrics.XXXXXX", path[128], buf[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/wearmon.prom", dir);
	assert_int_equal(metrics_write_file(path, "a 1\n", 4), 0);
	assert_int_equal(metrics_write_file(path, "b 22\n", 5), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "b 22\n", 5);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0644);
	assert_int_equal(count_entries(dir), 1); /* no temporary left */
	char missing[160];
	snprintf(missing, sizeof(missing), "%s/no/such/dir/w.prom", dir);
	assert_int_equal(metrics_write_file(missing, "a 1\n", 4), -ENOENT);
	/* a directory in the way of the rename: the temporary is removed */
	snprintf(missing, sizeof(missing), "%s/sub", dir);
	assert_int_equal(mkdir(missing, 0755), 0);
	assert_int_equal(metrics_write_file(missing, "a 1\n", 4), -EISDIR);
	assert_int_equal(count_entries(dir), 2);
	rmdir(missing);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

/* A killed writer's temporaries go; other files, even similar, stay. */
static void test_remove_stale(void **state)
{
	char dir[] = "/tmp/wearmon-test-stale.XXXXXX", p[160];
	static const char *const files[] = { "w.prom",        ".w.prom.a1B2c3", ".w.prom.zzzzzz",
					     ".w.prom.short", "x.prom",         ".x.prom.a1B2c3" };
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
	}
	snprintf(p, sizeof(p), "%s/w.prom", dir);
	assert_int_equal(metrics_remove_stale(p), 2);
	assert_int_equal(count_entries(dir), 4);
	assert_int_equal(metrics_remove_stale(p), 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	assert_int_equal(rmdir(dir), 0);
	snprintf(p, sizeof(p), "%s/w.prom", dir);
	assert_int_equal(metrics_remove_stale(p), -ENOENT);
}

/* ---- figures from the database ------------------------------------------ */

struct dbfx {
	char dir[64], path[128];
	struct db *db;
	int64_t run, tgt;
};

static void open_db(struct dbfx *fx)
{
	struct db_target_info t = { .name = "lab1",
				    .device = "/dev/loop7",
				    .kind = TGT_BLOCK,
				    .capacity_bytes = 1ull << 30,
				    .logical_block_size = 512 };
	char err[512];
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/wearmon-test-mdb.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/h.db", fx->dir);
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	assert_int_equal(db_run_begin(fx->db, "/x.conf", &fx->run), 0);
	assert_int_equal(db_target_upsert(fx->db, &t, &fx->tgt), 0);
}

static void close_db(struct dbfx *fx)
{
	char p[160];
	db_close(fx->db);
	static const char *const sfx[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", fx->path, sfx[i]);
		unlink(p);
	}
	rmdir(fx->dir);
}

static int64_t add_iteration(struct dbfx *fx, int64_t cyc, long number, double mibps,
			     uint64_t errors, int64_t baseline_id)
{
	struct db_iteration it = {
		.cycle_id = cyc,
		.run_id = fx->run,
		.target_id = fx->tgt,
		.number = number,
		.size_bytes = 64 * MiB,
		.workload = "randwrite",
		.block_size = 4096,
		.queue_depth = 32,
		.amount_bytes = 64 * MiB,
		.status = DB_RUNNING,
		.baseline = baseline_id ? "first" : NULL,
		.baseline_iteration_id = baseline_id,
	};
	int64_t id = 0;
	assert_int_equal(db_iteration_begin(fx->db, &it, &id), 0);
	it.bytes = 64 * MiB;
	it.seconds = 2;
	it.mibps_avg = mibps;
	it.iops_avg = mibps * 256;
	it.lat_us.p99 = 1500;
	it.errors = errors;
	it.status = DB_DONE;
	assert_int_equal(db_iteration_end(fx->db, id, &it, NULL, 0), 0);
	return id;
}

static void test_collect_from_db(void **state)
{
	struct dbfx fx;
	open_db(&fx);
	struct metrics_target t;
	metrics_target_init(&t);
	int64_t last = -1;
	assert_int_equal(db_metrics_last_done(fx.db, fx.tgt, &last), 0);
	assert_int_equal(last, 0);
	assert_int_equal(db_metrics_collect(fx.db, fx.tgt, &t), 0);
	assert_true(isnan(t.last_bps) && isnan(t.last_end_unix));
	assert_true(t.io_errors == 0);

	int64_t c1 = 0, c2 = 0;
	assert_int_equal(db_cycle_begin(fx.db, fx.tgt, fx.run, 1, &c1), 0);
	int64_t first = add_iteration(&fx, c1, 1, 200, 0, 0);
	assert_int_equal(db_cycle_begin(fx.db, fx.tgt, fx.run, 2, &c2), 0);
	int64_t id = add_iteration(&fx, c2, 1, 50, 3, first);
	struct db_event e = { .target_id = fx.tgt,
			      .run_id = fx.run,
			      .cycle_id = c2,
			      .severity = "warning",
			      .kind = "throughput-crash",
			      .message = "crash",
			      .value = 50,
			      .baseline = 200 };
	assert_int_equal(db_event(fx.db, &e, NULL), 0);
	e.severity = "info";
	e.kind = "throughput-crash"; /* below notice: not an alert */
	assert_int_equal(db_event(fx.db, &e, NULL), 0);
	e.severity = "err";
	e.kind = "novel-kind";
	assert_int_equal(db_event(fx.db, &e, NULL), 0);

	assert_int_equal(db_metrics_last_done(fx.db, fx.tgt, &last), 0);
	assert_int_equal(last, id);
	metrics_target_init(&t);
	assert_int_equal(db_metrics_collect(fx.db, fx.tgt, &t), 0);
	assert_string_equal(t.last_workload, "randwrite");
	assert_true(t.last_bps == 50 * 1048576.0);
	assert_true(t.last_iops == 50 * 256);
	assert_true(fabs(t.last_p99_seconds - 0.0015) < 1e-12);
	assert_true(fabs(t.last_ratio - 0.25) < 1e-12); /* 50 / first 200 */
	assert_true(t.last_size_bytes == 64 * MiB);
	assert_true(fabs(t.last_end_unix - (double)time(NULL)) < 60);
	assert_true(t.last_seconds >= 0 && t.last_seconds < 60);
	assert_true(t.io_errors == 3);
	assert_true(t.verify_errors == 0);
	for (int i = 0; i < t.nalerts; i++) {
		if (!strcmp(t.alerts[i].kind, "throughput-crash"))
			assert_true(t.alerts[i].count == 1);
		if (!strcmp(t.alerts[i].kind, "novel-kind"))
			assert_true(t.alerts[i].count == 1);
	}
	assert_string_equal(t.alerts[t.nalerts - 1].kind, "novel-kind");
	close_db(&fx);
}

/* Two figures are the same: equal, or both unknown. */
static void assert_same(double a, double b)
{
	if (isnan(a) || isnan(b))
		assert_true(isnan(a) && isnan(b));
	else
		assert_true(a == b);
}

static void assert_same_stored(const struct metrics_target *a, const struct metrics_target *b)
{
	const double *const fa[] = { &a->last_bps,
				     &a->last_iops,
				     &a->last_p99_seconds,
				     &a->last_ratio,
				     &a->last_end_unix,
				     &a->last_seconds,
				     &a->last_size_bytes,
				     &a->host_written_bytes,
				     &a->op_effective,
				     &a->op_configured,
				     &a->life_used_ratio,
				     &a->media_errors,
				     &a->temperature_celsius,
				     &a->nand_written_bytes,
				     &a->spare_ratio,
				     &a->write_amplification,
				     &a->io_errors,
				     &a->verify_errors };
	for (size_t i = 0; i < sizeof(fa) / sizeof(fa[0]); i++)
		assert_same(*fa[i], *(const double *)((const char *)b +
						      ((const char *)fa[i] - (const char *)a)));
	assert_string_equal(a->last_workload, b->last_workload);
	assert_int_equal(a->nalerts, b->nalerts);
	for (int k = 0; k < a->nalerts; k++) {
		assert_string_equal(a->alerts[k].kind, b->alerts[k].kind);
		assert_true(a->alerts[k].count == b->alerts[k].count);
	}
}

static struct db_metrics_state *find_one(void *arg, int64_t target_id)
{
	struct db_metrics_state *s = arg;
	return s->target_id == target_id ? s : NULL;
}

struct fold {
	struct db_metrics_state s;
	struct db *db;
};

static void fold_row(void *arg, enum db_row_kind kind, int64_t id)
{
	struct fold *f = arg;
	assert_int_equal(db_metrics_apply(f->db, kind, id, find_one, &f->s), 0);
}

static void add_health(struct dbfx *fx, int64_t nand_delta, int64_t host_delta, int64_t temp)
{
	struct db_health h = { .target_id = fx->tgt,
			       .source = "nvme",
			       .write_amplification = -1,
			       .host_bytes_delta = host_delta,
			       .nand_bytes_delta = nand_delta };
	char err[256];
	h.has[DB_H_TEMP] = h.has[DB_H_PCT_USED] = h.has[DB_H_SPARE] = 1;
	h.val[DB_H_TEMP] = temp;
	h.val[DB_H_PCT_USED] = temp / 10;
	h.val[DB_H_SPARE] = 100 - temp / 10;
	assert_int_equal(db_health_insert(fx->db, &h, err, sizeof(err)), 0);
}

/* The wear row of iteration id, with op_effective op. */
static void add_wear(struct dbfx *fx, int64_t id, double op)
{
	const struct db_wear_row r = { .iteration_id = id,
				       .capacity_bytes = 256 * MiB,
				       .region_bytes = 256 * MiB,
				       .mapped_bytes = (uint64_t)((1 - op) * 256 * MiB),
				       .op_effective = op,
				       .host_bytes_written = 64 * MiB,
				       .host_bytes_since_erase = 64 * MiB,
				       .host_bytes_total = 64 * MiB };
	const struct db_wear_state st = { .target_id = fx->tgt, .host_total = 64 * MiB };
	char err[256];
	assert_int_equal(db_wear_store(fx->db, &st, &r, 1, err, sizeof(err)), 0);
}

/* A health snapshot with the mapped bytes of op_effective op only. */
static void add_health_op(struct dbfx *fx, double op)
{
	struct db_health h = { .target_id = fx->tgt,
			       .source = "nvme",
			       .point = "after-action",
			       .write_amplification = -1,
			       .host_bytes_delta = -1,
			       .nand_bytes_delta = -1,
			       .mapped_bytes = (uint64_t)((1 - op) * 256 * MiB),
			       .has_op_effective = 1,
			       .op_effective = op };
	char err[256];
	assert_int_equal(db_health_insert(fx->db, &h, err, sizeof(err)), 0);
}

static void add_event(struct dbfx *fx, const char *severity, const char *kind)
{
	struct db_event e = { .target_id = fx->tgt,
			      .run_id = fx->run,
			      .severity = severity,
			      .kind = kind,
			      .message = "m",
			      .value = -1,
			      .baseline = -1 };
	assert_int_equal(db_event(fx->db, &e, NULL), 0);
}

/* The figures seeded once and kept up to date row by row equal those
 * read from the whole history afterwards. */
static void test_seed_then_rows(void **state)
{
	struct dbfx fx;
	struct fold f;
	struct db_metrics_state *const s = &f.s;
	struct metrics_target fresh;
	int64_t c1 = 0, c2 = 0;

	open_db(&fx);
	assert_int_equal(db_cycle_begin(fx.db, fx.tgt, fx.run, 1, &c1), 0);
	int64_t first = add_iteration(&fx, c1, 1, 200, 1, 0);
	add_health(&fx, 300, 100, 40);
	add_event(&fx, "warning", "throughput-crash");
	memset(&f, 0, sizeof(f));
	f.db = fx.db;
	s->target_id = fx.tgt;
	metrics_target_init(&s->t);
	assert_int_equal(db_metrics_seed(fx.db, s), 0);
	db_set_row_hook(fx.db, fold_row, &f);

	assert_int_equal(db_cycle_begin(fx.db, fx.tgt, fx.run, 2, &c2), 0);
	add_iteration(&fx, c2, 1, 50, 3, first);
	int64_t last = add_iteration(&fx, c2, 2, 70, 0, first);
	add_wear(&fx, last, 0.25);
	assert_true(s->t.op_effective == 0.25);
	add_health(&fx, 500, 100, 45);
	/* a TRIM after the cycle: its after-action snapshot is the figure now,
	 * and a later snapshot without one leaves it */
	add_health_op(&fx, 1.0);
	assert_true(s->t.op_effective == 1.0);
	add_health(&fx, -1, -1, 47); /* no deltas: not in the write amplification */
	add_event(&fx, "err", "zz-novel");
	add_event(&fx, "notice", "aa-novel");
	add_event(&fx, "info", "throughput-crash");
	add_event(&fx, "warning", "throughput-crash");
	db_set_row_hook(fx.db, NULL, NULL);

	metrics_target_init(&fresh);
	assert_int_equal(db_metrics_collect(fx.db, fx.tgt, &fresh), 0);
	assert_same_stored(&s->t, &fresh);
	assert_int_equal(s->last_done_id, last);
	assert_true(fabs(s->t.write_amplification - 800.0 / 200.0) < 1e-12);
	assert_true(s->t.io_errors == 4 && s->t.temperature_celsius == 47);
	assert_true(s->t.op_effective == 1.0 && fresh.op_effective == 1.0);
	close_db(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_daemon_head),    cmocka_unit_test(test_two_targets),
		cmocka_unit_test(test_label_escaping), cmocka_unit_test(test_values),
		cmocka_unit_test(test_add_alert),      cmocka_unit_test(test_write_file),
		cmocka_unit_test(test_remove_stale),   cmocka_unit_test(test_collect_from_db),
		cmocka_unit_test(test_seed_then_rows), cmocka_unit_test(test_endurance_gauges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
