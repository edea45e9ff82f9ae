/* engine_uring: io_uring through liburing on O_DIRECT. The phase's file
 * and every slot's buffer are registered with the ring once, so that an
 * I/O neither looks its file up nor pins its pages again (IORING_OP_WRITE_FIXED,
 * READ_FIXED on a fixed file); a batch is one io_uring_submit, and
 * completions are taken from the mapped ring many at a time, with a system
 * call only to wait when none is there (woken by the waker, engine_wake.h).
 * Optionally a kernel thread takes the submissions (SQPOLL), so that a
 * submission costs no system call, at the price of that thread's CPU. */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "base/util.h"
#include "io/engine_ops.h"
#include "io/engine_wake.h"

/* How long the SQPOLL thread spins without work before it sleeps: covers
 * the gaps of a running phase, not the waits between phases. */
#define SQPOLL_IDLE_MS 100

/* The most buffer memory registered with a ring. Registering pins every
 * page at once: 2.5 GiB (16 MiB blocks at queue depth 128 with their
 * spares) took 0.15-0.87 s in one system call that a stop cannot cut
 * short, and would stay locked for the whole run. Over this, the I/Os go
 * unregistered, their pages pinned per I/O, which at such block sizes
 * costs little against the transfer (wearmond(8), ENGINES). */
#define REGISTER_MAX_BYTES (256u << 20)

struct uring {
	struct io_uring ring;
	int fd;         /* the phase's */
	int fixed_file; /* fd is the ring's registered file 0 */
	int files_ok;   /* the ring has a registered file table */
	int bufs_ok;    /* the slots' buffers are registered */
	int broken;     /* a submission failed with SQEs left in the ring */
	struct io_uring_cqe **cqes;
	struct engine_waker waker;
};

/* Why io_uring_setup said no, in why. */
static void refusal(int err, char *why, size_t len)
{
	char dis[16] = "";
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");

	if (f) {
		if (!fgets(dis, sizeof(dis), f))
			dis[0] = '\0';
		fclose(f);
		dis[strcspn(dis, "\n")] = '\0';
	}
	if (err == ENOSYS)
		snprintf(why, len, "io_uring_setup: ENOSYS, not in this kernel");
	else if (err == EPERM && dis[0] && strcmp(dis, "0"))
		snprintf(why, len, "io_uring_setup: EPERM, kernel.io_uring_disabled = %s", dis);
	else if (err == EPERM)
		snprintf(why, len,
			 "io_uring_setup: EPERM, a seccomp filter (a unit's SystemCallFilter?)");
	else
		snprintf(why, len, "io_uring_setup: %s", strerror(err));
}

/* A ring set up and closed, and the operations this engine issues
 * supported by it. */
static int uring_probe(char *why, size_t len)
{
	static const int ops[] = { IORING_OP_WRITE_FIXED, IORING_OP_READ_FIXED, IORING_OP_WRITE,
				   IORING_OP_READ };
	struct io_uring ring;
	int ret = io_uring_queue_init(1, &ring, 0);

	if (ret < 0) {
		refusal(-ret, why, len);
		return ret;
	}
	struct io_uring_probe *p = io_uring_get_probe_ring(&ring);
	ret = p ? 0 : -EOPNOTSUPP;
	for (size_t i = 0; p && i < sizeof(ops) / sizeof(ops[0]) && !ret; i++)
		if (!io_uring_opcode_supported(p, ops[i]))
			ret = -EOPNOTSUPP;
	io_uring_free_probe(p);
	io_uring_queue_exit(&ring);
	if (ret)
		snprintf(why, len, "the kernel's io_uring lacks a read or write operation");
	else
		snprintf(why, len, "io_uring_setup works here");
	return ret;
}

/* Register the slots' write buffers (and the read buffers, once a mixed
 * phase has them): an I/O's buffer is then index slot (or nslots + slot).
 * Pinned pages count against RLIMIT_MEMLOCK without CAP_IPC_LOCK; when
 * that refuses, or they are more than REGISTER_MAX_BYTES (-EFBIG), the
 * I/Os go unregistered. Returns 0 or -errno. */
static int register_bufs(struct engine_ctx *c, struct uring *u)
{
	unsigned n = c->rmem ? 2 * c->nslots : c->nslots;
	struct iovec *iov;
	int ret;

	if (u->bufs_ok)
		io_uring_unregister_buffers(&u->ring);
	u->bufs_ok = 0;
	if ((uint64_t)n * c->max_bs > REGISTER_MAX_BYTES)
		return -EFBIG;
	iov = calloc(n, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		char *base = i < c->nslots ? c->mem : c->rmem;
		iov[i].iov_base = base + (size_t)(i % c->nslots) * c->max_bs;
		iov[i].iov_len = c->max_bs;
	}
	ret = io_uring_register_buffers(&u->ring, iov, n);
	u->bufs_ok = ret == 0;
	free(iov);
	return ret;
}

/* What was set up, after the engine's name in c->note. */
static void note_setup(struct engine_ctx *c, const struct uring *u, int bufs_err, int sqpoll)
{
	size_t at = strlen(c->note);
	char bufs[80] = "registered buffers";

	if (!u->bufs_ok && bufs_err == -EFBIG)
		snprintf(bufs, sizeof(bufs),
			 "unregistered buffers (%llu MiB, over the %u MiB pinned at most)",
			 (unsigned long long)c->nslots * c->max_bs >> 20, REGISTER_MAX_BYTES >> 20);
	else if (!u->bufs_ok)
		snprintf(bufs, sizeof(bufs), "unregistered buffers (%s)", strerror(-bufs_err));
	snprintf(c->note + at, sizeof(c->note) - at, ", %s file, %s, SQPOLL %s",
		 u->files_ok ? "registered" : "unregistered", bufs, sqpoll ? "on" : "off");
}

/* The ring, sized for the queue. Completions are run when the thread next
 * enters the kernel rather than by interrupting it (COOP_TASKRUN, 5.19:
 * the thread enters to wait anyway), with a flag that makes the peek
 * enter when some are pending (TASKRUN_FLAG); an older kernel refuses the
 * flags and gets the plain ring. Returns 0 or -errno. */
static int ring_init(struct uring *u, const struct engine_opts *o)
{
	struct io_uring_params par;
	unsigned coop = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
	int ret;

	for (int i = 0; i < 2; i++) {
		memset(&par, 0, sizeof(par));
		if (o->sqpoll) {
			par.flags |= IORING_SETUP_SQPOLL;
			par.sq_thread_idle = SQPOLL_IDLE_MS;
		} else if (!i) {
			par.flags |= coop;
		}
		ret = io_uring_queue_init_params(o->max_qd, &u->ring, &par);
		if (ret != -EINVAL || !(par.flags & coop))
			return ret;
	}
	return ret;
}

static void uring_close(struct engine_ctx *c)
{
	struct uring *u = c->priv;

	if (!u)
		return;
	if (u->ring.ring_fd >= 0)
		io_uring_queue_exit(&u->ring);
	free(u->cqes);
	free(u);
	c->priv = NULL;
}

static int uring_open(struct engine_ctx *c, const struct engine_opts *o)
{
	struct uring *u = calloc(1, sizeof(*u));
	int none = -1, ret;

	c->priv = u;
	if (!u)
		return -ENOMEM;
	u->ring.ring_fd = -1;
	u->cqes = calloc(o->max_qd, sizeof(*u->cqes));
	if (!u->cqes) {
		uring_close(c);
		return -ENOMEM;
	}
	ret = ring_init(u, o);
	if (ret < 0) {
		u->ring.ring_fd = -1;
		uring_close(c);
		return ret;
	}
	/* one file slot, empty until a phase puts its descriptor there */
	u->files_ok = io_uring_register_files(&u->ring, &none, 1) == 0;
	ret = register_bufs(c, u);
	note_setup(c, u, ret, o->sqpoll);
	return 0;
}

/* Mixed phases' read buffers join the registered ones; when they cannot,
 * every I/O goes unregistered. */
static int uring_buffers(struct engine_ctx *c)
{
	register_bufs(c, c->priv);
	return 0;
}

static uint64_t uring_now(const struct engine_ctx *c)
{
	(void)c;
	return util_now_ns();
}

static int uring_start(struct engine_ctx *c, int fd, uint64_t t0)
{
	struct uring *u = c->priv;

	(void)t0;
	if (u->broken)
		return -EIO;
	u->fd = fd;
	u->fixed_file = u->files_ok && io_uring_register_files_update(&u->ring, 0, &fd, 1) == 1;
	engine_waker_start(&u->waker);
	return 0;
}

/* The descriptor leaves the ring's table: the ring must not keep the
 * device open once the phase is over. */
static void uring_stop(struct engine_ctx *c)
{
	struct uring *u = c->priv;
	int none = -1;

	engine_waker_stop(&u->waker);
	if (u->fixed_file)
		io_uring_register_files_update(&u->ring, 0, &none, 1);
	u->fixed_file = 0;
}

/* One I/O into an SQE. */
static void prep(struct uring *u, struct io_uring_sqe *sqe, const struct engine_ctx *c,
		 struct engine_slot *sl)
{
	int fd = u->fixed_file ? 0 : u->fd;
	void *buf = sl->is_write ? sl->buf : sl->rbuf;

	if (u->bufs_ok) {
		int idx = (int)sl->index + (buf == sl->buf ? 0 : (int)c->nslots);
		if (sl->is_write)
			io_uring_prep_write_fixed(sqe, fd, buf, sl->len, sl->offset, idx);
		else
			io_uring_prep_read_fixed(sqe, fd, buf, sl->len, sl->offset, idx);
	} else if (sl->is_write) {
		io_uring_prep_write(sqe, fd, buf, sl->len, sl->offset);
	} else {
		io_uring_prep_read(sqe, fd, buf, sl->len, sl->offset);
	}
	if (u->fixed_file)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data(sqe, sl);
}

/* Every SQE that the ring has room for, then one io_uring_submit. An SQE
 * the kernel did not take at once stays in the ring and goes with the
 * next submission or wait, so it counts as taken; only a failure of the
 * ring itself is an error (then the ring is not used again). */
static int uring_submit(struct engine_ctx *c, struct engine_slot **v, unsigned n)
{
	struct uring *u = c->priv;
	unsigned i = 0;

	for (; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
		if (!sqe)
			break;
		prep(u, sqe, c, v[i]);
	}
	if (!i)
		return -EAGAIN;
	int ret = io_uring_submit(&u->ring);
	if (ret < 0 && ret != -EAGAIN && ret != -EBUSY && ret != -EINTR) {
		u->broken = 1;
		return ret;
	}
	return (int)i;
}

/* The completions the ring holds, into c->done from at, c->done holding
 * at most max. */
static unsigned take(struct engine_ctx *c, struct uring *u, unsigned at, unsigned max)
{
	unsigned n = io_uring_peek_batch_cqe(&u->ring, u->cqes, max - at);

	for (unsigned i = 0; i < n; i++)
		c->done[at + i] = (struct engine_done){ .sl = io_uring_cqe_get_data(u->cqes[i]),
							.res = u->cqes[i]->res };
	io_uring_cq_advance(&u->ring, n);
	return n;
}

/* Wait for min completions, SQEs left in the ring going with the call;
 * the waker (or a timeout without it) ends the wait. Returns 0 or -errno
 * (-EINTR, -ETIME when woken). */
static int uring_wait(struct uring *u, unsigned min)
{
	struct io_uring_cqe *cqe;

	if (!u->waker.waking) {
		struct __kernel_timespec ts = { 0, ENGINE_WAKE_NS };
		int ret = io_uring_submit_and_wait_timeout(&u->ring, &cqe, min, &ts, NULL);
		return ret < 0 ? ret : 0;
	}
	if (engine_wake_take())
		return -EINTR;
	int ret = io_uring_sq_ready(&u->ring) ? io_uring_submit_and_wait(&u->ring, min)
					      : io_uring_wait_cqes(&u->ring, &cqe, min, NULL, NULL);
	if (ret == -EINTR)
		engine_wake_clear();
	return ret < 0 ? ret : 0;
}

static int uring_reap(struct engine_ctx *c, unsigned min, unsigned max)
{
	struct uring *u = c->priv;
	unsigned n = take(c, u, 0, max);

	while (n < min) {
		int ret = uring_wait(u, min - n);
		if (ret == -EINTR || ret == -ETIME || ret == -EAGAIN || ret == -EBUSY)
			return (int)n;
		if (ret < 0)
			return n ? (int)n : ret; /* the error again at the next wait */
		n += take(c, u, n, max);
	}
	return (int)n;
}

const struct engine_ops engine_io_uring_ops = {
	.name = "io_uring",
	.moves_data = 1,
	.for_auto = 1,
	.queued = 1,
	.probe = uring_probe,
	.open = uring_open,
	.close = uring_close,
	.buffers = uring_buffers,
	.now = uring_now,
	.start = uring_start,
	.stop = uring_stop,
	.submit = uring_submit,
	.reap = uring_reap,
};
