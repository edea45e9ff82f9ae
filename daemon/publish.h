/* publish: wearmond's metrics file (metrics_file =), rewritten from the
 * main loop, never from an I/O thread: every PUBLISH_EVERY seconds, when
 * a target starts a phase and when that phase has its first sample (so a
 * phase shorter than PUBLISH_EVERY still shows its live figures), when it
 * finishes an iteration, and at exit. The main loop asks at every turn
 * (daemon/main.c, 50 ms), so each of these rewrites comes within a turn. */
#ifndef WEARMON_PUBLISH_H
#define WEARMON_PUBLISH_H

#include <pthread.h>
#include <stdint.h>

#include "config/cfg.h"
#include "db/db_metrics.h"
#include "db/query/query_named.h"
#include "metrics.h"
#include "sched.h"

#define PUBLISH_EVERY 5.0 /* seconds between rewrites at the latest */
#define PUBLISH_MAX_TARGETS 64

struct publish {
	char path[PATH_MAX]; /* "" = off */
	double start_unix, next_at;
	int64_t last_done[PUBLISH_MAX_TARGETS]; /* newest done iteration seen */
	/* each target's phase at the last rewrite, and whether it had a sample */
	struct publish_stage {
		long cycle, iteration;
		int phase, live;
	} stage[PUBLISH_MAX_TARGETS];
	int failed; /* a write failed (logged once) */
	/* each target's stored figures, seeded at start and kept up to date
	 * by the database's row hook (any thread), under lock */
	pthread_mutex_t lock;
	struct db *db;          /* the daemon's, once seeded */
	struct query_schema sc; /* its facts, read once (the forecast's query) */
	struct db_metrics_state fig[PUBLISH_MAX_TARGETS];
	int nfig;
};

/* Set up from the configuration (c->metrics_file; off when empty). */
void publish_init(struct publish *p, const struct cfg *c);

/* Read each target's stored figures once (st[0..n) registered, no thread
 * started yet) and keep them up to date from then on: db's row hook is
 * set, so publishing never reads the history. Does nothing when off. */
void publish_seed(struct publish *p, struct db *db, struct sched_target *st, int n);

/* Rewrite the file when due (asked at every turn of the main loop). c is
 * the latest accepted configuration (for each target's workload and
 * baseline mode), st[0..n) the started targets; force rewrites now (at
 * exit, with daemon METRICS_DAEMON_STOPPED). */
void publish_tick(struct publish *p, const struct cfg *c, struct sched_target *st, int n,
		  enum metrics_daemon daemon, int force);

/* Check that metrics_file can be written (its directory exists and is
 * writable). Returns 0 or -errno with "FILE:LINE: metrics_file: ..." in err. */
int publish_check(const struct cfg *c, char *err, size_t len);

#endif
