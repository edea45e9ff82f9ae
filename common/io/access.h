/* access: where the random I/Os of a phase land in its span: uniformly,
 * zoned (shares of the I/Os over shares of the span, fio's "zoned"), or
 * Zipf or Pareto over its blocks (fio's definitions). Owns the text form
 * of a distribution, its checks, and a table built once per phase from
 * which every draw takes integer arithmetic only. Pure: no I/O, no
 * allocation, no clock; the caller brings the random numbers. */
#ifndef WEARMON_ACCESS_H
#define WEARMON_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#define ACCESS_MAX_ZONES 16
#define ACCESS_MAX_BINS 512

enum access_kind {
	ACCESS_UNIFORM, /* every block alike (the zeroed spec) */
	ACCESS_ZONED,   /* zone i: io_pct of the I/Os over lba_pct of the span */
	ACCESS_ZIPF,    /* the block of rank k (1, 2, ...) with weight k^-theta */
	ACCESS_PARETO,  /* fio's Pareto: rank = blocks * u^(ln h / ln(1 - h)) */
	ACCESS__COUNT
};

/* One zone of a zoned distribution, in span order from its start. */
struct access_zone {
	uint8_t io_pct;  /* share of the random I/Os, 0..100 */
	uint8_t lba_pct; /* share of the span, 1..100 */
};

/* A distribution as configured. */
struct access_spec {
	enum access_kind kind;
	double param; /* zipf: theta (0 < theta <= 10); pareto: h (0 < h < 1) */
	unsigned nzones;
	struct access_zone zone[ACCESS_MAX_ZONES];
};

/* The drawing table of a distribution over the n units of a span. Bins of
 * consecutive ranks (a zone, or ranks of nearly equal weight), chosen by
 * the alias method; a rank uniform within its bin; for Zipf and Pareto the
 * rank then placed by a fixed permutation of the units, the same for every
 * job, phase and cycle of a span of n units. Fields private to access.c. */
struct access_table {
	uint64_t n;     /* units */
	unsigned nbins; /* 0: uniform over the n units */
	int scatter;    /* ranks go through the permutation */
	unsigned shift; /* the permutation: on numbers of the bits of mask */
	uint64_t mask, mul1, mul2, add;
	uint32_t keep[ACCESS_MAX_BINS];      /* stay in bin i when coin < keep[i] (of 2^32) */
	uint16_t alias[ACCESS_MAX_BINS];     /* else take bin alias[i] */
	uint64_t first[ACCESS_MAX_BINS + 1]; /* bin i: ranks first[i] .. first[i+1]-1 */
};

/* Parse "uniform", "zoned:50/5:30/15:20/80" (an empty last share of the
 * span takes what the others leave: "zoned:50/5:30/15:20/"), "zipf:1.2"
 * or "pareto:0.2" into out. Returns 0, or -EINVAL with a message in msg. */
int access_parse(const char *text, struct access_spec *out, char *msg, size_t len);

/* The canonical text of a (its zones' shares all written), as
 * access_parse reads it. Returns buf. */
const char *access_text(const struct access_spec *a, char *buf, size_t len);

/* Whether a can run over a span of span_len bytes cut into units of unit
 * bytes: every zone that takes I/Os holds at least one unit. Returns 0 or
 * -EINVAL with a message. */
int access_check(const struct access_spec *a, uint64_t span_len, uint64_t unit, char *msg,
		 size_t len);

/* Build the table of a (access_check passed) over n >= 1 units. */
void access_init(struct access_table *t, const struct access_spec *a, uint64_t n);

/* The unit that rank r (< t->n) lands on: a bijection of the numbers
 * below the next power of two (odd multipliers and xor-shifts, each
 * invertible), applied again while the result is n or more (cycle
 * walking: a permutation of the n units, fewer than one extra round on
 * average). Fixed by n alone, so every job of a phase shares its hot
 * blocks. */
static inline uint64_t access_place(const struct access_table *t, uint64_t r)
{
	uint64_t x = r;
	do {
		x = (x * t->mul1 + t->add) & t->mask;
		x ^= x >> t->shift;
		x = (x * t->mul2) & t->mask;
		x ^= x >> t->shift;
	} while (x >= t->n);
	return x;
}

/* The unit of one draw, from two uniform 64-bit random numbers: O(1), two
 * multiplications, a compare and, for Zipf and Pareto, the permutation
 * (a few multiplications; one more round per rank past n, fewer than one
 * on average). */
static inline uint64_t access_draw(const struct access_table *t, uint64_t r1, uint64_t r2)
{
	if (!t->nbins)
		return (uint64_t)(((unsigned __int128)r1 * t->n) >> 64);
	uint32_t b = (uint32_t)(((r1 >> 32) * t->nbins) >> 32);
	if ((uint32_t)r1 >= t->keep[b])
		b = t->alias[b];
	uint64_t w = t->first[b + 1] - t->first[b];
	uint64_t r = t->first[b] + (uint64_t)(((unsigned __int128)r2 * w) >> 64);
	return t->scatter ? access_place(t, r) : r;
}

#endif
