/* Unit tests of wear: extents, health deltas, write fractions, the state
 * and firmware kept in the database, the wear rows of a size. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "device/wear.h"

struct ext_case {
	const char *name;
	int add; /* 1 add, 0 remove */
	uint64_t a, b;
	size_t n; /* extents after */
	uint64_t total;
};

/* One sequence of operations, checked after each step. */
static void test_extents_table(void **state)
{
	static const struct ext_case steps[] = {
		{ "first", 1, 100, 200, 1, 100 },
		{ "disjoint after", 1, 300, 400, 2, 200 },
		{ "touching merges", 1, 200, 300, 1, 300 },
		{ "inside is no-op", 1, 150, 250, 1, 300 },
		{ "overlap extends left", 1, 50, 120, 1, 350 },
		{ "split by remove", 0, 200, 250, 2, 300 },
		{ "remove head", 0, 0, 60, 2, 290 },
		{ "remove tail", 0, 380, 1000, 2, 270 },
		{ "remove across both", 0, 150, 300, 2, 170 },
		{ "add spanning all", 1, 0, 1000, 1, 1000 },
		{ "remove all", 0, 0, 1000, 0, 0 },
		{ "empty range", 1, 5, 5, 0, 0 },
	};
	struct wear_extents e = { 0 };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct ext_case *c = &steps[i];
		int ret = c->add ? wear_ext_add(&e, c->a, c->b) : wear_ext_remove(&e, c->a, c->b);
		assert_int_equal(ret, 0);
		if (e.n != c->n || wear_ext_total(&e) != c->total)
			fail_msg("%s: %zu extents, %llu bytes", c->name, e.n,
				 (unsigned long long)wear_ext_total(&e));
		for (size_t k = 1; k < e.n; k++)
			assert_true(e.v[k - 1][1] < e.v[k][0]); /* sorted, not touching */
	}
	wear_ext_free(&e);
}

/* Snapshots one after another: each gets the bytes since the one before
 * and their ratio; unknown counters give unknown deltas, not zeros. */
static void test_health_deltas(void **state)
{
	static const struct {
		int64_t host, nand, d_host, d_nand;
		double wa;
	} c[] = {
		{ 1000, 1000, -1, -1, -1 },      /* the first: nothing before */
		{ 5000, 9000, 4000, 8000, 2.0 }, /* a cycle: WA 2 */
		{ 5000, 9500, 0, 500, -1 },      /* an action: no host bytes, GC */
		{ 6000, 10500, 1000, 1000, 1.0 },
		{ -1, -1, -1, -1, -1 },           /* counters not readable */
		{ 7000, 12500, 1000, 2000, 2.0 }, /* against the last known ones */
		{ 100, 200, -1, -1, -1 },         /* counters went back (new drive) */
	};
	struct wear_state w = { .last_host = -1, .last_nand = -1 };

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int64_t dh, dn;
		double wa;
		wear_deltas(&w, c[i].host, c[i].nand, &dh, &dn, &wa);
		if (dh != c[i].d_host || dn != c[i].d_nand || wa != c[i].wa)
			fail_msg("case %zu: got %lld %lld %g want %lld %lld %g", i, (long long)dh,
				 (long long)dn, wa, (long long)c[i].d_host, (long long)c[i].d_nand,
				 c[i].wa);
	}
}

static void test_write_fraction(void **state)
{
	assert_true(wear_write_fraction(WL_RANDWRITE) == 1.0);
	assert_true(wear_write_fraction(WL_SEQWRITE) == 1.0);
	assert_true(wear_write_fraction(WL_REWRITE) == 1.0);
	assert_true(wear_write_fraction(WL_RANDREAD) == 0.0);
	assert_true(wear_write_fraction(WL_BACKREAD) == 0.0);
	assert_true(wear_write_fraction(WL_STRIDEREAD) == 0.0);
	assert_true(wear_write_fraction(WL_SEQREAD) == 0.0);
	assert_true(wear_write_fraction(WL_RANDRW) == 1.0); /* mixed: an upper bound */
	assert_true(wear_write_fraction(WL_DATABASE) == 1.0);
}

/* Snapshot points are stored by one table of names. */
static void test_point_names(void **state)
{
	assert_string_equal(wear_point_name(WEAR_CYCLE_START), "cycle-start");
	assert_string_equal(wear_point_name(WEAR_CYCLE_END), "cycle-end");
	assert_string_equal(wear_point_name(WEAR_AFTER_ACTION), "after-action");
	assert_string_equal(wear_point_name(WEAR_POINT__COUNT), "?");
}

/* A real database in a temporary directory, with one target. */
struct dbfx {
	char dir[64], path[96];
	struct db *db;
	int64_t target_id;
};

static int db_setup(void **state)
{
	struct dbfx *f = calloc(1, sizeof(*f));
	char err[256];
	struct db_target_info t = { .name = "t1",
				    .device = "/dev/loop9",
				    .kind = TGT_BLOCK,
				    .capacity_bytes = 1 << 30,
				    .logical_block_size = 512 };
	snprintf(f->dir, sizeof(f->dir), "/tmp/wearmon-test-wear.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/w.db", f->dir);
	if (db_open(f->path, 0, &f->db, err, sizeof(err)) ||
	    db_target_upsert(f->db, &t, &f->target_id))
		return -1;
	*state = f;
	return 0;
}

static int db_teardown(void **state)
{
	struct dbfx *f = *state;
	char p[128];
	db_close(f->db);
	static const char *const ext[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", f->path, ext[i]);
		unlink(p);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

static void insert_firmware(struct dbfx *f, const char *json)
{
	const char *sql[] = {
		"INSERT INTO health (target_id, source, data) VALUES (?, 'sysfs', ?)"
	};
	struct db_value v[] = { { .type = DB_INT, .i = f->target_id },
				{ .type = DB_TEXT, .s = json } };
	const struct db_value *params[] = { v };
	int np[] = { 2 };
	char err[256];
	assert_int_equal(db_write(f->db, sql, params, np, 1, err, sizeof(err)), 0);
}

/* A firmware change is seen against the latest snapshot only, and never
 * when either side is unknown. */
static void test_firmware_changed(void **state)
{
	struct dbfx *f = *state;
	struct wear_state w;
	char before[64];
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(wear_firmware_changed(&w, "FW2", before, sizeof(before)), 0);
	insert_firmware(f, "{\"serial\":\"S1\",\"firmware\":\"0362\"}");
	insert_firmware(f, "{\"serial\":\"S1\",\"firmware\":\"4PC10362\"}");
	assert_int_equal(wear_firmware_changed(&w, "4PC10362", before, sizeof(before)), 0);
	assert_int_equal(wear_firmware_changed(&w, "4PC1036A", before, sizeof(before)), 1);
	assert_string_equal(before, "4PC10362");
	assert_int_equal(wear_firmware_changed(&w, "", before, sizeof(before)), 0);
	insert_firmware(f, "{\"serial\":\"S1\",\"firmware\":\"\"}");
	assert_int_equal(wear_firmware_changed(&w, "4PC1036A", before, sizeof(before)), 0);
	wear_free(&w);
}

/* Extents and host counters survive a reload; trims and erases too. */
static void test_state_persists(void **state)
{
	struct dbfx *f = *state;
	struct wear_state w;
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(wear_ext_add(&w.ext, 0, 1 << 20), 0);
	w.host_total = 5 << 20;
	w.host_since_erase = 3 << 20;
	assert_int_equal(wear_trimmed(&w, 0, 4096), 0); /* saves the state */
	wear_free(&w);

	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(wear_ext_total(&w.ext), (1 << 20) - 4096);
	assert_int_equal(w.host_total, 5 << 20);
	assert_int_equal(w.host_since_erase, 3 << 20);
	assert_int_equal(wear_erased(&w), 0);
	wear_free(&w);

	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(wear_ext_total(&w.ext), 0);
	assert_int_equal(w.host_total, 5 << 20);
	assert_int_equal(w.host_since_erase, 0);
	wear_free(&w);
}

static int count_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	*(int64_t *)arg = v[0].i;
	return 0;
}

static int64_t health_rows(struct dbfx *f)
{
	int64_t n = -1;
	char err[256];
	assert_int_equal(db_query(f->db,
				  "SELECT count(*) FROM health WHERE json_valid(data)"
				  " AND source = 'simssd'",
				  NULL, 0, count_row, &n, err, sizeof(err)),
			 0);
	return n;
}

/* A snapshot whose device does not answer (its counters file a FIFO no one
 * writes, so the read blocks in the kernel) is abandoned WEAR_STOP_GRACE
 * after a stop, and nothing of it stored; one that answers is stored even
 * when the stop came first. */
static void test_health_abandoned_on_stop(void **state)
{
	struct dbfx *f = *state;
	struct tgt tg = { .name = "t1",
			  .path = "/dev/loop9",
			  .is_block = 1,
			  .real_path = "/nonexistent/wearmon-test" };
	static const char counters[] = "flash_bytes_written 8192\nhost_bytes_written 4096\n";
	struct wear_state w;
	atomic_int stop = 1;
	char stats[160];
	snprintf(tg.backing_file, sizeof(tg.backing_file), "%s/disk.img", f->dir);
	snprintf(stats, sizeof(stats), "%s/" WEAR_COUNTERS_FILE, f->dir);
	FILE *c = fopen(stats, "w");
	assert_non_null(c);
	fputs(counters, c);
	fclose(c);
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	w.stop = &stop;
	assert_int_equal(wear_health(&w, &tg, 0, WEAR_CYCLE_START, -1), 0);
	assert_int_equal(health_rows(f), 1);

	unlink(stats);
	assert_int_equal(mkfifo(stats, 0600), 0);
	double t0 = util_now();
	assert_int_equal(wear_health(&w, &tg, 0, WEAR_CYCLE_END, -1), -EINTR);
	assert_true(util_now() - t0 < 10);
	assert_int_equal(health_rows(f), 1);
	/* the device answers after all: the abandoned reader ends, frees its job */
	int fd = open(stats, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, counters, sizeof(counters) - 1), (ssize_t)sizeof(counters) - 1);
	close(fd);
	usleep(200 * 1000);
	unlink(stats);
	wear_free(&w);
}

#define MiB (1ull << 20)

/* n finished iterations of size size_index (16 MiB) in cycle_id, numbered
 * from first: the first filled the size, every fifth is a read that wrote
 * nothing, the others wrote bytes of a randwrite. Returns the host bytes
 * they wrote. */
static uint64_t add_iterations(struct dbfx *f, int64_t run_id, int64_t cycle_id, int size_index,
			       long first, int n)
{
	uint64_t written = 0;
	for (int k = 0; k < n; k++) {
		int reads = k % 5 == 4;
		struct db_iteration it = {
			.cycle_id = cycle_id,
			.run_id = run_id,
			.target_id = f->target_id,
			.number = first + k,
			.size_index = size_index,
			.size_bytes = 16 * MiB,
			.workload = reads ? "randread" : "randwrite",
			.block_size = 4096,
			.queue_depth = 1,
			.amount_bytes = MiB,
			.started_at = "2026-12-02T14:25:50.123Z",
			.status = DB_RUNNING,
		};
		int64_t id;
		assert_int_equal(db_iteration_begin(f->db, &it, &id), 0);
		snprintf(it.ended_at, sizeof(it.ended_at), "2026-12-02T14:25:51.123Z");
		it.status = DB_DONE;
		it.seconds = 1;
		it.bytes = MiB + (uint64_t)k * 4096;
		it.fill_bytes = k ? 0 : 16 * MiB;
		assert_int_equal(db_iteration_end(f->db, id, &it, NULL, 0), 0);
		written += it.fill_bytes + (reads ? 0 : it.bytes);
	}
	return written;
}

static int64_t query_int(struct dbfx *f, const char *sql)
{
	int64_t v = -1;
	char err[256];
	if (db_query(f->db, sql, NULL, 0, count_row, &v, err, sizeof(err)))
		fail_msg("%s: %s", sql, err);
	return v;
}

/* Wear rows of size_index 0, and of them those whose host_bytes_total is
 * not the sum of host_bytes_written up to them. */
#define WEAR_ROWS_0                                                                                \
	"SELECT count(*) FROM wear w JOIN iterations i ON i.id = w.iteration_id"                   \
	" WHERE i.size_index = 0"
#define WEAR_NOT_CUMULATIVE                                                                        \
	"SELECT count(*) FROM wear w WHERE w.host_bytes_total !="                                  \
	" (SELECT sum(v.host_bytes_written) FROM wear v WHERE v.iteration_id <= w.iteration_id)"

/* A size with more iterations than any fixed batch (70, as repeat = 70 or
 * steady_state = snia rounds give): every one gets its wear row, the host
 * counters count each once, and another size's iterations wait for their
 * own call. */
static void test_wear_every_iteration(void **state)
{
	struct dbfx *f = *state;
	struct wear_state w;
	int64_t run_id, cycle_id;
	assert_int_equal(db_run_begin(f->db, "t.conf", &run_id), 0);
	assert_int_equal(db_cycle_begin(f->db, f->target_id, run_id, 1, &cycle_id), 0);
	uint64_t written = add_iterations(f, run_id, cycle_id, 0, 1, 70);
	add_iterations(f, run_id, cycle_id, 1, 71, 3);
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);

	assert_int_equal(wear_after_size(&w, cycle_id, 0, 0, 16 * MiB, 1 << 30, 512 * MiB, -1), 0);
	assert_int_equal(query_int(f, WEAR_ROWS_0), 70);
	assert_int_equal(query_int(f, "SELECT count(*) FROM wear"), 70);
	assert_int_equal(query_int(f, "SELECT sum(host_bytes_written) FROM wear"), written);
	assert_int_equal(query_int(f, "SELECT max(host_bytes_total) FROM wear"), written);
	assert_int_equal(query_int(f, "SELECT max(host_bytes_since_erase) FROM wear"), written);
	assert_int_equal(query_int(f, WEAR_NOT_CUMULATIVE), 0);
	assert_int_equal(query_int(f, "SELECT count(*) FROM wear WHERE mapped_bytes != 16 << 20"),
			 0);
	assert_int_equal(w.host_total, written);
	assert_int_equal(w.host_since_erase, written);
	assert_int_equal(wear_ext_total(&w.ext), 16 * MiB);

	/* nothing left: a second call adds no row and counts nothing again */
	assert_int_equal(wear_after_size(&w, cycle_id, 0, 0, 16 * MiB, 1 << 30, 512 * MiB, -1), 0);
	assert_int_equal(query_int(f, "SELECT count(*) FROM wear"), 70);
	assert_int_equal(w.host_total, written);
	wear_free(&w);

	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(w.host_total, written);
	assert_int_equal(w.host_since_erase, written);
	wear_free(&w);
}

/* A host idle recovery row of cycle_id that wrote bytes. Returns its id. */
static int64_t add_hir(struct dbfx *f, int64_t run_id, int64_t cycle_id, long k, uint64_t bytes)
{
	struct db_hir_row r = {
		.cycle_id = cycle_id,
		.target_id = f->target_id,
		.run_id = run_id,
		.kind = DB_HIR_BURST,
		.wait_state = 1,
		.wait_seconds = 5,
		.idle_seconds = 5,
		.repetition = k,
		.started_at = "2026-12-02T14:26:50.123Z",
		.seconds = 1,
		.bytes = bytes,
		.ops = bytes / 4096,
		.mibps = -1,
		.iops = -1,
		.lat_mean_us = -1,
		.lat_p99_us = -1,
		.device.wa = -1,
		.steady = -1,
	};
	int64_t id = 0;
	assert_int_equal(db_hir_insert(f->db, &r, &id), 0);
	assert_true(id > 0);
	return id;
}

/* Host idle recovery writes count where the iterations' do, through the
 * same accounting: the host counters, the mapped extents (a row's own
 * ranges, or the whole span for a row left pending), each row's wear
 * figures cumulative with the iterations' wear rows, and once only. */
static void test_wear_after_hir(void **state)
{
	struct dbfx *f = *state;
	struct wear_state w;
	struct wear_extents mine = { 0 };
	int64_t run_id, cycle_id, next_cycle;
	assert_int_equal(db_run_begin(f->db, "t.conf", &run_id), 0);
	assert_int_equal(db_cycle_begin(f->db, f->target_id, run_id, 1, &cycle_id), 0);
	uint64_t written = add_iterations(f, run_id, cycle_id, 0, 1, 3);
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(wear_after_size(&w, cycle_id, 0, 0, 16 * MiB, 1 << 30, 32 * MiB, -1), 0);

	int64_t a = add_hir(f, run_id, cycle_id, 1, 2 * MiB);
	assert_int_equal(wear_ext_add(&mine, 20 * MiB, 21 * MiB), 0);
	assert_int_equal(wear_after_hir(&w, cycle_id, 0, 32 * MiB, 1 << 30, 32 * MiB, a, &mine), 0);
	assert_int_equal(w.host_total, written + 2 * MiB);
	assert_int_equal(wear_ext_total(&w.ext), 17 * MiB);
	assert_int_equal(
		query_int(f, "SELECT host_bytes_total FROM hir_bursts WHERE repetition = 1"),
		written + 2 * MiB);
	assert_int_equal(query_int(f, "SELECT mapped_bytes FROM hir_bursts WHERE repetition = 1"),
			 17 * MiB);

	/* b's accounting never ran: c's call counts it, its span as written */
	add_hir(f, run_id, cycle_id, 2, MiB);
	int64_t c = add_hir(f, run_id, cycle_id, 3, MiB);
	assert_int_equal(wear_after_hir(&w, cycle_id, 0, 32 * MiB, 1 << 30, 32 * MiB, c, &mine), 0);
	assert_int_equal(w.host_total, written + 4 * MiB);
	assert_int_equal(w.host_since_erase, written + 4 * MiB);
	assert_int_equal(wear_ext_total(&w.ext), 32 * MiB);
	assert_int_equal(query_int(f, "SELECT count(*) FROM hir_bursts h WHERE h.host_bytes_total"
				      " != (SELECT sum(bytes) FROM hir_bursts x WHERE x.id <= h.id)"
				      " + (SELECT sum(host_bytes_written) FROM wear)"),
			 0);
	/* nothing pending: counted once */
	assert_int_equal(wear_after_hir(&w, cycle_id, 0, 32 * MiB, 1 << 30, 32 * MiB, c, &mine), 0);
	assert_int_equal(w.host_total, written + 4 * MiB);

	/* the next cycle's wear rows go on from the total with them */
	assert_int_equal(db_cycle_begin(f->db, f->target_id, run_id, 2, &next_cycle), 0);
	uint64_t more = add_iterations(f, run_id, next_cycle, 0, 4, 1);
	assert_int_equal(wear_after_size(&w, next_cycle, 0, 0, 16 * MiB, 1 << 30, 32 * MiB, -1), 0);
	assert_int_equal(query_int(f, "SELECT max(host_bytes_total) FROM wear"),
			 written + 4 * MiB + more);
	wear_free(&w);
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(w.host_total, written + 4 * MiB + more);
	wear_free(&w);
	wear_ext_free(&mine);
}

/* A store that fails changes nothing, in the database or in memory; the
 * next call for the size then records every iteration, counted once. */
static void test_wear_store_fails(void **state)
{
	struct dbfx *f = *state;
	const char *make[] = { "CREATE TEMP TRIGGER wear_fails BEFORE INSERT ON main.wear"
			       " BEGIN SELECT RAISE(ABORT, 'injected failure'); END" };
	const char *drop[] = { "DROP TRIGGER temp.wear_fails" };
	int np[] = { 0 };
	char err[256];
	struct wear_state w, again;
	int64_t run_id, cycle_id;
	assert_int_equal(db_run_begin(f->db, "t.conf", &run_id), 0);
	assert_int_equal(db_cycle_begin(f->db, f->target_id, run_id, 1, &cycle_id), 0);
	uint64_t written = add_iterations(f, run_id, cycle_id, 0, 1, 70);
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(wear_ext_add(&w.ext, 32 * MiB, 33 * MiB), 0);
	w.host_total = w.host_since_erase = MiB;
	assert_int_equal(wear_trimmed(&w, 0, 0), 0); /* stores that state */

	assert_int_equal(db_write(f->db, make, NULL, np, 1, err, sizeof(err)), 0);
	assert_true(wear_after_size(&w, cycle_id, 0, 0, 16 * MiB, 1 << 30, 512 * MiB, -1) < 0);
	assert_int_equal(query_int(f, "SELECT count(*) FROM wear"), 0);
	assert_int_equal(w.host_total, MiB);
	assert_int_equal(w.host_since_erase, MiB);
	assert_int_equal(wear_ext_total(&w.ext), MiB);
	assert_int_equal(wear_load(f->db, f->target_id, &again), 0);
	assert_int_equal(again.host_total, MiB);
	assert_int_equal(wear_ext_total(&again.ext), MiB);
	wear_free(&again);

	assert_int_equal(db_write(f->db, drop, NULL, np, 1, err, sizeof(err)), 0);
	assert_int_equal(wear_after_size(&w, cycle_id, 0, 0, 16 * MiB, 1 << 30, 512 * MiB, -1), 0);
	assert_int_equal(query_int(f, "SELECT count(*) FROM wear"), 70);
	assert_int_equal(query_int(f, "SELECT max(host_bytes_total) FROM wear"), MiB + written);
	assert_int_equal(query_int(f, "SELECT max(mapped_bytes) FROM wear"), 17 * MiB);
	assert_int_equal(w.host_total, MiB + written);
	assert_int_equal(w.host_since_erase, MiB + written);
	assert_int_equal(wear_ext_total(&w.ext), 17 * MiB);
	wear_free(&w);
}

/* One iteration of size 0 (16 MiB at region offset 0) that ended with
 * the written ranges w[0..n) and fill_bytes, bytes. Returns its id. */
static int64_t add_written(struct dbfx *f, int64_t run_id, int64_t cycle_id, long number,
			   const uint64_t (*w)[2], size_t n, uint64_t fill_bytes, uint64_t bytes)
{
	struct db_iteration it = {
		.cycle_id = cycle_id,
		.run_id = run_id,
		.target_id = f->target_id,
		.number = number,
		.size_bytes = 16 * MiB,
		.workload = "randwrite",
		.block_size = 4096,
		.queue_depth = 1,
		.amount_bytes = MiB,
		.started_at = "2026-12-02T14:25:50.123Z",
		.status = DB_RUNNING,
	};
	int64_t id;
	assert_int_equal(db_iteration_begin(f->db, &it, &id), 0);
	snprintf(it.ended_at, sizeof(it.ended_at), "2026-12-02T14:25:51.123Z");
	it.status = DB_DONE;
	it.seconds = 1;
	it.fill_bytes = fill_bytes;
	it.bytes = bytes;
	it.written = w;
	it.nwritten = n;
	assert_int_equal(db_iteration_end(f->db, id, &it, NULL, 0), 0);
	return id;
}

/* The mapped bytes are the union of what the iterations wrote, not their
 * span: an interrupted fill of 2 MiB maps 2 MiB, random writes their
 * blocks; each wear row counts what was mapped after its iteration, the
 * written rows go once counted, and a TRIM takes its range away. */
static void test_wear_from_written_ranges(void **state)
{
	struct dbfx *f = *state;
	struct wear_state w;
	int64_t run_id, cycle_id;
	static const uint64_t fill[][2] = { { 0, 2 * MiB } };
	static const uint64_t rnd[][2] = { { MiB, MiB + 4096 },
					   { 4 * MiB, 4 * MiB + 8192 },
					   { 9 * MiB, 9 * MiB + 4096 } };
	assert_int_equal(db_run_begin(f->db, "t.conf", &run_id), 0);
	assert_int_equal(db_cycle_begin(f->db, f->target_id, run_id, 1, &cycle_id), 0);
	int64_t a = add_written(f, run_id, cycle_id, 1, fill, 1, 2 * MiB, 0);
	int64_t b = add_written(f, run_id, cycle_id, 2, rnd, 3, 0, 5 * 4096);
	add_written(f, run_id, cycle_id, 3, NULL, 0, 0, 0); /* wrote nothing */
	assert_int_equal(query_int(f, "SELECT count(*) FROM written_extents"), 4);
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(wear_after_size(&w, cycle_id, 0, 0, 16 * MiB, 1 << 30, 512 * MiB, -1), 0);
	char sql[160];
	snprintf(sql, sizeof(sql), "SELECT mapped_bytes FROM wear WHERE iteration_id = %lld",
		 (long long)a);
	assert_int_equal(query_int(f, sql), 2 * MiB);
	snprintf(sql, sizeof(sql), "SELECT mapped_bytes FROM wear WHERE iteration_id = %lld",
		 (long long)b);
	assert_int_equal(query_int(f, sql), 2 * MiB + 3 * 4096); /* 1 MiB + 4 KiB was in */
	assert_int_equal(query_int(f, "SELECT max(mapped_bytes) FROM wear"), 2 * MiB + 3 * 4096);
	assert_int_equal(query_int(f, "SELECT count(*) FROM written_extents"), 0);
	assert_int_equal(query_int(f, "SELECT count(*) FROM mapped_extents"), 3);
	assert_int_equal(wear_trimmed(&w, 0, 8 * MiB), 0);
	wear_free(&w);
	assert_int_equal(wear_load(f->db, f->target_id, &w), 0);
	assert_int_equal(wear_ext_total(&w.ext), 4096);
	wear_free(&w);
}

/* A fill cut short by a kill: at the next start the prefix the last
 * progress row counted becomes the iteration's written range. */
static void test_killed_fill_keeps_its_prefix(void **state)
{
	struct dbfx *f = *state;
	int64_t run_id, cycle_id, id;
	struct db_iteration it = {
		.target_id = f->target_id,
		.number = 1,
		.size_bytes = 16 * MiB,
		.region_offset = MiB,
		.workload = "randwrite",
		.block_size = 4096,
		.queue_depth = 1,
		.amount_bytes = MiB,
		.started_at = "2026-12-02T14:25:50.123Z",
		.status = DB_RUNNING,
	};
	struct db_progress p = { .cycle = 1,
				 .iteration = 1,
				 .size_bytes = 16 * MiB,
				 .phase = "fill",
				 .mibps = 10,
				 .phase_bytes = 3 * MiB };
	struct db_campaign_req req = { .cycles = 0 };
	struct db_resume r;
	assert_int_equal(db_run_begin(f->db, "t.conf", &run_id), 0);
	assert_int_equal(db_cycle_begin(f->db, f->target_id, run_id, 1, &cycle_id), 0);
	it.run_id = run_id;
	it.cycle_id = cycle_id;
	assert_int_equal(db_iteration_begin(f->db, &it, &id), 0);
	assert_int_equal(db_progress(f->db, f->target_id, &p), 0);
	assert_int_equal(db_resume_point(f->db, f->target_id, &req, &r), 0);
	assert_int_equal(query_int(f, "SELECT count(*) FROM written_extents"), 1);
	assert_int_equal(query_int(f, "SELECT start_byte FROM written_extents"), MiB);
	assert_int_equal(query_int(f, "SELECT end_byte FROM written_extents"), 4 * MiB);
	/* only a fill's bytes are a prefix: nothing for a measured phase */
	it.number = 2;
	assert_int_equal(db_iteration_begin(f->db, &it, &id), 0);
	p.iteration = 2;
	p.phase = "measure";
	assert_int_equal(db_progress(f->db, f->target_id, &p), 0);
	assert_int_equal(db_resume_point(f->db, f->target_id, &req, &r), 0);
	assert_int_equal(query_int(f, "SELECT count(*) FROM written_extents"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extents_table),
		cmocka_unit_test(test_write_fraction),
		cmocka_unit_test(test_point_names),
		cmocka_unit_test(test_health_deltas),
		cmocka_unit_test_setup_teardown(test_firmware_changed, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_state_persists, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_health_abandoned_on_stop, db_setup,
						db_teardown),
		cmocka_unit_test_setup_teardown(test_wear_every_iteration, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_wear_store_fails, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_wear_after_hir, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_wear_from_written_ranges, db_setup,
						db_teardown),
		cmocka_unit_test_setup_teardown(test_killed_fill_keeps_its_prefix, db_setup,
						db_teardown),
	};
	return cmocka_run_group_tests_name("wear", tests, NULL, NULL);
}
