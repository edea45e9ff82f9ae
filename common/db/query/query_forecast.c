/* query_forecast: the endurance forecast of a target, read once for every
 * reader (wearmon status, show, report; wearmond's metrics): its health
 * snapshots over a campaign (the wear indicator, the drive's and
 * wearmond's host byte counters, the media bytes) and the rating stored
 * with the target, handed to the pure fit of common/base/eol.c. Reads one
 * target's snapshots through the index health_target_at. */
#include "db/query/query.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "db/query/query_int.h"
#include "db/query/query_sql.h"

/* Seconds since the epoch of an ISO time (a date counts from midnight). */
#define UNIX_OF(col) "(julianday(" col ") - 2440587.5) * 86400.0"

/* Every snapshot of target ?1 in cycles ?2..?3 up to time ?4 (NULL: all),
 * oldest first. Host bytes as wearmond counted them are in its data
 * (health.data's host_bytes_total). */
/* clang-format off */
#define UNTIL " AND (?4 IS NULL OR h.at <= ?4)"
#define READINGS_SQL                                                                               \
	"SELECT " UNIX_OF("h.at") " AS t, h.percentage_used AS used,"                              \
	" h.host_bytes_written AS host_drive,"                                                     \
	" json_extract(h.data, '$.host_bytes_total') AS host_own,"                                 \
	" h.nand_bytes_written AS media"                                                           \
	" FROM health h JOIN cycles c ON c.id = h.cycle_id"                                        \
	" WHERE h.target_id = ?1" QS_SCOPE("c.number") UNTIL " ORDER BY h.at, h.id"
/* clang-format on */

/* The rating of target ?1 (schema 24) and what it needs: the capacity for
 * DWPD, the warranty's start (else the day the target was first seen), and
 * the first cycle of the campaign of its cycle ?2 (else of the current one;
 * schema 13). */
#define RATING_SQL(cols, first) "SELECT capacity_bytes, " cols ", " first " AS campaign_first"
#define RATING_COLS                                                                                \
	"rated_tbw, rated_dwpd, warranty_years,"                                                   \
	" " UNIX_OF("coalesce(warranty_start, first_seen)") " AS warranty_start"
#define NO_RATING_COLS                                                                             \
	"NULL AS rated_tbw, NULL AS rated_dwpd, NULL AS warranty_years,"                           \
	" " UNIX_OF("first_seen") " AS warranty_start"
#define FROM_TARGET " FROM targets WHERE id = ?1"
#define FIRST_OF_CYCLE                                                                             \
	"coalesce((SELECT campaign_first_cycle FROM cycles WHERE target_id = ?1"                   \
	" AND number = ?2), campaign_first_cycle)"

/* before schema 24 no target has a rating; before 13 a cycle no campaign */
static const struct query_named rating_12 = {
	"forecast: the target (before schema 13)",
	/* a campaign is the target's: cycle ?2 is only echoed */
	RATING_SQL(NO_RATING_COLS, "campaign_first_cycle") ", ?2 AS cycle" FROM_TARGET, QF_NONE,
	NULL, 1
};
static const struct query_named rating_23 = { "forecast: the target (before schema 24)",
					      RATING_SQL(NO_RATING_COLS, FIRST_OF_CYCLE)
						      FROM_TARGET,
					      QF_CAMPAIGN_FIRST, &rating_12, 1 };

/* clang-format off */
const struct query_named query_forecast_queries[QFC__COUNT] = {
	/* a schema without health snapshots by cycle has none to read */
	[QFC_READINGS] = { "forecast: health snapshots", READINGS_SQL, QF_HEALTH_BY_CYCLE, NULL,
			   1 },
	[QFC_RATING] = { "forecast: the target's rating",
			 RATING_SQL(RATING_COLS, FIRST_OF_CYCLE) FROM_TARGET, QF_RATING, &rating_23,
			 1 },
};
/* clang-format on */

/* A number, or NAN for NULL (and text). */
static double num(const struct db_value *v)
{
	return v->type == DB_INT || v->type == DB_REAL ? v->r : NAN;
}

struct rating_row {
	struct eol_rating r;
	int64_t campaign_first;
	int found;
};

static int rating_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct rating_row *out = arg;

	if (n < 6)
		return -EINVAL;
	out->r = (struct eol_rating){
		.capacity = num(&v[0]),
		.tbw_bytes = num(&v[1]),
		.dwpd = num(&v[2]),
		.warranty_years = num(&v[3]),
		.warranty_start = num(&v[4]),
	};
	out->campaign_first = v[5].type == DB_INT ? v[5].i : 1;
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

int query_forecast(struct db *db, const struct query_schema *sc,
		   const struct query_forecast_scope *scope, struct eol_forecast *out,
		   struct eol_reading **readings, size_t *n, char *err, size_t errlen)
{
	struct query_schema own;
	struct rating_row rating = { .found = 0 };
	struct readings rs = { NULL, 0, 0 };
	int64_t tid = scope->target_id;
	int ret = sc ? 0 : query_schema_of(db, &own, err, errlen);

	sc = sc ? sc : &own;
	if (!ret)
		ret = query_named_run(db, sc, &query_forecast_queries[QFC_RATING],
				      QS_PARAMS(QS_INT(tid), QS_INT(scope->hi)), rating_row,
				      &rating, err, errlen);
	if (!ret)
		ret = query_named_run(
			db, sc, &query_forecast_queries[QFC_READINGS],
			QS_PARAMS(QS_INT(tid),
				  QS_INT(scope->lo > 0 ? scope->lo : rating.campaign_first),
				  QS_INT(scope->hi > 0 ? scope->hi : INT64_MAX),
				  { .type = scope->until ? DB_TEXT : DB_NULL, .s = scope->until }),
			reading_row, &rs, err, errlen);
	if (!ret && (ret = eol_fit(rs.r, rs.n, rating.found ? &rating.r : NULL, out)) == -EINVAL)
		snprintf(err, errlen, "target %lld: health snapshots out of time order",
			 (long long)tid);
	if (!ret && readings) {
		*readings = rs.r;
		*n = rs.n;
		rs.r = NULL;
	}
	free(rs.r);
	return ret;
}
