/* wearmon_merge: "wearmon merge -o OUT.db IN.db...": the histories of many
 * machines in one database, each target as HOST/NAME. The one command
 * that writes, and only to OUT, which may not be a daemon's database. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "wearmon.h"

/* Whether a and b are the same file. */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The HOST that --rename gives in, or NULL. */
static const char *renamed(const struct wm_args *a, const char *in)
{
	for (int i = 0; i < a->nrename; i++) {
		const char *eq = strrchr(a->rename[i], '=');
		size_t n = (size_t)(eq - a->rename[i]);
		if (strlen(in) == n && !strncmp(in, a->rename[i], n))
			return eq + 1;
	}
	return NULL;
}

/* Every --rename is IN.db=HOST with IN.db one of the inputs and HOST a
 * name without a slash. Returns -1 or WM_EXIT_USAGE. */
static int check_renames(const struct wm_args *a)
{
	for (int i = 0; i < a->nrename; i++) {
		const char *r = a->rename[i], *eq = strrchr(r, '=');
		int found = 0;
		if (!eq || eq == r || !eq[1] || strchr(eq + 1, '/'))
			return wm_usage_error("merge: --rename wants IN.db=HOST (HOST without"
					      " '/'), not '%s'",
					      r);
		for (int k = 0; k < a->npos && !found; k++)
			found = strlen(a->pos[k]) == (size_t)(eq - r) &&
				!strncmp(a->pos[k], r, (size_t)(eq - r));
		if (!found)
			return wm_usage_error("merge: --rename %s: %.*s is none of the inputs", r,
					      (int)(eq - r), r);
	}
	return -1;
}

/* Every input exists and is not OUT. Returns 0 or WM_EXIT_ERROR. */
static int check_inputs(const struct wm_args *a)
{
	struct stat st;

	for (int i = 0; i < a->npos; i++) {
		if (stat(a->pos[i], &st) != 0) {
			wm_err("merge: %s: %s", a->pos[i], strerror(errno));
			return WM_EXIT_ERROR;
		}
		if (same_file(a->pos[i], a->output)) {
			wm_err("merge: %s is the output database itself", a->pos[i]);
			return WM_EXIT_ERROR;
		}
	}
	return 0;
}

/* An existing OUT may not be a daemon's database: its lock held, or its
 * own targets or runs in it. Returns 0 or WM_EXIT_ERROR. */
static int check_out(const char *out)
{
	struct db *db = NULL;
	char err[1024] = "";
	pid_t pid = db_lock_holder(out);

	if (pid > 0) {
		wm_err("merge: %s is the database of wearmond pid %ld (it holds the"
		       " database's lock); give the merge another output file",
		       out, (long)pid);
		return WM_EXIT_ERROR;
	}
	if (db_open(out, 1, &db, err, sizeof(err))) {
		wm_err("merge: %s: %s", out, err);
		return WM_EXIT_ERROR;
	}
	int ret = db_merge_check_out(db, err, sizeof(err));
	db_close(db);
	if (ret == -EPERM) {
		wm_err("merge: %s is a daemon's database: %s; the CLI never writes one, give"
		       " the merge another output file",
		       out, err);
		return WM_EXIT_ERROR;
	}
	if (ret) {
		wm_err("merge: %s: %s", out, err[0] ? err : strerror(-ret));
		return WM_EXIT_ERROR;
	}
	return 0;
}

static int merge_one(struct db *out, const char *in, const char *host)
{
	struct db_merge_result r;
	char err[1024] = "";
	int ret = db_merge(out, in, host, &r, err, sizeof(err));

	if (ret == -EEXIST) {
		wm_err("%s; merge %s under another host name with --rename %s=HOST", err, in, in);
		return WM_EXIT_ERROR;
	}
	if (ret) {
		wm_err("%s", err[0] ? err : strerror(-ret));
		return WM_EXIT_ERROR;
	}
	printf("%s: host %s%s%s, %d target%s, %ld cycles, %ld iterations%s\n", in, r.host,
	       host ? " as " : "", host ? host : "", r.targets, r.targets == 1 ? "" : "s", r.cycles,
	       r.iterations, r.unchanged == r.targets && r.targets ? ", unchanged" : "");
	return 0;
}

/* Merge every input into the database at path. Returns 0 or
 * WM_EXIT_ERROR. */
static int merge_all(const char *path, const struct wm_args *a)
{
	struct db *out = NULL;
	char err[1024];
	int ret = 0;

	if (db_open(path, 0, &out, err, sizeof(err))) {
		wm_err("merge: %s", err);
		return WM_EXIT_ERROR;
	}
	for (int i = 0; i < a->npos && !ret; i++)
		ret = merge_one(out, a->pos[i], renamed(a, a->pos[i]));
	db_close(out);
	return ret;
}

static void remove_db(const char *path)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char p[PATH_MAX + 16];

	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
}

/* Renames from+sfx to to+sfx. Returns 0 or WM_EXIT_ERROR. */
static int move_side(const char *from, const char *to, const char *sfx)
{
	char a[PATH_MAX + 16], b[PATH_MAX + 16];

	snprintf(a, sizeof(a), "%s%s", from, sfx);
	snprintf(b, sizeof(b), "%s%s", to, sfx);
	if (rename(a, b) == 0 || errno == ENOENT)
		return 0;
	wm_err("merge: %s: %s", b, strerror(errno));
	unlink(a);
	return WM_EXIT_ERROR;
}

/* A new (or empty) OUT is written as a hidden file beside it and put in
 * place when every input is in, so that a refused merge leaves no file.
 * Returns 0 or WM_EXIT_ERROR. */
static int merge_new(const char *out, int empty, const struct wm_args *a)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(out, '/');
	int n = slash ? (int)(slash - out + 1) : 0;

	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.merge-%ld", n, out, out + n, (long)getpid()) >=
	    (int)sizeof(tmp)) {
		wm_err("merge: %s: path too long", out);
		return WM_EXIT_ERROR;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		wm_err("merge: %s: %s", tmp, strerror(errno));
		return WM_EXIT_ERROR;
	}
	close(fd);
	int ret = merge_all(tmp, a);
	/* link: never over a file that appeared meanwhile; rename over an
	 * empty OUT that was there (made by mktemp, say) */
	if (!ret && (empty ? rename(tmp, out) : link(tmp, out)) != 0) {
		wm_err("merge: %s: %s (nothing written)", out, strerror(errno));
		ret = WM_EXIT_ERROR;
	}
	if (ret) {
		remove_db(tmp);
		return ret;
	}
	unlink(tmp);
	/* the kept -wal and -shm (see db_open) go along, for readers */
	return move_side(tmp, out, "-wal") || move_side(tmp, out, "-shm") ? WM_EXIT_ERROR : 0;
}

int wm_cmd_merge(struct wm *wm, int argc, char **argv)
{
	struct wm_args a;
	struct stat st;
	char err[1024];
	int ret = wm_parse_args(wm, argc, argv, "or", &a);

	if (ret >= 0)
		return ret;
	if (!a.output || a.npos < 1)
		return wm_usage_error("merge: wants -o OUT.db (the database to write, never a"
				      " daemon's) and at least one IN.db");
	if ((ret = check_renames(&a)) >= 0)
		return ret;
	if ((ret = check_inputs(&a)))
		return ret;
	if (db_check_path(a.output, err, sizeof(err))) {
		wm_err("merge: %s", err);
		return WM_EXIT_ERROR;
	}
	if (stat(a.output, &st) != 0 || (S_ISREG(st.st_mode) && st.st_size == 0))
		return merge_new(a.output, stat(a.output, &st) == 0, &a);
	if ((ret = check_out(a.output)))
		return ret;
	return merge_all(a.output, &a);
}
