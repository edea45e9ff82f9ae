/* test_log: a structured journal entry carries every field it is given
 * (the named context and the caller's further fields), in order, whatever
 * the device's identity, and nothing is lost silently. The journal is a
 * stand-in that keeps the fields (log_set_sendv). */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

static char got[LOG_MAX_FIELDS + 1][256];
static int ngot;

static int keep(const struct iovec *iov, int n)
{
	ngot = 0;
	for (int i = 0; i < n && i < LOG_MAX_FIELDS + 1; i++) {
		size_t len = iov[i].iov_len < 255 ? iov[i].iov_len : 255;
		memcpy(got[i], iov[i].iov_base, len);
		got[i][len] = '\0';
		ngot++;
	}
	return 0;
}

/* The value of NAME in the last entry, or NULL. */
static const char *field(const char *name)
{
	size_t n = strlen(name);
	for (int i = 0; i < ngot; i++)
		if (!strncmp(got[i], name, n) && got[i][n] == '=')
			return got[i] + n + 1;
	return NULL;
}

static int setup(void **state)
{
	log_set_sendv(keep);
	log_init(LOG_SINK_JOURNAL, LOG_DEBUG);
	return 0;
}

static int teardown(void **state)
{
	log_set_sendv(NULL);
	log_init(LOG_SINK_STDERR, LOG_INFO);
	return 0;
}

/* The longest identity the schema allows (NVMe and ATA serials of 20
 * characters, a 40-character model, 8 of firmware), every context member
 * and further fields up to the limit: all arrive, none is counted lost. */
static void test_every_field_arrives(void **state)
{
	static char names[LOG_MAX_FIELDS][24], values[LOG_MAX_FIELDS][24];
	struct log_field extra[LOG_MAX_FIELDS];
	size_t nextra = LOG_MAX_FIELDS - LOG_OWN_FIELDS - LOG_CONTEXT_FIELDS;
	struct log_fields f = LOG_FIELDS_INIT;
	unsigned long lost = log_fields_lost();

	for (size_t i = 0; i < nextra; i++) {
		snprintf(names[i], sizeof(names[i]), "EVIDENCE_%zu", i);
		snprintf(values[i], sizeof(values[i]), "%zu", i * 7);
		extra[i] = (struct log_field){ names[i], values[i] };
	}
	f.target = "lab1";
	f.device = "/dev/disk/by-id/nvme-EXAMPLE";
	f.serial = "S4EWNX0R123456789012";
	f.model = "SAMSUNG MZVL21T0HCLR-00B00 1TB NVMe SSD!";
	f.firmware = "GXA7801Q";
	f.message_id = "54157799c25f466ebd73eb21f17c70d5";
	f.cycle = 3;
	f.iteration = 12;
	f.size_bytes = 1 << 30;
	f.mibps = 12.5;
	f.baseline_mibps = 400;
	f.cause = "wear";
	f.extra = extra;
	f.nextra = nextra;
	assert_int_equal(strlen(f.serial), 20);
	assert_int_equal(strlen(f.model), 40);
	assert_int_equal(strlen(f.firmware), 8);
	log_fields(LOG_CRIT, &f, "target lab1: throughput crash");
	assert_int_equal(ngot, LOG_MAX_FIELDS);
	assert_string_equal(field("MESSAGE"), "target lab1: throughput crash");
	assert_string_equal(field("PRIORITY"), "2");
	assert_string_equal(field("SERIAL"), f.serial);
	assert_string_equal(field("MODEL"), f.model);
	assert_string_equal(field("FIRMWARE"), f.firmware);
	assert_string_equal(field("CAUSE"), "wear");
	assert_string_equal(field("BASELINE_MIBPS"), "400.00");
	assert_string_equal(field("SIZE_BYTES"), "1073741824");
	for (size_t i = 0; i < nextra; i++)
		assert_string_equal(field(names[i]), values[i]);
	assert_int_equal(log_fields_lost(), lost);
}

/* Unset members send no field; an unknown further field is sent empty. */
static void test_unset_members_send_nothing(void **state)
{
	struct log_field extra[] = { { "DIP_DEVICE_WA", NULL } };
	struct log_fields f = LOG_FIELDS_INIT;

	f.target = "lab1";
	f.extra = extra;
	f.nextra = 1;
	log_fields(LOG_WARNING, &f, "hello");
	assert_int_equal(ngot, LOG_OWN_FIELDS + 2);
	assert_string_equal(field("TARGET"), "lab1");
	assert_string_equal(field("DIP_DEVICE_WA"), "");
	assert_null(field("SERIAL"));
	assert_null(field("CYCLE"));
	log_msg(LOG_INFO, "plain");
	assert_int_equal(ngot, LOG_OWN_FIELDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_field_arrives),
		cmocka_unit_test(test_unset_members_send_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
