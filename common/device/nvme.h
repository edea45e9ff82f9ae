/* nvme: NVMe admin commands through the Linux passthrough ioctl: identify,
 * SMART/Health and sanitize status logs, Format NVM and Sanitize. Pure
 * builders and parsers apart from the issuers; never opens a device and
 * never decides whether a device may be erased (tgt does). */
#ifndef WEARMON_NVME_H
#define WEARMON_NVME_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/ioctl.h> /* _IO macros the request codes need */

#include <linux/nvme_ioctl.h>

#define NVME_IDENTIFY_LEN 4096
#define NVME_LOG_LEN 512
#define NVME_NSID_ALL 0xFFFFFFFFu
#define NVME_ADMIN_TIMEOUT_MS 30000u
/* Format NVM runs inside the ioctl: allow a slow user-data erase. */
#define NVME_FORMAT_TIMEOUT_MS (2u * 3600u * 1000u)
/* Longest a sanitize may run before wearmond gives up waiting (it goes on
 * in the drive). */
#define NVME_SANITIZE_TIMEOUT_S (24u * 3600u)

/* Status as the ioctl returns it: SC bits 7:0, SCT 10:8, DNR bit 14. */
#define NVME_STATUS_DNR 0x4000
#define NVME_STATUS_SCT(s) (((s) >> 8) & 0x7)
#define NVME_STATUS_SC(s) ((s)&0xff)

/* Format NVM secure erase settings (cdw10 bits 11:9). */
enum nvme_ses { NVME_SES_NONE = 0, NVME_SES_USER = 1, NVME_SES_CRYPTO = 2 };

/* Sanitize actions (cdw10 bits 2:0). */
enum nvme_sanact {
	NVME_SANACT_BLOCK = 2,
	NVME_SANACT_OVERWRITE = 3,
	NVME_SANACT_CRYPTO = 4,
};

/* Sanitize status log SSTAT bits 2:0. */
enum nvme_sstat {
	NVME_SSTAT_NEVER = 0,
	NVME_SSTAT_DONE = 1,
	NVME_SSTAT_IN_PROGRESS = 2,
	NVME_SSTAT_FAILED = 3,
	NVME_SSTAT_DONE_NO_DEALLOC = 4,
};

/* What Identify Controller says. */
struct nvme_ctrl_info {
	char serial[21];  /* bytes 4-23, trimmed */
	char model[41];   /* bytes 24-63, trimmed */
	char firmware[9]; /* bytes 64-71, trimmed */
	uint16_t oacs;
	int format_supported; /* OACS bit 1 */
	uint32_t sanicap;
	int sanitize_crypto;    /* SANICAP bit 0 */
	int sanitize_block;     /* SANICAP bit 1 */
	int sanitize_overwrite; /* SANICAP bit 2 */
	uint8_t fna;
	int format_all_ns;          /* FNA bit 0: any format hits every namespace */
	int erase_all_ns;           /* FNA bit 1: any secure erase does */
	int crypto_erase_supported; /* FNA bit 2 */
};

/* What Identify Namespace says. */
struct nvme_ns_info {
	uint64_t nsze; /* size in logical blocks */
	uint8_t flbas;
	unsigned lbaf;     /* current format, FLBAS bits 3:0 */
	uint32_t lba_size; /* bytes, from the current LBA format */
};

/* SMART / Health Information log. 128-bit counters are kept as uint64
 * when they fit, else saturated with wide set; the *_bytes doubles are
 * exact to double precision either way. */
struct nvme_health {
	uint8_t critical_warning;
	uint16_t temperature_k;
	int temperature_c;
	uint8_t avail_spare;
	uint8_t spare_thresh;
	uint8_t percent_used;
	uint64_t data_units_read; /* units of 512 000 bytes */
	uint64_t data_units_written;
	double bytes_read; /* data_units_read * 512000 */
	double bytes_written;
	uint64_t host_reads;
	uint64_t host_writes;
	uint64_t power_on_hours;
	uint64_t unsafe_shutdowns;
	uint64_t media_errors;
	uint64_t error_log_entries;
	/* thermal history (NVMe 1.2+; zero on a drive that does not keep it) */
	uint32_t warn_temp_minutes; /* bytes 192-195: composite above WCTEMP */
	uint32_t crit_temp_minutes; /* bytes 196-199: composite above CCTEMP */
	uint32_t tmt1_transitions;  /* bytes 216-219: into thermal management 1 */
	uint32_t tmt2_transitions;  /* bytes 220-223: into thermal management 2 */
	uint32_t tmt1_seconds;      /* bytes 224-227: total time in TMT1 */
	uint32_t tmt2_seconds;      /* bytes 228-231: total time in TMT2 */
	int wide;                   /* a counter exceeded 64 bits */
};

/* Sanitize Status log. */
struct nvme_sanitize_info {
	uint16_t sprog; /* progress / 65536; 0xFFFF = not running */
	uint16_t sstat;
	unsigned state; /* enum nvme_sstat */
};

enum nvme_outcome { NVME_OK, NVME_UNSUPPORTED, NVME_FAILED };

/* Result of a destructive command, for the caller to record. */
struct nvme_result {
	enum nvme_outcome outcome;
	int status;     /* NVMe status from the ioctl, 0 if none */
	char text[256]; /* empty on success */
	double seconds;
};

/* The one place the ioctl is issued: for NVME_IOCTL_ADMIN_CMD returns 0,
 * the NVMe status (> 0) or -errno; for NVME_IOCTL_ID (cmd NULL) the nsid
 * or -errno. Tests replace it. */
typedef int (*nvme_ioctl_t)(int fd, unsigned long req, struct nvme_admin_cmd *cmd);
extern nvme_ioctl_t nvme_ioctl_fn;
/* Sleep between sanitize polls; tests replace it. */
typedef void (*nvme_sleep_t)(unsigned ms);
extern nvme_sleep_t nvme_sleep_fn;

/* Default nvme_ioctl_fn. Returns as nvme_ioctl_t says. */
int nvme_ioctl_default(int fd, unsigned long req, struct nvme_admin_cmd *cmd);

/* Command builders: zero the command, then fill it (tests/unit/test_nvme.c
 * checks every field). buf must hold NVME_IDENTIFY_LEN or NVME_LOG_LEN
 * bytes. */
void nvme_cmd_identify_ctrl(struct nvme_admin_cmd *c, void *buf);
void nvme_cmd_identify_ns(struct nvme_admin_cmd *c, uint32_t nsid, void *buf);
void nvme_cmd_smart_log(struct nvme_admin_cmd *c, void *buf);
void nvme_cmd_sanitize_log(struct nvme_admin_cmd *c, void *buf);
/* Get Log Page of any 512-byte log lid, all namespaces (the OCP
 * extended SMART log is 0xC0: common/device/devstat.h). */
void nvme_cmd_log(struct nvme_admin_cmd *c, uint8_t lid, void *buf);
void nvme_cmd_format(struct nvme_admin_cmd *c, uint32_t nsid, enum nvme_ses ses, unsigned lbaf);
void nvme_cmd_sanitize(struct nvme_admin_cmd *c, enum nvme_sanact action);

/* Parsers of the data those commands return. Each returns 0. */
int nvme_parse_ctrl(const uint8_t buf[NVME_IDENTIFY_LEN], struct nvme_ctrl_info *out);
int nvme_parse_ns(const uint8_t buf[NVME_IDENTIFY_LEN], struct nvme_ns_info *out);
int nvme_parse_health(const uint8_t buf[NVME_LOG_LEN], struct nvme_health *out);
int nvme_parse_sanitize(const uint8_t buf[NVME_LOG_LEN], struct nvme_sanitize_info *out);

/* Describe a status ("Invalid Command Opcode: not supported by this drive
 * (SCT 0x0 SC 0x01, DNR)"). Returns buf. */
char *nvme_status_text(int status, char *buf, size_t len);

/* Whether a status means the drive does not implement the command. */
int nvme_status_unsupported(int status);

/* Namespace id of a namespace block device. Returns 0 or -errno. */
int nvme_get_nsid(int fd, uint32_t *nsid);

/* Issuers. Each returns 0, -EIO with the NVMe status described in err, or
 * -errno from the ioctl. */
int nvme_identify_ctrl(int fd, struct nvme_ctrl_info *out, char *err, size_t len);
int nvme_identify_ns(int fd, uint32_t nsid, struct nvme_ns_info *out, char *err, size_t len);
int nvme_smart_log(int fd, struct nvme_health *out, char *err, size_t len);
int nvme_sanitize_status(int fd, struct nvme_sanitize_info *out, char *err, size_t len);
int nvme_get_log(int fd, uint8_t lid, uint8_t buf[NVME_LOG_LEN], char *err, size_t len);

/* Format NVM of one namespace (nsid 0: the namespace fd is; never all
 * namespaces) keeping its current LBA format, user-data or crypto erase.
 * Checks OACS / FNA first. With FNA bit 0/1 the controller still formats
 * every namespace: the caller checks nvme_ctrl_info for that. Returns 0,
 * -EOPNOTSUPP (outcome unsupported), -EIO or -errno (outcome failed);
 * res->text says why. */
int nvme_format(int fd, uint32_t nsid, int crypto, struct nvme_result *res);

/* Sanitize (block or crypto erase of the whole NVM subsystem, every
 * namespace) after checking SANICAP, then poll the sanitize status log once
 * a second until done, *stop is set or timeout_s (0: NVME_SANITIZE_TIMEOUT_S)
 * passes. Returns 0, -EOPNOTSUPP, -EINTR (stopped; the drive carries on),
 * -ETIMEDOUT, -EIO or -errno; res says why. */
int nvme_sanitize(int fd, int crypto, const atomic_int *stop, unsigned timeout_s,
		  struct nvme_result *res);

#endif
