/* ata: ATA commands through SG_IO ATA PASS-THROUGH(16): IDENTIFY, SMART READ
 * DATA and the security erase flow. Pure builders and parsers apart from the
 * issuers; never opens a device and never decides whether a device may be
 * erased (tgt checks identity and use before calling ata_secure_erase). */
#ifndef WEARMON_ATA_H
#define WEARMON_ATA_H

#include <stddef.h>
#include <stdint.h>

#include <scsi/sg.h>

#define ATA_CDB_LEN 16
#define ATA_SECTOR 512
#define ATA_SENSE_LEN 32
#define ATA_PASSWORD_MAX 32
#define ATA_SMART_ATTRS 30
/* Timeout of commands other than ERASE UNIT. */
#define ATA_CMD_TIMEOUT_MS 30000u
/* ERASE UNIT timeout when the drive could not be identified (hdparm's). */
#define ATA_ERASE_TIMEOUT_UNKNOWN_MS (12u * 3600u * 1000u)

/* What IDENTIFY DEVICE says about a drive. */
struct ata_identity {
	char serial[21];            /* words 10-19, trimmed */
	char firmware[9];           /* words 23-26, trimmed */
	char model[41];             /* words 27-46, trimmed */
	uint64_t sectors;           /* words 100-103 (48-bit), else 60-61 */
	uint16_t security;          /* word 128 as read */
	int sec_supported;          /* word 128 bit 0 */
	int sec_enabled;            /* bit 1: a user password is set */
	int sec_locked;             /* bit 2 */
	int sec_frozen;             /* bit 3 */
	int sec_count_expired;      /* bit 4: too many bad passwords */
	int sec_enhanced;           /* bit 5: enhanced erase supported */
	unsigned erase_minutes;     /* word 89 decoded; 0 = not reported */
	unsigned enh_erase_minutes; /* word 90 decoded; 0 = not reported */
};

/* One SMART attribute; raw is the 48-bit little-endian raw field. */
struct ata_smart_attr {
	uint8_t id;
	uint16_t flags;
	uint8_t current;
	uint8_t worst;
	uint64_t raw;
};

/* The SMART READ DATA page: used attribute slots in table order. */
struct ata_smart {
	uint16_t revision;
	unsigned count;
	struct ata_smart_attr attr[ATA_SMART_ATTRS];
	int checksum_ok; /* all 512 bytes sum to 0 mod 256 */
};

/* ATA registers returned with a command's sense data. */
struct ata_regs {
	int valid; /* 0: the sense carried no registers */
	uint8_t status;
	uint8_t error;
};

/* What ata_secure_erase did, for the caller to record. */
struct ata_erase_report {
	int password_set; /* 1: the drive may still hold password */
	char password[ATA_PASSWORD_MAX + 1];
	int enhanced;
	uint32_t timeout_ms;     /* given to ERASE UNIT; 0 if not reached */
	double seconds;          /* ERASE UNIT duration */
	const char *failed_step; /* command that failed, NULL if none */
	struct ata_regs regs;    /* registers of the failing command */
};

/* The one place SG_IO is issued: returns 0 or -errno. Tests replace it. */
typedef int (*ata_sgio_t)(int fd, struct sg_io_hdr *hdr);
extern ata_sgio_t ata_sgio_fn;

/* Default ata_sgio_fn: ioctl(fd, SG_IO, hdr). Returns 0 or -errno. */
int ata_sgio_ioctl(int fd, struct sg_io_hdr *hdr);

/* CDB builders (ATA PASS-THROUGH (16)); each fills all 16 bytes, which
 * tests/unit/test_ata.c checks byte by byte. */
void ata_cdb_identify(uint8_t cdb[ATA_CDB_LEN]);
void ata_cdb_smart_read_data(uint8_t cdb[ATA_CDB_LEN]);
void ata_cdb_security_set_password(uint8_t cdb[ATA_CDB_LEN]);
/* READ LOG EXT (2Fh) of one 512-byte page of a General Purpose log. */
void ata_cdb_read_log_ext(uint8_t cdb[ATA_CDB_LEN], uint8_t log, uint8_t page);
void ata_cdb_security_erase_prepare(uint8_t cdb[ATA_CDB_LEN]);
void ata_cdb_security_erase_unit(uint8_t cdb[ATA_CDB_LEN]);

/* 512-byte security payload: master/user bit, enhanced bit, password NUL
 * padded at bytes 2..33. Returns 0, or -EINVAL when password is NULL or
 * longer than 32 bytes (out is then zeroed). */
int ata_security_payload(uint8_t out[ATA_SECTOR], const char *password, int master, int enhanced);

/* Parse IDENTIFY DEVICE data. Returns 0, or -EBADMSG when word 255 carries
 * the A5h signature and the checksum is wrong. */
int ata_parse_identify(const uint8_t buf[ATA_SECTOR], struct ata_identity *out);

/* ERASE UNIT timeout in ms per hdparm's rule: max(2v + 60 minutes,
 * sectors/2048/30 + 1800 s), 12 h when id is NULL; clamped to UINT32_MAX. */
uint32_t ata_erase_timeout_ms(const struct ata_identity *id, int enhanced);

/* Parse a SMART READ DATA page. Returns 0 (a bad checksum only clears
 * out->checksum_ok: many drives get it wrong and smartctl carries on). */
int ata_parse_smart(const uint8_t buf[ATA_SECTOR], struct ata_smart *out);

/* Interpret a completed SG_IO header and its sense buffer. regs gets the
 * ATA status/error when the sense carries them. Returns 0 when the command
 * succeeded, -EIO with a one-line reason in err otherwise. */
int ata_check_sense(const struct sg_io_hdr *hdr, struct ata_regs *regs, char *err, size_t len);

/* IDENTIFY DEVICE on fd. Returns 0 or -errno (-EIO, -EBADMSG) with err. */
int ata_identify(int fd, struct ata_identity *out, char *err, size_t len);

/* SMART READ DATA on fd. Returns 0 or -errno with err. */
int ata_smart_read(int fd, struct ata_smart *out, char *err, size_t len);

/* READ LOG EXT of page of log into buf (the Device Statistics log is
 * 04h; common/device/devstat.h parses it). Returns 0 or -errno with err. */
int ata_read_log(int fd, uint8_t log, uint8_t page, uint8_t buf[ATA_SECTOR], char *err, size_t len);

/* Whole security erase: IDENTIFY, refuse unless supported, not frozen, not
 * locked (and enhanced supported when asked), SET PASSWORD, ERASE PREPARE,
 * ERASE UNIT, IDENTIFY to check security ended disabled. Returns 0;
 * -EOPNOTSUPP when the drive lacks or aborts the feature set; -EBUSY when
 * frozen, locked or already holding a password; -EINVAL for a bad password;
 * -EIO or -errno on failure. Whenever rep->password_set ends 1, err names
 * the password and the hdparm command that removes it. */
int ata_secure_erase(int fd, const char *password, int enhanced, struct ata_erase_report *rep,
		     char *err, size_t len);

#endif
