/* wearmon_svg: a small self-contained SVG line chart (axes with "nice"
 * ticks, linear or logarithmic y, grid, series with their own colour,
 * marker and dash, reference marks labelled off the data, optional band,
 * legend, title). Knows nothing about wearmon's data; every element a test
 * may count carries a data-series / data-legend attribute or a class. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "wearmon.h"

#define W 960
#define H 560
#define LEFT 84
#define RIGHT (W - 210) /* legend to the right of this */
#define TOP 96          /* two rows of mark labels above this */
#define BOTTOM (H - 62)
#define MAX_MARKERS 120 /* points per series drawn with markers */
#define LEGEND_MAX 16   /* entries before the legend abridges */
#define MAX_TICKS 40
#define CHAR_W 6.2      /* rough width of a 10 px character */
#define LEGEND_CHARS 24 /* legend text wraps after this */
#define LOG_RATIO 5     /* a 5x smaller trace gets < 20% of the height */

struct axis {
	double lo, hi, step;
	int decimals;
	int log;
};

/* Okabe & Ito's palette, safe for the common colour blindness; its yellow
 * is left out (it vanishes on white). */
static const char *const palette[] = {
	"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
};

const char *chart_palette(size_t i)
{
	return palette[i % ARRAY_SIZE(palette)];
}

/* Dash patterns by style: solid first. */
static const char *const dashes[] = { NULL, "8 4", "2 3", "10 3 2 3", "5 2", "1 2" };

#define NSTYLES 6 /* marker shapes, as draw_marker knows them */

/* Viridis stops, without its pale yellow end that vanishes on white. */
static const double ramp[][3] = {
	{ 68, 1, 84 }, { 59, 82, 139 }, { 33, 144, 141 }, { 94, 201, 98 }, { 170, 220, 50 },
};

void wm_xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f); break;
		}
	}
}

int chart_wants_log(double a, double b)
{
	if (!(a > 0) || !(b > 0))
		return 0;
	return fmax(a, b) / fmin(a, b) >= LOG_RATIO;
}

/* Colour of series i of n: the palette, or a ramp for many ordered ones. */
static void series_color(const struct chart *c, size_t i, char *buf, size_t len)
{
	double t, pos, w;
	size_t k, nstops = ARRAY_SIZE(ramp);

	if (c->series[i].color) {
		snprintf(buf, len, "%s", c->series[i].color);
		return;
	}
	if (!c->ordered || c->nseries <= ARRAY_SIZE(palette)) {
		snprintf(buf, len, "%s", palette[i % ARRAY_SIZE(palette)]);
		return;
	}
	t = c->nseries > 1 ? (double)i / (double)(c->nseries - 1) : 0;
	pos = t * (double)(nstops - 1);
	k = (size_t)pos < nstops - 1 ? (size_t)pos : nstops - 2;
	w = pos - (double)k;
	snprintf(buf, len, "#%02x%02x%02x", (int)lround(ramp[k][0] * (1 - w) + ramp[k + 1][0] * w),
		 (int)lround(ramp[k][1] * (1 - w) + ramp[k + 1][1] * w),
		 (int)lround(ramp[k][2] * (1 - w) + ramp[k + 1][2] * w));
}

static size_t series_style(const struct chart *c, size_t i)
{
	return (c->series[i].style ? (size_t)c->series[i].style - 1 : i) % NSTYLES;
}

/* 1, 2 or 5 times a power of ten, giving about target steps over span. */
static double nice_step(double span, int target)
{
	double raw = span / target, mag = pow(10, floor(log10(raw))), n = raw / mag;

	return (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * mag;
}

/* Fits an axis around [lo, hi]: from zero when asked, with ticks on nice
 * numbers (whole ones for an integer axis, whose ends stay as given). */
static void axis_fit(struct axis *a, double lo, double hi, int from_zero, int integer)
{
	if (!isfinite(lo) || !isfinite(hi)) {
		lo = 0;
		hi = 1;
	}
	if (from_zero && lo > 0)
		lo = 0;
	if (!(hi > lo))
		hi = lo + (lo != 0 ? fabs(lo) * 0.2 : 1);
	a->step = nice_step(hi - lo, 6);
	if (integer && a->step < 1)
		a->step = 1;
	if (!integer) {
		lo = floor(lo / a->step) * a->step;
		hi = ceil(hi / a->step) * a->step;
	}
	a->lo = lo;
	a->hi = hi;
	a->log = 0;
	a->decimals = a->step >= 1 ? 0 : (int)ceil(-log10(a->step) - 1e-9);
}

/* The 1, 2 or 5 times a power of ten at or below v (up: at or above). */
static double nice125(double v, int up)
{
	double d = pow(10, floor(log10(v)));
	static const double m[] = { 1, 2, 5, 10 };

	if (up) {
		for (size_t i = 0; i < ARRAY_SIZE(m); i++)
			if (m[i] * d >= v * 0.9999)
				return m[i] * d;
	}
	for (size_t i = ARRAY_SIZE(m) - 1; i-- > 0;)
		if (m[i] * d <= v * 1.0001)
			return m[i] * d;
	return d;
}

/* A logarithmic axis from the 1-2-5 step below the smallest positive value to
 * the decade above the largest. */
static void axis_fit_log(struct axis *a, double lo, double hi)
{
	if (!(lo > 0) || !isfinite(lo))
		lo = hi > 0 && isfinite(hi) ? hi / 10 : 1;
	if (!(hi > 0) || !isfinite(hi))
		hi = lo * 10;
	a->lo = nice125(lo, 0);
	a->hi = nice125(hi, 1);
	if (a->hi <= a->lo)
		a->hi = a->lo * 10;
	a->step = 0;
	a->log = 1;
	a->decimals = a->lo < 1 ? (int)ceil(-log10(a->lo) - 1e-9) : 0;
}

/* Tick values of a: nice steps, or per decade 1-2-5 (an axis of up to
 * three decades), 1-3 (up to six: a reader still finds 3 ms between 1 and
 * 10 ms), else decades only. Returns how many (at most max). */
static int axis_ticks(const struct axis *a, double *out, int max)
{
	static const int m125[] = { 1, 2, 5 }, m13[] = { 1, 3 }, m1[] = { 1 };
	double decades;
	const int *mult;
	size_t nm;
	int n = 0;

	if (!a->log) {
		for (double v = ceil(a->lo / a->step - 1e-9) * a->step;
		     v <= a->hi + a->step * 1e-6 && n < max; v += a->step)
			out[n++] = fabs(v) < a->step * 1e-6 ? 0.0 : v;
		return n;
	}
	decades = log10(a->hi / a->lo);
	mult = decades <= 3.01 ? m125 : decades <= 6.01 ? m13 : m1;
	nm = decades <= 3.01 ? ARRAY_SIZE(m125) : decades <= 6.01 ? ARRAY_SIZE(m13) : 1;
	for (double d = pow(10, floor(log10(a->lo))); d <= a->hi * 1.0001; d *= 10)
		for (size_t k = 0; k < nm && n < max; k++) {
			double v = d * mult[k];

			if (v >= a->lo * 0.9999 && v <= a->hi * 1.0001)
				out[n++] = v;
		}
	return n;
}

static double frac(const struct axis *a, double v)
{
	if (a->log)
		return (log10(fmax(v, a->lo)) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

static double px(const struct axis *a, double v)
{
	return LEFT + frac(a, v) * (RIGHT - LEFT);
}

static double py(const struct axis *a, double v)
{
	return BOTTOM - frac(a, v) * (BOTTOM - TOP);
}

/* Smallest positive y too, for a logarithmic axis. */
static void data_range(const struct chart *c, double *x0, double *x1, double *y0, double *y1,
		       double *ypos)
{
	*x0 = *y0 = *ypos = INFINITY;
	*x1 = *y1 = -INFINITY;
	for (size_t s = 0; s < c->nseries; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			double x = c->series[s].x[i], y = c->series[s].y[i];

			if (isnan(x) || isnan(y))
				continue;
			*x0 = fmin(*x0, x);
			*x1 = fmax(*x1, x);
			*y0 = fmin(*y0, y);
			*y1 = fmax(*y1, y);
			if (y > 0)
				*ypos = fmin(*ypos, y);
		}
	for (size_t b = 0; b < c->band.n; b++) {
		*y1 = fmax(*y1, c->band.hi[b]);
		*y0 = fmin(*y0, c->band.lo[b]);
	}
	/* half a step of room around whole-number points (cycles) */
	if (c->x_integer && isfinite(*x0)) {
		*x0 -= 0.5;
		*x1 += 0.5;
	}
	for (size_t m = 0; m < c->nmarks; m++) {
		if (c->marks[m].vertical) {
			*x0 = fmin(*x0, c->marks[m].at);
			*x1 = fmax(*x1, c->marks[m].at);
		} else {
			*y1 = fmax(*y1, c->marks[m].at);
		}
	}
}

static void tick_text(FILE *f, const struct axis *a, double v)
{
	if (a->log && v >= 1)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.*f", a->log ? (int)ceil(-log10(v) - 1e-9) : a->decimals, v);
}

static void draw_grid(FILE *f, const struct axis *ax, const struct axis *ay)
{
	double t[MAX_TICKS];
	int n = axis_ticks(ay, t, MAX_TICKS);

	fprintf(f, "<g class=\"grid\" stroke=\"#e6e6e6\" stroke-width=\"1\">\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", LEFT,
			py(ay, t[i]), RIGHT, py(ay, t[i]));
	fprintf(f, "</g>\n");
	(void)ax;
}

static void draw_axes(FILE *f, const struct chart *c, const struct axis *ax, const struct axis *ay)
{
	double t[MAX_TICKS];
	int n;

	draw_grid(f, ax, ay);
	fprintf(f, "<g class=\"axes\" font-size=\"11\" fill=\"#333\">\n");
	fprintf(f, "<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"#333\"/>\n", LEFT, TOP,
		BOTTOM, RIGHT);
	n = axis_ticks(ay, t, MAX_TICKS);
	for (int i = 0; i < n; i++) {
		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
			LEFT - 5, py(ay, t[i]), LEFT, py(ay, t[i]), LEFT - 8, py(ay, t[i]) + 4);
		tick_text(f, ay, t[i]);
		fprintf(f, "</text>\n");
	}
	n = axis_ticks(ax, t, MAX_TICKS);
	for (int i = 0; i < n; i++) {
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
			px(ax, t[i]), BOTTOM, px(ax, t[i]), BOTTOM + 5, px(ax, t[i]), BOTTOM + 19);
		tick_text(f, ax, t[i]);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">",
		(LEFT + RIGHT) / 2, BOTTOM + 44);
	wm_xml_text(f, c->xlabel);
	fprintf(f,
		"</text>\n<text transform=\"translate(%d %d) rotate(-90)\""
		" text-anchor=\"middle\" font-size=\"13\">",
		24, (TOP + BOTTOM) / 2);
	wm_xml_text(f, c->ylabel);
	if (ay->log)
		fputs(" (log scale)", f);
	fprintf(f, "</text>\n</g>\n");
}

/* A vertical mark's label, centred over its line in the strip above the
 * plot (row 0 just above it, row 1 higher); a label that would touch the
 * previous one on row 0 goes to row 1, or further right. */
static void mark_label(FILE *f, const struct chart_mark *k, double x, double *end)
{
	double w = (double)strlen(k->label) * CHAR_W;
	double x0 = fmin(fmax(x - w / 2, LEFT), RIGHT + 60 - w);
	int row = 0;

	if (x0 < end[0] + 8) {
		if (x0 >= end[1] + 8)
			row = 1;
		else
			x0 = end[0] + 8;
	}
	end[row] = x0 + w;
	fprintf(f, "<text class=\"mark-label\" x=\"%.1f\" y=\"%d\">", x0, TOP - 7 - 13 * row);
	wm_xml_text(f, k->label);
	fprintf(f, "</text>\n");
}

static void draw_marks(FILE *f, const struct chart *c, const struct axis *ax, const struct axis *ay)
{
	int labels = c->nmarks <= 24;
	double end[2] = { -1e9, -1e9 };

	fprintf(f, "<g class=\"marks\" font-size=\"10\" fill=\"#444\">\n");
	for (size_t m = 0; m < c->nmarks; m++) {
		const struct chart_mark *k = &c->marks[m];
		const char *col = k->color ? k->color : "#888";

		if (k->vertical) {
			/* data-at: the mark's place in the data's units, for tests */
			fprintf(f,
				"<line data-at=\"%g\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\""
				" y2=\"%d\" stroke=\"%s\" stroke-dasharray=\"%s\"/>\n",
				k->at, px(ax, k->at), TOP, px(ax, k->at), BOTTOM, col,
				k->dash ? k->dash : "4 3");
			if (labels && k->label)
				mark_label(f, k, px(ax, k->at), end);
		} else {
			fprintf(f,
				"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\""
				" stroke-dasharray=\"6 4\"/>\n",
				LEFT, py(ay, k->at), RIGHT, py(ay, k->at), col);
		}
	}
	fprintf(f, "</g>\n");
}

static void draw_band(FILE *f, const struct chart *c, const struct axis *ax, const struct axis *ay)
{
	const struct chart_band *b = &c->band;

	if (b->n < 2)
		return;
	fprintf(f, "<path class=\"band\" fill=\"%s\" fill-opacity=\"0.12\" stroke=\"none\" d=\"",
		b->color ? b->color : palette[0]);
	for (size_t i = 0; i < b->n; i++)
		fprintf(f, "%s%.1f %.1f ", i ? "L" : "M", px(ax, b->x[i]), py(ay, b->hi[i]));
	for (size_t i = b->n; i-- > 0;)
		fprintf(f, "L%.1f %.1f ", px(ax, b->x[i]), py(ay, b->lo[i]));
	fprintf(f, "Z\"/>\n");
}

/* Marker of style k at (x, y), radius r: circle, square, triangle up,
 * diamond, triangle down, cross; hollow so overlapping points show. data:
 * attributes of the element ("" for a legend's sample marker). */
static void draw_marker(FILE *f, size_t k, double x, double y, double r, const char *data)
{
	switch (k) {
	case 0:
		fprintf(f, "<circle class=\"pt\"%s cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>\n", data, x,
			y, r);
		break;
	case 1:
		fprintf(f,
			"<rect class=\"pt\"%s x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
			data, x - r, y - r, 2 * r, 2 * r);
		break;
	case 2:
	case 4: {
		double d = k == 2 ? 1 : -1;

		fprintf(f, "<path class=\"pt\"%s d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f Z\"/>\n",
			data, x, y - d * r * 1.3, x + r * 1.2, y + d * r * 0.8, x - r * 1.2,
			y + d * r * 0.8);
		break;
	}
	case 3:
		fprintf(f,
			"<path class=\"pt\"%s d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f L%.1f %.1f Z\"/>\n",
			data, x, y - r * 1.4, x + r * 1.4, y, x, y + r * 1.4, x - r * 1.4, y);
		break;
	default:
		fprintf(f,
			"<path class=\"pt\"%s d=\"M%.1f %.1f L%.1f %.1f M%.1f %.1f L%.1f %.1f\"/>\n",
			data, x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r);
		break;
	}
}

/* A data point's marker, carrying its place in the axes' units (data-x,
 * data-y: the figure, not the pixel, for a reader or a test). */
static void draw_point(FILE *f, size_t k, double x, double y, double r, double dx, double dy)
{
	char data[80];

	snprintf(data, sizeof(data), " data-x=\"%.10g\" data-y=\"%.10g\"", dx, dy);
	draw_marker(f, k, x, y, r, data);
}

/* Where the vertical marks a line breaks at sit, sorted (n = 0: the
 * chart does not break its lines), so that each segment of a line looks
 * them up in log time: a year's wear chart has thousands of marks and
 * tens of thousands of points. */
struct mark_xs {
	double *x;
	size_t n;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The positions of c's vertical marks into m. Returns 0 or -1 (no memory). */
static int mark_xs_of(const struct chart *c, struct mark_xs *m)
{
	m->n = 0;
	m->x = c->break_at_marks && c->nmarks ? malloc(c->nmarks * sizeof(*m->x)) : NULL;
	if (c->break_at_marks && c->nmarks && !m->x)
		return -1;
	for (size_t i = 0; m->x && i < c->nmarks; i++)
		if (c->marks[i].vertical && !isnan(c->marks[i].at))
			m->x[m->n++] = c->marks[i].at;
	if (m->n > 1)
		qsort(m->x, m->n, sizeof(*m->x), cmp_double);
	return 0;
}

/* Whether a vertical mark lies between x0 and x1 (a point on the mark
 * came before it: the action followed the point). */
static int mark_between(const struct mark_xs *m, double x0, double x1)
{
	double lo = fmin(x0, x1), hi = fmax(x0, x1);
	size_t a = 0, b = m->n;

	while (a < b) { /* the first mark at or after lo */
		size_t mid = a + (b - a) / 2;

		if (m->x[mid] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < m->n && m->x[a] < hi;
}

static void draw_line(FILE *f, const struct chart *c, size_t s, const struct axis *ax,
		      const struct axis *ay, const struct mark_xs *marks)
{
	const struct chart_series *se = &c->series[s];
	const char *dash = dashes[series_style(c, s)];
	double last = NAN;
	int pen = 0;

	fprintf(f, "<path fill=\"none\" stroke-width=\"%s\"", se->n > MAX_MARKERS ? "1.2" : "2");
	if (dash)
		fprintf(f, " stroke-dasharray=\"%s\"", dash);
	fprintf(f, " d=\"");
	for (size_t i = 0; i < se->n; i++) {
		if (isnan(se->x[i]) || isnan(se->y[i])) {
			pen = 0; /* a gap: lift the pen */
			continue;
		}
		if (pen && mark_between(marks, last, se->x[i]))
			pen = 0;
		fprintf(f, "%s%.1f %.1f ", pen ? "L" : "M", px(ax, se->x[i]), py(ay, se->y[i]));
		last = se->x[i];
		pen = 1;
	}
	fprintf(f, "\"/>\n");
}

static void draw_series(FILE *f, const struct chart *c, size_t s, const struct axis *ax,
			const struct axis *ay, const struct mark_xs *marks)
{
	const struct chart_series *se = &c->series[s];
	int dense = se->n > MAX_MARKERS;
	char col[16];

	series_color(c, s, col, sizeof(col));
	fprintf(f, "<g data-series=\"");
	wm_xml_text(f, se->label);
	fprintf(f, "\" stroke=\"%s\" fill=\"none\">\n", col);
	if (se->lines && se->n > 1)
		draw_line(f, c, s, ax, ay, marks);
	if (!dense || !se->lines) {
		fprintf(f, "<g fill=\"%s\" stroke-width=\"1.5\">\n", dense ? col : "#ffffff");
		for (size_t i = 0; i < se->n; i++)
			if (!isnan(se->x[i]) && !isnan(se->y[i]))
				draw_point(f, dense ? 0 : series_style(c, s), px(ax, se->x[i]),
					   py(ay, se->y[i]), dense ? 1.5 : 3.5, se->x[i], se->y[i]);
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</g>\n");
}

/* Legend text at (x, y), wrapped at a space after LEGEND_CHARS. Returns
 * the extra height it took. */
static int legend_text(FILE *f, int x, int y, const char *text)
{
	size_t n = text ? strlen(text) : 0, cut = n;
	char first[128];

	fprintf(f, "<text x=\"%d\" y=\"%d\" stroke=\"none\">", x, y + 4);
	if (n > LEGEND_CHARS && n < sizeof(first)) {
		for (cut = LEGEND_CHARS; cut > 0 && text[cut] != ' '; cut--)
			;
		if (cut == 0)
			cut = n;
	}
	if (cut == n) {
		wm_xml_text(f, text);
		fprintf(f, "</text>\n");
		return 0;
	}
	memcpy(first, text, cut);
	first[cut] = '\0';
	fprintf(f, "<tspan x=\"%d\">", x);
	wm_xml_text(f, first);
	fprintf(f, "</tspan><tspan x=\"%d\" dy=\"14\">", x);
	wm_xml_text(f, text + cut + 1);
	fprintf(f, "</tspan></text>\n");
	return 14;
}

static int legend_entry(FILE *f, const struct chart *c, size_t s, int y)
{
	const char *dash = dashes[series_style(c, s)];
	char col[16];

	series_color(c, s, col, sizeof(col));
	fprintf(f, "<g data-legend=\"");
	wm_xml_text(f, c->series[s].label);
	fprintf(f,
		"\" stroke=\"%s\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\""
		" stroke-width=\"2\"",
		col, RIGHT + 14, y, RIGHT + 46, y);
	if (dash && c->series[s].lines)
		fprintf(f, " stroke-dasharray=\"%s\"", dash);
	fprintf(f, "/><g fill=\"#ffffff\" stroke-width=\"1.5\">");
	draw_marker(f, series_style(c, s), RIGHT + 30, y, 3.5, "");
	fprintf(f, "</g>");
	y = legend_text(f, RIGHT + 54, y, c->series[s].label);
	fprintf(f, "</g>\n");
	return y;
}

/* A legend line for a reference mark or the band. Returns the extra
 * height. */
static int legend_extra(FILE *f, const char *text, const char *col, const char *dash, int band,
			int y)
{
	fprintf(f, "<g data-legend-mark=\"1\">");
	if (band)
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"32\" height=\"10\" fill=\"%s\""
			" fill-opacity=\"0.2\"/>",
			RIGHT + 14, y - 5, col);
	else
		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\""
			" stroke-dasharray=\"%s\"/>",
			RIGHT + 14, y, RIGHT + 46, y, col, dash);
	y = legend_text(f, RIGHT + 54, y, text);
	fprintf(f, "</g>\n");
	return y;
}

/* The colour of the vertical marks whose legend is text: theirs when they
 * share one, else grey. */
static const char *legend_color(const struct chart *c, const char *text)
{
	const char *col = NULL;

	for (size_t m = 0; m < c->nmarks; m++) {
		const struct chart_mark *k = &c->marks[m];
		const char *kc = k->color ? k->color : "#888";

		if (!k->vertical || !k->legend || strcmp(k->legend, text))
			continue;
		if (col && strcmp(col, kc))
			return "#888";
		col = kc;
	}
	return col;
}

/* One legend entry per text of the vertical marks that have their own
 * (the start of a campaign beside the actions), in their dash. */
static void legend_mark_kinds(FILE *f, const struct chart *c, int y)
{
	for (size_t m = 0; m < c->nmarks; m++) {
		const struct chart_mark *k = &c->marks[m];
		size_t e = 0;

		if (!k->vertical || !k->legend)
			continue;
		while (e < m && !(c->marks[e].vertical && c->marks[e].legend &&
				  !strcmp(c->marks[e].legend, k->legend)))
			e++;
		if (e == m)
			y += 20 + legend_extra(f, k->legend, legend_color(c, k->legend),
					       k->dash ? k->dash : "4 3", 0, y);
	}
}

/* All entries, or the first and last seven around an ellipsis; then the
 * marks: horizontal ones with their labels, vertical ones as one entry. */
static void draw_legend(FILE *f, const struct chart *c)
{
	int y = TOP + 8;

	fprintf(f, "<g class=\"legend\" font-size=\"12\" fill=\"#222\">\n");
	for (size_t s = 0; s < c->nseries; s++, y += 20) {
		if (c->nseries > LEGEND_MAX && s == 7) {
			fprintf(f, "<text x=\"%d\" y=\"%d\">… %zu more</text>\n", RIGHT + 54, y + 4,
				c->nseries - 14);
			s = c->nseries - 8;
			continue;
		}
		y += legend_entry(f, c, s, y);
	}
	if (c->band.n > 1 && c->band_legend)
		y += 20 + legend_extra(f, c->band_legend,
				       c->band.color ? c->band.color : palette[0], NULL, 1, y);
	for (size_t m = 0; m < c->nmarks; m++)
		if (!c->marks[m].vertical && c->marks[m].label)
			y += 20 + legend_extra(f, c->marks[m].label,
					       c->marks[m].color ? c->marks[m].color : "#888",
					       "6 4", 0, y);
	if (c->marks_legend)
		y += 20 + legend_extra(f, c->marks_legend, "#888", "4 3", 0, y);
	legend_mark_kinds(f, c, y);
	fprintf(f, "</g>\n");
}

static void draw_head(FILE *f, const struct chart *c)
{
	if (!c->fragment)
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
		" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial,"
		" sans-serif\" role=\"img\">\n<title>",
		W, H, W, H);
	wm_xml_text(f, c->title);
	fprintf(f,
		"</title>\n<desc>Drawn by wearmon %s from its history database.</desc>\n"
		"<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
		WEARMON_VERSION, W, H);
	fprintf(f,
		"<text x=\"%d\" y=\"30\" font-size=\"17\" font-weight=\"bold\""
		" fill=\"#111\">",
		LEFT);
	wm_xml_text(f, c->title);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"52\" font-size=\"12\" fill=\"#555\">", LEFT);
	wm_xml_text(f, c->subtitle);
	fprintf(f, "</text>\n");
}

int chart_svg(FILE *f, const struct chart *c)
{
	struct axis ax, ay;
	struct mark_xs marks;
	double x0, x1, y0, y1, ypos;

	if (mark_xs_of(c, &marks))
		return -1;
	data_range(c, &x0, &x1, &y0, &y1, &ypos);
	axis_fit(&ax, x0, x1, c->x_from_zero, c->x_integer);
	if (c->y_log)
		axis_fit_log(&ay, ypos, y1);
	else
		axis_fit(&ay, y0, y1, 1, 0);
	draw_head(f, c);
	draw_axes(f, c, &ax, &ay);
	draw_band(f, c, &ax, &ay);
	draw_marks(f, c, &ax, &ay);
	for (size_t s = 0; s < c->nseries; s++)
		draw_series(f, c, s, &ax, &ay, &marks);
	draw_legend(f, c);
	fprintf(f, "</svg>\n");
	free(marks.x);
	return ferror(f) ? -1 : 0;
}
