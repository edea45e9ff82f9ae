/* fsmode: mkfs, private mount and the O_DIRECT test file. */
#include "fsmode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define MAX_ARGS 64

int fs_mkfs_argv(const struct cfg_target *t, const char *dev, char *buf, size_t buflen,
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

/* Run argv, capturing its stderr into err. Returns 0 or -EIO / -errno. */
static int run_capture(char **argv, char *err, size_t errlen)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		dup2(pfd[1], STDERR_FILENO);
		dup2(pfd[1], STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	char out[1024];
	size_t got = 0;
	ssize_t n;
	while ((n = read(pfd[0], out + got, sizeof(out) - 1 - got)) > 0 && got < sizeof(out) - 1)
		got += (size_t)n;
	out[got] = 0;
	close(pfd[0]);
	int status;
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ' ';
	snprintf(err, errlen, "%s failed (%s %d): %s", argv[0],
		 WIFEXITED(status) ? "exit status" : "signal",
		 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), util_strip(out));
	return -EIO;
}

static int make_mountpoint(struct fsmode *fs, const char *name, char *err, size_t errlen)
{
	const char *base = getenv("RUNTIME_DIRECTORY");
	if (!base || !*base)
		base = "/run";
	snprintf(fs->mnt, sizeof(fs->mnt), "%s/wearmon-%s-XXXXXX", base, name);
	if (!mkdtemp(fs->mnt)) {
		int ret = -errno;
		snprintf(err, errlen, "cannot create a mount point in %s: %s", base, strerror(-ret));
		fs->mnt[0] = 0;
		return ret;
	}
	return 0;
}

int fs_setup(struct fsmode *fs, struct tgt *tg, const struct cfg_target *t, char *err,
	     size_t errlen)
{
	char buf[sizeof(t->mkfs_options)];
	char *argv[MAX_ARGS];
	int ret;

	tgt_close(tg);          /* mkfs opens the device exclusively itself */
	if (fs_mkfs_argv(t, tg->real_path, buf, sizeof(buf), argv, MAX_ARGS) < 0) {
		snprintf(err, errlen, "mkfs_options: too many arguments");
		return -E2BIG;
	}
	if ((ret = run_capture(argv, err, errlen)))
		return ret;
	fs->formats++;
	if (!fs->mnt[0] && (ret = make_mountpoint(fs, t->name, err, errlen)))
		return ret;
	if (mount(tg->real_path, fs->mnt, cfg_filesystem_name(t->filesystem), MS_NOATIME, NULL)) {
		ret = -errno;
		snprintf(err, errlen, "cannot mount %s on %s: %s", tg->path, fs->mnt, strerror(-ret));
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

int fs_teardown(struct fsmode *fs, struct tgt *tg, char *err, size_t errlen)
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

int64_t fs_allocated(const struct fsmode *fs)
{
	struct stat st;
	if (!fs->mounted || stat(fs->file, &st))
		return 0;
	return (int64_t)st.st_blocks * 512;
}
