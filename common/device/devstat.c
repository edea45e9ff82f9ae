/* devstat: parsers of drive logs into one reading, and the deltas between
 * two (layouts: common/device/DEVICE_LOGS.md). */
#include "device/devstat.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OCP_GUID_OFFSET 496
#define OCP_VERSION_OFFSET 494
#define OCP_THROTTLE_OFFSET 96

/* The OCP log page GUID AFD514C9-7C6F-4F9C-A4F2-BFEA2810AFC5 as the log
 * stores it, least significant byte first (DEVICE_LOGS.md, "OCP C0h"). */
static const uint8_t ocp_guid[16] = { 0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4,
				      0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5, 0xAF };

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A 128-bit little-endian counter as a double. */
static double le128(const uint8_t *p)
{
	return (double)le(p + 8, 8) * 18446744073709551616.0 + (double)le(p, 8);
}

static struct devstat_opt opt(int64_t v)
{
	return (struct devstat_opt){ 1, v };
}

int devstat_parse_ocp(const uint8_t buf[DEVSTAT_PAGE_LEN], struct devstat_ocp *out)
{
	memset(out, 0, sizeof(*out));
	if (memcmp(buf + OCP_GUID_OFFSET, ocp_guid, sizeof(ocp_guid)))
		return -EBADMSG;
	out->media_bytes_written = le128(buf);
	out->media_bytes_read = le128(buf + 16);
	out->throttle_count = buf[OCP_THROTTLE_OFFSET];
	out->throttle_status = buf[OCP_THROTTLE_OFFSET + 1];
	out->version = (uint16_t)le(buf + OCP_VERSION_OFFSET, 2);
	return 0;
}

/* ---- ATA Device Statistics ------------------------------------------- */

#define QW_SUPPORTED (1ull << 63)
#define QW_VALID (1ull << 62)
#define QW_VALUE_MASK 0x0000FFFFFFFFFFFFull /* bits 47:0 */

/* The statistic at offset of a page: its value when the drive says it
 * supports it and the value is valid, else unknown. */
static struct devstat_opt qword(const uint8_t *page, unsigned offset, uint64_t mask)
{
	uint64_t q = le(page + offset, 8);
	if ((q & (QW_SUPPORTED | QW_VALID)) != (QW_SUPPORTED | QW_VALID))
		return (struct devstat_opt){ 0, 0 };
	return opt((int64_t)(q & mask));
}

/* A temperature statistic: a signed byte of degrees Celsius; -128 (80h)
 * means the drive has not measured it. */
static struct devstat_opt temperature(const uint8_t *page, unsigned offset)
{
	struct devstat_opt t = qword(page, offset, 0xff);
	if (t.has) {
		t.v = (int8_t)(uint8_t)t.v;
		t.has = t.v != -128;
	}
	return t;
}

int devstat_parse_ata_page(const uint8_t buf[DEVSTAT_PAGE_LEN], uint8_t page,
			   struct devstat_ata *out)
{
	/* header qword: revision (bytes 0-1), page number (byte 2) */
	if (buf[2] != page)
		return -EBADMSG;
	switch (page) {
	case DEVSTAT_ATA_GENERAL:
		out->sectors_written = qword(buf, 0x18, QW_VALUE_MASK);
		out->sectors_read = qword(buf, 0x28, QW_VALUE_MASK);
		return 0;
	case DEVSTAT_ATA_TEMP:
		out->temp_c = temperature(buf, 0x08);
		out->temp_max_c = temperature(buf, 0x20);
		out->over_temp_minutes = qword(buf, 0x50, 0xffffffffu);
		return 0;
	case DEVSTAT_ATA_SSD: out->pct_used = qword(buf, 0x08, 0xff); return 0;
	default: return -ENOTSUP;
	}
}

/* ---- SMART attribute tables ------------------------------------------- */

/* Each vendor's attributes and units: DEVICE_LOGS.md, "SMART write
 * attributes", names the source of every row. The generic table last. */
static const char *const intel_models[] = { "INTEL SSD", NULL };
static const char *const sandforce_models[] = { "KINGSTON SV", "KINGSTON SH", "SandForce", NULL };
static const char *const wd_models[] = { "WDC  WDS", "WDC WDS", "SanDisk SDSSDA", NULL };
static const char *const micron_models[] = { "Micron", "Crucial", "CT", NULL };

#define GIB 1073741824.0
#define MIB32 33554432.0

static const struct devstat_attr_table tables[] = {
	{ "intel", intel_models, 241, MIB32, 249, GIB },
	{ "sandforce", sandforce_models, 241, GIB, 233, GIB },
	{ "wdc-sandisk", wd_models, 241, GIB, 233, GIB },
	{ "micron-crucial", micron_models, 246, 512, 0, 0 },
	{ "generic", NULL, 241, 512, 0, 0 },
};

static int model_matches(const char *const *prefixes, const char *model)
{
	if (!prefixes)
		return 1;
	for (; *prefixes; prefixes++)
		if (!strncmp(model, *prefixes, strlen(*prefixes)))
			return 1;
	return 0;
}

const struct devstat_attr_table *devstat_attr_table_for(const char *model)
{
	size_t n = sizeof(tables) / sizeof(tables[0]);
	for (size_t i = 0; i + 1 < n; i++)
		if (model && model_matches(tables[i].models, model))
			return &tables[i];
	return &tables[n - 1];
}

/* Bytes of attribute id, unknown when the page lacks it. */
static struct devstat_opt attr_bytes(const struct ata_smart *sm, uint8_t id, double unit)
{
	if (!id)
		return (struct devstat_opt){ 0, 0 };
	for (unsigned i = 0; i < sm->count; i++)
		if (sm->attr[i].id == id)
			return opt((int64_t)((double)sm->attr[i].raw * unit));
	return (struct devstat_opt){ 0, 0 };
}

void devstat_smart_writes(const struct ata_smart *sm, const struct devstat_attr_table *t,
			  struct devstat_opt *host, struct devstat_opt *media)
{
	*host = attr_bytes(sm, t->host_id, t->host_unit);
	*media = attr_bytes(sm, t->media_id, t->media_unit);
}

/* ---- one reading ------------------------------------------------------- */

void devstat_set(struct devstat *d, enum devstat_field f, int64_t v)
{
	d->f[f] = opt(v);
}

void devstat_from_nvme(const struct nvme_health *h, struct devstat *d)
{
	d->source = "nvme";
	devstat_set(d, DEVSTAT_HOST_BYTES, (int64_t)h->bytes_written);
	if (h->temperature_k)
		devstat_set(d, DEVSTAT_TEMP_C, h->temperature_c);
	devstat_set(d, DEVSTAT_THROTTLE_MS,
		    ((int64_t)h->tmt1_seconds + (int64_t)h->tmt2_seconds) * 1000);
	d->throttle_res_ms = 1000;
	devstat_set(d, DEVSTAT_MEDIA_ERRORS, (int64_t)h->media_errors);
	devstat_set(d, DEVSTAT_SPARE_PCT, h->avail_spare);
}

void devstat_from_ocp(const struct devstat_ocp *o, struct devstat *d)
{
	devstat_set(d, DEVSTAT_MEDIA_BYTES, (int64_t)o->media_bytes_written);
}

void devstat_from_ata(const struct devstat_ata *a, uint32_t sector_size,
		      const struct devstat_opt *smart_host, const struct devstat_opt *smart_media,
		      struct devstat *d)
{
	d->source = "ata";
	if (a->sectors_written.has)
		devstat_set(d, DEVSTAT_HOST_BYTES, a->sectors_written.v * (int64_t)sector_size);
	else if (smart_host->has)
		d->f[DEVSTAT_HOST_BYTES] = *smart_host;
	if (smart_media->has)
		d->f[DEVSTAT_MEDIA_BYTES] = *smart_media;
	if (a->temp_c.has)
		d->f[DEVSTAT_TEMP_C] = a->temp_c;
	if (a->over_temp_minutes.has) {
		devstat_set(d, DEVSTAT_THROTTLE_MS, a->over_temp_minutes.v * 60000);
		d->throttle_res_ms = 60000;
	}
}

/* scale: the value times it is the field's unit; res_ms: the resolution
 * of a throttle time (0: not one) */
static const struct {
	const char *name;
	enum devstat_field f;
	double scale;
	int64_t res_ms;
} counter_names[] = {
	{ "host_bytes_written", DEVSTAT_HOST_BYTES, 1, 0 },
	{ "flash_bytes_written", DEVSTAT_MEDIA_BYTES, 1, 0 },
	{ "temperature_c", DEVSTAT_TEMP_C, 1, 0 },
	{ "throttle_ms", DEVSTAT_THROTTLE_MS, 1, 1 },
	{ "throttle_seconds", DEVSTAT_THROTTLE_MS, 1000, 1000 },
	{ "media_errors", DEVSTAT_MEDIA_ERRORS, 1, 0 },
	{ "available_spare", DEVSTAT_SPARE_PCT, 1, 0 },
};

/* One "NAME VALUE" line. Returns 1 when the name is known and the value a
 * number, else 0. */
static int counter_line(const char *line, size_t len, struct devstat *d)
{
	for (size_t i = 0; i < sizeof(counter_names) / sizeof(counter_names[0]); i++) {
		size_t n = strlen(counter_names[i].name);
		char *end;
		if (len <= n || strncmp(line, counter_names[i].name, n) || line[n] != ' ')
			continue;
		double v = strtod(line + n + 1, &end);
		if (end == line + n + 1)
			return 0;
		int64_t res = counter_names[i].res_ms;
		/* a file with both gives the finer throttle time, whatever the order */
		if (res && d->throttle_res_ms && d->throttle_res_ms < res)
			return 1;
		double scale = counter_names[i].scale;
		devstat_set(d, counter_names[i].f,
			    scale > 1 ? (int64_t)llround(v * scale) : (int64_t)v);
		if (res)
			d->throttle_res_ms = res;
		return 1;
	}
	return 0;
}

int devstat_parse_counters(const char *text, struct devstat *d)
{
	int known = 0;
	while (*text) {
		size_t len = strcspn(text, "\n");
		known += counter_line(text, len, d);
		text += len + (text[len] == '\n');
	}
	if (d->f[DEVSTAT_MEDIA_BYTES].has)
		d->source = "simssd";
	return known;
}

/* ---- deltas ------------------------------------------------------------ */

static struct devstat_opt diff(const struct devstat *a, const struct devstat *b,
			       enum devstat_field f)
{
	if (!a->f[f].has || !b->f[f].has || b->f[f].v < a->f[f].v)
		return (struct devstat_opt){ 0, 0 };
	return opt(b->f[f].v - a->f[f].v);
}

void devstat_peak(struct devstat_opt *peak, const struct devstat *d)
{
	const struct devstat_opt *t = &d->f[DEVSTAT_TEMP_C];
	if (t->has && (!peak->has || t->v > peak->v))
		*peak = *t;
}

void devstat_delta(const struct devstat *a, const struct devstat *b, struct devstat_opt peak,
		   struct devstat_delta *out)
{
	memset(out, 0, sizeof(*out));
	out->host_bytes = diff(a, b, DEVSTAT_HOST_BYTES);
	out->media_bytes = diff(a, b, DEVSTAT_MEDIA_BYTES);
	out->throttle_ms = diff(a, b, DEVSTAT_THROTTLE_MS);
	out->throttle_res_ms =
		a->throttle_res_ms > b->throttle_res_ms ? a->throttle_res_ms : b->throttle_res_ms;
	out->media_errors = diff(a, b, DEVSTAT_MEDIA_ERRORS);
	out->spare_pct = b->f[DEVSTAT_SPARE_PCT];
	devstat_peak(&peak, a);
	devstat_peak(&peak, b);
	out->peak_temp_c = peak;
	out->wa = out->host_bytes.has && out->host_bytes.v > 0 && out->media_bytes.has
			  ? (double)out->media_bytes.v / (double)out->host_bytes.v
			  : -1;
}
