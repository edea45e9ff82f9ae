/* wearmon_report_data: the later sections of "wearmon report": SNIA
 * steady state (verdicts, both criteria, a chart per phase), alerts and
 * events, the drive's evidence (why it slowed), and the data tables holding every figure the charts show. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "wearmon.h"
#include "db/query/query_report.h"
#include "wearmon_report.h"

#define MAX_STEADY_CHARTS 6 /* steady-state phases drawn (all tabulated) */
#define MAX_SAMPLE_ROWS 400 /* sample rows per iteration in the data table */
#define MAX_EVENTS 300      /* events listed */
#define MAX_DEVICE_ROWS 500 /* rows of the drive's figures listed */
#define WINDOW 5            /* SNIA PTS measurement window, rounds */

/* ---- steady state ------------------------------------------------------- */

/* Least-squares slope of y over x (n points). */
static double ls_slope(const double *x, const double *y, int n)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0;

	for (int i = 0; i < n; i++) {
		mx += x[i] / n;
		my += y[i] / n;
	}
	for (int i = 0; i < n; i++) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
	}
	return sxx > 0 ? sxy / sxx : 0;
}

#define MAX_ROUNDS 1000 /* max_rounds' upper limit */

/* The rounds of one phase and its window's fit, for the chart. */
struct steady {
	double x[MAX_ROUNDS], y[MAX_ROUNDS]; /* round index, its MiB/s */
	int n, w0, end;                      /* rounds; window [w0, end) */
	double mean;                         /* of the window */
	double fx[2], fy[2];                 /* least-squares line at its ends */
	double bx[2], lo[2], hi[2];          /* mean ± 10% over the window */
};

/* The rounds of the phase whose verdict row is id: the done rows of its
 * cycle, size and workload since the previous verdict or the last row
 * that did not finish (a resumed phase starts its rounds again). Returns 0 or
 * WM_EXIT_ERROR. */
static int steady_rounds(struct rep *r, int64_t id, struct steady *st)
{
	struct wm_table t = { 0 };
	int ret = wm_fetch_named(r->wm, &t, &qr_queries[QR_STEADY_ROUNDS],
				 (struct db_value[]){ WM_INT(id) }, 1);

	for (st->n = 0; !ret && st->n < t.nrows && st->n < MAX_ROUNDS; st->n++) {
		st->x[st->n] = wm_num(&t, st->n, "round_index");
		st->y[st->n] = wm_num(&t, st->n, "mibps_avg");
	}
	wm_table_free(&t);
	return ret;
}

/* The window ends at the round steady state held, else at the last; its
 * mean, least-squares line and ±10% band. Returns 0, or -1 when the
 * window has fewer than two rounds. */
static int steady_fit(struct steady *st, int64_t steady_round)
{
	double mx = 0, slope;
	int k;

	st->end = steady_round > 0 && steady_round < st->n ? (int)steady_round : st->n;
	st->w0 = st->end > WINDOW ? st->end - WINDOW : 0;
	k = st->end - st->w0;
	if (k < 2)
		return -1;
	st->mean = 0;
	for (int i = st->w0; i < st->end; i++) {
		st->mean += st->y[i] / k;
		mx += st->x[i] / k;
	}
	slope = ls_slope(st->x + st->w0, st->y + st->w0, k);
	st->fx[0] = st->bx[0] = st->x[st->w0];
	st->fx[1] = st->bx[1] = st->x[st->end - 1];
	for (int e = 0; e < 2; e++) {
		st->fy[e] = st->mean + slope * (st->fx[e] - mx);
		st->lo[e] = st->mean * 0.9;
		st->hi[e] = st->mean * 1.1;
	}
	return 0;
}

/* A chart of one phase's rounds with its window. Returns 0 or
 * WM_EXIT_ERROR. */
static int steady_chart(struct rep *r, const struct wm_table *v, int row)
{
	static struct steady st; /* large; the report is single-threaded */
	char title[160], sub[200], mlabel[80], sz[32];
	struct chart_series s[2] = {
		{ .label = "MiB/s of each round", .x = st.x, .y = st.y, .lines = 1 },
		{ .label = "least-squares line over the window",
		  .x = st.fx,
		  .y = st.fy,
		  .n = 2,
		  .lines = 1,
		  .style = 2,
		  .color = "#D55E00" },
	};
	struct chart_mark mk = { .label = mlabel, .color = "#555" };
	struct chart c = { .title = title,
			   .subtitle = sub,
			   .xlabel = "round",
			   .ylabel = "MiB/s",
			   .series = s,
			   .nseries = 2,
			   .marks = &mk,
			   .nmarks = 1,
			   .x_integer = 1,
			   .fragment = 1,
			   .band = { st.bx, st.lo, st.hi, 2, "#009E73" },
			   .band_legend = "mean ± 10% (range limit 20%)" };
	int ret = steady_rounds(r, wm_int(v, row, "id", 0), &st);

	if (ret || steady_fit(&st, wm_int(v, row, "steady_round", 0)))
		return ret;
	s[0].n = (size_t)st.n;
	mk.at = st.mean;
	snprintf(title, sizeof(title), "Steady state: cycle %lld, size %s, %s",
		 (long long)wm_int(v, row, "cycle", 0),
		 rep_bytes(wm_num(v, row, "size_bytes"), sz, sizeof(sz)),
		 wm_str(v, row, "workload"));
	snprintf(sub, sizeof(sub),
		 "window: rounds %.0f-%.0f; range %.1f%%, excursion %.1f%% of"
		 " the mean; steady state %s",
		 st.x[st.w0], st.x[st.end - 1], wm_num(v, row, "steady_range_pct"),
		 wm_num(v, row, "steady_excursion_pct"),
		 wm_int(v, row, "steady_reached", 0) ? "reached" : "NOT reached");
	snprintf(mlabel, sizeof(mlabel), "window mean %.1f MiB/s", st.mean);
	fputs("<figure>\n", r->f);
	ret = chart_svg(r->f, &c) ? WM_EXIT_ERROR : 0;
	fputs("<figcaption>SNIA PTS steady state: over the window, (a) max − min ≤ 20%"
	      " of the mean (the band spans ±10%) and (b) the least-squares line"
	      " changes by ≤ 10% of the mean.</figcaption>\n</figure>\n",
	      r->f);
	return ret;
}

/* "12.3% met" or "31.0% not met" against a limit in percent. */
static void criterion(struct rep *r, double v, double limit)
{
	if (isnan(v))
		fputs("<td class=\"l\">–</td>", r->f);
	else
		fprintf(r->f, "<td class=\"l%s\">%.1f%% %s</td>", v <= limit ? "" : " bad", v,
			v <= limit ? "met" : "not met");
}

int rep_write_steady(struct rep *r)
{
	struct wm_table v = { 0 };
	char b[48];
	int ret;

	rep_section(r, "steady", "Steady state");
	ret = wm_fetch_named(r->wm, &v, &qr_queries[QR_STEADY], REP_SCOPE(r));
	if (ret || v.nrows == 0) {
		if (!ret)
			rep_para(r, "No phase of this campaign was measured in rounds"
				    " (steady_state = snia), so there is no convergence to show.");
		goto out;
	}
	rep_thead(r, NULL,
		  "cycle|size|<workload|rounds|<verdict|window|mean MiB/s|"
		  "<(a) range ≤ 20% of mean|<(b) excursion ≤ 10% of mean");
	for (int i = 0; i < v.nrows; i++) {
		int64_t sr = wm_int(&v, i, "steady_round", 0);
		double rg = wm_num(&v, i, "steady_range_pct"),
		       ex = wm_num(&v, i, "steady_excursion_pct");

		fprintf(r->f, "<tr><td>%lld</td>", (long long)wm_int(&v, i, "cycle", 0));
		rep_td_bytes(r, wm_num(&v, i, "size_bytes"));
		rep_td_text(r, &v, i, "workload");
		rep_td_num(r, wm_num(&v, i, "round_index"), 0);
		fprintf(r->f, "<td class=\"l%s\">%s</td>",
			wm_int(&v, i, "steady_reached", 0) ? "" : " bad",
			wm_int(&v, i, "steady_reached", 0) ? "reached" : "NOT reached");
		if (sr)
			snprintf(b, sizeof(b), "%lld–%lld", (long long)(sr - WINDOW + 1),
				 (long long)sr);
		else
			snprintf(b, sizeof(b), "last %d", WINDOW);
		fprintf(r->f, "<td>%s</td>", b);
		rep_td_num(r, wm_num(&v, i, "steady_mean_mibps"), 1);
		criterion(r, rg, 20);
		criterion(r, ex, 10);
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
	for (int i = 0; !ret && i < v.nrows && i < MAX_STEADY_CHARTS; i++)
		ret = steady_chart(r, &v, i);
	if (v.nrows > MAX_STEADY_CHARTS)
		fprintf(r->f,
			"<p class=\"note\">The first %d phases are drawn; the table lists all"
			" %d.</p>\n",
			MAX_STEADY_CHARTS, v.nrows);
out:
	fputs("</section>\n", r->f);
	wm_table_free(&v);
	return ret;
}

/* ---- events and data ---------------------------------------------------- */

int rep_write_events(struct rep *r)
{
	struct wm_table t = { 0 };
	int ret = wm_fetch_named(r->wm, &t, &qr_queries[QR_EVENTS], REP_SCOPE(r));

	if (ret)
		return ret;
	rep_section(r, "events", "Alerts and events");
	if (t.nrows == 0)
		rep_para(r, "No event was recorded in this campaign.");
	else
		rep_thead(r, NULL, "<time (UTC)|<severity|<kind|cycle|<message");
	for (int i = 0; i < t.nrows && i < MAX_EVENTS; i++) {
		const char *sev = wm_str(&t, i, "severity");
		int bad = sev && (!strcmp(sev, "crit") || !strcmp(sev, "err") ||
				  !strcmp(sev, "alert") || !strcmp(sev, "emerg"));

		fputs("<tr>", r->f);
		rep_td_time(r, wm_str(&t, i, "at"));
		fprintf(r->f, "<td class=\"l%s\">", bad ? " bad" : "");
		rep_esc(r, sev);
		fputs("</td>", r->f);
		rep_td_text(r, &t, i, "kind");
		rep_td_num(r, wm_num(&t, i, "cycle"), 0);
		rep_td_text(r, &t, i, "message");
		fputs("</tr>\n", r->f);
	}
	if (t.nrows)
		rep_tend(r);
	if (t.nrows > MAX_EVENTS)
		fprintf(r->f,
			"<p class=\"note\">%d more events are in the database"
			" (wearmon alerts).</p>\n",
			t.nrows - MAX_EVENTS);
	fputs("</section>\n", r->f);
	wm_table_free(&t);
	return 0;
}

/* ---- why it slowed ------------------------------------------------------ */

/* Every crash and collapse alert with the cause and evidence its event
 * stored (daemon/alert.c; the rule in wearmond(8), "Alerts"). */
static void causes_table(struct rep *r, const struct wm_table *t)
{
	rep_thead(r,
		  "Throughput crash and collapse alerts: the likely cause and the evidence the"
		  " alert stored, in the dip against the window before it (– where the drive"
		  " reports no such figure)",
		  "<time (UTC)|<alert|cycle|iteration|<cause|device WA|device WA before|"
		  "throttled s|peak °C|host stalls s");
	for (int i = 0; i < t->nrows; i++) {
		fputs("<tr>", r->f);
		rep_td_time(r, wm_str(t, i, "at"));
		rep_td_text(r, t, i, "kind");
		rep_td_num(r, wm_num(t, i, "cycle"), 0);
		rep_td_num(r, wm_num(t, i, "iteration"), 0);
		rep_td_text(r, t, i, "cause");
		rep_td_num(r, wm_num(t, i, "device_wa"), 3);
		rep_td_num(r, wm_num(t, i, "baseline_device_wa"), 3);
		rep_td_num(r, wm_num(t, i, "throttle_seconds"), 3);
		rep_td_num(r, wm_num(t, i, "peak_temp_c"), 0);
		rep_td_num(r, wm_num(t, i, "host_stall_seconds"), 1);
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
}

/* The drive's own figures of every row that has any, next to its rate. */
static void device_table(struct rep *r, const struct wm_table *t)
{
	rep_thead(r,
		  "Device counters over each iteration, as the drive counted them"
		  " (iterations.device_*):"
		  " – where the drive does not report a figure",
		  "cycle|iteration|size|<workload|avg MiB/s|host writes|media writes|device WA|"
		  "peak °C|throttled s|media errors|spare %");
	for (int i = 0; i < t->nrows && i < MAX_DEVICE_ROWS; i++) {
		char b[48];

		fputs("<tr>", r->f);
		rep_td_num(r, wm_num(t, i, "cycle"), 0);
		rep_td_num(r, wm_num(t, i, "iteration"), 0);
		fprintf(r->f, "<td>%s</td>", rep_bytes(wm_num(t, i, "size_bytes"), b, sizeof(b)));
		rep_td_text(r, t, i, "workload");
		rep_td_num(r, wm_num(t, i, "mibps_avg"), 1);
		rep_td_bytes(r, wm_num(t, i, "device_host_bytes"));
		rep_td_bytes(r, wm_num(t, i, "device_media_bytes"));
		rep_td_num(r, wm_num(t, i, "device_wa"), 3);
		rep_td_num(r, wm_num(t, i, "device_peak_temp_c"), 0);
		rep_td_num(r, wm_num(t, i, "device_throttle_seconds"), 0);
		rep_td_num(r, wm_num(t, i, "device_media_errors"), 0);
		rep_td_num(r, wm_num(t, i, "device_spare_pct"), 0);
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
	if (t->nrows > MAX_DEVICE_ROWS)
		fprintf(r->f,
			"<p class=\"note\">%d more rows are in the database"
			" (wearmon history --format csv).</p>\n",
			t->nrows - MAX_DEVICE_ROWS);
}

int rep_load_evidence(struct rep *r)
{
	int ret = wm_fetch_named(r->wm, &r->causes, &qr_queries[QR_CAUSES], REP_SCOPE(r));

	return ret ? ret : wm_fetch_named(r->wm, &r->device, &qr_queries[QR_DEVICE], REP_SCOPE(r));
}

int rep_has_evidence(const struct rep *r)
{
	return r->causes.nrows > 0 || r->device.nrows > 0;
}

int rep_write_evidence(struct rep *r)
{
	if (!rep_has_evidence(r))
		return 0;
	rep_section(r, "evidence", "Why it slowed: the drive's evidence");
	if (r->causes.nrows)
		causes_table(r, &r->causes);
	if (r->device.nrows)
		device_table(r, &r->device);
	fputs("</section>\n", r->f);
	return 0;
}

static int write_iteration_table(struct rep *r)
{
	char b[48];
	const char *u;

	rep_thead(r, "Every iteration (the figures of the sizes, wear and latency charts)",
		  "ID|cycle|it|size|<workload|QD|<status|MiB/s|min|max|baseline|ratio|fill MiB/s|"
		  "host written|p50 µs|p99 µs|p99.9 µs|p99.99 µs");
	for (int i = 0; i < r->it.nrows; i++) {
		fprintf(r->f, "<tr><td>%lld</td><td>%lld</td><td>%lld</td>",
			(long long)wm_int(&r->it, i, "id", 0),
			(long long)wm_int(&r->it, i, "cycle", 0),
			(long long)wm_int(&r->it, i, "iteration", 0));
		rep_td_bytes(r, wm_num(&r->it, i, "size_bytes"));
		snprintf(b, sizeof(b), "%s ", wm_str(&r->it, i, "workload"));
		wm_fmt_bytes(wm_num(&r->it, i, "block_size"), b + strlen(b), sizeof(b) - strlen(b));
		fputs("<td class=\"l\">", r->f);
		rep_esc(r, b);
		fputs("</td>", r->f);
		rep_td_num(r, wm_num(&r->it, i, "queue_depth"), 0);
		u = wm_str(&r->it, i, "status");
		fprintf(r->f, "<td class=\"l%s\">", strcmp(u, "done") ? " bad" : "");
		rep_esc(r, u);
		fputs("</td>", r->f);
		rep_td_num(r, wm_num(&r->it, i, "mibps_avg"), 1);
		rep_td_num(r, wm_num(&r->it, i, "mibps_min"), 1);
		rep_td_num(r, wm_num(&r->it, i, "mibps_max"), 1);
		rep_td_num(r, wm_num(&r->it, i, "baseline"), 1);
		fprintf(r->f, "<td>%s</td>", rep_pct(wm_num(&r->it, i, "ratio"), b, sizeof(b)));
		rep_td_num(r, wm_num(&r->it, i, "fill_mibps"), 1);
		rep_td_bytes(r, wm_num(&r->it, i, "written"));
		rep_td_num(r, wm_num(&r->it, i, "lat_p50_us"), 0);
		rep_td_num(r, wm_num(&r->it, i, "lat_p99_us"), 0);
		rep_td_num(r, wm_num(&r->it, i, "lat_p999_us"), 0);
		rep_td_num(r, wm_num(&r->it, i, "lat_p9999_us"), 0);
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
	return 0;
}

/* A sample's rate; a per-minute rollup's as its lowest / average / highest. */
static void td_rate(struct rep *r, const struct wm_table *t, int row)
{
	char lo[48], avg[48], hi[48];
	double min = wm_num(t, row, "mibps_min");

	if (isnan(min)) {
		rep_td_num(r, wm_num(t, row, "mibps"), 1);
		return;
	}
	fprintf(r->f, "<td>%s / %s / %s</td>", rep_num(min, 1, lo, sizeof(lo)),
		rep_num(wm_num(t, row, "mibps"), 1, avg, sizeof(avg)),
		rep_num(wm_num(t, row, "mibps_max"), 1, hi, sizeof(hi)));
}

static int write_samples_table(struct rep *r, int64_t id)
{
	struct wm_table t = { 0 };
	char cap[160];
	const char *point;
	int ret = wm_fetch_named(r->wm, &t, &qr_queries[QR_SAMPLES],
				 (struct db_value[]){ WM_INT(id) }, 1);

	if (ret || t.nrows == 0)
		goto out;
	point = wm_str(&t, 0, "point");
	snprintf(cap, sizeof(cap), "Samples of iteration %lld (a row: %s)", (long long)id,
		 point ? point : QC_POINT_SAMPLE);
	rep_thead(r, cap, "<phase|t in the phase (s)|MiB/s|IOPS|p50 µs|p99 µs|p99.9 µs|p99.99 µs");
	for (int i = 0; i < t.nrows && i < MAX_SAMPLE_ROWS; i++) {
		fputs("<tr>", r->f);
		rep_td_text(r, &t, i, "phase");
		rep_td_num(r, wm_num(&t, i, "t_ms") / 1000, 1);
		td_rate(r, &t, i);
		rep_td_num(r, wm_num(&t, i, "iops"), 0);
		rep_td_num(r, wm_num(&t, i, "lat_p50_us"), 0);
		rep_td_num(r, wm_num(&t, i, "lat_p99_us"), 0);
		rep_td_num(r, wm_num(&t, i, "lat_p999_us"), 0);
		rep_td_num(r, wm_num(&t, i, "lat_p9999_us"), 0);
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
	if (t.nrows > MAX_SAMPLE_ROWS)
		fprintf(r->f, "<p class=\"note\">%d more samples: wearmon show %lld.</p>\n",
			t.nrows - MAX_SAMPLE_ROWS, (long long)id);
out:
	wm_table_free(&t);
	return ret;
}

int rep_write_data(struct rep *r)
{
	int ret;

	fputs("<section id=\"data\" class=\"newpage\">\n<h2>Data</h2>\n", r->f);
	rep_para(r, "Every figure the charts above show, as numbers. The per-cycle figures are"
		    " in the table of results per cycle, the steady-state figures in theirs.");
	ret = write_iteration_table(r);
	if (!ret && r->first_it)
		ret = write_samples_table(r, r->first_it);
	if (!ret && r->worst_it && r->worst_it != r->first_it)
		ret = write_samples_table(r, r->worst_it);
	fputs("</section>\n", r->f);
	return ret;
}
