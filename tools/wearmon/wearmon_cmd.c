/* wearmon_cmd: the listing subcommands of wearmon: history (one row per
 * iteration), alerts (events of severity notice and above) and show (all
 * about one iteration). Queries read base tables, so a version-1 database
 * that has not got the views yet reads the same. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "wearmon.h"

#define ALERT_SEVERITIES "('emerg', 'alert', 'crit', 'err', 'warning', 'notice')"

/* ---- history ------------------------------------------------------------ */

/* csv and json carry every column of iterations (whatever the schema
 * version), led by names a person knows and followed by the baseline. */
static const char *const history_lead[] = { "id", "target", "cycle", "iteration" };
static const char *const history_tail[] = { "baseline_mibps", "baseline_cycle", "ratio" };
/* iterations columns already in the lead under another name, or ids */
static const char *const history_skip[] = { "id", "number", "cycle_id", "run_id", "target_id" };

static int listed(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* What fits a terminal. */
static const struct wm_col history_table[] = {
	{ "id", "ID", K_INT, 0 },
	{ "target", "TARGET", K_TEXT, 0 },
	{ "cycle", "CYCLE", K_INT, 0 },
	{ "iteration", "IT", K_INT, 0 },
	{ "size_bytes", "SIZE", K_BYTES, 0 },
	{ "workload", "WORKLOAD", K_TEXT, 0 },
	{ "phase", "PHASE", K_TEXT, 1 },
	{ "repeat_index", "REP", K_INT, 1 },
	{ "block_size", "BS", K_BYTES, 0 },
	{ "status", "STATUS", K_TEXT, 0 },
	{ "started_at", "STARTED (UTC)", K_TIME, 0 },
	{ "seconds", "SECONDS", K_SECONDS, 0 },
	{ "mibps_avg", "MiB/s", K_MIBPS, 0 },
	{ "mibps_min", "MIN", K_MIBPS, 0 },
	{ "mibps_max", "MAX", K_MIBPS, 0 },
	{ "iops_avg", "IOPS", K_US, 0 },
	{ "lat_p99_us", "P99 µs", K_US, 0 },
	{ "fill_mibps", "FILL MiB/s", K_MIBPS, 0 },
	{ "ratio", "VS BASE", K_RATIO, 0 },
};

/* Builds the query and its csv/json columns from the live schema; names
 * in *raw point into names. Returns 0 or WM_EXIT_ERROR. */
static int history_query(struct wm *wm, struct wm_table *names, char **sql, struct wm_col **raw,
			 int *nraw)
{
	size_t len = 0;
	FILE *f;
	int n = 0;

	if (wm_columns(wm, "iterations", names))
		return WM_EXIT_ERROR;
	*raw = calloc(ARRAY_SIZE(history_lead) + ARRAY_SIZE(history_tail) + (size_t)names->nrows,
		      sizeof(**raw));
	f = open_memstream(sql, &len);
	if (!*raw || !f) {
		wm_err("out of memory");
		if (f)
			fclose(f);
		return WM_EXIT_ERROR;
	}
	for (size_t k = 0; k < ARRAY_SIZE(history_lead); k++)
		(*raw)[n++] = (struct wm_col){ history_lead[k], "", K_TEXT, 0 };
	fputs("SELECT i.id, t.name AS target, c.number AS cycle, i.number AS iteration", f);
	for (int r = 0; r < names->nrows; r++) {
		const char *col = wm_str(names, r, "name");

		if (listed(history_skip, ARRAY_SIZE(history_skip), col))
			continue;
		fprintf(f, ", i.\"%s\"", col); /* names from sqlite_master */
		(*raw)[n++] = (struct wm_col){ col, "", K_TEXT, 0 };
	}
	for (size_t k = 0; k < ARRAY_SIZE(history_tail); k++)
		(*raw)[n++] = (struct wm_col){ history_tail[k], "", K_TEXT, 0 };
	fputs(", CASE WHEN i.status = 'done' THEN b.baseline_mibps END AS baseline_mibps,"
	      " CASE WHEN i.status = 'done' THEN b.baseline_cycle END AS baseline_cycle,"
	      " CASE WHEN i.status = 'done' THEN i.mibps_avg / b.baseline_mibps END AS ratio"
	      " FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
	      " JOIN targets t ON t.id = i.target_id" WM_SQL_BASELINE_JOIN,
	      f);
	fputs(" WHERE (?1 IS NULL OR t.name = ?1) AND (?2 IS NULL OR c.number = ?2)"
	      " AND (?3 IS NULL OR i.started_at >= ?3)"
	      " ORDER BY t.name, c.number, i.number",
	      f);
	*nraw = n;
	if (fclose(f) != 0) {
		wm_err("out of memory");
		return WM_EXIT_ERROR;
	}
	return 0;
}

/* An empty result in table form: say why. Returns 0 or WM_EXIT_ERROR. */
static int say_empty(struct wm *wm, const char *what)
{
	int any = wm_has_iterations(wm);

	if (any < 0)
		return WM_EXIT_ERROR;
	printf("%s\n", any ? what : WM_NO_ITERATIONS);
	return 0;
}

int wm_cmd_history(struct wm *wm, int argc, char **argv)
{
	struct wm_table t = { 0 }, names = { 0 };
	struct wm_col *raw = NULL;
	struct wm_args a;
	char *sql = NULL;
	int64_t tid;
	int nraw = 0, ret = wm_parse_args(wm, argc, argv, "tcsf", &a);

	if (ret >= 0)
		return ret;
	if (a.npos > 0)
		return wm_usage_error("history: unexpected argument '%s'", a.pos[0]);
	if ((ret = wm_open(wm)) || (a.target && (ret = wm_target_id(wm, a.target, &tid))))
		return ret;
	ret = history_query(wm, &names, &sql, &raw, &nraw);
	if (!ret)
		ret = wm_fetch(wm, &t, sql,
			       (struct db_value[]){ WM_TEXT(a.target),
						    a.cycle ? WM_INT(a.cycle) : WM_NULLV,
						    WM_TEXT(a.since[0] ? a.since : NULL) },
			       3);
	if (ret == 0 && t.nrows == 0 && a.format == WM_TABLE)
		ret = say_empty(wm, "no iterations match");
	else if (ret == 0 && a.format == WM_TABLE)
		ret = wm_print(stdout, a.format, &t, history_table, ARRAY_SIZE(history_table));
	else if (ret == 0)
		ret = wm_print(stdout, a.format, &t, raw, nraw);
	free(sql);
	free(raw);
	wm_table_free(&names);
	wm_table_free(&t);
	return ret;
}

/* ---- alerts ------------------------------------------------------------- */

static const char alerts_sql[] =
	"SELECT e.id, e.at, t.name AS target, e.severity, e.kind, c.number AS cycle,"
	" i.number AS iteration, e.iteration_id, e.value, e.baseline, e.message,"
	" e.message_id"
	" FROM events e"
	" LEFT JOIN targets t ON t.id = e.target_id"
	" LEFT JOIN cycles c ON c.id = e.cycle_id"
	" LEFT JOIN iterations i ON i.id = e.iteration_id"
	" WHERE e.severity IN " ALERT_SEVERITIES
	" AND (?1 IS NULL OR t.name = ?1) AND (?2 IS NULL OR e.at >= ?2)"
	" ORDER BY e.at, e.id";

static const struct wm_col alerts_raw[] = {
	{ "id", "", K_INT, 0 },        { "at", "", K_TEXT, 0 },
	{ "target", "", K_TEXT, 0 },   { "severity", "", K_TEXT, 0 },
	{ "kind", "", K_TEXT, 0 },     { "cycle", "", K_INT, 0 },
	{ "iteration", "", K_INT, 0 }, { "iteration_id", "", K_INT, 0 },
	{ "value", "", K_MIBPS, 0 },   { "baseline", "", K_MIBPS, 0 },
	{ "message", "", K_TEXT, 0 },  { "message_id", "", K_TEXT, 0 },
};

static const struct wm_col alerts_table[] = {
	{ "at", "TIME (UTC)", K_TIME, 0 },     { "target", "TARGET", K_TEXT, 0 },
	{ "severity", "SEVERITY", K_TEXT, 0 }, { "kind", "KIND", K_TEXT, 0 },
	{ "cycle", "CYCLE", K_INT, 0 },        { "iteration", "IT", K_INT, 0 },
	{ "iteration_id", "ID", K_INT, 0 },    { "message", "MESSAGE", K_TEXT, 0 },
};

int wm_cmd_alerts(struct wm *wm, int argc, char **argv)
{
	struct wm_table t = { 0 };
	struct wm_args a;
	int64_t tid;
	int ret = wm_parse_args(wm, argc, argv, "tsf", &a);

	if (ret >= 0)
		return ret;
	if (a.npos > 0)
		return wm_usage_error("alerts: unexpected argument '%s'", a.pos[0]);
	if ((ret = wm_open(wm)) || (a.target && (ret = wm_target_id(wm, a.target, &tid))))
		return ret;
	ret = wm_fetch(
		wm, &t, alerts_sql,
		(struct db_value[]){ WM_TEXT(a.target), WM_TEXT(a.since[0] ? a.since : NULL) }, 2);
	if (ret == 0 && t.nrows == 0 && a.format == WM_TABLE)
		ret = say_empty(wm, a.since[0] ? "no alerts in that time" : "no alerts");
	else if (ret == 0)
		ret = wm_print(stdout, a.format, &t,
			       a.format == WM_TABLE ? alerts_table : alerts_raw,
			       a.format == WM_TABLE ? (int)ARRAY_SIZE(alerts_table)
						    : (int)ARRAY_SIZE(alerts_raw));
	wm_table_free(&t);
	return ret;
}

/* ---- show --------------------------------------------------------------- */

static const char show_sql[] =
	"SELECT i.*, t.name AS target, t.device, t.kind AS device_kind,"
	" c.number AS cycle, b.baseline_mibps, b.baseline_cycle,"
	" (SELECT max(size_index) + 1 FROM iterations WHERE target_id = i.target_id)"
	"  AS nsizes"
	" FROM iterations i"
	" JOIN cycles c ON c.id = i.cycle_id"
	" JOIN targets t ON t.id = i.target_id" WM_SQL_BASELINE_JOIN " WHERE i.id = ?";

/* Columns show prints in its own words; others go under "more". */
/* clang-format off */
static const char *const shown_cols[] = {
	"id",           "cycle_id",     "run_id",         "target_id",
	"number",       "size_index",   "size_bytes",     "region_offset",
	"workload",     "block_size",   "queue_depth",    "compressibility",
	"amount_bytes", "started_at",   "ended_at",       "bytes",
	"ops",          "seconds",      "mibps_avg",      "mibps_min",
	"mibps_max",    "mibps_stddev", "iops_avg",       "lat_mean_us",
	"lat_p50_us",   "lat_p99_us",   "lat_p999_us",    "lat_max_us",
	"fill_mibps",   "fill_seconds", "fill_bytes",     "errors",
	"status",       "error",        "target",         "device",
	"device_kind",  "cycle",        "baseline_mibps", "baseline_cycle",
	"nsizes",       "host_stall_seconds", "mean_depth",
};
/* clang-format on */

/* v with the given decimals, or "-" for NULL; eight results may be alive
 * at once (one printf). */
static const char *fig(double v, int decimals)
{
	static char bufs[8][32];
	static int n;
	char *b = bufs[n++ % 8];

	if (isnan(v))
		return "-";
	snprintf(b, 32, "%.*f", decimals, v);
	return b;
}

static const char *bytes_of(double v)
{
	static char bufs[4][32];
	static int n;

	return isnan(v) ? "-" : wm_fmt_bytes(v, bufs[n++ % 4], 32);
}

/* A rate or latency of the row: none for an interrupted one (NULL since
 * schema 8; files the daemon has not opened since may still hold 0). */
static double figure(const struct wm_table *t, const char *col)
{
	const char *st = wm_str(t, 0, "status");

	return st && !strcmp(st, "interrupted") ? NAN : wm_num(t, 0, col);
}

static void show_head(const struct wm_table *t)
{
	char a[32], b[32];
	const char *err = wm_str(t, 0, "error");
	double base = wm_num(t, 0, "baseline_mibps");

	printf("iteration %lld: target %s, cycle %lld, iteration %lld (size %lld of %lld)\n",
	       (long long)wm_int(t, 0, "id", 0), wm_str(t, 0, "target"),
	       (long long)wm_int(t, 0, "cycle", 0), (long long)wm_int(t, 0, "number", 0),
	       (long long)wm_int(t, 0, "size_index", 0) + 1, (long long)wm_int(t, 0, "nsizes", 0));
	printf("  status      %s%s%s\n", wm_str(t, 0, "status"), err ? ": " : "", err ? err : "");
	printf("  time        %s UTC to %s, measured %s s\n",
	       wm_fmt_time(wm_str(t, 0, "started_at"), a, sizeof(a)),
	       wm_fmt_time(wm_str(t, 0, "ended_at"), b, sizeof(b)),
	       fig(wm_num(t, 0, "seconds"), 1));
	printf("  device      %s (%s), region offset %s\n", wm_str(t, 0, "device"),
	       wm_str(t, 0, "device_kind"), bytes_of(wm_num(t, 0, "region_offset")));
	printf("  workload    %s, block %s, queue depth %lld (kept %s), compressibility %lld%%\n",
	       wm_str(t, 0, "workload"), bytes_of(wm_num(t, 0, "block_size")),
	       (long long)wm_int(t, 0, "queue_depth", 0), fig(wm_num(t, 0, "mean_depth"), 1),
	       (long long)wm_int(t, 0, "compressibility", 0));
	printf("  size        %s; planned %s, moved %s in %s I/Os, %s errors\n",
	       bytes_of(wm_num(t, 0, "size_bytes")), bytes_of(wm_num(t, 0, "amount_bytes")),
	       bytes_of(wm_num(t, 0, "bytes")), fig(wm_num(t, 0, "ops"), 0),
	       fig(wm_num(t, 0, "errors"), 0));
	printf("  MiB/s       avg %s, min %s, max %s, stddev %s; %s IOPS\n",
	       fig(figure(t, "mibps_avg"), 1), fig(figure(t, "mibps_min"), 1),
	       fig(figure(t, "mibps_max"), 1), fig(figure(t, "mibps_stddev"), 1),
	       fig(figure(t, "iops_avg"), 0));
	printf("  latency µs  mean %s, p50 %s, p99 %s, p99.9 %s, max %s\n",
	       fig(figure(t, "lat_mean_us"), 0), fig(figure(t, "lat_p50_us"), 0),
	       fig(figure(t, "lat_p99_us"), 0), fig(figure(t, "lat_p999_us"), 0),
	       fig(figure(t, "lat_max_us"), 0));
	if (!isnan(wm_num(t, 0, "host_stall_seconds")))
		printf("  host stall  %s s: wearmond did not run (stopped, a paused VM or a "
		       "suspended host); left out of the rates, min and max\n",
		       fig(wm_num(t, 0, "host_stall_seconds"), 1));
	if (!isnan(wm_num(t, 0, "fill_bytes")))
		printf("  fill        %s MiB/s, %s in %s s\n", fig(wm_num(t, 0, "fill_mibps"), 1),
		       bytes_of(wm_num(t, 0, "fill_bytes")), fig(wm_num(t, 0, "fill_seconds"), 1));
	else
		printf("  fill        none\n");
	if (!isnan(base))
		printf("  baseline    %.1f MiB/s (cycle %lld, same size and workload): %s%%\n",
		       base, (long long)wm_int(t, 0, "baseline_cycle", 0),
		       fig(100 * figure(t, "mibps_avg") / base, 0));
	else
		printf("  baseline    none (no finished measurement of this size yet)\n");
}

/* A one-line trace of the samples: ▁▂▃▄▅▆▇█ scaled to the maximum, one
 * character per sample or per bucket of samples when there are many. */
static void sparkline(const struct wm_table *s, const char *phase, double max)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	enum { WIDTH = 64 };
	double sum[WIDTH] = { 0 };
	int cnt[WIDTH] = { 0 }, n = 0, width, k = 0;

	for (int r = 0; r < s->nrows; r++)
		n += !strcmp(wm_str(s, r, "phase"), phase);
	if (n == 0 || !(max > 0))
		return;
	width = n < WIDTH ? n : WIDTH;
	for (int r = 0; r < s->nrows; r++) {
		double v = wm_num(s, r, "mibps");

		if (strcmp(wm_str(s, r, "phase"), phase) != 0)
			continue;
		sum[(long long)k * width / n] += isnan(v) ? 0 : v;
		cnt[(long long)k * width / n]++;
		k++;
	}
	printf("              ");
	for (int b = 0; b < width; b++)
		fputs(bars[(int)fmin(7, fmax(0, floor(sum[b] / cnt[b] / max * 8)))], stdout);
	putchar('\n');
}

static int show_samples(struct wm *wm, int64_t id)
{
	struct wm_table g = { 0 }, s = { 0 };
	int ret = wm_fetch(wm, &g,
			   "SELECT phase, count(*) AS n, max(t_ms) AS t_ms,"
			   " min(mibps) AS lo, avg(mibps) AS mean, max(mibps) AS hi,"
			   " avg(iops) AS iops, max(lat_p99_us) AS p99"
			   " FROM samples WHERE iteration_id = ? GROUP BY phase"
			   " ORDER BY phase = 'measure'",
			   (struct db_value[]){ WM_INT(id) }, 1);

	if (!ret)
		ret = wm_fetch(wm, &s,
			       "SELECT phase, t_ms, mibps FROM samples"
			       " WHERE iteration_id = ? ORDER BY phase = 'measure', t_ms",
			       (struct db_value[]){ WM_INT(id) }, 1);
	if (ret)
		goto out;
	printf("samples\n");
	if (g.nrows == 0)
		printf("  none (they are stored when the iteration ends)\n");
	for (int r = 0; r < g.nrows; r++) {
		printf("  %-10s  %lld over %.1f s: MiB/s min %s, avg %s, max %s;"
		       " %s IOPS; worst p99 %s µs\n",
		       wm_str(&g, r, "phase"), (long long)wm_int(&g, r, "n", 0),
		       wm_num(&g, r, "t_ms") / 1000, fig(wm_num(&g, r, "lo"), 1),
		       fig(wm_num(&g, r, "mean"), 1), fig(wm_num(&g, r, "hi"), 1),
		       fig(wm_num(&g, r, "iops"), 0), fig(wm_num(&g, r, "p99"), 0));
		sparkline(&s, wm_str(&g, r, "phase"), wm_num(&g, r, "hi"));
	}
out:
	wm_table_free(&g);
	wm_table_free(&s);
	return ret;
}

/* Prints every non-NULL cell of row r except ids, as "name value". */
static void print_cells(const struct wm_table *t, int r, const char *const *skip, size_t nskip)
{
	char buf[64];

	for (int c = 0; c < t->ncols; c++) { /* text whole: health data is JSON */
		const struct wm_cell *v = &t->cells[(size_t)r * (size_t)t->ncols + (size_t)c];
		size_t k = 0;

		while (k < nskip && strcmp(skip[k], t->names[c]) != 0)
			k++;
		if (k < nskip || v->type == DB_NULL)
			continue;
		if (v->type == DB_TEXT) {
			printf("  %-22s %s\n", t->names[c], v->s);
			continue;
		}
		if (v->type == DB_INT)
			snprintf(buf, sizeof(buf), "%lld", (long long)v->i);
		else
			snprintf(buf, sizeof(buf), "%.6g", v->r);
		printf("  %-22s %s\n", t->names[c], buf);
	}
}

/* The health table arrives with a later schema; print whatever it holds
 * for this iteration (or its cycle) when it exists. */
static int show_health(struct wm *wm, int64_t id, int64_t cycle_id)
{
	static const char *const ids[] = { "id", "target_id", "run_id", "cycle_id",
					   "iteration_id" };
	struct wm_table cols = { 0 }, h = { 0 };
	int ret = wm_fetch(wm, &cols,
			   "SELECT (SELECT count(*) FROM pragma_table_info('health')"
			   " WHERE name = 'iteration_id') AS by_it,"
			   " (SELECT count(*) FROM pragma_table_info('health')"
			   " WHERE name = 'cycle_id') AS by_cycle",
			   NULL, 0);

	if (ret)
		return ret;
	printf("health\n");
	if (wm_int(&cols, 0, "by_it", 0))
		ret = wm_fetch(wm, &h, "SELECT * FROM health WHERE iteration_id = ?",
			       (struct db_value[]){ WM_INT(id) }, 1);
	if (!ret && h.nrows == 0 && wm_int(&cols, 0, "by_cycle", 0))
		ret = wm_fetch(wm, &h, "SELECT * FROM health WHERE cycle_id = ? ORDER BY id",
			       (struct db_value[]){ WM_INT(cycle_id) }, 1);
	if (!ret && h.nrows == 0)
		printf("  no snapshot recorded\n");
	for (int r = 0; !ret && r < h.nrows; r++)
		print_cells(&h, r, ids, ARRAY_SIZE(ids));
	wm_table_free(&cols);
	wm_table_free(&h);
	return ret;
}

static int show_events(struct wm *wm, int64_t id, int64_t cycle_id)
{
	struct wm_table e = { 0 };
	char at[32];
	int ret = wm_fetch(wm, &e,
			   "SELECT at, severity, kind, message,"
			   " iteration_id IS NULL AS of_cycle FROM events"
			   " WHERE iteration_id = ?1 OR (cycle_id = ?2 AND iteration_id IS NULL)"
			   " ORDER BY at, id",
			   (struct db_value[]){ WM_INT(id), WM_INT(cycle_id) }, 2);

	if (ret)
		return ret;
	printf("events\n");
	if (e.nrows == 0)
		printf("  none\n");
	for (int r = 0; r < e.nrows; r++)
		printf("  %s %s %s%s: %s\n", wm_fmt_time(wm_str(&e, r, "at"), at, sizeof(at)),
		       wm_str(&e, r, "severity"), wm_str(&e, r, "kind"),
		       wm_int(&e, r, "of_cycle", 0) ? " (cycle)" : "", wm_str(&e, r, "message"));
	wm_table_free(&e);
	return 0;
}

/* The health rows of the iteration, else of its cycle (later schemas). */
static int health_rows(struct wm *wm, int64_t id, int64_t cycle_id, struct wm_table *h)
{
	int by_it = wm_has_column(wm, "health", "iteration_id");
	int by_cycle = wm_has_column(wm, "health", "cycle_id");
	int ret = by_it < 0 || by_cycle < 0 ? WM_EXIT_ERROR : 0;

	if (!ret && by_it)
		ret = wm_fetch(wm, h, "SELECT * FROM health WHERE iteration_id = ?",
			       (struct db_value[]){ WM_INT(id) }, 1);
	if (!ret && h->nrows == 0 && by_cycle)
		ret = wm_fetch(wm, h, "SELECT * FROM health WHERE cycle_id = ?",
			       (struct db_value[]){ WM_INT(cycle_id) }, 1);
	return ret;
}

/* show --format json: one object with the iteration (every column), its
 * samples, the health snapshot and the events, all whole. */
static int show_json(struct wm *wm, const struct wm_table *t, int64_t id)
{
	struct wm_table s = { 0 }, h = { 0 }, e = { 0 };
	int64_t cycle_id = wm_int(t, 0, "cycle_id", 0);
	int ret = wm_fetch(wm, &s,
			   "SELECT * FROM samples WHERE iteration_id = ?"
			   " ORDER BY phase = 'measure', t_ms",
			   (struct db_value[]){ WM_INT(id) }, 1);

	if (!ret)
		ret = health_rows(wm, id, cycle_id, &h);
	if (!ret)
		ret = wm_fetch(wm, &e,
			       "SELECT * FROM events WHERE iteration_id = ?1"
			       " OR (cycle_id = ?2 AND iteration_id IS NULL) ORDER BY at, id",
			       (struct db_value[]){ WM_INT(id), WM_INT(cycle_id) }, 2);
	if (!ret) {
		fputs("{\"iteration\": ", stdout);
		wm_json_row(stdout, t, 0);
		fputs(",\n\"samples\": ", stdout);
		wm_json_rows(stdout, &s);
		fputs(",\n\"health\": ", stdout);
		wm_json_rows(stdout, &h);
		fputs(",\n\"events\": ", stdout);
		wm_json_rows(stdout, &e);
		fputs("}\n", stdout);
	}
	wm_table_free(&s);
	wm_table_free(&h);
	wm_table_free(&e);
	return ret;
}

int wm_cmd_show(struct wm *wm, int argc, char **argv)
{
	struct wm_table t = { 0 };
	struct wm_args a;
	int64_t id;
	int ret = wm_parse_args(wm, argc, argv, "f", &a);

	if (ret >= 0)
		return ret;
	if (a.format == WM_CSV)
		return wm_usage_error("show: --format is table or json");
	if (a.npos != 1)
		return wm_usage_error("show: wants one ITERATION (the ID column of "
				      "'wearmon history')");
	if (wm_parse_id(a.pos[0], &id))
		return wm_usage_error("show: ITERATION is an iteration ID (a number >= 1), "
				      "not '%s'",
				      a.pos[0]);
	if ((ret = wm_open(wm)) ||
	    (ret = wm_fetch(wm, &t, show_sql, (struct db_value[]){ WM_INT(id) }, 1)))
		return ret;
	if (t.nrows == 0) {
		int any = wm_has_iterations(wm);

		wm_err("no iteration with ID %lld in %s%s", (long long)id, wm->db_path,
		       any == 0 ? " (" WM_NO_ITERATIONS ")" : "");
		wm_table_free(&t);
		return WM_EXIT_ERROR;
	}
	if (a.format == WM_JSON) {
		ret = show_json(wm, &t, id);
		wm_table_free(&t);
		return ret;
	}
	show_head(&t);
	ret = show_samples(wm, id);
	if (!ret)
		ret = show_health(wm, id, wm_int(&t, 0, "cycle_id", 0));
	if (!ret)
		ret = show_events(wm, id, wm_int(&t, 0, "cycle_id", 0));
	if (!ret) {
		int more = 0;

		for (int c = 0; c < t.ncols; c++) {
			size_t k = 0;

			while (k < ARRAY_SIZE(shown_cols) && strcmp(shown_cols[k], t.names[c]))
				k++;
			more += k == ARRAY_SIZE(shown_cols);
		}
		if (more) {
			printf("more\n");
			print_cells(&t, 0, shown_cols, ARRAY_SIZE(shown_cols));
		}
	}
	wm_table_free(&t);
	return ret;
}
