/* wearmond: process entry: options, start-up checks, target threads, exit. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfg.h"
#include "db.h"
#include "log.h"
#include "sched.h"
#include "signals.h"
#include "tgt.h"
#include "util.h"

/* Exit statuses (documented in wearmond(8) and the README). */
#define EXIT_OK 0
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_CONFIG 78   /* EX_CONFIG: systemd does not restart on it */

struct opts {
	const char *config;
	int check;
	int foreground;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wearmond -c FILE [--check] [--foreground]\n"
		"Fill and rewrite SSD regions over growing sizes, measure every pass and\n"
		"record the history in SQLite.\n\n"
		"  -c, --config FILE  configuration (see wearmon.conf(5))\n"
		"  -n, --check        validate the configuration and targets, write nothing\n"
		"  -f, --foreground   log to stderr instead of the journal\n"
		"  -h, --help         this text\n"
		"  -V, --version      print the version\n\n"
		"Exit status: 0 all cycles done or stopped by a signal, 1 runtime failure,\n"
		"2 usage error, 78 configuration or target error.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	memset(o, 0, sizeof(*o));
	while ((ch = getopt_long(argc, argv, "c:nfhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; break;
		case 'n': o->check = 1; break;
		case 'f': o->foreground = 1; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		case 'V': printf("wearmond %s\n", WEARMON_VERSION); exit(EXIT_OK);
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

/* Open and check every target. Returns 0 or -errno (error logged). */
static int open_targets(const struct cfg *c, int check_only, struct sched_target *st)
{
	char err[CFG_ERR_MAX];
	int bad = 0;
	for (int i = 0; i < c->ntargets; i++) {
		st[i].cfg = c;
		st[i].t = &c->targets[i];
		st[i].tg.fd = -1;
		int ret = tgt_open(c, st[i].t, c->database, check_only, &st[i].tg, err, sizeof(err));
		if (!ret)
			ret = cfg_resolve(c, st[i].t, st[i].tg.capacity, st[i].tg.logical_block_size,
					  &st[i].layout, err, sizeof(err));
		if (ret) {
			log_lines(LOG_ERR, err);
			bad = 1;
		}
	}
	return bad ? -EINVAL : 0;
}

static void close_targets(const struct cfg *c, struct sched_target *st, int remove_created)
{
	for (int i = 0; i < c->ntargets; i++) {
		tgt_close(&st[i].tg);
		if (remove_created && st[i].tg.created)
			unlink(st[i].tg.path);
	}
}

static void print_check(const struct cfg *c, const struct sched_target *st)
{
	for (int i = 0; i < c->ntargets; i++) {
		const struct cfg_layout *l = &st[i].layout;
		char cap[32], off[32], reg[32], a[32], b[32];
		printf("target %s: %s (%s) capacity %s, logical block %u, region %s at %s, "
		       "%d sizes %s..%s, %s bs=%llu qd=%lld\n",
		       st[i].t->name, st[i].tg.path, st[i].tg.kind,
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

static int register_targets(struct db *db, const struct cfg *c, struct sched_target *st,
			    int64_t run_id)
{
	for (int i = 0; i < c->ntargets; i++) {
		const struct tgt *tg = &st[i].tg;
		struct db_target_info info = {
			.name = tg->name, .device = tg->path, .kind = tg->kind,
			.capacity_bytes = tg->capacity, .logical_block_size = tg->logical_block_size,
			.serial = tg->serial[0] ? tg->serial : NULL,
			.model = tg->model[0] ? tg->model : NULL,
			.firmware = tg->firmware[0] ? tg->firmware : NULL,
			.backing_file = tg->backing_file[0] ? tg->backing_file : NULL,
		};
		int ret = db_target_upsert(db, &info, &st[i].target_id);
		if (ret)
			return ret;
		st[i].db = db;
		st[i].run_id = run_id;
	}
	return 0;
}

/* Start every target and wait for them; returns the exit status. */
static int run_targets(const struct cfg *c, struct sched_target *st)
{
	int failed = 0, started = 0;
	for (int i = 0; i < c->ntargets; i++) {
		int ret = sched_start(&st[i]);
		if (ret) {
			log_msg(LOG_ERR, "target %s: cannot start thread: %s", st[i].t->name, strerror(-ret));
			failed = 1;
			sig_stop = 1;
			break;
		}
		started++;
	}
	for (;;) {
		int running = 0;
		for (int i = 0; i < started; i++)
			running += __atomic_load_n(&st[i].state, __ATOMIC_SEQ_CST) == SCHED_RUNNING;
		if (!running)
			break;
		if (sig_reload) {
			sig_reload = 0;
			log_msg(LOG_WARNING, "SIGHUP: configuration reload is not supported yet; keeping %s",
				c->path);
		}
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < started; i++)
		if (sched_join(&st[i]) == SCHED_FAILED)
			failed = 1;
	return failed ? EXIT_RUNTIME : EXIT_OK;
}

static int run(const struct opts *o, struct cfg *c)
{
	char err[CFG_ERR_MAX];
	struct db *db = NULL;
	int64_t run_id = 0;
	int status = EXIT_CONFIG;
	struct sched_target *st = calloc((size_t)c->ntargets, sizeof(*st));

	if (!st)
		return EXIT_RUNTIME;
	if (db_check_path(c->database, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s:%d: database: %s", c->path, c->database_line, err);
		goto out;
	}
	if (open_targets(c, o->check, st))
		goto out;
	if (o->check) {
		print_check(c, st);
		status = EXIT_OK;
		goto out;
	}
	if (db_open(c->database, 0, &db, err, sizeof(err))) {
		log_msg(LOG_ERR, "%s:%d: database: %s", c->path, c->database_line, err);
		goto out;
	}
	status = EXIT_RUNTIME;
	if (db_run_begin(db, c->path, &run_id) || register_targets(db, c, st, run_id)) {
		log_msg(LOG_ERR, "cannot record the run in %s", c->database);
		goto out;
	}
	log_msg(LOG_INFO, "wearmond %s started: %d target(s), database %s", WEARMON_VERSION,
		c->ntargets, c->database);
	status = run_targets(c, st);
	db_run_end(db, run_id, status, sig_stop ? "signal" : status ? "failure" : "cycles done");
	log_msg(LOG_INFO, "wearmond stopped (%s), exit status %d",
		sig_stop ? "signal" : status ? "failure" : "all cycles done", status);
out:
	close_targets(c, st, status == EXIT_CONFIG && !o->check);
	db_close(db);
	free(st);
	return status;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct cfg *c = NULL;
	char err[CFG_ERR_MAX];

	if (parse_opts(argc, argv, &o))
		return EXIT_USAGE;
	log_init(o.foreground || o.check ? LOG_SINK_STDERR : LOG_SINK_JOURNAL, LOG_INFO);
	int ret = cfg_load(o.config, &c, err, sizeof(err));
	if (ret) {
		if (ret == -EINVAL)
			log_lines(LOG_ERR, err);
		else
			log_msg(LOG_ERR, "%s: cannot read: %s", o.config, strerror(-ret));
		return EXIT_CONFIG;
	}
	if (sig_init()) {
		cfg_free(c);
		return EXIT_RUNTIME;
	}
	int status = run(&o, c);
	cfg_free(c);
	return status;
}
