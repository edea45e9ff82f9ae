/* engine_libaio: Linux native AIO through libaio on O_DIRECT: one
 * io_submit per batch, completions taken from the mapped ring without a
 * system call when the kernel has posted them, else io_getevents woken by
 * the waker (engine_wake.h). */
#include <errno.h>
#include <libaio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "io/engine_ops.h"
#include "io/engine_wake.h"

#define AIO_RING_MAGIC 0xa10a10a1u

/* The completion ring the kernel maps at the io_context_t address. */
struct aio_ring {
	unsigned id, nr, head, tail, magic, compat_features, incompat_features;
	unsigned header_length;
	struct io_event io_events[];
};

struct aio {
	io_context_t io;
	int fd;                  /* the phase's */
	struct iocb *iocbs;      /* one per slot */
	struct iocb **vec;       /* one io_submit's */
	struct io_event *events; /* one io_getevents' */
	struct engine_waker waker;
};

static void aio_close(struct engine_ctx *c)
{
	struct aio *a = c->priv;

	if (!a)
		return;
	if (a->io)
		io_destroy(a->io);
	free(a->iocbs);
	free(a->vec);
	free(a->events);
	free(a);
	c->priv = NULL;
}

static int aio_open(struct engine_ctx *c, const struct engine_opts *o)
{
	struct aio *a = calloc(1, sizeof(*a));
	int ret = -ENOMEM;

	c->priv = a;
	if (!a)
		return -ENOMEM;
	a->iocbs = calloc(c->nslots, sizeof(*a->iocbs));
	a->vec = calloc(o->max_qd, sizeof(*a->vec));
	a->events = calloc(o->max_qd, sizeof(*a->events));
	if (!a->iocbs || !a->vec || !a->events)
		goto fail;
	ret = io_setup((int)o->max_qd, &a->io);
	if (ret < 0) {
		a->io = 0;
		goto fail;
	}
	return 0;
fail:
	aio_close(c);
	return ret;
}

static uint64_t aio_now(const struct engine_ctx *c)
{
	(void)c;
	return util_now_ns();
}

static int aio_start(struct engine_ctx *c, int fd, uint64_t t0)
{
	struct aio *a = c->priv;

	(void)t0;
	a->fd = fd;
	engine_waker_start(&a->waker);
	return 0;
}

static void aio_stop(struct engine_ctx *c)
{
	struct aio *a = c->priv;
	engine_waker_stop(&a->waker);
}

static int aio_submit(struct engine_ctx *c, struct engine_slot **v, unsigned n)
{
	struct aio *a = c->priv;

	for (unsigned i = 0; i < n; i++) {
		struct engine_slot *sl = v[i];
		struct iocb *io = &a->iocbs[sl->index];
		if (sl->is_write)
			io_prep_pwrite(io, a->fd, sl->buf, sl->len, (long long)sl->offset);
		else
			io_prep_pread(io, a->fd, sl->rbuf, sl->len, (long long)sl->offset);
		io->data = sl;
		a->vec[i] = io;
	}
	return io_submit(a->io, (long)n, a->vec);
}

/* Take completions straight from the mapped ring: no system call when the
 * kernel has already posted them. Returns how many were taken. */
static unsigned ring_reap(struct engine_ctx *c, struct aio *a, unsigned max)
{
	struct aio_ring *ring = (struct aio_ring *)a->io;
	unsigned n = 0;

	if (!ring || ring->magic != AIO_RING_MAGIC || ring->incompat_features)
		return 0;
	unsigned head = ring->head;
	unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	while (head != tail && n < max) {
		const struct io_event *ev = &ring->io_events[head];
		c->done[n++] = (struct engine_done){ .sl = ev->data, .res = (long)ev->res };
		head = (head + 1) % ring->nr;
	}
	if (n)
		__atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
	return n;
}

/* Wait in io_getevents for at least min: the kernel wakes a waiter once
 * min have arrived, not at each one. Returns the count (0 when woken
 * without completions) or -errno. */
static int aio_wait(struct aio *a, unsigned min, unsigned max)
{
	int ret;

	if (a->waker.waking) {
		if (engine_wake_take())
			return 0;
		ret = io_getevents(a->io, (long)min, (long)max, a->events, NULL);
		if (ret == -EINTR)
			engine_wake_clear();
	} else {
		struct timespec ts = { 0, ENGINE_WAKE_NS };
		ret = io_getevents(a->io, (long)min, (long)max, a->events, &ts);
	}
	return ret == -EINTR ? 0 : ret;
}

/* What the ring holds, then waits until min are taken (the waker bounds
 * each wait). */
static int aio_reap(struct engine_ctx *c, unsigned min, unsigned max)
{
	struct aio *a = c->priv;
	unsigned n = ring_reap(c, a, max);

	while (n < min) {
		int ret = aio_wait(a, min - n, max - n);
		if (ret <= 0)
			return n ? (int)n : ret; /* woken (0), or the error again later */
		for (int i = 0; i < ret; i++)
			c->done[n + (unsigned)i] =
				(struct engine_done){ .sl = a->events[i].data,
						      .res = (long)a->events[i].res };
		n += (unsigned)ret;
	}
	return (int)n;
}

const struct engine_ops engine_libaio_ops = {
	.name = "libaio",
	.moves_data = 1,
	.for_auto = 1,
	.queued = 1,
	.open = aio_open,
	.close = aio_close,
	.now = aio_now,
	.start = aio_start,
	.stop = aio_stop,
	.submit = aio_submit,
	.reap = aio_reap,
};
