/* notify: the service manager's notification protocol (READY, STATUS,
 * WATCHDOG, RELOADING, STOPPING) and the STATUS= line. Every call does
 * nothing without NOTIFY_SOCKET; decides nothing about the process. */
#ifndef WEARMON_NOTIFY_H
#define WEARMON_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

/* Whether a service manager listens (NOTIFY_SOCKET is set). */
int notify_enabled(void);

/* READY=1, with STATUS=status when status is not NULL. Returns 0 (also
 * without a manager) or -errno. */
int notify_ready(const char *status);

/* RELOADING=1 with MONOTONIC_USEC (systemd 253+ wants it for
 * Type=notify-reload; older ones ignore it). Returns 0 or -errno. */
int notify_reloading(void);

/* EXTEND_TIMEOUT_USEC=usec: something long before READY=1 (or STOPPING=1)
 * may take usec more from now; with STATUS=what when what is not NULL.
 * Returns 0 or -errno. */
int notify_extend_timeout(uint64_t usec, const char *what);

/* STOPPING=1. Returns 0 or -errno. */
int notify_stopping(void);

/* STATUS=text (one line). Returns 0 or -errno. */
int notify_status(const char *text);

/* WATCHDOG=1. Returns 0 or -errno. */
int notify_watchdog(void);

/* The watchdog interval the manager set for this process (WATCHDOG_USEC).
 * Returns microseconds, 0 when there is no watchdog. */
uint64_t notify_watchdog_usec(void);

/* One target in the STATUS= line. */
struct notify_target {
	const char *name;
	const char *state;      /* NULL while running, else "done", "failed", ... */
	const char *phase;      /* "start", "fill", "measure", "trim", ...: printed */
	int measuring;          /* the phase is a measured one: the ratio to the
				       baseline is shown */
	long cycle;             /* < 1: no cycle yet */
	int size_index, nsizes; /* size_index counts from 0 */
	uint64_t size_bytes;
	double mibps;          /* <= 0: not shown */
	double baseline_mibps; /* <= 0: no ratio shown */
};

/* Format the STATUS= text for n targets, "; " between them, e.g.
 * "lab1: cycle 3 size 4/10 (6.40 GiB) measure 412.3 MiB/s 87% of baseline".
 * Targets that do not fit are summarised as "(+K more)"; never more than
 * len - 1 characters, no newline. Returns buf. */
char *notify_format_status(char *buf, size_t len, const struct notify_target *v, int n);

#endif
