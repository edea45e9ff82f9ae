/* scsi_erase: SANITIZE and FORMAT UNIT of a native SCSI disk. */
#include "device/scsi_erase.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SANITIZE_IMMED 0x80
#define ASC_NOT_READY 0x04
#define ASCQ_SANITIZE_IN_PROGRESS 0x1B

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

scsi_sleep_t scsi_sleep_fn = sleep_ms;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void scsi_cdb_sanitize(uint8_t cdb[10], enum scsi_sanitize_sa sa, int immed)
{
	memset(cdb, 0, 10);
	cdb[0] = SCSI_OP_SANITIZE;
	/* AUSE 0: a failed sanitize can only be ended by another one */
	cdb[1] = (uint8_t)((immed ? SANITIZE_IMMED : 0) | (sa & 0x1f));
}

void scsi_cdb_format_unit(uint8_t cdb[6])
{
	memset(cdb, 0, 6);
	cdb[0] = SCSI_OP_FORMAT_UNIT; /* FMTDATA 0: no parameter list */
}

void scsi_cdb_test_unit_ready(uint8_t cdb[6])
{
	memset(cdb, 0, 6); /* opcode 00h */
}

static const char *sanitize_name(int crypto)
{
	return crypto ? "SANITIZE (cryptographic erase)" : "SANITIZE (block erase)";
}

/* After the erase: the device is ready and reports no failure. */
static int check_ready(int fd, const char *what, struct scsi_erase_result *res)
{
	uint8_t cdb[6];
	char why[160];
	scsi_cdb_test_unit_ready(cdb);
	int rc = scsi_command(fd, cdb, sizeof(cdb), SG_DXFER_NONE, NULL, 0, SCSI_CMD_TIMEOUT_MS,
			      &res->sense, NULL, why, sizeof(why));
	if (rc < 0)
		snprintf(res->text, sizeof(res->text), "SCSI %s: after it, TEST UNIT READY: %s",
			 what, why);
	return rc == -EOPNOTSUPP ? -EIO : rc;
}

/* One poll of a sanitize in progress. Returns 1 while it runs, 0 when it
 * ended, -errno when the device reports a failure or cannot be asked. */
static int sanitize_poll(int fd, int crypto, struct scsi_erase_result *res)
{
	struct scsi_sense s;
	char why[160];
	int rc = scsi_request_sense(fd, &s, why, sizeof(why));
	if (rc < 0) {
		snprintf(res->text, sizeof(res->text), "SCSI %s in progress: %s",
			 sanitize_name(crypto), why);
		return rc;
	}
	if (s.key == SCSI_KEY_NOT_READY && s.asc == ASC_NOT_READY &&
	    s.ascq == ASCQ_SANITIZE_IN_PROGRESS)
		return 1;
	if (s.key == SCSI_KEY_NO_SENSE || s.key == SCSI_KEY_UNIT_ATTENTION ||
	    s.key == SCSI_KEY_RECOVERED)
		return 0;
	res->sense = s;
	snprintf(res->text, sizeof(res->text), "SCSI %s failed: %s", sanitize_name(crypto),
		 scsi_sense_text(&s, why, sizeof(why)));
	return -EIO;
}

static int sanitize_wait(int fd, int crypto, const atomic_int *stop, unsigned timeout_s,
			 struct scsi_erase_result *res)
{
	for (unsigned waited = 0;; waited++) {
		if (stop && atomic_load(stop)) {
			snprintf(res->text, sizeof(res->text),
				 "SCSI %s: stopped while in progress; the device finishes it on "
				 "its own (even across a power cycle)",
				 sanitize_name(crypto));
			return -EINTR;
		}
		if (waited >= timeout_s) {
			snprintf(res->text, sizeof(res->text),
				 "SCSI %s: still in progress after %u s", sanitize_name(crypto),
				 timeout_s);
			return -ETIMEDOUT;
		}
		scsi_sleep_fn(1000);
		int rc = sanitize_poll(fd, crypto, res);
		if (rc <= 0)
			return rc;
	}
}

int scsi_sanitize(int fd, int crypto, const atomic_int *stop, unsigned timeout_s,
		  struct scsi_erase_result *res)
{
	enum scsi_sanitize_sa sa = crypto ? SCSI_SANITIZE_CRYPTO : SCSI_SANITIZE_BLOCK;
	uint8_t cdb[10];
	char why[160];
	memset(res, 0, sizeof(*res));
	double t0 = now_s();
	if (scsi_supports(fd, SCSI_OP_SANITIZE, 1, sa) == 0) {
		snprintf(res->text, sizeof(res->text),
			 "SCSI %s not supported by this drive (REPORT SUPPORTED OPERATION CODES)",
			 sanitize_name(crypto));
		return -EOPNOTSUPP;
	}
	scsi_cdb_sanitize(cdb, sa, 1);
	int rc = scsi_command(fd, cdb, sizeof(cdb), SG_DXFER_NONE, NULL, 0, SCSI_CMD_TIMEOUT_MS,
			      &res->sense, NULL, why, sizeof(why));
	if (rc < 0) {
		snprintf(res->text, sizeof(res->text), "SCSI %s%s: %s", sanitize_name(crypto),
			 rc == -EOPNOTSUPP ? " not supported by this drive" : "", why);
		res->seconds = now_s() - t0;
		return rc;
	}
	rc = sanitize_wait(fd, crypto, stop, timeout_s ? timeout_s : SCSI_SANITIZE_TIMEOUT_S, res);
	if (rc == 0)
		rc = check_ready(fd, sanitize_name(crypto), res);
	res->seconds = now_s() - t0;
	return rc;
}

/* A disk formatted with protection information keeps it only through a
 * FORMAT UNIT that asks for it again. Returns 0, or -EOPNOTSUPP with text. */
static int format_check(int fd, struct scsi_erase_result *res)
{
	struct scsi_capacity cap;
	char why[200];
	int rc = scsi_read_capacity16(fd, &cap, why, sizeof(why));
	if (rc == -EOPNOTSUPP)
		return 0; /* no READ CAPACITY(16): no protection information either */
	if (rc < 0) {
		snprintf(res->text, sizeof(res->text), "SCSI FORMAT UNIT: %s", why);
		return rc;
	}
	if (cap.prot_en) {
		snprintf(res->text, sizeof(res->text),
			 "SCSI FORMAT UNIT: the drive is formatted with protection information "
			 "(type %u), which a format without a parameter list would remove; "
			 "use secure_erase = scsi-sanitize-block or -crypto",
			 cap.p_type + 1);
		return -EOPNOTSUPP;
	}
	return 0;
}

int scsi_format_unit(int fd, struct scsi_erase_result *res)
{
	uint8_t cdb[6];
	char why[160];
	memset(res, 0, sizeof(*res));
	double t0 = now_s();
	int rc = format_check(fd, res);
	if (rc < 0)
		return rc;
	scsi_cdb_format_unit(cdb);
	rc = scsi_command(fd, cdb, sizeof(cdb), SG_DXFER_NONE, NULL, 0, SCSI_FORMAT_TIMEOUT_MS,
			  &res->sense, NULL, why, sizeof(why));
	if (rc < 0)
		snprintf(res->text, sizeof(res->text), "SCSI FORMAT UNIT%s: %s",
			 rc == -EOPNOTSUPP ? " not supported by this drive" : "", why);
	else
		rc = check_ready(fd, "FORMAT UNIT", res);
	res->seconds = now_s() - t0;
	return rc;
}
