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

#define CELL_MAX WM_CELL_MAX

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

char *wm_fmt_partial(const char *status, long long sizes, long long nsizes, char *buf, size_t len)
{
	if (nsizes > 0)
		snprintf(buf, len, "%s: %lld of %lld sizes", status, sizes, nsizes);
	else
		snprintf(buf, len, "%s: %lld sizes", status, sizes);
	return buf;
}

char *wm_fmt_duration(double s, char *buf, size_t len)
{
	return util_fmt_duration(s, buf, len); /* the daemon's terminal line's too */
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
static void raw_cell(const struct db_value *c, char *buf, size_t len)
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
static void human_cell(const struct db_value *c, enum wm_kind k, char *buf, size_t len)
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

static const struct db_value null_value = { .type = DB_NULL };

/* Value col of a row (NULL when the result has no such column). */
static const struct db_value *value_at(const struct db_value *v, int col)
{
	return col < 0 ? &null_value : &v[col];
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

/* A value as JSON: numbers exact, NULL and non-finite numbers null. */
static void json_value(FILE *f, const struct db_value *v)
{
	char buf[CELL_MAX];

	if (v->type == DB_TEXT) {
		wm_json_string(f, v->s);
	} else if (v->type == DB_NULL || (v->type == DB_REAL && !isfinite(v->r))) {
		fputs("null", f);
	} else {
		raw_cell(v, buf, sizeof(buf));
		fputs(buf, f);
	}
}

/* Row r of t as values (t's strings are borrowed). */
static void table_row(const struct wm_table *t, int r, struct db_value *v)
{
	for (int c = 0; c < t->ncols; c++) {
		const struct wm_cell *cell = &t->cells[(size_t)r * (size_t)t->ncols + (size_t)c];

		v[c] = (struct db_value){ cell->type, cell->i, cell->r, cell->s };
	}
}

/* A JSON object of n values named names (no newline after). */
static void json_object(FILE *f, int n, const struct db_value *v, const char *const *names)
{
	fputc('{', f);
	for (int c = 0; c < n; c++) {
		fputs(c ? ", " : "", f);
		wm_json_string(f, names[c]);
		fputs(": ", f);
		json_value(f, &v[c]);
	}
	fputc('}', f);
}

void wm_json_row(FILE *f, const struct wm_table *t, int r)
{
	struct db_value v[t->ncols + 1];

	table_row(t, r, v);
	json_object(f, t->ncols, v, (const char *const *)t->names);
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

/* Text and numbers that read better left-aligned. */
static int left_aligned(enum wm_kind k)
{
	return k == K_TEXT || k == K_TIME;
}

int wm_printer_init(struct wm_printer *p, FILE *f, enum wm_format fmt, const struct wm_col *cols,
		    int ncols)
{
	*p = (struct wm_printer){ .f = f, .fmt = fmt, .cols = cols, .ncols = ncols };
	p->idx = calloc((size_t)ncols + 1, sizeof(*p->idx));
	p->w = calloc((size_t)ncols + 1, sizeof(*p->w));
	p->first = calloc((size_t)ncols + 1, sizeof(*p->first));
	p->varies = calloc((size_t)ncols + 1, sizeof(*p->varies));
	if (!p->idx || !p->w || !p->first || !p->varies) {
		wm_printer_free(p);
		return -ENOMEM;
	}
	for (int c = 0; c < ncols; c++) {
		p->idx[c] = -1;
		p->w[c] = strlen(cols[c].head);
	}
	p->measuring = fmt == WM_TABLE;
	if (fmt == WM_CSV) {
		for (int c = 0; c < ncols; c++) {
			fputs(c ? "," : "", f);
			csv_field(f, cols[c].name);
		}
		fputc('\n', f);
	} else if (fmt == WM_JSON) {
		fputc('[', f);
	}
	return 0;
}

void wm_printer_free(struct wm_printer *p)
{
	free(p->idx);
	free(p->w);
	free(p->first);
	free(p->varies);
	p->idx = NULL;
	p->w = NULL;
	p->first = NULL;
	p->varies = NULL;
}

/* idx from the names of the result's columns. */
static void map_columns(struct wm_printer *p, int n, const char *const *names)
{
	for (int c = 0; c < p->ncols; c++) {
		p->idx[c] = -1;
		for (int k = 0; k < n; k++)
			if (!strcmp(names[k], p->cols[c].name)) {
				p->idx[c] = k;
				break;
			}
	}
	p->mapped = 1;
}

static void csv_row(struct wm_printer *p, const struct db_value *v)
{
	char buf[CELL_MAX];

	for (int c = 0; c < p->ncols; c++) {
		const struct db_value *cell = value_at(v, p->idx[c]);

		fputs(c ? "," : "", p->f);
		if (cell->type == DB_TEXT) {
			csv_field(p->f, cell->s);
		} else {
			raw_cell(cell, buf, sizeof(buf));
			fputs(buf, p->f);
		}
	}
	fputc('\n', p->f);
}

static void json_row(struct wm_printer *p, const struct db_value *v)
{
	fputs(p->rows ? ",\n {" : "\n {", p->f);
	for (int c = 0; c < p->ncols; c++) {
		fputs(c ? ", " : "", p->f);
		wm_json_string(p->f, p->cols[c].name);
		fputs(": ", p->f);
		json_value(p->f, value_at(v, p->idx[c]));
	}
	fputc('}', p->f);
}

/* Table, first pass: widths, and whether each quiet column says the same
 * in every row. */
static void measure_row(struct wm_printer *p, const struct db_value *v)
{
	char buf[CELL_MAX];

	for (int c = 0; c < p->ncols; c++) {
		human_cell(value_at(v, p->idx[c]), p->cols[c].kind, buf, sizeof(buf));
		if (strlen(buf) > p->w[c])
			p->w[c] = strlen(buf);
		if (p->rows == 0)
			memcpy(p->first[c], buf, sizeof(buf));
		else if (strcmp(buf, p->first[c]) != 0)
			p->varies[c] = 1;
	}
}

/* Table: one line, the header when v is NULL. */
static void table_line(struct wm_printer *p, const struct db_value *v)
{
	char buf[CELL_MAX];
	int first = 1;

	for (int c = 0; c < p->ncols; c++) {
		int width = (int)p->w[c], last = c == p->ncols - 1;
		const struct db_value *cell = value_at(v ? v : &null_value, v ? p->idx[c] : -1);
		const char *s = buf;

		if (p->idx[c] < 0)
			continue; /* not in this schema, or says nothing */
		if (!v)
			s = p->cols[c].head;
		else if (last && p->cols[c].kind == K_TEXT && cell->type == DB_TEXT)
			s = cell->s; /* whole: nothing follows it */
		else
			human_cell(cell, p->cols[c].kind, buf, sizeof(buf));
		if (left_aligned(p->cols[c].kind))
			fprintf(p->f, "%s%-*s", first ? "" : "  ", last ? 0 : width, s);
		else
			fprintf(p->f, "%s%*s", first ? "" : "  ", width, s);
		first = 0;
	}
	fputc('\n', p->f);
}

int wm_printer_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct wm_printer *p = arg;

	if (!p->mapped)
		map_columns(p, n, names);
	if (p->fmt == WM_CSV)
		csv_row(p, v);
	else if (p->fmt == WM_JSON)
		json_row(p, v);
	else if (p->measuring)
		measure_row(p, v);
	else if (p->rows < p->measured_rows)
		table_line(p, v);
	else
		return 1; /* rows that came after the measuring pass: not shown */
	p->rows++;
	return 0;
}

void wm_printer_measured(struct wm_printer *p)
{
	for (int c = 0; c < p->ncols; c++)
		if (p->idx[c] >= 0 && p->cols[c].quiet && !p->varies[c])
			p->idx[c] = -1;
	p->measuring = 0;
	p->measured_rows = p->rows;
	p->rows = 0;
	p->mapped = 1; /* keep the columns hidden now */
	table_line(p, NULL);
}

void wm_printer_end(struct wm_printer *p)
{
	if (p->fmt == WM_JSON)
		fputs(p->rows ? "\n]\n" : "]\n", p->f);
	wm_printer_free(p);
}

int wm_print(FILE *f, enum wm_format fmt, const struct wm_table *t, const struct wm_col *cols,
	     int ncols)
{
	struct db_value v[t->ncols + 1];
	struct wm_printer p;
	int passes = fmt == WM_TABLE ? 2 : 1;

	if (wm_printer_init(&p, f, fmt, cols, ncols))
		return WM_EXIT_ERROR;
	map_columns(&p, t->ncols, (const char *const *)t->names);
	for (int pass = 0; pass < passes; pass++) {
		if (pass == 1)
			wm_printer_measured(&p);
		for (int r = 0; r < t->nrows; r++) {
			table_row(t, r, v);
			wm_printer_row(&p, t->ncols, v, (const char *const *)t->names);
		}
	}
	wm_printer_end(&p);
	return 0;
}
