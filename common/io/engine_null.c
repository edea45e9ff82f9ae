/* engine_null: as fio's null engine, every I/O completes at once and in
 * full, without a system call and without data: one I/O after the other
 * on a simulated clock that each advances by its length at the speed
 * asked (engine_opts.null_mibps). */
#include <errno.h>
#include <stdlib.h>

#include "base/util.h"
#include "io/engine_ops.h"

struct null_engine {
	double ns_per_byte; /* the simulated device's speed */
	uint64_t clock;     /* its time, in ns */
	unsigned npend;     /* completions waiting in c->done */
};

static int null_open(struct engine_ctx *c, const struct engine_opts *o)
{
	struct null_engine *n;

	if (!(o->null_mibps > 0))
		return -EINVAL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->ns_per_byte = 1e9 / (o->null_mibps * 1048576.0);
	c->priv = n;
	return 0;
}

static void null_close(struct engine_ctx *c)
{
	free(c->priv);
	c->priv = NULL;
}

static uint64_t null_now(const struct engine_ctx *c)
{
	const struct null_engine *n = c->priv;
	return n->clock;
}

static int null_start(struct engine_ctx *c, int fd, uint64_t t0)
{
	struct null_engine *n = c->priv;

	(void)fd;
	n->clock = t0 ? t0 : util_now_ns();
	return 0;
}

static void null_stop(struct engine_ctx *c)
{
	(void)c;
}

static int null_submit(struct engine_ctx *c, struct engine_slot **v, unsigned n)
{
	struct null_engine *e = c->priv;

	for (unsigned i = 0; i < n; i++)
		c->done[e->npend++] = (struct engine_done){ .sl = v[i], .res = (long)v[i]->len };
	return (int)n;
}

static int null_reap(struct engine_ctx *c, unsigned min, unsigned max)
{
	struct null_engine *n = c->priv;
	unsigned got = n->npend;

	(void)min;
	(void)max;
	n->npend = 0;
	return (int)got;
}

/* Each completion advances the clock by its I/O's time on the device. */
static uint64_t null_done_at(struct engine_ctx *c, const struct engine_done *d, uint64_t t)
{
	struct null_engine *n = c->priv;

	(void)t;
	return n->clock += (uint64_t)((double)d->res * n->ns_per_byte) + 1;
}

const struct engine_ops engine_null_ops = {
	.name = "null",
	.simulated = 1,
	.open = null_open,
	.close = null_close,
	.now = null_now,
	.start = null_start,
	.stop = null_stop,
	.submit = null_submit,
	.reap = null_reap,
	.done_at = null_done_at,
};
