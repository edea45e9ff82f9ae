/* verify: CRC-32C sector headers, stamped on writes and checked on reads. */
#include "io/verify.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82f63b78u /* Castagnoli, reflected */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero
 * bytes, so eight table lookups advance the CRC by eight bytes. */
static void make_tables(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b;
		for (int i = 0; i < 8; i++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1)));
		table[0][b] = c;
	}
	for (uint32_t b = 0; b < 256; b++)
		for (int k = 1; k < 8; k++)
			table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xff];
}

static uint32_t crc_raw(uint32_t c, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= c;
		c = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
		    table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^
		    table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
	return c;
}

uint32_t verify_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&table_once, make_tables);
	return ~crc_raw(~crc, buf, len);
}

/* CRC of a sector whose crc field (bytes 4..7) counts as zero. */
static uint32_t sector_crc(const unsigned char *s)
{
	static const unsigned char zero[4];
	uint32_t c = verify_crc32c(0, s, 4);
	c = verify_crc32c(c, zero, 4);
	return verify_crc32c(c, s + 8, VERIFY_SECTOR - 8);
}

void verify_stamp(void *buf, size_t len, uint64_t offset, uint64_t generation, uint64_t seed)
{
	unsigned char *p = buf;
	for (size_t o = 0; o + VERIFY_SECTOR <= len; o += VERIFY_SECTOR) {
		struct verify_header h = { VERIFY_MAGIC, 0, offset + o, generation, seed };
		memcpy(p + o, &h, sizeof(h));
		h.crc = sector_crc(p + o);
		memcpy(p + o + 4, &h.crc, 4);
	}
}

unsigned verify_check(const void *buf, size_t len, uint64_t offset, uint64_t *bad,
		      enum verify_reason *why)
{
	const unsigned char *p = buf;
	unsigned nbad = 0;
	for (size_t o = 0; o + VERIFY_SECTOR <= len; o += VERIFY_SECTOR) {
		struct verify_header h;
		enum verify_reason r = VERIFY_OK;
		memcpy(&h, p + o, sizeof(h));
		if (h.magic != VERIFY_MAGIC)
			r = VERIFY_BAD_MAGIC;
		else if (h.offset != offset + o)
			r = VERIFY_BAD_OFFSET;
		else if (h.crc != sector_crc(p + o))
			r = VERIFY_BAD_CRC;
		if (r == VERIFY_OK)
			continue;
		if (!nbad++) {
			*bad = offset + o;
			*why = r;
		}
	}
	return nbad;
}

const char *verify_reason_name(enum verify_reason r)
{
	switch (r) {
	case VERIFY_OK: return "ok";
	case VERIFY_BAD_MAGIC: return "no wearmon header (never written by wearmond, or lost)";
	case VERIFY_BAD_OFFSET: return "header names another offset (misplaced write)";
	case VERIFY_BAD_CRC: return "checksum mismatch (corrupted data)";
	}
	return "?";
}
