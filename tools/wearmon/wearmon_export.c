/* wearmon_export: "wearmon export NAME": every row and column of one table
 * or view of the history as CSV or JSON, for pandas, R or a spreadsheet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "wearmon.h"

/* Whether name is one of the tables and views a user may export; prints
 * the list otherwise. Returns 0 or WM_EXIT_ERROR. */
static int check_name(struct wm *wm, const char *name)
{
	struct wm_table t = { 0 };
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret =
		wm_result(wm, query_export_names(wm->db, wm_rows(&sk, &t, err, sizeof(err))), err);

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

/* How the rows of a table or view with these columns belong to a target:
 * by target_id, else by the target's name, else through iteration_id. */
static enum query_target_key target_key(const struct wm_table *names)
{
	enum query_target_key k = QUERY_TARGET_NONE;

	for (int r = 0; r < names->nrows; r++) {
		const char *c = wm_str(names, r, "name");

		if (c && !strcmp(c, "target_id"))
			return QUERY_TARGET_ID;
		/* a view's rows without an iteration (alerts) still name it */
		if (c && !strcmp(c, "target"))
			k = QUERY_TARGET_NAME;
		if (c && !strcmp(c, "iteration_id") && k == QUERY_TARGET_NONE)
			k = QUERY_TARGET_ITERATION;
	}
	return k;
}

/* Every column of name, raw, each row printed as it comes (memory does
 * not grow with the rows); only target's rows when target is not NULL.
 * Returns 0 or WM_EXIT_ERROR. */
static int export(struct wm *wm, const char *name, const char *target, enum wm_format fmt,
		  FILE *out)
{
	struct wm_table names = { 0 };
	struct wm_col *cols = NULL;
	struct wm_printer p;
	char err[WM_ERR_MAX] = "";
	struct query_sink sk = { wm_printer_row, &p, err, sizeof(err) };
	int ret = wm_columns(wm, name, &names);

	if (ret)
		return ret;
	cols = calloc((size_t)names.nrows + 1, sizeof(*cols));
	for (int r = 0; cols && r < names.nrows; r++)
		cols[r] = (struct wm_col){ wm_str(&names, r, "name"), "", K_TEXT, 0 };
	if (!cols || wm_printer_init(&p, out, fmt, cols, names.nrows)) {
		wm_err("out of memory");
		ret = WM_EXIT_ERROR;
		goto out;
	}
	if (target)
		ret = wm_result(
			wm, query_export_target_rows(wm->db, name, target_key(&names), target, &sk),
			err);
	else
		ret = wm_result(wm, query_export_rows(wm->db, name, &sk), err);
	wm_printer_end(&p);
out:
	free(cols);
	wm_table_free(&names);
	return ret;
}

int wm_cmd_export(struct wm *wm, int argc, char **argv)
{
	struct wm_args a;
	FILE *out = stdout;
	int64_t tid;
	int ret = wm_parse_args(wm, argc, argv, "tfo", &a);

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
	if ((ret = wm_open(wm)) || (ret = check_name(wm, a.pos[0])) ||
	    (a.target && (ret = wm_target_id(wm, a.target, &tid))))
		return ret;
	if (a.output && !(out = fopen(a.output, "we"))) {
		wm_err("export: cannot write %s: %s", a.output, strerror(errno));
		return WM_EXIT_ERROR;
	}
	ret = export(wm, a.pos[0], a.target, a.format, out);
	if (out != stdout && fclose(out) && !ret) {
		wm_err("export: writing %s failed: %s", a.output, strerror(errno));
		ret = WM_EXIT_ERROR;
	}
	return ret;
}
