/* devnote: why a drive's evidence (devstat.h) lacks a figure, in words for
 * the log: the readers of devpoll.c collect the reasons (a log the drive
 * refused, a page or attribute it lacks, a command set with no such
 * counter), and each distinct set of reasons is logged once per device, so
 * that a NULL in the database is never silent and never repeated every
 * poll. Reads no device. */
#ifndef WEARMON_DEVNOTE_H
#define WEARMON_DEVNOTE_H

#include <stddef.h>

#include "device/devstat.h"
#include "device/tgt.h"

/* Append one clause to note (len bytes), "; " between clauses. */
void devnote_add(char *note, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* What the ATA readers could not read, for devnote_ata. An empty string
 * means that read worked. */
struct devnote_ata_reads {
	const char *smart;   /* SMART READ DATA */
	const char *general; /* Device Statistics page 01h */
	const char *temp;    /* Device Statistics page 05h */
	const struct devstat_attr_table *table;
};

/* The reasons for each field d lacks after an ATA reading. */
void devnote_ata(const struct devstat *d, const struct devnote_ata_reads *r, char *note,
		 size_t len);

/* Log note (when not empty) for target tg at info level, unless the same
 * note was the last one logged for that device in this process. Returns 1
 * when logged, 0 when not. Thread-safe. */
int devnote_log(const struct tgt *tg, const char *note);

/* Forget what was logged (tests). */
void devnote_reset(void);

#endif
