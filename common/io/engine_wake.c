/* engine_wake: one periodic timer per running thread, its signal ending
 * waits for completions.
 *
 * A timeout on every wait would do the same, but arms and cancels a kernel
 * timer at every wait: at QD1 on a RAM-backed loop device that was 1.5 us
 * of a 23 us p50 (tools/bench/results/2026-12-04-engine-changes.md, item
 * 4). The thread keeps the signal unblocked for the phase: a wait that
 * io_pgetevents opened with a signal mask cost 2 to 3 us per wait here
 * (item 10 there), more than the timer did. A signal that lands while the
 * thread is not waiting sets wake_pending, and the next wait returns at
 * once instead of sleeping, so a wake is lost only if it lands between
 * that check and the system call (then the wait lasts one more period).
 * The handler's SA_RESTART keeps every other system call the thread makes
 * (submissions, futexes) as if no signal came. */
#include "io/engine_wake.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "io/engine.h"

#define WAKE_SIG (SIGRTMIN + 4)
#ifndef sigev_notify_thread_id /* glibc before 2.41 names only the union */
#define sigev_notify_thread_id _sigev_un._tid
#endif

static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static int wake_handler_ok;
/* A WAKE_SIG came to this thread since its last wait. */
static _Thread_local volatile sig_atomic_t wake_pending;

static void on_wake(int sig)
{
	(void)sig;
	wake_pending = 1;
}

static void wake_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_wake;
	sa.sa_flags = SA_RESTART;
	wake_handler_ok = sigaction(WAKE_SIG, &sa, NULL) == 0;
}

int engine_signals_init(void)
{
	if (pthread_once(&wake_once, wake_install))
		return -EINVAL;
	return wake_handler_ok ? 0 : -EINVAL;
}

void engine_waker_start(struct engine_waker *w)
{
	sigset_t unblock;
	struct sigevent ev;
	struct itimerspec its = { { 0, ENGINE_WAKE_NS }, { 0, ENGINE_WAKE_NS } };

	w->waking = 0;
	if (engine_signals_init())
		return;
	sigemptyset(&unblock);
	sigaddset(&unblock, WAKE_SIG);
	if (pthread_sigmask(SIG_UNBLOCK, &unblock, &w->saved_mask))
		return;
	wake_pending = 0;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = WAKE_SIG;
	ev.sigev_notify_thread_id = gettid();
	if (!timer_create(CLOCK_MONOTONIC, &ev, &w->timer)) {
		if (!timer_settime(w->timer, 0, &its, NULL)) {
			w->waking = 1;
			return;
		}
		timer_delete(w->timer);
	}
	pthread_sigmask(SIG_SETMASK, &w->saved_mask, NULL); /* no timer: the timed wait */
}

/* The timer gone, the thread's signal mask as it was (a WAKE_SIG still
 * pending then reaches the handler, or stays pending where the thread had
 * it blocked, harmless either way). */
void engine_waker_stop(struct engine_waker *w)
{
	if (!w->waking)
		return;
	timer_delete(w->timer);
	pthread_sigmask(SIG_SETMASK, &w->saved_mask, NULL);
	w->waking = 0;
}

int engine_wake_take(void)
{
	if (!wake_pending)
		return 0;
	wake_pending = 0;
	return 1;
}

void engine_wake_clear(void)
{
	wake_pending = 0;
}
