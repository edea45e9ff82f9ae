/* eol: the forecast of a drive's end of life from its own wear indicator
 * (percentage used) and the host and media bytes written over a campaign:
 * the times the indicator stepped, least-squares lines of time and bytes
 * against the level, the date and bytes at 100 % with a prediction
 * interval, the host write rate against a rated endurance, and the
 * sentence that says it. Pure: no I/O, no clock (the caller says what
 * "now" is); knows nothing of databases or devices. The one definition
 * of every forecast figure that wearmon status, show, report and the
 * metrics print; the method is in wearmon(1), "ENDURANCE FORECAST". */
#ifndef WEARMON_EOL_H
#define WEARMON_EOL_H

#include <stddef.h>

#define EOL_END_LEVEL 100.0 /* percentage used at the end of rated life */
#define EOL_MAX_LEVEL 255   /* highest level counted (NVMe's cap) */
#define EOL_MIN_STEPS 3     /* levels crossed before a forecast */
#define EOL_MIN_BRACKETS 2  /* ...seen between at least this many reading pairs */

/* One reading of the drive, in time order; NAN: not reported. */
struct eol_reading {
	double t;          /* seconds since the epoch */
	double used;       /* wear indicator, percent (NVMe percentage used) */
	double host_drive; /* host bytes written, as the drive counts them */
	double host_own;   /* host bytes written, as wearmond counted them */
	double media;      /* media (NAND) bytes written, as the drive counts them */
};

/* The endurance the configuration rates the drive for; 0 or NAN: unset. */
struct eol_rating {
	double tbw_bytes;      /* rated_tbw */
	double dwpd;           /* rated_dwpd, with warranty_years */
	double warranty_years; /* warranty_years */
	double warranty_start; /* seconds since the epoch; NAN: unknown */
	double capacity;       /* bytes, for rated_dwpd */
};

/* What a forecast could say. */
enum eol_status {
	EOL_NO_INDICATOR, /* no reading has a wear indicator */
	EOL_FLAT,         /* it never stepped in the readings */
	EOL_TOO_FEW,      /* fewer than EOL_MIN_STEPS steps (or brackets) */
	EOL_OK,           /* a forecast */
	EOL_REACHED,      /* the indicator already reads EOL_END_LEVEL or more */
	EOL__COUNT
};

/* Which host counter the bytes figures are in. */
enum eol_host { EOL_HOST_NONE, EOL_HOST_DRIVE, EOL_HOST_OWN };

/* A figure and its 95 % prediction interval [lo, hi]; NAN: unknown. */
struct eol_estimate {
	double at, lo, hi;
};

/* A quantity that grows by increments with a steady mean and independent
 * spread (wear under a steady workload: a random walk with drift), fitted
 * to n increments of y over x: from the last point (x0, y0), y grows by
 * mu per unit of x, with variance s2 per unit of x; the estimate of mu
 * has variance var_mu, and y0 itself var0 (where its point lies in the
 * span between two readings). tq is the Student t quantile for 95 % with
 * n - 1 degrees of freedom. */
struct eol_drift {
	int n;
	double x0, y0, x1, y1; /* the last point and the first */
	double mu, s2, span, var_mu, var0, tq;
};

/* One level the indicator stepped to: when (and at how many host and
 * media bytes) it crossed it, and the width of the span it crossed in
 * (the uncertainty of each). */
struct eol_step {
	double level, t, host, media;
	double wt, wh, wm;
};

#define EOL_MAX_STEPS (EOL_MAX_LEVEL + 1)

struct eol_forecast {
	enum eol_status status;
	enum eol_host host_counter;
	int readings;               /* with an indicator, in the fitted series */
	int brackets;               /* reading pairs the steps were seen between */
	double first_t, first_used; /* the series' first reading */
	double last_t, last_used;   /* its latest */
	double last_host;           /* host bytes at the latest (host_counter's) */
	int nsteps;
	struct eol_step steps[EOL_MAX_STEPS];
	struct eol_drift time, host, media; /* against the level (n 0: none) */
	struct eol_estimate end_t;          /* when the indicator reads 100 % */
	struct eol_estimate end_host;       /* host bytes by then */
	struct eol_estimate end_media;      /* media bytes by then */
	double pct_per_day;                 /* wear rate */
	double host_per_pct;                /* host bytes per percent of life */
	struct eol_drift rate;              /* host bytes against time */
	double rated_bytes;                 /* the rating in host bytes; NAN none */
	struct eol_estimate rated_ratio;    /* end_host / rated_bytes */
	struct eol_estimate rated_t;        /* when host writes reach rated_bytes */
	double warranty_end;                /* seconds since the epoch; NAN none */
};

/* Fit the readings r[0..n) (time order) and rate them against rating
 * (NULL: none) into *out. Returns 0 (out->status says what it could
 * tell), -EINVAL when the times go back, or -ENOMEM. */
int eol_fit(const struct eol_reading *r, size_t n, const struct eol_rating *rating,
	    struct eol_forecast *out);

/* y at x with its 95 % prediction interval: on the line through the
 * first and last points, the interval widening with the distance from
 * the last (NAN when the drift has fewer than two increments). */
void eol_drift_at(const struct eol_drift *d, double x, struct eol_estimate *out);

/* When the indicator reads level, by the fit: seconds since the epoch
 * with the interval (NAN without a forecast). */
void eol_time_at(const struct eol_forecast *f, double level, struct eol_estimate *out);

/* The rated endurance in host bytes: rated_tbw, else rated_dwpd x
 * capacity x 365 x warranty_years; NAN when neither is set. */
double eol_rated_bytes(const struct eol_rating *r);

/* Days from now to time t (seconds since the epoch; NAN stays NAN). */
double eol_days_to(double t, double now);

/* Days from now (seconds since the epoch) to the forecast end, with the
 * interval's half-width in *pm (NAN without a forecast). */
double eol_days_left(const struct eol_forecast *f, double now, double *pm);

/* What f says in words, as now sees it ("at this workload the drive
 * reaches 100 % used in 212 ± 9 days ..."), into buf. Returns buf. */
char *eol_words(const struct eol_forecast *f, double now, char *buf, size_t len);

/* Bytes in SI units as ratings give them, 3 figures, with a half-width in
 * the same unit unless half is NAN: "750 TB", "750 ± 30 TB". Returns buf. */
char *eol_si_bytes(double b, double half, char *buf, size_t len);

/* "ok", "reached", "too-few-steps", "flat", "no-indicator". */
const char *eol_status_name(enum eol_status s);

/* "drive", "wearmon" or "none". */
const char *eol_host_name(enum eol_host h);

/* The Student t quantile 0.975 for dof degrees of freedom (dof >= 1). */
double eol_t975(int dof);

#endif
