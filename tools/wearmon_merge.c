/* wearmon_merge: "wearmon merge OUT.db IN.db...": the histories of many
 * machines in one database, each target as HOST/NAME. The one command
 * that writes, and only to OUT. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"
#include "wearmon.h"

/* Refuse an input that is OUT itself (same file). */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static int merge_one(struct db *out, const char *out_path, const char *in)
{
	struct db_merge_result r;
	struct stat st;
	char err[1024] = "";

	if (stat(in, &st) != 0) {
		wm_err("merge: %s: %s", in, strerror(errno));
		return WM_EXIT_ERROR;
	}
	if (same_file(in, out_path)) {
		wm_err("merge: %s is the output database itself", in);
		return WM_EXIT_ERROR;
	}
	int ret = db_merge(out, in, &r, err, sizeof(err));
	if (ret) {
		wm_err("%s", err[0] ? err : strerror(-ret));
		return WM_EXIT_ERROR;
	}
	printf("%s: host %s, %d target%s, %ld cycles, %ld iterations\n", in, r.host, r.targets,
	       r.targets == 1 ? "" : "s", r.cycles, r.iterations);
	return 0;
}

int wm_cmd_merge(struct wm *wm, int argc, char **argv)
{
	struct wm_args a;
	struct db *out = NULL;
	char err[1024];
	int ret = wm_parse_args(wm, argc, argv, "", &a);

	if (ret >= 0)
		return ret;
	if (a.npos < 2)
		return wm_usage_error("merge: wants OUT.db and at least one IN.db");
	if (db_check_path(a.pos[0], err, sizeof(err))) {
		wm_err("merge: %s", err);
		return WM_EXIT_ERROR;
	}
	if (db_open(a.pos[0], 0, &out, err, sizeof(err))) {
		wm_err("merge: %s", err);
		return WM_EXIT_ERROR;
	}
	ret = 0;
	for (int i = 1; i < a.npos && !ret; i++)
		ret = merge_one(out, a.pos[0], a.pos[i]);
	db_close(out);
	return ret;
}
