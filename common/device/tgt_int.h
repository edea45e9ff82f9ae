/* tgt_int: what the tgt module's files (tgt.c, tgt_file.c, tgt_sys.c) share: the
 * sysfs and procfs roots and the error format. Nothing outside the tgt
 * module includes it. */
#ifndef WEARMON_TGT_INT_H
#define WEARMON_TGT_INT_H

#include <stddef.h>
#include <sys/stat.h>

#include "device/tgt.h"

/* Where sysfs and procfs are (tgt_set_roots). */
const char *tgt_sys_root(void);
const char *tgt_proc_root(void);

/* "FILE:LINE: key: message" into err (the line of key in t, else of t's
 * section). Returns ret. */
int tgt_seterr(char *err, size_t len, int ret, const struct cfg *c, const struct cfg_target *t,
	       const char *key, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* The file target's checks and its creation (tgt_file.c); tg->path and
 * tg->real_path are set, exists says whether the path exists (st its
 * stat then). Return 0 or -errno with the refusal in err. */
int tgt_file_check(const struct cfg *c, const struct cfg_target *t, const struct tgt_guard *g,
		   const struct stat *st, int exists, struct tgt *tg, char *err, size_t len);
int tgt_file_prepare(const struct cfg *c, const struct cfg_target *t, struct tgt *tg, char *err,
		     size_t len);

/* The whole disk that sysname is a partition of, or sysname itself, into
 * out. Returns 0 (out set), or -errno when sysfs could not say (out then
 * holds sysname). */
int tgt_whole_disk(const char *sysname, char *out, size_t len);

/* The loop device sysname's backing file identity, from LOOP_GET_STATUS64
 * on fd (or /dev/sysname when fd < 0), else from a stat of its
 * loop/backing_file. Returns 0 with *dev and *ino set, or -errno. */
int tgt_loop_backing_id(const char *sysname, int fd, dev_t *dev, ino_t *ino);

/* Which of g's own files (dev, ino) is, or NULL. */
const struct tgt_own_file *tgt_own_by_id(const struct tgt_guard *g, dev_t dev, ino_t ino);

#endif
