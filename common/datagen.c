/* datagen: compressible, never-repeating block contents. */
#include "datagen.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void dgen_init(struct dgen *g, unsigned compress_pct, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	g->compress_pct = compress_pct > 100 ? 100 : compress_pct;
	uint64_t s = seed;
	for (int i = 0; i < 4; i++)
		g->rng[i] = splitmix(&s);
	g->salt = splitmix(&s);
}

uint64_t dgen_rand(struct dgen *g)
{
	uint64_t *s = g->rng;
	uint64_t r = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static void fill_random(struct dgen *g, unsigned char *p, size_t n)
{
	while (n >= 8) {
		uint64_t r = dgen_rand(g);
		memcpy(p, &r, 8);
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t r = dgen_rand(g);
		memcpy(p, &r, n);
	}
}

void dgen_fill(struct dgen *g, void *buf, size_t len)
{
	unsigned char *p = buf;
	while (len) {
		size_t chunk = len < DGEN_CHUNK ? len : DGEN_CHUNK;
		size_t zeros = chunk * g->compress_pct / 100;
		fill_random(g, p, chunk - zeros);
		memset(p + chunk - zeros, 0, zeros);
		p += chunk;
		len -= chunk;
	}
}

void dgen_stamp(struct dgen *g, void *buf, size_t len)
{
	unsigned char *p = buf;
	for (size_t off = 0; off + 8 <= len; off += DGEN_STAMP_EVERY) {
		/* A bijective mix of the counter: unique and incompressible. */
		uint64_t x = ++g->counter ^ g->salt;
		x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
		x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
		x ^= x >> 33;
		memcpy(p + off, &x, 8);
	}
}

void dgen_block(struct dgen *g, void *buf, size_t len)
{
	if (len < DGEN_PAGE && g->compress_pct < 100)
		dgen_fill(g, buf, len);
	dgen_stamp(g, buf, len);
}

double dgen_measure(const void *buf, size_t len, size_t bs)
{
	size_t unit = bs < DGEN_PAGE ? DGEN_PAGE : bs;
	size_t cap = ZSTD_compressBound(unit), in = 0, out = 0;
	unsigned char *dst = malloc(cap);

	if (!dst)
		return -1000;
	for (size_t off = 0; off < len; off += unit) {
		size_t n = len - off < unit ? len - off : unit;
		size_t r = ZSTD_compress(dst, cap, (const char *)buf + off, n, 1);
		if (ZSTD_isError(r)) {
			free(dst);
			return -1000;
		}
		in += n;
		out += r;
	}
	free(dst);
	return in ? 100.0 * (1.0 - (double)out / (double)in) : 0;
}
