/* opts: simssd's mount options as one table (name, type, default, range,
 * help) and the size/duration parsers they use. Pure: no I/O but help output. */
#ifndef SIMSSD_OPTS_H
#define SIMSSD_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "ftl.h"
#include "thermal.h"

/* Every option of the simulated drive; each field is the option of that name. */
struct simssd_opts {
	uint64_t capacity;      /* host-visible bytes */
	uint64_t page;          /* flash page bytes */
	uint64_t erase_block;   /* erase block bytes */
	double spare;           /* factory spare area, percent of capacity */
	uint64_t channels;      /* parallel flash channels */
	uint64_t t_prog;        /* ns to program a page */
	uint64_t t_read;        /* ns to read a page */
	uint64_t t_erase;       /* ns to erase a block */
	uint64_t cache;         /* write cache bytes (0: write-through) */
	uint64_t gc_free;       /* free blocks per channel below which GC runs */
	uint64_t bg_gc_free;    /* background GC while idle up to this many free
				   blocks per channel (0: none) */
	uint64_t bg_gc_idle;    /* ns of idle flash before background GC */
	int compress;           /* 1: SandForce-like inline compression */
	char *store;            /* file holding the data; NULL: anonymous memory */
	double thermal_ambient; /* idle temperature, degrees C */
	double thermal_rise;    /* steady-state rise per MiB/s written, degrees C */
	uint64_t thermal_tau;   /* ns: time constant of heating and cooling */
	double throttle_temp;   /* throttle at or above this, degrees C; 0: never */
	uint64_t throttle_rate; /* bytes/s written while throttled */
	char *serial;           /* identity file: serial number; NULL: none */
	char *model;            /* model number; NULL: none */
	char *firmware;         /* firmware revision; NULL: none */
	/* endurance: wear-out and its indicator */
	uint64_t endurance;  /* rated erase cycles per block; 0: none */
	uint64_t wear_accel; /* each erase counts as this many */
};

/* The longest identity a drive reports: the NVMe Identify Controller and
 * ATA IDENTIFY DEVICE serial (20 characters), model (40) and firmware (8). */
#define OPTS_SERIAL_MAX 20
#define OPTS_MODEL_MAX 40
#define OPTS_FIRMWARE_MAX 8

/* Fill every field with its default. Returns 0 (defaults always parse). */
int opts_defaults(struct simssd_opts *o);

/* Apply one "key=value". Returns 0, -ENOENT when key is not ours (a FUSE
 * option), -EINVAL for a malformed value, -ERANGE outside the row's range,
 * -ENOMEM. */
int opts_set(struct simssd_opts *o, const char *kv);

/* Release what opts_set allocated. */
void opts_free(struct simssd_opts *o);

/* Print one line per option: name, default, help. */
void opts_help(FILE *out);

/* The FTL geometry these options describe. */
void opts_to_ftl(const struct simssd_opts *o, struct ftl_config *cfg);

/* The identity file's "key value" lines (serial, model, firmware; those
 * set) into buf. Returns their length (truncated to size - 1). */
size_t opts_format_identity(const struct simssd_opts *o, char *buf, size_t size);

/* The thermal model these options describe. */
void opts_to_thermal(const struct simssd_opts *o, struct thermal_config *cfg);

/* "4096", "4k", "512M", "1GiB" (powers of 1024). Returns 0 or -EINVAL/-ERANGE. */
int opts_parse_size(const char *s, uint64_t *out);

/* "250ns", "200us", "1.5ms", "2s"; a bare number is microseconds.
 * Returns 0 or -EINVAL/-ERANGE; *out in ns. */
int opts_parse_time(const char *s, uint64_t *out);

#endif
