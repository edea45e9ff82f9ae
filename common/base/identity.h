/* identity: what makes a device or file "the same one", as one struct and
 * one comparison that says which part differs. Every identity check uses
 * it: start-up against the database (common/db/db_guard.c), each cycle
 * against the device opened (tgt.c), wearmon's own files and writers
 * (tgt_file.c, daemon/guard.c), a backing file's size (daemon/watch.c).
 * Pure: it reads no device and no file. */
#ifndef WEARMON_IDENTITY_H
#define WEARMON_IDENTITY_H

#include <stdint.h>
#include <sys/stat.h>

/* The parts of an identity, as bits of a mask. */
enum identity_part {
	ID_KIND = 1u << 0,       /* "block" or "file" */
	ID_SERIAL = 1u << 1,     /* the drive's serial */
	ID_MODEL = 1u << 2,      /* the drive's model */
	ID_CAPACITY = 1u << 3,   /* bytes */
	ID_BACKING = 1u << 4,    /* a loop device's backing file, its path */
	ID_BACKING_ID = 1u << 5, /* that file's device and inode */
	ID_PATH = 1u << 6,       /* a regular file target's path */
	ID_RDEV = 1u << 7,       /* a block device's device number */
	ID_FILE = 1u << 8,       /* a file's device and inode */
};

/* A device or file as far as it is known: NULL or "" strings and 0
 * numbers (an inode 0 for a device and inode pair) are unknown. */
struct identity {
	const char *kind;
	const char *serial;
	const char *model;
	uint64_t capacity;
	const char *backing;
	uint64_t backing_dev, backing_ino;
	const char *path;
	uint64_t rdev;
	uint64_t dev, ino;
};

/* The parts of mask parts in which was and now differ. A part not in
 * strict is no difference while either side does not know it (a serial
 * that cannot be read); one in strict compares unknown as a value (a
 * backing file that is gone). Returns the mask of differing parts, 0 when
 * the same. */
unsigned identity_diff(const struct identity *was, const struct identity *now, unsigned parts,
		       unsigned strict);

/* Name of one part ("serial", "backing file identity", ...); "?" for
 * anything else. */
const char *identity_part_name(unsigned part);

/* Whether st is the block device number rdev (a node that still names
 * the device opened). Returns 1 or 0. */
int identity_is_device(const struct stat *st, uint64_t rdev);

/* Whether st is the file of device dev and inode ino. Returns 1 or 0. */
int identity_same_file(const struct stat *st, uint64_t dev, uint64_t ino);

#endif
