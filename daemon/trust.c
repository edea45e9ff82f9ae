/* trust: the symlinks and directories through which another user could
 * redirect a path the daemon writes, runs or reads. */
#include "trust.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

#define MAX_LINKS 40 /* the kernel's limit on symlinks in one resolution */

static int trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

const char *trust_owner_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *found = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &found) == 0 && found)
		snprintf(buf, len, "uid %u (%s)", (unsigned)uid, found->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

static const char *writers(mode_t mode)
{
	return mode & S_IWOTH ? "others" : "its group";
}

/* The symlink link, found in directory dir on the way to path. Returns 0
 * or -EPERM with err set. */
static int judge_link(const char *what, const char *path, const char *link, const char *dir,
		      uid_t link_uid, char *err, size_t len)
{
	struct stat ds;
	char who[128];

	if (stat(dir, &ds) != 0 || !(ds.st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	if (!trusted(link_uid)) {
		snprintf(err, len,
			 "%s %s: refusing the path: it goes through symlink %s, owned by %s, in "
			 "directory %s that %s can write (mode %04o): another user could have "
			 "placed it to redirect what wearmond opens; use a path without it, or "
			 "have root own the link and the directory",
			 what, path, link, trust_owner_name(link_uid, who, sizeof(who)), dir,
			 writers(ds.st_mode), (unsigned)(ds.st_mode & 07777));
		return -EPERM;
	}
	if (ds.st_mode & S_ISVTX)
		return 0;
	snprintf(err, len,
		 "%s %s: refusing the path: it goes through symlink %s, owned by %s, in "
		 "directory %s that %s can write without the sticky bit (mode %04o): anyone "
		 "there can replace the link; use a path without it, or run chmod go-w %s",
		 what, path, link, trust_owner_name(link_uid, who, sizeof(who)), dir,
		 writers(ds.st_mode), (unsigned)(ds.st_mode & 07777), dir);
	return -EPERM;
}

/* Cut the next component off *rest into comp. Returns 0 when none is left. */
static int next_component(const char **rest, char *comp, size_t len)
{
	const char *s = *rest;
	size_t n;

	while (*s == '/')
		s++;
	n = strcspn(s, "/");
	if (!n)
		return 0;
	if (n >= len)
		n = len - 1;
	memcpy(comp, s, n);
	comp[n] = '\0';
	*rest = s + strcspn(s, "/");
	return 1;
}

/* The link's target, then what was left of the path after the link. */
static int splice(const char *link, const char *rest, char *out, size_t len, char *err, size_t elen)
{
	char target[PATH_MAX];
	ssize_t n = readlink(link, target, sizeof(target) - 1);

	if (n < 0) {
		int ret = -errno;
		snprintf(err, elen, "cannot read symlink %s: %s", link, strerror(errno));
		return ret;
	}
	target[n] = '\0';
	if ((size_t)snprintf(out, len, "%s/%s", target, rest) >= len) {
		snprintf(err, elen, "symlink %s: the path it leads to is too long", link);
		return -ENAMETOOLONG;
	}
	return 0;
}

int trust_links(const char *what, const char *path, char *err, size_t len)
{
	char done[PATH_MAX] = "", rest[2 * PATH_MAX], next[2 * PATH_MAX], comp[NAME_MAX + 1];
	char cand[PATH_MAX + NAME_MAX + 2];
	const char *r = rest;
	struct stat ls;
	int links = 0, ret;

	if (path[0] != '/' && !getcwd(done, sizeof(done))) {
		ret = -errno;
		snprintf(err, len, "%s %s: cannot resolve: %s", what, path, strerror(errno));
		return ret;
	}
	if (!strcmp(done, "/"))
		done[0] = '\0';
	util_strlcpy(rest, path, sizeof(rest));
	while (next_component(&r, comp, sizeof(comp))) {
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(done, '/');
			if (slash)
				*slash = '\0';
			continue;
		}
		snprintf(cand, sizeof(cand), "%s/%s", done, comp);
		if (lstat(cand, &ls) != 0)
			return 0; /* missing: created later, or refused by whoever opens it */
		if (!S_ISLNK(ls.st_mode)) {
			util_strlcpy(done, cand, sizeof(done));
			continue;
		}
		ret = judge_link(what, path, cand, done[0] ? done : "/", ls.st_uid, err, len);
		if (!ret && ++links > MAX_LINKS) {
			snprintf(err, len, "%s %s: too many symlinks on the way", what, path);
			ret = -ELOOP;
		}
		if (!ret)
			ret = splice(cand, r, next, sizeof(next), err, len);
		if (ret)
			return ret;
		util_strlcpy(rest, next, sizeof(rest));
		r = rest;
		if (rest[0] == '/')
			done[0] = '\0';
	}
	return 0;
}

/* The one command that puts a file kept in another user's directory (a
 * checkout in a home) where only root can change it, and what to name
 * then: a configuration under /etc/wearmon, a program under
 * /usr/local/libexec/wearmon. Changing the owner of a home is no fix. */
static const char *copy_fix(const char *what, const char *real, char *out, size_t len)
{
	const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	int config = !strcmp(what, "configuration");
	const char *dir = config ? "/etc/wearmon" : "/usr/local/libexec/wearmon";

	snprintf(out, len,
		 "copy it where only root can change it: sudo install -D -o root -g root -m %s "
		 "%s %s/%s, then %s %s/%s",
		 config ? "0644" : "0755", real, dir, base,
		 config ? "run wearmond -c" : "name in the configuration", dir, base);
	return out;
}

int trust_dirs(const char *what, const char *path, char *err, size_t len)
{
	char real[PATH_MAX], dir[PATH_MAX], who[128];
	struct stat st;

	if (!realpath(path, real)) {
		int ret = -errno;
		snprintf(err, len, "%s %s: %s", what, path, strerror(errno));
		return ret;
	}
	for (char *slash = real; (slash = strchr(slash, '/')); slash++) {
		size_t n = slash == real ? 1 : (size_t)(slash - real);
		memcpy(dir, real, n);
		dir[n] = '\0';
		if (stat(dir, &st) != 0) {
			int ret = -errno;
			snprintf(err, len, "%s %s: directory %s: %s", what, path, dir,
				 strerror(errno));
			return ret;
		}
		if (!trusted(st.st_uid)) {
			char fix[2 * PATH_MAX + 128];
			snprintf(
				err, len,
				"%s %s: directory %s above it is owned by %s, not root (mode %04o): "
				"its owner can replace what wearmond runs or reads; %s",
				what, path, dir, trust_owner_name(st.st_uid, who, sizeof(who)),
				(unsigned)(st.st_mode & 07777),
				copy_fix(what, real, fix, sizeof(fix)));
			return -EPERM;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
			snprintf(
				err, len,
				"%s %s: directory %s above it is writable by %s without the sticky "
				"bit (mode %04o): anyone who can write it can replace what wearmond "
				"runs or reads; run chmod go-w %s",
				what, path, dir, writers(st.st_mode),
				(unsigned)(st.st_mode & 07777), dir);
			return -EPERM;
		}
	}
	return 0;
}
