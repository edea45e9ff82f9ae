/* tgt_sys: the bottom of the tgt module, which tgt.c and tgt_file.c both
 * call and which calls neither: where sysfs and procfs are, reading a
 * sysfs attribute (and a SCSI disk's provisioning mode), the error format
 * naming the config line, closing. */
#include "device/tgt.h"
#include "device/tgt_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cmd.h"
#include "base/log.h"
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

int tgt_whole_disk(const char *sysname, char *out, size_t len)
{
	char part[32], rel[PATH_MAX], real[PATH_MAX];

	util_strlcpy(out, sysname, len);
	if (tgt_sysfs_read(sysname, "partition", part, sizeof(part)))
		return 0;
	/* a partition's sysfs directory sits inside its disk's */
	snprintf(rel, sizeof(rel), "%s/class/block/%s/..", sys_root, sysname);
	if (!realpath(rel, real))
		return -errno;
	const char *base = strrchr(real, '/');
	util_strlcpy(out, base ? base + 1 : real, len);
	return 0;
}

int tgt_scsi_provisioning_mode(const char *sysname, char *buf, size_t len)
{
	char dir[PATH_MAX], attr[PATH_MAX];
	struct dirent *e;
	int ret = -ENOENT;
	buf[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/class/block/%s/device/scsi_disk", sys_root, sysname);
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	while (ret && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(attr, sizeof(attr), "device/scsi_disk/%s/provisioning_mode",
				 e->d_name);
			ret = tgt_sysfs_read(sysname, attr, buf, len);
		}
	closedir(d);
	return ret;
}

void tgt_close(struct tgt *tg)
{
	cmd_close_exclusive(tg->fd); /* a child started meanwhile keeps no copy */
	tg->fd = -1;
}

#define BUSY_STEP_NS 50000000L

int tgt_busy_wait(const char *name, const char *what, int (*attempt)(void *arg), void *arg,
		  const atomic_int *stop)
{
	int ret = attempt(arg);
	if (ret != -EBUSY)
		return ret;
	double t0 = util_now();
	log_msg(LOG_NOTICE,
		"target %s: %s: busy; waiting up to %.0f s for what holds it to let go (a "
		"command's leftover, or the kernel still closing a child's copy of it)",
		name, what, TGT_BUSY_WAIT_S);
	while (ret == -EBUSY && util_now() - t0 < TGT_BUSY_WAIT_S && !(stop && atomic_load(stop))) {
		struct timespec ts = { 0, BUSY_STEP_NS };
		nanosleep(&ts, NULL);
		ret = attempt(arg);
	}
	if (ret)
		log_msg(LOG_WARNING, "target %s: %s: %s after waiting %.2f s", name, what,
			strerror(-ret), util_now() - t0);
	else
		log_msg(LOG_NOTICE, "target %s: %s: done after waiting %.2f s", name, what,
			util_now() - t0);
	return ret;
}
