/* wearmon_hir: host idle recovery (tables hir_bursts, schema 22, and
 * hir_purges, schema 27) as `wearmon show` prints it (the purge, a table
 * and bars per wait state: burst throughput and the media bytes the drive
 * wrote while idle) and as the report's section (charts of burst
 * throughput, of those idle media bytes and of the drive's write
 * amplification where it counts them, against the idle wait; one line per
 * cycle; the purges). The rows come from common/db/query/query_hir.c. */
#include "wearmon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/query/query.h"
#include "wearmon_report.h"

#define BAR_WIDTH 40
#define MIB 1048576.0

/* The tables of one read: per wait state, the preconditions, the purges. */
struct hir_tables {
	struct wm_table st, pre, purge;
};

static void tables_free(struct hir_tables *h)
{
	wm_table_free(&h->st);
	wm_table_free(&h->pre);
	wm_table_free(&h->purge);
}

/* v with d decimals, or "-" when unknown. */
static const char *num(double v, int d, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", d, v);
	return buf;
}

static int fetch_states(struct wm *wm, int64_t tid, int64_t lo, int64_t hi, struct wm_table *st,
			struct wm_table *pre, struct wm_table *purge)
{
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret = wm_result(
		wm, query_hir_states(wm->db, tid, lo, hi, wm_rows(&sk, st, err, sizeof(err))), err);

	if (!ret)
		ret = wm_result(wm,
				query_hir_preconditions(wm->db, tid, lo, hi,
							wm_rows(&sk, pre, err, sizeof(err))),
				err);
	if (!ret)
		ret = wm_result(wm,
				query_hir_purges(wm->db, tid, lo, hi,
						 wm_rows(&sk, purge, err, sizeof(err))),
				err);
	return ret;
}

/* One bar of the throughput chart: ████▌ scaled to max. */
static void bar(double v, double max)
{
	static const char *const eighths[] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
	long n = isnan(v) || !(max > 0) ? 0 : lround(v / max * BAR_WIDTH * 8);

	for (long i = 0; i < n / 8; i++)
		fputs("█", stdout);
	fputs(eighths[n % 8], stdout);
}

static void show_precondition(const struct wm_table *pre)
{
	char a[32], b[32];

	if (pre->nrows == 0)
		return;
	int64_t steady = wm_int(pre, 0, "steady", -1);
	printf("  precondition  %lld rounds of 4 KiB random writes (%s–%s MiB/s): %s\n",
	       (long long)wm_int(pre, 0, "rounds", 0), num(wm_num(pre, 0, "mibps_min"), 1, a, 32),
	       num(wm_num(pre, 0, "mibps_max"), 1, b, 32),
	       steady == 1   ? "steady state reached"
	       : steady == 0 ? "steady state NOT reached in max_rounds"
			     : "still running");
}

/* Each purge attempt of the cycle: method (the erase), outcome, bytes,
 * seconds, and what its note says. */
static void show_purges(const struct wm_table *pu)
{
	char b[32];

	for (int r = 0; r < pu->nrows; r++) {
		const char *erase = wm_str(pu, r, "erase"), *note = wm_str(pu, r, "note");
		wm_fmt_bytes(wm_num(pu, r, "bytes"), b, sizeof(b));
		printf("  purge         %s%s%s%s %s, %s in %.2f s%s%s\n", wm_str(pu, r, "method"),
		       erase ? " (" : "", erase ? erase : "", erase ? ")" : "",
		       wm_str(pu, r, "outcome"), b, wm_num(pu, r, "seconds"), note ? ": " : "",
		       note ? note : "");
	}
}

/* A bar per wait state of column col (scaled by scale), titled. */
static void show_bars(const struct wm_table *t, const char *col, double scale, const char *title)
{
	char c[32];
	double max = 0;
	int any = 0;

	for (int r = 0; r < t->nrows; r++) {
		double v = wm_num(t, r, col) * scale;
		any |= !isnan(v);
		max = v > max ? v : max;
	}
	if (!any)
		return;
	printf("  %s\n", title);
	for (int r = 0; r < t->nrows; r++) {
		double v = wm_num(t, r, col) * scale;
		printf("  %6gs ", wm_num(t, r, "wait_seconds"));
		bar(v, max);
		printf(" %s\n", num(v, 1, c, 32));
	}
}

static void show_states(const struct wm_table *t)
{
	char c[8][32];

	printf("  %8s %6s %8s %15s %8s %8s %9s %7s %5s %10s %9s\n", "idle s", "bursts", "MiB/s",
	       "min–max", "IOPS", "p99 µs", "device WA", "peak °C", "waits", "idle MiB",
	       "baseline");
	for (int r = 0; r < t->nrows; r++) {
		char mm[48];
		snprintf(mm, sizeof(mm), "%s–%s", num(wm_num(t, r, "mibps_min"), 1, c[0], 32),
			 num(wm_num(t, r, "mibps_max"), 1, c[1], 32));
		printf("  %8g %6lld %8s %15s %8s %8s %9s %7s %5s %10s %9s\n",
		       wm_num(t, r, "wait_seconds"), (long long)wm_int(t, r, "bursts", 0),
		       num(wm_num(t, r, "mibps"), 1, c[2], 32), mm,
		       num(wm_num(t, r, "iops"), 0, c[3], 32),
		       num(wm_num(t, r, "lat_p99_us"), 0, c[4], 32),
		       num(wm_num(t, r, "device_wa"), 3, c[5], 32),
		       num(wm_num(t, r, "peak_temp_c"), 0, c[6], 32),
		       num(wm_num(t, r, "waits"), 0, c[7], 32),
		       num(wm_num(t, r, "idle_media_bytes") / MIB, 2, c[0], 32),
		       num(wm_num(t, r, "baseline_mibps"), 1, c[1], 32));
	}
}

int wm_show_hir(struct wm *wm, int64_t tid, int64_t cycle)
{
	struct hir_tables h = { 0 };
	int ret = fetch_states(wm, tid, cycle, cycle, &h.st, &h.pre, &h.purge);

	if (ret || (h.st.nrows == 0 && h.pre.nrows == 0 && h.purge.nrows == 0))
		goto out;
	printf("host idle recovery (cycle %lld: bursts, each followed by an idle wait)\n",
	       (long long)cycle);
	show_purges(&h.purge);
	show_precondition(&h.pre);
	if (h.st.nrows) {
		show_states(&h.st);
		show_bars(&h.st, "mibps", 1, "burst MiB/s per wait state (idle s between bursts)");
		show_bars(&h.st, "idle_media_bytes", 1 / MIB,
			  "media MiB written while idle per wait state (background GC)");
	}
out:
	tables_free(&h);
	return ret;
}

int wm_show_hir_json(struct wm *wm, int64_t tid, int64_t cycle)
{
	struct hir_tables h = { 0 };
	int ret = fetch_states(wm, tid, cycle, cycle, &h.st, &h.pre, &h.purge);

	if (!ret) {
		fputs("{\"purges\": ", stdout);
		wm_json_rows(stdout, &h.purge);
		fputs(", \"precondition\": ", stdout);
		wm_json_rows(stdout, &h.pre);
		fputs(", \"wait_states\": ", stdout);
		wm_json_rows(stdout, &h.st);
		fputs("}", stdout);
	}
	tables_free(&h);
	return ret;
}

/* ---- the report's section ---------------------------------------------- */

int rep_load_hir(struct rep *r)
{
	return fetch_states(r->wm, r->tid, r->lo, r->hi, &r->hir, &r->hir_pre, &r->hir_purge);
}

int rep_has_hir(const struct rep *r)
{
	return r->hir.nrows > 0;
}

/* The mean of column col over the last cycle's rows of t (NAN: none). */
static double last_cycle_mean(const struct wm_table *t, const char *col)
{
	int64_t last = t->nrows ? wm_int(t, t->nrows - 1, "cycle", 0) : 0;
	double sum = 0;
	int n = 0;

	for (int i = t->nrows - 1; i >= 0 && wm_int(t, i, "cycle", 0) == last; i--) {
		double v = wm_num(t, i, col);
		if (!isnan(v)) {
			sum += v;
			n++;
		}
	}
	return n ? sum / n : NAN;
}

/* The chart of column col of r->hir (times scale) against the idle wait,
 * one line per cycle; with base, a horizontal line at the last cycle's
 * mean of that column (its returns to baseline). Returns 0, or
 * WM_EXIT_ERROR (no memory, or the stream failed). */
static int hir_chart(struct rep *r, const char *col, double scale, const char *base,
		     const char *title, const char *ylabel)
{
	const struct wm_table *t = &r->hir;
	size_t n = (size_t)t->nrows, ns = 0;
	double *x = calloc(n, sizeof(*x)), *y = calloc(n, sizeof(*y));
	struct chart_series *s = calloc(n, sizeof(*s));
	char(*labels)[32] = calloc(n, sizeof(*labels));
	int ret = WM_EXIT_ERROR;

	if (!x || !y || !s || !labels)
		goto out;
	for (size_t i = 0; i < n; i++) {
		int64_t cycle = wm_int(t, (int)i, "cycle", 0);
		if (!ns || wm_int(t, (int)i - 1, "cycle", 0) != cycle) {
			snprintf(labels[ns], sizeof(labels[ns]), "cycle %lld", (long long)cycle);
			s[ns] = (struct chart_series){
				.label = labels[ns], .x = x + i, .y = y + i, .lines = 1
			};
			ns++;
		}
		x[i] = wm_num(t, (int)i, "wait_seconds");
		y[i] = wm_num(t, (int)i, col) * scale;
		s[ns - 1].n++;
	}
	struct chart_mark mark = {
		.at = base ? last_cycle_mean(t, base) * scale : NAN,
		.label = "return to baseline (last cycle)",
		.dash = "6 3",
	};
	struct chart c = {
		.marks = &mark,
		.nmarks = !isnan(mark.at),
		.title = title,
		.subtitle = "each wait state's bursts, each followed by its idle wait, together;"
			    " one line per cycle",
		.xlabel = "idle wait of the wait state (s)",
		.ylabel = ylabel,
		.series = s,
		.nseries = ns,
		.x_from_zero = 1,
		.ordered = ns > 1,
		.fragment = 1,
	};
	fputs("<figure>\n", r->f);
	ret = chart_svg(r->f, &c) ? WM_EXIT_ERROR : 0;
	fputs("<figcaption>", r->f);
	rep_esc(r, title);
	fputs(" (table hir_bursts).</figcaption>\n</figure>\n", r->f);
out:
	free(x);
	free(y);
	free(s);
	free(labels);
	return ret;
}

static void hir_table(struct rep *r)
{
	const struct wm_table *t = &r->hir;

	rep_thead(r,
		  "Bursts and idle waits per wait state (– where the drive reports no such figure)",
		  "cycle|idle wait s|bursts|MiB/s|min|max|IOPS|mean µs|p99 µs|host writes|"
		  "media writes|device WA|peak °C|baseline MiB/s|waits|media writes while idle|"
		  "per wait|idle media MiB/s");
	for (int i = 0; i < t->nrows; i++) {
		fputs("<tr>", r->f);
		rep_td_num(r, wm_num(t, i, "cycle"), 0);
		rep_td_num(r, wm_num(t, i, "wait_seconds"), 1);
		rep_td_num(r, wm_num(t, i, "bursts"), 0);
		rep_td_num(r, wm_num(t, i, "mibps"), 1);
		rep_td_num(r, wm_num(t, i, "mibps_min"), 1);
		rep_td_num(r, wm_num(t, i, "mibps_max"), 1);
		rep_td_num(r, wm_num(t, i, "iops"), 0);
		rep_td_num(r, wm_num(t, i, "lat_mean_us"), 0);
		rep_td_num(r, wm_num(t, i, "lat_p99_us"), 0);
		rep_td_bytes(r, wm_num(t, i, "host_bytes"));
		rep_td_bytes(r, wm_num(t, i, "media_bytes"));
		rep_td_num(r, wm_num(t, i, "device_wa"), 3);
		rep_td_num(r, wm_num(t, i, "peak_temp_c"), 0);
		rep_td_num(r, wm_num(t, i, "baseline_mibps"), 1);
		rep_td_num(r, wm_num(t, i, "waits"), 0);
		rep_td_bytes(r, wm_num(t, i, "idle_media_bytes"));
		rep_td_bytes(r, wm_num(t, i, "idle_media_per_wait"));
		rep_td_num(r, wm_num(t, i, "idle_media_mibps"), 2);
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
}

/* Every purge attempt of the campaign's cycles. */
static void purge_table(struct rep *r)
{
	const struct wm_table *t = &r->hir_purge;

	if (!t->nrows)
		return;
	rep_thead(r, "Purges before the precondition (hir_purge; table hir_purges)",
		  "cycle|<method|<secure erase|<outcome|bytes|seconds|<started|<note");
	for (int i = 0; i < t->nrows; i++) {
		fputs("<tr>", r->f);
		rep_td_num(r, wm_num(t, i, "cycle"), 0);
		rep_td_text(r, t, i, "method");
		rep_td_text(r, t, i, "erase");
		rep_td_text(r, t, i, "outcome");
		rep_td_bytes(r, wm_num(t, i, "bytes"));
		rep_td_num(r, wm_num(t, i, "seconds"), 2);
		rep_td_time(r, wm_str(t, i, "started_at"));
		rep_td_text(r, t, i, "note");
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
}

/* Whether any row of r->hir has column col. */
static int any_of(const struct rep *r, const char *col)
{
	for (int i = 0; i < r->hir.nrows; i++)
		if (!isnan(wm_num(&r->hir, i, col)))
			return 1;
	return 0;
}

int rep_write_hir(struct rep *r)
{
	int ret;

	if (!rep_has_hir(r))
		return 0;
	rep_section(r, "hir", "Host idle recovery");
	rep_para(r, "After a purge and a steady-state random-write precondition, bursts of"
		    " 4 KiB random writes, each followed by an idle wait (the wait states); the"
		    " longer the drive is left idle, the more it can clean up in the background"
		    " (its media writes while idle), and the faster the bursts (SNIA PTS host"
		    " idle recovery; hir = yes in wearmon.conf).");
	ret = hir_chart(r, "mibps", 1, "baseline_mibps", "Burst throughput against idle time",
			"MiB/s");
	if (!ret && any_of(r, "idle_media_per_wait"))
		ret = hir_chart(r, "idle_media_per_wait", 1 / MIB, NULL,
				"Media bytes written while idle (background garbage collection),"
				" per wait, against idle time",
				"MiB per wait");
	if (!ret && any_of(r, "device_wa"))
		ret = hir_chart(r, "device_wa", 1, NULL,
				"Device write amplification of the bursts against"
				" idle time",
				"media / host bytes");
	if (!ret) {
		purge_table(r);
		hir_table(r);
	}
	fputs("</section>\n", r->f);
	return ret;
}
