/* scsi_erase: erasing a native SCSI disk whole: SANITIZE (block erase or
 * cryptographic erase, started in the background and polled until done)
 * and FORMAT UNIT (waited for). Each checks first what the device says it
 * supports; never decides whether a device may be erased (tgt does: both
 * act on the whole logical unit). */
#ifndef WEARMON_SCSI_ERASE_H
#define WEARMON_SCSI_ERASE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "device/scsi.h"

#define SCSI_OP_SANITIZE 0x48
#define SCSI_OP_FORMAT_UNIT 0x04
/* FORMAT UNIT runs inside the command: allow a slow device. */
#define SCSI_FORMAT_TIMEOUT_MS (12u * 3600u * 1000u)
/* Longest a sanitize may run before wearmond stops waiting (it goes on in
 * the device). */
#define SCSI_SANITIZE_TIMEOUT_S (24u * 3600u)

/* SANITIZE service actions (SBC). */
enum scsi_sanitize_sa {
	SCSI_SANITIZE_OVERWRITE = 0x01,
	SCSI_SANITIZE_BLOCK = 0x02,
	SCSI_SANITIZE_CRYPTO = 0x03,
	SCSI_SANITIZE_EXIT_FAILURE = 0x1F,
};

/* What an erase did, for the caller to record. */
struct scsi_erase_result {
	char text[256]; /* empty on success */
	double seconds;
	struct scsi_sense sense; /* of the command that failed, if any */
};

/* Sleep between polls; tests replace it. */
typedef void (*scsi_sleep_t)(unsigned ms);
extern scsi_sleep_t scsi_sleep_fn;

/* CDB builders (tests/unit/test_scsi.c checks every byte). SANITIZE with
 * no parameter list (block and crypto erase take none); IMMED returns at
 * once and leaves the progress to REQUEST SENSE. */
void scsi_cdb_sanitize(uint8_t cdb[10], enum scsi_sanitize_sa sa, int immed);
/* FORMAT UNIT with no parameter list: the device's default format, its
 * logical block length kept. */
void scsi_cdb_format_unit(uint8_t cdb[6]);
void scsi_cdb_test_unit_ready(uint8_t cdb[6]);

/* SANITIZE of the whole logical unit, block erase or (crypto) cryptographic
 * erase, after REPORT SUPPORTED OPERATION CODES when the device has it;
 * then REQUEST SENSE once a second until the device no longer reports
 * "sanitize in progress", *stop is set (NULL: never) or timeout_s (0:
 * SCSI_SANITIZE_TIMEOUT_S) passes; then TEST UNIT READY. Returns 0,
 * -EOPNOTSUPP, -EINTR (stopped; the device carries on), -ETIMEDOUT, -EIO
 * or -errno; res->text says why. */
int scsi_sanitize(int fd, int crypto, const atomic_int *stop, unsigned timeout_s,
		  struct scsi_erase_result *res);

/* FORMAT UNIT of the whole logical unit, refused (-EOPNOTSUPP) when it is
 * formatted with protection information (a FORMAT UNIT without a parameter
 * list would remove it), then TEST UNIT READY. Returns 0, -EOPNOTSUPP, -EIO
 * or -errno; res->text says why. */
int scsi_format_unit(int fd, struct scsi_erase_result *res);

#endif
