/* store: the bytes the simulated drive holds, in memory (memfd) or in a
 * given file, mapped whole. Knows nothing of flash; the FTL only times. */
#ifndef SIMSSD_STORE_H
#define SIMSSD_STORE_H

#include <stdint.h>

struct store {
	int fd;
	uint8_t *base; /* size bytes, shared mapping of fd */
	uint64_t size;
};

/* Open path (created if missing, sized to size) or, when path is NULL,
 * anonymous memory that starts zeroed. Returns 0 or a negative errno. */
int store_open(struct store *s, const char *path, uint64_t size);

/* Unmap and close; safe on a store that failed to open. */
void store_close(struct store *s);

/* Make [off, off+len) read as zeros and give its memory back.
 * Returns 0 or a negative errno. */
int store_punch(struct store *s, uint64_t off, uint64_t len);

#endif
