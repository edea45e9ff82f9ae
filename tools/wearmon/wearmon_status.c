/* wearmon_status: "wearmon status": what each target is doing now, derived
 * from the database alone (the daemon's last run, each target's last
 * iteration and cycle, its samples, its baseline, its last alert). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/stats.h"
#include "base/util.h"
#include "wearmon.h"

#define JUST_STARTED 5.0   /* seconds: an iteration with no figures yet */
#define FRESH_SECONDS 10.0 /* a progress row younger is current */
#define ROW_EVERY 1.0      /* the daemon rewrites its progress row (daemon/main.c) */
#define ROW_NAP 0.1        /* a new iteration's row is written within (daemon/main.c) */

enum daemon_state { D_RUNNING, D_STOPPED, D_GONE, D_ELSEWHERE, D_NEVER };

static const char *const state_names[] = {
	[D_RUNNING] = "running",     [D_STOPPED] = "stopped", [D_GONE] = "gone",
	[D_ELSEWHERE] = "elsewhere", [D_NEVER] = "never",
};

static enum daemon_state daemon_state_of(enum query_run_state s)
{
	switch (s) {
	case QUERY_RUN_ALIVE: return D_RUNNING;
	case QUERY_RUN_STOPPED: return D_STOPPED;
	case QUERY_RUN_DEAD: return D_GONE;
	case QUERY_RUN_ELSEWHERE: return D_ELSEWHERE;
	}
	return D_GONE;
}

/* One run's state (query_status.c: query_run_state). */
static enum daemon_state run_state(const struct wm *wm, const struct wm_table *run, int r)
{
	return daemon_state_of(query_run_state(wm->db_path, wm_str(run, r, "hostname"),
					       wm_int(run, r, "pid", 0),
					       wm_str(run, r, "ended_at") != NULL));
}

/* The daemons of each host that wrote the database (one, or several in a
 * merged fleet database): a host is running when one of its runs is
 * alive, else its newest run says. */
struct host {
	const char *name; /* runs.hostname; NULL unknown */
	enum daemon_state state;
	int row; /* the host's newest run in runs */
};

struct daemons {
	struct wm_table runs;
	enum daemon_state state; /* of all: running when any host is */
	int live[16], nlive;     /* rows of runs alive now */
	struct host hosts[16];
	int nhosts;
};

static int same_host(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static struct host *host_of(struct daemons *d, const char *name)
{
	for (int h = 0; h < d->nhosts; h++)
		if (same_host(d->hosts[h].name, name))
			return &d->hosts[h];
	return NULL;
}

/* The state of the daemon on host name: for a target, its rows' host. */
static enum daemon_state host_state(const struct daemons *d, const char *name)
{
	for (int h = 0; h < d->nhosts; h++)
		if (same_host(d->hosts[h].name, name))
			return d->hosts[h].state;
	return d->state;
}

static int load_daemons(struct wm *wm, struct daemons *d)
{
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret = wm_result(wm, query_status_runs(wm->db, wm_rows(&sk, &d->runs, err, sizeof(err))),
			    err);

	if (ret)
		return ret;
	d->state = d->runs.nrows ? run_state(wm, &d->runs, 0) : D_NEVER;
	for (int r = 0; r < d->runs.nrows; r++) { /* newest first */
		enum daemon_state s = run_state(wm, &d->runs, r);
		const char *name = wm_str(&d->runs, r, "hostname");
		struct host *h = host_of(d, name);

		if (!h && d->nhosts < (int)ARRAY_SIZE(d->hosts)) {
			h = &d->hosts[d->nhosts++];
			*h = (struct host){ .name = name, .state = s, .row = r };
		}
		if (s != D_RUNNING)
			continue;
		if (h)
			h->state = D_RUNNING;
		if (d->nlive < (int)ARRAY_SIZE(d->live))
			d->live[d->nlive++] = r;
	}
	if (d->nlive)
		d->state = D_RUNNING;
	return 0;
}

/* What the run in row r says, for a host of state s ("on HOST: " in a
 * database of several hosts). */
static void print_run(const struct wm *wm, const struct wm_table *run, int r, enum daemon_state s,
		      const char *on)
{
	char a[32], b[32], c[32];
	const char *host = wm_str(run, r, "hostname");

	wm_fmt_time(wm_str(run, r, "started_at"), a, sizeof(a));
	wm_fmt_time(wm_str(run, r, "ended_at"), b, sizeof(b));
	wm_fmt_time(wm_str(run, r, "last_seen"), c, sizeof(c));
	switch (s) {
	case D_NEVER: printf("wearmond: has not run on %s yet\n", wm->db_path); break;
	case D_STOPPED:
		printf("wearmond%s: stopped %s UTC (exit status %lld: %s); database %s\n", on, b,
		       (long long)wm_int(run, r, "exit_status", -1),
		       wm_str(run, r, "exit_reason") ? wm_str(run, r, "exit_reason") : "-",
		       wm->db_path);
		break;
	case D_RUNNING:
		printf("wearmond%s: running since %s UTC (pid %lld); database %s\n", on, a,
		       (long long)wm_int(run, r, "pid", 0), wm->db_path);
		break;
	case D_GONE:
		printf("wearmond%s: not running, dead since about %s UTC (last sign of life); "
		       "its run of %s UTC (pid %lld) recorded no stop (crash, kill or power "
		       "loss); database %s\n",
		       on, c, a, (long long)wm_int(run, r, "pid", 0), wm->db_path);
		break;
	case D_ELSEWHERE:
		printf("wearmond%s: started %s UTC on %s (pid %lld), no stop recorded, last "
		       "seen %s UTC (this host cannot tell whether it still runs); database %s\n",
		       on, a, host ? host : "another host", (long long)wm_int(run, r, "pid", 0), c,
		       wm->db_path);
		break;
	}
}

static void print_daemon(const struct wm *wm, const struct daemons *d)
{
	char on[300];

	if (d->state == D_NEVER) {
		print_run(wm, &d->runs, 0, D_NEVER, "");
		return;
	}
	for (int k = 0; d->nhosts <= 1 && k < d->nlive; k++)
		print_run(wm, &d->runs, d->live[k], D_RUNNING, "");
	if (d->nhosts <= 1 && d->nlive)
		return;
	if (d->nhosts <= 1) {
		print_run(wm, &d->runs, 0, d->state, "");
		return;
	}
	for (int h = 0; h < d->nhosts; h++) {
		const struct host *ho = &d->hosts[h];
		snprintf(on, sizeof(on), " on %s", ho->name ? ho->name : "an unnamed host");
		if (ho->state != D_RUNNING) {
			print_run(wm, &d->runs, ho->row, ho->state, on);
			continue;
		}
		for (int k = 0; k < d->nlive; k++)
			if (same_host(wm_str(&d->runs, d->live[k], "hostname"), ho->name))
				print_run(wm, &d->runs, d->live[k], D_RUNNING, on);
	}
}

/* ---- progress of a running iteration ------------------------------------ */

struct progress {
	const char *phase;    /* "fill", "measure", ...; NULL unknown */
	int estimated;        /* from an earlier iteration, not the daemon */
	long long from_cycle; /* when estimated */
	double fraction;      /* of the phase (live) or iteration; NAN */
	double eta;           /* seconds; NAN unknown */
	double current;       /* MiB/s of the last sample; NAN */
	double elapsed;       /* seconds since the iteration started */
};

/* Fraction and ETA of the phase (common/base/stats.h: the daemon's
 * terminal line shows the same). */
static void phase_figures(struct progress *p, double done, double goal, double secs,
			  double duration)
{
	struct stats_phase f;

	stats_phase_progress(done, goal, secs, duration, p->current, &f);
	p->fraction = f.fraction;
	p->eta = f.eta;
}

/* The iteration's running time by the daemon's monotonic clock: as the
 * row says, plus its age, which is at most the time between rows unless
 * the wall clock jumped (a jump only spoils the age, never the sum). */
static double monotonic_elapsed(const struct wm_table *r)
{
	double age = wm_num(r, 0, "age");

	age = isnan(age) || age < 0 ? 0 : fmin(age, ROW_EVERY);
	return wm_num(r, 0, "iteration_seconds") + age;
}

/* From the progress row the daemon rewrites every second: returns 1 when
 * it is fresh and about this iteration. */
static int progress_from_table(struct wm *wm, const struct wm_table *it,
			       const struct query_schema *sc, int alive, struct progress *p)
{
	struct wm_table r = { 0 };
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int found = 0, ret;

	if (!sc->progress)
		return 0;
	ret = query_fresh_progress(wm->db, sc, wm_int(it, 0, "target_id", 0),
				   wm_int(it, 0, "cycle", 0), wm_int(it, 0, "number", 0),
				   wm_rows(&sk, &r, err, sizeof(err)));
	/* the row stands while its daemon holds the lock, else while fresh */
	if (ret == 0 && r.nrows == 1 && !alive && wm_num(&r, 0, "age") >= FRESH_SECONDS)
		r.nrows = 0;
	/* from progress 9 a row without the iteration's clock was written
	 * before the iteration's row (the health phase at a cycle's start
	 * names the iteration to come): it is not this iteration's */
	if (ret == 0 && r.nrows == 1 && sc->progress >= 9 &&
	    isnan(wm_num(&r, 0, "iteration_seconds")))
		r.nrows = 0;
	if (ret == 0 && r.nrows == 1 && wm_str(&r, 0, "phase")) {
		const char *phase = wm_str(&r, 0, "phase");
		int fill = !strcmp(phase, "fill"), measure = !fill && strcmp(phase, "start");
		double secs = wm_num(&r, 0, "phase_seconds");
		double dur = measure ? wm_num(&r, 0, "duration_seconds") : NAN;

		p->phase = fill ? "fill" : !strcmp(phase, "start") ? "start" : "measure";
		p->current = wm_num(&r, 0, "mibps");
		if (sc->progress >= 9)
			p->elapsed = monotonic_elapsed(&r);
		phase_figures(p, wm_num(&r, 0, "phase_bytes"),
			      wm_num(it, 0, fill ? "size_bytes" : "amount_bytes"),
			      isnan(secs) ? -1 : secs, isnan(dur) ? 0 : dur);
		found = 1;
	}
	wm_table_free(&r);
	return found;
}

/* From the last finished iteration of the same size and workload: its wall
 * time, against the time this one has been running. */
static int progress_estimate(struct wm *wm, const struct wm_table *it, struct progress *p)
{
	struct wm_table prev = { 0 };
	struct query_same_size k = {
		.target_id = wm_int(it, 0, "target_id", 0),
		.size_bytes = wm_int(it, 0, "size_bytes", 0),
		.block_size = wm_int(it, 0, "block_size", 0),
		.workload = wm_str(it, 0, "workload"),
	};
	struct query_sink sk;
	char err[WM_ERR_MAX];
	double wall, fill;
	int ret = wm_result(
		wm, query_last_same_size(wm->db, &k, wm_rows(&sk, &prev, err, sizeof(err))), err);

	if (ret || prev.nrows == 0)
		goto out;
	wall = wm_num(&prev, 0, "wall");
	fill = wm_num(&prev, 0, "fill_seconds");
	p->estimated = 1;
	p->from_cycle = wm_int(&prev, 0, "cycle", 0);
	p->phase = !isnan(fill) && p->elapsed < fill ? "fill" : "measure";
	if (wall > 0) {
		p->fraction = fmin(p->elapsed / wall, 0.99);
		p->eta = wall - p->elapsed;
	}
out:
	wm_table_free(&prev);
	return ret;
}

/* Wall-clock time with its fraction: started_at has milliseconds. The
 * environment's WEARMON_TEST_CLOCK_SHIFT (seconds) is added: what status
 * shows after a jump of the wall clock, for tests (wearmon.1). */
static double now_seconds(void)
{
	const char *shift = getenv("WEARMON_TEST_CLOCK_SHIFT");
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + (shift ? atof(shift) : 0);
}

static int get_progress(struct wm *wm, const struct wm_table *it, const struct query_schema *sc,
			int alive, struct progress *p)
{
	*p = (struct progress){ .fraction = NAN, .eta = NAN, .current = NAN };
	p->elapsed = fmax(0, now_seconds() - wm_time_of(wm_str(it, 0, "started_at")));
	if (progress_from_table(wm, it, sc, alive, p))
		return 0;
	if (alive && sc->progress >= 9) {
		/* a live daemon writes a new iteration's row within a loop's nap
		 * (daemon/main.c): this one has run no longer than that, whatever
		 * the wall clock says */
		p->elapsed = fmin(p->elapsed, ROW_NAP);
		return 0;
	}
	return progress_estimate(wm, it, p);
}

/* What a row's baseline is, as its query found it: the iteration the row
 * names and the rule that chose it ("10.8 MiB/s, cycle 1 iteration 2: the
 * first done run of this size, workload and block size in the campaign"). */
static const char *baseline_text(const struct wm_table *t, char *buf, size_t len)
{
	const char *rule = wm_str(t, 0, "baseline");
	const char *why = !rule                       ? ""
			  : !strcmp(rule, "first")    ? ": the first done run"
			  : !strcmp(rule, "best")     ? ": the fastest done run"
			  : !strcmp(rule, "previous") ? ": the latest done run"
						      : "";
	char it[32] = "";

	if (wm_int(t, 0, "baseline_iteration", 0) > 0)
		snprintf(it, sizeof(it), " iteration %lld",
			 (long long)wm_int(t, 0, "baseline_iteration", 0));
	snprintf(buf, len, "%.1f MiB/s, cycle %lld%s%s%s", wm_num(t, 0, "baseline_mibps"),
		 (long long)wm_int(t, 0, "baseline_cycle", 0), it, why,
		 why[0] ? " of this size, workload and block size in the campaign" : "");
	return buf;
}

static void print_running(const struct wm_table *it, const struct progress *p, enum daemon_state ds)
{
	char btext[256];
	double base = wm_num(it, 0, "baseline_mibps");
	char e1[32], e2[32];
	int measuring = p->phase && !strcmp(p->phase, "measure");

	if (ds == D_GONE)
		printf("  state       stalled: wearmond stopped during this iteration; "
		       "the next start marks it interrupted and runs that row again\n");
	printf("  phase       %s%s, running for %s\n",
	       p->phase                    ? p->phase
	       : p->elapsed < JUST_STARTED ? "starting"
					   : "unknown",
	       p->estimated ? " (estimated)" : "", wm_fmt_duration(p->elapsed, e1, sizeof(e1)));
	if (isnan(p->fraction))
		printf("  progress    %s\n",
		       p->phase || p->elapsed < JUST_STARTED
			       ? "the first figures are due within seconds"
			       : "not known (no earlier run of this size to compare with)");
	else if (p->estimated)
		printf("  progress    ~%.0f%% by the time cycle %lld took, ETA %s\n",
		       p->fraction * 100, p->from_cycle,
		       p->eta < 0 ? "overdue" : wm_fmt_duration(p->eta, e2, sizeof(e2)));
	else
		printf("  progress    %.0f%% of the %s phase, ETA %s\n", p->fraction * 100,
		       p->phase,
		       isnan(p->eta) ? "after the first sample"
				     : wm_fmt_duration(p->eta, e2, sizeof(e2)));
	if (isnan(p->current))
		printf("  MiB/s       now: %s",
		       p->elapsed < JUST_STARTED ? "no sample yet, the iteration has just started"
		       : p->estimated || !p->phase
			       ? "not published (is the daemon still writing progress?)"
			       : "waiting for the first sample");
	else
		printf("  MiB/s       now %.1f (last %s sample)", p->current, p->phase);
	if (isnan(base))
		printf("; no baseline for this size yet\n");
	else if (!isnan(p->current) && measuring)
		printf("; baseline %s; now %.0f%% of it\n", baseline_text(it, btext, sizeof(btext)),
		       100 * p->current / base);
	else
		printf("; baseline %s\n", baseline_text(it, btext, sizeof(btext)));
}

/* ---- the cycle and the campaign ----------------------------------------- */

/* How far the cycle and the campaign are (query_status.c:
 * query_campaign_eta): what remains of the plan at the seconds each size
 * took when last measured. */
struct plan {
	long long cycles; /* configured; 0 forever, -1 unknown */
	struct query_eta eta;
};

static int get_plan(struct wm *wm, const struct wm_table *it, int64_t tid,
		    const struct query_schema *sc, const struct progress *p, struct plan *pl)
{
	struct wm_table c = { 0 };
	struct query_sink sk;
	char err[WM_ERR_MAX] = "";
	int ret;

	*pl = (struct plan){ .cycles = wm_int(it, 0, "cycles_cfg", -1),
			     .eta = { .cycle_eta = NAN, .campaign_eta = NAN } };
	if (strcmp(wm_str(it, 0, "cycle_status"), "running") != 0)
		return 0;
	ret = wm_result(wm,
			query_last_done_cycle(wm->db, tid, wm_int(it, 0, "cycle_id", 0),
					      wm_rows(&sk, &c, err, sizeof(err))),
			err);
	if (ret)
		goto out;
	struct query_eta_in in = {
		.target_id = tid,
		.cycle_id = wm_int(it, 0, "cycle_id", 0),
		.prev_cycle_id = c.nrows ? wm_int(&c, 0, "id", 0) : 0,
		.prev_wall = c.nrows ? wm_num(&c, 0, "wall") : NAN,
		.size_index = (int)wm_int(it, 0, "size_index", 0),
		.nsizes = (int)wm_int(it, 0, "nsizes", 0),
		.cycle = (long)wm_int(it, 0, "campaign_cycle", wm_int(it, 0, "cycle", 0)),
		.cycles = (long)pl->cycles,
		.iteration_elapsed = p->elapsed,
		.iteration_eta = !p->estimated && !isnan(p->eta) ? p->eta : -1,
		.sc = sc,
	};
	ret = wm_result(wm, query_campaign_eta(wm->db, &in, &pl->eta, err, sizeof(err)), err);
out:
	wm_table_free(&c);
	return ret;
}

static void print_plan(const struct plan *pl)
{
	char a[32], b[32];

	if (isnan(pl->eta.cycle_eta))
		return;
	printf("  plan        cycle ETA %s (a cycle takes %s",
	       wm_fmt_duration(pl->eta.cycle_eta, a, sizeof(a)),
	       wm_fmt_duration(pl->eta.cycle_seconds, b, sizeof(b)));
	if (pl->eta.sizes_estimated)
		printf(", %d size%s not measured yet counted as the mean", pl->eta.sizes_estimated,
		       pl->eta.sizes_estimated == 1 ? "" : "s");
	putchar(')');
	if (!isnan(pl->eta.campaign_eta))
		printf("; campaign of %lld cycles ETA %s", pl->cycles,
		       wm_fmt_duration(pl->eta.campaign_eta, a, sizeof(a)));
	putchar('\n');
}

/* ---- one target --------------------------------------------------------- */

/* The cycle's place in its campaign: cycles_cfg counts a campaign's
 * cycles, the numbers go on across campaigns (a second campaign of
 * cycles = 2 runs cycles 3 and 4: "cycle 3 (1 of 2 in this campaign)"). */
static void cycle_text(const struct wm_table *it, char *buf, size_t len)
{
	long long cycle = wm_int(it, 0, "cycle", 0), cycles = wm_int(it, 0, "cycles_cfg", 0);
	long long place = wm_int(it, 0, "campaign_cycle", cycle);

	if (place != cycle && cycles > 0)
		snprintf(buf, len, "cycle %lld (%lld of %lld in this campaign)", cycle, place,
			 cycles);
	else if (place != cycle)
		snprintf(buf, len, "cycle %lld (%lld of this campaign)", cycle, place);
	else if (cycles > 0)
		snprintf(buf, len, "cycle %lld of %lld", cycle, cycles);
	else
		snprintf(buf, len, "cycle %lld", cycle);
}

static void print_position(const struct wm_table *it)
{
	char sz[32], bs[32], cyc[96], n[32] = "?";

	if (wm_int(it, 0, "nsizes", 0) > 0) /* unknown until the daemon's first second */
		snprintf(n, sizeof(n), "%lld", (long long)wm_int(it, 0, "nsizes", 0));
	cycle_text(it, cyc, sizeof(cyc));
	printf("  %-11s %s, size %lld of %s (%s), iteration %lld, %s %s QD%lld\n",
	       !strcmp(wm_str(it, 0, "status"), "running") ? "now" : "last", cyc,
	       (long long)wm_int(it, 0, "size_index", 0) + 1, n,
	       wm_fmt_bytes(wm_num(it, 0, "size_bytes"), sz, sizeof(sz)),
	       (long long)wm_int(it, 0, "number", 0), wm_str(it, 0, "workload"),
	       wm_fmt_bytes(wm_num(it, 0, "block_size"), bs, sizeof(bs)),
	       (long long)wm_int(it, 0, "queue_depth", 0));
}

static void print_last_done(const struct wm_table *d)
{
	char sz[32], at[32], btext[256];
	double base = wm_num(d, 0, "baseline_mibps");

	if (d->nrows == 0)
		return;
	printf("  last done   %.1f MiB/s average at %s, cycle %lld iteration %lld, ended %s UTC",
	       wm_num(d, 0, "mibps_avg"), wm_fmt_bytes(wm_num(d, 0, "size_bytes"), sz, sizeof(sz)),
	       (long long)wm_int(d, 0, "cycle", 0), (long long)wm_int(d, 0, "number", 0),
	       wm_fmt_time(wm_str(d, 0, "ended_at"), at, sizeof(at)));
	if (base > 0)
		printf("; %.0f%% of its baseline %s", 100 * wm_num(d, 0, "mibps_avg") / base,
		       baseline_text(d, btext, sizeof(btext)));
	putchar('\n');
}

static void print_cycle_and_alert(const struct wm_table *c, const struct wm_table *e)
{
	char at[32];

	if (c->nrows > 0)
		printf("  cycle       %lld %s%s%s%s%s\n", (long long)wm_int(c, 0, "number", 0),
		       wm_str(c, 0, "status"), wm_str(c, 0, "action") ? ", then " : "",
		       wm_str(c, 0, "action") ? wm_str(c, 0, "action") : "",
		       wm_str(c, 0, "action_outcome") ? ": " : "",
		       wm_str(c, 0, "action_outcome") ? wm_str(c, 0, "action_outcome") : "");
	if (e->nrows > 0)
		printf("  last alert  %s UTC %s %s: %s\n",
		       wm_fmt_time(wm_str(e, 0, "at"), at, sizeof(at)), wm_str(e, 0, "severity"),
		       wm_str(e, 0, "kind"), wm_str(e, 0, "message"));
	else
		printf("  last alert  none\n");
}

/* Everything status says about one target. */
struct target_status {
	struct wm_table it, done, cyc, ev, stage;
	int running;          /* it is running and a daemon may be on it */
	enum daemon_state ds; /* of the daemon on its host */
	struct progress p;
	struct plan pl;
	struct eol_forecast *eol; /* the endurance forecast; NULL: none */
};

static void target_free(struct target_status *ts)
{
	wm_table_free(&ts->it);
	wm_table_free(&ts->done);
	wm_table_free(&ts->cyc);
	wm_table_free(&ts->ev);
	wm_table_free(&ts->stage);
	free(ts->eol);
}

/* Where a running host idle recovery is (the progress row's stage, while
 * its daemon runs or the row is fresh, in the cycle running) and its ETA:
 * what the protocol's plan had left, less the row's age. Returns 1 when
 * there is one. */
static int hir_now(const struct target_status *ts, const char **stage, double *eta)
{
	const struct wm_table *s = &ts->stage;
	double age;

	if (s->nrows != 1 || ts->cyc.nrows != 1 || !wm_str(s, 0, "phase") ||
	    strcmp(wm_str(s, 0, "phase"), "hir") != 0 ||
	    strcmp(wm_str(&ts->cyc, 0, "status"), "running") != 0 ||
	    wm_int(s, 0, "cycle", 0) != wm_int(&ts->cyc, 0, "number", -1))
		return 0;
	age = wm_num(s, 0, "age");
	age = isnan(age) || age < 0 ? 0 : age;
	if (ts->ds != D_RUNNING && age >= FRESH_SECONDS)
		return 0;
	*stage = wm_str(s, 0, "stage");
	*eta = wm_num(s, 0, "remaining_seconds");
	if (!isnan(*eta))
		*eta = fmax(0, *eta - fmin(age, ROW_EVERY));
	return 1;
}

static void print_hir(const struct target_status *ts)
{
	const char *stage;
	double eta;
	char e[32];

	if (!hir_now(ts, &stage, &eta))
		return;
	printf("  phase       host idle recovery: %s\n", stage);
	if (!isnan(eta))
		printf("  plan        host idle recovery ETA %s (the waits, bursts and baselines "
		       "left; the precondition at most max_rounds)\n",
		       wm_fmt_duration(eta, e, sizeof(e)));
}

static int load_target(struct wm *wm, int64_t tid, const struct daemons *d,
		       const struct query_schema *sc, struct target_status *ts)
{
	struct query_sink sk;
	char err[WM_ERR_MAX];
	int ret = wm_result(
		wm,
		query_last_iteration(wm->db, sc, tid, 0, wm_rows(&sk, &ts->it, err, sizeof(err))),
		err);

	if (!ret)
		ret = wm_result(wm,
				query_last_iteration(wm->db, sc, tid, 1,
						     wm_rows(&sk, &ts->done, err, sizeof(err))),
				err);
	if (!ret)
		ret = wm_result(
			wm, query_last_cycle(wm->db, tid, wm_rows(&sk, &ts->cyc, err, sizeof(err))),
			err);
	if (!ret)
		ret = wm_result(
			wm, query_last_alert(wm->db, tid, wm_rows(&sk, &ts->ev, err, sizeof(err))),
			err);
	if (!ret)
		ret = wm_result(
			wm,
			query_stage(wm->db, sc, tid, wm_rows(&sk, &ts->stage, err, sizeof(err))),
			err);
	ts->ds = d->state;
	if (!ret && (ts->eol = malloc(sizeof(*ts->eol))))
		ret = wm_forecast(wm, &(struct query_forecast_scope){ tid, 0, 0, NULL }, ts->eol,
				  NULL, NULL);
	if (ret || ts->it.nrows == 0)
		return ret;
	ts->ds = host_state(d, wm_str(&ts->it, 0, "run_host"));
	/* another host's daemon (a merged or shared database): its rows as
	 * last written, no live figures from here */
	ts->running = !strcmp(wm_str(&ts->it, 0, "status"), "running") &&
		      (ts->ds == D_RUNNING || ts->ds == D_GONE);
	if (ts->running)
		ret = get_progress(wm, &ts->it, sc, ts->ds == D_RUNNING, &ts->p);
	if (!ret)
		ret = get_plan(wm, &ts->it, tid, sc, &ts->p, &ts->pl);
	return ret;
}

static void print_target(const struct wm_table *tg, int r, const struct target_status *ts)
{
	const struct wm_table *it = &ts->it;
	char cap[32];

	printf("%s  %s (%s, %s)\n", wm_str(tg, r, "name"), wm_str(tg, r, "device"),
	       wm_str(tg, r, "kind"),
	       wm_fmt_bytes(wm_num(tg, r, "capacity_bytes"), cap, sizeof(cap)));
	if (it->nrows == 0) {
		printf("  %s\n", WM_NO_ITERATIONS);
		return;
	}
	print_position(it);
	if (ts->running)
		print_running(it, &ts->p, ts->ds);
	else if (ts->ds == D_ELSEWHERE && !strcmp(wm_str(it, 0, "status"), "running"))
		printf("  state       running on %s when last recorded (started %s UTC); its daemon "
		       "is not on this host, so no live figures\n",
		       wm_str(it, 0, "run_host") ? wm_str(it, 0, "run_host") : "another host",
		       wm_fmt_time(wm_str(it, 0, "started_at"), cap, sizeof(cap)));
	else if (strcmp(wm_str(it, 0, "status"), "done") != 0)
		printf("  state       %s%s%s\n", wm_str(it, 0, "status"),
		       wm_str(it, 0, "error") ? ": " : "",
		       wm_str(it, 0, "error") ? wm_str(it, 0, "error") : "");
	if (ts->running)
		print_plan(&ts->pl);
	print_hir(ts);
	print_last_done(&ts->done);
	print_cycle_and_alert(&ts->cyc, &ts->ev);
	/* a regular file has no wear indicator to speak of */
	if (ts->eol &&
	    (ts->eol->status != EOL_NO_INDICATOR || strcmp(wm_str(tg, r, "kind"), "file")))
		wm_endurance_print(ts->eol, wm_wall_now());
}

/* ---- JSON --------------------------------------------------------------- */

static void jkey(const char *k, int *first)
{
	fputs(*first ? "" : ", ", stdout);
	*first = 0;
	wm_json_string(stdout, k);
	fputs(": ", stdout);
}

static void jnum(const char *k, double v, int *first)
{
	jkey(k, first);
	if (isnan(v) || isinf(v))
		fputs("null", stdout);
	else if (v == floor(v) && fabs(v) < 1e15)
		printf("%lld", (long long)v);
	else
		printf("%.17g", v);
}

static void jstr(const char *k, const char *s, int *first)
{
	jkey(k, first);
	if (s)
		wm_json_string(stdout, s);
	else
		fputs("null", stdout);
}

/* Every column of row 0 of t as an object member named name (null when the
 * table has no row). */
static void jrow(const char *name, const struct wm_table *t, int *first)
{
	int f = 1;

	jkey(name, first);
	if (t->nrows == 0) {
		fputs("null", stdout);
		return;
	}
	putchar('{');
	for (int c = 0; c < t->ncols; c++) {
		const struct wm_cell *cell = wm_cell(t, 0, t->names[c]);
		if (cell->type == DB_TEXT)
			jstr(t->names[c], cell->s, &f);
		else
			jnum(t->names[c], cell->type == DB_NULL ? NAN : cell->r, &f);
	}
	putchar('}');
}

static void json_daemon(const struct wm *wm, const struct daemons *d)
{
	int first = 1;

	printf("{\"database\": ");
	wm_json_string(stdout, wm->db_path);
	printf(", \"daemon\": {");
	jstr("state", state_names[d->state], &first);
	jkey("live", &first);
	putchar('[');
	for (int k = 0; k < d->nlive; k++) {
		int f = 1;
		printf("%s{", k ? ", " : "");
		jnum("pid", wm_num(&d->runs, d->live[k], "pid"), &f);
		jstr("started_at", wm_str(&d->runs, d->live[k], "started_at"), &f);
		jstr("hostname", wm_str(&d->runs, d->live[k], "hostname"), &f);
		putchar('}');
	}
	putchar(']');
	jkey("hosts", &first);
	putchar('[');
	for (int h = 0; h < d->nhosts; h++) {
		int f = 1, row = d->hosts[h].row;
		printf("%s{", h ? ", " : "");
		jstr("hostname", d->hosts[h].name, &f);
		jstr("state", state_names[d->hosts[h].state], &f);
		jnum("pid", wm_num(&d->runs, row, "pid"), &f);
		jstr("started_at", wm_str(&d->runs, row, "started_at"), &f);
		jstr("ended_at", wm_str(&d->runs, row, "ended_at"), &f);
		jstr("last_seen", wm_str(&d->runs, row, "last_seen"), &f);
		putchar('}');
	}
	putchar(']');
	jrow("latest_run", &d->runs, &first);
	printf("}, \"targets\": [");
}

static void json_target(const struct wm_table *tg, int r, const struct target_status *ts, int k)
{
	int first = 1;

	printf("%s\n {", k ? "," : "");
	jstr("name", wm_str(tg, r, "name"), &first);
	jstr("device", wm_str(tg, r, "device"), &first);
	jstr("kind", wm_str(tg, r, "kind"), &first);
	jnum("capacity_bytes", wm_num(tg, r, "capacity_bytes"), &first);
	jstr("daemon_state", state_names[ts->ds], &first);
	jrow("iteration", &ts->it, &first);
	jkey("progress", &first);
	if (ts->running) {
		int f = 1;
		putchar('{');
		jstr("phase", ts->p.phase, &f);
		jnum("estimated", ts->p.estimated, &f);
		jnum("fraction", ts->p.fraction, &f);
		jnum("eta_seconds", ts->p.eta, &f);
		jnum("mibps", ts->p.current, &f);
		jnum("running_seconds", ts->p.elapsed, &f);
		jnum("cycle_eta_seconds", ts->pl.eta.cycle_eta, &f);
		jnum("campaign_eta_seconds", ts->pl.eta.campaign_eta, &f);
		jnum("cycle_seconds", ts->pl.eta.cycle_seconds, &f);
		putchar('}');
	} else {
		fputs("null", stdout);
	}
	jkey("hir", &first);
	const char *stage;
	double eta;
	if (hir_now(ts, &stage, &eta)) {
		int f = 1;
		putchar('{');
		jstr("stage", stage, &f);
		jnum("eta_seconds", eta, &f);
		putchar('}');
	} else {
		fputs("null", stdout);
	}
	jrow("last_done", &ts->done, &first);
	jrow("cycle", &ts->cyc, &first);
	jrow("last_alert", &ts->ev, &first);
	jkey("endurance", &first);
	if (ts->eol)
		wm_endurance_json(stdout, ts->eol, wm_wall_now());
	else
		fputs("null", stdout);
	putchar('}');
}

/* ---- the command -------------------------------------------------------- */

static int status_targets(struct wm *wm, const struct wm_table *tg, const struct daemons *d,
			  enum wm_format fmt)
{
	struct query_schema sc;
	char err[WM_ERR_MAX] = "";
	int ret = wm_result(wm, query_schema_of(wm->db, &sc, err, sizeof(err)), err);

	if (fmt == WM_TABLE && tg->nrows == 0)
		printf("%s\n", WM_NO_ITERATIONS);
	for (int r = 0; !ret && r < tg->nrows; r++) {
		struct target_status ts = { 0 };

		ret = load_target(wm, wm_int(tg, r, "id", 0), d, &sc, &ts);
		if (!ret && fmt == WM_JSON)
			json_target(tg, r, &ts, r);
		else if (!ret)
			print_target(tg, r, &ts);
		target_free(&ts);
	}
	return ret;
}

int wm_cmd_status(struct wm *wm, int argc, char **argv)
{
	struct wm_table tg = { 0 };
	struct query_sink sk;
	char err[WM_ERR_MAX];
	struct daemons d = { 0 };
	struct wm_args a;
	int64_t tid;
	int ret = wm_parse_args(wm, argc, argv, "tf", &a);

	if (ret >= 0)
		return ret;
	if (a.npos > 0)
		return wm_usage_error("status: unexpected argument '%s'", a.pos[0]);
	if (a.format == WM_CSV)
		return wm_usage_error("status: --format is table or json");
	if ((ret = wm_open(wm)) || (a.target && (ret = wm_target_id(wm, a.target, &tid))))
		return ret;
	if ((ret = load_daemons(wm, &d)))
		return ret;
	if (a.format == WM_JSON)
		json_daemon(wm, &d);
	else
		print_daemon(wm, &d);
	ret = wm_result(wm,
			query_status_targets(wm->db, a.target, wm_rows(&sk, &tg, err, sizeof(err))),
			err);
	if (!ret)
		ret = status_targets(wm, &tg, &d, a.format);
	if (!ret && a.format == WM_JSON)
		printf("%s]}\n", tg.nrows ? "\n" : "");
	wm_table_free(&tg);
	wm_table_free(&d.runs);
	return ret;
}
