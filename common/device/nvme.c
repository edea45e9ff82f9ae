/* nvme: admin command builders, parsers, status text and issuers. */
#include "device/nvme.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#define OP_GET_LOG 0x02
#define OP_IDENTIFY 0x06
#define OP_FORMAT 0x80
#define OP_SANITIZE 0x84
#define CNS_NS 0x00
#define CNS_CTRL 0x01
#define LID_HEALTH 0x02
#define LID_SANITIZE 0x81
/* Get Log Page cdw10: NUMDL (dwords - 1) in bits 27:16, LID in 7:0. */
#define LOG_CDW10(lid) ((((uint32_t)NVME_LOG_LEN / 4 - 1) << 16) | (lid))

#define OACS_FORMAT 0x0002
#define FNA_FORMAT_ALL 0x01
#define FNA_ERASE_ALL 0x02
#define FNA_CRYPTO 0x04
#define SANICAP_CRYPTO 0x1
#define SANICAP_BLOCK 0x2
#define SANICAP_OVERWRITE 0x4

#define UNITS_BYTES 512000.0

nvme_ioctl_t nvme_ioctl_fn = nvme_ioctl_default;

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

nvme_sleep_t nvme_sleep_fn = sleep_ms;

int nvme_ioctl_default(int fd, unsigned long req, struct nvme_admin_cmd *cmd)
{
	int rc = cmd ? ioctl(fd, req, cmd) : ioctl(fd, req);
	return rc < 0 ? -errno : rc;
}

/* ---- builders --------------------------------------------------------- */

static void cmd_init(struct nvme_admin_cmd *c, uint8_t opcode, uint32_t nsid, uint32_t cdw10,
		     void *buf, uint32_t len)
{
	memset(c, 0, sizeof(*c));
	c->opcode = opcode;
	c->nsid = nsid;
	c->cdw10 = cdw10;
	c->addr = (uint64_t)(uintptr_t)buf;
	c->data_len = len;
	c->timeout_ms = NVME_ADMIN_TIMEOUT_MS;
}

void nvme_cmd_identify_ctrl(struct nvme_admin_cmd *c, void *buf)
{
	cmd_init(c, OP_IDENTIFY, 0, CNS_CTRL, buf, NVME_IDENTIFY_LEN);
}

void nvme_cmd_identify_ns(struct nvme_admin_cmd *c, uint32_t nsid, void *buf)
{
	cmd_init(c, OP_IDENTIFY, nsid, CNS_NS, buf, NVME_IDENTIFY_LEN);
}

void nvme_cmd_smart_log(struct nvme_admin_cmd *c, void *buf)
{
	cmd_init(c, OP_GET_LOG, NVME_NSID_ALL, LOG_CDW10(LID_HEALTH), buf, NVME_LOG_LEN);
}

void nvme_cmd_sanitize_log(struct nvme_admin_cmd *c, void *buf)
{
	cmd_init(c, OP_GET_LOG, NVME_NSID_ALL, LOG_CDW10(LID_SANITIZE), buf, NVME_LOG_LEN);
}

void nvme_cmd_log(struct nvme_admin_cmd *c, uint8_t lid, void *buf)
{
	cmd_init(c, OP_GET_LOG, NVME_NSID_ALL, LOG_CDW10(lid), buf, NVME_LOG_LEN);
}

void nvme_cmd_format(struct nvme_admin_cmd *c, uint32_t nsid, enum nvme_ses ses, unsigned lbaf)
{
	cmd_init(c, OP_FORMAT, nsid, ((uint32_t)ses << 9) | (lbaf & 0xf), NULL, 0);
	c->timeout_ms = NVME_FORMAT_TIMEOUT_MS;
}

void nvme_cmd_sanitize(struct nvme_admin_cmd *c, enum nvme_sanact action)
{
	cmd_init(c, OP_SANITIZE, 0, (uint32_t)action & 0x7, NULL, 0);
}

/* ---- parsers ---------------------------------------------------------- */

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* ASCII field, space padded: copy, make printable, trim both ends. */
static void id_string(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (p[i] >= 0x20 && p[i] <= 0x7e) ? (char)p[i] : p[i] ? '?' : ' ';
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	size_t lead = strspn(out, " ");
	memmove(out, out + lead, n - lead + 1);
}

int nvme_parse_ctrl(const uint8_t buf[NVME_IDENTIFY_LEN], struct nvme_ctrl_info *out)
{
	memset(out, 0, sizeof(*out));
	id_string(buf + 4, 20, out->serial);
	id_string(buf + 24, 40, out->model);
	id_string(buf + 64, 8, out->firmware);
	out->oacs = (uint16_t)le(buf + 256, 2);
	out->format_supported = !!(out->oacs & OACS_FORMAT);
	out->sanicap = (uint32_t)le(buf + 328, 4);
	out->sanitize_crypto = !!(out->sanicap & SANICAP_CRYPTO);
	out->sanitize_block = !!(out->sanicap & SANICAP_BLOCK);
	out->sanitize_overwrite = !!(out->sanicap & SANICAP_OVERWRITE);
	out->fna = buf[524];
	out->format_all_ns = !!(out->fna & FNA_FORMAT_ALL);
	out->erase_all_ns = !!(out->fna & FNA_ERASE_ALL);
	out->crypto_erase_supported = !!(out->fna & FNA_CRYPTO);
	return 0;
}

int nvme_parse_ns(const uint8_t buf[NVME_IDENTIFY_LEN], struct nvme_ns_info *out)
{
	memset(out, 0, sizeof(*out));
	out->nsze = le(buf, 8);
	out->flbas = buf[26];
	out->lbaf = buf[26] & 0xf;
	/* LBA format descriptors from byte 128, 4 bytes each; LBADS at +2. */
	uint8_t lbads = buf[128 + 4 * out->lbaf + 2];
	out->lba_size = lbads >= 9 && lbads < 32 ? 1u << lbads : 0;
	return 0;
}

/* A 128-bit little-endian counter as uint64 (saturated) and as double. */
static uint64_t counter(const uint8_t *p, int *wide, double *as_double)
{
	uint64_t lo = le(p, 8), hi = le(p + 8, 8);
	if (as_double)
		*as_double = ((double)hi * 18446744073709551616.0 + (double)lo);
	if (hi) {
		*wide = 1;
		return UINT64_MAX;
	}
	return lo;
}

int nvme_parse_health(const uint8_t buf[NVME_LOG_LEN], struct nvme_health *out)
{
	memset(out, 0, sizeof(*out));
	out->critical_warning = buf[0];
	out->temperature_k = (uint16_t)le(buf + 1, 2);
	out->temperature_c = (int)out->temperature_k - 273;
	out->avail_spare = buf[3];
	out->spare_thresh = buf[4];
	out->percent_used = buf[5];
	double ur, uw;
	out->data_units_read = counter(buf + 32, &out->wide, &ur);
	out->data_units_written = counter(buf + 48, &out->wide, &uw);
	out->bytes_read = ur * UNITS_BYTES;
	out->bytes_written = uw * UNITS_BYTES;
	out->host_reads = counter(buf + 64, &out->wide, NULL);
	out->host_writes = counter(buf + 80, &out->wide, NULL);
	out->power_on_hours = counter(buf + 128, &out->wide, NULL);
	out->unsafe_shutdowns = counter(buf + 144, &out->wide, NULL);
	out->media_errors = counter(buf + 160, &out->wide, NULL);
	out->error_log_entries = counter(buf + 176, &out->wide, NULL);
	out->warn_temp_minutes = (uint32_t)le(buf + 192, 4);
	out->crit_temp_minutes = (uint32_t)le(buf + 196, 4);
	out->tmt1_transitions = (uint32_t)le(buf + 216, 4);
	out->tmt2_transitions = (uint32_t)le(buf + 220, 4);
	out->tmt1_seconds = (uint32_t)le(buf + 224, 4);
	out->tmt2_seconds = (uint32_t)le(buf + 228, 4);
	return 0;
}

int nvme_parse_sanitize(const uint8_t buf[NVME_LOG_LEN], struct nvme_sanitize_info *out)
{
	memset(out, 0, sizeof(*out));
	out->sprog = (uint16_t)le(buf, 2);
	out->sstat = (uint16_t)le(buf + 2, 2);
	out->state = out->sstat & 0x7;
	return 0;
}

/* ---- status ----------------------------------------------------------- */

struct code_name {
	uint16_t code; /* SCT << 8 | SC */
	const char *name;
};

static const struct code_name status_names[] = {
	{ 0x000, "Successful Completion" },
	{ 0x001, "Invalid Command Opcode" },
	{ 0x002, "Invalid Field in Command" },
	{ 0x004, "Data Transfer Error" },
	{ 0x005, "Aborted due to Power Loss Notification" },
	{ 0x006, "Internal Error" },
	{ 0x007, "Command Abort Requested" },
	{ 0x00B, "Invalid Namespace or Format" },
	{ 0x00C, "Command Sequence Error" },
	{ 0x015, "Operation Denied" },
	{ 0x01C, "Sanitize Failed" },
	{ 0x01D, "Sanitize In Progress" },
	{ 0x020, "Namespace is Write Protected" },
	{ 0x021, "Command Interrupted" },
	{ 0x080, "LBA Out of Range" },
	{ 0x082, "Namespace Not Ready" },
	{ 0x084, "Format In Progress" },
	{ 0x109, "Invalid Log Page" },
	{ 0x10A, "Invalid Format" },
	{ 0x180, "Conflicting Attributes" },
	{ 0x181, "Invalid Protection Information" },
	{ 0x182, "Attempted Write to Read Only Range" },
	{ 0x280, "Write Fault" },
	{ 0x281, "Unrecovered Read Error" },
	{ 0x286, "Access Denied" },
};

static const char *const sct_names[8] = {
	"Generic",  "Command Specific", "Media and Data Integrity", "Path Related", "Reserved",
	"Reserved", "Reserved",         "Vendor Specific",
};

int nvme_status_unsupported(int status)
{
	return status > 0 && NVME_STATUS_SCT(status) == 0 && NVME_STATUS_SC(status) == 0x01;
}

char *nvme_status_text(int status, char *buf, size_t len)
{
	if (status < 0) {
		snprintf(buf, len, "ioctl failed: %s", strerror(-status));
		return buf;
	}
	unsigned code = (unsigned)status & 0x7ff;
	const char *name = NULL;
	for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++)
		if (status_names[i].code == code)
			name = status_names[i].name;
	char unknown[64];
	if (!name) {
		snprintf(unknown, sizeof(unknown), "%s status 0x%02x",
			 sct_names[NVME_STATUS_SCT(status)], NVME_STATUS_SC(status));
		name = unknown;
	}
	snprintf(buf, len, "%s%s (status 0x%04x: SCT 0x%x SC 0x%02x%s)", name,
		 nvme_status_unsupported(status) ? ": not supported by this drive" : "",
		 (unsigned)status, NVME_STATUS_SCT(status), NVME_STATUS_SC(status),
		 (status & NVME_STATUS_DNR) ? ", DNR" : "");
	return buf;
}

/* ---- issuers ---------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Submit an admin command. Returns 0, -EIO (status in *status, text in
 * err) or -errno. */
static int submit(int fd, struct nvme_admin_cmd *c, const char *what, int *status, char *err,
		  size_t len)
{
	char why[160];
	int rc = nvme_ioctl_fn(fd, NVME_IOCTL_ADMIN_CMD, c);
	if (status)
		*status = rc > 0 ? rc : 0;
	if (rc == 0)
		return 0;
	snprintf(err, len, "NVMe %s: %s", what, nvme_status_text(rc, why, sizeof(why)));
	return rc > 0 ? -EIO : rc;
}

int nvme_get_nsid(int fd, uint32_t *nsid)
{
	int rc = nvme_ioctl_fn(fd, NVME_IOCTL_ID, NULL);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return -EINVAL;
	*nsid = (uint32_t)rc;
	return 0;
}

int nvme_identify_ctrl(int fd, struct nvme_ctrl_info *out, char *err, size_t len)
{
	uint8_t buf[NVME_IDENTIFY_LEN] = { 0 };
	struct nvme_admin_cmd c;
	nvme_cmd_identify_ctrl(&c, buf);
	int rc = submit(fd, &c, "Identify Controller", NULL, err, len);
	return rc < 0 ? rc : nvme_parse_ctrl(buf, out);
}

int nvme_identify_ns(int fd, uint32_t nsid, struct nvme_ns_info *out, char *err, size_t len)
{
	uint8_t buf[NVME_IDENTIFY_LEN] = { 0 };
	struct nvme_admin_cmd c;
	nvme_cmd_identify_ns(&c, nsid, buf);
	int rc = submit(fd, &c, "Identify Namespace", NULL, err, len);
	return rc < 0 ? rc : nvme_parse_ns(buf, out);
}

int nvme_smart_log(int fd, struct nvme_health *out, char *err, size_t len)
{
	uint8_t buf[NVME_LOG_LEN] = { 0 };
	struct nvme_admin_cmd c;
	nvme_cmd_smart_log(&c, buf);
	int rc = submit(fd, &c, "SMART/Health log", NULL, err, len);
	return rc < 0 ? rc : nvme_parse_health(buf, out);
}

int nvme_get_log(int fd, uint8_t lid, uint8_t buf[NVME_LOG_LEN], char *err, size_t len)
{
	struct nvme_admin_cmd c;
	char what[32];
	memset(buf, 0, NVME_LOG_LEN);
	nvme_cmd_log(&c, lid, buf);
	snprintf(what, sizeof(what), "Get Log Page 0x%02x", lid);
	return submit(fd, &c, what, NULL, err, len);
}

int nvme_sanitize_status(int fd, struct nvme_sanitize_info *out, char *err, size_t len)
{
	uint8_t buf[NVME_LOG_LEN] = { 0 };
	struct nvme_admin_cmd c;
	nvme_cmd_sanitize_log(&c, buf);
	int rc = submit(fd, &c, "Sanitize Status log", NULL, err, len);
	return rc < 0 ? rc : nvme_parse_sanitize(buf, out);
}

/* Close a result: outcome from the return code. Returns rc. */
static int finish(struct nvme_result *res, int rc)
{
	res->outcome = rc == 0 ? NVME_OK : rc == -EOPNOTSUPP ? NVME_UNSUPPORTED : NVME_FAILED;
	if (rc == 0)
		res->text[0] = '\0';
	return rc;
}

/* Submit a destructive command; an Invalid Opcode becomes -EOPNOTSUPP. */
static int submit_erase(int fd, struct nvme_admin_cmd *c, const char *what, struct nvme_result *res)
{
	double t0 = now_s();
	int rc = submit(fd, c, what, &res->status, res->text, sizeof(res->text));
	res->seconds = now_s() - t0;
	if (rc == -EIO && nvme_status_unsupported(res->status))
		rc = -EOPNOTSUPP;
	return rc;
}

/* Check that the controller can format nsid the asked way. Returns 0,
 * -EOPNOTSUPP or -errno with res->text. */
static int format_check(int fd, int crypto, struct nvme_result *res)
{
	struct nvme_ctrl_info ci;
	int rc = nvme_identify_ctrl(fd, &ci, res->text, sizeof(res->text));
	if (rc < 0)
		return rc;
	if (!ci.format_supported) {
		snprintf(res->text, sizeof(res->text),
			 "NVMe Format NVM not "
			 "supported by this drive (OACS 0x%04x)",
			 ci.oacs);
		return -EOPNOTSUPP;
	}
	if (crypto && !ci.crypto_erase_supported) {
		snprintf(res->text, sizeof(res->text),
			 "NVMe cryptographic erase "
			 "not supported by this drive (FNA 0x%02x); use "
			 "secure_erase = nvme-format",
			 ci.fna);
		return -EOPNOTSUPP;
	}
	return 0;
}

int nvme_format(int fd, uint32_t nsid, int crypto, struct nvme_result *res)
{
	struct nvme_admin_cmd c;
	struct nvme_ns_info ns;
	memset(res, 0, sizeof(*res));
	int rc = 0;
	if (nsid == 0 && (rc = nvme_get_nsid(fd, &nsid)) < 0) {
		snprintf(res->text, sizeof(res->text),
			 "NVMe format: cannot get "
			 "the namespace id (%s); not formatting all namespaces",
			 strerror(-rc));
		return finish(res, rc);
	}
	if (nsid == NVME_NSID_ALL) {
		snprintf(res->text, sizeof(res->text),
			 "NVMe format: refusing to "
			 "format all namespaces");
		return finish(res, -EINVAL);
	}
	if ((rc = format_check(fd, crypto, res)) < 0)
		return finish(res, rc);
	rc = nvme_identify_ns(fd, nsid, &ns, res->text, sizeof(res->text));
	if (rc < 0)
		return finish(res, rc);
	nvme_cmd_format(&c, nsid, crypto ? NVME_SES_CRYPTO : NVME_SES_USER, ns.lbaf);
	rc = submit_erase(
		fd, &c, crypto ? "Format NVM (crypto erase)" : "Format NVM (user-data erase)", res);
	return finish(res, rc);
}

/* Poll the sanitize status log until the operation ends. */
static int sanitize_wait(int fd, const atomic_int *stop, unsigned timeout_s,
			 struct nvme_result *res)
{
	struct nvme_sanitize_info si;
	for (unsigned waited = 0;; waited++) {
		if (stop && atomic_load(stop)) {
			snprintf(res->text, sizeof(res->text),
				 "NVMe sanitize: "
				 "stopped while in progress; the drive finishes it "
				 "on its own (even across a power cycle)");
			return -EINTR;
		}
		if (waited >= timeout_s) {
			snprintf(res->text, sizeof(res->text),
				 "NVMe sanitize: still "
				 "in progress after %u s",
				 timeout_s);
			return -ETIMEDOUT;
		}
		nvme_sleep_fn(1000);
		int rc = nvme_sanitize_status(fd, &si, res->text, sizeof(res->text));
		if (rc < 0)
			return rc;
		if (si.sprog != 0xFFFF || si.state == NVME_SSTAT_IN_PROGRESS)
			continue;
		if (si.state == NVME_SSTAT_DONE || si.state == NVME_SSTAT_DONE_NO_DEALLOC)
			return 0;
		snprintf(res->text, sizeof(res->text),
			 "NVMe sanitize %s (SSTAT "
			 "0x%04x)",
			 si.state == NVME_SSTAT_FAILED ? "failed" : "ended without a result",
			 si.sstat);
		return -EIO;
	}
}

int nvme_sanitize(int fd, int crypto, const atomic_int *stop, unsigned timeout_s,
		  struct nvme_result *res)
{
	struct nvme_ctrl_info ci;
	struct nvme_admin_cmd c;
	memset(res, 0, sizeof(*res));
	int rc = nvme_identify_ctrl(fd, &ci, res->text, sizeof(res->text));
	if (rc < 0)
		return finish(res, rc);
	if (crypto ? !ci.sanitize_crypto : !ci.sanitize_block) {
		snprintf(res->text, sizeof(res->text),
			 "NVMe sanitize %s not "
			 "supported by this drive (SANICAP 0x%08x)",
			 crypto ? "crypto erase" : "block erase", ci.sanicap);
		return finish(res, -EOPNOTSUPP);
	}
	nvme_cmd_sanitize(&c, crypto ? NVME_SANACT_CRYPTO : NVME_SANACT_BLOCK);
	double t0 = now_s();
	rc = submit_erase(fd, &c, crypto ? "Sanitize (crypto erase)" : "Sanitize (block erase)",
			  res);
	if (rc == 0)
		rc = sanitize_wait(fd, stop, timeout_s ? timeout_s : NVME_SANITIZE_TIMEOUT_S, res);
	res->seconds = now_s() - t0;
	return finish(res, rc);
}
