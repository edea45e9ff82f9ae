/* guard: start-up refusals that protect the history and the host: files
 * root would run or read that others can change, two targets on one device,
 * a device another wearmond holds, wearmon's own files as targets. Writes
 * nothing. */
#ifndef WEARMON_GUARD_H
#define WEARMON_GUARD_H

#include <stddef.h>
#include <sys/types.h>

#include "db/db.h"
#include "sched.h"

/* Room for guard_own_files: the database, -journal, -wal, -shm, lock,
 * configuration and metrics file. */
#define GUARD_OWN_MAX 7

/* what (e.g. "configuration") at path must not be writable by group or
 * others, and must be owned by root when we run as root; no symlink on the
 * way may be another user's (trust_links), and every directory above it
 * must be root's and closed to others (trust_dirs): sshd's StrictModes.
 * Returns 0, or -EPERM / -errno with the reason in err. */
int guard_trust(const char *what, const char *path, char *err, size_t len);

/* The database, its -journal, -wal, -shm and lock files and the metrics file must
 * not be reached through a symlink another user could have placed
 * (trust_links). Returns 0, or -EPERM / -errno with err naming the
 * configuration line, the path, the link and its owner. */
int guard_paths(const struct cfg *c, char *err, size_t len);

/* Whether targets a and b are the same device or file (same device number,
 * same file, or a loop device on the other's file). */
int guard_same_device(const struct tgt *a, const struct tgt *b);

/* The pid of another wearmond that has tg's device or file open, or 0. */
pid_t guard_holder(const struct tgt *tg);

/* Fill own with wearmon's own files under c (tgt_guard.own). Returns how
 * many. */
int guard_own_files(const struct cfg *c, struct tgt_own_file own[GUARD_OWN_MAX]);

/* tgt_owned_fn over a read-only database (arg, a struct db; NULL: no file
 * is wearmon's). Returns 1 if owned_files records (dev, ino), else 0. */
int guard_history_owns(void *arg, dev_t dev, ino_t ino);

#endif
