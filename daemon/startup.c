/* startup: wearmond's checks before anything is written: the targets, the
 * devices they share, the identities recorded in the database, and then
 * the files created and the targets registered. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fsinfo.h"
#include "base/log.h"
#include "base/util.h"
#include "config/cfg.h"
#include "config/plan.h"
#include "daemon.h"
#include "db/db.h"
#include "device/scsi_log.h"
#include "device/tgt.h"
#include "guard.h"
#include "sched.h"

/* Print each line of a multi-line error. */
void daemon_log_lines(int prio, const char *text)
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
int startup_check_command(const struct cfg *c, const struct cfg_target *t, char *err, size_t len)
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

/* Keep a refusal of st's target beside it, one a line, for --check's plan
 * (checkplan.c); st->error is free until the target's thread runs. */
static void note_refusal(struct sched_target *st, const char *why)
{
	size_t used = strlen(st->error);
	snprintf(st->error + used, sizeof(st->error) - used, "%s%s", used ? "\n" : "", why);
}

/* Two targets on one device would each destroy the other's measurements;
 * a device another wearmond has open is that daemon's. holder_db is the
 * pid holding our own database (its devices are not "another's"). Returns
 * 0 or -EBUSY (errors logged). */
static int check_devices(const struct cfg *c, struct sched_target *st, pid_t holder_db)
{
	char why[1024];
	int bad = 0;
	for (int i = 0; i < c->ntargets; i++) {
		for (int j = 0; j < i; j++) {
			if (!guard_same_device(&st[i].tg, &st[j].tg))
				continue;
			snprintf(why, sizeof(why),
				 "%s:%d: device: target %s is on the same device as "
				 "target %s (%s and %s); give each target its own device",
				 c->path, cfg_line(st[i].t, "device"), st[i].t->name, st[j].t->name,
				 st[i].tg.path, st[j].tg.path);
			log_msg(LOG_ERR, "%s", why);
			note_refusal(&st[i], why);
			bad = 1;
		}
		pid_t pid = guard_holder(&st[i].tg);
		if (pid && pid == holder_db) {
			log_msg(LOG_NOTICE,
				"target %s: %s is in use by wearmond pid %ld, which "
				"runs this database",
				st[i].t->name, st[i].tg.path, (long)pid);
		} else if (pid) {
			snprintf(why, sizeof(why),
				 "%s:%d: device: target %s: %s is held by another "
				 "wearmond (pid %ld); stop it first",
				 c->path, cfg_line(st[i].t, "device"), st[i].t->name, st[i].tg.path,
				 (long)pid);
			log_msg(LOG_ERR, "%s", why);
			note_refusal(&st[i], why);
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

/* A native SCSI disk: log what it is and the discard it advertises (its
 * health snapshot keeps the same facts). */
static void describe_scsi(const struct tgt *tg)
{
	char line[512];
	if (tg->proto == TGT_PROTO_SCSI && !scsi_describe_target(tg, line, sizeof(line)))
		log_msg(LOG_INFO, "target %s: %s: %s", tg->name, tg->path, line);
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
			ret = plan_build(c, st[i].t, st[i].tg.capacity, st[i].tg.logical_block_size,
					 &st[i].plan, err, sizeof(err));
		if (!ret)
			ret = startup_check_command(c, st[i].t, err, sizeof(err));
		if (!ret)
			describe_scsi(&st[i].tg);
		if (ret) {
			daemon_log_lines(LOG_ERR, err);
			note_refusal(&st[i], err);
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
int startup_prepare_targets(const struct cfg *c, struct sched_target *st)
{
	char err[CFG_ERR_MAX];
	for (int i = 0; i < c->ntargets; i++) {
		uint32_t lbs = st[i].tg.logical_block_size;
		int ret = tgt_prepare(c, st[i].t, &st[i].tg, err, sizeof(err));
		if (!ret && st[i].tg.logical_block_size != lbs)
			ret = plan_build(c, st[i].t, st[i].tg.capacity, st[i].tg.logical_block_size,
					 &st[i].plan, err, sizeof(err));
		if (ret) {
			daemon_log_lines(LOG_ERR, err);
			startup_log_room(st[i].tg.path, ret);
			return ret;
		}
	}
	return 0;
}

void startup_log_room(const char *path, int ret)
{
	char fs[PATH_MAX + 400];
	struct fsinfo fi;

	if (db_transient(ret) && !fsinfo_of(path, &fi))
		log_msg(LOG_ERR,
			"%s: its %s; wearmond exits 1 and is started again (systemd: "
			"RestartSec) until there is room",
			path, fsinfo_text(&fi, fs, sizeof(fs)));
}

void startup_close_targets(struct daemon *d, int remove_created)
{
	for (int i = 0; i < d->nst; i++) {
		tgt_close(&d->st[i].tg);
		if (remove_created && d->st[i].tg.created)
			unlink(d->st[i].tg.path);
	}
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
static int check_recorded_identity(struct db *db, const struct cfg *c, struct sched_target *st,
				   char *diff, size_t len, int *adopt, int quiet)
{
	char why[2048];
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
	if (quiet)
		return -EMEDIUMTYPE;
	snprintf(why, sizeof(why),
		 "%s:%d: device: target %s is recorded in %s with another device "
		 "(%s). To measure the new device, give it a new target name, or set "
		 "adopt_new_device = yes in [target %s] to adopt it (a new campaign starts "
		 "and an event records the change)",
		 c->path, cfg_line(st->t, "device"), st->t->name, c->database, diff, st->t->name);
	log_msg(LOG_ERR, "%s", why);
	note_refusal(st, why);
	return -EMEDIUMTYPE;
}

/* Every target's identity, before anything is written. Returns 0,
 * -EMEDIUMTYPE (each mismatch logged) or -errno. */
int startup_identities_ok(struct db *db, const struct cfg *c, struct sched_target *st)
{
	char diff[1024];
	int bad = 0, adopt;
	for (int i = 0; i < c->ntargets; i++) {
		int ret = check_recorded_identity(db, c, &st[i], diff, sizeof(diff), &adopt, 0);
		if (ret == -EMEDIUMTYPE)
			bad = 1;
		else if (ret)
			return ret;
	}
	return bad ? -EMEDIUMTYPE : 0;
}

/* Store the targets (identities checked by identities_ok). Returns 0 or
 * -errno. */
int startup_register_targets(struct db *db, const struct cfg *c, struct sched_target *st,
			     int64_t run_id)
{
	char diff[1024];
	for (int i = 0; i < c->ntargets; i++) {
		struct db_target_info info;
		int adopt = 0;
		char old_serial[128], old_model[128];
		int ret = check_recorded_identity(db, c, &st[i], diff, sizeof(diff), &adopt, 1);
		target_info(&st[i].tg, &info);
		/* the recorded device, before the upsert rewrites it */
		if (!ret && adopt)
			ret = db_target_recorded(db, st[i].t->name, old_serial, sizeof(old_serial),
						 old_model, sizeof(old_model));
		if (!ret)
			ret = db_target_upsert(db, &info, &st[i].target_id);
		if (!ret && st[i].tg.own_it)
			ret = db_owned_add(db, (uint64_t)st[i].tg.backing_dev,
					   (uint64_t)st[i].tg.backing_ino, st[i].t->name,
					   st[i].tg.real_path);
		if (!ret && adopt)
			ret = db_target_adopt(db, st[i].target_id, run_id, diff,
					      &(struct db_adopted){ old_serial, old_model,
								    info.serial, info.model });
		if (ret)
			return ret;
		st[i].db = db;
		st[i].run_id = run_id;
	}
	return 0;
}

/* --new-campaign: mark the targets it names. Returns 0, or -EINVAL when a
 * name is no target of c (logged). */
int startup_mark_new_campaigns(const struct opts *o, const struct cfg *c, struct sched_target *st)
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

/* Every check of the targets, changing nothing: each target, the pairs,
 * and with --check the identities recorded in the database. The database
 * is open read-only meanwhile. Returns 0 or -errno (logged). */
int startup_check_targets(struct daemon *d, const struct cfg *c, pid_t holder)
{
	int ret = open_history(d, c);

	d->nown = guard_own_files(c, d->own);
	if (open_targets(d, c, holder, d->st) || check_devices(c, d->st, holder))
		ret = -EINVAL;
	if (!ret && d->o->check && d->history)
		ret = startup_identities_ok(d->history, c, d->st);
	db_close(d->history);
	d->history = NULL;
	return ret;
}
