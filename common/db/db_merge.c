/* db_merge: copy another machine's history into this database (wearmon
 * merge). Each source target becomes "HOST/NAME" here and is replaced
 * whole on every merge, so merging the same inputs again changes nothing
 * and a newer copy of an input brings its new rows. */
#include "db/db_int.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define SQL_MAX 8192
#define NAME_MAX_LEN 512 /* a target name, HOST/NAME */

/* One input target, as merge_sources records it. */
struct merge_source {
	const char *path; /* the input database */
	char ident[17];   /* hash of its first iteration */
	char print[17];   /* hash of its rows */
};

enum { MERGE_NEW = 1, MERGE_SAME, MERGE_NEWER };

/* Run one statement built with printf. Returns 0 or -errno (err set). */
static int execf(sqlite3 *c, char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int execf(sqlite3 *c, char *err, size_t len, const char *fmt, ...)
{
	char sql[SQL_MAX];
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(sql)) {
		db_seterr(err, len, "merge: statement too long");
		return -E2BIG;
	}
	int rc = sqlite3_exec(c, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		db_seterr(err, len, "merge: %s", msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return db_map_rc(rc, 0);
	}
	return 0;
}

/* One integer (or text into buf) from a query with one optional text
 * parameter. Returns 0, -ENOENT (no row) or -errno. */
static int one_value(sqlite3 *c, const char *sql, const char *param, int64_t *i, char *buf,
		     size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(c, sql, -1, &st, NULL);

	if (rc == SQLITE_OK && param)
		rc = sqlite3_bind_text(st, 1, param, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	int ret = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : db_map_rc(rc, 0);
	if (!ret && i)
		*i = sqlite3_column_int64(st, 0);
	if (!ret && buf)
		util_strlcpy(buf,
			     sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0)
							: "",
			     len);
	sqlite3_finalize(st);
	return ret;
}

/* "x.a, x.b, ..." and "a, b, ...": the columns table has in both
 * databases, less skip (comma-separated, with commas around). */
static int common_cols(sqlite3 *c, const char *table, const char *skip, char *src_list,
		       char *dst_list, size_t len)
{
	sqlite3_stmt *st = NULL;
	size_t a = 0, b = 0;
	int rc = sqlite3_prepare_v2(c,
				    "SELECT m.name FROM pragma_table_info(?1, 'main') m"
				    " JOIN pragma_table_info(?1, 'src') s ON s.name = m.name"
				    " ORDER BY m.cid",
				    -1, &st, NULL);

	src_list[0] = dst_list[0] = '\0';
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(st, 0);
		char key[80];
		snprintf(key, sizeof(key), ",%s,", col);
		if (strstr(skip, key)) {
			rc = SQLITE_OK;
			continue;
		}
		a += (size_t)snprintf(src_list + a, a < len ? len - a : 0, ", x.\"%s\"", col);
		b += (size_t)snprintf(dst_list + b, b < len ? len - b : 0, ", \"%s\"", col);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (a >= len || b >= len)
		return -E2BIG;
	return rc == SQLITE_DONE ? 0 : db_map_rc(rc, 0);
}

/* INSERT INTO main.T (fixed dst cols + common) SELECT fixed src exprs +
 * common FROM src.T x tail. */
static int copy_rows(sqlite3 *c, const char *table, const char *skip, const char *fixed_dst,
		     const char *fixed_src, const char *tail, char *err, size_t len)
{
	char s[SQL_MAX / 2], d[SQL_MAX / 2];
	int ret = common_cols(c, table, skip, s, d, sizeof(s));

	if (ret) {
		db_seterr(err, len, "merge: columns of %s: %s", table, strerror(-ret));
		return ret;
	}
	int bare = !fixed_dst[0]; /* the lists start with ", " */
	return execf(c, err, len, "INSERT INTO main.\"%s\" (%s%s) SELECT %s%s FROM src.\"%s\" x %s",
		     table, fixed_dst, d + (bare && d[0] ? 2 : 0), fixed_src,
		     s + (bare && s[0] ? 2 : 0), table, tail);
}

/* Remove everything of target id here (before copying it again). */
static int clear_target(sqlite3 *c, int64_t id, char *err, size_t len)
{
	/* children first: the daemon's foreign keys stay satisfied */
	static const char *const table[] = { "events",   "health",     "mapped_extents",
					     "progress", "hir_bursts", "hir_purges" };
	int ret = execf(c, err, len,
			"DELETE FROM sample_data WHERE iteration_id IN (SELECT id FROM"
			" iterations WHERE target_id = %lld); DELETE FROM sample_minute_data"
			" WHERE iteration_id IN (SELECT id FROM iterations WHERE target_id = %lld);"
			" DELETE FROM device_series WHERE iteration_id IN (SELECT id FROM"
			" iterations WHERE target_id = %lld);"
			" DELETE FROM wear WHERE iteration_id"
			" IN (SELECT id FROM iterations WHERE target_id = %lld)",
			(long long)id, (long long)id, (long long)id, (long long)id);
	for (size_t i = 0; i < ARRAY_SIZE(table) && !ret; i++)
		ret = execf(c, err, len, "DELETE FROM %s WHERE target_id = %lld", table[i],
			    (long long)id);
	if (!ret)
		ret = execf(c, err, len,
			    "DELETE FROM iterations WHERE target_id = %lld;"
			    " DELETE FROM cycles WHERE target_id = %lld;"
			    " DELETE FROM targets WHERE id = %lld",
			    (long long)id, (long long)id, (long long)id);
	return ret;
}

/* The runs of the source, once each (host, start, pid), with their ends
 * brought up to date; temp.run_map pairs source and local ids. */
static int merge_runs(sqlite3 *c, char *err, size_t len)
{
	static const char match[] = "m.started_at = x.started_at AND m.pid = x.pid"
				    " AND m.hostname IS x.hostname";
	int ret = copy_rows(c, "runs", ",id,", "", "",
			    "WHERE NOT EXISTS (SELECT 1 FROM main.runs m WHERE m.started_at ="
			    " x.started_at AND m.pid = x.pid AND m.hostname IS x.hostname)"
			    " ORDER BY x.id",
			    err, len);
	if (!ret)
		ret = execf(c, err, len,
			    "UPDATE main.runs AS m SET ended_at = x.ended_at,"
			    " exit_status = x.exit_status, exit_reason = x.exit_reason"
			    " FROM src.runs x WHERE %s AND m.ended_at IS NULL",
			    match);
	if (!ret)
		ret = execf(c, err, len,
			    "DROP TABLE IF EXISTS temp.run_map;"
			    " CREATE TEMP TABLE run_map (src INTEGER PRIMARY KEY, dst INTEGER);"
			    " INSERT INTO temp.run_map SELECT x.id, m.id FROM src.runs x"
			    " JOIN main.runs m ON %s",
			    match);
	return ret;
}

#define MAP(tbl, col) "(SELECT dst FROM temp." tbl " WHERE src = x." col ")"

/* Whether the source has table name. Returns 1, 0 or -errno. */
static int src_has(sqlite3 *c, const char *name)
{
	int64_t n = 0;
	int ret = one_value(c,
			    "SELECT count(*) FROM src.sqlite_master WHERE type = 'table'"
			    " AND name = ?1",
			    name, &n, NULL, 0);
	return ret ? ret : n > 0;
}

/* "(SELECT c1, c2, ... FROM src.table)" with schema 15's sample columns,
 * NULL for those an older source lacks. Returns 0 or -errno. */
static int old_samples(sqlite3 *c, const char *table, char *out, size_t len)
{
	static const char *const cols[] = { "iteration_id", "phase",        "t_ms",
					    "mibps",        "iops",         "lat_p50_us",
					    "lat_p99_us",   "lat_max_us",   "lat_p90_us",
					    "lat_p999_us",  "lat_p9999_us", "mibps_min_1s",
					    "duration_ms",  "bytes",        "host_stall_ms" };
	size_t n = (size_t)snprintf(out, len, "(SELECT ");
	int64_t has = 0;
	char sql[160];
	int ret = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM pragma_table_info('%s', 'src') WHERE name = ?1", table);
	for (size_t i = 0; i < ARRAY_SIZE(cols) && !ret; i++) {
		ret = one_value(c, sql, cols[i], &has, NULL, 0);
		n += (size_t)snprintf(out + (n < len ? n : len), n < len ? len - n : 0,
				      "%s%s AS %s", i ? ", " : "", has ? cols[i] : "NULL", cols[i]);
	}
	n += (size_t)snprintf(out + (n < len ? n : len), n < len ? len - n : 0, " FROM src.%s)",
			      table);
	return ret ? ret : n >= len ? -E2BIG : 0;
}

/* The samples of the iterations its names (a WHERE on x.iteration_id):
 * the compact rows and rollups of a source of schema 16 as they are, the
 * rows of an older one (or those not yet moved: samples_v15) converted.
 * Returns 0 or -errno (err set). */
static int copy_samples(sqlite3 *c, const char *its, char *err, size_t len)
{
	static const char *const old[] = { "samples", "samples_v15" };
	char from[1024];
	int compact = src_has(c, "sample_data"), ret = compact < 0 ? compact : 0;

	if (!ret && compact)
		ret = copy_rows(c, "sample_data", ",iteration_id,", "iteration_id",
				MAP("it_map", "iteration_id"), its, err, len);
	if (!ret && compact)
		ret = copy_rows(c, "sample_minute_data", ",iteration_id,", "iteration_id",
				MAP("it_map", "iteration_id"), its, err, len);
	/* the drive's readings beside them (schema 25) */
	int series = ret ? 0 : src_has(c, "device_series");
	if (series < 0)
		ret = series;
	if (series > 0)
		ret = copy_rows(c, "device_series", ",iteration_id,", "iteration_id",
				MAP("it_map", "iteration_id"), its, err, len);
	int has = ret ? 0 : src_has(c, old[compact > 0]);
	if (has > 0)
		ret = old_samples(c, old[compact > 0], from, sizeof(from));
	if (!ret && has > 0)
		ret = execf(c, err, len,
			    "INSERT INTO main.sample_data (%s) SELECT " MAP(
				    "it_map", "iteration_id") ", %s FROM %s x %s",
			    db_schema_sample_cols, db_schema_sample_from_15, from, its);
	return ret ? ret : has < 0 ? has : 0;
}

/* Cycles, iterations and what hangs on them, of source target s into
 * local target d; temp.cycle_map and temp.it_map pair the ids. */
static int copy_history(sqlite3 *c, int64_t s, int64_t d, char *err, size_t len)
{
	char fx[160], where[96], its[160];
	int ret;

	snprintf(where, sizeof(where), "WHERE x.target_id = %lld ORDER BY x.id", (long long)s);
	snprintf(fx, sizeof(fx), "%lld, " MAP("run_map", "run_id"), (long long)d);
	ret = copy_rows(c, "cycles", ",id,target_id,run_id,", "target_id, run_id", fx, where, err,
			len);
	if (!ret)
		ret = execf(c, err, len,
			    "DROP TABLE IF EXISTS temp.cycle_map;"
			    " CREATE TEMP TABLE cycle_map (src INTEGER PRIMARY KEY, dst INTEGER);"
			    " INSERT INTO temp.cycle_map SELECT x.id, m.id FROM src.cycles x"
			    " JOIN main.cycles m ON m.target_id = %lld AND m.number = x.number"
			    " WHERE x.target_id = %lld",
			    (long long)d, (long long)s);
	snprintf(fx, sizeof(fx),
		 MAP("cycle_map", "cycle_id") ", " MAP("run_map", "run_id") ", %lld", (long long)d);
	if (!ret)
		ret = copy_rows(c, "iterations", ",id,cycle_id,run_id,target_id,",
				"cycle_id, run_id, target_id", fx, where, err, len);
	if (!ret)
		ret = execf(c, err, len,
			    "DROP TABLE IF EXISTS temp.it_map;"
			    " CREATE TEMP TABLE it_map (src INTEGER PRIMARY KEY, dst INTEGER);"
			    " INSERT INTO temp.it_map SELECT x.id, m.id FROM src.iterations x"
			    " JOIN temp.cycle_map cm ON cm.src = x.cycle_id"
			    " JOIN main.iterations m ON m.cycle_id = cm.dst AND m.number = x.number"
			    " WHERE x.target_id = %lld",
			    (long long)s);
	/* the baselines name iterations of this target: their ids here */
	if (!ret)
		ret = execf(c, err, len,
			    "UPDATE main.iterations AS u SET baseline_iteration_id ="
			    " (SELECT dst FROM temp.it_map WHERE src = u.baseline_iteration_id)"
			    " WHERE u.target_id = %lld AND u.baseline_iteration_id IS NOT NULL",
			    (long long)d);
	snprintf(its, sizeof(its), "WHERE x.iteration_id IN (SELECT src FROM temp.it_map)");
	if (!ret)
		ret = copy_samples(c, its, err, len);
	if (!ret)
		ret = copy_rows(c, "wear", ",iteration_id,", "iteration_id",
				MAP("it_map", "iteration_id"), its, err, len);
	return ret;
}

/* The host idle recovery rows of source target s (schema 22; an older
 * source has none) and its purges (schema 27). */
static int copy_hir(sqlite3 *c, int64_t s, int64_t d, char *err, size_t len)
{
	char fx[320], where[96];
	int has = src_has(c, "hir_bursts");

	if (has <= 0)
		return has;
	snprintf(where, sizeof(where), "WHERE x.target_id = %lld ORDER BY x.id", (long long)s);
	snprintf(fx, sizeof(fx),
		 "%lld, " MAP("run_map", "run_id") ", " MAP("cycle_map", "cycle_id"), (long long)d);
	int ret = copy_rows(c, "hir_bursts", ",id,target_id,run_id,cycle_id,",
			    "target_id, run_id, cycle_id", fx, where, err, len);
	/* its purges (schema 27) */
	if (!ret && (has = src_has(c, "hir_purges")) > 0)
		ret = copy_rows(c, "hir_purges", ",id,target_id,run_id,cycle_id,",
				"target_id, run_id, cycle_id", fx, where, err, len);
	return ret ? ret : has < 0 ? has : 0;
}

/* Events, health snapshots, mapped extents and host idle recovery rows of
 * source target s. */
static int copy_state(sqlite3 *c, int64_t s, int64_t d, char *err, size_t len)
{
	char fx[320], where[96];
	int ret;

	snprintf(where, sizeof(where), "WHERE x.target_id = %lld ORDER BY x.id", (long long)s);
	snprintf(fx, sizeof(fx),
		 "%lld, " MAP("run_map", "run_id") ", " MAP("cycle_map", "cycle_id") ", " MAP(
			 "it_map", "iteration_id"),
		 (long long)d);
	ret = copy_rows(c, "events", ",id,target_id,run_id,cycle_id,iteration_id,",
			"target_id, run_id, cycle_id, iteration_id", fx, where, err, len);
	snprintf(fx, sizeof(fx), "%lld, " MAP("cycle_map", "cycle_id"), (long long)d);
	if (!ret)
		ret = copy_rows(c, "health", ",id,target_id,cycle_id,", "target_id, cycle_id", fx,
				where, err, len);
	snprintf(fx, sizeof(fx), "%lld", (long long)d);
	snprintf(where, sizeof(where), "WHERE x.target_id = %lld", (long long)s);
	if (!ret) /* WITHOUT ROWID, no id */
		ret = copy_rows(c, "mapped_extents", ",target_id,", "target_id", fx, where, err,
				len);
	if (!ret)
		ret = copy_hir(c, s, d, err, len);
	return ret;
}

/* ---- which input each target came from (main.merge_sources) ---------- */

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

/* Adds one result row's columns to the FNV-1a hash h. */
static uint64_t hash_row(uint64_t h, sqlite3_stmt *st)
{
	for (int k = 0; k < sqlite3_column_count(st); k++) {
		const unsigned char *t = sqlite3_column_text(st, k);
		size_t n = t ? strlen((const char *)t) + 1 : 1;
		const unsigned char *b = t ? t : (const unsigned char *)"\xff";
		for (size_t i = 0; i < n; i++)
			h = (h ^ b[i]) * FNV_PRIME;
	}
	return h;
}

/* Rows that a fingerprint reads, each through an index or a primary key,
 * so that a target of a year costs its index entries, never its rows.
 * The first names the target's first iteration (the identity). */
static const char *const print_sql[] = {
	"SELECT id, started_at, bytes FROM src.iterations WHERE id ="
	" (SELECT min(id) FROM src.iterations WHERE target_id = ?1)",
	"SELECT count(*), max(id), 'i' FROM src.iterations WHERE target_id = ?1",
	/* the newest rows change last: a running one ends, a restart marks
	 * it interrupted */
	"SELECT id, started_at, bytes, status, ended_at, errors FROM src.iterations WHERE id IN"
	" (SELECT id FROM src.iterations WHERE target_id = ?1 ORDER BY id DESC LIMIT 8)"
	" ORDER BY id",
	"SELECT count(*), max(id), 'c' FROM src.cycles WHERE target_id = ?1",
	"SELECT id, status, ended_at FROM src.cycles WHERE id ="
	" (SELECT max(id) FROM src.cycles WHERE target_id = ?1)",
	"SELECT count(*), max(id), 'e' FROM src.events WHERE target_id = ?1",
	"SELECT count(*), max(id), 'h' FROM src.health WHERE target_id = ?1",
	"SELECT count(*), max(iteration_id), 'w' FROM src.wear WHERE iteration_id IN"
	" (SELECT id FROM src.iterations WHERE target_id = ?1)",
	/* the last iteration may still be running: its samples grow */
	"SELECT count(*), max(t_ms), 's' FROM src.samples WHERE iteration_id ="
	" (SELECT max(id) FROM src.iterations WHERE target_id = ?1)",
	/* host idle recovery (schema 22): no row, so no change to the print,
	 * for a target without any (or a source without the table) */
	"SELECT count(*), max(id), 'r' FROM src.hir_bursts WHERE target_id = ?1"
	" HAVING count(*) > 0",
	/* (schema 27) a burst's idle wait is stored into it once the wait
	 * ends, before any later row: only the newest row can still change */
	"SELECT id, idle_after_seconds FROM src.hir_bursts WHERE id ="
	" (SELECT max(id) FROM src.hir_bursts WHERE target_id = ?1)",
	"SELECT count(*), max(id), 'p' FROM src.hir_purges WHERE target_id = ?1"
	" HAVING count(*) > 0",
};

/* The table each of print_sql needs, where an older source may lack it. */
static const char *const print_needs[ARRAY_SIZE(print_sql)] = {
	[ARRAY_SIZE(print_sql) - 3] = "hir_bursts",
	[ARRAY_SIZE(print_sql) - 2] = "hir_purges",
	[ARRAY_SIZE(print_sql) - 1] = "hir_purges",
};

/* What tells the inputs apart, read through indexes only (merging
 * unchanged inputs again reads little of them): ident hashes source
 * target s's first iteration (a newer copy of the same database keeps
 * it), print the rows of print_sql: counts and last ids of its
 * iterations, cycles, events, health and wear rows, its newest iterations
 * and cycle, the samples of its last iteration and its host idle recovery
 * rows and purges. Returns 0 or -errno. */
static int fingerprint(sqlite3 *c, int64_t s, struct merge_source *m)
{
	uint64_t h = FNV_OFFSET, first = 0;
	int ret = 0;

	for (size_t q = 0; q < ARRAY_SIZE(print_sql) && !ret; q++) {
		sqlite3_stmt *st = NULL;
		if (print_needs[q] && src_has(c, print_needs[q]) <= 0)
			continue;
		int rc = sqlite3_prepare_v2(c, print_sql[q], -1, &st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(st, 1, s);
		while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (q == 0)
				first = hash_row(FNV_OFFSET, st);
			h = hash_row(h, st);
			rc = SQLITE_OK;
		}
		ret = rc == SQLITE_DONE ? 0 : db_map_rc(rc, 0);
		sqlite3_finalize(st);
	}
	snprintf(m->ident, sizeof(m->ident), "%016llx", (unsigned long long)first);
	snprintf(m->print, sizeof(m->print), "%016llx", (unsigned long long)h);
	return ret;
}

/* What an earlier merge recorded for local: MERGE_NEW (nothing),
 * MERGE_SAME (the same rows), MERGE_NEWER (a newer copy of the same
 * database, or a target merged before sources were recorded), or -EEXIST
 * (another database: err names both). Returns one of those or -errno. */
static int source_seen(sqlite3 *c, const char *local, int exists, const struct merge_source *m,
		       char *err, size_t len)
{
	sqlite3_stmt *st = NULL;
	int ret = sqlite3_prepare_v2(c,
				     "SELECT source, identity, fingerprint FROM main.merge_sources"
				     " WHERE target = ?1",
				     -1, &st, NULL);

	if (ret == SQLITE_OK)
		ret = sqlite3_bind_text(st, 1, local, -1, SQLITE_STATIC);
	if (ret == SQLITE_OK)
		ret = sqlite3_step(st);
	if (ret == SQLITE_DONE)
		ret = exists ? MERGE_NEWER : MERGE_NEW;
	else if (ret != SQLITE_ROW)
		ret = db_map_rc(ret, 0);
	else if (!strcmp((const char *)sqlite3_column_text(st, 2), m->print))
		ret = MERGE_SAME;
	else if (!strcmp((const char *)sqlite3_column_text(st, 1), m->ident))
		ret = MERGE_NEWER;
	else {
		db_seterr(err, len,
			  "%s: target %s is already in the output from %s, another database"
			  " with the same host and target name (their first iterations differ)",
			  m->path, local, (const char *)sqlite3_column_text(st, 0));
		ret = -EEXIST;
	}
	sqlite3_finalize(st);
	return ret;
}

/* Records that local now holds m's rows. Returns 0 or -errno. */
static int source_record(sqlite3 *c, const char *local, const struct merge_source *m, char *err,
			 size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(c,
				    "INSERT OR REPLACE INTO main.merge_sources (target, source,"
				    " identity, fingerprint, merged_at) VALUES (?1, ?2, ?3, ?4,"
				    " strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
				    -1, &st, NULL);
	const char *v[] = { local, m->path, m->ident, m->print };

	for (int i = 0; i < 4 && rc == SQLITE_OK; i++)
		rc = sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
	db_seterr(err, len, "merge: recording the source of %s: %s", local, sqlite3_errmsg(c));
	return db_map_rc(rc, 0);
}

/* The name a source target gets here: HOST/NAME (a name that already has
 * a host, from a merged database, stays, unless rename gives a host). */
static void local_name(const char *host, const char *rename, const char *name, char *out,
		       size_t len)
{
	const char *slash = strchr(name, '/');

	if (rename)
		snprintf(out, len, "%s/%s", rename, slash ? slash + 1 : name);
	else if (slash)
		util_strlcpy(out, name, len);
	else
		snprintf(out, len, "%s/%s", host, name);
}

/* Adds target d's row here: source target s's columns, named local. */
static int insert_target(sqlite3 *c, int64_t s, int64_t d, const char *local, char *err, size_t len)
{
	char sql[SQL_MAX], sc[SQL_MAX / 2], dc[SQL_MAX / 2];
	sqlite3_stmt *st = NULL;
	int ret = common_cols(c, "targets", ",id,name,", sc, dc, sizeof(sc));

	if (ret) {
		db_seterr(err, len, "merge: columns of targets: %s", strerror(-ret));
		return ret;
	}
	snprintf(sql, sizeof(sql),
		 "INSERT INTO main.targets (id, name%s) SELECT %lld, ?%s"
		 " FROM src.targets x WHERE x.id = %lld",
		 dc, (long long)d, sc, (long long)s);
	ret = sqlite3_prepare_v2(c, sql, -1, &st, NULL) == SQLITE_OK &&
			      sqlite3_bind_text(st, 1, local, -1, SQLITE_STATIC) == SQLITE_OK &&
			      sqlite3_step(st) == SQLITE_DONE
		      ? 0
		      : -EIO;
	if (ret)
		db_seterr(err, len, "merge: target %s: %s", local, sqlite3_errmsg(c));
	sqlite3_finalize(st);
	return ret;
}

/* Adds target d's counts here to r. */
static void count_target(sqlite3 *c, int64_t d, struct db_merge_result *r)
{
	char q[160];
	int64_t n = 0;

	r->targets++;
	snprintf(q, sizeof(q), "SELECT count(*) FROM main.iterations WHERE target_id = %lld",
		 (long long)d);
	if (!one_value(c, q, NULL, &n, NULL, 0))
		r->iterations += n;
	snprintf(q, sizeof(q), "SELECT count(*) FROM main.cycles WHERE target_id = %lld",
		 (long long)d);
	if (!one_value(c, q, NULL, &n, NULL, 0))
		r->cycles += n;
}

/* Source target s (of the input at path) as local: left as it is when
 * the same rows were merged before, replaced whole when it is a newer
 * copy of the same database, refused when another database brought that
 * name. Returns 0, -EEXIST or -errno (err set). */
static int merge_target(sqlite3 *c, int64_t s, const char *local, const char *path,
			struct db_merge_result *r, char *err, size_t len)
{
	struct merge_source m = { .path = path };
	int64_t d = 0;
	int seen, ret = one_value(c, "SELECT id FROM main.targets WHERE name = ?1", local, &d, NULL,
				  0);

	if (ret && ret != -ENOENT)
		return ret;
	int exists = !ret;
	if ((ret = fingerprint(c, s, &m))) {
		db_seterr(err, len, "%s: reading target %s: %s", path, local, strerror(-ret));
		return ret;
	}
	seen = exists ? source_seen(c, local, 1, &m, err, len) : MERGE_NEW;
	if (seen < 0)
		return seen;
	if (seen == MERGE_SAME) { /* nothing to do: fast and idempotent */
		r->unchanged++;
		count_target(c, d, r);
		return 0;
	}
	if (exists) /* a newer copy: replaced whole, keeping its id */
		ret = clear_target(c, d, err, len);
	else
		ret = one_value(c, "SELECT coalesce(max(id), 0) + 1 FROM main.targets", NULL, &d,
				NULL, 0);
	if (!ret)
		ret = insert_target(c, s, d, local, err, len);
	if (!ret)
		ret = copy_history(c, s, d, err, len);
	if (!ret)
		ret = copy_state(c, s, d, err, len);
	if (!ret)
		ret = source_record(c, local, &m, err, len);
	if (!ret)
		count_target(c, d, r);
	return ret;
}

/* Which version the source is; refuse what this build does not know. */
static int check_source(sqlite3 *c, const char *path, char *err, size_t len)
{
	int64_t v = 0, t = 0;
	int ret = one_value(c, "PRAGMA src.user_version", NULL, &v, NULL, 0);

	if (!ret && v > DB_SCHEMA_VERSION) {
		db_seterr(err, len,
			  "%s: schema version %lld is newer than this wearmon knows "
			  "(%d); merge it with a newer wearmon",
			  path, (long long)v, DB_SCHEMA_VERSION);
		return -ENOTSUP;
	}
	if (!ret)
		ret = one_value(c,
				"SELECT count(*) FROM src.sqlite_master WHERE type = 'table'"
				" AND name IN ('targets', 'runs', 'cycles', 'iterations')",
				NULL, &t, NULL, 0);
	if (ret || v < 1 || t != 4) {
		db_seterr(err, len, "%s: not a wearmon database (schema version %lld)", path,
			  (long long)v);
		return -EINVAL;
	}
	return 0;
}

struct src_target {
	int64_t id;
	char name[NAME_MAX_LEN];
};

/* The source's targets, read whole first: a statement still reading
 * src.targets would make the DROP TABLEs of merge_target fail with
 * "database table is locked" at a second target. */
static int source_targets(sqlite3 *c, struct src_target **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	struct src_target *t = NULL, *grown;
	int ret = 0;

	*n = 0;
	if (sqlite3_prepare_v2(c, "SELECT id, name FROM src.targets ORDER BY id", -1, &st, NULL) !=
	    SQLITE_OK)
		return -EIO;
	while (!ret && sqlite3_step(st) == SQLITE_ROW) {
		grown = realloc(t, (*n + 1) * sizeof(*t));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		t = grown;
		t[*n].id = sqlite3_column_int64(st, 0);
		util_strlcpy(t[*n].name, (const char *)sqlite3_column_text(st, 1),
			     sizeof(t[*n].name));
		(*n)++;
	}
	sqlite3_finalize(st);
	*out = t;
	return ret;
}

static int merge_targets(sqlite3 *c, const char *path, const char *rename,
			 struct db_merge_result *r, char *err, size_t len)
{
	char local[NAME_MAX_LEN];
	struct src_target *t = NULL;
	size_t n = 0;
	int ret = one_value(c,
			    "SELECT coalesce((SELECT hostname FROM src.runs WHERE hostname"
			    " IS NOT NULL ORDER BY id DESC LIMIT 1), 'unknown-host')",
			    NULL, NULL, r->host, sizeof(r->host));
	if (!ret)
		ret = merge_runs(c, err, len);
	if (!ret)
		ret = source_targets(c, &t, &n);
	if (!ret)
		ret = execf(c, err, len,
			    "CREATE TABLE IF NOT EXISTS main.merge_sources (target TEXT PRIMARY"
			    " KEY, source TEXT NOT NULL, identity TEXT NOT NULL, fingerprint"
			    " TEXT NOT NULL, merged_at TEXT NOT NULL)");
	for (size_t i = 0; !ret && i < n; i++) {
		local_name(r->host, rename, t[i].name, local, sizeof(local));
		ret = merge_target(c, t[i].id, local, path, r, err, len);
	}
	free(t);
	return ret;
}

int db_merge(struct db *db, const char *src_path, const char *rename, struct db_merge_result *r,
	     char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int ret;

	memset(r, 0, sizeof(*r));
	/* samples of schema 15 still in OUT are moved first (db_samples.c) */
	struct db_samples_progress p;
	while ((ret = db_samples_migrate(db, 64, &p)) == 1)
		;
	if (ret) {
		db_seterr(err, errlen, "%s: cannot move its samples of schema 15: %s", db->path,
			  strerror(-ret));
		return ret;
	}
	if ((ret = db_enter(db)))
		return ret;
	if (sqlite3_prepare_v2(db->conn, "ATTACH DATABASE ?1 AS src", -1, &st, NULL) ||
	    sqlite3_bind_text(st, 1, src_path, -1, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_DONE) {
		db_seterr(err, errlen, "%s: cannot open: %s", src_path, sqlite3_errmsg(db->conn));
		sqlite3_finalize(st);
		db_leave(db);
		return -EIO;
	}
	sqlite3_finalize(st);
	ret = check_source(db->conn, src_path, err, errlen);
	if (!ret)
		ret = execf(db->conn, err, errlen, "BEGIN IMMEDIATE");
	if (!ret) {
		ret = merge_targets(db->conn, src_path, rename, r, err, errlen);
		execf(db->conn, NULL, 0, ret ? "ROLLBACK" : "COMMIT");
	}
	execf(db->conn, NULL, 0,
	      "DROP TABLE IF EXISTS temp.run_map; DROP TABLE IF EXISTS"
	      " temp.cycle_map; DROP TABLE IF EXISTS temp.it_map; DETACH DATABASE src");
	db_leave(db);
	return ret;
}

int db_merge_check_out(struct db *db, char *err, size_t errlen)
{
	char name[NAME_MAX_LEN] = "";
	int64_t runs = 0, targets = 0;
	int ret;

	if (!db)
		return -EINVAL;
	pthread_mutex_lock(&db->lock); /* db_enter is for writers; this reads */
	ret = one_value(db->conn, "SELECT name FROM targets WHERE instr(name, '/') = 0 LIMIT 1",
			NULL, NULL, name, sizeof(name));
	if (!ret) {
		db_seterr(err, errlen,
			  "its target '%s' is a daemon's own (a merged database names each"
			  " target HOST/NAME)",
			  name);
		ret = -EPERM;
	} else if (ret == -ENOENT) {
		ret = one_value(db->conn, "SELECT count(*) FROM runs", NULL, &runs, NULL, 0);
		if (!ret)
			ret = one_value(db->conn, "SELECT count(*) FROM targets", NULL, &targets,
					NULL, 0);
		if (!ret && runs > 0 && targets == 0) {
			db_seterr(err, errlen, "a daemon ran on it (%lld runs, no targets)",
				  (long long)runs);
			ret = -EPERM;
		}
	}
	db_leave(db);
	return ret;
}
