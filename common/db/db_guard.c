/* db_guard: what keeps one history in one piece: the lock that allows one
 * daemon per database, the check that the open file is still the one at the
 * path, and the device identity recorded for each target name. */
#include "db/db_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "base/identity.h"

/* ---- one daemon per database ------------------------------------------- */

static void lock_path(const char *db_path, char *buf, size_t len)
{
	snprintf(buf, len, "%s.lock", db_path);
}

/* The pid holding a write lock on fd's file, or 0. */
static pid_t lock_owner(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
		return 0;
	return fl.l_pid;
}

int db_lock_take(const char *db_path, int *fd_out, char *err, size_t errlen)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[PATH_MAX + 8], pid[32];
	int fd, ret;

	*fd_out = -1;
	lock_path(db_path, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		ret = -errno;
		db_seterr(err, errlen, "database lock %s: %s", path, strerror(errno));
		return ret;
	}
	if (fcntl(fd, F_SETLK, &fl) != 0) {
		ret = (errno == EAGAIN || errno == EACCES) ? -EBUSY : -errno;
		if (ret == -EBUSY)
			db_seterr(err, errlen,
				  "database %s is in use by wearmond pid %ld "
				  "(lock %s); one daemon per database: stop it, or give this "
				  "configuration another database",
				  db_path, (long)lock_owner(fd), path);
		else
			db_seterr(err, errlen, "database lock %s: %s", path, strerror(-ret));
		close(fd);
		return ret;
	}
	/* the pid in the file is for people; the lock itself is the truth */
	int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_msg(LOG_WARNING, "database lock %s: cannot write the pid: %s", path,
			strerror(errno));
	*fd_out = fd;
	return 0;
}

void db_lock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}

pid_t db_lock_holder(const char *db_path)
{
	char path[PATH_MAX + 8];
	pid_t pid;
	int fd;

	lock_path(db_path, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	pid = lock_owner(fd);
	close(fd);
	return pid;
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
