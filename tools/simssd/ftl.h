/* ftl: the simulated drive's flash translation layer and flash timing model.
 * Owns page mapping, garbage collection, wear counts and per-channel clocks.
 * Pure: no I/O, no clock reads, no locking (callers serialise and pass time). */
#ifndef SIMSSD_FTL_H
#define SIMSSD_FTL_H

#include <stdint.h>

/* Compressed pages are packed in units of this many bytes. */
#define FTL_UNIT 512u

/* Geometry and timing of one drive; all sizes in bytes, times in ns. */
struct ftl_config {
	uint64_t capacity;    /* host-visible size, a multiple of page */
	uint32_t page;        /* flash page and mapping unit, multiple of FTL_UNIT */
	uint32_t erase_block; /* erase unit, a multiple of page */
	double spare_pct;     /* factory spare: physical = capacity * (1 + spare/100) */
	uint32_t channels;    /* independent flash channels working in parallel */
	uint64_t t_prog;      /* program one full page */
	uint64_t t_read;      /* read one page */
	uint64_t t_erase;     /* erase one block */
	uint64_t cache;       /* write cache: writes are acknowledged this many
	                           bytes of fresh-drive programming ahead of flash */
	uint32_t gc_free;     /* garbage-collect a channel when it has this few
	                           free blocks left */
	uint32_t bg_free;     /* background GC: a channel idle for bg_idle
	                           reclaims blocks up to this many free (0: off) */
	uint64_t bg_idle;     /* idle time before background GC starts */
	/* endurance (both 0 by default: no wear-out modelled) */
	uint32_t endurance;  /* rated erase cycles per block (0: none) */
	uint32_t wear_accel; /* each erase counts as this many (0 or 1: one) */
};

/* Counters since creation (secure erase does not reset them). Erase
 * counts are in wear: each erase counts cfg.wear_accel times. */
struct ftl_stats {
	uint64_t host_bytes_written;
	uint64_t host_bytes_read;
	uint64_t flash_bytes_written; /* host programs + GC moves, compressed size */
	uint64_t flash_bytes_read;    /* host reads + GC reads */
	uint64_t gc_bytes_moved;      /* by GC on demand and in the background */
	uint64_t bg_gc_bytes_moved;   /* of them, by background GC while idle */
	uint64_t bg_gc_erases;        /* blocks background GC reclaimed */
	uint64_t trimmed_bytes;
	uint64_t erases;
	uint64_t flash_busy_ns; /* channel time spent, summed over channels */
	uint64_t erase_min, erase_max;
	double erase_avg;
	uint64_t free_blocks; /* erased and not open for writing */
	uint64_t total_blocks;
	uint64_t valid_pages;       /* host pages currently mapped */
	uint64_t valid_bytes_flash; /* flash space those pages occupy */
	uint64_t physical_bytes;
	uint64_t block_bytes;
	/* endurance (cfg.endurance > 0): life used = mean erase count /
	 * endurance; the host bytes written when it first reached 100 % */
	double life_used_pct;
	uint64_t life_end_host_bytes; /* 0: not yet */
};

struct ftl;

/* Check a configuration without building it. Returns 0 or -EINVAL with a
 * reason in *why (static string). */
int ftl_config_check(const struct ftl_config *cfg, const char **why);

/* Build a fresh (all blocks erased) drive. Returns 0, -EINVAL or -ENOMEM. */
int ftl_create(const struct ftl_config *cfg, struct ftl **out);

/* Free the drive; NULL is ignored. */
void ftl_destroy(struct ftl *f);

/* Units (of FTL_UNIT bytes) a full, uncompressed page occupies. */
uint32_t ftl_units_per_page(const struct ftl *f);

/* Host write of [off, off+len) at time now. units[i] is the flash size, in
 * FTL_UNIT units, of the i-th page the range touches (NULL: uncompressed).
 * Partial pages are read-modify-written. *ack is when the host may be told
 * the write is done. Returns 0, -EINVAL (out of range) or -ENOSPC (no flash
 * left: only when the configuration leaves GC no room). */
int ftl_write(struct ftl *f, uint64_t off, uint64_t len, const uint8_t *units, uint64_t now,
	      uint64_t *ack);

/* Host read of [off, off+len); unmapped pages cost no flash time.
 * Returns 0 or -EINVAL; *done is the completion time. */
int ftl_read(struct ftl *f, uint64_t off, uint64_t len, uint64_t now, uint64_t *done);

/* TRIM: unmap the whole pages inside [off, off+len); blocks left without
 * valid data are erased at once. Returns 0 or -EINVAL; *done as above. */
int ftl_trim(struct ftl *f, uint64_t off, uint64_t len, uint64_t now, uint64_t *done);

/* Secure erase: every used block erased, all mappings gone. *done is when
 * the erases finish. Returns 0. */
int ftl_secure_erase(struct ftl *f, uint64_t now, uint64_t *done);

/* Cache flush: *done is when every channel is idle. Returns 0. */
int ftl_flush(const struct ftl *f, uint64_t now, uint64_t *done);

/* Background GC up to now: each channel whose flash has been idle for
 * bg_idle reclaims blocks (greedy, as on demand) until it has bg_free free
 * ones, only work that would have ended by now, on the channel's clock.
 * Host requests run it first; call it before reading the counters too. */
void ftl_idle(struct ftl *f, uint64_t now);

/* Fill *st with the counters and the current state. */
void ftl_get_stats(const struct ftl *f, struct ftl_stats *st);

/* Verify internal invariants (maps agree, counts add up). Returns 0 or
 * -EUCLEAN; for tests. */
int ftl_check(const struct ftl *f);

/* Sequential-write throughput of the fresh drive in bytes/s, the figure the
 * options imply: channels * page / t_prog (0 when t_prog is 0). */
double ftl_fresh_write_rate(const struct ftl_config *cfg);

#endif
