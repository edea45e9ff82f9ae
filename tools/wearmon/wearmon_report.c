/* wearmon_report: "wearmon report": one self-contained HTML file (inline
 * CSS and SVG, no scripts, no external URL) about one campaign of one
 * target, in the shape of a SNIA PTS report: summary, device under test,
 * test conditions, results per cycle, charts, steady state, alerts, and a
 * data table holding every figure the charts show. Everything read from
 * the database is HTML-escaped. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "wearmon.h"
#include "db/query/query_report.h"
#include "wearmon_report.h"

/* A chart of the plot module inline in a figure with a caption; a note
 * instead when there is nothing to draw. Returns 0 or WM_EXIT_ERROR. */
static int figure(struct rep *r, const char *kind, int64_t it, const char *caption)
{
	int ret;

	fputs("<figure>\n", r->f);
	ret = wm_plot_draw(r->wm, r->f, kind, r->tid, it, 1);
	if (ret == 1)
		fputs("<p class=\"note\">Nothing to draw: no finished iteration.</p>\n", r->f);
	fputs("<figcaption>", r->f);
	rep_esc(r, caption);
	fputs("</figcaption>\n</figure>\n", r->f);
	return ret == 1 ? 0 : ret;
}

/* ---- data --------------------------------------------------------------- */

/* The campaigns of the target: by the first cycle each cycle recorded
 * (schema 8), older cycles as one campaign. Picks N (0: the latest). */
static int pick_campaign(struct rep *r, int64_t want)
{
	struct wm_table c = { 0 };
	int ret = wm_fetch_named(r->wm, &c, &qr_queries[QR_CAMPAIGNS],
				 (struct db_value[]){ WM_INT(r->tid) }, 1);

	if (ret)
		return ret;
	r->ncampaigns = c.nrows;
	if (want > c.nrows) {
		wm_err("report: target %s has %d campaign%s, not %lld", wm_str(&r->tg, 0, "name"),
		       c.nrows, c.nrows == 1 ? "" : "s", (long long)want);
		wm_table_free(&c);
		return WM_EXIT_ERROR;
	}
	r->campaign = want ? want : c.nrows;
	if (c.nrows > 0) {
		r->lo = wm_int(&c, (int)r->campaign - 1, "lo", 1);
		r->hi = wm_int(&c, (int)r->campaign - 1, "hi", 1);
	}
	wm_table_free(&c);
	return 0;
}

/* Every iteration of the campaign with its baseline, ratio, and the host
 * bytes written to the target by its end (whole history, as the wear
 * chart counts them). */
static int load_iterations(struct rep *r)
{
	return wm_fetch_named(r->wm, &r->it, &qr_queries[QR_ITERATIONS], REP_SCOPE(r));
}

/* Cycles with min / avg / max, the mean ratio to baseline of their done
 * iterations, and the action that followed. */
static int load_cycles(struct rep *r)
{
	return wm_fetch_named(r->wm, &r->cy, &qr_queries[QR_CYCLES], REP_SCOPE(r));
}

/* The first done iteration with a trace worth drawing (3 measured
 * samples; else the first) and the one furthest below its baseline.
 * Returns 0 or WM_EXIT_ERROR. */
static int choose_iterations(struct rep *r)
{
	struct wm_table t = { 0 };
	double worst = INFINITY;
	int ret = wm_fetch_named(r->wm, &t, &qr_queries[QR_FIRST_TRACED], REP_SCOPE(r));

	r->first_it = ret ? 0 : wm_int(&t, 0, "id", 0);
	wm_table_free(&t);
	for (int i = 0; !ret && i < r->it.nrows; i++) {
		double q = wm_num(&r->it, i, "ratio");

		if (strcmp(wm_str(&r->it, i, "status"), "done"))
			continue;
		if (!r->first_it)
			r->first_it = wm_int(&r->it, i, "id", 0);
		if (q < worst) {
			worst = q;
			r->worst_it = wm_int(&r->it, i, "id", 0);
		}
	}
	return ret;
}

static int worst_row(const struct rep *r)
{
	for (int i = 0; i < r->it.nrows; i++)
		if (wm_int(&r->it, i, "id", 0) == r->worst_it)
			return i;
	return -1;
}

/* ---- sections ----------------------------------------------------------- */

static int write_head(struct rep *r)
{
	static const char css[] =
		"@page{size:A4;margin:14mm 12mm}"
		"body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;font-size:10pt;"
		"color:#111;max-width:190mm;margin:1em auto;line-height:1.35}"
		"h1{font-size:17pt;margin:0 0 .2em}h2{font-size:13pt;border-bottom:1px solid #999;"
		"margin:1.4em 0 .5em;break-after:avoid}h3{font-size:11pt;break-after:avoid}"
		".sub{color:#444;margin:0 0 1em}"
		"table{border-collapse:collapse;width:100%;font-size:8.5pt;margin:.4em 0 1em}"
		"caption{text-align:left;font-weight:bold;margin:.3em 0}"
		"th,td{border-bottom:1px solid #ddd;padding:2px 5px;text-align:right;"
		"vertical-align:top}th{background:#f0f0f0}.l{text-align:left}"
		"td:not(.l){white-space:nowrap}"
		"thead{display:table-header-group}tr{break-inside:avoid}"
		"figure{margin:.5em 0 1.2em;break-inside:avoid}figure svg{width:100%;height:auto}"
		"figcaption{font-size:8.5pt;color:#333}"
		"pre{font-size:7.5pt;white-space:pre-wrap;background:#f7f7f7;padding:.5em;"
		"border:1px solid #ddd}pre.cfg{columns:2;column-gap:2em}"
		".note{color:#555;font-style:italic}.bad{color:#a00;font-weight:bold}"
		".summary{font-size:10.5pt;border-left:4px solid #0072B2;padding-left:.8em}"
		"nav ol{columns:2;font-size:9pt}a{color:#0050a0}"
		"dl.kv{display:grid;grid-template-columns:max-content auto;gap:1px 1em;"
		"font-size:9pt}dl.kv dt{font-weight:bold}dl.kv dd{margin:0}"
		"@media print{body{margin:0;max-width:none}a{color:inherit;text-decoration:none}"
		".newpage{break-before:page}section{break-inside:auto}}";
	char b[48], now[40];
	time_t t = time(NULL);

	strftime(now, sizeof(now), "%Y-%m-%d %H:%M UTC", gmtime(&t));
	fprintf(r->f,
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta name=\"generator\" content=\"wearmon %s\">\n<title>",
		WEARMON_VERSION);
	fputs("wearmon report: ", r->f);
	rep_esc(r, wm_str(&r->tg, 0, "name"));
	fprintf(r->f,
		"</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n<h1>"
		"Endurance and recovery report: ",
		css);
	rep_esc(r, wm_str(&r->tg, 0, "name"));
	fprintf(r->f, "</h1>\n<p class=\"sub\">Campaign %lld of %lld (cycles %lld–%lld), ",
		(long long)r->campaign, (long long)r->ncampaigns, (long long)r->lo,
		(long long)r->hi);
	rep_esc(r, wm_str(&r->tg, 0, "model"));
	fputs(" ", r->f);
	rep_esc(r, wm_str(&r->tg, 0, "device"));
	fprintf(r->f, " (%s). Generated %s by wearmon %s from ",
		rep_bytes(wm_num(&r->tg, 0, "capacity_bytes"), b, sizeof(b)), now, WEARMON_VERSION);
	rep_esc(r, r->wm->db_path);
	fputs(".</p>\n</header>\n<nav><ol>"
	      "<li><a href=\"#summary\">Summary</a></li>"
	      "<li><a href=\"#device\">Device under test</a></li>"
	      "<li><a href=\"#conditions\">Test conditions</a></li>"
	      "<li><a href=\"#cycles\">Results per cycle</a></li>"
	      "<li><a href=\"#sizes\">Throughput against size</a></li>"
	      "<li><a href=\"#wear\">Wear</a></li>"
	      "<li><a href=\"#latency\">Latency</a></li>"
	      "<li><a href=\"#steady\">Steady state</a></li>",
	      r->f);
	if (rep_has_evidence(r))
		fputs("<li><a href=\"#evidence\">Why it slowed</a></li>", r->f);
	if (rep_has_hir(r))
		fputs("<li><a href=\"#hir\">Host idle recovery</a></li>", r->f);
	fputs("<li><a href=\"#events\">Alerts and events</a></li>"
	      "<li><a href=\"#data\">Data</a></li></ol></nav>\n",
	      r->f);
	return 0;
}

/* One sentence per action: the cycle before it and the one after. */
static void summary_actions(struct rep *r, FILE *m)
{
	char a[16], b[16];
	int any = 0;

	for (int c = 0; c < r->cy.nrows; c++) {
		const char *act = wm_str(&r->cy, c, "action");
		const char *out = wm_str(&r->cy, c, "action_outcome");

		if (!act || !strcmp(act, "none"))
			continue;
		any = 1;
		fprintf(m, " After the %s that followed cycle %lld (%s), ", act,
			(long long)wm_int(&r->cy, c, "cycle", 0),
			out ? out : "no outcome recorded");
		if (c + 1 < r->cy.nrows && !isnan(wm_num(&r->cy, c + 1, "ratio")))
			fprintf(m,
				"cycle %lld ran at %s of baseline on average, against %s"
				" in cycle %lld.",
				(long long)wm_int(&r->cy, c + 1, "cycle", 0),
				rep_pct(wm_num(&r->cy, c + 1, "ratio"), a, sizeof(a)),
				rep_pct(wm_num(&r->cy, c, "ratio"), b, sizeof(b)),
				(long long)wm_int(&r->cy, c, "cycle", 0));
		else
			fprintf(m, "no later cycle of the campaign measured the effect.");
	}
	if (!any)
		fprintf(m, " No action ran between the cycles.");
}

/* Write amplification and alerts of the campaign, one sentence each. */
static int summary_tail(struct rep *r, FILE *m)
{
	struct wm_table t = { 0 }, w = { 0 };
	int ret = wm_fetch_named(r->wm, &t, &qr_queries[QR_ALERT_COUNTS], REP_SCOPE(r));
	int deltas;

	if (!ret)
		ret = wm_fetch_named(r->wm, &w, &qr_queries[QR_WRITE_AMP], REP_SCOPE(r));
	/* which definition of the figure the database has (wm_fetch_named has
	 * read its schema facts) */
	deltas = !ret && query_named_sql(wm_schema(r->wm), &qr_queries[QR_WRITE_AMP]) ==
				 qr_queries[QR_WRITE_AMP].sql;
	if (ret) {
		wm_table_free(&t);
		wm_table_free(&w);
		return ret;
	}
	if (wm_int(&t, 0, "phases", 0) > 0)
		fprintf(m,
			" SNIA steady state was reached in %lld of %lld phases measured in"
			" rounds.",
			(long long)wm_int(&t, 0, "steady", 0),
			(long long)wm_int(&t, 0, "phases", 0));
	if (isnan(wm_num(&w, 0, "wa")))
		fprintf(m, " The drive did not report flash writes, so its write amplification"
			   " is unknown.");
	else
		fprintf(m, " %s was %.2f.",
			deltas ? "Write amplification over the campaign (flash"
				 " bytes over host bytes, from the drive's counters)"
			       : "The last write amplification the drive reported",
			wm_num(&w, 0, "wa"));
	fprintf(m, " Alerts: %lld critical or error, %lld warning, %lld notice.",
		(long long)wm_int(&t, 0, "bad", 0), (long long)wm_int(&t, 0, "warn", 0),
		(long long)wm_int(&t, 0, "notice", 0));
	wm_table_free(&t);
	wm_table_free(&w);
	return 0;
}

/* What cycle row c reached, when it is not done ("interrupted: 2 of 4
 * sizes"); NULL when it is done. */
static const char *partial_of(const struct rep *r, int c, char *buf, size_t len)
{
	const char *st = wm_str(&r->cy, c, "status");

	if (!st || !strcmp(st, "done"))
		return NULL;
	return wm_fmt_partial(st, wm_int(&r->cy, c, "sizes", 0), wm_int(&r->cy, c, "nsizes", 0),
			      buf, len);
}

/* The campaign's cycles not done: partial, their figures of the sizes
 * they reached (a campaign still running, or interrupted). */
static void summary_partial(struct rep *r, FILE *m)
{
	char b[96];

	for (int c = 0; c < r->cy.nrows; c++)
		if (partial_of(r, c, b, sizeof(b)))
			fprintf(m,
				" Cycle %lld is partial (%s): its figures are of the sizes it"
				" reached.",
				(long long)wm_int(&r->cy, c, "cycle", 0), b);
}

static int write_summary(struct rep *r)
{
	char *text = NULL, a[48], b[48], c[48], d[16];
	size_t len = 0;
	int w = worst_row(r), done = 0, cut = 0, ret;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return WM_EXIT_ERROR;
	for (int i = 0; i < r->it.nrows; i++) {
		done += !strcmp(wm_str(&r->it, i, "status"), "done");
		cut += !strcmp(wm_str(&r->it, i, "status"), "interrupted") ||
		       !strcmp(wm_str(&r->it, i, "status"), "failed");
	}
	fprintf(m, "Over %d cycle%s, %d iteration%s finished", r->cy.nrows,
		r->cy.nrows == 1 ? "" : "s", done, done == 1 ? "" : "s");
	if (cut)
		fprintf(m, " and %d %s cut short (interrupted or failed, run again)", cut,
			cut == 1 ? "was" : "were");
	fprintf(m, ".");
	summary_partial(r, m);
	if (w >= 0)
		fprintf(m,
			" The worst drop against the baseline was to %s: %s MiB/s at size %s"
			" in cycle %lld, against %s MiB/s in cycle %lld.",
			rep_pct(wm_num(&r->it, w, "ratio"), d, sizeof(d)),
			rep_num(wm_num(&r->it, w, "mibps_avg"), 1, a, sizeof(a)),
			rep_bytes(wm_num(&r->it, w, "size_bytes"), b, sizeof(b)),
			(long long)wm_int(&r->it, w, "cycle", 0),
			rep_num(wm_num(&r->it, w, "baseline"), 1, c, sizeof(c)),
			(long long)wm_int(&r->it, w, "baseline_cycle", 0));
	summary_actions(r, m);
	ret = summary_tail(r, m);
	if (fclose(m) != 0 || ret) {
		free(text);
		return WM_EXIT_ERROR;
	}
	rep_section(r, "summary", "Summary");
	fputs("<p class=\"summary\">", r->f);
	rep_esc(r, text);
	fputs("</p>\n<p class=\"note\">Baseline: each iteration is compared with the one its"
	      " alerts used, stored with it when it started (the <code>baseline</code> rule:"
	      " <code>first</code>, the earliest done iteration of the same size, workload and"
	      " block size in this campaign; <code>best</code>, the fastest; <code>previous</code>,"
	      " the latest). The first measurement of each in a campaign has none."
	      " Percentages are MiB/s against that baseline.</p>\n</section>\n",
	      r->f);
	free(text);
	return 0;
}

static void kv(struct rep *r, const char *key, const char *val)
{
	fputs("<dt>", r->f);
	rep_esc(r, key);
	fputs("</dt><dd>", r->f);
	rep_esc(r, val && *val ? val : "–");
	fputs("</dd>\n", r->f);
}

/* Region and over-provisioning of the campaign's first and last rows. */
static int device_region(struct rep *r)
{
	struct wm_table t = { 0 };
	char a[48], b[48], line[160];
	int ret = wm_fetch_named(r->wm, &t, &qr_queries[QR_REGION], REP_SCOPE(r));

	if (ret)
		return ret;
	kv(r, "Region under test", rep_bytes(wm_num(&t, 0, "region_bytes"), a, sizeof(a)));
	snprintf(line, sizeof(line), "%s of the capacity left unused",
		 rep_pct(wm_num(&t, 0, "op_configured"), a, sizeof(a)));
	kv(r, "Over-provisioning, configured", isnan(wm_num(&t, 0, "op_configured")) ? NULL : line);
	rep_pct(wm_num(&t, 0, "op_min"), a, sizeof(a));
	rep_pct(wm_num(&t, 0, "op_max"), b, sizeof(b));
	if (!strcmp(a, b))
		snprintf(line, sizeof(line), "%s of the capacity not mapped by host writes", a);
	else
		snprintf(line, sizeof(line),
			 "%s to %s of the capacity not mapped by host writes"
			 " (lowest and highest after an iteration)",
			 a, b);
	kv(r, "Over-provisioning, effective", isnan(wm_num(&t, 0, "op_min")) ? NULL : line);
	wm_table_free(&t);
	return 0;
}

/* Health snapshots at the campaign's start and end, side by side. */
static int device_health(struct rep *r)
{
	static const char *const cols[] = {
		"source",          "sectors_read",       "sectors_written",    "percentage_used",
		"available_spare", "media_errors",       "critical_warning",   "temperature_c",
		"power_on_hours",  "host_bytes_written", "nand_bytes_written", "write_amplification"
	};
	struct wm_table t = { 0 };
	int ret = wm_fetch_named(r->wm, &t, &qr_queries[QR_HEALTH], REP_SCOPE(r));

	if (ret)
		return ret;
	if (t.nrows == 0) {
		rep_para(r, "No health snapshot was recorded in this campaign.");
		goto out;
	}
	fputs("<table><caption>Health snapshots: the first and the last of the campaign"
	      " (taken at the start and end of every cycle and after its action); fields the"
	      " drive does not report are left out</caption><thead><tr><th class=\"l\">field"
	      "</th>",
	      r->f);
	for (int i = 0; i < t.nrows; i++) {
		char b[48];
		const char *point = wm_str(&t, i, "point") ? wm_str(&t, i, "point") : "cycle-start";

		fprintf(r->f, "<th>%s of cycle %lld<br>%s</th>",
			!strcmp(point, "cycle-end")      ? "end"
			: !strcmp(point, "after-action") ? "after the action"
							 : "start",
			(long long)wm_int(&t, i, "cycle", 0),
			wm_fmt_time(wm_str(&t, i, "at"), b, sizeof(b)));
	}
	fputs("</tr></thead><tbody>\n", r->f);
	for (size_t c = 0; c < ARRAY_SIZE(cols); c++) {
		int known = 0;

		for (int i = 0; i < t.nrows; i++)
			known |= wm_cell(&t, i, cols[c])->type != DB_NULL;
		if (!known)
			continue;
		/* the snapshot's own figure, not the campaign's of the summary */
		fprintf(r->f, "<tr><td class=\"l\">%s%s</td>", cols[c],
			strcmp(cols[c], "write_amplification") ? "" : " since the snapshot before");
		for (int i = 0; i < t.nrows; i++) {
			const struct wm_cell *v = wm_cell(&t, i, cols[c]);

			if (v->type == DB_TEXT) {
				fputs("<td>", r->f);
				rep_esc(r, v->s);
				fputs("</td>", r->f);
			} else if (strstr(cols[c], "_bytes_"))
				rep_td_bytes(r, wm_num(&t, i, cols[c]));
			else
				rep_td_num(r, wm_num(&t, i, cols[c]), v->type == DB_REAL ? 2 : 0);
		}
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
out:
	wm_table_free(&t);
	return 0;
}

static int write_device(struct rep *r)
{
	char b[48];
	int ret;

	rep_section(r, "device", "Device under test");
	fputs("<dl class=\"kv\">\n", r->f);
	kv(r, "Target", wm_str(&r->tg, 0, "name"));
	kv(r, "Device", wm_str(&r->tg, 0, "device"));
	kv(r, "Kind", wm_str(&r->tg, 0, "kind"));
	kv(r, "Model", wm_str(&r->tg, 0, "model"));
	kv(r, "Serial", wm_str(&r->tg, 0, "serial"));
	kv(r, "Firmware", wm_str(&r->tg, 0, "firmware"));
	kv(r, "Backing file", wm_str(&r->tg, 0, "backing_file"));
	kv(r, "Capacity", rep_bytes(wm_num(&r->tg, 0, "capacity_bytes"), b, sizeof(b)));
	snprintf(b, sizeof(b), "%lld bytes", (long long)wm_int(&r->tg, 0, "logical_block_size", 0));
	kv(r, "Logical block", b);
	ret = device_region(r);
	fputs("</dl>\n", r->f);
	if (!ret)
		ret = device_health(r);
	fputs("</section>\n", r->f);
	return ret;
}

/* The runs that measured the campaign, and the configuration of the
 * latest of them that stored one. */
static int write_conditions(struct rep *r)
{
	struct wm_table t = { 0 };
	int last = -1, ret = wm_fetch_named(r->wm, &t, &qr_queries[QR_RUNS], REP_SCOPE(r));

	if (ret)
		return ret;
	rep_section(r, "conditions", "Test conditions");
	rep_thead(r, "Daemon runs that measured this campaign",
		  "run|<started (UTC)|<ended (UTC)|<wearmon|<host|<kernel|<stopped because");
	for (int i = 0; i < t.nrows; i++) {
		fprintf(r->f, "<tr><td>%lld</td>", (long long)wm_int(&t, i, "id", 0));
		rep_td_time(r, wm_str(&t, i, "started_at"));
		rep_td_time(r, wm_str(&t, i, "ended_at"));
		rep_td_text(r, &t, i, "version");
		rep_td_text(r, &t, i, "hostname");
		rep_td_text(r, &t, i, "kernel");
		rep_td_text(r, &t, i, "exit_reason");
		fputs("</tr>\n", r->f);
		if (wm_str(&t, i, "config"))
			last = i;
	}
	rep_tend(r);
	if (last < 0) {
		rep_para(r, "The database does not hold the configuration (runs before schema"
			    " version 8 did not store it).");
	} else {
		fprintf(r->f,
			"<h3>Configuration of run %lld, as resolved</h3>\n<pre class=\"cfg\">",
			(long long)wm_int(&t, last, "id", 0));
		rep_esc(r, wm_str(&t, last, "config"));
		fputs("</pre>\n", r->f);
	}
	fputs("</section>\n", r->f);
	wm_table_free(&t);
	return 0;
}

/* What the action after a cycle did: the next cycle's ratio against this
 * one's, in percentage points. */
static void action_effect(struct rep *r, int c, char *buf, size_t len)
{
	double now = wm_num(&r->cy, c, "ratio");
	double next = c + 1 < r->cy.nrows ? wm_num(&r->cy, c + 1, "ratio") : NAN;
	const char *act = wm_str(&r->cy, c, "action");

	if (!act || !strcmp(act, "none"))
		snprintf(buf, len, "–");
	else if (isnan(now) || isnan(next))
		snprintf(buf, len, "not measured");
	else
		snprintf(buf, len, "%+.0f points (%.0f%% → %.0f%%)", (next - now) * 100, now * 100,
			 next * 100);
}

/* The status cell; a cycle not done is partial: its figures are of the
 * sizes it reached ("partial, interrupted: 2 of 4 sizes"). */
static void cycle_status_td(struct rep *r, int c)
{
	char b[96];

	if (!partial_of(r, c, b, sizeof(b))) {
		rep_td_text(r, &r->cy, c, "status");
		return;
	}
	fputs("<td class=\"l partial\">partial, ", r->f);
	rep_esc(r, b);
	fputs("</td>", r->f);
}

static int write_cycles(struct rep *r)
{
	char b[64];

	rep_section(r, "cycles", "Results per cycle");
	rep_thead(
		r, NULL,
		"cycle|<status|<started (UTC)|done|cut short|min MiB/s|avg MiB/s|"
		"max MiB/s|avg vs baseline|<action after|<outcome|action s|<effect on the next cycle");
	for (int c = 0; c < r->cy.nrows; c++) {
		fprintf(r->f, "<tr><td>%lld</td>", (long long)wm_int(&r->cy, c, "cycle", 0));
		cycle_status_td(r, c);
		rep_td_time(r, wm_str(&r->cy, c, "started_at"));
		rep_td_num(r, wm_num(&r->cy, c, "done"), 0);
		rep_td_num(r, wm_num(&r->cy, c, "cut"), 0);
		rep_td_num(r, wm_num(&r->cy, c, "lo"), 1);
		rep_td_num(r, wm_num(&r->cy, c, "mean"), 1);
		rep_td_num(r, wm_num(&r->cy, c, "hi"), 1);
		fprintf(r->f, "<td>%s</td>", rep_pct(wm_num(&r->cy, c, "ratio"), b, sizeof(b)));
		rep_td_text(r, &r->cy, c, "action");
		rep_td_text(r, &r->cy, c, "action_outcome");
		rep_td_num(r, wm_num(&r->cy, c, "action_seconds"), 1);
		action_effect(r, c, b, sizeof(b));
		fputs("<td class=\"l\">", r->f);
		rep_esc(r, b);
		fputs("</td></tr>\n", r->f);
	}
	rep_tend(r);
	fputs("<p class=\"note\">A sample is the I/O of one <code>sample_interval</code> (1 s"
	      " by default; the last of a phase lasts up to two). min and max are the lowest"
	      " and highest sample of the cycle's finished measured rows (fill and read-back"
	      " rows apart), a row too short for two full samples counting with its average;"
	      " avg is the mean over the sizes of each size's average (every size counts"
	      " once, its repeats and rounds averaged first): the view"
	      " <code>cycle_summary</code>. avg vs baseline is the mean of the measured rows'"
	      " ratios to baseline.</p>\n",
	      r->f);
	figure(r, "cycles", 0,
	       "Per cycle: the lowest and highest sample and the average of the sizes, as in"
	       " the table above; dashed lines after cycles that ended with an action.");
	fputs("</section>\n", r->f);
	return 0;
}

static int write_charts(struct rep *r)
{
	char cap[160];
	int ret;

	rep_section(r, "sizes", "Throughput against size");
	ret = figure(r, "sizes", 0,
		     "Average MiB/s of the measured phase at each size, one line"
		     " (marker and dash) per cycle.");
	fputs("</section>\n", r->f);
	rep_section(r, "wear", "Wear: throughput against host bytes written");
	if (!ret)
		ret = figure(
			r, "wear", 0,
			"Each finished iteration's average MiB/s against the host"
			" bytes written to the target by its end, one line per size; lines stop"
			" at actions.");
	fputs("</section>\n", r->f);
	rep_section(r, "latency", "Latency");
	if (!ret)
		ret = figure(r, "latency", 0,
			     "Total latency percentiles (submission to reaped completion) of"
			     " every finished iteration at its ID, as in the Data table"
			     " (logarithmic axis).");
	for (int k = 0; !ret && k < 2; k++) {
		int64_t id = k ? r->worst_it : r->first_it;

		if (!id || (k && r->worst_it == r->first_it))
			continue;
		snprintf(cap, sizeof(cap), "Samples of iteration %lld, %s.", (long long)id,
			 k ? "the one furthest below its baseline"
			   : "the first finished one with a trace of three samples or more");
		ret = figure(r, "samples", id, cap);
		snprintf(cap, sizeof(cap),
			 "Latency percentiles of iteration %lld's measured phase over time:"
			 " every 1-second sample, or past sample_retention the highest of"
			 " each minute's (logarithmic axis).",
			 (long long)id);
		if (!ret)
			ret = figure(r, "latency", id, cap);
	}
	fputs("</section>\n", r->f);
	return ret;
}

/* ---- the command -------------------------------------------------------- */

static int write_report(struct rep *r)
{
	int ret = write_head(r);

	if (!ret)
		ret = write_summary(r);
	if (!ret)
		ret = write_device(r);
	if (!ret)
		ret = write_conditions(r);
	if (!ret)
		ret = write_cycles(r);
	if (!ret)
		ret = write_charts(r);
	if (!ret)
		ret = rep_write_endurance(r);
	if (!ret)
		ret = rep_write_steady(r);
	if (!ret)
		ret = rep_write_evidence(r);
	if (!ret)
		ret = rep_write_pts(r, 0);
	if (!ret)
		ret = rep_write_hir(r);
	if (!ret)
		ret = rep_write_pts(r, 1);
	if (!ret)
		ret = rep_write_events(r);
	if (!ret)
		ret = rep_write_data(r);
	fputs("<footer><p class=\"note\">Produced by wearmon report; the database holds every"
	      " figure (see wearmon(1) and the schema in common/db/schema.md).</p></footer>\n"
	      "</body>\n</html>\n",
	      r->f);
	return ret;
}

/* The target: the named one or the only one. Returns 0, or an exit status
 * (message printed). */
static int report_target(struct rep *r, const char *name)
{
	int ret = wm_fetch_named(r->wm, &r->tg, &qr_queries[QR_TARGET],
				 (struct db_value[]){ WM_TEXT(name) }, 1);
	int64_t id;

	if (ret || r->tg.nrows == 1) {
		r->tid = ret ? 0 : wm_int(&r->tg, 0, "id", 0);
		return ret;
	}
	if (name)
		return wm_target_id(r->wm, name, &id);
	if (r->tg.nrows == 0) {
		printf("%s: nothing to report\n", WM_NO_ITERATIONS);
		return WM_EXIT_OK;
	}
	return wm_usage_error("report: %s holds several targets (%s): choose one with"
			      " --target",
			      r->wm->db_path, wm_str(&r->tg, 0, "names"));
}

/* Writes through a temporary file renamed at the end ("-": stdout). */
static int report_file(struct rep *r, const char *path)
{
	char tmp[4096];
	int ret;

	if (!strcmp(path, "-")) {
		r->f = stdout;
		return write_report(r);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	r->f = fopen(tmp, "w");
	if (!r->f) {
		wm_err("cannot write %s: %s", path, strerror(errno));
		return WM_EXIT_ERROR;
	}
	ret = write_report(r);
	if (fclose(r->f) != 0 && !ret) {
		wm_err("cannot write %s: %s", path, strerror(errno));
		ret = WM_EXIT_ERROR;
	}
	if (!ret && rename(tmp, path) != 0) {
		wm_err("cannot write %s: %s", path, strerror(errno));
		ret = WM_EXIT_ERROR;
	}
	if (ret)
		unlink(tmp);
	return ret;
}

int wm_cmd_report(struct wm *wm, int argc, char **argv)
{
	struct rep r = { .wm = wm };
	struct wm_args a;
	int ret = wm_parse_args(wm, argc, argv, "ton", &a);

	if (ret >= 0)
		return ret;
	if (a.npos > 0)
		return wm_usage_error("report: unexpected argument '%s'", a.pos[0]);
	if (!a.output)
		return wm_usage_error("report: missing -o FILE.html");
	if ((ret = wm_open(wm)) || (ret = report_target(&r, a.target)) || r.tid == 0)
		goto out;
	if ((ret = pick_campaign(&r, a.campaign)))
		goto out;
	if (r.ncampaigns == 0) {
		printf("%s: nothing to report for target %s\n", WM_NO_ITERATIONS,
		       wm_str(&r.tg, 0, "name"));
		goto out;
	}
	wm->cycle_lo = r.lo;
	wm->cycle_hi = r.hi;
	if ((ret = load_iterations(&r)) || (ret = load_cycles(&r)) ||
	    (ret = rep_load_evidence(&r)) || (ret = rep_load_hir(&r)))
		goto out;
	if ((ret = choose_iterations(&r)))
		goto out;
	ret = report_file(&r, a.output);
out:
	wm_report_steps(wm);
	wm_table_free(&r.tg);
	wm_table_free(&r.it);
	wm_table_free(&r.cy);
	wm_table_free(&r.causes);
	wm_table_free(&r.device);
	wm_table_free(&r.hir);
	wm_table_free(&r.hir_pre);
	wm_table_free(&r.hir_purge);
	return ret;
}
