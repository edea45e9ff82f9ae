/* db_wear: the wear tables: a target's mapped extents and host counters
 * (mapped_extents, targets.host_bytes_*), and the wear row of each
 * iteration accounted for. */
#ifndef WEARMON_DB_WEAR_H
#define WEARMON_DB_WEAR_H

#include <stddef.h>
#include <stdint.h>

struct db;

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

#endif
