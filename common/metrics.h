/* metrics: the Prometheus text exposition of a daemon's figures, for
 * node_exporter's textfile collector, and its atomic write to a file.
 * Renders only what it is given: knows nothing of threads or sockets
 * (db_metrics.c gathers the stored figures from the database). */
#ifndef WEARMON_METRICS_H
#define WEARMON_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define METRICS_MAX_KINDS 24
#define METRICS_STR 256

/* How many alerts of one kind a target raised (events of that kind). */
struct metrics_alert {
	char kind[48];
	double count;
};

/* State of a target's thread (label state of wearmon_target_state). */
enum metrics_state {
	METRICS_RUNNING,
	METRICS_DONE,
	METRICS_STOPPED,
	METRICS_FAILED,
	METRICS_STATE__COUNT
};

/* Every figure of one target. A double that is NaN is not known and its
 * sample is left out; strings may be empty. */
struct metrics_target {
	char name[64], device[METRICS_STR], serial[128], workload[32];
	enum metrics_state state;
	char phase[32]; /* what it does now; "" when not running */
	/* now */
	double cycle, iteration, size_index, sizes_configured, size_bytes;
	double throughput_bps;   /* last sample of the current phase */
	double throughput_ratio; /* that / the baseline (measure phase only) */
	/* the last finished iteration (done) */
	char last_workload[32];
	double last_bps, last_iops, last_p99_seconds, last_ratio;
	double last_end_unix, last_seconds, last_size_bytes;
	/* wear and over-provisioning (the wear row of the last iteration) */
	double host_written_bytes, op_effective, op_configured;
	/* the latest health snapshot */
	double life_used_ratio, media_errors, temperature_celsius;
	double nand_written_bytes, spare_ratio, write_amplification;
	/* error counters over the whole history */
	double io_errors, verify_errors;
	struct metrics_alert alerts[METRICS_MAX_KINDS];
	int nalerts;
};

/* The whole exposition. */
struct metrics {
	const char *version;
	double start_unix;   /* when the daemon started */
	double updated_unix; /* when these figures were taken */
	int stopping;        /* 1 once a stop was asked for */
	const struct metrics_target *t;
	int n;
};

/* Reset every figure of t to "not known" (NaN, empty strings, no alerts). */
void metrics_target_init(struct metrics_target *t);

/* Count n more alerts of kind in t (a kind beyond METRICS_MAX_KINDS is
 * dropped). */
void metrics_add_alert(struct metrics_target *t, const char *kind, double n);

/* Render m in the Prometheus text format (version 0.0.4) into a malloc'd
 * string *out of *len bytes. Returns 0 or -ENOMEM. */
int metrics_render(const struct metrics *m, char **out, size_t *len);

struct db;

/* Replace path with text atomically: a temporary file in the same
 * directory (not ending in .prom, so the collector never reads it half
 * written), then rename. Returns 0 or -errno (the temporary is removed). */
int metrics_write_file(const char *path, const char *text, size_t len);

/* Remove the temporaries of path a killed writer left behind
 * (".NAME.XXXXXX" beside it). Returns how many, or -errno. */
int metrics_remove_stale(const char *path);

#endif
