/* wear_health: per-cycle health snapshots (sysfs, NVMe SMART/Health, ATA SMART,
 * SCSI log pages, or a counters file beside a loop device's image: wear.h) and the firmware
 * they recorded.
 *
 * A stop must not wait for a device slow to answer (a SMART or NVMe log
 * command, a FUSE server behind the counters file): such a read sleeps in
 * the kernel, where the stop flag cannot reach it, and a signal would not
 * either (target threads block them). So the reads run in a thread of their
 * own that owns copies of everything it touches; the target thread waits
 * for it, watching the stop flag, and after WEAR_STOP_GRACE abandons it:
 * nothing is stored (a snapshot is whole or absent), and the thread ends
 * when the device answers or when the process exits, whichever is first.
 * A request already sent to a device still holds the process's very end
 * until it is answered or aborted: the kernel interrupts it at exit (a FUSE
 * server that honours interrupts, such as tools/simssd, lets go at once;
 * an NVMe or SCSI command ends at the driver's timeout). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/ata.h"
#include "device/devstat.h"
#include "base/log.h"
#include "device/nvme.h"
#include "device/scsi_log.h"
#include "base/util.h"
#include "device/wear.h"

struct snapshot {
	const char *source;
	int has[DB_H__COUNT];
	int64_t val[DB_H__COUNT];
	double wa;              /* < 0 unknown */
	int64_t d_host, d_nand; /* since the previous snapshot; < 0 unknown */
	char data[8192];
	size_t len;
};

static void set(struct snapshot *s, enum db_health_counter c, int64_t v)
{
	s->has[c] = 1;
	s->val[c] = v;
}

static void json(struct snapshot *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void json(struct snapshot *s, const char *fmt, ...)
{
	va_list ap;
	if (s->len >= sizeof(s->data))
		return;
	va_start(ap, fmt);
	int n = vsnprintf(s->data + s->len, sizeof(s->data) - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n;
}

/* JSON string with the few escapes identity strings may need. */
static void json_str(struct snapshot *s, const char *key, const char *v)
{
	json(s, "\"%s\":\"", key);
	for (; *v; v++)
		if (*v == '"' || *v == '\\')
			json(s, "\\%c", *v);
		else if ((unsigned char)*v >= 0x20)
			json(s, "%c", *v);
	json(s, "\",");
}

static void read_sysfs_stat(const struct tgt *tg, struct snapshot *s)
{
	char buf[512];
	unsigned long long f[11];
	if (!tg->sysname[0] || tgt_sysfs_read(tg->sysname, "stat", buf, sizeof(buf)))
		return;
	if (sscanf(buf, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
		   &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10]) != 11)
		return;
	set(s, DB_H_SECTORS_READ, (int64_t)f[2]);
	set(s, DB_H_SECTORS_WRITTEN, (int64_t)f[6]);
}

static void read_nvme(int fd, struct snapshot *s)
{
	struct nvme_health h;
	char err[256];
	if (nvme_smart_log(fd, &h, err, sizeof(err)))
		return;
	s->source = "nvme";
	set(s, DB_H_PCT_USED, h.percent_used);
	set(s, DB_H_DU_READ, (int64_t)h.data_units_read);
	set(s, DB_H_DU_WRITTEN, (int64_t)h.data_units_written);
	set(s, DB_H_MEDIA_ERRORS, (int64_t)h.media_errors);
	set(s, DB_H_SPARE, h.avail_spare);
	set(s, DB_H_TEMP, h.temperature_c);
	set(s, DB_H_CRIT, h.critical_warning);
	set(s, DB_H_POH, (int64_t)h.power_on_hours);
	set(s, DB_H_HOST, (int64_t)h.bytes_written);
	json(s,
	     "\"nvme\":{\"critical_warning\":%u,\"temperature_k\":%u,\"available_spare\":%u,"
	     "\"spare_threshold\":%u,\"percentage_used\":%u,\"data_units_read\":%" PRIu64 ","
	     "\"data_units_written\":%" PRIu64 ",\"host_read_commands\":%" PRIu64 ","
	     "\"host_write_commands\":%" PRIu64 ",\"power_on_hours\":%" PRIu64 ","
	     "\"unsafe_shutdowns\":%" PRIu64 ",\"media_errors\":%" PRIu64 ","
	     "\"error_log_entries\":%" PRIu64 "},",
	     h.critical_warning, h.temperature_k, h.avail_spare, h.spare_thresh, h.percent_used,
	     h.data_units_read, h.data_units_written, h.host_reads, h.host_writes, h.power_on_hours,
	     h.unsafe_shutdowns, h.media_errors, h.error_log_entries);
}

/* The Device Statistics' Percentage Used Endurance Indicator (log 04h
 * page 07h, common/device/DEVICE_LOGS.md), where the drive keeps it. */
static void read_ata_pct_used(int fd, struct snapshot *s)
{
	uint8_t buf[ATA_SECTOR];
	struct devstat_ata a = { 0 };
	char err[256];

	if (!ata_read_log(fd, DEVSTAT_ATA_LOG, DEVSTAT_ATA_SSD, buf, err, sizeof(err)) &&
	    !devstat_parse_ata_page(buf, DEVSTAT_ATA_SSD, &a) && a.pct_used.has)
		set(s, DB_H_PCT_USED, a.pct_used.v);
}

static void read_ata(int fd, struct snapshot *s)
{
	struct ata_smart sm;
	char err[256];
	if (ata_smart_read(fd, &sm, err, sizeof(err)))
		return;
	s->source = "ata";
	json(s, "\"ata\":{\"checksum_ok\":%s,\"attributes\":[", sm.checksum_ok ? "true" : "false");
	for (unsigned i = 0; i < sm.count; i++) {
		const struct ata_smart_attr *a = &sm.attr[i];
		json(s,
		     "%s{\"id\":%u,\"flags\":%u,\"current\":%u,\"worst\":%u,\"raw\":%" PRIu64 "}",
		     i ? "," : "", a->id, a->flags, a->current, a->worst, a->raw);
		if (a->id == 9)
			set(s, DB_H_POH, (int64_t)(a->raw & 0xffffffffu));
		if (a->id == 194)
			set(s, DB_H_TEMP, (int64_t)(a->raw & 0xff));
	}
	json(s, "]},");
	read_ata_pct_used(fd, s);
}

/* A native SCSI disk: its identity and what it advertises (VPD pages),
 * the kernel's discard command and its log pages. */
static void read_scsi(const struct tgt *tg, int fd, struct snapshot *s)
{
	struct scsi_info id;
	struct scsi_logs l;
	char err[256], mode[32] = "", *obj = malloc(4096);
	if (!obj || scsi_identify(fd, &id, err, sizeof(err))) {
		free(obj);
		return;
	}
	scsi_logs_read(fd, &l);
	tgt_scsi_provisioning_mode(tg->sysname, mode, sizeof(mode));
	s->source = "scsi";
	if (l.temp_c.has || l.ie_temp_c.has)
		set(s, DB_H_TEMP, l.temp_c.has ? l.temp_c.v : l.ie_temp_c.v);
	if (l.pct_used.has)
		set(s, DB_H_PCT_USED, l.pct_used.v);
	if (l.write_uncorrected.has || l.read_uncorrected.has)
		set(s, DB_H_MEDIA_ERRORS,
		    (l.write_uncorrected.has ? l.write_uncorrected.v : 0) +
			    (l.read_uncorrected.has ? l.read_uncorrected.v : 0));
	if (l.power_on_minutes.has)
		set(s, DB_H_POH, l.power_on_minutes.v / 60);
	if (l.write_bytes.has)
		set(s, DB_H_HOST, l.write_bytes.v);
	scsi_health_json(&id, &l, mode, obj, 4096);
	json(s, "\"scsi\":%s,", obj);
	free(obj);
}

/* The counters file beside the image of a loop device (wear.h). */
static void read_counters_file(const struct tgt *tg, struct snapshot *s)
{
	char dir[PATH_MAX], path[PATH_MAX + 8], line[256];
	if (!tg->backing_file[0])
		return;
	util_strlcpy(dir, tg->backing_file, sizeof(dir));
	snprintf(path, sizeof(path), "%s/" WEAR_COUNTERS_FILE, dirname(dir));
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	unsigned long long v;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "flash_bytes_written %llu", &v) == 1)
			set(s, DB_H_NAND, (int64_t)v);
		else if (sscanf(line, "host_bytes_written %llu", &v) == 1)
			set(s, DB_H_HOST, (int64_t)v);
		else if (sscanf(line, "percentage_used %llu", &v) == 1)
			set(s, DB_H_PCT_USED, (int64_t)v);
	}
	fclose(f);
	if (s->has[DB_H_NAND])
		s->source = WEAR_COUNTERS_SOURCE;
}

void wear_deltas(struct wear_state *w, int64_t host, int64_t nand, int64_t *d_host, int64_t *d_nand,
		 double *wa)
{
	*d_host = host >= 0 && w->last_host >= 0 && host >= w->last_host ? host - w->last_host : -1;
	*d_nand = nand >= 0 && w->last_nand >= 0 && nand >= w->last_nand ? nand - w->last_nand : -1;
	*wa = *d_host > 0 && *d_nand >= 0 ? (double)*d_nand / (double)*d_host : -1;
	if (host >= 0)
		w->last_host = host;
	if (nand >= 0)
		w->last_nand = nand;
}

/* One snapshot's device reads, shared by the target thread and the
 * thread that reads (lock guards done and abandoned; whoever finishes
 * last frees it). */
struct job {
	pthread_mutex_t lock;
	pthread_cond_t cv; /* CLOCK_MONOTONIC */
	int done, abandoned;
	struct tgt tg; /* copies: the caller's may be gone */
	uint64_t host_total;
	struct snapshot s;
};

static void collect(struct job *j)
{
	const struct tgt *tg = &j->tg;
	struct snapshot *s = &j->s;

	s->source = tg->is_block ? "sysfs" : "file";
	s->wa = -1;
	json(s, "{");
	json_str(s, "serial", tg->serial);
	json_str(s, "model", tg->model);
	json_str(s, "firmware", tg->firmware);
	if (tg->is_block) {
		read_sysfs_stat(tg, s);
		/* A second, shared descriptor: the run's may be a test file. */
		int fd = open(tg->real_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			if (!strncmp(tg->sysname, "nvme", 4))
				read_nvme(fd, s);
			else if (tg->proto == TGT_PROTO_SCSI)
				read_scsi(tg, fd, s);
			else if (!strncmp(tg->sysname, "sd", 2))
				read_ata(fd, s);
			close(fd);
		}
		read_counters_file(tg, s);
	}
	json(s, "\"host_bytes_total\":%" PRIu64 "}", j->host_total);
}

static struct job *job_new(const struct wear_state *w, const struct tgt *tg)
{
	struct job *j = calloc(1, sizeof(*j));
	pthread_condattr_t a;

	if (!j)
		return NULL;
	j->tg = *tg;
	j->host_total = w->host_total;
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cv, &a);
	pthread_condattr_destroy(&a);
	return j;
}

static void job_free(struct job *j)
{
	pthread_mutex_destroy(&j->lock);
	pthread_cond_destroy(&j->cv);
	free(j);
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	int abandoned;

	collect(j);
	pthread_mutex_lock(&j->lock);
	j->done = 1;
	abandoned = j->abandoned;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->lock);
	if (abandoned)
		job_free(j);
	return NULL;
}

/* Whether a stop has waited its grace (w->stop_seen: when one was first
 * seen here). */
static int stop_due(struct wear_state *w)
{
	if (!w->stop || !atomic_load(w->stop))
		return 0;
	if (w->stop_seen <= 0)
		w->stop_seen = util_now();
	return util_now() >= w->stop_seen + WEAR_STOP_GRACE;
}

/* Runs the reads of j in their own thread and waits for them. Returns 0
 * when they ended, or -EINTR when a stop abandoned them (j is then the
 * thread's to free). */
static int collect_stoppable(struct wear_state *w, struct job *j)
{
	pthread_attr_t a;
	pthread_t t;
	int ret = -1;

	if (w->stop && !pthread_attr_init(&a)) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		ret = pthread_create(&t, &a, job_main, j);
		pthread_attr_destroy(&a);
	}
	if (ret) { /* no stop to watch, or no thread: read here */
		collect(j);
		return 0;
	}
	pthread_mutex_lock(&j->lock);
	while (!j->done && !stop_due(w)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 50 * 1000 * 1000; /* the stop flag is polled */
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&j->cv, &j->lock, &ts);
	}
	ret = j->done ? 0 : -EINTR;
	j->abandoned = !j->done;
	pthread_mutex_unlock(&j->lock);
	return ret;
}

static const char *const point_names[WEAR_POINT__COUNT] = {
	[WEAR_CYCLE_START] = "cycle-start",
	[WEAR_CYCLE_END] = "cycle-end",
	[WEAR_AFTER_ACTION] = "after-action",
};

const char *wear_point_name(enum wear_point p)
{
	return (unsigned)p < WEAR_POINT__COUNT ? point_names[p] : "?";
}

int wear_health(struct wear_state *w, const struct tgt *tg, int64_t cycle_id, enum wear_point point,
		int64_t fs_mapped)
{
	struct job *j = job_new(w, tg);
	struct snapshot *s = j ? &j->s : NULL;
	uint64_t mapped = fs_mapped >= 0 ? (uint64_t)fs_mapped : wear_ext_total(&w->ext);
	double t0 = util_now();
	char err[512];
	if (!j)
		return -ENOMEM;
	if (collect_stoppable(w, j)) {
		log_msg(LOG_NOTICE,
			"target %s: stop requested: abandoned the %s health snapshot "
			"of %s after %.1f s without an answer from the device (nothing stored; a "
			"request already sent to it ends when the device answers or at exit)",
			tg->name, wear_point_name(point), tg->path, util_now() - t0);
		return -EINTR;
	}
	wear_deltas(w, s->has[DB_H_HOST] ? s->val[DB_H_HOST] : -1,
		    s->has[DB_H_NAND] ? s->val[DB_H_NAND] : -1, &s->d_host, &s->d_nand, &s->wa);
	struct db_health h = {
		.target_id = w->target_id,
		.cycle_id = cycle_id,
		.source = s->source,
		.write_amplification = s->wa,
		.data = s->data,
		.point = wear_point_name(point),
		.host_bytes_delta = s->d_host,
		.nand_bytes_delta = s->d_nand,
		.mapped_bytes = mapped,
		.has_op_effective = tg->capacity != 0,
		.op_effective = tg->capacity ? 1.0 - (double)mapped / (double)tg->capacity : 0,
	};
	memcpy(h.has, s->has, sizeof(h.has));
	memcpy(h.val, s->val, sizeof(h.val));
	int ret = db_health_insert(w->db, &h, err, sizeof(err));
	if (ret)
		log_msg(LOG_ERR, "storing a health snapshot: %s", err);
	job_free(j);
	return ret;
}

int wear_firmware_changed(struct wear_state *w, const char *now, char *buf, size_t len)
{
	int ret = db_health_firmware(w->db, w->target_id, buf, len);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	return buf[0] && now[0] && strcmp(buf, now) ? 1 : 0;
}
