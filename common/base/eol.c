/* eol: the end-of-life forecast from the drive's wear indicator. The
 * indicator moves in whole percent, so a reading says little about when
 * it moved: the fit uses the times it stepped (each level crossed,
 * placed inside the span between the two readings that saw it move),
 * which are exact in level and uncertain in time; time is therefore
 * fitted against the level, not the other way round. */
#include "base/eol.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DAY 86400.0
#define YEAR_DAYS 365.25 /* a warranty's years, in days */
#define RATED_DAYS 365.0 /* DWPD x capacity x 365 x years: the rating convention */

static const char *const status_names[EOL__COUNT] = {
	[EOL_NO_INDICATOR] = "no-indicator", [EOL_FLAT] = "flat",
	[EOL_TOO_FEW] = "too-few-steps",     [EOL_OK] = "ok",
	[EOL_REACHED] = "reached",
};

const char *eol_status_name(enum eol_status s)
{
	return (unsigned)s < EOL__COUNT ? status_names[s] : "?";
}

const char *eol_host_name(enum eol_host h)
{
	return h == EOL_HOST_DRIVE ? "drive" : h == EOL_HOST_OWN ? "wearmon" : "none";
}

double eol_t975(int dof)
{
	/* two-sided 95 %: the 0.975 quantile; past 30 degrees of freedom,
	 * linear in 1/dof between 30, 40, 60, 120 and infinity */
	static const double t[] = { NAN,   12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				    2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
				    2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
				    2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042 };
	static const double far[][2] = {
		{ 30, 2.042 }, { 40, 2.021 }, { 60, 2.000 }, { 120, 1.980 }, { INFINITY, 1.960 }
	};

	if (dof < 1)
		return NAN;
	if (dof <= 30)
		return t[dof];
	for (int i = 0; i < 4; i++) {
		if (dof > far[i + 1][0])
			continue;
		double u0 = 1 / far[i][0], u1 = 1 / far[i + 1][0], u = 1.0 / dof;
		return far[i][1] + (far[i + 1][1] - far[i][1]) * (u0 - u) / (u0 - u1);
	}
	return 1.960;
}

/* The drift of y over the points (x[i], y[i]), x increasing: the mean
 * of the increments (the line through the first and last points) and
 * their spread per unit of x. w (NULL: none) is the width of the span
 * each y lies in; where in it the point is, is measurement noise (w^2 /
 * 12): it makes the floor of the spread, and it acts once more at the
 * ends, on the last point (var0) and on the slope (var_mu), without
 * adding up over a forecast. Fewer than two increments: d->n = 0. */
static void drift_fit(const double *x, const double *y, const double *w, int n, struct eol_drift *d)
{
	double ss = 0, q = 0;
	int m = 0;

	memset(d, 0, sizeof(*d));
	if (n < 3 || !(x[n - 1] > x[0]))
		return;
	d->x1 = x[0];
	d->y1 = y[0];
	d->x0 = x[n - 1];
	d->y0 = y[n - 1];
	d->span = x[n - 1] - x[0];
	d->mu = (y[n - 1] - y[0]) / d->span;
	for (int i = 1; i < n; i++) {
		double dx = x[i] - x[i - 1], r;
		if (!(dx > 0))
			continue;
		r = y[i] - y[i - 1] - d->mu * dx;
		ss += r * r / dx;
		q += w ? (w[i] * w[i] + w[i - 1] * w[i - 1]) / 12 / dx : 0;
		m++;
	}
	if (m < 2)
		return;
	d->n = m;
	d->s2 = fmax(ss / (m - 1), q / m / 2); /* q / m: two points' noise */
	d->var0 = w ? w[n - 1] * w[n - 1] / 12 : 0;
	d->var_mu = d->s2 / d->span +
		    (w ? (w[0] * w[0] + w[n - 1] * w[n - 1]) / 12 : 0) / (d->span * d->span);
	d->tq = eol_t975(m - 1);
}

/* The variance of a prediction dx beyond the last point: the increments
 * still to come, the slope's own uncertainty, the last point's. */
static double drift_var(const struct eol_drift *d, double dx)
{
	dx = fabs(dx);
	return dx * d->s2 + dx * dx * d->var_mu + d->var0;
}

void eol_drift_at(const struct eol_drift *d, double x, struct eol_estimate *out)
{
	if (d->n < 2) {
		*out = (struct eol_estimate){ NAN, NAN, NAN };
		return;
	}
	double at = d->y0 + (x - d->x0) * d->mu, half = d->tq * sqrt(drift_var(d, x - d->x0));
	*out = (struct eol_estimate){ at, at - half, at + half };
}

/* The level a reading shows: whole percent, 0..EOL_MAX_LEVEL. */
static double level_of(double used)
{
	return floor(fmin(fmax(used, 0), EOL_MAX_LEVEL));
}

/* Where the series starts: after the last reset of the indicator (a
 * reading below the highest so far that no later reading comes back
 * above: a new drive or a reset counter). A lower reading that a later
 * one climbs back over is a glitch, skipped by add_series. Returns the
 * index of the first reading of the series, or n when none has an
 * indicator. */
static size_t series_start(const struct eol_reading *r, size_t n, double *smax)
{
	size_t start = n;
	double m = -INFINITY;

	for (size_t i = n; i-- > 0;)
		smax[i] = fmax(i + 1 < n ? smax[i + 1] : -INFINITY,
			       isnan(r[i].used) ? -INFINITY : level_of(r[i].used));
	for (size_t i = 0; i < n; i++) {
		double u;
		if (isnan(r[i].used))
			continue;
		u = level_of(r[i].used);
		if (start == n || (u < m && smax[i] < m)) {
			start = i;
			m = u;
		} else if (u > m) {
			m = u;
		}
	}
	return start;
}

/* The host counter every reading of the series has, never going back:
 * the drive's own, else wearmond's. */
static enum eol_host choose_host(const struct eol_reading *r, size_t n, size_t start)
{
	int drive = 1, own = 1;
	double pd = -INFINITY, po = -INFINITY;

	for (size_t i = start; i < n; i++) {
		if (isnan(r[i].used))
			continue;
		drive = drive && !isnan(r[i].host_drive) && r[i].host_drive >= pd;
		own = own && !isnan(r[i].host_own) && r[i].host_own >= po;
		pd = r[i].host_drive;
		po = r[i].host_own;
	}
	return drive ? EOL_HOST_DRIVE : own ? EOL_HOST_OWN : EOL_HOST_NONE;
}

static double host_of(const struct eol_reading *r, enum eol_host h)
{
	return h == EOL_HOST_DRIVE ? r->host_drive : h == EOL_HOST_OWN ? r->host_own : NAN;
}

/* The levels crossed between readings a and b, each placed where a
 * steady rate puts it: the indicator read a's level at some point of its
 * first percent, on average half-way. */
static void add_steps(struct eol_forecast *f, const struct eol_reading *a,
		      const struct eol_reading *b)
{
	double ua = level_of(a->used), span = level_of(b->used) - ua;
	double ha = host_of(a, f->host_counter), hb = host_of(b, f->host_counter);

	for (double k = ua + 1; k <= ua + span && f->nsteps < EOL_MAX_STEPS; k++) {
		double x = (k - ua - 0.5) / span;
		f->steps[f->nsteps++] = (struct eol_step){
			.level = k,
			.t = a->t + x * (b->t - a->t),
			.host = ha + x * (hb - ha),
			.media = a->media + x * (b->media - a->media),
			.wt = (b->t - a->t) / span,
			.wh = (hb - ha) / span,
			.wm = (b->media - a->media) / span,
		};
	}
}

/* Walk the series from start: glitches skipped, a repeated level moves
 * the start of the next span to its latest reading. */
static void add_series(struct eol_forecast *f, const struct eol_reading *r, size_t n, size_t start)
{
	const struct eol_reading *prev = &r[start];
	double m = level_of(prev->used);

	f->first_t = prev->t;
	f->first_used = prev->used;
	for (size_t i = start; i < n; i++) {
		double u;
		if (isnan(r[i].used) || (u = level_of(r[i].used)) < m)
			continue;
		f->readings++;
		if (u > m) {
			add_steps(f, prev, &r[i]);
			f->brackets++;
			m = u;
		}
		prev = &r[i];
	}
	f->last_t = prev->t;
	f->last_used = prev->used;
	f->last_host = host_of(prev, f->host_counter);
}

/* The drift of column col of the steps (0 time, 1 host, 2 media bytes)
 * against the level, when every step has it. */
static void steps_drift(struct eol_forecast *f, int col, struct eol_drift *l)
{
	double x[EOL_MAX_STEPS], y[EOL_MAX_STEPS], w[EOL_MAX_STEPS];

	for (int i = 0; i < f->nsteps; i++) {
		const struct eol_step *s = &f->steps[i];
		x[i] = s->level;
		y[i] = col == 0 ? s->t : col == 1 ? s->host : s->media;
		w[i] = col == 0 ? s->wt : col == 1 ? s->wh : s->wm;
		if (isnan(y[i]) || isnan(w[i])) {
			memset(l, 0, sizeof(*l));
			return;
		}
	}
	drift_fit(x, y, w, f->nsteps, l);
}

/* Host bytes against time over the series' readings (the write rate). */
static int rate_line(struct eol_forecast *f, const struct eol_reading *r, size_t n, size_t start)
{
	double *x = malloc((n - start) * sizeof(*x)), *y = malloc((n - start) * sizeof(*y));
	int k = 0;

	if (!x || !y) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	for (size_t i = start; i < n; i++) {
		double h = host_of(&r[i], f->host_counter);
		if (isnan(r[i].used) || isnan(h))
			continue;
		if (k && !(r[i].t > x[k - 1]))
			continue;
		x[k] = r[i].t;
		y[k++] = h;
	}
	drift_fit(x, y, NULL, k, &f->rate);
	free(x);
	free(y);
	return 0;
}

double eol_rated_bytes(const struct eol_rating *r)
{
	if (!r)
		return NAN;
	if (r->tbw_bytes > 0)
		return r->tbw_bytes;
	if (r->dwpd > 0 && r->warranty_years > 0 && r->capacity > 0)
		return r->dwpd * r->capacity * RATED_DAYS * r->warranty_years;
	return NAN;
}

void eol_time_at(const struct eol_forecast *f, double level, struct eol_estimate *out)
{
	eol_drift_at(&f->time, level, out);
}

/* An estimate scaled by 1 / d. */
static struct eol_estimate scaled(struct eol_estimate e, double d)
{
	return (struct eol_estimate){ e.at / d, e.lo / d, e.hi / d };
}

/* The observed crossing of the end level: the step at it. */
static int observed_end(const struct eol_forecast *f, struct eol_estimate *t,
			struct eol_estimate *h, struct eol_estimate *m)
{
	for (int i = 0; i < f->nsteps; i++) {
		const struct eol_step *s = &f->steps[i];
		if (s->level != EOL_END_LEVEL)
			continue;
		*t = (struct eol_estimate){ s->t, s->t - s->wt / 2, s->t + s->wt / 2 };
		*h = (struct eol_estimate){ s->host, s->host - s->wh / 2, s->host + s->wh / 2 };
		*m = (struct eol_estimate){ s->media, s->media - s->wm / 2, s->media + s->wm / 2 };
		return 1;
	}
	return 0;
}

/* The time host writes reach the rating: observed between the readings
 * that passed it, else when the write rate's drift reaches it (its
 * interval: the spread of a time to write that much, the first-passage
 * time of the drift). */
static void rated_time(struct eol_forecast *f, const struct eol_reading *r, size_t n)
{
	const struct eol_drift *d = &f->rate;
	double R = f->rated_bytes;

	f->rated_t = (struct eol_estimate){ NAN, NAN, NAN };
	for (size_t i = 1; i < n && f->last_host >= R; i++) {
		double h0 = host_of(&r[i - 1], f->host_counter),
		       h1 = host_of(&r[i], f->host_counter);
		if (r[i - 1].t < f->first_t || !(h0 < R && h1 >= R))
			continue;
		double t = r[i - 1].t + (R - h0) / (h1 - h0) * (r[i].t - r[i - 1].t);
		f->rated_t = (struct eol_estimate){ t, r[i - 1].t, r[i].t };
		return;
	}
	if (d->n < 2 || !(d->mu > 0) || f->last_host >= R)
		return;
	double dt = (R - d->y0) / d->mu, half = d->tq * sqrt(drift_var(d, dt)) / d->mu;
	f->rated_t = (struct eol_estimate){ d->x0 + dt, d->x0 + dt - half, d->x0 + dt + half };
}

static void rate_against(struct eol_forecast *f, const struct eol_reading *r, size_t n,
			 const struct eol_rating *rating)
{
	f->rated_bytes = eol_rated_bytes(rating);
	f->warranty_end =
		rating && rating->warranty_years > 0 && !isnan(rating->warranty_start)
			? rating->warranty_start + rating->warranty_years * YEAR_DAYS * DAY
			: NAN;
	f->rated_ratio = (struct eol_estimate){ NAN, NAN, NAN };
	if (isnan(f->rated_bytes))
		return;
	if (!isnan(f->end_host.at))
		f->rated_ratio = scaled(f->end_host, f->rated_bytes);
	if (!isnan(f->last_host))
		rated_time(f, r, n);
}

/* The end-of-life figures, from the fits or as observed. */
static void end_figures(struct eol_forecast *f)
{
	struct eol_estimate none = { NAN, NAN, NAN };

	f->end_t = f->end_host = f->end_media = none;
	if (f->time.n >= 2) {
		f->pct_per_day = f->time.mu > 0 ? DAY / f->time.mu : NAN;
		f->host_per_pct = f->host.n ? f->host.mu : NAN;
	}
	if (f->status == EOL_REACHED && observed_end(f, &f->end_t, &f->end_host, &f->end_media))
		return;
	if (f->time.n < 2)
		return;
	eol_time_at(f, EOL_END_LEVEL, &f->end_t);
	eol_drift_at(&f->host, EOL_END_LEVEL, &f->end_host);
	eol_drift_at(&f->media, EOL_END_LEVEL, &f->end_media);
}

int eol_fit(const struct eol_reading *r, size_t n, const struct eol_rating *rating,
	    struct eol_forecast *out)
{
	double *smax = n ? malloc(n * sizeof(*smax)) : NULL;
	size_t start;
	int ret = 0;

	const struct eol_estimate none = { NAN, NAN, NAN };

	memset(out, 0, sizeof(*out));
	out->status = EOL_NO_INDICATOR;
	out->end_t = out->end_host = out->end_media = out->rated_ratio = out->rated_t = none;
	out->pct_per_day = out->host_per_pct = out->last_host = out->rated_bytes = NAN;
	out->first_t = out->first_used = out->last_t = out->last_used = out->warranty_end = NAN;
	for (size_t i = 1; i < n; i++)
		if (r[i].t < r[i - 1].t || isnan(r[i].t))
			ret = -EINVAL;
	if (n && !smax)
		ret = -ENOMEM;
	if (ret || !n || (start = series_start(r, n, smax)) == n)
		goto out;
	out->host_counter = choose_host(r, n, start);
	add_series(out, r, n, start);
	if (out->nsteps >= EOL_MIN_STEPS && out->brackets >= EOL_MIN_BRACKETS) {
		steps_drift(out, 0, &out->time);
		steps_drift(out, 1, &out->host);
		steps_drift(out, 2, &out->media);
	}
	out->status = level_of(out->last_used) >= EOL_END_LEVEL ? EOL_REACHED
		      : out->time.n >= 2                        ? EOL_OK
		      : out->nsteps == 0 && out->readings > 1   ? EOL_FLAT
								: EOL_TOO_FEW;
	end_figures(out);
	ret = rate_line(out, r, n, start);
	if (!ret)
		rate_against(out, r, n, rating);
out:
	free(smax);
	return ret;
}

double eol_days_to(double t, double now)
{
	return (t - now) / DAY;
}

double eol_days_left(const struct eol_forecast *f, double now, double *pm)
{
	*pm = (f->end_t.hi - f->end_t.lo) / 2 / DAY;
	return eol_days_to(f->end_t.at, now);
}

/* ---- in words ---------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, used;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->used + 1 >= o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used = o->used + (size_t)n < o->len ? o->used + (size_t)n : o->len - 1;
}

/* Host bytes in SI units as ratings are given, with a half-width in the
 * same unit when half is not NAN: "750 TB", "750 ± 30 TB". */
char *eol_si_bytes(double b, double half, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
	int i = 0, d;

	while (fabs(b) >= 1000 && i < 6) {
		b /= 1000;
		half /= 1000;
		i++;
	}
	d = fabs(b) >= 100 || i == 0 ? 0 : fabs(b) >= 10 ? 1 : 2;
	if (isnan(half))
		snprintf(buf, len, "%.*f %s", d, b, unit[i]);
	else
		snprintf(buf, len, "%.*f ± %.*f %s", d, b, d, half, unit[i]);
	return buf;
}

/* The unit a span of secs (and half) reads best in. */
static const char *span_unit(double secs, double half, double *scale)
{
	static const struct {
		double s;
		const char *name;
	} units[] = { { DAY, "days" }, { 3600, "hours" }, { 60, "minutes" } };
	double v = fabs(secs) + (isnan(half) ? 0 : half);

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (v >= 2 * units[i].s) {
			*scale = units[i].s;
			return units[i].name;
		}
	*scale = 1;
	return "seconds";
}

/* "212 ± 9 days", "3.5 ± 0.4 minutes". */
static char *span_pm(double secs, double half, char *buf, size_t len)
{
	double s;
	const char *u = span_unit(secs, half, &s);
	int d = fabs(secs / s) >= 10 ? 0 : 1;

	if (!isnan(half) && half / s < 0.5)
		d = 1; /* "140.0 ± 0.4 days", not "140 ± 0 days" */
	if (!isnan(half) && half / s < 0.05)
		half = NAN; /* below what it shows */

	if (isnan(half))
		snprintf(buf, len, "%.*f %s", d, fabs(secs) / s, u);
	else
		snprintf(buf, len, "%.*f ± %.*f %s", d, fabs(secs) / s, d, half / s, u);
	return buf;
}

/* A date (UTC), with the time when the span is shorter than days. */
static char *date_of(double t, int with_time, char *buf, size_t len)
{
	time_t tt = (time_t)llround(t);
	struct tm tm;

	if (isnan(t) || !gmtime_r(&tt, &tm))
		snprintf(buf, len, "?");
	else
		strftime(buf, len, with_time ? "%Y-%m-%d %H:%M UTC" : "%Y-%m-%d", &tm);
	return buf;
}

static int short_span(double secs)
{
	double s;
	span_unit(secs, NAN, &s);
	return s < DAY;
}

static void words_ok(const struct eol_forecast *f, double now, struct out *o)
{
	char span[64], date[40], bytes[64], rated[32];
	double secs = f->end_t.at - now, half = (f->end_t.hi - f->end_t.lo) / 2;

	date_of(f->end_t.at, short_span(secs), date, sizeof(date));
	span_pm(secs, half, span, sizeof(span));
	if (secs >= 0)
		say(o, "At this workload the drive reaches 100 %% used in %s (%s)", span, date);
	else
		say(o, "By the forecast the drive reached 100 %% used %s ago (%s)", span, date);
	if (!isnan(f->end_host.at))
		say(o, ", after %s written by the host",
		    eol_si_bytes(f->end_host.at, (f->end_host.hi - f->end_host.lo) / 2, bytes,
				 sizeof(bytes)));
	if (!isnan(f->rated_ratio.at))
		say(o, " (%.0f %% of its rated %sW)", 100 * f->rated_ratio.at,
		    eol_si_bytes(f->rated_bytes, NAN, rated, sizeof(rated)));
	say(o, ".");
}

static void words_reached(const struct eol_forecast *f, struct out *o)
{
	char date[40], bytes[64], rated[32];

	if (isnan(f->end_t.at)) {
		say(o, "The drive reports %.0f %% used: it is past the end of its rated life.",
		    f->last_used);
		return;
	}
	say(o, "The drive reached 100 %% used on %s",
	    date_of(f->end_t.at, short_span(f->end_t.at - f->first_t), date, sizeof(date)));
	if (!isnan(f->end_host.at))
		say(o, ", after %s written by the host",
		    eol_si_bytes(f->end_host.at, NAN, bytes, sizeof(bytes)));
	if (!isnan(f->rated_ratio.at))
		say(o, " (%.0f %% of its rated %sW)", 100 * f->rated_ratio.at,
		    eol_si_bytes(f->rated_bytes, NAN, rated, sizeof(rated)));
	say(o, "; it now reads %.0f %%.", f->last_used);
}

/* The rating: when host writes reach it, against the warranty. */
static void words_rating(const struct eol_forecast *f, double now, struct out *o)
{
	char span[64], date[40], rated[32];
	const struct eol_estimate *r = &f->rated_t;
	double w = f->warranty_end;

	if (isnan(f->rated_bytes) || isnan(r->at))
		return;
	eol_si_bytes(f->rated_bytes, NAN, rated, sizeof(rated));
	if (f->last_host >= f->rated_bytes)
		say(o, " Its host writes passed the rated %sW on %s", rated,
		    date_of(r->at, short_span(r->at - f->first_t), date, sizeof(date)));
	else
		say(o, " At this workload it reaches its rated %sW in %s", rated,
		    span_pm(r->at - now, (r->hi - r->lo) / 2, span, sizeof(span)));
	if (!isnan(w))
		say(o, ", %s the warranty ends (%s)",
		    r->hi < w   ? "before"
		    : r->lo > w ? "after"
				: "about when",
		    date_of(w, 0, date, sizeof(date)));
	say(o, ".");
}

char *eol_words(const struct eol_forecast *f, double now, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	char span[64];

	if (len)
		buf[0] = '\0';
	switch (f->status) {
	case EOL_NO_INDICATOR:
		say(&o, "The drive reports no wear indicator (percentage used): no forecast.");
		return buf;
	case EOL_FLAT:
		say(&o,
		    "The wear indicator has stayed at %.0f %% over %s of readings: no forecast"
		    " until it steps.",
		    f->last_used, span_pm(f->last_t - f->first_t, NAN, span, sizeof(span)));
		break;
	case EOL_TOO_FEW:
		say(&o,
		    "The wear indicator has stepped %d time%s (to %.0f %%) in this campaign; a"
		    " forecast needs %d steps.",
		    f->nsteps, f->nsteps == 1 ? "" : "s", f->last_used, EOL_MIN_STEPS);
		break;
	case EOL_OK: words_ok(f, now, &o); break;
	case EOL_REACHED: words_reached(f, &o); break;
	case EOL__COUNT: break;
	}
	words_rating(f, now, &o);
	if (f->host_counter == EOL_HOST_OWN && (!isnan(f->end_host.at) || !isnan(f->rated_t.at)))
		say(&o, " (Host bytes as wearmond wrote them: the drive counts none.)");
	return buf;
}
