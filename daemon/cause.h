/* cause: why a drive's rate fell, judged from the dip itself: the drive's
 * and the host's figures over the window in which the rate fell against
 * the window before it (the same iteration's, or the baseline iteration's
 * measured phase when the rate was low from the start), read from the
 * iteration's device_series (series.h). Pure: reads no device, database
 * or clock; alert.c gives it the rows and says what it found. */
#ifndef WEARMON_CAUSE_H
#define WEARMON_CAUSE_H

#include <stddef.h>
#include <stdint.h>

#include "base/log.h"
#include "db/db.h"

/* The causes a crash or collapse alert names (CAUSE=; wearmond.8, ALERTS). */
enum cause_kind { CAUSE_THERMAL, CAUSE_WEAR, CAUSE_HOST, CAUSE_UNKNOWN };

/* The written thresholds (wearmond.8 and systemd/wearmon.catalog say the
 * same): */
/* thermal: the drive throttled for this share of the dip or more, and
 * for this share more of it than of the window before */
#define CAUSE_THROTTLE_SHARE 0.10
/* thermal, for a drive that counts no throttle time: its peak temperature
 * in the dip this many degrees above the window before's */
#define CAUSE_TEMP_RISE_C 5
/* wear: the drive's write amplification in the dip this many times the
 * window before's or more */
#define CAUSE_WEAR_WA_RATIO 1.25
/* a window's write amplification is known only over this many host bytes */
#define CAUSE_WA_MIN_BYTES (1 << 20)
/* host: wearmond did not run for this share of the dip, and this share
 * more than in the window before */
#define CAUSE_HOST_STALL_SHARE 0.10

/* The drive's and the host's figures over one window of a phase. */
struct cause_window {
	int known;                /* two readings bound it */
	int64_t start_ms, end_ms; /* from its phase's start, as the readings
				     that bound it were taken */
	double wa;                /* media / host bytes in it; < 0: unknown */
	int64_t host_bytes;       /* written in it as the drive counted; < 0: unknown */
	int has_throttle;
	int64_t throttle_ms; /* throttled in it */
	int has_temp;
	int64_t peak_temp_c;   /* highest reading in it */
	int64_t host_stall_ms; /* wearmond did not run, in it */
};

/* Where the window before the dip comes from. */
enum cause_before {
	CAUSE_BEFORE_NONE,      /* none: the rule has only the dip */
	CAUSE_BEFORE_ITERATION, /* the same phase, just before the dip */
	CAUSE_BEFORE_BASELINE,  /* the baseline iteration's measured phase */
};

/* "none", "iteration", "baseline". Returns it ("?" out of range). */
const char *cause_before_name(enum cause_before b);

/* Window [a_ms, b_ms] of phase ph of the readings s[0..n) (phase and time
 * order): from the last reading at or before a_ms (the phase's first when
 * none) to the first at or after b_ms (its last when none). Fills *w;
 * w->known is 0 when fewer than two readings bound it. */
void cause_window(const struct db_dev_point *s, size_t n, enum db_phase ph, int64_t a_ms,
		  int64_t b_ms, struct cause_window *w);

/* The cause: thermal when the drive throttled for CAUSE_THROTTLE_SHARE of
 * the dip or more and for that share more than in the window before (or,
 * counting no throttle time, its peak temperature rose CAUSE_TEMP_RISE_C);
 * else wear when its write amplification in the dip is CAUSE_WEAR_WA_RATIO
 * times the window before's or more; else host when wearmond did not run
 * for CAUSE_HOST_STALL_SHARE of the dip and that share more than before;
 * else unknown. An unknown window before (NULL or !known) counts as calm
 * for thermal and host and leaves wear unknown. Returns it. */
enum cause_kind cause_judge(const struct cause_window *dip, const struct cause_window *before);

/* "thermal", "wear", "host", "unknown". Returns it ("?" out of range). */
const char *cause_name(enum cause_kind c);

/* The measured phase's samples s[0..n) (phase and time order): where a
 * rate fell below limit MiB/s (samples in which the host stalled do not
 * count). [*a_ms, *b_ms] from the start of the first such sample to the
 * end of the last; *settled: measured samples before it (the rate held
 * before it fell). Returns 0, or -ENOENT when none fell (then the whole
 * phase, *settled 0). */
int cause_dip_below(const struct db_sample *s, size_t n, double limit, int64_t *a_ms, int64_t *b_ms,
		    size_t *settled);

/* A crash or collapse's evidence: the dip, the window before it, where
 * that came from, and the cause judged on them. */
struct cause_evidence {
	enum cause_kind cause;
	struct cause_window dip, before;
	enum cause_before from;
	int64_t before_iteration_id; /* CAUSE_BEFORE_BASELINE: the row */
	int64_t throttle_res_ms;     /* the drive's unit of throttle time; 0: unknown */
};

/* The journal fields of the evidence besides CAUSE= (systemd/wearmon.catalog
 * names each; alert_command gets each as WEARMON_NAME). */
enum cause_field {
	CAUSE_F_DIP_START_S,
	CAUSE_F_DIP_END_S,
	CAUSE_F_DIP_DEVICE_WA,
	CAUSE_F_DIP_THROTTLE_MS,
	CAUSE_F_DIP_PEAK_TEMP_C,
	CAUSE_F_DIP_HOST_STALL_MS,
	CAUSE_F_BEFORE,
	CAUSE_F_BEFORE_ITERATION_ID,
	CAUSE_F_BEFORE_START_S,
	CAUSE_F_BEFORE_END_S,
	CAUSE_F_BEFORE_DEVICE_WA,
	CAUSE_F_BEFORE_THROTTLE_MS,
	CAUSE_F_BEFORE_PEAK_TEMP_C,
	CAUSE_F_BEFORE_HOST_STALL_MS,
	CAUSE_F_THROTTLE_RESOLUTION_MS,
	CAUSE_FIELDS
};

/* The field names, by enum cause_field. Returns the table; *n = rows. */
const char *const *cause_field_names(size_t *n);

/* The evidence as text: the journal fields (values empty when unknown),
 * the members of the events row's JSON (after a comma: cause, device_wa
 * and baseline_device_wa as the dip's and the window before's WA,
 * throttle_seconds, peak_temp_c and host_stall_seconds of the dip, then
 * the windows and their source), and the words of the message. */
struct cause_texts {
	struct log_field fields[CAUSE_FIELDS];
	char vals[CAUSE_FIELDS][24];
	char json[1024];
	char words[512];
};

/* Fill tx from ev. */
void cause_texts(const struct cause_evidence *ev, struct cause_texts *tx);

/* Start and end (ms) of sample s within its phase. */
void cause_sample_span(const struct db_sample *s, int64_t *a_ms, int64_t *b_ms);

#endif
