/* opts: table-driven parsing of simssd's -o options. */
#include "opts.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum opt_type { OPT_SIZE, OPT_TIME, OPT_UINT, OPT_PERCENT, OPT_REAL, OPT_BOOL, OPT_PATH, OPT_TEXT };

struct opt_def {
	const char *name;
	enum opt_type type;
	size_t offset;
	const char *def;
	double min, max; /* in the field's unit (bytes, ns, count, %) */
	const char *help;
};

#define F(field) offsetof(struct simssd_opts, field)

/* The defaults keep real MLC timings (1 ms program, 50 us read, 2 ms erase)
 * and scale the parallelism down (2 channels of one 4 KiB-page die instead
 * of 8 channels of 4 dies with 16 KiB pages): 7.8 MiB/s when fresh, slow
 * enough that FUSE's per-request cost (~0.15 ms here) stays hidden. */
static const struct opt_def defs[] = {
	{ "capacity", OPT_SIZE, F(capacity), "256M", 1 << 20, 64.0 * (1ull << 30),
	  "host-visible size" },
	{ "page", OPT_SIZE, F(page), "4k", 512, 65536, "flash page (program unit, mapping unit)" },
	{ "erase_block", OPT_SIZE, F(erase_block), "64k", 512, 64 << 20, "erase block" },
	{ "spare", OPT_PERCENT, F(spare), "7", 0, 400, "factory spare area, percent of capacity" },
	{ "channels", OPT_UINT, F(channels), "2", 1, 64, "flash channels working in parallel" },
	{ "t_prog", OPT_TIME, F(t_prog), "1ms", 0, 1e9, "page program time" },
	{ "t_read", OPT_TIME, F(t_read), "50us", 0, 1e9, "page read time" },
	{ "t_erase", OPT_TIME, F(t_erase), "2ms", 0, 1e10, "block erase time" },
	{ "cache", OPT_SIZE, F(cache), "1M", 0, 1 << 30,
	  "write cache; writes return once queued flash work fits in it" },
	{ "gc_free", OPT_UINT, F(gc_free), "1", 1, 1024,
	  "garbage-collect a channel when its free blocks fall to this" },
	{ "bg_gc_free", OPT_UINT, F(bg_gc_free), "0", 0, 1 << 20,
	  "background GC: an idle channel reclaims blocks up to this many free (0: none)" },
	{ "bg_gc_idle", OPT_TIME, F(bg_gc_idle), "100ms", 0, 3600e9,
	  "idle flash time before background GC starts" },
	{ "compress", OPT_BOOL, F(compress), "0", 0, 1,
	  "1: compress pages inline (SandForce-like), cost follows size" },
	{ "store", OPT_PATH, F(store), "", 0, 0,
	  "file for the drive's data (default: anonymous memory)" },
	{ "thermal_ambient", OPT_REAL, F(thermal_ambient), "35", -40, 150,
	  "idle temperature, degrees C" },
	{ "thermal_rise", OPT_REAL, F(thermal_rise), "0.5", 0, 100,
	  "degrees C above ambient per MiB/s written, once steady" },
	{ "thermal_tau", OPT_TIME, F(thermal_tau), "20s", 1e6, 3600e9,
	  "time constant of heating and cooling" },
	{ "throttle_temp", OPT_REAL, F(throttle_temp), "0", 0, 200,
	  "throttle writes at this temperature, degrees C (0: never)" },
	{ "throttle_rate", OPT_SIZE, F(throttle_rate), "1M", 4096, 64.0 * (1ull << 30),
	  "bytes per second written while throttled" },
	{ "serial", OPT_TEXT, F(serial), "", 0, OPTS_SERIAL_MAX,
	  "serial number in the identity file (default: none)" },
	{ "model", OPT_TEXT, F(model), "", 0, OPTS_MODEL_MAX,
	  "model number in the identity file (default: none)" },
	{ "firmware", OPT_TEXT, F(firmware), "", 0, OPTS_FIRMWARE_MAX,
	  "firmware revision in the identity file (default: none)" },
	/* endurance: percentage used = mean erase count / endurance */
	{ "endurance", OPT_UINT, F(endurance), "0", 0, 1e7,
	  "rated erase cycles per block; the stats file's percentage_used (0: none)" },
	{ "wear_accel", OPT_UINT, F(wear_accel), "1", 1, 1e6,
	  "each erase counts this many times: a drive that wears out in minutes" },
};

struct unit {
	const char *suffix;
	double scale;
};

/* Longest suffixes first so "ms" is not read as "s". */
static const struct unit size_units[] = {
	{ "KiB", 1024.0 },
	{ "MiB", 1048576.0 },
	{ "GiB", 1073741824.0 },
	{ "TiB", 1099511627776.0 },
	{ "k", 1024.0 },
	{ "K", 1024.0 },
	{ "M", 1048576.0 },
	{ "G", 1073741824.0 },
	{ "T", 1099511627776.0 },
	{ "B", 1.0 },
	{ "", 1.0 },
};

static const struct unit time_units[] = {
	{ "ns", 1.0 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e3 },
};

static int parse_scaled(const char *s, const struct unit *u, size_t nu, double *out)
{
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -EINVAL;
	for (i = 0; i < nu; i++) {
		if (strcmp(end, u[i].suffix) == 0) {
			*out = v * u[i].scale;
			return 0;
		}
	}
	return -EINVAL;
}

static int to_u64(double v, uint64_t *out)
{
	if (v >= 18446744073709551616.0)
		return -ERANGE;
	*out = (uint64_t)llround(v);
	return 0;
}

int opts_parse_size(const char *s, uint64_t *out)
{
	double v;
	int r = parse_scaled(s, size_units, sizeof(size_units) / sizeof(size_units[0]), &v);

	return r < 0 ? r : to_u64(v, out);
}

int opts_parse_time(const char *s, uint64_t *out)
{
	double v;
	int r = parse_scaled(s, time_units, sizeof(time_units) / sizeof(time_units[0]), &v);

	return r < 0 ? r : to_u64(v, out);
}

static int parse_bool(const char *s, int *out)
{
	static const char *yes[] = { "1", "yes", "on", "true" };
	static const char *no[] = { "0", "no", "off", "false" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
			*out = strcasecmp(s, yes[i]) == 0;
			return 0;
		}
	}
	return -EINVAL;
}

/* An identity text: printable ASCII (spaces inside), at most max
 * characters, as a drive's identify data holds it. */
static int check_text(const char *val, double max)
{
	size_t n = strlen(val);
	if ((double)n > max)
		return -ERANGE;
	for (size_t i = 0; i < n; i++)
		if (val[i] < 0x20 || val[i] > 0x7e)
			return -EINVAL;
	return n && (val[0] == ' ' || val[n - 1] == ' ') ? -EINVAL : 0;
}

/* Parse value for row d into its field of o. */
static int set_field(struct simssd_opts *o, const struct opt_def *d, const char *val)
{
	void *base = (char *)o + d->offset;
	uint64_t u = 0;
	double v;
	char *end, *copy;
	int r = 0;

	switch (d->type) {
	case OPT_SIZE: r = opts_parse_size(val, &u); break;
	case OPT_TIME: r = opts_parse_time(val, &u); break;
	case OPT_UINT:
		errno = 0;
		u = strtoull(val, &end, 10);
		r = (end == val || *end || errno || val[0] == '-') ? -EINVAL : 0;
		break;
	case OPT_PERCENT:
	case OPT_REAL:
		v = strtod(val, &end);
		if (end == val || (*end && (d->type == OPT_REAL || strcmp(end, "%"))) ||
		    !isfinite(v))
			return -EINVAL;
		if (v < d->min || v > d->max)
			return -ERANGE;
		*(double *)base = v;
		return 0;
	case OPT_BOOL: return parse_bool(val, (int *)base);
	case OPT_TEXT:
		r = check_text(val, d->max);
		if (r < 0)
			return r;
		/* fall through */
	case OPT_PATH:
		copy = val[0] ? strdup(val) : NULL;
		if (val[0] && !copy)
			return -ENOMEM;
		free(*(char **)base);
		*(char **)base = copy;
		return 0;
	}
	if (r < 0)
		return r;
	if ((double)u < d->min || (double)u > d->max)
		return -ERANGE;
	*(uint64_t *)base = u;
	return 0;
}

int opts_set(struct simssd_opts *o, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t i, n;

	if (!eq)
		return -ENOENT;
	n = (size_t)(eq - kv);
	for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (strlen(defs[i].name) == n && strncmp(defs[i].name, kv, n) == 0)
			return set_field(o, &defs[i], eq + 1);
	return -ENOENT;
}

int opts_defaults(struct simssd_opts *o)
{
	size_t i;
	int r;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		r = set_field(o, &defs[i], defs[i].def);
		if (r < 0)
			return r;
	}
	return 0;
}

void opts_free(struct simssd_opts *o)
{
	free(o->store);
	free(o->serial);
	free(o->model);
	free(o->firmware);
	o->store = o->serial = o->model = o->firmware = NULL;
}

size_t opts_format_identity(const struct simssd_opts *o, char *buf, size_t size)
{
	const char *const v[][2] = {
		{ "serial", o->serial },
		{ "model", o->model },
		{ "firmware", o->firmware },
	};
	size_t p = 0;

	if (size == 0)
		return 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (!v[i][1] || p >= size)
			continue;
		int n = snprintf(buf + p, size - p, "%s %s\n", v[i][0], v[i][1]);
		if (n > 0)
			p = p + (size_t)n < size ? p + (size_t)n : size - 1;
	}
	return p;
}

void opts_help(FILE *out)
{
	size_t i;

	fprintf(out, "simssd options (-o name=value,...):\n");
	for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		fprintf(out, "    %-12s default %-7s %s\n", defs[i].name,
			defs[i].def[0] ? defs[i].def : "-", defs[i].help);
	fprintf(out, "  sizes take k/M/G/T (powers of 1024); times ns/us/ms/s "
		     "(bare numbers are us)\n");
}

void opts_to_thermal(const struct simssd_opts *o, struct thermal_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ambient_c = o->thermal_ambient;
	cfg->rise_c = o->thermal_rise;
	cfg->tau_ns = o->thermal_tau;
	cfg->throttle_c = o->throttle_temp;
	cfg->throttle_bps = o->throttle_rate;
}

void opts_to_ftl(const struct simssd_opts *o, struct ftl_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->capacity = o->capacity;
	cfg->page = (uint32_t)o->page;
	cfg->erase_block = (uint32_t)o->erase_block;
	cfg->spare_pct = o->spare;
	cfg->channels = (uint32_t)o->channels;
	cfg->t_prog = o->t_prog;
	cfg->t_read = o->t_read;
	cfg->t_erase = o->t_erase;
	cfg->cache = o->cache;
	cfg->gc_free = (uint32_t)o->gc_free;
	cfg->bg_free = (uint32_t)o->bg_gc_free;
	cfg->bg_idle = o->bg_gc_idle;
	cfg->endurance = (uint32_t)o->endurance;
	cfg->wear_accel = (uint32_t)o->wear_accel;
}
