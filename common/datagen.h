/* datagen: block contents with a chosen compressibility, unique per write so
 * that neither compression nor deduplication in a controller can cheat.
 * Pure CPU work on caller buffers; no I/O, no allocation. */
#ifndef WEARMON_DATAGEN_H
#define WEARMON_DATAGEN_H

#include <stddef.h>
#include <stdint.h>

/* Compressibility is defined per page, as SandForce-like controllers
 * compress: a block of DGEN_PAGE or more is compressed on its own, smaller
 * blocks a page of consecutive blocks at a time, each with zstd level 1;
 * compressibility = 1 - compressed / original. Each page (or smaller
 * block) holds (100-p)% random bytes then p% zeros: one run of each, so
 * the compressor's cost per run stays far below a point even at 2%. */
#define DGEN_PAGE 4096
#define DGEN_CHUNK DGEN_PAGE
/* Every this many bytes a block carries a unique 8-byte stamp. */
#define DGEN_STAMP_EVERY 4096

struct dgen {
	unsigned compress_pct;   /* 0..100 */
	uint64_t rng[4];         /* xoshiro256** state */
	uint64_t counter;        /* stamps issued */
	uint64_t salt;           /* per-stream constant mixed into stamps */
};

/* Seed a generator for a given compressibility (0..100). */
void dgen_init(struct dgen *g, unsigned compress_pct, uint64_t seed);

/* Next 64 random bits. */
uint64_t dgen_rand(struct dgen *g);

/* Fill buf: in every DGEN_CHUNK (or the whole of a shorter buf),
 * (100-p)% random bytes then p% zeros. */
void dgen_fill(struct dgen *g, void *buf, size_t len);

/* Make buf unique: overwrite 8 bytes at the start of every DGEN_STAMP_EVERY
 * bytes (and at 0) with a value never issued before by this generator.
 * Cheap enough to call before every write. */
void dgen_stamp(struct dgen *g, void *buf, size_t len);

/* Make the next block of len bytes in buf, a slot buffer that dgen_fill
 * prepared: blocks of DGEN_PAGE or more keep their random bytes and get
 * new stamps (the page is their unit); smaller blocks are generated afresh,
 * since several of them share a page. Either way no two blocks of a
 * generator are identical. */
void dgen_block(struct dgen *g, void *buf, size_t len);

/* Compressibility of buf per the definition above, for blocks of bs bytes
 * written one after the other (len a multiple of bs, or of DGEN_PAGE):
 * percent of the bytes zstd level 1 removes, over all units. Returns
 * -1000 when zstd fails. */
double dgen_measure(const void *buf, size_t len, size_t bs);

#endif
