/* scsi_log: what a native SCSI disk says about its health in its log pages
 * (LOG SENSE): the supported pages list, Write and Read Error Counters,
 * Temperature, Solid State Media, Background Scan Results and Informational
 * Exceptions, parsed from their bytes into one reading; the evidence it
 * gives (devstat.h) and the health snapshot's JSON. The parsers and the
 * JSON are pure; scsi_logs_read issues the commands (scsi.h). Layouts:
 * common/device/DEVICE_LOGS.md, "SCSI log pages". */
#ifndef WEARMON_SCSI_LOG_H
#define WEARMON_SCSI_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "device/devstat.h"
#include "device/scsi.h"
#include "device/tgt.h"

#define SCSI_LOG_LEN 1024
#define SCSI_LOG_PAGES_MAX 64

/* Page codes wearmon reads. */
enum scsi_log_page {
	SCSI_LOG_SUPPORTED = 0x00,
	SCSI_LOG_WRITE_ERRORS = 0x02,
	SCSI_LOG_READ_ERRORS = 0x03,
	SCSI_LOG_TEMPERATURE = 0x0D,
	SCSI_LOG_SSM = 0x11, /* Solid State Media */
	SCSI_LOG_BACKGROUND = 0x15,
	SCSI_LOG_IE = 0x2F, /* Informational Exceptions */
};

/* One reading of a disk's log pages; a value the disk did not give is
 * unknown (has 0). */
struct scsi_logs {
	int answered;    /* LOG SENSE of the supported pages list worked */
	char error[200]; /* why not, when not */
	uint8_t pages[SCSI_LOG_PAGES_MAX];
	unsigned npages;
	struct devstat_opt write_bytes;       /* 02h, 0005h: total bytes processed */
	struct devstat_opt write_uncorrected; /* 02h, 0006h: total uncorrected errors */
	struct devstat_opt read_bytes;        /* 03h, 0005h */
	struct devstat_opt read_uncorrected;  /* 03h, 0006h */
	struct devstat_opt temp_c;            /* 0Dh, 0000h: temperature now */
	struct devstat_opt ref_temp_c;        /* 0Dh, 0001h: reference (highest rated) */
	struct devstat_opt pct_used;          /* 11h, 0001h: percentage used endurance */
	struct devstat_opt power_on_minutes;  /* 15h, 0000h: accumulated power on */
	struct devstat_opt ie_asc, ie_ascq;   /* 2Fh, 0000h: the failure prediction */
	struct devstat_opt ie_temp_c;         /* 2Fh, 0000h: most recent temperature */
};

/* The value of parameter code in a log page of len bytes. Returns 0 with
 * *val and *vlen, -ENOENT when the page lacks it, or -EBADMSG when the page
 * header is cut short. */
int scsi_log_param(const uint8_t *page, size_t len, uint16_t code, const uint8_t **val,
		   unsigned *vlen);

/* The Supported Log Pages page (00h) into pages. Returns 0 or -EBADMSG. */
int scsi_log_parse_supported(const uint8_t *buf, size_t len, uint8_t *pages, unsigned max,
			     unsigned *n);

/* Parse one page of the list above into out (its fields only; the page
 * code is read from the page header). Returns 0, -EBADMSG, or -ENOTSUP for
 * a page this parser does not know. */
int scsi_log_parse(const uint8_t *buf, size_t len, struct scsi_logs *out);

/* Whether the supported list names page. Returns 1 or 0. */
int scsi_logs_has(const struct scsi_logs *l, uint8_t page);

/* Fill d from l: host bytes (write bytes processed), temperature (0Dh,
 * else the Informational Exceptions reading), media errors (uncorrected
 * write + read errors). Source "scsi". */
void scsi_logs_devstat(const struct scsi_logs *l, struct devstat *d);

/* Why each evidence field l leaves unknown is unknown, one clause a group
 * of fields ("host bytes, temperature, media errors: LOG SENSE ...;
 * media bytes, throttle time, spare: no standard SCSI log page has
 * them"). Returns buf. */
char *scsi_logs_absent(const struct scsi_logs *l, char *buf, size_t len);

/* Read the supported pages list, then every page of the list above that
 * it names. Returns 0 when LOG SENSE answered, else -errno with the reason
 * in l->error (a page that fails later is left unknown). */
int scsi_logs_read(int fd, struct scsi_logs *l);

/* The health snapshot's "scsi" object: identity, what the device
 * advertises for UNMAP (provisioning_mode: the kernel's choice, "" when
 * unknown) and every log value, unknown ones null. Returns the length
 * written (truncated to len - 1 like snprintf). */
size_t scsi_health_json(const struct scsi_info *id, const struct scsi_logs *l,
			const char *provisioning_mode, char *buf, size_t len);

/* One line for the log: vendor, product, revision, serial, WWN, medium,
 * and the discard the device advertises and the kernel uses. Returns buf. */
char *scsi_describe(const struct scsi_info *id, const char *provisioning_mode, char *buf,
		    size_t len);

/* scsi_describe of the disk tg names, read now. Returns 0 or -errno. */
int scsi_describe_target(const struct tgt *tg, char *buf, size_t len);

#endif
