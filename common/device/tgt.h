/* tgt: opening a target (block device or regular file) safely: identity,
 * capacity, alignment, and every refusal that keeps wearmon off the wrong
 * disk. Does no measured I/O and never writes to a device. */
#ifndef WEARMON_TGT_H
#define WEARMON_TGT_H

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config/cfg.h"
#include "config/names.h"

/* The command set a block device answered its identity in: what its
 * identity, health and evidence are read with (NONE: sysfs only). */
enum tgt_proto { TGT_PROTO_NONE, TGT_PROTO_NVME, TGT_PROTO_ATA, TGT_PROTO_SCSI };

struct tgt {
	char name[CFG_NAME_MAX];
	char path[PATH_MAX];      /* as configured */
	char real_path[PATH_MAX]; /* symlinks resolved */
	char sysname[64];         /* e.g. "loop0", "nvme0n1"; "" for files */
	int fd;                   /* -1 when closed */
	int is_block;
	dev_t rdev; /* block devices */
	uint64_t capacity;
	uint32_t logical_block_size;
	uint64_t discard_granularity; /* 0: cannot discard */
	uint64_t discard_max_bytes;
	enum tgt_kind kind; /* stored as text by tgt_kind_name */
	char serial[128];
	char model[128];
	char firmware[64];
	char backing_file[PATH_MAX]; /* loop devices */
	char signature[96];          /* libblkid: "ext4 filesystem", "" = none */
	char signature_uuid[64];     /* the filesystem's UUID with it, "" = none */
	int created;                 /* regular file created by us */
	/* The file behind the target (targets.backing_dev, backing_ino): a
	 * file target's own, a loop device's backing file; ino 0: none. */
	dev_t backing_dev;
	ino_t backing_ino;
	int exists;    /* file target: the path existed when checked */
	uint64_t size; /* file target: its size when checked */
	int own_it;    /* file target: created by us or found with no data, so
			  recorded as wearmon's (owned_files) */

	/* block devices: what tgt_check found them to speak */
	enum tgt_proto proto;
};

/* One of wearmon's own files, which no target may be, by whatever path:
 * the database and its -journal, -wal, -shm and lock files (and any name
 * SQLite may use beside it), the configuration, the
 * metrics file. */
struct tgt_own_file {
	const char *what; /* "the database", "the configuration", ... */
	char path[PATH_MAX];
};

/* Whether wearmon made the file (dev, ino) a target before: it created it,
 * or found it without data (the database's owned_files). Returns 1 if so,
 * 0 if not. */
typedef int (*tgt_owned_fn)(void *arg, dev_t dev, ino_t ino);

/* What tgt_check protects besides the device itself. */
struct tgt_guard {
	const char *db_path;            /* its filesystem must not be on a target */
	const struct tgt_own_file *own; /* no target may be one of these */
	int nown;
	tgt_owned_fn owned; /* NULL: no file is wearmon's */
	void *owned_arg;
	pid_t writer_ok; /* a process that may have a file target open for
			    writing (the daemon of this database, seen from
			    --check); 0: none */
};

/* The extended attribute that marks a file target wearmon created (value:
 * the target's name). owned_files is the record; a file without the mark
 * on a filesystem that keeps marks is another file at a reused inode. */
#define TGT_XATTR "user.wearmon.target"

/* Every refusal of t's device, changing nothing: block devices need
 * allow_destroy, are checked for mounts, swap, holders and the database's
 * filesystem, and are opened O_EXCL|O_DIRECT (read-only with check_only);
 * a regular file must not be one of g's own files, a loop device's backing
 * file or open for writing elsewhere, and one with data needs allow_destroy
 * unless g says wearmon made it; existing files are opened read-only and
 * a missing one is not created. g NULL: no own files, nothing is
 * wearmon's. Returns 0, or -errno with a one-line error in err naming the
 * device, the reason and the key. */
int tgt_check(const struct cfg *c, const struct cfg_target *t, const struct tgt_guard *g,
	      int check_only, struct tgt *out, char *err, size_t errlen);

/* After tgt_check and every other start-up check: create a missing file
 * target (O_EXCL), open it O_DIRECT for writing, extend it to file_size,
 * mark it when own_it. Nothing for a block device. Returns 0 or -errno
 * with the error in err. */
int tgt_prepare(const struct cfg *c, const struct cfg_target *t, struct tgt *tg, char *err,
		size_t errlen);

/* tgt_check with no guard but the database's path, then (unless
 * check_only) tgt_prepare. Returns 0 or -errno with the error in err. */
int tgt_open(const struct cfg *c, const struct cfg_target *t, const char *db_path, int check_only,
	     struct tgt *out, char *err, size_t errlen);

/* Whether fdinfo text (/proc/PID/fdinfo/FD) has a descriptor open for
 * writing (flags O_WRONLY or O_RDWR). Returns 1, 0, or -EINVAL without a
 * flags line. */
int tgt_fdinfo_writes(const char *text);

/* A loop device whose image sits beside a file of this name (the simulated
 * SSD, tools/simssd) takes its identity from it: lines "serial TEXT",
 * "model TEXT", "firmware TEXT", as a drive's identify data would give
 * them. A drive's own identify data or sysfs come first. */
#define TGT_IDENTITY_FILE "identity"

/* Read serial, model and firmware again (NVMe Identify Controller, ATA
 * IDENTIFY, SCSI INQUIRY, sysfs, else TGT_IDENTITY_FILE beside a loop
 * device's image) into the given buffers, from the device now at
 * tg->real_path. Returns 0 or -errno. */
int tgt_read_identity(const struct tgt *tg, char *serial, size_t slen, char *model, size_t mlen,
		      char *firmware, size_t flen);

/* Before a cycle or a destructive action: the node still names the same
 * device, and it still reports the serial it had (and expect_serial).
 * Returns 0, or -ENODEV / -EMEDIUMTYPE with a one-line error in err. */
int tgt_check_identity(const struct cfg *c, const struct cfg_target *t, const struct tgt *tg,
		       char *err, size_t errlen);

/* Open the block device again exclusively for raw access (after a
 * filesystem was unmounted, or a command released it). Returns 0 or -errno. */
int tgt_reopen(struct tgt *tg, char *err, size_t errlen);

/* Whether the disk sysname (device number disk) or any partition of it is
 * mounted, swap, held by md/dm, the backing device of a loop device, or
 * carries the database's or /'s filesystem; for a loop device on a block
 * device, the same of that device. Returns 0, or -EBUSY with the reason
 * and the way out in why. */
int tgt_in_use(const char *sysname, dev_t disk, const char *db_path, char *why, size_t len);

/* The name in /sys/class/block of block device number d ("sdb",
 * "loop3"). Returns 0 or -errno. */
int tgt_sysname(dev_t d, char *out, size_t len);

/* The partitions of disk sysname (device number disk), at most max, their
 * names and device numbers, in the order of their numbers. Returns how
 * many, or -ENOMEM. */
int tgt_parts(const char *sysname, dev_t disk, char (*names)[64], dev_t *devs, int max);

/* Where the block device d itself is mounted (mountinfo), its first mount
 * point in mnt. Returns 1 if mounted, else 0 (mnt ""). */
int tgt_mount_point(dev_t d, char *mnt, size_t len);

/* -EPERM with err set when t's secure_erase, used between cycles or by
 * host idle recovery's purge (cfg_secure_erases), would
 * erase more than the block device sysname (path in messages): an ATA or
 * NVMe erase sent to a partition, a sanitize to one of several namespaces. */
int tgt_erase_refusal(const struct cfg *c, const struct cfg_target *t, const char *sysname,
		      const char *path, char *err, size_t len);

/* The secure_erase refusals of an open block target tg under t (a
 * reloaded configuration meets the same ones as a start): a partition or a
 * shared namespace under a whole-device erase, a SCSI erase sent to a disk
 * that does not speak SCSI natively. 0 for other kinds. Returns 0 or
 * -EPERM with err set. */
int tgt_erase_refusals(const struct cfg *c, const struct cfg_target *t, const struct tgt *tg,
		       char *err, size_t len);

/* The UUID and type of the filesystem libblkid finds on path now (after
 * mkfs), into uuid and type. Returns 0, or -ENOENT when it finds none. */
int tgt_probe_fs(const char *path, char *uuid, size_t ulen, char *type, size_t tlen);

/* Point sysfs and procfs lookups at other trees (tests); NULL restores. */
void tgt_set_roots(const char *sys, const char *proc);

/* Call fn for each open descriptor of process pid (a /proc directory
 * name) with what it names, until fn returns nonzero; returns that, or 0.
 * A process gone meanwhile has no descriptors. */
int tgt_pid_fds(const char *pid,
		int (*fn)(const char *pid, const char *fd, const struct stat *st, void *arg),
		void *arg);

/* Close the descriptor (safe to call twice), so that no child started
 * meanwhile keeps it (base/cmd.h: cmd_close_exclusive). */
void tgt_close(struct tgt *tg);

/* How long tgt_busy_wait tries again, in seconds. */
#define TGT_BUSY_WAIT_S 10.0

/* attempt(arg), and while it returns -EBUSY, again every 50 ms for up to
 * TGT_BUSY_WAIT_S seconds or until *stop (NULL: never): a device just let
 * go of may be held a moment longer by what had it (a child's copy of
 * our exclusive descriptor until the kernel closes it, the leftover of an
 * erase command). A wait is logged, naming target name and what (e.g.
 * "mounting /dev/sdb"), with how it ended. Returns what the last attempt
 * returned. */
int tgt_busy_wait(const char *name, const char *what, int (*attempt)(void *arg), void *arg,
		  const atomic_int *stop);

/* Read a sysfs attribute of a block device into buf (trimmed). Returns 0
 * or -errno. */
int tgt_sysfs_read(const char *sysname, const char *attr, char *buf, size_t len);

/* The command a SCSI disk's discards become, as the kernel chose it from
 * the device's VPD pages (sd's provisioning_mode: "unmap", "writesame_16",
 * "writesame_10", "writesame_zero", "full", "disabled"). Returns 0, or
 * -errno with buf empty. */
int tgt_scsi_provisioning_mode(const char *sysname, char *buf, size_t len);

#endif
