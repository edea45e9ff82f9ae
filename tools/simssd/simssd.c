/* simssd: a simulated SSD as a FUSE file system (disk.img, control, stats)
 * that a loop device attaches to; flash timing comes from ftl.c. */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compress.h"
#include "ctl.h"
#include "ftl.h"
#include "opts.h"
#include "store.h"
#include "thermal.h"

/* Exit codes. */
#define EXIT_RUNTIME 1 /* could not mount or serve */
#define EXIT_USAGE 2   /* bad options */

#define STATS_MAX 4096
#define CONTROL_MAX 4096
#define CHUNK_PAGES 256 /* pages per FTL call; bounds the units array */
#define MAX_WRITE (1u << 20)

enum { INO_ROOT = 1, INO_DISK, INO_CONTROL, INO_STATS, INO_IDENTITY, INO_END };

static const struct node {
	const char *name;
	mode_t mode;
} nodes[INO_END] = {
	[INO_ROOT] = { ".", S_IFDIR | 0755 },
	[INO_DISK] = { "disk.img", S_IFREG | 0600 },
	[INO_CONTROL] = { "control", S_IFREG | 0200 },
	[INO_STATS] = { "stats", S_IFREG | 0444 },
	[INO_IDENTITY] = { "identity", S_IFREG | 0444 },
};

struct sim {
	struct simssd_opts opts;
	struct ftl_config cfg;
	struct ftl *ftl;          /* under lock */
	struct ctl_faults faults; /* under lock */
	struct thermal thermal;   /* under lock */
	struct store store;       /* data: no lock, like a drive's media */
	pthread_mutex_t lock;     /* never held while sleeping */
	pthread_cond_t wake;      /* held stats opens: interrupted, or faults cleared */
	uint64_t cleared;         /* "fault clear" count, under lock */
	struct fuse_session *se;
	time_t mounted_at;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Hold the request until the simulated flash is done with it. */
static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int check_io(struct sim *s, enum ctl_op op, uint64_t off, uint64_t len, uint64_t *delay)
{
	int r;

	pthread_mutex_lock(&s->lock);
	r = ctl_check_io(&s->faults, op, off, len, delay);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static void fill_attr(const struct sim *s, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = nodes[ino].mode;
	st->st_nlink = ino == INO_ROOT ? 2 : 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_blksize = (blksize_t)s->opts.page;
	st->st_atime = st->st_mtime = st->st_ctime = s->mounted_at;
	if (ino == INO_DISK) {
		st->st_size = (off_t)s->opts.capacity;
		st->st_blocks = (blkcnt_t)(s->opts.capacity / 512);
	}
}

/* Visible names; a vanished drive's image is gone from the directory. */
static int visible(struct sim *s, fuse_ino_t ino)
{
	int gone;

	if (ino != INO_DISK)
		return 1;
	pthread_mutex_lock(&s->lock);
	gone = s->faults.vanished;
	pthread_mutex_unlock(&s->lock);
	return !gone;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sim *s = fuse_req_userdata(req);
	struct fuse_entry_param e;
	fuse_ino_t i;

	for (i = INO_DISK; i < INO_END; i++) {
		if (parent != INO_ROOT || strcmp(name, nodes[i].name) || !visible(s, i))
			continue;
		memset(&e, 0, sizeof(e));
		e.ino = i;
		e.attr_timeout = 1.0;
		e.entry_timeout = 1.0;
		fill_attr(s, i, &e.attr);
		fuse_reply_entry(req, &e);
		return;
	}
	fuse_reply_err(req, ENOENT);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	if (ino < INO_ROOT || ino >= INO_END) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(fuse_req_userdata(req), ino, &st);
	fuse_reply_attr(req, &st, 1.0);
}

/* Only no-op size changes: "echo cmd > control" truncates, the drive does not. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct sim *s = fuse_req_userdata(req);
	struct stat st;

	if (ino < INO_ROOT || ino >= INO_END) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if ((to_set & FUSE_SET_ATTR_SIZE) && ino == INO_DISK &&
	    (uint64_t)attr->st_size != s->opts.capacity) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fill_attr(s, ino, &st);
	fuse_reply_attr(req, &st, 1.0);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct sim *s = fuse_req_userdata(req);
	char buf[1024];
	size_t used = 0;
	struct stat st;
	fuse_ino_t i;

	if (ino != INO_ROOT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (size > sizeof(buf))
		size = sizeof(buf);
	/* Offsets are inode numbers: entry i is followed by i + 1. */
	for (i = (fuse_ino_t)off + 1; i < INO_END; i++) {
		const char *name = i == INO_ROOT ? "." : nodes[i].name;
		size_t n;

		if (!visible(s, i))
			continue;
		fill_attr(s, i, &st);
		n = fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t)i);
		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

/* FUSE interrupt callback: the opener of a held stats file got a signal
 * (or is exiting); wake the waiters so it can check. */
static void wake_held(fuse_req_t req, void *data)
{
	struct sim *s = data;

	pthread_mutex_lock(&s->lock);
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

/* Hold an open of stats as "fault stats-latency" asks (a drive slow to
 * answer a health query): until the time is up or the faults are cleared,
 * or until the kernel interrupts the request, as a drive's command would
 * be aborted. Returns 0, or EINTR when interrupted. */
static int hold_stats(struct sim *s, fuse_req_t req)
{
	uint64_t delay, until, cleared;
	int r = 0;

	fuse_req_interrupt_func(req, wake_held, s); /* may call it now: before the lock */
	pthread_mutex_lock(&s->lock);
	delay = ctl_stats_delay(&s->faults);
	until = now_ns() + delay;
	cleared = s->cleared;
	while (delay && s->cleared == cleared && now_ns() < until) {
		struct timespec ts = { (time_t)(until / 1000000000ull),
				       (long)(until % 1000000000ull) };

		if (fuse_req_interrupted(req)) {
			r = EINTR;
			break;
		}
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sim *s = fuse_req_userdata(req);
	struct ftl_stats st;
	char *text;

	if (ino == INO_ROOT || ino >= INO_END) {
		fuse_reply_err(req, ino == INO_ROOT ? EISDIR : ENOENT);
		return;
	}
	/* No page cache: every read and write must reach the simulated flash
	 * (timing, faults), and stats must be fresh. */
	fi->direct_io = 1;
	fi->fh = 0;
	if (ino == INO_STATS) {
		int r = hold_stats(s, req);

		if (r) {
			fuse_reply_err(req, r);
			return;
		}
		text = malloc(STATS_MAX);
		if (!text) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		pthread_mutex_lock(&s->lock);
		ftl_idle(s->ftl, now_ns()); /* what background GC did up to now */
		ftl_get_stats(s->ftl, &st);
		size_t n = ctl_format_stats(&s->cfg, &st, &s->faults, s->opts.compress, text,
					    STATS_MAX);
		thermal_advance(&s->thermal, now_ns());
		thermal_format(&s->thermal, text + n, STATS_MAX - n);
		pthread_mutex_unlock(&s->lock);
		fi->fh = (uint64_t)(uintptr_t)text;
	} else if (ino == INO_IDENTITY) {
		/* what a drive's identify data says: answered at once, never
		 * held like a health query */
		text = malloc(STATS_MAX);
		if (!text) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		opts_format_identity(&s->opts, text, STATS_MAX);
		fi->fh = (uint64_t)(uintptr_t)text;
	}
	fuse_reply_open(req, fi);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == INO_STATS || ino == INO_IDENTITY)
		free((char *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void disk_read(fuse_req_t req, struct sim *s, size_t size, uint64_t off)
{
	uint64_t done, delay;
	int r;

	if (off >= s->opts.capacity) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > s->opts.capacity - off)
		size = s->opts.capacity - off;
	r = check_io(s, CTL_OP_READ, off, size, &delay);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	pthread_mutex_lock(&s->lock);
	ftl_read(s->ftl, off, size, now_ns(), &done);
	pthread_mutex_unlock(&s->lock);
	sleep_until(done + delay);
	fuse_reply_buf(req, (const char *)s->store.base + off, size);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	const char *text = (const char *)(uintptr_t)fi->fh;
	size_t len;

	if (ino == INO_DISK) {
		disk_read(req, fuse_req_userdata(req), size, (uint64_t)off);
		return;
	}
	if ((ino != INO_STATS && ino != INO_IDENTITY) || !text) {
		fuse_reply_err(req, EBADF);
		return;
	}
	len = strlen(text);
	if ((uint64_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, text + off,
			       len - (size_t)off < size ? len - (size_t)off : size);
}

/* Hand [off, off+len) (at most CHUNK_PAGES pages) to the FTL; with
 * compression each page's cost comes from its stored (merged) contents. */
static int ftl_write_chunk(struct sim *s, uint64_t off, uint64_t len, uint64_t now, uint64_t *ack)
{
	uint8_t units[CHUNK_PAGES];
	uint64_t page = s->opts.page, p, first = off / page;
	uint64_t last = (off + len - 1) / page;
	int r;

	for (p = first; s->opts.compress && p <= last; p++)
		units[p - first] = (uint8_t)cmp_units(s->store.base + p * page, page, FTL_UNIT);
	pthread_mutex_lock(&s->lock);
	r = ftl_write(s->ftl, off, len, s->opts.compress ? units : NULL, now, ack);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int disk_write(struct sim *s, const char *buf, size_t size, uint64_t off)
{
	uint64_t now = now_ns(), end = off + size, page = s->opts.page;
	uint64_t delay, ack, latest = now, pos, stop;
	int r;

	if (off > s->opts.capacity || size > s->opts.capacity - off)
		return -ENOSPC;
	r = check_io(s, CTL_OP_WRITE, off, size, &delay);
	if (r < 0 || size == 0)
		return r;
	memcpy(s->store.base + off, buf, size);
	for (pos = off; pos < end; pos = stop) {
		stop = (pos / page + CHUNK_PAGES) * page;
		stop = stop < end ? stop : end;
		r = ftl_write_chunk(s, pos, stop - pos, now, &ack);
		if (r < 0)
			return r;
		latest = ack > latest ? ack : latest;
	}
	pthread_mutex_lock(&s->lock);
	uint64_t cool = thermal_write(&s->thermal, size, now);
	pthread_mutex_unlock(&s->lock);
	sleep_until((cool > latest ? cool : latest) + delay);
	return 0;
}

static int run_command(struct sim *s, const char *line)
{
	struct ctl_cmd cmd;
	uint64_t done;
	int r = ctl_parse(line, &cmd);

	if (r < 0) {
		fuse_log(FUSE_LOG_WARNING, "simssd: bad control command: %s\n", line);
		return r;
	}
	pthread_mutex_lock(&s->lock);
	if (cmd.kind == CTL_SECURE_ERASE)
		r = ftl_secure_erase(s->ftl, now_ns(), &done);
	else if (cmd.kind == CTL_HEAT)
		thermal_spike(&s->thermal, cmd.heat_c, cmd.latency_ns, now_ns());
	else
		r = ctl_apply(&s->faults, &cmd);
	if (r == 0 && cmd.kind == CTL_CLEAR) {
		s->cleared++;
		pthread_cond_broadcast(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
	if (r == 0 && cmd.kind == CTL_SECURE_ERASE) {
		r = store_punch(&s->store, 0, s->opts.capacity);
		sleep_until(done);
	}
	/* Drop the kernel's cached name so the image is gone at once, not
	 * when the entry times out. */
	if (r == 0 && cmd.kind == CTL_VANISH)
		fuse_lowlevel_notify_inval_entry(s->se, INO_ROOT, nodes[INO_DISK].name,
						 strlen(nodes[INO_DISK].name));
	return r;
}

/* One command per line; the first failure fails the write. */
static int control_write(struct sim *s, const char *buf, size_t size)
{
	char text[CONTROL_MAX + 1], *line, *save = NULL;
	int r;

	if (size > CONTROL_MAX)
		return -EINVAL;
	memcpy(text, buf, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		r = run_command(s, line);
		if (r < 0)
			return r;
	}
	return 0;
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct sim *s = fuse_req_userdata(req);
	int r;

	if (ino == INO_DISK)
		r = disk_write(s, buf, size, (uint64_t)off);
	else if (ino == INO_CONTROL)
		r = control_write(s, buf, size);
	else
		r = -EBADF;
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_write(req, size);
}

/* The loop driver turns BLKDISCARD into PUNCH_HOLE and write-zeroes into
 * ZERO_RANGE; both deallocate here (reads of unmapped pages return zeros),
 * as on most SSDs. Plain allocation is a no-op: the drive is full size. */
static int disk_fallocate(struct sim *s, int mode, uint64_t off, uint64_t len)
{
	const int known = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
	uint64_t done, delay;
	int r;

	if (mode & ~known)
		return -EOPNOTSUPP;
	if (off > s->opts.capacity || len > s->opts.capacity - off)
		return (mode & FALLOC_FL_KEEP_SIZE) ? -EINVAL : -EFBIG;
	if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		return 0;
	r = check_io(s, CTL_OP_TRIM, off, len, &delay);
	if (r < 0)
		return r;
	pthread_mutex_lock(&s->lock);
	r = ftl_trim(s->ftl, off, len, now_ns(), &done);
	pthread_mutex_unlock(&s->lock);
	if (r == 0)
		r = store_punch(&s->store, off, len);
	sleep_until(done + delay);
	return r;
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	int r = ino == INO_DISK
			? disk_fallocate(fuse_req_userdata(req), mode, (uint64_t)off, (uint64_t)len)
			: -EOPNOTSUPP;

	fuse_reply_err(req, -r);
}

/* fsync drains the write cache: the data is on flash when it returns. */
static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct sim *s = fuse_req_userdata(req);
	uint64_t done = 0, delay = 0;
	int r = 0;

	if (ino == INO_DISK) {
		r = check_io(s, CTL_OP_WRITE, 0, 0, &delay);
		pthread_mutex_lock(&s->lock);
		ftl_flush(s->ftl, now_ns(), &done);
		pthread_mutex_unlock(&s->lock);
		sleep_until(done + delay);
	}
	fuse_reply_err(req, -r);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct sim *s = fuse_req_userdata(req);
	struct statvfs st;

	/* The loop driver takes its discard granularity from f_bsize. */
	memset(&st, 0, sizeof(st));
	st.f_bsize = st.f_frsize = s->opts.page;
	st.f_blocks = s->opts.capacity / s->opts.page;
	st.f_files = INO_END - 1;
	st.f_namemax = 255;
	fuse_reply_statfs(req, &st);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	/* Large writes keep the per-request FUSE cost small next to flash
	 * time; async DIO lets the loop driver keep several reads in flight. */
	conn->max_write = MAX_WRITE;
	conn->max_background = 64;
	conn->congestion_threshold = 48;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
}

static const struct fuse_lowlevel_ops sim_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readdir = op_readdir,
	.open = op_open,
	.release = op_release,
	.read = op_read,
	.write = op_write,
	.fallocate = op_fallocate,
	.fsync = op_fsync,
	.flush = op_flush,
	.statfs = op_statfs,
};

/* fuse_opt callback: our -o keys go to the table, the rest stay for FUSE. */
static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct sim *s = data;
	int r;

	if (key != FUSE_OPT_KEY_OPT)
		return 1;
	r = opts_set(&s->opts, arg);
	if (r == -ENOENT)
		return 1;
	if (r < 0) {
		fprintf(stderr, "simssd: option %s: %s\n", arg, strerror(-r));
		return -1;
	}
	return 0;
}

static void usage(const char *prog)
{
	printf("usage: %s MOUNTPOINT [-f] [-o name=value,...]\n"
	       "Simulated SSD: MOUNTPOINT/disk.img (attach with losetup), "
	       "MOUNTPOINT/control, MOUNTPOINT/stats.\n\n",
	       prog);
	opts_help(stdout);
	printf("\nFUSE options:\n");
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

/* Parse the command line and build the drive. Returns 0, or an exit code. */
static int setup(struct sim *s, struct fuse_args *args, struct fuse_cmdline_opts *c)
{
	const char *why;
	struct thermal_config tc;
	int r;

	if (opts_defaults(&s->opts) < 0 || fuse_opt_parse(args, s, NULL, opt_proc) < 0 ||
	    fuse_parse_cmdline(args, c) != 0)
		return EXIT_USAGE;
	if (c->show_help || c->show_version) {
		if (c->show_help)
			usage(args->argv[0]);
		else
			printf("simssd (FUSE %s)\n", fuse_pkgversion());
		return -1;
	}
	if (!c->mountpoint) {
		fprintf(stderr, "simssd: no mount point (see --help)\n");
		return EXIT_USAGE;
	}
	opts_to_ftl(&s->opts, &s->cfg);
	if (ftl_config_check(&s->cfg, &why) < 0) {
		fprintf(stderr, "simssd: bad geometry: %s\n", why);
		return EXIT_USAGE;
	}
	r = ftl_create(&s->cfg, &s->ftl);
	if (r == 0)
		r = store_open(&s->store, s->opts.store, s->opts.capacity);
	if (r < 0) {
		fprintf(stderr, "simssd: %s\n", strerror(-r));
		return EXIT_RUNTIME;
	}
	opts_to_thermal(&s->opts, &tc);
	thermal_init(&s->thermal, &tc, now_ns());
	s->mounted_at = time(NULL);
	return 0;
}

static int serve(struct sim *s, struct fuse_args *args, struct fuse_cmdline_opts *c)
{
	struct fuse_loop_config *lc = NULL;
	struct fuse_session *se;
	int r = EXIT_RUNTIME;

	se = fuse_session_new(args, &sim_ops, sizeof(sim_ops), s);
	if (!se)
		return EXIT_USAGE;
	s->se = se;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, c->mountpoint) != 0)
		goto out_signals;
	fuse_daemonize(c->foreground);
	if (c->singlethread) {
		r = fuse_session_loop(se) ? EXIT_RUNTIME : 0;
	} else {
		lc = fuse_loop_cfg_create();
		if (lc) {
			fuse_loop_cfg_set_max_threads(lc, c->max_threads);
			if (c->max_idle_threads != UINT_MAX) /* UINT_MAX: not given */
				fuse_loop_cfg_set_idle_threads(lc, c->max_idle_threads);
			fuse_loop_cfg_set_clone_fd(lc, (unsigned)c->clone_fd);
			r = fuse_session_loop_mt(se, lc) ? EXIT_RUNTIME : 0;
		}
	}
	if (lc)
		fuse_loop_cfg_destroy(lc);
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
	return r;
}

/* The condition held stats opens wait on, timed on CLOCK_MONOTONIC like
 * everything else here. Returns 0 or an errno. */
static int wake_init(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int r = pthread_condattr_init(&a);

	if (r == 0)
		r = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (r == 0)
		r = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return r;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_cmdline_opts copts;
	struct sim s;
	int i, r = 0;

	memset(&s, 0, sizeof(s));
	memset(&copts, 0, sizeof(copts));
	s.store.fd = -1;
	pthread_mutex_init(&s.lock, NULL);
	if (wake_init(&s.wake)) {
		fprintf(stderr, "simssd: cannot make a condition variable\n");
		return EXIT_RUNTIME;
	}
	/* Sleeping requests each hold a thread, so FUSE's default of 10 would
	 * cap the queue depth; a later -o max_threads= still wins. */
	for (i = 0; i < argc && r == 0; i++) {
		r = fuse_opt_add_arg(&args, argv[i]);
		if (r == 0 && i == 0)
			r = fuse_opt_add_arg(&args, "-omax_threads=64");
	}
	r = r < 0 ? EXIT_RUNTIME : setup(&s, &args, &copts);
	if (r == 0)
		r = serve(&s, &args, &copts);
	store_close(&s.store);
	ftl_destroy(s.ftl);
	opts_free(&s.opts);
	free(copts.mountpoint);
	fuse_opt_free_args(&args);
	pthread_mutex_destroy(&s.lock);
	pthread_cond_destroy(&s.wake);
	return r < 0 ? 0 : r;
}
