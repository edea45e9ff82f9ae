/* devnote: the reasons a drive's evidence is unknown, logged once each. */
#include "device/devnote.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"

/* Devices remembered; one more than this forgets the oldest. */
#define NOTE_DEVICES 64

void devnote_add(char *note, size_t len, const char *fmt, ...)
{
	size_t n = strlen(note);
	va_list ap;
	if (n && n + 2 < len) {
		memcpy(note + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(note + n, len - n, fmt, ap);
	va_end(ap);
}

/* "the Device Statistics page 01h: <why>" or "no <what> in it". */
static void page_reason(char *out, size_t len, const char *err, const char *page, const char *what)
{
	if (err && *err)
		snprintf(out, len, "%s", err);
	else
		snprintf(out, len, "the Device Statistics %s has no valid %s", page, what);
}

void devnote_ata(const struct devstat *d, const struct devnote_ata_reads *r, char *note, size_t len)
{
	char a[200], b[200];
	const struct devstat_attr_table *t = r->table;
	const char *smart = r->smart && *r->smart ? r->smart : NULL;
	if (!d->f[DEVSTAT_HOST_BYTES].has) {
		page_reason(a, sizeof(a), r->general, "page 01h", "logical sectors written");
		if (smart)
			snprintf(b, sizeof(b), "%s", smart);
		else
			snprintf(b, sizeof(b), "no SMART attribute %u (%s table)", t->host_id,
				 t->name);
		devnote_add(note, len, "host bytes: %s; %s", a, b);
	}
	if (!d->f[DEVSTAT_MEDIA_BYTES].has) {
		if (smart)
			devnote_add(note, len, "media bytes: %s", smart);
		else if (!t->media_id)
			devnote_add(note, len,
				    "media bytes: the %s SMART table has no NAND-write attribute",
				    t->name);
		else
			devnote_add(note, len, "media bytes: no SMART attribute %u (%s table)",
				    t->media_id, t->name);
	}
	if (!d->f[DEVSTAT_TEMP_C].has) {
		page_reason(a, sizeof(a), r->temp, "page 05h", "current temperature");
		devnote_add(note, len, "temperature: %s", a);
	}
	if (!d->f[DEVSTAT_THROTTLE_MS].has) {
		page_reason(a, sizeof(a), r->temp, "page 05h", "time in over-temperature");
		devnote_add(note, len, "throttle time: %s", a);
	}
	devnote_add(note, len, "media errors, spare: no ATA log wearmon reads has them");
}

/* the distinct notes a device has had: a reason that comes and goes (a
 * log page the emulation answers only when it is not busy) is said once */
#define NOTE_KEEP 8

static struct {
	dev_t dev;
	char name[64];
	uint64_t hash[NOTE_KEEP];
	unsigned nhash;
} seen[NOTE_DEVICES];
static unsigned nseen, next_slot;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Whether note is new for the device; remembers it. Lock held. */
static int note_is_new(const struct tgt *tg, uint64_t h)
{
	for (unsigned i = 0; i < nseen; i++)
		if (seen[i].dev == tg->rdev && !strcmp(seen[i].name, tg->name)) {
			for (unsigned k = 0; k < seen[i].nhash && k < NOTE_KEEP; k++)
				if (seen[i].hash[k] == h)
					return 0;
			seen[i].hash[seen[i].nhash++ % NOTE_KEEP] = h;
			return 1;
		}
	unsigned i = nseen < NOTE_DEVICES ? nseen++ : next_slot++ % NOTE_DEVICES;
	seen[i].dev = tg->rdev;
	snprintf(seen[i].name, sizeof(seen[i].name), "%s", tg->name);
	seen[i].hash[0] = h;
	seen[i].nhash = 1;
	return 1;
}

int devnote_log(const struct tgt *tg, const char *note)
{
	if (!note || !*note)
		return 0;
	pthread_mutex_lock(&seen_lock);
	int fresh = note_is_new(tg, fnv1a(note));
	pthread_mutex_unlock(&seen_lock);
	if (fresh)
		log_msg(LOG_INFO,
			"target %s: %s: the drive's evidence lacks figures (stored as NULL): %s",
			tg->name, tg->path, note);
	return fresh;
}

void devnote_reset(void)
{
	pthread_mutex_lock(&seen_lock);
	nseen = next_slot = 0;
	pthread_mutex_unlock(&seen_lock);
}
