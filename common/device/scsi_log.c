/* scsi_log: SCSI log page parsers, the evidence and JSON made from them,
 * and their reading (layouts: common/device/DEVICE_LOGS.md). */
#include "device/scsi_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PARAM_BYTES_PROCESSED 0x0005
#define PARAM_UNCORRECTED 0x0006
#define TEMP_UNKNOWN 0xFF /* a temperature byte the disk could not read */

static struct devstat_opt known(int64_t v)
{
	return (struct devstat_opt){ 1, v };
}

int scsi_log_param(const uint8_t *page, size_t len, uint16_t code, const uint8_t **val,
		   unsigned *vlen)
{
	if (len < 4)
		return -EBADMSG;
	size_t end = 4 + ((size_t)page[2] << 8 | page[3]);
	if (end > len)
		end = len;
	for (size_t off = 4; off + 4 <= end; off += 4u + page[off + 3]) {
		unsigned n = page[off + 3];
		if (off + 4 + n > end)
			break; /* a parameter cut short: not trusted */
		if ((uint16_t)(page[off] << 8 | page[off + 1]) == code) {
			*val = page + off + 4;
			*vlen = n;
			return 0;
		}
	}
	return -ENOENT;
}

int scsi_log_parse_supported(const uint8_t *buf, size_t len, uint8_t *pages, unsigned max,
			     unsigned *n)
{
	*n = 0;
	if (len < 4 || (buf[0] & 0x3f) != SCSI_LOG_SUPPORTED)
		return -EBADMSG;
	size_t end = 4 + ((size_t)buf[2] << 8 | buf[3]);
	for (size_t i = 4; i < end && i < len && *n < max; i++)
		pages[(*n)++] = buf[i] & 0x3f;
	return 0;
}

/* A counter parameter: big-endian of its length; unknown when absent or
 * wider than a signed 64-bit value holds. */
static struct devstat_opt counter(const uint8_t *page, size_t len, uint16_t code)
{
	const uint8_t *v;
	unsigned n;
	uint64_t x = 0;
	if (scsi_log_param(page, len, code, &v, &n) || n == 0)
		return (struct devstat_opt){ 0, 0 };
	for (unsigned i = 0; i < n; i++) {
		if (x >> 55)
			return (struct devstat_opt){ 0, 0 };
		x = x << 8 | v[i];
	}
	return known((int64_t)x);
}

/* Byte at of parameter code, unknown when absent, short or unknown_value. */
static struct devstat_opt param_byte(const uint8_t *page, size_t len, uint16_t code, unsigned at,
				     int unknown_value)
{
	const uint8_t *v;
	unsigned n;
	if (scsi_log_param(page, len, code, &v, &n) || n <= at || v[at] == unknown_value)
		return (struct devstat_opt){ 0, 0 };
	return known(v[at]);
}

int scsi_log_parse(const uint8_t *buf, size_t len, struct scsi_logs *out)
{
	if (len < 4)
		return -EBADMSG;
	switch (buf[0] & 0x3f) {
	case SCSI_LOG_WRITE_ERRORS:
		out->write_bytes = counter(buf, len, PARAM_BYTES_PROCESSED);
		out->write_uncorrected = counter(buf, len, PARAM_UNCORRECTED);
		return 0;
	case SCSI_LOG_READ_ERRORS:
		out->read_bytes = counter(buf, len, PARAM_BYTES_PROCESSED);
		out->read_uncorrected = counter(buf, len, PARAM_UNCORRECTED);
		return 0;
	case SCSI_LOG_TEMPERATURE:
		out->temp_c = param_byte(buf, len, 0x0000, 1, TEMP_UNKNOWN);
		out->ref_temp_c = param_byte(buf, len, 0x0001, 1, TEMP_UNKNOWN);
		return 0;
	case SCSI_LOG_SSM: out->pct_used = param_byte(buf, len, 0x0001, 3, -1); return 0;
	case SCSI_LOG_BACKGROUND: {
		const uint8_t *v;
		unsigned n;
		if (!scsi_log_param(buf, len, 0x0000, &v, &n) && n >= 4)
			out->power_on_minutes = known(
				(int64_t)((uint32_t)v[0] << 24 | v[1] << 16 | v[2] << 8 | v[3]));
		return 0;
	}
	case SCSI_LOG_IE:
		out->ie_asc = param_byte(buf, len, 0x0000, 0, -1);
		out->ie_ascq = param_byte(buf, len, 0x0000, 1, -1);
		out->ie_temp_c = param_byte(buf, len, 0x0000, 2, TEMP_UNKNOWN);
		return 0;
	default: return -ENOTSUP;
	}
}

int scsi_logs_has(const struct scsi_logs *l, uint8_t page)
{
	for (unsigned i = 0; i < l->npages; i++)
		if (l->pages[i] == page)
			return 1;
	return 0;
}

void scsi_logs_devstat(const struct scsi_logs *l, struct devstat *d)
{
	d->source = "scsi";
	if (l->write_bytes.has)
		d->f[DEVSTAT_HOST_BYTES] = l->write_bytes;
	if (l->temp_c.has)
		d->f[DEVSTAT_TEMP_C] = l->temp_c;
	else if (l->ie_temp_c.has)
		d->f[DEVSTAT_TEMP_C] = l->ie_temp_c;
	if (l->write_uncorrected.has || l->read_uncorrected.has)
		devstat_set(d, DEVSTAT_MEDIA_ERRORS,
			    (l->write_uncorrected.has ? l->write_uncorrected.v : 0) +
				    (l->read_uncorrected.has ? l->read_uncorrected.v : 0));
}

static void add(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;
	if (n + 1 >= len)
		return;
	if (n)
		n += (size_t)snprintf(buf + n, len - n, "; ");
	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

char *scsi_logs_absent(const struct scsi_logs *l, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!l->answered) {
		add(buf, len, "host bytes, temperature, media errors: %s",
		    l->error[0] ? l->error : "LOG SENSE gave no supported pages list");
	} else {
		if (!l->write_bytes.has)
			add(buf, len,
			    "host bytes: %s the Write Error Counter page (02h) bytes processed "
			    "(0005h)",
			    scsi_logs_has(l, SCSI_LOG_WRITE_ERRORS) ? "no parameter in"
								    : "no page:");
		if (!l->temp_c.has && !l->ie_temp_c.has)
			add(buf, len,
			    "temperature: neither the Temperature page (0Dh) nor Informational "
			    "Exceptions (2Fh) gives one");
		if (!l->write_uncorrected.has && !l->read_uncorrected.has)
			add(buf, len,
			    "media errors: no total uncorrected errors (0006h) in the Write or "
			    "Read Error Counter page (02h, 03h)");
	}
	add(buf, len, "media bytes, throttle time, spare: no standard SCSI log page has them");
	return buf;
}

static const uint8_t pages_read[] = { SCSI_LOG_WRITE_ERRORS, SCSI_LOG_READ_ERRORS,
				      SCSI_LOG_TEMPERATURE,  SCSI_LOG_SSM,
				      SCSI_LOG_BACKGROUND,   SCSI_LOG_IE };

int scsi_logs_read(int fd, struct scsi_logs *l)
{
	uint8_t buf[SCSI_LOG_LEN];
	size_t got;
	char err[200];
	memset(l, 0, sizeof(*l));
	int rc = scsi_log_sense(fd, SCSI_LOG_SUPPORTED, buf, sizeof(buf), &got, l->error,
				sizeof(l->error));
	if (rc == 0 &&
	    scsi_log_parse_supported(buf, got, l->pages, SCSI_LOG_PAGES_MAX, &l->npages) < 0) {
		snprintf(l->error, sizeof(l->error),
			 "LOG SENSE page 00h: not a supported pages list");
		rc = -EBADMSG;
	}
	if (rc < 0)
		return rc;
	l->answered = 1;
	for (size_t i = 0; i < sizeof(pages_read); i++)
		if (scsi_logs_has(l, pages_read[i]) &&
		    !scsi_log_sense(fd, pages_read[i], buf, sizeof(buf), &got, err, sizeof(err)) &&
		    got >= 4 && (buf[0] & 0x3f) == pages_read[i])
			scsi_log_parse(buf, got, l);
	return 0;
}

/* ---- the snapshot's JSON and the log line ---------------------------------- */

struct jbuf {
	char *b;
	size_t len, n;
};

static void jput(struct jbuf *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jput(struct jbuf *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = j->n < j->len ? vsnprintf(j->b + j->n, j->len - j->n, fmt, ap) : 0;
	va_end(ap);
	if (w > 0)
		j->n += (size_t)w;
	if (j->n >= j->len)
		j->n = j->len - 1;
}

/* "key":"value" (null when empty) with the escapes identity strings need. */
static void jstr(struct jbuf *j, const char *key, const char *v)
{
	if (!v || !*v) {
		jput(j, "\"%s\":null,", key);
		return;
	}
	jput(j, "\"%s\":\"", key);
	for (; *v; v++)
		if (*v == '"' || *v == '\\')
			jput(j, "\\%c", *v);
		else if ((unsigned char)*v >= 0x20)
			jput(j, "%c", *v);
	jput(j, "\",");
}

static void jopt(struct jbuf *j, const char *key, struct devstat_opt o)
{
	if (o.has)
		jput(j, "\"%s\":%" PRId64 ",", key, o.v);
	else
		jput(j, "\"%s\":null,", key);
}

static void json_unmap(struct jbuf *j, const struct scsi_info *id)
{
	if (!id->has_lbp) {
		jput(j, "\"lbp\":null,");
	} else {
		const struct scsi_lbp *p = &id->lbp;
		jput(j,
		     "\"lbp\":{\"lbpu\":%d,\"lbpws\":%d,\"lbpws10\":%d,\"lbprz\":%u,"
		     "\"provisioning_type\":%u},",
		     p->lbpu, p->lbpws, p->lbpws10, p->lbprz, p->provisioning_type);
	}
	if (!id->has_bl) {
		jput(j, "\"block_limits\":null,");
		return;
	}
	const struct scsi_block_limits *b = &id->bl;
	jput(j,
	     "\"block_limits\":{\"max_unmap_lba_count\":%" PRIu32
	     ",\"max_unmap_descriptors\":%" PRIu32 ",\"unmap_granularity\":%" PRIu32
	     ",\"max_write_same\":%" PRIu64 "},",
	     b->max_unmap_lba, b->max_unmap_desc, b->unmap_granularity, b->max_write_same);
}

size_t scsi_health_json(const struct scsi_info *id, const struct scsi_logs *l,
			const char *provisioning_mode, char *buf, size_t len)
{
	struct jbuf j = { buf, len, 0 };
	if (!len)
		return 0;
	buf[0] = '\0';
	jput(&j, "{");
	jstr(&j, "vendor", id->inq.vendor);
	jstr(&j, "product", id->inq.product);
	jstr(&j, "revision", id->inq.revision);
	jstr(&j, "serial", id->serial);
	jstr(&j, "wwn", id->wwn);
	jopt(&j, "rotation_rate", (struct devstat_opt){ id->rotation != 0, id->rotation });
	json_unmap(&j, id);
	jstr(&j, "provisioning_mode", provisioning_mode);
	jput(&j, "\"log_sense\":%s,", l->answered ? "true" : "false");
	jstr(&j, "log_sense_error", l->answered ? NULL : l->error);
	jput(&j, "\"log_pages\":[");
	for (unsigned i = 0; i < l->npages; i++)
		jput(&j, "%s%u", i ? "," : "", l->pages[i]);
	jput(&j, "],");
	jopt(&j, "write_bytes_processed", l->write_bytes);
	jopt(&j, "write_uncorrected_errors", l->write_uncorrected);
	jopt(&j, "read_bytes_processed", l->read_bytes);
	jopt(&j, "read_uncorrected_errors", l->read_uncorrected);
	jopt(&j, "temperature_c", l->temp_c);
	jopt(&j, "reference_temperature_c", l->ref_temp_c);
	jopt(&j, "percentage_used", l->pct_used);
	jopt(&j, "power_on_minutes", l->power_on_minutes);
	jopt(&j, "ie_asc", l->ie_asc);
	jopt(&j, "ie_ascq", l->ie_ascq);
	jopt(&j, "ie_temperature_c", l->ie_temp_c);
	if (j.n && buf[j.n - 1] == ',')
		j.n--; /* the last member's comma */
	jput(&j, "}");
	return j.n;
}

/* What the device advertises for discard, from its VPD pages. */
static void describe_unmap(const struct scsi_info *id, struct jbuf *j)
{
	int unmap = id->has_lbp ? id->lbp.lbpu : id->has_bl && id->bl.max_unmap_lba > 0;
	if (unmap && id->has_bl && id->bl.max_unmap_lba)
		jput(j, "UNMAP (at most %" PRIu32 " blocks a command, granularity %" PRIu32 ")",
		     id->bl.max_unmap_lba, id->bl.unmap_granularity);
	else if (unmap)
		jput(j, "UNMAP");
	if (id->has_lbp && (id->lbp.lbpws || id->lbp.lbpws10))
		jput(j, "%sWRITE SAME with UNMAP (%s)", unmap ? ", " : "",
		     id->lbp.lbpws && id->lbp.lbpws10 ? "10 and 16"
		     : id->lbp.lbpws                  ? "16"
						      : "10");
	if (!unmap && !(id->has_lbp && (id->lbp.lbpws || id->lbp.lbpws10)))
		jput(j, "%s", id->has_lbp || id->has_bl ? "none" : "not said (no VPD B0h/B2h)");
}

char *scsi_describe(const struct scsi_info *id, const char *provisioning_mode, char *buf,
		    size_t len)
{
	struct jbuf j = { buf, len, 0 };
	if (!len)
		return buf;
	buf[0] = '\0';
	jput(&j, "SCSI disk: vendor \"%s\", product \"%s\", revision \"%s\", serial \"%s\"",
	     id->inq.vendor, id->inq.product, id->inq.revision, id->serial);
	if (id->wwn[0])
		jput(&j, ", WWN %s", id->wwn);
	jput(&j, ", %s; discard advertised: ",
	     id->rotation == 1   ? "solid state"
	     : id->rotation == 0 ? "rotation rate not reported"
				 : "rotating medium");
	describe_unmap(id, &j);
	if (provisioning_mode && *provisioning_mode)
		jput(&j, "; the kernel discards with %s", provisioning_mode);
	return buf;
}

int scsi_describe_target(const struct tgt *tg, char *buf, size_t len)
{
	struct scsi_info id;
	char err[256], mode[32];
	int fd = open(tg->real_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	int rc = scsi_identify(fd, &id, err, sizeof(err));
	close(fd);
	if (rc < 0)
		return rc;
	tgt_scsi_provisioning_mode(tg->sysname, mode, sizeof(mode));
	scsi_describe(&id, mode, buf, len);
	return 0;
}
