/* engine_wake: the waker that bounds every wait for completions. While a
 * phase runs, a periodic timer sends the thread ENGINE_WAKE_SIG every
 * ENGINE_WAKE_NS, ending a wait in the kernel (EINTR), so that a stalled
 * device still gets its empty samples and a stop is seen, without a
 * timeout armed at every wait. Used by the engines that wait in the kernel
 * (libaio, io_uring); knows nothing of engines or phases. */
#ifndef WEARMON_ENGINE_WAKE_H
#define WEARMON_ENGINE_WAKE_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#define ENGINE_WAKE_NS (100 * 1000 * 1000)

/* One running thread's waker. */
struct engine_waker {
	int waking; /* the timer runs: waits need no timeout */
	timer_t timer;
	sigset_t saved_mask;
};

/* Start the timer for the calling thread, and unblock the signal in it.
 * When the timer cannot be had, w->waking stays 0 and the engine waits
 * with a timeout of ENGINE_WAKE_NS instead. */
void engine_waker_start(struct engine_waker *w);

/* Stop it and restore the thread's signal mask (idempotent). */
void engine_waker_stop(struct engine_waker *w);

/* Whether a wake came to this thread since the last call or clear (and
 * forget it). Returns 1 or 0. */
int engine_wake_take(void);

/* Forget a wake: a wait it ended has returned. */
void engine_wake_clear(void);

#endif
