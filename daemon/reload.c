/* reload: SIGHUP: the configuration read again, checked against the open
 * devices and offered to the target threads; the configurations kept
 * until no thread uses them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "config/cfg.h"
#include "config/plan.h"
#include "device/tgt.h"
#include "daemon.h"
#include "guard.h"
#include "notify.h"
#include "sched.h"

/* Keep c until exit. Returns 0 or -ENOMEM (c is then not kept). */
int reload_keep_cfg(struct daemon *d, struct cfg *c)
{
	struct cfg **v = realloc(d->cfgs, (size_t)(d->ncfgs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	d->cfgs = v;
	d->cfgs[d->ncfgs++] = c;
	return 0;
}

static struct sched_target *find_target(struct daemon *d, const char *name)
{
	for (int i = 0; i < d->started; i++)
		if (!strcmp(d->st[i].tg.name, name))
			return &d->st[i];
	return NULL;
}

/* Whether t changes what st's device was opened with (its device, I/O
 * engine or SQPOLL), which needs a restart. Returns 0 or -EINVAL with the
 * reason in one. */
static int opened_with_other(const struct cfg *c, const struct cfg_target *t,
			     const struct sched_target *st, char *one, size_t len)
{
	int ret = 0;
	if (strcmp(t->device, st->tg.path)) {
		snprintf(one, len,
			 "%s:%d: device: target %s runs on %s; changing "
			 "its device to %s needs a restart",
			 c->path, cfg_line(t, "device"), t->name, st->tg.path, t->device);
		ret = -EINVAL;
	}
	if (!ret && t->ioengine != st->limits.engine) {
		snprintf(one, len,
			 "%s:%d: ioengine: target %s runs with ioengine = %s; "
			 "changing it to %s needs a restart",
			 c->path, cfg_line(t, "ioengine"), t->name,
			 cfg_ioengine_name(st->limits.engine), cfg_ioengine_name(t->ioengine));
		ret = -EINVAL;
	}
	if (!ret && (unsigned)t->io_uring_sqpoll != st->limits.io_uring_sqpoll) {
		snprintf(one, len,
			 "%s:%d: io_uring_sqpoll: target %s runs with it %s; "
			 "changing it needs a restart",
			 c->path, cfg_line(t, "io_uring_sqpoll"), t->name,
			 st->limits.io_uring_sqpoll ? "on" : "off");
		ret = -EINVAL;
	}
	return ret;
}

/* Check a reloaded configuration against the open devices. Returns 0 or
 * -EINVAL with every problem in err, one per line. */
static int check_reload(struct daemon *d, const struct cfg *c, char *err, size_t len)
{
	size_t used = 0;
	char one[CFG_ERR_MAX], resolve_err[CFG_ERR_MAX];
	int bad = 0;
	struct plan *plan = malloc(sizeof(*plan));

	if (!plan) {
		snprintf(err, len, "out of memory checking %s", c->path);
		return -ENOMEM;
	}
	err[0] = '\0';
	for (int i = 0; i < c->ntargets && used < len; i++) {
		const struct cfg_target *t = &c->targets[i];
		struct sched_target *st = find_target(d, t->name);
		if (!st)
			continue;
		/* the plan the thread builds again when it adopts c (sched.c) */
		int unfit = plan_build(c, t, st->tg.capacity, st->tg.logical_block_size, plan,
				       resolve_err, sizeof(resolve_err));
		int ret = opened_with_other(c, t, st, one, sizeof(one));
		if (!ret && !iter_within(&st->limits, plan)) {
			snprintf(one, sizeof(one),
				 "%s:%d: queue_depth: target %s: a queue depth, "
				 "block size or jobs above what this process allocated at start "
				 "(queue depth %u, block %llu bytes, %u jobs) needs a restart",
				 c->path, t->section_line, t->name, st->limits.max_qd,
				 (unsigned long long)st->limits.max_bs, st->limits.jobs);
			ret = -EINVAL;
		}
		if (!ret && unfit) {
			snprintf(one, sizeof(one), "%s", resolve_err);
			ret = unfit;
		}
		if (!ret)
			ret = startup_check_command(c, t, one, sizeof(one));
		if (!ret)
			ret = tgt_erase_refusals(c, t, &st->tg, one, sizeof(one));
		if (ret) {
			used += (size_t)snprintf(err + used, len - used, "%s%s", bad ? "\n" : "",
						 one);
			bad = 1;
		}
	}
	free(plan);
	return bad ? -EINVAL : 0;
}

/* Offer an accepted configuration to the targets; say what needs a restart. */
static void offer_reload(struct daemon *d, const struct cfg *c)
{
	const struct cfg *running = d->cfgs[0]; /* its database stays open */

	for (int i = 0; i < c->ntargets; i++) {
		struct sched_target *st = find_target(d, c->targets[i].name);
		if (st)
			sched_offer_config(st, c, &c->targets[i]);
		else
			log_msg(LOG_NOTICE,
				"reload: target %s is new; it starts at the next "
				"restart",
				c->targets[i].name);
	}
	for (int i = 0; i < d->started; i++) {
		int kept = 0;
		for (int j = 0; j < c->ntargets && !kept; j++)
			kept = !strcmp(c->targets[j].name, d->st[i].tg.name);
		if (!kept)
			log_msg(LOG_NOTICE,
				"reload: target %s is no longer configured; it runs "
				"on until the next restart",
				d->st[i].tg.name);
	}
	if (strcmp(c->database, running->database))
		log_msg(LOG_NOTICE,
			"reload: database %s takes effect at the next restart; "
			"still writing %s",
			c->database, running->database);
	if (strcmp(c->metrics_file, running->metrics_file))
		log_msg(LOG_NOTICE, "reload: metrics_file takes effect at the next restart");
	log_msg(LOG_INFO, "reload: %s accepted; targets adopt it at their next cycle", c->path);
}

/* SIGHUP: RELOADING=1, parse, validate, offer, READY=1. A configuration
 * with errors is refused and the running one stays. */
void reload_config(struct daemon *d)
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
		ret = reload_keep_cfg(d, c);
	if (ret) {
		if (ret == -EINVAL)
			daemon_log_lines(LOG_ERR, err);
		else if (ret == -ENOMEM)
			log_msg(LOG_ERR, "reload: out of memory");
		else
			log_msg(LOG_ERR, "%s: cannot read: %s", d->o->config, strerror(-ret));
		log_msg(LOG_ERR, "reload: %s refused; keeping the running configuration",
			d->o->config);
		cfg_free(c);
	} else {
		offer_reload(d, c);
		reload_sweep(d);
	}
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
void reload_sweep(struct daemon *d)
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
