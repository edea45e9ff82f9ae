/* hstall: the ticker thread that notices when the process did not run, and
 * the pure accounting of those stalls. */
#include "base/hstall.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "base/log.h"

#define SYNC_WAIT_NS 2000000000ull /* hstall_since waits at most this for a tick */

int hstall_tick(struct hstall_watch *w, uint64_t mono, uint64_t boot, uint64_t period,
		struct hstall *out)
{
	int stalled = 0;

	if (w->started && mono >= w->mono && boot >= w->boot) {
		uint64_t due = w->mono + period;
		uint64_t late = mono > due ? mono - due : 0;
		uint64_t dm = mono - w->mono, db = boot - w->boot;
		uint64_t susp = db > dm ? db - dm : 0;
		if (late >= HSTALL_MIN_NS || susp >= HSTALL_MIN_NS) {
			out->start = mono > due ? due : mono;
			out->end = mono;
			out->suspended_ns = susp >= HSTALL_MIN_NS ? susp : 0;
			stalled = 1;
		}
	}
	w->mono = mono;
	w->boot = boot;
	w->started = 1;
	return stalled;
}

uint64_t hstall_within(const struct hstall *v, size_t n, uint64_t a, uint64_t b,
		       uint64_t *suspended)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t lo = v[i].start > a ? v[i].start : a;
		uint64_t hi = v[i].end < b ? v[i].end : b;
		if (hi > lo)
			sum += hi - lo;
		if (suspended && v[i].end > a && v[i].end <= b)
			*suspended += v[i].suspended_ns;
	}
	return sum;
}

/* ---- the ticker ---- */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;   /* the ticker sleeps on it: its period or a request */
	pthread_cond_t ticked; /* hstall_since waits on it for a tick */
	pthread_t thread;
	int running, stopping, asked;
	uint64_t last; /* CLOCK_MONOTONIC of the latest tick */
	struct hstall_watch w;
	struct hstall v[HSTALL_KEEP]; /* stall k at v[k % HSTALL_KEEP] */
	uint64_t n;                   /* stalls seen */
} tk = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct timespec at_ns(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	return ts;
}

/* Wake every HSTALL_TICK_NS (or when asked) and look at the clocks. It
 * does nothing else: no I/O, no database, so that a late tick means the
 * process was not run, never that a device or a lock was slow. */
static void *ticker(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&tk.lock);
	while (!tk.stopping) {
		struct hstall s;
		uint64_t mono = clock_ns(CLOCK_MONOTONIC);
		int stalled =
			hstall_tick(&tk.w, mono, clock_ns(CLOCK_BOOTTIME), HSTALL_TICK_NS, &s);
		if (stalled)
			tk.v[tk.n++ % HSTALL_KEEP] = s;
		tk.last = mono;
		pthread_cond_broadcast(&tk.ticked);
		if (stalled) { /* the log may block: not under the lock */
			pthread_mutex_unlock(&tk.lock);
			log_msg(LOG_NOTICE,
				"wearmond did not run for %.1f s%s (stopped, a paused VM or a "
				"suspended host): a host stall, not the drive's",
				(double)(s.end - s.start + s.suspended_ns) / 1e9,
				s.suspended_ns ? ", the host suspended" : "");
			pthread_mutex_lock(&tk.lock);
		}
		struct timespec until = at_ns(mono + HSTALL_TICK_NS);
		int rc = 0;
		while (!tk.stopping && !tk.asked && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&tk.wake, &tk.lock, &until);
		tk.asked = 0;
	}
	pthread_mutex_unlock(&tk.lock);
	return NULL;
}

/* cond on CLOCK_MONOTONIC, like the times it waits for. Returns 0 or errno. */
static int cond_mono(pthread_cond_t *c)
{
	pthread_condattr_t at;
	int rc = pthread_condattr_init(&at);

	if (rc)
		return rc;
	rc = pthread_condattr_setclock(&at, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(c, &at);
	pthread_condattr_destroy(&at);
	return rc;
}

int hstall_init(void)
{
	int rc = 0;

	pthread_mutex_lock(&tk.lock);
	if (tk.running)
		goto out;
	rc = cond_mono(&tk.wake);
	if (rc)
		goto out;
	rc = cond_mono(&tk.ticked);
	if (rc) {
		pthread_cond_destroy(&tk.wake);
		goto out;
	}
	tk.stopping = tk.asked = 0;
	tk.w.started = 0;
	tk.last = 0;
	rc = pthread_create(&tk.thread, NULL, ticker, NULL);
	if (rc) {
		pthread_cond_destroy(&tk.wake);
		pthread_cond_destroy(&tk.ticked);
		goto out;
	}
	tk.running = 1;
out:
	pthread_mutex_unlock(&tk.lock);
	return -rc;
}

void hstall_fini(void)
{
	pthread_mutex_lock(&tk.lock);
	if (!tk.running) {
		pthread_mutex_unlock(&tk.lock);
		return;
	}
	tk.stopping = 1;
	pthread_cond_signal(&tk.wake);
	pthread_mutex_unlock(&tk.lock);
	pthread_join(tk.thread, NULL);
	pthread_mutex_lock(&tk.lock);
	tk.running = 0;
	pthread_cond_destroy(&tk.wake);
	pthread_cond_destroy(&tk.ticked);
	pthread_mutex_unlock(&tk.lock);
}

size_t hstall_since(uint64_t since, struct hstall *out, size_t max)
{
	size_t got = 0;

	pthread_mutex_lock(&tk.lock);
	if (tk.running) {
		uint64_t asked = clock_ns(CLOCK_MONOTONIC);
		struct timespec until = at_ns(asked + SYNC_WAIT_NS);
		int rc = 0;
		tk.asked = 1;
		pthread_cond_signal(&tk.wake);
		while (tk.last < asked && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&tk.ticked, &tk.lock, &until);
	}
	for (uint64_t k = tk.n > HSTALL_KEEP ? tk.n - HSTALL_KEEP : 0; k < tk.n && got < max; k++)
		if (tk.v[k % HSTALL_KEEP].end > since)
			out[got++] = tk.v[k % HSTALL_KEEP];
	pthread_mutex_unlock(&tk.lock);
	return got;
}
