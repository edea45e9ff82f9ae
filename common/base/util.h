/* util: unit parsing, time formatting and small helpers shared by every module.
 * Pure functions only: no I/O besides clocks, no global state. */
#ifndef WEARMON_UTIL_H
#define WEARMON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define WEARMON_VERSION "0.1.0"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* Binary units; in floating-point arithmetic they convert exactly. */
#define MIB (1LL << 20)
#define GIB (1LL << 30)

/* A byte quantity that may be relative to a capacity ("80%"). */
struct qty {
	uint64_t bytes; /* absolute value when !is_percent */
	double percent; /* 0..100 when is_percent */
	int is_percent;
};

/* Parse "4096", "4k", "128KiB", "1.5G", "2T" (k/M/G/T are powers of 1024,
 * kB/MB/GB/TB powers of 1000). Returns 0 or -EINVAL / -ERANGE. */
int util_parse_bytes(const char *s, uint64_t *out);

/* Parse a byte quantity or a percentage ("80%"). Returns 0 or -EINVAL/-ERANGE. */
int util_parse_qty(const char *s, struct qty *out);

/* Resolve a quantity against a capacity; percentages round down to align. */
uint64_t util_qty_resolve(const struct qty *q, uint64_t capacity, uint64_t align);

/* Parse "0", "300", "300s", "5m", "1.5h", "2d", "250ms" into seconds.
 * Returns 0, -EINVAL, or -ERANGE beyond 10^9 seconds. */
int util_parse_duration(const char *s, double *seconds);

/* Parse yes/no/true/false/on/off/1/0. Returns 0 or -EINVAL. */
int util_parse_bool(const char *s, int *out);

/* Parse a decimal integer within [min, max]. Returns 0, -EINVAL or -ERANGE. */
int util_parse_int(const char *s, long long min, long long max, long long *out);

/* Parse a decimal number (no units). Returns 0 or -EINVAL. */
int util_parse_double(const char *s, double *out);

/* Format bytes as "1.50 GiB" into buf. Returns buf. */
char *util_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* ISO-8601 UTC with milliseconds, "2026-12-02T14:25:50.123Z". Returns buf. */
char *util_iso_now(char *buf, size_t len);

/* A duration in words a person reads at a glance: "42 s", "12 min",
 * "3.5 h", "2.1 d"; "-" for NAN. Returns buf. */
char *util_fmt_duration(double s, char *buf, size_t len);

/* Monotonic clock in seconds / nanoseconds. */
double util_now(void);
uint64_t util_now_ns(void);

/* I/O buffers of at least n bytes: a mapping of whole 2 MiB, aligned to
 * 2 MiB and marked for transparent huge pages. NULL when out of memory;
 * *len gets the length to give util_buf_free. */
void *util_buf_alloc(size_t n, size_t *len);
void util_buf_free(void *p, size_t len);

/* Copy with truncation, always NUL-terminated. Returns strlen(src). */
size_t util_strlcpy(char *dst, const char *src, size_t size);
/* Split v on blanks and commas into at most max tokens, copied into buf of
 * bufsz bytes. Returns the number of tokens, or -EINVAL with msg saying what
 * is wrong ("what" names the items: "actions", "sizes", ...). The one
 * tokenizer of every list-valued setting, so that each refuses a value it
 * cannot hold in the same words and none truncates one. */
int util_split_list(const char *v, char *buf, size_t bufsz, char **tok, int max, const char *what,
		    char *msg, size_t len);

/* Strip leading/trailing white space in place. Returns s. */
char *util_strip(char *s);

/* UTIL_AVX2_CLONES before a function: an AVX2 clone picked at load time
 * where the CPU has it, the baseline elsewhere (none under the sanitizers,
 * whose run-time may start after ifunc resolvers run). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UTIL_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(UTIL_NO_CLONES)
#define UTIL_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define UTIL_AVX2_CLONES
#endif

#endif
