/* devstat: what a drive says about its own writes, heat and health, parsed
 * from the bytes of its logs (NVMe SMART/Health through nvme.h, the OCP
 * extended SMART log C0h, the ATA Device Statistics log 04h, the vendors'
 * SMART write attributes, the simulated SSD's counters file) into one
 * reading, and the evidence between two readings. Pure: never reads a
 * device (devpoll.c does). Layouts and where each fact comes from:
 * common/device/DEVICE_LOGS.md. */
#ifndef WEARMON_DEVSTAT_H
#define WEARMON_DEVSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "device/ata.h"
#include "device/nvme.h"

#define DEVSTAT_OCP_LID 0xC0     /* NVMe Get Log Page id of the OCP log */
#define DEVSTAT_ATA_LOG 0x04     /* ATA Device Statistics log address */
#define DEVSTAT_ATA_GENERAL 0x01 /* its General Statistics page */
#define DEVSTAT_ATA_TEMP 0x05    /* its Temperature Statistics page */
#define DEVSTAT_ATA_SSD 0x07     /* its Solid State Device Statistics page */
#define DEVSTAT_PAGE_LEN 512

/* A value a source may lack: has 0 means unknown (stored as NULL), never 0. */
struct devstat_opt {
	int has;
	int64_t v;
};

/* The OCP Datacenter NVMe SSD SMART / Health Information Extended log. */
struct devstat_ocp {
	double media_bytes_written; /* bytes 0-15: physical media units written */
	double media_bytes_read;    /* bytes 16-31 */
	uint8_t throttle_count;     /* byte 96: thermal throttling events */
	uint8_t throttle_status;    /* byte 97: 0 none, 1 first level, ... */
	uint16_t version;           /* bytes 494-495: log page version */
};

/* Parse a C0h log page. Returns 0, or -EBADMSG when the log page GUID at
 * bytes 496-511 is not the OCP one (some other vendor's C0h: ignore it). */
int devstat_parse_ocp(const uint8_t buf[DEVSTAT_PAGE_LEN], struct devstat_ocp *out);

/* What the ATA Device Statistics pages this parser knows say; a statistic
 * whose qword lacks the supported (bit 63) or valid (bit 62) flag is
 * unknown. */
struct devstat_ata {
	struct devstat_opt sectors_written;   /* page 01h, qword at 18h */
	struct devstat_opt sectors_read;      /* page 01h, qword at 28h */
	struct devstat_opt temp_c;            /* page 05h at 08h: current */
	struct devstat_opt temp_max_c;        /* page 05h at 20h: highest */
	struct devstat_opt over_temp_minutes; /* page 05h at 50h */
	struct devstat_opt pct_used;          /* page 07h at 08h: endurance used, % */
};

/* Parse one page of log 04h into out (fields of other pages untouched).
 * Returns 0, -EBADMSG when the page header does not name page, or
 * -ENOTSUP for a page this parser does not know. */
int devstat_parse_ata_page(const uint8_t buf[DEVSTAT_PAGE_LEN], uint8_t page,
			   struct devstat_ata *out);

/* A vendor's SMART attributes for host and NAND writes: the raw value
 * times unit is bytes; id 0: the vendor has none. */
struct devstat_attr_table {
	const char *name;
	const char *const *models; /* model prefixes, NULL-terminated; NULL: any */
	uint8_t host_id;
	double host_unit;
	uint8_t media_id;
	double media_unit;
};

/* The table for a drive model (the generic one when no vendor's matches).
 * Returns it; never NULL. */
const struct devstat_attr_table *devstat_attr_table_for(const char *model);

/* Host and media bytes written from a SMART READ DATA page by table t;
 * an attribute the page lacks leaves its value unknown. */
void devstat_smart_writes(const struct ata_smart *sm, const struct devstat_attr_table *t,
			  struct devstat_opt *host, struct devstat_opt *media);

/* One reading of a drive. */
enum devstat_field {
	DEVSTAT_HOST_BYTES,   /* host writes as the drive counts them */
	DEVSTAT_MEDIA_BYTES,  /* what it wrote to its flash */
	DEVSTAT_TEMP_C,       /* temperature now */
	DEVSTAT_THROTTLE_MS,  /* time throttled (or over temperature), total, in
				 ms counted in the source's unit (throttle_res_ms) */
	DEVSTAT_MEDIA_ERRORS, /* media and data integrity errors, total */
	DEVSTAT_SPARE_PCT,    /* available spare now, percent */
	DEVSTAT__COUNT
};

struct devstat {
	const char *source; /* "nvme", "ata", "simssd"; NULL: none answered */
	struct devstat_opt f[DEVSTAT__COUNT];
	int64_t throttle_res_ms; /* the unit the source counts throttle time in:
				    NVMe 1000, ATA 60000, the counters file 1
				    (throttle_ms) or 1000 (throttle_seconds) */
};

/* Set field f of d to v. */
void devstat_set(struct devstat *d, enum devstat_field f, int64_t v);

/* Fill d from a parsed NVMe SMART/Health log: host bytes, temperature,
 * throttle time (thermal management 1 + 2 total times, whole seconds),
 * media errors, spare. */
void devstat_from_nvme(const struct nvme_health *h, struct devstat *d);

/* Fill d's media bytes from a parsed OCP log. */
void devstat_from_ocp(const struct devstat_ocp *o, struct devstat *d);

/* Fill d from ATA statistics (sectors of sector_size bytes), then from the
 * SMART writes where the statistics lack them. */
void devstat_from_ata(const struct devstat_ata *a, uint32_t sector_size,
		      const struct devstat_opt *smart_host, const struct devstat_opt *smart_media,
		      struct devstat *d);

/* Fill d from the text of a counters file (common/device/wear.h): lines
 * "NAME VALUE" of host_bytes_written, flash_bytes_written, temperature_c,
 * throttle_ms (else throttle_seconds), media_errors, available_spare;
 * others ignored. Returns how many it knew. */
int devstat_parse_counters(const char *text, struct devstat *d);

/* The evidence of an iteration: from reading a (its start) to b (its
 * end), with the highest temperature polled in between. */
struct devstat_delta {
	struct devstat_opt host_bytes, media_bytes, peak_temp_c, throttle_ms, media_errors,
		spare_pct;
	int64_t throttle_res_ms; /* the coarser of the two readings' units */
	double wa;               /* media / host bytes; < 0 unknown */
};

/* Deltas of the counters both readings have (a counter that went back is
 * unknown), the peak (a and b count too) and b's spare. */
void devstat_delta(const struct devstat *a, const struct devstat *b, struct devstat_opt peak,
		   struct devstat_delta *out);

/* Raise *peak to d's temperature when d has one. */
void devstat_peak(struct devstat_opt *peak, const struct devstat *d);

#endif
