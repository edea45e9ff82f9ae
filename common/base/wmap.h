/* wmap: which blocks of a span have been written, one bit per unit, for
 * the mapped extents (device/wear.h). The unit is the smallest power of two
 * of at least WMAP_MIN_UNIT bytes that keeps the span within WMAP_MAX_BITS
 * bits, so a map takes at most WMAP_MAX_BITS / 8 bytes (2 MiB) whatever
 * the span: exact at 4 KiB up to a 64 GiB span, then coarser (a write
 * marks every unit it touches, so a unit partly written counts as written:
 * an upper bound). Marking is atomic: the jobs of a phase share one map. */
#ifndef WEARMON_WMAP_H
#define WEARMON_WMAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define WMAP_MIN_UNIT 4096u
#define WMAP_MAX_BITS (1ull << 24)

struct wmap {
	uint64_t offset, len; /* the span, bytes from the device start */
	unsigned shift;       /* unit = 1 << shift bytes */
	size_t nwords;
	_Atomic uint64_t *bits;
};

/* A map of [offset, offset + len) with nothing written. Returns 0 or
 * -ENOMEM. */
int wmap_init(struct wmap *m, uint64_t offset, uint64_t len);

/* Bytes per unit. */
uint64_t wmap_unit(const struct wmap *m);

/* [off, off + len) was written: mark every unit it touches (the part
 * outside the span is ignored). Safe from several threads. */
void wmap_mark(struct wmap *m, uint64_t off, uint64_t len);

/* Bytes of the span written (units marked, the last one cut at the span's
 * end). */
uint64_t wmap_bytes(const struct wmap *m);

/* Call fn for each run of written units, ascending, as [start, end) bytes
 * from the device start, cut at the span's end. Returns 0 or the first
 * nonzero value fn returned. */
int wmap_ranges(const struct wmap *m, int (*fn)(void *arg, uint64_t start, uint64_t end),
		void *arg);

/* Extents kept per list at most (wmap_extents, device/wear.h): 1 MiB of
 * [start, end) pairs. */
#define WMAP_MAX_EXTENTS 65536u

/* Make the sorted, disjoint ranges v[0..n) at most max (>= 1) by joining
 * neighbours across the smallest gaps (the gaps then count as written: an
 * upper bound, exact while n <= max). Returns the new count. */
size_t wmap_coarsen(uint64_t (*v)[2], size_t n, size_t max);

/* The written ranges as a new array in *out (free it), at most
 * WMAP_MAX_EXTENTS of them (wmap_coarsen), their count in *n. Returns 0 or
 * -ENOMEM. */
int wmap_extents(const struct wmap *m, uint64_t (**out)[2], size_t *n);

/* Release (a zeroed map is fine). */
void wmap_free(struct wmap *m);

#endif
