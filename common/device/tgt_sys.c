/* tgt_sys: the bottom of the tgt module, which tgt.c and tgt_file.c both
 * call and which calls neither: where sysfs and procfs are, reading a
 * sysfs attribute, the error format naming the config line, closing. */
#include "device/tgt.h"
#include "device/tgt_int.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "base/util.h"

/* Where sysfs and procfs are: tests point these at fixture trees. */
static const char *sys_root = "/sys";
static const char *proc_root = "/proc";

void tgt_set_roots(const char *sys, const char *proc)
{
	sys_root = sys ? sys : "/sys";
	proc_root = proc ? proc : "/proc";
}

const char *tgt_sys_root(void)
{
	return sys_root;
}

const char *tgt_proc_root(void)
{
	return proc_root;
}

int tgt_seterr(char *err, size_t len, int ret, const struct cfg *c, const struct cfg_target *t,
	       const char *key, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int line = cfg_line(t, key);
	if (!line)
		line = t->section_line;
	snprintf(err, len, "%s:%d: %s: %s", c->path, line, key, msg);
	return ret;
}

int tgt_sysfs_read(const char *sysname, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/class/block/%s/%s", sys_root, sysname, attr);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		buf[0] = 0;
		return -EIO;
	}
	fclose(f);
	util_strip(buf);
	return 0;
}

void tgt_close(struct tgt *tg)
{
	if (tg->fd >= 0)
		close(tg->fd);
	tg->fd = -1;
}
