/* wearmon_table: rows fetched whole into a table (for commands that need
 * them together: one iteration's samples, one target's status) and typed
 * access to their cells. Calls nothing else of the tool. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wearmon.h"

void wm_table_free(struct wm_table *t)
{
	for (int k = 0; k < t->nrows * t->ncols; k++)
		free(t->cells[k].s);
	for (int c = 0; c < t->ncols; c++)
		free(t->names[c]);
	free(t->cells);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

static int add_names(struct wm_table *t, int n, const char *const *names)
{
	t->names = calloc((size_t)n + 1, sizeof(*t->names));
	if (!t->names)
		return -ENOMEM;
	t->ncols = n;
	for (int c = 0; c < n; c++)
		if (!(t->names[c] = strdup(names[c])))
			return -ENOMEM;
	return 0;
}

int wm_add_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct wm_table *t = arg;
	struct wm_cell *row;

	if (!t->names && add_names(t, n, names))
		return -ENOMEM;
	if (t->nrows == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		struct wm_cell *nc = realloc(t->cells, (size_t)cap * (size_t)n * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		t->cells = nc;
		t->cap = cap;
	}
	row = &t->cells[(size_t)t->nrows * (size_t)n];
	for (int c = 0; c < n; c++) {
		row[c] = (struct wm_cell){ v[c].type, v[c].i, v[c].r, NULL };
		if (v[c].type == DB_TEXT && !(row[c].s = strdup(v[c].s))) {
			for (int k = 0; k < c; k++)
				free(row[k].s);
			return -ENOMEM;
		}
	}
	t->nrows++;
	return 0;
}

int wm_col(const struct wm_table *t, const char *name)
{
	for (int c = 0; c < t->ncols; c++)
		if (!strcmp(t->names[c], name))
			return c;
	return -1;
}

const struct wm_cell *wm_cell(const struct wm_table *t, int row, const char *name)
{
	static const struct wm_cell null_cell = { DB_NULL, 0, 0, NULL };
	int c = wm_col(t, name);

	if (c < 0 || row < 0 || row >= t->nrows)
		return &null_cell;
	return &t->cells[(size_t)row * (size_t)t->ncols + (size_t)c];
}

double wm_num(const struct wm_table *t, int row, const char *name)
{
	const struct wm_cell *c = wm_cell(t, row, name);

	return c->type == DB_INT || c->type == DB_REAL ? c->r : NAN;
}

int64_t wm_int(const struct wm_table *t, int row, const char *name, int64_t def)
{
	const struct wm_cell *c = wm_cell(t, row, name);

	return c->type == DB_INT || c->type == DB_REAL ? c->i : def;
}

const char *wm_str(const struct wm_table *t, int row, const char *name)
{
	const struct wm_cell *c = wm_cell(t, row, name);

	return c->type == DB_TEXT ? c->s : NULL;
}
