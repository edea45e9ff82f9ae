/* db_samples: samples as small integer rows (schema 16): the move of
 * schema 15's rows into them, and the rollups of old iterations' samples
 * into per-minute rows after sample_retention (daemon/retain.c). */
#ifndef WEARMON_DB_SAMPLES_H
#define WEARMON_DB_SAMPLES_H

#include <stdint.h>

struct db;

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

#endif
