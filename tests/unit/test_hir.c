/* test_hir: host idle recovery: where a cycle's protocol goes on from its
 * rows (hir_next), the time it has left (hir_remaining), the rows of
 * hir_bursts and hir_purges (db_hir_insert, db_hir_idle,
 * db_hir_purge_insert, db_hir_progress) and their readers
 * (query_hir_states, query_hir_preconditions, query_hir_purges). */
#include "unit.h"

#include "unit_db.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/query/query.h"
#include "hir.h"

/* hir_next for progress p, 3 wait states of 4 bursts. */
static struct hir_step next_of(struct db_hir_progress p, int baseline)
{
	struct hir_step s;
	hir_next(&p, 3, 4, baseline, &s);
	return s;
}

static void test_next_step(void **state)
{
	static const struct {
		const char *name;
		struct db_hir_progress p;
		int baseline;
		struct hir_step want;
	} cases[] = {
		/* { purged, preconditioned, rounds, state, bursts, baseline_done } */
		{ "nothing stored: the purge first", { 0 }, 1, { HIR_PURGE, 0, 0, 0 } },
		{ "a purge cut short or failed runs again", { 0 }, 0, { HIR_PURGE, 0, 0, 0 } },
		{ "purged", { .purged = 1 }, 1, { HIR_PRECONDITION, 0, 0, 0 } },
		{ "precondition cut short",
		  { 1, 0, 3, 0, 0, 0 },
		  1,
		  { HIR_PRECONDITION, 0, 0, 0 } },
		{ "an older protocol's rounds, unpurged",
		  { .rounds = 3 },
		  1,
		  { HIR_PRECONDITION, 0, 0, 0 } },
		{ "preconditioned only", { 1, 1, 5, 0, 0, 0 }, 1, { HIR_BURST, 1, 1, 1 } },
		{ "inside a wait state", { 1, 1, 5, 2, 3, 0 }, 1, { HIR_BURST, 2, 4, 1 } },
		{ "bursts done, baseline not", { 1, 1, 5, 2, 4, 0 }, 1, { HIR_BASELINE, 2, 1, 0 } },
		{ "bursts done, no baseline", { 1, 1, 5, 2, 4, 0 }, 0, { HIR_BURST, 3, 1, 1 } },
		{ "baseline done", { 1, 1, 5, 2, 4, 1 }, 1, { HIR_BURST, 3, 1, 1 } },
		{ "last state done", { 1, 1, 5, 3, 4, 1 }, 1, { HIR_COMPLETE, 0, 0, 0 } },
		{ "last bursts, no baseline", { 1, 1, 5, 3, 4, 0 }, 0, { HIR_COMPLETE, 0, 0, 0 } },
		{ "fewer states configured now",
		  { 1, 1, 5, 5, 1, 0 },
		  1,
		  { HIR_COMPLETE, 0, 0, 0 } },
		{ "an older protocol's bursts, unpurged",
		  { 0, 1, 5, 1, 2, 0 },
		  1,
		  { HIR_BURST, 1, 3, 1 } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hir_step s = next_of(cases[i].p, cases[i].baseline);
		if (s.stage != cases[i].want.stage ||
		    (s.stage != HIR_COMPLETE && s.stage != HIR_PRECONDITION &&
		     s.stage != HIR_PURGE &&
		     (s.state != cases[i].want.state ||
		      s.repetition != cases[i].want.repetition)) ||
		    s.rebaseline != cases[i].want.rebaseline)
			fail_msg("%s: stage %d state %d burst %ld rebaseline %d", cases[i].name,
				 s.stage, s.state, s.repetition, s.rebaseline);
	}
}

/* The time left by the configuration: waits 5 s and 10 s, 3 bursts of
 * 2 s each, baselines of 30 s, rounds of 60 s, at most 25 of them. */
static void test_remaining(void **state)
{
	struct cfg_target t = {
		.hir_wait_states = { .n = 2, .s = { 5, 10 } },
		.hir_burst = 2,
		.hir_repetitions = 3,
		.hir_baseline = 30,
		.hir_round = 60,
		.max_rounds = 25,
	};
	double states = 3 * (5 + 2) + 30 + 3 * (10 + 2) + 30;
	struct hir_step pre = { .stage = HIR_PRECONDITION };
	assert_float_equal(hir_remaining(&t, &pre, 1), 25 * 60 + states, 1e-9);
	/* a purge's own length is the drive's: the protocol after it */
	struct hir_step purge = { .stage = HIR_PURGE };
	assert_float_equal(hir_remaining(&t, &purge, 0), 25 * 60 + states, 1e-9);
	assert_float_equal(hir_remaining(&t, &pre, 25), 60 + states, 1e-9);
	assert_float_equal(hir_remaining(&t, &pre, 30), states, 1e-9); /* past max_rounds */
	struct hir_step b = { HIR_BURST, 1, 2, 0 };
	assert_float_equal(hir_remaining(&t, &b, 0), 2 * (5 + 2) + 30 + 3 * (10 + 2) + 30, 1e-9);
	b.rebaseline = 1; /* a resume writes back to steady state first, then
			     waits as the burst before would have */
	assert_float_equal(hir_remaining(&t, &b, 0), 30 + 5 + 2 * (5 + 2) + 30 + 3 * 12 + 30, 1e-9);
	struct hir_step first = { HIR_BURST, 2, 1, 1 }; /* no burst before it: no wait */
	assert_float_equal(hir_remaining(&t, &first, 0), 30 + 3 * (10 + 2) + 30, 1e-9);
	struct hir_step base = { HIR_BASELINE, 2, 1, 0 };
	assert_float_equal(hir_remaining(&t, &base, 0), 30, 1e-9);
	struct hir_step done = { HIR_COMPLETE, 0, 0, 0 };
	assert_float_equal(hir_remaining(&t, &done, 0), 0, 1e-9);
}

struct fx {
	struct unit_db u;
	struct db *db;
	int64_t run, target, cycle;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct db_target_info t = { .name = "hir",
				    .device = "/dev/loop9",
				    .kind = TGT_BLOCK,
				    .capacity_bytes = 1ull << 30,
				    .logical_block_size = 512 };
	char err[512];

	*state = fx;
	if (!fx || unit_db_make(&fx->u, "hir") ||
	    db_open(fx->u.path, 0, &fx->db, err, sizeof(err)) ||
	    db_run_begin(fx->db, "/etc/wearmon/t.conf", &fx->run) ||
	    db_target_upsert(fx->db, &t, &fx->target) ||
	    db_cycle_begin(fx->db, fx->target, fx->run, 1, &fx->cycle))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	db_close(fx->db);
	unit_db_remove(&fx->u);
	free(fx);
	return 0;
}

/* A row of kind in wait state st: 1 MiB in 0.5 s, the drive counting
 * host bytes and media bytes media (< 0: no counters). */
static int64_t put(struct fx *fx, enum db_hir_kind kind, int st, long rep, double wait,
		   int64_t media, int steady)
{
	struct db_hir_row r = {
		.cycle_id = fx->cycle,
		.target_id = fx->target,
		.run_id = fx->run,
		.kind = kind,
		.wait_state = st,
		.wait_seconds = wait,
		.idle_seconds = wait,
		.repetition = rep,
		.started_at = "2026-12-05T12:00:00.000Z",
		.seconds = 0.5,
		.bytes = 1 << 20,
		.ops = 256,
		.mibps = 2.0,
		.iops = 512,
		.lat_mean_us = 100,
		.lat_p99_us = 300,
		.device.wa = -1,
		.steady = steady,
	};
	if (media >= 0) {
		r.device.has[DB_DEV_HOST_BYTES] = r.device.has[DB_DEV_MEDIA_BYTES] = 1;
		r.device.val[DB_DEV_HOST_BYTES] = 1 << 20;
		r.device.val[DB_DEV_MEDIA_BYTES] = media;
		r.device.wa = (double)media / (1 << 20);
		r.device.has[DB_DEV_PEAK_TEMP_C] = 1;
		r.device.val[DB_DEV_PEAK_TEMP_C] = 40 + st;
	}
	int64_t id = 0;
	assert_int_equal(db_hir_insert(fx->db, &r, &id), 0);
	return id;
}

static void progress_is(struct fx *fx, int pre, int rounds, int st, long bursts, int base)
{
	struct db_hir_progress p;

	assert_int_equal(db_hir_progress(fx->db, fx->cycle, &p), 0);
	if (p.preconditioned != pre || p.rounds != rounds || p.state != st || p.bursts != bursts ||
	    p.baseline_done != base)
		fail_msg("progress %d %d %d %ld %d, want %d %d %d %ld %d", p.preconditioned,
			 p.rounds, p.state, p.bursts, p.baseline_done, pre, rounds, st, bursts,
			 base);
}

/* The rows a reader returned, kept whole. */
struct rows {
	int n;
	double v[8][32];
	char names[32][32];
	int ncols;
};

static int keep(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct rows *r = arg;

	r->ncols = n < 32 ? n : 32;
	for (int i = 0; i < r->ncols && r->n < 8; i++) {
		snprintf(r->names[i], sizeof(r->names[i]), "%s", names[i]);
		r->v[r->n][i] = v[i].type == DB_INT    ? (double)v[i].i
				: v[i].type == DB_REAL ? v[i].r
						       : NAN;
	}
	r->n++;
	return 0;
}

static double cell(const struct rows *r, int row, const char *name)
{
	for (int i = 0; i < r->ncols; i++)
		if (!strcmp(r->names[i], name))
			return r->v[row][i];
	fail_msg("no column %s", name);
	return NAN;
}

static void test_rows_progress_and_readers(void **state)
{
	struct fx *fx = *state;
	struct rows st = { 0 }, pre = { 0 };
	char err[256];
	struct query_sink s1 = { keep, &st, err, sizeof(err) },
			  s2 = { keep, &pre, err, sizeof(err) };

	progress_is(fx, 0, 0, 0, 0, 0);
	put(fx, DB_HIR_PRECONDITION, 0, 1, -1, -1, -1);
	put(fx, DB_HIR_PRECONDITION, 0, 2, -1, -1, 1);
	progress_is(fx, 1, 2, 0, 0, 0);
	put(fx, DB_HIR_BURST, 1, 1, 5, 3 << 20, -1);
	put(fx, DB_HIR_BURST, 1, 2, 5, 2 << 20, -1);
	progress_is(fx, 1, 2, 1, 2, 0);
	put(fx, DB_HIR_BASELINE, 1, 1, 5, -1, -1);
	progress_is(fx, 1, 2, 1, 2, 1);
	put(fx, DB_HIR_BASELINE, 2, 0, 10, -1, -1); /* a restart's: no progress */
	progress_is(fx, 1, 2, 1, 2, 1);
	put(fx, DB_HIR_BURST, 2, 1, 10, -1, -1); /* no counters */
	progress_is(fx, 1, 2, 2, 1, 0);

	assert_int_equal(query_hir_states(fx->db, fx->target, 1, 1, &s1), 0);
	assert_int_equal(st.n, 2);
	assert_true(cell(&st, 0, "wait_state") == 1 && cell(&st, 0, "wait_seconds") == 5);
	assert_true(cell(&st, 0, "bursts") == 2 && fabs(cell(&st, 0, "mibps") - 2.0) < 1e-9);
	assert_true(fabs(cell(&st, 0, "device_wa") - 2.5) < 1e-9);
	assert_true(cell(&st, 0, "peak_temp_c") == 41 && cell(&st, 0, "baseline_mibps") == 2.0);
	assert_true(cell(&st, 0, "lat_p99_us") == 300 && cell(&st, 0, "iops") == 512);
	assert_true(cell(&st, 1, "wait_state") == 2 && cell(&st, 1, "bursts") == 1);
	assert_true(isnan(cell(&st, 1, "device_wa")) && isnan(cell(&st, 1, "baseline_mibps")));
	st.n = 0;
	assert_int_equal(query_hir_states(fx->db, fx->target, 2, 9, &s1), 0);
	assert_int_equal(st.n, 0); /* another cycle range */

	assert_int_equal(query_hir_preconditions(fx->db, fx->target, 0, INT64_MAX, &s2), 0);
	assert_int_equal(pre.n, 1);
	assert_true(cell(&pre, 0, "rounds") == 2 && cell(&pre, 0, "steady") == 1);
}

/* A purge attempt of method with outcome (and the wear state it leaves,
 * or none). */
static void put_purge(struct fx *fx, enum db_hir_purge method, enum act_outcome outcome,
		      const char *note, const struct db_wear_state *ws)
{
	struct db_hir_purge_row p = {
		.cycle_id = fx->cycle,
		.target_id = fx->target,
		.run_id = fx->run,
		.method = method,
		.erase = method == DB_PURGE_SECURE_ERASE ? "command" : NULL,
		.outcome = outcome,
		.started_at = "2026-12-05T11:59:00.000Z",
		.seconds = 0.25,
		.bytes = outcome == ACT_OUT_OK ? 1u << 30 : 0,
		.note = note,
	};
	assert_int_equal(db_hir_purge_insert(fx->db, &p, ws), 0);
}

/* db_row_fn: the first column of the first row as text (96 bytes). */
static int first_text(void *arg, int n, const struct db_value *v, const char *const *names)
{
	char *out = arg;
	(void)names;
	if (n > 0 && v[0].type == DB_TEXT)
		snprintf(out, 96, "%s", v[0].s);
	else if (n > 0 && v[0].type == DB_INT)
		snprintf(out, 96, "%lld", (long long)v[0].i);
	return 0;
}

/* The first column of sql's first row on fx's database as text. */
static const char *qtext(struct fx *fx, const char *sql, char out[96])
{
	char err[256];
	out[0] = 0;
	if (db_query(fx->db, sql, NULL, 0, first_text, out, err, sizeof(err)))
		fail_msg("%s: %s", sql, err);
	return out;
}

static int purged(struct fx *fx)
{
	struct db_hir_progress p;
	assert_int_equal(db_hir_progress(fx->db, fx->cycle, &p), 0);
	return p.purged;
}

/* The purge: only one that ran (ok) or a recorded none counts, so a
 * purge cut short or failed runs again; its wear state is stored with it;
 * the readers list every attempt. */
static void test_purge_rows(void **state)
{
	struct fx *fx = *state;
	struct rows pu = { 0 };
	char err[256], text[96] = "";
	struct query_sink s = { keep, &pu, err, sizeof(err) };
	struct db_wear_state ws = { .target_id = fx->target, .host_total = 77 };

	assert_false(purged(fx));
	put_purge(fx, DB_PURGE_TRIM, ACT_OUT_INTERRUPTED, NULL, NULL);
	assert_false(purged(fx));
	put_purge(fx, DB_PURGE_SECURE_ERASE, ACT_OUT_FAILED, "exited with status 1", NULL);
	assert_false(purged(fx));
	put_purge(fx, DB_PURGE_TRIM, ACT_OUT_UNSUPPORTED, "cannot discard", NULL);
	assert_false(purged(fx)); /* hir_purge = trim asked for it: not done */
	put_purge(fx, DB_PURGE_SECURE_ERASE, ACT_OUT_OK, NULL, &ws);
	assert_true(purged(fx));
	assert_string_equal(qtext(fx, "SELECT host_bytes_total FROM targets", text), "77");

	assert_int_equal(query_hir_purges(fx->db, fx->target, 1, 1, &s), 0);
	assert_int_equal(pu.n, 4);
	assert_true(cell(&pu, 3, "seconds") == 0.25 && cell(&pu, 3, "bytes") == (1u << 30));
	assert_true(cell(&pu, 0, "bytes") == 0 && cell(&pu, 3, "cycle") == 1);
	assert_string_equal(
		qtext(fx,
		      "SELECT group_concat(method || ':' || outcome, ' ') FROM"
		      " (SELECT * FROM hir_purges ORDER BY id)",
		      text),
		"trim:interrupted secure-erase:failed trim:unsupported secure-erase:ok");
	pu.n = 0;
	assert_int_equal(query_hir_purges(fx->db, fx->target, 2, 9, &s), 0);
	assert_int_equal(pu.n, 0);
}

/* None that could run (hir_purge = auto on a drive that cannot discard)
 * or that the configuration asks for counts as done, with its note. */
static void test_purge_none(void **state)
{
	struct fx *fx = *state;
	char text[96];

	put_purge(fx, DB_PURGE_NONE, ACT_OUT_UNSUPPORTED, "no secure_erase; cannot discard", NULL);
	assert_true(purged(fx));
	assert_string_equal(qtext(fx,
				  "SELECT method || ' ' || outcome || ': ' || note"
				  " FROM hir_purges",
				  text),
			    "none unsupported: no secure_erase; cannot discard");
}

/* The idle wait after a burst: stored into its row; the readers give per
 * wait state the waits, the idle seconds and the media bytes written
 * while idle (over the waits with the figure); a wait a stop dropped has
 * none, and only a burst's row takes one. */
static void test_idle_waits(void **state)
{
	struct fx *fx = *state;
	struct rows st = { 0 };
	char err[256];
	struct query_sink s = { keep, &st, err, sizeof(err) };

	put_purge(fx, DB_PURGE_TRIM, ACT_OUT_OK, NULL, NULL);
	put(fx, DB_HIR_PRECONDITION, 0, 1, -1, -1, 1);
	int64_t b1 = put(fx, DB_HIR_BURST, 1, 1, 5, 3 << 20, -1);
	assert_int_equal(db_hir_idle(fx->db, b1, 5.02, 0, 6 << 20), 0);
	int64_t b2 = put(fx, DB_HIR_BURST, 1, 2, 5, 2 << 20, -1);
	assert_int_equal(db_hir_idle(fx->db, b2, 4.98, 0, 2 << 20), 0);
	put(fx, DB_HIR_BURST, 1, 3, 5, 2 << 20, -1); /* its wait dropped */
	int64_t base = put(fx, DB_HIR_BASELINE, 1, 1, 5, -1, -1);
	assert_int_equal(db_hir_idle(fx->db, base, 1, 0, 0), -ENOENT); /* not a wait's */
	int64_t resumed = put(fx, DB_HIR_BASELINE, 2, 0, 10, -1, -1);
	assert_int_equal(db_hir_idle(fx->db, resumed, 10.0, 0, 1 << 20), 0); /* a restart's */
	int64_t c1 = put(fx, DB_HIR_BURST, 2, 1, 10, -1, -1);
	assert_int_equal(db_hir_idle(fx->db, c1, 10.0, -1, -1), 0); /* no counters */

	assert_int_equal(query_hir_states(fx->db, fx->target, 1, 1, &s), 0);
	assert_int_equal(st.n, 2);
	assert_true(cell(&st, 0, "bursts") == 3 && cell(&st, 0, "waits") == 2);
	assert_float_equal(cell(&st, 0, "idle_seconds"), 10.0, 1e-9);
	assert_true(cell(&st, 0, "idle_media_bytes") == 8 << 20);
	assert_true(cell(&st, 0, "idle_media_per_wait") == 4 << 20);
	assert_float_equal(cell(&st, 0, "idle_media_mibps"), 0.8, 1e-9);
	assert_true(cell(&st, 0, "idle_host_bytes") == 0);
	/* the restart's wait is not one of the wait state's */
	assert_true(cell(&st, 1, "waits") == 1 && isnan(cell(&st, 1, "idle_media_bytes")));
	assert_true(isnan(cell(&st, 1, "idle_media_mibps")));
}

/* ---- the purge (hir_purge) on a file the test owns ---------------------- */

#define REGION (1u << 20)

/* A target on a 2 MiB file in fx's directory: a regular file (TRIM is a
 * hole punched) or, as the kernel would call it, a block device that
 * cannot discard; the region its first MiB, mapped in full in the wear
 * state stored before the purge. */
struct purge_fx {
	struct cfg_target t;
	struct plan plan;
	struct tgt tg;
	struct wear_state w;
	char error[512];
	struct hir_env env;
};

static void purge_setup(struct fx *fx, struct purge_fx *p, enum cfg_hir_purge how,
			enum cfg_erase erase, int block_without_discard)
{
	static const atomic_int no_stop;
	char path[160];

	memset(p, 0, sizeof(*p));
	snprintf(p->t.name, sizeof(p->t.name), "hir");
	p->t.hir = 1;
	p->t.hir_purge = how;
	p->t.secure_erase = erase;
	p->plan.layout.region_size = REGION;
	snprintf(path, sizeof(path), "%s/disk", fx->u.dir);
	p->tg.fd = open(path, O_RDWR | O_CREAT, 0600);
	assert_true(p->tg.fd >= 0 && ftruncate(p->tg.fd, 2 * REGION) == 0);
	snprintf(p->tg.path, sizeof(p->tg.path), "%s", path);
	snprintf(p->tg.real_path, sizeof(p->tg.real_path), "%s", path);
	p->tg.capacity = 2 * REGION;
	p->tg.is_block = block_without_discard; /* discard_granularity 0: none */
	assert_int_equal(wear_load(fx->db, fx->target, &p->w), 0);
	assert_int_equal(wear_ext_add(&p->w.ext, 0, REGION), 0);
	assert_int_equal(wear_trimmed(&p->w, REGION, 2 * REGION), 0); /* stores [0, 1 MiB) */
	p->env = (struct hir_env){ .t = &p->t,
				   .plan = &p->plan,
				   .tg = &p->tg,
				   .db = fx->db,
				   .wear = &p->w,
				   .run_id = fx->run,
				   .target_id = fx->target,
				   .cycle_id = fx->cycle,
				   .cycle = 1,
				   .stop = &no_stop,
				   .error = p->error,
				   .error_len = sizeof(p->error) };
}

static void purge_teardown(struct purge_fx *p)
{
	close(p->tg.fd);
	wear_free(&p->w);
}

/* hir_purge = auto with no secure_erase: TRIM of the region, recorded,
 * and the mapped extents it trimmed gone from the stored wear state. */
static void test_purge_trims(void **state)
{
	struct fx *fx = *state;
	struct purge_fx p;
	char text[96];

	purge_setup(fx, &p, HIR_PURGE_AUTO, ERASE_NONE, 0);
	assert_string_equal(qtext(fx, "SELECT count(*) FROM mapped_extents", text), "1");
	assert_int_equal(hir_purge(&p.env), IT_DONE);
	assert_string_equal(qtext(fx,
				  "SELECT method || ' ' || outcome || ' ' || bytes || ' '"
				  " || coalesce(erase, '-') || ' ' || coalesce(note, '-')"
				  " FROM hir_purges",
				  text),
			    "trim ok 1048576 - -");
	assert_string_equal(qtext(fx, "SELECT count(*) FROM mapped_extents", text), "0");
	assert_true(purged(fx));
	purge_teardown(&p);
}

/* auto, with a secure_erase the device does not take and no discard
 * either: no purge, recorded with both reasons, and the protocol goes
 * on; the mapped extents stay. */
static void test_purge_none_could(void **state)
{
	struct fx *fx = *state;
	struct purge_fx p;
	char text[96];

	purge_setup(fx, &p, HIR_PURGE_AUTO, ERASE_BLKSECDISCARD, 1);
	assert_int_equal(hir_purge(&p.env), IT_DONE);
	assert_string_equal(qtext(fx, "SELECT method || ' ' || outcome FROM hir_purges", text),
			    "none unsupported");
	qtext(fx, "SELECT note FROM hir_purges", text);
	assert_non_null(strstr(text, "secure_erase = blksecdiscard: BLKSECDISCARD: not supported"));
	assert_string_equal(qtext(fx, "SELECT count(*) FROM mapped_extents", text), "1");
	assert_true(purged(fx));
	purge_teardown(&p);
}

/* A purge that hir_purge asks for by name and the device cannot do fails
 * the cycle, naming it, and does not count as done (a restart tries
 * again). */
static void test_purge_asked_for_fails(void **state)
{
	static const struct {
		enum cfg_hir_purge how;
		const char *want;
	} cases[] = {
		{ HIR_PURGE_TRIM, "host idle recovery: purge by trim unsupported: " },
		{ HIR_PURGE_SECURE_ERASE,
		  "host idle recovery: purge by secure-erase unsupported: " },
	};
	struct fx *fx = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct purge_fx p;
		purge_setup(fx, &p, cases[i].how, ERASE_BLKSECDISCARD, 1);
		assert_int_equal(hir_purge(&p.env), IT_FAILED);
		if (strncmp(p.error, cases[i].want, strlen(cases[i].want)) ||
		    !strstr(p.error, "hir_purge = auto"))
			fail_msg("%s", p.error);
		assert_false(purged(fx));
		purge_teardown(&p);
	}
}

/* hir_purge = none: nothing done to the drive, recorded as such. */
static void test_purge_asked_none(void **state)
{
	struct fx *fx = *state;
	struct purge_fx p;
	char text[96];

	purge_setup(fx, &p, HIR_PURGE_NONE, ERASE_BLKSECDISCARD, 0);
	assert_int_equal(hir_purge(&p.env), IT_DONE);
	assert_string_equal(qtext(fx,
				  "SELECT method || ' ' || outcome || ': ' || note"
				  " FROM hir_purges",
				  text),
			    "none skipped: hir_purge = none");
	assert_string_equal(qtext(fx, "SELECT count(*) FROM mapped_extents", text), "1");
	purge_teardown(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_step),
		cmocka_unit_test(test_remaining),
		cmocka_unit_test_setup_teardown(test_rows_progress_and_readers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_trims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_none_could, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_asked_for_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_asked_none, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
