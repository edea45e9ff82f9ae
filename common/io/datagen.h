/* datagen: block contents with a chosen compressibility and dedupe share,
 * fresh for every write so that neither compression nor deduplication in a
 * controller, a filesystem or a volume manager can cheat.
 * Pure CPU work on caller buffers; no I/O and no allocation: the caller owns
 * struct datagen (about 17 KiB with its dedupe ring, so not for a small stack). */
#ifndef WEARMON_DATAGEN_H
#define WEARMON_DATAGEN_H

#include <stddef.h>
#include <stdint.h>

/* Layout: a block is cut into units of DATAGEN_PAGE bytes from its start (the
 * last one, or a whole block shorter than a page, may be shorter). Each unit
 * holds floor(n * (100-p) / 100) fresh random bytes then zeros, like fio's
 * buffer_compress_chunk (every other unit shorter than a page has its zeros
 * first): so a 512-byte block holds (100-p)% random bytes,
 * and any compressor, whatever span it sees (a block, a page, the whole
 * stream, a 128 MiB window), removes about p%. At p = 100 the stream still
 * carries 8 unique bytes at every 4 KiB of the generator's output, so no
 * two 4 KiB pages of a sequential stream are equal.
 * Dedupe: with d > 0, d% of the units (spread evenly) are exact copies of
 * an earlier unit of the same length (one of the last DATAGEN_RING kept
 * ones, picked at random), the others fresh. One fresh unit in DATAGEN_KEEP
 * (at random; every one at compressibility 100) is kept: generated from its
 * own 64-bit id, so a repeat can make it again. Fresh units never repeat, and no fresh unit equals another
 * (different ids, or different places in the stream). */
#define DATAGEN_PAGE 4096
#define DATAGEN_LANES 8         /* xoshiro256+ streams run side by side */
#define DATAGEN_RING 1024       /* kept units a repeat may copy */
#define DATAGEN_KEEP 8          /* one fresh unit in this many is kept */
#define DATAGEN_STREAM_MIN 4096 /* smallest block datagen_stream applies to */

struct datagen_unit {
	uint64_t id;
	uint32_t len;
};

struct datagen {
	unsigned compress_pct;            /* 0..100 */
	unsigned dedupe_pct;              /* 0..100 */
	size_t page_random;               /* random bytes in a whole page's unit */
	uint64_t lanes[4][DATAGEN_LANES]; /* xoshiro256+ state, one per lane */
	uint64_t rng[4];                  /* xoshiro256** for decisions */
	uint64_t salt;                    /* per-stream constant */
	uint64_t pos;                     /* bytes generated so far */
	uint64_t next_id;                 /* fresh units issued (dedupe mode) */
	uint64_t repeats;                 /* units that were repeats */
	uint64_t units;                   /* units generated */
	unsigned dedupe_acc;              /* error diffusion of the repeats */
	int stream;                       /* datagen_stream */
	unsigned ring_n, ring_head;
	struct datagen_unit ring[DATAGEN_RING];
};

/* Seed a generator: compressibility and dedupe share in percent (0..100,
 * larger values count as 100). */
void datagen_init(struct datagen *g, unsigned compress_pct, unsigned dedupe_pct, uint64_t seed);

/* Next 64 random bits (decisions; not the block contents). */
uint64_t datagen_rand(struct datagen *g);

/* Fill buf with len fresh random bytes (the fast vector path). */
void datagen_random(struct datagen *g, void *buf, size_t len);

/* on: blocks of DATAGEN_STREAM_MIN bytes or more are written with
 * non-temporal stores, which leave them in no cache (off after
 * datagen_init). For buffers something else reads next, a device's DMA or a
 * kernel thread on another CPU: plain stores would first take back each
 * line that reader left in its cache, and then hand it over again. The
 * bytes are the same either way. */
void datagen_stream(struct datagen *g, int on);

/* Make the next block of len bytes in buf per the layout above: every byte
 * is written, nothing of the previous contents survives. */
void datagen_block(struct datagen *g, void *buf, size_t len);

/* datagen_block for a buffer whose contents may still be in place: prev is
 * what this call returned when it last filled buf from this generator (0:
 * unknown, or buf was written since, by a read or anything else). Where
 * the new block has the same layout (length and position in the page) the
 * zeros of its units are already there and only its random bytes and
 * stamps are written; the result is byte for byte datagen_block's.
 * Returns the tag to pass with buf next time (0: nothing to keep). */
uint64_t datagen_block_over(struct datagen *g, void *buf, size_t len, uint64_t prev);

/* Random bytes in a unit of n bytes at compressibility p. */
size_t datagen_random_bytes(size_t n, unsigned compress_pct);

#endif
