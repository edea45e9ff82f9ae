/* devpoll: the drive's own evidence over one iteration: a reading of its
 * logs (devstat.h) at the start, one every poll interval (device_poll_
 * interval, DEVPOLL_INTERVAL by default: the highest temperature and the
 * series the cause of an alert is judged on; never per I/O), one when the
 * caller marks a phase edge, and one at the end. The reads run in a thread
 * of their own, as wear_health's do, so a stop never waits for a drive
 * slow to answer. Never writes to a device. */
#ifndef WEARMON_DEVPOLL_H
#define WEARMON_DEVPOLL_H

#include <stdatomic.h>

#include "db/db.h"
#include "device/devstat.h"
#include "device/tgt.h"

/* Seconds between two polls of a drive during an iteration by default
 * (device_poll_interval): a temperature spike of two seconds is seen. */
#define DEVPOLL_INTERVAL 1.0

/* One reading, when it was begun (CLOCK_MONOTONIC ns, util_now_ns). */
struct devpoll_reading {
	uint64_t t_ns;
	struct devstat d;
};

/* Whether tg has a source of its own evidence: an NVMe or SCSI/ATA block
 * device, or a loop device with a counters file beside its image
 * (common/device/wear.h). Returns 1 or 0. */
int devpoll_has_source(const struct tgt *tg);

/* Read every source tg has into d (zeroed first; d->source NULL when none
 * answered); why a figure is missing is logged once per device
 * (devnote.h). Blocks while the drive answers. */
void devpoll_read(const struct tgt *tg, struct devstat *d);

struct devpoll;

/* Start watching tg: the first reading is taken before this returns, then
 * one every interval_s seconds. A stop (*stop nonzero) that the reading
 * outlasts by WEAR_STOP_GRACE abandons it. Returns 0 with *out, 0 with
 * *out NULL when tg has no source (devpoll_has_source), -EINTR when
 * abandoned, or -errno. */
int devpoll_begin(const struct tgt *tg, double interval_s, const atomic_int *stop,
		  struct devpoll **out);

/* Take a reading now, besides the interval's (a phase begins); returns at
 * once. NULL is fine. */
void devpoll_mark(struct devpoll *p);

/* Take the last reading and fill out with the iteration's evidence (all
 * unknown when p is NULL or the reading was abandoned on a stop: once the
 * stop flag is up, a reading not already there is not waited for); frees
 * p. */
void devpoll_end(struct devpoll *p, struct devstat_delta *out);

/* devpoll_end, and every reading taken, oldest first, into *v (malloc'd,
 * free it; NULL and *n 0 when none, or out of memory). */
void devpoll_end_series(struct devpoll *p, struct devstat_delta *out, struct devpoll_reading **v,
			size_t *n);

/* The evidence of an iteration as its row stores it (iterations.device_*). */
void devpoll_evidence(const struct devstat_delta *x, struct db_device_evidence *d);

#endif
