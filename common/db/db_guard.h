/* db_guard: what keeps one history in one piece: the lock that allows one
 * daemon per database, the check that the open file is still the one at the
 * path, the device identity recorded for each target name, and the files
 * and filesystems wearmon made. */
#ifndef WEARMON_DB_GUARD_H
#define WEARMON_DB_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "db/db_cycle.h"

struct db;

/* Take the lock that allows one daemon per database file: a write lock on
 * the database file itself (an open-file-description lock on a byte SQLite
 * never locks), so every path to the file (hard link, symlink, bind mount,
 * new name) meets it, and readers never do. A missing database is created
 * empty to hold it when create is set; without create, nothing is locked
 * (*fd stays -1). Held until db_lock_release (or exit). Returns 0 (*fd
 * set, or -1), 1 when it created the empty file, -EBUSY with the holder's
 * pid (and the path it opened the file by) in err, or -errno. */
int db_lock_take(const char *db_path, int create, int *fd, char *err, size_t errlen);

/* With the lock held (fd from db_lock_take): SQLite keeps its write-ahead
 * log beside the path it opens, so a log left beside another name of the
 * file (a hard link, a bind mount, the path before a rename) by the last
 * writer is folded into the file through that name; then this name is
 * recorded on the file (extended attribute user.wearmon.database) for the
 * next start. Returns 0, -EEXIST when a log is left beside a name that no
 * longer names the file (err says where it is and what to do), or -errno. */
int db_lock_names(const char *db_path, int fd, char *err, size_t errlen);

/* Release the lock (fd < 0 is fine). Call it after db_close: closing a
 * descriptor of the file drops the process's POSIX locks on it. */
void db_lock_release(int fd);

/* A start that failed before writing anything: remove the database file
 * that db_lock_take created, when it is still that file and empty.
 * Returns 1 when removed, 0 when kept, or -errno. */
int db_lock_drop_new(const char *db_path, int fd);

/* The pid of the process holding db_path's file's lock, found by stat(2)
 * and /proc (the file is not opened, so the caller's own SQLite locks on it
 * stay). Returns it, or 0 if none (or none this process can see). */
pid_t db_lock_holder(const char *db_path);

/* Whether process pid holds the database's lock, as far as this process
 * can see: by the holder's descriptors, or, when it may not read them (a
 * reader that is not root, a daemon that is), by the lock /proc/locks
 * lists on the file and pid being a wearmond. Returns 1 or 0. */
int db_lock_held_by(const char *db_path, pid_t pid);

/* db_lock_holder, with the path the holder opened the file by in path
 * (as the holder sees it; "" when unknown). */
pid_t db_lock_holder_path(const char *db_path, char *path, size_t len);

/* Filesystem mode: record that wearmon made the filesystem with this UUID
 * (and type, e.g. "ext4") on target_id's device (path, for people).
 * Returns 0 or -errno. */
int db_fs_made_add(struct db *db, int64_t target_id, const char *uuid, const char *type,
		   const char *device);

/* Whether wearmon recorded making the filesystem uuid on target_id's
 * device (db_fs_made_add). Returns 1, 0, or -errno. */
int db_fs_made(struct db *db, int64_t target_id, const char *uuid);

/* Whether the open database is still the file at its path (not deleted,
 * not replaced). Returns 0, or -ESTALE with the reason in why. */
int db_file_check(struct db *db, char *why, size_t len);

/* Compare t's identity with the row recorded under t->name. Returns 0 (same,
 * or not recorded yet), 1 with what differs in diff, or -errno. */
int db_target_identity(struct db *db, const struct db_target_info *t, char *diff, size_t len);

/* Whether (dev, ino) is a file wearmon made a target (owned_files; a
 * database older than version 15 has none). Returns 1, 0, or -errno. */
int db_owned_file(struct db *db, uint64_t dev, uint64_t ino);

/* Record (dev, ino) as target's file, created or found without data at
 * path. Returns 0 or -errno. */
int db_owned_add(struct db *db, uint64_t dev, uint64_t ino, const char *target, const char *path);

/* The two devices of an adoption: serial and model of the one recorded
 * and of the one adopted (NULL or "": unknown). */
struct db_adopted {
	const char *old_serial, *old_model, *new_serial, *new_model;
};

/* The serial and model recorded for target name, into the buffers ("" when
 * unknown or no such target): read before an adoption rewrites them.
 * Returns 0 or -errno. */
int db_target_recorded(struct db *db, const char *name, char *serial, size_t slen, char *model,
		       size_t mlen);

/* After the upsert of an adopted device: unfinished cycles of the old one
 * fail, a new campaign starts, a device-replaced event records both
 * devices' serial and model (message and data) and diff. Returns 0 or
 * -errno. */
int db_target_adopt(struct db *db, int64_t target_id, int64_t run_id, const char *diff,
		    const struct db_adopted *who);

#endif
