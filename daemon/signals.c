/* signals: flag-setting handlers. */
#include "signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "io/engine.h"

/* Written by handlers, read by every thread: a C11 atomic, which a handler
 * may store to when it is lock-free (C11 7.14.1.1). */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomic_int must be lock-free");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "atomic_llong must be lock-free");
atomic_int signals_stop;
atomic_llong signals_stop_ns;
atomic_int signals_reload;

static void on_stop(int sig)
{
	struct timespec ts;
	long long zero = 0;

	(void)sig;
	/* clock_gettime is async-signal-safe (signal-safety(7)) */
	if (!clock_gettime(CLOCK_MONOTONIC, &ts))
		atomic_compare_exchange_strong(&signals_stop_ns, &zero,
					       (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	atomic_store(&signals_stop, 1);
}

static void on_hup(int sig)
{
	(void)sig;
	signals_reload = 1;
}

int signals_init(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		return -errno;
	sa.sa_handler = on_hup;
	if (sigaction(SIGHUP, &sa, NULL))
		return -errno;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL))
		return -errno;
	return engine_signals_init(); /* SIGRTMIN+4, harmless from now on */
}

void signals_block_in_thread(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}
