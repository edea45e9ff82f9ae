/* Unit tests of nvme: command fields (common/device/nvme.h), identify / SMART /
 * sanitize status parsing from built fixtures, status text, and format and
 * sanitize against a scripted ioctl. */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "device/nvme.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- builders -------------------------------------------------------------------- */

static uint8_t scratch[NVME_IDENTIFY_LEN];

static void b_id_ctrl(struct nvme_admin_cmd *c)
{
	nvme_cmd_identify_ctrl(c, scratch);
}
static void b_id_ns(struct nvme_admin_cmd *c)
{
	nvme_cmd_identify_ns(c, 7, scratch);
}
static void b_smart(struct nvme_admin_cmd *c)
{
	nvme_cmd_smart_log(c, scratch);
}
static void b_san_log(struct nvme_admin_cmd *c)
{
	nvme_cmd_sanitize_log(c, scratch);
}
static void b_ocp_log(struct nvme_admin_cmd *c)
{
	nvme_cmd_log(c, 0xC0, scratch);
}
static void b_fmt_user(struct nvme_admin_cmd *c)
{
	nvme_cmd_format(c, 1, NVME_SES_USER, 0);
}
static void b_fmt_user_lbaf3(struct nvme_admin_cmd *c)
{
	nvme_cmd_format(c, 2, NVME_SES_USER, 3);
}
static void b_fmt_crypto(struct nvme_admin_cmd *c)
{
	nvme_cmd_format(c, 1, NVME_SES_CRYPTO, 1);
}
static void b_fmt_mask(struct nvme_admin_cmd *c)
{
	nvme_cmd_format(c, 1, NVME_SES_CRYPTO, 0x1F);
}
static void b_san_block(struct nvme_admin_cmd *c)
{
	nvme_cmd_sanitize(c, NVME_SANACT_BLOCK);
}
static void b_san_crypto(struct nvme_admin_cmd *c)
{
	nvme_cmd_sanitize(c, NVME_SANACT_CRYPTO);
}

struct build_case {
	const char *name;
	void (*build)(struct nvme_admin_cmd *c);
	uint8_t opcode;
	uint32_t nsid, cdw10, data_len;
	int has_buf;
};

static const struct build_case build_cases[] = {
	{ "identify controller", b_id_ctrl, 0x06, 0, 0x00000001, 4096, 1 },
	{ "identify namespace", b_id_ns, 0x06, 7, 0x00000000, 4096, 1 },
	{ "SMART/Health log", b_smart, 0x02, 0xFFFFFFFF, 0x007F0002, 512, 1 },
	{ "sanitize status log", b_san_log, 0x02, 0xFFFFFFFF, 0x007F0081, 512, 1 },
	{ "OCP extended SMART log", b_ocp_log, 0x02, 0xFFFFFFFF, 0x007F00C0, 512, 1 },
	{ "format user-data erase", b_fmt_user, 0x80, 1, 0x00000200, 0, 0 },
	{ "format keeps LBAF 3", b_fmt_user_lbaf3, 0x80, 2, 0x00000203, 0, 0 },
	{ "format crypto erase", b_fmt_crypto, 0x80, 1, 0x00000401, 0, 0 },
	{ "format LBAF masked to 3:0", b_fmt_mask, 0x80, 1, 0x0000040F, 0, 0 },
	{ "sanitize block erase", b_san_block, 0x84, 0, 0x00000002, 0, 0 },
	{ "sanitize crypto erase", b_san_crypto, 0x84, 0, 0x00000004, 0, 0 },
};

static void test_builders(void **state)
{
	assert_int_equal(sizeof(struct nvme_admin_cmd), 72);
	for (size_t i = 0; i < N(build_cases); i++) {
		const struct build_case *b = &build_cases[i];
		struct nvme_admin_cmd c;
		memset(&c, 0xAB, sizeof(c));
		b->build(&c);
		print_message("  %s\n", b->name);
		assert_int_equal(c.opcode, b->opcode);
		assert_int_equal(c.flags, 0);
		assert_int_equal(c.rsvd1, 0);
		assert_int_equal(c.nsid, b->nsid);
		assert_int_equal(c.cdw2 | c.cdw3 | c.cdw11 | c.cdw12 | c.cdw13 | c.cdw14 | c.cdw15,
				 0);
		assert_int_equal(c.metadata | c.metadata_len, 0);
		assert_int_equal(c.cdw10, b->cdw10);
		assert_int_equal(c.data_len, b->data_len);
		assert_int_equal(c.addr, b->has_buf ? (uint64_t)(uintptr_t)scratch : 0);
		assert_true(c.timeout_ms > 0);
		assert_int_equal(c.result, 0);
	}
}

static void test_format_timeout_is_long(void **state)
{
	struct nvme_admin_cmd c;
	nvme_cmd_format(&c, 1, NVME_SES_USER, 0);
	assert_true(c.timeout_ms >= 3600u * 1000u);
}

/* ---- fixtures ------------------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_ascii(uint8_t *p, size_t n, const char *s)
{
	memset(p, ' ', n);
	memcpy(p, s, strlen(s));
}

static void build_ctrl(uint8_t *buf, uint16_t oacs, uint32_t sanicap, uint8_t fna)
{
	memset(buf, 0, NVME_IDENTIFY_LEN);
	put_ascii(buf + 4, 20, "deadbeef");
	put_ascii(buf + 24, 40, "QEMU NVMe Ctrl");
	put_ascii(buf + 64, 8, "7.2.0");
	put_le(buf + 256, oacs, 2);
	put_le(buf + 328, sanicap, 4);
	buf[524] = fna;
}

static void build_ns(uint8_t *buf, uint64_t nsze, uint8_t flbas)
{
	memset(buf, 0, NVME_IDENTIFY_LEN);
	put_le(buf, nsze, 8);
	buf[25] = 3; /* NLBAF: 4 formats */
	buf[26] = flbas;
	static const uint8_t lbads[] = { 9, 9, 12, 12 };
	for (unsigned i = 0; i < 4; i++)
		buf[128 + 4 * i + 2] = lbads[i];
}

static void build_sanlog(uint8_t *buf, uint16_t sprog, uint16_t sstat)
{
	memset(buf, 0, NVME_LOG_LEN);
	put_le(buf, sprog, 2);
	put_le(buf + 2, sstat, 2);
}

static void test_parse_ctrl(void **state)
{
	uint8_t buf[NVME_IDENTIFY_LEN];
	struct nvme_ctrl_info ci;
	build_ctrl(buf, 0x010a, 0, 0x00); /* what QEMU 7.2 reports */
	put_ascii(buf + 4, 20, "  SN 42");
	assert_int_equal(nvme_parse_ctrl(buf, &ci), 0);
	assert_string_equal(ci.serial, "SN 42");
	assert_string_equal(ci.model, "QEMU NVMe Ctrl");
	assert_string_equal(ci.firmware, "7.2.0");
	assert_int_equal(ci.oacs, 0x010a);
	assert_true(ci.format_supported);
	assert_int_equal(ci.sanicap, 0);
	assert_false(ci.sanitize_crypto || ci.sanitize_block || ci.sanitize_overwrite);
	assert_false(ci.crypto_erase_supported || ci.format_all_ns || ci.erase_all_ns);

	build_ctrl(buf, 0x0008, 0x00000007, 0x05);
	put_ascii(buf + 24, 40, "0123456789012345678901234567890123456789");
	assert_int_equal(nvme_parse_ctrl(buf, &ci), 0);
	assert_string_equal(ci.model, "0123456789012345678901234567890123456789");
	assert_false(ci.format_supported);
	assert_true(ci.sanitize_crypto && ci.sanitize_block && ci.sanitize_overwrite);
	assert_int_equal(ci.fna, 0x05);
	assert_true(ci.crypto_erase_supported);
	assert_true(ci.format_all_ns);
	assert_false(ci.erase_all_ns);
}

static void test_parse_ns(void **state)
{
	static const struct {
		uint8_t flbas;
		unsigned lbaf;
		uint32_t lba_size;
	} cases[] = {
		{ 0x00, 0, 512 },
		{ 0x02, 2, 4096 },
		{ 0x12, 2, 4096 },
		{ 0x01, 1, 512 },
	};
	for (size_t i = 0; i < N(cases); i++) {
		uint8_t buf[NVME_IDENTIFY_LEN];
		struct nvme_ns_info ns;
		build_ns(buf, 0x00000001DCF32B0ull, cases[i].flbas);
		assert_int_equal(nvme_parse_ns(buf, &ns), 0);
		assert_int_equal(ns.nsze, 0x00000001DCF32B0ull);
		assert_int_equal(ns.flbas, cases[i].flbas);
		assert_int_equal(ns.lbaf, cases[i].lbaf);
		assert_int_equal(ns.lba_size, cases[i].lba_size);
	}
}

static void build_health(uint8_t *buf)
{
	memset(buf, 0, NVME_LOG_LEN);
	buf[0] = 0x04;           /* reliability degraded */
	put_le(buf + 1, 321, 2); /* 321 K = 48 C */
	buf[3] = 97;
	buf[4] = 10;
	buf[5] = 3;
	put_le(buf + 32, 1234567, 8);
	put_le(buf + 48, 0x0123456789ull, 8);
	put_le(buf + 64, 111, 8);
	put_le(buf + 80, 222, 8);
	put_le(buf + 128, 4321, 8);
	put_le(buf + 144, 17, 8);
	put_le(buf + 160, 2, 8);
	put_le(buf + 176, 9, 8);
	put_le(buf + 192, 31, 4);  /* minutes above the warning temperature */
	put_le(buf + 196, 4, 4);   /* above the critical one */
	put_le(buf + 216, 12, 4);  /* thermal management 1 transitions */
	put_le(buf + 220, 3, 4);   /* 2 */
	put_le(buf + 224, 600, 4); /* seconds in thermal management 1 */
	put_le(buf + 228, 45, 4);  /* 2 */
}

static void test_parse_health(void **state)
{
	uint8_t buf[NVME_LOG_LEN];
	struct nvme_health h;
	build_health(buf);
	assert_int_equal(nvme_parse_health(buf, &h), 0);
	assert_int_equal(h.critical_warning, 0x04);
	assert_int_equal(h.temperature_k, 321);
	assert_int_equal(h.temperature_c, 48);
	assert_int_equal(h.avail_spare, 97);
	assert_int_equal(h.spare_thresh, 10);
	assert_int_equal(h.percent_used, 3);
	assert_int_equal(h.data_units_read, 1234567);
	assert_int_equal(h.data_units_written, 0x0123456789ull);
	assert_true(h.bytes_read == 1234567.0 * 512000.0);
	assert_true(h.bytes_written == (double)0x0123456789ull * 512000.0);
	assert_int_equal(h.host_reads, 111);
	assert_int_equal(h.host_writes, 222);
	assert_int_equal(h.power_on_hours, 4321);
	assert_int_equal(h.unsafe_shutdowns, 17);
	assert_int_equal(h.media_errors, 2);
	assert_int_equal(h.error_log_entries, 9);
	assert_int_equal(h.warn_temp_minutes, 31);
	assert_int_equal(h.crit_temp_minutes, 4);
	assert_int_equal(h.tmt1_transitions, 12);
	assert_int_equal(h.tmt2_transitions, 3);
	assert_int_equal(h.tmt1_seconds, 600);
	assert_int_equal(h.tmt2_seconds, 45);
	assert_false(h.wide);
}

/* A counter past 2^64: saturated as uint64, exact enough as a double. */
static void test_parse_health_wide(void **state)
{
	uint8_t buf[NVME_LOG_LEN];
	struct nvme_health h;
	build_health(buf);
	put_le(buf + 48, 0, 8);
	put_le(buf + 56, 1, 8); /* 2^64 units written */
	assert_int_equal(nvme_parse_health(buf, &h), 0);
	assert_true(h.wide);
	assert_int_equal(h.data_units_written, UINT64_MAX);
	assert_true(h.bytes_written == 18446744073709551616.0 * 512000.0);
	assert_int_equal(h.data_units_read, 1234567);
}

static void test_parse_sanitize(void **state)
{
	static const struct {
		uint16_t sprog, sstat;
		unsigned state;
	} cases[] = {
		{ 0xFFFF, 0x0000, NVME_SSTAT_NEVER },
		{ 0x8000, 0x0002, NVME_SSTAT_IN_PROGRESS },
		{ 0xFFFF, 0x0101, NVME_SSTAT_DONE }, /* global data erased bit */
		{ 0xFFFF, 0x0003, NVME_SSTAT_FAILED },
		{ 0xFFFF, 0x00FC, NVME_SSTAT_DONE_NO_DEALLOC }, /* pass count bits */
	};
	for (size_t i = 0; i < N(cases); i++) {
		uint8_t buf[NVME_LOG_LEN];
		struct nvme_sanitize_info si;
		build_sanlog(buf, cases[i].sprog, cases[i].sstat);
		assert_int_equal(nvme_parse_sanitize(buf, &si), 0);
		assert_int_equal(si.sprog, cases[i].sprog);
		assert_int_equal(si.sstat, cases[i].sstat);
		assert_int_equal(si.state, cases[i].state);
	}
}

/* ---- status text ---------------------------------------------------------------- */

struct status_case {
	int status;
	const char *want;
	int unsupported, dnr;
};

static const struct status_case status_cases[] = {
	{ 0x4001, "Invalid Command Opcode: not supported by this drive", 1, 1 },
	{ 0x0001, "Invalid Command Opcode: not supported by this drive", 1, 0 },
	{ 0x4002, "Invalid Field in Command (status 0x4002: SCT 0x0 SC 0x02, DNR)", 0, 1 },
	{ 0x001D, "Sanitize In Progress", 0, 0 },
	{ 0x010A, "Invalid Format (status 0x010a: SCT 0x1 SC 0x0a)", 0, 0 },
	{ 0x4281, "Unrecovered Read Error", 0, 1 },
	{ 0x0101, "Command Specific status 0x01", 0, 0 }, /* not opcode */
	{ 0x07AB, "Vendor Specific status 0xab", 0, 0 },
	{ -ENOTTY, "ioctl failed: ", 0, 0 },
};

static void test_status_text(void **state)
{
	for (size_t i = 0; i < N(status_cases); i++) {
		const struct status_case *c = &status_cases[i];
		char buf[160];
		assert_ptr_equal(nvme_status_text(c->status, buf, sizeof(buf)), buf);
		print_message("  %s\n", buf);
		assert_non_null(strstr(buf, c->want));
		assert_int_equal(nvme_status_unsupported(c->status), c->unsupported);
		assert_int_equal(strstr(buf, ", DNR)") != NULL, c->dnr);
		if (!c->unsupported)
			assert_null(strstr(buf, "not supported"));
	}
}

/* ---- scripted ioctl ----------------------------------------------------------- */

struct nstep {
	unsigned long req;
	uint8_t opcode;
	uint32_t nsid, cdw10;
	uint8_t reply[NVME_IDENTIFY_LEN];
	int rc; /* ioctl result: 0, status > 0, -errno, nsid */
};

static struct nstep script[10];
static size_t script_len, script_pos;
static unsigned sleeps;
static atomic_int stop_flag;
static unsigned stop_after_sleeps;
static nvme_sleep_t real_sleep;

static int fake_ioctl(int fd, unsigned long req, struct nvme_admin_cmd *cmd)
{
	assert_true(script_pos < script_len); /* no command beyond the script */
	const struct nstep *s = &script[script_pos++];
	assert_int_equal(fd, 7);
	assert_int_equal(req, s->req);
	if (req == NVME_IOCTL_ID) {
		assert_null(cmd);
		return s->rc;
	}
	assert_non_null(cmd);
	assert_int_equal(cmd->opcode, s->opcode);
	assert_int_equal(cmd->nsid, s->nsid);
	assert_int_equal(cmd->cdw10, s->cdw10);
	if (cmd->data_len) {
		assert_true(cmd->data_len <= sizeof(s->reply));
		memcpy((void *)(uintptr_t)cmd->addr, s->reply, cmd->data_len);
	}
	return s->rc;
}

static void fake_sleep(unsigned ms)
{
	assert_int_equal(ms, 1000);
	if (++sleeps == stop_after_sleeps)
		stop_flag = 1;
}

static int setup_script(void **state)
{
	memset(script, 0, sizeof(script));
	script_len = script_pos = 0;
	sleeps = 0;
	stop_flag = 0;
	stop_after_sleeps = 0;
	if (nvme_sleep_fn != fake_sleep)
		real_sleep = nvme_sleep_fn;
	nvme_ioctl_fn = fake_ioctl;
	nvme_sleep_fn = fake_sleep;
	return 0;
}

static int teardown_script(void **state)
{
	nvme_ioctl_fn = nvme_ioctl_default;
	nvme_sleep_fn = real_sleep;
	return 0;
}

static struct nstep *expect_admin(uint8_t opcode, uint32_t nsid, uint32_t cdw10)
{
	assert_true(script_len < N(script));
	struct nstep *s = &script[script_len++];
	s->req = NVME_IOCTL_ADMIN_CMD;
	s->opcode = opcode;
	s->nsid = nsid;
	s->cdw10 = cdw10;
	return s;
}

static void expect_nsid(int rc)
{
	assert_true(script_len < N(script));
	struct nstep *s = &script[script_len++];
	s->req = NVME_IOCTL_ID;
	s->rc = rc;
}

static void expect_ctrl(uint16_t oacs, uint32_t sanicap, uint8_t fna)
{
	build_ctrl(expect_admin(0x06, 0, 0x01)->reply, oacs, sanicap, fna);
}

static void expect_ns(uint32_t nsid, uint8_t flbas)
{
	build_ns(expect_admin(0x06, nsid, 0x00)->reply, 1000000, flbas);
}

static void expect_sanlog(uint16_t sprog, uint16_t sstat)
{
	build_sanlog(expect_admin(0x02, 0xFFFFFFFF, 0x007F0081)->reply, sprog, sstat);
}

static void test_identify_and_smart_issuers(void **state)
{
	struct nvme_ctrl_info ci;
	struct nvme_health h;
	struct nvme_ns_info ns;
	char err[256] = "";
	uint32_t nsid = 0;
	expect_ctrl(0x010a, 0, 0);
	expect_ns(3, 0x02);
	build_health(expect_admin(0x02, 0xFFFFFFFF, 0x007F0002)->reply);
	expect_nsid(3);
	expect_admin(0x06, 0, 0x01)->rc = 0x4002;
	assert_int_equal(nvme_identify_ctrl(7, &ci, err, sizeof(err)), 0);
	assert_string_equal(ci.serial, "deadbeef");
	assert_int_equal(nvme_identify_ns(7, 3, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns.lba_size, 4096);
	assert_int_equal(nvme_smart_log(7, &h, err, sizeof(err)), 0);
	assert_int_equal(h.temperature_c, 48);
	assert_int_equal(nvme_get_nsid(7, &nsid), 0);
	assert_int_equal(nsid, 3);
	assert_int_equal(nvme_identify_ctrl(7, &ci, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "Identify Controller: Invalid Field in Command"));
	assert_int_equal(script_pos, script_len);
}

/* ---- format ---------------------------------------------------------------------- */

static void test_format_user_data(void **state)
{
	struct nvme_result r;
	expect_nsid(1);
	expect_ctrl(0x010a, 0, 0);
	expect_ns(1, 0x02);
	expect_admin(0x80, 1, (1u << 9) | 2);
	assert_int_equal(nvme_format(7, 0, 0, &r), 0);
	assert_int_equal(script_pos, 4);
	assert_int_equal(r.outcome, NVME_OK);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.text, "");
}

static void test_format_crypto_explicit_nsid(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x0002, 0, 0x04);
	expect_ns(5, 0x11);
	expect_admin(0x80, 5, (2u << 9) | 1);
	assert_int_equal(nvme_format(7, 5, 1, &r), 0);
	assert_int_equal(script_pos, 3);
	assert_int_equal(r.outcome, NVME_OK);
}

static void test_format_unsupported_oacs(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x0008, 0x7, 0x04); /* OACS bit 1 clear */
	assert_int_equal(nvme_format(7, 1, 0, &r), -EOPNOTSUPP);
	assert_int_equal(script_pos, 1); /* no Format sent */
	assert_int_equal(r.outcome, NVME_UNSUPPORTED);
	assert_non_null(strstr(r.text, "Format NVM not supported by this drive"));
}

static void test_format_crypto_unsupported_fna(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x010a, 0, 0x03); /* FNA bit 2 clear */
	assert_int_equal(nvme_format(7, 1, 1, &r), -EOPNOTSUPP);
	assert_int_equal(script_pos, 1);
	assert_int_equal(r.outcome, NVME_UNSUPPORTED);
	assert_non_null(strstr(r.text, "cryptographic erase not supported"));
}

static void test_format_device_status(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x010a, 0, 0);
	expect_ns(1, 0);
	expect_admin(0x80, 1, 0x200)->rc = 0x410A;
	assert_int_equal(nvme_format(7, 1, 0, &r), -EIO);
	assert_int_equal(r.outcome, NVME_FAILED);
	assert_int_equal(r.status, 0x410A);
	assert_non_null(strstr(r.text, "Invalid Format"));

	setup_script(state);
	expect_ctrl(0x010a, 0, 0);
	expect_ns(1, 0);
	expect_admin(0x80, 1, 0x200)->rc = 0x4001;
	assert_int_equal(nvme_format(7, 1, 0, &r), -EOPNOTSUPP);
	assert_int_equal(r.outcome, NVME_UNSUPPORTED);
	assert_non_null(strstr(r.text, "not supported by this drive"));
}

/* Without a namespace id the format would hit every namespace: refuse. */
static void test_format_needs_namespace(void **state)
{
	struct nvme_result r;
	expect_nsid(-ENOTTY); /* e.g. the controller's char device */
	assert_int_equal(nvme_format(7, 0, 0, &r), -ENOTTY);
	assert_int_equal(script_pos, 1);
	assert_int_equal(r.outcome, NVME_FAILED);
	assert_non_null(strstr(r.text, "namespace id"));
	assert_int_equal(nvme_format(7, NVME_NSID_ALL, 0, &r), -EINVAL);
	assert_int_equal(script_pos, 1);
}

/* ---- sanitize ---------------------------------------------------------------------- */

struct san_refuse_case {
	uint32_t sanicap;
	int crypto;
	const char *text;
};

static const struct san_refuse_case san_refuse_cases[] = {
	{ 0x0, 0, "sanitize block erase not supported by this drive (SANICAP 0x00000000)" },
	{ 0x1, 0, "block erase not supported" },
	{ 0x2, 1, "crypto erase not supported by this drive (SANICAP 0x00000002)" },
	{ 0x4, 1, "crypto erase not supported" },
};

static void test_sanitize_refused(void **state)
{
	for (size_t i = 0; i < N(san_refuse_cases); i++) {
		const struct san_refuse_case *c = &san_refuse_cases[i];
		struct nvme_result r;
		setup_script(state);
		expect_ctrl(0x010a, c->sanicap, 0);
		assert_int_equal(nvme_sanitize(7, c->crypto, NULL, 0, &r), -EOPNOTSUPP);
		assert_int_equal(script_pos, 1); /* no Sanitize sent */
		assert_int_equal(r.outcome, NVME_UNSUPPORTED);
		assert_non_null(strstr(r.text, c->text));
	}
}

static void test_sanitize_polls_until_done(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x010a, 0x2, 0);
	expect_admin(0x84, 0, 0x2);
	expect_sanlog(0x1000, 0x0002);
	expect_sanlog(0x8000, 0x0002);
	expect_sanlog(0xFFFF, 0x0101);
	assert_int_equal(nvme_sanitize(7, 0, &stop_flag, 60, &r), 0);
	assert_int_equal(script_pos, 5);
	assert_int_equal(sleeps, 3);
	assert_int_equal(r.outcome, NVME_OK);
	assert_string_equal(r.text, "");
}

static void test_sanitize_crypto_done(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x010a, 0x1, 0);
	expect_admin(0x84, 0, 0x4);
	expect_sanlog(0xFFFF, 0x0004);
	assert_int_equal(nvme_sanitize(7, 1, NULL, 0, &r), 0);
	assert_int_equal(script_pos, 3);
}

static void test_sanitize_failed(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x010a, 0x2, 0);
	expect_admin(0x84, 0, 0x2);
	expect_sanlog(0x4000, 0x0002);
	expect_sanlog(0xFFFF, 0x0003);
	assert_int_equal(nvme_sanitize(7, 0, NULL, 60, &r), -EIO);
	assert_int_equal(r.outcome, NVME_FAILED);
	assert_non_null(strstr(r.text, "sanitize failed"));
}

/* QEMU 7.2 refuses Sanitize as an invalid opcode. */
static void test_sanitize_invalid_opcode(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x010a, 0x2, 0);
	expect_admin(0x84, 0, 0x2)->rc = 0x4001;
	assert_int_equal(nvme_sanitize(7, 0, NULL, 60, &r), -EOPNOTSUPP);
	assert_int_equal(script_pos, 2);
	assert_int_equal(sleeps, 0);
	assert_int_equal(r.outcome, NVME_UNSUPPORTED);
	assert_int_equal(r.status, 0x4001);
	assert_non_null(strstr(r.text, "Invalid Command Opcode: not supported by this drive"));
}

static void test_sanitize_stopped(void **state)
{
	struct nvme_result r;
	stop_after_sleeps = 1;
	expect_ctrl(0x010a, 0x2, 0);
	expect_admin(0x84, 0, 0x2);
	expect_sanlog(0x1000, 0x0002);
	assert_int_equal(nvme_sanitize(7, 0, &stop_flag, 60, &r), -EINTR);
	assert_int_equal(script_pos, 3);
	assert_int_equal(r.outcome, NVME_FAILED);
	assert_non_null(strstr(r.text, "stopped"));
}

static void test_sanitize_timeout(void **state)
{
	struct nvme_result r;
	expect_ctrl(0x010a, 0x2, 0);
	expect_admin(0x84, 0, 0x2);
	expect_sanlog(0x1000, 0x0002);
	expect_sanlog(0x2000, 0x0002);
	assert_int_equal(nvme_sanitize(7, 0, &stop_flag, 2, &r), -ETIMEDOUT);
	assert_int_equal(script_pos, 4);
	assert_non_null(strstr(r.text, "after 2 s"));
}

#define SCRIPTED(f) cmocka_unit_test_setup_teardown(f, setup_script, teardown_script)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builders),
		cmocka_unit_test(test_format_timeout_is_long),
		cmocka_unit_test(test_parse_ctrl),
		cmocka_unit_test(test_parse_ns),
		cmocka_unit_test(test_parse_health),
		cmocka_unit_test(test_parse_health_wide),
		cmocka_unit_test(test_parse_sanitize),
		cmocka_unit_test(test_status_text),
		SCRIPTED(test_identify_and_smart_issuers),
		SCRIPTED(test_format_user_data),
		SCRIPTED(test_format_crypto_explicit_nsid),
		SCRIPTED(test_format_unsupported_oacs),
		SCRIPTED(test_format_crypto_unsupported_fna),
		SCRIPTED(test_format_device_status),
		SCRIPTED(test_format_needs_namespace),
		SCRIPTED(test_sanitize_refused),
		SCRIPTED(test_sanitize_polls_until_done),
		SCRIPTED(test_sanitize_crypto_done),
		SCRIPTED(test_sanitize_failed),
		SCRIPTED(test_sanitize_invalid_opcode),
		SCRIPTED(test_sanitize_stopped),
		SCRIPTED(test_sanitize_timeout),
	};
	return cmocka_run_group_tests_name("nvme", tests, NULL, NULL);
}
