/* Unit tests of ata: CDB and payload bytes (common/device/ata.h), IDENTIFY and
 * SMART parsing from built fixtures, sense decoding, and the security erase
 * flow against a scripted SG_IO. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "device/ata.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- fixtures ------------------------------------------------------------ */

static void put_word(uint8_t *buf, unsigned w, uint16_t v)
{
	buf[2 * w] = (uint8_t)(v & 0xff);
	buf[2 * w + 1] = (uint8_t)(v >> 8);
}

/* ATA string: space padded, first character of each pair in the high byte. */
static void put_string(uint8_t *buf, unsigned first, unsigned words, const char *s)
{
	size_t n = strlen(s);
	for (unsigned i = 0; i < 2 * words; i++) {
		char c = i < n ? s[i] : ' ';
		buf[2 * first + (i ^ 1)] = (uint8_t)c;
	}
}

struct id_spec {
	const char *serial, *firmware, *model;
	uint16_t security, w89, w90;
	uint64_t lba48; /* 0: no 48-bit feature set */
	uint32_t lba28;
};

static void build_identify(uint8_t buf[ATA_SECTOR], const struct id_spec *s)
{
	memset(buf, 0, ATA_SECTOR);
	put_string(buf, 10, 10, s->serial ? s->serial : "SER0001");
	put_string(buf, 23, 4, s->firmware ? s->firmware : "FW01");
	put_string(buf, 27, 20, s->model ? s->model : "WEARMON TEST SSD");
	put_word(buf, 60, (uint16_t)(s->lba28 & 0xffff));
	put_word(buf, 61, (uint16_t)(s->lba28 >> 16));
	if (s->lba48) {
		put_word(buf, 83, 0x4400);
		for (unsigned i = 0; i < 4; i++)
			put_word(buf, 100 + i, (uint16_t)(s->lba48 >> (16 * i)));
	}
	put_word(buf, 89, s->w89);
	put_word(buf, 90, s->w90);
	put_word(buf, 128, s->security);
}

/* Word 255: A5h signature and the checksum byte that makes the sum 0. */
static void seal_identify(uint8_t buf[ATA_SECTOR])
{
	buf[510] = 0xA5;
	uint8_t sum = 0;
	for (unsigned i = 0; i < 511; i++)
		sum = (uint8_t)(sum + buf[i]);
	buf[511] = (uint8_t)(0x100 - sum);
}

/* ---- CDBs and payloads ------------------------------------------------------ */

struct cdb_case {
	const char *name;
	void (*build)(uint8_t cdb[ATA_CDB_LEN]);
	uint8_t want[ATA_CDB_LEN];
};

/* READ LOG EXT of the Device Statistics log's temperature page. */
static void cdb_devstat_temp(uint8_t cdb[ATA_CDB_LEN])
{
	ata_cdb_read_log_ext(cdb, 0x04, 0x05);
}

static const struct cdb_case cdb_cases[] = {
	{ "IDENTIFY DEVICE",
	  ata_cdb_identify,
	  { 0x85, 0x08, 0x0E, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0x40, 0xEC, 0 } },
	{ "SMART READ DATA",
	  ata_cdb_smart_read_data,
	  { 0x85, 0x08, 0x0E, 0, 0xD0, 0, 0x01, 0, 0, 0, 0x4F, 0, 0xC2, 0, 0xB0, 0 } },
	{ "READ LOG EXT 04h page 05h",
	  cdb_devstat_temp,
	  { 0x85, 0x09, 0x0E, 0, 0, 0, 0x01, 0, 0x04, 0, 0x05, 0, 0, 0x40, 0x2F, 0 } },
	{ "SECURITY SET PASSWORD",
	  ata_cdb_security_set_password,
	  { 0x85, 0x0A, 0x06, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0x40, 0xF1, 0 } },
	{ "SECURITY ERASE PREPARE",
	  ata_cdb_security_erase_prepare,
	  { 0x85, 0x06, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0xF3, 0 } },
	{ "SECURITY ERASE UNIT",
	  ata_cdb_security_erase_unit,
	  { 0x85, 0x0A, 0x06, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0x40, 0xF4, 0 } },
};

static void test_cdbs(void **state)
{
	for (size_t i = 0; i < N(cdb_cases); i++) {
		uint8_t cdb[ATA_CDB_LEN];
		memset(cdb, 0xAA, sizeof(cdb));
		cdb_cases[i].build(cdb);
		print_message("  %s\n", cdb_cases[i].name);
		assert_memory_equal(cdb, cdb_cases[i].want, ATA_CDB_LEN);
	}
}

struct payload_case {
	const char *password;
	int master, enhanced;
	uint8_t byte0;
};

static const struct payload_case payload_cases[] = {
	{ "wearmon", 0, 0, 0x00 },
	{ "wearmon", 1, 0, 0x01 },
	{ "wearmon", 0, 1, 0x02 },
	{ "wearmon", 1, 1, 0x03 },
	{ "", 0, 0, 0x00 },
	{ "0123456789abcdef0123456789ABCDEF", 0, 1, 0x02 }, /* exactly 32 */
	{ "AbCd", 0, 0, 0x00 },                             /* not byte-swapped */
};

static void test_payloads(void **state)
{
	for (size_t i = 0; i < N(payload_cases); i++) {
		const struct payload_case *c = &payload_cases[i];
		uint8_t out[ATA_SECTOR], want[ATA_SECTOR] = { 0 };
		memset(out, 0xEE, sizeof(out));
		want[0] = c->byte0;
		memcpy(want + 2, c->password, strlen(c->password));
		assert_int_equal(ata_security_payload(out, c->password, c->master, c->enhanced), 0);
		assert_memory_equal(out, want, ATA_SECTOR);
	}
}

static void test_payload_rejects(void **state)
{
	uint8_t out[ATA_SECTOR], zero[ATA_SECTOR] = { 0 };
	memset(out, 0xEE, sizeof(out));
	assert_int_equal(ata_security_payload(out, "0123456789abcdef0123456789ABCDEFx", 0, 0),
			 -EINVAL);
	assert_memory_equal(out, zero, ATA_SECTOR);
	assert_int_equal(ata_security_payload(out, NULL, 0, 0), -EINVAL);
}

/* ---- IDENTIFY ------------------------------------------------------------------ */

static void test_identify_strings(void **state)
{
	uint8_t buf[ATA_SECTOR];
	struct ata_identity id;
	struct id_spec s = { .serial = "  S3Z9NB0K123456",
			     .firmware = "RVT04B6Q",
			     .model = "Samsung SSD 860 EVO 500GB" };
	build_identify(buf, &s);
	/* The serial's first pair "  " then "S3": 'S' sits in the high byte. */
	assert_int_equal(buf[2 * 11], '3');
	assert_int_equal(buf[2 * 11 + 1], 'S');
	assert_int_equal(ata_parse_identify(buf, &id), 0);
	assert_string_equal(id.serial, "S3Z9NB0K123456");
	assert_string_equal(id.firmware, "RVT04B6Q");
	assert_string_equal(id.model, "Samsung SSD 860 EVO 500GB");
}

static void test_identify_full_width_strings(void **state)
{
	uint8_t buf[ATA_SECTOR];
	struct ata_identity id;
	struct id_spec s = { .serial = "ABCDEFGHIJKLMNOPQRST",
			     .model = "0123456789012345678901234567890123456789" };
	build_identify(buf, &s);
	assert_int_equal(ata_parse_identify(buf, &id), 0);
	assert_string_equal(id.serial, "ABCDEFGHIJKLMNOPQRST");
	assert_string_equal(id.model, "0123456789012345678901234567890123456789");
}

static void test_identify_capacity(void **state)
{
	uint8_t buf[ATA_SECTOR];
	struct ata_identity id;
	struct id_spec s48 = { .lba48 = 0x0000123456789ABCull, .lba28 = 0x0FFFFFFF };
	build_identify(buf, &s48);
	assert_int_equal(ata_parse_identify(buf, &id), 0);
	assert_int_equal(id.sectors, 0x0000123456789ABCull);
	struct id_spec s28 = { .lba28 = 0x00ABCDEF };
	build_identify(buf, &s28);
	assert_int_equal(ata_parse_identify(buf, &id), 0);
	assert_int_equal(id.sectors, 0x00ABCDEF);
}

struct sec_case {
	const char *name;
	uint16_t word;
	int supported, enabled, locked, frozen, expired, enhanced;
};

static const struct sec_case sec_cases[] = {
	{ "not supported", 0x0000, 0, 0, 0, 0, 0, 0 },
	{ "supported", 0x0001, 1, 0, 0, 0, 0, 0 },
	{ "frozen", 0x0009, 1, 0, 0, 1, 0, 0 },
	{ "enabled", 0x0003, 1, 1, 0, 0, 0, 0 },
	{ "locked", 0x0007, 1, 1, 1, 0, 0, 0 },
	{ "count expired", 0x0017, 1, 1, 1, 0, 1, 0 },
	{ "enhanced", 0x0021, 1, 0, 0, 0, 0, 1 },
	{ "frozen enhanced", 0x0029, 1, 0, 0, 1, 0, 1 },
	{ "level max bit ignored", 0x0121, 1, 0, 0, 0, 0, 1 },
};

static void test_identify_security(void **state)
{
	for (size_t i = 0; i < N(sec_cases); i++) {
		const struct sec_case *c = &sec_cases[i];
		uint8_t buf[ATA_SECTOR];
		struct ata_identity id;
		struct id_spec s = { .security = c->word };
		build_identify(buf, &s);
		print_message("  %s\n", c->name);
		assert_int_equal(ata_parse_identify(buf, &id), 0);
		assert_int_equal(id.security, c->word);
		assert_int_equal(id.sec_supported, c->supported);
		assert_int_equal(id.sec_enabled, c->enabled);
		assert_int_equal(id.sec_locked, c->locked);
		assert_int_equal(id.sec_frozen, c->frozen);
		assert_int_equal(id.sec_count_expired, c->expired);
		assert_int_equal(id.sec_enhanced, c->enhanced);
	}
}

struct time_case {
	uint16_t word;
	unsigned minutes;
};

static const struct time_case time_cases[] = {
	{ 0x0000, 0 },                                       /* not reported */
	{ 0x0001, 2 },   { 0x001E, 60 },    { 0x00FF, 510 }, /* 8-bit form maximum (> 508 min) */
	{ 0x7F05, 10 },                                      /* bit 15 clear: only bits 7:0 count */
	{ 0x8005, 10 },                                      /* extended form */
	{ 0x8100, 512 }, { 0xFFFF, 65534 },                  /* extended form maximum */
	{ 0x8000, 0 },
};

static void test_identify_erase_times(void **state)
{
	for (size_t i = 0; i < N(time_cases); i++) {
		uint8_t buf[ATA_SECTOR];
		struct ata_identity id;
		struct id_spec s = { .w89 = time_cases[i].word, .w90 = time_cases[i].word };
		build_identify(buf, &s);
		assert_int_equal(ata_parse_identify(buf, &id), 0);
		assert_int_equal(id.erase_minutes, time_cases[i].minutes);
		assert_int_equal(id.enh_erase_minutes, time_cases[i].minutes);
	}
}

static void test_identify_checksum(void **state)
{
	uint8_t buf[ATA_SECTOR];
	struct ata_identity id;
	struct id_spec s = { .security = 0x21 };
	build_identify(buf, &s);
	seal_identify(buf);
	assert_int_equal(ata_parse_identify(buf, &id), 0);
	assert_true(id.sec_enhanced);
	buf[2 * 128] ^= 0x08; /* a bit flipped in transit */
	assert_int_equal(ata_parse_identify(buf, &id), -EBADMSG);
}

struct timeout_case {
	const char *name;
	uint64_t sectors;
	uint16_t w89, w90;
	int enhanced;
	uint32_t want_ms;
};

/* 2048 sectors per MiB, 30 MiB/s: 61440 sectors per second of capacity. */
static const struct timeout_case timeout_cases[] = {
	{ "unknown time, small disk: one hour", 61440ull * 10, 0, 0, 0, 3600000u },
	{ "unknown time, big disk: capacity", 61440ull * 7200, 0, 0, 0, 9000000u },
	{ "normal 60 min", 61440ull * 10, 30, 0, 0, 7200000u },
	{ "enhanced uses word 90", 61440ull * 10, 30, 0x8000 | 90, 1, 14400000u },
	{ "capacity beats estimate", 61440ull * 20000, 1, 0, 0, 21800000u },
	{ "extended maximum", 0, 0xFFFF, 0, 0, 3935640000u },
	{ "clamped", 1ull << 47, 0, 0, 0, UINT32_MAX },
};

static void test_erase_timeout(void **state)
{
	assert_int_equal(ata_erase_timeout_ms(NULL, 0), 12u * 3600u * 1000u);
	for (size_t i = 0; i < N(timeout_cases); i++) {
		const struct timeout_case *c = &timeout_cases[i];
		uint8_t buf[ATA_SECTOR];
		struct ata_identity id;
		struct id_spec s = { .w89 = c->w89, .w90 = c->w90, .lba48 = c->sectors };
		build_identify(buf, &s);
		assert_int_equal(ata_parse_identify(buf, &id), 0);
		print_message("  %s\n", c->name);
		assert_int_equal(ata_erase_timeout_ms(&id, c->enhanced), c->want_ms);
	}
}

/* ---- SMART -------------------------------------------------------------------- */

static void put_attr(uint8_t *buf, unsigned slot, uint8_t id, uint16_t flags, uint8_t cur,
		     uint8_t worst, uint64_t raw)
{
	uint8_t *e = buf + 2 + 12 * slot;
	e[0] = id;
	e[1] = (uint8_t)flags;
	e[2] = (uint8_t)(flags >> 8);
	e[3] = cur;
	e[4] = worst;
	for (unsigned b = 0; b < 6; b++)
		e[5 + b] = (uint8_t)(raw >> (8 * b));
	e[11] = 0x77; /* reserved byte must not leak into raw */
}

static void seal_smart(uint8_t buf[ATA_SECTOR])
{
	uint8_t sum = 0;
	for (unsigned i = 0; i < 511; i++)
		sum = (uint8_t)(sum + buf[i]);
	buf[511] = (uint8_t)(0x100 - sum);
}

static void build_smart(uint8_t buf[ATA_SECTOR])
{
	memset(buf, 0, ATA_SECTOR);
	put_word(buf, 0, 0x0010);
	put_attr(buf, 0, 5, 0x0033, 100, 100, 12);
	put_attr(buf, 1, 9, 0x0032, 98, 98, 0x010203040506ull);
	/* slot 2 empty */
	put_attr(buf, 3, 177, 0x0013, 95, 95, 47);
	put_attr(buf, 29, 241, 0x0032, 99, 99, 0xFFFFFFFFFFFFull);
	seal_smart(buf);
}

static void test_smart_parse(void **state)
{
	uint8_t buf[ATA_SECTOR];
	struct ata_smart sm;
	build_smart(buf);
	assert_int_equal(ata_parse_smart(buf, &sm), 0);
	assert_int_equal(sm.revision, 0x0010);
	assert_true(sm.checksum_ok);
	assert_int_equal(sm.count, 4);
	static const struct ata_smart_attr want[] = {
		{ 5, 0x0033, 100, 100, 12 },
		{ 9, 0x0032, 98, 98, 0x010203040506ull },
		{ 177, 0x0013, 95, 95, 47 },
		{ 241, 0x0032, 99, 99, 0xFFFFFFFFFFFFull },
	};
	for (size_t i = 0; i < N(want); i++) {
		assert_int_equal(sm.attr[i].id, want[i].id);
		assert_int_equal(sm.attr[i].flags, want[i].flags);
		assert_int_equal(sm.attr[i].current, want[i].current);
		assert_int_equal(sm.attr[i].worst, want[i].worst);
		assert_int_equal(sm.attr[i].raw, want[i].raw);
	}
}

static void test_smart_full_table_and_bad_checksum(void **state)
{
	uint8_t buf[ATA_SECTOR];
	struct ata_smart sm;
	memset(buf, 0, sizeof(buf));
	for (unsigned i = 0; i < ATA_SMART_ATTRS; i++)
		put_attr(buf, i, (uint8_t)(i + 1), 0, 100, 100, i);
	seal_smart(buf);
	assert_int_equal(ata_parse_smart(buf, &sm), 0);
	assert_int_equal(sm.count, ATA_SMART_ATTRS);
	assert_int_equal(sm.attr[29].id, 30);
	assert_int_equal(sm.attr[29].raw, 29);
	assert_true(sm.checksum_ok);
	buf[511] ^= 1;
	assert_int_equal(ata_parse_smart(buf, &sm), 0);
	assert_false(sm.checksum_ok);
	assert_int_equal(sm.count, ATA_SMART_ATTRS);
}

/* ---- sense -------------------------------------------------------------------- */

struct sense_case {
	const char *name;
	uint8_t status;
	uint16_t host, driver;
	uint8_t sense[ATA_SENSE_LEN];
	unsigned sense_len;
	int rc, regs_valid;
	uint8_t ata_status, ata_error;
	const char *text; /* substring of the error, NULL when ok */
};

/* Descriptor sense with the ATA Status Return descriptor at byte 8. */
#define DESC_SENSE(key, asc, ascq, err, st)                                                        \
	{                                                                                          \
		0x72, key, asc, ascq, 0, 0, 0, 14, 0x09, 0x0C, 0, err, 0, 1, 0, 0, 0, 0, 0, 0,     \
			0x40, st                                                                   \
	}

static const struct sense_case sense_cases[] = {
	{ "good, no sense", 0, 0, 0, { 0 }, 0, 0, 0, 0, 0, NULL },
	{ "descriptor 00/1D good", 0x02, 0, 0x08, DESC_SENSE(0x01, 0, 0x1D, 0, 0x50), 22, 0, 1,
	  0x50, 0x00, NULL },
	{ "descriptor ABRT", 0x02, 0, 0x08, DESC_SENSE(0x0B, 0, 0, 0x04, 0x51), 22, -EIO, 1, 0x51,
	  0x04, "ATA command aborted (status 0x51 error 0x04)" },
	{ "descriptor DRQ", 0x02, 0, 0x08, DESC_SENSE(0x01, 0, 0x1D, 0, 0x58), 22, -EIO, 1, 0x58,
	  0x00, "ATA command failed (status 0x58 error 0x00)" },
	{ "descriptor after another descriptor",
	  0x02,
	  0,
	  0x08,
	  { 0x72, 0x01, 0,    0x1D, 0,    0, 0, 22, 0x02, 0x06, 0, 0, 0, 0,    0,
	    0,    0x09, 0x0C, 0,    0x04, 0, 1, 0,  0,    0,    0, 0, 0, 0x40, 0x51 },
	  30,
	  -EIO,
	  1,
	  0x51,
	  0x04,
	  "aborted" },
	{ "fixed 00/1D good",
	  0x02,
	  0,
	  0x08,
	  { 0x70, 0, 0x01, 0x00, 0x50, 0x40, 0x01, 10, 0, 0, 0, 0, 0x00, 0x1D },
	  18,
	  0,
	  1,
	  0x50,
	  0x00,
	  NULL },
	{ "fixed ABRT as QEMU/libata",
	  0x02,
	  0,
	  0x08,
	  { 0x70, 0, 0x0B, 0x04, 0x41, 0x40, 0x01, 10, 0, 0, 0, 0, 0x00, 0x00 },
	  18,
	  -EIO,
	  1,
	  0x41,
	  0x04,
	  "ATA command aborted (status 0x41 error 0x04)" },
	{ "fixed with VALID bit",
	  0x02,
	  0,
	  0x08,
	  { 0xF0, 0, 0x0B, 0x04, 0x51, 0x40, 0x01, 10, 0, 0, 0, 0, 0x00, 0x00 },
	  18,
	  -EIO,
	  1,
	  0x51,
	  0x04,
	  "aborted (status 0x51 error 0x04)" },
	{ "fixed illegal request (no pass-through)",
	  0x02,
	  0,
	  0x08,
	  { 0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x24, 0x00 },
	  18,
	  -EIO,
	  0,
	  0,
	  0,
	  "sense key 0x5 ASC/ASCQ 0x24/0x00" },
	{ "check condition without sense",
	  0x02,
	  0,
	  0,
	  { 0 },
	  0,
	  -EIO,
	  0,
	  0,
	  0,
	  "without usable sense" },
	{ "host error",
	  0,
	  0x07,
	  0,
	  { 0 },
	  0,
	  -EIO,
	  0,
	  0,
	  0,
	  "SG_IO failed (scsi status 0x00 host 0x7 driver 0x0)" },
	{ "driver error", 0, 0, 0x06, { 0 }, 0, -EIO, 0, 0, 0, "driver 0x6" },
	{ "busy scsi status", 0x08, 0, 0, { 0 }, 0, -EIO, 0, 0, 0, "scsi status 0x08" },
};

static void test_sense(void **state)
{
	for (size_t i = 0; i < N(sense_cases); i++) {
		const struct sense_case *c = &sense_cases[i];
		uint8_t sb[ATA_SENSE_LEN];
		struct sg_io_hdr h;
		struct ata_regs regs;
		char err[160] = "";
		memcpy(sb, c->sense, sizeof(sb));
		memset(&h, 0, sizeof(h));
		h.status = c->status;
		h.host_status = c->host;
		h.driver_status = c->driver;
		h.sbp = sb;
		h.mx_sb_len = sizeof(sb);
		h.sb_len_wr = (unsigned char)c->sense_len;
		print_message("  %s\n", c->name);
		assert_int_equal(ata_check_sense(&h, &regs, err, sizeof(err)), c->rc);
		assert_int_equal(regs.valid, c->regs_valid);
		if (c->regs_valid) {
			assert_int_equal(regs.status, c->ata_status);
			assert_int_equal(regs.error, c->ata_error);
		}
		if (c->text)
			assert_non_null(strstr(err, c->text));
	}
}

/* ---- scripted SG_IO ---------------------------------------------------------- */

struct step {
	uint8_t cdb[ATA_CDB_LEN];
	int dir;
	unsigned len;
	uint32_t timeout;            /* 0: not checked */
	uint8_t payload[ATA_SECTOR]; /* expected data to the device */
	uint8_t reply[ATA_SECTOR];   /* data from the device */
	uint8_t sense[ATA_SENSE_LEN];
	unsigned sense_len;
	uint8_t status;
	uint16_t driver;
	int rc; /* what the ioctl returns */
};

static struct step script[8];
static size_t script_len, script_pos;
static int script_fd = 42;

static int fake_sgio(int fd, struct sg_io_hdr *h)
{
	assert_true(script_pos < script_len); /* no command beyond the script */
	const struct step *s = &script[script_pos++];
	assert_int_equal(fd, script_fd);
	assert_int_equal(h->interface_id, 'S');
	assert_int_equal(h->cmd_len, ATA_CDB_LEN);
	assert_true(h->mx_sb_len >= ATA_SENSE_LEN);
	assert_memory_equal(h->cmdp, s->cdb, ATA_CDB_LEN);
	assert_int_equal(h->dxfer_direction, s->dir);
	assert_int_equal(h->dxfer_len, s->len);
	if (s->timeout)
		assert_int_equal(h->timeout, s->timeout);
	if (s->dir == SG_DXFER_TO_DEV)
		assert_memory_equal(h->dxferp, s->payload, ATA_SECTOR);
	if (s->dir == SG_DXFER_FROM_DEV)
		memcpy(h->dxferp, s->reply, ATA_SECTOR);
	memcpy(h->sbp, s->sense, s->sense_len);
	h->sb_len_wr = (unsigned char)s->sense_len;
	h->status = s->status;
	h->driver_status = s->driver;
	return s->rc;
}

static int setup_script(void **state)
{
	memset(script, 0, sizeof(script));
	script_len = script_pos = 0;
	script_fd = 42;
	ata_sgio_fn = fake_sgio;
	return 0;
}

static int teardown_script(void **state)
{
	ata_sgio_fn = ata_sgio_ioctl;
	return 0;
}

static struct step *add_step(void)
{
	assert_true(script_len < N(script));
	return &script[script_len++];
}

static void add_identify(const struct id_spec *s)
{
	struct step *st = add_step();
	ata_cdb_identify(st->cdb);
	st->dir = SG_DXFER_FROM_DEV;
	st->len = ATA_SECTOR;
	build_identify(st->reply, s);
}

static void add_set_password(const char *pw)
{
	struct step *st = add_step();
	ata_cdb_security_set_password(st->cdb);
	st->dir = SG_DXFER_TO_DEV;
	st->len = ATA_SECTOR;
	ata_security_payload(st->payload, pw, 0, 0);
}

static void add_prepare(void)
{
	static const uint8_t good[] = DESC_SENSE(0x01, 0, 0x1D, 0, 0x50);
	struct step *st = add_step();
	ata_cdb_security_erase_prepare(st->cdb);
	st->dir = SG_DXFER_NONE;
	memcpy(st->sense, good, sizeof(good));
	st->sense_len = 22;
	st->status = 0x02;
	st->driver = 0x08;
}

static void add_erase_unit(const char *pw, int enhanced, uint32_t timeout)
{
	struct step *st = add_step();
	ata_cdb_security_erase_unit(st->cdb);
	st->dir = SG_DXFER_TO_DEV;
	st->len = ATA_SECTOR;
	st->timeout = timeout;
	ata_security_payload(st->payload, pw, 0, enhanced);
}

/* Make the last step fail the way libata reports an ABRT. */
static void fail_last(int fixed, uint8_t status, uint8_t error)
{
	struct step *st = &script[script_len - 1];
	static const uint8_t fx[] = { 0x70, 0, 0x0B, 0, 0, 0x40, 0x01, 10, 0, 0, 0, 0, 0, 0 };
	uint8_t ds[] = DESC_SENSE(0x0B, 0, 0, 0, 0);
	memset(st->sense, 0, sizeof(st->sense));
	if (fixed) {
		memcpy(st->sense, fx, sizeof(fx));
		st->sense[3] = error;
		st->sense[4] = status;
		st->sense_len = 18;
	} else {
		ds[11] = error;
		ds[21] = status;
		memcpy(st->sense, ds, sizeof(ds));
		st->sense_len = sizeof(ds);
	}
	st->status = 0x02;
	st->driver = 0x08;
}

#define PW "wearmon-pw"
/* 30 minutes reported, small disk: (60 + 60) min. */
static const struct id_spec erasable = {
	.security = 0x21, .w89 = 30, .w90 = 0x8000 | 45, .lba48 = 61440
};
static const struct id_spec after_erase = { .security = 0x21, .lba48 = 61440 };

static void test_erase_success(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	add_identify(&erasable);
	add_set_password(PW);
	add_prepare();
	add_erase_unit(PW, 0, 7200000u);
	add_identify(&after_erase);
	assert_int_equal(ata_secure_erase(42, PW, 0, &rep, err, sizeof(err)), 0);
	assert_int_equal(script_pos, 5);
	assert_int_equal(rep.password_set, 0);
	assert_int_equal(rep.timeout_ms, 7200000u);
	assert_string_equal(rep.password, PW);
	assert_null(rep.failed_step);
	assert_true(rep.seconds >= 0.0);
}

static void test_erase_enhanced_success(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	add_identify(&erasable);
	add_set_password(PW);
	add_prepare();
	add_erase_unit(PW, 1, (90 + 60) * 60000u); /* word 90: 45 -> 90 min */
	add_identify(&after_erase);
	assert_int_equal(ata_secure_erase(42, PW, 1, &rep, err, sizeof(err)), 0);
	assert_int_equal(script_pos, 5);
	assert_int_equal(script[3].payload[0], 0x02);
	assert_true(rep.enhanced);
}

struct refuse_case {
	const char *name;
	uint16_t security;
	int enhanced, rc;
	const char *text;
};

static const struct refuse_case refuse_cases[] = {
	{ "not supported", 0x0000, 0, -EOPNOTSUPP, "does not support the security" },
	{ "frozen", 0x0009, 0, -EBUSY, "frozen" },
	{ "frozen says what to do", 0x0029, 1, -EBUSY, "suspend and resume" },
	{ "locked", 0x0007, 0, -EBUSY, "locked" },
	{ "password already set", 0x0003, 0, -EBUSY, "enabled" },
	{ "count expired", 0x0011, 0, -EBUSY, "power-cycle" },
	{ "no enhanced erase", 0x0001, 1, -EOPNOTSUPP, "enhanced erase" },
};

static void test_erase_refusals(void **state)
{
	for (size_t i = 0; i < N(refuse_cases); i++) {
		const struct refuse_case *c = &refuse_cases[i];
		struct id_spec s = { .security = c->security };
		struct ata_erase_report rep;
		char err[512] = "";
		setup_script(state);
		add_identify(&s);
		print_message("  %s\n", c->name);
		assert_int_equal(ata_secure_erase(42, PW, c->enhanced, &rep, err, sizeof(err)),
				 c->rc);
		assert_int_equal(script_pos, 1); /* nothing after IDENTIFY */
		assert_int_equal(rep.password_set, 0);
		assert_non_null(strstr(err, c->text));
		assert_null(strstr(err, PW));
	}
}

/* The hint an operator needs when the password stays on the drive. */
static void assert_unlock_hint(const char *err, const char *pw_word)
{
	char want[160];
	snprintf(want, sizeof(want), "hdparm --user-master u --security-disable %s DEVICE'",
		 pw_word);
	assert_non_null(strstr(err, want));
}

static void test_erase_unit_fails_after_password(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	add_identify(&erasable);
	add_set_password(PW);
	add_prepare();
	add_erase_unit(PW, 0, 7200000u);
	fail_last(0, 0x51, 0x04);
	assert_int_equal(ata_secure_erase(42, PW, 0, &rep, err, sizeof(err)), -EIO);
	assert_int_equal(script_pos, 4);
	assert_int_equal(rep.password_set, 1);
	assert_string_equal(rep.password, PW);
	assert_string_equal(rep.failed_step, "SECURITY ERASE UNIT");
	assert_int_equal(rep.regs.status, 0x51);
	assert_non_null(strstr(err, "ERASE UNIT"));
	assert_non_null(strstr(err, "status 0x51 error 0x04"));
	assert_non_null(strstr(err, "password \"" PW "\""));
	assert_unlock_hint(err, PW);
}

static void test_erase_prepare_fails_after_password(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	add_identify(&erasable);
	add_set_password(PW);
	add_prepare();
	fail_last(1, 0x51, 0x04);
	assert_int_equal(ata_secure_erase(42, PW, 0, &rep, err, sizeof(err)), -EIO);
	assert_int_equal(script_pos, 3);
	assert_int_equal(rep.password_set, 1);
	assert_string_equal(rep.failed_step, "SECURITY ERASE PREPARE");
	assert_unlock_hint(err, PW);
}

static void test_erase_unit_ioctl_error(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	add_identify(&erasable);
	add_set_password(PW);
	add_prepare();
	add_erase_unit(PW, 0, 0);
	script[3].rc = -ETIMEDOUT;
	assert_int_equal(ata_secure_erase(42, PW, 0, &rep, err, sizeof(err)), -ETIMEDOUT);
	assert_int_equal(rep.password_set, 1);
	assert_unlock_hint(err, PW);
}

static void test_erase_still_enabled_afterwards(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	struct id_spec still = { .security = 0x23 };
	add_identify(&erasable);
	add_set_password(PW);
	add_prepare();
	add_erase_unit(PW, 0, 0);
	add_identify(&still);
	assert_int_equal(ata_secure_erase(42, PW, 0, &rep, err, sizeof(err)), -EIO);
	assert_int_equal(script_pos, 5);
	assert_int_equal(rep.password_set, 1);
	assert_non_null(strstr(err, "still enabled"));
	assert_unlock_hint(err, PW);
}

/* QEMU's ide-hd aborts security commands: status 41h, error 04h, fixed
 * sense 70h, as QEMU 7.2 answers. A clean "not supported", nothing locked. */
static void test_erase_set_password_aborted_like_qemu(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	struct id_spec s = { .security = 0x01, .lba48 = 61440 };
	add_identify(&s);
	add_set_password(PW);
	fail_last(1, 0x41, 0x04);
	add_identify(&s);
	assert_int_equal(ata_secure_erase(42, PW, 0, &rep, err, sizeof(err)), -EOPNOTSUPP);
	assert_int_equal(script_pos, 3); /* no PREPARE, no ERASE UNIT */
	assert_int_equal(rep.password_set, 0);
	assert_string_equal(rep.failed_step, "SECURITY SET PASSWORD");
	assert_non_null(strstr(err, "aborted SECURITY SET PASSWORD"));
	assert_non_null(strstr(err, "status 0x41 error 0x04"));
	assert_non_null(strstr(err, "security not supported"));
	assert_non_null(strstr(err, "nothing is locked"));
	assert_null(strstr(err, "hdparm"));
}

/* A SET PASSWORD that failed in transport but took effect on the drive. */
static void test_erase_set_password_unclear(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	struct id_spec enabled = { .security = 0x03 };
	add_identify(&erasable);
	add_set_password(PW);
	script[1].rc = -EIO;
	add_identify(&enabled);
	assert_int_equal(ata_secure_erase(42, PW, 0, &rep, err, sizeof(err)), -EIO);
	assert_int_equal(script_pos, 3);
	assert_int_equal(rep.password_set, 1);
	assert_unlock_hint(err, PW);
}

static void test_erase_password_quoted(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	add_identify(&erasable);
	add_set_password("it's me");
	add_prepare();
	add_erase_unit("it's me", 0, 0);
	fail_last(0, 0x51, 0x04);
	assert_int_equal(ata_secure_erase(42, "it's me", 0, &rep, err, sizeof(err)), -EIO);
	assert_unlock_hint(err, "'it'\\''s me'");
}

/* The hint names the device the descriptor is open on. */
static void test_erase_hint_names_device(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	script_fd = open("/dev/null", O_RDONLY);
	assert_true(script_fd >= 0);
	add_identify(&erasable);
	add_set_password(PW);
	add_prepare();
	fail_last(1, 0x51, 0x04);
	assert_int_equal(ata_secure_erase(script_fd, PW, 0, &rep, err, sizeof(err)), -EIO);
	close(script_fd);
	assert_non_null(strstr(err, "--security-disable " PW " /dev/null'"));
	assert_non_null(strstr(err, "--security-unlock " PW " /dev/null'"));
}

static void test_erase_bad_password(void **state)
{
	struct ata_erase_report rep;
	char err[512] = "";
	assert_int_equal(ata_secure_erase(42, "0123456789abcdef0123456789ABCDEF!", 0, &rep, err,
					  sizeof(err)),
			 -EINVAL);
	assert_int_equal(ata_secure_erase(42, NULL, 0, &rep, err, sizeof(err)), -EINVAL);
	assert_int_equal(script_pos, 0);
	assert_int_equal(rep.password_set, 0);
}

/* ---- issuers --------------------------------------------------------------------- */

static void test_identify_issuer(void **state)
{
	struct ata_identity id;
	char err[256] = "";
	struct id_spec s = {
		.serial = "QM00001", .model = "QEMU HARDDISK", .firmware = "2.5+", .lba48 = 2097152
	};
	add_identify(&s);
	assert_int_equal(ata_identify(42, &id, err, sizeof(err)), 0);
	assert_string_equal(id.serial, "QM00001");
	assert_string_equal(id.model, "QEMU HARDDISK");
	assert_string_equal(id.firmware, "2.5+");
	assert_int_equal(id.sectors, 2097152);
}

static void test_identify_issuer_errors(void **state)
{
	struct ata_identity id;
	char err[256] = "";
	struct id_spec s = { 0 };
	add_identify(&s);
	fail_last(1, 0x51, 0x04);
	add_identify(&s);
	script[1].rc = -EPERM;
	add_identify(&s);
	seal_identify(script[2].reply);
	script[2].reply[0] ^= 1;
	assert_int_equal(ata_identify(42, &id, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "IDENTIFY DEVICE: ATA command aborted"));
	assert_int_equal(ata_identify(42, &id, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, strerror(EPERM)));
	assert_int_equal(ata_identify(42, &id, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "checksum"));
}

static void test_smart_issuer(void **state)
{
	struct ata_smart sm;
	char err[256] = "";
	struct step *st = add_step();
	ata_cdb_smart_read_data(st->cdb);
	st->dir = SG_DXFER_FROM_DEV;
	st->len = ATA_SECTOR;
	build_smart(st->reply);
	assert_int_equal(ata_smart_read(42, &sm, err, sizeof(err)), 0);
	assert_int_equal(sm.count, 4);
	assert_int_equal(sm.attr[1].raw, 0x010203040506ull);
	st = add_step();
	ata_cdb_smart_read_data(st->cdb);
	st->dir = SG_DXFER_FROM_DEV;
	st->len = ATA_SECTOR;
	fail_last(1, 0x51, 0x04);
	assert_int_equal(ata_smart_read(42, &sm, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "SMART READ DATA"));
}

#define SCRIPTED(f) cmocka_unit_test_setup_teardown(f, setup_script, teardown_script)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdbs),
		cmocka_unit_test(test_payloads),
		cmocka_unit_test(test_payload_rejects),
		cmocka_unit_test(test_identify_strings),
		cmocka_unit_test(test_identify_full_width_strings),
		cmocka_unit_test(test_identify_capacity),
		cmocka_unit_test(test_identify_security),
		cmocka_unit_test(test_identify_erase_times),
		cmocka_unit_test(test_identify_checksum),
		cmocka_unit_test(test_erase_timeout),
		cmocka_unit_test(test_smart_parse),
		cmocka_unit_test(test_smart_full_table_and_bad_checksum),
		cmocka_unit_test(test_sense),
		SCRIPTED(test_erase_success),
		SCRIPTED(test_erase_enhanced_success),
		SCRIPTED(test_erase_refusals),
		SCRIPTED(test_erase_unit_fails_after_password),
		SCRIPTED(test_erase_prepare_fails_after_password),
		SCRIPTED(test_erase_unit_ioctl_error),
		SCRIPTED(test_erase_still_enabled_afterwards),
		SCRIPTED(test_erase_set_password_aborted_like_qemu),
		SCRIPTED(test_erase_set_password_unclear),
		SCRIPTED(test_erase_password_quoted),
		SCRIPTED(test_erase_hint_names_device),
		SCRIPTED(test_erase_bad_password),
		SCRIPTED(test_identify_issuer),
		SCRIPTED(test_identify_issuer_errors),
		SCRIPTED(test_smart_issuer),
	};
	return cmocka_run_group_tests_name("ata", tests, NULL, NULL);
}
