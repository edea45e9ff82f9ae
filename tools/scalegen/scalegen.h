/* scalegen.h: what the generator's files share: the campaign's constants,
 * the targets and their synthetic clocks (scalegen.c schedules them, drive.c
 * is the drive they run on). Only scalegen's own files include it. */
#ifndef SCALEGEN_H
#define SCALEGEN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "db/db.h"
#include "device/wear.h"

#define MIBF 1048576.0 /* MiB as a double */
#define NSIZES 8       /* 16, 32, ... 128 GiB, growing */
#define SIZE_STEP (16 * (uint64_t)GIB)
#define CAPACITY (512 * (uint64_t)GIB) /* the simulated drive */
#define MODEL "scalegen simulated NVMe"
#define FIRMWARE "SG1.0"
#define MEASURE_SECONDS 900   /* each size's measured phase, 1-second samples */
#define FILL_BS (1024 * 1024) /* the precondition's block size */
#define MEASURE_BS 4096       /* 4k randwrite, unless --block-size */
#define QD 32
#define RUN_DAYS 30         /* the daemon restarts every 30 days */
#define DIP_ONE_IN 120      /* iterations that dip to 20-45 % */
#define MAX_SAMPLES 4096    /* a fill of 128 GiB stays under 3000 s */
#define MAX_EVENTS 16       /* events retimed per cycle */
#define ALERT_BELOW 50.0    /* alert_below's default (conf/wearmon.conf.5) */
#define ALERT_CRITICAL 25.0 /* alert_critical's default */
#define ROLLUP_BATCH 64     /* db_samples_rollup's most per call */
#define CHECK_SECONDS 2.5   /* the start's integrity check, on the history of a run */

struct opts {
	int targets, days;
	int retention; /* days of 1-second samples kept; 0: all */
	int replicate; /* ssd1 written, the others copied from it */
	double rate;   /* --rate: every phase at this MiB/s, no wear; 0: the model */
	uint32_t bs;   /* the measured phase's block size */
	const char *out;
	uint64_t seed;
};

/* xorshift64*: the same seed gives the same database. */
struct rng {
	uint64_t s;
};

/* One simulated target and its synthetic clock. */
struct gtarget {
	int64_t id;
	char name[32];
	char serial[32];
	struct rng rng;
	double clock;     /* seconds since the start of the history */
	long cycle;       /* last cycle begun */
	long next_number; /* next iteration number in the cycle */
	double speed;     /* this drive's 4k randwrite MiB/s when new */
	uint64_t mapped, host_total, host_since_erase, nand_total;
	uint64_t last_host, last_nand; /* at the previous health snapshot */
	int64_t temp_c;                /* the drive's temperature now */
	struct {                       /* the last row, as its progress row said */
		uint64_t size, bytes;
		double mibps, seconds; /* its last sample; fill and measure */
	} last;
	int done;
};

/* What the current cycle must have retimed (the write calls stamp rows
 * with the real time; the history needs the synthetic one). */
struct retime {
	int64_t cycle_id;
	double started, ended, action;
	int nev;
	int64_t ev_id[MAX_EVENTS];
	double ev_at[MAX_EVENTS];
};

struct gen {
	struct opts o;
	struct db *db;
	time_t t0; /* the history's start, UTC */
	double end;
	int64_t run_id;
	int64_t check_id; /* the run's integrity-check event */
	long run_block;   /* which RUN_DAYS block the run covers */
	double run_started;
	struct gtarget *t;
	struct db_sample *sm;
	struct db_dev_point *series; /* the drive's readings, one per sample */
	uint64_t rows, samples, iterations, rolled;
	double rolled_at; /* the synthetic clock at the last roll-up */
};

static inline double sg_rnd01(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (double)((r->s * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* A factor around 1 with a spread of about +-pct percent. */
static inline double sg_jitter(struct rng *r, double pct)
{
	double u = sg_rnd01(r) + sg_rnd01(r) + sg_rnd01(r) - 1.5;
	return 1.0 + u * pct / 75.0;
}

/* The synthetic time t (seconds since the history's start) as ISO 8601. */
void sg_iso_at(const struct gen *g, double t, char *buf, size_t len);

/* The drive's counters after a row wrote `written` bytes; d: the drive's
 * own evidence over the row as the daemon stores it. */
void sg_drive_writes(struct gtarget *gt, uint64_t written, struct db_device_evidence *d);

/* The row's wear row and the extents it leaves mapped. Returns 0 or -errno. */
int sg_wear_after(struct gen *g, struct gtarget *gt, int64_t id, uint64_t size, uint64_t written);

/* A health snapshot at point p of the cycle. Returns 0 or -errno. */
int sg_health(struct gen *g, struct gtarget *gt, int64_t cycle_id, enum wear_point p);

/* The trim between cycles; rt->action gets its start. Returns 0 or -errno. */
int sg_trim_action(struct gen *g, struct gtarget *gt, struct retime *rt);

#endif
