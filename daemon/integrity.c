/* integrity: the background integrity check of the database (see
 * integrity.h). */
#include "integrity.h"

#include <errno.h>
#include <stdio.h>
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

/* Sleeps until the next check is due or a stop is asked for. Returns 0
 * when due, -EINTR when stopping. */
static int wait_next(struct integrity *g, double due)
{
	while (!atomic_load(&g->stop)) {
		if (util_now() >= due)
			return 0;
		struct timespec ts = { 0, 200 * 1000000L };
		nanosleep(&ts, NULL);
	}
	return -EINTR;
}

static void *run(void *arg)
{
	struct integrity *g = arg;
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
	return NULL;
}

int integrity_start(struct integrity *g, const char *path)
{
	memset(g, 0, sizeof(*g));
	util_strlcpy(g->path, path, sizeof(g->path));
	db_check_ctl_init(&g->ctl);
	int rc = pthread_create(&g->thread, NULL, run, g);
	if (rc) {
		db_check_ctl_fini(&g->ctl);
		return -rc;
	}
	/* the tests tell its reads from the daemon's by this name */
	pthread_setname_np(g->thread, "wm-integrity");
	g->started = 1;
	return 0;
}

int integrity_take(struct integrity *g, struct integrity_verdict *v)
{
	if (!g->started || !atomic_load(&g->ready))
		return 0;
	*v = g->v;
	atomic_store(&g->ready, 0);
	return 1;
}

void integrity_stop(struct integrity *g)
{
	if (!g->started)
		return;
	atomic_store(&g->stop, 1);
	db_check_interrupt(&g->ctl);
	pthread_join(g->thread, NULL);
	db_check_ctl_fini(&g->ctl);
	g->started = 0;
}
