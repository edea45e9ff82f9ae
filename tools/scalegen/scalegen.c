/* scalegen: builds a wearmon database of N targets x D days of history
 * through the daemon's own write calls (common/db/db.h) and alert rules
 * (daemon/alert.h), for the scale test and the year-scale bench. Writes only
 * the file it is given; tools/scalegen/README.md describes the campaign. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alert.h"
#include "base/util.h"
#include "db/db.h"
#include "device/wear.h"
#include "replica.h"

#include "scalegen.h"

void sg_iso_at(const struct gen *g, double t, char *buf, size_t len)
{
	time_t s = g->t0 + (time_t)t;
	struct tm tm;
	char base[32];

	gmtime_r(&s, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", base, (int)((t - floor(t)) * 1000.0));
}

/* The drive's 4k randwrite MiB/s at time t on a region of size index k:
 * slowly wearing (35 % over a year), slower on larger regions. */
static double rate_at(const struct gen *g, const struct gtarget *gt, double t, int k)
{
	double days = t / 86400.0;

	if (g->o.rate > 0)
		return g->o.rate;
	return gt->speed * (1.0 - 0.35 * days / 365.0) * (1.0 - 0.04 * k);
}

/* One sample of a phase moving mibps with block size bs. */
static void sample_fill(struct db_sample *s, enum db_phase ph, int64_t t_ms, double seconds,
			double mibps, uint32_t bs, struct rng *r)
{
	double iops = mibps * MIBF / bs;
	double mean_us = iops > 0 ? QD / iops * 1e6 : 0;

	memset(s, 0, sizeof(*s));
	s->phase = ph;
	s->t_ms = t_ms;
	s->mibps = mibps;
	s->iops = iops;
	s->lat_us.p50 = mean_us * 0.9;
	s->lat_us.p90 = mean_us * 1.6 * sg_jitter(r, 5);
	s->lat_us.p99 = mean_us * 3.0 * sg_jitter(r, 10);
	s->lat_us.p999 = mean_us * 6.0 * sg_jitter(r, 15);
	s->lat_us.p9999 = mean_us * 10.0 * sg_jitter(r, 20);
	s->lat_us.max = mean_us * 20.0 * sg_jitter(r, 30);
	s->mibps_min_1s = -1;
	s->seconds = seconds;
	s->bytes = (uint64_t)(mibps * MIBF * seconds);
	s->ops = s->bytes / bs;
	s->host_stall_ms = -1;
}

/* A phase of n seconds' samples appended at sm[*n]; returns its bytes. */
static uint64_t phase_samples(struct gen *g, struct gtarget *gt, enum db_phase ph, double secs,
			      double mibps, uint32_t bs, size_t *n)
{
	uint64_t bytes = 0;
	/* a remainder under 1 ms would share the previous sample's t_ms */
	for (double t = 0; t + 0.001 < secs && *n < MAX_SAMPLES; t += 1.0) {
		double len = secs - t < 1.0 ? secs - t : 1.0;
		struct db_sample *s = &g->sm[(*n)++];
		sample_fill(s, ph, llround((t + len) * 1000.0), len, mibps * sg_jitter(&gt->rng, 6),
			    bs, &gt->rng);
		bytes += s->bytes;
	}
	return bytes;
}

/* The drive's readings as wearmond stores them (device_series): one at
 * each phase's start and at each sample's end, the counters running from
 * the first (host bytes as the samples moved them, media bytes at a write
 * amplification near 2), a temperature, no throttle or stall. Drawn from
 * no random stream, so the rest of the history is what it was without
 * them. Returns how many. */
static size_t readings(struct gen *g, size_t n)
{
	int64_t host = 0;
	double wa = 1.8 + 0.1 * (double)(g->iterations % 5);
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct db_sample *s = &g->sm[i];
		if (!i || s->phase != g->sm[i - 1].phase)
			g->series[k++] = (struct db_dev_point){ .phase = s->phase };
		host += (int64_t)s->bytes;
		struct db_dev_point *p = &g->series[k++];
		*p = (struct db_dev_point){ .phase = s->phase, .t_ms = s->t_ms };
		const int64_t v[DB_SERIES__COUNT] = {
			[DB_SERIES_HOST_BYTES] = host,
			[DB_SERIES_MEDIA_BYTES] = (int64_t)((double)host * wa),
			[DB_SERIES_TEMP_C] = 40 + (int64_t)((i * 7) % 10),
		};
		for (int f = 0; f < DB_SERIES__COUNT; f++) {
			p->has[f] = 1;
			p->val[f] = v[f];
		}
	}
	return k;
}

/* The iteration's figures from its measured samples sm[first..n). */
static void figures(struct db_iteration *it, const struct db_sample *sm, size_t first, size_t n,
		    struct rng *r)
{
	double sum = 0, sq = 0, lo = 1e300, hi = 0, lat = 0;
	struct lat_qos q = { 0 };

	for (size_t i = first; i < n; i++) {
		const struct db_sample *s = &sm[i];
		sum += s->mibps;
		sq += s->mibps * s->mibps;
		lo = fmin(lo, s->mibps);
		hi = fmax(hi, s->mibps);
		lat += s->lat_us.p50 / 0.9;
		it->bytes += s->bytes;
		it->ops += s->ops;
		it->seconds += s->seconds;
		q.p50 = fmax(q.p50, s->lat_us.p50);
		q.p90 = fmax(q.p90, s->lat_us.p90);
		q.p99 = fmax(q.p99, s->lat_us.p99);
		q.p999 = fmax(q.p999, s->lat_us.p999);
		q.p9999 = fmax(q.p9999, s->lat_us.p9999);
		q.max = fmax(q.max, s->lat_us.max);
	}
	double k = (double)(n - first);
	it->mibps_avg = (double)it->bytes / MIBF / it->seconds;
	it->mibps_min = fmin(lo, it->mibps_avg);
	it->mibps_max = fmax(hi, it->mibps_avg);
	it->mibps_stddev = k > 1 ? sqrt(fmax(0, (sq - sum * sum / k) / (k - 1))) : -1;
	it->iops_avg = (double)it->ops / it->seconds;
	it->lat_mean_us = lat / k;
	/* the queue kept: by Little's law the depth, less the ramp at the
	 * start and the drain at the end (a few tenths of an I/O) */
	it->mean_depth =
		fmin(QD, it->iops_avg * it->lat_mean_us / 1e6) * (0.99 + 0.008 * sg_rnd01(r));
	it->lat_us = q;
	it->io_counted = 1;
	it->writes = it->ops;
	it->random_ios = it->ops;
}

/* The row as iter.c describes a measured phase with fill = yes. */
static void describe(const struct gen *g, const struct gtarget *gt, int64_t cycle_id, int k,
		     struct db_iteration *it)
{
	memset(it, 0, sizeof(*it));
	it->cycle_id = cycle_id;
	it->run_id = g->run_id;
	it->target_id = gt->id;
	it->number = gt->next_number;
	it->size_index = k;
	it->size_bytes = SIZE_STEP * (uint64_t)(k + 1);
	it->workload = "randwrite";
	it->block_size = g->o.bs;
	it->queue_depth = QD;
	it->compressibility = 0;
	it->amount_bytes = 100000ULL * it->size_bytes;
	it->status = DB_RUNNING;
	it->phase = DB_PHASE_MEASURE;
	it->repeat_index = 1;
	it->read_percent = 0;
	it->random_percent = 100;
	it->verify = VERIFY_NONE;
	it->jobs = 1;
	it->baseline = cfg_baseline_name(BASELINE_FIRST);
	it->mibps_min = it->mibps_max = it->mibps_stddev = it->lat_mean_us = -1;
	it->mibps_avg = it->iops_avg = it->fill_mibps = it->baseline_mibps = -1;
	it->host_stall_seconds = -1;
	sg_iso_at(g, gt->clock, it->started_at, sizeof(it->started_at));
}

/* The alert the daemon raises for a crash (daemon/alert.c check_crash). */
static int crash_alert(struct gen *g, struct gtarget *gt, struct retime *rt,
		       const struct db_iteration *it, int64_t id)
{
	double base = it->baseline_mibps;
	int prio = alert_check_crash(it->mibps_avg, base, ALERT_BELOW, ALERT_CRITICAL);
	char msg[512], data[256];

	if (prio == ALERT_NONE || rt->nev == MAX_EVENTS)
		return 0;
	snprintf(msg, sizeof(msg),
		 "target %s: throughput crash%s: cycle %ld iteration %ld (%llu GiB %s): %.1f MiB/s "
		 "is %.0f%% of the first baseline %.1f MiB/s (alert below %g%%)",
		 gt->name, prio == LOG_CRIT ? " (critical)" : "", gt->cycle, it->number,
		 (unsigned long long)(it->size_bytes / (uint64_t)GIB), it->workload, it->mibps_avg,
		 100.0 * it->mibps_avg / base, base,
		 prio == LOG_CRIT ? ALERT_CRITICAL : ALERT_BELOW);
	snprintf(data, sizeof(data),
		 "{\"ratio\":%.4f,\"baseline\":\"first\",\"baseline_iteration_id\":%lld,"
		 "\"workload\":\"%s\",\"block_size\":%u}",
		 it->mibps_avg / base, (long long)it->baseline_iteration_id, it->workload,
		 it->block_size);
	struct db_event ev = {
		.target_id = gt->id,
		.run_id = g->run_id,
		.cycle_id = it->cycle_id,
		.iteration_id = id,
		.severity = prio == LOG_CRIT ? "crit" : "warning",
		.kind = alert_kind_name(ALERT_CRASH),
		.message_id = alert_message_id(ALERT_CRASH),
		.message = msg,
		.value = it->mibps_avg,
		.baseline = base,
		.data = data,
	};
	int ret = db_event(g->db, &ev, &rt->ev_id[rt->nev]);
	if (ret == 0)
		rt->ev_at[rt->nev++] = gt->clock;
	g->rows++;
	return ret;
}

/* One iteration: the precondition's fill samples, then the measured
 * phase's, stored as iter.c stores them. */
static int iteration(struct gen *g, struct gtarget *gt, struct retime *rt, int k)
{
	struct db_iteration it;
	struct db_baseline_key key = { gt->id,      SIZE_STEP * (uint64_t)(k + 1),
				       "randwrite", g->o.bs,
				       INT64_MAX,   BASELINE_FIRST };
	int64_t id;
	size_t n = 0;

	describe(g, gt, rt->cycle_id, k, &it);
	if (db_baseline(g->db, &key, &it.baseline_mibps, &it.baseline_iteration_id))
		it.baseline_iteration_id = 0, it.baseline_mibps = -1;
	int ret = db_iteration_begin(g->db, &it, &id);
	if (ret)
		return ret;
	double mibps = rate_at(g, gt, gt->clock, k);
	if (g->o.rate <= 0 && sg_rnd01(&gt->rng) * DIP_ONE_IN < 1.0)
		mibps *= 0.2 + 0.25 * sg_rnd01(&gt->rng);
	/* a drive fills (1M sequential) about 4x faster than it takes 4k
	 * random writes; --rate's drive, as the null engine's, does both at
	 * the same rate */
	double fill_mibps = (g->o.rate > 0 ? 1.0 : 4.0) * mibps * sg_jitter(&gt->rng, 5);
	double fill_secs = (double)it.size_bytes / MIBF / fill_mibps;
	it.fill_bytes = phase_samples(g, gt, DB_PHASE_FILL, fill_secs, fill_mibps, FILL_BS, &n);
	it.fill_seconds = fill_secs;
	it.fill_mibps = (double)it.fill_bytes / MIBF / fill_secs;
	size_t first = n;
	phase_samples(g, gt, DB_PHASE_MEASURE, MEASURE_SECONDS, mibps, g->o.bs, &n);
	figures(&it, g->sm, first, n, &gt->rng);
	sg_drive_writes(gt, it.fill_bytes + it.bytes, &it.device);
	gt->clock += fill_secs + MEASURE_SECONDS + 2.0;
	it.status = DB_DONE;
	it.more_rows = 0;
	sg_iso_at(g, gt->clock, it.ended_at, sizeof(it.ended_at));
	it.series = g->series;
	it.nseries = readings(g, n);
	ret = db_iteration_end(g->db, id, &it, g->sm, n);
	if (ret)
		return ret;
	gt->last.size = it.size_bytes;
	gt->last.bytes = it.bytes;
	gt->last.mibps = g->sm[n - 1].mibps;
	gt->last.seconds = fill_secs + MEASURE_SECONDS;
	gt->next_number++;
	g->iterations++;
	g->samples += n;
	g->rows += n + 1;
	ret = sg_wear_after(g, gt, id, it.size_bytes, it.fill_bytes + it.bytes);
	return ret ? ret : crash_alert(g, gt, rt, &it, id);
}

/* The write calls stamp cycles, health rows and events with the real
 * time; move them to the synthetic clock, in one transaction. */
static int retime(struct gen *g, const struct retime *rt)
{
	const char *sql[2 + MAX_EVENTS];
	struct db_value p[2 + MAX_EVENTS][4];
	const struct db_value *pp[2 + MAX_EVENTS];
	int np[2 + MAX_EVENTS], n = 0;
	char at[3 + MAX_EVENTS][32];
	char err[512];

	sg_iso_at(g, rt->started, at[0], sizeof(at[0]));
	sg_iso_at(g, rt->ended, at[1], sizeof(at[1]));
	sg_iso_at(g, rt->action, at[2], sizeof(at[2]));
	sql[n] = "UPDATE cycles SET started_at = ?, ended_at = ?, action_ended_at = ?"
		 " WHERE id = ?";
	p[n][0] = (struct db_value){ .type = DB_TEXT, .s = at[0] };
	p[n][1] = (struct db_value){ .type = DB_TEXT, .s = at[1] };
	p[n][2] = (struct db_value){ .type = DB_TEXT, .s = at[1] };
	p[n][3] = (struct db_value){ .type = DB_INT, .i = rt->cycle_id };
	np[n++] = 4;
	sql[n] = "UPDATE health SET at = CASE point WHEN 'cycle-start' THEN ?1"
		 " WHEN 'cycle-end' THEN ?2 ELSE ?3 END WHERE cycle_id = ?4";
	p[n][0] = p[0][0];
	p[n][1] = (struct db_value){ .type = DB_TEXT, .s = at[2] };
	p[n][2] = p[0][1];
	p[n][3] = p[0][3];
	np[n++] = 4;
	for (int e = 0; e < rt->nev; e++, n++) {
		sg_iso_at(g, rt->ev_at[e], at[3 + e], sizeof(at[3 + e]));
		sql[n] = "UPDATE events SET at = ? WHERE id = ?";
		p[n][0] = (struct db_value){ .type = DB_TEXT, .s = at[3 + e] };
		p[n][1] = (struct db_value){ .type = DB_INT, .i = rt->ev_id[e] };
		np[n] = 2;
	}
	for (int k = 0; k < n; k++)
		pp[k] = p[k];
	int ret = db_write(g->db, sql, pp, np, n, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: %s\n", err);
	return ret;
}

/* One cycle of a target: every size (stopping at the history's end), the
 * trim between cycles, health snapshots around them. */
static int cycle(struct gen *g, struct gtarget *gt)
{
	struct retime rt = { .started = gt->clock };
	int ret = db_cycle_begin(g->db, gt->id, g->run_id, ++gt->cycle, &rt.cycle_id);
	int k = 0;

	gt->next_number = 1; /* the daemon numbers a cycle's rows from 1 */
	g->rows++;
	/* the plan the daemon records: NSIZES sizes, cycles = 0 (forever) */
	if (ret == 0)
		ret = db_cycle_plan(g->db, rt.cycle_id, NSIZES, 0);
	if (ret == 0)
		ret = sg_health(g, gt, rt.cycle_id, WEAR_CYCLE_START);
	for (; ret == 0 && k < NSIZES && gt->clock < g->end; k++)
		ret = iteration(g, gt, &rt, k);
	if (ret)
		return ret;
	if (k < NSIZES) { /* the history ends here: the daemon was stopped */
		gt->done = 1;
		rt.ended = rt.action = gt->clock;
		ret = db_cycle_end(g->db, rt.cycle_id, DB_INTERRUPTED);
		return ret ? ret : retime(g, &rt);
	}
	ret = sg_health(g, gt, rt.cycle_id, WEAR_CYCLE_END);
	if (ret == 0)
		ret = sg_trim_action(g, gt, &rt);
	if (ret == 0)
		ret = sg_health(g, gt, rt.cycle_id, WEAR_AFTER_ACTION);
	rt.ended = gt->clock;
	if (ret == 0)
		ret = db_cycle_end(g->db, rt.cycle_id, DB_DONE);
	return ret ? ret : retime(g, &rt);
}

/* The daemon's retention job (daemon/retain.c) run inline after each
 * cycle: the 1-second samples of every iteration that ended more than
 * --retention days before now replaced by per-minute rollups, by the call
 * that job makes (db_samples_rollup, common/db/db_samples.c). The history
 * ends within the hour before now, so what is rolled up here is what the
 * daemon would have rolled up by the end of it. Once a synthetic day
 * (and at the end, clock < 0): each call also looks at up to 256 of the
 * window's iterations, which every cycle would make a third of the work. */
static int roll_up(struct gen *g, double clock)
{
	int n;

	if (g->o.retention <= 0 || (clock >= 0 && clock - g->rolled_at < 86400.0))
		return 0;
	g->rolled_at = clock;
	do {
		int64_t cursor = 0;
		n = db_samples_rollup(g->db, g->o.retention * 86400.0, ROLLUP_BATCH, &cursor);
		if (n > 0)
			g->rolled += (uint64_t)n;
	} while (n == ROLLUP_BATCH);
	if (n < 0)
		fprintf(stderr, "scalegen: rolling up samples: %s\n", strerror(-n));
	return n < 0 ? n : 0;
}

/* Stamp the run with the synthetic clock (db_run_begin and db_run_end use
 * the real one). */
static int run_times(struct gen *g, double started, double ended)
{
	char a[32], b[32], c[32], err[512];
	const char *sql[] = { "UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?",
			      "UPDATE events SET at = ? WHERE id = ?" };
	struct db_value p[3] = { { .type = DB_TEXT, .s = a },
				 { .type = DB_TEXT, .s = b },
				 { .type = DB_INT, .i = g->run_id } };
	struct db_value q[2] = { { .type = DB_TEXT, .s = c },
				 { .type = DB_INT, .i = g->check_id } };
	const struct db_value *pp[] = { p, q };
	int np[] = { 3, 2 };

	sg_iso_at(g, started, a, sizeof(a));
	sg_iso_at(g, ended, b, sizeof(b));
	sg_iso_at(g, started + CHECK_SECONDS, c, sizeof(c));
	int ret = db_write(g->db, sql, pp, np, g->check_id ? 2 : 1, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: %s\n", err);
	return ret;
}

static int keep_int(void *arg, int n, const struct db_value *v, const char *const *names)
{
	(void)n, (void)names;
	*(int64_t *)arg = v[0].type == DB_NULL ? 0 : v[0].i;
	return 0;
}

/* The verdict of the integrity check every start of the daemon runs in
 * the background (daemon/main.c check_integrity), as it stores it. */
static int integrity_event(struct gen *g)
{
	char msg[600], err[256];
	int64_t tables = 0;
	int ret = db_query(g->db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", NULL,
			   0, keep_int, &tables, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "scalegen: counting the tables: %s\n", err);
		return ret;
	}
	snprintf(msg, sizeof(msg), "database %s: integrity check ok (%lld tables, %.1f s)",
		 g->o.out, (long long)tables, CHECK_SECONDS);
	struct db_event e = {
		.run_id = g->run_id,
		.severity = "info",
		.kind = "integrity-check",
		.message = msg,
		.value = 0,
		.baseline = -1,
	};
	g->rows++;
	return db_event(g->db, &e, &g->check_id);
}

/* A daemon run covers RUN_DAYS: end the last one and start the next when
 * the earliest target's clock crosses into a new block. */
static int run_for(struct gen *g, double clock)
{
	long block = (long)(clock / (RUN_DAYS * 86400.0));
	int ret;

	if (g->run_id && block == g->run_block)
		return 0;
	if (g->run_id) {
		ret = db_run_end(g->db, g->run_id, 0, "restart");
		if (ret == 0)
			ret = run_times(g, g->run_started, clock);
		if (ret)
			return ret;
	}
	ret = db_run_begin(g->db, "/etc/wearmon/wearmon.conf", &g->run_id);
	if (ret == 0)
		ret = db_run_config(g->db, g->run_id, "# scalegen (tools/scalegen/README.md)\n");
	if (ret == 0)
		ret = integrity_event(g);
	g->run_block = block;
	g->run_started = clock;
	g->rows++;
	return ret;
}

static int add_target(struct gen *g, int i)
{
	struct gtarget *gt = &g->t[i];
	char dev[64];
	struct db_resume res;
	struct db_campaign_req req = { .cycles = 0, .key = "scalegen" };

	snprintf(gt->name, sizeof(gt->name), "ssd%d", i + 1);
	snprintf(dev, sizeof(dev), "/dev/disk/by-id/nvme-scalegen-%d", i + 1);
	snprintf(gt->serial, sizeof(gt->serial), "SG%08d", i + 1);
	struct db_target_info info = {
		.name = gt->name,
		.device = dev,
		.kind = TGT_BLOCK,
		.capacity_bytes = CAPACITY,
		.logical_block_size = 4096,
		.serial = gt->serial,
		.model = MODEL,
		.firmware = FIRMWARE,
	};
	gt->rng.s = g->o.seed * 0x9E3779B97F4A7C15ULL + (uint64_t)i + 1;
	gt->speed = 350.0 + 100.0 * sg_rnd01(&gt->rng);
	gt->clock = 60.0 * i; /* the daemon starts targets a moment apart */
	gt->next_number = 1;
	gt->temp_c = 40;
	int ret = db_target_upsert(g->db, &info, &gt->id);
	return ret ? ret : db_resume_point(g->db, gt->id, &req, &res);
}

/* The target whose clock is earliest and not done, or NULL. */
static struct gtarget *next_target(struct gen *g)
{
	struct gtarget *best = NULL;
	for (int i = 0; i < g->o.targets; i++)
		if (!g->t[i].done && (!best || g->t[i].clock < best->clock))
			best = &g->t[i];
	return best;
}

/* Targets and runs stamped with the synthetic clock; progress rows. */
static int finish(struct gen *g, double last)
{
	char a[32], b[32], err[512];
	const char *sql[] = { "UPDATE targets SET first_seen = ?, last_seen = ?" };
	struct db_value p[2] = { { .type = DB_TEXT, .s = a }, { .type = DB_TEXT, .s = b } };
	const struct db_value *pp[] = { p };
	int np[] = { 2 };
	int ret = db_run_end(g->db, g->run_id, 0, "stopped");

	if (ret == 0)
		ret = run_times(g, g->run_started, last);
	sg_iso_at(g, 0, a, sizeof(a));
	sg_iso_at(g, last, b, sizeof(b));
	if (ret == 0 && (ret = db_write(g->db, sql, pp, np, 1, err, sizeof(err))))
		fprintf(stderr, "scalegen: %s\n", err);
	for (int i = 0; ret == 0 && i < g->o.targets; i++) {
		/* the daemon was stopped as its last row's measured phase
		 * ended: the last progress row it published says so */
		const struct gtarget *gt = &g->t[i];
		struct db_progress pr = { .cycle = gt->cycle,
					  .iteration = gt->next_number - 1,
					  .size_bytes = gt->last.size,
					  .phase = "measure",
					  .mibps = gt->last.mibps,
					  .phase_bytes = gt->last.bytes,
					  .nsizes = NSIZES,
					  .phase_seconds = MEASURE_SECONDS,
					  .duration = MEASURE_SECONDS,
					  .iteration_seconds = gt->last.seconds,
					  .remaining_seconds = -1 };
		ret = db_progress(g->db, g->t[i].id, &pr);
	}
	return ret;
}

/* Targets 2..N as copies of ssd1 (--replicate, replica.h). */
static int replicate(struct gen *g)
{
	int n = g->o.targets - 1;
	struct replica_target from = { g->t[0].id, g->t[0].name };
	struct replica_target *to = calloc((size_t)(n > 0 ? n : 1), sizeof(*to));

	if (!to)
		return -ENOMEM;
	for (int k = 1; k <= n; k++) {
		to[k - 1] = (struct replica_target){ g->t[k].id, g->t[k].name };
		g->t[k].cycle = g->t[0].cycle;
		g->t[k].next_number = g->t[0].next_number;
	}
	int ret = replica_copy(g->db, &from, to, n);
	free(to);
	return ret;
}

static int generate(struct gen *g)
{
	struct gtarget *gt;
	double last = 0;
	int ret = 0;

	for (int i = 0; ret == 0 && i < g->o.targets; i++)
		ret = add_target(g, i);
	/* with --replicate only ssd1 goes through the write path */
	for (int i = 1; g->o.replicate && i < g->o.targets; i++)
		g->t[i].done = 1;
	while (ret == 0 && (gt = next_target(g))) {
		ret = run_for(g, gt->clock);
		if (ret == 0)
			ret = cycle(g, gt);
		if (ret == 0)
			ret = roll_up(g, gt->clock);
		last = fmax(last, gt->clock);
	}
	if (ret == 0)
		ret = roll_up(g, -1);
	if (ret == 0 && g->o.replicate)
		ret = replicate(g);
	return ret ? ret : finish(g, last);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: scalegen --targets N --days D --out PATH [--seed S] [--retention DAYS]\n"
		   "                [--replicate] [--rate MIBPS] [--block-size BYTES]\n"
		   "Build a wearmon database of N targets x D days of 1-second samples\n"
		   "through the daemon's write calls (tools/scalegen/README.md); --retention\n"
		   "rolls up samples older than DAYS as the daemon's sample_retention does;\n"
		   "--replicate writes ssd1 only and copies it to the other targets;\n"
		   "--rate runs every phase at MIBPS on a drive that does not wear (as the\n"
		   "null engine's); --block-size sets the measured phase's (default 4096).\n");
}

/* Returns 0, or 2 with a message for a bad command line. */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = { { "targets", required_argument, NULL, 't' },
					    { "days", required_argument, NULL, 'd' },
					    { "out", required_argument, NULL, 'o' },
					    { "seed", required_argument, NULL, 's' },
					    { "retention", required_argument, NULL, 'r' },
					    { "replicate", no_argument, NULL, 'R' },
					    { "rate", required_argument, NULL, 'm' },
					    { "block-size", required_argument, NULL, 'b' },
					    { "help", no_argument, NULL, 'h' },
					    { NULL, 0, NULL, 0 } };
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "t:d:o:s:r:Rm:b:h", lo, NULL)) != -1) {
		switch (c) {
		case 't': o->targets = (int)strtol(optarg, &end, 10); break;
		case 'd': o->days = (int)strtol(optarg, &end, 10); break;
		case 'o': o->out = optarg; break;
		case 's': o->seed = strtoull(optarg, &end, 10); break;
		case 'r': o->retention = (int)strtol(optarg, &end, 10); break;
		case 'R': o->replicate = 1; break;
		case 'm': o->rate = strtod(optarg, &end); break;
		case 'b': o->bs = (uint32_t)strtoul(optarg, &end, 10); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (o->targets < 1 || o->targets > 1000 || o->days < 1 || o->days > 3650 || !o->out ||
	    o->retention < 0 || o->retention > 3650 || optind != argc || !(o->rate >= 0) ||
	    o->rate > 100000 || o->bs < 512 || o->bs > FILL_BS || o->bs % 512) {
		fprintf(stderr, "scalegen: --targets 1..1000, --days 1..3650 and --out are "
				"required; --retention is 0..3650 days, --rate 0..100000 MiB/s,"
				" --block-size a multiple of 512 up to 1 MiB\n");
		usage(stderr);
		return 2;
	}
	return 0;
}

/* The process's CPU seconds so far (user and system): on a busy machine
 * the wall time says more about the others. */
static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* The run's figures: rows written, their rate, the file's size. */
static void summary(const struct gen *g, double secs)
{
	struct stat st;

	if (stat(g->o.out, &st))
		st.st_size = 0;
	int copies = g->o.replicate ? g->o.targets : 1;

	printf("scalegen: %s: %d targets x %d days: %" PRIu64 " iterations, %" PRIu64
	       " samples, %" PRIu64 " rows in %.1f s = %.0f rows/s; %.2f MiB = %.2f MiB per "
	       "target-day",
	       g->o.out, g->o.targets, g->o.days, g->iterations * copies, g->samples * copies,
	       g->rows * copies, secs, (double)(g->rows * copies) / secs, (double)st.st_size / MIBF,
	       (double)st.st_size / MIBF / g->o.targets / g->o.days);
	printf("; %.1f s of CPU", cpu_seconds());
	if (g->o.retention)
		printf("; samples of %" PRIu64 " iterations rolled up into minutes after %d days",
		       g->rolled * copies, g->o.retention);
	if (g->o.replicate && g->o.targets > 1)
		printf("; ssd1 written (%" PRIu64 " rows), ssd2%s copied from it", g->rows,
		       g->o.targets > 2 ? "..ssdN" : "");
	printf("\n");
}

int main(int argc, char **argv)
{
	struct gen g = { .o = { .seed = 1, .bs = MEASURE_BS } };
	char err[512];
	int ret = -ENOMEM;

	if (parse(argc, argv, &g.o))
		return 2;
	if (access(g.o.out, F_OK) == 0) {
		fprintf(stderr, "scalegen: %s exists; give a new file\n", g.o.out);
		return 1;
	}
	g.t = calloc((size_t)g.o.targets, sizeof(*g.t));
	g.sm = calloc(MAX_SAMPLES, sizeof(*g.sm));
	g.series = calloc(2 * MAX_SAMPLES, sizeof(*g.series));
	if (!g.t || !g.sm)
		goto out;
	g.end = g.o.days * 86400.0;
	/* the last iteration may begin just before the end: an hour's room
	 * keeps every time in the past */
	g.t0 = time(NULL) - (time_t)g.end - 3600;
	ret = db_open(g.o.out, 0, &g.db, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "scalegen: %s\n", err);
		goto out;
	}
	double t = util_now();
	ret = generate(&g);
	double secs = util_now() - t;
	db_close(g.db);
	if (ret == 0)
		summary(&g, secs);
out:
	free(g.t);
	free(g.sm);
	free(g.series);
	if (ret)
		fprintf(stderr, "scalegen: %s: generation failed: %s\n", g.o.out, strerror(-ret));
	return ret ? 1 : 0;
}
