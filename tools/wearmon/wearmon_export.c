/* wearmon_export: "wearmon export NAME": every row and column of one table
 * or view of the history as CSV or JSON, for pandas, R or a spreadsheet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "wearmon.h"

/* The tables and views a user may export (SQLite's own are left out). */
static const char names_sql[] =
	"SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')"
	" AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, name";

/* Whether name is one of them; prints the list otherwise. Returns 0 or
 * WM_EXIT_ERROR. */
static int check_name(struct wm *wm, const char *name)
{
	struct wm_table t = { 0 };
	int ret = wm_fetch(wm, &t, names_sql, NULL, 0);

	if (ret)
		return ret;
	for (int r = 0; r < t.nrows; r++)
		if (!strcmp(wm_str(&t, r, "name"), name))
			goto out;
	fprintf(stderr, "wearmon: export: %s has no table or view named '%s'; it has:", wm->db_path,
		name);
	for (int r = 0; r < t.nrows; r++)
		fprintf(stderr, "%s%s", r ? ", " : " ", wm_str(&t, r, "name"));
	fputc('\n', stderr);
	ret = WM_EXIT_ERROR;
out:
	wm_table_free(&t);
	return ret;
}

/* Every column of name, raw. Returns 0 or WM_EXIT_ERROR. */
static int export(struct wm *wm, const char *name, enum wm_format fmt, FILE *out)
{
	struct wm_table names = { 0 }, rows = { 0 };
	struct wm_col *cols = NULL;
	char *sql = NULL;
	int ret = wm_columns(wm, name, &names);

	if (ret)
		return ret;
	cols = calloc((size_t)names.nrows + 1, sizeof(*cols));
	if (!cols || asprintf(&sql, "SELECT * FROM \"%s\"", name) < 0) {
		sql = NULL;
		wm_err("out of memory");
		ret = WM_EXIT_ERROR;
		goto out;
	}
	for (int r = 0; r < names.nrows; r++)
		cols[r] = (struct wm_col){ wm_str(&names, r, "name"), "", K_TEXT, 0 };
	ret = wm_fetch(wm, &rows, sql, NULL, 0);
	if (!ret)
		ret = wm_print(out, fmt, &rows, cols, names.nrows);
out:
	free(sql);
	free(cols);
	wm_table_free(&rows);
	wm_table_free(&names);
	return ret;
}

int wm_cmd_export(struct wm *wm, int argc, char **argv)
{
	struct wm_args a;
	FILE *out = stdout;
	int ret = wm_parse_args(wm, argc, argv, "fo", &a);

	if (ret >= 0)
		return ret;
	if (a.npos == 0)
		return wm_usage_error("export: missing TABLE or VIEW (history, cycle_summary, "
				      "samples, ...)");
	if (a.npos > 1)
		return wm_usage_error("export: unexpected argument '%s' (one TABLE or VIEW)",
				      a.pos[1]);
	if (a.format == WM_TABLE && a.format_given)
		return wm_usage_error("export: --format is csv or json");
	if (!a.format_given)
		a.format = WM_CSV;
	if ((ret = wm_open(wm)) || (ret = check_name(wm, a.pos[0])))
		return ret;
	if (a.output && !(out = fopen(a.output, "we"))) {
		wm_err("export: cannot write %s: %s", a.output, strerror(errno));
		return WM_EXIT_ERROR;
	}
	ret = export(wm, a.pos[0], a.format, out);
	if (out != stdout && fclose(out) && !ret) {
		wm_err("export: writing %s failed: %s", a.output, strerror(errno));
		ret = WM_EXIT_ERROR;
	}
	return ret;
}
