/* store: memfd- or file-backed data of the simulated drive. */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int store_open(struct store *s, const char *path, uint64_t size)
{
	int r;

	s->base = MAP_FAILED;
	s->size = size;
	/* memfd: sparse, zero-filled and punchable, so a trimmed or erased
	 * drive returns its memory. */
	s->fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)
		     : memfd_create("simssd", MFD_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	if (ftruncate(s->fd, (off_t)size) < 0)
		goto fail;
	s->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, s->fd, 0);
	if (s->base == MAP_FAILED)
		goto fail;
	return 0;
fail:
	r = -errno;
	store_close(s);
	return r;
}

void store_close(struct store *s)
{
	if (s->base != MAP_FAILED && s->base)
		munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
	s->base = MAP_FAILED;
	s->fd = -1;
}

int store_punch(struct store *s, uint64_t off, uint64_t len)
{
	if (off > s->size || len > s->size - off)
		return -EINVAL;
	if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) ==
	    0)
		return 0;
	/* A store file on a filesystem without holes: zero it by hand. */
	memset(s->base + off, 0, len);
	return 0;
}
