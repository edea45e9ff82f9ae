/* metrics: the Prometheus text exposition of a daemon's figures, for
 * node_exporter's textfile collector, and its atomic write to a file.
 * Renders only what it is given: knows nothing of threads or sockets
 * (db_metrics.c gathers the stored figures from the database). */
#ifndef WEARMON_METRICS_H
#define WEARMON_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "db/db_metrics.h"

/* The daemon's state (wearmon_daemon_state): stopping once a stop was
 * asked for or every target ended, stopped in the file's last write at
 * exit. */
enum metrics_daemon {
	METRICS_DAEMON_RUNNING,
	METRICS_DAEMON_STOPPING,
	METRICS_DAEMON_STOPPED,
	METRICS_DAEMON__COUNT
};

/* The whole exposition. */
struct metrics {
	const char *version;
	double start_unix;   /* when the daemon started */
	double updated_unix; /* when these figures were taken */
	enum metrics_daemon daemon;
	const struct metrics_target *t;
	int n;
};

/* Reset every figure of t to "not known" (NaN, empty strings, no alerts). */
void metrics_target_init(struct metrics_target *t);

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
