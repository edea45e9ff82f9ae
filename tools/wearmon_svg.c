/* wearmon_svg: a small self-contained SVG line chart (axes with "nice"
 * ticks, grid, series, reference marks, optional band, legend, title).
 * Knows nothing about wearmon's data; every element a test may count
 * carries a data-series / data-legend attribute. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "wearmon.h"

#define W 960
#define H 560
#define LEFT 84
#define RIGHT (W - 200)               /* legend to the right of this */
#define TOP 76
#define BOTTOM (H - 62)
#define MAX_MARKERS 120               /* points per series drawn as dots */
#define LEGEND_MAX 16                 /* entries before the legend abridges */

struct axis {
	double lo, hi, step;
	int decimals;
};

/* Tableau 10: distinct colours for unordered or few series. */
static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};

/* Viridis stops, without its pale yellow end that vanishes on white. */
static const double ramp[][3] = {
	{ 68, 1, 84 }, { 59, 82, 139 }, { 33, 144, 141 }, { 94, 201, 98 }, { 170, 220, 50 },
};

static void xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f); break;
		}
	}
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
	snprintf(buf, len, "#%02x%02x%02x",
		 (int)lround(ramp[k][0] * (1 - w) + ramp[k + 1][0] * w),
		 (int)lround(ramp[k][1] * (1 - w) + ramp[k + 1][1] * w),
		 (int)lround(ramp[k][2] * (1 - w) + ramp[k + 1][2] * w));
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
	a->decimals = a->step >= 1 ? 0 : (int)ceil(-log10(a->step) - 1e-9);
}

static double px(const struct axis *a, double v)
{
	return LEFT + (v - a->lo) / (a->hi - a->lo) * (RIGHT - LEFT);
}

static double py(const struct axis *a, double v)
{
	return BOTTOM - (v - a->lo) / (a->hi - a->lo) * (BOTTOM - TOP);
}

static void data_range(const struct chart *c, double *x0, double *x1, double *y0, double *y1)
{
	*x0 = *y0 = INFINITY;
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

static void draw_axes(FILE *f, const struct chart *c, const struct axis *ax,
		      const struct axis *ay)
{
	fprintf(f, "<g id=\"grid\" stroke=\"#e6e6e6\" stroke-width=\"1\">\n");
	for (double v = ceil(ay->lo / ay->step) * ay->step; v <= ay->hi + ay->step * 1e-6;
	     v += ay->step)
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", LEFT,
			py(ay, v), RIGHT, py(ay, v));
	fprintf(f, "</g>\n<g id=\"axes\" font-size=\"11\" fill=\"#333\">\n");
	fprintf(f, "<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"#333\"/>\n", LEFT, TOP,
		BOTTOM, RIGHT);
	for (double v = ceil(ay->lo / ay->step) * ay->step; v <= ay->hi + ay->step * 1e-6;
	     v += ay->step)
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n",
			LEFT - 5, py(ay, v), LEFT, py(ay, v), LEFT - 8, py(ay, v) + 4,
			ay->decimals, fabs(v) < ay->step * 1e-6 ? 0.0 : v);
	for (double v = ceil(ax->lo / ax->step - 1e-9) * ax->step;
	     v <= ax->hi + ax->step * 1e-6; v += ax->step)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.*f</text>\n",
			px(ax, v), BOTTOM, px(ax, v), BOTTOM + 5, px(ax, v), BOTTOM + 19,
			ax->decimals, fabs(v) < ax->step * 1e-6 ? 0.0 : v);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">",
		(LEFT + RIGHT) / 2, BOTTOM + 44);
	xml_text(f, c->xlabel);
	fprintf(f, "</text>\n<text transform=\"translate(%d %d) rotate(-90)\""
		" text-anchor=\"middle\" font-size=\"13\">", 24, (TOP + BOTTOM) / 2);
	xml_text(f, c->ylabel);
	fprintf(f, "</text>\n</g>\n");
}

static void draw_marks(FILE *f, const struct chart *c, const struct axis *ax,
		       const struct axis *ay)
{
	int labels = c->nmarks <= 24;

	fprintf(f, "<g id=\"marks\" font-size=\"10\" fill=\"#555\">\n");
	for (size_t m = 0; m < c->nmarks; m++) {
		const struct chart_mark *k = &c->marks[m];
		const char *col = k->color ? k->color : "#888";

		if (k->vertical) {
			fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\""
				" stroke-dasharray=\"4 3\"/>\n", px(ax, k->at), TOP, px(ax, k->at),
				BOTTOM, col);
			if (labels && k->label) {
				fprintf(f, "<text transform=\"translate(%.1f %d) rotate(-90)\""
					" text-anchor=\"end\">", px(ax, k->at) - 3, TOP + 4);
				xml_text(f, k->label);
				fprintf(f, "</text>\n");
			}
		} else {
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\""
				" stroke-dasharray=\"6 4\"/>\n", LEFT, py(ay, k->at), RIGHT,
				py(ay, k->at), col);
			if (k->label) {
				fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
					RIGHT - 4, py(ay, k->at) - 4);
				xml_text(f, k->label);
				fprintf(f, "</text>\n");
			}
		}
	}
	fprintf(f, "</g>\n");
}

static void draw_band(FILE *f, const struct chart *c, const struct axis *ax,
		      const struct axis *ay)
{
	const struct chart_band *b = &c->band;

	if (b->n < 2)
		return;
	fprintf(f, "<path id=\"band\" fill=\"%s\" fill-opacity=\"0.12\" stroke=\"none\" d=\"",
		b->color ? b->color : "#1f77b4");
	for (size_t i = 0; i < b->n; i++)
		fprintf(f, "%s%.1f %.1f ", i ? "L" : "M", px(ax, b->x[i]), py(ay, b->hi[i]));
	for (size_t i = b->n; i-- > 0;)
		fprintf(f, "L%.1f %.1f ", px(ax, b->x[i]), py(ay, b->lo[i]));
	fprintf(f, "Z\"/>\n");
}

static void draw_series(FILE *f, const struct chart *c, size_t s, const struct axis *ax,
			const struct axis *ay)
{
	const struct chart_series *se = &c->series[s];
	char col[16];
	int pen = 0;

	series_color(c, s, col, sizeof(col));
	fprintf(f, "<g data-series=\"");
	xml_text(f, se->label);
	fprintf(f, "\" stroke=\"%s\" fill=\"%s\">\n", col, col);
	if (se->lines && se->n > 1) {
		fprintf(f, "<path fill=\"none\" stroke-width=\"%s\"%s d=\"",
			se->n > MAX_MARKERS ? "1.2" : "2",
			se->dashed ? " stroke-dasharray=\"6 3\"" : "");
		for (size_t i = 0; i < se->n; i++) {
			if (isnan(se->x[i]) || isnan(se->y[i])) {
				pen = 0;   /* a gap: lift the pen */
				continue;
			}
			fprintf(f, "%s%.1f %.1f ", pen ? "L" : "M", px(ax, se->x[i]),
				py(ay, se->y[i]));
			pen = 1;
		}
		fprintf(f, "\"/>\n");
	}
	if (se->n <= MAX_MARKERS || !se->lines)
		for (size_t i = 0; i < se->n; i++)
			if (!isnan(se->x[i]) && !isnan(se->y[i]))
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"/>\n",
					px(ax, se->x[i]), py(ay, se->y[i]),
					se->n > MAX_MARKERS ? "1.5" : "3");
	fprintf(f, "</g>\n");
}

static void legend_entry(FILE *f, const struct chart *c, size_t s, int y)
{
	char col[16];

	series_color(c, s, col, sizeof(col));
	fprintf(f, "<g data-legend=\"");
	xml_text(f, c->series[s].label);
	fprintf(f, "\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\""
		" stroke-width=\"2\"%s/><circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\"/>"
		"<text x=\"%d\" y=\"%d\">", RIGHT + 20, y, RIGHT + 44, y, col,
		c->series[s].dashed ? " stroke-dasharray=\"6 3\"" : "", RIGHT + 32, y, col,
		RIGHT + 52, y + 4);
	xml_text(f, c->series[s].label);
	fprintf(f, "</text></g>\n");
}

/* All entries, or the first and last seven around an ellipsis. */
static void draw_legend(FILE *f, const struct chart *c)
{
	int y = TOP + 8;

	fprintf(f, "<g id=\"legend\" font-size=\"12\" fill=\"#222\">\n");
	for (size_t s = 0; s < c->nseries; s++, y += 20) {
		if (c->nseries > LEGEND_MAX && s == 7) {
			fprintf(f, "<text x=\"%d\" y=\"%d\">… %zu more</text>\n", RIGHT + 52, y + 4,
				c->nseries - 14);
			s = c->nseries - 8;
			continue;
		}
		legend_entry(f, c, s, y);
	}
	if (c->marks_legend) {
		fprintf(f, "<g data-legend-mark=\"1\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\""
			" y2=\"%d\" stroke=\"#888\" stroke-dasharray=\"4 3\"/><text x=\"%d\""
			" y=\"%d\">", RIGHT + 20, y, RIGHT + 44, y, RIGHT + 52, y + 4);
		xml_text(f, c->marks_legend);
		fprintf(f, "</text></g>\n");
	}
	fprintf(f, "</g>\n");
}

int chart_svg(FILE *f, const struct chart *c)
{
	struct axis ax, ay;
	double x0, x1, y0, y1;

	data_range(c, &x0, &x1, &y0, &y1);
	axis_fit(&ax, x0, x1, c->x_from_zero, c->x_integer);
	axis_fit(&ay, y0, y1, 1, 0);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
		" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial,"
		" sans-serif\">\n<title>", W, H, W, H);
	xml_text(f, c->title);
	fprintf(f, "</title>\n<desc>Drawn by wearmon %s from its history database.</desc>\n"
		"<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WEARMON_VERSION, W, H);
	fprintf(f, "<text x=\"%d\" y=\"30\" font-size=\"17\" font-weight=\"bold\""
		" fill=\"#111\">", LEFT);
	xml_text(f, c->title);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"52\" font-size=\"12\" fill=\"#555\">", LEFT);
	xml_text(f, c->subtitle);
	fprintf(f, "</text>\n");
	draw_axes(f, c, &ax, &ay);
	draw_band(f, c, &ax, &ay);
	draw_marks(f, c, &ax, &ay);
	for (size_t s = 0; s < c->nseries; s++)
		draw_series(f, c, s, &ax, &ay);
	draw_legend(f, c);
	fprintf(f, "</svg>\n");
	return ferror(f) ? -1 : 0;
}
