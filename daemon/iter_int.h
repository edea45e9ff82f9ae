/* iter_int: what iter.c and iter_record.c share about a row; nothing
 * outside iter includes it. */
#ifndef WEARMON_ITER_INT_H
#define WEARMON_ITER_INT_H

#include <stdint.h>

#include "iter.h"

struct engine_result;

/* Every bad sector remembered by the engine, and a read error under
 * verification, becomes a data-integrity event naming its offset. */
void iter_report_integrity(const struct iter_env *e, int64_t it_id, const struct engine_result *r);

/* The row's journal line: its figures and status, at the level its
 * status calls for. */
void iter_log_iteration(const struct iter_env *e, const struct db_iteration *it);

#endif
