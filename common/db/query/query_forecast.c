/* query_forecast: the endurance forecast of a target, read once for every
 * reader (wearmon status, show, report; wearmond's metrics): the rating
 * stored with the target, the time span of the campaign asked for, and in
 * it the health snapshots the fit needs (the first, the last, and those on
 * either side of each change of the wear indicator: health.level_edge,
 * at most two a level, so the read does not grow with the campaign),
 * handed to the pure fit of common/base/eol.c. Reads one target's rows
 * through the indexes health_level_edges and health_target_at. */
#include "db/query/query.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "db/query/query_int.h"
#include "db/query/query_sql.h"

/* Seconds since the epoch of an ISO time (a date counts from midnight). */
#define UNIX_OF(col) "(julianday(" col ") - 2440587.5) * 86400.0"

/* The rating of target ?1 (schema 29) and what it needs: the capacity for
 * DWPD and the warranty's start (else the day the target was first seen);
 * and the span of cycles ?2..?3: from the start of cycle ?2 (0: of the
 * first cycle of the campaign of cycle ?3, or of the current campaign;
 * the campaign of a cycle: schema 13) to the end of cycle ?3 (NULL: 0, or
 * still running). */
#define SCOPE_SQL(cols, first)                                                                     \
	"SELECT t.capacity_bytes, " cols ","                                                       \
	" (SELECT c.started_at FROM cycles c WHERE c.target_id = ?1 AND c.number ="                \
	" CASE WHEN ?2 > 0 THEN ?2 ELSE " first " END) AS lo_at,"                                  \
	" (SELECT c.ended_at FROM cycles c WHERE c.target_id = ?1 AND c.number = ?3) AS hi_at"     \
	" FROM targets t WHERE t.id = ?1"
#define RATING_COLS                                                                                \
	"t.rated_tbw, t.rated_dwpd, t.warranty_years,"                                             \
	" " UNIX_OF("coalesce(t.warranty_start, t.first_seen)") " AS warranty_start"
#define NO_RATING_COLS                                                                             \
	"NULL AS rated_tbw, NULL AS rated_dwpd, NULL AS warranty_years,"                           \
	" " UNIX_OF("t.first_seen") " AS warranty_start"
#define FIRST_OF_CYCLE                                                                             \
	"coalesce((SELECT f.campaign_first_cycle FROM cycles f WHERE f.target_id = ?1"             \
	" AND f.number = ?3), t.campaign_first_cycle)"

/* A snapshot as the fit reads it; host bytes as wearmond counted them are
 * in its data (health.data's host_bytes_total). In target ?1's span ?2..?3
 * (ISO times). */
#define SNAP_COLS                                                                                  \
	UNIX_OF("h.at")                                                                            \
	" AS t, h.percentage_used AS used, h.host_bytes_written AS host_drive,"                    \
	" json_extract(h.data, '$.host_bytes_total') AS host_own,"                                 \
	" h.nand_bytes_written AS media, h.id"
#define IN_SPAN " FROM health h WHERE h.target_id = ?1 AND h.at >= ?2 AND h.at <= ?3"

/* clang-format off */
/* every snapshot of the span: the report's chart, and the fit's where the
 * schema marks no edges */
#define SNAPSHOTS_SQL "SELECT " SNAP_COLS IN_SPAN " ORDER BY h.at, h.id"
/* the span's first and last snapshots and every edge between them */
#define END_OF_SPAN(order) \
	" FROM health h WHERE h.id = (SELECT id" IN_SPAN_OF("health") " ORDER BY " order " LIMIT 1)"
#define IN_SPAN_OF(t) " FROM " t " WHERE target_id = ?1 AND at >= ?2 AND at <= ?3"
#define EDGES_SQL                                                                                  \
	"SELECT " SNAP_COLS END_OF_SPAN("at, id")                                                  \
	" UNION SELECT " SNAP_COLS IN_SPAN " AND h.level_edge = 1"                                 \
	" UNION SELECT " SNAP_COLS END_OF_SPAN("at DESC, id DESC") " ORDER BY 1, 6"

/* before schema 29 no target has a rating; before 13 a cycle no campaign */
static const struct query_named scope_12 = { "forecast: the target (before schema 13)",
	SCOPE_SQL(NO_RATING_COLS, "(t.campaign_first_cycle + 0 * ?3)"), QF_NONE, NULL, 1 };
static const struct query_named scope_23 = { "forecast: the target (before schema 29)",
	SCOPE_SQL(NO_RATING_COLS, FIRST_OF_CYCLE), QF_CAMPAIGN_FIRST, &scope_12, 1 };
/* before schema 29 no edges are marked: every snapshot (before 3 none) */
static const struct query_named snapshots = { "forecast: every snapshot of the span",
	SNAPSHOTS_SQL, QF_HEALTH_BY_CYCLE, NULL, 1 };

const struct query_named query_forecast_queries[QFC__COUNT] = {
	[QFC_SCOPE] = { "forecast: the target's rating and span",
			SCOPE_SQL(RATING_COLS, FIRST_OF_CYCLE), QF_RATING, &scope_23, 1 },
	[QFC_EDGES] = { "forecast: the snapshots of the span the fit needs", EDGES_SQL,
			QF_LEVEL_EDGE, &snapshots, 1 },
	[QFC_SNAPSHOTS] = { "forecast: every snapshot of the span", SNAPSHOTS_SQL,
			    QF_HEALTH_BY_CYCLE, NULL, 1 },
};
/* clang-format on */

/* A number, or NAN for NULL (and text). */
static double num(const struct db_value *v)
{
	return v->type == DB_INT || v->type == DB_REAL ? v->r : NAN;
}

struct scope_row {
	struct eol_rating r;
	char lo[40], hi[40]; /* the span; "" unbounded */
	int found;
};

static int scope_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct scope_row *out = arg;

	if (n < 7)
		return -EINVAL;
	out->r = (struct eol_rating){
		.capacity = num(&v[0]),
		.tbw_bytes = num(&v[1]),
		.dwpd = num(&v[2]),
		.warranty_years = num(&v[3]),
		.warranty_start = num(&v[4]),
	};
	util_strlcpy(out->lo, v[5].type == DB_TEXT ? v[5].s : "", sizeof(out->lo));
	util_strlcpy(out->hi, v[6].type == DB_TEXT ? v[6].s : "", sizeof(out->hi));
	out->found = 1;
	return 0;
}

struct readings {
	struct eol_reading *r;
	size_t n, cap;
};

static int reading_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct readings *rs = arg;

	if (n < 5)
		return -EINVAL;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 256;
		struct eol_reading *r = realloc(rs->r, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		rs->r = r;
		rs->cap = cap;
	}
	rs->r[rs->n++] =
		(struct eol_reading){ num(&v[0]), num(&v[1]), num(&v[2]), num(&v[3]), num(&v[4]) };
	return 0;
}

/* The snapshots of query q in span [lo, hi] into rs. */
static int read_span(struct db *db, const struct query_schema *sc, enum query_forecast_id q,
		     int64_t tid, const char *lo, const char *hi, struct readings *rs, char *err,
		     size_t errlen)
{
	return query_named_run(
		db, sc, &query_forecast_queries[q],
		QS_PARAMS(QS_INT(tid), { .type = DB_TEXT, .s = lo }, { .type = DB_TEXT, .s = hi }),
		reading_row, rs, err, errlen);
}

int query_forecast(struct db *db, const struct query_schema *sc,
		   const struct query_forecast_scope *scope, struct eol_forecast *out,
		   struct eol_reading **readings, size_t *n, char *err, size_t errlen)
{
	struct query_schema own;
	struct scope_row sp = { .found = 0 };
	struct readings fit = { NULL, 0, 0 }, all = { NULL, 0, 0 };
	int64_t tid = scope->target_id;
	int ret = sc ? 0 : query_schema_of(db, &own, err, errlen);

	sc = sc ? sc : &own;
	if (!ret)
		ret = query_named_run(db, sc, &query_forecast_queries[QFC_SCOPE],
				      QS_PARAMS(QS_INT(tid), QS_INT(scope->lo), QS_INT(scope->hi)),
				      scope_row, &sp, err, errlen);
	if (!sp.hi[0])
		util_strlcpy(sp.hi, "9999", sizeof(sp.hi)); /* after any ISO time */
	if (scope->until && strcmp(scope->until, sp.hi) < 0)
		util_strlcpy(sp.hi, scope->until, sizeof(sp.hi));
	if (!ret)
		ret = read_span(db, sc, QFC_EDGES, tid, sp.lo, sp.hi, &fit, err, errlen);
	if (!ret && readings)
		ret = read_span(db, sc, QFC_SNAPSHOTS, tid, sp.lo, sp.hi, &all, err, errlen);
	if (!ret && (ret = eol_fit(fit.r, fit.n, sp.found ? &sp.r : NULL, out)) == -EINVAL)
		snprintf(err, errlen, "target %lld: health snapshots out of time order",
			 (long long)tid);
	if (!ret && readings) {
		*readings = all.r;
		*n = all.n;
		all.r = NULL;
	}
	free(fit.r);
	free(all.r);
	return ret;
}
