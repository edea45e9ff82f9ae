/* compress: per-page compressibility with a per-thread zstd context. */
#include "compress.h"

#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>

/* Fastest zstd level: ~1 us per 4 KiB page here, cheap next to a 200 us
 * simulated program, and close enough to a controller's LZ-style engine. */
#define CMP_LEVEL (-1)
#define CMP_MAX_PAGE 65536

static pthread_key_t ctx_key;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;

static void free_ctx(void *p)
{
	ZSTD_freeCCtx(p);
}

static void make_key(void)
{
	if (pthread_key_create(&ctx_key, free_ctx) != 0)
		abort(); /* only when the process is out of keys: our bug */
}

/* FUSE workers come and go; the key's destructor frees their contexts. */
static ZSTD_CCtx *thread_ctx(void)
{
	ZSTD_CCtx *c;

	pthread_once(&ctx_once, make_key);
	c = pthread_getspecific(ctx_key);
	if (!c) {
		c = ZSTD_createCCtx();
		if (c && pthread_setspecific(ctx_key, c) != 0) {
			ZSTD_freeCCtx(c);
			c = NULL;
		}
	}
	return c;
}

uint32_t cmp_units(const void *page, size_t len, uint32_t unit_bytes)
{
	static _Thread_local unsigned char out[CMP_MAX_PAGE + 1024];
	uint32_t full = (uint32_t)((len + unit_bytes - 1) / unit_bytes);
	ZSTD_CCtx *c = thread_ctx();
	size_t n;

	if (!c || len > CMP_MAX_PAGE)
		return full;
	n = ZSTD_compressCCtx(c, out, sizeof(out), page, len, CMP_LEVEL);
	if (ZSTD_isError(n) || n >= len)
		return full;
	n = (n + unit_bytes - 1) / unit_bytes;
	return n < 1 ? 1 : (uint32_t)n;
}
