/* wearmon_hir: host idle recovery (table hir_bursts, schema 22) as
 * `wearmon show` prints it (a table and a bar per wait state) and as the
 * report's section (a chart of burst throughput, and of the drive's write
 * amplification where it counts it, against the idle wait; one line per
 * cycle). The rows come from common/db/query/query_hir.c. */
#include "wearmon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/query/query.h"
#include "wearmon_report.h"

#define BAR_WIDTH 40

/* v with d decimals, or "-" when unknown. */
static const char *num(double v, int d, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", d, v);
	return buf;
}

static int fetch_states(struct wm *wm, int64_t tid, int64_t lo, int64_t hi, struct wm_table *t,
			struct wm_table *pre)
{
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret = wm_result(
		wm, query_hir_states(wm->db, tid, lo, hi, wm_rows(&sk, t, err, sizeof(err))), err);

	if (!ret)
		ret = wm_result(wm,
				query_hir_preconditions(wm->db, tid, lo, hi,
							wm_rows(&sk, pre, err, sizeof(err))),
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

int wm_show_hir(struct wm *wm, int64_t tid, int64_t cycle)
{
	struct wm_table t = { 0 }, pre = { 0 };
	char c[6][32];
	double max = 0;
	int ret = fetch_states(wm, tid, cycle, cycle, &t, &pre);

	if (ret || (t.nrows == 0 && pre.nrows == 0))
		goto out;
	printf("host idle recovery (cycle %lld: bursts after idle waits)\n", (long long)cycle);
	show_precondition(&pre);
	if (t.nrows)
		printf("  %8s %6s %8s %15s %8s %8s %9s %7s %9s\n", "idle s", "bursts", "MiB/s",
		       "min–max", "IOPS", "p99 µs", "device WA", "peak °C", "baseline");
	for (int r = 0; r < t.nrows; r++) {
		char mm[48];
		double v = wm_num(&t, r, "mibps");

		max = v > max ? v : max;
		snprintf(mm, sizeof(mm), "%s–%s", num(wm_num(&t, r, "mibps_min"), 1, c[0], 32),
			 num(wm_num(&t, r, "mibps_max"), 1, c[1], 32));
		printf("  %8g %6lld %8s %15s %8s %8s %9s %7s %9s\n", wm_num(&t, r, "wait_seconds"),
		       (long long)wm_int(&t, r, "bursts", 0), num(v, 1, c[2], 32), mm,
		       num(wm_num(&t, r, "iops"), 0, c[3], 32),
		       num(wm_num(&t, r, "lat_p99_us"), 0, c[4], 32),
		       num(wm_num(&t, r, "device_wa"), 3, c[5], 32),
		       num(wm_num(&t, r, "peak_temp_c"), 0, c[0], 32),
		       num(wm_num(&t, r, "baseline_mibps"), 1, c[1], 32));
	}
	if (t.nrows)
		printf("  burst MiB/s against the idle wait before it\n");
	for (int r = 0; r < t.nrows; r++) {
		printf("  %6gs ", wm_num(&t, r, "wait_seconds"));
		bar(wm_num(&t, r, "mibps"), max);
		printf(" %s\n", num(wm_num(&t, r, "mibps"), 1, c[0], 32));
	}
out:
	wm_table_free(&t);
	wm_table_free(&pre);
	return ret;
}

int wm_show_hir_json(struct wm *wm, int64_t tid, int64_t cycle)
{
	struct wm_table t = { 0 }, pre = { 0 };
	int ret = fetch_states(wm, tid, cycle, cycle, &t, &pre);

	if (!ret) {
		fputs("{\"precondition\": ", stdout);
		wm_json_rows(stdout, &pre);
		fputs(", \"wait_states\": ", stdout);
		wm_json_rows(stdout, &t);
		fputs("}", stdout);
	}
	wm_table_free(&t);
	wm_table_free(&pre);
	return ret;
}

/* ---- the report's section ---------------------------------------------- */

int rep_load_hir(struct rep *r)
{
	return fetch_states(r->wm, r->tid, r->lo, r->hi, &r->hir, &r->hir_pre);
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

/* The chart of column col of r->hir against the idle wait, one line per
 * cycle; with base, a horizontal line at the last cycle's mean of that
 * column (its returns to baseline). Returns 0, or WM_EXIT_ERROR (no
 * memory, or the stream failed). */
static int hir_chart(struct rep *r, const char *col, const char *base, const char *title,
		     const char *ylabel)
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
		y[i] = wm_num(t, (int)i, col);
		s[ns - 1].n++;
	}
	struct chart_mark mark = {
		.at = base ? last_cycle_mean(t, base) : NAN,
		.label = "return to baseline (last cycle)",
		.dash = "6 3",
	};
	struct chart c = {
		.marks = &mark,
		.nmarks = !isnan(mark.at),
		.title = title,
		.subtitle = "the bursts of each wait state together, one line per cycle",
		.xlabel = "idle wait before the burst (s)",
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

	rep_thead(r, "Bursts per wait state (– where the drive reports no such figure)",
		  "cycle|idle wait s|bursts|MiB/s|min|max|IOPS|mean µs|p99 µs|host writes|"
		  "media writes|device WA|peak °C|baseline MiB/s");
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
		fputs("</tr>\n", r->f);
	}
	rep_tend(r);
}

int rep_write_hir(struct rep *r)
{
	int wa = 0, ret;

	if (!rep_has_hir(r))
		return 0;
	for (int i = 0; i < r->hir.nrows; i++)
		wa |= !isnan(wm_num(&r->hir, i, "device_wa"));
	rep_section(r, "hir", "Host idle recovery");
	rep_para(r, "After a steady-state random-write precondition, bursts of 4 KiB random"
		    " writes each follow an idle wait; the longer the drive was idle, the more"
		    " it could clean up in the background, and the faster the burst (SNIA PTS"
		    " host idle recovery; hir = yes in wearmon.conf).");
	ret = hir_chart(r, "mibps", "baseline_mibps", "Burst throughput against idle time",
			"MiB/s");
	if (!ret && wa)
		ret = hir_chart(r, "device_wa", NULL,
				"Device write amplification of the bursts against"
				" idle time",
				"media / host bytes");
	if (!ret)
		hir_table(r);
	fputs("</section>\n", r->f);
	return ret;
}
