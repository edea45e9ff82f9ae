/* db_iter: iterations and their samples: a row begun as 'running' and
 * ended with its figures, samples, the drive's readings and the ranges it
 * wrote in one transaction; the progress row of what a target does now. */
#ifndef WEARMON_DB_ITER_H
#define WEARMON_DB_ITER_H

#include <stddef.h>
#include <stdint.h>

#include "base/hist.h"
#include "config/names.h"
#include "db/db_cycle.h"

struct db;

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

/* One iteration row. Strings are borrowed. */
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

/* Insert an iteration as 'running' before it starts. Returns 0 or -errno. */
int db_iteration_begin(struct db *db, const struct db_iteration *it, int64_t *id);

/* Final figures and all samples of an iteration, one transaction.
 * Returns 0 or -errno (nothing written on error). */
int db_iteration_end(struct db *db, int64_t id, const struct db_iteration *it,
		     const struct db_sample *samples, size_t nsamples);

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

#endif
