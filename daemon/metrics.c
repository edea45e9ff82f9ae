/* metrics: Prometheus text exposition (one family after another, HELP and
 * TYPE once each, samples of every target below) and its atomic write. */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alert.h"
#include "base/util.h"

/* Kinds always exported (at 0 until raised), so that a rule's increase()
 * sees the first alert of a kind as a change from 0 rather than a new
 * series. Others found in the database follow them. */
static const char *const target_states[METRICS_STATE__COUNT] = {
	[METRICS_RUNNING] = "running",
	[METRICS_DONE] = "done",
	[METRICS_STOPPED] = "stopped",
	[METRICS_FAILED] = "failed",
};

static const char *const daemon_states[METRICS_DAEMON__COUNT] = {
	[METRICS_DAEMON_RUNNING] = "running",
	[METRICS_DAEMON_STOPPING] = "stopping",
	[METRICS_DAEMON_STOPPED] = "stopped",
};

/* Which labels a family's samples carry besides target, device, serial. */
enum labels { L_TARGET, L_WORKLOAD, L_LAST_WORKLOAD };

struct family {
	const char *name, *type, *help;
	size_t off; /* of the double in struct metrics_target */
	enum labels labels;
};

#define F(field) offsetof(struct metrics_target, field)

static const struct family families[] = {
	{ "wearmon_throughput_bytes_per_second", "gauge",
	  "Throughput of the last sample of the current fill or measured phase.", F(throughput_bps),
	  L_WORKLOAD },
	{ "wearmon_throughput_baseline_ratio", "gauge",
	  "Current measured-phase throughput over the baseline of the same size (1 = as fast).",
	  F(throughput_ratio), L_WORKLOAD },
	{ "wearmon_last_iteration_throughput_bytes_per_second", "gauge",
	  "Average throughput of the last finished iteration.", F(last_bps), L_LAST_WORKLOAD },
	{ "wearmon_last_iteration_iops", "gauge",
	  "Average I/O operations per second of the last finished iteration.", F(last_iops),
	  L_LAST_WORKLOAD },
	{ "wearmon_last_iteration_latency_p99_seconds", "gauge",
	  "99th percentile total latency (submit to reap) of the last finished iteration.",
	  F(last_p99_seconds), L_LAST_WORKLOAD },
	{ "wearmon_last_iteration_baseline_ratio", "gauge",
	  "Last finished iteration's throughput over its baseline (same size, workload, block size).",
	  F(last_ratio), L_LAST_WORKLOAD },
	{ "wearmon_last_iteration_duration_seconds", "gauge",
	  "Wall time of the last finished iteration, fill included.", F(last_seconds),
	  L_LAST_WORKLOAD },
	{ "wearmon_last_iteration_size_bytes", "gauge",
	  "Size measured by the last finished iteration.", F(last_size_bytes), L_LAST_WORKLOAD },
	{ "wearmon_last_iteration_end_timestamp_seconds", "gauge",
	  "When the last iteration finished, in seconds since the epoch.", F(last_end_unix),
	  L_TARGET },
	{ "wearmon_cycle", "gauge", "Cycle number in progress (or the last one).", F(cycle),
	  L_TARGET },
	{ "wearmon_iteration", "gauge", "Iteration number within the cycle in progress.",
	  F(iteration), L_TARGET },
	{ "wearmon_size_index", "gauge", "Position of the size in progress, from 0.", F(size_index),
	  L_TARGET },
	{ "wearmon_sizes_configured", "gauge", "Number of sizes a cycle measures.",
	  F(sizes_configured), L_TARGET },
	{ "wearmon_size_bytes", "gauge", "Size in progress.", F(size_bytes), L_TARGET },
	{ "wearmon_host_written_bytes_total", "counter", "Bytes wearmond ever wrote to the target.",
	  F(host_written_bytes), L_TARGET },
	{ "wearmon_overprovisioning_effective_ratio", "gauge",
	  "1 - bytes written and not since trimmed / capacity.", F(op_effective), L_TARGET },
	{ "wearmon_overprovisioning_configured_ratio", "gauge", "1 - region under test / capacity.",
	  F(op_configured), L_TARGET },
	{ "wearmon_drive_life_used_ratio", "gauge",
	  "Drive's estimate of its rated life used (NVMe percentage used / 100).",
	  F(life_used_ratio), L_TARGET },
	{ "wearmon_drive_available_spare_ratio", "gauge",
	  "Drive's remaining spare capacity (NVMe available spare / 100).", F(spare_ratio),
	  L_TARGET },
	{ "wearmon_drive_media_errors_total", "counter",
	  "Media and data integrity errors the drive reports.", F(media_errors), L_TARGET },
	{ "wearmon_drive_temperature_celsius", "gauge", "Drive temperature.",
	  F(temperature_celsius), L_TARGET },
	{ "wearmon_drive_nand_written_bytes_total", "counter",
	  "Flash bytes written as the drive counts them.", F(nand_written_bytes), L_TARGET },
	{ "wearmon_drive_write_amplification_ratio", "gauge",
	  "Flash bytes over host bytes written, over all health snapshots.", F(write_amplification),
	  L_TARGET },
	{ "wearmon_io_errors_total", "counter", "I/O errors of all iterations.", F(io_errors),
	  L_TARGET },
	{ "wearmon_verify_errors_total", "counter", "Sectors that failed data verification.",
	  F(verify_errors), L_TARGET },
	/* the endurance forecast: when the drive's wear indicator reaches 100 % */
	{ "wearmon_endurance_end_timestamp_seconds", "gauge",
	  "Forecast time the drive's wear indicator reaches 100 % used, in seconds since the epoch.",
	  F(eol_end_unix), L_TARGET },
	{ "wearmon_endurance_end_lower_timestamp_seconds", "gauge",
	  "Early end of the forecast's 95 % prediction interval.", F(eol_end_lo_unix), L_TARGET },
	{ "wearmon_endurance_end_upper_timestamp_seconds", "gauge",
	  "Late end of the forecast's 95 % prediction interval.", F(eol_end_hi_unix), L_TARGET },
	{ "wearmon_endurance_days_left", "gauge",
	  "Days from this file's write to the forecast end of rated life.", F(eol_days_left),
	  L_TARGET },
	{ "wearmon_endurance_days_left_lower", "gauge",
	  "Days to the early end of the forecast's 95 % interval.", F(eol_days_left_lo), L_TARGET },
	{ "wearmon_endurance_days_left_upper", "gauge",
	  "Days to the late end of the forecast's 95 % interval.", F(eol_days_left_hi), L_TARGET },
	{ "wearmon_endurance_host_written_bytes_at_end", "gauge",
	  "Forecast host bytes written by the time the wear indicator reaches 100 %.",
	  F(eol_host_bytes_at_end), L_TARGET },
	{ "wearmon_endurance_rated_ratio", "gauge",
	  "Forecast host bytes at 100 % used over the rated endurance (rated_tbw or rated_dwpd).",
	  F(eol_rated_ratio), L_TARGET },
};

#undef F

static double field(const struct metrics_target *t, size_t off)
{
	double v;
	memcpy(&v, (const char *)t + off, sizeof(v));
	return v;
}

void metrics_target_init(struct metrics_target *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
		double nan = NAN;
		memcpy((char *)t + families[i].off, &nan, sizeof(nan));
	}
	t->state = METRICS_RUNNING;
	for (int k = 0; k < ALERT_KIND__COUNT; k++) /* every known kind, from 0 */
		metrics_add_alert(t, alert_kind_name((enum alert_kind)k), 0);
}

/* A label value with \, " and newline escaped. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void put_label(FILE *f, const char *name, const char *value, int first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	put_escaped(f, value);
	fputc('"', f);
}

/* Integers as integers, the rest in the shortest of 15 or 17 significant
 * digits that reads back as the same double (0.07, not 0.07000000000000001). */
static void put_value(FILE *f, double v)
{
	char buf[40];
	if (isinf(v)) {
		fputs(v > 0 ? "+Inf" : "-Inf", f);
		return;
	}
	if (fabs(v) < 1e15 && v == floor(v)) {
		fprintf(f, "%lld", (long long)v);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, f);
}

/* name{target=..,device=..,serial=..[,extra=value]} v */
static void put_sample(FILE *f, const char *name, const struct metrics_target *t, const char *extra,
		       const char *extra_value, double v)
{
	fputs(name, f);
	fputc('{', f);
	put_label(f, "target", t->name, 1);
	put_label(f, "device", t->device, 0);
	put_label(f, "serial", t->serial, 0);
	if (extra)
		put_label(f, extra, extra_value, 0);
	fputs("} ", f);
	put_value(f, v);
	fputc('\n', f);
}

static void put_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_family(FILE *f, const struct family *fa, const struct metrics *m)
{
	int any = 0;
	for (int i = 0; i < m->n && !any; i++)
		any = !isnan(field(&m->t[i], fa->off));
	if (!any)
		return;
	put_head(f, fa->name, fa->type, fa->help);
	for (int i = 0; i < m->n; i++) {
		const struct metrics_target *t = &m->t[i];
		double v = field(t, fa->off);
		if (isnan(v))
			continue;
		if (fa->labels == L_TARGET)
			put_sample(f, fa->name, t, NULL, NULL, v);
		else
			put_sample(f, fa->name, t, "workload",
				   fa->labels == L_WORKLOAD ? t->workload : t->last_workload, v);
	}
}

/* The families with a label of their own: phase, state, alert kind. */
static void put_sets(FILE *f, const struct metrics *m)
{
	int any = 0;
	if (!m->n)
		return;
	for (int i = 0; i < m->n; i++)
		any |= m->t[i].phase[0] != '\0';
	if (any) {
		put_head(f, "wearmon_phase_info", "gauge",
			 "What the target is doing now (fill, measure, an action, pause...).");
		for (int i = 0; i < m->n; i++)
			if (m->t[i].phase[0])
				put_sample(f, "wearmon_phase_info", &m->t[i], "phase",
					   m->t[i].phase, 1);
	}
	put_head(f, "wearmon_target_state", "gauge",
		 "State of the target's thread: 1 for the current one.");
	for (int i = 0; i < m->n; i++)
		for (int s = 0; s < METRICS_STATE__COUNT; s++)
			put_sample(f, "wearmon_target_state", &m->t[i], "state", target_states[s],
				   m->t[i].state == (enum metrics_state)s);
	put_head(f, "wearmon_alerts_total", "counter", "Alerts raised, by kind.");
	for (int i = 0; i < m->n; i++)
		for (int k = 0; k < m->t[i].nalerts; k++)
			put_sample(f, "wearmon_alerts_total", &m->t[i], "kind",
				   m->t[i].alerts[k].kind, m->t[i].alerts[k].count);
}

static void put_daemon(FILE *f, const struct metrics *m)
{
	put_head(f, "wearmon_build_info", "gauge", "Version of the running wearmond.");
	fputs("wearmon_build_info{", f);
	put_label(f, "version", m->version ? m->version : "", 1);
	fputs("} 1\n", f);
	put_head(f, "wearmon_daemon_state", "gauge", "State of the daemon: 1 for the current one.");
	for (int s = 0; s < METRICS_DAEMON__COUNT; s++)
		fprintf(f, "wearmon_daemon_state{state=\"%s\"} %d\n", daemon_states[s],
			m->daemon == (enum metrics_daemon)s);
	put_head(f, "wearmon_daemon_start_time_seconds", "gauge",
		 "When the daemon started, in seconds since the epoch.");
	fputs("wearmon_daemon_start_time_seconds ", f);
	put_value(f, m->start_unix);
	fputc('\n', f);
	put_head(f, "wearmon_metrics_updated_timestamp_seconds", "gauge",
		 "When the daemon last wrote this file, in seconds since the epoch.");
	fputs("wearmon_metrics_updated_timestamp_seconds ", f);
	put_value(f, m->updated_unix);
	fputc('\n', f);
}

int metrics_render(const struct metrics *m, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	FILE *f = open_memstream(out, len);
	if (!f)
		return -ENOMEM;
	put_daemon(f, m);
	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		put_family(f, &families[i], m);
	put_sets(f, m);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Write all of buf to fd. Returns 0 or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int metrics_write_file(const char *path, const char *text, size_t len)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	int ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.XXXXXX", dirlen, path, slash ? slash + 1 : path) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, text, len);
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int metrics_remove_stale(const char *path)
{
	char dir[PATH_MAX], prefix[PATH_MAX], full[PATH_MAX * 2];
	const char *slash = strrchr(path, '/');
	int n = 0;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
	snprintf(prefix, sizeof(prefix), ".%s.", slash ? slash + 1 : path);
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len != strlen(prefix) + 6 || strncmp(e->d_name, prefix, strlen(prefix)))
			continue; /* only NAME's own temporaries: mkostemp's 6 characters */
		snprintf(full, sizeof(full), "%s%s%s", dir, slash ? "" : "/", e->d_name);
		n += unlink(full) == 0;
	}
	closedir(d);
	return n;
}
