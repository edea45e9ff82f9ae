/* wearmon: the command-line reader of wearmond's history. Shared pieces of
 * the tool: the read-only database session, fetched result tables, output
 * formats, time and number formatting, the subcommands. Never writes the
 * database it reads (merge writes only its OUT.db). */
#ifndef WEARMON_TOOL_H
#define WEARMON_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "db/db.h"
#include "db/query/query.h"
#include "db/query/query_named.h"

/* Exit statuses (documented in wearmon(1)). */
#define WM_EXIT_OK 0
#define WM_EXIT_ERROR 1
#define WM_EXIT_USAGE 2
#define WM_EXIT_DAMAGED 3 /* check: the database is damaged */

#define WM_DEFAULT_DB "/var/lib/wearmon/wearmon.db"
#define WM_NO_ITERATIONS "no iterations yet"

/* A read-only session on one database. */
struct wm {
	const char *db_path;
	struct db *db;
	int64_t cycle_lo, cycle_hi; /* charts: only these cycles (0, 0: all) */
	struct query_schema sc;     /* the database's schema facts, */
	int have_sc;                /* once wm_schema has read them */
};

/* One fetched value; s is owned by the table. */
struct wm_cell {
	enum db_type type;
	int64_t i;
	double r;
	char *s;
};

/* All rows of one query, owned (valid after the query ended). */
struct wm_table {
	int ncols, nrows, cap;
	char **names;
	struct wm_cell *cells; /* nrows * ncols, row-major */
};

enum wm_format { WM_TABLE, WM_CSV, WM_JSON };

#define WM_CELL_MAX 128 /* longest text of a table cell */

/* How a column prints: raw values in csv/json, formatted in a table. */
enum wm_kind {
	K_TEXT,    /* as is */
	K_INT,     /* integer */
	K_BYTES,   /* table: "16.0 MiB" */
	K_MIBPS,   /* table: one decimal */
	K_US,      /* table: whole microseconds */
	K_SECONDS, /* table: one decimal */
	K_RATIO,   /* table: percent, "59%" */
	K_TIME,    /* table: "2026-12-02 14:36:23" (UTC) */
};

/* A printed column: name = result column (and csv/json key). A table
 * leaves out columns the result lacks (older schema) and, when quiet, a
 * column holding the same value in every row. */
struct wm_col {
	const char *name;
	const char *head; /* table header */
	enum wm_kind kind;
	int quiet;
};

/* Parameters for wm_fetch: compound literals. */
#define WM_INT(v) ((struct db_value){ .type = DB_INT, .i = (v) })
#define WM_TEXT(v) ((struct db_value){ .type = (v) ? DB_TEXT : DB_NULL, .s = (v) })
/* A text known not to be NULL (a literal): no test that is always true. */
#define WM_STR(v) ((struct db_value){ .type = DB_TEXT, .s = (v) })
#define WM_NULLV ((struct db_value){ .type = DB_NULL })

#define WM_MAX_RENAMES 64 /* --rename options of one merge */

/* Options of the subcommands; each accepts a subset. */
struct wm_args {
	const char *target;                 /* --target T */
	int64_t cycle;                      /* --cycle N (0: not given) */
	char since[40];                     /* --since TIME as ISO text ("" not given) */
	enum wm_format format;              /* --format */
	int format_given;                   /* --format was on the command line */
	int64_t iteration;                  /* --iteration ID (0: not given) */
	const char *kind;                   /* --kind */
	const char *sort;                   /* --sort COLUMN (history) */
	const char *output;                 /* -o FILE */
	int64_t campaign;                   /* --campaign N (0: not given) */
	const char *rename[WM_MAX_RENAMES]; /* --rename IN.db=HOST (merge) */
	int nrename;                        /* how many */
	char **pos;                         /* positional arguments */
	int npos;
};

/* ---- fetched tables (wearmon_table.c) ---- */

/* db_row_fn: appends the row to the struct wm_table arg (whose names come
 * from the first row). Returns 0 or -ENOMEM. */
int wm_add_row(void *arg, int n, const struct db_value *v, const char *const *names);

/* Run the named query q (common/db/query/) with params into t (emptied
 * first). Returns 0 or WM_EXIT_ERROR (message printed). */
int wm_fetch_named(struct wm *wm, struct wm_table *t, const struct query_named *q,
		   const struct db_value *p, int np);

/* The database's schema facts, read at the first call (the named queries
 * choose their SQL by them). NULL: not readable (message printed). */
const struct query_schema *wm_schema(struct wm *wm);

/* With WEARMON_VM_STEPS set in the environment, print to stderr the SQLite
 * VM steps the command's reads took (tests compare work, not time). */
void wm_report_steps(struct wm *wm);

/* Free a table's rows and names (the struct itself is the caller's). */
void wm_table_free(struct wm_table *t);

/* Column index of name, or -1. */
int wm_col(const struct wm_table *t, const char *name);

/* Cell of row and column name (NULL cell when the column is unknown). */
const struct wm_cell *wm_cell(const struct wm_table *t, int row, const char *name);

/* Number of a cell; NAN when NULL or text. */
double wm_num(const struct wm_table *t, int row, const char *name);

/* Integer of a cell; def when NULL. */
int64_t wm_int(const struct wm_table *t, int row, const char *name, int64_t def);

/* Text of a cell; NULL when NULL (numbers are not converted). */
const char *wm_str(const struct wm_table *t, int row, const char *name);

/* ---- session (wearmon_session.c) ---- */

#define WM_ERR_MAX 1024 /* room for a query's error message */

/* The usage text of the tool. */
void wm_usage(FILE *f);

/* The usage of one command (its --help): what it prints and what each of
 * its columns means; the global usage for an unknown one. */
void wm_command_usage(FILE *f, const char *cmd);

/* Parse a subcommand's options (argv[0] is its name); allowed lists the
 * short letters it takes ("tcsf" ...; -d and -h always). Returns -1 to go
 * on, or an exit status (usage error, or 0 after --help). */
int wm_parse_args(struct wm *wm, int argc, char **argv, const char *allowed, struct wm_args *a);

/* Open wm->db_path read-only with a clear message on failure.
 * Returns 0 or WM_EXIT_ERROR (message printed). */
int wm_open(struct wm *wm);

/* The exit status of a query's result ret (0, or -errno with err): prints
 * the error. Returns 0 or WM_EXIT_ERROR. */
int wm_result(const struct wm *wm, int ret, const char *err);

/* Makes s a sink that collects rows into t (emptied first), its error in
 * err. Returns s. */
const struct query_sink *wm_rows(struct query_sink *s, struct wm_table *t, char *err,
				 size_t errlen);

/* Id of the target named name into *id. Returns 0 or WM_EXIT_ERROR with a
 * message listing the known targets. */
int wm_target_id(struct wm *wm, const char *name, int64_t *id);

/* Whether the database holds any iteration. Returns 1, 0 or -1 (error,
 * printed). */
int wm_has_iterations(struct wm *wm);

/* Whether table has column (later schema versions add some). Returns 1,
 * 0 or -1 (error, printed). */
int wm_has_column(struct wm *wm, const char *table, const char *column);

/* Names of the columns of table into t (one row each, column "name").
 * Returns 0 or WM_EXIT_ERROR. */
int wm_columns(struct wm *wm, const char *table, struct wm_table *t);

/* Print "wearmon: " and a message to stderr. */
void wm_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print a usage error (and the hint to --help). Returns WM_EXIT_USAGE. */
int wm_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- parsing and formatting (wearmon_out.c) ---- */

/* --since TIME into ISO-8601 UTC text comparable with the database's times.
 * Accepts dates/times (UTC), "today", "yesterday" and ages ("12h", "7d").
 * Returns 0 or -EINVAL. */
int wm_parse_since(const char *s, time_t now, char *out, size_t len);

/* --format NAME. Returns 0 or -EINVAL. */
int wm_parse_format(const char *s, enum wm_format *out);

/* A positive integer argument. Returns 0 or -EINVAL. */
int wm_parse_id(const char *s, int64_t *out);

/* ISO time text to seconds since the epoch (fractional); NAN when bad. */
double wm_time_of(const char *iso);

/* "2026-12-02 14:36:23" from ISO text into buf. Returns buf. */
char *wm_fmt_time(const char *iso, char *buf, size_t len);

/* "16.0 MiB" / "1.50 GiB". Returns buf. */
char *wm_fmt_bytes(double bytes, char *buf, size_t len);

/* What a cycle not done reached: "interrupted: 2 of 4 sizes" (nsizes <= 0
 * unknown: "interrupted: 2 sizes"), the words of the report and the charts
 * for a partial cycle. Returns buf. */
char *wm_fmt_partial(const char *status, long long sizes, long long nsizes, char *buf, size_t len);

/* "45 s", "12 min", "3.2 h", "2.1 d". Returns buf. */
char *wm_fmt_duration(double seconds, char *buf, size_t len);

/* Rows printed as they come, so memory does not grow with them: csv and
 * json at once; a table needs every row's width first, so its rows come
 * twice: all of them (measuring), wm_printer_measured, then the same rows
 * again (printed; rows beyond the measured count stop the query). */
struct wm_printer {
	FILE *f;
	enum wm_format fmt;
	const struct wm_col *cols;
	int ncols;
	int *idx;                   /* result column of each column; -1: none */
	int mapped;                 /* idx set (from the first row's names) */
	int measuring;              /* table: the first pass */
	long rows;                  /* rows seen in this pass */
	long measured_rows;         /* table: rows of the first pass */
	size_t *w;                  /* table: column widths */
	char (*first)[WM_CELL_MAX]; /* table: the first row's text of each column */
	char *varies;               /* table: a column's text is not the same in every row */
};

/* Start printing with cols; prints the csv header or json's "[".
 * Returns 0 or -ENOMEM. */
int wm_printer_init(struct wm_printer *p, FILE *f, enum wm_format fmt, const struct wm_col *cols,
		    int ncols);

/* db_row_fn of a wm_printer: one row. Returns 0, or 1 to stop (a table's
 * row that the measuring pass did not see). */
int wm_printer_row(void *arg, int n, const struct db_value *v, const char *const *names);

/* Table: the measuring pass is over; prints the header. */
void wm_printer_measured(struct wm_printer *p);

/* Ends the output (json's "]") and frees p. */
void wm_printer_end(struct wm_printer *p);

/* Frees p without ending the output. */
void wm_printer_free(struct wm_printer *p);

/* Print rows of t in the chosen format with the given columns.
 * Returns 0 or WM_EXIT_ERROR. */
int wm_print(FILE *f, enum wm_format fmt, const struct wm_table *t, const struct wm_col *cols,
	     int ncols);

/* Row r of t as a JSON object, every column (numbers exact, NULL null). */
void wm_json_row(FILE *f, const struct wm_table *t, int r);

/* Every row of t as a JSON array of such objects (no newline after). */
void wm_json_rows(FILE *f, const struct wm_table *t);

/* A string as a JSON string literal. */
void wm_json_string(FILE *f, const char *s);

/* ---- charts (wearmon_svg.c) ---- */

/* One line (or set of dots) of a chart; NAN points leave a gap. Each
 * series gets its own colour, marker shape and dash pattern, so series
 * stay apart in greyscale and for colour-blind readers. */
struct chart_series {
	const char *label;
	const double *x, *y;
	size_t n;
	int lines;         /* 1: join the points; 0: dots only */
	int style;         /* marker and dash: 0 by position, else style - 1 */
	const char *color; /* NULL: from the palette */
};

/* A reference line: vertical at x = at (an action), or horizontal at y.
 * Vertical labels sit in a strip above the plot, horizontal ones in the
 * legend: never on the data. */
struct chart_mark {
	int vertical;
	double at;
	const char *label;  /* NULL: none */
	const char *color;  /* NULL: grey */
	const char *dash;   /* stroke-dasharray, NULL: the default */
	const char *legend; /* vertical: the legend entry the marks with
				       * this text share; NULL: marks_legend's */
};

/* A shaded area between lo and hi (n = 0: none). */
struct chart_band {
	const double *x, *lo, *hi;
	size_t n;
	const char *color;
};

struct chart {
	const char *title, *subtitle, *xlabel, *ylabel;
	const struct chart_series *series;
	size_t nseries;
	const struct chart_mark *marks;
	size_t nmarks;
	const char *marks_legend; /* legend of the vertical marks without their own */
	const char *band_legend;  /* legend text for the band, NULL: none */
	struct chart_band band;
	int x_integer;      /* whole-number x (cycles): ticks on integers */
	int x_from_zero;    /* x axis starts at 0 */
	int ordered;        /* many series get a colour ramp, not a palette */
	int y_log;          /* logarithmic y axis (values <= 0 sit on its floor) */
	int break_at_marks; /* lines do not cross a vertical mark */
	int fragment;       /* no XML declaration: for inlining in HTML */
};

/* Colour i of the charts' palette (Okabe-Ito), cycling. */
const char *chart_palette(size_t i);

/* Write c as an SVG document (or fragment). The y axis starts at 0 unless
 * logarithmic. Returns 0 or -1 when the stream failed or memory
 * ran out. */
int chart_svg(FILE *f, const struct chart *c);

/* Whether two positive averages differ enough (10x) that one linear axis
 * squashes the smaller: the samples chart then goes logarithmic. */
int chart_wants_log(double a, double b);

/* Write s with XML/HTML special characters escaped. */
void wm_xml_text(FILE *f, const char *s);

/* ---- charts of a target (wearmon_plot.c), shared with the report ---- */

/* Draw chart kind ("sizes", "cycles", "samples", "wear", "latency") of
 * target tid (iteration it for samples) to f; fragment: inline SVG for
 * HTML. Returns 0, 1 when there is nothing to draw, or WM_EXIT_ERROR. */
int wm_plot_draw(struct wm *wm, FILE *f, const char *kind, int64_t tid, int64_t it, int fragment);

/* ---- subcommands: each parses its own options, returns an exit status ---- */

int wm_cmd_status(struct wm *wm, int argc, char **argv);
int wm_cmd_history(struct wm *wm, int argc, char **argv);
int wm_cmd_show(struct wm *wm, int argc, char **argv);

/* The host idle recovery of target tid's cycle, for show: printed, or as
 * one JSON object. Returns 0 or WM_EXIT_ERROR (wearmon_hir.c). */
int wm_show_hir(struct wm *wm, int64_t tid, int64_t cycle);
int wm_show_hir_json(struct wm *wm, int64_t tid, int64_t cycle);

/* ---- the endurance forecast (wearmon_endurance.c) ---- */

/* The forecast of scope (common/db/query/query.h: query_forecast) into *f,
 * with the snapshots it read when readings is not NULL (the caller frees
 * them). Returns 0 or WM_EXIT_ERROR (message printed). */
int wm_forecast(struct wm *wm, const struct query_forecast_scope *scope, struct eol_forecast *f,
		struct eol_reading **readings, size_t *n);

/* The wall clock, seconds since the epoch: "now" of a forecast's days left. */
double wm_wall_now(void);

/* The forecast as status prints it (the sentence, then the figures), or
 * as one JSON object (no newline after), as now sees it. */
void wm_endurance_print(const struct eol_forecast *f, double now);
void wm_endurance_json(FILE *out, const struct eol_forecast *f, double now);

/* show: the forecast of the iteration in row 0 of t as it stood at the
 * iteration's end, printed or (json) as one JSON object. Returns 0 or
 * WM_EXIT_ERROR. */
int wm_show_endurance(struct wm *wm, const struct wm_table *t, int json);
int wm_cmd_alerts(struct wm *wm, int argc, char **argv);
int wm_cmd_plot(struct wm *wm, int argc, char **argv);
int wm_cmd_export(struct wm *wm, int argc, char **argv);
int wm_cmd_merge(struct wm *wm, int argc, char **argv);
int wm_cmd_check(struct wm *wm, int argc, char **argv);
int wm_cmd_report(struct wm *wm, int argc, char **argv);

#endif
