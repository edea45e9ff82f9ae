/* stats: running and time-weighted statistics. */
#include "base/stats.h"

#include <errno.h>
#include <math.h>
#include <string.h>

void stats_run_init(struct runstat *r)
{
	memset(r, 0, sizeof(*r));
}

void stats_run_add(struct runstat *r, double x)
{
	r->n++;
	if (r->n == 1) {
		r->min = r->max = x;
	} else {
		if (x < r->min)
			r->min = x;
		if (x > r->max)
			r->max = x;
	}
	double d = x - r->mean;
	r->mean += d / (double)r->n;
	r->m2 += d * (x - r->mean);
}

double stats_run_stddev(const struct runstat *r)
{
	return r->n < 2 ? 0.0 : sqrt(r->m2 / (double)(r->n - 1));
}

void stats_weighted_init(struct wstat *s)
{
	memset(s, 0, sizeof(*s));
}

void stats_weighted_add(struct wstat *s, double x, double w)
{
	if (!(w > 0))
		return;
	if (!s->n || x < s->min)
		s->min = x;
	if (!s->n || x > s->max)
		s->max = x;
	s->n++;
	s->nfull += w >= WSTAT_FULL;
	s->w += w;
	double d = x - s->mean;
	s->mean += d * w / s->w;
	s->m2 += w * d * (x - s->mean);
}

double stats_weighted_stddev(const struct wstat *s)
{
	if (s->w <= 1)
		return -1;
	return sqrt(s->m2 > 0 ? s->m2 / (s->w - 1) : 0);
}

int stats_rate_figs(const struct wstat *s, double avg, struct rate_figs *out)
{
	out->avg = avg;
	out->min = out->max = out->stddev = -1;
	if (s->nfull >= 2) {
		out->min = s->min;
		out->max = s->max;
		out->stddev = stats_weighted_stddev(s);
	}
	return stats_rate_bound(out);
}

/* Whether a and b differ by more than rounding. */
static int off_by_more(double a, double b)
{
	return fabs(a - b) > 1e-9 * fmax(fabs(a), fabs(b));
}

int stats_rate_bound(struct rate_figs *f)
{
	int ret = 0;

	if (f->avg < 0)
		return 0;
	if (f->min >= 0 && f->min > f->avg) {
		ret = off_by_more(f->min, f->avg) ? -ERANGE : ret;
		f->min = f->avg;
	}
	if (f->max >= 0 && f->max < f->avg) {
		ret = off_by_more(f->max, f->avg) ? -ERANGE : ret;
		f->max = f->avg;
	}
	return ret;
}

void stats_phase_progress(double done, double goal, double secs, double duration, double rate_mibps,
			  struct stats_phase *out)
{
	double by_bytes = goal > 0 ? done / goal : NAN;
	double by_time = duration > 0 && secs >= 0 ? secs / duration : NAN;
	double eta_bytes =
		rate_mibps > 0 && goal > done ? (goal - done) / (rate_mibps * 1048576.0) : NAN;
	double eta_time = duration > 0 && secs >= 0 ? fmax(0, duration - secs) : NAN;

	out->fraction = isnan(by_time)    ? by_bytes
			: isnan(by_bytes) ? by_time
					  : fmax(by_bytes, by_time);
	if (!isnan(out->fraction))
		out->fraction = fmin(out->fraction, 0.99);
	out->eta = isnan(eta_time)    ? eta_bytes
		   : isnan(eta_bytes) ? eta_time
				      : fmin(eta_bytes, eta_time);
}
