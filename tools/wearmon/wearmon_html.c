/* wearmon_html: the report's HTML helpers, which wearmon_report.c and
 * wearmon_report_data.c both call and which call neither: escaping, number
 * and byte cells, table heads, sections and paragraphs. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "wearmon.h"
#include "wearmon_report.h"

void rep_esc(struct rep *r, const char *s)
{
	wm_xml_text(r->f, s ? s : "");
}

/* A number with d decimals, or an en dash when unknown. */
char *rep_num(double v, int d, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "–");
	else
		snprintf(buf, len, "%.*f", d, v);
	return buf;
}

char *rep_pct(double ratio, char *buf, size_t len)
{
	if (isnan(ratio))
		snprintf(buf, len, "–");
	else
		snprintf(buf, len, "%.0f%%", ratio * 100);
	return buf;
}

char *rep_bytes(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "–");
	else
		wm_fmt_bytes(v, buf, len);
	return buf;
}

/* A cell of a text column, escaped, "–" when NULL. */
void rep_td_text(struct rep *r, const struct wm_table *t, int row, const char *col)
{
	const char *s = wm_str(t, row, col);

	fputs("<td class=\"l\">", r->f);
	rep_esc(r, s ? s : "–");
	fputs("</td>", r->f);
}

void rep_td_num(struct rep *r, double v, int d)
{
	char b[48];

	fprintf(r->f, "<td>%s</td>", rep_num(v, d, b, sizeof(b)));
}

void rep_td_bytes(struct rep *r, double v)
{
	char b[48];

	fprintf(r->f, "<td>%s</td>", rep_bytes(v, b, sizeof(b)));
}

void rep_td_time(struct rep *r, const char *iso)
{
	char b[48];

	fprintf(r->f, "<td class=\"l\">%s</td>", iso ? wm_fmt_time(iso, b, sizeof(b)) : "–");
}

/* A table head from a list of "|"-separated titles; a leading '<' makes a
 * column left-aligned. */
void rep_thead(struct rep *r, const char *caption, const char *cols)
{
	char buf[1024], *save = NULL;

	fprintf(r->f, "<table>\n");
	if (caption) {
		fputs("<caption>", r->f);
		rep_esc(r, caption);
		fputs("</caption>\n", r->f);
	}
	fputs("<thead><tr>", r->f);
	snprintf(buf, sizeof(buf), "%s", cols);
	for (char *c = strtok_r(buf, "|", &save); c; c = strtok_r(NULL, "|", &save)) {
		fprintf(r->f, "<th%s>", *c == '<' ? " class=\"l\"" : "");
		rep_esc(r, *c == '<' ? c + 1 : c);
		fputs("</th>", r->f);
	}
	fputs("</tr></thead>\n<tbody>\n", r->f);
}

void rep_tend(struct rep *r)
{
	fputs("</tbody></table>\n", r->f);
}

void rep_section(struct rep *r, const char *id, const char *title)
{
	fprintf(r->f, "<section id=\"%s\">\n<h2>", id);
	rep_esc(r, title);
	fputs("</h2>\n", r->f);
}

void rep_para(struct rep *r, const char *text)
{
	fputs("<p>", r->f);
	rep_esc(r, text);
	fputs("</p>\n", r->f);
}
