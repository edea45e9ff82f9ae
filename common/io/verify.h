/* verify: self-describing sectors for data verification: a header with a
 * CRC-32C (Castagnoli) at the start of every 512-byte sector of a written
 * block, and the check of a block read back. Pure CPU work on caller
 * buffers: no I/O, no allocation; costs nothing unless called. */
#ifndef WEARMON_VERIFY_H
#define WEARMON_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#define VERIFY_SECTOR 512u
#define VERIFY_MAGIC 0x31564d57u /* "WMV1" little-endian */

/* The header at the start of every sector (32 bytes, little-endian). The
 * checksum covers the whole sector with the crc field taken as zero. */
struct verify_header {
	uint32_t magic;
	uint32_t crc;        /* CRC-32C of the sector */
	uint64_t offset;     /* device byte offset of this sector */
	uint64_t generation; /* which write of the phase stored it */
	uint64_t seed;       /* the phase that stored it */
};

/* Why a sector failed. */
enum verify_reason { VERIFY_OK, VERIFY_BAD_MAGIC, VERIFY_BAD_OFFSET, VERIFY_BAD_CRC };

/* CRC-32C of len bytes, continuing from crc (0 to start): the standard
 * check value of "123456789" is 0xE3069283. Table-driven, 8 bytes a step. */
uint32_t verify_crc32c(uint32_t crc, const void *buf, size_t len);

/* Write a header into every sector of buf (len a multiple of 512) that
 * will be stored at device offset. */
void verify_stamp(void *buf, size_t len, uint64_t offset, uint64_t generation, uint64_t seed);

/* Check every sector of buf read from device offset. Returns the number of
 * bad sectors; the first one's offset and reason go to *bad / *why. */
unsigned verify_check(const void *buf, size_t len, uint64_t offset, uint64_t *bad,
		      enum verify_reason *why);

/* "bad magic (not written by wearmond, or lost)", ... */
const char *verify_reason_name(enum verify_reason r);

#endif
