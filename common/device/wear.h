/* wear: what the drive has been through: the extents the host has written
 * and not trimmed (kept across restarts), over-provisioning per iteration,
 * host bytes written, and per-cycle health snapshots. Reads devices only
 * for health counters; never writes to a device. */
#ifndef WEARMON_WEAR_H
#define WEARMON_WEAR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config/cfg.h"
#include "db/db.h"
#include "device/tgt.h"

/* Sorted, merged, non-overlapping [start, end) byte ranges. */
struct wear_extents {
	uint64_t (*v)[2];
	size_t n, cap;
};

/* Add [start, end), merging with neighbours. Returns 0 or -ENOMEM. */
int wear_ext_add(struct wear_extents *e, uint64_t start, uint64_t end);

/* Remove [start, end), splitting an extent if needed. Returns 0 or -ENOMEM. */
int wear_ext_remove(struct wear_extents *e, uint64_t start, uint64_t end);

/* e becomes the union of e and add, then at most WMAP_MAX_EXTENTS extents
 * (base/wmap.h: wmap_coarsen; an upper bound beyond). Returns 0 or
 * -ENOMEM (e unchanged). */
int wear_ext_union(struct wear_extents *e, const struct wear_extents *add);

/* Bytes covered. */
uint64_t wear_ext_total(const struct wear_extents *e);

/* Forget every extent (keeps the allocation). */
void wear_ext_clear(struct wear_extents *e);

/* Release the allocation. */
void wear_ext_free(struct wear_extents *e);

/* A target's wear state, loaded from and saved to the database. */
struct wear_state {
	struct db *db;
	int64_t target_id;
	struct wear_extents ext;
	uint64_t host_total, host_since_erase;
	int64_t last_nand, last_host; /* previous health counters, < 0 unknown */
	const atomic_int *stop;       /* nonzero: abandon a snapshot the device
					  holds (NULL: wait for it) */
	double stop_seen;             /* util_now() when a snapshot first saw it */
};

/* Load extents and counters of a target. Returns 0 or -errno. */
int wear_load(struct db *db, int64_t target_id, struct wear_state *w);

/* Release memory. */
void wear_free(struct wear_state *w);

/* Fraction of a workload's bytes that are writes: 1, 0 for the four read
 * workloads, or for mixed workloads 1 as well (an upper bound, documented). */
double wear_write_fraction(enum cfg_workload w);

/* Account for the iterations of (cycle_id, size_index) that have no wear
 * row yet, however many: add to the mapped extents the ranges each one's
 * writes completed (written_extents; the whole span for a row that wrote
 * and stored none), add host bytes, and store a wear row per iteration plus the new
 * state, in one transaction. fs_mapped >= 0 replaces the extents' total
 * (filesystem mode: the test file's allocation). Returns 0, or -errno with
 * nothing stored and *w as it was: the iterations stay without a wear row,
 * counted nowhere, and a later call for the same size accounts for them. */
int wear_after_size(struct wear_state *w, int64_t cycle_id, int size_index, uint64_t span_offset,
		    uint64_t span_len, uint64_t capacity, uint64_t region_bytes, int64_t fs_mapped);

/* Account, as wear_after_size does for iterations, for the host idle
 * recovery rows of cycle_id not yet accounted for (hir_bursts with
 * host_bytes_total NULL; daemon/hir.c): their bytes into the host
 * counters, what they wrote into the mapped extents (row row_id: the
 * ranges in written, when not NULL; any other row that wrote: the whole
 * span), and each row's wear figures (mapped_bytes, op_effective,
 * host_bytes_since_erase, host_bytes_total) with the new state, in one
 * transaction. Returns 0, or -errno with nothing stored and *w as it was
 * (the rows stay pending: the next call accounts for them). */
int wear_after_hir(struct wear_state *w, int64_t cycle_id, uint64_t span_offset, uint64_t span_len,
		   uint64_t capacity, uint64_t region_bytes, int64_t row_id,
		   const struct wear_extents *written);

/* The host discarded [start, end): drop it from the mapped extents.
 * Returns 0 or -errno. */
int wear_trimmed(struct wear_state *w, uint64_t start, uint64_t end);

/* The drive was erased: nothing is mapped, host_since_erase restarts.
 * Returns 0 or -errno. */
int wear_erased(struct wear_state *w);

/* What a successful action did, in memory only: the caller stores it with
 * the action's end (db_action_end, through wear_db_state), so the record
 * and the mapped extents change together. trim: [start, end) discarded;
 * otherwise an erase. Returns 0 or -ENOMEM (*w unchanged). */
int wear_apply(struct wear_state *w, int trim, uint64_t start, uint64_t end);

/* The state as the database takes it, borrowing w's extents. */
void wear_db_state(const struct wear_state *w, struct db_wear_state *s);

/* Health snapshot points, stored in health.point as "cycle-start",
 * "cycle-end", "after-action" (wear_point_name). */
enum wear_point {
	WEAR_CYCLE_START,  /* before the cycle's first iteration */
	WEAR_CYCLE_END,    /* after its last, before the action */
	WEAR_AFTER_ACTION, /* after the action between cycles */
	WEAR_POINT__COUNT
};

/* Text of a point as stored. Returns it ("?" out of range). */
const char *wear_point_name(enum wear_point p);

/* The counters file: a device under test without SMART counters of its
 * own (a loop device over an image file) may publish its flash and host
 * byte counters in a text file named WEAR_COUNTERS_FILE in the directory of
 * that image, one "NAME VALUE" line each: flash_bytes_written N,
 * host_bytes_written N and, where it models wear-out, percentage_used N
 * (the NVMe figure; other lines are ignored). The simulated SSD
 * (tools/simssd) writes one; a snapshot that finds flash_bytes_written has
 * source WEAR_COUNTERS_SOURCE and a write amplification. Nothing else in
 * wearmond knows about the simulator. */
#define WEAR_COUNTERS_FILE "stats"
#define WEAR_COUNTERS_SOURCE "simssd" /* stored in health.source */

/* Seconds a snapshot may still take once a stop is requested (counted
 * from the first snapshot that saw it); then it is abandoned. */
#define WEAR_STOP_GRACE 0.3

/* Take a health snapshot of tg (sysfs stat, NVMe SMART/Health or ATA SMART
 * when available, the counters file above) and store it with cycle_id and point (one of the
 * WEAR_* names above), with the host and NAND bytes since the previous
 * snapshot of the target and their ratio, and the mapped bytes and
 * effective over-provisioning now (fs_mapped >= 0 replaces the extents'
 * total, as in wear_after_size). The device is read in a thread of its own;
 * when *w->stop is set and the reads have not ended within WEAR_STOP_GRACE,
 * the snapshot is abandoned (nothing stored). Returns 0, -EINTR when
 * abandoned, or -errno. */
int wear_health(struct wear_state *w, const struct tgt *tg, int64_t cycle_id, enum wear_point point,
		int64_t fs_mapped);

/* The drive's host and NAND counters now (< 0: not reported): the bytes
 * since the previous snapshot into *d_host, *d_nand (-1 unknown) and
 * their ratio, the write amplification, into *wa (-1 when no host bytes
 * were written); the counters become the previous ones. */
void wear_deltas(struct wear_state *w, int64_t host, int64_t nand, int64_t *d_host, int64_t *d_nand,
		 double *wa);

/* Whether the drive's firmware differs from the one its latest health
 * snapshot recorded (unknown on either side counts as no change); the old
 * one goes into before. Returns 1, 0, or -errno. */
int wear_firmware_changed(struct wear_state *w, const char *now, char *before, size_t len);

#endif
