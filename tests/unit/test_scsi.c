/* Unit tests of scsi and scsi_erase: CDB bytes, sense and VPD parsing from
 * built pages, the SAT test, and the identify, sanitize and format flows
 * against a scripted SG_IO (common/device/scsi.h, scsi_erase.h). */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "device/scsi.h"
#include "device/scsi_erase.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- CDBs ------------------------------------------------------------------- */

static void test_cdbs(void **state)
{
	uint8_t c[16];
	static const uint8_t inq[] = { 0x12, 0x00, 0x00, 0x00, 0x60, 0x00 };
	static const uint8_t vpd[] = { 0x12, 0x01, 0xB0, 0x02, 0x00, 0x00 };
	static const uint8_t rs[] = { 0x03, 0x00, 0x00, 0x00, 0xFC, 0x00 };
	static const uint8_t log[] = { 0x4D, 0x00, 0x4D, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00 };
	static const uint8_t rsoc_sa[] = { 0xA3, 0x0C, 0x02, 0x48, 0x00, 0x02,
					   0x00, 0x00, 0x00, 0x40, 0x00, 0x00 };
	static const uint8_t rsoc[] = { 0xA3, 0x0C, 0x01, 0x04, 0x00, 0x00,
					0x00, 0x00, 0x01, 0x00, 0x00, 0x00 };
	static const uint8_t rc16[] = { 0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0 };
	static const uint8_t san_block[] = { 0x48, 0x82, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t san_crypto[] = { 0x48, 0x03, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t fmt[] = { 0x04, 0, 0, 0, 0, 0 };
	static const uint8_t tur[] = { 0, 0, 0, 0, 0, 0 };

	memset(c, 0xEE, sizeof(c));
	scsi_cdb_inquiry(c, 0, 0x80, 96); /* a page without EVPD is not sent */
	assert_memory_equal(c, inq, sizeof(inq));
	scsi_cdb_inquiry(c, 1, 0xB0, 512);
	assert_memory_equal(c, vpd, sizeof(vpd));
	scsi_cdb_request_sense(c, 252);
	assert_memory_equal(c, rs, sizeof(rs));
	memset(c, 0xEE, sizeof(c));
	scsi_cdb_log_sense(c, 0x0D, 0, 1024);
	assert_memory_equal(c, log, sizeof(log));
	scsi_cdb_report_opcode(c, 0x48, 1, 2, 64);
	assert_memory_equal(c, rsoc_sa, sizeof(rsoc_sa));
	scsi_cdb_report_opcode(c, 0x04, 0, 7, 256); /* no service action: none sent */
	assert_memory_equal(c, rsoc, sizeof(rsoc));
	memset(c, 0xEE, sizeof(c));
	scsi_cdb_read_capacity16(c, 32);
	assert_memory_equal(c, rc16, sizeof(rc16));
	scsi_cdb_sanitize(c, SCSI_SANITIZE_BLOCK, 1);
	assert_memory_equal(c, san_block, sizeof(san_block));
	scsi_cdb_sanitize(c, SCSI_SANITIZE_CRYPTO, 0);
	assert_memory_equal(c, san_crypto, sizeof(san_crypto));
	memset(c, 0xEE, sizeof(c));
	scsi_cdb_format_unit(c);
	assert_memory_equal(c, fmt, sizeof(fmt));
	scsi_cdb_test_unit_ready(c);
	assert_memory_equal(c, tur, sizeof(tur));
}

/* ---- sense ------------------------------------------------------------------- */

static void test_sense_fixed(void **state)
{
	/* NOT READY, 04h/1Bh, SKSV with a progress of 0x4000 (a quarter) */
	static const uint8_t sb[18] = { 0x70, 0, 0x02, 0,    0,    0, 0,    10,   0,
					0,    0, 0,    0x04, 0x1B, 0, 0x80, 0x40, 0x00 };
	struct scsi_sense s;
	char text[128];
	assert_int_equal(scsi_parse_sense(sb, sizeof(sb), &s), 0);
	assert_true(s.valid);
	assert_false(s.deferred);
	assert_int_equal(s.key, SCSI_KEY_NOT_READY);
	assert_int_equal(s.asc, 0x04);
	assert_int_equal(s.ascq, 0x1B);
	assert_true(s.progress_valid);
	assert_int_equal(s.progress, 0x4000);
	assert_string_equal(scsi_sense_text(&s, text, sizeof(text)),
			    "NOT READY, ASC/ASCQ 04h/1Bh (not ready, sanitize in progress)");
	assert_false(scsi_sense_unsupported(&s));
}

static void test_sense_descriptor(void **state)
{
	/* deferred ILLEGAL REQUEST 20h/00h, then a sense key specific
	 * descriptor whose SKSV is clear: no progress */
	static const uint8_t sb[] = { 0x73, 0x05, 0x20, 0x00, 0,    0,    0,    8,
				      0x02, 0x06, 0,    0,    0x00, 0x12, 0x34, 0 };
	/* MEDIUM ERROR after a descriptor of another type, with a progress
	 * the key does not allow */
	static const uint8_t medium[] = { 0x72, 0x03, 0x31, 0x03, 0,    0,    0,    16,
					  0x00, 0x06, 0,    0,    0,    0,    0,    0,
					  0x02, 0x06, 0,    0,    0x80, 0x12, 0x34, 0 };
	struct scsi_sense s;
	char text[128];
	assert_int_equal(scsi_parse_sense(sb, sizeof(sb), &s), 0);
	assert_true(s.deferred);
	assert_int_equal(s.key, SCSI_KEY_ILLEGAL_REQUEST);
	assert_false(s.progress_valid);
	assert_true(scsi_sense_unsupported(&s));
	assert_string_equal(scsi_sense_text(&s, text, sizeof(text)),
			    "deferred ILLEGAL REQUEST, ASC/ASCQ 20h/00h (invalid command operation "
			    "code)");
	assert_int_equal(scsi_parse_sense(medium, sizeof(medium), &s), 0);
	assert_int_equal(s.key, SCSI_KEY_MEDIUM_ERROR);
	assert_false(s.progress_valid);
	assert_string_equal(scsi_sense_text(&s, text, sizeof(text)),
			    "MEDIUM ERROR, ASC/ASCQ 31h/03h (sanitize command failed)");
}

static void test_sense_unusable(void **state)
{
	static const uint8_t none[4] = { 0 };
	static const uint8_t odd[] = { 0x7F, 0x05, 0x20, 0 };
	static const uint8_t invalid_field[] = {
		0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x24, 0
	};
	static const uint8_t other_ascq[] = {
		0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x20, 0x01
	};
	struct scsi_sense s;
	char text[64];
	assert_int_equal(scsi_parse_sense(none, sizeof(none), &s), -ENODATA);
	assert_false(s.valid);
	assert_int_equal(scsi_parse_sense(odd, sizeof(odd), &s), -ENODATA);
	assert_int_equal(scsi_parse_sense(odd, 0, &s), -ENODATA);
	assert_string_equal(scsi_sense_text(&s, text, sizeof(text)), "no usable sense data");
	assert_false(scsi_sense_unsupported(&s));
	assert_int_equal(scsi_parse_sense(invalid_field, sizeof(invalid_field), &s), 0);
	assert_true(scsi_sense_unsupported(&s));
	assert_int_equal(scsi_parse_sense(other_ascq, sizeof(other_ascq), &s), 0);
	assert_false(scsi_sense_unsupported(&s));
	assert_string_equal(scsi_sense_text(&s, text, sizeof(text)),
			    "ILLEGAL REQUEST, ASC/ASCQ 20h/01h");
}

/* ---- INQUIRY and VPD ------------------------------------------------------- */

/* Standard INQUIRY data: fields space padded as a drive sends them. */
static size_t build_inquiry(uint8_t *buf, const char *vendor, const char *product, const char *rev)
{
	memset(buf, 0, 96);
	buf[0] = 0x00;
	buf[2] = 0x06; /* SPC-4 */
	buf[3] = 0x12;
	buf[4] = 91; /* additional length: 96 bytes in all */
	buf[5] = 0x01;
	memset(buf + 8, ' ', 28);
	memcpy(buf + 8, vendor, strlen(vendor));
	memcpy(buf + 16, product, strlen(product));
	memcpy(buf + 32, rev, strlen(rev));
	return 96;
}

static void test_inquiry(void **state)
{
	uint8_t buf[96];
	struct scsi_inquiry q;
	size_t n = build_inquiry(buf, "SEAGATE", "ST800FM0043", "0004");
	assert_int_equal(scsi_parse_inquiry(buf, n, &q), 0);
	assert_string_equal(q.vendor, "SEAGATE");
	assert_string_equal(q.product, "ST800FM0043");
	assert_string_equal(q.revision, "0004");
	assert_int_equal(q.pdt, 0);
	assert_int_equal(q.version, 6);
	assert_true(q.protect);
	/* full-width fields, an unprintable byte and NULs as padding */
	build_inquiry(buf, "HGST    ", "HUSMM1640ASS204X",
		      "C\x01"
		      "0");
	buf[35] = 0;
	assert_int_equal(scsi_parse_inquiry(buf, n, &q), 0);
	assert_string_equal(q.vendor, "HGST");
	assert_string_equal(q.product, "HUSMM1640ASS204X");
	assert_string_equal(q.revision, "C?0");
	/* fewer than 36 bytes, by transfer or by its own length */
	assert_int_equal(scsi_parse_inquiry(buf, 35, &q), -EBADMSG);
	buf[4] = 30;
	assert_int_equal(scsi_parse_inquiry(buf, n, &q), -EBADMSG);
}

static void test_vpd_list_and_serial(void **state)
{
	static const uint8_t list[] = { 0x00, 0x00, 0x00, 0x05, 0x00, 0x80, 0x83, 0xB0, 0xB2 };
	static const uint8_t serial[] = { 0x00, 0x80, 0x00, 0x0C, ' ', ' ', 'Z', 'A',
					  '1',  '2',  'B',  '3',  'C', '4', ' ', ' ' };
	uint8_t pages[8];
	unsigned n;
	char s[64];
	assert_int_equal(scsi_parse_vpd_list(list, sizeof(list), pages, N(pages), &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(pages[4], 0xB2);
	/* a list longer than the transfer: only what came */
	assert_int_equal(scsi_parse_vpd_list(list, 7, pages, N(pages), &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(scsi_parse_vpd_list(list, sizeof(list), pages, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(scsi_parse_vpd_list(serial, sizeof(serial), pages, 8, &n), -EBADMSG);
	assert_int_equal(scsi_parse_serial(serial, sizeof(serial), s, sizeof(s)), 0);
	assert_string_equal(s, "ZA12B3C4");
	assert_int_equal(scsi_parse_serial(list, sizeof(list), s, sizeof(s)), -EBADMSG);
	assert_string_equal(s, "");
}

static void test_wwn(void **state)
{
	/* a target port's NAA (association 1: not the disk's), a vendor
	 * ASCII designator, the disk's EUI-64, then the disk's NAA */
	static const uint8_t page[] = {
		0x00, 0x83, 0x00, 0x34, /* header: 52 bytes */
		0x61, 0x93, 0x00, 0x08, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x02, 0x00, 0x00, 0x04, 'W',  'M',  'V',  'S',  0x01, 0x02, 0x00, 0x08,
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x01, 0x03, 0x00, 0x08,
		0x50, 0x00, 0xC5, 0x00, 0xA1, 0xB2, 0xC3, 0xD4, 0x00, 0x00, 0x00, 0x00,
	};
	uint8_t eui_only[sizeof(page)];
	static const uint8_t ascii_only[] = { 0x00, 0x83, 0x00, 0x0C, 0x02, 0x00, 0x00, 0x08,
					      'W',  'M',  'V',  'S',  '0',  '0',  '0',  '1' };
	char w[40];
	assert_int_equal(scsi_parse_wwn(page, sizeof(page), w, sizeof(w)), 0);
	assert_string_equal(w, "naa.5000c500a1b2c3d4");
	memcpy(eui_only, page, sizeof(page));
	eui_only[37] = 0x13; /* the NAA becomes a target port's */
	assert_int_equal(scsi_parse_wwn(eui_only, sizeof(eui_only), w, sizeof(w)), 0);
	assert_string_equal(w, "eui.0011223344556677");
	/* QEMU's scsi-hd without wwn=: only its serial as vendor text */
	assert_int_equal(scsi_parse_wwn(ascii_only, sizeof(ascii_only), w, sizeof(w)), -ENODATA);
	assert_string_equal(w, "");
	/* a designator cut short by the transfer is not read */
	assert_int_equal(scsi_parse_wwn(page, 46, w, sizeof(w)), 0);
	assert_string_equal(w, "eui.0011223344556677");
}

/* QEMU 7.2's scsi-hd pages as the guest read them (tests/devices). */
static void test_block_limits_and_provisioning(void **state)
{
	uint8_t bl[64] = { 0x00, 0xB0, 0x00, 0x3C };
	static const uint8_t lbp[] = { 0x00, 0xB2, 0x00, 0x04, 0x00, 0xE0, 0x02, 0x00 };
	static const uint8_t lbp_rz[] = { 0x00, 0xB2, 0x00, 0x04, 0x00, 0x87, 0x01, 0x00 };
	static const uint8_t bdc[] = { 0x00, 0xB1, 0x00, 0x3C, 0x00, 0x01 };
	struct scsi_block_limits b;
	struct scsi_lbp p;
	uint16_t rot;
	bl[21] = 0x20;                         /* max unmap LBA count 2097152 */
	bl[27] = 0xFF;                         /* max unmap descriptors 255 */
	bl[31] = 0x08;                         /* optimal unmap granularity 8 */
	bl[32] = 0x80, bl[35] = 0x02;          /* UGAVALID, alignment 2 */
	bl[41] = 0x3F, bl[42] = bl[43] = 0xFF; /* max write same 0x3fffff */
	assert_int_equal(scsi_parse_block_limits(bl, sizeof(bl), &b), 0);
	assert_int_equal(b.max_unmap_lba, 2097152);
	assert_int_equal(b.max_unmap_desc, 255);
	assert_int_equal(b.unmap_granularity, 8);
	assert_true(b.ugavalid);
	assert_int_equal(b.unmap_alignment, 2);
	assert_int_equal(b.max_write_same, 0x3fffff);
	/* an SBC-2 page (length 0Ch) has no unmap fields */
	bl[3] = 0x0C;
	assert_int_equal(scsi_parse_block_limits(bl, sizeof(bl), &b), 0);
	assert_int_equal(b.max_unmap_lba, 0);
	assert_int_equal(b.max_write_same, 0);
	assert_int_equal(scsi_parse_block_limits(lbp, sizeof(lbp), &b), -EBADMSG);

	assert_int_equal(scsi_parse_lbp(lbp, sizeof(lbp), &p), 0);
	assert_true(p.lbpu && p.lbpws && p.lbpws10);
	assert_int_equal(p.lbprz, 0);
	assert_int_equal(p.provisioning_type, 2);
	assert_int_equal(scsi_parse_lbp(lbp_rz, sizeof(lbp_rz), &p), 0);
	assert_true(p.lbpu && !p.lbpws && !p.lbpws10);
	assert_int_equal(p.lbprz, 1);
	assert_true(p.anc_sup && p.dp);
	assert_int_equal(p.provisioning_type, 1);
	assert_int_equal(scsi_parse_lbp(lbp, 6, &p), -EBADMSG);

	assert_int_equal(scsi_parse_rotation(bdc, sizeof(bdc), &rot), 0);
	assert_int_equal(rot, 1);
	assert_int_equal(scsi_parse_rotation(bdc, 5, &rot), -EBADMSG);
}

static void test_capacity_and_opcode_support(void **state)
{
	uint8_t cap[32] = { 0, 0, 0, 0, 0, 0x01, 0xFF, 0xFF, 0, 0, 0x10, 0x00, 0x05, 0, 0xC0 };
	static const uint8_t yes[] = { 0, 0x03, 0, 10 }, vendor[] = { 0, 0x85, 0, 10 },
			     no[] = { 0, 0x01, 0, 0 }, nodata[] = { 0, 0x00, 0, 0 };
	struct scsi_capacity c;
	int s;
	assert_int_equal(scsi_parse_capacity16(cap, sizeof(cap), &c), 0);
	assert_int_equal(c.blocks, 0x20000);
	assert_int_equal(c.block_len, 4096);
	assert_true(c.prot_en);
	assert_int_equal(c.p_type, 2); /* type 3 protection */
	assert_true(c.lbpme && c.lbprz);
	assert_int_equal(scsi_parse_capacity16(cap, 14, &c), -EBADMSG);
	assert_int_equal(scsi_parse_opcode_support(yes, sizeof(yes), &s), 0);
	assert_int_equal(s, 1);
	assert_int_equal(scsi_parse_opcode_support(vendor, sizeof(vendor), &s), 0);
	assert_int_equal(s, 1);
	assert_int_equal(scsi_parse_opcode_support(no, sizeof(no), &s), 0);
	assert_int_equal(s, 0);
	assert_int_equal(scsi_parse_opcode_support(nodata, sizeof(nodata), &s), 0);
	assert_int_equal(s, -1);
	assert_int_equal(scsi_parse_opcode_support(yes, 3, &s), -EBADMSG);
}

static void test_sat_detection(void **state)
{
	struct scsi_inquiry q = { .vendor = "ATA", .product = "Samsung SSD 860" };
	static const uint8_t plain[] = { 0x00, 0x80, 0x83, 0xB0 };
	static const uint8_t sat[] = { 0x00, 0x80, 0x83, 0x89, 0xB0 };
	assert_true(scsi_is_sat(&q, plain, N(plain)));
	snprintf(q.vendor, sizeof(q.vendor), "JMicron");
	assert_false(scsi_is_sat(&q, plain, N(plain)));
	assert_true(scsi_is_sat(&q, sat, N(sat))); /* a bridge with the ATA Information page */
	snprintf(q.vendor, sizeof(q.vendor), "ATAPI");
	assert_false(scsi_is_sat(&q, NULL, 0));
}

/* ---- scripted SG_IO ------------------------------------------------------------ */

struct step {
	uint8_t cdb[16];
	unsigned cdb_len;
	int dir;
	uint32_t timeout;   /* 0: not checked */
	uint8_t reply[512]; /* data from the device */
	unsigned reply_len; /* bytes transferred; the rest is resid */
	uint8_t sense[SCSI_SENSE_LEN];
	unsigned sense_len;
	uint8_t status;
	int rc; /* what the ioctl returns */
};

static struct step script[12];
static size_t script_len, script_pos;
static unsigned slept;

static int fake_sgio(int fd, struct sg_io_hdr *h)
{
	assert_true(script_pos < script_len); /* no command beyond the script */
	const struct step *s = &script[script_pos++];
	assert_int_equal(fd, 7);
	assert_int_equal(h->interface_id, 'S');
	assert_int_equal(h->cmd_len, s->cdb_len);
	assert_memory_equal(h->cmdp, s->cdb, s->cdb_len);
	assert_int_equal(h->dxfer_direction, s->dir);
	assert_true(h->mx_sb_len >= 18);
	if (s->timeout)
		assert_int_equal(h->timeout, s->timeout);
	if (s->dir == SG_DXFER_FROM_DEV) {
		assert_true(h->dxfer_len >= s->reply_len);
		memcpy(h->dxferp, s->reply, s->reply_len);
		h->resid = (int)(h->dxfer_len - s->reply_len);
	}
	memcpy(h->sbp, s->sense, s->sense_len);
	h->sb_len_wr = (unsigned char)s->sense_len;
	h->status = s->status;
	h->driver_status = s->sense_len ? 0x08 : 0;
	return s->rc;
}

static void fake_sleep(unsigned ms)
{
	slept += ms;
}

static int setup_script(void **state)
{
	memset(script, 0, sizeof(script));
	script_len = script_pos = 0;
	slept = 0;
	scsi_sgio_fn = fake_sgio;
	scsi_sleep_fn = fake_sleep;
	return 0;
}

static int teardown_script(void **state)
{
	scsi_sgio_fn = scsi_sgio_ioctl;
	return 0;
}

static struct step *add(const uint8_t *cdb, unsigned cdb_len, int dir)
{
	assert_true(script_len < N(script));
	struct step *st = &script[script_len++];
	memcpy(st->cdb, cdb, cdb_len);
	st->cdb_len = cdb_len;
	st->dir = dir;
	return st;
}

/* The last step ends in CHECK CONDITION with fixed sense key/asc/ascq. */
static void check_condition(uint8_t key, uint8_t asc, uint8_t ascq)
{
	struct step *st = &script[script_len - 1];
	static const uint8_t fx[18] = { 0x70, 0, 0, 0, 0, 0, 0, 10 };
	memcpy(st->sense, fx, sizeof(fx));
	st->sense[2] = key;
	st->sense[12] = asc;
	st->sense[13] = ascq;
	st->sense_len = sizeof(fx);
	st->status = 0x02;
}

static void add_vpd(uint8_t page, const uint8_t *reply, unsigned n)
{
	uint8_t cdb[6];
	scsi_cdb_inquiry(cdb, 1, page, SCSI_VPD_LEN);
	struct step *st = add(cdb, 6, SG_DXFER_FROM_DEV);
	memcpy(st->reply, reply, n);
	st->reply_len = n;
}

static void test_identify_flow(void **state)
{
	uint8_t cdb[6], inq[96];
	static const uint8_t list[] = { 0x00, 0x00, 0x00, 0x05, 0x00, 0x80, 0x83, 0xB1, 0xB2 };
	static const uint8_t serial[] = { 0x00, 0x80, 0x00, 0x08, 'W', 'M',
					  'V',  'S',  '0',  '0',  '0', '1' };
	static const uint8_t devid[] = { 0x00, 0x83, 0x00, 0x0C, 0x01, 0x03, 0x00, 0x08,
					 0x50, 0x00, 0xC5, 0x00, 0xA1, 0xB2, 0xC3, 0xD4 };
	static const uint8_t lbp[] = { 0x00, 0xB2, 0x00, 0x04, 0x00, 0x80, 0x02, 0x00 };
	struct scsi_info si;
	char err[256];
	scsi_cdb_inquiry(cdb, 0, 0, SCSI_INQUIRY_LEN);
	struct step *st = add(cdb, 6, SG_DXFER_FROM_DEV);
	st->reply_len = (unsigned)build_inquiry(inq, "WEARMONV", "EMULATED SAS SSD", "R123");
	memcpy(st->reply, inq, st->reply_len);
	add_vpd(0x00, list, sizeof(list));
	add_vpd(0x80, serial, sizeof(serial));
	add_vpd(0x83, devid, sizeof(devid));
	add_vpd(0xB1, list, 0);
	check_condition(SCSI_KEY_ILLEGAL_REQUEST, 0x24, 0); /* listed, yet refused */
	add_vpd(0xB2, lbp, sizeof(lbp));
	assert_int_equal(scsi_identify(7, &si, err, sizeof(err)), 0);
	assert_int_equal(script_pos, script_len);
	assert_string_equal(si.inq.vendor, "WEARMONV");
	assert_string_equal(si.inq.product, "EMULATED SAS SSD");
	assert_string_equal(si.serial, "WMVS0001");
	assert_string_equal(si.wwn, "naa.5000c500a1b2c3d4");
	assert_false(si.sat);
	assert_false(si.has_bl);
	assert_true(si.has_lbp && si.lbp.lbpu);
	assert_int_equal(si.rotation, 0);
}

/* A SAT disk: its VPD pages are left to the ATA path. */
static void test_identify_sat_and_errors(void **state)
{
	uint8_t cdb[6], inq[96];
	static const uint8_t list[] = { 0x00, 0x00, 0x00, 0x03, 0x00, 0x80, 0x89 };
	struct scsi_info si;
	char err[256];
	scsi_cdb_inquiry(cdb, 0, 0, SCSI_INQUIRY_LEN);
	struct step *st = add(cdb, 6, SG_DXFER_FROM_DEV);
	st->reply_len = (unsigned)build_inquiry(inq, "ATA", "WDC WDS500G2B0A", "X610");
	memcpy(st->reply, inq, st->reply_len);
	add_vpd(0x00, list, sizeof(list));
	assert_int_equal(scsi_identify(7, &si, err, sizeof(err)), 0);
	assert_true(si.sat);
	assert_string_equal(si.serial, "");
	/* the ioctl itself fails (not a SCSI device) */
	st = add(cdb, 6, SG_DXFER_FROM_DEV);
	st->rc = -ENOTTY;
	assert_int_equal(scsi_identify(7, &si, err, sizeof(err)), -ENOTTY);
	assert_string_equal(err, "SCSI INQUIRY: SG_IO: Inappropriate ioctl for device");
	/* fewer than 36 bytes came */
	st = add(cdb, 6, SG_DXFER_FROM_DEV);
	st->reply_len = 20;
	assert_int_equal(scsi_identify(7, &si, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "20 bytes"));
}

/* A unit attention (a reset) is answered by sending the command again. */
static void test_unit_attention_retried(void **state)
{
	uint8_t cdb[6], buf[8];
	struct scsi_sense s;
	char err[128];
	scsi_cdb_test_unit_ready(cdb);
	add(cdb, 6, SG_DXFER_NONE);
	check_condition(SCSI_KEY_UNIT_ATTENTION, 0x29, 0);
	add(cdb, 6, SG_DXFER_NONE);
	assert_int_equal(
		scsi_command(7, cdb, 6, SG_DXFER_NONE, NULL, 0, 1000, &s, NULL, err, sizeof(err)),
		0);
	assert_int_equal(script_pos, 2);
	/* busy, and a host error, are failures with the status named */
	add(cdb, 6, SG_DXFER_NONE)->status = 0x08;
	assert_int_equal(
		scsi_command(7, cdb, 6, SG_DXFER_NONE, NULL, 0, 1000, &s, NULL, err, sizeof(err)),
		-EIO);
	assert_string_equal(err, "SCSI status 0x08 (busy)");
	add(cdb, 6, SG_DXFER_NONE);
	check_condition(SCSI_KEY_RECOVERED, 0x17, 0x01); /* recovered: a success */
	assert_int_equal(
		scsi_command(7, cdb, 6, SG_DXFER_NONE, NULL, 0, 1000, &s, NULL, err, sizeof(err)),
		0);
	assert_int_equal(s.key, SCSI_KEY_RECOVERED);
	(void)buf;
}

static void add_rsoc(uint8_t sa, int support)
{
	static const uint8_t sup[] = { 0, 0x03, 0, 10 }, not [] = { 0, 0x01, 0, 0 };
	uint8_t cdb[12];
	scsi_cdb_report_opcode(cdb, 0x48, 1, sa, 64);
	struct step *st = add(cdb, 12, SG_DXFER_FROM_DEV);
	if (support < 0) {
		check_condition(SCSI_KEY_ILLEGAL_REQUEST, 0x20, 0);
		return;
	}
	memcpy(st->reply, support ? sup : not, 4);
	st->reply_len = 4;
}

static void add_sanitize(enum scsi_sanitize_sa sa)
{
	uint8_t cdb[10];
	scsi_cdb_sanitize(cdb, sa, 1);
	add(cdb, 10, SG_DXFER_NONE);
}

/* REQUEST SENSE answering with key/asc/ascq (fixed format, 18 bytes). */
static void add_request_sense(uint8_t key, uint8_t asc, uint8_t ascq)
{
	uint8_t cdb[6];
	scsi_cdb_request_sense(cdb, 252);
	struct step *st = add(cdb, 6, SG_DXFER_FROM_DEV);
	st->reply[0] = 0x70;
	st->reply[2] = key;
	st->reply[7] = 10;
	st->reply[12] = asc;
	st->reply[13] = ascq;
	st->reply_len = 18;
}

static void add_tur(void)
{
	uint8_t cdb[6];
	scsi_cdb_test_unit_ready(cdb);
	add(cdb, 6, SG_DXFER_NONE);
}

static void test_sanitize_polled_to_the_end(void **state)
{
	struct scsi_erase_result r;
	add_rsoc(SCSI_SANITIZE_CRYPTO, 1);
	add_sanitize(SCSI_SANITIZE_CRYPTO);
	add_request_sense(SCSI_KEY_NOT_READY, 0x04, 0x1B);
	add_request_sense(SCSI_KEY_NOT_READY, 0x04, 0x1B);
	add_request_sense(SCSI_KEY_NO_SENSE, 0, 0);
	add_tur();
	assert_int_equal(scsi_sanitize(7, 1, NULL, 0, &r), 0);
	assert_int_equal(script_pos, script_len);
	assert_int_equal(slept, 3000);
	assert_string_equal(r.text, "");
}

static void test_sanitize_unsupported(void **state)
{
	struct scsi_erase_result r;
	/* the device says so: nothing is sent */
	add_rsoc(SCSI_SANITIZE_BLOCK, 0);
	assert_int_equal(scsi_sanitize(7, 0, NULL, 0, &r), -EOPNOTSUPP);
	assert_int_equal(script_pos, 1);
	assert_string_equal(r.text, "SCSI SANITIZE (block erase) not supported by this drive "
				    "(REPORT SUPPORTED OPERATION CODES)");
	/* it cannot say (QEMU's scsi-hd): the command is refused */
	add_rsoc(SCSI_SANITIZE_BLOCK, -1);
	add_sanitize(SCSI_SANITIZE_BLOCK);
	check_condition(SCSI_KEY_ILLEGAL_REQUEST, 0x20, 0);
	assert_int_equal(scsi_sanitize(7, 0, NULL, 0, &r), -EOPNOTSUPP);
	assert_string_equal(r.text, "SCSI SANITIZE (block erase) not supported by this drive: "
				    "ILLEGAL REQUEST, ASC/ASCQ 20h/00h (invalid command "
				    "operation code)");
	assert_int_equal(script_pos, script_len);
	/* refused otherwise (QEMU's MegaRAID logical drive): a failure */
	add_rsoc(SCSI_SANITIZE_BLOCK, -1);
	add_sanitize(SCSI_SANITIZE_BLOCK);
	check_condition(SCSI_KEY_HARDWARE_ERROR, 0x44, 0);
	assert_int_equal(scsi_sanitize(7, 0, NULL, 0, &r), -EIO);
	assert_string_equal(r.text, "SCSI SANITIZE (block erase): HARDWARE ERROR, ASC/ASCQ "
				    "44h/00h (internal target failure)");
	assert_int_equal(r.sense.key, SCSI_KEY_HARDWARE_ERROR);
}

static void test_sanitize_fails_stops_and_times_out(void **state)
{
	struct scsi_erase_result r;
	atomic_int stop = 0;
	add_rsoc(SCSI_SANITIZE_BLOCK, 1);
	add_sanitize(SCSI_SANITIZE_BLOCK);
	add_request_sense(SCSI_KEY_MEDIUM_ERROR, 0x31, 0x03);
	assert_int_equal(scsi_sanitize(7, 0, &stop, 0, &r), -EIO);
	assert_string_equal(r.text, "SCSI SANITIZE (block erase) failed: MEDIUM ERROR, ASC/ASCQ "
				    "31h/03h (sanitize command failed)");
	/* still running when the time allowed ends */
	add_rsoc(SCSI_SANITIZE_BLOCK, 1);
	add_sanitize(SCSI_SANITIZE_BLOCK);
	add_request_sense(SCSI_KEY_NOT_READY, 0x04, 0x1B);
	add_request_sense(SCSI_KEY_NOT_READY, 0x04, 0x1B);
	assert_int_equal(scsi_sanitize(7, 0, &stop, 2, &r), -ETIMEDOUT);
	assert_string_equal(r.text, "SCSI SANITIZE (block erase): still in progress after 2 s");
	assert_int_equal(script_pos, script_len);
}

static void test_sanitize_stop(void **state)
{
	struct scsi_erase_result r;
	atomic_int stop = 1;
	add_rsoc(SCSI_SANITIZE_BLOCK, -1);
	add_sanitize(SCSI_SANITIZE_BLOCK);
	assert_int_equal(scsi_sanitize(7, 0, &stop, 0, &r), -EINTR);
	assert_non_null(strstr(r.text, "stopped while in progress; the device finishes it"));
	assert_int_equal(slept, 0);
}

static void add_rc16(int prot)
{
	uint8_t cdb[16];
	scsi_cdb_read_capacity16(cdb, SCSI_CAP16_LEN);
	struct step *st = add(cdb, 16, SG_DXFER_FROM_DEV);
	st->reply[7] = 0xFF;
	st->reply[10] = 0x02;
	st->reply[12] = prot ? 0x03 : 0x00; /* type 2 */
	st->reply_len = 32;
}

static void test_format_unit(void **state)
{
	uint8_t cdb[6];
	struct scsi_erase_result r;
	scsi_cdb_format_unit(cdb);
	add_rc16(0);
	add(cdb, 6, SG_DXFER_NONE)->timeout = SCSI_FORMAT_TIMEOUT_MS;
	add_tur();
	check_condition(SCSI_KEY_UNIT_ATTENTION, 0x2A, 0x01); /* mode parameters changed */
	add_tur();
	assert_int_equal(scsi_format_unit(7, &r), 0);
	assert_int_equal(script_pos, script_len);
	/* protection information would be lost: refused, nothing sent */
	add_rc16(1);
	assert_int_equal(scsi_format_unit(7, &r), -EOPNOTSUPP);
	assert_int_equal(script_pos, script_len);
	assert_non_null(strstr(r.text, "protection information (type 2)"));
	/* no READ CAPACITY(16); the format refused as QEMU's MegaRAID does */
	uint8_t rc16[16];
	scsi_cdb_read_capacity16(rc16, SCSI_CAP16_LEN);
	add(rc16, 16, SG_DXFER_FROM_DEV);
	check_condition(SCSI_KEY_ILLEGAL_REQUEST, 0x20, 0);
	add(cdb, 6, SG_DXFER_NONE);
	check_condition(SCSI_KEY_HARDWARE_ERROR, 0x44, 0);
	assert_int_equal(scsi_format_unit(7, &r), -EIO);
	assert_string_equal(r.text, "SCSI FORMAT UNIT: HARDWARE ERROR, ASC/ASCQ 44h/00h "
				    "(internal target failure)");
}

static void test_log_sense_issuer(void **state)
{
	uint8_t cdb[10], buf[64];
	size_t got;
	char err[160];
	scsi_cdb_log_sense(cdb, 0x0D, 0, sizeof(buf));
	struct step *st = add(cdb, 10, SG_DXFER_FROM_DEV);
	static const uint8_t page[] = { 0x0D, 0, 0, 6, 0, 0, 0x03, 2, 0, 38, 0xEE, 0xEE };
	memcpy(st->reply, page, sizeof(page));
	st->reply_len = sizeof(page);
	assert_int_equal(scsi_log_sense(7, 0x0D, buf, sizeof(buf), &got, err, sizeof(err)), 0);
	assert_int_equal(got, 10); /* the page's own length, not the padding */
	add(cdb, 10, SG_DXFER_FROM_DEV);
	check_condition(SCSI_KEY_ILLEGAL_REQUEST, 0x20, 0);
	assert_int_equal(scsi_log_sense(7, 0x0D, buf, sizeof(buf), &got, err, sizeof(err)),
			 -EOPNOTSUPP);
	assert_string_equal(err, "LOG SENSE page 0Dh: ILLEGAL REQUEST, ASC/ASCQ 20h/00h (invalid "
				 "command operation code)");
}

#define SCRIPTED(f) cmocka_unit_test_setup_teardown(f, setup_script, teardown_script)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdbs),
		cmocka_unit_test(test_sense_fixed),
		cmocka_unit_test(test_sense_descriptor),
		cmocka_unit_test(test_sense_unusable),
		cmocka_unit_test(test_inquiry),
		cmocka_unit_test(test_vpd_list_and_serial),
		cmocka_unit_test(test_wwn),
		cmocka_unit_test(test_block_limits_and_provisioning),
		cmocka_unit_test(test_capacity_and_opcode_support),
		cmocka_unit_test(test_sat_detection),
		SCRIPTED(test_identify_flow),
		SCRIPTED(test_identify_sat_and_errors),
		SCRIPTED(test_unit_attention_retried),
		SCRIPTED(test_sanitize_polled_to_the_end),
		SCRIPTED(test_sanitize_unsupported),
		SCRIPTED(test_sanitize_fails_stops_and_times_out),
		SCRIPTED(test_sanitize_stop),
		SCRIPTED(test_format_unit),
		SCRIPTED(test_log_sense_issuer),
	};
	return cmocka_run_group_tests_name("scsi", tests, NULL, NULL);
}
