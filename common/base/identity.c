/* identity: one comparison of device and file identities (identity.h). */
#include "identity.h"

#include <string.h>

#include "base/util.h"

static const char *text(const char *s)
{
	return s ? s : "";
}

static int strings_differ(const char *a, const char *b, int strict)
{
	a = text(a);
	b = text(b);
	if (!strict && (!*a || !*b))
		return 0;
	return strcmp(a, b) != 0;
}

static int numbers_differ(uint64_t a, uint64_t b, int strict)
{
	if (!strict && (!a || !b))
		return 0;
	return a != b;
}

/* A device and inode pair: unknown while the inode is 0. */
static int files_differ(uint64_t dev_a, uint64_t ino_a, uint64_t dev_b, uint64_t ino_b, int strict)
{
	if (!strict && (!ino_a || !ino_b))
		return 0;
	return dev_a != dev_b || ino_a != ino_b;
}

/* Whether part p of a and b differs. */
static int part_differs(const struct identity *a, const struct identity *b, unsigned p, int strict)
{
	switch (p) {
	case ID_KIND: return strings_differ(a->kind, b->kind, strict);
	case ID_SERIAL: return strings_differ(a->serial, b->serial, strict);
	case ID_MODEL: return strings_differ(a->model, b->model, strict);
	case ID_CAPACITY: return numbers_differ(a->capacity, b->capacity, strict);
	case ID_BACKING: return strings_differ(a->backing, b->backing, strict);
	case ID_BACKING_ID:
		return files_differ(a->backing_dev, a->backing_ino, b->backing_dev, b->backing_ino,
				    strict);
	case ID_PATH: return strings_differ(a->path, b->path, strict);
	case ID_RDEV: return numbers_differ(a->rdev, b->rdev, strict);
	case ID_FILE: return files_differ(a->dev, a->ino, b->dev, b->ino, strict);
	default: return 0;
	}
}

unsigned identity_diff(const struct identity *was, const struct identity *now, unsigned parts,
		       unsigned strict)
{
	unsigned d = 0;
	for (unsigned p = 1; p && p <= ID_FILE; p <<= 1)
		if ((parts & p) && part_differs(was, now, p, (strict & p) != 0))
			d |= p;
	return d;
}

static const char *const part_names[] = {
	"kind",     "serial",        "model",
	"capacity", "backing file",  "backing file identity",
	"file",     "device number", "file identity",
};

const char *identity_part_name(unsigned part)
{
	for (unsigned i = 0; i < ARRAY_SIZE(part_names); i++)
		if (part == 1u << i)
			return part_names[i];
	return "?";
}

int identity_is_device(const struct stat *st, uint64_t rdev)
{
	struct identity was = { .rdev = rdev }, now = { .rdev = (uint64_t)st->st_rdev };
	return S_ISBLK(st->st_mode) && !identity_diff(&was, &now, ID_RDEV, ID_RDEV);
}

int identity_same_file(const struct stat *st, uint64_t dev, uint64_t ino)
{
	struct identity was = { .dev = dev, .ino = ino };
	struct identity now = { .dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino };
	return !identity_diff(&was, &now, ID_FILE, ID_FILE);
}
