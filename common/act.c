/* act: between-cycles actions as a const table of backends. */
#include "act.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

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
		const volatile sig_atomic_t *stop, uint64_t *done)
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

static const struct act_ops actions[ACT__COUNT] = {
	[ACT_NONE] = { .name = "none", .run = run_none },
	[ACT_TRIM] = { .name = "trim", .run = run_trim },
};

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
