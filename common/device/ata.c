/* ata: ATA PASS-THROUGH(16) builders, parsers and the security erase flow. */
#include "device/ata.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define OP_PASS_THROUGH_16 0x85
#define PROTO_NONDATA 3
#define PROTO_PIO_IN 4
#define PROTO_PIO_OUT 5
#define FL_CK_COND 0x20
#define FL_T_DIR_IN 0x08
#define FL_BYT_BLOK 0x04
#define FL_T_LEN_COUNT 0x02
#define DEV_LBA 0x40

#define CMD_IDENTIFY 0xEC
#define CMD_SMART 0xB0
#define CMD_READ_LOG_EXT 0x2F
#define PROTO_EXTEND 0x01 /* byte 1 bit 0: a 48-bit command */
#define CMD_SEC_SET_PASS 0xF1
#define CMD_SEC_ERASE_PREPARE 0xF3
#define CMD_SEC_ERASE_UNIT 0xF4

#define ST_ERR 0x01
#define ST_DRQ 0x08
#define ER_ABRT 0x04
#define SENSE_KEY_ABORTED 0x0B
#define SG_DRIVER_SENSE 0x08

ata_sgio_t ata_sgio_fn = ata_sgio_ioctl;

int ata_sgio_ioctl(int fd, struct sg_io_hdr *hdr)
{
	return ioctl(fd, SG_IO, hdr) < 0 ? -errno : 0;
}

/* ---- CDB builders ---------------------------------------------------- */

static void cdb_fill(uint8_t cdb[ATA_CDB_LEN], int proto, uint8_t flags, uint8_t feature,
		     uint8_t count, uint8_t lba_mid, uint8_t lba_high, uint8_t device,
		     uint8_t command)
{
	memset(cdb, 0, ATA_CDB_LEN);
	cdb[0] = OP_PASS_THROUGH_16;
	cdb[1] = (uint8_t)(proto << 1);
	cdb[2] = flags;
	cdb[4] = feature;
	cdb[6] = count;
	cdb[10] = lba_mid;
	cdb[12] = lba_high;
	cdb[13] = device;
	cdb[14] = command;
}

/* A security command that sends the 512-byte password sector. */
static void cdb_pio_out(uint8_t cdb[ATA_CDB_LEN], uint8_t command)
{
	cdb_fill(cdb, PROTO_PIO_OUT, FL_BYT_BLOK | FL_T_LEN_COUNT, 0, 1, 0, 0, DEV_LBA, command);
}

void ata_cdb_identify(uint8_t cdb[ATA_CDB_LEN])
{
	cdb_fill(cdb, PROTO_PIO_IN, FL_T_DIR_IN | FL_BYT_BLOK | FL_T_LEN_COUNT, 0, 1, 0, 0, DEV_LBA,
		 CMD_IDENTIFY);
}

void ata_cdb_smart_read_data(uint8_t cdb[ATA_CDB_LEN])
{
	/* SMART needs the 4Fh/C2h key in LBA mid/high; device 0 as smartctl. */
	cdb_fill(cdb, PROTO_PIO_IN, FL_T_DIR_IN | FL_BYT_BLOK | FL_T_LEN_COUNT, 0xD0, 1, 0x4F, 0xC2,
		 0, CMD_SMART);
}

void ata_cdb_read_log_ext(uint8_t cdb[ATA_CDB_LEN], uint8_t log, uint8_t page)
{
	/* LBA(7:0) = log address (byte 8), LBA(15:8) = page (byte 10). */
	cdb_fill(cdb, PROTO_PIO_IN, FL_T_DIR_IN | FL_BYT_BLOK | FL_T_LEN_COUNT, 0, 1, page, 0,
		 DEV_LBA, CMD_READ_LOG_EXT);
	cdb[1] |= PROTO_EXTEND;
	cdb[8] = log;
}

void ata_cdb_security_set_password(uint8_t cdb[ATA_CDB_LEN])
{
	cdb_pio_out(cdb, CMD_SEC_SET_PASS);
}

void ata_cdb_security_erase_prepare(uint8_t cdb[ATA_CDB_LEN])
{
	/* ck_cond: a non-data command returns its registers only this way. */
	cdb_fill(cdb, PROTO_NONDATA, FL_CK_COND, 0, 0, 0, 0, DEV_LBA, CMD_SEC_ERASE_PREPARE);
}

void ata_cdb_security_erase_unit(uint8_t cdb[ATA_CDB_LEN])
{
	cdb_pio_out(cdb, CMD_SEC_ERASE_UNIT);
}

int ata_security_payload(uint8_t out[ATA_SECTOR], const char *password, int master, int enhanced)
{
	memset(out, 0, ATA_SECTOR);
	if (!password)
		return -EINVAL;
	size_t n = strlen(password);
	if (n > ATA_PASSWORD_MAX)
		return -EINVAL;
	out[0] = (uint8_t)((master ? 0x01 : 0) | (enhanced ? 0x02 : 0));
	memcpy(out + 2, password, n);
	return 0;
}

/* ---- parsers ---------------------------------------------------------- */

static uint16_t word(const uint8_t *buf, unsigned w)
{
	return (uint16_t)(buf[2 * w] | buf[2 * w + 1] << 8);
}

/* Strings hold two characters per word, first one in the high byte. */
static void id_string(const uint8_t *buf, unsigned first, unsigned words, char *out)
{
	size_t n = 0;
	for (unsigned w = first; w < first + words; w++) {
		uint16_t v = word(buf, w);
		out[n++] = (char)(v >> 8);
		out[n++] = (char)(v & 0xff);
	}
	out[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
			out[i] = out[i] ? '?' : ' ';
	while (n > 0 && out[n - 1] == ' ')
		out[--n] = '\0';
	size_t lead = strspn(out, " ");
	memmove(out, out + lead, n - lead + 1);
}

/* Words 89/90: bit 15 selects the 15-bit form; units of 2 minutes. */
static unsigned erase_minutes(uint16_t w)
{
	unsigned v = (w & 0x8000) ? (w & 0x7fffu) : (w & 0xffu);
	return 2 * v;
}

int ata_parse_identify(const uint8_t buf[ATA_SECTOR], struct ata_identity *out)
{
	memset(out, 0, sizeof(*out));
	if ((word(buf, 255) & 0xff) == 0xA5) {
		uint8_t sum = 0;
		for (unsigned i = 0; i < ATA_SECTOR; i++)
			sum = (uint8_t)(sum + buf[i]);
		if (sum != 0)
			return -EBADMSG;
	}
	id_string(buf, 10, 10, out->serial);
	id_string(buf, 23, 4, out->firmware);
	id_string(buf, 27, 20, out->model);
	uint64_t lba48 = 0;
	for (unsigned i = 0; i < 4; i++)
		lba48 |= (uint64_t)word(buf, 100 + i) << (16 * i);
	int has48 = (word(buf, 83) & 0xC400) == 0x4400;
	out->sectors = has48 && lba48 ? lba48 : ((uint64_t)word(buf, 61) << 16 | word(buf, 60));
	uint16_t s = word(buf, 128);
	out->security = s;
	out->sec_supported = !!(s & 0x01);
	out->sec_enabled = !!(s & 0x02);
	out->sec_locked = !!(s & 0x04);
	out->sec_frozen = !!(s & 0x08);
	out->sec_count_expired = !!(s & 0x10);
	out->sec_enhanced = !!(s & 0x20);
	out->erase_minutes = erase_minutes(word(buf, 89));
	out->enh_erase_minutes = erase_minutes(word(buf, 90));
	return 0;
}

uint32_t ata_erase_timeout_ms(const struct ata_identity *id, int enhanced)
{
	if (!id)
		return ATA_ERASE_TIMEOUT_UNKNOWN_MS;
	unsigned minutes = enhanced ? id->enh_erase_minutes : id->erase_minutes;
	/* The drive's estimate plus an hour; an unknown estimate (0) leaves
	 * just the hour. Capacity guess: MiB at 30 MiB/s plus half an hour. */
	uint64_t est_s = ((uint64_t)minutes + 60) * 60;
	uint64_t cap_s = id->sectors / 2048 / 30 + 1800;
	uint64_t ms = (est_s > cap_s ? est_s : cap_s) * 1000;
	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

int ata_parse_smart(const uint8_t buf[ATA_SECTOR], struct ata_smart *out)
{
	memset(out, 0, sizeof(*out));
	out->revision = word(buf, 0);
	for (unsigned i = 0; i < ATA_SMART_ATTRS; i++) {
		const uint8_t *e = buf + 2 + 12 * i;
		if (e[0] == 0)
			continue;
		struct ata_smart_attr *a = &out->attr[out->count++];
		a->id = e[0];
		a->flags = (uint16_t)(e[1] | e[2] << 8);
		a->current = e[3];
		a->worst = e[4];
		for (unsigned b = 0; b < 6; b++)
			a->raw |= (uint64_t)e[5 + b] << (8 * b);
	}
	uint8_t sum = 0;
	for (unsigned i = 0; i < ATA_SECTOR; i++)
		sum = (uint8_t)(sum + buf[i]);
	out->checksum_ok = sum == 0;
	return 0;
}

/* ---- sense ------------------------------------------------------------ */

/* Find the ATA Status Return descriptor (09h) in descriptor sense. */
static const uint8_t *find_ata_desc(const uint8_t *sb, unsigned n)
{
	unsigned end = 8u + sb[7];
	if (end > n)
		end = n;
	for (unsigned off = 8; off + 2 <= end; off += 2u + sb[off + 1]) {
		if (sb[off] == 0x09 && off + 14 <= end)
			return sb + off;
	}
	return NULL;
}

/* Pull ATA registers out of sense data; leaves regs->valid 0 if absent. */
static void sense_regs(const uint8_t *sb, unsigned n, struct ata_regs *regs)
{
	if (n < 8)
		return;
	uint8_t code = sb[0] & 0x7f;
	if (code == 0x72 || code == 0x73) {
		const uint8_t *d = find_ata_desc(sb, n);
		if (d) {
			regs->valid = 1;
			regs->error = d[3];
			regs->status = d[13];
		}
	} else if ((code == 0x70 || code == 0x71) && n >= 14) {
		/* 00/1D on success; libata reports a failed command as
		 * ABORTED COMMAND with the registers in the same place. */
		int ptinfo = sb[12] == 0x00 && sb[13] == 0x1D;
		int aborted = (sb[2] & 0x0f) == SENSE_KEY_ABORTED && (sb[4] & ST_ERR);
		if (ptinfo || aborted) {
			regs->valid = 1;
			regs->error = sb[3];
			regs->status = sb[4];
		}
	}
}

/* One-line description of sense data that carried no ATA registers. */
static void sense_text(const uint8_t *sb, unsigned n, char *err, size_t len)
{
	uint8_t code = n ? sb[0] & 0x7f : 0;
	if ((code == 0x70 || code == 0x71) && n >= 14)
		snprintf(err, len, "SCSI sense key 0x%x ASC/ASCQ 0x%02x/0x%02x", sb[2] & 0x0f,
			 sb[12], sb[13]);
	else if ((code == 0x72 || code == 0x73) && n >= 4)
		snprintf(err, len, "SCSI sense key 0x%x ASC/ASCQ 0x%02x/0x%02x", sb[1] & 0x0f,
			 sb[2], sb[3]);
	else
		snprintf(err, len, "SCSI check condition without usable sense");
}

int ata_check_sense(const struct sg_io_hdr *hdr, struct ata_regs *regs, char *err, size_t len)
{
	const uint8_t *sb = hdr->sbp;
	unsigned n = hdr->sb_len_wr;
	if (n > hdr->mx_sb_len)
		n = hdr->mx_sb_len;
	if (!sb)
		n = 0;
	memset(regs, 0, sizeof(*regs));
	if (hdr->host_status != 0 ||
	    (hdr->driver_status != 0 && hdr->driver_status != SG_DRIVER_SENSE) ||
	    (hdr->status != 0 && hdr->status != 0x02)) {
		snprintf(err, len, "SG_IO failed (scsi status 0x%02x host 0x%x driver 0x%x)",
			 hdr->status, hdr->host_status, hdr->driver_status);
		return -EIO;
	}
	sense_regs(sb, n, regs);
	if (regs->valid) {
		if (!(regs->status & (ST_ERR | ST_DRQ)))
			return 0;
		snprintf(err, len, "ATA command %s (status 0x%02x error 0x%02x)",
			 (regs->error & ER_ABRT) ? "aborted" : "failed", regs->status, regs->error);
		return -EIO;
	}
	if (hdr->status == 0x02 || n > 0) {
		sense_text(sb, n, err, len);
		return -EIO;
	}
	return 0;
}

/* ---- issuers ---------------------------------------------------------- */

/* Issue one pass-through command. Returns 0, -errno from the ioctl, or
 * -EIO from the sense (regs filled when the drive answered). */
static int issue(int fd, const uint8_t cdb[ATA_CDB_LEN], int dir, void *buf, unsigned buflen,
		 uint32_t timeout_ms, struct ata_regs *regs, char *err, size_t len)
{
	uint8_t cdbcopy[ATA_CDB_LEN], sense[ATA_SENSE_LEN] = { 0 };
	struct sg_io_hdr h;
	memcpy(cdbcopy, cdb, ATA_CDB_LEN);
	memset(&h, 0, sizeof(h));
	memset(regs, 0, sizeof(*regs));
	h.interface_id = 'S';
	h.cmd_len = ATA_CDB_LEN;
	h.cmdp = cdbcopy;
	h.mx_sb_len = sizeof(sense);
	h.sbp = sense;
	h.dxfer_direction = dir;
	h.dxferp = buf;
	h.dxfer_len = buflen;
	h.timeout = timeout_ms;
	int rc = ata_sgio_fn(fd, &h);
	if (rc < 0) {
		snprintf(err, len, "SG_IO: %s", strerror(-rc));
		return rc;
	}
	return ata_check_sense(&h, regs, err, len);
}

int ata_identify(int fd, struct ata_identity *out, char *err, size_t len)
{
	uint8_t cdb[ATA_CDB_LEN], buf[ATA_SECTOR] = { 0 };
	struct ata_regs regs;
	char why[160];
	ata_cdb_identify(cdb);
	int rc = issue(fd, cdb, SG_DXFER_FROM_DEV, buf, sizeof(buf), ATA_CMD_TIMEOUT_MS, &regs, why,
		       sizeof(why));
	if (rc == 0 && (rc = ata_parse_identify(buf, out)) < 0)
		snprintf(why, sizeof(why), "bad checksum in IDENTIFY data");
	if (rc < 0)
		snprintf(err, len, "ATA IDENTIFY DEVICE: %s", why);
	return rc;
}

int ata_smart_read(int fd, struct ata_smart *out, char *err, size_t len)
{
	uint8_t cdb[ATA_CDB_LEN], buf[ATA_SECTOR] = { 0 };
	struct ata_regs regs;
	char why[160];
	ata_cdb_smart_read_data(cdb);
	int rc = issue(fd, cdb, SG_DXFER_FROM_DEV, buf, sizeof(buf), ATA_CMD_TIMEOUT_MS, &regs, why,
		       sizeof(why));
	if (rc < 0) {
		snprintf(err, len, "ATA SMART READ DATA: %s", why);
		return rc;
	}
	return ata_parse_smart(buf, out);
}

int ata_read_log(int fd, uint8_t log, uint8_t page, uint8_t buf[ATA_SECTOR], char *err, size_t len)
{
	uint8_t cdb[ATA_CDB_LEN];
	struct ata_regs regs;
	char why[160];
	ata_cdb_read_log_ext(cdb, log, page);
	memset(buf, 0, ATA_SECTOR);
	int rc = issue(fd, cdb, SG_DXFER_FROM_DEV, buf, ATA_SECTOR, ATA_CMD_TIMEOUT_MS, &regs, why,
		       sizeof(why));
	if (rc < 0)
		snprintf(err, len, "ATA READ LOG EXT log 0x%02x page 0x%02x: %s", log, page, why);
	return rc;
}

/* ---- security erase ----------------------------------------------------- */

/* State shared by the steps of one erase. */
struct erase {
	int fd;
	const char *password;
	struct ata_erase_report *rep;
	char *err;
	size_t len;
	char dev[64]; /* for the unlock hint */
};

/* Device path of fd for messages, or a placeholder that names no disk. */
static void fd_path(int fd, char *out, size_t len)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = fd >= 0 ? readlink(link, out, len - 1) : -1;
	if (n <= 0 || strncmp(out, "/dev/", 5) != 0) {
		snprintf(out, len, "DEVICE");
		return;
	}
	out[n] = '\0';
}

/* The password as the operator must type it (quoted when needed). */
static void shell_word(const char *s, char *out, size_t len)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:+=@%/";
	if (*s && strspn(s, safe) == strlen(s)) {
		snprintf(out, len, "%s", s);
		return;
	}
	size_t n = 0;
	out[n++] = '\'';
	for (; *s && n + 6 < len; s++) {
		if (*s == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *s;
		}
	}
	out[n++] = '\'';
	out[n] = '\0';
}

/* Fail a step after the password may have been set: say how to unlock. */
static int fail_locked(struct erase *e, int rc, const char *what)
{
	char pw[4 * ATA_PASSWORD_MAX + 8];
	shell_word(e->password, pw, sizeof(pw));
	e->rep->password_set = 1;
	snprintf(e->err, e->len,
		 "%s; the drive keeps user security password \"%s\": remove it "
		 "with 'hdparm --user-master u --security-disable %s %s' (after a "
		 "power cycle first 'hdparm --user-master u --security-unlock %s %s')",
		 what, e->password, pw, e->dev, pw, e->dev);
	return rc;
}

/* Send one step; on failure note which step and its registers. */
static int step(struct erase *e, const char *name, const uint8_t *cdb, int dir, uint8_t *payload,
		uint32_t timeout_ms, char *why, size_t wlen)
{
	struct ata_regs regs;
	int rc = issue(e->fd, cdb, dir, payload, payload ? ATA_SECTOR : 0, timeout_ms, &regs, why,
		       wlen);
	if (rc < 0) {
		e->rep->failed_step = name;
		e->rep->regs = regs;
	}
	return rc;
}

/* Refuse a drive whose security state does not allow an erase now. */
static int check_state(const struct ata_identity *id, int enhanced, char *err, size_t len)
{
	if (!id->sec_supported) {
		snprintf(err, len,
			 "ATA security erase: the drive does not "
			 "support the security feature set (word 128 = 0x%04x)",
			 id->security);
		return -EOPNOTSUPP;
	}
	if (enhanced && !id->sec_enhanced) {
		snprintf(err, len,
			 "ATA security erase: the drive does not "
			 "support enhanced erase; use secure_erase = ata");
		return -EOPNOTSUPP;
	}
	if (id->sec_frozen) {
		snprintf(err, len,
			 "ATA security erase: the drive is frozen "
			 "(security commands refused until reset); suspend and "
			 "resume the machine or power-cycle the drive, then retry");
		return -EBUSY;
	}
	if (id->sec_locked || id->sec_enabled || id->sec_count_expired) {
		snprintf(err, len,
			 "ATA security erase: the drive already has "
			 "a security password (%s); unlock or remove it with "
			 "hdparm --security-unlock/--security-disable first",
			 id->sec_locked          ? "locked"
			 : id->sec_count_expired ? "password attempts exhausted, "
						   "power-cycle"
						 : "enabled");
		return -EBUSY;
	}
	return 0;
}

/* SET PASSWORD failed: find out whether the drive took it anyway. */
static int set_password_failed(struct erase *e, int rc, const char *why)
{
	struct ata_identity id;
	char tmp[160];
	int aborted = e->rep->regs.valid && (e->rep->regs.error & ER_ABRT);
	if (ata_identify(e->fd, &id, tmp, sizeof(tmp)) < 0 || id.sec_enabled) {
		char what[320];
		snprintf(what, sizeof(what), "ATA SECURITY SET PASSWORD: %s", why);
		return fail_locked(e, rc, what);
	}
	snprintf(e->err, e->len,
		 "ATA security erase: the drive %s SECURITY SET "
		 "PASSWORD (%s): security not supported or refused; no "
		 "password was set, nothing is locked",
		 aborted ? "aborted" : "failed", why);
	return aborted ? -EOPNOTSUPP : rc;
}

/* PREPARE then ERASE UNIT, back to back as the standard requires. */
static int erase_unit(struct erase *e, uint8_t *payload, int enhanced, uint32_t timeout_ms)
{
	uint8_t cdb[ATA_CDB_LEN];
	char why[160], what[320];
	ata_cdb_security_erase_prepare(cdb);
	int rc = step(e, "SECURITY ERASE PREPARE", cdb, SG_DXFER_NONE, NULL, ATA_CMD_TIMEOUT_MS,
		      why, sizeof(why));
	if (rc < 0) {
		snprintf(what, sizeof(what), "ATA SECURITY ERASE PREPARE: %s", why);
		return fail_locked(e, rc, what);
	}
	ata_security_payload(payload, e->password, 0, enhanced);
	ata_cdb_security_erase_unit(cdb);
	e->rep->timeout_ms = timeout_ms;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = step(e, "SECURITY ERASE UNIT", cdb, SG_DXFER_TO_DEV, payload, timeout_ms, why,
		  sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	e->rep->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (rc < 0) {
		snprintf(what, sizeof(what), "ATA SECURITY ERASE UNIT: %s", why);
		return fail_locked(e, rc, what);
	}
	return 0;
}

/* After ERASE UNIT security must be disabled again. */
static int verify_disabled(struct erase *e)
{
	struct ata_identity id;
	char why[200], what[320];
	int rc = ata_identify(e->fd, &id, why, sizeof(why));
	if (rc < 0) {
		e->rep->failed_step = "IDENTIFY DEVICE";
		snprintf(what, sizeof(what), "after the erase, %s", why);
		return fail_locked(e, rc, what);
	}
	if (id.sec_enabled || id.sec_locked) {
		e->rep->failed_step = "IDENTIFY DEVICE";
		snprintf(what, sizeof(what),
			 "after the erase security is still "
			 "enabled (word 128 = 0x%04x)",
			 id.security);
		return fail_locked(e, -EIO, what);
	}
	e->rep->password_set = 0;
	return 0;
}

int ata_secure_erase(int fd, const char *password, int enhanced, struct ata_erase_report *rep,
		     char *err, size_t len)
{
	struct erase e = { .fd = fd, .password = password, .rep = rep, .err = err, .len = len };
	uint8_t payload[ATA_SECTOR], cdb[ATA_CDB_LEN];
	struct ata_identity id;
	char why[160];
	memset(rep, 0, sizeof(*rep));
	rep->enhanced = !!enhanced;
	if (ata_security_payload(payload, password, 0, 0) < 0) {
		snprintf(err, len,
			 "ATA security erase: the password must be "
			 "at most %d bytes",
			 ATA_PASSWORD_MAX);
		return -EINVAL;
	}
	snprintf(rep->password, sizeof(rep->password), "%s", password);
	fd_path(fd, e.dev, sizeof(e.dev));
	int rc = ata_identify(fd, &id, err, len);
	if (rc < 0)
		return rc;
	if ((rc = check_state(&id, enhanced, err, len)) < 0)
		return rc;
	ata_cdb_security_set_password(cdb);
	rc = step(&e, "SECURITY SET PASSWORD", cdb, SG_DXFER_TO_DEV, payload, ATA_CMD_TIMEOUT_MS,
		  why, sizeof(why));
	if (rc < 0)
		return set_password_failed(&e, rc, why);
	rep->password_set = 1;
	rc = erase_unit(&e, payload, enhanced, ata_erase_timeout_ms(&id, enhanced));
	if (rc < 0)
		return rc;
	return verify_disabled(&e);
}
