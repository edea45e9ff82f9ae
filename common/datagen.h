/* datagen: block contents with a chosen compressibility, unique per write so
 * that neither compression nor deduplication in a controller can cheat.
 * Pure CPU work on caller buffers; no I/O, no allocation. */
#ifndef WEARMON_DATAGEN_H
#define WEARMON_DATAGEN_H

#include <stddef.h>
#include <stdint.h>

/* Chunk in which the compressible share is laid out (fio's default). */
#define DGEN_CHUNK 512
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

/* Fill buf: in every DGEN_CHUNK, (100-p)% random bytes then p% zeros. */
void dgen_fill(struct dgen *g, void *buf, size_t len);

/* Make buf unique: overwrite 8 bytes at the start of every DGEN_STAMP_EVERY
 * bytes (and at 0) with a value never issued before by this generator.
 * Cheap enough to call before every write. */
void dgen_stamp(struct dgen *g, void *buf, size_t len);

#endif
