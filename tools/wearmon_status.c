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

#include "util.h"
#include "wearmon.h"


enum daemon_state { D_RUNNING, D_STOPPED, D_GONE, D_ELSEWHERE, D_NEVER };

/* The last run's state: a run without ended_at is alive only if its pid
 * still is wearmond on this host. */
static enum daemon_state daemon_state(const struct wm_table *run)
{
	char host[256] = "", path[64], comm[64] = "";
	const char *rhost = wm_str(run, 0, "hostname");
	FILE *f;

	if (run->nrows == 0)
		return D_NEVER;
	if (wm_str(run, 0, "ended_at"))
		return D_STOPPED;
	if (gethostname(host, sizeof(host) - 1) != 0 || !rhost || strcmp(rhost, host) != 0)
		return D_ELSEWHERE;
	snprintf(path, sizeof(path), "/proc/%lld/comm", (long long)wm_int(run, 0, "pid", 0));
	f = fopen(path, "r");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	return strncmp(comm, "wearmond", 8) == 0 ? D_RUNNING : D_GONE;
}

static int print_daemon(struct wm *wm, enum daemon_state *st)
{
	struct wm_table run = { 0 };
	char a[32], b[32];
	int ret = wm_fetch(wm, &run, "SELECT started_at, ended_at, pid, hostname,"
			   " exit_status, exit_reason FROM runs ORDER BY id DESC LIMIT 1",
			   NULL, 0);

	if (ret)
		return ret;
	*st = daemon_state(&run);
	wm_fmt_time(wm_str(&run, 0, "started_at"), a, sizeof(a));
	wm_fmt_time(wm_str(&run, 0, "ended_at"), b, sizeof(b));
	switch (*st) {
	case D_NEVER:
		printf("wearmond: has not run on %s yet\n", wm->db_path);
		break;
	case D_STOPPED:
		printf("wearmond: stopped %s UTC (exit status %lld: %s); database %s\n", b,
		       (long long)wm_int(&run, 0, "exit_status", -1),
		       wm_str(&run, 0, "exit_reason") ? wm_str(&run, 0, "exit_reason") : "-",
		       wm->db_path);
		break;
	case D_RUNNING:
		printf("wearmond: running since %s UTC (pid %lld); database %s\n", a,
		       (long long)wm_int(&run, 0, "pid", 0), wm->db_path);
		break;
	case D_GONE:
		printf("wearmond: not running; its run of %s UTC (pid %lld) recorded no stop "
		       "(crash, kill or power loss); database %s\n", a,
		       (long long)wm_int(&run, 0, "pid", 0), wm->db_path);
		break;
	case D_ELSEWHERE:
		printf("wearmond: started %s UTC on %s (pid %lld), no stop recorded; "
		       "database %s\n", a, wm_str(&run, 0, "hostname") ?
		       wm_str(&run, 0, "hostname") : "another host",
		       (long long)wm_int(&run, 0, "pid", 0), wm->db_path);
		break;
	}
	wm_table_free(&run);
	return 0;
}

/* ---- progress of a running iteration ------------------------------------ */

struct progress {
	const char *phase;            /* "fill", "measure" */
	int estimated;                /* from an earlier iteration, not samples */
	long long from_cycle;         /* when estimated */
	double fraction;              /* of the phase (samples) or iteration; NAN */
	double eta;                   /* seconds; NAN unknown */
	double current;               /* MiB/s of the last sample; NAN */
};

/* From the samples so far: bytes = sum of MiB/s x interval. */
static void progress_from_samples(const struct wm_table *it, const struct wm_table *s,
				  struct progress *p)
{
	const char *phase = wm_str(s, s->nrows - 1, "phase");
	double goal = wm_num(it, 0, !strcmp(phase, "fill") ? "size_bytes" : "amount_bytes");
	double done = 0, prev_ms = 0;

	for (int r = 0; r < s->nrows; r++) {
		double ms = wm_num(s, r, "t_ms"), v = wm_num(s, r, "mibps");

		if (strcmp(wm_str(s, r, "phase"), phase) != 0)
			continue;
		done += (isnan(v) ? 0 : v) * MIB * (ms - prev_ms) / 1000;
		prev_ms = ms;
	}
	p->phase = !strcmp(phase, "fill") ? "fill" : "measure";
	p->current = wm_num(s, s->nrows - 1, "mibps");
	p->fraction = goal > 0 ? fmin(done / goal, 0.99) : NAN;
	if (p->current > 0 && goal > done)
		p->eta = (goal - done) / (p->current * MIB);
}

/* From the progress row the daemon rewrites every second (schema 7 on):
 * returns 1 when it is fresh and about this iteration. */
static int progress_from_table(struct wm *wm, const struct wm_table *it, struct progress *p)
{
	struct wm_table r = { 0 };
	int found = 0;
	int ret = wm_fetch(wm, &r, "SELECT 1 FROM sqlite_master WHERE name = 'progress'", NULL, 0);

	if (ret || r.nrows == 0) {      /* a database from before schema 7 */
		wm_table_free(&r);
		return 0;
	}
	wm_table_free(&r);
	ret = wm_fetch(wm, &r, "SELECT phase, mibps, phase_bytes FROM progress"
			   " WHERE target_id = ? AND iteration = ? AND cycle = ?"
			   " AND julianday('now') - julianday(updated_at) < 10.0 / 86400",
			   (struct db_value[]){ WM_INT(wm_int(it, 0, "target_id", 0)),
				WM_INT(wm_int(it, 0, "number", 0)),
				WM_INT(wm_int(it, 0, "cycle", 0)) }, 3);

	if (ret == 0 && r.nrows == 1 && wm_str(&r, 0, "phase")) {
		const char *phase = wm_str(&r, 0, "phase");
		int fill = !strcmp(phase, "fill");
		double goal = wm_num(it, 0, fill ? "size_bytes" : "amount_bytes");
		double done = wm_num(&r, 0, "phase_bytes");
		p->phase = fill ? "fill" : "measure";
		p->current = wm_num(&r, 0, "mibps");
		p->fraction = goal > 0 ? fmin(done / goal, 0.99) : NAN;
		if (p->current > 0 && goal > done)
			p->eta = (goal - done) / (p->current * MIB);
		found = 1;
	}
	wm_table_free(&r);
	return found;
}

/* From the last finished iteration of the same size and workload: its wall
 * time, against the time this one has been running. */
static int progress_estimate(struct wm *wm, const struct wm_table *it, double elapsed,
			     struct progress *p)
{
	struct wm_table prev = { 0 };
	double wall, fill;
	int ret = wm_fetch(wm, &prev, "SELECT (julianday(ended_at) - julianday(started_at))"
			   " * 86400 AS wall, fill_seconds, cycle_id,"
			   " (SELECT number FROM cycles WHERE id = cycle_id) AS cycle"
			   " FROM iterations WHERE target_id = ? AND size_bytes = ?"
			   " AND workload = ? AND block_size = ? AND status = 'done'"
			   " AND ended_at IS NOT NULL ORDER BY id DESC LIMIT 1",
			   (struct db_value[]){ WM_INT(wm_int(it, 0, "target_id", 0)),
				WM_INT(wm_int(it, 0, "size_bytes", 0)),
				WM_TEXT(wm_str(it, 0, "workload")),
				WM_INT(wm_int(it, 0, "block_size", 0)) }, 4);

	if (ret || prev.nrows == 0)
		goto out;
	wall = wm_num(&prev, 0, "wall");
	fill = wm_num(&prev, 0, "fill_seconds");
	p->estimated = 1;
	p->from_cycle = wm_int(&prev, 0, "cycle", 0);
	p->phase = !isnan(fill) && elapsed < fill ? "fill" : "measure";
	if (wall > 0) {
		p->fraction = fmin(elapsed / wall, 0.99);
		p->eta = wall - elapsed;
	}
out:
	wm_table_free(&prev);
	return ret;
}

/* Wall-clock time with its fraction: started_at has milliseconds. */
static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int print_running(struct wm *wm, const struct wm_table *it, enum daemon_state ds)
{
	struct progress p = { .phase = NULL, .fraction = NAN, .eta = NAN, .current = NAN };
	struct wm_table s = { 0 };
	double elapsed = fmax(0, now_seconds() - wm_time_of(wm_str(it, 0, "started_at")));
	double base = wm_num(it, 0, "baseline_mibps");
	char e1[32], e2[32];
	int ret = wm_fetch(wm, &s, "SELECT phase, t_ms, mibps FROM samples"
			   " WHERE iteration_id = ? ORDER BY phase = 'measure', t_ms",
			   (struct db_value[]){ WM_INT(wm_int(it, 0, "id", 0)) }, 1);

	if (ret)
		return ret;
	if (!progress_from_table(wm, it, &p)) {
		if (s.nrows > 0)
			progress_from_samples(it, &s, &p);
		else
			ret = progress_estimate(wm, it, elapsed, &p);
	}
	wm_table_free(&s);
	if (ret)
		return ret;
	if (ds == D_GONE)
		printf("  state       stalled: wearmond stopped during this iteration; "
		       "the next start marks it interrupted and measures the size again\n");
	printf("  phase       %s%s, running for %s\n", p.phase ? p.phase : "unknown",
	       p.estimated ? " (estimated)" : "", wm_fmt_duration(elapsed, e1, sizeof(e1)));
	if (isnan(p.fraction))
		printf("  progress    unknown (no earlier run of this size to compare with)\n");
	else if (p.estimated)
		printf("  progress    ~%.0f%% by the time cycle %lld took, ETA %s\n",
		       p.fraction * 100, p.from_cycle,
		       p.eta < 0 ? "overdue" : wm_fmt_duration(p.eta, e2, sizeof(e2)));
	else
		printf("  progress    %.0f%% of the %s phase, ETA %s\n", p.fraction * 100,
		       p.phase, wm_fmt_duration(p.eta, e2, sizeof(e2)));
	if (isnan(p.current))
		printf("  MiB/s       now: not known until the iteration ends");
	else
		printf("  MiB/s       now %.1f (last %s sample)", p.current, p.phase);
	if (isnan(base))
		printf("; no baseline for this size yet\n");
	else if (!isnan(p.current) && !strcmp(p.phase, "measure"))
		printf("; baseline %.1f (cycle %lld), now %.0f%% of it\n", base,
		       (long long)wm_int(it, 0, "baseline_cycle", 0), 100 * p.current / base);
	else
		printf("; baseline %.1f (cycle %lld)\n", base,
		       (long long)wm_int(it, 0, "baseline_cycle", 0));
	return 0;
}

/* ---- one target --------------------------------------------------------- */

static const char last_it_sql[] =
	"SELECT i.*, c.number AS cycle, c.status AS cycle_status,"
	" b.mibps_avg AS baseline_mibps, b.cycle AS baseline_cycle,"
	" (SELECT max(size_index) + 1 FROM iterations WHERE target_id = i.target_id)"
	"  AS nsizes"
	" FROM iterations i"
	" JOIN cycles c ON c.id = i.cycle_id"
	WM_SQL_BASELINE_HERE
	" WHERE i.target_id = ?1 AND (?2 IS NULL OR i.status = ?2)"
	" ORDER BY i.id DESC LIMIT 1";

static void print_position(const struct wm_table *it)
{
	char sz[32], bs[32];

	printf("  %-11s cycle %lld, size %lld of %lld (%s), iteration %lld, %s %s QD%lld\n",
	       !strcmp(wm_str(it, 0, "status"), "running") ? "now" : "last",
	       (long long)wm_int(it, 0, "cycle", 0),
	       (long long)wm_int(it, 0, "size_index", 0) + 1,
	       (long long)wm_int(it, 0, "nsizes", 0),
	       wm_fmt_bytes(wm_num(it, 0, "size_bytes"), sz, sizeof(sz)),
	       (long long)wm_int(it, 0, "number", 0), wm_str(it, 0, "workload"),
	       wm_fmt_bytes(wm_num(it, 0, "block_size"), bs, sizeof(bs)),
	       (long long)wm_int(it, 0, "queue_depth", 0));
}

/* The last finished measurement and its ratio to the baseline. */
static int print_last_done(struct wm *wm, int64_t tid)
{
	struct wm_table d = { 0 };
	char sz[32], at[32];
	double base;
	int ret = wm_fetch_based(wm, &d, last_it_sql, (struct db_value[]){ WM_INT(tid),
			   WM_STR("done") }, 2);

	if (ret || d.nrows == 0)
		goto out;
	base = wm_num(&d, 0, "baseline_mibps");
	printf("  last done   %.1f MiB/s at %s, cycle %lld iteration %lld, ended %s UTC",
	       wm_num(&d, 0, "mibps_avg"), wm_fmt_bytes(wm_num(&d, 0, "size_bytes"), sz,
							sizeof(sz)),
	       (long long)wm_int(&d, 0, "cycle", 0), (long long)wm_int(&d, 0, "number", 0),
	       wm_fmt_time(wm_str(&d, 0, "ended_at"), at, sizeof(at)));
	if (base > 0)
		printf("; %.0f%% of baseline %.1f (cycle %lld)", 100 * wm_num(&d, 0, "mibps_avg") /
		       base, base, (long long)wm_int(&d, 0, "baseline_cycle", 0));
	putchar('\n');
out:
	wm_table_free(&d);
	return ret;
}

static int print_cycle_and_alert(struct wm *wm, int64_t tid)
{
	struct wm_table c = { 0 }, e = { 0 };
	char at[32];
	int ret = wm_fetch(wm, &c, "SELECT number, status, action, action_outcome FROM cycles"
			   " WHERE target_id = ? ORDER BY number DESC LIMIT 1",
			   (struct db_value[]){ WM_INT(tid) }, 1);

	if (!ret)
		ret = wm_fetch(wm, &e, "SELECT at, severity, kind, message FROM events"
			       " WHERE target_id = ? AND severity IN ('emerg', 'alert',"
			       " 'crit', 'err', 'warning', 'notice')"
			       " ORDER BY at DESC, id DESC LIMIT 1",
			       (struct db_value[]){ WM_INT(tid) }, 1);
	if (ret)
		goto out;
	if (c.nrows > 0)
		printf("  cycle       %lld %s%s%s%s%s\n", (long long)wm_int(&c, 0, "number", 0),
		       wm_str(&c, 0, "status"), wm_str(&c, 0, "action") ? ", then " : "",
		       wm_str(&c, 0, "action") ? wm_str(&c, 0, "action") : "",
		       wm_str(&c, 0, "action_outcome") ? ": " : "",
		       wm_str(&c, 0, "action_outcome") ? wm_str(&c, 0, "action_outcome") : "");
	if (e.nrows > 0)
		printf("  last alert  %s UTC %s %s: %s\n",
		       wm_fmt_time(wm_str(&e, 0, "at"), at, sizeof(at)),
		       wm_str(&e, 0, "severity"), wm_str(&e, 0, "kind"),
		       wm_str(&e, 0, "message"));
	else
		printf("  last alert  none\n");
out:
	wm_table_free(&c);
	wm_table_free(&e);
	return ret;
}

static int print_target(struct wm *wm, const struct wm_table *tg, int r, enum daemon_state ds)
{
	struct wm_table it = { 0 };
	int64_t tid = wm_int(tg, r, "id", 0);
	char cap[32];
	int ret = wm_fetch_based(wm, &it, last_it_sql, (struct db_value[]){ WM_INT(tid),
			   WM_NULLV }, 2);

	if (ret)
		return ret;
	printf("%s  %s (%s, %s)\n", wm_str(tg, r, "name"), wm_str(tg, r, "device"),
	       wm_str(tg, r, "kind"), wm_fmt_bytes(wm_num(tg, r, "capacity_bytes"), cap,
						    sizeof(cap)));
	if (it.nrows == 0) {
		printf("  %s\n", WM_NO_ITERATIONS);
		goto out;
	}
	print_position(&it);
	if (!strcmp(wm_str(&it, 0, "status"), "running") &&
	    (ds == D_RUNNING || ds == D_GONE || ds == D_ELSEWHERE))
		ret = print_running(wm, &it, ds);
	else if (strcmp(wm_str(&it, 0, "status"), "done") != 0)
		printf("  state       %s%s%s\n", wm_str(&it, 0, "status"),
		       wm_str(&it, 0, "error") ? ": " : "",
		       wm_str(&it, 0, "error") ? wm_str(&it, 0, "error") : "");
	if (!ret)
		ret = print_last_done(wm, tid);
	if (!ret)
		ret = print_cycle_and_alert(wm, tid);
out:
	wm_table_free(&it);
	return ret;
}

int wm_cmd_status(struct wm *wm, int argc, char **argv)
{
	struct wm_table tg = { 0 };
	enum daemon_state ds;
	struct wm_args a;
	int64_t tid;
	int ret = wm_parse_args(wm, argc, argv, "t", &a);

	if (ret >= 0)
		return ret;
	if (a.npos > 0)
		return wm_usage_error("status: unexpected argument '%s'", a.pos[0]);
	if ((ret = wm_open(wm)) || (a.target && (ret = wm_target_id(wm, a.target, &tid))))
		return ret;
	if ((ret = print_daemon(wm, &ds)))
		return ret;
	ret = wm_fetch(wm, &tg, "SELECT id, name, device, kind, capacity_bytes FROM targets"
		       " WHERE ?1 IS NULL OR name = ?1 ORDER BY name",
		       (struct db_value[]){ WM_TEXT(a.target) }, 1);
	if (!ret && tg.nrows == 0)
		printf("%s\n", WM_NO_ITERATIONS);
	for (int r = 0; !ret && r < tg.nrows; r++)
		ret = print_target(wm, &tg, r, ds);
	wm_table_free(&tg);
	return ret;
}
