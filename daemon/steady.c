/* steady: the SNIA PTS steady-state detector. */
#include "steady.h"

#include <math.h>
#include <string.h>

/* Both limits are inclusive; a relative margin this small only absorbs the
 * rounding of the sums, so values exactly on a limit count as within. */
#define TOLERANCE 1e-9

static int within(double value, double pct, double mean)
{
	return value <= pct / 100.0 * mean * (1.0 + TOLERANCE);
}

int steady_check(const double *y, size_t n, struct steady_window *w)
{
	size_t k = n < STEADY_WINDOW ? n : STEADY_WINDOW;
	const double *v = y + (n - k);
	double sum = 0, lo = 0, hi = 0, sxy = 0, sxx = 0;

	memset(w, 0, sizeof(*w));
	w->n = (unsigned)k;
	if (!k)
		return 0;
	lo = hi = v[0];
	for (size_t i = 0; i < k; i++) {
		sum += v[i];
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	w->mean = sum / (double)k;
	w->range = hi - lo;
	/* Least squares over x = 0..k-1 centred on its mean. */
	double xm = (double)(k - 1) / 2.0;
	for (size_t i = 0; i < k; i++) {
		sxy += ((double)i - xm) * (v[i] - w->mean);
		sxx += ((double)i - xm) * ((double)i - xm);
	}
	w->slope = sxx > 0 ? sxy / sxx : 0;
	w->excursion = fabs(w->slope) * (double)(k - 1);
	if (w->mean <= 0)
		return 0;
	w->range_pct = 100.0 * w->range / w->mean;
	w->excursion_pct = 100.0 * w->excursion / w->mean;
	w->range_ok = within(w->range, STEADY_RANGE_PCT, w->mean);
	w->excursion_ok = within(w->excursion, STEADY_EXCURSION_PCT, w->mean);
	w->steady = k == STEADY_WINDOW && w->range_ok && w->excursion_ok;
	return w->steady;
}

size_t steady_first(const double *y, size_t n, struct steady_window *w)
{
	for (size_t r = STEADY_WINDOW; r <= n; r++)
		if (steady_check(y, r, w))
			return r;
	steady_check(y, n, w);
	return 0;
}
