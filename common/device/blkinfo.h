/* blkinfo: what a block device holds now, as a person deciding whether to
 * let it be overwritten wants to see it: its partition table and
 * partitions, the filesystem (type, label, UUID) libblkid finds, where any
 * of it is mounted, and whether the drive is rotational. Reads only: it
 * opens the device read-only, never exclusively, and decides nothing. */
#ifndef WEARMON_BLKINFO_H
#define WEARMON_BLKINFO_H

#include <stdint.h>
#include <sys/types.h>

#define BLKINFO_MAX_PARTS 16

/* One partition of the disk and what is on it. */
struct blkinfo_part {
	char name[64];        /* "sdb1", "loop3p1" */
	uint64_t size;        /* bytes (sysfs), 0 when unknown */
	char fstype[32];      /* libblkid TYPE, "" when none found */
	char label[128];      /* LABEL, "" when none */
	char mounted_at[256]; /* first mount point, "" when not mounted */
};

struct blkinfo {
	int probed;           /* 1: libblkid could read the device */
	char sysname[64];     /* "sdb"; "" when sysfs does not know it */
	uint64_t capacity;    /* bytes (sysfs size), 0 when unknown */
	int rotational;       /* 1 spinning, 0 not, -1 unknown (sysfs) */
	char pttype[16];      /* "gpt", "dos", ... "" when no table */
	char fstype[32];      /* TYPE on the whole device: "ext4", "" none */
	char usage[16];       /* USAGE: "filesystem", "raid", "crypto", ... */
	char label[128];      /* LABEL of that filesystem */
	char uuid[64];        /* its UUID */
	char mounted_at[256]; /* where the whole device is mounted, "" */
	int nparts;           /* partitions listed in part[] */
	int more_parts;       /* partitions beyond BLKINFO_MAX_PARTS */
	struct blkinfo_part part[BLKINFO_MAX_PARTS];
};

/* Probe the block device at path into out (zeroed first). A device that
 * cannot be read leaves probed 0 and the sysfs facts that could be read.
 * Returns 0, or -errno when path is no block device. */
int blkinfo_probe(const char *path, struct blkinfo *out);

/* What is on the device, in a few words for a person: "an ext4 filesystem
 * labelled "data" (not mounted)", "a gpt partition table with 2
 * partitions: sdb1 ext4 "boot", sdb2 xfs (mounted on /srv)", "no
 * filesystem or partition table libblkid knows". Returns out. */
char *blkinfo_describe(const struct blkinfo *b, char *out, size_t len);

#endif
