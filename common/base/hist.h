/* hist: latency histogram, log-linear with <1% error from 1 us to 60 s,
 * and the percentiles and quality-of-service figures read from it.
 * Pure computation, no I/O, no allocation. */
#ifndef WEARMON_HIST_H
#define WEARMON_HIST_H

#include <stdint.h>

/* 64 linear buckets per power of two: relative error <= 1/128 at the
 * bucket midpoint. Values are nanoseconds; 32 groups cover up to ~2^37 ns
 * (137 s); larger values land in the last bucket, max stays exact. */
#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_GROUPS 32
#define HIST_BUCKETS (HIST_SUB * HIST_GROUPS)

struct hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t bucket[HIST_BUCKETS];
};

/* Bucket index of a value in nanoseconds. */
static inline unsigned hist_index(uint64_t ns)
{
	if (ns < 2 * HIST_SUB)
		return (unsigned)ns;
	unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
	unsigned shift = msb - HIST_SUB_BITS;
	unsigned idx = shift * HIST_SUB + (unsigned)(ns >> shift);
	return idx < HIST_BUCKETS ? idx : HIST_BUCKETS - 1;
}

/* Record one value. */
static inline void hist_add(struct hist *h, uint64_t ns)
{
	h->bucket[hist_index(ns)]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	if (ns < h->min_ns)
		h->min_ns = ns;
}

/* Empty a histogram. */
void hist_reset(struct hist *h);

/* Add src into dst. */
void hist_merge(struct hist *dst, const struct hist *src);

/* Value at percentile p (0..100), in ns; 0 when empty. The answer is the
 * midpoint of the bucket holding the rank ceil(p/100 * count), clamped to
 * [min, max]. */
uint64_t hist_percentile(const struct hist *h, double p);

/* Several percentiles in one pass: p[0..n) ascending, answers (as
 * hist_percentile would give them) in out[0..n). */
void hist_percentiles(const struct hist *h, const double *p, unsigned n, uint64_t *out);

/* Latency quality of service, in microseconds: what every sample and
 * every iteration reports. */
struct lat_qos {
	double p50, p90, p99, p999, p9999, max;
};

/* p50..p99.99 and max of h in microseconds (all 0 when h is empty). */
void hist_qos(const struct hist *h, struct lat_qos *q);

/* Mean in ns (0 when empty). */
double hist_mean(const struct hist *h);

/* Lowest value a bucket holds and its width (for tests). */
uint64_t hist_bucket_low(unsigned idx);
uint64_t hist_bucket_width(unsigned idx);

#endif
