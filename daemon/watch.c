/* watch: a target's file or device that changes size under the daemon. */
#include "watch.h"

#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "base/identity.h"

void watch_init(struct watch *w, const struct tgt *tg, int fsmode)
{
	struct stat st;
	uint64_t cap;

	memset(w, 0, sizeof(*w));
	if (!tg->is_block && !fsmode && tg->fd >= 0 && fstat(tg->fd, &st) == 0) {
		w->file = 1;
		w->size = (uint64_t)st.st_size;
	}
	if (tg->is_block && tg->backing_file[0] && stat(tg->backing_file, &st) == 0) {
		w->backing = 1;
		w->size = (uint64_t)st.st_size;
		w->dev = st.st_dev;
		w->ino = st.st_ino;
	}
	if (tg->is_block && !fsmode && tg->fd >= 0 && ioctl(tg->fd, BLKGETSIZE64, &cap) == 0) {
		w->block = 1;
		w->capacity = cap;
	}
}

static int changed(char *err, size_t len, const char *what, const char *path, const char *of,
		   uint64_t was, uint64_t now)
{
	snprintf(err, len,
		 "%s %s%s changed size under wearmond: %llu bytes at start, %llu bytes now "
		 "(%s by another program); the measurements no longer cover what was configured",
		 what, path, of, (unsigned long long)was, (unsigned long long)now,
		 now < was ? "truncated" : "extended");
	return -ESTALE;
}

int watch_check(const struct watch *w, const struct tgt *tg, char *err, size_t len)
{
	struct stat st;
	uint64_t cap;
	char of[PATH_MAX + 32];

	if (w->file && tg->fd >= 0 && fstat(tg->fd, &st) == 0 && (uint64_t)st.st_size != w->size)
		return changed(err, len, "target file", tg->path, "", w->size,
			       (uint64_t)st.st_size);
	/* a path that names another file now is not the file attached: its
	 * size says nothing about the device */
	if (w->backing && stat(tg->backing_file, &st) == 0 &&
	    identity_same_file(&st, (uint64_t)w->dev, (uint64_t)w->ino) &&
	    (uint64_t)st.st_size != w->size) {
		snprintf(of, sizeof(of), " of loop device %s", tg->path);
		return changed(err, len, "backing file", tg->backing_file, of, w->size,
			       (uint64_t)st.st_size);
	}
	if (w->block && tg->fd >= 0 && ioctl(tg->fd, BLKGETSIZE64, &cap) == 0 && cap != w->capacity)
		return changed(err, len, "block device", tg->path, "", w->capacity, cap);
	return 0;
}
