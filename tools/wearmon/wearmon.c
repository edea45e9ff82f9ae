/* wearmon: read wearmond's history: the entry point, its global options
 * and the table of subcommands (wearmon_status.c, wearmon_cmd.c,
 * wearmon_export.c, wearmon_plot.c, wearmon_report.c, wearmon_merge.c);
 * what they share is in wearmon_session.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "wearmon.h"

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
		case 'h': wm_usage(stdout); return WM_EXIT_OK;
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
		wm_usage(stdout);
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
