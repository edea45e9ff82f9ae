/* integrity: the background integrity check of the database (see
 * integrity.h). */
#include "integrity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

/* linux/ioprio.h: the idle class gets the disk only when nobody else
 * wants it */
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_WHO_PROCESS 1

/* This thread only: nice 19 and the idle I/O class (on Linux both apply to
 * the calling thread when given its thread id). */
static void lower_priority(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (setpriority(PRIO_PROCESS, (id_t)tid, 19) != 0)
		log_msg(LOG_DEBUG, "integrity check: cannot lower its CPU priority: %s",
			strerror(errno));
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, tid,
		    IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT) != 0)
		log_msg(LOG_DEBUG, "integrity check: cannot lower its I/O priority: %s",
			strerror(errno));
}

/* Sleeps until the next check is due or a stop is asked for (the
 * condition variable: a stop wakes it at once). Returns 0 when due,
 * -EINTR when stopping. */
static int wait_next(struct integrity_shared *g, double due)
{
	int ret = 0;

	pthread_mutex_lock(&g->lock);
	while (!atomic_load(&g->stop)) {
		double left = due - util_now();
		if (left <= 0)
			break;
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)left;
		until.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	if (atomic_load(&g->stop))
		ret = -EINTR;
	pthread_mutex_unlock(&g->lock);
	return ret;
}

/* Let go of the shared state; the last one frees it. */
static void release(struct integrity_shared *g)
{
	if (atomic_fetch_sub(&g->refs, 1) != 1)
		return;
	db_check_ctl_fini(&g->ctl);
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

static void *run(void *arg)
{
	struct integrity_shared *g = arg;
	const struct db_check_opts o = {
		.stepwise = 1,
		.pause_ms = INTEGRITY_PAUSE_MS,
		.ctl = &g->ctl,
	};
	struct integrity_verdict v;
	double due = util_now();

	lower_priority();
	while (!wait_next(g, due)) {
		double t0 = util_now();
		memset(&v, 0, sizeof(v));
		v.ret = db_check_file(g->path, &o, &v.r, v.err, sizeof(v.err));
		v.seconds = util_now() - t0;
		due = util_now() + INTEGRITY_EVERY;
		if (v.ret == -EINTR)
			break;
		while (atomic_load(&g->ready) && !atomic_load(&g->stop))
			wait_next(g, util_now() + 0.2); /* the last verdict not taken yet */
		g->v = v;
		atomic_store(&g->ready, 1);
	}
	release(g);
	return NULL;
}

int integrity_start(struct integrity *g, const char *path)
{
	struct integrity_shared *sh = calloc(1, sizeof(*sh));
	pthread_condattr_t ca;

	memset(g, 0, sizeof(*g));
	if (!sh)
		return -ENOMEM;
	util_strlcpy(sh->path, path, sizeof(sh->path));
	atomic_store(&sh->refs, 2); /* the thread's and ours */
	db_check_ctl_init(&sh->ctl);
	pthread_mutex_init(&sh->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* util_now's clock */
	pthread_cond_init(&sh->wake, &ca);
	pthread_condattr_destroy(&ca);
	int rc = pthread_create(&g->thread, NULL, run, sh);
	if (rc) {
		atomic_store(&sh->refs, 1);
		release(sh);
		return -rc;
	}
	/* the tests tell its reads from the daemon's by this name */
	pthread_setname_np(g->thread, "wm-integrity");
	g->sh = sh;
	g->started = 1;
	return 0;
}

int integrity_take(struct integrity *g, struct integrity_verdict *v)
{
	if (!g->started || !atomic_load(&g->sh->ready))
		return 0;
	*v = g->sh->v;
	atomic_store(&g->sh->ready, 0);
	return 1;
}

void integrity_stop(struct integrity *g)
{
	struct integrity_shared *sh = g->sh;
	struct timespec until;

	if (!g->started)
		return;
	pthread_mutex_lock(&sh->lock);
	atomic_store(&sh->stop, 1);
	pthread_cond_signal(&sh->wake);
	pthread_mutex_unlock(&sh->lock);
	db_check_interrupt(&sh->ctl);
	clock_gettime(CLOCK_REALTIME, &until); /* pthread_timedjoin_np's clock */
	until.tv_nsec += (long)(INTEGRITY_JOIN_WAIT * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (pthread_timedjoin_np(g->thread, NULL, &until)) {
		log_msg(LOG_DEBUG,
			"integrity check: still in a read of the database after "
			"%.1f s; left to end with the process",
			INTEGRITY_JOIN_WAIT);
		pthread_detach(g->thread);
	}
	release(sh);
	g->sh = NULL;
	g->started = 0;
}
