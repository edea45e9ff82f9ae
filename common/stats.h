/* stats: latency histogram (log-linear, <1% error from 1 us to 60 s),
 * running mean/stddev/min/max, and the time-weighted figures of a phase's
 * rate (avg, min, max, stddev) with the rule min <= avg <= max.
 * Pure computation, no I/O, no allocation. */
#ifndef WEARMON_STATS_H
#define WEARMON_STATS_H

#include <stddef.h>
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

/* Running statistics of a series (Welford). */
struct runstat {
	uint64_t n;
	double mean, m2, min, max;
};

/* Start empty. */
void runstat_init(struct runstat *r);

/* Add one value. */
void runstat_add(struct runstat *r, double x);

/* Sample standard deviation (n-1); 0 when n < 2. */
double runstat_stddev(const struct runstat *r);

/* Time-weighted statistics of a rate sampled over intervals of unequal
 * length (weighted Welford): a sample of weight w counts as w samples. */
struct wstat {
	unsigned n, nfull;          /* samples, and those of full length */
	double w, mean, m2, min, max;
};

/* A sample of at least this weight is a full one (boundaries are computed
 * in floating point, so a full interval may weigh 0.9999999). */
#define WSTAT_FULL 0.999

/* Start empty. */
void wstat_init(struct wstat *s);

/* Add rate x measured over weight w (its length in sample intervals: 1 for
 * a full sample, 0.35 for a final 0.35 s one of a 1 s interval). Weights
 * <= 0 carry no time and are ignored. */
void wstat_add(struct wstat *s, double x, double w);

/* Standard deviation with frequency weights, sqrt(m2 / (w - 1)): with
 * full samples only it is the usual sample stddev. -1 when w <= 1. */
double wstat_stddev(const struct wstat *s);

/* The rate figures of one phase or row; < 0 means unknown (NULL). */
struct rate_figs {
	double avg, min, max, stddev;
};

/* Figures of a phase whose average is avg (bytes over its seconds) and
 * whose samples are s: min, max and stddev from the samples when there are
 * at least two full ones, else -1 (one sample is no spread); then bounded
 * by stats_rate_bound. Returns what stats_rate_bound returns. */
int stats_rate_figs(const struct wstat *s, double avg, struct rate_figs *out);

/* The rule every stored row obeys: min <= avg <= max (unknown figures are
 * left alone). A min or max that misses avg is moved onto it. Returns 0,
 * or -ERANGE when one missed by more than rounding (1e-9 relative): a
 * sample lost somewhere, worth a log line. */
int stats_rate_bound(struct rate_figs *f);

#endif
