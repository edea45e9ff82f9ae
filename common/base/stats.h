/* stats: running mean/stddev/min/max of a series, and the time-weighted figures of a phase's
 * rate (avg, min, max, stddev) with the rule min <= avg <= max.
 * Pure computation, no I/O, no allocation. */
#ifndef WEARMON_STATS_H
#define WEARMON_STATS_H

#include <stddef.h>
#include <stdint.h>

/* How far a phase is that ends when goal bytes have moved or, with a
 * duration (> 0), when that is up, whichever comes first: done bytes
 * moved in secs seconds (< 0 unknown), now at rate_mibps. fraction: the
 * larger share, at most 0.99 while the phase runs; eta: the sooner end in
 * seconds; NAN when unknown. The one definition of a phase's progress:
 * `wearmon status` and the daemon's terminal line both show it. */
struct stats_phase {
	double fraction, eta;
};
void stats_phase_progress(double done, double goal, double secs, double duration, double rate_mibps,
			  struct stats_phase *out);

/* Running statistics of a series (Welford). */
struct runstat {
	uint64_t n;
	double mean, m2, min, max;
};

/* Start empty. */
void stats_run_init(struct runstat *r);

/* Add one value. */
void stats_run_add(struct runstat *r, double x);

/* Sample standard deviation (n-1); 0 when n < 2. */
double stats_run_stddev(const struct runstat *r);

/* Time-weighted statistics of a rate sampled over intervals of unequal
 * length (weighted Welford): a sample of weight w counts as w samples. */
struct wstat {
	unsigned n, nfull; /* samples, and those of full length */
	double w, mean, m2, min, max;
};

/* A sample of at least this weight is a full one (boundaries are computed
 * in floating point, so a full interval may weigh 0.9999999). */
#define WSTAT_FULL 0.999

/* Start empty. */
void stats_weighted_init(struct wstat *s);

/* Add rate x measured over weight w (its length in sample intervals: 1 for
 * a full sample, 0.35 for a final 0.35 s one of a 1 s interval). Weights
 * <= 0 carry no time and are ignored. */
void stats_weighted_add(struct wstat *s, double x, double w);

/* Standard deviation with frequency weights, sqrt(m2 / (w - 1)): with
 * full samples only it is the usual sample stddev. -1 when w <= 1. */
double stats_weighted_stddev(const struct wstat *s);

/* The rate figures of one phase or row; < 0 means unknown (NULL). */
struct rate_figs {
	double avg, min, max, stddev;
};

/* Figures of a phase whose average is avg (bytes over its seconds) and
 * whose samples are s: min, max and stddev from the samples when there are
 * at least two full ones, else -1 (one sample is no spread); then bounded
 * by stats_rate_bound. Returns what stats_rate_bound returns. */
int stats_rate_figs(const struct wstat *s, double avg, struct rate_figs *out);

/* The rule every stored row obeys: min <= avg <= max (unknown figures are
 * left alone). A min or max that misses avg is moved onto it. Returns 0,
 * or -ERANGE when one missed by more than rounding (1e-9 relative): a
 * sample lost somewhere, worth a log line. */
int stats_rate_bound(struct rate_figs *f);

#endif
