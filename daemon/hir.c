/* hir: the host idle recovery protocol of one cycle. */
#include "hir.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "base/wmap.h"
#include "device/act.h"
#include "device/devpoll.h"
#include "steady.h"

/* The state after p's last one: its first burst, or the end. */
static void next_state(const struct db_hir_progress *p, int nstates, struct hir_step *out)
{
	if (p->state >= nstates) {
		out->stage = HIR_COMPLETE;
		return;
	}
	out->stage = HIR_BURST;
	out->state = p->state + 1;
	out->repetition = 1;
}

void hir_next(const struct db_hir_progress *p, int nstates, long reps, int baseline,
	      struct hir_step *out)
{
	*out = (struct hir_step){ .stage = HIR_PRECONDITION };
	if (!p->preconditioned) {
		/* rounds without a purge are an older protocol's: purging now
		 * would undo them, so they go on as they began */
		if (!p->purged && !p->rounds)
			out->stage = HIR_PURGE;
		return;
	}
	if (p->state == 0)
		next_state(p, nstates, out);
	else if (p->state <= nstates && !p->baseline_done && p->bursts < reps)
		*out = (struct hir_step){ HIR_BURST, p->state, p->bursts + 1, 0 };
	else if (p->state <= nstates && !p->baseline_done && baseline)
		*out = (struct hir_step){ HIR_BASELINE, p->state, 1, 0 };
	else
		next_state(p, nstates, out);
	/* any rows at all: this is a restart, and the drive has been idle */
	out->rebaseline = out->stage == HIR_BURST;
}

static int add_range(void *arg, uint64_t start, uint64_t end)
{
	return wear_ext_add(arg, start, end);
}

/* The ranges m marks into *out (empty without a map). Returns 0 or
 * -ENOMEM. */
static int ranges_of(const struct wmap *m, struct wear_extents *out)
{
	wear_ext_clear(out);
	return m ? wmap_ranges(m, add_range, out) : 0;
}

/* The waits, bursts and baselines of wait states from on, the first from
 * repetition rep. */
static double states_left(const struct cfg_target *t, int from, long rep)
{
	double s = 0;
	for (int i = from; i >= 1 && i <= t->hir_wait_states.n; i++) {
		long long reps = t->hir_repetitions - (i == from ? rep - 1 : 0);
		s += (double)(reps > 0 ? reps : 0) * (t->hir_wait_states.s[i - 1] + t->hir_burst) +
		     t->hir_baseline;
	}
	return s;
}

/* The writing that brings the drive back to steady state on a resume. */
static double rebaseline_seconds(const struct cfg_target *t)
{
	return t->hir_baseline > 0 ? t->hir_baseline : t->hir_round;
}

double hir_remaining(const struct cfg_target *t, const struct hir_step *s, long round)
{
	long rounds = (long)t->max_rounds - round + 1;
	if (s->stage == HIR_PURGE)
		return hir_remaining(t, &(struct hir_step){ .stage = HIR_PRECONDITION }, 1);
	if (s->stage == HIR_PRECONDITION)
		return (double)(rounds > 0 ? rounds : 0) * t->hir_round + states_left(t, 1, 1);
	if (s->stage == HIR_BURST)
		return (s->rebaseline ? rebaseline_seconds(t) : 0) +
		       (s->rebaseline && s->repetition > 1 ? t->hir_wait_states.s[s->state - 1]
							   : 0) +
		       states_left(t, s->state, s->repetition);
	if (s->stage == HIR_BASELINE)
		return t->hir_baseline + states_left(t, s->state + 1, 1);
	return 0;
}

/* Tell e's caller the stage (printf-style) and what remains from it. */
__attribute__((format(printf, 3, 4))) static void stage(const struct hir_env *e, double remaining,
							const char *fmt, ...)
{
	char text[128];
	va_list ap;
	if (!e->stage)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	e->stage(e->arg, text, remaining);
}

/* How a stretch ended (rc from the engine, r its result); a failure is
 * described in e->error. */
static enum it_status stretch_status(const struct hir_env *e, int rc, const struct engine_result *r)
{
	enum it_status s = IT_DONE;
	if (rc < 0) {
		snprintf(e->error, e->error_len,
			 "host idle recovery: cannot run the I/O engine%s%s",
			 r->refused[0] ? ": " : "", r->refused);
		s = IT_FAILED;
	} else if (r->errors) {
		snprintf(e->error, e->error_len,
			 "host idle recovery: %llu I/O error(s), first at offset %llu: %s",
			 (unsigned long long)r->errors, (unsigned long long)r->first_error_offset,
			 strerror(r->first_errno));
		s = IT_FAILED;
	} else if (r->interrupted) {
		s = IT_INTERRUPTED;
	}
	return s;
}

/* A stretch's figures into its row (-1 where nothing was measured). */
static void row_figures(const struct engine_result *r, struct db_hir_row *row)
{
	struct lat_qos q;
	row->seconds = r->seconds;
	row->bytes = r->bytes;
	row->ops = r->ops;
	row->mibps = r->seconds > 0 ? r->mibps : -1;
	row->iops = r->seconds > 0 ? r->iops : -1;
	hist_qos(&r->lat, &q);
	row->lat_mean_us = r->ops ? hist_mean(&r->lat) / 1e3 : -1;
	row->lat_p99_us = r->ops ? q.p99 : -1;
}

/* One stretch of 4 KiB random writes over the region, seconds long, with
 * the drive polled for its own counters around it; its figures into row,
 * the ranges its writes completed into *written (empty without memory
 * for the map: the row then counts as writing the whole region). */
static enum it_status write_for(const struct hir_env *e, double seconds, struct db_hir_row *row,
				struct wear_extents *written)
{
	struct engine_phase p = {
		.fd = e->tg->fd,
		.span_offset = e->plan->layout.region_offset,
		.span_len = e->plan->layout.region_size / HIR_BLOCK * HIR_BLOCK,
		.block_size = HIR_BLOCK,
		.is_write = 1,
		.is_random = 1,
		.queue_depth = (unsigned)e->t->queue_depth,
		.duration = seconds,
		.compressibility = (unsigned)e->t->compressibility,
		/* stamped as the rows' writes are, so a later read-back checks them */
		.verify = e->t->verify == VERIFY_CRC32C,
		.seed = util_now_ns() ^ ((uint64_t)e->target_id << 40) ^ 0x41d1e,
		.sample_interval = e->t->sample_interval,
		.stop = e->stop,
	};
	struct engine_result *r = malloc(sizeof(*r));
	struct devpoll *dp = NULL;
	struct devstat_delta x;
	struct wmap wm;

	if (!r) {
		snprintf(e->error, e->error_len, "host idle recovery: out of memory");
		return IT_FAILED;
	}
	if (!wmap_init(&wm, p.span_offset, p.span_len))
		p.written = &wm;
	util_iso_now(row->started_at, sizeof(row->started_at));
	int rc = devpoll_begin(e->tg, DEVPOLL_INTERVAL, e->stop, &dp);
	if (rc < 0 && rc != -EINTR)
		log_msg(LOG_WARNING, "target %s: host idle recovery: cannot poll %s: %s",
			e->t->name, e->tg->path, strerror(-rc));
	p.t0 = util_now_ns();
	rc = engine_run(e->eng, &p, r);
	devpoll_end(dp, &x);
	if (rc >= 0)
		iter_log_drain(e->t->name, "host idle recovery", r);
	enum it_status s = stretch_status(e, rc, r);
	row_figures(r, row);
	devpoll_evidence(&x, &row->device);
	if (ranges_of(p.written, written))
		wear_ext_clear(written);
	if (p.written)
		wmap_free(&wm);
	free(r);
	return s;
}

struct store_args {
	const struct hir_env *e;
	const struct db_hir_row *row;
	int64_t id;
	const struct wear_extents *written;
};

static int store_row(void *arg)
{
	struct store_args *a = arg;
	return db_hir_insert(a->e->db, a->row, &a->id);
}

static int store_wear(void *arg)
{
	const struct store_args *a = arg;
	const struct cfg_layout *l = &a->e->plan->layout;
	return wear_after_hir(a->e->wear, a->e->cycle_id, l->region_offset,
			      l->region_size / HIR_BLOCK * HIR_BLOCK, a->e->tg->capacity,
			      l->region_size, a->id, a->written->n ? a->written : NULL);
}

/* The writes of the row a stored (a->row NULL: none, only the rows left
 * pending) into the target's host counters and mapped extents, as an
 * iteration's (sched.c: record_wear). One that cannot be is logged and
 * the protocol goes on; the next call accounts for it (its whole region
 * as written). */
static void record_wear(const struct hir_env *e, struct store_args *a)
{
	const char *kind = a->row ? db_hir_kind_name(a->row->kind) : "row";
	char what[96];
	snprintf(what, sizeof(what), "cycle %ld: recording the wear of a host idle recovery %s",
		 e->cycle, kind);
	int ret = iter_db_patient(e->t->name, what, e->stop, store_wear, a);
	if (ret)
		log_msg(LOG_ERR,
			"target %s: cycle %ld: wear of a host idle recovery %s not recorded (%s):"
			" not yet in the host byte counters",
			e->t->name, e->cycle, kind, strerror(-ret));
}

/* A row as the protocol starts it. */
static void row_init(const struct hir_env *e, struct db_hir_row *row, enum db_hir_kind kind,
		     int state, long repetition)
{
	memset(row, 0, sizeof(*row));
	row->cycle_id = e->cycle_id;
	row->target_id = e->target_id;
	row->run_id = e->run_id;
	row->kind = kind;
	row->wait_state = state;
	row->wait_seconds = state ? e->t->hir_wait_states.s[state - 1] : -1;
	row->idle_seconds = -1;
	row->repetition = repetition;
	row->steady = -1;
}

/* Write for seconds as row says and store it (nothing when interrupted),
 * its id into *id (NULL: not wanted). */
static enum it_status measured(const struct hir_env *e, double seconds, struct db_hir_row *row,
			       double *io_end, int64_t *id)
{
	struct wear_extents written = { 0 };
	enum it_status s = write_for(e, seconds, row, &written);
	*io_end = util_now();
	if (s != IT_DONE) {
		wear_ext_free(&written);
		return s;
	}
	struct store_args a = { e, row, 0, &written };
	char what[96];
	snprintf(what, sizeof(what), "cycle %ld: storing a host idle recovery %s", e->cycle,
		 db_hir_kind_name(row->kind));
	int ret = iter_db_patient(e->t->name, what, e->stop, store_row, &a);
	if (ret) {
		snprintf(e->error, e->error_len, "cannot store a host idle recovery %s: %s",
			 db_hir_kind_name(row->kind), strerror(-ret));
		wear_ext_free(&written);
		return ret == -EBUSY && atomic_load(e->stop) ? IT_INTERRUPTED : IT_FAILED;
	}
	record_wear(e, &a);
	wear_ext_free(&written);
	if (id)
		*id = a.id;
	return IT_DONE;
}

/* Rounds of writes until the last STEADY_WINDOW are steady or max_rounds
 * pass; the last round stores the verdict. first: rounds stored before. */
static enum it_status precondition(const struct hir_env *e, int first, double *io_end)
{
	unsigned max = (unsigned)e->t->max_rounds;
	double *y = calloc(max, sizeof(*y));
	enum it_status s = IT_DONE;
	struct steady_window w;
	struct db_hir_row row;
	struct wear_extents written = { 0 };

	if (!y) {
		snprintf(e->error, e->error_len, "host idle recovery: out of memory");
		return IT_FAILED;
	}
	for (unsigned k = 1; k <= max && s == IT_DONE; k++) {
		row_init(e, &row, DB_HIR_PRECONDITION, 0, first + (long)k);
		stage(e, hir_remaining(e->t, &(struct hir_step){ .stage = HIR_PRECONDITION }, k),
		      "precondition round %u of at most %u", k, max);
		s = write_for(e, e->t->hir_round, &row, &written);
		if (s != IT_DONE)
			break;
		y[k - 1] = row.mibps > 0 ? row.mibps : 0;
		int steady = steady_check(y, k, &w);
		if (steady || k == max)
			row.steady = steady;
		struct store_args a = { e, &row, 0, &written };
		if (iter_db_patient(e->t->name, "storing a host idle recovery round", e->stop,
				    store_row, &a)) {
			snprintf(e->error, e->error_len, "cannot store a precondition round");
			s = atomic_load(e->stop) ? IT_INTERRUPTED : IT_FAILED;
		} else {
			record_wear(e, &a);
		}
		*io_end = util_now();
		if (s == IT_DONE && row.steady >= 0) {
			log_msg(LOG_INFO,
				"target %s: cycle %ld: host idle recovery: precondition %s after %u "
				"rounds (%.1f MiB/s, range %.1f%%, excursion %.1f%%)",
				e->t->name, e->cycle, steady ? "steady" : "NOT steady", k, w.mean,
				w.range_pct, w.excursion_pct);
			break;
		}
	}
	free(y);
	wear_ext_free(&written);
	return s;
}

/* Sleep until io_end + seconds, or a stop. Returns 0, or -EINTR. */
static int idle_until(const struct hir_env *e, double io_end, double seconds)
{
	double end = io_end + seconds;
	while (!atomic_load(e->stop)) {
		double left = end - util_now();
		if (left <= 0)
			return 0;
		struct timespec ts = { 0, (long)((left < 0.1 ? left : 0.1) * 1e9) };
		nanosleep(&ts, NULL);
	}
	return -EINTR;
}

struct idle_args {
	const struct hir_env *e;
	int64_t id;
	double seconds;
	const struct devstat_delta *x;
};

static int store_idle(void *arg)
{
	const struct idle_args *a = arg;
	return db_hir_idle(a->e->db, a->id, a->seconds,
			   a->x->host_bytes.has ? a->x->host_bytes.v : -1,
			   a->x->media_bytes.has ? a->x->media_bytes.v : -1);
}

/* The idle wait after row id (a burst, or the baseline a resume wrote
 * inside a wait state): no I/O until io_end + wait, the
 * drive's counters read as it begins and as it ends and none between (a
 * drive may take a log read for activity), stored into the row; the
 * first wait of a cycle without a media counter says so (*noted). Returns
 * IT_DONE, IT_INTERRUPTED (a stop: the wait is dropped, the burst kept)
 * or IT_FAILED. */
static enum it_status idle_after(const struct hir_env *e, int64_t id, double io_end, double wait,
				 int *noted)
{
	struct devpoll *dp = NULL;
	struct devstat_delta x;
	int rc = devpoll_begin(e->tg, wait + 3600, e->stop, &dp);
	if (rc == -EINTR)
		return IT_INTERRUPTED;
	if (rc < 0)
		log_msg(LOG_WARNING, "target %s: host idle recovery: cannot poll %s: %s",
			e->t->name, e->tg->path, strerror(-rc));
	int stopped = idle_until(e, io_end, wait);
	struct idle_args a = { e, id, util_now() - io_end, &x };
	devpoll_end(dp, &x);
	if (stopped)
		return IT_INTERRUPTED;
	if (!x.media_bytes.has && !*noted) {
		*noted = 1;
		log_msg(LOG_NOTICE,
			"target %s: cycle %ld: host idle recovery: %s reports no media bytes "
			"written%s; the idle waits' media bytes are NULL",
			e->t->name, e->cycle, e->tg->path,
			devpoll_has_source(e->tg) ? " (why: logged with its evidence)"
						  : " (no source of its own counters)");
	}
	if (iter_db_patient(e->t->name, "storing a host idle recovery wait", e->stop, store_idle,
			    &a)) {
		if (atomic_load(e->stop))
			return IT_INTERRUPTED;
		snprintf(e->error, e->error_len, "cannot store a host idle recovery wait");
		return IT_FAILED;
	}
	return IT_DONE;
}

/* The bursts of wait state state from repetition from on, each followed
 * by its idle wait (the PTS order: burst, then wait). */
static enum it_status bursts(const struct hir_env *e, int state, long from, double *io_end,
			     int *noted)
{
	double wait = e->t->hir_wait_states.s[state - 1];
	struct db_hir_row row;

	for (long k = from; k <= e->t->hir_repetitions; k++) {
		double left = hir_remaining(e->t, &(struct hir_step){ HIR_BURST, state, k, 0 }, 0);
		int64_t id = 0;
		stage(e, left, "wait state %d of %d (%gs), repetition %ld of %lld: burst", state,
		      e->t->hir_wait_states.n, wait, k, e->t->hir_repetitions);
		row_init(e, &row, DB_HIR_BURST, state, k);
		row.idle_seconds = util_now() - *io_end;
		enum it_status s = measured(e, e->t->hir_burst, &row, io_end, &id);
		if (s != IT_DONE)
			return s;
		stage(e, left - e->t->hir_burst,
		      "wait state %d of %d (%gs), repetition %ld of %lld: idle", state,
		      e->t->hir_wait_states.n, wait, k, e->t->hir_repetitions);
		s = idle_after(e, id, *io_end, wait, noted);
		if (s != IT_DONE)
			return s;
	}
	return IT_DONE;
}

/* After an outage (idle time the next burst must not be credited with):
 * continuous writing back to steady state (a baseline row, repetition 0),
 * then, inside a wait state, the wait that the burst before would have
 * left the drive in (the PTS period: a burst follows the wait of the one
 * before it), stored into that row. */
static enum it_status rebaseline(const struct hir_env *e, const struct hir_step *step,
				 double *io_end, int *noted)
{
	struct db_hir_row row;
	int64_t id = 0;
	double left = hir_remaining(e->t, step, 0);

	stage(e, left, "baseline before wait state %d, repetition %ld (resumed)", step->state,
	      step->repetition);
	row_init(e, &row, DB_HIR_BASELINE, step->state, 0);
	enum it_status s = measured(e, rebaseline_seconds(e->t), &row, io_end, &id);
	if (s != IT_DONE || step->repetition <= 1)
		return s;
	stage(e, left - rebaseline_seconds(e->t),
	      "wait state %d of %d (%gs), repetition %ld of %lld: idle (resumed)", step->state,
	      e->t->hir_wait_states.n, row.wait_seconds, step->repetition - 1,
	      e->t->hir_repetitions);
	return idle_after(e, id, *io_end, row.wait_seconds, noted);
}

/* The wait states from step on; *noted as idle_after takes it. */
static enum it_status states_from(const struct hir_env *e, const struct hir_step *step,
				  double *io_end, int *noted)
{
	const struct cfg_target *t = e->t;
	struct db_hir_row row;
	enum it_status s = IT_DONE;

	for (int i = step->state; i <= t->hir_wait_states.n && s == IT_DONE; i++) {
		int baseline_only = i == step->state && step->stage == HIR_BASELINE;
		if (!baseline_only) {
			log_msg(LOG_INFO,
				"target %s: cycle %ld: host idle recovery: wait state %d of %d "
				"(%gs), bursts %ld..%lld",
				t->name, e->cycle, i, t->hir_wait_states.n,
				t->hir_wait_states.s[i - 1],
				i == step->state ? step->repetition : 1, t->hir_repetitions);
			s = bursts(e, i, i == step->state ? step->repetition : 1, io_end, noted);
		}
		if (s == IT_DONE && t->hir_baseline > 0) {
			stage(e, hir_remaining(t, &(struct hir_step){ HIR_BASELINE, i, 1, 0 }, 0),
			      "baseline after wait state %d of %d", i, t->hir_wait_states.n);
			row_init(e, &row, DB_HIR_BASELINE, i, 1);
			s = measured(e, t->hir_baseline, &row, io_end, NULL);
		}
	}
	return s;
}

struct progress_args {
	const struct hir_env *e;
	struct db_hir_progress *p;
};

static int read_progress(void *arg)
{
	const struct progress_args *a = arg;
	return db_hir_progress(a->e->db, a->e->cycle_id, a->p);
}

/* ---- the purge before the precondition ---------------------------------- */

struct purge_args {
	const struct hir_env *e;
	const struct db_hir_purge_row *row;
	const struct db_wear_state *wear;
};

static int store_purge(void *arg)
{
	const struct purge_args *a = arg;
	return db_hir_purge_insert(a->e->db, a->row, a->wear);
}

/* A purge's effect on the mapped extents (TRIM of [a, b) or an erase)
 * applied to e->wear and put into *ws (*wear then points at it); a failure
 * is logged and leaves *wear alone. */
static void purge_effect(const struct hir_env *e, enum act_effect effect, uint64_t a, uint64_t b,
			 struct db_wear_state *ws, const struct db_wear_state **wear)
{
	int applied = 0;

	switch (effect) {
	case EFFECT_TRIMMED: applied = wear_apply(e->wear, 1, a, b); break;
	case EFFECT_ERASED: applied = wear_apply(e->wear, 0, 0, 0); break;
	case EFFECT_NONE: return;
	}
	if (applied) {
		log_msg(LOG_ERR,
			"target %s: the effect of the purge on the mapped extents is lost: %s",
			e->t->name, strerror(-applied));
		return;
	}
	wear_db_state(e->wear, ws);
	*wear = ws;
}

/* Run act (secure-erase or trim) on the drive as between_cycles would,
 * into *r; its effect on the mapped extents applied to e->wear and put
 * into *ws (*wear then points at it). Returns act_run's value. */
static int purge_with(const struct hir_env *e, enum cfg_action act, struct act_result *r,
		      struct db_wear_state *ws, const struct db_wear_state **wear)
{
	const struct act_env env = {
		.tg = e->tg,
		.t = e->t,
		.region_offset = e->plan->layout.region_offset,
		.region_size = e->plan->layout.region_size,
		.stop = e->stop,
		.command_timeout = e->t->command_timeout,
	};
	uint64_t a = 0, b = 0;
	int ret = act_run(act, &env, r);
	if (ret || r->outcome != ACT_OUT_OK)
		return ret;
	enum act_effect effect = act_effect(act, &env, &a, &b); /* sets a and b */
	purge_effect(e, effect, a, b, ws, wear);
	return 0;
}

struct erased_args {
	const struct hir_env *e;
	const char *tag;
	struct act_result *r;
};

static int read_erased(void *arg)
{
	struct erased_args *a = arg;
	int ret = db_hir_erased(a->e->db, a->e->target_id, a->tag, a->e->cycle_id, a->r->started_at,
				sizeof(a->r->started_at), &a->r->seconds);
	if (ret < 0)
		return ret;
	if (ret)
		a->r->outcome = ACT_OUT_OK;
	return 0;
}

/* A secure_erase_command that ran to its end in this cycle with no purge
 * row after it (a stop or a kill came between the two) is the purge: it is
 * not run again, its effect applied as if it had just ended, into *r (with
 * ws and *wear as purge_with). Returns 1 when there was one, else 0. */
static int purge_erased(const struct hir_env *e, struct act_result *r, struct db_wear_state *ws,
			const struct db_wear_state **wear)
{
	char tag[160];
	struct act_result found = { .outcome = ACT_OUT_SKIPPED };

	if (e->t->secure_erase != ERASE_COMMAND)
		return 0;
	act_erase_command_tag(e->t->name, tag, sizeof(tag));
	if (iter_db_patient(e->t->name, "reading the purge's finished erase", NULL, read_erased,
			    &(struct erased_args){ e, tag, &found }) ||
	    found.outcome != ACT_OUT_OK)
		return 0;
	found.bytes = e->tg->capacity;
	snprintf(found.error, sizeof(found.error),
		 "secure_erase_command ran to its end at %s before a restart; not run again",
		 found.started_at);
	*r = found;
	purge_effect(e, EFFECT_ERASED, 0, 0, ws, wear);
	return 1;
}

/* What attempt r of method did, into row. */
static void purge_result(struct db_hir_purge_row *row, enum db_hir_purge method,
			 const struct act_result *r)
{
	row->method = method;
	row->erase = NULL;
	row->outcome = r->outcome;
	util_strlcpy(row->started_at, r->started_at, sizeof(row->started_at));
	row->seconds = r->seconds;
	row->bytes = r->bytes;
}

/* The purge hir_purge asks for, into row and note (len bytes): a secure
 * erase by secure_erase, TRIM of the span (trim_scope), or none; with
 * auto, the secure erase when one is set, TRIM when it is unsupported or
 * none is set, and none (outcome unsupported, note saying why) when the
 * drive cannot discard either. Returns act_run's value. */
static int purge_choose(const struct hir_env *e, struct db_hir_purge_row *row, char *note,
			size_t len, struct db_wear_state *ws, const struct db_wear_state **wear)
{
	const struct cfg_target *t = e->t;
	struct act_result r = { .outcome = ACT_OUT_SKIPPED };
	int is_auto = t->hir_purge == HIR_PURGE_AUTO, ret;
	char first[640] = ""; /* why no secure erase came first */

	util_iso_now(r.started_at, sizeof(r.started_at));
	purge_result(row, DB_PURGE_NONE, &r);
	if (t->hir_purge == HIR_PURGE_NONE) {
		snprintf(note, len, "hir_purge = none");
		return 0;
	}
	if (t->hir_purge == HIR_PURGE_SECURE_ERASE || (is_auto && t->secure_erase != ERASE_NONE)) {
		ret = purge_erased(e, &r, ws, wear) ? 0
						    : purge_with(e, ACT_SECURE_ERASE, &r, ws, wear);
		purge_result(row, DB_PURGE_SECURE_ERASE, &r);
		row->erase = cfg_erase_name(t->secure_erase);
		if (ret || !is_auto || r.outcome != ACT_OUT_UNSUPPORTED) {
			snprintf(note, len, "%s", r.error);
			return ret;
		}
		snprintf(first, sizeof(first), "secure_erase = %s: %s", row->erase, r.error);
	}
	ret = purge_with(e, ACT_TRIM, &r, ws, wear);
	purge_result(row, DB_PURGE_TRIM, &r);
	if (!ret && is_auto && r.outcome == ACT_OUT_UNSUPPORTED) {
		row->method = DB_PURGE_NONE; /* none could run: the note says why */
		if (!first[0])
			snprintf(first, sizeof(first), "no secure_erase method set");
	}
	snprintf(note, len, "%s%s%s", first, first[0] && r.error[0] ? "; " : "", r.error);
	return ret;
}

enum it_status hir_purge(const struct hir_env *e)
{
	const struct cfg_target *t = e->t;
	struct db_hir_purge_row row = { .cycle_id = e->cycle_id,
					.target_id = e->target_id,
					.run_id = e->run_id };
	struct db_wear_state ws;
	const struct db_wear_state *wear = NULL;
	char note[1280] = "";

	stage(e, hir_remaining(t, &(struct hir_step){ .stage = HIR_PURGE }, 1), "purge (%s)",
	      cfg_hir_purge_name(t->hir_purge));
	int ret = purge_choose(e, &row, note, sizeof(note), &ws, &wear);
	row.note = note[0] ? note : NULL;
	int done = !ret && (row.outcome == ACT_OUT_OK || row.method == DB_PURGE_NONE);
	log_msg(done ? LOG_NOTICE : LOG_ERR,
		"target %s: cycle %ld: host idle recovery: purge by %s%s%s: %s, %llu bytes in "
		"%.2f s%s%s",
		t->name, e->cycle, db_hir_purge_name(row.method), row.erase ? " " : "",
		row.erase ? row.erase : "", act_outcome_name(row.outcome),
		(unsigned long long)row.bytes, row.seconds, row.note ? ": " : "",
		row.note ? row.note : "");
	if (iter_db_patient(t->name, "storing the host idle recovery purge", NULL, store_purge,
			    &(struct purge_args){ e, &row, wear })) {
		snprintf(e->error, e->error_len, "cannot store the host idle recovery purge");
		return IT_FAILED;
	}
	if (row.outcome == ACT_OUT_INTERRUPTED)
		return IT_INTERRUPTED;
	if (!done)
		snprintf(e->error, e->error_len, "host idle recovery: purge by %s %s%s%s%s",
			 db_hir_purge_name(row.method), act_outcome_name(row.outcome),
			 row.note ? ": " : "", row.note ? row.note : "",
			 row.outcome == ACT_OUT_UNSUPPORTED
				 ? " (hir_purge = auto takes what the drive allows)"
				 : "");
	return done ? IT_DONE : IT_FAILED;
}

/* Log where a restart goes on (nothing for a protocol that starts now). */
static void log_resume(const struct hir_env *e, const struct db_hir_progress *p,
		       const struct hir_step *step)
{
	if (step->stage == HIR_PURGE || (step->stage == HIR_PRECONDITION && !p->rounds))
		return;
	log_msg(LOG_NOTICE,
		"target %s: cycle %ld: host idle recovery resumes at %s%s (state %d, burst %ld)",
		e->t->name, e->cycle,
		step->stage == HIR_PRECONDITION ? "the precondition, from its start"
		: step->stage == HIR_BASELINE   ? "the return to baseline"
						: "the next burst",
		step->rebaseline ? ", after writing back to steady state" : "", step->state,
		step->repetition);
}

enum it_status hir_run(const struct hir_env *e)
{
	const struct cfg_target *t = e->t;
	struct db_hir_progress p;
	struct hir_step step;
	double io_end = util_now();
	enum it_status s = IT_DONE;
	int noted = 0; /* a drive without a media counter said so */

	if (iter_db_patient(t->name, "reading the host idle recovery progress", e->stop,
			    read_progress, &(struct progress_args){ e, &p })) {
		if (atomic_load(e->stop))
			return IT_INTERRUPTED;
		snprintf(e->error, e->error_len, "cannot read the host idle recovery progress");
		return IT_FAILED;
	}
	/* rows a crash left out of the counters (stored, not yet accounted
	 * for), even when the protocol itself is complete */
	record_wear(e, &(struct store_args){ e, NULL, 0, &(struct wear_extents){ 0 } });
	hir_next(&p, t->hir_wait_states.n, t->hir_repetitions, t->hir_baseline > 0, &step);
	if (step.stage == HIR_COMPLETE)
		return IT_DONE;
	log_resume(e, &p, &step);
	if (step.stage == HIR_PURGE) {
		s = hir_purge(e);
		step.stage = HIR_PRECONDITION;
		io_end = util_now();
	}
	if (s == IT_DONE && step.stage == HIR_PRECONDITION) {
		s = precondition(e, p.rounds, &io_end);
		step = (struct hir_step){ HIR_BURST, 1, 1, 0 };
	} else if (s == IT_DONE && step.rebaseline) {
		s = rebaseline(e, &step, &io_end, &noted);
	}
	if (s == IT_DONE)
		s = states_from(e, &step, &io_end, &noted);
	return s;
}
