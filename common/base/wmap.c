/* wmap: a bitmap of the units of a span that have been written. */
#include "base/wmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int wmap_init(struct wmap *m, uint64_t offset, uint64_t len)
{
	unsigned shift = 12; /* WMAP_MIN_UNIT */
	while (((len + (1ull << shift) - 1) >> shift) > WMAP_MAX_BITS)
		shift++;
	uint64_t units = (len + (1ull << shift) - 1) >> shift;
	memset(m, 0, sizeof(*m));
	m->offset = offset;
	m->len = len;
	m->shift = shift;
	m->nwords = (size_t)((units + 63) / 64);
	if (!m->nwords)
		return 0;
	m->bits = calloc(m->nwords, sizeof(*m->bits));
	return m->bits ? 0 : -ENOMEM;
}

uint64_t wmap_unit(const struct wmap *m)
{
	return 1ull << m->shift;
}

/* Set bits [a, b) of word w. */
static void set_bits(_Atomic uint64_t *w, unsigned a, unsigned b)
{
	uint64_t mask = (b == 64 ? ~0ull : (1ull << b) - 1) & ~((1ull << a) - 1);
	if ((atomic_load_explicit(w, memory_order_relaxed) & mask) != mask)
		atomic_fetch_or_explicit(w, mask, memory_order_relaxed);
}

void wmap_mark(struct wmap *m, uint64_t off, uint64_t len)
{
	uint64_t end = off + len, span_end = m->offset + m->len;
	if (!m->bits || len == 0 || end <= m->offset || off >= span_end)
		return;
	if (off < m->offset)
		off = m->offset;
	if (end > span_end)
		end = span_end;
	uint64_t a = (off - m->offset) >> m->shift;
	uint64_t b = ((end - m->offset) + wmap_unit(m) - 1) >> m->shift; /* one past */
	while (a < b) {
		uint64_t word = a / 64, stop = (word + 1) * 64 < b ? (word + 1) * 64 : b;
		set_bits(&m->bits[word], (unsigned)(a % 64), (unsigned)(stop - word * 64));
		a = stop;
	}
}

/* Whether unit u is marked. */
static int marked(const struct wmap *m, uint64_t u)
{
	return (int)((atomic_load_explicit(&m->bits[u / 64], memory_order_relaxed) >> (u % 64)) &
		     1);
}

/* The first unit at or after u that is marked (want = 1) or not (want =
 * 0); units when there is none. Skips whole words. */
static uint64_t next_unit(const struct wmap *m, uint64_t u, uint64_t units, int want)
{
	while (u < units) {
		uint64_t w = atomic_load_explicit(&m->bits[u / 64], memory_order_relaxed);
		if (u % 64 == 0 && w == (want ? 0 : ~0ull)) {
			u += 64;
			continue;
		}
		if (marked(m, u) == want)
			return u;
		u++;
	}
	return units;
}

int wmap_ranges(const struct wmap *m, int (*fn)(void *arg, uint64_t start, uint64_t end), void *arg)
{
	uint64_t units = (m->len + wmap_unit(m) - 1) >> m->shift;
	uint64_t u = m->bits ? next_unit(m, 0, units, 1) : units;
	while (u < units) {
		uint64_t v = next_unit(m, u, units, 0);
		uint64_t start = m->offset + (u << m->shift);
		uint64_t end = m->offset + (v << m->shift);
		if (end > m->offset + m->len)
			end = m->offset + m->len;
		int ret = fn(arg, start, end);
		if (ret)
			return ret;
		u = next_unit(m, v, units, 1);
	}
	return 0;
}

static int add_bytes(void *arg, uint64_t start, uint64_t end)
{
	*(uint64_t *)arg += end - start;
	return 0;
}

uint64_t wmap_bytes(const struct wmap *m)
{
	uint64_t total = 0;
	wmap_ranges(m, add_bytes, &total);
	return total;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The gap that joining need of the n - 1 gaps reaches: the need-th
 * smallest. UINT64_MAX when the gaps cannot be copied: then every gap
 * joins (one range, still an upper bound). */
static uint64_t gap_threshold(uint64_t (*v)[2], size_t n, size_t need)
{
	uint64_t *g = malloc((n - 1) * sizeof(*g));
	if (!g)
		return UINT64_MAX;
	for (size_t i = 0; i + 1 < n; i++)
		g[i] = v[i + 1][0] - v[i][1];
	qsort(g, n - 1, sizeof(*g), cmp_u64);
	uint64_t t = g[need - 1];
	free(g);
	return t;
}

size_t wmap_coarsen(uint64_t (*v)[2], size_t n, size_t max)
{
	if (max < 1)
		max = 1;
	if (n <= max)
		return n;
	size_t need = n - max; /* gaps to join */
	uint64_t t = gap_threshold(v, n, need);
	size_t below = 0; /* gaps under the threshold join; equal ones while needed */
	for (size_t i = 0; i + 1 < n; i++)
		below += v[i + 1][0] - v[i][1] < t;
	size_t equal = need > below ? need - below : 0, out = 0;
	for (size_t i = 1; i < n; i++) {
		uint64_t gap = v[i][0] - v[out][1];
		int join = gap < t || (gap == t && equal > 0);
		if (join && gap == t)
			equal--;
		if (join) {
			v[out][1] = v[i][1];
		} else {
			out++;
			v[out][0] = v[i][0];
			v[out][1] = v[i][1];
		}
	}
	return out + 1;
}

struct collect {
	uint64_t (*v)[2];
	size_t n, cap;
};

static int collect_range(void *arg, uint64_t start, uint64_t end)
{
	struct collect *c = arg;
	if (c->n == c->cap) {
		if (c->cap >= 2 * (size_t)WMAP_MAX_EXTENTS) {
			c->n = wmap_coarsen(c->v, c->n, WMAP_MAX_EXTENTS);
		} else {
			size_t cap = c->cap ? c->cap * 2 : 16;
			void *v = realloc(c->v, cap * sizeof(*c->v));
			if (!v)
				return -ENOMEM;
			c->v = v;
			c->cap = cap;
		}
	}
	c->v[c->n][0] = start;
	c->v[c->n][1] = end;
	c->n++;
	return 0;
}

int wmap_extents(const struct wmap *m, uint64_t (**out)[2], size_t *n)
{
	struct collect c = { 0 };
	int ret = wmap_ranges(m, collect_range, &c);
	if (ret) {
		free(c.v);
		return ret;
	}
	*out = c.v;
	*n = wmap_coarsen(c.v, c.n, WMAP_MAX_EXTENTS);
	return 0;
}

void wmap_free(struct wmap *m)
{
	free(m->bits);
	memset(m, 0, sizeof(*m));
}
