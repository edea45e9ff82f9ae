/* db_guard: what keeps one history in one piece: the lock that allows one
 * daemon per database, the check that the open file is still the one at the
 * path, and the device identity recorded for each target name. */
#include "db/db_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "base/identity.h"

/* ---- one daemon per database ------------------------------------------- */

/* The lock is an open-file-description (OFD) write lock on one byte of the
 * database file itself, so it belongs to the file and not to a path: a hard
 * link, a symbolic link, a bind mount or a new name reaches the same lock.
 * Unlike a POSIX lock it is not dropped when the process closes another
 * descriptor of the file (SQLite opens and closes its own), and it
 * conflicts between two descriptions in one process too. SQLite locks
 * bytes 0x40000000 to 0x400001ff of the file (its lock-byte page) and no
 * other, so neither a reader nor a writer of the database ever meets this
 * byte; it may lie past the end of the file. */
#define LOCK_BYTE 0x40000400LL

static struct flock lock_range(short type)
{
	return (struct flock){
		.l_type = type, .l_whence = SEEK_SET, .l_start = LOCK_BYTE, .l_len = 1
	};
}

/* Whether /proc/locks lists our write lock on inode ino. Only the inode
 * and the offset are compared: the device number there is the
 * superblock's, which stat(2) does not report on every filesystem. */
static int listed_lock(ino_t ino)
{
	char line[512], kind[16], type[16];
	unsigned long long lino;
	long long start;
	int found = 0;
	FILE *f = fopen("/proc/locks", "re");

	if (!f)
		return 1; /* cannot tell: look for the holder */
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*[^:]: %15s %*s %15s %*s %*x:%*x:%llu %lld", kind, type,
			       &lino, &start) == 4 &&
			!strcmp(kind, "OFDLCK") && !strcmp(type, "WRITE") &&
			lino == (unsigned long long)ino && start == LOCK_BYTE;
	fclose(f);
	return found;
}

/* Whether /proc/PID/fdinfo/FD shows our write lock. */
static int fd_holds_lock(const char *pid, const char *fd)
{
	char path[96], text[4096], want[32];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, fd);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	snprintf(want, sizeof(want), " %lld ", LOCK_BYTE);
	for (char *l = strstr(text, "lock:"); l; l = strstr(l + 1, "lock:")) {
		char *eol = strchr(l, '\n');
		if (eol)
			*eol = '\0';
		int ours = strstr(l, "OFDLCK") && strstr(l, "WRITE") && strstr(l, want);
		if (eol)
			*eol = '\n';
		if (ours)
			return 1;
	}
	return 0;
}

/* Whether process pid has a descriptor of (dev, ino) holding the lock;
 * the path it opened the file by goes to path (when given). */
static int pid_holds(const char *pid, const struct stat *file, char *path, size_t len)
{
	char dir[64], fd_path[128];
	struct dirent *e;
	struct stat st;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	if (!(d = opendir(dir)))
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(fd_path, sizeof(fd_path), "%s/%s", dir, e->d_name);
		if (stat(fd_path, &st) || !S_ISREG(st.st_mode) ||
		    !identity_same_file(&st, (uint64_t)file->st_dev, (uint64_t)file->st_ino))
			continue;
		found = fd_holds_lock(pid, e->d_name);
		ssize_t n = found && path ? readlink(fd_path, path, len - 1) : -1;
		if (n >= 0)
			path[n] = '\0';
	}
	closedir(d);
	return found;
}

/* Whether /proc/PID/comm says wearmond. */
static int is_wearmond(const char *pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strcmp(comm, "wearmond\n");
}

/* The pid of the process (not this one) holding the lock on the file, and
 * the path it opened it by; 0 when none is found (or none can be seen:
 * ProtectProc= hides other users' processes). The wearmond processes are
 * looked at first: the descriptors of every other process only when none
 * of them holds it (a program that took the lock by hand). */
static pid_t find_holder(const struct stat *file, char *path, size_t len)
{
	struct dirent *e;
	pid_t found = 0;
	DIR *d;

	if (path && len)
		path[0] = '\0';
	if (!listed_lock(file->st_ino) || !(d = opendir("/proc")))
		return 0;
	for (int pass = 0; !found && pass < 2; pass++) {
		rewinddir(d);
		while (!found && (e = readdir(d))) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);
			if (*end || pid <= 0 || pid == (long)getpid() ||
			    is_wearmond(e->d_name) != !pass)
				continue;
			if (pid_holds(e->d_name, file, path, len))
				found = (pid_t)pid;
		}
	}
	closedir(d);
	return found;
}

/* The database file, opened for writing (with create, created empty when
 * missing, which SQLite takes for a new database: *created is then 1).
 * Returns the descriptor, or -errno with err set (-ENOENT without create:
 * err empty). */
static int open_db_file(const char *path, int create, int *created, char *err, size_t errlen)
{
	struct stat st;
	int fd = -1;

	*created = 0;
	for (int tries = 0; fd < 0 && tries < 2; tries++) {
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0 && errno == ENOENT && !create)
			return -ENOENT;
		if (fd < 0 && errno == ENOENT) {
			fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			*created = fd >= 0;
		}
		if (fd < 0 && errno != EEXIST)
			break; /* EEXIST: another start created it meanwhile */
	}
	if (fd < 0) {
		int ret = -errno;
		db_seterr(err, errlen, "database %s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		db_seterr(err, errlen, "database %s is not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* The refusal when the lock is held: who holds it, and by which path. */
static void busy_message(const char *db_path, int fd, char *err, size_t errlen)
{
	char held[PATH_MAX] = "", by[PATH_MAX + 64] = "", real[PATH_MAX];
	struct stat st;
	pid_t pid = fstat(fd, &st) ? 0 : find_holder(&st, held, sizeof(held));

	if (held[0] && (!realpath(db_path, real) || strcmp(real, held)))
		snprintf(by, sizeof(by), ", which opened the same file as %s", held);
	if (pid)
		db_seterr(err, errlen,
			  "database %s is in use by wearmond pid %ld%s; one daemon per "
			  "database file: stop it, or give this configuration another database",
			  db_path, (long)pid, by);
	else
		db_seterr(err, errlen,
			  "database %s is in use by another wearmond (its pid is not visible "
			  "here); one daemon per database file: stop it, or give this "
			  "configuration another database",
			  db_path);
}

int db_lock_take(const char *db_path, int create, int *fd_out, char *err, size_t errlen)
{
	struct flock fl = lock_range(F_WRLCK);
	int created, ret, fd;

	*fd_out = -1;
	fd = open_db_file(db_path, create, &created, err, errlen);
	if (fd == -ENOENT && !create)
		return 0;
	if (fd < 0)
		return fd;
	if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
		ret = (errno == EAGAIN || errno == EACCES) ? -EBUSY : -errno;
		if (ret == -EBUSY)
			busy_message(db_path, fd, err, errlen);
		else
			db_seterr(err, errlen, "database %s: cannot lock it: %s", db_path,
				  strerror(-ret));
		close(fd);
		return ret;
	}
	*fd_out = fd;
	return created;
}

void db_lock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}

int db_lock_drop_new(const char *db_path, int fd)
{
	struct stat held, now;

	if (fd < 0 || fstat(fd, &held) || held.st_size != 0 || stat(db_path, &now) ||
	    !identity_same_file(&now, (uint64_t)held.st_dev, (uint64_t)held.st_ino))
		return 0;
	return unlink(db_path) ? -errno : 1;
}

pid_t db_lock_holder_path(const char *db_path, char *path, size_t len)
{
	struct stat st;

	/* by stat(2) and /proc only: opening the file here would drop the
	 * caller's POSIX locks on it (SQLite's, when it has the database
	 * open) when the descriptor is closed */
	if (stat(db_path, &st) || !S_ISREG(st.st_mode))
		return 0;
	return find_holder(&st, path, len);
}

/* Whether this process may not read the descriptors of process pid
 * (another user's, to a reader that is not root). */
static int fds_hidden(const char *pid)
{
	char dir[64];
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	if ((d = opendir(dir))) {
		closedir(d);
		return 0;
	}
	return errno == EACCES || errno == EPERM;
}

int db_lock_held_by(const char *db_path, pid_t pid)
{
	struct stat st;
	char p[32];

	if (pid <= 0 || stat(db_path, &st) || !S_ISREG(st.st_mode))
		return 0;
	snprintf(p, sizeof(p), "%d", (int)pid);
	/* pid's own descriptors first, before find_holder's look at
	 * /proc/locks: that file is read in pieces while other processes take
	 * and drop their locks, so one read can miss a line, and a live
	 * daemon would look gone */
	if (pid_holds(p, &st, NULL, 0))
		return 1;
	pid_t h = find_holder(&st, NULL, 0);
	if (h)
		return h == pid;
	/* a reader that may not look into the daemon's descriptors (not
	 * root, the daemon root) still sees the lock in /proc/locks and the
	 * process's name */
	return fds_hidden(p) && is_wearmond(p) && listed_lock(st.st_ino);
}

pid_t db_lock_holder(const char *db_path)
{
	return db_lock_holder_path(db_path, NULL, 0);
}

/* ---- the name the database was written by ------------------------------ */

/* SQLite keeps the write-ahead log (and a rollback journal) beside the path
 * it opened, symlinks resolved, not beside the file: a database last
 * written through another name (a hard link, a bind mount of the file, the
 * path before a rename) may have committed history in a log that a writer
 * through this name would never read, and that would later be replayed
 * over this writer's pages by anyone opening the other name. The name a
 * writer used is kept on the file itself, in an extended attribute, so
 * that every name finds it. */
#define NAME_XATTR "user.wearmon.database"

/* The size of the log or journal left beside name, or 0. */
static off_t log_beside(const char *name, char *which, size_t len)
{
	static const char *const suffixes[] = { "-wal", "-journal" };
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		snprintf(which, len, "%s%s", name, suffixes[i]);
		if (!stat(which, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
			return st.st_size;
	}
	return 0;
}

/* Let SQLite read the file through name once: it replays the log beside
 * that name (or rolls back its hot journal), copies it into the file and,
 * as the last connection, removes it. Returns 0 or -errno (err set). */
static int fold_log(const char *name, char *err, size_t errlen)
{
	sqlite3 *c = NULL;
	int rc = sqlite3_open_v2(name, &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_exec(c, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(c, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		db_seterr(err, errlen, "cannot fold the log beside %s into the database: %s", name,
			  c ? sqlite3_errmsg(c) : sqlite3_errstr(rc));
	int ret = rc == SQLITE_OK ? 0 : db_map_rc(rc, c ? sqlite3_system_errno(c) : 0);
	sqlite3_close(c);
	return ret;
}

/* The log beside the name the file was last written by, when that name is
 * another. Returns 0, -EEXIST (a log beside a name that no longer is this
 * file: refused, err says what to do) or -errno. */
static int other_name(const char *db_path, const char *last, const struct stat *file, char *err,
		      size_t errlen)
{
	char which[PATH_MAX + 16];
	struct stat st;
	off_t size = log_beside(last, which, sizeof(which));
	int gone = stat(last, &st) != 0;

	if (!size ||
	    (!gone && !identity_same_file(&st, (uint64_t)file->st_dev, (uint64_t)file->st_ino)))
		return 0; /* nothing left, or the log of the file now at that name */
	if (gone) {
		db_seterr(err, errlen,
			  "database %s was last written as %s, and %s (%lld bytes) is still "
			  "there: it may hold history the file lacks. If the database was moved "
			  "from there, move that file beside it as %s%s (or move the database "
			  "back) and start again",
			  db_path, last, which, (long long)size, db_path, which + strlen(last));
		return -EEXIST;
	}
	int ret = fold_log(last, err, errlen);
	if (!ret)
		log_msg(LOG_NOTICE,
			"database %s: folded %s (%lld bytes), left when it was last written as %s, "
			"into the file",
			db_path, which, (long long)size, last);
	return ret;
}

int db_lock_names(const char *db_path, int fd, char *err, size_t errlen)
{
	char mine[PATH_MAX], last[PATH_MAX];
	struct stat file;
	ssize_t n;
	int ret = 0;

	if (fd < 0 || fstat(fd, &file) || !realpath(db_path, mine))
		return 0;
	n = fgetxattr(fd, NAME_XATTR, last, sizeof(last) - 1);
	if (n < 0 && errno != ENODATA)
		return 0; /* no extended attributes here: nothing kept, nothing known */
	if (n > 0) {
		last[n] = '\0';
		if (strcmp(last, mine))
			ret = other_name(db_path, last, &file, err, errlen);
	}
	if (!ret && (n <= 0 || strcmp(last, mine)) &&
	    fsetxattr(fd, NAME_XATTR, mine, strlen(mine), 0) && errno != ENOTSUP)
		log_msg(LOG_WARNING, "database %s: cannot record the name it is written by: %s",
			db_path, strerror(errno));
	return ret;
}

/* ---- the file under the open connection -------------------------------- */

int db_watch_open(struct db *db, char *err, size_t errlen)
{
	db->watch_fd = open(db->path, O_RDONLY | O_CLOEXEC);
	if (db->watch_fd >= 0)
		return 0;
	int ret = -errno;
	db_seterr(err, errlen, "database %s: %s", db->path, strerror(errno));
	return ret;
}

int db_file_check(struct db *db, char *why, size_t len)
{
	struct stat open_st, path_st;

	if (!db || db->watch_fd < 0)
		return 0;
	if (fstat(db->watch_fd, &open_st) != 0)
		return 0;
	int gone = stat(db->path, &path_st) != 0;
	if (gone && errno != ENOENT) {
		db_seterr(why, len, "database %s is no longer reachable at its path: %s", db->path,
			  strerror(errno));
		return -ESTALE;
	}
	if (!gone &&
	    !identity_same_file(&path_st, (uint64_t)open_st.st_dev, (uint64_t)open_st.st_ino)) {
		db_seterr(why, len, "database %s was replaced by another file while in use",
			  db->path);
		return -ESTALE;
	}
	if (gone || open_st.st_nlink == 0) {
		db_seterr(why, len,
			  "database %s was deleted while in use; the history "
			  "written since is lost with it",
			  db->path);
		return -ESTALE;
	}
	return 0;
}

/* ---- device identity ---------------------------------------------------- */

struct known {
	int found;
	int64_t id;
	char kind[16], device[PATH_MAX], serial[128], model[128], backing[PATH_MAX];
	uint64_t capacity;
	uint64_t backing_dev, backing_ino; /* ino 0: NULL (before v15) */
};

static void copy_col(char *dst, size_t len, const struct db_value *v)
{
	util_strlcpy(dst, v->type == DB_TEXT && v->s ? v->s : "", len);
}

static int keep_known(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct known *k = arg;

	(void)n;
	(void)names;
	k->found = 1;
	k->id = v[0].i;
	copy_col(k->kind, sizeof(k->kind), &v[1]);
	copy_col(k->device, sizeof(k->device), &v[2]);
	k->capacity = (uint64_t)v[3].i;
	copy_col(k->serial, sizeof(k->serial), &v[4]);
	copy_col(k->model, sizeof(k->model), &v[5]);
	copy_col(k->backing, sizeof(k->backing), &v[6]);
	k->backing_dev = v[7].type == DB_INT ? (uint64_t)v[7].i : 0;
	k->backing_ino = v[8].type == DB_INT ? (uint64_t)v[8].i : 0;
	return 1;
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* Appends "what 'old' -> 'new'" to out. */
static void differ(char *out, size_t len, const char *what, const char *old, const char *now)
{
	size_t used = strlen(out);

	if (used >= len)
		return;
	snprintf(out + used, len - used, "%s%s '%s' -> '%s'", used ? ", " : "", what,
		 *old ? old : "(none)", *now ? now : "(none)");
}

/* "MAJOR:MINOR inode INO" of a file identity. */
static void file_id_text(char *out, size_t len, uint64_t dev, uint64_t ino)
{
	snprintf(out, len, "%u:%u inode %llu", major((dev_t)dev), minor((dev_t)dev),
		 (unsigned long long)ino);
}

/* The identity that decides "same device" (base/identity.h): kind,
 * serial, model, capacity, the backing file of a loop device (its path,
 * and its device and inode where both starts knew them: a row from before
 * v15 takes them silently), the path of a regular file (which wearmon may
 * create again, so not its inode). The node name of a block device (sdb,
 * loop3) may change between boots. A serial or model that cannot be read
 * is no difference. */
static void compare(const struct known *k, const struct db_target_info *t, char *diff, size_t len)
{
	const struct identity was = {
		.kind = k->kind,
		.serial = k->serial,
		.model = k->model,
		.capacity = k->capacity,
		.backing = k->backing,
		.backing_dev = k->backing_dev,
		.backing_ino = k->backing_ino,
		.path = k->device,
	};
	const struct identity now = {
		.kind = tgt_kind_name(t->kind),
		.serial = t->serial,
		.model = t->model,
		.capacity = t->capacity_bytes,
		.backing = t->backing_file,
		.backing_dev = t->backing_dev,
		.backing_ino = t->backing_ino,
		.path = t->device,
	};
	unsigned parts = ID_KIND | ID_SERIAL | ID_MODEL | ID_CAPACITY | ID_BACKING;
	if (t->kind == TGT_BLOCK && t->backing_file)
		parts |= ID_BACKING_ID;
	if (t->kind == TGT_FILE)
		parts |= ID_PATH;
	unsigned d = identity_diff(&was, &now, parts, ID_KIND | ID_CAPACITY | ID_BACKING | ID_PATH);
	char a[64], b[64];

	diff[0] = '\0';
	if (d & ID_KIND)
		differ(diff, len, "kind", k->kind, now.kind);
	if (d & ID_SERIAL)
		differ(diff, len, "serial", k->serial, nz(t->serial));
	if (d & ID_MODEL)
		differ(diff, len, "model", k->model, nz(t->model));
	if (d & ID_CAPACITY) {
		snprintf(a, sizeof(a), "%llu", (unsigned long long)k->capacity);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)t->capacity_bytes);
		differ(diff, len, "capacity", a, b);
	}
	if (d & ID_BACKING)
		differ(diff, len, "backing file", k->backing, nz(t->backing_file));
	if (d & ID_BACKING_ID) {
		file_id_text(a, sizeof(a), k->backing_dev, k->backing_ino);
		file_id_text(b, sizeof(b), t->backing_dev, t->backing_ino);
		differ(diff, len, "backing file identity", a, b);
	}
	if (d & ID_PATH)
		differ(diff, len, "file", k->device, t->device);
}

int db_target_identity(struct db *db, const struct db_target_info *t, char *diff, size_t len)
{
	static const char sql[] =
		"SELECT id, kind, device, capacity_bytes, serial, model,"
		" backing_file, backing_dev, backing_ino FROM targets WHERE name = ?";
	struct db_value p[] = { { .type = DB_TEXT, .s = t->name } };
	struct known *k = calloc(1, sizeof(*k));
	char err[256];
	int ret;

	diff[0] = '\0';
	if (!k)
		return -ENOMEM;
	ret = db_query(db, sql, p, 1, keep_known, k, err, sizeof(err));
	if (ret < 0)
		log_msg(LOG_ERR, "%s", err);
	else if (k->found) {
		compare(k, t, diff, len);
		ret = diff[0] ? 1 : 0;
	} else {
		ret = 0;
	}
	free(k);
	return ret;
}

/* ---- files wearmon made targets ---------------------------------------- */

static int row_found(void *arg, int n, const struct db_value *v, const char *const *names)
{
	(void)n;
	(void)names;
	*(int *)arg = (int)v[0].i;
	return 0;
}

int db_owned_file(struct db *db, uint64_t dev, uint64_t ino)
{
	static const char has_table[] = "SELECT count(*) FROM sqlite_master"
					" WHERE type = 'table' AND name = 'owned_files'";
	static const char sql[] = "SELECT count(*) FROM owned_files WHERE dev = ? AND ino = ?";
	struct db_value p[] = { { .type = DB_INT, .i = (int64_t)dev },
				{ .type = DB_INT, .i = (int64_t)ino } };
	char err[256];
	int n = 0;
	int ret = db_query(db, has_table, NULL, 0, row_found, &n, err, sizeof(err));

	if (!ret && n)
		ret = db_query(db, sql, p, 2, row_found, &n, err, sizeof(err));
	if (ret < 0) {
		log_msg(LOG_ERR, "%s", err);
		return ret;
	}
	return n > 0;
}

int db_owned_add(struct db *db, uint64_t dev, uint64_t ino, const char *target, const char *path)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_OWNED_ADD, &b);
	db_bind_u64(&b, dev);
	db_bind_u64(&b, ino);
	db_bind_text(&b, target);
	db_bind_text(&b, path);
	ret = db_bind_run(&b, "record the file created as a target");
	db_leave(db);
	return ret;
}

int db_fs_made_add(struct db *db, int64_t target_id, const char *uuid, const char *type,
		   const char *device)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db_bind_start(db, ST_FS_MADE_ADD, &b);
	db_bind_i64(&b, target_id);
	db_bind_text(&b, uuid);
	db_bind_text(&b, type);
	db_bind_text(&b, device);
	ret = db_bind_run(&b, "record the filesystem made");
	db_leave(db);
	return ret;
}

int db_fs_made(struct db *db, int64_t target_id, const char *uuid)
{
	static const char sql[] =
		"SELECT count(*) FROM made_filesystems WHERE target_id = ? AND uuid = ?";
	struct db_value p[] = { { .type = DB_INT, .i = target_id },
				{ .type = DB_TEXT, .s = uuid } };
	char err[256];
	int n = 0;
	int ret = db_query(db, sql, p, 2, row_found, &n, err, sizeof(err));

	if (ret < 0) {
		log_msg(LOG_ERR, "%s", err);
		return ret;
	}
	return n > 0;
}

/* Run statement id with the target's id alone. Returns 0 or -errno. */
static int by_target(struct db *db, enum stmt_id id, int64_t target_id, const char *what)
{
	struct db_bind b;

	db_bind_start(db, id, &b);
	db_bind_i64(&b, target_id);
	return db_bind_run(&b, what);
}

int db_target_recorded(struct db *db, const char *name, char *serial, size_t slen, char *model,
		       size_t mlen)
{
	static const char sql[] =
		"SELECT id, kind, device, capacity_bytes, serial, model,"
		" backing_file, backing_dev, backing_ino FROM targets WHERE name = ?";
	struct db_value p[] = { { .type = DB_TEXT, .s = name } };
	struct known *k = calloc(1, sizeof(*k));
	char err[256];
	int ret;

	serial[0] = model[0] = '\0';
	if (!k)
		return -ENOMEM;
	ret = db_query(db, sql, p, 1, keep_known, k, err, sizeof(err));
	if (ret < 0)
		log_msg(LOG_ERR, "%s", err);
	if (ret >= 0 && k->found) {
		util_strlcpy(serial, k->serial, slen);
		util_strlcpy(model, k->model, mlen);
	}
	free(k);
	return ret < 0 ? ret : 0;
}

/* "'text'", or "unknown" for none. */
static const char *quoted(const char *s, char *buf, size_t len)
{
	if (!s || !*s)
		return "unknown";
	snprintf(buf, len, "'%s'", s);
	return buf;
}

int db_target_adopt(struct db *db, int64_t target_id, int64_t run_id, const char *diff,
		    const struct db_adopted *who)
{
	/* the old device's wear state (counters, extents) says nothing about
	 * the new one */
	static const enum stmt_id steps[] = { ST_ADOPT_FAIL_CYCLES, ST_ADOPT_STALE,
					      ST_ADOPT_CAMPAIGN, ST_ADOPT_WEAR, ST_EXTENTS_DELETE };
	struct db_bind b;
	char msg[1400], q[4][160];
	int ret = db_enter(db);

	if (ret)
		return ret;
	db->last_err[0] = '\0';
	snprintf(msg, sizeof(msg),
		 "a new device was adopted (adopt_new_device = yes): was serial %s model %s, "
		 "now serial %s model %s (%s); a new campaign starts",
		 quoted(who->old_serial, q[0], sizeof(q[0])),
		 quoted(who->old_model, q[1], sizeof(q[1])),
		 quoted(who->new_serial, q[2], sizeof(q[2])),
		 quoted(who->new_model, q[3], sizeof(q[3])), diff);
	ret = db_tx_begin(db);
	for (size_t i = 0; !ret && i < ARRAY_SIZE(steps); i++)
		ret = by_target(db, steps[i], target_id, "record the adopted device");
	if (!ret) {
		db_bind_start(db, ST_ADOPT_EVENT, &b);
		db_bind_i64(&b, target_id);
		db_bind_i64(&b, run_id);
		db_bind_text(&b, msg);
		db_bind_opt_text(&b, who->old_serial);
		db_bind_opt_text(&b, who->old_model);
		db_bind_opt_text(&b, who->new_serial);
		db_bind_opt_text(&b, who->new_model);
		ret = db_bind_run(&b, "record the adopted device");
	}
	ret = db_tx_end(db, ret);
	if (ret) {
		char err[512];
		db_failure(db, ret, err, sizeof(err));
		log_msg(LOG_ERR, "recording the adopted device: %s", err);
	}
	db_leave(db);
	return ret;
}
