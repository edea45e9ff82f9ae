/* compress: how much flash a page would take on a compressing controller,
 * estimated with zstd's fastest level. Thread-safe (one context per thread). */
#ifndef SIMSSD_COMPRESS_H
#define SIMSSD_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

/* Units of unit_bytes that page (len bytes) compresses into: 1..len/unit_bytes
 * (incompressible data, or any failure, costs the full page). */
uint32_t cmp_units(const void *page, size_t len, uint32_t unit_bytes);

#endif
