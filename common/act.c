/* act: between-cycles actions as a const table of backends. */
#include "act.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ata.h"
#include "nvme.h"
#include "util.h"

/* Large discards are split so a stop request is seen between chunks. */
#define DISCARD_CHUNK (1ull << 30)

struct act_ops {
	const char *name;
	int (*run)(const struct act_env *env, struct act_result *r);
};

int act_align_range(uint64_t offset, uint64_t len, uint64_t gran,
		    uint64_t *out_off, uint64_t *out_len)
{
	if (!gran)
		gran = 512;
	uint64_t start = (offset + gran - 1) / gran * gran;
	uint64_t end = (offset + len) / gran * gran;
	if (end <= start)
		return -EINVAL;
	*out_off = start;
	*out_len = end - start;
	return 0;
}

static int discard_chunk(const struct tgt *tg, uint64_t off, uint64_t len)
{
	if (tg->is_block) {
		uint64_t range[2] = { off, len };
		return ioctl(tg->fd, BLKDISCARD, range) ? -errno : 0;
	}
	return fallocate(tg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			 (off_t)off, (off_t)len) ? -errno : 0;
}

int act_discard(const struct tgt *tg, uint64_t offset, uint64_t len,
		const atomic_int *stop, uint64_t *done)
{
	uint64_t off, n;
	*done = 0;
	if (tg->is_block && !tg->discard_granularity)
		return -EOPNOTSUPP;
	if (act_align_range(offset, len, tg->discard_granularity, &off, &n))
		return 0;
	uint64_t chunk = DISCARD_CHUNK / tg->discard_granularity * tg->discard_granularity;
	if (!chunk)
		chunk = tg->discard_granularity;
	while (n) {
		if (stop && *stop)
			return -EINTR;
		uint64_t c = n < chunk ? n : chunk;
		int ret = discard_chunk(tg, off, c);
		if (ret == -ENOTTY || ret == -ENOSYS)
			ret = -EOPNOTSUPP;
		if (ret)
			return ret;
		*done += c;
		off += c;
		n -= c;
	}
	return 0;
}

static int run_none(const struct act_env *env, struct act_result *r)
{
	r->outcome = "skipped";
	return 0;
}

static int run_trim(const struct act_env *env, struct act_result *r)
{
	uint64_t off = env->region_offset, len = env->region_size;
	if (env->t->trim_scope == TRIM_DEVICE) {
		off = 0;
		len = env->tg->capacity;
	}
	int ret = act_discard(env->tg, off, len, env->stop, &r->bytes);
	if (ret == -EOPNOTSUPP) {
		r->outcome = "unsupported";
		snprintf(r->error, sizeof(r->error), "%s cannot discard (no TRIM support)", env->tg->path);
		return 0;
	}
	if (ret) {
		r->outcome = "failed";
		snprintf(r->error, sizeof(r->error), "discard of %s failed after %llu bytes: %s",
			 env->tg->path, (unsigned long long)r->bytes, strerror(-ret));
		return ret;
	}
	r->outcome = "ok";
	return 0;
}

/* The test file's blocks hold what the cycle wrote; FITRIM only trims free
 * space, so free them first (the next cycle writes the file anew, as the
 * first did) and commit that, so the filesystem counts them free. */
static int empty_test_file(const struct act_env *env, int dirfd, struct act_result *r)
{
	struct stat st;
	if (!env->test_file)
		return 0;
	if (stat(env->test_file, &st) == 0)
		r->freed = (uint64_t)st.st_blocks * 512;
	if (truncate(env->test_file, 0) || syncfs(dirfd)) {
		int ret = -errno;
		r->outcome = "failed";
		snprintf(r->error, sizeof(r->error), "fitrim: cannot empty the test file %s: %s",
			 env->test_file, strerror(-ret));
		return ret;
	}
	return 0;
}

static int run_fitrim(const struct act_env *env, struct act_result *r)
{
	struct fstrim_range range = { .start = 0, .len = UINT64_MAX, .minlen = 0 };
	int fd = env->mountpoint ? open(env->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd < 0) {
		r->outcome = "failed";
		snprintf(r->error, sizeof(r->error), "fitrim: no mounted filesystem to trim");
		return -EINVAL;
	}
	int ret = empty_test_file(env, fd, r);
	if (ret) {
		close(fd);
		return ret;
	}
	ret = ioctl(fd, FITRIM, &range) ? -errno : 0;
	close(fd);
	if (ret == -EOPNOTSUPP || ret == -ENOTTY || ret == -EBADF || ret == -ENOSYS) {
		r->outcome = "unsupported";
		snprintf(r->error, sizeof(r->error), "%s: the filesystem or device cannot discard",
			 env->mountpoint);
		return 0;
	}
	if (ret) {
		r->outcome = "failed";
		snprintf(r->error, sizeof(r->error), "FITRIM on %s: %s", env->mountpoint, strerror(-ret));
		return ret;
	}
	r->bytes = range.len;
	r->outcome = "ok";
	return 0;
}

static int run_idle(const struct act_env *env, struct act_result *r)
{
	double end = util_now() + env->t->idle;
	while (!(env->stop && *env->stop)) {
		double left = end - util_now();
		if (left <= 0)
			break;
		struct timespec ts = { 0, (long)((left < 0.1 ? left : 0.1) * 1e9) };
		nanosleep(&ts, NULL);
	}
	r->outcome = env->stop && *env->stop ? "interrupted" : "ok";
	return 0;
}

/* Map an erase helper's return to an outcome. */
static int erase_outcome(struct act_result *r, int ret, const char *text)
{
	if (text && *text)
		util_strlcpy(r->error, text, sizeof(r->error));
	if (ret == -ENOTTY && !r->error[0])
		snprintf(r->error, sizeof(r->error), "this kind of device takes no such command");
	/* ENOTTY: the ioctl does not apply here (a regular file, a loop device) */
	if (ret == -EOPNOTSUPP || ret == -ENOTTY) {
		r->outcome = "unsupported";
		return 0;
	}
	r->outcome = ret ? "failed" : "ok";
	if (ret && !r->error[0])
		snprintf(r->error, sizeof(r->error), "%s", strerror(-ret));
	if (!ret)
		r->error[0] = 0;
	return ret;
}

static int erase_ata(const struct act_env *env, struct act_result *r, int enhanced)
{
	struct ata_erase_report rep;
	char err[512] = "";
	int ret = ata_secure_erase(env->tg->fd, env->t->secure_erase_password, enhanced, &rep,
				   err, sizeof(err));
	if (!ret)
		r->bytes = env->tg->capacity;
	return erase_outcome(r, ret, err);
}

static int erase_nvme(const struct act_env *env, struct act_result *r, int sanitize, int crypto)
{
	struct nvme_result res;
	memset(&res, 0, sizeof(res));
	/* A sanitize gets NVME_SANITIZE_TIMEOUT_S (timeout 0), then it goes on in the drive. */
	int ret = sanitize ? nvme_sanitize(env->tg->fd, crypto, env->stop, 0, &res)
			   : nvme_format(env->tg->fd, 0, crypto, &res);
	if (!ret)
		r->bytes = env->tg->capacity;
	return erase_outcome(r, ret, res.text);
}

static int erase_ioctl(const struct act_env *env, struct act_result *r, int secure)
{
	int ret;
	if (secure) {
		uint64_t range[2] = { 0, env->tg->capacity };
		ret = ioctl(env->tg->fd, BLKSECDISCARD, range) ? -errno : 0;
		if (ret == -ENOTTY)
			ret = -EOPNOTSUPP;
		if (!ret)
			r->bytes = env->tg->capacity;
		return erase_outcome(r, ret, ret == -EOPNOTSUPP ?
				     "BLKSECDISCARD: not supported by this device" : NULL);
	}
	ret = act_discard(env->tg, 0, env->tg->capacity, env->stop, &r->bytes);
	return erase_outcome(r, ret, ret == -EOPNOTSUPP ?
			     "discard-all: this device cannot discard" : NULL);
}

/* Run secure_erase_command DEVICE. The exclusive descriptor is closed
 * while it runs (erase tools open the device exclusively themselves) and
 * reopened afterwards. */
static int erase_command(const struct act_env *env, struct act_result *r)
{
	char err[256];
	tgt_close(env->tg);
	pid_t pid = fork();
	if (pid == 0) {
		execl(env->t->secure_erase_command, env->t->secure_erase_command,
		      env->tg->real_path, (char *)NULL);
		_exit(127);
	}
	int status = 0, ret = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		ret = -errno;
	int reopen = env->tg->is_block ? tgt_reopen(env->tg, err, sizeof(err)) : 0;
	if (ret)
		return erase_outcome(r, ret, "cannot run secure_erase_command");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(r->error, sizeof(r->error), "%s %s exited with status %d",
			 env->t->secure_erase_command, env->tg->path,
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		r->outcome = "failed";
		return -EIO;
	}
	if (reopen)
		return erase_outcome(r, reopen, err);
	r->bytes = env->tg->capacity;
	return erase_outcome(r, 0, NULL);
}

static int run_secure_erase(const struct act_env *env, struct act_result *r)
{
	switch (env->t->secure_erase) {
	case ERASE_ATA: return erase_ata(env, r, 0);
	case ERASE_ATA_ENHANCED: return erase_ata(env, r, 1);
	case ERASE_NVME_FORMAT: return erase_nvme(env, r, 0, 0);
	case ERASE_NVME_CRYPTO_FORMAT: return erase_nvme(env, r, 0, 1);
	case ERASE_NVME_SANITIZE_BLOCK: return erase_nvme(env, r, 1, 0);
	case ERASE_NVME_SANITIZE_CRYPTO: return erase_nvme(env, r, 1, 1);
	case ERASE_BLKSECDISCARD: return erase_ioctl(env, r, 1);
	case ERASE_DISCARD_ALL: return erase_ioctl(env, r, 0);
	case ERASE_COMMAND: return erase_command(env, r);
	default:
		r->outcome = "failed";
		snprintf(r->error, sizeof(r->error), "no secure_erase method set");
		return -EINVAL;
	}
}

static const struct act_ops actions[ACT__COUNT] = {
	[ACT_NONE] = { .name = "none", .run = run_none },
	[ACT_TRIM] = { .name = "trim", .run = run_trim },
	[ACT_FITRIM] = { .name = "fitrim", .run = run_fitrim },
	[ACT_SECURE_ERASE] = { .name = "secure-erase", .run = run_secure_erase },
	[ACT_IDLE] = { .name = "idle", .run = run_idle },
};

enum act_effect act_effect(enum cfg_action a, const struct act_env *env, uint64_t *start,
			   uint64_t *end)
{
	switch (a) {
	case ACT_TRIM:
		*start = env->t->trim_scope == TRIM_DEVICE ? 0 : env->region_offset;
		*end = env->t->trim_scope == TRIM_DEVICE ? env->tg->capacity
							 : env->region_offset + env->region_size;
		return EFFECT_TRIMMED;
	case ACT_SECURE_ERASE:
		return EFFECT_ERASED;
	default:
		return EFFECT_NONE;
	}
}

int act_run(enum cfg_action a, const struct act_env *env, struct act_result *r)
{
	memset(r, 0, sizeof(*r));
	util_iso_now(r->started_at, sizeof(r->started_at));
	if ((unsigned)a >= ACT__COUNT || !actions[a].run) {
		r->outcome = "failed";
		snprintf(r->error, sizeof(r->error), "unknown action %d", (int)a);
		return -EINVAL;
	}
	double t0 = util_now();
	int ret = actions[a].run(env, r);
	r->seconds = util_now() - t0;
	return ret;
}
