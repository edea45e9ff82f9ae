/* db: the SQLite history: schema and migrations, and every statement the
 * library runs, behind typed functions (the rest of common/ holds no SQL):
 * runs, targets, cycles, iterations, samples, events, progress, wear and
 * health rows, baselines, merging. States and outcomes come in as enums and
 * are turned into text here. Thread-safe: one connection, serialised by a
 * mutex. SQLite result codes never leave this module: functions return 0 or
 * a negative errno. db_query and db_write are the generic doors (for the
 * CLI's reads and for tests); each checks its bind count. */
#ifndef WEARMON_DB_H
#define WEARMON_DB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hist.h"
#include "base/proc.h"
#include "config/names.h"

#define DB_SCHEMA_VERSION 29
#define DB_APPLICATION_ID 1464814926 /* 'WMON', PRAGMA application_id */

struct db;

struct db_target_info {
	const char *name;
	const char *device;
	enum tgt_kind kind;
	uint64_t capacity_bytes;
	uint32_t logical_block_size;
	const char *serial;       /* may be NULL */
	const char *model;        /* may be NULL */
	const char *firmware;     /* may be NULL */
	const char *backing_file; /* loop devices; may be NULL */
	/* the file behind the target (a file target's own, a loop device's
	 * backing file): device number and inode; ino 0: none (NULL) */
	uint64_t backing_dev, backing_ino;
};

/* State of a cycle or an iteration row, stored as text (db_status_name). */
enum db_status { DB_RUNNING, DB_DONE, DB_INTERRUPTED, DB_FAILED, DB_STATUS__COUNT };

/* What an iteration row or a sample measured, stored as text
 * (db_phase_name); DB_PHASE_UNKNOWN is stored as NULL. */
enum db_phase {
	DB_PHASE_UNKNOWN,
	DB_PHASE_FILL,
	DB_PHASE_MEASURE,
	DB_PHASE_VERIFY,
	DB_PHASE__COUNT
};

/* Text of a phase ("fill", "measure", "verify"), NULL for DB_PHASE_UNKNOWN. */
const char *db_phase_name(enum db_phase p);

/* Where a target continues after a (re)start. */
struct db_resume {
	int resume;                /* 1: an unfinished cycle continues */
	int64_t cycle_id;          /* when resume */
	long cycle_number;         /* cycle to continue, or the next new one */
	int next_size_index;       /* first size not measured (when resume) */
	long next_iteration;       /* iteration number to use next */
	long campaign_first_cycle; /* first cycle of the current campaign */
	long campaign_cycles_done; /* cycles finished since then */
	long interrupted_marked;   /* 'running' rows turned 'interrupted' */
	int campaign_complete;     /* 1: the campaign has its cycles; start none */
	int campaign_new;          /* 1: a new campaign begins at cycle_number */
	char changed[256];         /* campaign keys that changed (when that began it) */
	long action_crashed;       /* cycle whose action a crash cut short, now
					 closed as 'interrupted' (not run again); 0 */
	long action_closed;        /* cycle whose action had ended but not the
					 cycle, now closed; 0 */
	int action_closed_done;    /* that cycle closed as done (else failed) */
};

/* What a start asks of a target's campaign (db_resume_point). */
struct db_campaign_req {
	long cycles;      /* configured cycles, 0 = forever */
	const char *key;  /* cfg_campaign_key() of the configuration */
	int new_campaign; /* the operator asked for a new campaign */
	int peek;         /* decide only and write nothing (wearmond --check):
			     works on a database opened read-only */
};

/* One iteration row. Strings are borrowed. */
/* The drive's own evidence over an iteration (schema 20; common/device/
 * devpoll.h): each field stored only when has[] says it is known. */
enum db_device_field {
	DB_DEV_HOST_BYTES,      /* iterations.device_host_bytes */
	DB_DEV_MEDIA_BYTES,     /* device_media_bytes */
	DB_DEV_PEAK_TEMP_C,     /* device_peak_temp_c */
	DB_DEV_THROTTLE_S,      /* device_throttle_seconds */
	DB_DEV_MEDIA_ERRORS,    /* device_media_errors */
	DB_DEV_SPARE_PCT,       /* device_spare_pct */
	DB_DEV_THROTTLE_MS,     /* device_throttle_ms (schema 25) */
	DB_DEV_THROTTLE_RES_MS, /* device_throttle_res_ms: the source's unit */
	DB_DEV__COUNT
};

/* One reading of the drive (and the host's stall) during an iteration, a
 * row of device_series (schema 25): counters since the iteration's first
 * reading, at t_ms from the start of its phase (the clock of the samples). */
enum db_series_field {
	DB_SERIES_HOST_BYTES,    /* host bytes written as the drive counts them */
	DB_SERIES_MEDIA_BYTES,   /* bytes it wrote to its media */
	DB_SERIES_TEMP_C,        /* its temperature at the reading */
	DB_SERIES_THROTTLE_MS,   /* time it throttled */
	DB_SERIES_HOST_STALL_MS, /* time wearmond did not run (hstall.h) */
	DB_SERIES__COUNT
};

struct db_dev_point {
	enum db_phase phase; /* fill or measure, as the samples' */
	int64_t t_ms;
	int has[DB_SERIES__COUNT];
	int64_t val[DB_SERIES__COUNT];
};

struct db_device_evidence {
	int has[DB_DEV__COUNT];
	int64_t val[DB_DEV__COUNT];
	double wa; /* device_wa: media / host bytes; < 0: NULL */
};

/* A row's place in a PTS test and the figures only such a row has
 * (schema 28; daemon/pts.h). */
struct db_pts {
	const char *test;     /* cfg_pts_name: "iops", "throughput", ... */
	const char *variant;  /* "enterprise" or "client" */
	int round;            /* 1-based round (xsr: access group) */
	int cell;             /* 1-based cell within it */
	const char *part;     /* xsr: its access group; dirth: "sweep" or the
				  chosen point ("max", "mid", "min"); NULL: none */
	double active_pct;    /* the active range, % of the region */
	int tracking;         /* a steady-state tracking variable */
	double lat_p99999_us; /* five-nines latency; < 0: NULL */
	int ss_summary;       /* a tracking row: the steady-state window of
				  its variable ending at this round, below */
	int ss_reached;       /* both criteria held over a full window */
	int ss_first_round;   /* the window's first round */
	double ss_mean, ss_range_pct, ss_slope, ss_excursion_pct; /* its figures */
	const char *lat_hist; /* response-time histogram, JSON; NULL: none */
};

struct db_iteration {
	int64_t cycle_id, run_id, target_id;
	long number;
	int size_index;
	uint64_t size_bytes, region_offset;
	const char *workload;
	uint32_t block_size;
	unsigned queue_depth;
	int compressibility;
	int dedupe_percent;
	uint64_t amount_bytes;
	char started_at[32];
	char ended_at[32];
	uint64_t bytes, ops, errors;
	double seconds;
	/* Figures < 0 are stored as NULL: unknown (min, max and stddev of a
	 * phase shorter than two samples; everything of an interrupted row). */
	double mibps_avg, mibps_min, mibps_max, mibps_stddev, iops_avg;
	double lat_mean_us;
	struct lat_qos lat_us; /* p50 p90 p99 p99.9 p99.99 max */
	double fill_mibps, fill_seconds;
	uint64_t fill_bytes;
	enum db_status status;
	const char *error; /* NULL when none */
	/* methodology (schema 4) */
	enum db_phase phase;
	int repeat_index;                 /* 1..repeat; 0: NULL */
	int more_rows;                    /* further rows of this size follow */
	const char *block_sizes;          /* the mix, NULL for one block size */
	int read_percent, random_percent; /* < 0: NULL */
	enum cfg_verify verify;           /* stored as its name */
	uint64_t verify_errors;           /* bad sectors (NULL unless verifying) */
	int repeat_summary;               /* last run of a repeated phase: the four
					 figures below hold for all its runs */
	double mibps_repeat_mean, mibps_repeat_stddev;
	double iops_repeat_mean, iops_repeat_stddev;
	/* steady state (schema 5) */
	int round_index;          /* 1..max_rounds; 0: NULL (steady_state = none) */
	int steady_summary;       /* last round of a phase: the verdict below */
	int steady_reached;       /* both SNIA criteria held */
	int steady_round;         /* the round they first held; 0: NULL */
	double steady_mean_mibps; /* the window of the last 5 rounds: mean, */
	double steady_range_mibps, steady_range_pct;         /* max - min, */
	double steady_excursion_mibps, steady_excursion_pct; /* |slope| * (n - 1) */
	unsigned jobs; /* threads summed into the row; 0: NULL */
	/* the I/O the engine completed (schema 8); all NULL unless io_counted */
	int io_counted;
	/* the measured phase never ran (stopped or failed in its fill):
	 * bytes, ops and seconds are stored NULL, not 0 */
	int phase_not_run;
	uint64_t reads, writes; /* completed reads and writes */
	uint64_t random_ios;    /* completed I/Os that did not continue
					 their job's previous one (engine_run) */
	/* the baseline (schema 8), chosen when the row starts: by
	 * alert_baseline_of, the one the alerts compare with */
	const char *baseline;          /* "first", "best", "previous"; NULL: none */
	int64_t baseline_iteration_id; /* 0: no baseline yet (NULL) */
	double baseline_mibps;         /* its mibps_avg; not stored, < 0: none */
	double host_stall_seconds;     /* wearmond did not run (hstall.h); <= 0: NULL */
	const uint64_t (*written)[2];  /* the ranges its writes completed, sorted
					  (written_extents; device/wear.h) */
	size_t nwritten;
	double mean_depth;                 /* I/Os in flight on average (engine.h,
					  schema 17); <= 0: NULL */
	struct db_device_evidence device;  /* schema 20; all unknown: NULL */
	const struct db_dev_point *series; /* device_series rows (schema 25) */
	size_t nseries;
	int lat_host_stall;       /* the measured phase's latencies include a host
			       stall (lat_host_stall; stored with the stall) */
	const struct db_pts *pts; /* a cell of a PTS test; NULL: none */
};

/* One sample (sample_interval of one phase). */
struct db_sample {
	enum db_phase phase; /* fill or measure */
	int64_t t_ms;        /* end of the sample since phase start */
	double mibps, iops;  /* not stored: bytes, ops and seconds are */
	struct lat_qos lat_us;
	double mibps_min_1s;  /* slowest 1-second window; < 0: NULL */
	double seconds;       /* its real length (the last one may be short) */
	uint64_t bytes;       /* moved in it */
	double host_stall_ms; /* of its time, wearmond did not run; <= 0: NULL */
	uint64_t ops;         /* completed in it */
};

/* An action between cycles. */
struct db_action {
	enum cfg_action kind; /* stored as cfg_action_name() */
	char started_at[32];
	double seconds;
	uint64_t bytes;
	enum act_outcome outcome; /* stored as act_outcome_name() */
	const char *error;        /* NULL when none */
};

/* An event or alert. */
struct db_event {
	int64_t target_id;                      /* 0: not tied to a target */
	int64_t run_id, cycle_id, iteration_id; /* 0: not set */
	const char *severity;                   /* crit, err, warning, notice, info */
	const char *kind;                       /* short name, e.g. "throughput-crash" */
	const char *message_id;                 /* 32 hex digits or NULL */
	const char *message;
	double value, baseline; /* figures; < 0 when not set */
	const char *data;       /* JSON text or NULL */
};

/* A row that the daemon's figures depend on (db_set_row_hook). */
enum db_row_kind {
	DB_ROW_ITERATION, /* an iteration ended: its id */
	DB_ROW_WEAR,      /* a wear row: its iteration_id */
	DB_ROW_HIR_WEAR,  /* a hir_bursts row's wear figures: its id */
	DB_ROW_HEALTH,    /* a health snapshot: its id */
	DB_ROW_EVENT,     /* an event: its id */
};

/* Called once a row of kind is committed, by the thread that wrote it,
 * outside the connection's lock (it may query db). */
typedef void (*db_rowhook_fn)(void *arg, enum db_row_kind kind, int64_t id);

/* Set db's row hook (NULL: none), before any thread writes. */
void db_set_row_hook(struct db *db, db_rowhook_fn fn, void *arg);

/* Called before something long that db_open must do before it returns (a
 * schema update): what it is and how long it may take at most from now.
 * One hook for the process, set before any db_open (wearmond sends
 * EXTEND_TIMEOUT_USEC with it); NULL: none. */
typedef void (*db_slow_fn)(const char *what, uint64_t usec);
void db_set_slow_hook(db_slow_fn fn);

/* Open (creating and migrating when writable). readonly opens without
 * creating. Returns 0 or -errno with a message naming path in err:
 * -ENOENT/-EACCES cannot open, -EINVAL not a (wearmon) SQLite database,
 * -ENOTSUP schema newer than DB_SCHEMA_VERSION. */
int db_open(const char *path, int readonly, struct db **out, char *err, size_t errlen);

/* Close (NULL is fine). */
void db_close(struct db *db);

/* Check the directory of path exists and is writable, and that path, when
 * it exists, is a regular file (a directory, FIFO, socket or device is
 * refused). Returns 0 or -errno (-EROFS: a read-only filesystem). */
int db_check_path(const char *path, char *err, size_t errlen);

/* The least free space on the database's filesystem below which a start
 * is not tried: a filesystem with less is full for a start (its first
 * writes: the run, its configuration, a new schema, take a few pages of
 * WAL). One with more may still fill up during the start, which then
 * fails the same way (db_transient). */
#define DB_FREE_MIN (128ULL << 10)

/* Whether the database's filesystem can take writes now: not read-only,
 * at least DB_FREE_MIN free. Both are conditions that can end by waiting.
 * Returns 0, or -EROFS / -ENOSPC with err naming the filesystem (mount
 * point, type, source) and its free space. */
int db_check_room(const char *path, char *err, size_t errlen);

/* Whether ret (-errno) is a condition of the database's or a target's
 * filesystem that waiting can end: full (-ENOSPC, -EDQUOT) or read-only
 * (-EROFS). Returns 1 or 0. */
int db_transient(int ret);

/* Record a daemon start. Returns 0 or -errno. */
int db_run_begin(struct db *db, const char *config_path, int64_t *run_id);

/* Store on the run what it was started with: the resolved configuration
 * text (every key's effective value) and the kernel it runs on (uname).
 * Returns 0 or -errno. */
int db_run_config(struct db *db, int64_t run_id, const char *config_text);

/* Record a daemon stop. Returns 0 or -errno. */
int db_run_end(struct db *db, int64_t run_id, int exit_status, const char *reason);

/* Insert or update a target by name. Returns 0 or -errno. */
int db_target_upsert(struct db *db, const struct db_target_info *t, int64_t *target_id);

/* Find where target continues (common/db/schema.md, "Resume and campaigns"):
 * marks stale 'running' iterations interrupted, closes the record of an
 * action a crash cut short, and says whether the campaign is complete or a
 * new one begins (req). With req->peek the same decision is made and
 * nothing is written (interrupted_marked then counts the rows a start
 * would mark). Returns 0 or -errno. */
int db_resume_point(struct db *db, int64_t target_id, const struct db_campaign_req *req,
		    struct db_resume *out);

/* The id of the target named name. Returns 0, -ENOENT when the database
 * has no such target, or -errno. Works read-only. */
int db_target_id(struct db *db, const char *name, int64_t *id);

/* Store key as the campaign's keys (a reload changed them). Returns 0 or
 * -errno. */
int db_campaign_key(struct db *db, int64_t target_id, const char *key);

/* Mark the target's campaign complete (targets.campaign_done_at, kept if
 * already set). Returns 0 or -errno. */
int db_campaign_done(struct db *db, int64_t target_id);

/* Start a cycle row (status running). Returns 0 or -errno. */
int db_cycle_begin(struct db *db, int64_t target_id, int64_t run_id, long number,
		   int64_t *cycle_id);

/* Record the plan the cycle runs: nsizes sizes, and cycles configured
 * (0 = forever), so that readers count "size 2 of 3" from it (v19).
 * Returns 0 or -errno. */
int db_cycle_plan(struct db *db, int64_t cycle_id, int nsizes, long cycles);

/* Record that a's action starts (kind and started_at; "" = now), before
 * it runs; clears what an earlier try of it stored. Returns 0 or -errno. */
int db_action_start(struct db *db, int64_t cycle_id, const struct db_action *a);

struct db_wear_state;

/* Record how the action ended (seconds, bytes, outcome, error, and the end
 * time), with the wear state it leaves when wear is not NULL, in one
 * transaction. Returns 0 or -errno (nothing written). */
int db_action_end(struct db *db, int64_t cycle_id, const struct db_action *a,
		  const struct db_wear_state *wear);

/* Close a cycle with status done, interrupted or failed. Returns 0,
 * -EINVAL for another status, or -errno. */
int db_cycle_end(struct db *db, int64_t cycle_id, enum db_status status);

/* Text of a status ("running", "done", "interrupted", "failed"). */
const char *db_status_name(enum db_status s);

/* Insert an iteration as 'running' before it starts. Returns 0 or -errno. */
int db_iteration_begin(struct db *db, const struct db_iteration *it, int64_t *id);

/* Final figures and all samples of an iteration, one transaction.
 * Returns 0 or -errno (nothing written on error). */
int db_iteration_end(struct db *db, int64_t id, const struct db_iteration *it,
		     const struct db_sample *samples, size_t nsamples);

/* Store an event. Returns 0 or -errno. */
int db_event(struct db *db, const struct db_event *e, int64_t *event_id);

/* ---- host idle recovery (db_hir.c; tables hir_bursts, schema 22, and
 * hir_purges, schema 27) ---- */

/* What a row of hir_bursts measured (stored as its name: "precondition",
 * "burst", "baseline"). */
enum db_hir_kind { DB_HIR_PRECONDITION, DB_HIR_BURST, DB_HIR_BASELINE };

/* One round, burst or return to baseline of the protocol. */
struct db_hir_row {
	int64_t cycle_id, target_id, run_id;
	enum db_hir_kind kind;
	int wait_state;      /* 1-based index of the wait state; 0: precondition */
	double wait_seconds; /* the wait state's length; < 0: NULL (precondition) */
	double idle_seconds; /* idle measured before it; < 0: NULL */
	long repetition;     /* precondition: round; burst: 1..repetitions;
				baseline: 1 after its wait state, 0 on resume */
	char started_at[32];
	double seconds;
	uint64_t bytes, ops;
	double mibps, iops, lat_mean_us, lat_p99_us; /* < 0: NULL */
	struct db_device_evidence device;            /* all unknown: NULL */
	int steady; /* last precondition round: 1 steady, 0 max_rounds passed;
		       -1: NULL */
};

/* Store one row, its id into *id (may be NULL). Returns 0 or -errno. */
int db_hir_insert(struct db *db, const struct db_hir_row *r, int64_t *id);

/* The idle wait that followed row id (a burst, or a baseline a restart
 * wrote before the next burst, repetition 0): its measured seconds and the
 * host and media bytes the drive counted over it (< 0: NULL, unknown).
 * Returns 0, -ENOENT (no such row of those kinds) or -errno. */
int db_hir_idle(struct db *db, int64_t id, double seconds, int64_t host_bytes, int64_t media_bytes);

/* How the protocol purged the drive before its precondition (stored as
 * its name: "secure-erase", "trim", "none"). */
enum db_hir_purge { DB_PURGE_SECURE_ERASE, DB_PURGE_TRIM, DB_PURGE_NONE };

/* One purge attempt of a cycle (a row of hir_purges). */
struct db_hir_purge_row {
	int64_t cycle_id, target_id, run_id;
	enum db_hir_purge method;
	const char *erase; /* secure-erase: the secure_erase method; else NULL */
	enum act_outcome outcome;
	char started_at[32];
	double seconds;
	uint64_t bytes;   /* erased or trimmed */
	const char *note; /* why none ran, what was tried first, the error;
			     NULL: nothing to say */
};

/* Store a purge attempt and, in the same transaction, the wear state it
 * leaves (NULL: unchanged), so the record and the mapped extents change
 * together. Returns 0 or -errno (nothing stored). */
int db_hir_purge_insert(struct db *db, const struct db_hir_purge_row *r,
			const struct db_wear_state *wear);

/* Name of a purge method. */
const char *db_hir_purge_name(enum db_hir_purge m);

/* How far the protocol of a cycle got, from its rows: whether it purged
 * the drive, whether the precondition ended (a round with steady set), the last wait state with
 * a burst or its own baseline (0: none), the bursts of that state and
 * whether its baseline (repetition 1) is stored. */
struct db_hir_progress {
	int purged; /* a purge ran (outcome ok), or none could or was asked
		       for (method none): hir_purges, schema 27 */
	int preconditioned;
	int rounds; /* precondition rounds stored */
	int state;
	long bursts;
	int baseline_done;
};

/* Read the progress of cycle_id into *p. Returns 0 or -errno. */
int db_hir_progress(struct db *db, int64_t cycle_id, struct db_hir_progress *p);

/* Name of a kind. */
const char *db_hir_kind_name(enum db_hir_kind k);

/* ---- compact samples: migration and rollups (db_samples.c) ---- */

/* value in units of ns_per_unit nanoseconds as whole nanoseconds, the way
 * sample_data stores it (rounded to nearest). Returns it, or -1 for a
 * negative or non-finite value (stored as NULL). */
int64_t db_sample_ns(double value, double ns_per_unit);

/* How far the move of schema 15's samples into sample_data has come: the
 * iterations up to the last one with old samples, and those moved. */
struct db_samples_progress {
	long done, total;
};

/* Move the old samples (table samples_v15) of the next batch iterations
 * into sample_data, one transaction; the last call drops the old table.
 * Returns 1 when rows remain, 0 when none do (nothing to do), or -errno. */
int db_samples_migrate(struct db *db, int batch, struct db_samples_progress *p);

/* Replace the 1-second samples of up to batch (at most 64) iterations that
 * ended more than retention seconds ago by per-minute rollups
 * (sample_minute_data), one transaction, taken only when one is found; iterations are visited in id order from *cursor (0 at
 * first), which is set back to 0 after the last. Returns how many
 * iterations were rolled up, or -errno. */
int db_samples_rollup(struct db *db, double retention, int batch, int64_t *cursor);

/* ---- writes that fail (db_outage.c) ---- */

#define DB_OUTAGE_WHATS 8

/* A spell in which the database could not be written (disk full,
 * read-only, I/O errors; a lock held by another program is waited for and
 * is no such spell): from the first write that failed to the next one that
 * succeeded. */
struct db_outage {
	char started_at[32], ended_at[32]; /* ISO 8601 UTC; ended_at "" while on */
	double seconds;                    /* how long, so far while on */
	long failed;                       /* writes that failed */
	char error[200];                   /* SQLite's text of the first failure */
	int nwhats;
	struct {
		char what[48]; /* e.g. "store iteration results" */
		long count;
	} whats[DB_OUTAGE_WHATS]; /* what could not be written, how often */
	long other;               /* failures of further kinds */
};

/* The spell that ended since the last call (two that ended in between are
 * merged). Returns 1 with it in *o, 0 when none ended. */
int db_outage_take(struct db *db, struct db_outage *o);

/* The spell going on now. Returns 1 with it in *o, 0 when writes succeed. */
int db_outage_now(struct db *db, struct db_outage *o);

/* ---- guards (db_guard.c) ---- */

/* Take the lock that allows one daemon per database file: a write lock on
 * the database file itself (an open-file-description lock on a byte SQLite
 * never locks), so every path to the file (hard link, symlink, bind mount,
 * new name) meets it, and readers never do. A missing database is created
 * empty to hold it when create is set; without create, nothing is locked
 * (*fd stays -1). Held until db_lock_release (or exit). Returns 0 (*fd
 * set, or -1), 1 when it created the empty file, -EBUSY with the holder's
 * pid (and the path it opened the file by) in err, or -errno. */
int db_lock_take(const char *db_path, int create, int *fd, char *err, size_t errlen);

/* With the lock held (fd from db_lock_take): SQLite keeps its write-ahead
 * log beside the path it opens, so a log left beside another name of the
 * file (a hard link, a bind mount, the path before a rename) by the last
 * writer is folded into the file through that name; then this name is
 * recorded on the file (extended attribute user.wearmon.database) for the
 * next start. Returns 0, -EEXIST when a log is left beside a name that no
 * longer names the file (err says where it is and what to do), or -errno. */
int db_lock_names(const char *db_path, int fd, char *err, size_t errlen);

/* Release the lock (fd < 0 is fine). Call it after db_close: closing a
 * descriptor of the file drops the process's POSIX locks on it. */
void db_lock_release(int fd);

/* A start that failed before writing anything: remove the database file
 * that db_lock_take created, when it is still that file and empty.
 * Returns 1 when removed, 0 when kept, or -errno. */
int db_lock_drop_new(const char *db_path, int fd);

/* The pid of the process holding db_path's file's lock, found by stat(2)
 * and /proc (the file is not opened, so the caller's own SQLite locks on it
 * stay). Returns it, or 0 if none (or none this process can see). */
pid_t db_lock_holder(const char *db_path);

/* Whether process pid holds the database's lock, as far as this process
 * can see: by the holder's descriptors, or, when it may not read them (a
 * reader that is not root, a daemon that is), by the lock /proc/locks
 * lists on the file and pid being a wearmond. Returns 1 or 0. */
int db_lock_held_by(const char *db_path, pid_t pid);

/* db_lock_holder, with the path the holder opened the file by in path
 * (as the holder sees it; "" when unknown). */
pid_t db_lock_holder_path(const char *db_path, char *path, size_t len);

/* Filesystem mode: record that wearmon made the filesystem with this UUID
 * (and type, e.g. "ext4") on target_id's device (path, for people).
 * Returns 0 or -errno. */
int db_fs_made_add(struct db *db, int64_t target_id, const char *uuid, const char *type,
		   const char *device);

/* Whether wearmon recorded making the filesystem uuid on target_id's
 * device (db_fs_made_add). Returns 1, 0, or -errno. */
int db_fs_made(struct db *db, int64_t target_id, const char *uuid);

/* Whether the open database is still the file at its path (not deleted,
 * not replaced). Returns 0, or -ESTALE with the reason in why. */
int db_file_check(struct db *db, char *why, size_t len);

/* Compare t's identity with the row recorded under t->name. Returns 0 (same,
 * or not recorded yet), 1 with what differs in diff, or -errno. */
int db_target_identity(struct db *db, const struct db_target_info *t, char *diff, size_t len);

/* Whether (dev, ino) is a file wearmon made a target (owned_files; a
 * database older than version 15 has none). Returns 1, 0, or -errno. */
int db_owned_file(struct db *db, uint64_t dev, uint64_t ino);

/* Record (dev, ino) as target's file, created or found without data at
 * path. Returns 0 or -errno. */
int db_owned_add(struct db *db, uint64_t dev, uint64_t ino, const char *target, const char *path);

/* The two devices of an adoption: serial and model of the one recorded
 * and of the one adopted (NULL or "": unknown). */
struct db_adopted {
	const char *old_serial, *old_model, *new_serial, *new_model;
};

/* The serial and model recorded for target name, into the buffers ("" when
 * unknown or no such target): read before an adoption rewrites them.
 * Returns 0 or -errno. */
int db_target_recorded(struct db *db, const char *name, char *serial, size_t slen, char *model,
		       size_t mlen);

/* After the upsert of an adopted device: unfinished cycles of the old one
 * fail, a new campaign starts, a device-replaced event records both
 * devices' serial and model (message and data) and diff. Returns 0 or
 * -errno. */
int db_target_adopt(struct db *db, int64_t target_id, int64_t run_id, const char *diff,
		    const struct db_adopted *who);

/* How long a writer waits for a lock held by another connection (tests
 * shorten it). */
void db_set_busy_timeout(struct db *db, int ms);
/* Once *stop is nonzero, a write waits 0.5 s for another program's lock
 * instead of 10 s (the daemon's stop flag: its last writes must fit in
 * systemd's stop timeout). */
void db_set_stop(struct db *db, const atomic_int *stop);

/* The locked-database policy, in one place (common/db/db.c): a statement
 * waits up to the busy timeout for another program's lock (10 s, 0.5 s
 * once stopping); a write that still fails is tried again by db_retry,
 * every DB_RETRY_STEP seconds, as the caller's policy says. */
#define DB_RETRY_STEP 1.0
#define DB_RETRY_TRIES 5 /* tries of a write failing for another reason */
#define DB_RETRY_FOREVER (-1.0)

struct db_retry {
	int wait_busy;    /* -EBUSY: wait for as long as the lock lasts; tries
				     do not count it; a stop set ends the wait */
	int tries;        /* other errors: tries in all (0: until patience) */
	double patience;  /* seconds in all, no try starts after them;
				     DB_RETRY_FOREVER: no limit */
	const int *final; /* errors no retry mends, 0-ended (NULL: none) */
	const atomic_int *stop;
	int stop_ends; /* a stop set after the first try ends the retries */
	double step;   /* seconds between tries (0: DB_RETRY_STEP) */
	/* After a failed try that is tried again: ret, the failures counted
	 * as tries so far, the seconds the lock has lasted (-1: not busy). */
	void (*on_fail)(void *ctx, int ret, int tries, double busy_s);
	/* Success after failures: the same counts. */
	void (*on_done)(void *ctx, int tries, double busy_s);
	void *ctx;
};

/* Run op(arg), a database write, until it succeeds or r's policy gives up.
 * Returns 0 or the last -errno of op. */
int db_retry(const struct db_retry *r, int (*op)(void *), void *arg);

/* ---- reading, for tools ---- */

enum db_type { DB_NULL, DB_INT, DB_REAL, DB_TEXT };

/* A query parameter or result column. Results fill both i and r for numbers;
 * s (DB_TEXT) is valid only during the row callback. */
struct db_value {
	enum db_type type;
	int64_t i;
	double r;
	const char *s;
};

/* Called with each result row (n columns and their names). Return 0 to go
 * on; anything else stops the query and becomes db_query's result. */
typedef int (*db_row_fn)(void *arg, int n, const struct db_value *v, const char *const *names);

/* Run one read-only SQL statement with params bound to its ? in order,
 * calling fn per row. A statement that would write is refused (-EPERM).
 * Returns 0, fn's first nonzero value, or -errno with a message in err. */
int db_query(struct db *db, const char *sql, const struct db_value *params, int nparams,
	     db_row_fn fn, void *arg, char *err, size_t errlen);

/* SQLite VM steps that every db_query on db has taken so far: a measure of
 * the work a read did that does not depend on the machine's speed. */
uint64_t db_query_steps(struct db *db);

/* Run nstmts writing statements (sqls[k] with nparams[k] params[k]) in one
 * transaction: all or nothing. Returns 0 or -errno with a message in err. */
int db_write(struct db *db, const char *const *sqls, const struct db_value *const *params,
	     const int *nparams, int nstmts, char *err, size_t errlen);

/* What a target is doing now (the progress table). */
struct db_progress {
	long cycle, iteration;
	uint64_t size_bytes;
	const char *phase;
	double mibps;             /* last sample of the phase; < 0: NULL */
	uint64_t phase_bytes;     /* moved so far in the phase */
	int nsizes;               /* sizes per cycle as configured (v8) */
	long cycles;              /* cycles configured, 0 = forever */
	double phase_seconds;     /* time in the phase so far; < 0: NULL */
	double duration;          /* measured phase's duration, 0 = none */
	double iteration_seconds; /* monotonic time in the iteration so far; < 0: NULL (v19) */
	const char *stage;        /* the phase's stage in words; NULL (v23) */
	double remaining_seconds; /* what the phase's plan has left; < 0: NULL (v23) */
};

/* Replace the target's progress row. Returns 0 or -errno. */
int db_progress(struct db *db, int64_t target_id, const struct db_progress *p);

/* ---- merging (wearmon merge) ---- */

/* What one merge brought. */
struct db_merge_result {
	char host[256];          /* the source's host name (latest run) */
	int targets;             /* targets copied, each as HOST/NAME */
	int unchanged;           /* of them, already here with the same rows */
	long cycles, iterations; /* rows they now have here */
};

/* Copy every target of the database at src_path into db (open for
 * writing) as "HOST/NAME" (rename, when not NULL, is the HOST), in one
 * transaction; runs are kept once each (host, start, pid). Each target's
 * source is recorded in db's merge_sources table: the same rows again
 * change nothing, a newer copy of the same database replaces what the
 * earlier merge brought, another database with the same HOST/NAME is
 * refused. Returns 0, -ENOTSUP (schema newer than DB_SCHEMA_VERSION),
 * -EINVAL (not a wearmon database), -EEXIST (HOST/NAME brought by another
 * database) or -errno, with a message naming src_path in err. */
int db_merge(struct db *db, const char *src_path, const char *rename, struct db_merge_result *r,
	     char *err, size_t errlen);

/* Whether db may be a merge's output: not a daemon's own database (a
 * target not named HOST/NAME, or runs without targets). Returns 0,
 * -EPERM (err says why) or -errno. */
int db_merge_check_out(struct db *db, char *err, size_t errlen);

/* ---- alert baselines (read-only) ---- */

/* Which earlier iterations an iteration is compared with: same target,
 * size, workload and block size, status done, mibps_avg > 0, in the
 * current campaign (cycle number >= targets.campaign_first_cycle), row id
 * below before_id; among them rule picks one. */
struct db_baseline_key {
	int64_t target_id;
	uint64_t size_bytes;
	const char *workload;
	uint32_t block_size;
	int64_t before_id;      /* INT64_MAX: every iteration so far */
	enum cfg_baseline rule; /* BASELINE_FIRST: the earliest; BASELINE_BEST:
					 the highest mibps_avg (earliest on a tie);
					 BASELINE_PREVIOUS: the latest */
};

/* Which earlier rate db_rate_latest looks for. */
struct db_rate_key {
	int64_t target_id;
	uint64_t size_bytes;
	const char *workload; /* measured phase: its workload and block size */
	uint32_t block_size;
	int fill; /* 1: the fill's rate at that size (workload ignored) */
};

/* The latest done iteration's rate for k (the measured phase's mibps_avg,
 * or the fill's fill_mibps) and the number of its cycle: what `wearmond
 * --check` estimates a cycle's duration from. Returns 0, -ENOENT when the
 * target has none, or -errno. */
int db_rate_latest(struct db *db, const struct db_rate_key *k, double *mibps, long *cycle);
/* The drive's readings during iteration id (device_series, schema 25), in
 * phase and time order, into *out (malloc'd, free it; NULL with *n 0 when
 * there are none). Returns 0 or -errno. */
int db_series_read(struct db *db, int64_t iteration_id, struct db_dev_point **out, size_t *n);

/* The drive's write amplification over iteration id (device_wa, schema
 * 18). Returns 0, -ENOENT when unknown (NULL, or no such row), or -errno. */
int db_iteration_device_wa(struct db *db, int64_t id, double *wa);

/* The baseline MiB/s for k (and the iteration it comes from, may be NULL).
 * Returns 0, -ENOENT when there is none yet, or -errno. */
int db_baseline(struct db *db, const struct db_baseline_key *k, double *mibps,
		int64_t *iteration_id);

/* The kind of the target's most recent event among kind_a and kind_b,
 * copied to kind. Returns 0, -ENOENT when it has neither, or -errno. */
int db_event_latest(struct db *db, int64_t target_id, const char *kind_a, const char *kind_b,
		    char *kind, size_t len);

/* A row stored 'done' in the size a resumed cycle goes on with: which row
 * of the size's plan it was, and the figures the rows after it build on
 * (the mean of the repeats, the steady-state window). */
struct db_done_row {
	char phase[16];             /* fill, measure or verify ("" for NULL) */
	char workload[32];          /* iterations.workload */
	int repeat_index;           /* 0 for NULL */
	int round_index;            /* 0 for NULL */
	double mibps_avg, iops_avg; /* -1 for NULL */
};

/* The rows of size size_index of cycle cycle_id stored 'done', in the
 * order they ran; *rows is malloc'd (NULL when there is none). Returns 0
 * or -errno (logged). */
int db_size_rows_done(struct db *db, int64_t cycle_id, int size_index, struct db_done_row **rows,
		      size_t *n);

/* ---- commands (schema 27; base/cmd.h) ---- */

/* A command about to exec, as db_command_start records it. */
struct db_command_start {
	int64_t run_id;
	int64_t target_id; /* 0: none */
	const char *tag;   /* what it is: "target lab1: secure_erase_command" */
	char *const *argv; /* stored as a JSON array */
	const struct proc_ident *ident;
};

/* Record a command before it execs. Returns 0 with its row id, or -errno. */
int db_command_start(struct db *db, const struct db_command_start *c, int64_t *id);

/* Record how command id ended, now: how is cmd_end_name's text, "not
 * run", or, for one an earlier run left (by_run: the run that found it),
 * "ended at start" or "gone at start"; status < 0 stores NULL. Returns 0
 * or -errno. */
int db_command_end(struct db *db, int64_t id, const char *how, int status, int64_t by_run);

/* A command recorded and never ended (db_commands_open). */
struct db_command {
	int64_t id, run_id, target_id; /* target_id 0: none */
	const struct proc_ident *ident;
	char tag[160];
	char argv[512]; /* the JSON array, cut to fit */
	char started_at[40];
};

/* Called with each; return 0 to go on. */
typedef int (*db_command_fn)(void *arg, const struct db_command *c);

/* The commands recorded and never ended, oldest first (none before schema
 * 24). Works on a read-only connection. Returns 0, fn's value, or -errno
 * (logged). */
int db_commands_open(struct db *db, db_command_fn fn, void *arg);

/* Called with each alert raised in a target's latest cycle: its kind,
 * severity (as stored) and cycle number. Return 0 to go on. */
typedef int (*db_raised_fn)(void *arg, const char *kind, const char *severity, long cycle);

/* The alerts (events with a MESSAGE_ID) of the target's latest cycle.
 * Returns 0 or -errno (logged). */
int db_alerts_raised(struct db *db, int64_t target_id, db_raised_fn fn, void *arg);

/* ---- wear and health (db_wear.c, db_health.c) ---- */

/* What a target's wear state is saved as: its mapped extents (sorted
 * [start, end) pairs) and its host byte counters. */
struct db_wear_state {
	int64_t target_id;
	const uint64_t (*ext)[2];
	size_t next;
	uint64_t host_total, host_since_erase;
};

/* One wear row: an iteration accounted for. */
struct db_wear_row {
	int64_t iteration_id; /* 0: a row of hir_bursts, hir_id */
	int64_t hir_id;       /* host idle recovery (db_wear_pending_hir) */
	uint64_t capacity_bytes, region_bytes, mapped_bytes;
	double op_configured, op_effective;
	uint64_t host_bytes_written, host_bytes_since_erase, host_bytes_total;
};

/* Called with each mapped extent of a target, in order. Return 0 to go on. */
typedef int (*db_extent_fn)(void *arg, uint64_t start, uint64_t end);

/* Load the target's extents (through fn) and host counters. Returns 0 or
 * -errno. */
int db_wear_load(struct db *db, int64_t target_id, db_extent_fn fn, void *arg, uint64_t *host_total,
		 uint64_t *host_since_erase);

/* Called with each iteration not yet accounted for: its bytes filled and
 * measured and its workload (an enum cfg_workload, or -1 for a fill or
 * verify row). Return 0 to go on. */
typedef int (*db_pending_fn)(void *arg, int64_t iteration_id, uint64_t fill_bytes, uint64_t bytes,
			     int workload);

/* The finished iterations of (cycle_id, size_index) without a wear row, in
 * id order. Returns 0 or -errno. */
int db_wear_pending(struct db *db, int64_t cycle_id, int size_index, db_pending_fn fn, void *arg);

/* Called with each host idle recovery row not yet accounted for: its id
 * and the bytes it wrote. Return 0 to go on. */
typedef int (*db_pending_hir_fn)(void *arg, int64_t hir_id, uint64_t bytes);

/* The rows of cycle_id's host idle recovery whose writes are not yet in the
 * target's counters (hir_bursts.host_bytes_total NULL, schema 23), in id
 * order. Returns 0 or -errno. */
int db_wear_pending_hir(struct db *db, int64_t cycle_id, db_pending_hir_fn fn, void *arg);

/* Call fn with each range iteration_id wrote (written_extents, stored by
 * db_iteration_end), ascending. Returns 0, fn's nonzero value, or -errno. */
int db_wear_written(struct db *db, int64_t iteration_id, db_extent_fn fn, void *arg);

/* Replace the target's extents and counters with s and add rows (their
 * iterations' written_extents go: they are in s now; a row with hir_id
 * sets that hir_bursts row's wear figures instead), in one
 * transaction. Returns 0 or -errno (nothing written) with a message
 * naming the database in err. */
int db_wear_store(struct db *db, const struct db_wear_state *s, const struct db_wear_row *rows,
		  size_t nrows, char *err, size_t errlen);

/* The counters of a health snapshot, in health's column order. */
enum db_health_counter {
	DB_H_SECTORS_READ,
	DB_H_SECTORS_WRITTEN,
	DB_H_PCT_USED,
	DB_H_DU_READ,
	DB_H_DU_WRITTEN,
	DB_H_MEDIA_ERRORS,
	DB_H_SPARE,
	DB_H_TEMP,
	DB_H_CRIT,
	DB_H_POH,
	DB_H_NAND,
	DB_H_HOST,
	DB_H__COUNT
};

/* One health row. */
struct db_health {
	int64_t target_id, cycle_id; /* cycle_id 0: NULL */
	const char *source;          /* "sysfs", "nvme", "ata", "file", ... */
	int has[DB_H__COUNT];        /* 0: the counter is NULL */
	int64_t val[DB_H__COUNT];
	double write_amplification;                 /* < 0: NULL */
	const char *data;                           /* JSON */
	const char *point;                          /* wear_point_name(); NULL: NULL */
	int64_t host_bytes_delta, nand_bytes_delta; /* < 0: NULL */
	uint64_t mapped_bytes;
	int has_op_effective;
	double op_effective;
};

/* Store a health snapshot. Returns 0 or -errno with a message naming the
 * database in err. */
int db_health_insert(struct db *db, const struct db_health *h, char *err, size_t errlen);

/* The host and NAND bytes written of the target's latest snapshot (-1:
 * none or NULL). Returns 0 or -errno. */
int db_health_last_counters(struct db *db, int64_t target_id, int64_t *host, int64_t *nand);

/* The firmware the target's latest snapshot recorded, copied to buf (""
 * when none). Returns 0 or -errno. */
int db_health_firmware(struct db *db, int64_t target_id, char *buf, size_t len);

/* The drive's rated endurance as configured (0 or "": not given). */
struct db_rating {
	uint64_t tbw_bytes;
	double dwpd, warranty_years;
	const char *warranty_start; /* YYYY-MM-DD */
};

/* Store the target's rating (targets.rated_tbw and the rest, schema 29),
 * what the endurance forecast compares with. Returns 0 or -errno. */
int db_target_rating(struct db *db, int64_t target_id, const struct db_rating *r);

#endif
