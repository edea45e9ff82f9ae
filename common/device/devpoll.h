/* devpoll: the drive's own evidence over one iteration: a reading of its
 * logs (devstat.h) at the start, one every DEVPOLL_INTERVAL seconds for the
 * highest temperature (never per I/O), and one at the end. The reads run in
 * a thread of their own, as wear_health's do, so a stop never waits for a
 * drive slow to answer. Never writes to a device. */
#ifndef WEARMON_DEVPOLL_H
#define WEARMON_DEVPOLL_H

#include <stdatomic.h>

#include "device/devstat.h"
#include "device/tgt.h"

/* Seconds between two polls of a drive during an iteration. */
#define DEVPOLL_INTERVAL 5.0

/* Whether tg has a source of its own evidence: an NVMe or SCSI/ATA block
 * device, or a loop device with a counters file beside its image
 * (common/device/wear.h). Returns 1 or 0. */
int devpoll_has_source(const struct tgt *tg);

/* Read every source tg has into d (zeroed first; d->source NULL when none
 * answered). Blocks while the drive answers. */
void devpoll_read(const struct tgt *tg, struct devstat *d);

struct devpoll;

/* Start watching tg: the first reading is taken before this returns, then
 * one every interval_s seconds. A stop (*stop nonzero) that the reading
 * outlasts by WEAR_STOP_GRACE abandons it. Returns 0 with *out, 0 with
 * *out NULL when tg has no source (devpoll_has_source), -EINTR when
 * abandoned, or -errno. */
int devpoll_begin(const struct tgt *tg, double interval_s, const atomic_int *stop,
		  struct devpoll **out);

/* Take the last reading and fill out with the iteration's evidence (all
 * unknown when p is NULL or the reading was abandoned on a stop: once the
 * stop flag is up, a reading not already there is not waited for); frees
 * p. */
void devpoll_end(struct devpoll *p, struct devstat_delta *out);

#endif
