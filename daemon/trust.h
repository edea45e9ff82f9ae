/* trust: whether another user could have redirected a path the daemon
 * writes, runs or reads: the symlinks met while resolving it (the reasoning
 * of fs.protected_symlinks, widened to any directory others can write) and
 * the directories above a file (sshd's StrictModes). Reads only (lstat,
 * stat, readlink); knows nothing of configurations. */
#ifndef WEARMON_TRUST_H
#define WEARMON_TRUST_H

#include <stddef.h>
#include <sys/types.h>

/* Resolve path as the kernel does, judging every symlink met on the way,
 * the last component's too. Refused: a symlink owned by neither root nor
 * the daemon's user in a directory writable by group or others (sticky or
 * not), and any symlink in a directory writable by group or others without
 * the sticky bit (anyone there can replace it). A component that does not
 * exist ends the walk: nothing beyond it is followed yet. Returns 0,
 * -EPERM with err naming what, path, the link, its owner and directory,
 * -ELOOP, or -errno with err set. */
int trust_links(const char *what, const char *path, char *err, size_t len);

/* Every directory above path, from / down (path resolved first), must be
 * owned by root or the daemon's user and not writable by group or others
 * unless it has the sticky bit (then the entries below it, owned by root,
 * cannot be renamed or removed by others: /tmp and /var/tmp pass). Returns
 * 0, -EPERM with err naming what, path and the directory, or -errno. */
int trust_dirs(const char *what, const char *path, char *err, size_t len);

/* "uid 65534 (nobody)", or "uid N" for a uid without a name, in buf.
 * Returns buf. */
const char *trust_owner_name(uid_t uid, char *buf, size_t len);

#endif
