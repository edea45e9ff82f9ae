/* devpoll: reads a drive's logs (NVMe SMART/Health and OCP C0h, ATA SMART
 * and Device Statistics, SCSI log pages, the counters file) at an
 * iteration's start, every few seconds during it and at its end, in a
 * thread of its own (the reason is wear_health.c's: a read sleeping in the
 * kernel cannot see a stop). Why a figure is missing is logged (devnote.h). */
#include "device/devpoll.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "device/ata.h"
#include "device/devnote.h"
#include "device/nvme.h"
#include "device/scsi_log.h"
#include "device/wear.h"

static int is_nvme(const struct tgt *tg)
{
	return tg->is_block && !strncmp(tg->sysname, "nvme", 4);
}

/* An ATA disk (also behind SAT); a native SCSI disk is read by read_scsi. */
static int is_sd(const struct tgt *tg)
{
	return tg->is_block && !strncmp(tg->sysname, "sd", 2) && tg->proto != TGT_PROTO_SCSI;
}

static int is_scsi(const struct tgt *tg)
{
	return tg->is_block && tg->proto == TGT_PROTO_SCSI;
}

/* The counters file beside a loop device's image (wear.h). Returns 0 or
 * -ENOENT when tg has no image. */
static int counters_path(const struct tgt *tg, char *path, size_t len)
{
	char dir[PATH_MAX];
	if (!tg->is_block || !tg->backing_file[0])
		return -ENOENT;
	util_strlcpy(dir, tg->backing_file, sizeof(dir));
	snprintf(path, len, "%s/" WEAR_COUNTERS_FILE, dirname(dir));
	return 0;
}

int devpoll_has_source(const struct tgt *tg)
{
	char path[PATH_MAX + 8];
	if (is_nvme(tg) || is_sd(tg) || is_scsi(tg))
		return 1;
	return !counters_path(tg, path, sizeof(path)) && access(path, R_OK) == 0;
}

static void read_counters(const struct tgt *tg, struct devstat *d)
{
	char path[PATH_MAX + 8], text[4096];
	if (counters_path(tg, path, sizeof(path)))
		return;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	devstat_parse_counters(text, d);
}

static void read_nvme(int fd, struct devstat *d, char *note, size_t len)
{
	struct nvme_health h;
	struct devstat_ocp o;
	uint8_t buf[NVME_LOG_LEN];
	char err[256];
	if (nvme_smart_log(fd, &h, err, sizeof(err))) {
		devnote_add(note, len, "all figures: %s", err);
		return;
	}
	devstat_from_nvme(&h, d);
	/* another vendor's C0h (or none): the GUID check leaves media unknown */
	if (nvme_get_log(fd, DEVSTAT_OCP_LID, buf, err, sizeof(err)))
		devnote_add(note, len, "media bytes: no OCP extended SMART log: %s", err);
	else if (devstat_parse_ocp(buf, &o))
		devnote_add(note, len, "media bytes: log C0h is not the OCP extended SMART log");
	else
		devstat_from_ocp(&o, d);
}

static void read_ata(const struct tgt *tg, int fd, struct devstat *d, char *note, size_t len)
{
	struct ata_smart sm;
	struct devstat_ata a = { 0 };
	struct devstat_opt host = { 0, 0 }, media = { 0, 0 };
	uint8_t buf[ATA_SECTOR];
	char err[3][256] = { "", "", "" };
	int any = 0;
	static const uint8_t pages[] = { DEVSTAT_ATA_GENERAL, DEVSTAT_ATA_TEMP };
	const struct devnote_ata_reads r = { err[0], err[1], err[2],
					     devstat_attr_table_for(tg->model) };

	if (!ata_smart_read(fd, &sm, err[0], sizeof(err[0]))) {
		devstat_smart_writes(&sm, r.table, &host, &media);
		any = 1;
	}
	for (size_t i = 0; i < sizeof(pages); i++)
		if (!ata_read_log(fd, DEVSTAT_ATA_LOG, pages[i], buf, err[i + 1], sizeof(err[0])) &&
		    !devstat_parse_ata_page(buf, pages[i], &a))
			any = 1;
	if (any)
		devstat_from_ata(&a, tg->logical_block_size ? tg->logical_block_size : 512, &host,
				 &media, d);
	devnote_ata(d, &r, note, len);
}

static void read_scsi(int fd, struct devstat *d, char *note, size_t len)
{
	struct scsi_logs l;
	scsi_logs_read(fd, &l);
	scsi_logs_devstat(&l, d);
	scsi_logs_absent(&l, note, len);
}

void devpoll_read(const struct tgt *tg, struct devstat *d)
{
	char note[1024] = "";
	memset(d, 0, sizeof(*d));
	if (is_nvme(tg) || is_sd(tg) || is_scsi(tg)) {
		int fd = open(tg->real_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			if (is_nvme(tg))
				read_nvme(fd, d, note, sizeof(note));
			else if (is_scsi(tg))
				read_scsi(fd, d, note, sizeof(note));
			else
				read_ata(tg, fd, d, note, sizeof(note));
			close(fd);
		}
	}
	read_counters(tg, d);
	devnote_log(tg, note);
}

/* ---- the polling thread --------------------------------------------------- */

struct devpoll {
	pthread_mutex_t lock;
	pthread_cond_t cv; /* CLOCK_MONOTONIC */
	pthread_t thread;
	struct tgt tg; /* a copy: the caller's may be gone */
	double interval;
	const atomic_int *stop;
	int have_first, want_end, have_last, abandoned, want_now;
	struct devstat first, last;
	struct devstat_opt peak;   /* highest temperature of the polls between */
	struct devpoll_reading *v; /* every reading, oldest first */
	size_t n, cap;
	int oom; /* a reading could not be kept: the series is dropped */
};

static void poll_free(struct devpoll *p)
{
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cv);
	free(p->v);
	free(p);
}

/* Keep a reading begun at t (lock held). */
static void keep(struct devpoll *p, uint64_t t, const struct devstat *d)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct devpoll_reading *v = p->oom ? NULL : realloc(p->v, cap * sizeof(*v));
		if (!v) {
			p->oom = 1;
			return;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n].t_ns = t;
	p->v[p->n++].d = *d;
}

static void deadline(struct timespec *ts, double seconds)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	long ns = ts->tv_nsec + (long)((seconds - (double)(long)seconds) * 1e9);
	ts->tv_sec += (time_t)seconds + ns / 1000000000L;
	ts->tv_nsec = ns % 1000000000L;
}

/* Sleep (lock held) until the next poll is due, the end is asked for or
 * the caller left. */
static void wait_poll(struct devpoll *p)
{
	struct timespec ts;
	deadline(&ts, p->interval);
	while (!p->want_end && !p->abandoned && !p->want_now)
		if (pthread_cond_timedwait(&p->cv, &p->lock, &ts) == ETIMEDOUT)
			break;
}

static void *poll_main(void *arg)
{
	struct devpoll *p = arg;
	struct devstat d;
	uint64_t t = util_now_ns();

	devpoll_read(&p->tg, &d);
	pthread_mutex_lock(&p->lock);
	p->first = d;
	p->have_first = 1;
	keep(p, t, &d);
	pthread_cond_broadcast(&p->cv);
	for (;;) {
		wait_poll(p);
		if (p->abandoned)
			break;
		int end = p->want_end;
		p->want_now = 0;
		pthread_mutex_unlock(&p->lock);
		t = util_now_ns();
		devpoll_read(&p->tg, &d);
		pthread_mutex_lock(&p->lock);
		keep(p, t, &d);
		if (end) { /* a read begun after the end was asked */
			devstat_peak(&p->peak, &d);
			p->last = d;
			p->have_last = 1;
			pthread_cond_broadcast(&p->cv);
			break;
		}
		devstat_peak(&p->peak, &d);
	}
	int abandoned = p->abandoned;
	pthread_mutex_unlock(&p->lock);
	if (abandoned)
		poll_free(p);
	return NULL;
}

/* Wait (lock held) until *flag is set; a stop outlasting WEAR_STOP_GRACE
 * abandons the wait. Returns 0 or -EINTR. */
static int wait_flag(struct devpoll *p, const int *flag)
{
	double stop_seen = 0;
	while (!*flag) {
		struct timespec ts;
		if (p->stop && atomic_load(p->stop)) {
			if (stop_seen <= 0)
				stop_seen = util_now();
			else if (util_now() >= stop_seen + WEAR_STOP_GRACE)
				return -EINTR;
		}
		deadline(&ts, 0.05); /* the stop flag is polled */
		pthread_cond_timedwait(&p->cv, &p->lock, &ts);
	}
	return 0;
}

/* The caller leaves a thread still reading: it frees p when it ends. */
static void abandon(struct devpoll *p)
{
	p->abandoned = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_detach(p->thread);
	pthread_mutex_unlock(&p->lock);
}

static struct devpoll *poll_new(const struct tgt *tg, double interval_s, const atomic_int *stop)
{
	struct devpoll *p = calloc(1, sizeof(*p));
	pthread_condattr_t a;
	if (!p)
		return NULL;
	p->tg = *tg;
	p->interval = interval_s > 0 ? interval_s : DEVPOLL_INTERVAL;
	p->stop = stop;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &a);
	pthread_condattr_destroy(&a);
	return p;
}

int devpoll_begin(const struct tgt *tg, double interval_s, const atomic_int *stop,
		  struct devpoll **out)
{
	*out = NULL;
	if (!devpoll_has_source(tg))
		return 0;
	struct devpoll *p = poll_new(tg, interval_s, stop);
	if (!p)
		return -ENOMEM;
	int rc = pthread_create(&p->thread, NULL, poll_main, p);
	if (rc) {
		poll_free(p);
		return -rc;
	}
	pthread_mutex_lock(&p->lock);
	if (wait_flag(p, &p->have_first)) {
		abandon(p);
		return -EINTR;
	}
	pthread_mutex_unlock(&p->lock);
	*out = p;
	return 0;
}

void devpoll_mark(struct devpoll *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->want_now = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->lock);
}

void devpoll_end_series(struct devpoll *p, struct devstat_delta *out, struct devpoll_reading **v,
			size_t *n)
{
	struct devstat none = { 0 };
	if (v) {
		*v = NULL;
		*n = 0;
	}
	if (!p) {
		devstat_delta(&none, &none, (struct devstat_opt){ 0, 0 }, out);
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->want_end = 1;
	pthread_cond_broadcast(&p->cv);
	/* a stop cut the row short: its counters are not worth a wait that
	 * the stop's second cannot spare (the health snapshot after it has
	 * its own grace) */
	if ((p->stop && atomic_load(p->stop) && !p->have_last) || wait_flag(p, &p->have_last)) {
		abandon(p);
		devstat_delta(&none, &none, (struct devstat_opt){ 0, 0 }, out);
		return;
	}
	devstat_delta(&p->first, &p->last, p->peak, out);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	if (v && !p->oom) {
		*v = p->v;
		*n = p->n;
		p->v = NULL;
	}
	poll_free(p);
}

void devpoll_end(struct devpoll *p, struct devstat_delta *out)
{
	devpoll_end_series(p, out, NULL, NULL);
}

void devpoll_evidence(const struct devstat_delta *x, struct db_device_evidence *d)
{
	const struct devstat_opt res = { x->throttle_ms.has, x->throttle_res_ms };
	const struct devstat_opt secs = { x->throttle_ms.has, x->throttle_ms.v / 1000 };
	const struct devstat_opt *f[DB_DEV__COUNT] = {
		[DB_DEV_HOST_BYTES] = &x->host_bytes,     [DB_DEV_MEDIA_BYTES] = &x->media_bytes,
		[DB_DEV_PEAK_TEMP_C] = &x->peak_temp_c,   [DB_DEV_THROTTLE_S] = &secs,
		[DB_DEV_MEDIA_ERRORS] = &x->media_errors, [DB_DEV_SPARE_PCT] = &x->spare_pct,
		[DB_DEV_THROTTLE_MS] = &x->throttle_ms,   [DB_DEV_THROTTLE_RES_MS] = &res,
	};
	for (int i = 0; i < DB_DEV__COUNT; i++) {
		d->has[i] = f[i]->has;
		d->val[i] = f[i]->v;
	}
	d->wa = x->wa;
}
