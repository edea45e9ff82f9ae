/* db_series: the drive's readings during an iteration (device_series,
 * schema 25), read back for the cause of an alert; db_iteration_end
 * stores them (struct db_dev_point, db/db_iter.h). */
#ifndef WEARMON_DB_SERIES_H
#define WEARMON_DB_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "db/db_iter.h"

struct db;

/* The drive's readings during iteration id (device_series, schema 25), in
 * phase and time order, into *out (malloc'd, free it; NULL with *n 0 when
 * there are none). Returns 0 or -errno. */
int db_series_read(struct db *db, int64_t iteration_id, struct db_dev_point **out, size_t *n);

#endif
