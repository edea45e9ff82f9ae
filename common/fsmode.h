/* fsmode: filesystem mode: make ext4/xfs on the target device, mount it at a
 * private mount point and hand out the test file, as the seed's sysbench
 * experiment did. Only ever formats the device the target opened. */
#ifndef WEARMON_FSMODE_H
#define WEARMON_FSMODE_H

#include <limits.h>
#include <stdint.h>

#include <stdatomic.h>

#include "cfg.h"
#include "tgt.h"

struct fsmode {
	char mnt[PATH_MAX];       /* private mount point, "" when none */
	char file[PATH_MAX + 32]; /* the test file */
	int mounted;
	unsigned formats; /* mkfs runs so far */
};

/* Release the device, make the filesystem (mkfs_options; mkfs runs as a
 * controlled child, see spawn.h, killed when *stop is set or after
 * t->command_timeout), mount it and open the test file O_DIRECT as tg->fd.
 * Returns 0, -EINTR when stopped, or -errno with err set. */
int fsmode_setup(struct fsmode *fs, struct tgt *tg, const struct cfg_target *t,
		 const atomic_int *stop, char *err, size_t errlen);

/* Close the test file and unmount. Returns 0 or -errno with err set. */
int fsmode_teardown(struct fsmode *fs, struct tgt *tg, char *err, size_t errlen);

/* Bytes the test file occupies on the filesystem (its allocation). */
int64_t fsmode_allocated(const struct fsmode *fs);

/* Build the argv of mkfs for t and dev into argv (at most max entries,
 * NULL-terminated, pointing into buf). Returns the count or -E2BIG. */
int fsmode_mkfs_argv(const struct cfg_target *t, const char *dev, char *buf, size_t buflen,
		     char **argv, int max);

#endif
