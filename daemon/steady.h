/* steady: the SNIA PTS steady-state test of a series of rounds: both
 * criteria over the measurement window of the last 5 rounds (range and
 * least-squares excursion). Pure: no I/O, no allocation, no clock. */
#ifndef WEARMON_STEADY_H
#define WEARMON_STEADY_H

#include <stddef.h>

#define STEADY_WINDOW 5           /* rounds in the measurement window */
#define STEADY_RANGE_PCT 20.0     /* max - min, % of the window's mean */
#define STEADY_EXCURSION_PCT 10.0 /* |slope| * (n - 1), % of the mean */

/* The measurement window of a series and how it fares. */
struct steady_window {
	unsigned n; /* rounds in the window (< STEADY_WINDOW:
				       too few, never steady) */
	double mean;
	double range, range_pct;         /* max - min, and as % of mean */
	double slope;                    /* least-squares slope, y units per round */
	double excursion, excursion_pct; /* |slope| * (n - 1), and % of mean */
	int range_ok, excursion_ok;      /* each criterion, limits inclusive */
	int steady;                      /* both, over a full window */
};

/* Judge the window of the last STEADY_WINDOW values of y[0..n) (all of them
 * when fewer). Returns 1 when steady, else 0; w gets the figures. A mean
 * of 0 or less is never steady (no percentage of it means anything). */
int steady_check(const double *y, size_t n, struct steady_window *w);

/* The first round (1-based) whose window y[..round) is steady, scanning
 * y[0..n); 0 when none is. w gets that window, or the last one. */
size_t steady_first(const double *y, size_t n, struct steady_window *w);

#endif
