/* watch: notices a target's file changing size under the daemon: a
 * regular-file target (through its descriptor), a loop device's backing
 * file (by path, while the path still names the file seen at start) and a
 * block device's capacity. Reads only (fstat, stat, one ioctl); what a
 * change means for the target is its caller's to decide. */
#ifndef WEARMON_WATCH_H
#define WEARMON_WATCH_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/tgt.h"

/* What was seen when the target was opened. */
struct watch {
	int file;    /* a regular-file target: its descriptor's size */
	int backing; /* a loop device: its backing file's size */
	int block;   /* a block device: its capacity */
	uint64_t size;
	dev_t dev;
	ino_t ino;
	uint64_t capacity;
};

/* Note the sizes of the open target tg. fsmode: filesystem mode, where
 * tg->fd is the test file wearmond itself makes and sizes (only the
 * backing file of a loop device is watched then). */
void watch_init(struct watch *w, const struct tgt *tg, int fsmode);

/* Compare with what watch_init saw. Returns 0, or -ESTALE with err naming
 * the file, its size at start and its size now. */
int watch_check(const struct watch *w, const struct tgt *tg, char *err, size_t len);

#endif
