/* query_named: the one mechanism of the named reads of common/db/query/.
 * A named query is its name, its SQL for the current schema and, where an
 * older schema lacks what that SQL reads (a schema fact), the same query
 * for that schema (a chain). The facts of a database are read once
 * (query_schema_of) and every query, chart, report, status and show read
 * alike, chooses its SQL from them here (query_named_sql). The tables of
 * queries (query_charts.c, query_report.c, query_status.c, query_show.c,
 * query_history.c) are listed together in query_registry.c. Owns no
 * connection; never writes. */
#ifndef WEARMON_QUERY_NAMED_H
#define WEARMON_QUERY_NAMED_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

/* What an older schema may lack: one column each (query_named.c names
 * them). */
enum query_fact {
	QF_NONE,             /* every schema this build reads has it */
	QF_READ_PERCENT,     /* iterations.read_percent (schema 4) */
	QF_LAT_P9999,        /* iterations.lat_p9999_us */
	QF_STEADY,           /* iterations.steady_reached */
	QF_CAMPAIGN_FIRST,   /* cycles.campaign_first_cycle */
	QF_BASELINE_ROW,     /* iterations.baseline_iteration_id */
	QF_NAND_DELTA,       /* health.nand_bytes_delta */
	QF_RUN_CONFIG,       /* runs.config */
	QF_SAMPLE_P999,      /* samples.lat_p999_us */
	QF_SAMPLE_P9999,     /* samples.lat_p9999_us */
	QF_MINUTES,          /* sample_minute_data.mibps_max */
	QF_PROGRESS_PHASE,   /* progress.phase */
	QF_PROGRESS_PLAN,    /* progress.nsizes */
	QF_HEALTH_BY_IT,     /* health.iteration_id */
	QF_HEALTH_BY_CYCLE,  /* health.cycle_id */
	QF_PHASE,            /* iterations.phase (schema 4) */
	QF_MORE_ROWS,        /* iterations.more_rows (schema 4) */
	QF_PROGRESS_SECONDS, /* progress.iteration_seconds (schema 19) */
	QF_CYCLE_PLAN,       /* cycles.nsizes and cycles_planned (schema 19) */
	QF_DEVICE,           /* iterations.device_wa and the other device_* (schema 20) */
	QF_CYCLE_STORED,     /* cycles.ratio_avg and the stored figures (schema 21) */
	QF_HIR,              /* table hir_bursts (schema 22) */
	QF_PROGRESS_STAGE,   /* progress.stage, remaining_seconds (schema 23) */
	QF_HIR_IDLE,         /* hir_bursts.idle_media_bytes and the other idle_* (schema 27) */
	QF_HIR_PURGE,        /* table hir_purges (schema 27) */
	QF_PTS,              /* iterations.pts_test and the other pts_* (schema 28) */
	QF_RATING,           /* targets.rated_tbw and the rating (schema 29) */
	QF_LEVEL_EDGE,       /* health.level_edge (schema 29) */
	QF__COUNT
};

/* The schema facts of one database (query_schema_of). */
struct query_schema {
	int version;  /* PRAGMA user_version */
	int progress; /* progress table: 0 none, 7 (phase), 8 (with the plan),
			 9 (with iteration_seconds) */
	unsigned char has[QF__COUNT];
};

struct query_named {
	const char *name; /* what the query reads, for messages and tests */
	const char *sql;  /* for a database that has the fact needs */
	enum query_fact needs;
	const struct query_named *old; /* the same query for one that lacks it
					  (NULL: such a schema has no rows) */
	int per_target;                /* 1: reads one target's (or iteration's) rows: its
			   plan must not scan samples or iterations */
};

/* A table of named queries (query_registry.c lists them all). */
struct query_table {
	const struct query_named *q;
	size_t n;
};
extern const struct query_table query_tables[];
extern const size_t query_ntables;

/* The facts of db into *sc. Returns 0 or -errno with a message in err. */
int query_schema_of(struct db *db, struct query_schema *sc, char *err, size_t errlen);

/* One integer read by sql into *out (0 when no row). */
int query_int(struct db *db, const char *sql, const struct db_value *p, int np, int64_t *out,
	      char *err, size_t errlen);

/* Whether table has column into *has (0 or 1). */
int query_has_column(struct db *db, const char *table, const char *column, int *has, char *err,
		     size_t errlen);

/* The SQL of q for a database of facts sc: q's own or that of the first
 * query down its chain whose fact sc has; NULL when none (no rows). */
const char *query_named_sql(const struct query_schema *sc, const struct query_named *q);

/* Run q on db (facts sc; NULL: read them now) with params, each row to fn
 * (rows stream, nothing is kept). Returns 0, fn's nonzero value, or
 * -errno with a message naming the query in err. */
int query_named_run(struct db *db, const struct query_schema *sc, const struct query_named *q,
		    const struct db_value *params, int nparams, db_row_fn fn, void *arg, char *err,
		    size_t errlen);

/* What one point of a sample chart or table is (column `point`): a
 * sample lasts the target's sample_interval (wearmon.conf(5), 1 s by
 * default; the last of a phase up to twice that, common/db/schema.md). */
#define QC_POINT_SAMPLE "sample (one sample_interval)"
#define QC_POINT_MINUTE "per-minute rollup: min/avg/max"
#define QC_POINT_MINUTE_MAX "per-minute rollup: the highest 1-second value"

/* The series of the cycles chart (and their names in the report). */
#define QC_SERIES_MAX "highest sample"
#define QC_SERIES_AVG "average of the sizes"
#define QC_SERIES_MIN "lowest sample"

#endif
