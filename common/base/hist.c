/* hist: latency histogram. */
#include "base/hist.h"

#include <math.h>
#include <string.h>

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min_ns = UINT64_MAX;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	if (src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
}

uint64_t hist_bucket_low(unsigned idx)
{
	if (idx < 2 * HIST_SUB)
		return idx;
	unsigned shift = idx / HIST_SUB - 1;
	uint64_t mant = idx - shift * HIST_SUB;
	return mant << shift;
}

uint64_t hist_bucket_width(unsigned idx)
{
	if (idx < 2 * HIST_SUB)
		return 1;
	return 1ull << (idx / HIST_SUB - 1);
}

static uint64_t rank_of(const struct hist *h, double p)
{
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	return rank < 1 ? 1 : rank;
}

/* Width-1 buckets are exact; wider ones answer their midpoint. */
static uint64_t bucket_value(const struct hist *h, unsigned i)
{
	uint64_t v = hist_bucket_low(i) + hist_bucket_width(i) / 2;
	if (v > h->max_ns)
		v = h->max_ns;
	if (v < h->min_ns)
		v = h->min_ns;
	return v;
}

void hist_percentiles(const struct hist *h, const double *p, unsigned n, uint64_t *out)
{
	uint64_t seen = 0;
	unsigned i = 0, k = 0;

	for (; k < n && (!h->count || p[k] <= 0); k++)
		out[k] = h->count ? h->min_ns : 0;
	for (; k < n && p[k] < 100; k++) {
		uint64_t rank = rank_of(h, p[k]);
		while (i < HIST_BUCKETS && seen + h->bucket[i] < rank)
			seen += h->bucket[i++];
		out[k] = i < HIST_BUCKETS ? bucket_value(h, i) : h->max_ns;
	}
	for (; k < n; k++)
		out[k] = h->max_ns;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t v;
	hist_percentiles(h, &p, 1, &v);
	return v;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum_ns / (double)h->count : 0.0;
}

void hist_qos(const struct hist *h, struct lat_qos *q)
{
	static const double ps[] = { 50, 90, 99, 99.9, 99.99 };
	uint64_t v[5];

	hist_percentiles(h, ps, 5, v);
	q->p50 = (double)v[0] / 1e3;
	q->p90 = (double)v[1] / 1e3;
	q->p99 = (double)v[2] / 1e3;
	q->p999 = (double)v[3] / 1e3;
	q->p9999 = (double)v[4] / 1e3;
	q->max = (double)h->max_ns / 1e3;
}
