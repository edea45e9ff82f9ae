/* wearmon_session: what every subcommand shares: the usage text, error
 * messages, its options, the read-only database session and the lookups
 * every command makes (through common/db/query/). */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pwd.h>

#include "base/util.h"
#include "wearmon.h"

void wm_usage(FILE *f)
{
	fprintf(f, "Usage: wearmon [-d DB] COMMAND [OPTIONS]\n"
		   "Read the history that wearmond records (read-only; safe while it runs).\n"
		   "\n"
		   "Commands:\n"
		   "  status [--target T] [--format table|json]\n"
		   "                              what each target is doing now\n"
		   "  history [--target T] [--cycle N] [--since TIME] [--format table|csv|json]\n"
		   "          [--sort [-]COLUMN]  one row per iteration (by target, cycle and\n"
		   "                              iteration, or first by COLUMN; -: descending)\n"
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
		   "  export TABLE|VIEW [--target T] [--format csv|json] [-o FILE]\n"
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

/* `wearmon COMMAND --help`: the command's own usage and, for the commands
 * that print tables, what each column or line means (wearmon(1) has the
 * same words). */
static const char status_help[] =
	"Usage: wearmon [-d DB] status [--target T] [--format table|json]\n"
	"What each target is doing now, read from the database alone (safe while\n"
	"wearmond runs).\n"
	"\n"
	"The first line is the daemon: running since when (pid), stopped (exit\n"
	"status and reason), or gone (no stop recorded: crash, kill, power loss).\n"
	"Then each target, NAME DEVICE (kind, capacity), and these lines:\n"
	"  now, last   the running (or else the last) iteration: cycle C of N, C its\n"
	"              place in the campaign and N the cycles configured (with a later\n"
	"              campaign also the cycle's number overall); size I of S (bytes);\n"
	"              its iteration number in the cycle; workload, block size and\n"
	"              queue depth (QD)\n"
	"  phase       start, fill or measure, and how long the iteration has run\n"
	"  progress    percent of the phase: bytes moved over the phase's bytes (the\n"
	"              size for a fill, amount for a measured phase) or time over\n"
	"              duration, whichever is further; ETA: the sooner of the bytes\n"
	"              left at the current MiB/s and the duration left\n"
	"  MiB/s       now: the last sample (one sample_interval) of the phase;\n"
	"              baseline: the average MiB/s of the iteration this one is\n"
	"              compared with (see Baseline), named by cycle and iteration;\n"
	"              \"now N% of it\": the last sample over the baseline x 100\n"
	"  plan        time left of the cycle and of the campaign, at the seconds\n"
	"              each size took when last measured (a size never measured\n"
	"              counts as the mean of those that were)\n"
	"  last done   the last finished iteration: its average MiB/s (bytes over\n"
	"              seconds of its measured phase), size, cycle, iteration and\n"
	"              end; \"N% of its baseline\": that average over the baseline's\n"
	"              x 100, the figure history shows as VS BASE and the\n"
	"              degradation view as ratio (1.0 = 100%)\n"
	"  cycle       the last cycle: number, status, the action after it and its\n"
	"              outcome\n"
	"  last alert  the newest event of severity notice or worse\n"
	"  state       why the last iteration is not done (interrupted, failed),\n"
	"              or that its daemon is gone or on another host\n"
	"\n"
	"Baseline: chosen when an iteration starts, by the target's `baseline`\n"
	"rule, and stored with it (iterations.baseline_iteration_id): first (the\n"
	"default) is the earliest done iteration of the same target, size,\n"
	"workload and block size in the current campaign; best the fastest of\n"
	"them; previous the latest. The first measurement of a size in a\n"
	"campaign has none (\"no baseline for this size yet\").\n"
	"\n"
	"Units: MiB/s is 1048576 bytes per second; sizes are binary (KiB, MiB,\n"
	"GiB); times are UTC. --format json gives every figure as stored.\n";

static const char history_help[] =
	"Usage: wearmon [-d DB] history [--target T] [--cycle N] [--since TIME]\n"
	"                               [--format table|csv|json]\n"
	"One row per iteration, oldest first. csv and json carry every column of\n"
	"the iterations table (common/db/schema.md) and baseline_mibps,\n"
	"baseline_cycle and ratio; the table shows:\n"
	"  ID          the iteration's id (wearmon show ID)\n"
	"  CYCLE, IT   its cycle and its number in the cycle\n"
	"  SIZE, BS    the size measured and the block size (binary units)\n"
	"  STATUS      done, interrupted (a stop), failed, running\n"
	"  SECONDS     the measured phase's length\n"
	"  MiB/s       its average (bytes over seconds); MIN and MAX the slowest\n"
	"              and fastest sample (one sample_interval), in MiB/s\n"
	"  IOPS, P99 µs  operations per second; 99th percentile latency\n"
	"  FILL MiB/s  the preconditioning fill's average\n"
	"  VS BASE     MiB/s over the baseline's MiB/s x 100 (ratio): the baseline\n"
	"              is the iteration the row names (first: the earliest done\n"
	"              one of the same size, workload and block size in the\n"
	"              campaign; see wearmon status --help); - when there is none\n"
	"TIME is UTC: 2026-12-01, 2026-12-01T08:00[:SS[.mmm]][Z], today, yesterday,\n"
	"or an age such as 90m, 12h, 7d.\n";

static const struct {
	const char *name, *text;
} command_help[] = {
	{ "status", status_help },
	{ "history", history_help },
	{ "show", "Usage: wearmon [-d DB] show ITERATION [--format table|json]\n"
		  "Everything about one iteration: ITERATION is its ID (history's first\n"
		  "column).\n" },
	{ "alerts", "Usage: wearmon [-d DB] alerts [--target T] [--since TIME]\n"
		    "                              [--format table|csv|json]\n"
		    "Alerts: events of severity notice and above, oldest first.\n" },
	{ "plot", "Usage: wearmon [-d DB] plot --kind sizes|cycles|samples|wear|latency\n"
		  "                            -o FILE.svg [--target T[,T...]] [--iteration ID]\n"
		  "Draw an SVG chart (samples needs --iteration; latency with one: over\n"
		  "time; several targets in one chart: --target a,b).\n" },
	{ "report", "Usage: wearmon [-d DB] report -o FILE.html [--target T] [--campaign N]\n"
		    "One self-contained HTML report of a campaign (by default the latest;\n"
		    "--target is needed with several targets).\n" },
	{ "export", "Usage: wearmon [-d DB] export TABLE|VIEW [--target T] [--format csv|json]\n"
		    "                                [-o FILE]\n"
		    "Every row of a table or view (default csv).\n" },
	{ "merge", "Usage: wearmon merge -o OUT.db [--rename IN.db=HOST]... IN.db...\n"
		   "Gather many machines' databases into OUT.db: each input's targets\n"
		   "become HOST/NAME (HOST from its runs, or --rename IN.db=HOST). The\n"
		   "only command that writes, and only OUT.db, never a daemon's\n"
		   "database; merging the same input again adds nothing new.\n" },
	{ "check", "Usage: wearmon [-d DB] check\n"
		   "Read the whole database file once: is it damaged? (PRAGMA\n"
		   "integrity_check). Exit status 3 when it is.\n" },
};

void wm_command_usage(FILE *f, const char *cmd)
{
	for (size_t i = 0; i < ARRAY_SIZE(command_help); i++)
		if (cmd && !strcmp(cmd, command_help[i].name)) {
			fputs(command_help[i].text, f);
			fprintf(f,
				"\nOptions of every command: -d, --database DB (default %s),\n"
				"-h, --help. Exit status: 0 success, 1 runtime error, 2 usage\n"
				"error. See wearmon(1); wearmon --help lists the commands.\n",
				WM_DEFAULT_DB);
			return;
		}
	wm_usage(f);
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

/* The group wearmon.service runs wearmond with (systemd/wearmon.service,
 * Group=): the database it creates belongs to it. */
#define WM_GROUP "wearmon"

/* "root:wearmon" of st. */
static const char *owners(const struct stat *st, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(st->st_uid);
	struct group *gr = getgrgid(st->st_gid);
	char u[32], g[32];

	snprintf(u, sizeof(u), "%u", (unsigned)st->st_uid);
	snprintf(g, sizeof(g), "%u", (unsigned)st->st_gid);
	snprintf(buf, len, "%s:%s", pw ? pw->pw_name : u, gr ? gr->gr_name : g);
	return buf;
}

/* The first of path's directories, or path itself, that shuts the caller
 * out (no search right on a directory, no read right on the file). Returns
 * 1 with it in out and its stat in st, else 0. */
static int denied_at(const char *path, char *out, size_t len, struct stat *st)
{
	char buf[PATH_MAX];

	util_strlcpy(buf, path, sizeof(buf));
	for (char *slash = strchr(buf + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		int shut = access(buf, X_OK) != 0 && errno == EACCES;
		if (shut && !stat(buf, st)) {
			util_strlcpy(out, buf, len);
			return 1;
		}
		*slash = '/';
	}
	if (access(path, R_OK) != 0 && errno == EACCES && !stat(path, st)) {
		util_strlcpy(out, path, len);
		return 1;
	}
	return 0;
}

/* A database this user may not read: who may, and the two ways in. */
static void permission_advice(const char *path)
{
	struct group *gr = getgrnam(WM_GROUP);
	const char *user = getenv("USER");
	char at[PATH_MAX] = "", who[128];
	struct stat st;
	int found = denied_at(path, at, sizeof(at), &st);

	if (found)
		wm_err("cannot read database %s: permission denied: %s%s is %s, mode %04o, "
		       "and you are uid %u",
		       path, S_ISDIR(st.st_mode) ? "the directory " : "",
		       strcmp(at, path) ? at : "it", owners(&st, who, sizeof(who)),
		       (unsigned)(st.st_mode & 07777), (unsigned)getuid());
	else
		wm_err("cannot read database %s: permission denied", path);
	/* the group lets its members in where the mode gives it the right */
	int group_may = found && gr && st.st_gid == gr->gr_gid &&
			(st.st_mode & (S_ISDIR(st.st_mode) ? S_IXGRP : S_IRGRP));
	if (group_may)
		fprintf(stderr,
			"wearmon: run the same command with sudo, or join the group %s, which "
			"may read it: sudo usermod -aG %s %s, then log in again\n",
			WM_GROUP, WM_GROUP, user ? user : "$USER");
	else
		fprintf(stderr,
			"wearmon: run the same command with sudo; what wearmon.service writes "
			"belongs to its group %s (Group=; wearmond(8), FILES), whose members "
			"read it: sudo usermod -aG %s %s, then log in again%s\n",
			WM_GROUP, WM_GROUP, user ? user : "$USER",
			gr ? "" : " (sudo make install creates the group)");
}

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
		else if (errno == EACCES)
			permission_advice(wm->db_path);
		else
			wm_err("database %s: %s", wm->db_path, strerror(errno));
		return WM_EXIT_ERROR;
	}
	if (S_ISDIR(st.st_mode)) {
		wm_err("database %s is a directory, not a file", wm->db_path);
		return WM_EXIT_ERROR;
	}
	ret = db_open(wm->db_path, 1, &wm->db, err, sizeof(err));
	if (ret == -EACCES) {
		permission_advice(wm->db_path);
		return WM_EXIT_ERROR;
	}
	if (ret) {
		wm_err("%s", err);
		return WM_EXIT_ERROR;
	}
	return 0;
}

int wm_result(const struct wm *wm, int ret, const char *err)
{
	if (ret == -ENOMEM)
		wm_err("out of memory reading %s", wm->db_path);
	else if (ret < 0)
		wm_err("%s", err && err[0] ? err : strerror(-ret));
	return ret < 0 ? WM_EXIT_ERROR : 0;
}

const struct query_sink *wm_rows(struct query_sink *s, struct wm_table *t, char *err, size_t errlen)
{
	wm_table_free(t);
	if (errlen)
		err[0] = '\0';
	*s = (struct query_sink){ wm_add_row, t, err, errlen };
	return s;
}

const struct query_schema *wm_schema(struct wm *wm)
{
	char err[1024] = "";
	int ret;

	if (wm->have_sc)
		return &wm->sc;
	ret = query_schema_of(wm->db, &wm->sc, err, sizeof(err));
	if (ret) {
		wm_err("%s", err[0] ? err : strerror(-ret));
		return NULL;
	}
	wm->have_sc = 1;
	return &wm->sc;
}

int wm_fetch_named(struct wm *wm, struct wm_table *t, const struct query_named *q,
		   const struct db_value *p, int np)
{
	const struct query_schema *sc = wm_schema(wm);
	char err[1024] = "";
	int ret;

	wm_table_free(t);
	if (!sc)
		return WM_EXIT_ERROR;
	ret = query_named_run(wm->db, sc, q, p, np, wm_add_row, t, err, sizeof(err));
	if (ret == -ENOMEM)
		wm_err("out of memory reading %s", wm->db_path);
	else if (ret)
		wm_err("%s", err[0] ? err : strerror(-ret));
	return ret ? WM_EXIT_ERROR : 0;
}

void wm_report_steps(struct wm *wm)
{
	if (getenv("WEARMON_VM_STEPS"))
		fprintf(stderr, "wearmon: %llu SQLite VM steps\n",
			(unsigned long long)db_query_steps(wm->db));
}

int wm_target_id(struct wm *wm, const char *name, int64_t *id)
{
	struct wm_table t = { 0 };
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret = wm_result(
		wm, query_target_lookup(wm->db, name, wm_rows(&sk, &t, err, sizeof(err))), err);

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
	char err[WM_ERR_MAX] = "";
	int any = 0;

	if (wm_result(wm, query_any_iteration(wm->db, &any, err, sizeof(err)), err))
		return -1;
	return any;
}

int wm_columns(struct wm *wm, const char *table, struct wm_table *t)
{
	struct query_sink sk;
	char err[WM_ERR_MAX];

	return wm_result(wm, query_columns(wm->db, table, wm_rows(&sk, t, err, sizeof(err))), err);
}

int wm_has_column(struct wm *wm, const char *table, const char *column)
{
	char err[WM_ERR_MAX] = "";
	int has = 0;

	if (wm_result(wm, query_has_column(wm->db, table, column, &has, err, sizeof(err)), err))
		return -1;
	return has;
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
	case 'S': a->sort = val; break;
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
		{ "sort", required_argument, NULL, 'S' },
		{ "database", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0];
	int ch, ret;

	memset(a, 0, sizeof(*a));
	optind = 0; /* glibc: start afresh on the new argv */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":t:c:s:f:i:k:o:n:r:S:d:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			wm_command_usage(stdout, cmd);
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
