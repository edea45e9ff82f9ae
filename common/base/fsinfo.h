/* fsinfo: the filesystem a path lives on, as people name it (its mount
 * point, type and source) with its free space and whether it is read-only,
 * for messages about a full or read-only filesystem. Reads statvfs(2) and
 * /proc/self/mountinfo; knows nothing of databases or targets. */
#ifndef WEARMON_FSINFO_H
#define WEARMON_FSINFO_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct fsinfo {
	char mount[PATH_MAX]; /* mount point; "" when mountinfo does not say */
	char type[32];        /* "ext4"; "" when unknown */
	char source[256];     /* "/dev/loop3"; "" when unknown */
	uint64_t size;        /* bytes */
	uint64_t free;        /* bytes available, as df(1) counts them (not the
				 blocks a filesystem reserves for root) */
	int readonly;
};

/* The filesystem of path, or of its directory when path does not exist.
 * Returns 0 or -errno. */
int fsinfo_of(const char *path, struct fsinfo *fi);

/* "filesystem /var/lib (ext4 on /dev/sda2): 0 bytes free of 19.5 MiB,
 * read-only" into buf. Returns buf. */
char *fsinfo_text(const struct fsinfo *fi, char *buf, size_t len);

/* Whether mountinfo's mount point mnt (escapes undone) contains path
 * (both absolute, no trailing slash but for "/"). Returns 1 or 0. */
int fsinfo_contains(const char *mnt, const char *path);

#endif
