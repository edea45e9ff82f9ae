/* wearmond: process entry: options, the main loop (service notifications,
 * reloads, alert commands), the run's record and exit. The start-up checks
 * are startup.c's, reloads reload.c's. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fsinfo.h"
#include "base/hstall.h"
#include "base/log.h"
#include "base/util.h"
#include "checkplan.h"
#include "config/cfg.h"
#include "console.h"
#include "daemon.h"
#include "db/db.h"
#include "device/fsmode.h"
#include "guard.h"
#include "integrity.h"
#include "notify.h"
#include "outage.h"
#include "publish.h"
#include "retain.h"
#include "sched.h"
#include "signals.h"

/* Exit statuses (documented in daemon/wearmond.8, EXIT STATUS). */
#define EXIT_OK 0
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_CONFIG 78 /* EX_CONFIG: systemd does not restart on it */

#define LOOP_NAP_NS (50 * 1000 * 1000)
#define STATUS_EVERY 1.0 /* seconds between STATUS= updates */
#define STATUS_MAX 1024
#define COMMAND_GRACE 1.0 /* seconds alert commands get at exit */
/* ... at a stop signal, which must end the process within a second
 * (wearmond(8), SIGNALS); they are left to finish on their own */
#define COMMAND_GRACE_STOP 0.2
/* How long the run's end waits for a database that cannot be written: a
 * run that fails waits longer; one stopped by a signal must end within
 * the unit's TimeoutStopSec (30 s, systemd/wearmond.service). */
#define RUN_END_PATIENCE 60.0
#define RUN_END_PATIENCE_STOP 10.0

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wearmond -c FILE [--check [--json]] [--foreground | --journal]\n"
		"                [--new-campaign NAME]\n"
		"Fill and rewrite SSD regions over growing sizes, measure every pass and\n"
		"record the history in SQLite.\n\n"
		"  -c, --config FILE  configuration (see wearmon.conf(5))\n"
		"  -n, --check        validate the configuration and targets and print the plan\n"
		"                     of each target (device, contents, what is destroyed,\n"
		"                     sizes, bytes, estimate, campaign state); writes nothing\n"
		"      --json         with --check: the plan as one JSON document (wearmond(8))\n"
		"  -f, --foreground   log to stderr, even under systemd\n"
		"  -j, --journal      log to the journal, even from a terminal (errors at\n"
		"                     start-up are printed on stderr too)\n"
		"  -d, --debug        also log debug messages (e.g. the time each iteration's\n"
		"                     database write took)\n"
		"      --new-campaign NAME\n"
		"                     begin a new campaign for target NAME (or all) at this\n"
		"                     start, even if its campaign is complete; repeatable\n"
		"  -h, --help         this text\n"
		"  -V, --version      print the version\n\n"
		"By default messages go to the journal when stderr is systemd's journal\n"
		"stream (JOURNAL_STREAM), else to stderr.\n\n"
		"Signals: SIGTERM/SIGINT stop, SIGHUP reloads the configuration (applied at\n"
		"each target's next cycle; a configuration with errors is refused).\n\n"
		"Exit status: 0 all cycles done or stopped by a signal, 1 runtime failure or\n"
		"a full or read-only filesystem (tried again under systemd), 2 usage error,\n"
		"78 configuration or target error.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "journal", no_argument, NULL, 'j' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "new-campaign", required_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	memset(o, 0, sizeof(*o));
	while ((ch = getopt_long(argc, argv, "c:nfjdhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; break;
		case 'n': o->check = 1; break;
		case 'f': o->foreground = 1; break;
		case 'j': o->journal = 1; break;
		case 'd': o->debug = 1; break;
		case 'J': o->json = 1; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		case 'V': printf("wearmond %s\n", WEARMON_VERSION); exit(EXIT_OK);
		case 'N':
			if (o->nnew == (int)ARRAY_SIZE(o->new_campaign)) {
				fprintf(stderr, "wearmond: --new-campaign: more than %zu targets\n",
					ARRAY_SIZE(o->new_campaign));
				return -EINVAL;
			}
			o->new_campaign[o->nnew++] = optarg;
			break;
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wearmond: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->json && !o->check) {
		fprintf(stderr, "wearmond: --json goes with --check (the plan as JSON)\n");
		return -EINVAL;
	}
	if (!o->config) {
		fprintf(stderr, "wearmond: missing -c FILE (the configuration to run)\n");
		return -EINVAL;
	}
	return 0;
}

static const char *target_state(struct sched_target *st)
{
	enum sched_state s = __atomic_load_n(&st->state, __ATOMIC_SEQ_CST);
	return s == SCHED_RUNNING ? NULL : sched_state_name(s);
}

/* STATUS=: one summary per target. */
static void send_status(struct daemon *d, int ready)
{
	struct notify_target v[64];
	char line[STATUS_MAX], buf[STATUS_MAX + 16];
	int n = d->started < (int)ARRAY_SIZE(v) ? d->started : (int)ARRAY_SIZE(v);

	if (!notify_enabled())
		return;
	for (int i = 0; i < n; i++) {
		struct sched_target *st = &d->st[i];
		struct sched_progress p;
		double base = -1;
		sched_progress_get(st, &p);
		if (p.baseline_mibps > 0)
			base = p.baseline_mibps;
		else if (p.phase == PH_MEASURE && st->alert &&
			 alert_baseline(st->alert, p.size_bytes, &base))
			base = -1;
		v[i] = (struct notify_target){
			.name = st->tg.name,
			.state = target_state(st),
			.phase = sched_phase_name(&p),
			.measuring = p.phase == PH_MEASURE,
			.cycle = p.cycle,
			.size_index = p.size_index,
			.nsizes = p.nsizes,
			.size_bytes = p.size_bytes,
			.mibps = p.mibps,
			.baseline_mibps = base,
		};
	}
	notify_format_status(line, sizeof(line), v, n);
	snprintf(buf, sizeof(buf), "%s%s", d->stopping ? "stopping: " : "", line);
	if (ready)
		notify_ready(buf);
	else
		notify_status(buf);
}

/* The database deleted or replaced under us: what is written now is lost.
 * Say so loudly (journal and alert_command) and stop with a failure. */
static void check_database(struct daemon *d)
{
	char why[512];
	if (d->db_lost || !d->started || !db_file_check(d->st[0].db, why, sizeof(why)))
		return;
	d->db_lost = 1;
	log_msg(LOG_CRIT, "%s; stopping", why);
	for (int i = 0; i < d->started; i++)
		if (d->st[i].alert)
			alert_failure(d->st[i].alert, ALERT_DB_WRITE, LOG_CRIT, 0, 0, why);
	signals_stop = 1;
}

/* db_open's hook before something long (a schema update): systemd's start
 * timeout is extended so that it does not kill a daemon that is busy. */
static void extend_start(const char *what, uint64_t usec)
{
	log_msg(LOG_NOTICE, "%s (may take up to %llu s)", what,
		(unsigned long long)(usec / 1000000));
	notify_extend_timeout(usec, what);
}

/* The background check's verdict, stored as an 'integrity-check' event.
 * A damaged database stops wearmond like a lost one: a critical
 * db-write-failed alert (journal and alert_command), status 1. */
static void check_integrity(struct daemon *d)
{
	struct integrity_verdict v;
	char msg[1800];
	int damaged;

	if (!integrity_take(&d->integ, &v))
		return;
	damaged = v.ret == -EBADMSG;
	if (!v.ret)
		snprintf(msg, sizeof(msg), "database %s: integrity check ok (%d tables, %.1f s)",
			 d->cfgs[0]->database, v.r.tables, v.seconds);
	else if (damaged)
		snprintf(msg, sizeof(msg),
			 "database %s is damaged: %d problem%s (PRAGMA integrity_check): %s;"
			 " stopping; move it aside or restore a copy",
			 d->cfgs[0]->database, v.r.problems, v.r.problems == 1 ? "" : "s",
			 v.r.first);
	else
		snprintf(msg, sizeof(msg), "database %s: integrity check could not run: %s",
			 d->cfgs[0]->database, v.err[0] ? v.err : strerror(-v.ret));
	log_msg(!v.ret ? LOG_INFO : damaged ? LOG_CRIT : LOG_WARNING, "%s", msg);
	struct db_event e = {
		.run_id = d->run_id,
		.severity = !v.ret    ? "info"
			    : damaged ? "crit"
				      : "warning",
		.kind = "integrity-check",
		.message = msg,
		.value = v.ret && !damaged ? -1 : v.r.problems,
		.baseline = -1,
	};
	db_event(d->db, &e, NULL);
	if (!damaged || d->db_damaged)
		return;
	d->db_damaged = 1;
	for (int i = 0; i < d->started; i++)
		if (d->st[i].alert)
			alert_failure(d->st[i].alert, ALERT_DB_WRITE, LOG_CRIT, 0, 0, msg);
	signals_stop = 1;
}

/* Whether the target is in another cycle, iteration or phase than its last
 * progress row says; remembers the stage about to be written. */
static int stage_moved(struct sched_target *st, const struct sched_progress *p)
{
	int moved = p->cycle != st->published.cycle || p->iteration != st->published.iteration ||
		    (int)p->phase != st->published.phase;

	st->published.cycle = p->cycle;
	st->published.iteration = p->iteration;
	st->published.phase = (int)p->phase;
	return moved;
}

/* What the phase's plan has left now (< 0 unknown): the stage's figure less
 * the time since the stage began. */
static double stage_left(const struct sched_progress *p)
{
	if (p->stage_remaining < 0)
		return -1;
	double left = p->stage_remaining - (util_now() - p->stage_started);
	return left > 0 ? left : 0;
}

/* The progress table for `wearmon status`: written here, once a second and
 * within a loop's nap of a new iteration or phase (so that no row of the
 * last one stands for it), so the I/O threads never wait for the database
 * in the middle of a phase. moved_only: only the targets whose stage moved. */
static void publish_progress(struct daemon *d, int moved_only)
{
	for (int i = 0; i < d->started; i++) {
		struct sched_target *st = &d->st[i];
		struct sched_progress p;
		if (target_state(st))
			continue;
		sched_progress_get(st, &p);
		if (!p.cycle || (!stage_moved(st, &p) && moved_only))
			continue;
		struct db_progress row = {
			.cycle = p.cycle,
			.iteration = p.iteration,
			.size_bytes = p.size_bytes,
			.phase = sched_phase_name(&p),
			.mibps = p.phase_bytes ? p.mibps : -1,
			.phase_bytes = p.phase_bytes,
			.nsizes = p.nsizes,
			.cycles = p.cycles,
			.phase_seconds = p.phase_started > 0 ? util_now() - p.phase_started : -1,
			.duration = p.duration,
			.iteration_seconds =
				p.iteration_started > 0 ? util_now() - p.iteration_started : -1,
			.stage = p.stage,
			.remaining_seconds = stage_left(&p),
		};
		db_progress(st->db, st->target_id, &row);
	}
}

/* One turn of the main loop's timers: watchdog, status, metrics file,
 * alert commands. */
static void tick(struct daemon *d)
{
	double now = util_now();

	if (d->wd_every > 0 && now >= d->next_wd) {
		notify_watchdog();
		d->next_wd = now + d->wd_every;
	}
	if (now >= d->next_status) {
		check_database(d);
		check_integrity(d);
		outage_record(&d->outage, d->db, d->cfgs[0]->database, d->run_id);
		reload_sweep(d);
		send_status(d, 0);
		publish_progress(d, 0);
		d->next_status = now + STATUS_EVERY;
	} else {
		publish_progress(d, 1);
	}
	/* every turn, not once a second: a phase's first sample comes an
	 * interval after the phase's first interval has ended (the engine
	 * holds each sample until the next, common/io/engine.c out_sample), so
	 * a 2-second phase of 0.5-second samples shows live figures for its
	 * last second only, which a once-a-second look can step over */
	publish_tick(&d->pub, d->cfgs[d->ncfgs - 1], d->st, d->started,
		     d->stopping ? METRICS_DAEMON_STOPPING : METRICS_DAEMON_RUNNING, 0);
	console_tick(&d->console, d->st, d->started);
	retain_tick(&d->retain, d->db, d->cfgs[d->ncfgs - 1]->sample_retention, now);
	alert_reap();
}

/* --debug: where a stop's time goes, stage by stage. */
static void stop_mark(const char *stage)
{
	long long t0 = atomic_load(&signals_stop_ns);

	if (t0 > 0)
		log_msg(LOG_DEBUG, "stop: %s %.3f s after the stop signal", stage,
			(double)((long long)util_now_ns() - t0) / 1e9);
}

static int count_running(const struct daemon *d)
{
	int running = 0;
	for (int i = 0; i < d->started; i++)
		running += __atomic_load_n(&d->st[i].state, __ATOMIC_SEQ_CST) == SCHED_RUNNING;
	return running;
}

/* Start every target, serve until they end; returns the exit status. */
static int run_targets(struct daemon *d)
{
	int failed = 0;
	for (int i = 0; i < d->nst; i++) {
		int ret = sched_start(&d->st[i]);
		if (ret) {
			log_msg(LOG_ERR, "target %s: cannot start thread: %s", d->st[i].t->name,
				strerror(-ret));
			failed = 1;
			signals_stop = 1;
			break;
		}
		d->started++;
	}
	uint64_t wd = notify_watchdog_usec();
	d->wd_every = (double)wd / 2e6;
	if (!failed)
		send_status(d, 1);
	d->next_status = util_now() + STATUS_EVERY;
	while (count_running(d)) {
		if (signals_stop && !d->stopping) {
			d->stopping = 1;
			notify_stopping();
		}
		if (signals_reload) {
			signals_reload = 0;
			if (!d->stopping) {
				reload_config(d);
				send_status(d, 1);
			}
		}
		tick(d);
		struct timespec ts = { 0, LOOP_NAP_NS };
		nanosleep(&ts, NULL);
	}
	if (!d->stopping) {
		d->stopping = 1;
		notify_stopping();
	}
	console_fini(&d->console); /* the last words are the log's */
	stop_mark("every target has ended");
	d->all_done = d->started == d->nst;
	for (int i = 0; i < d->started; i++) {
		enum sched_state s = sched_join(&d->st[i]);
		failed |= s == SCHED_FAILED;
		d->all_done &= s == SCHED_DONE;
	}
	stop_mark("every target thread joined");
	/* every thread has ended: the file's last word is that the daemon has */
	publish_tick(&d->pub, d->cfgs[d->ncfgs - 1], d->st, d->started, METRICS_DAEMON_STOPPED, 1);
	if (alert_finish(signals_stop ? COMMAND_GRACE_STOP : COMMAND_GRACE))
		log_msg(LOG_NOTICE, "alert commands still running at exit end with the daemon "
				    "(their parent-death signal)");
	return failed || d->db_lost || d->db_damaged ? EXIT_RUNTIME : EXIT_OK;
}

/* runs.exit_reason: why the run ended; a failure names the first target
 * that failed and its error. */
static void run_reason(const struct daemon *d, int status, char *buf, size_t len)
{
	const struct sched_target *failed = NULL;

	for (int i = 0; i < d->started && !failed; i++)
		if (d->st[i].state == SCHED_FAILED && d->st[i].error[0])
			failed = &d->st[i];
	if (d->db_lost)
		snprintf(buf, len, "database lost");
	else if (d->db_damaged)
		snprintf(buf, len, "database damaged");
	else if (signals_stop)
		snprintf(buf, len, "signal");
	else if (status && failed)
		snprintf(buf, len, "failure: target %s: %s", failed->tg.name, failed->error);
	else
		/* cycles done: every campaign complete, whichever run completed it */
		snprintf(buf, len, "%s",
			 status        ? "failure"
			 : d->all_done ? "cycles done"
				       : "stopped");
}

/* A database error at start: a full or read-only filesystem (which waiting
 * can end) names the filesystem and is exit 1, so that systemd starts
 * wearmond again; anything else is 78. Returns the exit status. */
static int database_refused(const struct cfg *c, int ret, const char *err)
{
	char fs[PATH_MAX + 400] = "";
	struct fsinfo fi;

	if (!db_transient(ret)) {
		log_msg(LOG_ERR, "%s:%d: database: %s", c->path, c->database_line, err);
		return EXIT_CONFIG;
	}
	if (!strstr(err, "filesystem") && !fsinfo_of(c->database, &fi))
		fsinfo_text(&fi, fs, sizeof(fs));
	log_msg(LOG_ERR, "%s:%d: database: %s%s%s%s", c->path, c->database_line, err,
		fs[0] ? " (its " : "", fs, fs[0] ? "); wearmond exits 1 and is started again" : "");
	return EXIT_RUNTIME;
}

/* The database's path and filesystem, changing nothing. Returns 0 or the
 * exit status of the refusal (logged). */
static int check_database_path(const struct cfg *c)
{
	char err[CFG_ERR_MAX];
	int ret = db_check_room(c->database, err, sizeof(err));

	if (!ret)
		ret = db_check_path(c->database, err, sizeof(err));
	return ret ? database_refused(c, ret, err) : 0;
}

/* --check and the lock: a start of this configuration is refused while
 * another wearmond holds the database file. Through the same path this is
 * the running daemon's own configuration checked (before a reload): a
 * notice, and the check goes on. Through another name of the file (a hard
 * link, a bind mount) no reload reaches it: refused, as the start would
 * be. Returns the holder's pid, 0, or -EBUSY (logged). */
static pid_t check_holder(const struct cfg *c)
{
	char held[PATH_MAX], real[PATH_MAX];
	pid_t pid = db_lock_holder_path(c->database, held, sizeof(held));

	if (!pid)
		return 0;
	if (!held[0] || (realpath(c->database, real) && !strcmp(real, held))) {
		log_msg(LOG_NOTICE,
			"database %s is in use by wearmond pid %ld; a second daemon on it "
			"would be refused",
			c->database, (long)pid);
		return pid;
	}
	log_msg(LOG_ERR,
		"%s:%d: database: %s is in use by wearmond pid %ld, which opened the same "
		"file as %s; one daemon per database file: a start of this configuration "
		"would be refused",
		c->path, c->database_line, c->database, (long)pid, held);
	return -EBUSY;
}

/* Outside --check: take the database's lock, if it is not held yet. A
 * missing database is created (empty, to hold the lock) only with create:
 * once every check has passed. Returns 0 or the exit status of the
 * refusal (logged). */
static int take_lock(struct daemon *d, const struct cfg *c, int create)
{
	char err[CFG_ERR_MAX];
	int ret = d->lock_fd >= 0
			  ? 0
			  : db_lock_take(c->database, create, &d->lock_fd, err, sizeof(err));

	d->db_created |= ret == 1;
	if (ret >= 0 && d->lock_fd >= 0)
		ret = db_lock_names(c->database, d->lock_fd, err, sizeof(err));
	return ret < 0 ? database_refused(c, ret, err) : 0;
}

/* Every check a start makes before it writes, in its order; --check stops
 * after them and prints the plan. *holder: with --check, the pid of a
 * daemon running on the same database (0: none); *refused: a target was
 * refused (its reason logged). Returns 0 or the exit status of a refusal
 * that leaves no plan to print (logged). */
static int start_checks(struct daemon *d, const struct cfg *c, pid_t *holder, int *refused)
{
	char err[CFG_ERR_MAX];
	int ret;

	if (startup_mark_new_campaigns(d->o, c, d->st))
		return EXIT_USAGE;
	if (guard_paths(c, err, sizeof(err)) || publish_check(c, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s", err);
		return EXIT_CONFIG;
	}
	if ((ret = check_database_path(c)))
		return ret;
	if (!d->o->check && (ret = take_lock(d, c, 0)))
		return ret;
	/* a command an earlier run left (a kill -9) ends before any device
	 * is opened: nothing of ours ever runs twice at once */
	if (!d->o->check && leftover_end(c->database, &d->left))
		return EXIT_RUNTIME;
	if (!d->o->check) /* mount namespace: before sched_start makes threads */
		fsmode_start(c);
	/* --check stops where the start would: at the lock (and opens no
	 * reader through another name of a file in use) */
	*holder = d->o->check ? check_holder(c) : 0;
	if (*holder < 0)
		return EXIT_CONFIG;
	*refused = startup_check_targets(d, c, *holder) != 0;
	return 0;
}

/* The last word: why, the status, and after a stop signal how long the
 * stop took (the drive's part is in each target's "stop:" line). */
static void log_stopped(const char *why, int status)
{
	long long t0 = atomic_load(&signals_stop_ns);

	if (t0 > 0)
		log_msg(LOG_INFO,
			"wearmond stopped (%s), exit status %d, %.3f s after the stop signal", why,
			status, (double)((long long)util_now_ns() - t0) / 1e9);
	else
		log_msg(LOG_INFO, "wearmond stopped (%s), exit status %d", why, status);
}

/* The targets' identities checked and file targets made, then the run,
 * its configuration and its targets stored. Returns 0 or the exit
 * status. */
static int record_run(struct daemon *d, const struct cfg *c, struct db *db, int64_t *run_id)
{
	int ret = startup_identities_ok(db, c, d->st);
	int prepared = ret ? 0 : startup_prepare_targets(c, d->st);
	if (ret == -EMEDIUMTYPE || prepared) {
		/* a file target with no room to be made: waiting may help */
		return db_transient(prepared) ? EXIT_RUNTIME : EXIT_CONFIG;
	}
	if (ret || db_run_begin(db, c->path, run_id) || db_run_config(db, *run_id, c->text) ||
	    startup_register_targets(db, c, d->st, *run_id)) {
		log_msg(LOG_ERR, "cannot record the run in %s", c->database);
		return EXIT_RUNTIME;
	}
	return 0;
}

/* What runs beside the targets: the leftover recorder, the published
 * figures, the console, retention, the host-stall ticker and the
 * background integrity check. */
static void start_run_services(struct daemon *d, const struct cfg *c, struct db *db, int64_t run_id)
{
	int ret;
	leftover_record(db, run_id, &d->left);
	leftover_recorder_start(db, run_id, d->st, d->nst, &signals_stop);
	log_msg(LOG_INFO, "wearmond %s started: %d target(s), database %s", WEARMON_VERSION,
		c->ntargets, c->database);
	log_echo_errors(0);
	publish_init(&d->pub, c);
	publish_seed(&d->pub, db, d->st, d->nst);
	console_init(&d->console, console_wanted(log_on_stderr()), db);
	d->db = db;
	d->run_id = run_id;
	retain_init(&d->retain);
	/* the ticker that tells the host's stalls from the drive's (hstall.h) */
	int ret_hs = hstall_init();
	if (ret_hs)
		log_msg(LOG_WARNING,
			"cannot start the host-stall ticker (%s): a stopped or "
			"suspended host will count against the drive",
			strerror(-ret_hs));
	ret = integrity_start(&d->integ, c->database);
	if (ret)
		log_msg(LOG_WARNING, "cannot start the background integrity check of %s: %s",
			c->database, strerror(-ret));
}

/* The end of run, however it went: the targets closed, the recorder
 * stopped, the database closed and the lock released. */
static void close_run(struct daemon *d, const struct cfg *c, struct db *db, int status,
		      const char *why)
{
	if (status == EXIT_CONFIG)
		notify_status("configuration error");
	/* a start that failed before the targets ran leaves nothing it made:
	 * the file targets it created, an empty database file */
	startup_close_targets(d, !d->started && !d->o->check);
	leftover_recorder_stop();
	leftover_free(&d->left);
	stop_mark("joined and recorded; closing the database");
	db_close(db); /* its WAL checkpoint is part of the stop */
	if (status != EXIT_OK && !d->started && d->db_created)
		db_lock_drop_new(c->database, d->lock_fd);
	db_lock_release(d->lock_fd);
	if (why[0])
		log_stopped(why, status);
	free(d->st);
}

static int run(struct daemon *d)
{
	const struct cfg *c = d->cfgs[0];
	char err[CFG_ERR_MAX];
	struct db *db = NULL;
	int64_t run_id = 0;
	int status = EXIT_CONFIG, ret;
	char why[512] = "";

	d->nst = c->ntargets;
	d->st = calloc((size_t)c->ntargets, sizeof(*d->st));
	if (!d->st)
		return EXIT_RUNTIME;
	notify_status("checking targets");
	pid_t holder = 0;
	int refused = 0;
	if ((status = start_checks(d, c, &holder, &refused)))
		goto out;
	if (d->o->check) {
		/* every target's plan, the refused ones with their reasons */
		status =
			checkplan_report(d, c, holder, refused, d->o->json) ? EXIT_CONFIG : EXIT_OK;
		goto out;
	}
	status = EXIT_CONFIG;
	if (refused)
		goto out;
	if ((ret = take_lock(d, c, 1))) {
		status = ret;
		goto out;
	}
	db_set_slow_hook(extend_start);
	if ((ret = db_open(c->database, 0, &db, err, sizeof(err)))) {
		status = database_refused(c, ret, err);
		goto out;
	}
	db_set_stop(db, &signals_stop);
	if ((status = record_run(d, c, db, &run_id)))
		goto out;
	start_run_services(d, c, db, run_id);
	status = run_targets(d);
	integrity_stop(&d->integ);
	hstall_fini();
	stop_mark("background threads ended");
	run_reason(d, status, why, sizeof(why));
	/* a database lost is not coming back: no wait */
	outage_run_end(&d->outage, db, c->database, run_id, status, why,
		       d->db_lost     ? 0
		       : signals_stop ? RUN_END_PATIENCE_STOP
				      : RUN_END_PATIENCE,
		       &signals_stop);
out:
	close_run(d, c, db, status, why);
	return status;
}

/* --check --json prints a document even when no plan could be made. */
static int check_exit(const struct opts *o, int status)
{
	if (o->json && (status == EXIT_CONFIG || status == EXIT_RUNTIME))
		checkplan_fail_json(o->config);
	return status;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct daemon d = { .o = &o, .lock_fd = -1 };
	struct cfg *c = NULL;
	char err[CFG_ERR_MAX];

	if (parse_opts(argc, argv, &o))
		return EXIT_USAGE;
	log_init(o.foreground || o.check ? LOG_SINK_STDERR
		 : o.journal             ? LOG_SINK_JOURNAL
					 : LOG_SINK_AUTO,
		 o.debug ? LOG_DEBUG : LOG_INFO);
	log_echo_errors(1);
	if (o.check)
		checkplan_start();
	if (guard_trust("configuration", o.config, err, sizeof(err)) == -EPERM) {
		log_msg(LOG_ERR, "%s", err);
		return check_exit(&o, EXIT_CONFIG);
	}
	int ret = cfg_load(o.config, &c, err, sizeof(err));
	if (ret) {
		if (ret == -EINVAL)
			daemon_log_lines(LOG_ERR, err);
		else
			log_msg(LOG_ERR, "%s: cannot read: %s", o.config, strerror(-ret));
		return check_exit(&o, EXIT_CONFIG);
	}
	if (signals_init() || reload_keep_cfg(&d, c)) {
		cfg_free(c);
		return EXIT_RUNTIME;
	}
	int status = run(&d);
	for (int i = 0; i < d.ncfgs; i++)
		cfg_free(d.cfgs[i]);
	free(d.cfgs);
	return check_exit(&o, status);
}
