/* wearmon_out: what the wearmon tool reads from its arguments (times,
 * formats, ids) and how it writes rows: an aligned table for people, CSV
 * and JSON for scripts. Pure functions of their inputs and the stream. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "wearmon.h"

#define CELL_MAX 128

/* ---- arguments ---------------------------------------------------------- */

int wm_parse_format(const char *s, enum wm_format *out)
{
	if (!strcmp(s, "table"))
		*out = WM_TABLE;
	else if (!strcmp(s, "csv"))
		*out = WM_CSV;
	else if (!strcmp(s, "json"))
		*out = WM_JSON;
	else
		return -EINVAL;
	return 0;
}

int wm_parse_id(const char *s, int64_t *out)
{
	long long v;

	if (util_parse_int(s, 1, INT64_MAX, &v) != 0)
		return -EINVAL;
	*out = v;
	return 0;
}

static void iso_of(time_t t, int ms, char *out, size_t len)
{
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, len, "%s.%03dZ", buf, ms);
}

/* "YYYY-MM-DD[(T| )HH:MM[:SS[.fff]]][Z]", UTC, checked to be a real date.
 * Returns 0 or -EINVAL. */
static int parse_iso(const char *s, char *out, size_t len)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0, ms = 0;
	struct tm tm = { 0 }, back;
	const char *p;
	time_t t;

	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return -EINVAL;
	p = s + n;
	if ((*p == 'T' || *p == ' ') && sscanf(p + 1, "%2d:%2d%n", &h, &mi, &n) == 2 && n == 5) {
		p += 1 + n;
		if (*p == ':' && sscanf(p + 1, "%2d%n", &sec, &n) == 1 && n == 2)
			p += 1 + n;
		if (*p == '.' && isdigit((unsigned char)p[1])) {
			int digits = 0;

			for (p++; isdigit((unsigned char)*p); p++, digits++)
				if (digits < 3)
					ms = ms * 10 + (*p - '0');
			for (; digits < 3; digits++)
				ms *= 10;
		}
	}
	if (*p == 'Z')
		p++;
	if (*p != '\0' || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1 || !gmtime_r(&t, &back) || back.tm_mday != d || back.tm_mon != mo - 1)
		return -EINVAL;
	iso_of(t, ms, out, len);
	return 0;
}

int wm_parse_since(const char *s, time_t now, char *out, size_t len)
{
	double age;

	if (!strcmp(s, "today") || !strcmp(s, "yesterday")) {
		time_t day = now - now % 86400 - (s[0] == 'y' ? 86400 : 0);

		iso_of(day, 0, out, len);
		return 0;
	}
	if (parse_iso(s, out, len) == 0)
		return 0;
	if (*s == '-')
		s++;
	/* a bare number would read as seconds: too easy to mistake for a date */
	if (!*s || !isdigit((unsigned char)*s) || isdigit((unsigned char)s[strlen(s) - 1]))
		return -EINVAL;
	if (util_parse_duration(s, &age) != 0)
		return -EINVAL;
	iso_of(now - (time_t)ceil(age), 0, out, len);
	return 0;
}

/* ---- formatting --------------------------------------------------------- */

double wm_time_of(const char *iso)
{
	struct tm tm = { 0 };
	double frac = 0;
	const char *p;

	if (!iso)
		return NAN;
	p = strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return NAN;
	if (*p == '.')
		frac = strtod(p, NULL);
	return (double)timegm(&tm) + frac;
}

char *wm_fmt_time(const char *iso, char *buf, size_t len)
{
	if (!iso) {
		snprintf(buf, len, "-");
		return buf;
	}
	/* "2026-12-02T14:36:23.961Z" -> "2026-12-02 14:36:23" */
	snprintf(buf, len, "%.19s", iso);
	if (strlen(buf) > 10 && buf[10] == 'T')
		buf[10] = ' ';
	return buf;
}

char *wm_fmt_bytes(double bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;

	while (fabs(bytes) >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f B", bytes);
	else
		snprintf(buf, len, fabs(bytes) < 10 ? "%.2f %s" : "%.1f %s", bytes, units[u]);
	return buf;
}

char *wm_fmt_duration(double s, char *buf, size_t len)
{
	if (isnan(s))
		snprintf(buf, len, "-");
	else if (s < 90)
		snprintf(buf, len, "%.0f s", s);
	else if (s < 90 * 60)
		snprintf(buf, len, "%.0f min", s / 60);
	else if (s < 48 * 3600)
		snprintf(buf, len, "%.1f h", s / 3600);
	else
		snprintf(buf, len, "%.1f d", s / 86400);
	return buf;
}

/* Shortest %g text that reads back as the same double. */
static void fmt_exact(double v, char *buf, size_t len)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* Raw value for csv/json: numbers exact, text as is; NULL gives "". */
static void raw_cell(const struct wm_cell *c, char *buf, size_t len)
{
	if (c->type == DB_INT)
		snprintf(buf, len, "%lld", (long long)c->i);
	else if (c->type == DB_REAL)
		fmt_exact(c->r, buf, len);
	else if (c->type == DB_TEXT)
		snprintf(buf, len, "%s", c->s);
	else
		buf[0] = '\0';
}

/* End a cut text with "…" (UTF-8), not inside a multi-byte character. */
static void ellipsis(char *buf, size_t len)
{
	size_t end = len - 4;

	while (end > 0 && ((unsigned char)buf[end] & 0xC0) == 0x80)
		end--;
	memcpy(buf + end, "\xe2\x80\xa6", 4);
}

/* Value for a person. */
static void human_cell(const struct wm_cell *c, enum wm_kind k, char *buf, size_t len)
{
	double v = c->r;

	if (c->type == DB_NULL) {
		snprintf(buf, len, "-");
		return;
	}
	if (c->type == DB_TEXT) {
		if (k == K_TIME)
			wm_fmt_time(c->s, buf, len);
		else if ((size_t)snprintf(buf, len, "%s", c->s) >= len && len > 4)
			ellipsis(buf, len);
		return;
	}
	switch (k) {
	case K_BYTES: wm_fmt_bytes(v, buf, len); break;
	case K_MIBPS: snprintf(buf, len, "%.1f", v); break;
	case K_US: snprintf(buf, len, "%.0f", v); break;
	case K_SECONDS: snprintf(buf, len, "%.1f", v); break;
	case K_RATIO: snprintf(buf, len, "%.0f%%", v * 100); break;
	case K_INT: snprintf(buf, len, "%lld", (long long)c->i); break;
	case K_TEXT:
	case K_TIME: raw_cell(c, buf, len); break; /* a number where text was expected */
	}
}

/* ---- output ------------------------------------------------------------- */

static const struct wm_cell *cell_at(const struct wm_table *t, int row, int col)
{
	static const struct wm_cell null_cell = { DB_NULL, 0, 0, NULL };

	if (col < 0)
		return &null_cell;
	return &t->cells[(size_t)row * (size_t)t->ncols + (size_t)col];
}

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void wm_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void print_csv(FILE *f, const struct wm_table *t, const struct wm_col *cols, const int *idx,
		      int ncols)
{
	char buf[CELL_MAX];

	for (int c = 0; c < ncols; c++) {
		fputs(c ? "," : "", f);
		csv_field(f, cols[c].name);
	}
	fputc('\n', f);
	for (int r = 0; r < t->nrows; r++) {
		for (int c = 0; c < ncols; c++) {
			const struct wm_cell *cell = cell_at(t, r, idx[c]);

			fputs(c ? "," : "", f);
			if (cell->type == DB_TEXT) {
				csv_field(f, cell->s);
			} else {
				raw_cell(cell, buf, sizeof(buf));
				fputs(buf, f);
			}
		}
		fputc('\n', f);
	}
}

void wm_json_row(FILE *f, const struct wm_table *t, int r)
{
	char buf[CELL_MAX];

	fputc('{', f);
	for (int c = 0; c < t->ncols; c++) {
		const struct wm_cell *cell = cell_at(t, r, c);

		fputs(c ? ", " : "", f);
		wm_json_string(f, t->names[c]);
		fputs(": ", f);
		if (cell->type == DB_TEXT) {
			wm_json_string(f, cell->s);
		} else if (cell->type == DB_NULL || (cell->type == DB_REAL && !isfinite(cell->r))) {
			fputs("null", f);
		} else {
			raw_cell(cell, buf, sizeof(buf));
			fputs(buf, f);
		}
	}
	fputc('}', f);
}

void wm_json_rows(FILE *f, const struct wm_table *t)
{
	fputc('[', f);
	for (int r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n " : "\n ", f);
		wm_json_row(f, t, r);
	}
	fputs(t->nrows ? "\n]" : "]", f);
}

static void print_json(FILE *f, const struct wm_table *t, const struct wm_col *cols, const int *idx,
		       int ncols)
{
	char buf[CELL_MAX];

	fputc('[', f);
	for (int r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n {" : "\n {", f);
		for (int c = 0; c < ncols; c++) {
			const struct wm_cell *cell = cell_at(t, r, idx[c]);

			fputs(c ? ", " : "", f);
			wm_json_string(f, cols[c].name);
			fputs(": ", f);
			if (cell->type == DB_TEXT) {
				wm_json_string(f, cell->s);
			} else if (cell->type == DB_NULL ||
				   (cell->type == DB_REAL && !isfinite(cell->r))) {
				fputs("null", f);
			} else {
				raw_cell(cell, buf, sizeof(buf));
				fputs(buf, f);
			}
		}
		fputc('}', f);
	}
	fputs(t->nrows ? "\n]\n" : "]\n", f);
}

/* Text and numbers that read better left-aligned. */
static int left_aligned(enum wm_kind k)
{
	return k == K_TEXT || k == K_TIME;
}

/* Whether a quiet column says the same thing in every row. */
static int uniform(const struct wm_table *t, int col, enum wm_kind k)
{
	char first[CELL_MAX], buf[CELL_MAX];

	human_cell(cell_at(t, 0, col), k, first, sizeof(first));
	for (int r = 1; r < t->nrows; r++) {
		human_cell(cell_at(t, r, col), k, buf, sizeof(buf));
		if (strcmp(buf, first) != 0)
			return 0;
	}
	return 1;
}

static int print_table(FILE *f, const struct wm_table *t, const struct wm_col *cols, int *idx,
		       int ncols)
{
	size_t *w = calloc((size_t)ncols, sizeof(*w));
	char buf[CELL_MAX];
	int first = 1;

	if (!w)
		return WM_EXIT_ERROR;
	for (int c = 0; c < ncols; c++) {
		if (idx[c] >= 0 && cols[c].quiet && uniform(t, idx[c], cols[c].kind))
			idx[c] = -1;
		w[c] = strlen(cols[c].head);
	}
	for (int r = 0; r < t->nrows; r++)
		for (int c = 0; c < ncols; c++) {
			human_cell(cell_at(t, r, idx[c]), cols[c].kind, buf, sizeof(buf));
			if (strlen(buf) > w[c])
				w[c] = strlen(buf);
		}
	for (int r = -1; r < t->nrows; r++, first = 1) {
		for (int c = 0; c < ncols; c++) {
			int width = (int)w[c], last = c == ncols - 1;
			const char *s = buf;

			if (idx[c] < 0)
				continue; /* not in this schema, or says nothing */
			if (r < 0)
				s = cols[c].head;
			else if (last && cols[c].kind == K_TEXT &&
				 cell_at(t, r, idx[c])->type == DB_TEXT)
				s = cell_at(t, r, idx[c])->s; /* whole: nothing follows it */
			else
				human_cell(cell_at(t, r, idx[c]), cols[c].kind, buf, sizeof(buf));
			if (left_aligned(cols[c].kind))
				fprintf(f, "%s%-*s", first ? "" : "  ", last ? 0 : width, s);
			else
				fprintf(f, "%s%*s", first ? "" : "  ", width, s);
			first = 0;
		}
		fputc('\n', f);
	}
	free(w);
	return 0;
}

int wm_col(const struct wm_table *t, const char *name)
{
	for (int c = 0; c < t->ncols; c++)
		if (!strcmp(t->names[c], name))
			return c;
	return -1;
}

int wm_print(FILE *f, enum wm_format fmt, const struct wm_table *t, const struct wm_col *cols,
	     int ncols)
{
	int *idx = calloc((size_t)ncols + 1, sizeof(*idx));
	int ret = 0;

	if (!idx)
		return WM_EXIT_ERROR;
	for (int c = 0; c < ncols; c++)
		idx[c] = wm_col(t, cols[c].name);
	if (fmt == WM_CSV)
		print_csv(f, t, cols, idx, ncols);
	else if (fmt == WM_JSON)
		print_json(f, t, cols, idx, ncols);
	else
		ret = print_table(f, t, cols, idx, ncols);
	free(idx);
	return ret;
}
