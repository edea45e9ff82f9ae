/* util: unit parsing, time formatting and small helpers shared by every module. */
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

/* Durations beyond this (about 31 years) are certainly typos. */
#define DURATION_MAX_S 1e9

/* Bytes in a fraction are computed exactly; more digits than this is silly. */
#define FRAC_DIGITS_MAX 18

struct unit {
	const char *suffix;
	uint64_t mult;
};

/* Byte suffixes, matched case-insensitively: bare letters and the IEC "iB"
 * forms are powers of 1024, the SI "B" forms powers of 1000. */
static const struct unit byte_units[] = {
	{ "", 1 },
	{ "b", 1 },
	{ "k", 1ULL << 10 },
	{ "kib", 1ULL << 10 },
	{ "kb", 1000ULL },
	{ "m", 1ULL << 20 },
	{ "mib", 1ULL << 20 },
	{ "mb", 1000000ULL },
	{ "g", 1ULL << 30 },
	{ "gib", 1ULL << 30 },
	{ "gb", 1000000000ULL },
	{ "t", 1ULL << 40 },
	{ "tib", 1ULL << 40 },
	{ "tb", 1000000000000ULL },
	{ "p", 1ULL << 50 },
	{ "pib", 1ULL << 50 },
	{ "pb", 1000000000000000ULL },
};

struct dur_unit {
	const char *suffix;
	double seconds;
};

static const struct dur_unit dur_units[] = {
	{ "", 1 },   { "s", 1 },    { "sec", 1 },  { "ms", 1e-3 }, { "us", 1e-6 },
	{ "m", 60 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 },
};

/* A decimal number split into its parts; text is not NUL-terminated. */
struct decimal {
	const char *int_start;
	size_t int_len;
	const char *frac_start;
	size_t frac_len;
	const char *end; /* first character after the number */
};

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* Scan "123" or "1.25" (no sign, no exponent). Returns 0 or -EINVAL. */
static int scan_decimal(const char *s, struct decimal *d)
{
	memset(d, 0, sizeof(*d));
	d->int_start = s;
	while (isdigit((unsigned char)*s))
		s++;
	d->int_len = (size_t)(s - d->int_start);
	if (d->int_len == 0)
		return -EINVAL;
	if (*s == '.') {
		d->frac_start = ++s;
		while (isdigit((unsigned char)*s))
			s++;
		d->frac_len = (size_t)(s - d->frac_start);
		if (d->frac_len == 0)
			return -EINVAL;
	}
	d->end = s;
	return 0;
}

/* The suffix after the number: optional spaces, a word, trailing spaces.
 * Copies the word to buf. Returns 0 or -EINVAL. */
static int scan_suffix(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	s = skip_space(s);
	while (*s && !isspace((unsigned char)*s)) {
		if (n + 1 >= len)
			return -EINVAL;
		buf[n++] = *s++;
	}
	buf[n] = '\0';
	return *skip_space(s) ? -EINVAL : 0;
}

static int find_byte_unit(const char *suffix, uint64_t *mult)
{
	for (size_t i = 0; i < ARRAY_SIZE(byte_units); i++) {
		if (strcasecmp(suffix, byte_units[i].suffix) == 0) {
			*mult = byte_units[i].mult;
			return 0;
		}
	}
	return -EINVAL;
}

/* Exact value of d * mult in bytes. Returns 0, -EINVAL (not whole bytes)
 * or -ERANGE. */
static int decimal_times(const struct decimal *d, uint64_t mult, uint64_t *out)
{
	__extension__ typedef unsigned __int128 u128;
	u128 ip = 0, fp = 0, scale = 1, total;

	if (d->frac_len > FRAC_DIGITS_MAX)
		return -EINVAL;
	for (size_t i = 0; i < d->int_len; i++) {
		ip = ip * 10 + (u128)(d->int_start[i] - '0');
		if (ip > UINT64_MAX)
			return -ERANGE;
	}
	for (size_t i = 0; i < d->frac_len; i++) {
		fp = fp * 10 + (u128)(d->frac_start[i] - '0');
		scale *= 10;
	}
	if ((fp * mult) % scale != 0)
		return -EINVAL;
	total = ip * mult + fp * mult / scale;
	if (total > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)total;
	return 0;
}

int util_parse_bytes(const char *s, uint64_t *out)
{
	struct decimal d;
	char suffix[8];
	uint64_t mult;

	if (!s || scan_decimal(skip_space(s), &d) < 0)
		return -EINVAL;
	if (scan_suffix(d.end, suffix, sizeof(suffix)) < 0 || find_byte_unit(suffix, &mult) < 0)
		return -EINVAL;
	return decimal_times(&d, mult, out);
}

/* Parse "12.5%" into a percentage. Returns 0, -EINVAL or -ERANGE (> 100). */
static int parse_percent(const char *s, double *out)
{
	struct decimal d;
	const char *p = skip_space(s);

	if (scan_decimal(p, &d) < 0)
		return -EINVAL;
	p = skip_space(d.end);
	if (*p != '%' || *skip_space(p + 1))
		return -EINVAL;
	*out = strtod(d.int_start, NULL);
	return *out > 100.0 ? -ERANGE : 0;
}

int util_parse_qty(const char *s, struct qty *out)
{
	struct qty q = { 0 };
	int rc;

	if (!s)
		return -EINVAL;
	if (strchr(s, '%')) {
		q.is_percent = 1;
		rc = parse_percent(s, &q.percent);
	} else {
		rc = util_parse_bytes(s, &q.bytes);
	}
	if (rc == 0)
		*out = q;
	return rc;
}

uint64_t util_qty_resolve(const struct qty *q, uint64_t capacity, uint64_t align)
{
	__extension__ typedef unsigned __int128 u128;
	uint64_t v;

	if (!q->is_percent)
		return q->bytes;
	/* Parts per 10^8 keep "12.5%" exact and avoid double rounding on
	 * capacities beyond 2^53 bytes. */
	u128 ppm = (u128)llround(q->percent * 1e6);
	v = (uint64_t)((u128)capacity * ppm / 100000000u);
	if (align > 1)
		v -= v % align;
	return v;
}

int util_parse_duration(const char *s, double *seconds)
{
	struct decimal d;
	char suffix[8];

	if (!s || scan_decimal(skip_space(s), &d) < 0)
		return -EINVAL;
	if (scan_suffix(d.end, suffix, sizeof(suffix)) < 0)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(dur_units); i++) {
		if (strcasecmp(suffix, dur_units[i].suffix) != 0)
			continue;
		double v = strtod(d.int_start, NULL) * dur_units[i].seconds;
		if (!isfinite(v) || v > DURATION_MAX_S)
			return -ERANGE;
		*seconds = v;
		return 0;
	}
	return -EINVAL;
}

int util_parse_bool(const char *s, int *out)
{
	static const struct {
		const char *word;
		int value;
	} words[] = {
		{ "yes", 1 }, { "true", 1 },  { "on", 1 },  { "1", 1 },
		{ "no", 0 },  { "false", 0 }, { "off", 0 }, { "0", 0 },
	};
	char buf[8];

	if (!s || scan_suffix(s, buf, sizeof(buf)) < 0)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		if (strcasecmp(buf, words[i].word) == 0) {
			*out = words[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

int util_parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!s)
		return -EINVAL;
	s = skip_space(s);
	if (!isdigit((unsigned char)*s) &&
	    !((*s == '-' || *s == '+') && isdigit((unsigned char)s[1])))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*skip_space(end))
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int util_parse_double(const char *s, double *out)
{
	char *end;
	double v;
	size_t n;

	if (!s)
		return -EINVAL;
	s = skip_space(s);
	/* strtod also takes "inf", "nan" and hex; a config file should not. */
	n = strspn(s, "0123456789.eE+-");
	if (n == 0 || *skip_space(s + n) || !strpbrk(s, "0123456789"))
		return -EINVAL;
	v = strtod(s, &end);
	if (end != s + n || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

char *util_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024.0 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, "%.2f %s", v, units[u]);
	return buf;
}

char *util_iso_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
	return buf;
}

char *util_fmt_duration(double s, char *buf, size_t len)
{
	if (isnan(s))
		snprintf(buf, len, "-");
	else if (s < 90)
		snprintf(buf, len, "%.0f s", s);
	else if (s < 90 * 60)
		snprintf(buf, len, "%.0f min", s / 60);
	else if (s < 48 * 3600)
		snprintf(buf, len, "%.1f h", s / 3600);
	else
		snprintf(buf, len, "%.1f d", s / 86400);
	return buf;
}

double util_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

size_t util_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size > 0) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

int util_split_list(const char *v, char *buf, size_t bufsz, char **tok, int max, const char *what,
		    char *msg, size_t len)
{
	char *save = NULL;
	int n = 0;

	if (strlen(v) >= bufsz) {
		snprintf(msg, len, "is longer than %zu characters", bufsz - 1);
		return -EINVAL;
	}
	util_strlcpy(buf, v, bufsz);
	for (char *t = strtok_r(buf, " \t,", &save); t; t = strtok_r(NULL, " \t,", &save)) {
		if (n == max) {
			snprintf(msg, len, "more than %d %s", max, what);
			return -EINVAL;
		}
		tok[n++] = t;
	}
	return n;
}

char *util_strip(char *s)
{
	const char *start = skip_space(s);
	size_t n = strlen(start);

	while (n > 0 && isspace((unsigned char)start[n - 1]))
		n--;
	memmove(s, start, n);
	s[n] = '\0';
	return s;
}

#define HUGE_BYTES ((size_t)2 << 20)

/* Transparent huge pages are a hint: where the kernel has none free, or
 * they are off, the mapping gets small pages as before. What they buy:
 * O_DIRECT pins every page of a request in io_submit, 256 small pages per
 * 1 MiB write, where perf put a quarter of wearmond's CPU at 1M seqwrite
 * QD8, against one step per huge page; and the data generator's stores
 * miss the TLB less (tools/bench/results/2026-12-04-engine-changes.md, item 7). */
void *util_buf_alloc(size_t n, size_t *len)
{
	size_t want = n ? (n + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES : HUGE_BYTES;
	size_t map = want + HUGE_BYTES;
	char *p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	char *b = (char *)(((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
	if (b > p)
		munmap(p, (size_t)(b - p));
	if (b + want < p + map)
		munmap(b + want, (size_t)(p + map - (b + want)));
#ifdef MADV_HUGEPAGE
	(void)madvise(b, want, MADV_HUGEPAGE);
#endif
	*len = want;
	return b;
}

void util_buf_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}
