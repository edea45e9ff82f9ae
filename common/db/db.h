/* db: the SQLite history: schema and migrations, and every statement the
 * library runs, behind typed functions (the rest of common/ holds no SQL).
 * States and outcomes come in as enums and are turned into text here.
 * Thread-safe: one connection, serialised by a mutex. SQLite result codes
 * never leave this module: functions return 0 or a negative errno.
 *
 * This header only gathers the headers of the table families, for a caller
 * that uses many of them; a caller that uses one or two includes those. */
#ifndef WEARMON_DB_H
#define WEARMON_DB_H

#include "db/db_conn.h"
#include "db/db_sql.h"
#include "db/db_open.h"
#include "db/db_cycle.h"
#include "db/db_iter.h"
#include "db/db_health.h"
#include "db/db_hir.h"
#include "db/db_samples.h"
#include "db/db_outage.h"
#include "db/db_guard.h"
#include "db/db_merge.h"
#include "db/db_read.h"
#include "db/db_series.h"
#include "db/db_cmd.h"
#include "db/db_wear.h"

#endif
