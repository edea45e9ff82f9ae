/* replica: a target's whole history copied to other targets already
 * registered (targets rows), every id renumbered as `wearmon merge` does;
 * runs are shared, targets and progress rows are the copies' own. Knows
 * only the database (common/db/db.h), nothing of how the rows were made. */
#ifndef SCALEGEN_REPLICA_H
#define SCALEGEN_REPLICA_H

#include <stdint.h>

#include "db/db.h"

struct replica_target {
	int64_t id;       /* targets.id */
	const char *name; /* targets.name, as events' messages say it */
};

/* Copy from's rows to to[0..n-1] (copy k = 1..n), each copy in one
 * transaction. Returns 0 or -errno (the error printed on stderr). */
int replica_copy(struct db *db, const struct replica_target *from, const struct replica_target *to,
		 int n);

#endif
