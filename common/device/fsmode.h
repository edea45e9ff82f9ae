/* fsmode: filesystem mode: make ext4/xfs on the target device, mount it at a
 * private mount point and hand out the test file, as the seed's sysbench
 * experiment did; at start, the daemon's own mount namespace and the removal
 * of mount points an earlier process left. Only ever formats the device the
 * target opened, and only ever removes mount points named as its own. */
#ifndef WEARMON_FSMODE_H
#define WEARMON_FSMODE_H

#include <limits.h>
#include <stdint.h>

#include <stdatomic.h>
#include <sys/types.h>

#include "config/cfg.h"
#include "device/tgt.h"

struct fsmode {
	char mnt[PATH_MAX];       /* private mount point, "" when none */
	int mnt_fd;               /* open on mnt while mnt is set, flock()ed: in use */
	char file[PATH_MAX + 32]; /* the test file */
	int mounted;
	unsigned formats; /* mkfs runs so far */
	char uuid[64];    /* the UUID of the filesystem the last mkfs made; "" unknown */
};

/* What a target in filesystem mode does at start, before its first size. */
enum fsmode_plan {
	FSMODE_FORMAT_EACH_SIZE, /* nothing: every size starts with a new filesystem */
	FSMODE_FORMAT_START,     /* mkfs: the campaign starts at this size */
	FSMODE_REMOUNT,          /* mount the filesystem made earlier again */
};

/* Where the target resumes, as read from the database. */
struct fsmode_resume {
	int resume;       /* 1: an unfinished cycle continues */
	long cycle;       /* the cycle to continue or begin */
	long first_cycle; /* first cycle of the campaign */
	long cycles_done; /* cycles finished in the campaign */
	int size_index;   /* first size to run (when resume) */
	int at_action;    /* 1: the cycle resumes at its between-cycles action */
	int mid_size;     /* 1: rows of that size were done before the restart:
			     their data must stay (a read-back reads it) */
};

/* Which of the plans applies: the configuration formats before the first
 * size of the campaign (and, with format_each_size, before every size, but
 * never before a between-cycles action); secure-erase destroys the
 * filesystem, which then no longer mounts. Returns the plan. */
enum fsmode_plan fsmode_plan_of(const struct cfg_target *t, const struct fsmode_resume *r);

/* Mount the filesystem made earlier on the device again and open the test
 * file as tg->fd, as fsmode_setup does after mkfs. Returns 0, -EUCLEAN
 * when it mounts but holds files wearmon did not make (unmounted again),
 * or -errno; err says why. */
int fsmode_remount(struct fsmode *fs, struct tgt *tg, const struct cfg_target *t, char *err,
		   size_t errlen);

/* A target whose stale mount points fsmode_sweep may remove: its name and
 * its block device (0 when it is none). */
struct fsmode_own {
	const char *name;
	dev_t dev;
};

/* Whether entry is a mount point name fsmode gives the target name
 * ("wearmon-NAME-" and mkdtemp's six letters or digits). Returns 1 or 0. */
int fsmode_own_name(const char *entry, const char *name);

/* Remove what an earlier process left in base (NULL: the runtime directory
 * mount points go to): mounts there of an own name whose device is the
 * target's (unmounted, never lazily), then empty directories of an own name
 * that no running wearmond holds. Each removal is logged. Returns how many
 * were removed, or -errno when base cannot be read. */
int fsmode_sweep(const char *base, const struct fsmode_own *own, int n);

/* Start-up outside --check, before any thread exists: fsmode_sweep for the
 * targets of c, then, when one of them uses filesystem mode, a mount
 * namespace of the daemon's own (see fsmode_private_mounts). Problems are
 * logged; start-up goes on. Returns 0 or -errno from the namespace. */
int fsmode_start(const struct cfg *c);

/* Enter a new mount namespace whose mounts do not propagate back to the
 * one the process started in, so that mounts made from now on vanish with
 * the process, kill -9 included. Must run before any thread is created
 * (unshare(2) refuses CLONE_NEWNS in a threaded process). Returns 0 or
 * -errno with err set. */
int fsmode_private_mounts(char *err, size_t errlen);

/* Release the device, make the filesystem (mkfs_options; mkfs runs as a
 * controlled child, see spawn.h, killed when *stop is set or after
 * t->command_timeout), note its UUID in fs->uuid, mount it and open the
 * test file O_DIRECT as tg->fd. Returns 0, -EINTR when stopped, or -errno
 * with err set. */
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
