/* db_health: health and events: the snapshots of a drive's counters and
 * what the latest one recorded, the drive's rated endurance, and the
 * events and alerts of a target (read back through db/db_read.h). */
#ifndef WEARMON_DB_HEALTH_H
#define WEARMON_DB_HEALTH_H

#include <stddef.h>
#include <stdint.h>

struct db;

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

/* Store an event. Returns 0 or -errno. */
int db_event(struct db *db, const struct db_event *e, int64_t *event_id);

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
