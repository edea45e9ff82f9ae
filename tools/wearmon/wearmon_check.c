/* wearmon_check: "wearmon check": the whole database file read once with
 * PRAGMA integrity_check on a read-only connection (db_check.c), the
 * on-demand twin of wearmond's background check. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "db/db_check.h"
#include "wearmon.h"

int wm_cmd_check(struct wm *wm, int argc, char **argv)
{
	const struct db_check_opts o = { 0 };
	struct db_check_result r;
	struct wm_args a;
	struct stat st;
	char err[1024];
	int ret = wm_parse_args(wm, argc, argv, "", &a);

	if (ret >= 0)
		return ret;
	if (a.npos)
		return wm_usage_error("check: unexpected argument '%s'", a.pos[0]);
	if (stat(wm->db_path, &st) != 0) {
		wm_err("database %s: %s", wm->db_path, strerror(errno));
		return WM_EXIT_ERROR;
	}
	if (!S_ISREG(st.st_mode)) {
		wm_err("database %s is not a regular file", wm->db_path);
		return WM_EXIT_ERROR;
	}
	ret = db_check_file(wm->db_path, &o, &r, err, sizeof(err));
	if (ret == -EBADMSG) {
		wm_err("database %s is damaged: %d problem%s%s (PRAGMA integrity_check): %s",
		       wm->db_path, r.problems, r.problems == 1 ? "" : "s",
		       r.problems >= DB_CHECK_PROBLEMS ? " or more" : "", r.first);
		return WM_EXIT_DAMAGED;
	}
	if (ret) {
		wm_err("%s", err[0] ? err : strerror(-ret));
		return WM_EXIT_ERROR;
	}
	printf("database %s: ok (PRAGMA integrity_check)\n", wm->db_path);
	return WM_EXIT_OK;
}
