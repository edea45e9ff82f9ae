/* db_iter: iterations and their samples: a row inserted as 'running'
 * before it starts and ended with its figures, samples, the drive's
 * readings and the ranges it wrote, in one transaction; the progress row
 * of what a target does now. */
#include "db/db_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/fsinfo.h"
#include "base/log.h"
#include "base/stats.h"
#include "base/util.h"
#include "config/cfg_diff.h"

#define PROGRESS_BUSY_MS 100 /* db_progress: a lock met is skipped */

static const char *const phase_names[DB_PHASE__COUNT] = {
	[DB_PHASE_UNKNOWN] = NULL,
	[DB_PHASE_FILL] = "fill",
	[DB_PHASE_MEASURE] = "measure",
	[DB_PHASE_VERIFY] = "verify",
};

const char *db_phase_name(enum db_phase p)
{
	return (unsigned)p < DB_PHASE__COUNT ? phase_names[p] : NULL;
}

/* ---- iterations and samples --------------------------------------------- */

int db_iteration_begin(struct db *db, const struct db_iteration *it, int64_t *id)
{
	char why[512];
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	ret = db_file_check(db, why, sizeof(why));
	if (ret) {
		log_msg(LOG_CRIT, "%s", why);
		db_leave(db);
		return ret;
	}
	db_bind_start(db, ST_IT_BEGIN, &b);
	db_bind_i64(&b, it->cycle_id);
	db_bind_i64(&b, it->run_id);
	db_bind_i64(&b, it->target_id);
	db_bind_i64(&b, it->number);
	db_bind_i64(&b, it->size_index);
	db_bind_u64(&b, it->size_bytes);
	db_bind_u64(&b, it->region_offset);
	db_bind_text(&b, it->workload);
	db_bind_i64(&b, it->block_size);
	db_bind_i64(&b, it->queue_depth);
	db_bind_i64(&b, it->compressibility);
	db_bind_u64(&b, it->amount_bytes);
	db_bind_opt_text(&b, it->started_at);
	db_bind_text(&b, db_phase_name(it->phase));
	if (it->repeat_index > 0)
		db_bind_i64(&b, it->repeat_index);
	else
		db_bind_null(&b);
	db_bind_i64(&b, it->more_rows ? 1 : 0);
	db_bind_text(&b, it->block_sizes);
	db_bind_fig(&b, it->read_percent);
	db_bind_fig(&b, it->random_percent);
	db_bind_text(&b, cfg_verify_name(it->verify));
	if (it->round_index > 0)
		db_bind_i64(&b, it->round_index);
	else
		db_bind_null(&b);
	if (it->jobs > 0)
		db_bind_i64(&b, it->jobs);
	else
		db_bind_null(&b);
	db_bind_i64(&b, it->dedupe_percent);
	db_bind_text(&b, it->baseline);
	db_bind_id(&b, it->baseline_iteration_id);
	ret = db_bind_run(&b, "start iteration");
	if (ret == 0)
		*id = sqlite3_last_insert_rowid(db->conn);
	db_leave(db);
	return ret;
}

/* The verdict of steady state: on the last round of a phase only. */
static void steady_update(struct db_bind *b, const struct db_iteration *it)
{
	if (!it->steady_summary) {
		for (int i = 0; i < 7; i++)
			db_bind_null(b);
		return;
	}
	db_bind_i64(b, it->steady_reached ? 1 : 0);
	if (it->steady_round > 0)
		db_bind_i64(b, it->steady_round);
	else
		db_bind_null(b);
	db_bind_dbl(b, it->steady_mean_mibps);
	db_bind_dbl(b, it->steady_range_mibps);
	db_bind_dbl(b, it->steady_range_pct);
	db_bind_dbl(b, it->steady_excursion_mibps);
	db_bind_dbl(b, it->steady_excursion_pct);
}

/* The I/O counts of the row, when the engine counted them. */
static int iteration_io(struct db *db, int64_t id, const struct db_iteration *it)
{
	struct db_bind b;

	if (!it->io_counted)
		return 0;
	db_bind_start(db, ST_IT_IO, &b);
	db_bind_u64(&b, it->reads);
	db_bind_u64(&b, it->writes);
	db_bind_u64(&b, it->random_ios);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store iteration I/O counts");
}

/* The host's stall, when it had one (else the column stays NULL). */
static int iteration_stall(struct db *db, int64_t id, const struct db_iteration *it)
{
	struct db_bind b;

	if (!(it->host_stall_seconds > 0))
		return 0;
	db_bind_start(db, ST_IT_STALL, &b);
	db_bind_dbl(&b, it->host_stall_seconds);
	db_bind_i64(&b, it->lat_host_stall ? 1 : 0);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store the host stall");
}

/* The queue kept (schema 17), when the engine measured it. */
static int iteration_depth(struct db *db, int64_t id, const struct db_iteration *it)
{
	struct db_bind b;

	if (!(it->mean_depth > 0))
		return 0;
	db_bind_start(db, ST_IT_DEPTH, &b);
	db_bind_dbl(&b, it->mean_depth);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store the mean queue depth");
}

/* One range the iteration wrote (written_extents). */
static int written_insert(struct db *db, int64_t id, const uint64_t r[2])
{
	struct db_bind b;

	db_bind_start(db, ST_WRITTEN_INSERT, &b);
	db_bind_i64(&b, id);
	db_bind_u64(&b, r[0]);
	db_bind_u64(&b, r[1]);
	return db_bind_run(&b, "store a written extent");
}

/* The drive's own evidence (schema 20), when it had any. */
static int iteration_device(struct db *db, int64_t id, const struct db_iteration *it)
{
	const struct db_device_evidence *d = &it->device;
	struct db_bind b;
	int any = d->wa >= 0;

	for (int f = 0; f < DB_DEV__COUNT; f++)
		any |= d->has[f];
	if (!any)
		return 0;
	db_bind_start(db, ST_IT_DEVICE, &b);
	for (int f = 0; f < DB_DEV__COUNT; f++)
		if (d->has[f])
			db_bind_i64(&b, d->val[f]);
		else
			db_bind_null(&b);
	if (d->wa >= 0)
		db_bind_dbl(&b, d->wa);
	else
		db_bind_null(&b);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store the drive's evidence");
}

/* A PTS cell's place and figures (nothing for any other row). */
static int iteration_pts(struct db *db, int64_t id, const struct db_iteration *it)
{
	const struct db_pts *p = it->pts;
	struct db_bind b;

	if (!p)
		return 0;
	db_bind_start(db, ST_IT_PTS, &b);
	db_bind_text(&b, p->test);
	db_bind_text(&b, p->variant);
	db_bind_i64(&b, p->round);
	db_bind_i64(&b, p->cell);
	db_bind_text(&b, p->part);
	db_bind_dbl(&b, p->active_pct);
	db_bind_i64(&b, p->tracking ? 1 : 0);
	db_bind_fig(&b, p->lat_p99999_us);
	if (p->ss_summary) {
		db_bind_i64(&b, p->ss_reached ? 1 : 0);
		db_bind_i64(&b, p->ss_first_round);
		db_bind_dbl(&b, p->ss_mean);
		db_bind_dbl(&b, p->ss_range_pct);
		db_bind_dbl(&b, p->ss_slope);
		db_bind_dbl(&b, p->ss_excursion_pct);
	} else {
		for (int i = 0; i < 6; i++)
			db_bind_null(&b);
	}
	db_bind_text(&b, p->lat_hist);
	db_bind_i64(&b, id);
	return db_bind_run(&b, "store a PTS cell");
}

/* The fill columns stay NULL when nothing was filled (fill = no). */
static void bind_fill(struct db_bind *b, const struct db_iteration *it)
{
	if (it->fill_bytes > 0) {
		db_bind_fig(b, it->fill_mibps);
		db_bind_dbl(b, it->fill_seconds);
		db_bind_u64(b, it->fill_bytes);
	} else {
		db_bind_null(b);
		db_bind_null(b);
		db_bind_null(b);
	}
}

/* The repeats' mean and spread, NULL for a row that is not a summary. */
static void bind_repeat_summary(struct db_bind *b, const struct db_iteration *it)
{
	if (it->repeat_summary) {
		db_bind_dbl(b, it->mibps_repeat_mean);
		db_bind_dbl(b, it->mibps_repeat_stddev);
		db_bind_dbl(b, it->iops_repeat_mean);
		db_bind_dbl(b, it->iops_repeat_stddev);
	} else {
		for (int i = 0; i < 4; i++)
			db_bind_null(b);
	}
}

/* An iteration's end: its figures and status (ST_IT_END's columns). */
static int iteration_update(struct db *db, int64_t id, const struct db_iteration *it)
{
	struct rate_figs f = { it->mibps_avg, it->mibps_min, it->mibps_max, it->mibps_stddev };
	struct db_bind b;
	int ret;

	if (stats_rate_bound(&f))
		log_msg(LOG_WARNING,
			"iteration %lld: min %.3f avg %.3f max %.3f MiB/s out of "
			"order, stored bounded",
			(long long)id, it->mibps_min, it->mibps_avg, it->mibps_max);
	db_bind_start(db, ST_IT_END, &b);
	db_bind_opt_text(&b, it->ended_at);
	if (it->phase_not_run) {
		db_bind_null(&b);
		db_bind_null(&b);
		db_bind_null(&b);
	} else {
		db_bind_u64(&b, it->bytes);
		db_bind_u64(&b, it->ops);
		db_bind_dbl(&b, it->seconds);
	}
	db_bind_fig(&b, f.avg);
	db_bind_fig(&b, f.min);
	db_bind_fig(&b, f.max);
	db_bind_fig(&b, f.stddev);
	db_bind_fig(&b, it->iops_avg);
	db_bind_fig(&b, it->lat_mean_us);
	db_bind_fig(&b, it->lat_us.p50);
	db_bind_fig(&b, it->lat_us.p99);
	db_bind_fig(&b, it->lat_us.p999);
	db_bind_fig(&b, it->lat_us.max);
	bind_fill(&b, it);
	db_bind_u64(&b, it->errors);
	db_bind_text(&b, db_status_name(it->status));
	db_bind_text(&b, it->error);
	db_bind_fig(&b, it->lat_us.p90);
	db_bind_fig(&b, it->lat_us.p9999);
	if (it->verify != VERIFY_NONE)
		db_bind_u64(&b, it->verify_errors);
	else
		db_bind_null(&b);
	bind_repeat_summary(&b, it);
	db_bind_i64(&b, it->more_rows ? 1 : 0);
	steady_update(&b, it);
	db_bind_i64(&b, id);
	ret = db_bind_run(&b, "store iteration results");
	return ret ? ret : db_changed(db, id, "store iteration results");
}

/* sample_data.phase: 0 fill, 1 measure (the read-back's samples are
 * stored as measure, daemon/iter.c). */
static int64_t sample_phase(enum db_phase p)
{
	return p == DB_PHASE_FILL ? 0 : 1;
}

static int sample_insert(struct db *db, int64_t id, const struct db_sample *s)
{
	const double *lat[] = { &s->lat_us.p50,  &s->lat_us.p90,   &s->lat_us.p99,
				&s->lat_us.p999, &s->lat_us.p9999, &s->lat_us.max };
	struct db_bind b;

	db_bind_start(db, ST_SAMPLE, &b);
	db_bind_i64(&b, id);
	db_bind_i64(&b, sample_phase(s->phase));
	db_bind_i64(&b, s->t_ms);
	db_bind_opt_i64(&b, db_sample_ns(s->seconds, 1e9));
	db_bind_u64(&b, s->bytes);
	db_bind_u64(&b, s->ops);
	for (size_t i = 0; i < ARRAY_SIZE(lat); i++)
		db_bind_opt_i64(&b, db_sample_ns(*lat[i], 1e3));
	db_bind_opt_i64(&b, s->host_stall_ms > 0 ? db_sample_ns(s->host_stall_ms, 1e6) : -1);
	db_bind_fig(&b, s->mibps_min_1s);
	return db_bind_run(&b, "store sample");
}

int db_iteration_end(struct db *db, int64_t id, const struct db_iteration *it,
		     const struct db_sample *samples, size_t nsamples)
{
	int ret;

	if (!db_status_final(it->status) || (nsamples && !samples))
		return -EINVAL;
	ret = db_enter(db);
	if (ret)
		return ret;
	ret = db_tx_begin(db);
	if (ret)
		goto out;
	ret = iteration_update(db, id, it);
	if (ret == 0)
		ret = iteration_io(db, id, it);
	if (ret == 0)
		ret = iteration_stall(db, id, it);
	if (ret == 0)
		ret = iteration_depth(db, id, it);
	for (size_t i = 0; ret == 0 && i < it->nwritten; i++)
		ret = written_insert(db, id, it->written[i]);
	if (ret == 0)
		ret = iteration_device(db, id, it);
	if (ret == 0)
		ret = iteration_pts(db, id, it);
	if (ret == 0)
		ret = db_series_store(db, id, it->series, it->nseries);
	for (size_t i = 0; ret == 0 && i < nsamples; i++)
		ret = sample_insert(db, id, &samples[i]);
	ret = db_tx_end(db, ret);
out:
	db_leave(db);
	if (!ret)
		db_row_written(db, DB_ROW_ITERATION, id);
	return ret;
}

int db_progress(struct db *db, int64_t target_id, const struct db_progress *p)
{
	struct db_bind b;
	int ret = db_enter(db);

	if (ret)
		return ret;
	db->last_err[0] = '\0';
	db_bind_start(db, ST_PROGRESS, &b);
	db_bind_i64(&b, target_id);
	db_bind_i64(&b, p->cycle);
	db_bind_i64(&b, p->iteration);
	db_bind_u64(&b, p->size_bytes);
	db_bind_text(&b, p->phase);
	db_bind_fig(&b, p->mibps);
	db_bind_u64(&b, p->phase_bytes);
	if (p->nsizes > 0)
		db_bind_i64(&b, p->nsizes);
	else
		db_bind_null(&b);
	db_bind_i64(&b, p->cycles);
	db_bind_fig(&b, p->phase_seconds);
	if (p->duration > 0)
		db_bind_dbl(&b, p->duration);
	else
		db_bind_null(&b);
	db_bind_fig(&b, p->iteration_seconds);
	if (p->stage && p->stage[0])
		db_bind_text(&b, p->stage);
	else
		db_bind_null(&b);
	db_bind_fig(&b, p->remaining_seconds);
	/* Progress is rewritten every second: a row that meets another
	 * program's lock is skipped at once rather than waited for with the
	 * connection held, which would keep the targets' own writes (and the
	 * lock warnings they give) waiting behind it. */
	int busy_ms = db->busy_ms;
	db->busy_ms = PROGRESS_BUSY_MS;
	db->quiet_busy = 1;
	ret = db_bind_run(&b, "store progress");
	db->quiet_busy = 0;
	db->busy_ms = busy_ms;
	if (ret && ret != -EBUSY) {
		char err[512];
		db_failure(db, ret, err, sizeof(err));
		log_msg(LOG_ERR, "storing progress: %s", err);
	}
	db_leave(db);
	return ret;
}
