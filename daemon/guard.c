/* guard: start-up refusals that protect the history and the host: trust in
 * the files root runs, one target per device, one daemon per device, no
 * target on wearmon's own files. */
#include "guard.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/identity.h"
#include "trust.h"
#include "base/util.h"

int guard_trust(const char *what, const char *path, char *err, size_t len)
{
	struct stat st;
	int ret = trust_links(what, path, err, len);

	if (!ret)
		ret = trust_dirs(what, path, err, len);
	if (ret == -EPERM)
		return ret;
	if (stat(path, &st) != 0) {
		ret = -errno;
		snprintf(err, len, "%s %s: %s", what, path, strerror(errno));
		return ret;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		char who[128];
		snprintf(err, len,
			 "%s %s is writable by %s (mode %04o), owned by %s: anyone who can "
			 "change it controls what wearmond does; run sudo chmod go-w %s",
			 what, path, st.st_mode & S_IWOTH ? "others" : "its group",
			 (unsigned)(st.st_mode & 07777),
			 trust_owner_name(st.st_uid, who, sizeof(who)), path);
		return -EPERM;
	}
	if (geteuid() == 0 && st.st_uid != 0) {
		snprintf(err, len,
			 "%s %s is owned by uid %u, not root (mode %04o): wearmond "
			 "runs as root and trusts only files root owns; run sudo chown root %s",
			 what, path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

/* The file behind a target: a regular file's own, or a loop device's. */
static int file_id(const struct tgt *t, struct stat *st)
{
	if (!t->is_block)
		return stat(t->real_path[0] ? t->real_path : t->path, st);
	if (t->backing_file[0])
		return stat(t->backing_file, st);
	return -1;
}

int guard_same_device(const struct tgt *a, const struct tgt *b)
{
	struct stat fa, fb;

	const struct identity ia = { .rdev = a->rdev }, ib = { .rdev = b->rdev };
	if (a->is_block && b->is_block && !identity_diff(&ia, &ib, ID_RDEV, ID_RDEV))
		return 1;
	/* two files not created yet, at one path */
	if (!a->is_block && !b->is_block && !strcmp(a->real_path, b->real_path))
		return 1;
	if (file_id(a, &fa) || file_id(b, &fb))
		return 0;
	return identity_same_file(&fb, (uint64_t)fa.st_dev, (uint64_t)fa.st_ino);
}

static int is_wearmond(const char *pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "wearmond", 8) && (comm[8] == '\n' || comm[8] == '\0');
}

/* Whether one of pid's descriptors is tg's device or file. */
struct held {
	const struct tgt *tg;
	const struct stat *file;
};

static int names_target(const char *pid, const char *fd, const struct stat *st, void *arg)
{
	const struct held *h = arg;
	if (h->tg->is_block && identity_is_device(st, h->tg->rdev))
		return 1;
	return h->file && S_ISREG(st->st_mode) &&
	       identity_same_file(st, (uint64_t)h->file->st_dev, (uint64_t)h->file->st_ino);
}

static int holds(const char *pid, const struct tgt *tg, const struct stat *file)
{
	struct held h = { tg, file };
	return tgt_pid_fds(pid, names_target, &h);
}

pid_t guard_holder(const struct tgt *tg)
{
	struct stat file;
	int have_file = file_id(tg, &file) == 0;
	char self[32];
	struct dirent *e;
	pid_t found = 0;

	snprintf(self, sizeof(self), "%ld", (long)getpid());
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || !strcmp(e->d_name, self))
			continue;
		if (is_wearmond(e->d_name) && holds(e->d_name, tg, have_file ? &file : NULL))
			found = (pid_t)atol(e->d_name);
	}
	closedir(d);
	return found;
}

int guard_own_files(const struct cfg *c, struct tgt_own_file own[GUARD_OWN_MAX])
{
	static const struct {
		const char *what, *suffix;
	} db_files[] = {
		{ "the database", "" },
		{ "the database's rollback journal", "-journal" },
		{ "the database's write-ahead log", "-wal" },
		{ "the database's shared-memory index", "-shm" },
		/* the lock is on the database file itself (common/db/db_guard.c);
		 * the name of the lock file of earlier versions stays reserved */
		{ "the database's lock", ".lock" },
	};
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(db_files); i++, n++) {
		own[n].what = db_files[i].what;
		snprintf(own[n].path, sizeof(own[n].path), "%s%s", c->database, db_files[i].suffix);
	}
	own[n].what = "the configuration";
	util_strlcpy(own[n++].path, c->path, sizeof(own[0].path));
	if (c->metrics_file[0]) {
		own[n].what = "the metrics file";
		util_strlcpy(own[n++].path, c->metrics_file, sizeof(own[0].path));
	}
	return n;
}

int guard_history_owns(void *arg, dev_t dev, ino_t ino)
{
	return arg && db_owned_file(arg, (uint64_t)dev, (uint64_t)ino) == 1;
}

int guard_paths(const struct cfg *c, char *err, size_t len)
{
	struct tgt_own_file own[GUARD_OWN_MAX];
	char why[CFG_ERR_MAX - 128];
	int n = guard_own_files(c, own), ret = 0;

	for (int i = 0; i < n && !ret; i++) {
		if (!strcmp(own[i].path, c->path))
			continue; /* the configuration: guard_trust checks it */
		ret = trust_links(own[i].what, own[i].path, why, sizeof(why));
		if (!ret)
			continue;
		if (c->metrics_file[0] && !strcmp(own[i].path, c->metrics_file)) {
			int k = cfg_key_index("metrics_file");
			snprintf(err, len, "%s:%d: metrics_file: %s", c->path,
				 k >= 0 && c->lines[k] ? c->lines[k] : c->section_line, why);
		} else {
			snprintf(err, len, "%s:%d: database: %s", c->path, c->database_line, why);
		}
	}
	return ret;
}
