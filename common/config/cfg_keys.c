/* cfg_keys: the key table (name, type, default, range, help) and one
 * parser per value type; names of the enumerated values. */
#include "config/cfg_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "io/engine.h"
#include "config/names.h"
#include "io/workload.h"

static const char *const filesystem_names[] = {
	[FS_NONE] = "none",
	[FS_EXT4] = "ext4",
	[FS_XFS] = "xfs",
	NULL,
};
static const char *const erase_names[] = {
	[ERASE_NONE] = "none",
	[ERASE_ATA] = "ata",
	[ERASE_ATA_ENHANCED] = "ata-enhanced",
	[ERASE_NVME_FORMAT] = "nvme-format",
	[ERASE_NVME_CRYPTO_FORMAT] = "nvme-crypto-format",
	[ERASE_NVME_SANITIZE_BLOCK] = "nvme-sanitize-block",
	[ERASE_NVME_SANITIZE_CRYPTO] = "nvme-sanitize-crypto",
	[ERASE_BLKSECDISCARD] = "blksecdiscard",
	[ERASE_DISCARD_ALL] = "discard-all",
	[ERASE_COMMAND] = "command",
	[ERASE_SCSI_SANITIZE_BLOCK] = "scsi-sanitize-block",
	[ERASE_SCSI_SANITIZE_CRYPTO] = "scsi-sanitize-crypto",
	[ERASE_SCSI_FORMAT] = "scsi-format",
	[ERASE__COUNT] = NULL,
};
static const char *const hir_purge_names[] = {
	[HIR_PURGE_AUTO] = "auto",
	[HIR_PURGE_SECURE_ERASE] = "secure-erase",
	[HIR_PURGE_TRIM] = "trim",
	[HIR_PURGE_NONE] = "none",
	NULL,
};
static const char *const on_error_names[] = {
	[ON_ERROR_STOP] = "stop",
	[ON_ERROR_CONTINUE] = "continue",
	NULL,
};
static const char *const steady_names[] = {
	[STEADY_NONE] = "none",
	[STEADY_SNIA] = "snia",
	NULL,
};
static const char *const trim_scope_names[] = {
	[TRIM_REGION] = "region",
	[TRIM_DEVICE] = "device",
	NULL,
};

#define TF(f) .offset = offsetof(struct cfg_target, f), .size = sizeof(((struct cfg_target *)0)->f)
#define GF(f) .offset = offsetof(struct cfg, f), .size = sizeof(((struct cfg *)0)->f), .global = 1
#define BLOCK_RANGE .min = 512, .max = 64 * MIB, .align = 512

const struct cfg_key cfg_table[K__COUNT] = {
	[K_DATABASE] = { "database", CT_STRING, GF(database), .def = "/var/lib/wearmon/wearmon.db",
			 .help = "SQLite history file; its directory must exist" },
	[K_METRICS_FILE] = { "metrics_file", CT_PATH, GF(metrics_file), .def = "",
			     .help = "Prometheus text file for node_exporter's textfile collector "
				     "(e.g. /var/lib/node_exporter/textfile_collector/wearmon.prom); "
				     "empty = none" },
	[K_SAMPLE_RETENTION] = { "sample_retention", CT_DURATION, GF(sample_retention),
				 .def = "30d", .forever = 1,
				 .help = "keep 1-second samples this long after their iteration "
					 "ended, then per-minute rollups; 0 or forever = keep all" },
	[K_DEVICE] = { "device", CT_STRING, TF(device), .required = 1,
		       .help = "the block device or regular file under test" },
	[K_FILE_SIZE] = { "file_size", CT_BYTES, TF(file_size), .def = "0",
			  .help = "capacity of a regular-file target; ignored for block devices" },
	[K_ALLOW_DESTROY] = { "allow_destroy", CT_BOOL, TF(allow_destroy), .def = "no",
			      .help = "required before anything writes to a block device or to a "
				      "file with data that wearmon did not create" },
	[K_ADOPT_NEW_DEVICE] = { "adopt_new_device", CT_BOOL, TF(adopt_new_device), .def = "no",
				 .help = "accept a device whose identity differs from the one "
					 "recorded for this target name: a new campaign starts" },
	[K_REGION_OFFSET] = { "region_offset", CT_QTY, TF(region_offset), .def = "0",
			      .help = "start of the region under test: bytes or % of capacity" },
	[K_REGION_SIZE] = { "region_size", CT_QTY, TF(region_size), .def = "100%",
			    .help = "length of the region under test: bytes or % of capacity" },
	[K_SIZES] = { "sizes", CT_SIZES, TF(sizes), .def = "100%",
		      .help = "growing sizes: start:end:step or a list; % of the region" },
	[K_FILL] = { "fill", CT_BOOL, TF(fill), .def = "yes",
		     .help = "write each whole size sequentially before measuring it" },
	[K_FILL_BLOCK_SIZE] = { "fill_block_size", CT_BYTES, TF(fill_block_size), .def = "128k",
				BLOCK_RANGE, .help = "block size of the fill" },
	[K_FILL_QUEUE_DEPTH] = { "fill_queue_depth", CT_INT, TF(fill_queue_depth), .def = "16",
				 .min = 1, .max = 1024, .help = "I/Os in flight during the fill" },
	[K_WORKLOAD] = { "workload", CT_ENUM, TF(workload), .def = "randwrite",
			 .choices = cfg_workload_names,
			 .help = "access pattern of the measured phase" },
	[K_BLOCK_SIZE] = { "block_size", CT_BYTES, TF(block_size), .def = "4k", BLOCK_RANGE,
			   .help = "block size of the measured phase" },
	[K_QUEUE_DEPTH] = { "queue_depth", CT_INT, TF(queue_depth), .def = "32", .min = 1,
			    .max = 1024, .help = "I/Os in flight in the measured phase" },
	[K_AMOUNT] = { "amount", CT_AMOUNT, TF(amount), .def = "1x",
		       .help = "bytes the measured phase moves: a multiple of the size or bytes" },
	[K_DURATION] = { "duration", CT_DURATION, TF(duration), .def = "0",
			 .help = "time limit of the measured phase (0 = none)" },
	[K_DEDUPE_PERCENT] = { "dedupe_percent", CT_INT, TF(dedupe_percent), .def = "0", .min = 0,
			       .max = 100,
			       .help = "percent of writes that repeat an earlier block exactly" },
	[K_COMPRESSIBILITY] = { "compressibility", CT_INT, TF(compressibility), .def = "0",
				.min = 0, .max = 100,
				.help = "percent of each block that compresses away" },
	[K_BETWEEN_CYCLES] = { "between_cycles", CT_ACTION, TF(between_cycles), .def = "none",
			       .choices = cfg_action_names, .help = "action after each cycle" },
	[K_TRIM_SCOPE] = { "trim_scope", CT_ENUM, TF(trim_scope), .def = "region",
			   .choices = trim_scope_names,
			   .help = "what between_cycles = trim discards" },
	[K_CYCLES] = { "cycles", CT_INT, TF(cycles), .def = "0", .min = 0,
		       .help = "cycles to run; 0 = forever" },
	[K_PAUSE] = { "pause", CT_DURATION, TF(pause), .def = "0s", .help = "wait between cycles" },
	[K_SAMPLE_INTERVAL] = { "sample_interval", CT_DURATION, TF(sample_interval), .def = "1s",
				.min = 100, .max = 3600 * 1000,
				.help = "length of one throughput sample" },
	[K_DEVICE_POLL_INTERVAL] = { "device_poll_interval", CT_DURATION, TF(device_poll_interval),
				     .def = "1s", .min = 100, .max = 1000,
				     .help = "how often the drive's own counters are read "
					     "during an iteration" },
	[K_ALERT_BELOW] = { "alert_below", CT_PERCENT, TF(alert_below), .def = "50%", .min = 0,
			    .max = 100,
			    .help = "warn when an iteration falls below this % of its baseline" },
	[K_ALERT_CRITICAL] = { "alert_critical", CT_PERCENT, TF(alert_critical), .def = "25%",
			       .min = 0, .max = 100,
			       .help = "critical when an iteration falls below this % of its baseline" },
	[K_BASELINE] = { "baseline", CT_ENUM, TF(baseline), .def = "first",
			 .choices = cfg_baseline_names,
			 .help = "what every iteration is compared with: first, best or previous "
				 "iteration of the campaign" },
	[K_SAMPLE_CRASH_BELOW] = { "sample_crash_below", CT_PERCENT, TF(sample_crash_below),
				   .def = "20%", .min = 0, .max = 100,
				   .help = "collapse: 3 samples in a row below this % of the iteration's average" },
	[K_RECOVERED_ABOVE] = { "recovered_above", CT_PERCENT, TF(recovered_above), .def = "90%",
				.min = 0, .max = 100,
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
	[K_FORMAT_EACH_SIZE] = { "format_each_size", CT_BOOL, TF(format_each_size), .def = "no",
				 .help = "make the filesystem again before every size" },
	[K_SECURE_ERASE] = { "secure_erase", CT_ENUM, TF(secure_erase), .def = "none",
			     .choices = erase_names,
			     .help = "how between_cycles = secure-erase erases" },
	[K_SECURE_ERASE_COMMAND] = { "secure_erase_command", CT_STRING, TF(secure_erase_command),
				     .def = "",
				     .help = "program run with the device path for secure_erase = command" },
	[K_SECURE_ERASE_PASSWORD] = { "secure_erase_password", CT_STRING, TF(secure_erase_password),
				      .def = "wearmon",
				      .help = "ATA security password set for the erase (up to 32 bytes)" },
	[K_COMMAND_TIMEOUT] = { "command_timeout", CT_DURATION, TF(command_timeout), .def = "1h",
				.help = "time limit of secure_erase_command and mkfs; their process "
					"group is killed then; 0 = none" },
	[K_IDLE] = { "idle", CT_DURATION, TF(idle), .def = "300s",
		     .help = "wait with no I/O for between_cycles = idle" },
	[K_ON_ACTION_ERROR] = { "on_action_error", CT_ENUM, TF(on_action_error), .def = "stop",
				.choices = on_error_names,
				.help = "stop the target or continue with the next cycle after a failed action" },
	[K_BLOCK_SIZES] = { "block_sizes", CT_MIX, TF(block_sizes), .def = "",
			    .help = "weighted block size mix, e.g. 512:10 4k:60 64k:30; empty = block_size" },
	[K_READ_PERCENT] = { "read_percent", CT_INT, TF(read_percent), .def = "50", .min = 0,
			     .max = 100,
			     .help = "randrw, seqrw and presets: percent of operations that read" },
	[K_RANDOM_PERCENT] = { "random_percent", CT_INT, TF(random_percent), .def = "100", .min = 0,
			       .max = 100,
			       .help = "randrw, seqrw and presets: percent of operations at random offsets" },
	[K_STRIDE] = { "stride", CT_INT, TF(stride), .def = "8", .min = 1,
		       .help = "strideread: read every stride-th block" },
	[K_VERIFY] = { "verify", CT_ENUM, TF(verify), .def = "none", .choices = cfg_verify_names,
		       .help = "none or crc32c: headers in written data, checked on every read" },
	[K_VERIFY_PHASE] = { "verify_phase", CT_BOOL, TF(verify_phase), .def = "no",
			     .help = "read back and check the whole size after its measured phase" },
	[K_ON_VERIFY_ERROR] = { "on_verify_error", CT_ENUM, TF(on_verify_error), .def = "stop",
				.choices = on_error_names,
				.help = "stop the target or continue after a block fails verification" },
	[K_MEASURE] = { "measure", CT_PHASES, TF(measure), .def = "",
			.help = "measured phases of each size, e.g. fill,randwrite,randread; "
				"empty = workload" },
	[K_REPEAT] = { "repeat", CT_INT, TF(repeat), .def = "1", .min = 1, .max = 1000,
		       .help = "runs of each measured phase per size (mean and stddev stored)" },
	[K_STEADY_STATE] = { "steady_state", CT_ENUM, TF(steady_state), .def = "none",
			     .choices = steady_names,
			     .help = "none, or snia: repeat rounds until the last 5 are steady (SNIA PTS)" },
	[K_MAX_ROUNDS] = { "max_rounds", CT_INT, TF(max_rounds), .def = "25", .min = 5, .max = 1000,
			   .help = "rounds at most per phase with steady_state = snia" },
	[K_JOBS] = { "jobs", CT_INT, TF(jobs), .def = "1", .min = 1, .max = ENGINE_MAX_JOBS,
		     .help = "threads per measured workload, each with its own queue; summed" },
	[K_IOENGINE] = { "ioengine", CT_ENUM, TF(ioengine), .def = "auto",
			 .choices = engine_kind_names,
			 .help = "auto (io_uring where the kernel and the security policy allow it, "
				 "else libaio), io_uring, libaio, sync (one I/O at a time), or null: "
				 "every I/O completes at once, the device is never read or written "
				 "(a dry run of the schedule)" },
	[K_IO_URING_SQPOLL] = { "io_uring_sqpoll", CT_BOOL, TF(io_uring_sqpoll), .def = "no",
				.help = "io_uring: a kernel thread per target takes the submissions "
					"(no system call per batch; that thread keeps a CPU busy)" },
	[K_HIR] = { "hir", CT_BOOL, TF(hir), .def = "no",
		    .help = "host idle recovery (SNIA PTS) after each cycle's sizes: random-write "
			    "precondition to steady state, then bursts after idle waits" },
	[K_HIR_WAIT_STATES] = { "hir_wait_states", CT_WAITS, TF(hir_wait_states),
				.def = "5s 10s 15s 25s 50s", .min = 1, .max = 24 * 3600 * 1000,
				.help = "idle waits before the bursts, each longer than the last" },
	[K_HIR_BURST] = { "hir_burst", CT_DURATION, TF(hir_burst), .def = "5s", .min = 100,
			  .max = 3600 * 1000,
			  .help = "length of one burst of 4 KiB random writes" },
	[K_HIR_REPETITIONS] = { "hir_repetitions", CT_INT, TF(hir_repetitions), .def = "360",
				.min = 1, .max = 100000,
				.help = "wait and burst repetitions per wait state" },
	[K_HIR_BASELINE] = { "hir_baseline", CT_DURATION, TF(hir_baseline), .def = "1800s",
			     .min = 0, .max = 24 * 3600 * 1000,
			     .help = "continuous writing after each wait state (return to "
				     "baseline); 0 = none" },
	[K_HIR_ROUND] = { "hir_round", CT_DURATION, TF(hir_round), .def = "60s", .min = 100,
			  .max = 24 * 3600 * 1000,
			  .help = "length of one precondition round (rounds until steady state, "
				  "max_rounds at most)" },
	[K_HIR_PURGE] = { "hir_purge", CT_ENUM, TF(hir_purge), .def = "auto",
			  .choices = hir_purge_names,
			  .help = "purge before the precondition: auto (secure_erase when set, "
				  "else TRIM, else none), secure-erase, trim or none" },
	[K_PTS] = { "pts", CT_PTS, TF(pts), .def = "", .choices = cfg_pts_names,
		    .help = "SNIA PTS tests run as presets every cycle, in order: iops, "
			    "throughput, latency, wsat, hir, xsr, dirth; empty = none" },
	[K_PTS_VARIANT] = { "pts_variant", CT_ENUM, TF(pts_variant), .def = "enterprise",
			    .choices = cfg_pts_variant_names,
			    .help = "enterprise or client: the PTS variant's block sizes, active "
				    "range and demand intensity" },
	[K_PTS_CELL] = { "pts_cell", CT_DURATION, TF(pts_cell), .def = "60s", .min = 50,
			 .max = 24 * 3600 * 1000,
			 .help = "length of one cell of a PTS test (one access pattern, one row)" },
	[K_PTS_THREADS] = { "pts_threads", CT_INT, TF(pts_threads), .def = "0", .min = 0,
			    .max = ENGINE_MAX_JOBS,
			    .help = "threads of the PTS tests (dirth: the most swept); 0 = the "
				    "variant's default" },
	[K_PTS_QUEUE_DEPTH] = { "pts_queue_depth", CT_INT, TF(pts_queue_depth), .def = "0",
				.min = 0, .max = 1024,
				.help = "queue depth per thread of the PTS tests (dirth: the deepest "
					"swept); 0 = the variant's default" },
	[K_PTS_ACTIVE_RANGE] = { "pts_active_range", CT_PERCENT, TF(pts_active_range), .def = "0",
				 .min = 0, .max = 100,
				 .help = "share of the region the PTS tests address; 0 = the "
					 "variant's (enterprise 100%, client 75%)" },
	[K_PTS_XSR_SEGMENT] = { "pts_xsr_segment", CT_DURATION, TF(pts_xsr_segment), .def = "30m",
				.min = 50, .max = 7 * 24 * 3600 * 1000LL,
				.help = "length of each of the three access groups of the xsr test" },
	[K_PTS_WSAT_AMOUNT] = { "pts_wsat_amount", CT_AMOUNT, TF(pts_wsat_amount), .def = "4x",
				.help = "bytes the wsat test writes: a multiple of the active range "
					"or bytes" },
	/* the rated endurance: what the endurance forecast compares with */
	[K_RATED_TBW] = { "rated_tbw", CT_BYTES, TF(rated_tbw), .def = "0",
			  .help = "rated endurance in host bytes written, e.g. 600TB (TB: 10^12 "
				  "bytes); 0 = none" },
	[K_RATED_DWPD] = { "rated_dwpd", CT_REAL, TF(rated_dwpd), .def = "0", .min = 0, .max = 1000,
			   .help = "rated drive writes per day over warranty_years, instead of "
				   "rated_tbw; 0 = none" },
	[K_WARRANTY_YEARS] = { "warranty_years", CT_REAL, TF(warranty_years), .def = "0", .min = 0,
			       .max = 100,
			       .help = "years of the warranty (and of rated_dwpd); 0 = none" },
	[K_WARRANTY_START] = { "warranty_start", CT_DATE, TF(warranty_start), .def = "",
			       .help = "day the warranty began, YYYY-MM-DD (UTC); empty = the day "
				       "wearmon first saw the drive" },
	/* where random offsets fall (common/io/access.h), where sizes start */
	[K_ACCESS] = { "access", CT_ACCESS, TF(access), .def = "uniform",
		       .help = "random offsets: uniform, zoned:IO/LBA:... (e.g. "
			       "zoned:50/5:30/15:20/80), zipf:THETA or pareto:H; set, it "
			       "replaces the workload's own" },
	[K_BLOCK_ALIGN] = { "block_align", CT_BYTES, TF(block_align), .def = "0", .min = 0,
			    .max = 64 * MIB, .align = 512,
			    .help = "I/Os of this size or more start at its multiples, smaller "
				    "ones at the logical block size's; 0 = each at its own size's; "
				    "set, it replaces the workload's own" },
};

/* ---- value parsers, one per type; each fills msg on error ---- */

typedef int (*value_fn)(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len);

/* Copy v into a string field of k->size bytes, refusing to truncate. */
static int store_string(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	if (strlen(v) >= k->size) {
		snprintf(msg, len, "is longer than %zu characters", k->size - 1);
		return -EINVAL;
	}
	util_strlcpy(field, v, k->size);
	return 0;
}

static int parse_string(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	/* Optional strings default to "" and may be set back to it. */
	if (!*v && !(k->def && !*k->def)) {
		snprintf(msg, len, "must not be empty");
		return -EINVAL;
	}
	return store_string(k, v, field, msg, len);
}

static int parse_bool(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	if (util_parse_bool(v, field) < 0) {
		snprintf(msg, len, "\"%s\" is not a boolean (use yes or no)", v);
		return -EINVAL;
	}
	return 0;
}

/* "512 bytes", "1073741824 bytes (1.00 GiB)" */
const char *cfg_fmt_both(uint64_t b, char *buf, size_t len)
{
	char h[32];

	if (b < 1024)
		snprintf(buf, len, "%llu bytes", (unsigned long long)b);
	else
		snprintf(buf, len, "%llu bytes (%s)", (unsigned long long)b,
			 util_fmt_bytes(b, h, sizeof(h)));
	return buf;
}

static int parse_bytes(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
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
				 cfg_fmt_both((uint64_t)k->min, lo, sizeof(lo)),
				 cfg_fmt_both((uint64_t)k->max, hi, sizeof(hi)));
		else
			snprintf(msg, len, "\"%s\" is below the minimum %s", v,
				 cfg_fmt_both((uint64_t)k->min, lo, sizeof(lo)));
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
static int qty_or_msg(const char *v, const char *what, struct qty *q, char *msg, size_t len)
{
	int rc = util_parse_qty(v, q);

	if (rc == -ERANGE && strchr(v, '%'))
		snprintf(msg, len, "%s\"%s\" is out of range 0%%..100%%", what, v);
	else if (rc == -ERANGE)
		snprintf(msg, len, "%s\"%s\" is too large (at most 16 EiB)", what, v);
	else if (rc < 0)
		snprintf(msg, len,
			 "%s\"%s\" is not a byte size or percentage "
			 "(use e.g. 0, 4096, 1G or 80%%)",
			 what, v);
	return rc < 0 ? -EINVAL : 0;
}

static int parse_qty(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	return qty_or_msg(v, "", field, msg, len);
}

static int parse_int(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
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

static int parse_duration(const struct cfg_key *k, const char *v, void *field, char *msg,
			  size_t len)
{
	double s;
	int rc = k->forever && !strcasecmp(v, "forever") ? (s = 0, 0) : util_parse_duration(v, &s);

	if (rc == -ERANGE) {
		snprintf(msg, len, "\"%s\" is too long", v);
		return -EINVAL;
	}
	if (rc < 0) {
		snprintf(msg, len,
			 "\"%s\" is not a duration (use e.g. 0, 30s, 5m, "
			 "1.5h, 2d, 250ms)",
			 v);
		return -EINVAL;
	}
	if (s * 1000 < (double)k->min - 1e-6 || (k->max && s * 1000 > (double)k->max + 1e-6)) {
		snprintf(msg, len, "\"%s\" is out of range %gs..%gs", v, (double)k->min / 1000,
			 (double)k->max / 1000);
		return -EINVAL;
	}
	*(double *)field = s;
	return 0;
}

static int parse_choice(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len);

/* A list of actions separated by blanks or commas. */
static int parse_actions(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	struct cfg_actions *out = field, acts = { .n = 0 };
	char buf[512], *tok[CFG_MAX_ACTIONS];
	int n = util_split_list(v, buf, sizeof(buf), tok, CFG_MAX_ACTIONS, "actions", msg, len);

	if (n < 0)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		int a;
		if (parse_choice(k, tok[i], &a, msg, len))
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

static int parse_choice(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
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
		used += (size_t)snprintf(msg + used, len - used, "%s %s", i ? "," : "",
					 k->choices[i]);
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
			snprintf(msg, len,
				 "\"%s\" is not a range (use start:end:step, "
				 "e.g. 10%%:100%%:10%% or 1G:4G:1G)",
				 v);
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
	char buf[LABEL_MAX], *tok[CFG_MAX_SIZES];
	int n = util_split_list(v, buf, sizeof(buf), tok, CFG_MAX_SIZES, "sizes", msg, len);

	if (n < 0)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (qty_or_msg(tok[i], "size ", &s->list[s->n], msg, len) < 0)
			return -EINVAL;
		s->n++;
	}
	if (s->n == 0) {
		snprintf(msg, len, "no sizes given (use e.g. 10%%:100%%:10%% or 1G 2G 4G)");
		return -EINVAL;
	}
	return 0;
}

static int parse_sizes(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
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

static int parse_amount(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	struct cfg_amount a = { 0 };
	char buf[LABEL_MAX];
	size_t n;

	util_strlcpy(buf, v, sizeof(buf));
	n = strlen(util_strip(buf));
	if (n > 1 && (buf[n - 1] == 'x' || buf[n - 1] == 'X')) {
		buf[n - 1] = '\0';
		a.is_multiple = 1;
		if (util_parse_double(buf, &a.multiple) < 0 || a.multiple <= 0 || a.multiple > 1e6)
			goto bad;
	} else if (util_parse_bytes(buf, &a.bytes) < 0 || a.bytes == 0) {
		goto bad;
	}
	*(struct cfg_amount *)field = a;
	return 0;
bad:
	snprintf(msg, len,
		 "\"%s\" is not an amount (use a multiple of the size "
		 "such as 1x or 2.5x, or bytes such as 64G; more than 0)",
		 v);
	return -EINVAL;
}

/* "50%" or "50": a percentage within the key's min..max. */
static int parse_percent(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
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
static int parse_path(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	if (*v && *v != '/') {
		snprintf(msg, len,
			 "\"%s\" is not an absolute path (start with /, or "
			 "leave empty for none)",
			 v);
		return -EINVAL;
	}
	return store_string(k, v, field, msg, len);
}

/* "512:10 4k:90" (or "4k"); empty: none. */
static int parse_mix(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	struct cfg_mix *out = field;
	struct workload_spec spec;

	if (!v[strspn(v, " \t")]) {
		out->n = 0;
		return 0;
	}
	memset(&spec, 0, sizeof(spec));
	if (workload_parse_block_sizes(v, &spec, msg, len) < 0)
		return -EINVAL;
	memcpy(out->bs, spec.bs, sizeof(out->bs));
	out->n = spec.nbs;
	return 0;
}

/* One phase name: "fill" or a workload. Returns it, or -EINVAL. */
static int phase_of(const char *tok)
{
	if (!strcasecmp(tok, "fill"))
		return CFG_PHASE_FILL;
	for (int i = 0; i < WL__COUNT; i++)
		if (!strcasecmp(tok, cfg_workload_names[i]))
			return i;
	return -EINVAL;
}

/* "fill,randwrite randread": phases separated by blanks or commas; empty:
 * the workload key. */
static int parse_phases(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	struct cfg_phases ph = { .n = 0 };
	char buf[512], *tok[CFG_MAX_PHASES];
	int n = util_split_list(v, buf, sizeof(buf), tok, CFG_MAX_PHASES, "phases", msg, len);

	if (n < 0)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		int w = phase_of(tok[i]);
		if (w == -EINVAL) {
			snprintf(msg, len,
				 "\"%s\" is neither fill nor a workload (seqwrite, "
				 "randwrite, randread, randrw, database, ...)",
				 tok[i]);
			return -EINVAL;
		}
		ph.phase[ph.n++] = w;
	}
	*(struct cfg_phases *)field = ph;
	return 0;
}

/* "5s 10s 15s": durations separated by blanks or commas, each within the
 * key's range and longer than the one before. */
static int parse_waits(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	struct cfg_waits w = { .n = 0 };
	char buf[512], *tok[CFG_MAX_WAITS];
	int n = util_split_list(v, buf, sizeof(buf), tok, CFG_MAX_WAITS, "wait states", msg, len);

	if (n < 0)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (parse_duration(k, tok[i], &w.s[w.n], msg, len))
			return -EINVAL;
		if (w.n && w.s[w.n] <= w.s[w.n - 1]) {
			snprintf(msg, len,
				 "\"%s\" is not longer than the wait before it (%gs): "
				 "list the waits in increasing order",
				 tok[i], w.s[w.n - 1]);
			return -EINVAL;
		}
		w.n++;
	}
	if (!w.n) {
		snprintf(msg, len, "no wait given (use e.g. 5s 10s 15s 25s 50s)");
		return -EINVAL;
	}
	*(struct cfg_waits *)field = w;
	return 0;
}

/* "iops throughput latency": PTS test names separated by blanks or commas,
 * each at most once; empty: none. */
static int parse_pts(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	struct cfg_pts_list p = { .n = 0 };
	char buf[512], *tok[CFG_MAX_PTS];
	int n = util_split_list(v, buf, sizeof(buf), tok, CFG_MAX_PTS, "tests", msg, len);

	if (n < 0)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		int t;
		if (parse_choice(k, tok[i], &t, msg, len))
			return -EINVAL;
		for (int j = 0; j < p.n; j++)
			if (p.t[j] == (enum cfg_pts)t) {
				snprintf(msg, len, "\"%s\" is listed twice", tok[i]);
				return -EINVAL;
			}
		p.t[p.n++] = (enum cfg_pts)t;
	}
	*(struct cfg_pts_list *)field = p;
	return 0;
}

/* A plain number within the key's range. */
static int parse_real(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	double d;

	if (util_parse_double(v, &d) < 0 || !isfinite(d)) {
		snprintf(msg, len, "\"%s\" is not a number (use e.g. 1 or 0.3)", v);
		return -EINVAL;
	}
	if (d < (double)k->min || d > (double)k->max) {
		snprintf(msg, len, "\"%s\" is out of range %lld..%lld", v, k->min, k->max);
		return -EINVAL;
	}
	*(double *)field = d;
	return 0;
}

/* A calendar date "YYYY-MM-DD" (kept as text), or empty for none. */
static int parse_date(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	struct tm tm = { 0 }, back;
	int y, m, d, n = 0;
	time_t t;

	if (!*v)
		return store_string(k, v, field, msg, len);
	if (sscanf(v, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || v[n] || strlen(v) != 10) {
		snprintf(msg, len, "\"%s\" is not a date (use YYYY-MM-DD, e.g. 2026-01-15)", v);
		return -EINVAL;
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = m - 1;
	tm.tm_mday = d;
	t = timegm(&tm);
	if (!gmtime_r(&t, &back) || back.tm_year != y - 1900 || back.tm_mon != m - 1 ||
	    back.tm_mday != d) {
		snprintf(msg, len, "\"%s\" is no day of the calendar", v);
		return -EINVAL;
	}
	return store_string(k, v, field, msg, len);
}

/* "uniform", "zoned:50/5:30/15:20/80", "zipf:1.2", "pareto:0.2". */
static int parse_access(const struct cfg_key *k, const char *v, void *field, char *msg, size_t len)
{
	return access_parse(v, field, msg, len);
}

static const value_fn parsers[CT__COUNT] = {
	[CT_STRING] = parse_string,  [CT_BOOL] = parse_bool,       [CT_BYTES] = parse_bytes,
	[CT_QTY] = parse_qty,        [CT_INT] = parse_int,         [CT_DURATION] = parse_duration,
	[CT_ACTION] = parse_actions, [CT_SIZES] = parse_sizes,     [CT_AMOUNT] = parse_amount,
	[CT_ENUM] = parse_choice,    [CT_PERCENT] = parse_percent, [CT_PATH] = parse_path,
	[CT_MIX] = parse_mix,        [CT_PHASES] = parse_phases,   [CT_WAITS] = parse_waits,
	[CT_PTS] = parse_pts,        [CT_REAL] = parse_real,       [CT_DATE] = parse_date,
	[CT_ACCESS] = parse_access,
};

/* Parse v as key k into the struct at base. Returns 0 or -EINVAL / -ENOMEM. */
int cfg_set_value(const struct cfg_key *k, void *base, const char *v, char *msg, size_t len)
{
	return parsers[k->type](k, v, (char *)base + k->offset, msg, len);
}

static const char *choice_name(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "unknown";
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

const char *cfg_filesystem_name(enum cfg_filesystem f)
{
	return choice_name(filesystem_names, (int)ARRAY_SIZE(filesystem_names) - 1, (int)f);
}

const char *cfg_erase_name(enum cfg_erase e)
{
	return choice_name(erase_names, (int)ARRAY_SIZE(erase_names) - 1, (int)e);
}

const char *cfg_hir_purge_name(enum cfg_hir_purge p)
{
	return choice_name(hir_purge_names, (int)ARRAY_SIZE(hir_purge_names) - 1, (int)p);
}

int cfg_hir_erases(const struct cfg_target *t)
{
	return t->hir && t->secure_erase != ERASE_NONE &&
	       (t->hir_purge == HIR_PURGE_AUTO || t->hir_purge == HIR_PURGE_SECURE_ERASE);
}

int cfg_secure_erases(const struct cfg_target *t)
{
	return cfg_has_action(t, ACT_SECURE_ERASE) || cfg_hir_erases(t);
}

const char *cfg_ioengine_name(enum engine_kind e)
{
	return engine_kind_name(e);
}

int cfg_measure_phases(const struct cfg_target *t, int *out, char *msg, size_t len)
{
	(void)msg, (void)len;
	if (!t->measure.n) {
		out[0] = (int)t->workload;
		return 1;
	}
	memcpy(out, t->measure.phase, (size_t)t->measure.n * sizeof(*out));
	return t->measure.n;
}
