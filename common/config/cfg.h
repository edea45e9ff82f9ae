/* cfg: the configuration file (inih), table-driven keys with defaults and
 * ranges, and resolution of relative sizes once a target's capacity is known.
 * Never touches a device or the database. */
#ifndef WEARMON_CFG_H
#define WEARMON_CFG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "config/cfg_diff.h"
#include "config/names.h"
#include "io/engine_list.h"
#include "io/workload.h"

#define CFG_NAME_MAX 64
#define CFG_MAX_SIZES 256
#define CFG_MAX_KEYS 128
#define CFG_ERR_MAX 4096

/* steady_state: one round per phase, or rounds until SNIA PTS steady state. */
enum cfg_steady { STEADY_NONE, STEADY_SNIA };

/* filesystem mode: the test file lives on a filesystem wearmond makes. */
enum cfg_filesystem { FS_NONE, FS_EXT4, FS_XFS };

/* How between_cycles = secure-erase erases. */
enum cfg_erase {
	ERASE_NONE,
	ERASE_ATA,
	ERASE_ATA_ENHANCED,
	ERASE_NVME_FORMAT,
	ERASE_NVME_CRYPTO_FORMAT,
	ERASE_NVME_SANITIZE_BLOCK,
	ERASE_NVME_SANITIZE_CRYPTO,
	ERASE_BLKSECDISCARD,
	ERASE_DISCARD_ALL,
	ERASE_COMMAND,
	ERASE_SCSI_SANITIZE_BLOCK,
	ERASE_SCSI_SANITIZE_CRYPTO,
	ERASE_SCSI_FORMAT,
	ERASE__COUNT
};

enum cfg_on_error { ON_ERROR_STOP, ON_ERROR_CONTINUE };

enum cfg_trim_scope { TRIM_REGION, TRIM_DEVICE };

/* "hir_purge": how host idle recovery purges the drive before its
 * precondition. auto: by secure_erase when one is set, else TRIM, else
 * none (recorded with why); the others only that one. */
enum cfg_hir_purge { HIR_PURGE_AUTO, HIR_PURGE_SECURE_ERASE, HIR_PURGE_TRIM, HIR_PURGE_NONE };

#define CFG_MAX_ACTIONS 16

/* "between_cycles": one action, or a list taken in turn, cycle after cycle
 * ("none none secure-erase" = an erase after every third cycle). */
struct cfg_actions {
	enum cfg_action a[CFG_MAX_ACTIONS];
	int n;
};

#define CFG_MAX_WAITS 16
#define HIR_BLOCK 4096u /* block size of the host idle recovery writes (SNIA PTS) */

/* "hir_wait_states": idle waits of the host idle recovery protocol, in
 * seconds, each longer than the one before. */
struct cfg_waits {
	double s[CFG_MAX_WAITS];
	int n;
};

#define CFG_MAX_PHASES 8
#define CFG_PHASE_FILL (-1) /* "fill" in measure: the fill, as a row */

/* "measure": the measured phases of each size, in order: enum cfg_workload
 * values, or CFG_PHASE_FILL. */
struct cfg_phases {
	int phase[CFG_MAX_PHASES];
	int n; /* 0: just the workload key */
};

#define CFG_MAX_PTS 8

/* "pts": the PTS tests every cycle runs, in order (n = 0: none). */
struct cfg_pts_list {
	enum cfg_pts t[CFG_MAX_PTS];
	int n;
};

/* "block_sizes": a weighted block size mix, in bytes. */
struct cfg_mix {
	struct workload_bs bs[WORKLOAD_MAX_BS];
	unsigned n; /* 0: none given */
};

/* Which keys the file set, by key index (cfg_key_index): the parser marks
 * a key when it stores a value read from the file, in the target's section
 * or in [wearmon]; defaults never mark it. */
struct cfg_set {
	uint64_t bits[(CFG_MAX_KEYS + 63) / 64];
};

/* "sizes": a start:end:step range or an explicit list, each possibly in %. */
struct cfg_sizes {
	int is_range;
	struct qty start, end, step;    /* when is_range */
	struct qty list[CFG_MAX_SIZES]; /* when !is_range */
	int n;
};

/* "amount": a multiple of the size ("1x") or bytes. */
struct cfg_amount {
	int is_multiple;
	double multiple;
	uint64_t bytes;
};

/* One [target NAME] section. Every field is a key of the same name. */
struct cfg_target {
	char name[CFG_NAME_MAX];  /* section name after "target " */
	char device[PATH_MAX];    /* block device or regular file path */
	uint64_t file_size;       /* capacity of a regular-file target */
	int allow_destroy;        /* required to write a block device */
	int adopt_new_device;     /* accept a device unlike the recorded one */
	struct qty region_offset; /* start of the region under test */
	struct qty region_size;   /* length of the region under test */
	struct cfg_sizes sizes;   /* growing sizes within the region */
	int fill;                 /* sequential fill before each size */
	uint64_t fill_block_size;
	long long fill_queue_depth;
	enum cfg_workload workload; /* measured phase */
	uint64_t block_size;
	long long queue_depth;
	struct cfg_amount amount;            /* bytes moved by the measured phase */
	double duration;                     /* seconds, 0 = no limit */
	long long compressibility;           /* 0..100 % of each block compressible */
	long long dedupe_percent;            /* 0..100 % of writes repeating a block */
	struct cfg_actions between_cycles;   /* action(s) after each cycle, in turn */
	enum cfg_trim_scope trim_scope;      /* region or whole device */
	char expect_serial[128];             /* refuse a device with another serial */
	enum cfg_filesystem filesystem;      /* none, ext4, xfs */
	char mkfs_options[256];              /* extra mkfs arguments, split on blanks */
	int format_each_size;                /* mkfs before every size */
	enum cfg_erase secure_erase;         /* method of between_cycles = secure-erase */
	char secure_erase_command[PATH_MAX]; /* program run with the device path */
	char secure_erase_password[33];      /* ATA security password used for erase */
	double command_timeout;            /* seconds secure_erase_command may run; 0 = no limit */
	double idle;                       /* seconds of between_cycles = idle */
	enum cfg_on_error on_action_error; /* stop or continue after a failed action */
	long long cycles;                  /* 0 = forever */
	double pause;                      /* seconds between cycles */
	double sample_interval;            /* seconds per sample */
	double device_poll_interval;       /* seconds between readings of the drive's
					      counters during an iteration (devpoll.h) */
	struct cfg_mix block_sizes;        /* weighted mix; n = 0: block_size / preset */
	long long read_percent;            /* mixes: share of reads (when set) */
	long long random_percent;          /* mixes: share of random offsets (when set) */
	long long stride;                  /* strideread: every stride-th block */
	enum cfg_verify verify;            /* none or crc32c headers in written data */
	int verify_phase;                  /* read back and check each size after measuring */
	enum cfg_on_error on_verify_error; /* stop or continue after a bad block */
	struct cfg_phases measure;         /* measured phases per size; n = 0: workload */
	long long repeat;                  /* runs of each measured phase */
	enum cfg_steady steady_state;      /* none, or rounds until SNIA steady state */
	long long max_rounds;              /* rounds at most with steady_state = snia */
	long long jobs;                    /* threads of each measured workload */
	enum engine_kind ioengine;         /* auto or an engine (io/engine_list.h) */
	int io_uring_sqpoll;               /* io_uring: a kernel thread submits */
	double alert_below;                /* % of baseline: crash warning (0 = off) */
	double alert_critical;             /* % of baseline: crash critical (0 = off) */
	enum cfg_baseline baseline;        /* what crash and recovery compare with */
	double sample_crash_below;         /* % of own average: collapse (0 = off) */
	double recovered_above;            /* % of baseline: recovery notice */
	char alert_command[PATH_MAX];      /* run per alert; "" = none */
	int hir;                           /* host idle recovery after each cycle's sizes */
	struct cfg_waits hir_wait_states;  /* its idle waits, increasing */
	double hir_burst;                  /* seconds of random writes per burst */
	long long hir_repetitions;         /* wait + burst per wait state */
	double hir_baseline;               /* seconds of writing after each wait state */
	double hir_round;                  /* seconds per precondition round */
	enum cfg_hir_purge hir_purge;      /* its purge before the precondition */
	struct cfg_pts_list pts;           /* PTS tests run as presets each cycle */
	enum cfg_pts_variant pts_variant;  /* enterprise or client */
	double pts_cell;                   /* seconds of one cell (one row) */
	long long pts_threads;             /* threads; 0: the variant's default */
	long long pts_queue_depth;         /* depth per thread; 0: the default */
	double pts_active_range;           /* % of the region; 0: the default */
	double pts_xsr_segment;            /* seconds of each XSR access group */
	struct cfg_amount pts_wsat_amount; /* WSAT: bytes written, of the range */
	/* the rated endurance the endurance forecast compares with */
	uint64_t rated_tbw;      /* host bytes; 0 = none */
	double rated_dwpd;       /* drive writes per day over warranty_years; 0 = none */
	double warranty_years;   /* 0 = none */
	char warranty_start[16]; /* YYYY-MM-DD; "" = when wearmon first saw the drive */
	/* where random offsets fall, and where each block size may start */
	struct access_spec access; /* uniform, zoned, zipf or pareto (when set) */
	uint64_t block_align;      /* bytes; 0: each I/O at a multiple of its size */
	struct cfg_set set;        /* keys the file set (target or [wearmon]) */
	int lines[CFG_MAX_KEYS];   /* line of each key, for messages only */
	int section_line;          /* line of the [target] header */
};

/* The whole file. */
struct cfg {
	char path[PATH_MAX];     /* file it came from (or a label) */
	char database[PATH_MAX]; /* [wearmon] database */
	int database_line;
	char metrics_file[PATH_MAX]; /* [wearmon] metrics_file; "" = none */
	double sample_retention;     /* [wearmon] seconds 1-second samples are
					kept before per-minute rollups; 0 = forever */
	struct cfg_set set;          /* global keys the file set */
	int lines[CFG_MAX_KEYS];     /* line of each global key, for messages */
	int section_line;            /* line of [wearmon] (0 = none) */
	struct cfg_target *targets;
	int ntargets;
	char *text; /* as resolved: every key's effective value */
};

/* A target's region and sizes in bytes, after cfg_resolve. */
struct cfg_layout {
	uint64_t capacity;
	uint32_t logical_block_size;
	uint64_t region_offset;
	uint64_t region_size;
	uint64_t sizes[CFG_MAX_SIZES];
	int nsizes;
};

enum cfg_type {
	CT_STRING,
	CT_BOOL,
	CT_BYTES,
	CT_QTY,
	CT_INT,
	CT_DURATION,
	CT_ACTION,
	CT_SIZES,
	CT_AMOUNT,
	CT_ENUM,    /* an enum: an int, index in choices */
	CT_MIX,     /* struct cfg_mix */
	CT_PHASES,  /* struct cfg_phases */
	CT_PERCENT, /* double, "50%" or "50", within min..max */
	CT_PATH,    /* absolute path or empty (none) */
	CT_WAITS,   /* struct cfg_waits: increasing durations */
	CT_PTS,     /* struct cfg_pts_list: PTS test names */
	CT_REAL,    /* double, a plain number within min..max */
	CT_DATE,    /* char[], "YYYY-MM-DD" (a calendar date, UTC) or empty */
	CT_ACCESS,  /* struct access_spec: where random offsets fall (io/access.h) */
	CT__COUNT
};

/* One row of the key table. */
struct cfg_key {
	const char *name;
	enum cfg_type type;
	size_t offset;      /* into struct cfg_target (or struct cfg) */
	size_t size;        /* of the field, for CT_STRING */
	const char *def;    /* default, parsed like a file value */
	long long min, max; /* range for CT_INT / CT_BYTES (max 0 = none),
				     CT_PERCENT (percent);
				     CT_DURATION: in milliseconds */
	int global;         /* 1: [wearmon] only; 0: target key */
	const char *help;
	uint64_t align;             /* CT_BYTES: must be a multiple (0 = any) */
	const char *const *choices; /* enum types: names by value, NULL-ended */
	int required;               /* 1: no default, every target must set it */
	int forever;                /* CT_DURATION: "forever" is accepted, as 0 */
};

/* The key table, for documentation and tests. Returns its rows; *n = count. */
const struct cfg_key *cfg_keys(size_t *n);

/* Row of the key table named name. Returns its index, or -ENOENT. */
int cfg_key_index(const char *name);

/* Parse a file. Returns 0, or -EINVAL with every problem in err, one per
 * line as "FILE:LINE: key: message"; -errno when the file cannot be read. */
int cfg_load(const char *path, struct cfg **out, char *err, size_t errlen);

/* Same from a string; label stands for the file name in messages. */
int cfg_parse_string(const char *text, const char *label, struct cfg **out, char *err,
		     size_t errlen);

/* Free a parsed configuration (NULL is fine). */
void cfg_free(struct cfg *c);

/* Line where key was set for t, 0 when it holds its default. */
int cfg_line(const struct cfg_target *t, const char *key);

/* Whether the file set key for t (in its section or in [wearmon]); 0 for
 * a key holding its default and for an unknown key. */
int cfg_is_set(const struct cfg_target *t, const char *key);

/* Compute region and sizes for a device of capacity bytes and logical block
 * size lbs. Returns 0 or -EINVAL with "FILE:LINE: key: message" in err. */
int cfg_resolve(const struct cfg *c, const struct cfg_target *t, uint64_t capacity, uint32_t lbs,
		struct cfg_layout *out, char *err, size_t errlen);

/* The PTS's largest block: the active range is a whole number of them. */
#define CFG_PTS_GRID (1024u * 1024u)

/* The share of the region, in percent, that t's PTS tests address:
 * pts_active_range, else the variant's (the client variant addresses the
 * first 75% of the LBAs, the enterprise one all of them). Pure. */
double cfg_pts_active_pct(const struct cfg_target *t);

/* The bytes of the active range of t's PTS tests (pts_active_range of a
 * region of region_size, the variant's share when 0), aligned down to
 * CFG_PTS_GRID; 0 when less than one grid unit. Pure. */
uint64_t cfg_pts_range(const struct cfg_target *t, uint64_t region_size);

/* The campaign key of t: "name=value" lines of the keys that define a
 * campaign (cfg_campaign.c), values as parsed. Returns the text (malloc'd)
 * or NULL when out of memory. */
char *cfg_campaign_key(const struct cfg_target *t);

/* Names of enum values, as written in the file (the shared ones are in
 * config/names.h). */

/* The action that follows cycle number cycle (1-based). */
enum cfg_action cfg_action_after(const struct cfg_target *t, long cycle);

/* Whether a appears in t's between_cycles list. */
int cfg_has_action(const struct cfg_target *t, enum cfg_action a);
const char *cfg_filesystem_name(enum cfg_filesystem f);
const char *cfg_erase_name(enum cfg_erase e);
const char *cfg_hir_purge_name(enum cfg_hir_purge p);

/* Whether host idle recovery's purge erases the drive by secure_erase
 * (hir_purge auto with a method set, or secure-erase). */
int cfg_hir_erases(const struct cfg_target *t);

/* Whether t erases the drive with secure_erase: between_cycles =
 * secure-erase, or cfg_hir_erases. The refusals of an erase apply then. */
int cfg_secure_erases(const struct cfg_target *t);
const char *cfg_ioengine_name(enum engine_kind e);

/* Workload properties: writes only; uniform random offsets only. */
int cfg_workload_is_write(enum cfg_workload w);
int cfg_workload_is_random(enum cfg_workload w);

/* Workload w of target t as a spec: the named pattern, the read_percent /
 * random_percent overrides and the block size mix (block_sizes, else the
 * preset's mix, else block_size); the overrides apply only when the file
 * set them (cfg_is_set). Returns 0 (msg unused: kept for the callers). */
int cfg_workload_spec(const struct cfg_target *t, enum cfg_workload w, struct workload_spec *out,
		      char *msg, size_t len);

/* The measured phases of one size: the measure list (workloads, or
 * CFG_PHASE_FILL), or just t->workload when it is empty. Returns the count,
 * 1..CFG_MAX_PHASES (the parser refused any other list). */
int cfg_measure_phases(const struct cfg_target *t, int *out, char *msg, size_t len);

#endif
