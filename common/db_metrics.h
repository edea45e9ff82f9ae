/* db_metrics: what the metrics read from the database (db_metrics.c), kept
 * beside the db module so that no SQL lives in metrics.c. */
#ifndef WEARMON_DB_METRICS_H
#define WEARMON_DB_METRICS_H

#include <stdint.h>

#include "db.h"
#include "metrics.h"

/* Fill t's stored figures for the target: last done iteration (and its ratio
 * to the baseline stored with it, as the alerts chose it), the latest
 * wear row and health snapshot, error totals and alert counts by kind.
 * Returns 0 or -errno (logged). */
int db_metrics_collect(struct db *db, int64_t target_id, struct metrics_target *t);

/* The id of the target's newest done iteration in *id (0: none). A cheap
 * query, run every second to notice an iteration end. Returns 0 or -errno. */
int db_metrics_last_done(struct db *db, int64_t target_id, int64_t *id);

#endif
