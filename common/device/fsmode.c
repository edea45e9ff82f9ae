/* fsmode: mkfs, private mount and the O_DIRECT test file; the daemon's
 * mount namespace and the sweep of stale mount points at start. */
#include "device/fsmode.h"

/* Every switch over an enum names each value (a new value fails the build): -Wswitch-enum. */
#pragma GCC diagnostic error "-Wswitch-enum"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/log.h"
#include "base/cmd.h"
#include "base/util.h"

#define MAX_ARGS 64
#define TEST_FILE "wearmon-test.dat"
#define MNT_PREFIX "wearmon-"
#define MNT_RANDOM 6 /* the XXXXXX of mkdtemp(3) */

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

/* Where mount points go: the service's RuntimeDirectory=, else /run. */
static const char *mount_base(void)
{
	const char *base = getenv("RUNTIME_DIRECTORY");
	return base && *base ? base : "/run";
}

/* A new mount point, held open and flock()ed while it exists: the lock
 * tells fsmode_sweep of another daemon that it is in use, although its
 * mount shows only in this process's namespace. */
static int make_mountpoint(struct fsmode *fs, const char *name, char *err, size_t errlen)
{
	const char *base = mount_base();
	int ret;
	snprintf(fs->mnt, sizeof(fs->mnt), "%s/" MNT_PREFIX "%s-XXXXXX", base, name);
	if (!mkdtemp(fs->mnt)) {
		ret = -errno;
		snprintf(err, errlen, "cannot create a mount point in %s: %s", base,
			 strerror(-ret));
		fs->mnt[0] = 0;
		return ret;
	}
	fs->mnt_fd = open(fs->mnt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fs->mnt_fd < 0 || flock(fs->mnt_fd, LOCK_EX | LOCK_NB)) {
		ret = -errno;
		snprintf(err, errlen, "cannot lock the mount point %s: %s", fs->mnt,
			 strerror(-ret));
		if (fs->mnt_fd >= 0)
			close(fs->mnt_fd);
		rmdir(fs->mnt);
		fs->mnt[0] = 0;
		return ret;
	}
	return 0;
}

/* Only what fsmode_setup puts there: a filesystem that holds anything else
 * was made by someone else. Returns 0 or -EUCLEAN with err set. */
static int only_ours(const char *mnt, const char *dev, char *err, size_t errlen)
{
	DIR *d = opendir(mnt);
	struct dirent *e;
	int ret = 0;
	if (!d) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s: %s", mnt, strerror(-ret));
		return ret;
	}
	while (!ret && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "lost+found") || !strcmp(e->d_name, TEST_FILE))
			continue;
		snprintf(err, errlen, "the filesystem on %s holds %s, which wearmon did not make",
			 dev, e->d_name);
		ret = -EUCLEAN;
	}
	closedir(d);
	return ret;
}

struct mount_args {
	const char *dev, *mnt;
	enum cfg_filesystem fs;
};

static int mount_fs(void *arg)
{
	const struct mount_args *a = arg;
	return mount(a->dev, a->mnt, cfg_filesystem_name(a->fs), MS_NOATIME, NULL) ? -errno : 0;
}

static int umount_fs(void *arg)
{
	return umount2((const char *)arg, 0) ? -errno : 0;
}

/* Whether mkfs can have the device: opened exclusively and closed. */
static int device_free(void *arg)
{
	int fd = open((const char *)arg, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	cmd_close_exclusive(fd);
	return 0;
}

/* Mount the filesystem on the device (checked when check_ours) and open
 * the test file. Returns 0 or -errno with err set. */
static int attach(struct fsmode *fs, struct tgt *tg, const struct cfg_target *t, int check_ours,
		  char *err, size_t errlen)
{
	int ret;
	if (!fs->mnt[0] && (ret = make_mountpoint(fs, t->name, err, errlen)))
		return ret;
	struct mount_args ma = { tg->real_path, fs->mnt, t->filesystem };
	char what[PATH_MAX + 32];
	snprintf(what, sizeof(what), "mounting %s", tg->path);
	if ((ret = tgt_busy_wait(t->name, what, mount_fs, &ma, NULL))) {
		snprintf(err, errlen, "cannot mount %s on %s as %s: %s", tg->path, fs->mnt,
			 cfg_filesystem_name(t->filesystem), strerror(-ret));
		return ret;
	}
	fs->mounted = 1;
	if (check_ours && (ret = only_ours(fs->mnt, tg->path, err, errlen))) {
		if (!umount2(fs->mnt, 0))
			fs->mounted = 0;
		return ret;
	}
	snprintf(fs->file, sizeof(fs->file), "%s/" TEST_FILE, fs->mnt);
	tg->fd = open(fs->file, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
	if (tg->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s: %s", fs->file, strerror(-ret));
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
	char what[PATH_MAX + 32];
	snprintf(what, sizeof(what), "making %s on %s", cfg_filesystem_name(t->filesystem),
		 tg->path);
	if (tgt_busy_wait(t->name, what, device_free, tg->real_path, stop) == -EBUSY) {
		snprintf(err, errlen, "%s is busy (held by another program) after %.0f s", tg->path,
			 TGT_BUSY_WAIT_S);
		return -EBUSY;
	}
	fs->uuid[0] = 0;
	if ((ret = run_mkfs(argv, t, stop, err, errlen)))
		return ret;
	fs->formats++;
	char type[32];
	if (tgt_probe_fs(tg->real_path, fs->uuid, sizeof(fs->uuid), type, sizeof(type)))
		fs->uuid[0] = 0;
	return attach(fs, tg, t, 0, err, errlen);
}

int fsmode_remount(struct fsmode *fs, struct tgt *tg, const struct cfg_target *t, char *err,
		   size_t errlen)
{
	tgt_close(tg); /* mount opens the device exclusively */
	return attach(fs, tg, t, 1, err, errlen);
}

int fsmode_teardown(struct fsmode *fs, struct tgt *tg, char *err, size_t errlen)
{
	int ret = 0;
	tgt_close(tg);
	if (fs->mounted) {
		char what[PATH_MAX + 32];
		snprintf(what, sizeof(what), "unmounting %s", fs->mnt);
		if ((ret = tgt_busy_wait(tg->name, what, umount_fs, fs->mnt, NULL))) {
			snprintf(err, errlen, "cannot unmount %s: %s", fs->mnt, strerror(-ret));
			return ret;
		}
		fs->mounted = 0;
	}
	if (fs->mnt[0] && rmdir(fs->mnt) == 0) {
		fs->mnt[0] = 0;
		close(fs->mnt_fd);
	}
	return ret;
}

int64_t fsmode_allocated(const struct fsmode *fs)
{
	struct stat st;
	if (!fs->mounted || stat(fs->file, &st))
		return 0;
	return (int64_t)st.st_blocks * 512;
}

enum fsmode_plan fsmode_plan_of(const struct cfg_target *t, const struct fsmode_resume *r)
{
	if (r->resume && (r->at_action || r->mid_size))
		return FSMODE_REMOUNT;
	if (t->format_each_size)
		return FSMODE_FORMAT_EACH_SIZE;
	if (!r->resume)
		return r->cycles_done ? FSMODE_REMOUNT : FSMODE_FORMAT_START;
	return r->cycle == r->first_cycle && r->size_index == 0 ? FSMODE_FORMAT_START
								: FSMODE_REMOUNT;
}

int fsmode_own_name(const char *entry, const char *name)
{
	size_t np = strlen(MNT_PREFIX), nn = strlen(name);
	if (!*name || strncmp(entry, MNT_PREFIX, np) || strncmp(entry + np, name, nn) ||
	    entry[np + nn] != '-')
		return 0;
	const char *r = entry + np + nn + 1;
	for (int i = 0; i < MNT_RANDOM; i++)
		if (!isalnum((unsigned char)r[i]))
			return 0;
	return r[MNT_RANDOM] == 0;
}

static int own_entry(const char *entry, const struct fsmode_own *own, int n)
{
	for (int i = 0; i < n; i++)
		if (fsmode_own_name(entry, own[i].name))
			return 1;
	return 0;
}

static int own_device(dev_t dev, const struct fsmode_own *own, int n)
{
	for (int i = 0; i < n; i++)
		if (own[i].dev && own[i].dev == dev)
			return 1;
	return 0;
}

/* mountinfo's escapes (\040 for a space, proc_pid_mountinfo(5)), in place. */
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
	*o = 0;
}

/* The entry name of path when path is directly in base, else NULL. */
static const char *in_base(const char *path, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(path, base, n) || path[n] != '/' || strchr(path + n + 1, '/'))
		return NULL;
	return path + n + 1;
}

/* One pass over the mount table: unmount the own devices' mounts on own
 * names in base. Returns how many were unmounted. */
static int sweep_mounts_once(const char *base, const struct fsmode_own *own, int n)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], point[PATH_MAX], source[PATH_MAX];
	int removed = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned ma, mi;
		const char *sep = strstr(line, " - ");
		if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &ma, &mi, point) != 3 || !sep ||
		    sscanf(sep, " - %*s %4095s", source) != 1)
			continue;
		unescape(point);
		const char *entry = in_base(point, base);
		if (!entry || !own_entry(entry, own, n))
			continue;
		if (!own_device(makedev(ma, mi), own, n)) {
			log_msg(LOG_NOTICE,
				"leaving %s alone: %s is mounted there, not a device of this "
				"configuration",
				point, source);
			continue;
		}
		if (umount2(point, UMOUNT_NOFOLLOW)) {
			log_msg(LOG_WARNING, "cannot remove the stale mount of %s on %s: %s",
				source, point, strerror(errno));
			continue;
		}
		log_msg(LOG_NOTICE,
			"removed the stale mount of %s on %s, left by an earlier wearmond", source,
			point);
		removed++;
	}
	fclose(f);
	return removed;
}

/* Remove one own directory of base when it is empty, no mount point here
 * and not held by a running wearmond. Returns 1 when removed, else 0. */
static int sweep_dir(DIR *d, const char *base, dev_t base_dev, const char *entry)
{
	struct stat st;
	int removed = 0;
	if (fstatat(dirfd(d), entry, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
	    st.st_dev != base_dev)
		return 0;
	int fd = openat(dirfd(d), entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		log_msg(LOG_DEBUG, "%s/%s is in use by a running wearmond", base, entry);
	} else if (unlinkat(dirfd(d), entry, AT_REMOVEDIR) == 0) {
		log_msg(LOG_NOTICE,
			"removed the empty mount point %s/%s, left by an earlier wearmond", base,
			entry);
		removed = 1;
	} else {
		log_msg(LOG_NOTICE, "leaving %s/%s alone: %s", base, entry, strerror(errno));
	}
	close(fd);
	return removed;
}

#define SWEEP_PASSES 8 /* mounts stacked on one mount point */

int fsmode_sweep(const char *base, const struct fsmode_own *own, int n)
{
	struct stat bst;
	struct dirent *e;
	int removed = 0, r;
	if (!base)
		base = mount_base();
	for (int pass = 0; pass < SWEEP_PASSES && (r = sweep_mounts_once(base, own, n)); pass++)
		removed += r;
	DIR *d = opendir(base);
	if (!d)
		return -errno;
	if (fstat(dirfd(d), &bst)) {
		int ret = -errno;
		closedir(d);
		return ret;
	}
	while ((e = readdir(d)))
		if (own_entry(e->d_name, own, n))
			removed += sweep_dir(d, base, bst.st_dev, e->d_name);
	closedir(d);
	return removed;
}

int fsmode_private_mounts(char *err, size_t errlen)
{
	if (unshare(CLONE_NEWNS)) {
		int ret = -errno;
		snprintf(err, errlen, "unshare(CLONE_NEWNS): %s", strerror(-ret));
		return ret;
	}
	/* A slave, not private: mounts made here still never reach the host,
	 * but the host's unmounts reach us, so this namespace does not keep a
	 * filesystem the host let go of (a removed USB disk) mounted and its
	 * device busy. Copies of shared mounts are peers of the host's until
	 * this runs. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) {
		int ret = -errno;
		snprintf(err, errlen, "making / a slave mount: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

int fsmode_start(const struct cfg *c)
{
	struct fsmode_own *own = calloc((size_t)c->ntargets + 1, sizeof(*own));
	char err[256];
	int fsmode = 0, ret = 0;
	if (!own)
		return -ENOMEM;
	for (int i = 0; i < c->ntargets; i++) {
		struct stat st;
		own[i].name = c->targets[i].name;
		if (!stat(c->targets[i].device, &st) && S_ISBLK(st.st_mode))
			own[i].dev = st.st_rdev;
		fsmode |= c->targets[i].filesystem != FS_NONE;
	}
	int removed = fsmode_sweep(NULL, own, c->ntargets);
	if (removed < 0 && removed != -ENOENT)
		log_msg(LOG_WARNING, "cannot look for stale mount points in %s: %s", mount_base(),
			strerror(-removed));
	free(own);
	if (!fsmode)
		return 0;
	ret = fsmode_private_mounts(err, sizeof(err));
	if (ret)
		log_msg(LOG_WARNING,
			"filesystem mode: no mount namespace of its own (%s): the test "
			"filesystems are mounted in the one wearmond started in (private under "
			"a unit with PrivateMounts=yes); elsewhere a killed wearmond leaves them "
			"mounted until its next start removes them",
			err);
	else
		log_msg(LOG_INFO, "filesystem mode: test filesystems are mounted in wearmond's own "
				  "mount namespace and vanish with the process");
	return ret;
}
