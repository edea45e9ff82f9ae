/* fsmode: mkfs, private mount and the O_DIRECT test file. */
#include "fsmode.h"

/* Every switch over an enum names each value (issue 12): -Wswitch-enum here. */
#pragma GCC diagnostic error "-Wswitch-enum"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "cmd.h"
#include "util.h"

#define MAX_ARGS 64

int fsmode_mkfs_argv(const struct cfg_target *t, const char *dev, char *buf, size_t buflen,
		     char **argv, int max)
{
	int n = 0;
	if (max < 5)
		return -E2BIG;
	if (t->filesystem == FS_XFS) {
		argv[n++] = "mkfs.xfs";
		argv[n++] = "-f";
	} else {
		argv[n++] = "mkfs.ext4";
		argv[n++] = "-F";
	}
	argv[n++] = "-q";
	util_strlcpy(buf, t->mkfs_options, buflen);
	char *save = NULL;
	for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n >= max - 2)
			return -E2BIG;
		argv[n++] = tok;
	}
	argv[n++] = (char *)dev;
	argv[n] = NULL;
	return n;
}

/* Run mkfs as a controlled child, its output logged. Returns 0, -EINTR
 * when stopped, or -EIO / -errno with err set. */
static int run_mkfs(char **argv, const struct cfg_target *t, const atomic_int *stop, char *err,
		    size_t errlen)
{
	char tag[160];
	struct cmd_req rq = {
		.argv = argv, .timeout = t->command_timeout, .stop = stop, .tag = tag
	};
	struct cmd_result r = { 0 };
	snprintf(tag, sizeof(tag), "target %s: %s", t->name, argv[0]);
	int ret = cmd_run(&rq, &r);
	if (ret) {
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(-ret));
		return ret;
	}
	switch (r.end) {
	case CMD_EXITED:
		if (!r.status)
			return 0;
		snprintf(err, errlen, "%s failed (exit status %d): %s", argv[0], r.status,
			 r.output);
		return -EIO;
	case CMD_SIGNALED:
		snprintf(err, errlen, "%s failed (signal %d): %s", argv[0], r.status, r.output);
		return -EIO;
	case CMD_TIMED_OUT:
		snprintf(err, errlen, "%s timed out after %.0f s (command_timeout)", argv[0],
			 t->command_timeout);
		return -ETIMEDOUT;
	case CMD_STOPPED:
		snprintf(err, errlen, "%s killed after %.1f s", argv[0], r.seconds);
		break;
	}
	return -EINTR;
}

static int make_mountpoint(struct fsmode *fs, const char *name, char *err, size_t errlen)
{
	const char *base = getenv("RUNTIME_DIRECTORY");
	if (!base || !*base)
		base = "/run";
	snprintf(fs->mnt, sizeof(fs->mnt), "%s/wearmon-%s-XXXXXX", base, name);
	if (!mkdtemp(fs->mnt)) {
		int ret = -errno;
		snprintf(err, errlen, "cannot create a mount point in %s: %s", base,
			 strerror(-ret));
		fs->mnt[0] = 0;
		return ret;
	}
	return 0;
}

int fsmode_setup(struct fsmode *fs, struct tgt *tg, const struct cfg_target *t,
		 const atomic_int *stop, char *err, size_t errlen)
{
	char buf[sizeof(t->mkfs_options)];
	char *argv[MAX_ARGS];
	int ret;

	tgt_close(tg); /* mkfs opens the device exclusively itself */
	if (fsmode_mkfs_argv(t, tg->real_path, buf, sizeof(buf), argv, MAX_ARGS) < 0) {
		snprintf(err, errlen, "mkfs_options: too many arguments");
		return -E2BIG;
	}
	if ((ret = run_mkfs(argv, t, stop, err, errlen)))
		return ret;
	fs->formats++;
	if (!fs->mnt[0] && (ret = make_mountpoint(fs, t->name, err, errlen)))
		return ret;
	if (mount(tg->real_path, fs->mnt, cfg_filesystem_name(t->filesystem), MS_NOATIME, NULL)) {
		ret = -errno;
		snprintf(err, errlen, "cannot mount %s on %s: %s", tg->path, fs->mnt,
			 strerror(-ret));
		return ret;
	}
	fs->mounted = 1;
	snprintf(fs->file, sizeof(fs->file), "%s/wearmon-test.dat", fs->mnt);
	tg->fd = open(fs->file, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
	if (tg->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s: %s", fs->file, strerror(-ret));
		return ret;
	}
	return 0;
}

int fsmode_teardown(struct fsmode *fs, struct tgt *tg, char *err, size_t errlen)
{
	int ret = 0;
	tgt_close(tg);
	if (fs->mounted) {
		if (umount2(fs->mnt, 0)) {
			ret = -errno;
			snprintf(err, errlen, "cannot unmount %s: %s", fs->mnt, strerror(-ret));
			return ret;
		}
		fs->mounted = 0;
	}
	if (fs->mnt[0] && rmdir(fs->mnt) == 0)
		fs->mnt[0] = 0;
	return ret;
}

int64_t fsmode_allocated(const struct fsmode *fs)
{
	struct stat st;
	if (!fs->mounted || stat(fs->file, &st))
		return 0;
	return (int64_t)st.st_blocks * 512;
}
