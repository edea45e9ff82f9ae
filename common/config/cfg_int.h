/* cfg_int: what the three parts of the configuration module share: the
 * key ids and table, the error list and the value parsers. Only cfg.c,
 * cfg_keys.c, cfg_resolve.c and cfg_campaign.c include it. */
#ifndef WEARMON_CFG_INT_H
#define WEARMON_CFG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "config/cfg.h"

#define MSG_MAX 512
#define LABEL_MAX 208

/* Rows of the key table; the order is the order of the documentation. */
enum key_id {
	K_DATABASE,
	K_METRICS_FILE,
	K_SAMPLE_RETENTION,
	K_DEVICE,
	K_FILE_SIZE,
	K_ALLOW_DESTROY,
	K_ADOPT_NEW_DEVICE,
	K_REGION_OFFSET,
	K_REGION_SIZE,
	K_SIZES,
	K_FILL,
	K_FILL_BLOCK_SIZE,
	K_FILL_QUEUE_DEPTH,
	K_WORKLOAD,
	K_BLOCK_SIZE,
	K_QUEUE_DEPTH,
	K_AMOUNT,
	K_DURATION,
	K_COMPRESSIBILITY,
	K_DEDUPE_PERCENT,
	K_BETWEEN_CYCLES,
	K_TRIM_SCOPE,
	K_CYCLES,
	K_PAUSE,
	K_SAMPLE_INTERVAL,
	K_DEVICE_POLL_INTERVAL,
	K_ALERT_BELOW,
	K_ALERT_CRITICAL,
	K_BASELINE,
	K_SAMPLE_CRASH_BELOW,
	K_RECOVERED_ABOVE,
	K_ALERT_COMMAND,
	K_EXPECT_SERIAL,
	K_FILESYSTEM,
	K_MKFS_OPTIONS,
	K_FORMAT_EACH_SIZE,
	K_SECURE_ERASE,
	K_SECURE_ERASE_COMMAND,
	K_SECURE_ERASE_PASSWORD,
	K_COMMAND_TIMEOUT,
	K_IDLE,
	K_ON_ACTION_ERROR,
	K_BLOCK_SIZES,
	K_READ_PERCENT,
	K_RANDOM_PERCENT,
	K_STRIDE,
	K_VERIFY,
	K_VERIFY_PHASE,
	K_ON_VERIFY_ERROR,
	K_MEASURE,
	K_REPEAT,
	K_STEADY_STATE,
	K_MAX_ROUNDS,
	K_JOBS,
	K_IOENGINE,
	K_IO_URING_SQPOLL,
	K_HIR,
	K_HIR_WAIT_STATES,
	K_HIR_BURST,
	K_HIR_REPETITIONS,
	K_HIR_BASELINE,
	K_HIR_ROUND,
	K_HIR_PURGE,
	K_PTS,
	K_PTS_VARIANT,
	K_PTS_CELL,
	K_PTS_THREADS,
	K_PTS_QUEUE_DEPTH,
	K_PTS_ACTIVE_RANGE,
	K_PTS_XSR_SEGMENT,
	K_PTS_WSAT_AMOUNT,
	K_RATED_TBW,
	K_RATED_DWPD,
	K_WARRANTY_YEARS,
	K_WARRANTY_START,
	K_ACCESS,
	K_BLOCK_ALIGN,
	K__COUNT
};

_Static_assert(K__COUNT <= CFG_MAX_KEYS, "raise CFG_MAX_KEYS");
/* Enum fields are written as int by parse_choice. */
_Static_assert(K__COUNT <= (int)sizeof(struct cfg_set) * 8, "raise struct cfg_set");
_Static_assert(sizeof(enum cfg_workload) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_action) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_trim_scope) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_baseline) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_filesystem) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_erase) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_on_error) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_verify) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_steady) == sizeof(int), "enum size");
_Static_assert(sizeof(enum engine_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_hir_purge) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_pts_variant) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_pts) == sizeof(int), "enum size");

/* Mark key k as set by the file. */
static inline void cfg_set_mark(struct cfg_set *s, int k)
{
	s->bits[k / 64] |= 1ull << (k % 64);
}

/* Whether the file set key k. */
static inline int cfg_set_has(const struct cfg_set *s, int k)
{
	return (s->bits[k / 64] >> (k % 64)) & 1;
}

/* The key table, one row per key id. */
extern const struct cfg_key cfg_table[K__COUNT];

/* ---- error list: collected, then sorted by line ---- */

struct errline {
	int line;
	int seq;
	char *text;
};

struct errs {
	const char *file;
	struct errline *v;
	int n, cap;
	int oom;
};

/* Adds "FILE:LINE: WHAT: message", "FILE:LINE: message" (what NULL) or
 * "FILE: message" (line 0). */
void cfg_err_add(struct errs *e, int line, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Whether an error is already recorded at line. */
int cfg_errs_at(const struct errs *e, int line);

/* Sort, join into err and free. Returns 0 or -EINVAL (-ENOMEM). */
int cfg_errs_finish(struct errs *e, char *err, size_t errlen);

/* Parse v for key k into the field at base + k->offset. Returns 0 or
 * -EINVAL with a message in msg. */
int cfg_set_value(const struct cfg_key *k, void *base, const char *v, char *msg, size_t len);

/* "4096 (4.00 KiB)" for messages. Returns buf. */
const char *cfg_fmt_both(uint64_t b, char *buf, size_t len);

/* Line for messages about key k: where it was set, else the [target]
 * (or [wearmon] for a global key). */
int cfg_key_line(const struct cfg_target *t, int k);

#endif
