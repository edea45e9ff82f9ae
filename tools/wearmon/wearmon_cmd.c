/* wearmon_cmd: the listing subcommands of wearmon: history (one row per
 * iteration), alerts (events of severity notice and above) and show (all
 * about one iteration). The reads are common/db/query/'s (query_history.c,
 * query_show.c); history and alerts print rows as they come. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "wearmon.h"

/* ---- history ------------------------------------------------------------ */

/* csv and json carry every column of iterations (whatever the schema
 * version), led by names a person knows and followed by the baseline
 * (query_history_prepare names them). */
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

/* An empty result in table form: say why. Returns 0 or WM_EXIT_ERROR. */
static int say_empty(struct wm *wm, const char *what)
{
	int any = wm_has_iterations(wm);

	if (any < 0)
		return WM_EXIT_ERROR;
	printf("%s\n", any ? what : WM_NO_ITERATIONS);
	return 0;
}

/* A named read whose rows are printed as they come. */
struct stream {
	int (*run)(struct wm *wm, const void *ctx, const struct query_sink *s);
	const void *ctx;
	const char *empty; /* table: what no row means */
};

/* Prints the rows of st in fmt with cols: memory does not grow with them
 * (a table reads them twice: widths, then lines). Returns 0 or
 * WM_EXIT_ERROR. */
static int print_stream(struct wm *wm, const struct stream *st, enum wm_format fmt,
			const struct wm_col *cols, int ncols)
{
	struct wm_printer p;
	char err[WM_ERR_MAX] = "";
	struct query_sink sk = { wm_printer_row, &p, err, sizeof(err) };
	int ret;

	if (wm_printer_init(&p, stdout, fmt, cols, ncols)) {
		wm_err("out of memory");
		return WM_EXIT_ERROR;
	}
	ret = query_snapshot(wm->db, 1, err, sizeof(err)); /* both passes: the same rows */
	if (!ret)
		ret = st->run(wm, st->ctx, &sk);
	if (ret == 0 && fmt == WM_TABLE && p.rows == 0) {
		query_snapshot(wm->db, 0, NULL, 0);
		wm_printer_free(&p);
		return say_empty(wm, st->empty);
	}
	if (ret == 0 && fmt == WM_TABLE) {
		wm_printer_measured(&p);
		ret = st->run(wm, st->ctx, &sk);
	}
	query_snapshot(wm->db, 0, NULL, 0);
	wm_printer_end(&p);
	return wm_result(wm, ret, err);
}

struct history_ctx {
	struct query_history q;
	struct query_history_filter f;
};

static int run_history(struct wm *wm, const void *ctx, const struct query_sink *s)
{
	const struct history_ctx *h = ctx;

	return query_history_run(wm->db, &h->q, &h->f, s);
}

/* The csv/json columns: every column of the statement, raw. */
static struct wm_col *raw_cols(const struct query_history *q)
{
	struct wm_col *raw = calloc((size_t)q->nnames + 1, sizeof(*raw));

	for (int k = 0; raw && k < q->nnames; k++)
		raw[k] = (struct wm_col){ q->names[k], "", K_TEXT, 0 };
	return raw;
}

int wm_cmd_history(struct wm *wm, int argc, char **argv)
{
	struct history_ctx h = { 0 };
	struct stream st = { run_history, &h, "no iterations match" };
	struct wm_col *raw = NULL;
	struct wm_args a;
	char err[WM_ERR_MAX] = "";
	int64_t tid;
	int ret = wm_parse_args(wm, argc, argv, "tcsfS", &a);

	if (ret >= 0)
		return ret;
	if (a.npos > 0)
		return wm_usage_error("history: unexpected argument '%s'", a.pos[0]);
	if ((ret = wm_open(wm)) || (a.target && (ret = wm_target_id(wm, a.target, &tid))))
		return ret;
	h.f = (struct query_history_filter){ a.target, a.cycle, a.since, a.sort };
	ret = query_history_prepare(wm->db, &h.f, &h.q, err, sizeof(err));
	if (ret == -EINVAL) /* --sort names no column */
		return wm_usage_error("history: %s", err);
	if ((ret = wm_result(wm, ret, err)))
		return ret;
	if (a.format == WM_TABLE) {
		ret = print_stream(wm, &st, a.format, history_table, ARRAY_SIZE(history_table));
	} else if (!(raw = raw_cols(&h.q))) {
		wm_err("out of memory");
		ret = WM_EXIT_ERROR;
	} else {
		ret = print_stream(wm, &st, a.format, raw, h.q.nnames);
	}
	free(raw);
	query_history_free(&h.q);
	return ret;
}

/* ---- alerts ------------------------------------------------------------- */

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

struct alerts_ctx {
	const char *target, *since;
};

static int run_alerts(struct wm *wm, const void *ctx, const struct query_sink *s)
{
	const struct alerts_ctx *c = ctx;

	return query_alerts(wm->db, c->target, c->since, s);
}

int wm_cmd_alerts(struct wm *wm, int argc, char **argv)
{
	struct alerts_ctx c;
	struct stream st = { run_alerts, &c, NULL };
	struct wm_args a;
	int64_t tid;
	int ret = wm_parse_args(wm, argc, argv, "tsf", &a);

	if (ret >= 0)
		return ret;
	if (a.npos > 0)
		return wm_usage_error("alerts: unexpected argument '%s'", a.pos[0]);
	if ((ret = wm_open(wm)) || (a.target && (ret = wm_target_id(wm, a.target, &tid))))
		return ret;
	c = (struct alerts_ctx){ a.target, a.since[0] ? a.since : NULL };
	st.empty = a.since[0] ? "no alerts in that time" : "no alerts";
	if (a.format == WM_TABLE)
		return print_stream(wm, &st, a.format, alerts_table, ARRAY_SIZE(alerts_table));
	return print_stream(wm, &st, a.format, alerts_raw, ARRAY_SIZE(alerts_raw));
}

/* ---- show --------------------------------------------------------------- */

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
	"device_host_bytes", "device_media_bytes", "device_wa", "device_peak_temp_c",
	"device_throttle_seconds", "device_media_errors", "device_spare_pct",
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

/* What the drive itself counted over the iteration (schema 20): each
 * figure, or that the drive did not report it (NULL, never 0). */
static void show_drive(const struct wm_table *t)
{
	static const struct {
		const char *col, *label, *unit;
		int decimals; /* -1: bytes */
	} figs[] = {
		{ "device_host_bytes", "host writes", "", -1 },
		{ "device_media_bytes", "media writes", "", -1 },
		{ "device_wa", "write amp.", " (media / host bytes)", 3 },
		{ "device_peak_temp_c", "peak temp.", " °C", 0 },
		{ "device_throttle_seconds", "throttled", " s", 0 },
		{ "device_media_errors", "media errors", "", 0 },
		{ "device_spare_pct", "spare", " %", 0 },
	};

	printf("drive (its own counters over the iteration)\n");
	if (wm_col(t, "device_wa") < 0) {
		printf("  not recorded (a database before schema 20)\n");
		return;
	}
	for (size_t k = 0; k < ARRAY_SIZE(figs); k++) {
		double v = wm_num(t, 0, figs[k].col);

		if (isnan(v))
			printf("  %-12s  not reported by the drive\n", figs[k].label);
		else if (figs[k].decimals < 0)
			printf("  %-12s  %s\n", figs[k].label, bytes_of(v));
		else
			printf("  %-12s  %s%s\n", figs[k].label, fig(v, figs[k].decimals),
			       figs[k].unit);
	}
}

/* A figure of an alert's evidence, or "unknown" (JSON null). */
static const char *known(const struct wm_table *e, int r, const char *col, int decimals)
{
	double v = wm_num(e, r, col);

	return isnan(v) ? "unknown" : fig(v, decimals);
}

/* The cause each crash or collapse alert of the iteration named, with the
 * evidence stored in its event: the dip's figures against the window
 * before it (daemon/cause.c). */
static int show_evidence(struct wm *wm, int64_t id)
{
	struct wm_table e = { 0 };
	struct query_sink sk;
	char at[32], err[WM_ERR_MAX];
	int ret = wm_result(wm, query_show_evidence(wm->db, id, wm_rows(&sk, &e, err, sizeof(err))),
			    err);

	if (ret || e.nrows == 0)
		goto out;
	printf("why it slowed\n");
	for (int r = 0; r < e.nrows; r++)
		printf("  %s %s: cause %s; in the dip device WA %s against %s before it, throttled"
		       " %s s, peak %s °C, host stalls %s s\n",
		       wm_fmt_time(wm_str(&e, r, "at"), at, sizeof(at)), wm_str(&e, r, "kind"),
		       wm_str(&e, r, "cause") ? wm_str(&e, r, "cause") : "unknown",
		       known(&e, r, "device_wa", 3), known(&e, r, "baseline_device_wa", 3),
		       known(&e, r, "throttle_seconds", 3), known(&e, r, "peak_temp_c", 0),
		       known(&e, r, "host_stall_seconds", 1));
out:
	wm_table_free(&e);
	return ret;
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
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret = wm_result(
		wm, query_show_sample_phases(wm->db, id, wm_rows(&sk, &g, err, sizeof(err))), err);

	if (!ret)
		ret = wm_result(
			wm, query_show_sample_trace(wm->db, id, wm_rows(&sk, &s, err, sizeof(err))),
			err);
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
	struct wm_table h = { 0 };
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret = wm_result(
		wm, query_show_health(wm->db, id, cycle_id, wm_rows(&sk, &h, err, sizeof(err))),
		err);

	if (ret)
		return ret;
	printf("health\n");
	if (h.nrows == 0)
		printf("  no snapshot recorded\n");
	for (int r = 0; r < h.nrows; r++)
		print_cells(&h, r, ids, ARRAY_SIZE(ids));
	wm_table_free(&h);
	return 0;
}

static int show_events(struct wm *wm, int64_t id, int64_t cycle_id)
{
	struct wm_table e = { 0 };
	struct query_sink sk;
	char at[32], err[WM_ERR_MAX];
	int ret = wm_result(
		wm, query_show_events(wm->db, id, cycle_id, wm_rows(&sk, &e, err, sizeof(err))),
		err);

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

/* show --format json: one object with the iteration (every column), its
 * samples, the health snapshot, the events, all whole, and the evidence
 * of its crash and collapse alerts (query_show_evidence's columns). */
static int show_json(struct wm *wm, const struct wm_table *t, int64_t id)
{
	struct wm_table s = { 0 }, h = { 0 }, e = { 0 }, x = { 0 };
	int64_t cycle_id = wm_int(t, 0, "cycle_id", 0);
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret = wm_result(wm, query_show_samples(wm->db, id, wm_rows(&sk, &s, err, sizeof(err))),
			    err);

	if (!ret)
		ret = wm_result(
			wm,
			query_show_health(wm->db, id, cycle_id, wm_rows(&sk, &h, err, sizeof(err))),
			err);
	if (!ret)
		ret = wm_result(wm,
				query_show_events_all(wm->db, id, cycle_id,
						      wm_rows(&sk, &e, err, sizeof(err))),
				err);
	if (!ret)
		ret = wm_result(wm,
				query_show_evidence(wm->db, id, wm_rows(&sk, &x, err, sizeof(err))),
				err);
	if (!ret) {
		fputs("{\"iteration\": ", stdout);
		wm_json_row(stdout, t, 0);
		fputs(",\n\"samples\": ", stdout);
		wm_json_rows(stdout, &s);
		fputs(",\n\"health\": ", stdout);
		wm_json_rows(stdout, &h);
		fputs(",\n\"events\": ", stdout);
		wm_json_rows(stdout, &e);
		fputs(",\n\"evidence\": ", stdout);
		wm_json_rows(stdout, &x);
		fputs(",\n\"hir\": ", stdout);
		ret = wm_show_hir_json(wm, wm_int(t, 0, "target_id", 0), wm_int(t, 0, "cycle", 0));
		fputs(",\n\"endurance\": ", stdout);
		if (!ret)
			ret = wm_show_endurance(wm, t, 1);
		fputs("}\n", stdout);
	}
	wm_table_free(&x);
	wm_table_free(&s);
	wm_table_free(&h);
	wm_table_free(&e);
	return ret;
}

int wm_cmd_show(struct wm *wm, int argc, char **argv)
{
	struct wm_table t = { 0 };
	struct query_sink sk;
	char err[WM_ERR_MAX];
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
	if ((ret = wm_open(wm)))
		return ret;
	ret = wm_result(wm, query_show_iteration(wm->db, id, wm_rows(&sk, &t, err, sizeof(err))),
			err);
	if (ret)
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
	show_drive(&t);
	ret = show_evidence(wm, id);
	if (!ret)
		ret = wm_show_hir(wm, wm_int(&t, 0, "target_id", 0), wm_int(&t, 0, "cycle", 0));
	if (!ret)
		ret = show_samples(wm, id);
	if (!ret)
		ret = show_health(wm, id, wm_int(&t, 0, "cycle_id", 0));
	if (!ret)
		ret = show_events(wm, id, wm_int(&t, 0, "cycle_id", 0));
	if (!ret)
		ret = wm_show_endurance(wm, &t, 0);
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
