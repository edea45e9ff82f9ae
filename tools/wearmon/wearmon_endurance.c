/* wearmon_endurance: the endurance forecast (common/base/eol.h, read by
 * common/db/query/query_forecast.c) as wearmon status and show print it
 * (lines, or a JSON object) and as the report's section: the wear
 * indicator against time with the fit and its 95 % interval (an SVG
 * chart), the figures in a table, and the sentence. Computes nothing of
 * its own: every figure is the forecast's. */
#include "wearmon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/query/query.h"
#include "wearmon_report.h"

#define DAY 86400.0
#define WRAP 78        /* columns of the printed sentence */
#define BAND_POINTS 80 /* resolution of the chart's interval */

int wm_forecast(struct wm *wm, const struct query_forecast_scope *scope, struct eol_forecast *f,
		struct eol_reading **readings, size_t *n)
{
	const struct query_schema *sc = wm_schema(wm);
	char err[WM_ERR_MAX] = "";

	if (!sc)
		return WM_EXIT_ERROR;
	return wm_result(wm, query_forecast(wm->db, sc, scope, f, readings, n, err, sizeof(err)),
			 err);
}

double wm_wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* text from column indent on, wrapped at WRAP columns (UTF-8 counted by
 * characters). */
static void wrapped(const char *text, int indent)
{
	int col = indent;

	while (*text) {
		const char *end = strchr(text, ' ');
		size_t len = end ? (size_t)(end - text) : strlen(text);
		int chars = 0;

		for (size_t i = 0; i < len; i++)
			chars += ((unsigned char)text[i] & 0xc0) != 0x80;
		if (col > indent && col + 1 + chars > WRAP) {
			printf("\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		}
		fwrite(text, 1, len, stdout);
		col += chars;
		text += len + (end != NULL);
	}
	putchar('\n');
}

void wm_endurance_print(const struct eol_forecast *f, double now)
{
	char words[1024], bytes[32];

	eol_words(f, now, words, sizeof(words));
	printf("  endurance   ");
	wrapped(words, 14);
	if (f->status == EOL_NO_INDICATOR)
		return;
	printf("              wear indicator %.0f %% used", f->last_used);
	if (!isnan(f->pct_per_day))
		printf(", %.3g %% a day", f->pct_per_day);
	if (!isnan(f->host_per_pct))
		printf(", %s of host writes per %%",
		       wm_fmt_bytes(f->host_per_pct, bytes, sizeof(bytes)));
	printf("; %d level%s crossed in this campaign\n", f->nsteps, f->nsteps == 1 ? "" : "s");
}

/* ---- JSON --------------------------------------------------------------- */

static void member(FILE *out, const char *name, double v, int *first)
{
	fprintf(out, "%s\"%s\": ", *first ? "" : ", ", name);
	*first = 0;
	if (isnan(v) || isinf(v))
		fputs("null", out);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(out, "%lld", (long long)v);
	else
		fprintf(out, "%.17g", v);
}

static void estimate(FILE *out, const char *name, const struct eol_estimate *e, int *first)
{
	char n[64];

	member(out, name, e->at, first);
	snprintf(n, sizeof(n), "%s_lo", name);
	member(out, n, e->lo, first);
	snprintf(n, sizeof(n), "%s_hi", name);
	member(out, n, e->hi, first);
}

void wm_endurance_json(FILE *out, const struct eol_forecast *f, double now)
{
	char words[1024];
	double pm, days = eol_days_left(f, now, &pm);
	int first = 1;

	eol_words(f, now, words, sizeof(words));
	fprintf(out, "{\"status\": \"%s\", \"words\": ", eol_status_name(f->status));
	wm_json_string(out, words);
	fprintf(out, ", \"host_counter\": \"%s\", ", eol_host_name(f->host_counter));
	member(out, "percentage_used", f->last_used, &first);
	member(out, "readings", f->readings, &first);
	member(out, "steps", f->nsteps, &first);
	member(out, "pct_per_day", f->pct_per_day, &first);
	member(out, "host_bytes_per_pct", f->host_per_pct, &first);
	member(out, "last_host_bytes", f->last_host, &first);
	estimate(out, "end_unix", &f->end_t, &first);
	member(out, "days_left", days, &first);
	member(out, "days_left_pm", pm, &first);
	estimate(out, "end_host_bytes", &f->end_host, &first);
	estimate(out, "end_media_bytes", &f->end_media, &first);
	member(out, "rated_bytes", f->rated_bytes, &first);
	estimate(out, "rated_ratio", &f->rated_ratio, &first);
	estimate(out, "rated_unix", &f->rated_t, &first);
	member(out, "warranty_end_unix", f->warranty_end, &first);
	fputc('}', out);
}

/* show: the forecast as it stood when iteration row 0 of t ended (or
 * started, while it runs), over the campaign of its cycle. */
int wm_show_endurance(struct wm *wm, const struct wm_table *t, int json)
{
	const char *until =
		wm_str(t, 0, "ended_at") ? wm_str(t, 0, "ended_at") : wm_str(t, 0, "started_at");
	struct query_forecast_scope scope = { wm_int(t, 0, "target_id", 0), 0,
					      wm_int(t, 0, "cycle", 0), until };
	struct eol_forecast *f = malloc(sizeof(*f));
	double now = until ? wm_time_of(until) : wm_wall_now();
	int ret;

	if (!f)
		return WM_EXIT_ERROR;
	ret = wm_forecast(wm, &scope, f, NULL, NULL);
	if (!ret && json) {
		wm_endurance_json(stdout, f, now);
	} else if (!ret && (f->status != EOL_NO_INDICATOR ||
			    strcmp(wm_str(t, 0, "device_kind") ? wm_str(t, 0, "device_kind") : "",
				   "file"))) { /* a regular file has no wear indicator */
		printf("endurance forecast (as it stood at this iteration's end)\n");
		wm_endurance_print(f, now);
	}
	free(f);
	return ret;
}

/* ---- the report's section ---------------------------------------------- */

/* The chart's x: time since the series' first snapshot in the unit its
 * span reads best in. */
struct xunit {
	double origin, scale;
	const char *name;
};

static struct xunit xunit_of(const struct eol_forecast *f)
{
	double end = isnan(f->end_t.hi) ? f->last_t : fmax(f->last_t, f->end_t.hi);
	double span = end - f->first_t;

	return span >= 2 * DAY    ? (struct xunit){ f->first_t, DAY, "days" }
	       : span >= 2 * 3600 ? (struct xunit){ f->first_t, 3600, "hours" }
	       : span >= 2 * 60   ? (struct xunit){ f->first_t, 60, "minutes" }
				  : (struct xunit){ f->first_t, 1, "seconds" };
}

/* The level at which the interval's edge (hi: its late edge) reaches
 * time t, from the last step on (bisection: the edges rise with the
 * level). */
static double edge_level(const struct eol_forecast *f, double t, int late)
{
	double a = f->steps[f->nsteps - 1].level, b = a + 4 * fmax(EOL_END_LEVEL - a, 10);
	struct eol_estimate e;

	for (int i = 0; i < 48; i++) {
		double m = (a + b) / 2;
		eol_time_at(f, m, &e);
		if ((late ? e.hi : e.lo) < t)
			a = m;
		else
			b = m;
	}
	return (a + b) / 2;
}

/* The 95 % interval as a band of levels over time, from the last step to
 * the late end of the interval at 100 % (its upper edge no higher than
 * cap). */
static void fill_band(const struct eol_forecast *f, const struct xunit *u, double cap, double *x,
		      double *lo, double *hi)
{
	double t0 = f->steps[f->nsteps - 1].t, t1 = f->end_t.hi;

	for (int i = 0; i < BAND_POINTS; i++) {
		double t = t0 + (t1 - t0) * i / (BAND_POINTS - 1);
		x[i] = (t - u->origin) / u->scale;
		lo[i] = edge_level(f, t, 1);
		hi[i] = fmin(edge_level(f, t, 0), cap);
	}
}

struct eol_plot {
	double *rx, *ry, *sx, *sy, fx[2], fy[2], bx[BAND_POINTS], blo[BAND_POINTS],
		bhi[BAND_POINTS];
	size_t nr;
};

/* The points of the chart: snapshots, steps, the fit from the first step
 * to the late end of the interval. Returns 0 or WM_EXIT_ERROR. */
static int plot_points(const struct eol_forecast *f, const struct eol_reading *rd, size_t n,
		       const struct xunit *u, struct eol_plot *p)
{
	size_t ns = (size_t)f->nsteps;

	p->rx = calloc(n + 1, sizeof(double));
	p->ry = calloc(n + 1, sizeof(double));
	p->sx = calloc(ns + 1, sizeof(double));
	p->sy = calloc(ns + 1, sizeof(double));
	if (!p->rx || !p->ry || !p->sx || !p->sy)
		return WM_EXIT_ERROR;
	for (size_t i = 0; i < n; i++)
		if (rd[i].t >= f->first_t && !isnan(rd[i].used)) {
			p->rx[p->nr] = (rd[i].t - u->origin) / u->scale;
			p->ry[p->nr++] = rd[i].used;
		}
	for (size_t i = 0; i < ns; i++) {
		p->sx[i] = (f->steps[i].t - u->origin) / u->scale;
		p->sy[i] = f->steps[i].level;
	}
	if (f->time.n < 2 || f->status != EOL_OK)
		return 0;
	struct eol_estimate e;
	p->fx[0] = p->sx[0];
	p->fy[0] = p->sy[0];
	/* the fit's level at the late end of the interval */
	p->fy[1] = f->steps[ns - 1].level + (f->end_t.hi - f->steps[ns - 1].t) / f->time.mu;
	eol_time_at(f, p->fy[1], &e);
	p->fx[1] = (e.at - u->origin) / u->scale;
	fill_band(f, u, p->fy[1] + 5, p->bx, p->blo, p->bhi);
	return 0;
}

static int endurance_chart(struct rep *r, const struct eol_forecast *f,
			   const struct eol_reading *rd, size_t n)
{
	struct xunit u = xunit_of(f);
	struct eol_plot p = { 0 };
	char xlabel[160], day[40];
	int fit = f->time.n >= 2 && f->status == EOL_OK, ret = plot_points(f, rd, n, &u, &p);
	time_t t0 = (time_t)f->first_t;
	struct tm tm;

	strftime(day, sizeof(day), "%Y-%m-%d %H:%M UTC", gmtime_r(&t0, &tm));
	snprintf(xlabel, sizeof(xlabel), "%s since the campaign's first health snapshot (%s)",
		 u.name, day);
	struct chart_series s[] = {
		{ .label = "wear indicator (health snapshots)", .x = p.rx, .y = p.ry, .n = p.nr },
		{ .label = "level crossed (where the fit puts it)",
		  .x = p.sx,
		  .y = p.sy,
		  .n = (size_t)f->nsteps },
		{ .label = "fit: the steady wear rate", .x = p.fx, .y = p.fy, .n = 2, .lines = 1 },
	};
	struct chart_mark marks[] = {
		{ .at = EOL_END_LEVEL, .label = "100 % used: end of rated life", .dash = "6 4" },
		{ .vertical = 1,
		  .at = (f->end_t.at - u.origin) / u.scale,
		  .label = "forecast end" },
	};
	struct chart c = {
		.title = "Wear indicator against time",
		.subtitle =
			"percentage used as the drive reports it, the fit and its 95 % interval",
		.xlabel = xlabel,
		.ylabel = "% of rated life used",
		.series = s,
		.nseries = fit ? 3 : 2,
		.marks = marks,
		.nmarks = isnan(f->end_t.at) ? 1 : 2,
		.band = { p.bx, p.blo, p.bhi, fit ? BAND_POINTS : 0, NULL },
		.band_legend = "95 % prediction interval",
		.x_from_zero = 1,
		.fragment = 1,
	};
	if (!ret) {
		fputs("<figure>\n", r->f);
		ret = chart_svg(r->f, &c) ? WM_EXIT_ERROR : 0;
		fputs("<figcaption>The drive's wear indicator against time (table health), the"
		      " levels it crossed as the fit places them, and the forecast.</figcaption>\n"
		      "</figure>\n",
		      r->f);
	}
	free(p.rx);
	free(p.ry);
	free(p.sx);
	free(p.sy);
	return ret;
}

/* "2027-07-14 13:05:09" (UTC), or "–". */
static char *when(double t, char *buf, size_t len)
{
	time_t tt = (time_t)llround(t);
	struct tm tm;

	if (isnan(t) || !gmtime_r(&tt, &tm))
		snprintf(buf, len, "–");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

static void row(struct rep *r, const char *name, const char *value)
{
	fputs("<tr><td class=\"l\">", r->f);
	rep_esc(r, name);
	fputs("</td><td class=\"l\">", r->f);
	rep_esc(r, value);
	fputs("</td></tr>\n", r->f);
}

/* A figure with its interval: "A (95 %: B – C)". */
static void row_est(struct rep *r, const char *name, const struct eol_estimate *e, int time,
		    double scale)
{
	char a[48], b[48], c[48], v[200];

	if (isnan(e->at)) {
		row(r, name, "–");
		return;
	}
	if (time)
		snprintf(v, sizeof(v), "%s (95 %%: %s – %s) UTC", when(e->at, a, sizeof(a)),
			 when(e->lo, b, sizeof(b)), when(e->hi, c, sizeof(c)));
	else if (scale != 1)
		snprintf(v, sizeof(v), "%.0f %% (95 %%: %.0f – %.0f %%)", e->at * scale,
			 e->lo * scale, e->hi * scale);
	else
		snprintf(v, sizeof(v), "%s (95 %%: %s – %s)",
			 eol_si_bytes(e->at, NAN, a, sizeof(a)),
			 eol_si_bytes(e->lo, NAN, b, sizeof(b)),
			 eol_si_bytes(e->hi, NAN, c, sizeof(c)));
	row(r, name, v);
}

static void endurance_table(struct rep *r, const struct eol_forecast *f)
{
	char v[200], a[48];

	rep_thead(r, "The forecast's figures (– where it has none)", "<figure|<value");
	snprintf(v, sizeof(v), "%.0f %% at %s UTC", f->last_used, when(f->last_t, a, sizeof(a)));
	row(r, "wear indicator, latest snapshot", v);
	snprintf(v, sizeof(v), "%d levels crossed, seen between %d pairs of snapshots", f->nsteps,
		 f->brackets);
	row(r, "steps fitted", v);
	snprintf(v, sizeof(v), "%.3g %% a day", f->pct_per_day);
	row(r, "wear rate", isnan(f->pct_per_day) ? "–" : v);
	row_est(r, "100 % used (end of rated life)", &f->end_t, 1, 1);
	snprintf(v, sizeof(v), "host bytes by then (%s counter)",
		 f->host_counter == EOL_HOST_DRIVE ? "the drive's" : "wearmond's");
	row_est(r, v, &f->end_host, 0, 1);
	row_est(r, "media bytes by then", &f->end_media, 0, 1);
	snprintf(v, sizeof(v), "%sW", eol_si_bytes(f->rated_bytes, NAN, a, sizeof(a)));
	row(r, "rated endurance", isnan(f->rated_bytes) ? "none (rated_tbw, rated_dwpd)" : v);
	row_est(r, "host bytes at 100 % over the rating", &f->rated_ratio, 0, 100);
	row_est(r, "host writes reach the rating", &f->rated_t, 1, 1);
	row(r, "warranty ends", isnan(f->warranty_end) ? "–" : when(f->warranty_end, a, sizeof(a)));
	rep_tend(r);
}

int rep_write_endurance(struct rep *r)
{
	struct query_forecast_scope scope = { r->tid, r->lo, r->hi, NULL };
	struct eol_forecast *f = malloc(sizeof(*f));
	struct eol_reading *rd = NULL;
	char words[1024];
	size_t n = 0;
	int ret = f ? wm_forecast(r->wm, &scope, f, &rd, &n) : WM_EXIT_ERROR;

	if (ret)
		goto out;
	rep_section(r, "endurance", "Endurance forecast");
	/* as of the campaign's latest snapshot: the report is about its data */
	rep_para(r, eol_words(f, f->last_t, words, sizeof(words)));
	if (f->status != EOL_NO_INDICATOR) {
		ret = endurance_chart(r, f, rd, n);
		if (!ret)
			endurance_table(r, f);
	}
	fputs("</section>\n", r->f);
out:
	free(rd);
	free(f);
	return ret;
}
