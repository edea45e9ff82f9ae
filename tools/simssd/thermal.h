/* thermal: the simulated drive's temperature and thermal throttling. The
 * temperature moves toward ambient + rise x the write rate (MiB/s) with a
 * time constant, so it climbs while the host writes and falls when idle;
 * above the throttle temperature writes are held to the throttle rate
 * until it has cooled by THERMAL_HYSTERESIS_C, and the time is counted.
 * Pure: no I/O, no clock reads, no locking (callers serialise, pass time). */
#ifndef SIMSSD_THERMAL_H
#define SIMSSD_THERMAL_H

#include <stddef.h>
#include <stdint.h>

/* Degrees below the throttle temperature at which throttling ends. */
#define THERMAL_HYSTERESIS_C 2.0

struct thermal_config {
	double ambient_c;      /* idle temperature */
	double rise_c;         /* steady-state rise per MiB/s written */
	uint64_t tau_ns;       /* time constant of heating and cooling (> 0) */
	double throttle_c;     /* throttle at or above this; 0: never */
	uint64_t throttle_bps; /* write rate while throttled, bytes/s (> 0) */
};

struct thermal {
	struct thermal_config cfg;
	double temp_c;
	uint64_t t_ns; /* time of temp_c */
	int throttled;
	uint64_t throttle_ns; /* time spent throttled, total */
	uint64_t next_free;   /* throttled writes: when the next may start */
	double spike_c;       /* an injected heat (thermal_spike) adds this ... */
	uint64_t spike_until; /* ... until then */
};

/* A drive at ambient temperature at now. */
void thermal_init(struct thermal *t, const struct thermal_config *cfg, uint64_t now);

/* Bring t to now: cool toward ambient, count throttled time, end the
 * throttle once cool enough. A now before t's time changes nothing. */
void thermal_advance(struct thermal *t, uint64_t now);

/* The host wrote len bytes at now: heat the drive. Returns when the write
 * may complete: now, or while throttled the end of its share of the
 * throttle rate (writes queue behind each other). */
uint64_t thermal_write(struct thermal *t, uint64_t len, uint64_t now);

/* An injected fault: from now on, for dur_ns, the drive reads delta_c
 * hotter than its model (and throttles if that reaches the throttle
 * temperature); afterwards it is the model's temperature again. */
void thermal_spike(struct thermal *t, double delta_c, uint64_t dur_ns, uint64_t now);

/* The stats file's thermal lines (temperature_c, throttled,
 * throttle_seconds, throttle_ms, throttle_temp_c) into buf. Returns their length
 * (truncated to size - 1 like snprintf). */
size_t thermal_format(const struct thermal *t, char *buf, size_t size);

#endif
