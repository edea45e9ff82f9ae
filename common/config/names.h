/* names: the enums that the daemon, the database and the CLI share
 * (workloads, actions, outcomes, target kinds, ...), each beside its text
 * table. Depends on nothing but libc and must call no other module, so
 * that a program which only stores or prints these values links no config
 * parser and no device code (common/ARCHITECTURE.md). */
#ifndef WEARMON_NAMES_H
#define WEARMON_NAMES_H

enum cfg_workload {
	WL_SEQWRITE,
	WL_SEQREAD,
	WL_RANDWRITE,
	WL_RANDREAD,
	WL_REWRITE,
	WL_BACKREAD,
	WL_STRIDEREAD,
	WL_RANDRW,
	WL_SEQRW,
	WL_DATABASE, /* IOMeter presets, as common/io/workload.c defines them */
	WL_FILESERVER,
	WL_WEBSERVER,
	WL_WORKSTATION,
	WL_STREAMING,
	WL_JESD219, /* JEDEC's enterprise endurance workload (common/io/workload.c) */
	WL__COUNT   /* same order as workload_presets() */
};

/* verify: crc32c headers in written data, checked when read back. */
enum cfg_verify { VERIFY_NONE, VERIFY_CRC32C };

enum cfg_action { ACT_NONE, ACT_TRIM, ACT_FITRIM, ACT_SECURE_ERASE, ACT_IDLE, ACT__COUNT };

/* What a throughput alert compares an iteration with. */
enum cfg_baseline {
	BASELINE_FIRST,    /* first done iteration of the campaign */
	BASELINE_BEST,     /* best done iteration so far */
	BASELINE_PREVIOUS, /* the latest done iteration before it */
	BASELINE__COUNT
};

/* How an action ended; stored as text (act_outcome_name) in
 * cycles.action_outcome. */
enum act_outcome {
	ACT_OUT_OK,
	ACT_OUT_UNSUPPORTED, /* the device or filesystem cannot do it */
	ACT_OUT_FAILED,
	ACT_OUT_SKIPPED,     /* between_cycles = none */
	ACT_OUT_INTERRUPTED, /* a stop was requested: re-run on restart */
	ACT_OUT__COUNT
};

/* What a target is: a block device, or a regular file (also a test file
 * on a block device's filesystem, in filesystem mode). */
enum tgt_kind { TGT_BLOCK, TGT_FILE };

/* pts: the tests of the SNIA Solid State Storage Performance Test
 * Specification that run as presets (daemon/pts.h), in the order of its
 * report; stored as their names in iterations.pts_test. */
enum cfg_pts {
	PTS_IOPS,
	PTS_THROUGHPUT,
	PTS_LATENCY,
	PTS_WSAT,
	PTS_HIR,
	PTS_XSR,
	PTS_DIRTH,
	PTS__COUNT
};

/* pts_variant: the enterprise or the client variant of the tests. */
enum cfg_pts_variant { PTS_ENTERPRISE, PTS_CLIENT, PTS_VARIANT__COUNT };

/* "block" or "file": targets.kind. */
const char *tgt_kind_name(enum tgt_kind k);

/* Names of the values, as written in the config file and stored in the
 * database; "unknown" for a value out of range. */
const char *cfg_workload_name(enum cfg_workload w);
const char *cfg_action_name(enum cfg_action a);
const char *cfg_verify_name(enum cfg_verify v);
const char *cfg_baseline_name(enum cfg_baseline b);
const char *cfg_pts_name(enum cfg_pts p);
const char *cfg_pts_variant_name(enum cfg_pts_variant v);

/* Text of an outcome ("ok", "unsupported", "failed", "skipped",
 * "interrupted"), as stored and logged. */
const char *act_outcome_name(enum act_outcome o);

/* The tables behind them, the config's choices for those keys: names by
 * value, NULL-ended. */
extern const char *const cfg_workload_names[];
extern const char *const cfg_action_names[];
extern const char *const cfg_verify_names[];
extern const char *const cfg_baseline_names[];
extern const char *const cfg_pts_names[];
extern const char *const cfg_pts_variant_names[];

#endif
