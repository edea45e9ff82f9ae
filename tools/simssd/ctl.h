/* ctl: the control file's commands (parse), the injected-fault state they
 * set and consult, and the stats file's text. Pure and not thread-safe:
 * the caller holds the drive's lock around ctl_apply and ctl_check_io. */
#ifndef SIMSSD_CTL_H
#define SIMSSD_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "ftl.h"

#define CTL_MAX_RANGES 16

enum ctl_kind {
	CTL_SECURE_ERASE,  /* "secure-erase" */
	CTL_IOERROR,       /* "fault ioerror OFFSET LEN [read|write|rw]" */
	CTL_LATENCY,       /* "fault latency MS [COUNT]" (COUNT 0: until clear) */
	CTL_VANISH,        /* "fault vanish" */
	CTL_STATS_LATENCY, /* "fault stats-latency MS [COUNT]" (COUNT 0: until clear) */
	CTL_CLEAR,         /* "fault clear" */
	CTL_HEAT,          /* "fault heat DEGREES SECONDS": the drive runs hotter */
};

enum ctl_op { CTL_OP_READ = 1, CTL_OP_WRITE = 2, CTL_OP_TRIM = 4 };

struct ctl_cmd {
	enum ctl_kind kind;
	uint64_t off, len;   /* CTL_IOERROR */
	unsigned ops;        /* CTL_IOERROR: CTL_OP_* mask */
	uint64_t latency_ns; /* CTL_LATENCY, CTL_STATS_LATENCY; CTL_HEAT: how long */
	double heat_c;       /* CTL_HEAT: degrees added to the temperature */
	uint64_t count;      /* CTL_LATENCY, CTL_STATS_LATENCY: requests affected,
				  0 = all */
};

struct ctl_range {
	uint64_t off, len;
	unsigned ops;
};

struct ctl_faults {
	struct ctl_range io[CTL_MAX_RANGES];
	unsigned nio;
	uint64_t latency_ns;
	uint64_t latency_left; /* UINT64_MAX: until cleared */
	int vanished;
	uint64_t errors;             /* requests failed by injection */
	uint64_t delayed;            /* requests delayed by injection */
	uint64_t stats_latency_ns;   /* an open of stats is held this long */
	uint64_t stats_latency_left; /* opens still to hold; UINT64_MAX: until cleared */
	uint64_t stats_delayed;      /* opens of stats held */
};

/* Parse one command line (no newline). Returns 0 or -EINVAL. */
int ctl_parse(const char *line, struct ctl_cmd *cmd);

/* Apply a fault command (not CTL_SECURE_ERASE or CTL_HEAT, which act on
 * the FTL and the thermal model). Returns 0 or -ENOSPC when
 * CTL_MAX_RANGES error ranges are already set. */
int ctl_apply(struct ctl_faults *f, const struct ctl_cmd *cmd);

/* Decide the fate of a request of kind op on [off, off+len): returns 0
 * (and any injected delay in *delay_ns) or -EIO. */
int ctl_check_io(struct ctl_faults *f, enum ctl_op op, uint64_t off, uint64_t len,
		 uint64_t *delay_ns);

/* How long to hold an open of the stats file (the drive's health answer),
 * in ns: 0, or the stats latency while a count of it is left (used up). */
uint64_t ctl_stats_delay(struct ctl_faults *f);

/* Write the stats file's "key value" lines into buf. Returns the length
 * (truncated to size - 1 like snprintf). */
size_t ctl_format_stats(const struct ftl_config *cfg, const struct ftl_stats *st,
			const struct ctl_faults *f, int compress, char *buf, size_t size);

#endif
