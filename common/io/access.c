/* access: the distributions of random offsets (access.h): their text, their
 * checks and their drawing tables. */
#include "io/access.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

#define TWO32 4294967296.0
#define THETA_MAX 10.0
/* Zipf and Pareto: the hottest ranks one bin each, then bins that grow by
 * at least GROW: the weight of the ranks of one bin then differs by at
 * most GROW^theta (Zipf) from one end to the other, and the cumulative
 * share drawn never strays from the distribution's by more than a small
 * part of one bin's share (tests/unit/test_access.c measures it). */
#define SINGLES 64u
#define GROW (1.0 + 1.0 / 32.0)

static const char *const kind_names[ACCESS__COUNT] = {
	[ACCESS_UNIFORM] = "uniform",
	[ACCESS_ZONED] = "zoned",
	[ACCESS_ZIPF] = "zipf",
	[ACCESS_PARETO] = "pareto",
};

/* ---- text ---- */

/* One "IO/LBA" zone (LBA may be empty: *blank). Returns 0 or -EINVAL. */
static int parse_zone(char *tok, struct access_zone *z, int *blank, char *msg, size_t len)
{
	char *slash = strchr(tok, '/');
	long long io, lba = 0;

	if (!slash) {
		snprintf(msg, len, "zone \"%s\" is not IO%%/LBA%% (e.g. 50/5)", tok);
		return -EINVAL;
	}
	*slash = '\0';
	*blank = !*util_strip(slash + 1);
	if (util_parse_int(tok, 0, 100, &io) < 0 ||
	    (!*blank && util_parse_int(slash + 1, 1, 100, &lba) < 0)) {
		snprintf(msg, len,
			 "zone \"%s/%s\": the share of the I/Os must be 0..100 and the share "
			 "of the span 1..100 (whole percent)",
			 tok, slash + 1);
		return -EINVAL;
	}
	z->io_pct = (uint8_t)io;
	z->lba_pct = (uint8_t)lba;
	return 0;
}

/* The shares of the I/Os add up to 100, those of the span too once the
 * one blank share (if any) takes what the others leave. Returns 0 or
 * -EINVAL. */
static int close_zones(struct access_spec *a, int blank, char *msg, size_t len)
{
	unsigned io = 0, lba = 0;

	for (unsigned i = 0; i < a->nzones; i++) {
		io += a->zone[i].io_pct;
		lba += a->zone[i].lba_pct;
	}
	if (io != 100) {
		snprintf(msg, len, "the shares of the I/Os add up to %u%%, not 100%%", io);
		return -EINVAL;
	}
	if (blank >= 0 && lba < 100)
		a->zone[blank].lba_pct = (uint8_t)(100 - lba);
	else if (lba != 100 || blank >= 0) {
		snprintf(msg, len, "the shares of the span add up to %u%%, not 100%%", lba);
		return -EINVAL;
	}
	return 0;
}

/* "50/5:30/15:20/80" into a. Returns 0 or -EINVAL. */
static int parse_zones(const char *v, struct access_spec *a, char *msg, size_t len)
{
	char buf[256], *save = NULL;
	int blank = -1;

	if (strlen(v) >= sizeof(buf)) {
		snprintf(msg, len, "the zones are longer than %zu characters", sizeof(buf) - 1);
		return -EINVAL;
	}
	util_strlcpy(buf, v, sizeof(buf));
	for (char *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		int b;
		if (a->nzones == ACCESS_MAX_ZONES) {
			snprintf(msg, len, "more than %d zones", ACCESS_MAX_ZONES);
			return -EINVAL;
		}
		if (parse_zone(util_strip(tok), &a->zone[a->nzones], &b, msg, len) < 0)
			return -EINVAL;
		if (b && blank >= 0) {
			snprintf(msg, len, "more than one zone leaves its share of the span empty");
			return -EINVAL;
		}
		if (b)
			blank = (int)a->nzones;
		a->nzones++;
	}
	if (!a->nzones) {
		snprintf(msg, len, "no zones (use e.g. zoned:50/5:30/15:20/80)");
		return -EINVAL;
	}
	return close_zones(a, blank, msg, len);
}

/* The parameter of zipf or pareto, within its range. Returns 0 or -EINVAL. */
static int parse_param(const char *v, struct access_spec *a, char *msg, size_t len)
{
	double d;
	int zipf = a->kind == ACCESS_ZIPF;

	if (util_parse_double(v, &d) < 0 ||
	    (zipf ? !(d > 0 && d <= THETA_MAX) : !(d > 0 && d < 1))) {
		snprintf(msg, len, "%s: \"%s\" is not %s", kind_names[a->kind], v,
			 zipf ? "a theta above 0 and at most 10 (e.g. zipf:1.2)"
			      : "an h above 0 and below 1 (e.g. pareto:0.2)");
		return -EINVAL;
	}
	a->param = d;
	return 0;
}

int access_parse(const char *text, struct access_spec *out, char *msg, size_t len)
{
	struct access_spec a;
	char buf[256];
	char *v, *colon;
	int k;

	memset(&a, 0, sizeof(a));
	util_strlcpy(buf, text, sizeof(buf));
	v = util_strip(buf);
	colon = strchr(v, ':');
	if (colon)
		*colon = '\0';
	for (k = 0; k < ACCESS__COUNT && strcasecmp(util_strip(v), kind_names[k]); k++)
		;
	if (k == ACCESS__COUNT || (k == ACCESS_UNIFORM) != !colon) {
		snprintf(msg, len,
			 "\"%s\" is not a distribution (use uniform, zoned:50/5:30/15:20/80, "
			 "zipf:1.2 or pareto:0.2)",
			 text);
		return -EINVAL;
	}
	a.kind = (enum access_kind)k;
	if (a.kind == ACCESS_ZONED && parse_zones(colon + 1, &a, msg, len) < 0)
		return -EINVAL;
	if ((a.kind == ACCESS_ZIPF || a.kind == ACCESS_PARETO) &&
	    parse_param(colon + 1, &a, msg, len) < 0)
		return -EINVAL;
	*out = a;
	return 0;
}

const char *access_text(const struct access_spec *a, char *buf, size_t len)
{
	size_t used;

	if ((unsigned)a->kind >= ACCESS__COUNT) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	used = (size_t)snprintf(buf, len, "%s", kind_names[a->kind]);
	if (a->kind == ACCESS_ZIPF || a->kind == ACCESS_PARETO)
		snprintf(buf + used, used < len ? len - used : 0, ":%.9g", a->param);
	for (unsigned i = 0; a->kind == ACCESS_ZONED && i < a->nzones && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, ":%u/%u", a->zone[i].io_pct,
					 a->zone[i].lba_pct);
	return buf;
}

/* ---- the table ---- */

/* The first unit of the zone that starts cum percent into n units. */
static uint64_t zone_edge(unsigned cum, uint64_t n)
{
	return (uint64_t)((unsigned __int128)n * cum / 100);
}

int access_check(const struct access_spec *a, uint64_t span_len, uint64_t unit, char *msg,
		 size_t len)
{
	uint64_t n = unit ? span_len / unit : 0;
	unsigned cum = 0;

	if ((unsigned)a->kind >= ACCESS__COUNT || a->nzones > ACCESS_MAX_ZONES) {
		snprintf(msg, len, "invalid access distribution");
		return -EINVAL;
	}
	for (unsigned i = 0; a->kind == ACCESS_ZONED && i < a->nzones; i++) {
		unsigned next = cum + a->zone[i].lba_pct;
		if (a->zone[i].io_pct && zone_edge(next, n) == zone_edge(cum, n)) {
			snprintf(msg, len,
				 "access zone %u (%u%% of the span) holds no whole block of %llu "
				 "bytes in a span of %llu bytes",
				 i + 1, a->zone[i].lba_pct, (unsigned long long)unit,
				 (unsigned long long)span_len);
			return -EINVAL;
		}
		cum = next;
	}
	return 0;
}

/* Sum of k^-theta for k = a..b (1-based, a <= b): directly for a short
 * run, else by the Euler-Maclaurin formula to the third derivative, whose
 * remainder is below 1e-12 of the sum from a = 65 on (the bins past the
 * singles start there). */
static double zipf_sum(double theta, uint64_t a, uint64_t b)
{
	double s = 0, fa, fb, eps = 1.0 - theta, x = (double)a, y = (double)b;

	if (b - a < 64) {
		for (uint64_t k = a; k <= b; k++)
			s += pow((double)k, -theta);
		return s;
	}
	fa = pow(x, -theta);
	fb = pow(y, -theta);
	/* the integral from a to b of t^-theta, stable as theta nears 1 */
	s = eps == 0 ? log(y / x) : pow(x, eps) * expm1(eps * log(y / x)) / eps;
	s += (fa + fb) / 2;
	s += theta * (fa / x - fb / y) / 12;
	s -= theta * (theta + 1) * (theta + 2) * (fa / (x * x * x) - fb / (y * y * y)) / 720;
	return s;
}

/* Share of the draws of fio's Pareto whose rank is below y * n (0..1),
 * the rank counted from the hot end: x = u^p puts the hot end at 0 when
 * h <= 1/2 (1/p <= 1) and at 1 above, where the rank is counted from 1. */
static double pareto_cdf(double h, double y)
{
	double ip = log(1.0 - h) / log(h); /* 1/p */

	if (y <= 0 || y >= 1)
		return y <= 0 ? 0 : 1;
	if (h <= 0.5)
		return pow(y, ip);
	return -expm1(ip * log1p(-y));
}

/* Bins of ranks for Zipf and Pareto: SINGLES ranks one each, then bins
 * growing by GROW, or faster where n is so large that they would not fit.
 * Returns the count. */
static unsigned rank_bins(struct access_table *t)
{
	uint64_t n = t->n, e = 0;
	unsigned nb = 0, left = ACCESS_MAX_BINS - SINGLES - 2;
	double grow = GROW;

	for (; e < n && e < SINGLES; e++)
		t->first[nb++] = e;
	if (e < n && log((double)n / (double)e) / log(grow) > left)
		grow = exp(log((double)n / (double)e) / left);
	while (e < n) {
		t->first[nb++] = e;
		double next = ceil((double)e * grow);
		e = next < (double)n && nb < ACCESS_MAX_BINS ? (uint64_t)next : n;
	}
	t->first[nb] = n;
	return nb;
}

/* The weight of bin i. */
static double bin_weight(const struct access_table *t, const struct access_spec *a, unsigned i)
{
	uint64_t lo = t->first[i], hi = t->first[i + 1];

	if (a->kind == ACCESS_ZONED)
		return a->zone[i].io_pct;
	if (a->kind == ACCESS_ZIPF)
		return zipf_sum(a->param, lo + 1, hi);
	return pareto_cdf(a->param, (double)hi / (double)t->n) -
	       pareto_cdf(a->param, (double)lo / (double)t->n);
}

/* Vose's alias method over the weights w of t's bins: a bin drawn
 * uniformly is kept with probability keep, else replaced by its alias, so
 * that each bin comes out with its share of the total weight. */
static void alias_build(struct access_table *t, const double *w)
{
	double p[ACCESS_MAX_BINS], total = 0;
	uint16_t small[ACCESS_MAX_BINS] = { 0 }, large[ACCESS_MAX_BINS] = { 0 };
	unsigned ns = 0, nl = 0, nb = t->nbins;

	for (unsigned i = 0; i < nb; i++)
		total += w[i];
	for (unsigned i = 0; i < nb; i++) {
		p[i] = w[i] * nb / total;
		t->alias[i] = (uint16_t)i;
		if (p[i] < 1)
			small[ns++] = (uint16_t)i;
		else
			large[nl++] = (uint16_t)i;
	}
	while (ns && nl) {
		unsigned s = small[--ns], l = large[nl - 1];
		t->keep[s] = (uint32_t)(p[s] * TWO32);
		t->alias[s] = (uint16_t)l;
		p[l] -= 1.0 - p[s];
		if (p[l] < 1) {
			nl--;
			small[ns++] = (uint16_t)l;
		}
	}
	/* what is left holds its whole slot (up to rounding) */
	while (nl)
		t->keep[large[--nl]] = UINT32_MAX;
	while (ns)
		t->keep[small[--ns]] = UINT32_MAX;
}

/* The permutation of access_place over n units, fixed by n. */
static void place_init(struct access_table *t)
{
	unsigned bits = 0;

	while (bits < 64 && (1ull << bits) < t->n)
		bits++;
	t->mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
	t->shift = bits / 2 + 1;
	t->mul1 = (0x9e3779b97f4a7c15ull & t->mask) | 1;
	t->mul2 = (0xbf58476d1ce4e5b9ull & t->mask) | 1;
	t->add = 0x94d049bb133111ebull & t->mask;
}

void access_init(struct access_table *t, const struct access_spec *a, uint64_t n)
{
	double w[ACCESS_MAX_BINS];
	unsigned cum = 0;

	memset(t, 0, sizeof(*t));
	t->n = n ? n : 1;
	if (a->kind == ACCESS_UNIFORM)
		return;
	if (a->kind == ACCESS_ZONED) {
		for (unsigned i = 0; i < a->nzones; i++) {
			t->first[i] = zone_edge(cum, t->n);
			cum += a->zone[i].lba_pct;
		}
		t->nbins = a->nzones;
		t->first[t->nbins] = t->n;
	} else {
		t->nbins = rank_bins(t);
		t->scatter = 1;
		place_init(t);
	}
	for (unsigned i = 0; i < t->nbins; i++)
		w[i] = bin_weight(t, a, i);
	alias_build(t, w);
}
