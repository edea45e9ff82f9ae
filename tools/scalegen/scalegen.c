/* scalegen: builds a wearmon database of N targets x D days of history
 * through the daemon's own write calls (common/db/db.h) and alert rules
 * (daemon/alert.h), for the scale test and the year-scale bench. Writes only
 * the file it is given; tools/scalegen/README.md describes the campaign. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
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

#define MIBF 1048576.0 /* MiB as a double */
#define NSIZES 8       /* 16, 32, ... 128 GiB, growing */
#define SIZE_STEP (16 * (uint64_t)GIB)
#define CAPACITY (512 * (uint64_t)GIB) /* the simulated drive */
#define MEASURE_SECONDS 900            /* each size's measured phase, 1-second samples */
#define FILL_BS (1024 * 1024)          /* the precondition's block size */
#define MEASURE_BS 4096                /* 4k randwrite */
#define QD 32
#define RUN_DAYS 30         /* the daemon restarts every 30 days */
#define DIP_ONE_IN 120      /* iterations that dip to 20-45 % */
#define MAX_SAMPLES 4096    /* a fill of 128 GiB stays under 3000 s */
#define MAX_EVENTS 16       /* events retimed per cycle */
#define ALERT_BELOW 50.0    /* alert_below's default (conf/wearmon.conf.5) */
#define ALERT_CRITICAL 25.0 /* alert_critical's default */
#define ROLLUP_BATCH 64     /* db_samples_rollup's most per call */
#define MAX_TABLES 32       /* tables a replica copies */
#define SQL_MAX 16384       /* one table's copy statement */

struct opts {
	int targets, days;
	int retention; /* days of 1-second samples kept; 0: all */
	int replicate; /* ssd1 written, the others copied from it */
	const char *out;
	uint64_t seed;
};

/* xorshift64*: the same seed gives the same database. */
struct rng {
	uint64_t s;
};

/* One simulated target and its synthetic clock. */
struct gtarget {
	int64_t id;
	char name[32];
	struct rng rng;
	double clock;     /* seconds since the start of the history */
	long cycle;       /* last cycle begun */
	long next_number; /* next iteration number */
	double speed;     /* this drive's 4k randwrite MiB/s when new */
	uint64_t mapped, host_total, host_since_erase, nand_total;
	uint64_t last_host, last_nand; /* at the previous health snapshot */
	int done;
};

/* What the current cycle must have retimed (the write calls stamp rows
 * with the real time; the history needs the synthetic one). */
struct retime {
	int64_t cycle_id;
	double started, ended, action;
	int nev;
	int64_t ev_id[MAX_EVENTS];
	double ev_at[MAX_EVENTS];
};

struct gen {
	struct opts o;
	struct db *db;
	time_t t0; /* the history's start, UTC */
	double end;
	int64_t run_id;
	long run_block; /* which RUN_DAYS block the run covers */
	double run_started;
	struct gtarget *t;
	struct db_sample *sm;
	struct db_dev_point *series; /* the drive's readings, one per sample */
	uint64_t rows, samples, iterations, rolled;
	double rolled_at; /* the synthetic clock at the last roll-up */
};

static double rnd01(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (double)((r->s * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* A factor around 1 with a spread of about +-pct percent. */
static double jitter(struct rng *r, double pct)
{
	double u = rnd01(r) + rnd01(r) + rnd01(r) - 1.5;
	return 1.0 + u * pct / 75.0;
}

static void iso_at(const struct gen *g, double t, char *buf, size_t len)
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
static double rate_at(const struct gtarget *gt, double t, int k)
{
	double days = t / 86400.0;
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
	s->lat_us.p90 = mean_us * 1.6 * jitter(r, 5);
	s->lat_us.p99 = mean_us * 3.0 * jitter(r, 10);
	s->lat_us.p999 = mean_us * 6.0 * jitter(r, 15);
	s->lat_us.p9999 = mean_us * 10.0 * jitter(r, 20);
	s->lat_us.max = mean_us * 20.0 * jitter(r, 30);
	s->mibps_min_1s = -1;
	s->seconds = seconds;
	s->bytes = (uint64_t)(mibps * MIBF * seconds);
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
		sample_fill(s, ph, llround((t + len) * 1000.0), len, mibps * jitter(&gt->rng, 6),
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
static void figures(struct db_iteration *it, const struct db_sample *sm, size_t first, size_t n)
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
		it->seconds += s->seconds;
		q.p50 = fmax(q.p50, s->lat_us.p50);
		q.p90 = fmax(q.p90, s->lat_us.p90);
		q.p99 = fmax(q.p99, s->lat_us.p99);
		q.p999 = fmax(q.p999, s->lat_us.p999);
		q.p9999 = fmax(q.p9999, s->lat_us.p9999);
		q.max = fmax(q.max, s->lat_us.max);
	}
	double k = (double)(n - first);
	it->ops = it->bytes / MEASURE_BS;
	it->mibps_avg = (double)it->bytes / MIBF / it->seconds;
	it->mibps_min = fmin(lo, it->mibps_avg);
	it->mibps_max = fmax(hi, it->mibps_avg);
	it->mibps_stddev = k > 1 ? sqrt(fmax(0, (sq - sum * sum / k) / (k - 1))) : -1;
	it->iops_avg = (double)it->ops / it->seconds;
	it->lat_mean_us = lat / k;
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
	it->block_size = MEASURE_BS;
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
	iso_at(g, gt->clock, it->started_at, sizeof(it->started_at));
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

/* The wear row of an iteration and the extents it leaves mapped. */
static int wear_after(struct gen *g, struct gtarget *gt, int64_t id, uint64_t region,
		      uint64_t written)
{
	uint64_t ext[1][2] = { { 0, 0 } };
	char err[256];

	gt->mapped = region > gt->mapped ? region : gt->mapped;
	gt->host_total += written;
	gt->host_since_erase += written;
	gt->nand_total += (uint64_t)((double)written * (2.0 + gt->clock / 86400.0 / 365.0));
	ext[0][1] = gt->mapped;
	struct db_wear_state s = { gt->id, (const uint64_t(*)[2])ext, 1, gt->host_total,
				   gt->host_since_erase };
	struct db_wear_row w = {
		.iteration_id = id,
		.capacity_bytes = CAPACITY,
		.region_bytes = region,
		.mapped_bytes = gt->mapped,
		.op_configured = 1.0 - (double)region / (double)CAPACITY,
		.op_effective = 1.0 - (double)gt->mapped / (double)CAPACITY,
		.host_bytes_written = written,
		.host_bytes_since_erase = gt->host_since_erase,
		.host_bytes_total = gt->host_total,
	};
	int ret = db_wear_store(g->db, &s, &w, 1, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: %s\n", err);
	g->rows++;
	return ret;
}

/* One iteration: the precondition's fill samples, then the measured
 * phase's, stored as iter.c stores them. */
static int iteration(struct gen *g, struct gtarget *gt, struct retime *rt, int k)
{
	struct db_iteration it;
	struct db_baseline_key key = { gt->id,      SIZE_STEP * (uint64_t)(k + 1),
				       "randwrite", MEASURE_BS,
				       INT64_MAX,   BASELINE_FIRST };
	int64_t id;
	size_t n = 0;

	describe(g, gt, rt->cycle_id, k, &it);
	if (db_baseline(g->db, &key, &it.baseline_mibps, &it.baseline_iteration_id))
		it.baseline_iteration_id = 0, it.baseline_mibps = -1;
	int ret = db_iteration_begin(g->db, &it, &id);
	if (ret)
		return ret;
	double mibps = rate_at(gt, gt->clock, k);
	if (rnd01(&gt->rng) * DIP_ONE_IN < 1.0)
		mibps *= 0.2 + 0.25 * rnd01(&gt->rng);
	double fill_mibps = 4.0 * mibps * jitter(&gt->rng, 5);
	double fill_secs = (double)it.size_bytes / MIBF / fill_mibps;
	it.fill_bytes = phase_samples(g, gt, DB_PHASE_FILL, fill_secs, fill_mibps, FILL_BS, &n);
	it.fill_seconds = fill_secs;
	it.fill_mibps = (double)it.fill_bytes / MIBF / fill_secs;
	size_t first = n;
	phase_samples(g, gt, DB_PHASE_MEASURE, MEASURE_SECONDS, mibps, MEASURE_BS, &n);
	figures(&it, g->sm, first, n);
	gt->clock += fill_secs + MEASURE_SECONDS + 2.0;
	it.status = DB_DONE;
	it.more_rows = 0;
	iso_at(g, gt->clock, it.ended_at, sizeof(it.ended_at));
	it.series = g->series;
	it.nseries = readings(g, n);
	ret = db_iteration_end(g->db, id, &it, g->sm, n);
	if (ret)
		return ret;
	gt->next_number++;
	g->iterations++;
	g->samples += n;
	g->rows += n + 1;
	ret = wear_after(g, gt, id, it.size_bytes, it.fill_bytes + it.bytes);
	return ret ? ret : crash_alert(g, gt, rt, &it, id);
}

/* A health snapshot as wear_health stores one from NVMe SMART. */
static int health(struct gen *g, struct gtarget *gt, int64_t cycle_id, enum wear_point p)
{
	struct db_health h = { .target_id = gt->id, .cycle_id = cycle_id, .source = "nvme" };
	char err[256];
	int64_t v[DB_H__COUNT] = {
		[DB_H_DU_READ] = 0,
		[DB_H_DU_WRITTEN] = (int64_t)(gt->host_total / 512000),
		[DB_H_PCT_USED] = (int64_t)(gt->nand_total / (CAPACITY * 30)),
		[DB_H_MEDIA_ERRORS] = 0,
		[DB_H_SPARE] = 100 - (int64_t)(gt->nand_total / (CAPACITY * 300)),
		[DB_H_TEMP] = 38 + (int64_t)(8 * rnd01(&gt->rng)),
		[DB_H_CRIT] = 0,
		[DB_H_POH] = (int64_t)(gt->clock / 3600),
		[DB_H_NAND] = (int64_t)gt->nand_total,
		[DB_H_HOST] = (int64_t)gt->host_total,
	};

	for (int c = 0; c < DB_H__COUNT; c++) {
		h.has[c] = c != DB_H_SECTORS_READ && c != DB_H_SECTORS_WRITTEN;
		h.val[c] = v[c];
	}
	h.host_bytes_delta = (int64_t)(gt->host_total - gt->last_host);
	h.nand_bytes_delta = (int64_t)(gt->nand_total - gt->last_nand);
	h.write_amplification = h.host_bytes_delta > 0
					? (double)h.nand_bytes_delta / (double)h.host_bytes_delta
					: -1;
	h.data = "{\"source\":\"scalegen\"}";
	h.point = wear_point_name(p);
	h.mapped_bytes = gt->mapped;
	h.has_op_effective = 1;
	h.op_effective = 1.0 - (double)gt->mapped / (double)CAPACITY;
	gt->last_host = gt->host_total;
	gt->last_nand = gt->nand_total;
	g->rows++;
	int ret = db_health_insert(g->db, &h, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: %s\n", err);
	return ret;
}

/* The between-cycles trim of the whole region: nothing mapped after it. */
static int trim_action(struct gen *g, struct gtarget *gt, struct retime *rt)
{
	struct db_action a = { .kind = ACT_TRIM, .outcome = ACT_OUT_OK };
	struct db_wear_state s = { gt->id, NULL, 0, gt->host_total, gt->host_since_erase };

	iso_at(g, gt->clock, a.started_at, sizeof(a.started_at));
	rt->action = gt->clock;
	int ret = db_action_start(g->db, rt->cycle_id, &a);
	if (ret)
		return ret;
	a.seconds = 4.0 + 10.0 * rnd01(&gt->rng);
	a.bytes = gt->mapped;
	gt->clock += a.seconds;
	gt->mapped = 0;
	return db_action_end(g->db, rt->cycle_id, &a, &s);
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

	iso_at(g, rt->started, at[0], sizeof(at[0]));
	iso_at(g, rt->ended, at[1], sizeof(at[1]));
	iso_at(g, rt->action, at[2], sizeof(at[2]));
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
		iso_at(g, rt->ev_at[e], at[3 + e], sizeof(at[3 + e]));
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

	g->rows++;
	if (ret == 0)
		ret = health(g, gt, rt.cycle_id, WEAR_CYCLE_START);
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
	ret = health(g, gt, rt.cycle_id, WEAR_CYCLE_END);
	if (ret == 0)
		ret = trim_action(g, gt, &rt);
	if (ret == 0)
		ret = health(g, gt, rt.cycle_id, WEAR_AFTER_ACTION);
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
	char a[32], b[32], err[512];
	const char *sql[] = { "UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?" };
	struct db_value p[3] = { { .type = DB_TEXT, .s = a },
				 { .type = DB_TEXT, .s = b },
				 { .type = DB_INT, .i = g->run_id } };
	const struct db_value *pp[] = { p };
	int np[] = { 3 };

	iso_at(g, started, a, sizeof(a));
	iso_at(g, ended, b, sizeof(b));
	int ret = db_write(g->db, sql, pp, np, 1, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: %s\n", err);
	return ret;
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
	g->run_block = block;
	g->run_started = clock;
	g->rows++;
	return ret;
}

static int add_target(struct gen *g, int i)
{
	struct gtarget *gt = &g->t[i];
	char dev[64], serial[32];
	struct db_resume res;
	struct db_campaign_req req = { .cycles = 0, .key = "scalegen" };

	snprintf(gt->name, sizeof(gt->name), "ssd%d", i + 1);
	snprintf(dev, sizeof(dev), "/dev/disk/by-id/nvme-scalegen-%d", i + 1);
	snprintf(serial, sizeof(serial), "SG%08d", i + 1);
	struct db_target_info info = {
		.name = gt->name,
		.device = dev,
		.kind = TGT_BLOCK,
		.capacity_bytes = CAPACITY,
		.logical_block_size = 4096,
		.serial = serial,
		.model = "scalegen simulated NVMe",
		.firmware = "SG1.0",
	};
	gt->rng.s = g->o.seed * 0x9E3779B97F4A7C15ULL + (uint64_t)i + 1;
	gt->speed = 350.0 + 100.0 * rnd01(&gt->rng);
	gt->clock = 60.0 * i; /* the daemon starts targets a moment apart */
	gt->next_number = 1;
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
	iso_at(g, 0, a, sizeof(a));
	iso_at(g, last, b, sizeof(b));
	if (ret == 0 && (ret = db_write(g->db, sql, pp, np, 1, err, sizeof(err))))
		fprintf(stderr, "scalegen: %s\n", err);
	for (int i = 0; ret == 0 && i < g->o.targets; i++) {
		struct db_progress pr = { .cycle = g->t[i].cycle,
					  .iteration = g->t[i].next_number - 1,
					  .size_bytes = SIZE_STEP,
					  .phase = "idle",
					  .mibps = -1,
					  .nsizes = NSIZES,
					  .phase_seconds = -1,
					  .duration = MEASURE_SECONDS };
		ret = db_progress(g->db, g->t[i].id, &pr);
	}
	return ret;
}

/* ---- replicas: ssd2..ssdN copied from ssd1, every reference renumbered */

struct table {
	char name[64];
	int has_id;  /* an id column */
	int64_t off; /* added to its ids in copy k: (k - 1) x its largest id */
};

struct schema {
	int n;
	struct table t[MAX_TABLES];
};

/* One copy statement being built: the columns and what each becomes. */
struct copy {
	const struct schema *sc;
	const struct table *tab;
	int64_t src, dst, k; /* ssd1's target id, the copy's, and copy k >= 1 */
	char cols[SQL_MAX], sel[SQL_MAX], where[256];
};

static int add_table(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct schema *sc = arg;

	(void)n, (void)names;
	if (sc->n == MAX_TABLES)
		return -E2BIG;
	util_strlcpy(sc->t[sc->n++].name, v[0].s, sizeof(sc->t[0].name));
	return 0;
}

static int keep_int(void *arg, int n, const struct db_value *v, const char *const *names)
{
	(void)n, (void)names;
	*(int64_t *)arg = v[0].type == DB_NULL ? 0 : v[0].i;
	return 0;
}

static const struct table *table_named(const struct schema *sc, const char *name)
{
	for (int i = 0; i < sc->n; i++)
		if (strcmp(sc->t[i].name, name) == 0)
			return &sc->t[i];
	return NULL;
}

/* The tables in creation order (a table refers only to earlier ones) and
 * the largest id of each that has one. */
static int read_schema(struct gen *g, struct schema *sc)
{
	char sql[256], err[512];
	int ret = db_query(g->db,
			   "SELECT name FROM sqlite_master WHERE type = 'table'"
			   " AND name NOT LIKE 'sqlite%' ORDER BY rowid",
			   NULL, 0, add_table, sc, err, sizeof(err));

	for (int i = 0; ret == 0 && i < sc->n; i++) {
		struct db_value p = { .type = DB_TEXT, .s = sc->t[i].name };
		int64_t has = 0;
		ret = db_query(g->db, "SELECT count(*) FROM pragma_table_info(?) WHERE name = 'id'",
			       &p, 1, keep_int, &has, err, sizeof(err));
		sc->t[i].has_id = has > 0;
		snprintf(sql, sizeof(sql), "SELECT max(id) FROM \"%s\"", sc->t[i].name);
		if (ret == 0 && has)
			ret = db_query(g->db, sql, NULL, 0, keep_int, &sc->t[i].off, err,
				       sizeof(err));
	}
	if (ret)
		fprintf(stderr, "scalegen: reading the schema: %s\n", err);
	return ret;
}

static void append(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char *buf, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + len, SQL_MAX - len, fmt, ap);
	va_end(ap);
}

/* What column c (referring to table ref, or NULL) of a copied row becomes. */
static void column_value(struct copy *c, const char *col, const char *ref)
{
	const struct table *r = ref ? table_named(c->sc, ref) : NULL;
	const char *tab = c->tab->name;
	int64_t it_off = table_named(c->sc, "iterations")->off * c->k;

	if (strcmp(col, "id") == 0 && c->tab->has_id)
		append(c->sel, "id + %lld", (long long)(c->tab->off * c->k));
	else if (ref && strcmp(ref, "targets") == 0)
		append(c->sel, "%lld", (long long)c->dst);
	else if (r && r->has_id && strcmp(ref, "runs") != 0)
		append(c->sel, "\"%s\" + %lld", col, (long long)(r->off * c->k));
	else if (strcmp(col, "baseline_iteration_id") == 0)
		append(c->sel, "CASE WHEN %s > 0 THEN %s + %lld ELSE %s END", col, col,
		       (long long)it_off, col);
	else if (strcmp(tab, "events") == 0 && strcmp(col, "message") == 0)
		append(c->sel, "replace(message, 'target ssd1:', 'target ssd%lld:')",
		       (long long)c->k + 1);
	else if (strcmp(tab, "events") == 0 && strcmp(col, "data") == 0)
		append(c->sel,
		       "CASE WHEN json_valid(data) AND json_extract(data, '$.baseline_iteration_id')"
		       " > 0 THEN json_set(data, '$.baseline_iteration_id', json_extract(data,"
		       " '$.baseline_iteration_id') + %lld) ELSE data END",
		       (long long)it_off);
	else
		append(c->sel, "\"%s\"", col);
}

/* Each column of the copied table: its name, and which of ssd1's rows
 * are copied (by target, iteration or cycle). */
static int add_column(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct copy *c = arg;
	const char *col = v[0].s, *ref = v[1].type == DB_TEXT ? v[1].s : NULL;

	(void)n, (void)names;
	append(c->cols, "%s\"%s\"", c->cols[0] ? ", " : "", col);
	if (c->sel[0])
		append(c->sel, ", ");
	column_value(c, col, ref);
	if (!ref)
		return 0;
	if (strcmp(ref, "targets") == 0)
		snprintf(c->where, sizeof(c->where), "WHERE \"%s\" = %lld", col, (long long)c->src);
	else if (!c->where[0] && (strcmp(ref, "iterations") == 0 || strcmp(ref, "cycles") == 0))
		snprintf(c->where, sizeof(c->where),
			 "WHERE \"%s\" IN (SELECT id FROM %s WHERE target_id = %lld)", col, ref,
			 (long long)c->src);
	return 0;
}

/* The statement copying ssd1's rows of one table to target copy k, in
 * *sql (malloc'd), or NULL when the table holds no target's rows (runs),
 * is the targets' own (written by db_target_upsert) or progress (written
 * by db_progress for every target). */
static int copy_sql(struct gen *g, const struct schema *sc, const struct table *tab, int k,
		    char **sql)
{
	struct copy *c = calloc(1, sizeof(*c));
	struct db_value p = { .type = DB_TEXT, .s = tab->name };
	char err[512];
	int ret;

	*sql = NULL;
	if (!c)
		return -ENOMEM;
	*c = (struct copy){ .sc = sc, .tab = tab, .src = g->t[0].id, .dst = g->t[k].id, .k = k };
	ret = db_query(g->db,
		       "SELECT p.name, f.\"table\" FROM pragma_table_info(?1) p"
		       " LEFT JOIN pragma_foreign_key_list(?1) f ON f.\"from\" = p.name"
		       " ORDER BY p.cid",
		       &p, 1, add_column, c, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: the columns of %s: %s\n", tab->name, err);
	if (ret == 0 && c->where[0] && strcmp(tab->name, "targets") != 0 &&
	    strcmp(tab->name, "progress") != 0 && (*sql = malloc(3 * SQL_MAX)))
		snprintf(*sql, 3 * SQL_MAX, "INSERT INTO \"%s\" (%s) SELECT %s FROM \"%s\" %s",
			 tab->name, c->cols, c->sel, tab->name, c->where);
	free(c);
	return ret;
}

/* Target k (ssd<k+1>) as a copy of ssd1's rows, one transaction. */
static int replicate_one(struct gen *g, const struct schema *sc, int k)
{
	const char *sqls[MAX_TABLES];
	const struct db_value *pp[MAX_TABLES] = { NULL };
	int np[MAX_TABLES] = { 0 }, n = 0, ret = 0;
	char *own[MAX_TABLES];
	char err[512];

	for (int i = 0; ret == 0 && i < sc->n; i++) {
		ret = copy_sql(g, sc, &sc->t[i], k, &own[n]);
		if (ret == 0 && own[n])
			sqls[n] = own[n], n++;
	}
	if (ret == 0 && (ret = db_write(g->db, sqls, pp, np, n, err, sizeof(err))))
		fprintf(stderr, "scalegen: copying ssd1 to %s: %s\n", g->t[k].name, err);
	for (int i = 0; i < n; i++)
		free(own[i]);
	g->t[k].cycle = g->t[0].cycle;
	g->t[k].next_number = g->t[0].next_number;
	return ret;
}

/* Targets 2..N as copies of target 1 (--replicate). */
static int replicate(struct gen *g)
{
	struct schema sc = { 0 };
	int ret = read_schema(g, &sc);

	for (int k = 1; ret == 0 && k < g->o.targets; k++)
		ret = replicate_one(g, &sc, k);
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
		   "                [--replicate]\n"
		   "Build a wearmon database of N targets x D days of 1-second samples\n"
		   "through the daemon's write calls (tools/scalegen/README.md); --retention\n"
		   "rolls up samples older than DAYS as the daemon's sample_retention does;\n"
		   "--replicate writes ssd1 only and copies it to the other targets.\n");
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
					    { "help", no_argument, NULL, 'h' },
					    { NULL, 0, NULL, 0 } };
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "t:d:o:s:r:Rh", lo, NULL)) != -1) {
		switch (c) {
		case 't': o->targets = (int)strtol(optarg, &end, 10); break;
		case 'd': o->days = (int)strtol(optarg, &end, 10); break;
		case 'o': o->out = optarg; break;
		case 's': o->seed = strtoull(optarg, &end, 10); break;
		case 'r': o->retention = (int)strtol(optarg, &end, 10); break;
		case 'R': o->replicate = 1; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (o->targets < 1 || o->targets > 1000 || o->days < 1 || o->days > 3650 || !o->out ||
	    o->retention < 0 || o->retention > 3650 || optind != argc) {
		fprintf(stderr, "scalegen: --targets 1..1000, --days 1..3650 and --out are "
				"required; --retention is 0..3650 days\n");
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
	struct gen g = { .o = { .seed = 1 } };
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
	if (!g.t || !g.sm || !g.series)
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
