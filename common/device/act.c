/* act: between-cycles actions as a const table of backends. */
#include "device/act.h"

/* Every switch over an enum names each value (a new value fails the build): -Wswitch-enum. */
#pragma GCC diagnostic error "-Wswitch-enum"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "device/ata.h"
#include "base/log.h"
#include "device/nvme.h"
#include "device/scsi_erase.h"
#include "base/cmd.h"
#include "base/util.h"

/* Discards (and FITRIM) go in pieces so a stop is seen between them: the
 * first is small, each next one sized from the rate just measured to take
 * about PIECE_TARGET_S, growing at most PIECE_GROWTH times per piece. */
#define PIECE_FIRST (1ull << 20)
#define PIECE_MAX (1ull << 30)
#define PIECE_TARGET_S 0.25
#define PIECE_GROWTH 4

static int stopping(const struct act_env *env)
{
	return env->stop && atomic_load(env->stop);
}

/* The next piece after one of piece bytes took secs, a multiple of gran. */
static uint64_t next_piece(uint64_t piece, double secs, uint64_t gran)
{
	uint64_t want = PIECE_MAX;
	if (secs > 0 && (double)piece * PIECE_TARGET_S / secs < (double)PIECE_MAX)
		want = (uint64_t)((double)piece * PIECE_TARGET_S / secs);
	if (want > piece * PIECE_GROWTH)
		want = piece * PIECE_GROWTH;
	want = want / gran * gran;
	return want ? want : gran;
}

struct act_ops {
	const char *name;
	int (*run)(const struct act_env *env, struct act_result *r);
};

int act_align_range(uint64_t offset, uint64_t len, uint64_t gran, uint64_t *out_off,
		    uint64_t *out_len)
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
	return fallocate(tg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len)
		       ? -errno
		       : 0;
}

int act_discard(const struct tgt *tg, uint64_t offset, uint64_t len, const atomic_int *stop,
		uint64_t *done)
{
	uint64_t off, n;
	*done = 0;
	if (tg->is_block && !tg->discard_granularity)
		return -EOPNOTSUPP;
	if (act_align_range(offset, len, tg->discard_granularity, &off, &n))
		return 0;
	uint64_t gran = tg->discard_granularity ? tg->discard_granularity : 512;
	uint64_t piece = next_piece(PIECE_FIRST, PIECE_TARGET_S, gran);
	while (n) {
		if (stop && atomic_load(stop))
			return -EINTR;
		uint64_t c = n < piece ? n : piece;
		double t0 = util_now();
		int ret = discard_chunk(tg, off, c);
		if (ret == -ENOTTY || ret == -ENOSYS)
			ret = -EOPNOTSUPP;
		if (ret)
			return ret;
		if (c == piece)
			piece = next_piece(piece, util_now() - t0, gran);
		*done += c;
		off += c;
		n -= c;
	}
	return 0;
}

static int run_none(const struct act_env *env, struct act_result *r)
{
	(void)env;
	r->outcome = ACT_OUT_SKIPPED;
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
	if (ret == -EINTR) {
		r->outcome = ACT_OUT_INTERRUPTED;
		return 0;
	}
	if (ret == -EOPNOTSUPP) {
		r->outcome = ACT_OUT_UNSUPPORTED;
		snprintf(r->error, sizeof(r->error), "%s cannot discard (no TRIM support)",
			 env->tg->path);
		return 0;
	}
	if (ret) {
		r->outcome = ACT_OUT_FAILED;
		snprintf(r->error, sizeof(r->error), "discard of %s failed after %llu bytes: %s",
			 env->tg->path, (unsigned long long)r->bytes, strerror(-ret));
		return ret;
	}
	r->outcome = ACT_OUT_OK;
	return 0;
}

/* FITRIM the filesystem in pieces of its byte range. Returns 0, -EINTR
 * when stopped, or -errno. */
static int fitrim_pieces(int fd, const struct act_env *env, uint64_t fs_bytes, uint64_t *trimmed)
{
	uint64_t piece = PIECE_FIRST;
	*trimmed = 0;
	for (uint64_t off = 0; off < fs_bytes;) {
		if (stopping(env))
			return -EINTR;
		uint64_t len = fs_bytes - off < piece ? fs_bytes - off : piece;
		struct fstrim_range range = { .start = off, .len = len, .minlen = 0 };
		double t0 = util_now();
		if (ioctl(fd, FITRIM, &range))
			return -errno;
		if (len == piece)
			piece = next_piece(piece, util_now() - t0, 4096);
		*trimmed += range.len;
		off += len;
	}
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
		r->outcome = ACT_OUT_FAILED;
		snprintf(r->error, sizeof(r->error), "fitrim: cannot empty the test file %s: %s",
			 env->test_file, strerror(-ret));
		return ret;
	}
	return 0;
}

static int run_fitrim(const struct act_env *env, struct act_result *r)
{
	struct statvfs sv;
	int fd = env->mountpoint ? open(env->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd < 0) {
		r->outcome = ACT_OUT_FAILED;
		snprintf(r->error, sizeof(r->error), "fitrim: no mounted filesystem to trim");
		return -EINVAL;
	}
	int ret = empty_test_file(env, fd, r);
	if (ret) {
		close(fd);
		return ret;
	}
	ret = fstatvfs(fd, &sv) ? -errno : 0;
	if (!ret)
		ret = fitrim_pieces(fd, env, (uint64_t)sv.f_blocks * sv.f_frsize, &r->bytes);
	close(fd);
	if (ret == -EINTR) {
		r->outcome = ACT_OUT_INTERRUPTED;
		return 0;
	}
	if (ret == -EOPNOTSUPP || ret == -ENOTTY || ret == -EBADF || ret == -ENOSYS) {
		r->outcome = ACT_OUT_UNSUPPORTED;
		snprintf(r->error, sizeof(r->error), "%s: the filesystem or device cannot discard",
			 env->mountpoint);
		return 0;
	}
	if (ret) {
		r->outcome = ACT_OUT_FAILED;
		snprintf(r->error, sizeof(r->error), "FITRIM on %s: %s", env->mountpoint,
			 strerror(-ret));
		return ret;
	}
	r->outcome = ACT_OUT_OK;
	return 0;
}

static int run_idle(const struct act_env *env, struct act_result *r)
{
	double end = util_now() + env->t->idle;
	while (!stopping(env)) {
		double left = end - util_now();
		if (left <= 0)
			break;
		struct timespec ts = { 0, (long)((left < 0.1 ? left : 0.1) * 1e9) };
		nanosleep(&ts, NULL);
	}
	r->outcome = stopping(env) ? ACT_OUT_INTERRUPTED : ACT_OUT_OK;
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
		r->outcome = ACT_OUT_UNSUPPORTED;
		return 0;
	}
	if (ret == -EINTR) {
		r->outcome = ACT_OUT_INTERRUPTED;
		return 0;
	}
	r->outcome = ret ? ACT_OUT_FAILED : ACT_OUT_OK;
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
	log_msg(LOG_NOTICE,
		"target %s: ATA %ssecurity erase of %s started; a stop request waits "
		"for it to end (the drive cannot abort an erase in progress)",
		env->t->name, enhanced ? "enhanced " : "", env->tg->path);
	int ret = ata_secure_erase(env->tg->fd, env->t->secure_erase_password, enhanced, &rep, err,
				   sizeof(err));
	if (!ret)
		r->bytes = env->tg->capacity;
	return erase_outcome(r, ret, err);
}

static int erase_nvme(const struct act_env *env, struct act_result *r, int sanitize, int crypto)
{
	struct nvme_result res;
	memset(&res, 0, sizeof(res));
	if (!sanitize)
		log_msg(LOG_NOTICE,
			"target %s: NVMe Format of %s started; a stop request waits for it "
			"to end (the controller cannot abort a format in progress)",
			env->t->name, env->tg->path);
	/* A sanitize gets NVME_SANITIZE_TIMEOUT_S (timeout 0), then it goes on in the drive. */
	int ret = sanitize ? nvme_sanitize(env->tg->fd, crypto, env->stop, 0, &res)
			   : nvme_format(env->tg->fd, 0, crypto, &res);
	if (!ret)
		r->bytes = env->tg->capacity;
	return erase_outcome(r, ret, res.text);
}

static int erase_scsi(const struct act_env *env, struct act_result *r, int sanitize, int crypto)
{
	struct scsi_erase_result res;
	/* tgt_check refused this at start; a reload may have chosen it since */
	if (env->tg->proto != TGT_PROTO_SCSI) {
		snprintf(r->error, sizeof(r->error),
			 "secure_erase = %s: %s does not speak SCSI natively (an ATA drive "
			 "behind SAT may complete a SCSI erase without erasing)",
			 cfg_erase_name(env->t->secure_erase), env->tg->path);
		return erase_outcome(r, -EOPNOTSUPP, NULL);
	}
	if (!sanitize)
		log_msg(LOG_NOTICE,
			"target %s: SCSI FORMAT UNIT of %s started; a stop request waits for it "
			"to end (the device cannot abort a format in progress)",
			env->t->name, env->tg->path);
	/* A sanitize gets SCSI_SANITIZE_TIMEOUT_S (timeout 0), then it goes on in the drive. */
	int ret = sanitize ? scsi_sanitize(env->tg->fd, crypto, env->stop, 0, &res)
			   : scsi_format_unit(env->tg->fd, &res);
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
		return erase_outcome(
			r, ret,
			ret == -EOPNOTSUPP ? "BLKSECDISCARD: not supported by this device" : NULL);
	}
	ret = act_discard(env->tg, 0, env->tg->capacity, env->stop, &r->bytes);
	return erase_outcome(r, ret,
			     ret == -EOPNOTSUPP ? "discard-all: this device cannot discard" : NULL);
}

/* The outcome of secure_erase_command from how it ended. */
static int command_outcome(const struct act_env *env, const struct cmd_result *sr,
			   struct act_result *r)
{
	const char *cmd = env->t->secure_erase_command;
	const char *out = sr->output[0] ? sr->output : "no output";
	switch (sr->end) {
	case CMD_STOPPED: r->outcome = ACT_OUT_INTERRUPTED; return 0;
	case CMD_TIMED_OUT:
		snprintf(r->error, sizeof(r->error),
			 "%s %s timed out after %.0f s (command_timeout); "
			 "its process group was killed",
			 cmd, env->tg->path, env->command_timeout);
		break;
	case CMD_SIGNALED:
		snprintf(r->error, sizeof(r->error), "%s %s killed by signal %d: %s", cmd,
			 env->tg->path, sr->status, out);
		break;
	case CMD_EXITED:
		if (!sr->status)
			return erase_outcome(r, 0, NULL);
		snprintf(r->error, sizeof(r->error), "%s %s exited with status %d: %s", cmd,
			 env->tg->path, sr->status, out);
		break;
	}
	r->outcome = ACT_OUT_FAILED;
	return -EIO;
}

void act_erase_command_tag(const char *target, char *tag, size_t len)
{
	snprintf(tag, len, "target %s: secure_erase_command", target);
}

/* Run secure_erase_command DEVICE as a child we control (see cmd.h). The
 * exclusive descriptor is closed while it runs (erase tools open the device
 * exclusively themselves) and reopened afterwards. */
static int erase_command(const struct act_env *env, struct act_result *r)
{
	char err[256], tag[160];
	char *argv[] = { (char *)env->t->secure_erase_command, (char *)env->tg->real_path, NULL };
	struct cmd_req rq = {
		.argv = argv, .timeout = env->command_timeout, .stop = env->stop, .tag = tag
	};
	struct cmd_result sr = { 0 };
	act_erase_command_tag(env->t->name, tag, sizeof(tag));
	tgt_close(env->tg);
	int ret = cmd_run(&rq, &sr);
	if (!ret)
		log_msg(LOG_INFO, "%s: %s, status %d, pid %d, %.2f s", tag, cmd_end_name(sr.end),
			sr.status, (int)sr.pid, sr.seconds);
	int reopen = env->tg->is_block ? tgt_reopen(env->tg, err, sizeof(err)) : 0;
	if (ret) {
		snprintf(err, sizeof(err), "cannot run secure_erase_command %s: %s",
			 env->t->secure_erase_command, strerror(-ret));
		r->outcome = ACT_OUT_FAILED;
		util_strlcpy(r->error, err, sizeof(r->error));
		return ret;
	}
	ret = command_outcome(env, &sr, r);
	if (ret || r->outcome != ACT_OUT_OK)
		return ret;
	if (reopen)
		return erase_outcome(r, reopen, err);
	r->bytes = env->tg->capacity;
	return 0;
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
	case ERASE_SCSI_SANITIZE_BLOCK: return erase_scsi(env, r, 1, 0);
	case ERASE_SCSI_SANITIZE_CRYPTO: return erase_scsi(env, r, 1, 1);
	case ERASE_SCSI_FORMAT: return erase_scsi(env, r, 0, 0);
	case ERASE_NONE:
	case ERASE__COUNT: break;
	}
	r->outcome = ACT_OUT_FAILED;
	snprintf(r->error, sizeof(r->error), "no secure_erase method set");
	return -EINVAL;
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
	case ACT_SECURE_ERASE: return EFFECT_ERASED;
	case ACT_NONE:
	case ACT_FITRIM: /* the filesystem decides what it discards */
	case ACT_IDLE:
	case ACT__COUNT: break;
	}
	return EFFECT_NONE;
}

int act_run(enum cfg_action a, const struct act_env *env, struct act_result *r)
{
	memset(r, 0, sizeof(*r));
	util_iso_now(r->started_at, sizeof(r->started_at));
	if ((unsigned)a >= ACT__COUNT || !actions[a].run) {
		r->outcome = ACT_OUT_FAILED;
		snprintf(r->error, sizeof(r->error), "unknown action %d", (int)a);
		return -EINVAL;
	}
	double t0 = util_now();
	int ret = actions[a].run(env, r);
	r->seconds = util_now() - t0;
	if (ret == -EINTR) {
		r->outcome = ACT_OUT_INTERRUPTED; /* r->error may say what goes on in the drive */
		return 0;
	}
	return ret;
}
