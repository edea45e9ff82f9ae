/* datagen: compressible, never-repeating block contents, generated afresh
 * for every write by eight xoshiro256+ streams in vector registers. */
#include "io/datagen.h"
#include "base/util.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Four 64-bit lanes; gcc and clang lower it to one AVX2 register, or two
 * SSE2 ones on the baseline x86-64 clone. */
typedef uint64_t v4u64 __attribute__((vector_size(32)));

#define ROTL(x, k) (((x) << (k)) | ((x) >> (64 - (k))))

/* xoshiro256+, the cheapest of the family, with four outputs per step:
 * a + d as usual, b + c, a ^ d and b ^ c, all from uniformly distributed
 * state words, for a quarter of the state updates per byte. Their low bits
 * are linear over GF(2) (as xoshiro256+'s are), and a + d and a ^ d share
 * their lowest bit; nothing a compressor or deduplicator can use, which
 * sees bytes, not bits: the output is incompressible to zstd and zlib
 * (tests/unit/test_datagen.c). */
#define XO_STEP(a, b, c, d, o0, o1, o2, o3)                                                        \
	do {                                                                                       \
		v4u64 t_ = (b) << 17;                                                              \
		(o0) = (a) + (d);                                                                  \
		(o1) = (b) + (c);                                                                  \
		(o2) = (a) ^ (d);                                                                  \
		(o3) = (b) ^ (c);                                                                  \
		(c) ^= (a);                                                                        \
		(d) ^= (b);                                                                        \
		(b) ^= (c);                                                                        \
		(a) ^= (d);                                                                        \
		(c) ^= t_;                                                                         \
		(d) = ROTL((d), 45);                                                               \
	} while (0)

#define STEP_BYTES 256 /* two register sets, four 32-byte outputs each */

/* A 32-byte output to dst: plain stores, or with nt non-temporal ones
 * (dst 16-byte aligned), which write the line without reading it first
 * and leave it in no cache. */
#ifdef __SSE2__
#define STORE32(dst, v, nt)                                                                        \
	do {                                                                                       \
		if (nt) {                                                                          \
			__m128i lo_, hi_;                                                          \
			memcpy(&lo_, &(v), 16);                                                    \
			memcpy(&hi_, (const char *)&(v) + 16, 16);                                 \
			_mm_stream_si128((__m128i *)(void *)(dst), lo_);                           \
			_mm_stream_si128((__m128i *)(void *)((dst) + 16), hi_);                    \
		} else {                                                                           \
			memcpy((dst), &(v), 32);                                                   \
		}                                                                                  \
	} while (0)
#define STORE_FENCE() _mm_sfence()
#else
#define STORE32(dst, v, nt) memcpy((dst), &(v), 32)
#define STORE_FENCE() ((void)0)
#endif

/* splitmix64: output k is the finalizer of seed + k * gamma. The macro
 * serves both a scalar and a vector of four. */
#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull
#define SPLITMIX_FINISH(z)                                                                         \
	do {                                                                                       \
		(z) = ((z) ^ ((z) >> 30)) * 0xbf58476d1ce4e5b9ull;                                 \
		(z) = ((z) ^ ((z) >> 27)) * 0x94d049bb133111ebull;                                 \
		(z) ^= (z) >> 31;                                                                  \
	} while (0)

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += SPLITMIX_GAMMA);
	SPLITMIX_FINISH(z);
	return z;
}

/* The lanes' 32 state words: the first 32 outputs of splitmix64 from seed,
 * word j being the finalizer of seed + (j + 1) * gamma, computed four
 * at a time. Dedupe seeds lanes for every 4 KiB unit, where the scalar
 * chain of 32 was a third of the time. */
UTIL_AVX2_CLONES static void seed_lanes(uint64_t st[4][DATAGEN_LANES], uint64_t seed)
{
	const uint64_t g = SPLITMIX_GAMMA;
	const v4u64 four = { 4 * g, 4 * g, 4 * g, 4 * g };
	v4u64 z0 = { seed + g, seed + 2 * g, seed + 3 * g, seed + 4 * g };
	for (int w = 0; w < 4; w++)
		for (int h = 0; h < DATAGEN_LANES; h += 4) {
			v4u64 z = z0;
			z0 += four;
			SPLITMIX_FINISH(z);
			memcpy(&st[w][h], &z, sizeof(z));
		}
}

/* Units of unit bytes from p on (len a multiple of unit): each gets r
 * random bytes from the eight lanes at its start, then, if zeros,
 * unit - r zero bytes. The lanes stay in registers for the whole call; a
 * unit's last random bytes come from one more step, the rest of which is
 * dropped. nt: whole steps at 32-byte aligned places go out as
 * non-temporal stores (the caller fences). */
/* One step of both register sets, its STEP_BYTES out to dst (lanes_units'
 * registers; nt as STORE32). */
#define LANES_STEP(dst, nt)                                                                        \
	do {                                                                                       \
		XO_STEP(a0, b0, c0, d0, o0, o1, o2, o3);                                           \
		XO_STEP(a1, b1, c1, d1, o4, o5, o6, o7);                                           \
		STORE32((dst), o0, nt);                                                            \
		STORE32((dst) + 32, o4, nt);                                                       \
		STORE32((dst) + 64, o1, nt);                                                       \
		STORE32((dst) + 96, o5, nt);                                                       \
		STORE32((dst) + 128, o2, nt);                                                      \
		STORE32((dst) + 160, o6, nt);                                                      \
		STORE32((dst) + 192, o3, nt);                                                      \
		STORE32((dst) + 224, o7, nt);                                                      \
	} while (0)
UTIL_AVX2_CLONES static void lanes_units(uint64_t st[4][DATAGEN_LANES], unsigned char *p,
					 size_t len, size_t unit, size_t r, int zeros, int nt)
{
	v4u64 a0, b0, c0, d0, a1, b1, c1, d1, o0, o1, o2, o3, o4, o5, o6, o7;
	memcpy(&a0, st[0], 32);
	memcpy(&a1, st[0] + 4, 32);
	memcpy(&b0, st[1], 32);
	memcpy(&b1, st[1] + 4, 32);
	memcpy(&c0, st[2], 32);
	memcpy(&c1, st[2] + 4, 32);
	memcpy(&d0, st[3], 32);
	memcpy(&d1, st[3] + 4, 32);
	for (size_t u = 0; u < len; u += unit) {
		unsigned char *q = p + u;
		size_t i = 0;
		/* two loops, so that neither tests nt at each store */
		if (nt && !((uintptr_t)q % 32))
			for (; i + STEP_BYTES <= r; i += STEP_BYTES)
				LANES_STEP(q + i, 1);
		for (; i + STEP_BYTES <= r; i += STEP_BYTES)
			LANES_STEP(q + i, 0);
		if (i < r) {
			v4u64 t[8];
			XO_STEP(a0, b0, c0, d0, t[0], t[2], t[4], t[6]);
			XO_STEP(a1, b1, c1, d1, t[1], t[3], t[5], t[7]);
			memcpy(q + i, t, r - i);
		}
		if (zeros)
			memset(q + r, 0, unit - r);
	}
	memcpy(st[0], &a0, 32);
	memcpy(st[0] + 4, &a1, 32);
	memcpy(st[1], &b0, 32);
	memcpy(st[1] + 4, &b1, 32);
	memcpy(st[2], &c0, 32);
	memcpy(st[2] + 4, &c1, 32);
	memcpy(st[3], &d0, 32);
	memcpy(st[3] + 4, &d1, 32);
}

/* Any number of random bytes. */
static void lanes_bytes(uint64_t st[4][DATAGEN_LANES], unsigned char *p, size_t n, int nt)
{
	if (n)
		lanes_units(st, p, n, n, n, 0, nt);
}

void datagen_init(struct datagen *g, unsigned compress_pct, unsigned dedupe_pct, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	g->compress_pct = compress_pct > 100 ? 100 : compress_pct;
	g->dedupe_pct = dedupe_pct > 100 ? 100 : dedupe_pct;
	g->page_random = datagen_random_bytes(DATAGEN_PAGE, g->compress_pct);
	uint64_t s = seed;
	for (int i = 0; i < 4; i++)
		g->rng[i] = splitmix(&s);
	g->salt = splitmix(&s);
	seed_lanes(g->lanes, splitmix(&s));
}

uint64_t datagen_rand(struct datagen *g)
{
	uint64_t *s = g->rng;
	uint64_t r = ROTL(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = ROTL(s[3], 45);
	return r;
}

void datagen_random(struct datagen *g, void *buf, size_t len)
{
	lanes_bytes(g->lanes, buf, len, 0);
}

void datagen_stream(struct datagen *g, int on)
{
	g->stream = on != 0;
}

size_t datagen_random_bytes(size_t n, unsigned compress_pct)
{
	return n * (100 - compress_pct) / 100;
}

/* A bijective mix of x: distinct inputs give distinct stamps. */
static uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
	x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* One unit: random bytes from st and zeros, and at p = 100 a unique stamp
 * at each 4 KiB boundary of the output stream it covers (pos: its first
 * byte). A unit dedupe may repeat is keyed: its stamp derives from key, its
 * id, with pos 0, so a repeat is exact; any other unit's stamps derive from
 * the stream position, a multiple of 4 KiB, and a keyed stamp from
 * key << 12 | 1, so the two never meet (mix64 is a bijection). Units
 * shorter than a page with odd key start with their zeros, so in a
 * sequential stream two neighbours' zeros form one run: a compressor pays
 * for half as many runs, which at 512 bytes and 2% decides whether zstd
 * compresses at all.
 * zeros: 0 when the unit's zeros are already in place (datagen_block_over).
 * nt: as lanes_units. */
static void unit_fill(const struct datagen *g, uint64_t st[4][DATAGEN_LANES], unsigned char *p,
		      size_t n, uint64_t pos, uint64_t key, int keyed, int zeros, int nt)
{
	size_t r = n == DATAGEN_PAGE ? g->page_random : datagen_random_bytes(n, g->compress_pct);
	if (n < DATAGEN_PAGE && (key & 1)) {
		memset(p, 0, n - r);
		lanes_bytes(st, p + n - r, r, nt);
	} else {
		lanes_bytes(st, p, r, nt);
		if (zeros)
			memset(p + r, 0, n - r);
	}
	if (r)
		return;
	uint64_t first = (pos + DATAGEN_PAGE - 1) / DATAGEN_PAGE * DATAGEN_PAGE;
	for (uint64_t at = first; at < pos + n; at += DATAGEN_PAGE) {
		uint64_t x = mix64(g->salt ^ (keyed ? key << 12 | 1 : at));
		size_t k = pos + n - at < 8 ? (size_t)(pos + n - at) : 8;
		memcpy(p + (at - pos), &x, k);
	}
}

/* Dedupe mode: a repeat regenerates an earlier unit from its id, which
 * seeds the lanes of that unit alone. Seeding is a quarter of a 4 KiB
 * unit's cost, so only the units a repeat may copy are keyed: one fresh
 * unit in DATAGEN_KEEP, picked at random (a fixed stride could keep only
 * one of two block sizes that alternate), the first, and every unit with
 * no random bytes (p = 100, whose only unique bytes are stamps, and a unit
 * shorter than a page from the stream may cover no 4 KiB boundary to carry
 * one). The other fresh units come from the stream like those of a run
 * without dedupe. Returns 1 with *id set for a keyed unit (a repeat or a
 * kept one), 0 for a fresh unit from the stream. */
static int pick_unit(struct datagen *g, size_t n, uint64_t *id)
{
	/* Error diffusion: the repeats are d% of the units, give or take one. */
	g->dedupe_acc += g->dedupe_pct;
	if (g->ring_n && g->dedupe_acc >= 100) {
		g->dedupe_acc -= 100;
		for (int tries = 0; tries < 4; tries++) {
			const struct datagen_unit *u = &g->ring[datagen_rand(g) % g->ring_n];
			if (u->len == n) {
				g->repeats++;
				*id = u->id;
				return 1;
			}
		}
		/* none of that length: a later unit repeats instead (bounded,
		 * for a length that never comes back) */
		if (g->dedupe_acc < 400)
			g->dedupe_acc += 100;
	}
	if (g->ring_n && g->compress_pct < 100 && datagen_rand(g) % DATAGEN_KEEP)
		return 0;
	*id = g->next_id++;
	g->ring[g->ring_head] = (struct datagen_unit){ *id, (uint32_t)n };
	g->ring_head = (g->ring_head + 1) % DATAGEN_RING;
	if (g->ring_n < DATAGEN_RING)
		g->ring_n++;
	return 1;
}

/* A keyed unit (see pick_unit) into p: returns 1, or 0 when the unit is
 * to come from the stream instead. */
static int dedupe_unit(struct datagen *g, unsigned char *p, size_t n, int zeros, int nt)
{
	uint64_t id;
	if (!pick_unit(g, n, &id))
		return 0;
	uint64_t st[4][DATAGEN_LANES];
	seed_lanes(st, g->salt ^ mix64(id + 1));
	/* The stamp follows the unit, not the stream, so repeats are exact. */
	unit_fill(g, st, p, n, 0, id, 1, zeros, nt);
	return 1;
}

/* The layout of a block of len bytes made now: where its zeros and (at
 * p = 100) its stamps lie, as a nonzero tag; 0 when it has no zeros to
 * keep or depends on more than len and the position in the page (a unit
 * shorter than a page puts its zeros first or last by its key). */
static uint64_t layout_of(const struct datagen *g, size_t len)
{
	if (!g->compress_pct || !len || len % DATAGEN_PAGE)
		return 0;
	return ((uint64_t)len << 12 | g->pos % DATAGEN_PAGE) + 1;
}

uint64_t datagen_block_over(struct datagen *g, void *buf, size_t len, uint64_t prev)
{
	unsigned char *p = buf;
	uint64_t layout = layout_of(g, len);
	int zeros = !layout || layout != prev;
	int nt = g->stream && len >= DATAGEN_STREAM_MIN;
	if (!g->dedupe_pct && (!g->compress_pct || (layout && g->page_random))) {
		/* All units random, or all whole pages with random bytes (no
		 * stamps): one pass, the lanes stay in registers. */
		if (!g->compress_pct)
			lanes_bytes(g->lanes, p, len, nt);
		else
			lanes_units(g->lanes, p, len, DATAGEN_PAGE, g->page_random, zeros, nt);
		g->pos += len;
		g->units += (len + DATAGEN_PAGE - 1) / DATAGEN_PAGE;
	} else {
		for (size_t off = 0; off < len; off += DATAGEN_PAGE) {
			size_t n = len - off < DATAGEN_PAGE ? len - off : DATAGEN_PAGE;
			if (!g->dedupe_pct || !dedupe_unit(g, p + off, n, zeros, nt))
				unit_fill(g, g->lanes, p + off, n, g->pos, g->units, 0, zeros, nt);
			g->pos += n;
			g->units++;
		}
	}
	/* Non-temporal stores are weakly ordered: all of them are done
	 * before the block is handed on. */
	if (nt)
		STORE_FENCE();
	return layout;
}

void datagen_block(struct datagen *g, void *buf, size_t len)
{
	datagen_block_over(g, buf, len, 0);
}
