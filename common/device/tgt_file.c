/* tgt_file: a regular-file target, protected like a disk: never one of
 * wearmon's own files, never a loop device's backing file or a file another
 * process writes, never a file with data wearmon did not make (without
 * allow_destroy); checked before anything is created or extended. */
#include "device/tgt.h"
#include "device/tgt_int.h"
#include "base/identity.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

/* O_DIRECT alignment of a file's filesystem; 512 when statx does not say. */
static uint32_t file_dio_align(int fd)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align >= 512)
		return sx.stx_dio_offset_align;
	return 512;
}

/* path with its directory's symlinks resolved (the whole path's when it
 * exists): the file it names or would create. Returns 0 or -errno. */
static int canon_path(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], base[PATH_MAX], real[PATH_MAX];

	if (realpath(path, real)) {
		util_strlcpy(out, real, len);
		return 0;
	}
	util_strlcpy(dir, path, sizeof(dir));
	util_strlcpy(base, path, sizeof(base));
	if (!realpath(dirname(dir), real))
		return -errno;
	snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", basename(base));
	return 0;
}

const struct tgt_own_file *tgt_own_by_id(const struct tgt_guard *g, dev_t dev, ino_t ino)
{
	struct stat st;
	for (int i = 0; g && i < g->nown; i++)
		if (g->own[i].path[0] && !stat(g->own[i].path, &st) &&
		    identity_same_file(&st, dev, ino))
			return &g->own[i];
	return NULL;
}

/* Where path's file is or would be created: its directory's identity and
 * its name, symlinks resolved (canon_path), so that a directory reached by
 * another path (a symlink, a bind mount) is still the same directory.
 * Returns 0 or -errno. */
static int place_of(const char *path, struct stat *dir, char *name, size_t len)
{
	char canon[PATH_MAX], copy[PATH_MAX];
	int ret = canon_path(path, canon, sizeof(canon));

	if (ret)
		return ret;
	util_strlcpy(copy, canon, sizeof(copy));
	if (stat(dirname(copy), dir))
		return -errno;
	util_strlcpy(copy, canon, sizeof(copy));
	util_strlcpy(name, basename(copy), len);
	return 0;
}

static int same_place(const struct stat *da, const char *na, const struct stat *db, const char *nb)
{
	return identity_same_file(da, (uint64_t)db->st_dev, (uint64_t)db->st_ino) &&
	       !strcmp(na, nb);
}

/* Whether the place (dir, name) is one SQLite may use beside the database
 * db_path: every name the database's own followed by '-' (its -journal,
 * -wal and -shm, a super-journal DB-mjXXXXXXXXX of a transaction over
 * attached databases). */
static int sqlite_place(const char *db_path, const struct stat *dir, const char *name)
{
	char dname[NAME_MAX + 1];
	struct stat dd;
	size_t n;

	if (!db_path || place_of(db_path, &dd, dname, sizeof(dname)))
		return 0;
	n = strlen(dname);
	return identity_same_file(dir, (uint64_t)dd.st_dev, (uint64_t)dd.st_ino) &&
	       !strncmp(name, dname, n) && name[n] == '-';
}

/* The own file that the target is (by identity when it exists, else by the
 * place it would be created at), or NULL; a name SQLite may use beside the
 * database is described in *spare. */
static const struct tgt_own_file *own_file(const struct tgt_guard *g, const char *path,
					   const struct stat *st, int exists,
					   struct tgt_own_file *spare)
{
	char mine[NAME_MAX + 1], theirs[NAME_MAX + 1];
	struct stat md, td;
	const struct tgt_own_file *own = exists ? tgt_own_by_id(g, st->st_dev, st->st_ino) : NULL;

	if (own || !g || place_of(path, &md, mine, sizeof(mine)))
		return own;
	for (int i = 0; i < g->nown; i++)
		if (g->own[i].path[0] && !place_of(g->own[i].path, &td, theirs, sizeof(theirs)) &&
		    same_place(&md, mine, &td, theirs))
			return &g->own[i];
	if (!sqlite_place(g->db_path, &md, mine))
		return NULL;
	spare->what = "a file SQLite may keep beside the database";
	canon_path(path, spare->path, sizeof(spare->path));
	return spare;
}

/* The device and inode of the file at a loop/backing_file path: none when
 * the kernel says that file was deleted (another may have its name now). */
static int backing_path_id(const char *file, dev_t *dev, ino_t *ino)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(file), d = sizeof(deleted) - 1;
	struct stat st;

	if ((n > d && !strcmp(file + n - d, deleted)) || stat(file, &st))
		return -ENOENT;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* The loop device's own word on its backing file (the path may have moved
 * or been reused). Returns 0 or -errno. */
static int loop_status_id(const char *sysname, int fd, dev_t *dev, ino_t *ino)
{
	struct loop_info64 info;
	char node[96];
	int own = fd < 0, ret = 0;

	if (own) {
		snprintf(node, sizeof(node), "/dev/%s", sysname);
		fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return -errno;
	}
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, LOOP_GET_STATUS64, &info))
		ret = -errno;
	if (own)
		close(fd);
	if (ret)
		return ret;
	*dev = (dev_t)info.lo_device;
	*ino = (ino_t)info.lo_inode;
	return *ino ? 0 : -ENOENT;
}

int tgt_loop_backing_id(const char *sysname, int fd, dev_t *dev, ino_t *ino)
{
	char file[PATH_MAX];

	if (!loop_status_id(sysname, fd, dev, ino))
		return 0;
	if (tgt_sysfs_read(sysname, "loop/backing_file", file, sizeof(file)))
		return -ENOENT;
	return backing_path_id(file, dev, ino);
}

/* Whether the backing file of loop device sysname by its status (file
 * NULL), or the file at path file, is want's file. */
static int backs(const char *sysname, const char *file, const struct identity *want)
{
	dev_t bd = 0;
	ino_t bi = 0;
	int ret = file ? backing_path_id(file, &bd, &bi) : loop_status_id(sysname, -1, &bd, &bi);
	const struct identity is = { .dev = (uint64_t)bd, .ino = (uint64_t)bi };
	return !ret && !identity_diff(want, &is, ID_FILE, ID_FILE);
}

/* The attached loop device whose backing file is (dev, ino), by the loop
 * device's status or by its backing_file path. Returns 1 and names it in
 * loop, or 0. */
static int find_loop_on(dev_t dev, ino_t ino, char *loop, size_t len)
{
	const struct identity want = { .dev = (uint64_t)dev, .ino = (uint64_t)ino };
	char path[PATH_MAX], file[PATH_MAX];
	struct dirent *e;
	int found = 0;

	snprintf(path, sizeof(path), "%s/class/block", tgt_sys_root());
	DIR *d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (strncmp(e->d_name, "loop", 4) ||
		    tgt_sysfs_read(e->d_name, "loop/backing_file", file, sizeof(file)))
			continue;
		found = backs(e->d_name, NULL, &want) || backs(NULL, file, &want);
		if (found)
			util_strlcpy(loop, e->d_name, len);
	}
	closedir(d);
	return found;
}

int tgt_fdinfo_writes(const char *text)
{
	const char *p = strstr(text, "flags:");
	char *end;

	if (!p || (p != text && p[-1] != '\n'))
		return -EINVAL;
	unsigned long flags = strtoul(p + 6, &end, 8);
	if (end == p + 6)
		return -EINVAL;
	return (flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR;
}

/* Whether descriptor fd of process pid (procfs names) is open for writing. */
static int fd_writes(const char *pid, const char *fd)
{
	char path[PATH_MAX], text[1024];
	snprintf(path, sizeof(path), "%s/%s/fdinfo/%s", tgt_proc_root(), pid, fd);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return tgt_fdinfo_writes(text) == 1;
}

/* Whether process pid has (dev, ino) open for writing. */
int tgt_pid_fds(const char *pid,
		int (*fn)(const char *pid, const char *fd, const struct stat *st, void *arg),
		void *arg)
{
	char dir[PATH_MAX], fd_path[PATH_MAX + 300];
	struct dirent *e;
	struct stat st;
	int found = 0;

	snprintf(dir, sizeof(dir), "%s/%s/fd", tgt_proc_root(), pid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(fd_path, sizeof(fd_path), "%s/%s", dir, e->d_name);
		if (!stat(fd_path, &st))
			found = fn(pid, e->d_name, &st, arg);
	}
	closedir(d);
	return found;
}

static int fd_writes_file(const char *pid, const char *fd, const struct stat *st, void *arg)
{
	const struct identity *id = arg;
	return S_ISREG(st->st_mode) && identity_same_file(st, id->dev, id->ino) &&
	       fd_writes(pid, fd);
}

static int pid_writes(const char *pid, dev_t dev, ino_t ino)
{
	struct identity id = { .dev = (uint64_t)dev, .ino = (uint64_t)ino };
	return tgt_pid_fds(pid, fd_writes_file, &id);
}

/* Another process (not us, not skip) with (dev, ino) open for writing:
 * its pid, its name in comm; 0 when none. */
static pid_t find_writer(dev_t dev, ino_t ino, pid_t skip, char *comm, size_t len)
{
	char path[PATH_MAX];
	struct dirent *e;
	pid_t found = 0;

	snprintf(path, sizeof(path), "%s", tgt_proc_root());
	DIR *d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid() || pid == (long)skip ||
		    !pid_writes(e->d_name, dev, ino))
			continue;
		found = (pid_t)pid;
		snprintf(path, sizeof(path), "%s/%s/comm", tgt_proc_root(), e->d_name);
		FILE *f = fopen(path, "re");
		if (!f || !fgets(comm, (int)len, f))
			util_strlcpy(comm, "?", len);
		if (f)
			fclose(f);
		util_strip(comm);
	}
	closedir(d);
	return found;
}

/* Whether wearmon made the file a target before: recorded in the database,
 * and (where the filesystem keeps extended attributes) still marked, so
 * that another file at a reused inode number is not taken for it. */
static int owned(const struct tgt_guard *g, const char *path, const struct stat *st)
{
	if (!g || !g->owned || g->owned(g->owned_arg, st->st_dev, st->st_ino) != 1)
		return 0;
	return getxattr(path, TGT_XATTR, NULL, 0) >= 0 || errno != ENODATA;
}

/* The refusals of an existing file. Returns 0 or -errno (err set). */
static int existing_refusals(const struct cfg *c, const struct cfg_target *t,
			     const struct tgt_guard *g, const struct stat *st, struct tgt *tg,
			     char *err, size_t len)
{
	char loop[64], comm[64];
	pid_t pid;

	if (find_loop_on(st->st_dev, st->st_ino, loop, sizeof(loop)))
		return tgt_seterr(err, len, -EBUSY, c, t, "device",
				  "refusing %s: it is the backing file of the attached loop "
				  "device /dev/%s; detach it (losetup -d /dev/%s) or choose "
				  "another file",
				  tg->path, loop, loop);
	pid = find_writer(st->st_dev, st->st_ino, g ? g->writer_ok : 0, comm, sizeof(comm));
	if (pid && !strcmp(comm, "wearmond"))
		return tgt_seterr(err, len, -EBUSY, c, t, "device",
				  "refusing %s: it is held by another wearmond (pid %ld); stop it "
				  "first",
				  tg->path, (long)pid);
	if (pid)
		return tgt_seterr(err, len, -EBUSY, c, t, "device",
				  "refusing %s: process %ld (%s) has it open for writing; stop "
				  "it or choose another file",
				  tg->path, (long)pid, comm);
	if (st->st_blocks > 0 && !t->allow_destroy && !owned(g, tg->real_path, st))
		return tgt_seterr(err, len, -EPERM, c, t, "allow_destroy",
				  "refusing to write to file %s: it holds data (%llu bytes) that "
				  "wearmon did not create; set allow_destroy = yes in [target %s] "
				  "if that data may be destroyed",
				  tg->path, (unsigned long long)st->st_size, t->name);
	return 0;
}

/* A missing file: what it would be created as. */
static int missing_file(const struct cfg *c, const struct cfg_target *t, struct tgt *tg, char *err,
			size_t len)
{
	struct stat lst;
	char dir[PATH_MAX];

	if (!lstat(t->device, &lst) && S_ISLNK(lst.st_mode))
		return tgt_seterr(err, len, -ENOENT, c, t, "device",
				  "refusing %s: it is a symbolic link to a file that does not "
				  "exist; wearmon creates a file target only at a path that is "
				  "not a link",
				  t->device);
	if (!t->file_size)
		return tgt_seterr(err, len, -EINVAL, c, t, "file_size",
				  "%s does not exist; set file_size to create it as a "
				  "regular-file target",
				  tg->path);
	util_strlcpy(dir, t->device, sizeof(dir));
	if (access(dirname(dir), W_OK | X_OK))
		return tgt_seterr(err, len, -errno, c, t, "device",
				  "%s does not exist and its directory is not writable: %s",
				  t->device, strerror(errno));
	tg->capacity = t->file_size;
	tg->logical_block_size = 512; /* the filesystem's, once created */
	tg->own_it = 1;
	return 0;
}

int tgt_file_check(const struct cfg *c, const struct cfg_target *t, const struct tgt_guard *g,
		   const struct stat *st, int exists, struct tgt *tg, char *err, size_t len)
{
	struct tgt_own_file spare;
	const struct tgt_own_file *own = own_file(g, t->device, st, exists, &spare);
	int ret;

	tg->kind = TGT_FILE;
	tg->exists = exists;
	if (own)
		return tgt_seterr(err, len, -EPERM, c, t, "device",
				  "refusing %s: it %s %s %s; a target must not be one of "
				  "wearmon's own files",
				  tg->path, exists ? "is" : "would be created as", own->what,
				  own->path);
	if (!exists)
		return missing_file(c, t, tg, err, len);
	if ((ret = existing_refusals(c, t, g, st, tg, err, len)))
		return ret;
	tg->fd = open(tg->real_path, O_RDONLY | O_CLOEXEC);
	if (tg->fd < 0)
		return tgt_seterr(err, len, -errno, c, t, "device", "cannot open %s: %s", tg->path,
				  strerror(errno));
	tg->size = (uint64_t)st->st_size;
	tg->backing_dev = st->st_dev;
	tg->backing_ino = st->st_ino;
	tg->own_it = st->st_blocks == 0;
	tg->capacity = t->file_size ? t->file_size : tg->size;
	if (!tg->capacity)
		return tgt_seterr(err, len, -EINVAL, c, t, "file_size",
				  "%s is empty; set file_size to the capacity to test", tg->path);
	tg->logical_block_size = file_dio_align(tg->fd);
	tg->discard_granularity = (uint64_t)st->st_blksize;
	return 0;
}

/* Open the checked file for the run: create it (O_EXCL: it was missing
 * when checked) or open it again, and make sure it is the file checked. */
static int open_for_run(const struct cfg *c, const struct cfg_target *t, struct tgt *tg, char *err,
			size_t len)
{
	struct stat st;
	int flags = O_RDWR | O_DIRECT | O_CLOEXEC | (tg->exists ? 0 : O_CREAT | O_EXCL);

	tgt_close(tg);
	tg->fd = open(tg->exists ? tg->real_path : tg->path, flags, 0644);
	if (tg->fd < 0) {
		int ret = -errno;
		if (ret == -EINVAL && !tg->exists)
			unlink(tg->path); /* O_EXCL: the empty file is ours */
		if (ret == -EINVAL)
			return tgt_seterr(err, len, ret, c, t, "device",
					  "%s: its filesystem does not support O_DIRECT", tg->path);
		if (ret == -EEXIST)
			return tgt_seterr(err, len, ret, c, t, "device",
					  "refusing %s: it appeared after it was checked; start "
					  "again",
					  tg->path);
		return tgt_seterr(err, len, ret, c, t, "device", "cannot open %s: %s", tg->path,
				  strerror(-ret));
	}
	tg->created = !tg->exists;
	if (fstat(tg->fd, &st))
		return tgt_seterr(err, len, -errno, c, t, "device", "cannot stat %s: %s", tg->path,
				  strerror(errno));
	if (tg->exists && !identity_same_file(&st, tg->backing_dev, tg->backing_ino))
		return tgt_seterr(err, len, -ESTALE, c, t, "device",
				  "refusing %s: it was replaced by another file after it was "
				  "checked; start again",
				  tg->path);
	tg->backing_dev = st.st_dev;
	tg->backing_ino = st.st_ino;
	tg->size = (uint64_t)st.st_size;
	tg->discard_granularity = (uint64_t)st.st_blksize;
	if (tg->created)
		realpath(tg->path, tg->real_path);
	return 0;
}

int tgt_file_prepare(const struct cfg *c, const struct cfg_target *t, struct tgt *tg, char *err,
		     size_t len)
{
	int ret = open_for_run(c, t, tg, err, len);

	if (ret)
		return ret;
	if (tg->size < tg->capacity && ftruncate(tg->fd, (off_t)tg->capacity))
		return tgt_seterr(err, len, -errno, c, t, "file_size",
				  "cannot extend %s to %llu bytes: %s", tg->path,
				  (unsigned long long)tg->capacity, strerror(errno));
	tg->logical_block_size = file_dio_align(tg->fd);
	/* The mark is a second witness beside owned_files; a filesystem
	 * without user extended attributes keeps the record alone. */
	if (tg->own_it)
		(void)fsetxattr(tg->fd, TGT_XATTR, t->name, strlen(t->name), 0);
	return 0;
}
