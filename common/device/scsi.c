/* scsi: CDB builders, sense and VPD parsers, and the issuers of the SCSI
 * commands wearmon sends to native SCSI disks. */
#include "device/scsi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#define OP_REQUEST_SENSE 0x03
#define OP_INQUIRY 0x12
#define OP_LOG_SENSE 0x4D
#define OP_SERVICE_ACTION_IN_16 0x9E
#define OP_MAINTENANCE_IN 0xA3
#define SA_READ_CAPACITY_16 0x10
#define SA_REPORT_OPCODES 0x0C
#define LOG_PC_CUMULATIVE 0x40 /* PC 01b in bits 7:6 */

#define ST_GOOD 0x00
#define ST_CHECK_CONDITION 0x02
#define DRIVER_SENSE 0x08
/* A unit attention (a reset, a mode change) ends the one command that
 * reports it: that command is sent again, this many times at most. */
#define UA_RETRIES 2

#define VPD_SERIAL 0x80
#define VPD_DEVID 0x83
#define VPD_ATA_INFO 0x89
#define VPD_BLOCK_LIMITS 0xB0
#define VPD_BDC 0xB1
#define VPD_LBP 0xB2

scsi_sgio_t scsi_sgio_fn = scsi_sgio_ioctl;

int scsi_sgio_ioctl(int fd, struct sg_io_hdr *hdr)
{
	return ioctl(fd, SG_IO, hdr) < 0 ? -errno : 0;
}

static uint32_t be(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be(p, 4) << 32 | be(p + 4, 4);
}

static void put_be(uint8_t *p, uint32_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[n - 1 - i] = (uint8_t)(v >> (8 * i));
}

/* ---- CDB builders ------------------------------------------------------- */

void scsi_cdb_inquiry(uint8_t cdb[6], int evpd, uint8_t page, uint16_t alloc)
{
	memset(cdb, 0, 6);
	cdb[0] = OP_INQUIRY;
	cdb[1] = evpd ? 0x01 : 0x00;
	cdb[2] = evpd ? page : 0; /* a page code without EVPD is an error */
	put_be(cdb + 3, alloc, 2);
}

void scsi_cdb_request_sense(uint8_t cdb[6], uint8_t alloc)
{
	memset(cdb, 0, 6);
	cdb[0] = OP_REQUEST_SENSE; /* DESC 0: fixed format, which every device has */
	cdb[4] = alloc;
}

void scsi_cdb_log_sense(uint8_t cdb[10], uint8_t page, uint8_t subpage, uint16_t alloc)
{
	memset(cdb, 0, 10);
	cdb[0] = OP_LOG_SENSE;
	cdb[2] = (uint8_t)(LOG_PC_CUMULATIVE | (page & 0x3f));
	cdb[3] = subpage;
	put_be(cdb + 7, alloc, 2);
}

void scsi_cdb_report_opcode(uint8_t cdb[12], uint8_t opcode, int has_sa, uint16_t sa,
			    uint32_t alloc)
{
	memset(cdb, 0, 12);
	cdb[0] = OP_MAINTENANCE_IN;
	cdb[1] = SA_REPORT_OPCODES;
	cdb[2] = has_sa ? 0x02 : 0x01;
	cdb[3] = opcode;
	put_be(cdb + 4, has_sa ? sa : 0, 2);
	put_be(cdb + 6, alloc, 4);
}

void scsi_cdb_read_capacity16(uint8_t cdb[16], uint32_t alloc)
{
	memset(cdb, 0, 16);
	cdb[0] = OP_SERVICE_ACTION_IN_16;
	cdb[1] = SA_READ_CAPACITY_16;
	put_be(cdb + 10, alloc, 4);
}

/* ---- sense ----------------------------------------------------------------- */

/* The progress in a sense key specific field (SKSV set): bytes 1-2. */
static void sense_progress(const uint8_t *sks, struct scsi_sense *out)
{
	if (!(sks[0] & 0x80))
		return;
	if (out->key != SCSI_KEY_NOT_READY && out->key != SCSI_KEY_NO_SENSE)
		return;
	out->progress_valid = 1;
	out->progress = (uint16_t)be(sks + 1, 2);
}

/* Descriptor format: the sense key specific descriptor (02h), if any. */
static void desc_progress(const uint8_t *sb, size_t n, struct scsi_sense *out)
{
	size_t end = 8 + (size_t)sb[7];
	if (end > n)
		end = n;
	for (size_t off = 8; off + 2 <= end; off += 2u + sb[off + 1])
		if (sb[off] == 0x02 && off + 7 <= end) {
			sense_progress(sb + off + 4, out);
			return;
		}
}

int scsi_parse_sense(const uint8_t *sb, size_t n, struct scsi_sense *out)
{
	memset(out, 0, sizeof(*out));
	uint8_t code = n ? sb[0] & 0x7f : 0;
	if ((code == 0x70 || code == 0x71) && n >= 3) {
		out->key = sb[2] & 0x0f;
		if (n >= 14) {
			out->asc = sb[12];
			out->ascq = sb[13];
		}
		if (n >= 18)
			sense_progress(sb + 15, out);
	} else if ((code == 0x72 || code == 0x73) && n >= 4) {
		out->key = sb[1] & 0x0f;
		out->asc = sb[2];
		out->ascq = sb[3];
		if (n >= 8)
			desc_progress(sb, n, out);
	} else {
		return -ENODATA;
	}
	out->valid = 1;
	out->deferred = code == 0x71 || code == 0x73;
	return 0;
}

static const char *const key_names[16] = {
	"NO SENSE",       "RECOVERED ERROR", "NOT READY",      "MEDIUM ERROR",
	"HARDWARE ERROR", "ILLEGAL REQUEST", "UNIT ATTENTION", "DATA PROTECT",
	"BLANK CHECK",    "VENDOR SPECIFIC", "COPY ABORTED",   "ABORTED COMMAND",
	"RESERVED",       "VOLUME OVERFLOW", "MISCOMPARE",     "COMPLETED",
};

/* The additional sense codes wearmon's messages name (SPC, Annex). */
static const struct {
	uint8_t asc, ascq;
	const char *text;
} asc_names[] = {
	{ 0x04, 0x04, "not ready, format in progress" },
	{ 0x04, 0x1B, "not ready, sanitize in progress" },
	{ 0x20, 0x00, "invalid command operation code" },
	{ 0x24, 0x00, "invalid field in CDB" },
	{ 0x26, 0x00, "invalid field in parameter list" },
	{ 0x29, 0x00, "power on, reset, or bus device reset occurred" },
	{ 0x31, 0x00, "medium format corrupted" },
	{ 0x31, 0x01, "format command failed" },
	{ 0x31, 0x03, "sanitize command failed" },
	{ 0x44, 0x00, "internal target failure" },
	{ 0x5D, 0x00, "failure prediction threshold exceeded" },
};

char *scsi_sense_text(const struct scsi_sense *s, char *buf, size_t len)
{
	const char *what = NULL;
	if (!s->valid) {
		snprintf(buf, len, "no usable sense data");
		return buf;
	}
	for (size_t i = 0; i < sizeof(asc_names) / sizeof(asc_names[0]); i++)
		if (asc_names[i].asc == s->asc && asc_names[i].ascq == s->ascq)
			what = asc_names[i].text;
	snprintf(buf, len, "%s%s, ASC/ASCQ %02Xh/%02Xh%s%s%s", s->deferred ? "deferred " : "",
		 key_names[s->key & 0x0f], s->asc, s->ascq, what ? " (" : "", what ? what : "",
		 what ? ")" : "");
	return buf;
}

int scsi_sense_unsupported(const struct scsi_sense *s)
{
	return s->valid && s->key == SCSI_KEY_ILLEGAL_REQUEST && s->ascq == 0 &&
	       (s->asc == 0x20 || s->asc == 0x24 || s->asc == 0x26);
}

/* ---- parsers --------------------------------------------------------------- */

/* ASCII field of n bytes, trimmed; NULs count as spaces, other
 * unprintable bytes as '?'. */
static void ascii(const uint8_t *p, size_t n, char *out, size_t olen)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < olen; i++)
		out[k++] = p[i] == 0 ? ' ' : (p[i] < 0x20 || p[i] > 0x7e) ? '?' : (char)p[i];
	out[k] = '\0';
	while (k > 0 && out[k - 1] == ' ')
		out[--k] = '\0';
	size_t lead = strspn(out, " ");
	memmove(out, out + lead, k - lead + 1);
}

int scsi_parse_inquiry(const uint8_t *buf, size_t len, struct scsi_inquiry *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 36 || (size_t)buf[4] + 5 < 36)
		return -EBADMSG;
	out->qualifier = buf[0] >> 5;
	out->pdt = buf[0] & 0x1f;
	out->version = buf[2];
	out->protect = buf[5] & 0x01;
	ascii(buf + 8, 8, out->vendor, sizeof(out->vendor));
	ascii(buf + 16, 16, out->product, sizeof(out->product));
	ascii(buf + 32, 4, out->revision, sizeof(out->revision));
	return 0;
}

/* The bytes of VPD page code in buf: header checked, length clamped to
 * what was transferred. Returns them, or 0 when buf is not that page. */
static size_t vpd_body(const uint8_t *buf, size_t len, uint8_t code)
{
	if (len < 4 || buf[1] != code)
		return 0;
	size_t n = be(buf + 2, 2);
	return n > len - 4 ? len - 4 : n;
}

int scsi_parse_vpd_list(const uint8_t *buf, size_t len, uint8_t *pages, unsigned max, unsigned *n)
{
	*n = 0;
	if (len < 4 || buf[1] != 0x00)
		return -EBADMSG;
	size_t body = vpd_body(buf, len, 0x00);
	for (size_t i = 0; i < body && *n < max; i++)
		pages[(*n)++] = buf[4 + i];
	return 0;
}

int scsi_parse_serial(const uint8_t *buf, size_t len, char *out, size_t olen)
{
	out[0] = '\0';
	if (len < 4 || buf[1] != VPD_SERIAL)
		return -EBADMSG;
	ascii(buf + 4, vpd_body(buf, len, VPD_SERIAL), out, olen);
	return 0;
}

static void hex_id(const char *prefix, const uint8_t *p, size_t n, char *out, size_t olen)
{
	size_t k = (size_t)snprintf(out, olen, "%s", prefix);
	for (size_t i = 0; i < n && k + 3 <= olen; i++)
		k += (size_t)snprintf(out + k, olen - k, "%02x", p[i]);
}

int scsi_parse_wwn(const uint8_t *buf, size_t len, char *out, size_t olen)
{
	const uint8_t *eui = NULL;
	size_t eui_len = 0;
	out[0] = '\0';
	if (len < 4 || buf[1] != VPD_DEVID)
		return -EBADMSG;
	size_t end = 4 + vpd_body(buf, len, VPD_DEVID);
	for (size_t off = 4; off + 4 <= end; off += 4u + buf[off + 3]) {
		const uint8_t *d = buf + off;
		size_t n = d[3];
		unsigned assoc = (d[1] >> 4) & 0x3, type = d[1] & 0x0f;
		if (off + 4 + n > end || assoc != 0 || (d[0] & 0x0f) != 1)
			continue; /* the logical unit's own, binary designators only */
		if (type == 3 && n >= 8) {
			hex_id("naa.", d + 4, n, out, olen);
			return 0;
		}
		if (type == 2 && n >= 8 && !eui) {
			eui = d + 4;
			eui_len = n;
		}
	}
	if (!eui)
		return -ENODATA;
	hex_id("eui.", eui, eui_len, out, olen);
	return 0;
}

int scsi_parse_block_limits(const uint8_t *buf, size_t len, struct scsi_block_limits *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 4 || buf[1] != VPD_BLOCK_LIMITS)
		return -EBADMSG;
	size_t end = 4 + vpd_body(buf, len, VPD_BLOCK_LIMITS);
	if (end >= 36) { /* the unmap fields came in SBC-3 */
		out->max_unmap_lba = be(buf + 20, 4);
		out->max_unmap_desc = be(buf + 24, 4);
		out->unmap_granularity = be(buf + 28, 4);
		out->ugavalid = !!(buf[32] & 0x80);
		out->unmap_alignment = be(buf + 32, 4) & 0x7fffffffu;
	}
	if (end >= 44)
		out->max_write_same = be64(buf + 36);
	return 0;
}

int scsi_parse_lbp(const uint8_t *buf, size_t len, struct scsi_lbp *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 4 || buf[1] != VPD_LBP || 4 + vpd_body(buf, len, VPD_LBP) < 7)
		return -EBADMSG;
	out->lbpu = !!(buf[5] & 0x80);
	out->lbpws = !!(buf[5] & 0x40);
	out->lbpws10 = !!(buf[5] & 0x20);
	out->lbprz = (buf[5] >> 2) & 0x7;
	out->anc_sup = !!(buf[5] & 0x02);
	out->dp = buf[5] & 0x01;
	out->provisioning_type = buf[6] & 0x7;
	return 0;
}

int scsi_parse_rotation(const uint8_t *buf, size_t len, uint16_t *rotation)
{
	*rotation = 0;
	if (len < 4 || buf[1] != VPD_BDC || 4 + vpd_body(buf, len, VPD_BDC) < 6)
		return -EBADMSG;
	*rotation = (uint16_t)be(buf + 4, 2);
	return 0;
}

int scsi_parse_capacity16(const uint8_t *buf, size_t len, struct scsi_capacity *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 15)
		return -EBADMSG;
	out->blocks = be64(buf) + 1;
	out->block_len = be(buf + 8, 4);
	out->prot_en = buf[12] & 0x01;
	out->p_type = (buf[12] >> 1) & 0x7;
	out->lbpme = !!(buf[14] & 0x80);
	out->lbprz = !!(buf[14] & 0x40);
	return 0;
}

int scsi_parse_opcode_support(const uint8_t *buf, size_t len, int *supported)
{
	*supported = -1;
	if (len < 4)
		return -EBADMSG;
	switch (buf[1] & 0x7) {
	case 0x3:
	case 0x5: *supported = 1; break;
	case 0x1: *supported = 0; break;
	default: break; /* 000b: no data; others reserved */
	}
	return 0;
}

int scsi_is_sat(const struct scsi_inquiry *inq, const uint8_t *vpd, unsigned nvpd)
{
	if (!strcmp(inq->vendor, "ATA"))
		return 1;
	for (unsigned i = 0; i < nvpd; i++)
		if (vpd[i] == VPD_ATA_INFO)
			return 1;
	return 0;
}

/* ---- issuers ----------------------------------------------------------------- */

/* How a completed command ended. Returns 0, -EOPNOTSUPP, or -EIO with err;
 * sense gets the sense data. */
static int check_status(const struct sg_io_hdr *h, const uint8_t *sb, struct scsi_sense *sense,
			char *err, size_t len)
{
	size_t n = h->sb_len_wr < h->mx_sb_len ? h->sb_len_wr : h->mx_sb_len;
	char text[128];
	scsi_parse_sense(sb, n, sense);
	if (h->host_status != 0 || (h->driver_status & ~DRIVER_SENSE) != 0) {
		snprintf(err, len, "SG_IO failed (SCSI status 0x%02x, host 0x%x, driver 0x%x)",
			 h->status, h->host_status, h->driver_status);
		return -EIO;
	}
	if (h->status == ST_GOOD)
		return 0;
	if (h->status != ST_CHECK_CONDITION) {
		snprintf(err, len, "SCSI status 0x%02x%s", h->status,
			 h->status == 0x08   ? " (busy)"
			 : h->status == 0x18 ? " (reservation conflict)"
					     : "");
		return -EIO;
	}
	/* a recovered error is a success that the device mentions */
	if (sense->valid && (sense->key == SCSI_KEY_NO_SENSE || sense->key == SCSI_KEY_RECOVERED))
		return 0;
	snprintf(err, len, "%s", scsi_sense_text(sense, text, sizeof(text)));
	return scsi_sense_unsupported(sense) ? -EOPNOTSUPP : -EIO;
}

int scsi_command(int fd, const uint8_t *cdb, unsigned cdb_len, int dir, void *buf, unsigned buflen,
		 uint32_t timeout_ms, struct scsi_sense *sense, int *resid, char *err, size_t len)
{
	uint8_t cdbcopy[16], sb[SCSI_SENSE_LEN];
	struct scsi_sense own;
	struct sg_io_hdr h;
	int rc = -EINVAL;
	if (!sense)
		sense = &own;
	if (cdb_len > sizeof(cdbcopy)) {
		snprintf(err, len, "CDB of %u bytes", cdb_len);
		return -EINVAL;
	}
	for (int attempt = 0; attempt <= UA_RETRIES; attempt++) {
		memcpy(cdbcopy, cdb, cdb_len);
		memset(sb, 0, sizeof(sb));
		memset(&h, 0, sizeof(h));
		h.interface_id = 'S';
		h.cmd_len = (unsigned char)cdb_len;
		h.cmdp = cdbcopy;
		h.mx_sb_len = sizeof(sb);
		h.sbp = sb;
		h.dxfer_direction = dir;
		h.dxferp = buf;
		h.dxfer_len = buflen;
		h.timeout = timeout_ms;
		rc = scsi_sgio_fn(fd, &h);
		if (rc < 0) {
			memset(sense, 0, sizeof(*sense));
			snprintf(err, len, "SG_IO: %s", strerror(-rc));
			return rc;
		}
		rc = check_status(&h, sb, sense, err, len);
		if (rc != -EIO || sense->key != SCSI_KEY_UNIT_ATTENTION)
			break;
	}
	if (resid)
		*resid = h.resid;
	return rc;
}

/* A command that reads into buf. Returns as scsi_command; *got the bytes
 * transferred. */
static int read_cmd(int fd, const uint8_t *cdb, unsigned cdb_len, uint8_t *buf, size_t len,
		    size_t *got, char *err, size_t elen)
{
	int resid = 0;
	memset(buf, 0, len);
	int rc = scsi_command(fd, cdb, cdb_len, SG_DXFER_FROM_DEV, buf, (unsigned)len,
			      SCSI_CMD_TIMEOUT_MS, NULL, &resid, err, elen);
	*got = resid > 0 && (size_t)resid < len ? len - (size_t)resid : len;
	return rc;
}

static int vpd_page(int fd, uint8_t page, uint8_t *buf, size_t *got, char *err, size_t len)
{
	uint8_t cdb[6];
	char why[160];
	scsi_cdb_inquiry(cdb, 1, page, SCSI_VPD_LEN);
	int rc = read_cmd(fd, cdb, sizeof(cdb), buf, SCSI_VPD_LEN, got, why, sizeof(why));
	if (rc < 0)
		snprintf(err, len, "INQUIRY VPD page %02Xh: %s", page, why);
	return rc;
}

/* Read and parse the optional VPD pages the device lists. */
static void identify_vpd(int fd, struct scsi_info *out)
{
	uint8_t buf[SCSI_VPD_LEN];
	size_t got;
	char why[200];
	for (unsigned i = 0; i < out->nvpd; i++) {
		uint8_t p = out->vpd[i];
		if (p != VPD_SERIAL && p != VPD_DEVID && p != VPD_BLOCK_LIMITS && p != VPD_BDC &&
		    p != VPD_LBP)
			continue;
		if (vpd_page(fd, p, buf, &got, why, sizeof(why)) < 0)
			continue; /* a listed page that fails: as if absent */
		if (p == VPD_SERIAL)
			scsi_parse_serial(buf, got, out->serial, sizeof(out->serial));
		else if (p == VPD_DEVID)
			scsi_parse_wwn(buf, got, out->wwn, sizeof(out->wwn));
		else if (p == VPD_BLOCK_LIMITS)
			out->has_bl = !scsi_parse_block_limits(buf, got, &out->bl);
		else if (p == VPD_BDC)
			scsi_parse_rotation(buf, got, &out->rotation);
		else
			out->has_lbp = !scsi_parse_lbp(buf, got, &out->lbp);
	}
}

int scsi_identify(int fd, struct scsi_info *out, char *err, size_t len)
{
	uint8_t buf[SCSI_VPD_LEN], cdb[6];
	size_t got;
	char why[160];
	memset(out, 0, sizeof(*out));
	scsi_cdb_inquiry(cdb, 0, 0, SCSI_INQUIRY_LEN);
	int rc = read_cmd(fd, cdb, sizeof(cdb), buf, SCSI_INQUIRY_LEN, &got, why, sizeof(why));
	if (rc == 0 && scsi_parse_inquiry(buf, got, &out->inq) < 0) {
		snprintf(why, sizeof(why), "%zu bytes of standard data, fewer than 36", got);
		rc = -EBADMSG;
	}
	if (rc < 0) {
		snprintf(err, len, "SCSI INQUIRY: %s", why);
		return rc;
	}
	/* a device without VPD pages has only its standard data */
	if (vpd_page(fd, 0x00, buf, &got, why, sizeof(why)) == 0)
		scsi_parse_vpd_list(buf, got, out->vpd, SCSI_VPD_MAX, &out->nvpd);
	out->sat = scsi_is_sat(&out->inq, out->vpd, out->nvpd);
	if (!out->sat)
		identify_vpd(fd, out);
	return 0;
}

int scsi_read_capacity16(int fd, struct scsi_capacity *out, char *err, size_t len)
{
	uint8_t buf[SCSI_CAP16_LEN], cdb[16];
	size_t got;
	char why[160];
	scsi_cdb_read_capacity16(cdb, sizeof(buf));
	int rc = read_cmd(fd, cdb, sizeof(cdb), buf, sizeof(buf), &got, why, sizeof(why));
	if (rc == 0 && scsi_parse_capacity16(buf, got, out) < 0) {
		snprintf(why, sizeof(why), "%zu bytes of data", got);
		rc = -EBADMSG;
	}
	if (rc < 0)
		snprintf(err, len, "SCSI READ CAPACITY(16): %s", why);
	return rc;
}

int scsi_log_sense(int fd, uint8_t page, uint8_t *buf, size_t len, size_t *got, char *err,
		   size_t elen)
{
	uint8_t cdb[10];
	char why[160];
	size_t n;
	*got = 0;
	scsi_cdb_log_sense(cdb, page, 0, (uint16_t)(len > 0xffff ? 0xffff : len));
	int rc = read_cmd(fd, cdb, sizeof(cdb), buf, len, &n, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, elen, "LOG SENSE page %02Xh: %s", page, why);
		return rc;
	}
	size_t page_len = n >= 4 ? 4 + (size_t)be(buf + 2, 2) : 0;
	*got = page_len < n ? page_len : n;
	return 0;
}

int scsi_request_sense(int fd, struct scsi_sense *out, char *err, size_t len)
{
	uint8_t buf[252], cdb[6];
	size_t got;
	char why[160];
	scsi_cdb_request_sense(cdb, sizeof(buf));
	int rc = read_cmd(fd, cdb, sizeof(cdb), buf, sizeof(buf), &got, why, sizeof(why));
	if (rc < 0) {
		memset(out, 0, sizeof(*out));
		snprintf(err, len, "REQUEST SENSE: %s", why);
		return rc;
	}
	/* nothing pending reads as NO SENSE; data that names no format too */
	if (scsi_parse_sense(buf, got, out) < 0)
		out->valid = 1;
	return 0;
}

int scsi_supports(int fd, uint8_t opcode, int has_sa, uint16_t sa)
{
	uint8_t buf[64], cdb[12];
	size_t got;
	char why[160];
	int supported;
	scsi_cdb_report_opcode(cdb, opcode, has_sa, sa, sizeof(buf));
	if (read_cmd(fd, cdb, sizeof(cdb), buf, sizeof(buf), &got, why, sizeof(why)) < 0 ||
	    scsi_parse_opcode_support(buf, got, &supported) < 0)
		return -1;
	return supported;
}
