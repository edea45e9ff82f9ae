/* series: the drive's readings during one iteration (devpoll.h) as the rows
 * of device_series: each on the clock of the phase it falls in (the
 * samples' clock), its counters since the iteration's first reading, and
 * the host's stalls up to it (hstall.h). Pure: reads no device or clock. */
#ifndef WEARMON_SERIES_H
#define WEARMON_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "base/hstall.h"
#include "db/db.h"
#include "device/devpoll.h"

/* When the phases of the iteration began (util_now_ns; 0: the phase did
 * not run): a reading belongs to the latest phase begun before it, and one
 * before the first phase to that phase's start. */
struct series_clock {
	uint64_t fill_t0, measure_t0;
};

/* The n readings v (oldest first) as rows into *out (malloc'd, free it;
 * NULL and 0 rows when n is 0), with the stalls st[0..nst) of the host.
 * Two readings in the same millisecond of a phase keep the later one.
 * Returns 0 or -ENOMEM. */
int series_build(const struct devpoll_reading *v, size_t n, const struct series_clock *c,
		 const struct hstall *st, size_t nst, struct db_dev_point **out, size_t *nout);

#endif
