/* hstall: notices the intervals in which wearmond itself did not run (SIGSTOP,
 * a paused VM, a suspended host) with a ticker thread that only sleeps, and
 * accounts them against sample intervals. Knows nothing of engines, configs
 * or databases; never tells a slow drive from a slow host by I/O times. */
#ifndef WEARMON_HSTALL_H
#define WEARMON_HSTALL_H

#include <stddef.h>
#include <stdint.h>

#define HSTALL_TICK_NS 100000000ull /* the ticker wakes every 0.1 s */
#define HSTALL_MIN_NS 1000000000ull /* a tick this late, or this much suspend, is a stall */
#define HSTALL_KEEP 64              /* stalls remembered (the latest) */

/* One stall. Times are CLOCK_MONOTONIC ns (util_now_ns), the clock the
 * engine cuts samples with. */
struct hstall {
	uint64_t start, end;   /* the daemon did not run in [start, end) */
	uint64_t suspended_ns; /* and the host was suspended this long before
				  end, time CLOCK_MONOTONIC does not count */
};

/* The previous tick, for hstall_tick. */
struct hstall_watch {
	uint64_t mono, boot; /* CLOCK_MONOTONIC and CLOCK_BOOTTIME, ns */
	int started;         /* a tick was seen */
};

/* A tick at (mono, boot), meant to come at most period ns after the one
 * before. The ticker was late by mono - previous - period; the host was
 * suspended for the growth of CLOCK_BOOTTIME over CLOCK_MONOTONIC. When
 * either reaches HSTALL_MIN_NS this tick ends a stall: [previous + period,
 * mono) plus the suspend. Returns 1 with *out set, else 0. */
int hstall_tick(struct hstall_watch *w, uint64_t mono, uint64_t boot, uint64_t period,
		struct hstall *out);

/* The stalled time within [a, b): the overlap of v[0..n) with it, in ns.
 * The suspends of the stalls that end in (a, b] are added to *suspended
 * (NULL: not wanted). Returns the overlap. */
uint64_t hstall_within(const struct hstall *v, size_t n, uint64_t a, uint64_t b,
		       uint64_t *suspended);

/* Start the ticker thread (once per process; again is a no-op). Returns 0
 * or -errno. */
int hstall_init(void);

/* Stop and join it (nothing started is fine). */
void hstall_fini(void);

/* The stalls that ended after since, oldest first, at most max of them,
 * once the ticker has looked at the clock after this call began: a stall
 * the caller has just woken from is in. Without the ticker: none. Returns
 * how many were copied to out. */
size_t hstall_since(uint64_t since, struct hstall *out, size_t max);

#endif
