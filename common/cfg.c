/* cfg: the configuration file (inih), table-driven keys with defaults and
 * ranges, and resolution of relative sizes once a capacity is known. */
#include "cfg.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "workload.h"

#define MSG_MAX 512
#define LABEL_MAX 208
#define FILE_MAX (1 << 20)
#define MIB (1LL << 20)

/* Rows of the key table; the order is the order of the documentation. */
enum key_id {
	K_DATABASE,
	K_DEVICE, K_FILE_SIZE, K_ALLOW_DESTROY, K_REGION_OFFSET, K_REGION_SIZE,
	K_SIZES, K_FILL, K_FILL_BLOCK_SIZE, K_FILL_QUEUE_DEPTH, K_WORKLOAD,
	K_BLOCK_SIZE, K_QUEUE_DEPTH, K_AMOUNT, K_DURATION, K_COMPRESSIBILITY,
	K_BETWEEN_CYCLES, K_TRIM_SCOPE, K_CYCLES, K_PAUSE, K_SAMPLE_INTERVAL,
	K_ALERT_BELOW, K_ALERT_CRITICAL, K_BASELINE, K_SAMPLE_CRASH_BELOW,
	K_RECOVERED_ABOVE, K_ALERT_COMMAND,
	K_EXPECT_SERIAL, K_FILESYSTEM, K_MKFS_OPTIONS, K_FORMAT_EACH_SIZE,
	K_SECURE_ERASE, K_SECURE_ERASE_COMMAND, K_SECURE_ERASE_PASSWORD, K_IDLE,
	K_ON_ACTION_ERROR,
	K_BLOCK_SIZES, K_READ_PERCENT, K_RANDOM_PERCENT, K_STRIDE, K_VERIFY,
	K_VERIFY_PHASE, K_ON_VERIFY_ERROR, K_MEASURE, K_REPEAT,
	K_STEADY_STATE, K_MAX_ROUNDS, K_JOBS,
	K__COUNT
};

_Static_assert(K__COUNT <= CFG_MAX_KEYS, "raise CFG_MAX_KEYS");
/* Enum fields are written as int by parse_choice. */
_Static_assert(sizeof(enum cfg_workload) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_action) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_trim_scope) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_baseline) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_filesystem) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_erase) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_on_error) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_verify) == sizeof(int), "enum size");
_Static_assert(sizeof(enum cfg_steady) == sizeof(int), "enum size");

static const char *const workload_names[] = {
	[WL_SEQWRITE] = "seqwrite", [WL_SEQREAD] = "seqread",
	[WL_RANDWRITE] = "randwrite", [WL_RANDREAD] = "randread",
	[WL_REWRITE] = "rewrite", [WL_BACKREAD] = "backread",
	[WL_STRIDEREAD] = "strideread", [WL_RANDRW] = "randrw", [WL_SEQRW] = "seqrw",
	[WL_DATABASE] = "database", [WL_FILESERVER] = "fileserver",
	[WL_WEBSERVER] = "webserver", [WL_WORKSTATION] = "workstation",
	[WL_STREAMING] = "streaming",
	[WL__COUNT] = NULL,
};
static const char *const action_names[] = {
	[ACT_NONE] = "none", [ACT_TRIM] = "trim", [ACT_FITRIM] = "fitrim",
	[ACT_SECURE_ERASE] = "secure-erase", [ACT_IDLE] = "idle", [ACT__COUNT] = NULL,
};
static const char *const filesystem_names[] = {
	[FS_NONE] = "none", [FS_EXT4] = "ext4", [FS_XFS] = "xfs", NULL,
};
static const char *const erase_names[] = {
	[ERASE_NONE] = "none", [ERASE_ATA] = "ata", [ERASE_ATA_ENHANCED] = "ata-enhanced",
	[ERASE_NVME_FORMAT] = "nvme-format", [ERASE_NVME_CRYPTO_FORMAT] = "nvme-crypto-format",
	[ERASE_NVME_SANITIZE_BLOCK] = "nvme-sanitize-block",
	[ERASE_NVME_SANITIZE_CRYPTO] = "nvme-sanitize-crypto",
	[ERASE_BLKSECDISCARD] = "blksecdiscard", [ERASE_DISCARD_ALL] = "discard-all",
	[ERASE_COMMAND] = "command", [ERASE__COUNT] = NULL,
};
static const char *const on_error_names[] = {
	[ON_ERROR_STOP] = "stop", [ON_ERROR_CONTINUE] = "continue", NULL,
};
static const char *const verify_names[] = {
	[VERIFY_NONE] = "none", [VERIFY_CRC32C] = "crc32c", NULL,
};
static const char *const steady_names[] = {
	[STEADY_NONE] = "none", [STEADY_SNIA] = "snia", NULL,
};
static const char *const trim_scope_names[] = {
	[TRIM_REGION] = "region", [TRIM_DEVICE] = "device", NULL,
};
static const char *const baseline_names[] = {
	[BASELINE_FIRST] = "first", [BASELINE_BEST] = "best", [BASELINE__COUNT] = NULL,
};

#define TF(f) .offset = offsetof(struct cfg_target, f), \
	      .size = sizeof(((struct cfg_target *)0)->f)
#define GF(f) .offset = offsetof(struct cfg, f), \
	      .size = sizeof(((struct cfg *)0)->f), .global = 1
#define BLOCK_RANGE .min = 512, .max = 64 * MIB, .align = 512

static const struct cfg_key keys[K__COUNT] = {
	[K_DATABASE] = { "database", CT_STRING, GF(database),
		.def = "/var/lib/wearmon/wearmon.db",
		.help = "SQLite history file; its directory must exist" },
	[K_DEVICE] = { "device", CT_STRING, TF(device), .required = 1,
		.help = "the block device or regular file under test" },
	[K_FILE_SIZE] = { "file_size", CT_BYTES, TF(file_size), .def = "0",
		.help = "capacity of a regular-file target; ignored for block devices" },
	[K_ALLOW_DESTROY] = { "allow_destroy", CT_BOOL, TF(allow_destroy),
		.def = "no", .help = "required before anything writes to a block device" },
	[K_REGION_OFFSET] = { "region_offset", CT_QTY, TF(region_offset),
		.def = "0", .help = "start of the region under test: bytes or % of capacity" },
	[K_REGION_SIZE] = { "region_size", CT_QTY, TF(region_size),
		.def = "100%", .help = "length of the region under test: bytes or % of capacity" },
	[K_SIZES] = { "sizes", CT_SIZES, TF(sizes), .def = "100%",
		.help = "growing sizes: start:end:step or a list; % of the region" },
	[K_FILL] = { "fill", CT_BOOL, TF(fill), .def = "yes",
		.help = "write each whole size sequentially before measuring it" },
	[K_FILL_BLOCK_SIZE] = { "fill_block_size", CT_BYTES, TF(fill_block_size),
		.def = "128k", BLOCK_RANGE, .help = "block size of the fill" },
	[K_FILL_QUEUE_DEPTH] = { "fill_queue_depth", CT_INT, TF(fill_queue_depth),
		.def = "16", .min = 1, .max = 1024, .help = "I/Os in flight during the fill" },
	[K_WORKLOAD] = { "workload", CT_WORKLOAD, TF(workload), .def = "randwrite",
		.choices = workload_names, .help = "access pattern of the measured phase" },
	[K_BLOCK_SIZE] = { "block_size", CT_BYTES, TF(block_size), .def = "4k",
		BLOCK_RANGE, .help = "block size of the measured phase" },
	[K_QUEUE_DEPTH] = { "queue_depth", CT_INT, TF(queue_depth), .def = "32",
		.min = 1, .max = 1024, .help = "I/Os in flight in the measured phase" },
	[K_AMOUNT] = { "amount", CT_AMOUNT, TF(amount), .def = "1x",
		.help = "bytes the measured phase moves: a multiple of the size or bytes" },
	[K_DURATION] = { "duration", CT_DURATION, TF(duration), .def = "0",
		.help = "time limit of the measured phase (0 = none)" },
	[K_COMPRESSIBILITY] = { "compressibility", CT_INT, TF(compressibility),
		.def = "0", .min = 0, .max = 100,
		.help = "percent of each block that compresses away" },
	[K_BETWEEN_CYCLES] = { "between_cycles", CT_ACTION, TF(between_cycles),
		.def = "none", .choices = action_names,
		.help = "action after each cycle" },
	[K_TRIM_SCOPE] = { "trim_scope", CT_TRIM_SCOPE, TF(trim_scope),
		.def = "region", .choices = trim_scope_names,
		.help = "what between_cycles = trim discards" },
	[K_CYCLES] = { "cycles", CT_INT, TF(cycles), .def = "0", .min = 0,
		.help = "cycles to run; 0 = forever" },
	[K_PAUSE] = { "pause", CT_DURATION, TF(pause), .def = "0s",
		.help = "wait between cycles" },
	[K_SAMPLE_INTERVAL] = { "sample_interval", CT_DURATION, TF(sample_interval),
		.def = "1s", .min = 100, .max = 3600 * 1000,
		.help = "length of one throughput sample" },
	[K_ALERT_BELOW] = { "alert_below", CT_PERCENT, TF(alert_below), .def = "50%",
		.min = 0, .max = 100,
		.help = "warn when an iteration falls below this % of its baseline" },
	[K_ALERT_CRITICAL] = { "alert_critical", CT_PERCENT, TF(alert_critical),
		.def = "25%", .min = 0, .max = 100,
		.help = "critical when an iteration falls below this % of its baseline" },
	[K_BASELINE] = { "baseline", CT_ENUM, TF(baseline), .def = "first",
		.choices = baseline_names,
		.help = "what alerts compare with: first or best iteration of the campaign" },
	[K_SAMPLE_CRASH_BELOW] = { "sample_crash_below", CT_PERCENT,
		TF(sample_crash_below), .def = "20%", .min = 0, .max = 100,
		.help = "collapse: 3 samples in a row below this % of the iteration's average" },
	[K_RECOVERED_ABOVE] = { "recovered_above", CT_PERCENT, TF(recovered_above),
		.def = "90%", .min = 0, .max = 100,
		.help = "recovered after an action: back above this % of the baseline" },
	[K_ALERT_COMMAND] = { "alert_command", CT_PATH, TF(alert_command), .def = "",
		.help = "program run per alert with WEARMON_* variables; empty = none" },
	[K_EXPECT_SERIAL] = { "expect_serial", CT_STRING, TF(expect_serial), .def = "",
		.help = "refuse the device unless its serial number is this one" },
	[K_FILESYSTEM] = { "filesystem", CT_ENUM, TF(filesystem), .def = "none",
		.choices = filesystem_names,
		.help = "make this filesystem on the device and test a file on it" },
	[K_MKFS_OPTIONS] = { "mkfs_options", CT_STRING, TF(mkfs_options), .def = "",
		.help = "extra arguments for mkfs, split on blanks" },
	[K_FORMAT_EACH_SIZE] = { "format_each_size", CT_BOOL, TF(format_each_size),
		.def = "no", .help = "make the filesystem again before every size" },
	[K_SECURE_ERASE] = { "secure_erase", CT_ENUM, TF(secure_erase), .def = "none",
		.choices = erase_names, .help = "how between_cycles = secure-erase erases" },
	[K_SECURE_ERASE_COMMAND] = { "secure_erase_command", CT_STRING,
		TF(secure_erase_command), .def = "",
		.help = "program run with the device path for secure_erase = command" },
	[K_SECURE_ERASE_PASSWORD] = { "secure_erase_password", CT_STRING,
		TF(secure_erase_password), .def = "wearmon",
		.help = "ATA security password set for the erase (up to 32 bytes)" },
	[K_IDLE] = { "idle", CT_DURATION, TF(idle), .def = "300s",
		.help = "wait with no I/O for between_cycles = idle" },
	[K_ON_ACTION_ERROR] = { "on_action_error", CT_ENUM, TF(on_action_error),
		.def = "stop", .choices = on_error_names,
		.help = "stop the target or continue with the next cycle after a failed action" },
	[K_BLOCK_SIZES] = { "block_sizes", CT_STRING, TF(block_sizes), .def = "",
		.help = "weighted block size mix, e.g. 512:10 4k:60 64k:30; empty = block_size" },
	[K_READ_PERCENT] = { "read_percent", CT_INT, TF(read_percent), .def = "50",
		.min = 0, .max = 100,
		.help = "randrw, seqrw and presets: percent of operations that read" },
	[K_RANDOM_PERCENT] = { "random_percent", CT_INT, TF(random_percent), .def = "100",
		.min = 0, .max = 100,
		.help = "randrw, seqrw and presets: percent of operations at random offsets" },
	[K_STRIDE] = { "stride", CT_INT, TF(stride), .def = "8", .min = 1,
		.help = "strideread: read every stride-th block" },
	[K_VERIFY] = { "verify", CT_ENUM, TF(verify), .def = "none",
		.choices = verify_names,
		.help = "none or crc32c: headers in written data, checked on every read" },
	[K_VERIFY_PHASE] = { "verify_phase", CT_BOOL, TF(verify_phase), .def = "no",
		.help = "read back and check the whole size after its measured phase" },
	[K_ON_VERIFY_ERROR] = { "on_verify_error", CT_ENUM, TF(on_verify_error),
		.def = "stop", .choices = on_error_names,
		.help = "stop the target or continue after a block fails verification" },
	[K_MEASURE] = { "measure", CT_STRING, TF(measure), .def = "",
		.help = "measured phases of each size, e.g. fill,randwrite,randread; "
			"empty = workload" },
	[K_REPEAT] = { "repeat", CT_INT, TF(repeat), .def = "1", .min = 1, .max = 1000,
		.help = "runs of each measured phase per size (mean and stddev stored)" },
	[K_STEADY_STATE] = { "steady_state", CT_ENUM, TF(steady_state), .def = "none",
		.choices = steady_names,
		.help = "none, or snia: repeat rounds until the last 5 are steady (SNIA PTS)" },
	[K_MAX_ROUNDS] = { "max_rounds", CT_INT, TF(max_rounds), .def = "25", .min = 5,
		.max = 1000, .help = "rounds at most per phase with steady_state = snia" },
	[K_JOBS] = { "jobs", CT_INT, TF(jobs), .def = "1", .min = 1, .max = 64,
		.help = "threads per measured workload, each with its own queue; summed" },
};

/* Make room for one more element in an array of *cap. Returns the array
 * (moved perhaps) or NULL, leaving the old one intact, when out of memory. */
static void *grow(void *v, int n, int *cap, size_t elem)
{
	int ncap;
	void *nv;

	if (n < *cap)
		return v;
	ncap = *cap ? *cap * 2 : 16;
	nv = realloc(v, (size_t)ncap * elem);
	if (nv)
		*cap = ncap;
	return nv;
}

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
static void err_add(struct errs *e, int line, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void err_add(struct errs *e, int line, const char *what, const char *fmt, ...)
{
	char msg[MSG_MAX], *text;
	struct errline *v;
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		n = asprintf(&text, "%s:%d: %s%s%s", e->file, line, what ? what : "",
			     what ? ": " : "", msg);
	else
		n = asprintf(&text, "%s: %s", e->file, msg);
	if (n < 0) {
		e->oom = 1;
		return;
	}
	v = grow(e->v, e->n, &e->cap, sizeof(*e->v));
	if (!v) {
		free(text);
		e->oom = 1;
		return;
	}
	e->v = v;
	e->v[e->n] = (struct errline){ line, e->n, text };
	e->n++;
}

/* Whether an error was already reported on line. */
static int errs_at(const struct errs *e, int line)
{
	for (int i = 0; i < e->n; i++)
		if (e->v[i].line == line)
			return 1;
	return 0;
}

static int errline_cmp(const void *a, const void *b)
{
	const struct errline *x = a, *y = b;
	unsigned lx = (unsigned)x->line - 1, ly = (unsigned)y->line - 1;

	/* Line 0 (file-level) sorts last; equal lines keep their order. */
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sort, copy to err one per line and free. Returns 0, -EINVAL (errors)
 * or -ENOMEM. */
static int errs_finish(struct errs *e, char *err, size_t errlen)
{
	size_t used = 0;
	int rc = e->oom ? -ENOMEM : e->n ? -EINVAL : 0;

	if (err && errlen)
		err[0] = '\0';
	if (e->n)
		qsort(e->v, (size_t)e->n, sizeof(*e->v), errline_cmp);
	for (int i = 0; i < e->n; i++) {
		if (err && used + 1 < errlen) {
			int w = snprintf(err + used, errlen - used, "%s%s",
					 i ? "\n" : "", e->v[i].text);
			used += w > 0 ? (size_t)w : 0;
		}
		free(e->v[i].text);
	}
	free(e->v);
	e->v = NULL;
	e->n = e->cap = 0;
	return rc;
}

/* ---- value parsers, one per type; each fills msg on error ---- */

typedef int (*value_fn)(const struct cfg_key *k, const char *v, void *field,
			char *msg, size_t len);

static int parse_string(const struct cfg_key *k, const char *v, void *field,
			char *msg, size_t len)
{
	/* Optional strings default to "" and may be set back to it. */
	if (!*v && !(k->def && !*k->def)) {
		snprintf(msg, len, "must not be empty");
		return -EINVAL;
	}
	if (strlen(v) >= k->size) {
		snprintf(msg, len, "is longer than %zu characters", k->size - 1);
		return -EINVAL;
	}
	util_strlcpy(field, v, k->size);
	return 0;
}

static int parse_bool(const struct cfg_key *k, const char *v, void *field,
		      char *msg, size_t len)
{
	if (util_parse_bool(v, field) < 0) {
		snprintf(msg, len, "\"%s\" is not a boolean (use yes or no)", v);
		return -EINVAL;
	}
	return 0;
}

/* "512 bytes", "1073741824 bytes (1.00 GiB)" */
static const char *fmt_both(uint64_t b, char *buf, size_t len)
{
	char h[32];

	if (b < 1024)
		snprintf(buf, len, "%llu bytes", (unsigned long long)b);
	else
		snprintf(buf, len, "%llu bytes (%s)", (unsigned long long)b,
			 util_fmt_bytes(b, h, sizeof(h)));
	return buf;
}

static int parse_bytes(const struct cfg_key *k, const char *v, void *field,
		       char *msg, size_t len)
{
	char lo[48], hi[48];
	uint64_t b;
	int rc = util_parse_bytes(v, &b);

	if (rc == -ERANGE) {
		snprintf(msg, len, "\"%s\" is too large (at most 16 EiB)", v);
		return -EINVAL;
	}
	if (rc < 0) {
		snprintf(msg, len, "\"%s\" is not a byte size (use e.g. 4096, 4k, 128KiB, 1G)", v);
		return -EINVAL;
	}
	if (b < (uint64_t)k->min || (k->max && b > (uint64_t)k->max)) {
		if (k->max)
			snprintf(msg, len, "\"%s\" is out of range %s..%s", v,
				 fmt_both((uint64_t)k->min, lo, sizeof(lo)),
				 fmt_both((uint64_t)k->max, hi, sizeof(hi)));
		else
			snprintf(msg, len, "\"%s\" is below the minimum %s", v,
				 fmt_both((uint64_t)k->min, lo, sizeof(lo)));
		return -EINVAL;
	}
	if (k->align && b % k->align) {
		snprintf(msg, len, "\"%s\" (%llu) is not a multiple of %llu", v,
			 (unsigned long long)b, (unsigned long long)k->align);
		return -EINVAL;
	}
	*(uint64_t *)field = b;
	return 0;
}

/* Parse one quantity; msg names it with what ("start", "size"). */
static int qty_or_msg(const char *v, const char *what, struct qty *q,
		      char *msg, size_t len)
{
	int rc = util_parse_qty(v, q);

	if (rc == -ERANGE && strchr(v, '%'))
		snprintf(msg, len, "%s\"%s\" is out of range 0%%..100%%", what, v);
	else if (rc == -ERANGE)
		snprintf(msg, len, "%s\"%s\" is too large (at most 16 EiB)", what, v);
	else if (rc < 0)
		snprintf(msg, len, "%s\"%s\" is not a byte size or percentage "
			 "(use e.g. 0, 4096, 1G or 80%%)", what, v);
	return rc < 0 ? -EINVAL : 0;
}

static int parse_qty(const struct cfg_key *k, const char *v, void *field,
		     char *msg, size_t len)
{
	return qty_or_msg(v, "", field, msg, len);
}

static int parse_int(const struct cfg_key *k, const char *v, void *field,
		     char *msg, size_t len)
{
	long long max = k->max ? k->max : LLONG_MAX;
	int rc = util_parse_int(v, k->min, max, field);

	if (rc == -ERANGE && k->max)
		snprintf(msg, len, "\"%s\" is out of range %lld..%lld", v, k->min, k->max);
	else if (rc == -ERANGE)
		snprintf(msg, len, "\"%s\" is out of range (at least %lld)", v, k->min);
	else if (rc < 0)
		snprintf(msg, len, "\"%s\" is not an integer", v);
	return rc < 0 ? -EINVAL : 0;
}

static int parse_duration(const struct cfg_key *k, const char *v, void *field,
			  char *msg, size_t len)
{
	double s;
	int rc = util_parse_duration(v, &s);

	if (rc == -ERANGE) {
		snprintf(msg, len, "\"%s\" is too long", v);
		return -EINVAL;
	}
	if (rc < 0) {
		snprintf(msg, len, "\"%s\" is not a duration (use e.g. 0, 30s, 5m, "
			 "1.5h, 2d, 250ms)", v);
		return -EINVAL;
	}
	if (s * 1000 < (double)k->min - 1e-6 ||
	    (k->max && s * 1000 > (double)k->max + 1e-6)) {
		snprintf(msg, len, "\"%s\" is out of range %gs..%gs", v,
			 (double)k->min / 1000, (double)k->max / 1000);
		return -EINVAL;
	}
	*(double *)field = s;
	return 0;
}

static int parse_choice(const struct cfg_key *k, const char *v, void *field,
			char *msg, size_t len);

/* A list of actions separated by blanks or commas. */
static int parse_actions(const struct cfg_key *k, const char *v, void *field,
			 char *msg, size_t len)
{
	struct cfg_actions *out = field, acts = { .n = 0 };
	char buf[512], *save = NULL;

	util_strlcpy(buf, v, sizeof(buf));
	for (char *tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		int a;
		if (acts.n == CFG_MAX_ACTIONS) {
			snprintf(msg, len, "more than %d actions", CFG_MAX_ACTIONS);
			return -EINVAL;
		}
		if (parse_choice(k, tok, &a, msg, len))
			return -EINVAL;
		acts.a[acts.n++] = (enum cfg_action)a;
	}
	if (!acts.n) {
		snprintf(msg, len, "must name at least one action");
		return -EINVAL;
	}
	*out = acts;
	return 0;
}

static int parse_choice(const struct cfg_key *k, const char *v, void *field,
			char *msg, size_t len)
{
	size_t used;

	for (int i = 0; k->choices[i]; i++) {
		if (strcasecmp(v, k->choices[i]) == 0) {
			*(int *)field = i;
			return 0;
		}
	}
	used = (size_t)snprintf(msg, len, "\"%s\" is not one of:", v);
	for (int i = 0; k->choices[i] && used < len; i++)
		used += (size_t)snprintf(msg + used, len - used, "%s %s",
					 i ? "," : "", k->choices[i]);
	return -EINVAL;
}

/* start:end:step */
static int parse_range(const char *v, struct cfg_sizes *s, char *msg, size_t len)
{
	static const char *const what[] = { "start ", "end ", "step " };
	struct qty *q[] = { &s->start, &s->end, &s->step };
	char buf[LABEL_MAX], *part = buf, *colon;

	util_strlcpy(buf, v, sizeof(buf));
	for (int i = 0; i < 3; i++) {
		colon = strchr(part, ':');
		if ((i < 2) != (colon != NULL)) {
			snprintf(msg, len, "\"%s\" is not a range (use start:end:step, "
				 "e.g. 10%%:100%%:10%% or 1G:4G:1G)", v);
			return -EINVAL;
		}
		if (colon)
			*colon = '\0';
		if (qty_or_msg(util_strip(part), what[i], q[i], msg, len) < 0)
			return -EINVAL;
		part = colon + 1;
	}
	if (s->step.is_percent ? s->step.percent <= 0 : s->step.bytes == 0) {
		snprintf(msg, len, "step must be more than 0");
		return -EINVAL;
	}
	s->is_range = 1;
	return 0;
}

/* "1G 2G 4G" (commas allowed too) */
static int parse_list(const char *v, struct cfg_sizes *s, char *msg, size_t len)
{
	char buf[LABEL_MAX], *save = NULL, *tok;

	util_strlcpy(buf, v, sizeof(buf));
	for (tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		if (s->n == CFG_MAX_SIZES) {
			snprintf(msg, len, "more than %d sizes", CFG_MAX_SIZES);
			return -EINVAL;
		}
		if (qty_or_msg(tok, "size ", &s->list[s->n], msg, len) < 0)
			return -EINVAL;
		s->n++;
	}
	if (s->n == 0) {
		snprintf(msg, len, "no sizes given (use e.g. 10%%:100%%:10%% or 1G 2G 4G)");
		return -EINVAL;
	}
	return 0;
}

static int parse_sizes(const struct cfg_key *k, const char *v, void *field,
		       char *msg, size_t len)
{
	struct cfg_sizes *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	rc = strchr(v, ':') ? parse_range(v, s, msg, len) : parse_list(v, s, msg, len);
	if (rc == 0)
		memcpy(field, s, sizeof(*s));
	free(s);
	return rc;
}

static int parse_amount(const struct cfg_key *k, const char *v, void *field,
			char *msg, size_t len)
{
	struct cfg_amount a = { 0 };
	char buf[LABEL_MAX];
	size_t n;

	util_strlcpy(buf, v, sizeof(buf));
	n = strlen(util_strip(buf));
	if (n > 1 && (buf[n - 1] == 'x' || buf[n - 1] == 'X')) {
		buf[n - 1] = '\0';
		a.is_multiple = 1;
		if (util_parse_double(buf, &a.multiple) < 0 || a.multiple <= 0 ||
		    a.multiple > 1e6)
			goto bad;
	} else if (util_parse_bytes(buf, &a.bytes) < 0 || a.bytes == 0) {
		goto bad;
	}
	*(struct cfg_amount *)field = a;
	return 0;
bad:
	snprintf(msg, len, "\"%s\" is not an amount (use a multiple of the size "
		 "such as 1x or 2.5x, or bytes such as 64G; more than 0)", v);
	return -EINVAL;
}

/* "50%" or "50": a percentage within the key's min..max. */
static int parse_percent(const struct cfg_key *k, const char *v, void *field,
			 char *msg, size_t len)
{
	char buf[LABEL_MAX];
	size_t n;
	double d;

	util_strlcpy(buf, v, sizeof(buf));
	n = strlen(util_strip(buf));
	if (n > 0 && buf[n - 1] == '%')
		buf[n - 1] = '\0';
	if (util_parse_double(util_strip(buf), &d) < 0 || !isfinite(d)) {
		snprintf(msg, len, "\"%s\" is not a percentage (use e.g. 50%%)", v);
		return -EINVAL;
	}
	if (d < (double)k->min || d > (double)k->max) {
		snprintf(msg, len, "\"%s\" is out of range %lld%%..%lld%%", v, k->min, k->max);
		return -EINVAL;
	}
	*(double *)field = d;
	return 0;
}

/* An absolute path, or empty for none: run without a shell or PATH search. */
static int parse_path(const struct cfg_key *k, const char *v, void *field,
		      char *msg, size_t len)
{
	if (*v && *v != '/') {
		snprintf(msg, len, "\"%s\" is not an absolute path (start with /, or "
			 "leave empty for none)", v);
		return -EINVAL;
	}
	if (strlen(v) >= k->size) {
		snprintf(msg, len, "is longer than %zu characters", k->size - 1);
		return -EINVAL;
	}
	util_strlcpy(field, v, k->size);
	return 0;
}

static const value_fn parsers[CT__COUNT] = {
	[CT_STRING] = parse_string,     [CT_BOOL] = parse_bool,
	[CT_BYTES] = parse_bytes,       [CT_QTY] = parse_qty,
	[CT_INT] = parse_int,           [CT_DURATION] = parse_duration,
	[CT_WORKLOAD] = parse_choice,   [CT_ACTION] = parse_actions,
	[CT_TRIM_SCOPE] = parse_choice, [CT_SIZES] = parse_sizes,
	[CT_AMOUNT] = parse_amount,     [CT_ENUM] = parse_choice,
	[CT_PERCENT] = parse_percent,   [CT_PATH] = parse_path,
};

/* Parse v as key k into the struct at base. Returns 0 or -EINVAL / -ENOMEM. */
static int set_value(const struct cfg_key *k, void *base, const char *v,
		     char *msg, size_t len)
{
	return parsers[k->type](k, v, (char *)base + k->offset, msg, len);
}

/* ---- reading the file: sections and key = value entries ---- */

enum sec_kind { SEC_GLOBAL, SEC_TARGET, SEC_BAD };

#define NO_SECTION (-1)
#define BAD_HEADER (-2)

struct section {
	enum sec_kind kind;
	char label[LABEL_MAX];    /* "[target lab1]", for messages */
	char name[CFG_NAME_MAX];  /* target name */
	int line;
};

struct entry {
	int section, key, line;
	char *value;
};

struct parser {
	const char *text;         /* the reader's input */
	size_t len, pos;
	int lineno;
	int expect_line;          /* a key line inih must hand to on_pair */
	int handled_line;         /* last line on_pair saw */
	int cur;                  /* current section, or NO_SECTION/BAD_HEADER */
	int saw_target;           /* a [target ...] header, even a bad one */
	struct section *secs;
	int nsecs, capsecs;
	struct entry *ents;
	int nents, capents;
	struct errs *e;
};

static int name_char_ok(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* Checks a target name n and copies it to s->name. Returns 0, or -EINVAL
 * with an error added. */
static int set_target_name(struct parser *p, struct section *s, const char *n)
{
	if (!*n) {
		err_add(p->e, s->line, s->label, "missing target name (use [target NAME])");
		return -EINVAL;
	}
	if (strlen(n) >= CFG_NAME_MAX) {
		err_add(p->e, s->line, s->label, "target name is longer than %d characters",
			CFG_NAME_MAX - 1);
		return -EINVAL;
	}
	for (const char *c = n; *c; c++) {
		if (!name_char_ok(*c)) {
			err_add(p->e, s->line, s->label, "target name \"%s\" may only hold "
				"letters, digits, '-', '_' and '.'", n);
			return -EINVAL;
		}
	}
	for (int i = 0; i < p->nsecs; i++) {
		if (p->secs[i].kind == SEC_TARGET && strcmp(p->secs[i].name, n) == 0) {
			err_add(p->e, s->line, s->label, "duplicate target name "
				"(first on line %d)", p->secs[i].line);
			return -EINVAL;
		}
	}
	util_strlcpy(s->name, n, sizeof(s->name));
	return 0;
}

/* Classify the text between '[' and ']'. Returns its kind. */
static enum sec_kind classify_section(struct parser *p, struct section *s, char *inner)
{
	char *rest;

	util_strip(inner);
	snprintf(s->label, sizeof(s->label), "[%s]", inner);
	if (strcmp(inner, "wearmon") == 0) {
		for (int i = 0; i < p->nsecs; i++) {
			if (p->secs[i].kind == SEC_GLOBAL) {
				err_add(p->e, s->line, s->label, "duplicate section "
					"(first on line %d)", p->secs[i].line);
				return SEC_BAD;
			}
		}
		return SEC_GLOBAL;
	}
	if (strncmp(inner, "target", 6) == 0 && (!inner[6] || isspace((unsigned char)inner[6]))) {
		p->saw_target = 1;
		rest = util_strip(inner + 6);
		return set_target_name(p, s, rest) < 0 ? SEC_BAD : SEC_TARGET;
	}
	err_add(p->e, s->line, s->label, "unknown section (use [wearmon] or [target NAME])");
	return SEC_BAD;
}

/* A "[...]" line: start a new section. Returns 0 or -ENOMEM. */
static int new_section(struct parser *p, char *inner)
{
	struct section *v = grow(p->secs, p->nsecs, &p->capsecs, sizeof(*v));
	struct section s = { .line = p->lineno };

	if (!v) {
		p->e->oom = 1;
		return -ENOMEM;
	}
	p->secs = v;
	s.kind = classify_section(p, &s, inner);
	p->secs[p->nsecs] = s;
	p->cur = p->nsecs++;
	return 0;
}

/* Where inih ends a section name: at ']' or at an inline comment (';'
 * after white space). Returns the ']' or NULL. */
static const char *find_close(const char *s)
{
	int was_space = 0;

	for (; *s; s++) {
		if (*s == ']')
			return s;
		if (was_space && *s == ';')
			return NULL;
		was_space = isspace((unsigned char)*s);
	}
	return NULL;
}

/* A key line that inih did not pass to on_pair is a syntax error. */
static void check_handled(struct parser *p)
{
	if (p->expect_line && p->handled_line != p->expect_line)
		err_add(p->e, p->expect_line, "syntax error",
			"expected \"key = value\", \"[section]\" or a comment");
	p->expect_line = 0;
}

/* Note sections and key lines as inih is handed them. */
static void classify_line(struct parser *p, const char *line)
{
	char inner[LABEL_MAX];
	const char *close;

	if (*line == '\n' || *line == ';' || *line == '#')
		return;
	if (*line != '[') {
		p->expect_line = p->lineno;
		return;
	}
	close = find_close(line + 1);
	if (!close) {
		err_add(p->e, p->lineno, "syntax error", "section header without a closing ']'");
		p->cur = BAD_HEADER;
		return;
	}
	/* Work on a copy: inih parses this line after us. */
	snprintf(inner, sizeof(inner), "%.*s", (int)(close - line - 1), line + 1);
	new_section(p, inner);
}

/* inih's fgets: one line per call, counted, without leading white space
 * (so inih never sees a continuation line) and never longer than num. */
static char *read_line(char *str, int num, void *stream)
{
	struct parser *p = stream;
	const char *s = p->text + p->pos, *nl;
	size_t n;

	check_handled(p);
	if (p->pos >= p->len || num < 2)
		return NULL;
	nl = memchr(s, '\n', p->len - p->pos);
	n = nl ? (size_t)(nl - s) : p->len - p->pos;
	p->pos += n + (nl != NULL);
	p->lineno++;
	if (p->lineno == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3, n -= 3;
	while (n > 0 && isspace((unsigned char)*s))
		s++, n--;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n + 2 > (size_t)num) {
		err_add(p->e, p->lineno, "syntax error", "line is longer than %d characters",
			num - 2);
		n = 0;
	}
	memcpy(str, s, n);
	str[n] = '\n';
	str[n + 1] = '\0';
	classify_line(p, str);
	return str;
}

static const char *section_label(const struct parser *p)
{
	return p->secs[p->cur].label;
}

/* Levenshtein distance, for "did you mean". */
static int distance(const char *a, const char *b)
{
	int row[64], la = (int)strlen(a), lb = (int)strlen(b);

	if (la >= 64 || lb >= 64)
		return 99;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

static void unknown_key(struct parser *p, const char *name)
{
	int best = -1, bestd = 3;

	for (int i = 0; i < K__COUNT; i++) {
		int d = distance(name, keys[i].name);
		if (d < bestd)
			best = i, bestd = d;
	}
	if (best >= 0)
		err_add(p->e, p->lineno, name, "unknown key \"%s\" in %s (did you mean \"%s\"?)",
			name, section_label(p), keys[best].name);
	else
		err_add(p->e, p->lineno, name, "unknown key \"%s\" in %s", name, section_label(p));
}

static const struct entry *find_entry(const struct parser *p, int sec, int key)
{
	for (int i = 0; i < p->nents; i++)
		if (p->ents[i].section == sec && p->ents[i].key == key)
			return &p->ents[i];
	return NULL;
}

/* Store a value, without surrounding double quotes. Returns 0 or -ENOMEM. */
static int add_entry(struct parser *p, int key, const char *value)
{
	struct entry *v = grow(p->ents, p->nents, &p->capents, sizeof(*v));
	size_t n = strlen(value);
	char *copy;

	if (n >= 2 && value[0] == '"' && value[n - 1] == '"')
		copy = strndup(value + 1, n - 2);
	else
		copy = strdup(value);
	if (!v || !copy) {
		free(copy);
		p->e->oom = 1;
		return -ENOMEM;
	}
	p->ents = v;
	p->ents[p->nents++] = (struct entry){ p->cur, key, p->lineno, copy };
	return 0;
}

/* inih handler. Always returns 1: problems go to the error list, and inih's
 * own error return then means syntax only. */
static int on_pair(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;
	const struct entry *prev;
	int k;

	p->handled_line = p->lineno;
	if (p->cur == NO_SECTION) {
		err_add(p->e, p->lineno, name, "key outside any section (put it under "
			"[wearmon] or [target NAME])");
		return 1;
	}
	if (p->cur == BAD_HEADER || p->secs[p->cur].kind == SEC_BAD)
		return 1;
	if (!*name) {
		err_add(p->e, p->lineno, "syntax error", "missing key name before '='");
		return 1;
	}
	k = cfg_key_index(name);
	if (k < 0) {
		unknown_key(p, name);
		return 1;
	}
	if (keys[k].global && p->secs[p->cur].kind == SEC_TARGET) {
		err_add(p->e, p->lineno, name, "only allowed in [wearmon], not in %s",
			section_label(p));
		return 1;
	}
	prev = find_entry(p, p->cur, k);
	if (prev)
		err_add(p->e, p->lineno, name, "duplicate key in %s (first set on line %d)",
			section_label(p), prev->line);
	else
		add_entry(p, k, value);
	return 1;
}

/* ---- building struct cfg from the entries ---- */

/* Apply the entries of section sec: global keys to c, target keys to t. */
static void apply_section(struct parser *p, int sec, struct cfg *c, struct cfg_target *t)
{
	char msg[MSG_MAX];

	for (int i = 0; i < p->nents; i++) {
		const struct entry *en = &p->ents[i];
		const struct cfg_key *k = &keys[en->key];

		if (en->section != sec)
			continue;
		if (set_value(k, k->global ? (void *)c : (void *)t, en->value,
			      msg, sizeof(msg)) < 0) {
			err_add(p->e, en->line, k->name, "%s", msg);
			continue;
		}
		if (k->global)
			c->lines[en->key] = en->line;
		else
			t->lines[en->key] = en->line;
	}
}

/* Table defaults; they are constants, so a failure is our bug. */
static void apply_defaults(struct cfg *c, struct cfg_target *t)
{
	char msg[MSG_MAX];

	for (int i = 0; i < K__COUNT; i++) {
		const struct cfg_key *k = &keys[i];
		void *base = k->global ? (void *)c : (void *)t;

		if (k->def && set_value(k, base, k->def, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "cfg: bad default for %s: %s\n", k->name, msg);
			abort();
		}
	}
}

/* Required keys must be set in the target or in [wearmon]. */
static void check_required(struct parser *p, int sec, int global, const struct cfg_target *t)
{
	for (int i = 0; i < K__COUNT; i++) {
		if (!keys[i].required || keys[i].global)
			continue;
		if (find_entry(p, sec, i) || (global >= 0 && find_entry(p, global, i)))
			continue;
		err_add(p->e, t->section_line, keys[i].name, "required key missing in %s (%s)",
			p->secs[sec].label, keys[i].help);
	}
}

/* Build the configuration. Returns 0 or -ENOMEM; errors go to p->e. */
static int build(struct parser *p, struct cfg *c)
{
	struct cfg_target *tmpl = calloc(1, sizeof(*tmpl));
	int global = -1, n = 0;

	for (int i = 0; i < p->nsecs; i++) {
		if (p->secs[i].kind == SEC_GLOBAL)
			global = i;
		n += p->secs[i].kind == SEC_TARGET;
	}
	c->targets = calloc(n ? (size_t)n : 1, sizeof(*c->targets));
	if (!tmpl || !c->targets) {
		free(tmpl);
		return -ENOMEM;
	}
	apply_defaults(c, tmpl);
	if (global >= 0) {
		c->section_line = p->secs[global].line;
		apply_section(p, global, c, tmpl);
	}
	c->database_line = c->lines[K_DATABASE];
	for (int i = 0; i < p->nsecs; i++) {
		struct cfg_target *t = &c->targets[c->ntargets];

		if (p->secs[i].kind != SEC_TARGET)
			continue;
		*t = *tmpl;
		util_strlcpy(t->name, p->secs[i].name, sizeof(t->name));
		t->section_line = p->secs[i].line;
		apply_section(p, i, c, t);
		check_required(p, i, global, t);
		c->ntargets++;
	}
	if (!p->saw_target)
		err_add(p->e, 0, NULL, "no [target NAME] section (at least one target is required)");
	free(tmpl);
	return 0;
}

static void parser_free(struct parser *p)
{
	for (int i = 0; i < p->nents; i++)
		free(p->ents[i].value);
	free(p->ents);
	free(p->secs);
}

/* Parse len bytes of text. Returns 0, -EINVAL or -ENOMEM. */
static int parse_text(const char *text, size_t len, const char *label,
		      struct cfg **out, char *err, size_t errlen)
{
	struct errs e = { .file = label };
	struct parser p = { .text = text, .len = len, .cur = NO_SECTION, .e = &e };
	struct cfg *c = calloc(1, sizeof(*c));
	int rc = 0;

	*out = NULL;
	if (!c) {
		snprintf(err, errlen, "%s: out of memory", label);
		return -ENOMEM;
	}
	util_strlcpy(c->path, label, sizeof(c->path));
	if (memchr(text, '\0', len))
		err_add(&e, 0, NULL, "contains a NUL byte; not a text file");
	else
		rc = ini_parse_stream(read_line, &p, on_pair, &p);
	check_handled(&p);
	if (rc == -2)
		e.oom = 1;
	else if (rc > 0 && !errs_at(&e, rc))
		err_add(&e, rc, "syntax error", "inih could not parse this line");
	if (!e.oom && build(&p, c) < 0)
		e.oom = 1;
	parser_free(&p);
	rc = errs_finish(&e, err, errlen);
	if (rc < 0)
		cfg_free(c);
	else
		*out = c;
	return rc;
}

/* ---- resolution against a device ---- */

struct resolver {
	struct errs e;
	const struct cfg_target *t;
	struct cfg_layout *out;
	uint32_t lbs;
};

/* Line for messages about key k: where it was set, else the [target]. */
static int key_line(const struct cfg_target *t, int k)
{
	return t->lines[k] ? t->lines[k] : t->section_line;
}

/* Absolute values must already be aligned; percentages were aligned down. */
static int check_aligned(struct resolver *r, int k, const char *what, uint64_t v)
{
	char b[48];

	if (v % r->lbs == 0)
		return 0;
	err_add(&r->e, key_line(r->t, k), keys[k].name, "%s%s is not a multiple of "
		"the logical block size %u", what, fmt_both(v, b, sizeof(b)), r->lbs);
	return -EINVAL;
}

static void resolve_region(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	struct cfg_layout *o = r->out;
	char b1[48], b2[48], b3[48], b4[48];
	uint64_t off = util_qty_resolve(&t->region_offset, o->capacity, r->lbs);
	uint64_t size = util_qty_resolve(&t->region_size, o->capacity, r->lbs);
	int blame = off >= o->capacity || !t->lines[K_REGION_SIZE] ?
		K_REGION_OFFSET : K_REGION_SIZE;

	o->region_offset = off;
	o->region_size = size;
	check_aligned(r, K_REGION_OFFSET, "", off);
	check_aligned(r, K_REGION_SIZE, "", size);
	if (size == 0)
		err_add(&r->e, key_line(t, K_REGION_SIZE), "region_size", "the region is "
			"empty (0 bytes of a device of %s)", fmt_both(o->capacity, b1, sizeof(b1)));
	else if (off > o->capacity || size > o->capacity - off)
		err_add(&r->e, key_line(t, blame), keys[blame].name, "region_offset %s + "
			"region_size %s ends at %s, past the device end at %s",
			fmt_both(off, b1, sizeof(b1)), fmt_both(size, b2, sizeof(b2)),
			fmt_both(off + size, b3, sizeof(b3)),
			fmt_both(o->capacity, b4, sizeof(b4)));
}

/* A range of percentages steps in percent space, so 10%:100%:10% gives
 * exactly 10%, 20% .. 100% of the region, each aligned down. */
static uint64_t percent_range(struct resolver *r, uint64_t *v)
{
	const struct cfg_sizes *s = &r->t->sizes;
	long long a = llround(s->start.percent * 1e6), b = llround(s->end.percent * 1e6);
	long long step = llround(s->step.percent * 1e6);
	uint64_t n;

	if (step <= 0) {
		err_add(&r->e, key_line(r->t, K_SIZES), "sizes", "step is 0%%");
		return UINT64_MAX;
	}
	n = a > b ? 0 : (uint64_t)((b - a) / step) + 1;
	for (uint64_t i = 0; i < n && i < CFG_MAX_SIZES; i++) {
		struct qty q = { .percent = (double)(a + (long long)i * step) / 1e6,
				 .is_percent = 1 };
		v[i] = util_qty_resolve(&q, r->out->region_size, r->lbs);
	}
	return n;
}

/* Ranges with a byte count anywhere step in bytes. */
static uint64_t byte_range(struct resolver *r, uint64_t *v)
{
	const struct cfg_sizes *s = &r->t->sizes;
	uint64_t region = r->out->region_size;
	uint64_t a = util_qty_resolve(&s->start, region, r->lbs);
	uint64_t b = util_qty_resolve(&s->end, region, r->lbs);
	uint64_t step = util_qty_resolve(&s->step, region, r->lbs);
	uint64_t n;

	if (step == 0 || check_aligned(r, K_SIZES, "step ", step) < 0) {
		if (step == 0)
			err_add(&r->e, key_line(r->t, K_SIZES), "sizes", "step is 0 bytes "
				"in a region of %llu bytes", (unsigned long long)region);
		return UINT64_MAX;
	}
	n = a > b ? 0 : (b - a) / step + 1;
	for (uint64_t i = 0; i < n && i < CFG_MAX_SIZES; i++)
		v[i] = a + i * step;
	return n;
}

/* Expand sizes into out->sizes. Returns 0 or -EINVAL (error added). */
static int expand_sizes(struct resolver *r)
{
	const struct cfg_sizes *s = &r->t->sizes;
	struct cfg_layout *o = r->out;
	int line = key_line(r->t, K_SIZES);
	uint64_t n;

	if (!s->is_range) {
		for (int i = 0; i < s->n; i++)
			o->sizes[i] = util_qty_resolve(&s->list[i], o->region_size, r->lbs);
		o->nsizes = s->n;
		return 0;
	}
	if (s->start.is_percent && s->end.is_percent && s->step.is_percent)
		n = percent_range(r, o->sizes);
	else
		n = byte_range(r, o->sizes);
	if (n == UINT64_MAX)
		return -EINVAL;
	if (n == 0) {
		err_add(&r->e, line, "sizes", "the range is empty: start is larger than end");
		return -EINVAL;
	}
	if (n > CFG_MAX_SIZES) {
		err_add(&r->e, line, "sizes", "the range gives %llu sizes, more than %d",
			(unsigned long long)n, CFG_MAX_SIZES);
		return -EINVAL;
	}
	o->nsizes = (int)n;
	return 0;
}

static void check_sizes(struct resolver *r)
{
	const struct cfg_layout *o = r->out;
	int line = key_line(r->t, K_SIZES);
	char b1[48], b2[48];

	for (int i = 0; i < o->nsizes; i++) {
		uint64_t v = o->sizes[i];

		if (v == 0)
			err_add(&r->e, line, "sizes", "size %d is 0 bytes (the region has %s)",
				i + 1, fmt_both(o->region_size, b1, sizeof(b1)));
		else if (v > o->region_size)
			err_add(&r->e, line, "sizes", "size %s is larger than the region of %s",
				fmt_both(v, b1, sizeof(b1)),
				fmt_both(o->region_size, b2, sizeof(b2)));
		else if (check_aligned(r, K_SIZES, "size ", v) < 0)
			continue;
		else if (i > 0 && v <= o->sizes[i - 1])
			err_add(&r->e, line, "sizes", "sizes must be strictly increasing: %s "
				"follows %s", fmt_both(v, b1, sizeof(b1)),
				fmt_both(o->sizes[i - 1], b2, sizeof(b2)));
	}
}

/* Block sizes fit the device and the smallest size. */
static void check_block(struct resolver *r, int k, uint64_t bs)
{
	char b1[48], b2[48];

	if (check_aligned(r, k, "", bs) < 0 || r->out->nsizes == 0)
		return;
	if (bs > r->out->sizes[0])
		err_add(&r->e, key_line(r->t, k), keys[k].name, "%s is larger than the "
			"smallest size %s", fmt_both(bs, b1, sizeof(b1)),
			fmt_both(r->out->sizes[0], b2, sizeof(b2)));
}

/* The critical threshold lies under the warning one (0 turns either off). */
static void check_alerts(struct resolver *r)
{
	const struct cfg_target *t = r->t;

	if (t->alert_critical > 0 && t->alert_below > 0 && t->alert_critical > t->alert_below)
		err_add(&r->e, key_line(t, K_ALERT_CRITICAL), "alert_critical", "%g%% is above "
			"alert_below %g%%; the critical threshold must be the lower one",
			t->alert_critical, t->alert_below);
}

/* Actions and filesystem mode: keys that only make sense together. */
static void check_actions(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	int fs = t->filesystem != FS_NONE;

	if (cfg_has_action(t, ACT_SECURE_ERASE) && t->secure_erase == ERASE_NONE)
		err_add(&r->e, key_line(t, K_SECURE_ERASE), "secure_erase", "between_cycles = "
			"secure-erase needs a method: ata, ata-enhanced, nvme-format, "
			"nvme-crypto-format, nvme-sanitize-block, nvme-sanitize-crypto, "
			"blksecdiscard, discard-all or command");
	if (t->secure_erase == ERASE_COMMAND && !t->secure_erase_command[0])
		err_add(&r->e, key_line(t, K_SECURE_ERASE_COMMAND), "secure_erase_command",
			"secure_erase = command needs the program to run");
	if (cfg_has_action(t, ACT_FITRIM) && !fs)
		err_add(&r->e, key_line(t, K_BETWEEN_CYCLES), "between_cycles", "fitrim needs "
			"a filesystem: set filesystem = ext4 or xfs (or use trim on the raw device)");
	if (cfg_has_action(t, ACT_TRIM) && fs)
		err_add(&r->e, key_line(t, K_BETWEEN_CYCLES), "between_cycles", "trim would "
			"discard under the mounted filesystem; use fitrim in filesystem mode");
	if (t->format_each_size && !fs)
		err_add(&r->e, key_line(t, K_FORMAT_EACH_SIZE), "format_each_size", "needs "
			"filesystem = ext4 or xfs");
	if (fs && r->out->region_offset)
		err_add(&r->e, key_line(t, K_REGION_OFFSET), "region_offset", "must be 0 in "
			"filesystem mode: the sizes are of the test file");
	if (fs && !cfg_workload_is_write(t->workload) && !t->fill)
		err_add(&r->e, key_line(t, K_FILL), "fill", "a read workload on a new file "
			"needs fill = yes in filesystem mode");
}

static const struct wl_named *named_workload(enum cfg_workload w)
{
	unsigned n;
	const struct wl_named *v = wl_names(&n);

	return (unsigned)w < n ? &v[w] : &v[0];
}

/* read_percent and random_percent shape the mixes and the presets only. */
static int workload_mixes(enum cfg_workload w)
{
	return w >= WL_RANDRW;
}

/* The measured workload: its block sizes fit the device and the smallest
 * size, its stride fits the smallest size. read_percent, random_percent and
 * stride are ignored by workloads they do not shape (one example file can
 * set them all). */
static void check_workload(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	int bs_key = t->block_sizes[0] ? K_BLOCK_SIZES : K_BLOCK_SIZE;
	struct wl_spec spec;
	char msg[MSG_MAX];

	int phases[CFG_MAX_PHASES];
	if (cfg_measure_phases(t, phases, msg, sizeof(msg)) < 0)
		err_add(&r->e, key_line(t, K_MEASURE), "measure", "%s", msg);
	if (cfg_workload_spec(t, t->workload, &spec, msg, sizeof(msg)) < 0) {
		err_add(&r->e, key_line(t, K_BLOCK_SIZES), "block_sizes", "%s", msg);
		return;
	}
	if (bs_key == K_BLOCK_SIZES)
		for (unsigned i = 0; i < spec.nbs; i++)
			check_block(r, K_BLOCK_SIZES, spec.bs[i].size);
	if (r->out->nsizes == 0 || spec.order != WO_STRIDE)
		return;
	uint64_t blocks = r->out->sizes[0] / wl_max_bs(&spec);
	if ((uint64_t)t->stride > blocks)
		err_add(&r->e, key_line(t, K_STRIDE), "stride", "%lld is larger than the "
			"%llu blocks of the smallest size", t->stride, (unsigned long long)blocks);
}

/* Keys of the method that exclude each other. */
static void check_method(struct resolver *r)
{
	const struct cfg_target *t = r->t;

	if (t->steady_state == STEADY_SNIA && t->repeat > 1)
		err_add(&r->e, key_line(t, K_REPEAT), "repeat", "%lld with steady_state = "
			"snia: rounds already repeat each phase; use one or the other",
			t->repeat);
}

int cfg_resolve(const struct cfg *c, const struct cfg_target *t,
		uint64_t capacity, uint32_t lbs, struct cfg_layout *out,
		char *err, size_t errlen)
{
	struct resolver r = { .e = { .file = c->path }, .t = t, .out = out, .lbs = lbs };

	memset(out, 0, sizeof(*out));
	out->capacity = capacity;
	out->logical_block_size = lbs;
	if (lbs < 512 || (lbs & (lbs - 1)) || capacity == 0) {
		err_add(&r.e, t->section_line, "device", "device reports capacity %llu and "
			"logical block size %u; need a capacity and a power of two >= 512",
			(unsigned long long)capacity, lbs);
		return errs_finish(&r.e, err, errlen);
	}
	resolve_region(&r);
	if (!r.e.n && expand_sizes(&r) == 0)
		check_sizes(&r);
	check_block(&r, K_BLOCK_SIZE, t->block_size);
	if (t->fill)
		check_block(&r, K_FILL_BLOCK_SIZE, t->fill_block_size);
	check_alerts(&r);
	check_actions(&r);
	check_workload(&r);
	check_method(&r);
	return errs_finish(&r.e, err, errlen);
}

/* ---- public API ---- */

const struct cfg_key *cfg_keys(size_t *n)
{
	*n = K__COUNT;
	return keys;
}

int cfg_key_index(const char *name)
{
	for (int i = 0; i < K__COUNT; i++)
		if (strcmp(keys[i].name, name) == 0)
			return i;
	return -ENOENT;
}

int cfg_parse_string(const char *text, const char *label, struct cfg **out,
		     char *err, size_t errlen)
{
	return parse_text(text, strlen(text), label, out, err, errlen);
}

int cfg_load(const char *path, struct cfg **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	if (!f) {
		rc = -errno;
		goto fail;
	}
	buf = malloc(FILE_MAX + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto fail;
	}
	n = fread(buf, 1, FILE_MAX + 1, f);
	if (ferror(f)) {
		rc = -EIO;
		goto fail;
	}
	if (n > FILE_MAX) {
		rc = -EFBIG;
		goto fail;
	}
	fclose(f);
	rc = parse_text(buf, n, path, out, err, errlen);
	free(buf);
	return rc;
fail:
	snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-rc));
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

void cfg_free(struct cfg *c)
{
	if (!c)
		return;
	free(c->targets);
	free(c);
}

int cfg_line(const struct cfg_target *t, const char *key)
{
	int k = cfg_key_index(key);

	return k < 0 ? 0 : t->lines[k];
}

static const char *choice_name(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "unknown";
}

const char *cfg_workload_name(enum cfg_workload w)
{
	return choice_name(workload_names, WL__COUNT, (int)w);
}

const char *cfg_action_name(enum cfg_action a)
{
	return choice_name(action_names, ACT__COUNT, (int)a);
}

enum cfg_action cfg_action_after(const struct cfg_target *t, long cycle)
{
	if (t->between_cycles.n <= 0)
		return ACT_NONE;
	return t->between_cycles.a[(cycle > 0 ? cycle - 1 : 0) % t->between_cycles.n];
}

int cfg_has_action(const struct cfg_target *t, enum cfg_action a)
{
	for (int i = 0; i < t->between_cycles.n; i++)
		if (t->between_cycles.a[i] == a)
			return 1;
	return 0;
}

const char *cfg_erase_name(enum cfg_erase e)
{
	return choice_name(erase_names, ERASE__COUNT, (int)e);
}

const char *cfg_filesystem_name(enum cfg_filesystem f)
{
	return choice_name(filesystem_names, (int)ARRAY_SIZE(filesystem_names) - 1, (int)f);
}

const char *cfg_trim_scope_name(enum cfg_trim_scope s)
{
	return choice_name(trim_scope_names, (int)ARRAY_SIZE(trim_scope_names) - 1, (int)s);
}

const char *cfg_baseline_name(enum cfg_baseline b)
{
	return choice_name(baseline_names, BASELINE__COUNT, (int)b);
}

int cfg_workload_is_write(enum cfg_workload w)
{
	return named_workload(w)->read_pct == 0;
}

int cfg_workload_is_random(enum cfg_workload w)
{
	const struct wl_named *n = named_workload(w);

	return n->order == WO_RANDOM && n->random_pct == 100;
}

int cfg_measure_phases(const struct cfg_target *t, int *out, char *msg, size_t len)
{
	char buf[sizeof(t->measure)], *save = NULL;
	int n = 0;

	util_strlcpy(buf, t->measure, sizeof(buf));
	for (char *tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		int w = -2;
		if (n == CFG_MAX_PHASES) {
			snprintf(msg, len, "more than %d phases", CFG_MAX_PHASES);
			return -EINVAL;
		}
		if (!strcasecmp(tok, "fill"))
			w = CFG_PHASE_FILL;
		for (int i = 0; i < WL__COUNT && w == -2; i++)
			if (!strcasecmp(tok, workload_names[i]))
				w = i;
		if (w == -2) {
			snprintf(msg, len, "\"%s\" is neither fill nor a workload (seqwrite, "
				 "randwrite, randread, randrw, database, ...)", tok);
			return -EINVAL;
		}
		out[n++] = w;
	}
	if (!n)
		out[n++] = (int)t->workload;
	return n;
}

int cfg_workload_spec(const struct cfg_target *t, enum cfg_workload w, struct wl_spec *out,
		      char *msg, size_t len)
{
	const struct wl_named *n = named_workload(w);

	memset(out, 0, sizeof(*out));
	out->order = n->order;
	out->read_pct = n->read_pct;
	out->random_pct = n->random_pct;
	out->stride = (uint64_t)t->stride;
	if (workload_mixes(w) && t->lines[K_READ_PERCENT])
		out->read_pct = (unsigned)t->read_percent;
	if (workload_mixes(w) && t->lines[K_RANDOM_PERCENT])
		out->random_pct = (unsigned)t->random_percent;
	if (t->block_sizes[0])
		return wl_parse_block_sizes(t->block_sizes, out, msg, len);
	if (n->block_sizes)
		return wl_parse_block_sizes(n->block_sizes, out, msg, len);
	out->nbs = 1;
	out->bs[0].size = (uint32_t)t->block_size;
	out->bs[0].weight = 1;
	return 0;
}
