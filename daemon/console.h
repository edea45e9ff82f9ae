/* console: the foreground daemon's status lines on a terminal, one per
 * target, rewritten from the main loop at most once a second. They show
 * the progress state that STATUS=, the progress table and the metrics file
 * read (sched.h), with a phase's share and time left computed as `wearmon
 * status` computes them (stats_phase_progress) and the cycle's time left
 * by the same query (query_campaign_eta). On only when stderr is a
 * terminal: nothing of it reaches the journal, a pipe or a file. The log
 * keeps the lines below its messages (log_status_lines). */
#ifndef WEARMON_CONSOLE_H
#define WEARMON_CONSOLE_H

#include <stdint.h>

#include "db/db.h"
#include "db/query/query_named.h"
#include "sched.h"

#define CONSOLE_EVERY 1.0 /* seconds between rewrites */
#define CONSOLE_MAX_TARGETS 64
#define CONSOLE_LINE 256 /* characters of one line at most */

struct console {
	int on;
	double next_at;
	struct db *db; /* for the cycle's time left; NULL: not shown */
	struct query_schema sc;
	/* per target: the done cycle before the running one, read once per
	 * cycle (its wall time is part of the cycle's ETA) */
	struct console_cycle {
		int64_t cycle_id, prev_id;
		double prev_wall;
	} cyc[CONSOLE_MAX_TARGETS];
};

/* Whether status lines belong on this stderr: a terminal (isatty), not a
 * dumb one, and the log's sink (foreground: wearmond logs to stderr).
 * Returns 1 or 0. */
int console_wanted(int logs_to_stderr);

/* Set up; on: console_wanted's verdict. db: the daemon's, for the cycle's
 * time left (NULL: without it). */
void console_init(struct console *c, int on, struct db *db);

/* Rewrite the lines when due (asked at every turn of the main loop):
 * st[0..n) the started targets. */
void console_tick(struct console *c, struct sched_target *st, int n);

/* Clear the lines (at exit). */
void console_fini(struct console *c);

/* One target's line into buf (at most width characters, no newline): its
 * name, cycle, size, phase with its share, MiB/s and IOPS now, and the
 * time left of the phase and the cycle (cycle_left NAN: unknown). */
void console_line(const char *name, const struct sched_progress *p, double now, double cycle_left,
		  char *buf, size_t width);

#endif
