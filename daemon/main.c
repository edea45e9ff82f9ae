/* wearmond: process entry: options, start-up checks, target threads, the
 * main loop (service notifications, reloads, alert commands), exit. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alert.h"
#include "config/cfg.h"
#include "db/db.h"
#include "device/fsmode.h"
#include "guard.h"
#include "base/hstall.h"
#include "base/log.h"
#include "notify.h"
#include "outage.h"
#include "publish.h"
#include "retain.h"
#include "sched.h"
#include "signals.h"
#include "device/tgt.h"
#include "base/util.h"

/* Exit statuses (documented in daemon/wearmond.8, EXIT STATUS). */
#define EXIT_OK 0
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_CONFIG 78 /* EX_CONFIG: systemd does not restart on it */

#define LOOP_NAP_NS (50 * 1000 * 1000)
#define STATUS_EVERY 1.0 /* seconds between STATUS= updates */
#define STATUS_MAX 1024
#define COMMAND_GRACE 1.0 /* seconds alert commands get at exit */
/* How long the run's end waits for a database that cannot be written: a
 * run that fails waits longer; one stopped by a signal must end within
 * the unit's TimeoutStopSec (30 s, systemd/wearmond.service). */
#define RUN_END_PATIENCE 60.0
#define RUN_END_PATIENCE_STOP 10.0

struct opts {
	const char *config;
	int check;
	int foreground;
	int journal;
	int debug;                    /* log LOG_DEBUG messages too */
	const char *new_campaign[64]; /* --new-campaign: target names, or "all" */
	int nnew;
};

/* The running process: its targets and every configuration loaded. While
 * the threads run, main reads only st[i].tg (name and device never change;
 * st[i].t moves to a reloaded configuration under the thread's feet). */
struct daemon {
	const struct opts *o;
	struct sched_target *st; /* one per target of the first configuration */
	int nst, started;
	struct cfg **cfgs; /* all loaded, freed at exit: threads may
				       still point into any of them */
	int ncfgs;
	double wd_every; /* seconds between WATCHDOG=1, 0 = none */
	double next_wd, next_status;
	int stopping;
	int db_lost;                            /* the database file was deleted or replaced */
	int lock_fd;                            /* one daemon per database; -1 */
	struct publish pub;                     /* metrics_file */
	struct db *history;                     /* the database read-only while targets are
			       checked (which files are wearmon's); NULL */
	struct tgt_own_file own[GUARD_OWN_MAX]; /* files no target may be */
	int nown;
	struct db *db; /* once the run is recorded */
	int64_t run_id;
	struct outage outage; /* spells of failing writes, stored afterwards */
	struct retain retain; /* moving and rolling up samples (retain.h) */
	int all_done;         /* every target's campaign is complete */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wearmond -c FILE [--check] [--foreground | --journal] [--new-campaign NAME]\n"
		"Fill and rewrite SSD regions over growing sizes, measure every pass and\n"
		"record the history in SQLite.\n\n"
		"  -c, --config FILE  configuration (see wearmon.conf(5))\n"
		"  -n, --check        validate the configuration and targets, write nothing\n"
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
		"Exit status: 0 all cycles done or stopped by a signal, 1 runtime failure,\n"
		"2 usage error, 78 configuration or target error.\n");
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
	if (!o->config) {
		fprintf(stderr, "wearmond: missing -c FILE (the configuration to run)\n");
		return -EINVAL;
	}
	return 0;
}

/* Print each line of a multi-line error. */
static void log_lines(int prio, const char *text)
{
	char *copy = strdup(text), *save = NULL;
	if (!copy)
		return;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		log_msg(prio, "%s", l);
	free(copy);
}

/* alert_command must be something we can run, found now rather than at the
 * first alert days later. Returns 0 or -EINVAL with the error in err. */
static int check_command(const struct cfg *c, const struct cfg_target *t, char *err, size_t len)
{
	static const char *const keys[] = { "alert_command", "secure_erase_command" };
	const char *paths[] = { t->alert_command, t->secure_erase_command };
	char why[CFG_ERR_MAX - 128];

	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		int line = cfg_line(t, keys[k]);
		line = line ? line : t->section_line;
		if (!paths[k][0])
			continue;
		if (access(paths[k], X_OK) != 0) {
			snprintf(err, len, "%s:%d: %s: %s is not executable: %s", c->path, line,
				 keys[k], paths[k], strerror(errno));
			return -EINVAL;
		}
		if (guard_trust("program", paths[k], why, sizeof(why))) {
			snprintf(err, len, "%s:%d: %s: %s", c->path, line, keys[k], why);
			return -EPERM;
		}
	}
	return 0;
}

/* Two targets on one device would each destroy the other's measurements;
 * a device another wearmond has open is that daemon's. holder_db is the
 * pid holding our own database (its devices are not "another's"). Returns
 * 0 or -EBUSY (errors logged). */
static int check_devices(const struct cfg *c, const struct sched_target *st, pid_t holder_db)
{
	int bad = 0;
	for (int i = 0; i < c->ntargets; i++) {
		for (int j = 0; j < i; j++) {
			if (!guard_same_device(&st[i].tg, &st[j].tg))
				continue;
			log_msg(LOG_ERR,
				"%s:%d: device: target %s is on the same device as "
				"target %s (%s and %s); give each target its own device",
				c->path, cfg_line(st[i].t, "device"), st[i].t->name, st[j].t->name,
				st[i].tg.path, st[j].tg.path);
			bad = 1;
		}
		pid_t pid = guard_holder(&st[i].tg);
		if (pid && pid == holder_db) {
			log_msg(LOG_NOTICE,
				"target %s: %s is in use by wearmond pid %ld, which "
				"runs this database",
				st[i].t->name, st[i].tg.path, (long)pid);
		} else if (pid) {
			log_msg(LOG_ERR,
				"%s:%d: device: target %s: %s is held by another "
				"wearmond (pid %ld); stop it first",
				c->path, cfg_line(st[i].t, "device"), st[i].t->name, st[i].tg.path,
				(long)pid);
			bad = 1;
		}
	}
	return bad ? -EBUSY : 0;
}

/* Open the database read-only, if it exists, for what it knows before
 * anything is written: the files wearmon made targets, the identities.
 * Returns 0 (d->history may stay NULL: no database yet, or, at a real
 * start, one that the writer's open will report) or -EINVAL (logged). */
static int open_history(struct daemon *d, const struct cfg *c)
{
	char err[512];
	struct stat st;

	if (stat(c->database, &st) || !S_ISREG(st.st_mode) || !st.st_size)
		return 0;
	if (!db_open(c->database, 1, &d->history, err, sizeof(err)))
		return 0;
	if (!d->o->check)
		return 0;
	log_msg(LOG_ERR, "%s:%d: database: %s", c->path, c->database_line, err);
	return -EINVAL;
}

/* Check every target, changing nothing. Returns 0 or -errno (error
 * logged). */
static int open_targets(struct daemon *d, const struct cfg *c, pid_t holder,
			struct sched_target *st)
{
	const struct tgt_guard g = { .db_path = c->database,
				     .own = d->own,
				     .nown = d->nown,
				     .owned = guard_history_owns,
				     .owned_arg = d->history,
				     .writer_ok = holder };
	char err[CFG_ERR_MAX];
	int bad = 0;
	for (int i = 0; i < c->ntargets; i++) {
		st[i].cfg = c;
		st[i].t = &c->targets[i];
		st[i].tg.fd = -1;
		int ret = tgt_check(c, st[i].t, &g, d->o->check, &st[i].tg, err, sizeof(err));
		if (!ret)
			ret = cfg_resolve(c, st[i].t, st[i].tg.capacity,
					  st[i].tg.logical_block_size, &st[i].layout, err,
					  sizeof(err));
		if (!ret)
			ret = check_command(c, st[i].t, err, sizeof(err));
		if (ret) {
			log_lines(LOG_ERR, err);
			bad = 1;
		}
		pid_t pid = ret == -EBUSY && st[i].tg.is_block ? guard_holder(&st[i].tg) : 0;
		if (pid)
			log_msg(LOG_ERR,
				"target %s: %s is held by another wearmond (pid %ld); "
				"stop it first",
				st[i].t->name, st[i].tg.path, (long)pid);
	}
	return bad ? -EINVAL : 0;
}

/* Once every check passed: create and extend the file targets. A file
 * created on a filesystem with a larger O_DIRECT alignment than assumed
 * has its layout resolved again. Returns 0 or -errno (logged). */
static int prepare_targets(const struct cfg *c, struct sched_target *st)
{
	char err[CFG_ERR_MAX];
	for (int i = 0; i < c->ntargets; i++) {
		uint32_t lbs = st[i].tg.logical_block_size;
		int ret = tgt_prepare(c, st[i].t, &st[i].tg, err, sizeof(err));
		if (!ret && st[i].tg.logical_block_size != lbs)
			ret = cfg_resolve(c, st[i].t, st[i].tg.capacity,
					  st[i].tg.logical_block_size, &st[i].layout, err,
					  sizeof(err));
		if (ret) {
			log_lines(LOG_ERR, err);
			return ret;
		}
	}
	return 0;
}

static void close_targets(struct daemon *d, int remove_created)
{
	for (int i = 0; i < d->nst; i++) {
		tgt_close(&d->st[i].tg);
		if (remove_created && d->st[i].tg.created)
			unlink(d->st[i].tg.path);
	}
}

static void print_check(const struct cfg *c, const struct sched_target *st)
{
	for (int i = 0; i < c->ntargets; i++) {
		const struct cfg_layout *l = &st[i].layout;
		char cap[32], off[32], reg[32], a[32], b[32];
		printf("target %s: %s (%s) capacity %s, logical block %u, region %s at %s, "
		       "%d sizes %s..%s, %s bs=%llu qd=%lld\n",
		       st[i].t->name, st[i].tg.path, tgt_kind_name(st[i].tg.kind),
		       util_fmt_bytes(l->capacity, cap, sizeof(cap)), l->logical_block_size,
		       util_fmt_bytes(l->region_size, reg, sizeof(reg)),
		       util_fmt_bytes(l->region_offset, off, sizeof(off)), l->nsizes,
		       util_fmt_bytes(l->sizes[0], a, sizeof(a)),
		       util_fmt_bytes(l->sizes[l->nsizes - 1], b, sizeof(b)),
		       cfg_workload_name(st[i].t->workload),
		       (unsigned long long)st[i].t->block_size, st[i].t->queue_depth);
	}
	printf("configuration %s: OK\n", c->path);
}

static void target_info(const struct tgt *tg, struct db_target_info *info)
{
	*info = (struct db_target_info){
		.name = tg->name,
		.device = tg->path,
		.kind = tg->kind,
		.capacity_bytes = tg->capacity,
		.logical_block_size = tg->logical_block_size,
		.serial = tg->serial[0] ? tg->serial : NULL,
		.model = tg->model[0] ? tg->model : NULL,
		.firmware = tg->firmware[0] ? tg->firmware : NULL,
		.backing_file = tg->backing_file[0] ? tg->backing_file : NULL,
		.backing_dev = tg->backing_ino ? (uint64_t)tg->backing_dev : 0,
		.backing_ino = (uint64_t)tg->backing_ino,
	};
}

/* Baselines never compare two drives: a target name whose recorded device
 * differs from the one opened now is refused unless adopt_new_device.
 * Returns 0 (same, new, or adopted: *adopt = 1), -EMEDIUMTYPE (logged
 * unless quiet) or -errno. */
static int check_identity(struct db *db, const struct cfg *c, const struct sched_target *st,
			  char *diff, size_t len, int *adopt, int quiet)
{
	struct db_target_info info;
	target_info(&st->tg, &info);
	*adopt = 0;
	int ret = db_target_identity(db, &info, diff, len);
	if (ret <= 0)
		return ret;
	if (st->t->adopt_new_device) {
		if (!quiet)
			log_msg(LOG_NOTICE,
				"target %s: adopting a different device (%s); a new "
				"campaign starts",
				st->t->name, diff);
		*adopt = 1;
		return 0;
	}
	if (!quiet)
		log_msg(LOG_ERR,
			"%s:%d: device: target %s is recorded in %s with another device "
			"(%s). To measure the new device, give it a new target name, or set "
			"adopt_new_device = yes in [target %s] to adopt it (a new campaign starts "
			"and an event records the change)",
			c->path, cfg_line(st->t, "device"), st->t->name, c->database, diff,
			st->t->name);
	return -EMEDIUMTYPE;
}

/* Every target's identity, before anything is written. Returns 0,
 * -EMEDIUMTYPE (each mismatch logged) or -errno. */
static int identities_ok(struct db *db, const struct cfg *c, const struct sched_target *st)
{
	char diff[1024];
	int bad = 0, adopt;
	for (int i = 0; i < c->ntargets; i++) {
		int ret = check_identity(db, c, &st[i], diff, sizeof(diff), &adopt, 0);
		if (ret == -EMEDIUMTYPE)
			bad = 1;
		else if (ret)
			return ret;
	}
	return bad ? -EMEDIUMTYPE : 0;
}

/* Store the targets (identities checked by identities_ok). Returns 0 or
 * -errno. */
static int register_targets(struct db *db, const struct cfg *c, struct sched_target *st,
			    int64_t run_id)
{
	char diff[1024];
	for (int i = 0; i < c->ntargets; i++) {
		struct db_target_info info;
		int adopt = 0;
		int ret = check_identity(db, c, &st[i], diff, sizeof(diff), &adopt, 1);
		target_info(&st[i].tg, &info);
		if (!ret)
			ret = db_target_upsert(db, &info, &st[i].target_id);
		if (!ret && st[i].tg.own_it)
			ret = db_owned_add(db, (uint64_t)st[i].tg.backing_dev,
					   (uint64_t)st[i].tg.backing_ino, st[i].t->name,
					   st[i].tg.real_path);
		if (!ret && adopt)
			ret = db_target_adopt(db, st[i].target_id, run_id, diff);
		if (ret)
			return ret;
		st[i].db = db;
		st[i].run_id = run_id;
	}
	return 0;
}

/* --new-campaign: mark the targets it names. Returns 0, or -EINVAL when a
 * name is no target of c (logged). */
static int mark_new_campaigns(const struct opts *o, const struct cfg *c, struct sched_target *st)
{
	int bad = 0;
	for (int k = 0; k < o->nnew; k++) {
		int all = !strcmp(o->new_campaign[k], "all"), found = 0;
		for (int i = 0; i < c->ntargets; i++) {
			if (all || !strcmp(o->new_campaign[k], c->targets[i].name)) {
				st[i].new_campaign = 1;
				found = 1;
			}
		}
		if (!found) {
			log_msg(LOG_ERR,
				"--new-campaign %s: %s has no [target %s] (name a target, or all)",
				o->new_campaign[k], c->path, o->new_campaign[k]);
			bad = 1;
		}
	}
	return bad ? -EINVAL : 0;
}

/* Keep c until exit. Returns 0 or -ENOMEM (c is then not kept). */
static int keep_cfg(struct daemon *d, struct cfg *c)
{
	struct cfg **v = realloc(d->cfgs, (size_t)(d->ncfgs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	d->cfgs = v;
	d->cfgs[d->ncfgs++] = c;
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

static struct sched_target *find_target(struct daemon *d, const char *name)
{
	for (int i = 0; i < d->started; i++)
		if (!strcmp(d->st[i].tg.name, name))
			return &d->st[i];
	return NULL;
}

/* Check a reloaded configuration against the open devices. Returns 0 or
 * -EINVAL with every problem in err, one per line. */
static int check_reload(struct daemon *d, const struct cfg *c, char *err, size_t len)
{
	size_t used = 0;
	char one[CFG_ERR_MAX];
	int bad = 0;

	err[0] = '\0';
	for (int i = 0; i < c->ntargets && used < len; i++) {
		const struct cfg_target *t = &c->targets[i];
		struct sched_target *st = find_target(d, t->name);
		struct cfg_layout l;
		int ret = 0;
		if (!st)
			continue;
		if (strcmp(t->device, st->tg.path)) {
			snprintf(one, sizeof(one),
				 "%s:%d: device: target %s runs on %s; changing "
				 "its device to %s needs a restart",
				 c->path, cfg_line(t, "device"), t->name, st->tg.path, t->device);
			ret = -EINVAL;
		}
		if (!ret && t->ioengine != st->limits.engine) {
			snprintf(one, sizeof(one),
				 "%s:%d: ioengine: target %s runs on the %s engine; "
				 "changing it to %s needs a restart",
				 c->path, cfg_line(t, "ioengine"), t->name,
				 cfg_ioengine_name(st->limits.engine),
				 cfg_ioengine_name(t->ioengine));
			ret = -EINVAL;
		}
		if (!ret && !iter_within(&st->limits, t)) {
			snprintf(one, sizeof(one),
				 "%s:%d: queue_depth: target %s: a queue depth, "
				 "block size or jobs above what this process allocated at start "
				 "(queue depth %u, block %llu bytes, %u jobs) needs a restart",
				 c->path, t->section_line, t->name, st->limits.max_qd,
				 (unsigned long long)st->limits.max_bs, st->limits.jobs);
			ret = -EINVAL;
		}
		if (!ret)
			ret = cfg_resolve(c, t, st->tg.capacity, st->tg.logical_block_size, &l, one,
					  sizeof(one));
		if (!ret)
			ret = check_command(c, t, one, sizeof(one));
		if (ret) {
			used += (size_t)snprintf(err + used, len - used, "%s%s", bad ? "\n" : "",
						 one);
			bad = 1;
		}
	}
	return bad ? -EINVAL : 0;
}

/* Offer an accepted configuration to the targets; say what needs a restart. */
static void apply_reload(struct daemon *d, const struct cfg *c)
{
	const struct cfg *running = d->cfgs[0]; /* its database stays open */

	for (int i = 0; i < c->ntargets; i++) {
		struct sched_target *st = find_target(d, c->targets[i].name);
		if (st)
			sched_offer_config(st, c, &c->targets[i]);
		else
			log_msg(LOG_WARNING,
				"reload: target %s is new; it starts at the next "
				"restart",
				c->targets[i].name);
	}
	for (int i = 0; i < d->started; i++) {
		int kept = 0;
		for (int j = 0; j < c->ntargets && !kept; j++)
			kept = !strcmp(c->targets[j].name, d->st[i].tg.name);
		if (!kept)
			log_msg(LOG_WARNING,
				"reload: target %s is no longer configured; it runs "
				"on until the next restart",
				d->st[i].tg.name);
	}
	if (strcmp(c->database, running->database))
		log_msg(LOG_WARNING,
			"reload: database %s takes effect at the next restart; "
			"still writing %s",
			c->database, running->database);
	if (strcmp(c->metrics_file, running->metrics_file))
		log_msg(LOG_WARNING, "reload: metrics_file takes effect at the next restart");
	log_msg(LOG_INFO, "reload: %s accepted; targets adopt it at their next cycle", c->path);
}

static void sweep_cfgs(struct daemon *d);

/* SIGHUP: RELOADING=1, parse, validate, offer, READY=1. A configuration
 * with errors is refused and the running one stays. */
static void reload(struct daemon *d)
{
	char err[CFG_ERR_MAX];
	struct cfg *c = NULL;

	notify_reloading();
	log_msg(LOG_INFO, "SIGHUP: reloading %s", d->o->config);
	int ret = guard_trust("configuration", d->o->config, err, sizeof(err));
	if (ret != -EPERM)
		ret = cfg_load(d->o->config, &c, err, sizeof(err));
	else
		ret = -EINVAL;
	if (!ret)
		ret = check_reload(d, c, err, sizeof(err));
	if (!ret)
		ret = keep_cfg(d, c);
	if (ret) {
		if (ret == -EINVAL)
			log_lines(LOG_ERR, err);
		else if (ret == -ENOMEM)
			log_msg(LOG_ERR, "reload: out of memory");
		else
			log_msg(LOG_ERR, "%s: cannot read: %s", d->o->config, strerror(-ret));
		log_msg(LOG_ERR, "reload: %s refused; keeping the running configuration",
			d->o->config);
		cfg_free(c);
	} else {
		apply_reload(d, c);
		sweep_cfgs(d);
	}
	send_status(d, 1);
}

/* Whether a thread still uses c, as its configuration or the one offered. */
static int cfg_in_use(struct daemon *d, const struct cfg *c)
{
	int used = 0;
	for (int i = 0; i < d->started && !used; i++) {
		used = sched_uses_config(&d->st[i], c);
	}
	return used;
}

/* Free the reloaded configurations no thread uses any more: one replaced
 * by a later reload before a target adopted it, or left behind at a cycle
 * boundary. The first stays: it names the database this process writes. */
static void sweep_cfgs(struct daemon *d)
{
	int kept = 1;
	for (int i = 1; i < d->ncfgs; i++) {
		if (cfg_in_use(d, d->cfgs[i]))
			d->cfgs[kept++] = d->cfgs[i];
		else
			cfg_free(d->cfgs[i]);
	}
	d->ncfgs = kept;
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

/* The progress table for `wearmon status`: written here, once a second,
 * so the I/O threads never wait for the database in the middle of a phase. */
static void publish_progress(struct daemon *d)
{
	for (int i = 0; i < d->started; i++) {
		struct sched_target *st = &d->st[i];
		struct sched_progress p;
		if (target_state(st))
			continue;
		sched_progress_get(st, &p);
		if (!p.cycle)
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
		};
		db_progress(st->db, st->target_id, &row);
	}
}

/* One turn of the main loop's timers: watchdog, status, alert commands. */
static void tick(struct daemon *d)
{
	double now = util_now();

	if (d->wd_every > 0 && now >= d->next_wd) {
		notify_watchdog();
		d->next_wd = now + d->wd_every;
	}
	if (now >= d->next_status) {
		check_database(d);
		outage_record(&d->outage, d->db, d->cfgs[0]->database, d->run_id);
		sweep_cfgs(d);
		send_status(d, 0);
		publish_progress(d);
		publish_tick(&d->pub, d->cfgs[d->ncfgs - 1], d->st, d->started, d->stopping, 0);
		d->next_status = now + STATUS_EVERY;
	}
	retain_tick(&d->retain, d->db, d->cfgs[d->ncfgs - 1]->sample_retention, now);
	alert_reap();
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
			if (!d->stopping)
				reload(d);
		}
		tick(d);
		struct timespec ts = { 0, LOOP_NAP_NS };
		nanosleep(&ts, NULL);
	}
	if (!d->stopping) {
		d->stopping = 1;
		notify_stopping();
	}
	d->all_done = d->started == d->nst;
	for (int i = 0; i < d->started; i++) {
		enum sched_state s = sched_join(&d->st[i]);
		failed |= s == SCHED_FAILED;
		d->all_done &= s == SCHED_DONE;
	}
	publish_tick(&d->pub, d->cfgs[d->ncfgs - 1], d->st, d->started, 1, 1);
	if (alert_finish(COMMAND_GRACE))
		log_msg(LOG_WARNING, "alert commands still running at exit are left to finish");
	return failed || d->db_lost ? EXIT_RUNTIME : EXIT_OK;
}

/* Every check of the targets, changing nothing: each target, the pairs,
 * and with --check the identities recorded in the database. The database
 * is open read-only meanwhile. Returns 0 or -errno (logged). */
static int check_targets(struct daemon *d, const struct cfg *c, pid_t holder)
{
	int ret = open_history(d, c);

	d->nown = guard_own_files(c, d->own);
	if (open_targets(d, c, holder, d->st) || check_devices(c, d->st, holder))
		ret = -EINVAL;
	if (!ret && d->o->check && d->history)
		ret = identities_ok(d->history, c, d->st);
	db_close(d->history);
	d->history = NULL;
	return ret;
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

static int run(struct daemon *d)
{
	const struct cfg *c = d->cfgs[0];
	char err[CFG_ERR_MAX];
	struct db *db = NULL;
	int64_t run_id = 0;
	int status = EXIT_CONFIG;

	d->nst = c->ntargets;
	d->st = calloc((size_t)c->ntargets, sizeof(*d->st));
	if (!d->st)
		return EXIT_RUNTIME;
	notify_status("checking targets");
	if (mark_new_campaigns(d->o, c, d->st)) {
		status = EXIT_USAGE;
		goto out;
	}
	if (guard_paths(c, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s", err);
		goto out;
	}
	if (db_check_path(c->database, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s:%d: database: %s", c->path, c->database_line, err);
		goto out;
	}
	if (publish_check(c, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s", err);
		goto out;
	}
	if (!d->o->check && db_lock_take(c->database, &d->lock_fd, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s:%d: database: %s", c->path, c->database_line, err);
		goto out;
	}
	if (!d->o->check) /* mount namespace: before sched_start makes threads */
		fsmode_start(c);
	pid_t holder = d->o->check ? db_lock_holder(c->database) : 0;
	if (check_targets(d, c, holder))
		goto out;
	if (d->o->check) {
		if (holder)
			log_msg(LOG_NOTICE,
				"database %s is in use by wearmond pid %ld; a second "
				"daemon on it would be refused",
				c->database, (long)holder);
		print_check(c, d->st);
		status = EXIT_OK;
		goto out;
	}
	if (db_open(c->database, 0, &db, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s:%d: database: %s", c->path, c->database_line, err);
		goto out;
	}
	db_set_stop(db, &signals_stop);
	int ret = identities_ok(db, c, d->st);
	if (ret == -EMEDIUMTYPE || (!ret && prepare_targets(c, d->st)))
		goto out;
	status = EXIT_RUNTIME;
	if (ret || db_run_begin(db, c->path, &run_id) || db_run_config(db, run_id, c->text) ||
	    register_targets(db, c, d->st, run_id)) {
		log_msg(LOG_ERR, "cannot record the run in %s", c->database);
		goto out;
	}
	log_msg(LOG_INFO, "wearmond %s started: %d target(s), database %s", WEARMON_VERSION,
		c->ntargets, c->database);
	log_echo_errors(0);
	publish_init(&d->pub, c);
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
	status = run_targets(d);
	hstall_fini();
	char why[512];
	run_reason(d, status, why, sizeof(why));
	/* a database lost is not coming back: no wait */
	outage_run_end(&d->outage, db, c->database, run_id, status, why,
		       d->db_lost     ? 0
		       : signals_stop ? RUN_END_PATIENCE_STOP
				      : RUN_END_PATIENCE,
		       &signals_stop);
	log_msg(LOG_INFO, "wearmond stopped (%s), exit status %d", why, status);
out:
	if (status == EXIT_CONFIG)
		notify_status("configuration error");
	close_targets(d, status == EXIT_CONFIG && !d->o->check);
	db_close(db);
	db_lock_release(d->lock_fd);
	free(d->st);
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
	if (guard_trust("configuration", o.config, err, sizeof(err)) == -EPERM) {
		log_msg(LOG_ERR, "%s", err);
		return EXIT_CONFIG;
	}
	int ret = cfg_load(o.config, &c, err, sizeof(err));
	if (ret) {
		if (ret == -EINVAL)
			log_lines(LOG_ERR, err);
		else
			log_msg(LOG_ERR, "%s: cannot read: %s", o.config, strerror(-ret));
		return EXIT_CONFIG;
	}
	if (signals_init() || keep_cfg(&d, c)) {
		cfg_free(c);
		return EXIT_RUNTIME;
	}
	int status = run(&d);
	for (int i = 0; i < d.ncfgs; i++)
		cfg_free(d.cfgs[i]);
	free(d.cfgs);
	return status;
}
