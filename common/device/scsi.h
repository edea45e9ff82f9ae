/* scsi: SCSI commands through SG_IO for disks that speak SCSI natively (SAS
 * drives, and any SCSI disk that is neither an ATA drive behind a SCSI-ATA
 * translation layer nor NVMe): INQUIRY and its VPD pages, READ CAPACITY(16),
 * LOG SENSE, REPORT SUPPORTED OPERATION CODES and REQUEST SENSE, with the
 * sense data they return. Pure builders and parsers apart from the issuers;
 * never opens a device and never decides whether a device may be erased (tgt
 * does; the erase flows are scsi_erase.h, the log pages scsi_log.h). Command
 * and page layouts: common/device/DEVICE_LOGS.md. */
#ifndef WEARMON_SCSI_H
#define WEARMON_SCSI_H

#include <stddef.h>
#include <stdint.h>

#include <scsi/sg.h>

#define SCSI_SENSE_LEN 64
#define SCSI_VPD_LEN 512
#define SCSI_INQUIRY_LEN 96
#define SCSI_CAP16_LEN 32
#define SCSI_VPD_MAX 64
/* Timeout of every command but the erases. */
#define SCSI_CMD_TIMEOUT_MS 30000u

/* The sense keys wearmon tells apart (SPC, "Sense key descriptions"). */
enum scsi_sense_key {
	SCSI_KEY_NO_SENSE = 0x0,
	SCSI_KEY_RECOVERED = 0x1,
	SCSI_KEY_NOT_READY = 0x2,
	SCSI_KEY_MEDIUM_ERROR = 0x3,
	SCSI_KEY_HARDWARE_ERROR = 0x4,
	SCSI_KEY_ILLEGAL_REQUEST = 0x5,
	SCSI_KEY_UNIT_ATTENTION = 0x6,
	SCSI_KEY_ABORTED = 0xB,
};

/* What sense data says, fixed (70h/71h) or descriptor (72h/73h) format. */
struct scsi_sense {
	int valid; /* 0: no usable sense data */
	int deferred;
	uint8_t key, asc, ascq;
	int progress_valid; /* sense key specific bytes hold a progress */
	uint16_t progress;  /* fraction of 65536 done */
};

/* Standard INQUIRY data. Strings are printable ASCII, trimmed. */
struct scsi_inquiry {
	uint8_t qualifier; /* byte 0 bits 7:5 */
	uint8_t pdt;       /* byte 0 bits 4:0: 00h a disk */
	uint8_t version;   /* byte 2 */
	int protect;       /* byte 5 bit 0: protection information supported */
	char vendor[9];    /* bytes 8-15: T10 vendor identification */
	char product[17];  /* bytes 16-31 */
	char revision[5];  /* bytes 32-35 */
};

/* Block Limits VPD page (B0h); 0 where the page does not say. */
struct scsi_block_limits {
	uint32_t max_unmap_lba;     /* bytes 20-23: 0 = UNMAP not supported */
	uint32_t max_unmap_desc;    /* bytes 24-27 */
	uint32_t unmap_granularity; /* bytes 28-31, logical blocks */
	int ugavalid;               /* byte 32 bit 7 */
	uint32_t unmap_alignment;   /* bytes 32-35 bits 30:0 */
	uint64_t max_write_same;    /* bytes 36-43, logical blocks */
};

/* Logical Block Provisioning VPD page (B2h). */
struct scsi_lbp {
	int lbpu;                   /* UNMAP supported */
	int lbpws;                  /* WRITE SAME(16) with UNMAP bit */
	int lbpws10;                /* WRITE SAME(10) with UNMAP bit */
	unsigned lbprz;             /* what unmapped blocks read as: 0 not said, 1 zeroes */
	int anc_sup, dp;            /* anchored LBAs; a resource descriptor follows */
	unsigned provisioning_type; /* 0 full, 1 resource, 2 thin */
};

/* READ CAPACITY(16) parameter data. */
struct scsi_capacity {
	uint64_t blocks; /* returned logical block address + 1 */
	uint32_t block_len;
	int prot_en;      /* byte 12 bit 0: formatted with protection information */
	unsigned p_type;  /* byte 12 bits 3:1 */
	int lbpme, lbprz; /* byte 14 bits 7, 6 */
};

/* What a SCSI disk says about itself: scsi_identify. */
struct scsi_info {
	struct scsi_inquiry inq;
	uint8_t vpd[SCSI_VPD_MAX]; /* the Supported VPD Pages list (00h) */
	unsigned nvpd;
	int sat;         /* an ATA drive behind SAT: scsi_is_sat */
	char serial[64]; /* Unit Serial Number (80h); "" when none */
	char wwn[40];    /* from Device Identification (83h): "naa.HEX" or
			    "eui.HEX"; "" when none */
	int has_bl, has_lbp;
	struct scsi_block_limits bl;
	struct scsi_lbp lbp;
	uint16_t rotation; /* B1h medium rotation rate: 1 = not rotating
			      (solid state), 0 = not reported */
};

/* The one place SG_IO is issued: returns 0 or -errno. Tests replace it. */
typedef int (*scsi_sgio_t)(int fd, struct sg_io_hdr *hdr);
extern scsi_sgio_t scsi_sgio_fn;

/* Default scsi_sgio_fn: ioctl(fd, SG_IO, hdr). Returns 0 or -errno. */
int scsi_sgio_ioctl(int fd, struct sg_io_hdr *hdr);

/* CDB builders: each fills every byte of its CDB (6, 10, 12 or 16 bytes),
 * which tests/unit/test_scsi.c checks byte by byte. */
void scsi_cdb_inquiry(uint8_t cdb[6], int evpd, uint8_t page, uint16_t alloc);
void scsi_cdb_request_sense(uint8_t cdb[6], uint8_t alloc);
/* LOG SENSE of page/subpage, cumulative values (PC 01b). */
void scsi_cdb_log_sense(uint8_t cdb[10], uint8_t page, uint8_t subpage, uint16_t alloc);
/* REPORT SUPPORTED OPERATION CODES of one command (reporting options 001b,
 * or 010b with its service action when has_sa). */
void scsi_cdb_report_opcode(uint8_t cdb[12], uint8_t opcode, int has_sa, uint16_t sa,
			    uint32_t alloc);
void scsi_cdb_read_capacity16(uint8_t cdb[16], uint32_t alloc);

/* Parse sense data of n bytes. Returns 0, or -ENODATA when there is none
 * that a response code names (out->valid 0). */
int scsi_parse_sense(const uint8_t *sb, size_t n, struct scsi_sense *out);

/* "ILLEGAL REQUEST, ASC/ASCQ 20h/00h (invalid command operation code)".
 * Returns buf. */
char *scsi_sense_text(const struct scsi_sense *s, char *buf, size_t len);

/* Whether sense says the command or a field of it is not supported
 * (ILLEGAL REQUEST with invalid command operation code, invalid field in
 * CDB or in the parameter list). Returns 1 or 0. */
int scsi_sense_unsupported(const struct scsi_sense *s);

/* Parsers. Each returns 0, or -EBADMSG when the data is too short or
 * does not name the page asked for. */
int scsi_parse_inquiry(const uint8_t *buf, size_t len, struct scsi_inquiry *out);
int scsi_parse_vpd_list(const uint8_t *buf, size_t len, uint8_t *pages, unsigned max, unsigned *n);
int scsi_parse_serial(const uint8_t *buf, size_t len, char *out, size_t olen);
/* The logical unit's NAA (preferred) or EUI-64 designator; -ENODATA when
 * the page has neither. */
int scsi_parse_wwn(const uint8_t *buf, size_t len, char *out, size_t olen);
int scsi_parse_block_limits(const uint8_t *buf, size_t len, struct scsi_block_limits *out);
int scsi_parse_lbp(const uint8_t *buf, size_t len, struct scsi_lbp *out);
int scsi_parse_rotation(const uint8_t *buf, size_t len, uint16_t *rotation);
int scsi_parse_capacity16(const uint8_t *buf, size_t len, struct scsi_capacity *out);
/* REPORT SUPPORTED OPERATION CODES one-command data: *supported 1 when the
 * SUPPORT field says supported (011b, 101b), 0 when not (001b), -1 when the
 * device gave no data about it (000b). */
int scsi_parse_opcode_support(const uint8_t *buf, size_t len, int *supported);

/* Whether INQUIRY and the VPD pages describe an ATA drive behind a SCSI-ATA
 * translation layer (libata, a SAS HBA, a USB bridge): vendor "ATA", or the
 * ATA Information VPD page (89h), which SAT requires, is listed. Returns 1
 * or 0. */
int scsi_is_sat(const struct scsi_inquiry *inq, const uint8_t *vpd, unsigned nvpd);

/* Issue one command. dir is SG_DXFER_NONE, _FROM_DEV or _TO_DEV. Returns
 * 0; -EOPNOTSUPP when the device refuses it as unsupported
 * (scsi_sense_unsupported); -EIO with the status or sense described in err
 * (sense, when not NULL, gets what the device said); or -errno from the
 * ioctl. *resid (when not NULL) gets the bytes not transferred. */
int scsi_command(int fd, const uint8_t *cdb, unsigned cdb_len, int dir, void *buf, unsigned buflen,
		 uint32_t timeout_ms, struct scsi_sense *sense, int *resid, char *err, size_t len);

/* INQUIRY, the Supported VPD Pages and, of 80h, 83h, B0h, B1h, B2h and 89h,
 * those listed. Returns 0 (pages the device lacks leave their fields
 * empty), or -errno with err when the standard INQUIRY fails. */
int scsi_identify(int fd, struct scsi_info *out, char *err, size_t len);

/* READ CAPACITY(16). Returns 0, -EOPNOTSUPP or -errno with err. */
int scsi_read_capacity16(int fd, struct scsi_capacity *out, char *err, size_t len);

/* LOG SENSE of page (subpage 0) into buf, at most len bytes; *got the
 * bytes of the page (header included). Returns 0, -EOPNOTSUPP when the
 * device refuses the command or the page, or -errno, with err. */
int scsi_log_sense(int fd, uint8_t page, uint8_t *buf, size_t len, size_t *got, char *err,
		   size_t elen);

/* The device's pending sense (REQUEST SENSE): a command in progress
 * (sanitize, format) reports its progress here. Returns 0 or -errno. */
int scsi_request_sense(int fd, struct scsi_sense *out, char *err, size_t len);

/* Whether the device supports opcode (and service action sa when has_sa):
 * 1, 0, or -1 when it cannot say (REPORT SUPPORTED OPERATION CODES is
 * itself unsupported or gave no data). */
int scsi_supports(int fd, uint8_t opcode, int has_sa, uint16_t sa);

#endif
