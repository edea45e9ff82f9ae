/* Unit tests of devstat (common/device/devstat.h) on crafted bytes: the OCP
 * C0h log (its GUID checked), the ATA Device Statistics pages (flags of
 * every qword honoured), the vendors' SMART write attributes, the NVMe
 * thermal counters and the counters file, merged into readings, and the
 * deltas between two readings. Unknown is never 0. */
#include "unit.h"

#include <errno.h>
#include <string.h>

#include "device/devstat.h"

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- OCP C0h ------------------------------------------------------------- */

static const uint8_t ocp_guid_bytes[16] = { 0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4,
					    0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5, 0xAF };

static void build_ocp(uint8_t *buf)
{
	memset(buf, 0, DEVSTAT_PAGE_LEN);
	put_le(buf, 0x00000123456789abull, 8); /* physical media units written */
	put_le(buf + 16, 4096, 8);             /* read */
	buf[96] = 7;                           /* throttling events */
	buf[97] = 1;                           /* throttled, first level */
	put_le(buf + 494, 3, 2);               /* log page version */
	memcpy(buf + 496, ocp_guid_bytes, 16);
}

static void test_ocp_parsed(void **state)
{
	uint8_t buf[DEVSTAT_PAGE_LEN];
	struct devstat_ocp o;
	struct devstat d = { 0 };
	(void)state;
	build_ocp(buf);
	assert_int_equal(devstat_parse_ocp(buf, &o), 0);
	assert_true(o.media_bytes_written == (double)0x00000123456789abull);
	assert_true(o.media_bytes_read == 4096.0);
	assert_int_equal(o.throttle_count, 7);
	assert_int_equal(o.throttle_status, 1);
	assert_int_equal(o.version, 3);
	devstat_from_ocp(&o, &d);
	assert_true(d.f[DEVSTAT_MEDIA_BYTES].has);
	assert_int_equal(d.f[DEVSTAT_MEDIA_BYTES].v, 0x00000123456789abll);
	assert_false(d.f[DEVSTAT_HOST_BYTES].has);
}

/* The upper 8 bytes of the 16-byte counter count too. */
static void test_ocp_high_bytes(void **state)
{
	uint8_t buf[DEVSTAT_PAGE_LEN];
	struct devstat_ocp o;
	(void)state;
	build_ocp(buf);
	put_le(buf, 5, 8);
	put_le(buf + 8, 2, 8);
	assert_int_equal(devstat_parse_ocp(buf, &o), 0);
	assert_true(o.media_bytes_written == 2.0 * 18446744073709551616.0 + 5.0);
}

/* Another vendor's C0h page (any byte of the GUID differs, or none) is
 * ignored: nothing parsed. */
static void test_ocp_wrong_guid_ignored(void **state)
{
	uint8_t buf[DEVSTAT_PAGE_LEN];
	struct devstat_ocp o;
	(void)state;
	for (unsigned i = 0; i < 16; i++) {
		build_ocp(buf);
		buf[496 + i] ^= 0x01;
		assert_int_equal(devstat_parse_ocp(buf, &o), -EBADMSG);
		assert_true(o.media_bytes_written == 0.0);
	}
	build_ocp(buf);
	memset(buf + 496, 0, 16);
	assert_int_equal(devstat_parse_ocp(buf, &o), -EBADMSG);
	/* the GUID byte-reversed (big-endian) is not the one stored */
	build_ocp(buf);
	for (unsigned i = 0; i < 16; i++)
		buf[496 + i] = ocp_guid_bytes[15 - i];
	assert_int_equal(devstat_parse_ocp(buf, &o), -EBADMSG);
}

/* ---- ATA Device Statistics ------------------------------------------------- */

#define SUPPORTED (1ull << 63)
#define VALID (1ull << 62)

static void page_header(uint8_t *buf, uint8_t page)
{
	memset(buf, 0, DEVSTAT_PAGE_LEN);
	put_le(buf, 1, 2); /* revision */
	buf[2] = page;
	buf[7] = 0x80; /* the header's own flags, as drives set them */
}

static void test_ata_general(void **state)
{
	uint8_t buf[DEVSTAT_PAGE_LEN];
	struct devstat_ata a = { 0 };
	(void)state;
	page_header(buf, 0x01);
	put_le(buf + 0x18, SUPPORTED | VALID | 0x0000123456789abcull, 8);
	put_le(buf + 0x28, SUPPORTED | 777, 8); /* supported, value not valid */
	assert_int_equal(devstat_parse_ata_page(buf, 0x01, &a), 0);
	assert_true(a.sectors_written.has);
	assert_int_equal(a.sectors_written.v, 0x0000123456789abcll);
	assert_false(a.sectors_read.has);
	/* bits 61..48 (normalized, DSN, reserved) are not part of the value */
	put_le(buf + 0x18, SUPPORTED | VALID | (1ull << 61) | (0xffull << 48) | 42, 8);
	assert_int_equal(devstat_parse_ata_page(buf, 0x01, &a), 0);
	assert_int_equal(a.sectors_written.v, 42);
	/* valid without supported: unknown */
	put_le(buf + 0x18, VALID | 42, 8);
	assert_int_equal(devstat_parse_ata_page(buf, 0x01, &a), 0);
	assert_false(a.sectors_written.has);
}

static void test_ata_temperature(void **state)
{
	uint8_t buf[DEVSTAT_PAGE_LEN];
	struct devstat_ata a = { 0 };
	(void)state;
	page_header(buf, 0x05);
	put_le(buf + 0x08, SUPPORTED | VALID | 0xFB, 8); /* -5 C */
	put_le(buf + 0x20, SUPPORTED | VALID | 71, 8);
	put_le(buf + 0x50, SUPPORTED | VALID | 17, 8);
	assert_int_equal(devstat_parse_ata_page(buf, 0x05, &a), 0);
	assert_true(a.temp_c.has && a.temp_max_c.has && a.over_temp_minutes.has);
	assert_int_equal(a.temp_c.v, -5);
	assert_int_equal(a.temp_max_c.v, 71);
	assert_int_equal(a.over_temp_minutes.v, 17);
	/* 80h: not measured; flags clear: unknown */
	put_le(buf + 0x08, SUPPORTED | VALID | 0x80, 8);
	put_le(buf + 0x50, 17, 8);
	assert_int_equal(devstat_parse_ata_page(buf, 0x05, &a), 0);
	assert_false(a.temp_c.has);
	assert_false(a.over_temp_minutes.has);
	assert_true(a.temp_max_c.has);
}

static void test_ata_wrong_page(void **state)
{
	uint8_t buf[DEVSTAT_PAGE_LEN];
	struct devstat_ata a = { 0 };
	(void)state;
	page_header(buf, 0x05);
	put_le(buf + 0x18, SUPPORTED | VALID | 99, 8);
	assert_int_equal(devstat_parse_ata_page(buf, 0x01, &a), -EBADMSG);
	assert_false(a.sectors_written.has);
	page_header(buf, 0x06);
	assert_int_equal(devstat_parse_ata_page(buf, 0x06, &a), -ENOTSUP);
}

/* Page 07h: the Percentage Used Endurance Indicator, bits 7:0 (it may
 * pass 100); without its flags, unknown. */
static void test_ata_percentage_used(void **state)
{
	uint8_t buf[DEVSTAT_PAGE_LEN];
	struct devstat_ata a = { 0 };
	(void)state;
	page_header(buf, 0x07);
	put_le(buf + 0x08, SUPPORTED | VALID | (0x5aull << 8) | 104, 8);
	assert_int_equal(devstat_parse_ata_page(buf, DEVSTAT_ATA_SSD, &a), 0);
	assert_true(a.pct_used.has);
	assert_int_equal(a.pct_used.v, 104);
	put_le(buf + 0x08, SUPPORTED | 12, 8);
	assert_int_equal(devstat_parse_ata_page(buf, DEVSTAT_ATA_SSD, &a), 0);
	assert_false(a.pct_used.has);
}

/* ---- SMART write attributes ------------------------------------------------- */

static void add_attr(struct ata_smart *sm, uint8_t id, uint64_t raw)
{
	sm->attr[sm->count].id = id;
	sm->attr[sm->count].raw = raw;
	sm->count++;
}

struct table_case {
	const char *model;
	const char *table;
	uint8_t host_id, media_id;
	double host_unit, media_unit; /* media_unit 0: the table has none */
};

static const struct table_case table_cases[] = {
	{ "INTEL SSDSC2CT240A4", "intel", 241, 249, 32.0 * 1048576, 1073741824.0 },
	{ "KINGSTON SV300S37A120G", "sandforce", 241, 233, 1073741824.0, 1073741824.0 },
	{ "WDC  WDS500G2B0A-00SM50", "wdc-sandisk", 241, 233, 1073741824.0, 1073741824.0 },
	{ "CT500MX500SSD1", "micron-crucial", 246, 0, 512, 0 },
	{ "Samsung SSD 860 EVO 500GB", "generic", 241, 0, 512, 0 },
	{ "", "generic", 241, 0, 512, 0 },
};

static void test_smart_tables(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(table_cases) / sizeof(table_cases[0]); i++) {
		const struct table_case *c = &table_cases[i];
		const struct devstat_attr_table *t = devstat_attr_table_for(c->model);
		struct ata_smart sm = { 0 };
		struct devstat_opt host, media;
		print_message("  %s\n", c->model);
		assert_string_equal(t->name, c->table);
		add_attr(&sm, 9, 1000); /* power-on hours: not a write counter */
		add_attr(&sm, c->host_id, 300);
		if (c->media_id)
			add_attr(&sm, c->media_id, 11);
		devstat_smart_writes(&sm, t, &host, &media);
		assert_true(host.has);
		assert_int_equal(host.v, (int64_t)(300 * c->host_unit));
		assert_int_equal(media.has, c->media_id != 0);
		if (c->media_id)
			assert_int_equal(media.v, (int64_t)(11 * c->media_unit));
	}
}

/* A drive whose page lacks the table's attributes: unknown, not 0. */
static void test_smart_attribute_missing(void **state)
{
	struct ata_smart sm = { 0 };
	struct devstat_opt host = { 1, 5 }, media = { 1, 5 };
	(void)state;
	add_attr(&sm, 194, 40);
	devstat_smart_writes(&sm, devstat_attr_table_for("INTEL SSDSC2BB480G4"), &host, &media);
	assert_false(host.has);
	assert_false(media.has);
}

/* Device statistics win over SMART for host writes; SMART gives media. */
static void test_from_ata(void **state)
{
	struct devstat_ata a = { 0 };
	struct devstat_opt sh = { 1, 1000 }, sm = { 1, 3000 }, none = { 0, 0 };
	struct devstat d = { 0 };
	(void)state;
	a.sectors_written = (struct devstat_opt){ 1, 8 };
	a.temp_c = (struct devstat_opt){ 1, 44 };
	a.over_temp_minutes = (struct devstat_opt){ 1, 2 };
	devstat_from_ata(&a, 4096, &sh, &sm, &d);
	assert_string_equal(d.source, "ata");
	assert_int_equal(d.f[DEVSTAT_HOST_BYTES].v, 8 * 4096);
	assert_int_equal(d.f[DEVSTAT_MEDIA_BYTES].v, 3000);
	assert_int_equal(d.f[DEVSTAT_TEMP_C].v, 44);
	assert_int_equal(d.f[DEVSTAT_THROTTLE_MS].v, 120000); /* 2 minutes */
	assert_int_equal(d.throttle_res_ms, 60000);
	assert_false(d.f[DEVSTAT_MEDIA_ERRORS].has);
	assert_false(d.f[DEVSTAT_SPARE_PCT].has);
	memset(&d, 0, sizeof(d));
	memset(&a, 0, sizeof(a));
	devstat_from_ata(&a, 512, &sh, &none, &d);
	assert_int_equal(d.f[DEVSTAT_HOST_BYTES].v, 1000);
	assert_false(d.f[DEVSTAT_MEDIA_BYTES].has);
	assert_false(d.f[DEVSTAT_TEMP_C].has);
	assert_false(d.f[DEVSTAT_THROTTLE_MS].has);
}

/* ---- NVMe 02h into a reading ------------------------------------------------ */

static void test_from_nvme(void **state)
{
	uint8_t buf[NVME_LOG_LEN] = { 0 };
	struct nvme_health h;
	struct devstat d = { 0 };
	(void)state;
	put_le(buf + 1, 350, 2); /* 77 C */
	buf[3] = 88;
	put_le(buf + 48, 1000, 8); /* data units written */
	put_le(buf + 160, 6, 8);
	put_le(buf + 224, 100, 4);
	put_le(buf + 228, 20, 4);
	assert_int_equal(nvme_parse_health(buf, &h), 0);
	devstat_from_nvme(&h, &d);
	assert_string_equal(d.source, "nvme");
	assert_int_equal(d.f[DEVSTAT_HOST_BYTES].v, 1000LL * 512000);
	assert_int_equal(d.f[DEVSTAT_TEMP_C].v, 77);
	assert_int_equal(d.f[DEVSTAT_THROTTLE_MS].v, 120000); /* whole seconds, in ms */
	assert_int_equal(d.throttle_res_ms, 1000);
	assert_int_equal(d.f[DEVSTAT_MEDIA_ERRORS].v, 6);
	assert_int_equal(d.f[DEVSTAT_SPARE_PCT].v, 88);
	assert_false(d.f[DEVSTAT_MEDIA_BYTES].has); /* only the OCP log has it */
	/* a controller reporting 0 K has no temperature sensor reading */
	put_le(buf + 1, 0, 2);
	memset(&d, 0, sizeof(d));
	assert_int_equal(nvme_parse_health(buf, &h), 0);
	devstat_from_nvme(&h, &d);
	assert_false(d.f[DEVSTAT_TEMP_C].has);
}

/* ---- counters file ---------------------------------------------------------- */

static void test_counters(void **state)
{
	struct devstat d = { 0 };
	(void)state;
	assert_int_equal(devstat_parse_counters("capacity 33554432\n"
						"host_bytes_written 4096\n"
						"flash_bytes_written 12288\n"
						"temperature_c 61\n"
						"throttle_seconds 12.75\n"
						"host_bytes_writtenx 5\n"
						"media_errors oops\n",
						&d),
			 4);
	assert_string_equal(d.source, "simssd");
	assert_int_equal(d.f[DEVSTAT_HOST_BYTES].v, 4096);
	assert_int_equal(d.f[DEVSTAT_MEDIA_BYTES].v, 12288);
	assert_int_equal(d.f[DEVSTAT_TEMP_C].v, 61);
	assert_int_equal(d.f[DEVSTAT_THROTTLE_MS].v, 12750);
	assert_int_equal(d.throttle_res_ms, 1000);
	assert_false(d.f[DEVSTAT_MEDIA_ERRORS].has);
	assert_false(d.f[DEVSTAT_SPARE_PCT].has);
	/* throttle_ms is the finer count, whichever line comes first */
	memset(&d, 0, sizeof(d));
	assert_int_equal(devstat_parse_counters("throttle_ms 12751\nthrottle_seconds 12.751\n"
						"flash_bytes_written 1\n",
						&d),
			 3);
	assert_int_equal(d.f[DEVSTAT_THROTTLE_MS].v, 12751);
	assert_int_equal(d.throttle_res_ms, 1);
	memset(&d, 0, sizeof(d));
	devstat_parse_counters("throttle_seconds 0.007\nthrottle_ms 7\n", &d);
	assert_int_equal(d.f[DEVSTAT_THROTTLE_MS].v, 7);
	assert_int_equal(d.throttle_res_ms, 1);
	memset(&d, 0, sizeof(d));
	assert_int_equal(devstat_parse_counters("host_bytes_written 1", &d), 1);
	assert_null(d.source); /* no flash counter: not the simulator's file */
}

/* ---- deltas ------------------------------------------------------------------- */

static void test_delta(void **state)
{
	struct devstat a = { 0 }, b = { 0 };
	struct devstat_delta x;
	struct devstat_opt peak = { 1, 70 };
	(void)state;
	devstat_set(&a, DEVSTAT_HOST_BYTES, 1000);
	devstat_set(&a, DEVSTAT_MEDIA_BYTES, 2000);
	devstat_set(&a, DEVSTAT_TEMP_C, 40);
	devstat_set(&a, DEVSTAT_THROTTLE_MS, 5000);
	a.throttle_res_ms = 1000;
	devstat_set(&a, DEVSTAT_MEDIA_ERRORS, 3);
	devstat_set(&b, DEVSTAT_HOST_BYTES, 5000);
	devstat_set(&b, DEVSTAT_MEDIA_BYTES, 12000);
	devstat_set(&b, DEVSTAT_TEMP_C, 50);
	devstat_set(&b, DEVSTAT_THROTTLE_MS, 35000);
	b.throttle_res_ms = 1000;
	devstat_set(&b, DEVSTAT_MEDIA_ERRORS, 2); /* went back: reset, unknown */
	devstat_set(&b, DEVSTAT_SPARE_PCT, 91);
	devstat_delta(&a, &b, peak, &x);
	assert_int_equal(x.host_bytes.v, 4000);
	assert_int_equal(x.media_bytes.v, 10000);
	assert_true(x.wa == 2.5);
	assert_int_equal(x.peak_temp_c.v, 70);
	assert_int_equal(x.throttle_ms.v, 30000);
	assert_int_equal(x.throttle_res_ms, 1000);
	assert_false(x.media_errors.has);
	assert_int_equal(x.spare_pct.v, 91);
	/* no poll in between: the end is the peak; no media counter: no WA */
	b.f[DEVSTAT_MEDIA_BYTES].has = 0;
	devstat_delta(&a, &b, (struct devstat_opt){ 0, 0 }, &x);
	assert_int_equal(x.peak_temp_c.v, 50);
	assert_false(x.media_bytes.has);
	assert_true(x.wa < 0);
	/* nothing written: no WA either */
	devstat_set(&b, DEVSTAT_MEDIA_BYTES, 2000);
	devstat_set(&b, DEVSTAT_HOST_BYTES, 1000);
	devstat_delta(&a, &b, (struct devstat_opt){ 0, 0 }, &x);
	assert_true(x.host_bytes.has && x.host_bytes.v == 0);
	assert_true(x.wa < 0);
}

/* Readings without a source: every field unknown. */
static void test_delta_of_nothing(void **state)
{
	struct devstat a = { 0 }, b = { 0 };
	struct devstat_delta x;
	(void)state;
	devstat_delta(&a, &b, (struct devstat_opt){ 0, 0 }, &x);
	assert_false(x.host_bytes.has || x.media_bytes.has || x.peak_temp_c.has ||
		     x.throttle_ms.has || x.media_errors.has || x.spare_pct.has);
	assert_true(x.wa < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ocp_parsed),
		cmocka_unit_test(test_ocp_high_bytes),
		cmocka_unit_test(test_ocp_wrong_guid_ignored),
		cmocka_unit_test(test_ata_general),
		cmocka_unit_test(test_ata_temperature),
		cmocka_unit_test(test_ata_wrong_page),
		cmocka_unit_test(test_ata_percentage_used),
		cmocka_unit_test(test_smart_tables),
		cmocka_unit_test(test_smart_attribute_missing),
		cmocka_unit_test(test_from_ata),
		cmocka_unit_test(test_from_nvme),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_delta_of_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
