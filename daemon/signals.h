/* signals: the process's signal policy. Handlers only set flags (atomic:
 * target threads read them too); the main loop and the target threads act
 * on them. */
#ifndef WEARMON_SIGNALS_H
#define WEARMON_SIGNALS_H

#include <stdatomic.h>

/* Set by SIGTERM/SIGINT: every target drains and stops. Target threads read
 * it, so it is a (lock-free) atomic, which a handler may store to. */
extern atomic_int signals_stop;
/* CLOCK_MONOTONIC nanoseconds (util_now_ns) of the first stop signal; 0
 * none yet: how long the stop took is measured from it. */
extern atomic_llong signals_stop_ns;
/* Set by SIGHUP: reload the configuration. */
extern atomic_int signals_reload;

/* Install handlers for SIGTERM, SIGINT, SIGHUP; ignore SIGPIPE.
 * Returns 0 or -errno. */
int signals_init(void);

/* Block the handled signals in the calling thread (target threads), so
 * only the main thread runs handlers. */
void signals_block_in_thread(void);

#endif
