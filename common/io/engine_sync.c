/* engine_sync: one I/O at a time with pwrite and pread on the phase's
 * descriptor, as fio's sync engine: whatever the queue depth, a write or
 * read is in flight alone and the thread waits for each. For comparison
 * with the queued engines, and for devices where queued I/O is not to be
 * had. Each I/O is timed from its own call to its return, so the depth
 * the runner measures (mean_depth) is about 1. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/util.h"
#include "io/engine_ops.h"

struct sync_engine {
	int fd;         /* the phase's */
	unsigned npend; /* completions waiting in c->done */
};

static int sync_open(struct engine_ctx *c, const struct engine_opts *o)
{
	(void)o;
	c->priv = calloc(1, sizeof(struct sync_engine));
	return c->priv ? 0 : -ENOMEM;
}

static void sync_close(struct engine_ctx *c)
{
	free(c->priv);
	c->priv = NULL;
}

static uint64_t sync_now(const struct engine_ctx *c)
{
	(void)c;
	return util_now_ns();
}

static int sync_start(struct engine_ctx *c, int fd, uint64_t t0)
{
	struct sync_engine *e = c->priv;

	(void)t0;
	e->fd = fd;
	e->npend = 0;
	return 0;
}

static void sync_stop(struct engine_ctx *c)
{
	(void)c;
}

/* One I/O, done before returning: its completion waits in c->done. */
static int sync_submit(struct engine_ctx *c, struct engine_slot **v, unsigned n)
{
	struct sync_engine *e = c->priv;
	struct engine_slot *sl = v[0];
	ssize_t got;

	(void)n;
	sl->t_submit = util_now_ns();
	do {
		got = sl->is_write ? pwrite(e->fd, sl->buf, sl->len, (off_t)sl->offset)
				   : pread(e->fd, sl->rbuf, sl->len, (off_t)sl->offset);
	} while (got < 0 && errno == EINTR);
	c->done[e->npend++] = (struct engine_done){
		.sl = sl,
		.res = got < 0 ? -errno : (long)got,
		.t = util_now_ns(),
	};
	return 1;
}

static int sync_reap(struct engine_ctx *c, unsigned min, unsigned max)
{
	struct sync_engine *e = c->priv;
	unsigned got = e->npend;

	(void)min;
	(void)max;
	e->npend = 0;
	return (int)got;
}

const struct engine_ops engine_sync_ops = {
	.name = "sync",
	.moves_data = 1,
	.open = sync_open,
	.close = sync_close,
	.now = sync_now,
	.start = sync_start,
	.stop = sync_stop,
	.submit = sync_submit,
	.reap = sync_reap,
};
