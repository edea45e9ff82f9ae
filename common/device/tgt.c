/* tgt: safe opening of block devices and regular files. */
#include "device/tgt.h"
#include "device/tgt_int.h"
#include "base/identity.h"

#include <blkid.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device/ata.h"
#include "device/nvme.h"
#include "device/scsi.h"

#define MAX_DEVS 256

/* The disk and all its partitions: anything touching one touches all. */
struct devset {
	dev_t dev[MAX_DEVS];
	char name[MAX_DEVS][64];
	int n;
};

static uint64_t sysfs_u64(const char *sysname, const char *attr)
{
	char buf[64];
	if (tgt_sysfs_read(sysname, attr, buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10);
}

/* Name in /sys/class/block of a block device number. */
static int dev_sysname(dev_t d, char *out, size_t len)
{
	char link[PATH_MAX], target[PATH_MAX];
	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", tgt_sys_root(), major(d), minor(d));
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = 0;
	util_strlcpy(out, basename(target), len);
	return 0;
}

static void devset_add(struct devset *s, dev_t d, const char *name)
{
	if (s->n < MAX_DEVS) {
		s->dev[s->n] = d;
		util_strlcpy(s->name[s->n], name, sizeof(s->name[0]));
		s->n++;
	}
}

/* The whole disk of sysname and every partition of it. */
static void devset_build(const char *sysname, dev_t disk, struct devset *s)
{
	char path[PATH_MAX];
	s->n = 0;
	devset_add(s, disk, sysname);
	snprintf(path, sizeof(path), "%s/class/block/%s", tgt_sys_root(), sysname);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char attr[PATH_MAX], buf[32];
		unsigned ma, mi;
		if (strncmp(e->d_name, sysname, strlen(sysname)) || !strcmp(e->d_name, sysname))
			continue;
		snprintf(attr, sizeof(attr), "%s/dev", e->d_name);
		if (tgt_sysfs_read(sysname, attr, buf, sizeof(buf)) == 0 &&
		    sscanf(buf, "%u:%u", &ma, &mi) == 2)
			devset_add(s, makedev(ma, mi), e->d_name);
	}
	closedir(d);
}

static const char *devset_find(const struct devset *s, dev_t d)
{
	for (int i = 0; i < s->n; i++)
		if (s->dev[i] == d)
			return s->name[i];
	return NULL;
}

/* A file of procfs (under tgt_proc_root()), or NULL. */
static FILE *open_proc(const char *rel)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tgt_proc_root(), rel);
	return fopen(path, "re");
}

/* Mount point of a device of the set, from mountinfo. Returns 1 if found. */
static int find_mount(const struct devset *s, char *part, size_t plen, char *mnt, size_t mlen)
{
	FILE *f = open_proc("self/mountinfo");
	char line[4096];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned ma, mi;
		char root[PATH_MAX], point[PATH_MAX];
		if (sscanf(line, "%*d %*d %u:%u %4095s %4095s", &ma, &mi, root, point) != 4)
			continue;
		const char *name = devset_find(s, makedev(ma, mi));
		if (name) {
			util_strlcpy(part, name, plen);
			util_strlcpy(mnt, point, mlen);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int find_swap(const struct devset *s, char *part, size_t plen)
{
	FILE *f = open_proc("swaps");
	char line[4096];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char file[PATH_MAX];
		struct stat st;
		if (sscanf(line, "%4095s", file) != 1 || file[0] != '/')
			continue;
		if (stat(file, &st) == 0 && S_ISBLK(st.st_mode)) {
			const char *name = devset_find(s, st.st_rdev);
			if (name) {
				util_strlcpy(part, name, plen);
				found = 1;
			}
		}
	}
	fclose(f);
	return found;
}

static int find_holder(const struct devset *s, char *part, size_t plen, char *holder, size_t hlen)
{
	for (int i = 0; i < s->n; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/class/block/%s/holders", tgt_sys_root(),
			 s->name[i]);
		DIR *d = opendir(path);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			util_strlcpy(part, s->name[i], plen);
			util_strlcpy(holder, e->d_name, hlen);
			closedir(d);
			return 1;
		}
		closedir(d);
	}
	return 0;
}

/* The block device a loop device reads and writes, if its backing file is
 * one (a loop device on a file is not: writing it writes only the file).
 * Returns 1 and sets *out if so. */
static int loop_backing_device(const char *sysname, dev_t *out)
{
	char file[PATH_MAX];
	struct stat st;
	if (tgt_sysfs_read(sysname, "loop/backing_file", file, sizeof(file)) || stat(file, &st) ||
	    !S_ISBLK(st.st_mode))
		return 0;
	*out = st.st_rdev;
	return 1;
}

/* A loop device whose backing file is a device of the set: it does not
 * show in the holders and does not hold the device exclusively, so the
 * kernel lets a writer in under whatever uses the loop device (a mounted
 * filesystem, say). Returns 1 if found. */
static int find_loop_user(const struct devset *s, char *part, size_t plen, char *loop, size_t llen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/class/block", tgt_sys_root());
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *e;
	int found = 0;
	while (!found && (e = readdir(d))) {
		dev_t b;
		const char *name;
		if (strncmp(e->d_name, "loop", 4) || !loop_backing_device(e->d_name, &b) ||
		    !(name = devset_find(s, b)))
			continue;
		util_strlcpy(part, name, plen);
		util_strlcpy(loop, e->d_name, llen);
		found = 1;
	}
	closedir(d);
	return found;
}

/* The filesystem holding path lives on the set? Returns 1 if so. */
static int fs_on_set(const struct devset *s, const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && devset_find(s, st.st_dev) != NULL;
}

/* Loop devices on loop devices: how deep in_use follows them. */
#define LOOP_DEPTH_MAX 8

static int in_use(const char *sysname, dev_t disk, const char *db_path, char *why, size_t len,
		  int depth)
{
	struct devset *s = calloc(1, sizeof(*s));
	char part[64], where[PATH_MAX], dbdir[PATH_MAX];
	dev_t back;
	int ret = -EBUSY;

	if (!s)
		return -ENOMEM;
	devset_build(sysname, disk, s);
	util_strlcpy(dbdir, db_path, sizeof(dbdir));
	if (find_mount(s, part, sizeof(part), where, sizeof(where)))
		snprintf(why, len, "/dev/%s is mounted on %s; unmount it or choose another device",
			 part, where);
	else if (find_swap(s, part, sizeof(part)))
		snprintf(why, len, "/dev/%s is in use as swap; swapoff it or choose another device",
			 part);
	else if (find_holder(s, part, sizeof(part), where, sizeof(where)))
		snprintf(why, len,
			 "/dev/%s is held by %s (md/dm/LVM); release it or choose another "
			 "device",
			 part, where);
	else if (find_loop_user(s, part, sizeof(part), where, sizeof(where)))
		snprintf(why, len,
			 "/dev/%s is the backing device of /dev/%s; detach that loop device "
			 "(losetup -d /dev/%s) or choose another device",
			 part, where, where);
	else if (fs_on_set(s, dirname(dbdir)))
		snprintf(why, len,
			 "it holds the filesystem of the database %s; set database in "
			 "[wearmon] elsewhere",
			 db_path);
	else if (fs_on_set(s, "/"))
		snprintf(why, len, "it holds the root filesystem");
	else
		ret = 0;
	free(s);
	/* A loop device on a block device writes that device: it must pass
	 * the same checks. */
	if (!ret && loop_backing_device(sysname, &back)) {
		char bname[64], bwhy[PATH_MAX + 256];
		if (depth >= LOOP_DEPTH_MAX) {
			snprintf(why, len, "it is a loop device on loop devices more than %d deep",
				 LOOP_DEPTH_MAX);
			return -EBUSY;
		}
		if (dev_sysname(back, bname, sizeof(bname))) {
			snprintf(why, len,
				 "it is a loop device on block device %u:%u, which is not in "
				 "/sys/dev/block",
				 major(back), minor(back));
			return -EBUSY;
		}
		ret = in_use(bname, back, db_path, bwhy, sizeof(bwhy), depth + 1);
		if (ret == -EBUSY)
			snprintf(why, len, "it is a loop device on /dev/%s, and %s", bname, bwhy);
	}
	return ret;
}

int tgt_in_use(const char *sysname, dev_t disk, const char *db_path, char *why, size_t len)
{
	return in_use(sysname, disk, db_path, why, len, 0);
}

int tgt_sysname(dev_t d, char *out, size_t len)
{
	return dev_sysname(d, out, len);
}

static int part_before(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	return la != lb ? la < lb : strcmp(a, b) < 0;
}

int tgt_parts(const char *sysname, dev_t disk, char (*names)[64], dev_t *devs, int max)
{
	struct devset *s = calloc(1, sizeof(*s));
	int n = 0;

	if (!s)
		return -ENOMEM;
	devset_build(sysname, disk, s);
	for (int i = 1; i < s->n && n < max; i++, n++) {
		util_strlcpy(names[n], s->name[i], sizeof(names[n]));
		devs[n] = s->dev[i];
	}
	free(s);
	/* sysfs lists them in no order: by number (a shorter name is a lower
	 * one: sdb2 before sdb10) */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && part_before(names[j], names[j - 1]); j--) {
			char tmp[64];
			dev_t d = devs[j];
			memcpy(tmp, names[j], sizeof(tmp));
			memcpy(names[j], names[j - 1], sizeof(tmp));
			memcpy(names[j - 1], tmp, sizeof(tmp));
			devs[j] = devs[j - 1];
			devs[j - 1] = d;
		}
	return n;
}

int tgt_mount_point(dev_t d, char *mnt, size_t len)
{
	struct devset one = { .n = 0 };
	char part[64];

	devset_add(&one, d, "");
	mnt[0] = 0;
	return find_mount(&one, part, sizeof(part), mnt, len);
}

/* Namespaces of the NVMe controller (or subsystem) sysname belongs to:
 * the nvmeXnY entries beside it, 0 when sysfs does not say. */
static int nvme_namespaces(const char *sysname)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/class/block/%s/device", tgt_sys_root(), sysname);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *e;
	int n = 0;
	unsigned a, b;
	char tail;
	while ((e = readdir(d)))
		n += sscanf(e->d_name, "nvme%un%u%c", &a, &b, &tail) == 2;
	closedir(d);
	return n;
}

/* The erase methods that act on more than the block device they are sent
 * to: ATA SECURITY ERASE on the whole drive, NVMe Format on the whole
 * namespace, NVMe Sanitize on every namespace of the controller, SCSI
 * SANITIZE and FORMAT UNIT on the whole logical unit. A
 * partition target, or a namespace beside others under sanitize, would
 * have the rest of the drive erased with it. */
int tgt_erase_refusal(const struct cfg *c, const struct cfg_target *t, const char *sysname,
		      const char *path, char *err, size_t len)
{
	const char *scope = NULL;
	char buf[32];
	int sanitize = 0;

	if (!cfg_secure_erases(t))
		return 0;
	switch (t->secure_erase) {
	case ERASE_ATA:
	case ERASE_ATA_ENHANCED: scope = "the whole drive"; break;
	case ERASE_NVME_FORMAT:
	case ERASE_NVME_CRYPTO_FORMAT: scope = "the whole namespace"; break;
	case ERASE_NVME_SANITIZE_BLOCK:
	case ERASE_NVME_SANITIZE_CRYPTO:
		scope = "every namespace of the controller";
		sanitize = 1;
		break;
	case ERASE_SCSI_SANITIZE_BLOCK:
	case ERASE_SCSI_SANITIZE_CRYPTO:
	case ERASE_SCSI_FORMAT: scope = "the whole logical unit"; break;
	case ERASE_NONE:
	case ERASE_BLKSECDISCARD: /* the kernel bounds these to the device */
	case ERASE_DISCARD_ALL:
	case ERASE_COMMAND: /* the lab's own program, given the path */
	case ERASE__COUNT: return 0;
	}
	if (!tgt_sysfs_read(sysname, "partition", buf, sizeof(buf)))
		return tgt_seterr(
			err, len, -EPERM, c, t, "secure_erase",
			"refusing %s: it is a partition, and secure_erase = %s erases %s; "
			"make the whole disk the target, or use blksecdiscard or "
			"discard-all, which stay within the partition",
			path, cfg_erase_name(t->secure_erase), scope);
	int ns = sanitize ? nvme_namespaces(sysname) : 0;
	if (ns > 1)
		return tgt_seterr(
			err, len, -EPERM, c, t, "secure_erase",
			"refusing %s: its controller has %d namespaces, and secure_erase = "
			"%s erases %s; use nvme-format or nvme-crypto-format, which erase "
			"this namespace only",
			path, ns, cfg_erase_name(t->secure_erase), scope);
	return 0;
}

/* The SCSI erases go to disks that speak SCSI natively: a SCSI-ATA
 * translation layer may complete a FORMAT UNIT without erasing anything. */
static int scsi_erase_refusal(const struct cfg *c, const struct cfg_target *t, const struct tgt *tg,
			      char *err, size_t len)
{
	static const char *const instead[] = {
		[TGT_PROTO_NONE] = "it answered neither as SCSI, ATA nor NVMe",
		[TGT_PROTO_NVME] = "it is NVMe: use nvme-format or nvme-sanitize-*",
		[TGT_PROTO_ATA] = "it is an ATA drive: use ata or ata-enhanced",
		[TGT_PROTO_SCSI] = "",
	};
	if (!cfg_secure_erases(t) || tg->proto == TGT_PROTO_SCSI ||
	    (t->secure_erase != ERASE_SCSI_SANITIZE_BLOCK &&
	     t->secure_erase != ERASE_SCSI_SANITIZE_CRYPTO && t->secure_erase != ERASE_SCSI_FORMAT))
		return 0;
	return tgt_seterr(err, len, -EPERM, c, t, "secure_erase",
			  "refusing %s: secure_erase = %s needs a disk that speaks SCSI natively "
			  "(SAS); %s",
			  tg->path, cfg_erase_name(t->secure_erase), instead[tg->proto]);
}

int tgt_erase_refusals(const struct cfg *c, const struct cfg_target *t, const struct tgt *tg,
		       char *err, size_t len)
{
	int ret;

	if (tg->kind != TGT_BLOCK)
		return 0;
	if ((ret = tgt_erase_refusal(c, t, tg->sysname, tg->path, err, len)))
		return ret;
	return scsi_erase_refusal(c, t, tg, err, len);
}

static int block_refusals(const struct cfg *c, const struct cfg_target *t, struct tgt *tg,
			  const char *db_path, char *err, size_t len)
{
	char why[PATH_MAX + 384];
	int ret = tgt_in_use(tg->sysname, tg->rdev, db_path, why, sizeof(why));

	if (ret == -EBUSY)
		return tgt_seterr(err, len, ret, c, t, "device", "refusing %s: %s", tg->path, why);
	if (ret)
		return ret;
	return tgt_erase_refusal(c, t, tg->sysname, tg->path, err, len);
}

/* The unit serial number of a SCSI disk, from its VPD page 0x80 as sysfs
 * gives it: binary, a 4-byte header (byte 1 the page code, bytes 2-3 the
 * length) before the ASCII serial. Returns 0 and fills out if found. */
static int vpd80_serial(const char *sysname, char *out, size_t len)
{
	char path[PATH_MAX];
	unsigned char page[260];
	snprintf(path, sizeof(path), "%s/class/block/%s/device/vpd_pg80", tgt_sys_root(), sysname);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = fread(page, 1, sizeof(page), f);
	fclose(f);
	if (n < 4 || page[1] != 0x80)
		return -EINVAL;
	size_t plen = ((size_t)page[2] << 8) | page[3];
	if (plen > n - 4)
		plen = n - 4;
	char serial[257];
	size_t k = 0;
	for (size_t i = 0; i < plen && k + 1 < sizeof(serial); i++)
		if (page[4 + i] >= 0x20 && page[4 + i] < 0x7f)
			serial[k++] = (char)page[4 + i];
	serial[k] = 0;
	util_strlcpy(out, util_strip(serial), len);
	return out[0] ? 0 : -ENODATA;
}

/* The descriptor is the block device rdev: what was opened is what was
 * checked, the node not replaced in between. */
static int fd_is_device(int fd, dev_t rdev)
{
	struct stat st;
	return !fstat(fd, &st) && identity_is_device(&st, rdev);
}

static void sysfs_identity(const char *sysname, char *serial, size_t slen, char *model, size_t mlen,
			   char *firmware, size_t flen)
{
	char buf[PATH_MAX];
	if (!tgt_sysfs_read(sysname, "device/serial", buf, sizeof(buf)) ||
	    !tgt_sysfs_read(sysname, "serial", buf, sizeof(buf)))
		util_strlcpy(serial, util_strip(buf), slen);
	else
		vpd80_serial(sysname, serial, slen);
	if (!tgt_sysfs_read(sysname, "device/model", buf, sizeof(buf)))
		util_strlcpy(model, buf, mlen);
	if (!tgt_sysfs_read(sysname, "device/firmware_rev", buf, sizeof(buf)) ||
	    !tgt_sysfs_read(sysname, "device/rev", buf, sizeof(buf)))
		util_strlcpy(firmware, buf, flen);
}

/* A SCSI disk (sd): ATA behind SAT when INQUIRY says so, or when it
 * answers ATA IDENTIFY anyway (a bridge that translates without saying
 * so); else a native SCSI disk, whose identity is INQUIRY's: the Unit
 * Serial Number page, the product identification (as sysfs and lsblk show
 * it) and the revision. Returns the kind found, TGT_PROTO_NONE when
 * neither answers. */
static enum tgt_proto sd_identity(int fd, char *serial, size_t slen, char *model, size_t mlen,
				  char *firmware, size_t flen)
{
	struct scsi_info si;
	struct ata_identity id;
	char err[256];
	int native = !scsi_identify(fd, &si, err, sizeof(err)) && !si.sat;
	if (!ata_identify(fd, &id, err, sizeof(err))) {
		util_strlcpy(serial, id.serial, slen);
		util_strlcpy(model, id.model, mlen);
		util_strlcpy(firmware, id.firmware, flen);
		return TGT_PROTO_ATA;
	}
	if (!native)
		return TGT_PROTO_NONE;
	util_strlcpy(serial, si.serial, slen);
	util_strlcpy(model, si.inq.product, mlen);
	util_strlcpy(firmware, si.inq.revision, flen);
	return TGT_PROTO_SCSI;
}

/* The identity file beside a loop device's image (TGT_IDENTITY_FILE):
 * each line "NAME TEXT" it has fills that buffer. */
static void file_identity(const char *image, char *serial, size_t slen, char *model, size_t mlen,
			  char *firmware, size_t flen)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], line[256];
	util_strlcpy(dir, image, sizeof(dir));
	snprintf(path, sizeof(path), "%s/" TGT_IDENTITY_FILE, dirname(dir));
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ' ');
		if (!v)
			continue;
		*v++ = '\0';
		v = util_strip(v);
		if (!strcmp(line, "serial"))
			util_strlcpy(serial, v, slen);
		else if (!strcmp(line, "model"))
			util_strlcpy(model, v, mlen);
		else if (!strcmp(line, "firmware"))
			util_strlcpy(firmware, v, flen);
	}
	fclose(f);
}

/* tgt_read_identity, and which command set answered into *proto. */
static int read_identity(const struct tgt *tg, char *serial, size_t slen, char *model, size_t mlen,
			 char *firmware, size_t flen, enum tgt_proto *proto)
{
	char err[256];
	serial[0] = model[0] = firmware[0] = 0;
	*proto = TGT_PROTO_NONE;
	if (!tg->is_block)
		return 0;
	int fd = open(tg->real_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (!strncmp(tg->sysname, "nvme", 4)) {
		struct nvme_ctrl_info ci;
		if (!nvme_identify_ctrl(fd, &ci, err, sizeof(err))) {
			util_strlcpy(serial, ci.serial, slen);
			util_strlcpy(model, ci.model, mlen);
			util_strlcpy(firmware, ci.firmware, flen);
			*proto = TGT_PROTO_NVME;
		}
	} else if (!strncmp(tg->sysname, "sd", 2)) {
		*proto = sd_identity(fd, serial, slen, model, mlen, firmware, flen);
	}
	close(fd);
	if (*proto == TGT_PROTO_NONE)
		sysfs_identity(tg->sysname, serial, slen, model, mlen, firmware, flen);
	if (!serial[0] && !model[0] && tg->backing_file[0])
		file_identity(tg->backing_file, serial, slen, model, mlen, firmware, flen);
	return 0;
}

int tgt_read_identity(const struct tgt *tg, char *serial, size_t slen, char *model, size_t mlen,
		      char *firmware, size_t flen)
{
	enum tgt_proto proto;
	return read_identity(tg, serial, slen, model, mlen, firmware, flen, &proto);
}

static void block_identity(struct tgt *tg)
{
	char buf[PATH_MAX];
	if (!tgt_sysfs_read(tg->sysname, "loop/backing_file", buf, sizeof(buf)))
		util_strlcpy(tg->backing_file, buf, sizeof(tg->backing_file));
	read_identity(tg, tg->serial, sizeof(tg->serial), tg->model, sizeof(tg->model),
		      tg->firmware, sizeof(tg->firmware), &tg->proto);
	tg->discard_granularity = sysfs_u64(tg->sysname, "queue/discard_granularity");
	tg->discard_max_bytes = sysfs_u64(tg->sysname, "queue/discard_max_bytes");
}

/* What libblkid finds on the device: a filesystem, RAID member or
 * partition table (and a filesystem's UUID in uuid). Empty when nothing
 * (or when probing is impossible). */
static void probe_signature(const char *path, char *out, size_t len, char *uuid, size_t ulen)
{
	const char *type = NULL, *usage = NULL, *id = NULL;
	out[0] = 0;
	uuid[0] = 0;
	blkid_probe pr = blkid_new_probe_from_filename(path);
	if (!pr)
		return;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
						      BLKID_SUBLKS_UUID);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	if (blkid_do_safeprobe(pr) == 0) {
		if (!blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
			blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
			if (!blkid_probe_lookup_value(pr, "UUID", &id, NULL))
				util_strlcpy(uuid, id, ulen);
			snprintf(out, len, "%s %s", type,
				 usage && !strcmp(usage, "raid")     ? "RAID member"
				 : usage && !strcmp(usage, "crypto") ? "encrypted volume"
								     : "filesystem");
		} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
			snprintf(out, len, "%s partition table", type);
		}
	}
	blkid_free_probe(pr);
}

int tgt_probe_fs(const char *path, char *uuid, size_t ulen, char *type, size_t tlen)
{
	char what[96];
	probe_signature(path, what, sizeof(what), uuid, ulen);
	if (!uuid[0])
		return -ENOENT;
	/* "ext4 filesystem": the type is its first word */
	snprintf(type, tlen, "%.*s", (int)strcspn(what, " "), what);
	return 0;
}

/* A loop device is refused when it has no backing file (detached: it
 * reads as capacity 0) or when its backing file is one of wearmon's own.
 * Returns 0 or -errno with the refusal in err. */
static int loop_refusals(const struct cfg *c, const struct cfg_target *t, struct tgt *tg,
			 const struct tgt_guard *g, char *err, size_t len)
{
	char file[PATH_MAX], disk[sizeof(tg->sysname)];
	const struct tgt_own_file *own;

	/* a partition of a loop device writes to the same backing file */
	tgt_whole_disk(tg->sysname, disk, sizeof(disk));
	if (strncmp(disk, "loop", 4))
		return 0;
	if (tgt_sysfs_read(disk, "loop/backing_file", file, sizeof(file)) || !file[0])
		return tgt_seterr(err, len, -ENXIO, c, t, "device",
				  "refusing %s: it is a loop device with no backing file "
				  "(detached); attach a file to it (losetup) or choose another "
				  "device",
				  tg->path);
	if (tgt_loop_backing_id(disk, -1, &tg->backing_dev, &tg->backing_ino))
		tg->backing_ino = 0;
	if (tg->backing_ino && (own = tgt_own_by_id(g, tg->backing_dev, tg->backing_ino)))
		return tgt_seterr(err, len, -EPERM, c, t, "device",
				  "refusing %s: its backing file %s is %s %s; a target must not "
				  "be one of wearmon's own files",
				  tg->path, file, own->what, own->path);
	return 0;
}

/* expect_serial against what the device reports: none at all (then the
 * key cannot pin it, and the refusal says what does), or another. Returns
 * 0 or -EMEDIUMTYPE with err set. */
static int serial_refusal(const struct cfg *c, const struct cfg_target *t, const struct tgt *tg,
			  char *err, size_t len)
{
	if (t->expect_serial[0] && !tg->serial[0])
		return tgt_seterr(
			err, len, -EMEDIUMTYPE, c, t, "expect_serial",
			"refusing %s: it reports no serial number (NVMe Identify, ATA IDENTIFY, "
			"the SCSI serial number page and sysfs give none), so expect_serial = \"%s\" cannot be checked; remove "
			"expect_serial from [target %s]: a device without a serial is pinned by "
			"its model, capacity%s, recorded in the database at its first start and "
			"compared at every start, and by its device number during a run; name it "
			"by a stable path (/dev/disk/by-id/ or /dev/disk/by-path/)",
			tg->path, t->expect_serial, t->name,
			tg->backing_file[0] ? " and backing file" : "");
	if (t->expect_serial[0] && strcmp(t->expect_serial, tg->serial))
		return tgt_seterr(
			err, len, -EMEDIUMTYPE, c, t, "expect_serial",
			"refusing %s: it reports serial \"%s\", expected \"%s\"; the device "
			"names may have moved: check the path or expect_serial",
			tg->path, tg->serial, t->expect_serial);
	return 0;
}

static int open_exclusive(void *arg)
{
	struct tgt *tg = arg;
	tg->fd = open(tg->real_path, O_RDWR | O_DIRECT | O_EXCL | O_CLOEXEC);
	return tg->fd < 0 ? -errno : 0;
}

/* Open the device: read-only for a check, else exclusively (waiting for
 * a holder letting go). Returns 0 or the error, described in err. */
static int open_block_fd(const struct cfg *c, const struct cfg_target *t, struct tgt *tg,
			 int check_only, char *err, size_t len)
{
	int ret;
	if (check_only) {
		tg->fd = open(tg->real_path, O_RDONLY | O_CLOEXEC);
		ret = tg->fd < 0 ? -errno : 0;
	} else {
		/* what held it a moment ago may still be letting go: the kernel
		 * tears down a killed daemon's io_uring after it is gone */
		char what[PATH_MAX + 32];
		snprintf(what, sizeof(what), "opening %s", tg->path);
		ret = tgt_busy_wait(t->name, what, open_exclusive, tg, NULL);
	}
	if (ret) {
		if (ret == -EBUSY)
			return tgt_seterr(
				err, len, ret, c, t, "device",
				"refusing %s: busy (opened exclusively by another program, mounted or held by md/dm)",
				tg->path);
		return tgt_seterr(err, len, ret, c, t, "device", "cannot open %s: %s", tg->path,
				  strerror(-ret));
	}
	return 0;
}

static int open_block(const struct cfg *c, const struct cfg_target *t, struct tgt *tg,
		      const struct tgt_guard *g, int check_only, char *err, size_t len)
{
	int ret;
	if ((ret = dev_sysname(tg->rdev, tg->sysname, sizeof(tg->sysname))))
		return tgt_seterr(err, len, ret, c, t, "device",
				  "%s: not found in /sys/dev/block: %s", tg->path, strerror(-ret));
	if ((ret = loop_refusals(c, t, tg, g, err, len)))
		return ret;
	probe_signature(tg->real_path, tg->signature, sizeof(tg->signature), tg->signature_uuid,
			sizeof(tg->signature_uuid));
	if (!t->allow_destroy && tg->signature[0])
		return tgt_seterr(
			err, len, -EPERM, c, t, "allow_destroy",
			"refusing to write to block device %s: it holds a %s that would be "
			"destroyed; set allow_destroy = yes in [target %s] if that is intended",
			tg->path, tg->signature, t->name);
	if (!t->allow_destroy)
		return tgt_seterr(
			err, len, -EPERM, c, t, "allow_destroy",
			"refusing to write to block device %s: everything on it is destroyed; "
			"set allow_destroy = yes in [target %s] if that is intended",
			tg->path, t->name);
	if ((ret = block_refusals(c, t, tg, g->db_path, err, len)))
		return ret;
	if ((ret = open_block_fd(c, t, tg, check_only, err, len)))
		return ret;
	if (!fd_is_device(tg->fd, tg->rdev))
		return tgt_seterr(err, len, -ENODEV, c, t, "device",
				  "refusing %s: it changed while it was being opened (was %u:%u); "
				  "try again once the device names are settled",
				  tg->path, major(tg->rdev), minor(tg->rdev));
	int lbs = 0;
	if (ioctl(tg->fd, BLKGETSIZE64, &tg->capacity) || ioctl(tg->fd, BLKSSZGET, &lbs)) {
		ret = -errno;
		return tgt_seterr(err, len, ret, c, t, "device", "cannot read the size of %s: %s",
				  tg->path, strerror(-ret));
	}
	tg->logical_block_size = (uint32_t)lbs;
	tg->kind = TGT_BLOCK;
	block_identity(tg);
	ret = serial_refusal(c, t, tg, err, len);
	return ret ? ret : scsi_erase_refusal(c, t, tg, err, len);
}

int tgt_check(const struct cfg *c, const struct cfg_target *t, const struct tgt_guard *g,
	      int check_only, struct tgt *tg, char *err, size_t len)
{
	static const struct tgt_guard none = { .db_path = "/" };
	struct stat st;
	if (!g)
		g = &none;
	memset(tg, 0, sizeof(*tg));
	tg->fd = -1;
	util_strlcpy(tg->name, t->name, sizeof(tg->name));
	util_strlcpy(tg->path, t->device, sizeof(tg->path));
	if (!t->device[0])
		return tgt_seterr(err, len, -EINVAL, c, t, "device",
				  "missing: set device = /dev/... or a file path");
	int exists = stat(t->device, &st) == 0;
	if (!exists && errno != ENOENT)
		return tgt_seterr(err, len, -errno, c, t, "device", "cannot access %s: %s",
				  t->device, strerror(errno));
	if (exists && !realpath(t->device, tg->real_path))
		return tgt_seterr(err, len, -errno, c, t, "device", "cannot resolve %s: %s",
				  t->device, strerror(errno));
	/* Never create files under /dev: a missing device there is a typo or a
	 * drive that moved, not a request for a file target. */
	if (!exists && !strncmp(t->device, "/dev/", 5))
		return tgt_seterr(err, len, -ENOENT, c, t, "device",
				  "%s: no such device (unplugged, renamed, or a typo?)", t->device);
	if (!exists)
		util_strlcpy(tg->real_path, t->device, sizeof(tg->real_path));
	int ret;
	if (exists && S_ISBLK(st.st_mode)) {
		tg->is_block = 1;
		tg->rdev = st.st_rdev;
		ret = open_block(c, t, tg, g, check_only, err, len);
	} else if (!exists || S_ISREG(st.st_mode)) {
		ret = tgt_file_check(c, t, g, &st, exists, tg, err, len);
	} else {
		return tgt_seterr(err, len, -EINVAL, c, t, "device",
				  "%s is neither a block device nor a regular file", t->device);
	}
	if (ret)
		tgt_close(tg);
	return ret;
}

int tgt_prepare(const struct cfg *c, const struct cfg_target *t, struct tgt *tg, char *err,
		size_t len)
{
	return tg->is_block ? 0 : tgt_file_prepare(c, t, tg, err, len);
}

int tgt_open(const struct cfg *c, const struct cfg_target *t, const char *db_path, int check_only,
	     struct tgt *tg, char *err, size_t len)
{
	const struct tgt_guard g = { .db_path = db_path };
	int ret = tgt_check(c, t, &g, check_only, tg, err, len);
	if (!ret && !check_only)
		ret = tgt_prepare(c, t, tg, err, len);
	if (ret)
		tgt_close(tg);
	return ret;
}

int tgt_check_identity(const struct cfg *c, const struct cfg_target *t, const struct tgt *tg,
		       char *err, size_t len)
{
	struct stat st;
	char serial[128], model[128], fw[64];
	if (!tg->is_block)
		return 0;
	if (stat(tg->real_path, &st) || !identity_is_device(&st, tg->rdev))
		return tgt_seterr(
			err, len, -ENODEV, c, t, "device",
			"refusing %s: the device node no longer names the device opened at "
			"start (%u:%u); it was removed or replaced",
			tg->path, major(tg->rdev), minor(tg->rdev));
	tgt_read_identity(tg, serial, sizeof(serial), model, sizeof(model), fw, sizeof(fw));
	if (t->expect_serial[0] && strcmp(t->expect_serial, serial))
		return tgt_seterr(err, len, -EMEDIUMTYPE, c, t, "expect_serial",
				  "refusing %s: it now reports serial \"%s\", expected \"%s\"",
				  tg->path, serial, t->expect_serial);
	const struct identity opened = { .serial = tg->serial }, now = { .serial = serial };
	if (identity_diff(&opened, &now, ID_SERIAL, ID_SERIAL))
		return tgt_seterr(
			err, len, -EMEDIUMTYPE, c, t, "device",
			"refusing %s: its serial changed from \"%s\" to \"%s\" during the run",
			tg->path, tg->serial, serial);
	return 0;
}

int tgt_reopen(struct tgt *tg, char *err, size_t len)
{
	char what[PATH_MAX + 32];
	tgt_close(tg);
	snprintf(what, sizeof(what), "opening %s again", tg->path);
	int ret = tgt_busy_wait(tg->name, what, open_exclusive, tg, NULL);
	if (ret) {
		snprintf(err, len, "cannot open %s again: %s", tg->path, strerror(-ret));
		return ret;
	}
	if (tg->is_block && !fd_is_device(tg->fd, tg->rdev)) {
		tgt_close(tg);
		snprintf(err, len,
			 "refusing %s: opened again, it is no longer the device opened at "
			 "start (%u:%u); it was removed or replaced",
			 tg->path, major(tg->rdev), minor(tg->rdev));
		return -ENODEV;
	}
	return 0;
}
