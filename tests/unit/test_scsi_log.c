/* Unit tests of scsi_log and devnote: SCSI log pages parsed from built
 * bytes, the evidence and the words for what is missing, the snapshot's
 * JSON, the log line; the ATA reasons and logging each set once
 * (common/device/scsi_log.h, devnote.h). */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "device/devnote.h"
#include "device/scsi_log.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const uint8_t supported[] = { 0x00, 0x00, 0x00, 0x07, 0x00, 0x02,
				     0x03, 0x0D, 0x11, 0x15, 0x2F };
/* Write Error Counter: 0000h (corrected), 0005h bytes processed (5 bytes,
 * 0x0123456789), 0006h uncorrected (2 bytes, 3) */
static const uint8_t write_errors[] = { 0x02, 0x00, 0x00, 0x19, 0x00, 0x00, 0x03, 0x04, 0x00,
					0x00, 0x00, 0x09, 0x00, 0x05, 0x03, 0x05, 0x01, 0x23,
					0x45, 0x67, 0x89, 0x00, 0x06, 0x03, 0x02, 0x00, 0x03 };
static const uint8_t read_errors[] = { 0x03, 0x00, 0x00, 0x05, 0x00, 0x06, 0x03, 0x01, 0x02 };
/* temperature 38 °C, reference 70 °C */
static const uint8_t temperature[] = { 0x0D, 0x00, 0x00, 0x0C, 0x00, 0x00, 0x03, 0x02,
				       0x00, 0x26, 0x00, 0x01, 0x03, 0x02, 0x00, 0x46 };
static const uint8_t ssm[] = { 0x11, 0x00, 0x00, 0x08, 0x00, 0x01,
			       0x03, 0x04, 0x00, 0x00, 0x00, 0x07 };
/* Background Scan Results status: 123456 minutes powered on */
static const uint8_t background[] = { 0x15, 0x00, 0x00, 0x10, 0x00, 0x00, 0x03, 0x0C, 0x00, 0x01,
				      0xE2, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };
/* failure prediction 5Dh/10h, most recent temperature 42 °C */
static const uint8_t ie[] = {
	0x2F, 0x00, 0x00, 0x08, 0x00, 0x00, 0x03, 0x04, 0x5D, 0x10, 0x2A, 0x00
};

static void parse_all(struct scsi_logs *l)
{
	memset(l, 0, sizeof(*l));
	l->answered = 1;
	assert_int_equal(scsi_log_parse_supported(supported, sizeof(supported), l->pages,
						  SCSI_LOG_PAGES_MAX, &l->npages),
			 0);
	assert_int_equal(scsi_log_parse(write_errors, sizeof(write_errors), l), 0);
	assert_int_equal(scsi_log_parse(read_errors, sizeof(read_errors), l), 0);
	assert_int_equal(scsi_log_parse(temperature, sizeof(temperature), l), 0);
	assert_int_equal(scsi_log_parse(ssm, sizeof(ssm), l), 0);
	assert_int_equal(scsi_log_parse(background, sizeof(background), l), 0);
	assert_int_equal(scsi_log_parse(ie, sizeof(ie), l), 0);
}

static void test_pages(void **state)
{
	struct scsi_logs l;
	parse_all(&l);
	assert_int_equal(l.npages, 7);
	assert_true(scsi_logs_has(&l, 0x2F));
	assert_false(scsi_logs_has(&l, 0x0E));
	assert_true(l.write_bytes.has);
	assert_int_equal(l.write_bytes.v, 0x0123456789);
	assert_int_equal(l.write_uncorrected.v, 3);
	assert_int_equal(l.read_uncorrected.v, 2);
	assert_false(l.read_bytes.has);
	assert_int_equal(l.temp_c.v, 38);
	assert_int_equal(l.ref_temp_c.v, 70);
	assert_int_equal(l.pct_used.v, 7);
	assert_int_equal(l.power_on_minutes.v, 123456);
	assert_int_equal(l.ie_asc.v, 0x5D);
	assert_int_equal(l.ie_ascq.v, 0x10);
	assert_int_equal(l.ie_temp_c.v, 42);
}

static void test_page_edges(void **state)
{
	struct scsi_logs l;
	const uint8_t *v;
	unsigned n;
	uint8_t t[sizeof(temperature)];
	/* FFh: the disk could not read its temperature */
	memcpy(t, temperature, sizeof(t));
	t[9] = 0xFF;
	memset(&l, 0, sizeof(l));
	assert_int_equal(scsi_log_parse(t, sizeof(t), &l), 0);
	assert_false(l.temp_c.has);
	assert_true(l.ref_temp_c.has);
	/* a parameter cut short by the transfer is not read */
	assert_int_equal(scsi_log_param(temperature, 14, 0x0001, &v, &n), -ENOENT);
	assert_int_equal(scsi_log_param(temperature, 16, 0x0001, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(scsi_log_param(temperature, 3, 0x0000, &v, &n), -EBADMSG);
	/* a counter wider than 63 bits is unknown, not wrapped */
	static const uint8_t wide[] = { 0x02, 0x00, 0x00, 0x0D, 0x00, 0x05, 0x03, 0x09, 0xFF,
					0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
	assert_int_equal(scsi_log_parse(wide, sizeof(wide), &l), 0);
	assert_false(l.write_bytes.has);
	static const uint8_t other[] = { 0x0E, 0x00, 0x00, 0x00 };
	assert_int_equal(scsi_log_parse(other, sizeof(other), &l), -ENOTSUP);
	assert_int_equal(scsi_log_parse(other, 3, &l), -EBADMSG);
	assert_int_equal(scsi_log_parse_supported(temperature, sizeof(temperature), l.pages,
						  SCSI_LOG_PAGES_MAX, &l.npages),
			 -EBADMSG);
}

static void test_evidence(void **state)
{
	struct scsi_logs l;
	struct devstat d;
	parse_all(&l);
	memset(&d, 0, sizeof(d));
	scsi_logs_devstat(&l, &d);
	assert_string_equal(d.source, "scsi");
	assert_int_equal(d.f[DEVSTAT_HOST_BYTES].v, 0x0123456789);
	assert_int_equal(d.f[DEVSTAT_TEMP_C].v, 38);
	assert_int_equal(d.f[DEVSTAT_MEDIA_ERRORS].v, 5);
	assert_false(d.f[DEVSTAT_MEDIA_BYTES].has);
	assert_false(d.f[DEVSTAT_THROTTLE_MS].has);
	assert_false(d.f[DEVSTAT_SPARE_PCT].has);
	/* no Temperature page: the Informational Exceptions reading */
	l.temp_c.has = 0;
	memset(&d, 0, sizeof(d));
	scsi_logs_devstat(&l, &d);
	assert_int_equal(d.f[DEVSTAT_TEMP_C].v, 42);
}

static void test_absent(void **state)
{
	struct scsi_logs l;
	char note[512];
	/* QEMU: no LOG SENSE at all */
	memset(&l, 0, sizeof(l));
	snprintf(l.error, sizeof(l.error),
		 "LOG SENSE page 00h: ILLEGAL REQUEST, ASC/ASCQ 20h/00h "
		 "(invalid command operation code)");
	assert_string_equal(scsi_logs_absent(&l, note, sizeof(note)),
			    "host bytes, temperature, media errors: LOG SENSE page 00h: ILLEGAL "
			    "REQUEST, ASC/ASCQ 20h/00h (invalid command operation code); media "
			    "bytes, throttle time, spare: no standard SCSI log page has them");
	/* a disk with every page this reads */
	parse_all(&l);
	assert_string_equal(
		scsi_logs_absent(&l, note, sizeof(note)),
		"media bytes, throttle time, spare: no standard SCSI log page has them");
	/* pages listed but lacking parameters, and a page not listed */
	memset(&l, 0, sizeof(l));
	l.answered = 1;
	l.pages[l.npages++] = 0x02;
	assert_string_equal(scsi_logs_absent(&l, note, sizeof(note)),
			    "host bytes: no parameter in the Write Error Counter page (02h) bytes "
			    "processed (0005h); temperature: neither the Temperature page (0Dh) "
			    "nor Informational Exceptions (2Fh) gives one; media errors: no total "
			    "uncorrected errors (0006h) in the Write or Read Error Counter page "
			    "(02h, 03h); media bytes, throttle time, spare: no standard SCSI log "
			    "page has them");
	l.npages = 0;
	l.temp_c = (struct devstat_opt){ 1, 30 };
	l.read_uncorrected = (struct devstat_opt){ 1, 0 };
	assert_string_equal(scsi_logs_absent(&l, note, sizeof(note)),
			    "host bytes: no page: the Write Error Counter page (02h) bytes "
			    "processed (0005h); media bytes, throttle time, spare: no standard "
			    "SCSI log page has them");
	/* a short buffer ends the text, never overruns it */
	assert_int_equal(strlen(scsi_logs_absent(&l, note, 20)), 19);
}

static struct scsi_info emulated(void)
{
	struct scsi_info id = {
		.inq = { .vendor = "WEARMONV", .product = "EMULATED \"SAS\"", .revision = "R123" },
		.serial = "WMVS0001",
		.has_bl = 1,
		.bl = { .max_unmap_lba = 2097152,
			.max_unmap_desc = 255,
			.unmap_granularity = 8,
			.max_write_same = 0x3fffff },
		.has_lbp = 1,
		.lbp = { .lbpu = 1, .lbpws = 1, .lbpws10 = 1, .provisioning_type = 2 }
	};
	return id;
}

static void test_json(void **state)
{
	struct scsi_info id = emulated();
	struct scsi_logs l;
	char buf[2048];
	memset(&l, 0, sizeof(l));
	snprintf(l.error, sizeof(l.error), "LOG SENSE page 00h: refused");
	size_t n = scsi_health_json(&id, &l, "unmap", buf, sizeof(buf));
	assert_int_equal(n, strlen(buf));
	assert_string_equal(buf,
			    "{\"vendor\":\"WEARMONV\",\"product\":\"EMULATED \\\"SAS\\\"\","
			    "\"revision\":\"R123\",\"serial\":\"WMVS0001\",\"wwn\":null,"
			    "\"rotation_rate\":null,\"lbp\":{\"lbpu\":1,\"lbpws\":1,\"lbpws10\":1,"
			    "\"lbprz\":0,\"provisioning_type\":2},\"block_limits\":{"
			    "\"max_unmap_lba_count\":2097152,\"max_unmap_descriptors\":255,"
			    "\"unmap_granularity\":8,\"max_write_same\":4194303},"
			    "\"provisioning_mode\":\"unmap\",\"log_sense\":false,"
			    "\"log_sense_error\":\"LOG SENSE page 00h: refused\",\"log_pages\":[],"
			    "\"write_bytes_processed\":null,\"write_uncorrected_errors\":null,"
			    "\"read_bytes_processed\":null,\"read_uncorrected_errors\":null,"
			    "\"temperature_c\":null,\"reference_temperature_c\":null,"
			    "\"percentage_used\":null,\"power_on_minutes\":null,\"ie_asc\":null,"
			    "\"ie_ascq\":null,\"ie_temperature_c\":null}");
	parse_all(&l);
	id.has_bl = id.has_lbp = 0;
	id.rotation = 1;
	scsi_health_json(&id, &l, "", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"rotation_rate\":1,\"lbp\":null,\"block_limits\":null,"
				    "\"provisioning_mode\":null,\"log_sense\":true,"
				    "\"log_sense_error\":null,\"log_pages\":[0,2,3,13,17,21,47],"
				    "\"write_bytes_processed\":4886718345,"));
	assert_non_null(strstr(buf, "\"percentage_used\":7,\"power_on_minutes\":123456,"
				    "\"ie_asc\":93,\"ie_ascq\":16,\"ie_temperature_c\":42}"));
	/* cut short, it is still a string */
	assert_int_equal(scsi_health_json(&id, &l, "", buf, 40), 39);
}

static void test_describe(void **state)
{
	struct scsi_info id = emulated();
	char buf[512];
	snprintf(id.wwn, sizeof(id.wwn), "naa.5000c500a1b2c3d4");
	assert_string_equal(
		scsi_describe(&id, "unmap", buf, sizeof(buf)),
		"SCSI disk: vendor \"WEARMONV\", product \"EMULATED \"SAS\"\", revision "
		"\"R123\", serial \"WMVS0001\", WWN naa.5000c500a1b2c3d4, rotation rate "
		"not reported; discard advertised: UNMAP (at most 2097152 blocks a "
		"command, granularity 8), WRITE SAME with UNMAP (10 and 16); the kernel "
		"discards with unmap");
	id.has_bl = id.has_lbp = 0;
	id.rotation = 1;
	id.wwn[0] = '\0';
	assert_non_null(strstr(scsi_describe(&id, NULL, buf, sizeof(buf)),
			       "solid state; discard advertised: not said (no VPD B0h/B2h)"));
	id.has_lbp = 1;
	id.lbp = (struct scsi_lbp){ .lbpws = 1 };
	assert_non_null(strstr(scsi_describe(&id, "writesame_16", buf, sizeof(buf)),
			       "discard advertised: WRITE SAME with UNMAP (16); the kernel "
			       "discards with writesame_16"));
	id.lbp = (struct scsi_lbp){ 0 };
	assert_non_null(strstr(scsi_describe(&id, "full", buf, sizeof(buf)),
			       "discard advertised: none; the kernel discards with full"));
}

/* ---- devnote ------------------------------------------------------------------ */

static void test_ata_note_qemu(void **state)
{
	/* QEMU's AHCI disk: SMART answers (no attribute 241), the Device
	 * Statistics log is aborted */
	struct devstat d = { .source = "ata" };
	const struct devnote_ata_reads r = {
		"",
		"ATA READ LOG EXT log 0x04 page 0x01: ATA command aborted (status 0x51 error 0x04)",
		"ATA READ LOG EXT log 0x04 page 0x05: ATA command aborted (status 0x51 error 0x04)",
		devstat_attr_table_for("QEMU HARDDISK")
	};
	char note[1024] = "";
	devnote_ata(&d, &r, note, sizeof(note));
	assert_string_equal(
		note, "host bytes: ATA READ LOG EXT log 0x04 page 0x01: ATA command aborted "
		      "(status 0x51 error 0x04); no SMART attribute 241 (generic table); media "
		      "bytes: the generic SMART table has no NAND-write attribute; temperature: "
		      "ATA READ LOG EXT log 0x04 page 0x05: ATA command aborted (status 0x51 "
		      "error 0x04); throttle time: ATA READ LOG EXT log 0x04 page 0x05: ATA "
		      "command aborted (status 0x51 error 0x04); media errors, spare: no ATA log "
		      "wearmon reads has them");
}

static void test_ata_note_partial(void **state)
{
	/* statistics read but without temperature; an Intel drive's SMART failed */
	struct devstat d = { .source = "ata" };
	devstat_set(&d, DEVSTAT_HOST_BYTES, 4096);
	devstat_set(&d, DEVSTAT_THROTTLE_MS, 0);
	const struct devnote_ata_reads r = { "ATA SMART READ DATA: SG_IO: Input/output error", "",
					     "", devstat_attr_table_for("INTEL SSDSC2BB480G4") };
	char note[1024] = "";
	devnote_ata(&d, &r, note, sizeof(note));
	assert_string_equal(note,
			    "media bytes: ATA SMART READ DATA: SG_IO: Input/output error; "
			    "temperature: the Device Statistics page 05h has no valid current "
			    "temperature; media errors, spare: no ATA log wearmon reads has them");
}

static void test_note_logged_once_per_device(void **state)
{
	struct tgt a = { .name = "sas1", .path = "/dev/sdb", .rdev = 0x810 };
	struct tgt b = { .name = "sas2", .path = "/dev/sdc", .rdev = 0x820 };
	devnote_reset();
	log_init(LOG_SINK_STDERR, LOG_NOTICE); /* the notes are info: not printed here */
	assert_int_equal(devnote_log(&a, ""), 0);
	assert_int_equal(devnote_log(&a, "temperature: none"), 1);
	assert_int_equal(devnote_log(&a, "temperature: none"), 0); /* every poll after */
	assert_int_equal(devnote_log(&b, "temperature: none"), 1); /* another device */
	assert_int_equal(devnote_log(&a, "temperature: gone"), 1); /* the reason changed */
	/* a reason that comes back (a page answered only when the drive is
	 * not busy) was said already */
	assert_int_equal(devnote_log(&a, "temperature: none"), 0);
	assert_int_equal(devnote_log(&a, "temperature: gone"), 0);
	/* more devices than remembered: the oldest is forgotten, nothing breaks */
	for (unsigned i = 0; i < 70; i++) {
		struct tgt t = { .rdev = 0x1000 + i };
		snprintf(t.name, sizeof(t.name), "t%u", i);
		assert_int_equal(devnote_log(&t, "x"), 1);
	}
	assert_int_equal(devnote_log(&a, "temperature: none"), 1);
	devnote_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pages),
		cmocka_unit_test(test_page_edges),
		cmocka_unit_test(test_evidence),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_ata_note_qemu),
		cmocka_unit_test(test_ata_note_partial),
		cmocka_unit_test(test_note_logged_once_per_device),
	};
	return cmocka_run_group_tests_name("scsi_log", tests, NULL, NULL);
}
