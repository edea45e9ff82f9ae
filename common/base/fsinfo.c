/* fsinfo: a path's filesystem for messages (see fsinfo.h). */
#include "base/fsinfo.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "base/util.h"

int fsinfo_contains(const char *mnt, const char *path)
{
	size_t n = strlen(mnt);

	if (!strcmp(mnt, "/"))
		return path[0] == '/';
	return !strncmp(mnt, path, n) && (path[n] == '/' || path[n] == '\0');
}

/* mountinfo's octal escapes (\040 for a space), in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The mount that holds real (an absolute path with symlinks resolved): the
 * longest mount point containing it, the last mounted of equals (the one
 * on top). */
static void find_mount(const char *real, struct fsinfo *fi)
{
	char line[4096], point[PATH_MAX], type[32], source[256];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t best = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*d %*d %*s %*s %4095s", point) != 1 ||
		    sscanf(sep, " - %31s %255s", type, source) != 2)
			continue;
		unescape(point);
		size_t n = strlen(point);
		if (!fsinfo_contains(point, real) || n < best)
			continue;
		best = n;
		util_strlcpy(fi->mount, point, sizeof(fi->mount));
		util_strlcpy(fi->type, type, sizeof(fi->type));
		unescape(source);
		util_strlcpy(fi->source, source, sizeof(fi->source));
	}
	fclose(f);
}

int fsinfo_of(const char *path, struct fsinfo *fi)
{
	char real[PATH_MAX], copy[PATH_MAX];
	struct statvfs sv;

	memset(fi, 0, sizeof(*fi));
	util_strlcpy(copy, path, sizeof(copy));
	if (!realpath(path, real) && !realpath(dirname(copy), real))
		return -errno;
	if (statvfs(real, &sv))
		return -errno;
	fi->size = (uint64_t)sv.f_blocks * sv.f_frsize;
	/* df's "Avail": what root may take beyond it (ext4's reserved blocks)
	 * is not counted, as not all of it can be had (ext4 keeps clusters
	 * back from root too) and none of it should go to a history */
	fi->free = (uint64_t)sv.f_bavail * sv.f_frsize;
	fi->readonly = !!(sv.f_flag & ST_RDONLY);
	find_mount(real, fi);
	return 0;
}

char *fsinfo_text(const struct fsinfo *fi, char *buf, size_t len)
{
	char fr[32], sz[32], what[PATH_MAX + 320] = "";

	if (fi->type[0] && fi->source[0])
		snprintf(what, sizeof(what), " (%s on %s)", fi->type, fi->source);
	else if (fi->type[0])
		snprintf(what, sizeof(what), " (%s)", fi->type);
	snprintf(buf, len, "filesystem %s%s: %s free of %s%s", fi->mount[0] ? fi->mount : "?", what,
		 util_fmt_bytes(fi->free, fr, sizeof(fr)), util_fmt_bytes(fi->size, sz, sizeof(sz)),
		 fi->readonly ? ", read-only" : "");
	return buf;
}
