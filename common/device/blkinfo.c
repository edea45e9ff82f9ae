/* blkinfo: a block device's contents as libblkid and sysfs see them. */
#include "device/blkinfo.h"

#include <blkid.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/util.h"
#include "device/tgt.h"

/* Copy libblkid's value of name, if it found one. */
static void lookup(blkid_probe pr, const char *name, char *out, size_t len)
{
	const char *v = NULL;
	if (!blkid_probe_lookup_value(pr, name, &v, NULL) && v)
		util_strlcpy(out, v, len);
}

/* The filesystem (or RAID member, encrypted volume) on node, and the
 * partition table when pttype is not NULL. Returns 1 when probed. */
static int probe_node(const char *node, char *fstype, size_t flen, char *usage, size_t ulen,
		      char *label, size_t llen, char *uuid, size_t uulen, char *pttype, size_t plen)
{
	blkid_probe pr = blkid_new_probe_from_filename(node);
	if (!pr)
		return 0;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
						      BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID);
	blkid_probe_enable_partitions(pr, pttype != NULL);
	if (pttype)
		blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	/* 1: nothing found, which is an answer too; < 0: unreadable or
	 * ambivalent (two signatures), said as nothing known */
	int rc = blkid_do_safeprobe(pr);
	if (rc == 0) {
		lookup(pr, "TYPE", fstype, flen);
		lookup(pr, "USAGE", usage, ulen);
		lookup(pr, "LABEL", label, llen);
		lookup(pr, "UUID", uuid, uulen);
		if (pttype)
			lookup(pr, "PTTYPE", pttype, plen);
	}
	blkid_free_probe(pr);
	return rc >= 0;
}

static uint64_t sysfs_bytes(const char *sysname)
{
	char buf[64];
	if (tgt_sysfs_read(sysname, "size", buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10) * 512; /* sysfs counts 512-byte sectors */
}

/* queue/ of the disk; a partition reads its disk's (the parent directory). */
static int rotational(const char *sysname)
{
	char buf[16];
	if (tgt_sysfs_read(sysname, "queue/rotational", buf, sizeof(buf)) &&
	    tgt_sysfs_read(sysname, "../queue/rotational", buf, sizeof(buf)))
		return -1;
	return buf[0] == '1';
}

static void probe_parts(struct blkinfo *b, dev_t disk)
{
	char names[BLKINFO_MAX_PARTS + 1][64];
	dev_t devs[BLKINFO_MAX_PARTS + 1];
	int n = tgt_parts(b->sysname, disk, names, devs, BLKINFO_MAX_PARTS + 1);

	if (n <= 0)
		return;
	b->more_parts = n > BLKINFO_MAX_PARTS;
	b->nparts = n > BLKINFO_MAX_PARTS ? BLKINFO_MAX_PARTS : n;
	for (int i = 0; i < b->nparts; i++) {
		struct blkinfo_part *p = &b->part[i];
		char node[96], usage[16], uuid[64];
		util_strlcpy(p->name, names[i], sizeof(p->name));
		p->size = sysfs_bytes(p->name);
		snprintf(node, sizeof(node), "/dev/%s", p->name);
		probe_node(node, p->fstype, sizeof(p->fstype), usage, sizeof(usage), p->label,
			   sizeof(p->label), uuid, sizeof(uuid), NULL, 0);
		tgt_mount_point(devs[i], p->mounted_at, sizeof(p->mounted_at));
	}
}

int blkinfo_probe(const char *path, struct blkinfo *b)
{
	struct stat st;

	memset(b, 0, sizeof(*b));
	b->rotational = -1;
	if (stat(path, &st))
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	b->probed = probe_node(path, b->fstype, sizeof(b->fstype), b->usage, sizeof(b->usage),
			       b->label, sizeof(b->label), b->uuid, sizeof(b->uuid), b->pttype,
			       sizeof(b->pttype));
	tgt_mount_point(st.st_rdev, b->mounted_at, sizeof(b->mounted_at));
	if (tgt_sysname(st.st_rdev, b->sysname, sizeof(b->sysname)))
		return 0;
	b->capacity = sysfs_bytes(b->sysname);
	b->rotational = rotational(b->sysname);
	probe_parts(b, st.st_rdev);
	return 0;
}

/* "ext4 filesystem" or "linux_raid_member RAID member". */
static const char *kind_words(const char *usage)
{
	if (!strcmp(usage, "raid"))
		return "RAID member";
	if (!strcmp(usage, "crypto"))
		return "encrypted volume";
	return "filesystem";
}

/* Appends printf output to out at *used (truncating at len). */
static void add(char *out, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(char *out, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	if (*used >= len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(out + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n;
}

static void add_mount(char *out, size_t len, size_t *used, const char *at)
{
	if (at[0])
		add(out, len, used, ", mounted on %s", at);
	else
		add(out, len, used, ", not mounted");
}

char *blkinfo_describe(const struct blkinfo *b, char *out, size_t len)
{
	size_t used = 0;

	out[0] = 0;
	if (!b->probed) {
		add(out, len, &used, "unknown: libblkid could not read the device");
		return out;
	}
	if (b->fstype[0]) {
		add(out, len, &used, "%s %s", b->fstype, kind_words(b->usage));
		if (b->label[0])
			add(out, len, &used, " labelled \"%s\"", b->label);
		if (b->uuid[0])
			add(out, len, &used, " (UUID %s)", b->uuid);
		add_mount(out, len, &used, b->mounted_at);
	}
	if (b->pttype[0] || b->nparts) {
		add(out, len, &used, "%s%s partition table, %d%s partition%s", used ? "; " : "",
		    b->pttype[0] ? b->pttype : "a", b->nparts, b->more_parts ? "+" : "",
		    b->nparts == 1 ? "" : "s");
		for (int i = 0; i < b->nparts; i++) {
			const struct blkinfo_part *p = &b->part[i];
			add(out, len, &used, "%s %s: %s", i ? ";" : ":", p->name,
			    p->fstype[0] ? p->fstype : "no filesystem");
			if (p->label[0])
				add(out, len, &used, " \"%s\"", p->label);
			add_mount(out, len, &used, p->mounted_at);
		}
	}
	if (!used)
		add(out, len, &used,
		    "no filesystem, RAID member or partition table that libblkid knows%s",
		    b->mounted_at[0] ? "" : ", not mounted");
	return out;
}
