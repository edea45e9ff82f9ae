/* wearmon: read wearmond's history: entry point, option parsing, the
 * read-only database session and fetched result tables. The subcommands
 * live in wearmon_status.c, wearmon_cmd.c and wearmon_plot.c. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/util.h"
#include "wearmon.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: wearmon [-d DB] COMMAND [OPTIONS]\n"
		   "Read the history that wearmond records (read-only; safe while it runs).\n"
		   "\n"
		   "Commands:\n"
		   "  status [--target T] [--format table|json]\n"
		   "                              what each target is doing now\n"
		   "  history [--target T] [--cycle N] [--since TIME] [--format table|csv|json]\n"
		   "                              one row per iteration\n"
		   "  show ITERATION [--format table|json]\n"
		   "                              everything about one iteration (its ID)\n"
		   "  alerts [--target T] [--since TIME] [--format table|csv|json]\n"
		   "                              alerts: severity notice and above\n"
		   "  plot --kind sizes|cycles|samples|wear|latency -o FILE.svg\n"
		   "       [--target T[,T...]]    draw an SVG chart (samples needs --iteration;\n"
		   "       [--iteration ID]       latency with one: over time; several targets\n"
		   "                              in one chart: --target a,b)\n"
		   "  report -o FILE.html [--target T] [--campaign N]\n"
		   "                              one self-contained HTML report of a campaign\n"
		   "  export TABLE|VIEW [--format csv|json] [-o FILE]\n"
		   "                              every row of a table or view (default csv)\n"
		   "  merge -o OUT.db IN.db...    gather many machines' databases into OUT.db\n"
		   "                              (targets become HOST/NAME; the only command\n"
		   "       [--rename IN.db=HOST]  that writes, and only OUT.db, never a daemon's;\n"
		   "                              --rename: IN.db's targets as HOST/NAME)\n"
		   "  check                       read the whole database file once: is it\n"
		   "                              damaged? (PRAGMA integrity_check)\n"
		   "\n"
		   "Options (also accepted after COMMAND):\n"
		   "  -d, --database DB  history file (default " WM_DEFAULT_DB ")\n"
		   "  -h, --help         this text\n"
		   "  -V, --version      print the version\n"
		   "\n"
		   "TIME is UTC: 2026-12-01, 2026-12-01T08:00[:SS[.mmm]][Z], today, yesterday,\n"
		   "or an age such as 90m, 12h, 7d.\n"
		   "Exit status: 0 success (also when there is nothing to show yet),\n"
		   "1 runtime error (database missing or unreadable, no such target or\n"
		   "iteration), 2 usage error, 3 check found the database damaged.\n"
		   "See wearmon(1).\n");
}

void wm_err(const char *fmt, ...)
{
	va_list ap;

	fputs("wearmon: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int wm_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("wearmon: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'wearmon --help'.\n", stderr);
	return WM_EXIT_USAGE;
}

/* ---- the session -------------------------------------------------------- */

int wm_open(struct wm *wm)
{
	char err[1024];
	struct stat st;
	int ret;

	if (stat(wm->db_path, &st) != 0) {
		if (errno == ENOENT)
			wm_err("database %s does not exist (wearmond creates it; "
			       "choose another with -d DB)",
			       wm->db_path);
		else
			wm_err("database %s: %s", wm->db_path, strerror(errno));
		return WM_EXIT_ERROR;
	}
	if (S_ISDIR(st.st_mode)) {
		wm_err("database %s is a directory, not a file", wm->db_path);
		return WM_EXIT_ERROR;
	}
	ret = db_open(wm->db_path, 1, &wm->db, err, sizeof(err));
	if (ret) {
		wm_err("%s", err);
		return WM_EXIT_ERROR;
	}
	return 0;
}

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

/* db_query callback: copies one row into the table. */
static int add_row(void *arg, int n, const struct db_value *v, const char *const *names)
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

int wm_fetch(struct wm *wm, struct wm_table *t, const char *sql, const struct db_value *p, int np)
{
	char err[1024] = "";
	int ret;

	wm_table_free(t);
	ret = db_query(wm->db, sql, p, np, add_row, t, err, sizeof(err));
	if (ret == -ENOMEM)
		wm_err("out of memory reading %s", wm->db_path);
	else if (ret)
		wm_err("%s", err[0] ? err : strerror(-ret));
	return ret ? WM_EXIT_ERROR : 0;
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

int wm_target_id(struct wm *wm, const char *name, int64_t *id)
{
	struct wm_table t = { 0 };
	int ret = wm_fetch(wm, &t,
			   "SELECT id, (SELECT group_concat(name, ', ') FROM"
			   " (SELECT name FROM targets ORDER BY name)) AS known"
			   " FROM (SELECT 1) LEFT JOIN targets ON name = ?",
			   (struct db_value[]){ WM_TEXT(name) }, 1);

	if (ret)
		return ret;
	if (wm_cell(&t, 0, "id")->type == DB_NULL) {
		const char *known = wm_str(&t, 0, "known");

		wm_err("no target named '%s' in %s (%s%s)", name, wm->db_path,
		       known ? "targets: " : "it has no targets yet", known ? known : "");
		ret = WM_EXIT_ERROR;
	} else {
		*id = wm_int(&t, 0, "id", 0);
	}
	wm_table_free(&t);
	return ret;
}

int wm_has_iterations(struct wm *wm)
{
	struct wm_table t = { 0 };
	int ret = wm_fetch(wm, &t, "SELECT EXISTS (SELECT 1 FROM iterations) AS any", NULL, 0);

	if (ret)
		return -1;
	ret = wm_int(&t, 0, "any", 0) ? 1 : 0;
	wm_table_free(&t);
	return ret;
}

int wm_columns(struct wm *wm, const char *table, struct wm_table *t)
{
	return wm_fetch(wm, t, "SELECT name FROM pragma_table_info(?) ORDER BY cid",
			(struct db_value[]){ WM_TEXT(table) }, 1);
}

int wm_has_column(struct wm *wm, const char *table, const char *column)
{
	struct wm_table t = { 0 };
	int ret = wm_fetch(wm, &t,
			   "SELECT count(*) AS n FROM pragma_table_info(?)"
			   " WHERE name = ?",
			   (struct db_value[]){ WM_TEXT(table), WM_TEXT(column) }, 2);

	if (ret)
		return -1;
	ret = wm_int(&t, 0, "n", 0) > 0;
	wm_table_free(&t);
	return ret;
}

/* ---- subcommand options ------------------------------------------------- */

/* Checks and stores one option value. Returns -1 or WM_EXIT_USAGE. */
static int set_arg(const char *cmd, int ch, const char *val, struct wm_args *a)
{
	switch (ch) {
	case 't': a->target = val; break;
	case 'c':
		if (wm_parse_id(val, &a->cycle))
			return wm_usage_error("%s: --cycle wants a cycle number >= 1, not '%s'",
					      cmd, val);
		break;
	case 's':
		if (wm_parse_since(val, time(NULL), a->since, sizeof(a->since)))
			return wm_usage_error("%s: --since: cannot read '%s' as a time "
					      "(2026-12-01, 2026-12-01T08:00Z, today, 12h, 7d)",
					      cmd, val);
		break;
	case 'f':
		if (wm_parse_format(val, &a->format))
			return wm_usage_error("%s: --format is table, csv or json, not '%s'", cmd,
					      val);
		a->format_given = 1;
		break;
	case 'i':
		if (wm_parse_id(val, &a->iteration))
			return wm_usage_error("%s: --iteration wants an iteration ID, not '%s'",
					      cmd, val);
		break;
	case 'k': a->kind = val; break;
	case 'o': a->output = val; break;
	case 'r':
		if (a->nrename >= WM_MAX_RENAMES)
			return wm_usage_error("%s: more than %d --rename", cmd, WM_MAX_RENAMES);
		a->rename[a->nrename++] = val;
		break;
	case 'n':
		if (wm_parse_id(val, &a->campaign))
			return wm_usage_error(
				"%s: --campaign wants a campaign number >= 1, not '%s'", cmd, val);
		break;
	}
	return -1;
}

int wm_parse_args(struct wm *wm, int argc, char **argv, const char *allowed, struct wm_args *a)
{
	static const struct option longopts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "cycle", required_argument, NULL, 'c' },
		{ "since", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "iteration", required_argument, NULL, 'i' },
		{ "kind", required_argument, NULL, 'k' },
		{ "output", required_argument, NULL, 'o' },
		{ "campaign", required_argument, NULL, 'n' },
		{ "rename", required_argument, NULL, 'r' },
		{ "database", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0];
	int ch, ret;

	memset(a, 0, sizeof(*a));
	optind = 0; /* glibc: start afresh on the new argv */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":t:c:s:f:i:k:o:n:r:d:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return WM_EXIT_OK;
		}
		if (ch == ':')
			return wm_usage_error("%s: option '%s' needs an argument", cmd,
					      argv[optind - 1]);
		if (ch == '?' || (ch != 'd' && !strchr(allowed, ch)))
			return wm_usage_error("%s: unknown option '%s'", cmd, argv[optind - 1]);
		if (ch == 'd')
			wm->db_path = optarg;
		else if ((ret = set_arg(cmd, ch, optarg, a)) >= 0)
			return ret;
	}
	a->pos = argv + optind;
	a->npos = argc - optind;
	return -1;
}

/* ---- entry -------------------------------------------------------------- */

struct command {
	const char *name;
	int (*run)(struct wm *wm, int argc, char **argv);
};

static const struct command commands[] = {
	{ "status", wm_cmd_status }, { "history", wm_cmd_history }, { "show", wm_cmd_show },
	{ "alerts", wm_cmd_alerts }, { "plot", wm_cmd_plot },       { "report", wm_cmd_report },
	{ "export", wm_cmd_export }, { "merge", wm_cmd_merge },     { "check", wm_cmd_check },
};

/* Global options, up to the command name. Returns -1 to go on, or an
 * exit status. */
static int parse_global(int argc, char **argv, struct wm *wm)
{
	static const struct option longopts[] = {
		{ "database", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:d:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd': wm->db_path = optarg; break;
		case 'h': usage(stdout); return WM_EXIT_OK;
		case 'V': printf("wearmon %s\n", WEARMON_VERSION); return WM_EXIT_OK;
		case ':': return wm_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: return wm_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct wm wm = { .db_path = WM_DEFAULT_DB };
	int ret = parse_global(argc, argv, &wm);
	const char *name;

	if (ret >= 0)
		return ret;
	if (optind >= argc)
		return wm_usage_error(
			"missing COMMAND (status, history, show, alerts, plot, report, "
			"export, merge, check)");
	name = argv[optind];
	if (!strcmp(name, "help")) {
		usage(stdout);
		return WM_EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(name, commands[i].name) != 0)
			continue;
		/* the command sees argv[0] = its name, as getopt expects */
		ret = commands[i].run(&wm, argc - optind, argv + optind);
		db_close(wm.db);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			wm_err("writing the output failed: %s", strerror(errno));
			return WM_EXIT_ERROR;
		}
		return ret;
	}
	return wm_usage_error("unknown command '%s' (status, history, show, alerts, plot, report, "
			      "export, merge, check)",
			      name);
}
