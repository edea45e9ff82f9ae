/* test_db: the SQLite history module on temporary database files: schema and
 * refusals, a full cycle read back with SQL, the history view, the resume
 * rules, atomic iteration results, readers beside a writer, the schema doc. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit_tmp.h"

#include "db/db.h"
#include "db/db_check.h"
#include "db/db_int.h"

#define Q_NULL INT64_MIN
#define SCHEMA_DOC "common/db/schema.md"

struct fx {
	char dir[64];
	char path[128];
	struct db *db;
	int64_t run_id;
};

/* ---- fixture and raw SQL helpers ---------------------------------------- */

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	if (unit_tmpdir(fx->dir, sizeof(fx->dir), "db")) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/history.db", fx->dir);
	*state = fx;
	return 0;
}

static int setup_open(void **state)
{
	struct fx *fx;
	char err[512];

	if (setup(state))
		return -1;
	fx = *state;
	if (db_open(fx->path, 0, &fx->db, err, sizeof(err)) != 0 ||
	    db_run_begin(fx->db, "/etc/wearmon/test.conf", &fx->run_id) != 0) {
		fprintf(stderr, "setup: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	db_close(fx->db);
	chmod(fx->dir, 0700);
	unit_rmtree(fx->dir);
	free(fx);
	return 0;
}

static sqlite3 *raw_open(const struct fx *fx, int flags)
{
	sqlite3 *c = NULL;

	assert_int_equal(sqlite3_open_v2(fx->path, &c, flags, NULL), SQLITE_OK);
	sqlite3_busy_timeout(c, 5000);
	return c;
}

/* First column of the first row as an integer (Q_NULL for NULL or no row);
 * text goes to buf when given. Uses its own read-only connection. */
static int64_t q(const struct fx *fx, const char *sql, char *buf, size_t len)
{
	sqlite3 *c = raw_open(fx, SQLITE_OPEN_READONLY);
	sqlite3_stmt *st = NULL;
	int64_t v = Q_NULL;

	if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(c));
	if (buf)
		buf[0] = '\0';
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		v = sqlite3_column_int64(st, 0);
		if (buf)
			snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	sqlite3_close(c);
	return v;
}

static int64_t qi(const struct fx *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int64_t qi(const struct fx *fx, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return q(fx, sql, NULL, 0);
}

static const char *qs(const struct fx *fx, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static const char *qs(const struct fx *fx, char *buf, size_t len, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	q(fx, sql, buf, len);
	return buf;
}

/* ---- builders ----------------------------------------------------------- */

static int64_t mk_target(struct db *db, const char *name, const char *firmware)
{
	struct db_target_info t = {
		.name = name,
		.device = "/dev/loop7",
		.kind = TGT_BLOCK,
		.capacity_bytes = 1ull << 30,
		.logical_block_size = 512,
		.serial = "S123",
		.model = "Loop SSD",
		.firmware = firmware,
		.backing_file = "/dev/shm/lab.img",
	};
	int64_t id = 0;

	assert_int_equal(db_target_upsert(db, &t, &id), 0);
	assert_true(id > 0);
	return id;
}

static struct db_iteration it_new(const struct fx *fx, int64_t tgt, int64_t cyc, long number,
				  int size_index)
{
	struct db_iteration it = {
		.cycle_id = cyc,
		.run_id = fx->run_id,
		.target_id = tgt,
		.number = number,
		.size_index = size_index,
		.size_bytes = (uint64_t)(size_index + 1) << 20,
		.region_offset = 0,
		.workload = "randwrite",
		.block_size = 4096,
		.queue_depth = 32,
		.compressibility = 0,
		.amount_bytes = (uint64_t)(size_index + 1) << 20,
		.started_at = "2026-12-02T14:25:50.123Z",
		.status = DB_RUNNING,
	};
	return it;
}

static void it_results(struct db_iteration *it, enum db_status status)
{
	snprintf(it->ended_at, sizeof(it->ended_at), "2026-12-02T14:26:50.456Z");
	it->bytes = it->amount_bytes;
	it->ops = it->bytes / 4096;
	it->seconds = 60.0;
	it->mibps_avg = 400.5;
	it->mibps_min = 100.25;
	it->mibps_max = 512.0;
	it->mibps_stddev = 12.5;
	it->iops_avg = 102528.0;
	it->lat_mean_us = 310.0;
	it->lat_us.p50 = 250.0;
	it->lat_us.p99 = 900.0;
	it->lat_us.p999 = 1500.0;
	it->lat_us.max = 4000.0;
	it->fill_mibps = 1800.0;
	it->fill_seconds = 2.0;
	it->fill_bytes = it->size_bytes;
	it->status = status;
}

static const struct db_sample three_samples[] = {
	{ DB_PHASE_FILL,
	  1000,
	  1800.0,
	  14400.0,
	  { .p50 = 100.0, .p90 = 150.0, .p99 = 200.0, .p999 = 250.0, .p9999 = 290.0, .max = 300.0 },
	  -1,
	  1.0,
	  1887436800,
	  0,
	  14400 },
	{ DB_PHASE_MEASURE,
	  1000,
	  410.0,
	  104960.0,
	  { .p50 = 240.0,
	    .p90 = 500.0,
	    .p99 = 880.0,
	    .p999 = 1200.0,
	    .p9999 = 3000.0,
	    .max = 3900.0 },
	  -1,
	  1.0,
	  429916160,
	  0,
	  104960 },
	{ DB_PHASE_MEASURE,
	  2000,
	  391.0,
	  100096.0,
	  { .p50 = 260.0,
	    .p90 = 510.0,
	    .p99 = 920.0,
	    .p999 = 1300.0,
	    .p9999 = 3100.0,
	    .max = 4000.0 },
	  380.5,
	  1.0,
	  409993216,
	  0,
	  100096 },
};

/* ---- schema and opening ------------------------------------------------- */

static void test_schema_created(void **state)
{
	struct fx *fx = *state;
	char buf[64];

	assert_int_equal(qi(fx, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	assert_string_equal(qs(fx, buf, sizeof(buf), "PRAGMA journal_mode"), "wal");
	assert_int_equal(qi(fx, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
				" AND name IN ('targets', 'runs', 'cycles', 'iterations',"
				" 'sample_data', 'sample_minute_data', 'events')"),
			 7);
	/* a new database has no old samples to move (db_samples_migrate) */
	assert_int_equal(qi(fx, "SELECT count(*) FROM sqlite_master WHERE type = 'view'"
				" AND name IN ('history', 'samples', 'sample_minutes')"),
			 3);
	assert_int_equal(qi(fx, "SELECT count(*) FROM sqlite_master WHERE name = 'samples_v15'"),
			 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
				" AND name IN ('iterations_target_status',"
				" 'iterations_target_started', 'events_target_at', 'events_at')"),
			 4);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM runs WHERE pid = %d AND"
			    " config_path = '/etc/wearmon/test.conf' AND ended_at IS NULL"
			    " AND started_at LIKE '____-__-__T__:__:__.___Z'",
			    (int)getpid()),
			 1);
}

static void test_foreign_keys_enforced(void **state)
{
	struct fx *fx = *state;
	int64_t id = 0;

	assert_int_equal(db_cycle_begin(fx->db, 999, fx->run_id, 1, &id), -EINVAL);
	assert_int_equal(qi(fx, "SELECT count(*) FROM cycles"), 0);
}

static void test_reopen_keeps_data(void **state)
{
	struct fx *fx = *state;
	char err[512], buf[64];
	int64_t first = mk_target(fx->db, "lab1", "FW1");

	db_close(fx->db);
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	assert_int_equal(mk_target(fx->db, "lab1", "FW2"), first);
	assert_int_equal(qi(fx, "SELECT count(*) FROM targets"), 1);
	assert_int_equal(qi(fx, "SELECT count(*) FROM runs"), 1);
	assert_string_equal(qs(fx, buf, sizeof(buf), "SELECT firmware FROM targets"), "FW2");
	assert_int_equal(qi(fx, "SELECT first_seen <= last_seen FROM targets"), 1);
	assert_int_equal(qi(fx, "PRAGMA user_version"), DB_SCHEMA_VERSION);
}

/* Writes 64 bytes of garbage at the start of page pageno. */
static void spoil_page(const struct fx *fx, int64_t pageno)
{
	int64_t size = qi(fx, "PRAGMA page_size");
	FILE *f = fopen(fx->path, "r+b");
	char junk[64];

	assert_non_null(f);
	memset(junk, 0xa5, sizeof(junk));
	assert_int_equal(fseek(f, (long)((pageno - 1) * size), SEEK_SET), 0);
	assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
}

/* Open reads the edges of each table only: a page in the middle of one is
 * found by db_check_file, in steps or whole; a file cut short is refused
 * at open. */
static void test_cheap_open_and_full_check(void **state)
{
	struct fx *fx = *state;
	const struct db_check_opts whole = { 0 }, steps = { .stepwise = 1 };
	struct db_check_result r;
	char err[512];

	db_close(fx->db);
	fx->db = NULL;
	unit_exec(fx->path,
		  "CREATE TABLE bulk (id INTEGER PRIMARY KEY, x BLOB);"
		  "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 400)"
		  " INSERT INTO bulk (x) SELECT randomblob(1000) FROM n;"
		  "PRAGMA wal_checkpoint(TRUNCATE)");
	assert_int_equal(db_check_file(fx->path, &whole, &r, err, sizeof(err)), 0);
	assert_int_equal(db_check_file(fx->path, &steps, &r, err, sizeof(err)), 0);
	assert_true(r.tables >= 11 && r.problems == 0);

	struct db_check_ctl ctl;
	db_check_ctl_init(&ctl);
	const struct db_check_opts stopped = { .ctl = &ctl };
	db_check_interrupt(&ctl);
	assert_int_equal(db_check_file(fx->path, &stopped, &r, err, sizeof(err)), -EINTR);
	db_check_ctl_fini(&ctl);

	int64_t leaves = qi(fx, "SELECT count(*) FROM dbstat WHERE name = 'bulk' AND"
				" pagetype = 'leaf'");
	assert_true(leaves > 10);
	spoil_page(fx, qi(fx,
			  "SELECT pageno FROM dbstat WHERE name = 'bulk' AND pagetype ="
			  " 'leaf' ORDER BY path LIMIT 1 OFFSET %lld",
			  (long long)leaves / 2));
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	db_close(fx->db);
	fx->db = NULL;
	assert_int_equal(db_check_file(fx->path, &whole, &r, err, sizeof(err)), -EBADMSG);
	assert_true(r.problems >= 1 && r.first[0]);
	assert_int_equal(db_check_file(fx->path, &steps, &r, err, sizeof(err)), -EBADMSG);
	assert_true(r.problems >= 1 && r.first[0]);

	int64_t size = qi(fx, "PRAGMA page_size") * qi(fx, "PRAGMA page_count");
	assert_int_equal(truncate(fx->path, (off_t)size - 100), 0);
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is damaged"));
	assert_non_null(strstr(err, "not a multiple of its page size"));
}

static void test_newer_version_refused(void **state)
{
	struct fx *fx = *state;
	struct db *db = (struct db *)1;
	char err[512], want[32];

	unit_exec(fx->path, "PRAGMA user_version = 99");
	for (int ro = 0; ro <= 1; ro++) {
		assert_int_equal(db_open(fx->path, ro, &db, err, sizeof(err)), -ENOTSUP);
		assert_null(db);
		assert_non_null(strstr(err, fx->path));
		assert_non_null(strstr(err, "99"));
		snprintf(want, sizeof(want), "version %d ", DB_SCHEMA_VERSION);
		assert_non_null(strstr(err, want));
	}
}

static void test_not_a_database(void **state)
{
	struct fx *fx = *state;
	static const char head[] = "config notes, not a database\n";
	char text[2048], back[2048], err[512];
	struct db *db = NULL;
	FILE *f;

	memset(text, 'x', sizeof(text));
	memcpy(text, head, strlen(head));
	f = fopen(fx->path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, sizeof(text), f), sizeof(text));
	fclose(f);
	for (int ro = 0; ro <= 1; ro++) {
		assert_int_equal(db_open(fx->path, ro, &db, err, sizeof(err)), -EINVAL);
		assert_null(db);
		assert_non_null(strstr(err, fx->path));
		assert_non_null(strstr(err, "not a SQLite database"));
	}
	f = fopen(fx->path, "r");
	assert_non_null(f);
	assert_int_equal(fread(back, 1, sizeof(back), f), sizeof(back));
	fclose(f);
	assert_memory_equal(text, back, sizeof(text));
}

extern const char *const db_migrations[];

/* Migration 8 files the current campaign's cycles under its first cycle and
 * leaves older ones NULL; a new cycle records its campaign. */
static void test_migration_8_campaigns(void **state)
{
	struct fx *fx = *state;
	char err[512];
	int64_t id = 0;

	for (int v = 1; v <= 7; v++)
		unit_exec(fx->path, db_migrations[v]);
	unit_exec(fx->path,
		  "INSERT INTO runs (id, pid, version) VALUES (1, 1, 'old');"
		  "INSERT INTO targets (id, name, device, kind, capacity_bytes,"
		  " logical_block_size, campaign_first_cycle) VALUES (1, 't', '/d', 'file',"
		  " 1048576, 512, 3);"
		  "INSERT INTO cycles (target_id, run_id, number, status) VALUES"
		  " (1, 1, 1, 'done'), (1, 1, 2, 'done'), (1, 1, 3, 'done'), (1, 1, 4, 'done');"
		  "PRAGMA user_version = 7");
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM cycles WHERE number < 3 AND"
				" campaign_first_cycle IS NULL"),
			 2);
	assert_int_equal(qi(fx, "SELECT count(*) FROM cycles WHERE number >= 3 AND"
				" campaign_first_cycle = 3"),
			 2);
	assert_int_equal(qi(fx, "SELECT count(*) FROM runs WHERE config IS NULL"), 1);
	assert_int_equal(db_run_begin(fx->db, "t.conf", &fx->run_id), 0);
	assert_int_equal(db_cycle_begin(fx->db, 1, fx->run_id, 5, &id), 0);
	assert_int_equal(qi(fx, "SELECT campaign_first_cycle FROM cycles WHERE number = 5"), 3);
}

static void test_foreign_sqlite_refused(void **state)
{
	struct fx *fx = *state;
	struct db *db = NULL;
	char err[512];

	unit_exec(fx->path, "CREATE TABLE notes (t TEXT)");
	assert_int_equal(db_open(fx->path, 0, &db, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, "not a wearmon database"));
	assert_int_equal(qi(fx, "SELECT count(*) FROM sqlite_master"), 1);
}

/* Without an application_id a file of versions 1 to 10 must have its
 * version's tables, and one of 11 or later is foreign: refused by writer
 * and reader alike before anything is written (still in rollback mode). */
static void test_no_application_id_refused(void **state)
{
	struct fx *fx = *state;
	struct db *db = NULL;
	char err[512];

	unit_exec(fx->path, db_migrations[1]);
	unit_exec(fx->path, "PRAGMA user_version = 3");
	for (int ro = 0; ro <= 1; ro++) {
		assert_int_equal(db_open(fx->path, ro, &db, err, sizeof(err)), -EINVAL);
		assert_null(db);
		assert_non_null(strstr(err, fx->path));
		assert_non_null(strstr(err, "schema version 3 but no mapped_extents table"));
	}
	unit_exec(fx->path, "PRAGMA user_version = 2");
	assert_int_equal(db_open(fx->path, 1, &db, err, sizeof(err)), 0);
	db_close(db);
	unit_exec(fx->path, "PRAGMA user_version = 11");
	for (int ro = 0; ro <= 1; ro++) {
		assert_int_equal(db_open(fx->path, ro, &db, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "SQLite application_id 0 at schema version 11"));
	}
	assert_int_equal(qi(fx, "PRAGMA user_version"), 11);
	assert_int_equal(qi(fx, "PRAGMA application_id"), 0);
	assert_string_equal(qs(fx, err, sizeof(err), "PRAGMA journal_mode"), "delete");
}

static void test_open_missing(void **state)
{
	struct fx *fx = *state;
	struct db *db = NULL;
	char path[256], err[512];

	assert_int_equal(db_open(fx->path, 1, &db, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, fx->path));
	assert_int_equal(access(fx->path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/missing/history.db", fx->dir);
	assert_int_equal(db_open(path, 0, &db, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
}

/* Runs db_check_path as user nobody (root passes every access check). */
static int check_path_unprivileged(const char *path, const char *dir)
{
	struct passwd *pw = getpwnam("nobody");
	char err[512] = "";
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		if (geteuid() == 0 &&
		    (setgid(pw ? pw->pw_gid : 65534) != 0 || setuid(pw ? pw->pw_uid : 65534) != 0))
			_exit(2);
		_exit(db_check_path(path, err, sizeof(err)) == -EACCES && strstr(err, dir) &&
				      strstr(err, "not writable")
			      ? 0
			      : 1);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_check_path(void **state)
{
	struct fx *fx = *state;
	char missing[256], plain[256], under_plain[300], ro[256], in_ro[300];
	char err[512];
	FILE *f;
	const struct {
		const char *path, *named;
		int want;
	} cases[] = {
		{ fx->path, NULL, 0 },
		{ missing, fx->dir, -ENOENT },
		{ under_plain, plain, -ENOTDIR },
	};

	snprintf(missing, sizeof(missing), "%s/nope/history.db", fx->dir);
	snprintf(plain, sizeof(plain), "%s/plain", fx->dir);
	snprintf(under_plain, sizeof(under_plain), "%s/history.db", plain);
	f = fopen(plain, "w");
	assert_non_null(f);
	fclose(f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		assert_int_equal(db_check_path(cases[i].path, err, sizeof(err)), cases[i].want);
		if (cases[i].named)
			assert_non_null(strstr(err, cases[i].named));
	}
	snprintf(ro, sizeof(ro), "%s/ro", fx->dir);
	snprintf(in_ro, sizeof(in_ro), "%s/history.db", ro);
	assert_int_equal(mkdir(ro, 0555), 0);
	assert_int_equal(chmod(fx->dir, 0755), 0);
	assert_int_equal(check_path_unprivileged(in_ro, ro), 0);
}

/* ---- a full cycle ------------------------------------------------------- */

/* Stores one cycle of one iteration with samples, an event and an action. */
static void store_cycle(struct fx *fx, int64_t *tgt_out, int64_t *it_out)
{
	struct db_action act = { .kind = ACT_TRIM,
				 .started_at = "2026-12-02T14:27:00.000Z",
				 .seconds = 1.5,
				 .bytes = 1ull << 30,
				 .outcome = ACT_OUT_OK };
	struct db_event ev = { .severity = "warning",
			       .kind = "throughput-crash",
			       .message_id = "5f1c0e3b9d2a4c6e8f0a1b2c3d4e5f60",
			       .message = "lab1: 100 MiB/s is 25% of 400",
			       .value = 100.0,
			       .baseline = 400.0,
			       .data = "{\"ratio\":0.25}" };
	int64_t tgt = mk_target(fx->db, "lab1", "FW1"), cyc = 0, it_id = 0, ev_id = 0;
	struct db_iteration it;

	assert_int_equal(mk_target(fx->db, "lab1", "FW1"), tgt);
	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	it = it_new(fx, tgt, cyc, 1, 0);
	assert_int_equal(db_iteration_begin(fx->db, &it, &it_id), 0);
	it_results(&it, DB_DONE);
	assert_int_equal(db_iteration_end(fx->db, it_id, &it, three_samples, 3), 0);
	ev.target_id = tgt;
	ev.run_id = fx->run_id;
	ev.cycle_id = cyc;
	ev.iteration_id = it_id;
	assert_int_equal(db_event(fx->db, &ev, &ev_id), 0);
	assert_true(ev_id > 0);
	assert_int_equal(db_action_start(fx->db, cyc, &act), 0);
	assert_int_equal(db_action_end(fx->db, cyc, &act, NULL), 0);
	assert_int_equal(db_cycle_end(fx->db, cyc, DB_DONE), 0);
	*tgt_out = tgt;
	*it_out = it_id;
}

static void test_full_cycle(void **state)
{
	struct fx *fx = *state;
	struct db_event bare = { .severity = "err",
				 .kind = "db-test",
				 .message = "no target",
				 .value = -1,
				 .baseline = -1 };
	int64_t tgt, it_id;
	char buf[128];

	store_cycle(fx, &tgt, &it_id);
	assert_int_equal(db_event(fx->db, &bare, NULL), 0);
	assert_int_equal(db_run_end(fx->db, fx->run_id, 0, "all cycles done"), 0);
	assert_int_equal(db_run_config(fx->db, fx->run_id, "[wearmon]\ndatabase = x\n"), 0);
	assert_string_equal(qs(fx, buf, sizeof(buf), "SELECT config FROM runs WHERE id = %lld",
			       (long long)fx->run_id),
			    "[wearmon]\ndatabase = x\n");
	assert_int_equal(qi(fx, "SELECT count(*) FROM runs WHERE kernel LIKE 'Linux %%'"), 1);
	assert_int_equal(db_run_config(fx->db, fx->run_id + 100, "x"), -ENOENT);

	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE id = %lld AND"
			    " status = 'done' AND mibps_avg = 400.5 AND mibps_min = 100.25 AND"
			    " lat_p99_us = 900 AND fill_bytes = size_bytes AND bytes = 1048576"
			    " AND started_at = '2026-12-02T14:25:50.123Z' AND error IS NULL AND"
			    " ended_at = '2026-12-02T14:26:50.456Z'",
			    (long long)it_id),
			 1);
	assert_int_equal(
		qi(fx, "SELECT count(*) FROM samples WHERE iteration_id = %lld", (long long)it_id),
		3);
	assert_int_equal(qi(fx, "SELECT sum(t_ms) FROM samples WHERE phase = 'measure'"), 3000);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM cycles WHERE status = 'done' AND"
			    " action = 'trim' AND action_outcome = 'ok' AND action_bytes = %llu"
			    " AND action_seconds = 1.5 AND ended_at >= started_at AND"
			    " action_error IS NULL",
			    1ull << 30),
			 1);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM events WHERE target_id = %lld AND"
			    " iteration_id = %lld AND value = 100 AND baseline = 400 AND"
			    " json_extract(data, '$.ratio') = 0.25",
			    (long long)tgt, (long long)it_id),
			 1);
	assert_int_equal(qi(fx, "SELECT count(*) FROM events WHERE kind = 'db-test' AND"
				" target_id IS NULL AND cycle_id IS NULL AND value IS NULL AND"
				" baseline IS NULL AND at LIKE '____-__-__T__:__:__.___Z'"),
			 1);
	assert_int_equal(qi(fx, "SELECT exit_status FROM runs WHERE ended_at IS NOT NULL"
				" AND exit_reason = 'all cycles done'"),
			 0);
	assert_string_equal(qs(fx, buf, sizeof(buf),
			       "SELECT target || ' ' || cycle || ' '"
			       " || iteration || ' ' || status || ' ' || workload FROM history"),
			    "lab1 1 1 done randwrite");
}

static void test_history_columns(void **state)
{
	static const char *const want[] = {
		"target",
		"cycle",
		"iteration",
		"size_bytes",
		"mibps_avg",
		"mibps_min",
		"mibps_max",
		"iops_avg",
		"lat_p99_us",
		"status",
		"workload",
		"block_size",
		"fill_mibps",
		"started_at",
		"iteration_id",
		"device_wa",
		"device_peak_temp_c",
		"device_throttle_seconds",
	};
	struct fx *fx = *state;
	sqlite3 *c = raw_open(fx, SQLITE_OPEN_READONLY);
	sqlite3_stmt *st = NULL;
	int n = (int)(sizeof(want) / sizeof(want[0]));

	assert_int_equal(sqlite3_prepare_v2(c, "SELECT * FROM history", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_column_count(st), n);
	for (int i = 0; i < n; i++)
		assert_string_equal(sqlite3_column_name(st, i), want[i]);
	sqlite3_finalize(st);
	sqlite3_close(c);
}

static void test_errors_mapped(void **state)
{
	struct fx *fx = *state;
	int64_t tgt = mk_target(fx->db, "lab1", NULL), cyc = 0, dup = 0;
	struct db_action act = { .kind = ACT_TRIM, .outcome = ACT_OUT_OK };

	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &dup), -EEXIST);
	assert_int_equal(db_cycle_end(fx->db, cyc + 100, DB_DONE), -ENOENT);
	assert_int_equal(db_cycle_end(fx->db, cyc, DB_RUNNING), -EINVAL);
	assert_int_equal(db_action_start(fx->db, cyc + 100, &act), -ENOENT);
	assert_int_equal(db_action_end(fx->db, cyc + 100, &act, NULL), -ENOENT);
	assert_int_equal(db_campaign_done(fx->db, tgt + 100), -ENOENT);
	assert_int_equal(db_run_end(fx->db, fx->run_id + 100, 1, "x"), -ENOENT);
	assert_int_equal(db_action_start(fx->db, cyc, &act), 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM cycles WHERE action_started_at"
				" LIKE '____-__-__T__:__:__.___Z' AND action_ended_at IS NULL"
				" AND action_outcome IS NULL"),
			 1);
	assert_int_equal(db_action_end(fx->db, cyc, &act, NULL), 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM cycles WHERE action_ended_at"
				" LIKE '____-__-__T__:__:__.___Z' AND action_outcome = 'ok'"),
			 1);
}

/* An action's end and the wear state it leaves are stored together or not
 * at all (a crash between them cannot leave a finished trim with its
 * extents still mapped). */
static void test_action_end_with_wear(void **state)
{
	struct fx *fx = *state;
	static const uint64_t mapped[][2] = { { 0, 4096 }, { 8192, 12288 } };
	int64_t tgt = mk_target(fx->db, "lab1", NULL), cyc = 0;
	struct db_wear_state before = { .target_id = tgt, .ext = mapped, .next = 2 };
	struct db_wear_state after = { .target_id = tgt, .host_total = 7 };
	struct db_action a = { .kind = ACT_TRIM, .outcome = ACT_OUT_OK, .bytes = 12288 };
	char err[256];

	assert_int_equal(db_wear_store(fx->db, &before, NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	assert_int_equal(db_action_start(fx->db, cyc, &a), 0);
	/* an end that cannot be stored leaves the wear state as it was */
	assert_int_equal(db_action_end(fx->db, cyc + 100, &a, &after), -ENOENT);
	assert_int_equal(qi(fx, "SELECT count(*) FROM mapped_extents"), 2);
	assert_int_equal(
		qi(fx, "SELECT host_bytes_total FROM targets WHERE id = %lld", (long long)tgt), 0);
	assert_int_equal(db_action_end(fx->db, cyc, &a, &after), 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM mapped_extents"), 0);
	assert_int_equal(
		qi(fx, "SELECT host_bytes_total FROM targets WHERE id = %lld", (long long)tgt), 7);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM cycles WHERE id = %lld AND action_bytes ="
			    " 12288 AND action_outcome = 'ok' AND action_ended_at IS NOT NULL",
			    (long long)cyc),
			 1);
}

/* ---- resume ------------------------------------------------------------- */

struct resume_case {
	const char *name;
	long campaign_first; /* stored before the call; 0: default */
	struct {
		enum db_status status; /* cycle status; DB_RUNNING = left open */
		const char *iters;     /* "0D 1R": size_index and D/I/F/R status;
					 d: done, more rows of the size follow */
	} cycles[4];
	long limit;
	struct resume_want {
		int resume;
		int64_t cycle_id; /* checked separately */
		long cycle_number;
		int next_size_index;
		long next_iteration;
		long campaign_first_cycle, campaign_cycles_done, interrupted_marked;
		int campaign_complete;
	} want;
};

static const struct resume_case resume_cases[] = {
	{ "fresh target",
	  0,
	  { { DB_RUNNING, NULL } },
	  0,
	  { .cycle_number = 1, .next_iteration = 1, .campaign_first_cycle = 1 } },
	{ "mid-cycle, two sizes done",
	  0,
	  { { DB_RUNNING, "0D 1D" } },
	  0,
	  { 1, 0, 1, 2, 3, 1, 0, 0, 0 } },
	{ "crash left a running iteration",
	  0,
	  { { DB_RUNNING, "0D 1R" } },
	  0,
	  { 1, 0, 1, 1, 3, 1, 0, 1, 0 } },
	{ "second crash after a resume",
	  0,
	  { { DB_RUNNING, "0D 1I 1D 2R" } },
	  0,
	  { 1, 0, 1, 2, 5, 1, 0, 1, 0 } },
	{ "open cycle without iterations",
	  0,
	  { { DB_RUNNING, "" } },
	  0,
	  { 1, 0, 1, 0, 1, 1, 0, 0, 0 } },
	{ "cycle ended interrupted",
	  0,
	  { { DB_DONE, "0D 1D" }, { DB_INTERRUPTED, "0D 1I" } },
	  0,
	  { 1, 0, 2, 1, 3, 1, 1, 0, 0 } },
	{ "campaign complete, cycles=2: stays complete",
	  0,
	  { { DB_DONE, "0D" }, { DB_DONE, "0D" } },
	  2,
	  { 0, 0, 3, 0, 1, 1, 2, 0, 1 } },
	{ "campaign complete, cycles lowered to 1",
	  0,
	  { { DB_DONE, "0D" }, { DB_DONE, "0D" } },
	  1,
	  { 0, 0, 3, 0, 1, 1, 2, 0, 1 } },
	{ "cycles=0 continues numbering",
	  0,
	  { { DB_DONE, "0D" }, { DB_DONE, "0D" } },
	  0,
	  { 0, 0, 3, 0, 1, 1, 2, 0, 0 } },
	{ "campaign not finished, cycles=3",
	  0,
	  { { DB_DONE, "0D" }, { DB_DONE, "0D" } },
	  3,
	  { 0, 0, 3, 0, 1, 1, 2, 0, 0 } },
	{ "second campaign under way",
	  3,
	  { { DB_DONE, "0D" }, { DB_DONE, "0D" }, { DB_DONE, "0D" } },
	  2,
	  { 0, 0, 4, 0, 1, 3, 1, 0, 0 } },
	{ "failed cycle does not count",
	  0,
	  { { DB_DONE, "0D" }, { DB_FAILED, "0D 1F" } },
	  2,
	  { 0, 0, 3, 0, 1, 1, 1, 0, 0 } },
	{ "several rows per size, all done",
	  0,
	  { { DB_RUNNING, "0d 0d 0D 1d 1D" } },
	  0,
	  { 1, 0, 1, 2, 6, 1, 0, 0, 0 } },
	{ "size cut short after its first row",
	  0,
	  { { DB_RUNNING, "0d 0D 1d 1I" } },
	  0,
	  { 1, 0, 1, 1, 5, 1, 0, 0, 0 } },
	{ "crash in the last row of a size",
	  0,
	  { { DB_RUNNING, "0d 0D 1d 1R" } },
	  0,
	  { 1, 0, 1, 1, 5, 1, 0, 1, 0 } },
	{ "size measured again after an interruption",
	  0,
	  { { DB_RUNNING, "0d 0D 1d 1I 1d 1D" } },
	  0,
	  { 1, 0, 1, 2, 7, 1, 0, 0, 0 } },
	{ "resume wins over a new campaign",
	  0,
	  { { DB_DONE, "0D" }, { DB_DONE, "0D" }, { DB_RUNNING, "0D" } },
	  2,
	  { 1, 0, 3, 1, 2, 1, 2, 0, 0 } },
};

/* Builds one cycle from a case row. Returns the cycle id. */
static int64_t build_cycle(struct fx *fx, int64_t tgt, long number, enum db_status status,
			   const char *iters)
{
	int64_t cyc = 0, it_id = 0;
	long n = 0;
	int size, used;
	char st;

	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, number, &cyc), 0);
	while (sscanf(iters, " %d%c%n", &size, &st, &used) == 2) {
		struct db_iteration it = it_new(fx, tgt, cyc, ++n, size);

		iters += used;
		it.more_rows = st == 'd';
		assert_int_equal(db_iteration_begin(fx->db, &it, &it_id), 0);
		if (st == 'R')
			continue;
		it_results(&it, st == 'D' || st == 'd' ? DB_DONE
				: st == 'I'            ? DB_INTERRUPTED
						       : DB_FAILED);
		assert_int_equal(db_iteration_end(fx->db, it_id, &it, three_samples, 3), 0);
	}
	if (status != DB_RUNNING)
		assert_int_equal(db_cycle_end(fx->db, cyc, status), 0);
	return cyc;
}

static void check_resume(const struct resume_case *c, const struct db_resume *got,
			 int64_t last_cycle_id)
{
	print_message("  resume: %s\n", c->name);
	assert_int_equal(got->resume, c->want.resume);
	assert_int_equal(got->cycle_id, c->want.resume ? last_cycle_id : 0);
	assert_int_equal(got->cycle_number, c->want.cycle_number);
	assert_int_equal(got->next_size_index, c->want.next_size_index);
	assert_int_equal(got->next_iteration, c->want.next_iteration);
	assert_int_equal(got->campaign_first_cycle, c->want.campaign_first_cycle);
	assert_int_equal(got->campaign_cycles_done, c->want.campaign_cycles_done);
	assert_int_equal(got->campaign_complete, c->want.campaign_complete);
	assert_int_equal(got->campaign_new, 0);
}

static void run_resume_case(struct fx *fx, const struct resume_case *c, int idx)
{
	struct db_resume got, again;
	int64_t tgt, cyc = 0;
	char name[32];
	int n = 0;

	snprintf(name, sizeof(name), "case%d", idx);
	tgt = mk_target(fx->db, name, NULL);
	if (c->campaign_first) {
		char sql[128];

		snprintf(sql, sizeof(sql),
			 "UPDATE targets SET campaign_first_cycle = %ld"
			 " WHERE id = %lld",
			 c->campaign_first, (long long)tgt);
		unit_exec(fx->path, sql);
	}
	for (; n < 4 && c->cycles[n].iters; n++)
		cyc = build_cycle(fx, tgt, n + 1, c->cycles[n].status, c->cycles[n].iters);
	struct db_campaign_req q = { .cycles = c->limit };
	assert_int_equal(db_resume_point(fx->db, tgt, &q, &got), 0);
	check_resume(c, &got, cyc);
	assert_int_equal(got.interrupted_marked, c->want.interrupted_marked);
	assert_int_equal(
		qi(fx, "SELECT campaign_first_cycle FROM targets WHERE id = %lld", (long long)tgt),
		c->want.campaign_first_cycle);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE target_id = %lld"
			    " AND status = 'running'",
			    (long long)tgt),
			 0);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE target_id = %lld AND"
			    " error = 'daemon stopped without finishing (crash or kill)'",
			    (long long)tgt),
			 c->want.interrupted_marked);
	if (c->want.resume)
		assert_int_equal(qi(fx,
				    "SELECT status = 'running' AND ended_at IS NULL FROM"
				    " cycles WHERE id = %lld",
				    (long long)cyc),
				 1);
	/* asking again changes nothing */
	assert_int_equal(db_resume_point(fx->db, tgt, &q, &again), 0);
	check_resume(c, &again, cyc);
	assert_int_equal(again.interrupted_marked, 0);
}

static void test_resume_cases(void **state)
{
	struct fx *fx = *state;
	int n = (int)(sizeof(resume_cases) / sizeof(resume_cases[0]));

	for (int i = 0; i < n; i++)
		run_resume_case(fx, &resume_cases[i], i);
}

static void test_resume_unknown_target(void **state)
{
	struct fx *fx = *state;
	struct db_resume r;

	struct db_campaign_req q = { 0 };

	assert_int_equal(db_resume_point(fx->db, 4242, &q, &r), -ENOENT);
}

/* A cycle whose sizes are all done, with its action recorded as started
 * and, when ended is set, ended with outcome. */
static int64_t cycle_at_action(struct fx *fx, int64_t tgt, long number, int ended,
			       enum act_outcome outcome)
{
	struct db_action a = { .kind = ACT_SECURE_ERASE, .outcome = outcome, .seconds = 1 };
	int64_t cyc = build_cycle(fx, tgt, number, DB_RUNNING, "0D");

	assert_int_equal(db_action_start(fx->db, cyc, &a), 0);
	if (ended)
		assert_int_equal(db_action_end(fx->db, cyc, &a, NULL), 0);
	return cyc;
}

static const struct action_case {
	const char *name;
	int ended;
	enum act_outcome outcome;
	int resume;            /* the cycle resumes (at its action) */
	const char *status;    /* else the cycle is closed with this status */
	const char *outcome_s; /* and this outcome */
} action_cases[] = {
	{ "crash during the action: closed, not run again", 0, ACT_OUT_OK, 0, "done",
	  "interrupted" },
	{ "action ended ok, cycle end lost", 1, ACT_OUT_OK, 0, "done", "ok" },
	{ "action ended failed, cycle end lost", 1, ACT_OUT_FAILED, 0, "failed", "failed" },
	{ "a stop cut the action short: it runs again", 1, ACT_OUT_INTERRUPTED, 1, "running",
	  "interrupted" },
};

static void test_resume_after_action(void **state)
{
	struct fx *fx = *state;
	struct db_campaign_req q = { .cycles = 3 };

	for (size_t i = 0; i < sizeof(action_cases) / sizeof(action_cases[0]); i++) {
		const struct action_case *c = &action_cases[i];
		struct db_resume r;
		char name[32];

		print_message("  action: %s\n", c->name);
		snprintf(name, sizeof(name), "act%zu", i);
		int64_t tgt = mk_target(fx->db, name, NULL);
		int64_t cyc = cycle_at_action(fx, tgt, 1, c->ended, c->outcome);
		assert_int_equal(db_resume_point(fx->db, tgt, &q, &r), 0);
		assert_int_equal(r.resume, c->resume);
		assert_int_equal(r.cycle_number, c->resume ? 1 : 2);
		assert_int_equal(r.next_size_index, c->resume ? 1 : 0);
		assert_int_equal(r.action_crashed, c->ended ? 0 : 1);
		assert_int_equal(r.action_closed, c->ended && !c->resume ? 1 : 0);
		assert_int_equal(r.campaign_cycles_done, !strcmp(c->status, "done"));
		assert_int_equal(qi(fx,
				    "SELECT count(*) FROM cycles WHERE id = %lld AND status = '%s'"
				    " AND action_outcome = '%s' AND action_started_at IS NOT NULL"
				    " AND (action_ended_at IS NOT NULL) = %d",
				    (long long)cyc, c->status, c->outcome_s, c->ended),
				 1);
		if (!c->ended)
			assert_int_equal(
				qi(fx,
				   "SELECT count(*) FROM cycles WHERE id = %lld AND"
				   " action_error LIKE 'the daemon stopped during the action%%'",
				   (long long)cyc),
				1);
	}
}

static void test_resume_campaign_key(void **state)
{
	struct fx *fx = *state;
	int64_t tgt = mk_target(fx->db, "key", NULL);
	struct db_campaign_req q = { .cycles = 1, .key = "sizes=50%\nblock_size=4096\n" };
	struct db_resume r;

	/* the first start stores the key */
	assert_int_equal(db_resume_point(fx->db, tgt, &q, &r), 0);
	assert_int_equal(r.campaign_new, 0);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM targets WHERE id = %lld AND"
			    " campaign_key = 'sizes=50%%\nblock_size=4096\n'",
			    (long long)tgt),
			 1);
	build_cycle(fx, tgt, 1, DB_DONE, "0D");
	/* complete, and stays complete with the same key */
	for (int k = 0; k < 2; k++) {
		assert_int_equal(db_resume_point(fx->db, tgt, &q, &r), 0);
		assert_int_equal(r.campaign_complete, 1);
		assert_int_equal(qi(fx,
				    "SELECT campaign_done_at IS NOT NULL FROM targets"
				    " WHERE id = %lld",
				    (long long)tgt),
				 1);
	}
	/* a changed key begins a new campaign, and names what changed */
	q.key = "sizes=50%\nblock_size=8192\n";
	assert_int_equal(db_resume_point(fx->db, tgt, &q, &r), 0);
	assert_int_equal(r.campaign_complete, 0);
	assert_int_equal(r.campaign_new, 1);
	assert_string_equal(r.changed, "block_size");
	assert_int_equal(r.cycle_number, 2);
	assert_int_equal(r.campaign_first_cycle, 2);
	assert_int_equal(qi(fx,
			    "SELECT campaign_done_at IS NULL AND campaign_first_cycle = 2"
			    " FROM targets WHERE id = %lld",
			    (long long)tgt),
			 1);
	/* asked for: an unfinished cycle of the old campaign fails */
	build_cycle(fx, tgt, 2, DB_RUNNING, "0I");
	q.new_campaign = 1;
	assert_int_equal(db_resume_point(fx->db, tgt, &q, &r), 0);
	assert_int_equal(r.resume, 0);
	assert_int_equal(r.campaign_new, 1);
	assert_int_equal(r.cycle_number, 3);
	assert_int_equal(r.campaign_first_cycle, 3);
	assert_int_equal(qi(fx,
			    "SELECT status = 'failed' FROM cycles WHERE target_id = %lld"
			    " AND number = 2",
			    (long long)tgt),
			 1);
	/* endless: never complete */
	build_cycle(fx, tgt, 3, DB_DONE, "0D");
	q.new_campaign = 0;
	q.cycles = 0;
	assert_int_equal(db_resume_point(fx->db, tgt, &q, &r), 0);
	assert_int_equal(r.campaign_complete, 0);
	assert_int_equal(r.cycle_number, 4);
}

/* ---- iteration results are all or nothing ------------------------------- */

/* The host's stalls: iterations.host_stall_seconds and samples.host_stall_ms
 * when there was one, NULL when not. */
static void test_host_stall_stored(void **state)
{
	struct fx *fx = *state;
	int64_t tgt = mk_target(fx->db, "lab1", NULL), cyc = 0, a = 0, b = 0;
	struct db_sample s[2] = { three_samples[1], three_samples[2] };
	struct db_iteration it;

	s[1].host_stall_ms = 250.0;
	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	it = it_new(fx, tgt, cyc, 1, 0);
	assert_int_equal(db_iteration_begin(fx->db, &it, &a), 0);
	it_results(&it, DB_DONE);
	it.host_stall_seconds = 0.25;
	assert_int_equal(db_iteration_end(fx->db, a, &it, s, 2), 0);
	it = it_new(fx, tgt, cyc, 2, 0);
	assert_int_equal(db_iteration_begin(fx->db, &it, &b), 0);
	it_results(&it, DB_DONE);
	assert_int_equal(db_iteration_end(fx->db, b, &it, three_samples, 3), 0);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE id = %lld"
			    " AND host_stall_seconds = 0.25",
			    (long long)a),
			 1);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE id = %lld"
			    " AND host_stall_seconds IS NULL",
			    (long long)b),
			 1);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM samples WHERE iteration_id = %lld"
			    " AND t_ms = 2000 AND host_stall_ms = 250",
			    (long long)a),
			 1);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM samples WHERE iteration_id = %lld"
			    " AND t_ms = 1000 AND host_stall_ms IS NULL",
			    (long long)a),
			 1);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM samples WHERE iteration_id = %lld"
			    " AND host_stall_ms IS NULL",
			    (long long)b),
			 3);
}

static void test_iteration_end_rollback(void **state)
{
	static const struct db_sample dup[] = {
		{ DB_PHASE_MEASURE,
		  1000,
		  400.0,
		  1.0,
		  { .p50 = 1.0, .p90 = 1.0, .p99 = 1.0, .p999 = 1.0, .p9999 = 1.0, .max = 1.0 },
		  -1,
		  1.0,
		  419430400,
		  0,
		  1 },
		{ DB_PHASE_MEASURE,
		  1000,
		  401.0,
		  1.0,
		  { .p50 = 1.0, .p90 = 1.0, .p99 = 1.0, .p999 = 1.0, .p9999 = 1.0, .max = 1.0 },
		  -1,
		  1.0,
		  419430400,
		  0,
		  1 },
	};
	struct fx *fx = *state;
	int64_t tgt = mk_target(fx->db, "lab1", NULL), cyc = 0, id = 0;
	struct db_iteration it;

	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	it = it_new(fx, tgt, cyc, 1, 0);
	assert_int_equal(db_iteration_begin(fx->db, &it, &id), 0);
	it_results(&it, DB_DONE);
	assert_int_equal(db_iteration_end(fx->db, id, &it, dup, 2), -EEXIST);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE id = %lld AND"
			    " status = 'running' AND mibps_avg IS NULL AND ended_at IS NULL",
			    (long long)id),
			 1);
	assert_int_equal(qi(fx, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(db_iteration_end(fx->db, id + 1, &it, three_samples, 3), -ENOENT);
	it.status = DB_RUNNING;
	assert_int_equal(db_iteration_end(fx->db, id, &it, three_samples, 3), -EINVAL);
	assert_int_equal(qi(fx, "SELECT count(*) FROM samples"), 0);
	it.status = DB_DONE;
	assert_int_equal(db_iteration_end(fx->db, id, &it, three_samples, 3), 0);
	assert_int_equal(
		qi(fx, "SELECT count(*) FROM samples WHERE iteration_id = %lld", (long long)id), 3);
}

static void test_iteration_without_fill(void **state)
{
	struct fx *fx = *state;
	int64_t tgt = mk_target(fx->db, "lab1", NULL), cyc = 0, id = 0;
	struct db_iteration it;

	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	it = it_new(fx, tgt, cyc, 1, 0);
	it.started_at[0] = '\0';
	assert_int_equal(db_iteration_begin(fx->db, &it, &id), 0);
	it_results(&it, DB_FAILED);
	it.fill_bytes = 0;
	it.ended_at[0] = '\0';
	it.error = "I/O error at offset 4096";
	assert_int_equal(db_iteration_end(fx->db, id, &it, NULL, 0), 0);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE fill_mibps IS NULL"
			    " AND fill_bytes IS NULL AND status = 'failed' AND error LIKE 'I/O%%'"
			    " AND started_at LIKE '____-__-__T__:__:__.___Z' AND ended_at >="
			    " started_at"),
			 1);
}

/* The engine's I/O counts are stored with the results; a row without them
 * keeps NULL. */
static void test_iteration_io_counts(void **state)
{
	struct fx *fx = *state;
	int64_t tgt = mk_target(fx->db, "lab1", NULL), cyc = 0, id = 0, id2 = 0;
	struct db_iteration it;

	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	it = it_new(fx, tgt, cyc, 1, 0);
	assert_int_equal(db_iteration_begin(fx->db, &it, &id), 0);
	it_results(&it, DB_DONE);
	it.io_counted = 1;
	it.reads = 670;
	it.writes = 330;
	it.random_ios = 999;
	assert_int_equal(db_iteration_end(fx->db, id, &it, NULL, 0), 0);
	it = it_new(fx, tgt, cyc, 2, 1);
	assert_int_equal(db_iteration_begin(fx->db, &it, &id2), 0);
	it_results(&it, DB_DONE);
	assert_int_equal(db_iteration_end(fx->db, id2, &it, NULL, 0), 0);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE reads = 670 AND"
			    " writes = 330 AND random_ios = 999 AND id = %lld",
			    (long long)id),
			 1);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE reads IS NULL AND"
			    " writes IS NULL AND random_ios IS NULL AND id = %lld",
			    (long long)id2),
			 1);
}

/* Unknown figures (< 0) are NULL: a phase too short for a spread, and an
 * interrupted row (no 0.0 MiB/s); samples keep their length and bytes. */
static void test_unknown_figures_null(void **state)
{
	struct fx *fx = *state;
	int64_t tgt = mk_target(fx->db, "lab1", NULL), cyc = 0, id1 = 0, id2 = 0;
	struct db_iteration it;

	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	it = it_new(fx, tgt, cyc, 1, 0);
	assert_int_equal(db_iteration_begin(fx->db, &it, &id1), 0);
	it_results(&it, DB_DONE);
	it.mibps_min = it.mibps_max = it.mibps_stddev = -1;
	assert_int_equal(db_iteration_end(fx->db, id1, &it, three_samples, 3), 0);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE id = %lld AND"
			    " mibps_avg = 400.5 AND mibps_min IS NULL AND mibps_max IS NULL"
			    " AND mibps_stddev IS NULL",
			    (long long)id1),
			 1);
	assert_int_equal(qi(fx,
			    "SELECT sum(bytes) FROM samples WHERE iteration_id = %lld"
			    " AND phase = 'measure'",
			    (long long)id1),
			 429916160 + 409993216);
	assert_int_equal(qi(fx, "SELECT count(*) FROM samples WHERE duration_ms = 1000"), 3);

	it = it_new(fx, tgt, cyc, 2, 1);
	assert_int_equal(db_iteration_begin(fx->db, &it, &id2), 0);
	it_results(&it, DB_INTERRUPTED);
	it.mibps_avg = it.mibps_min = it.mibps_max = it.mibps_stddev = -1;
	it.iops_avg = it.lat_mean_us = it.fill_mibps = -1;
	it.lat_us = (struct lat_qos){ -1, -1, -1, -1, -1, -1 };
	assert_int_equal(db_iteration_end(fx->db, id2, &it, NULL, 0), 0);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE id = %lld AND"
			    " coalesce(mibps_avg, mibps_min, mibps_max, mibps_stddev, iops_avg,"
			    " lat_mean_us, lat_p50_us, lat_p90_us, lat_p99_us, lat_p999_us,"
			    " lat_p9999_us, lat_max_us, fill_mibps) IS NULL AND bytes > 0"
			    " AND status = 'interrupted'",
			    (long long)id2),
			 1);
	assert_int_equal(qi(fx, "SELECT count(*) FROM history WHERE mibps_avg IS NULL"), 1);
}

/* min <= avg <= max: a row that breaks it is stored bounded by
 * stats_rate_bound, and the trigger refuses a direct write that breaks it. */
static void test_rate_bounds_enforced(void **state)
{
	struct fx *fx = *state;
	int64_t tgt = mk_target(fx->db, "lab1", NULL), cyc = 0, id = 0;
	struct db_iteration it;

	assert_int_equal(db_cycle_begin(fx->db, tgt, fx->run_id, 1, &cyc), 0);
	it = it_new(fx, tgt, cyc, 1, 0);
	assert_int_equal(db_iteration_begin(fx->db, &it, &id), 0);
	it_results(&it, DB_DONE);
	it.mibps_avg = 327.3; /* an average below its own minimum, as once stored */
	it.mibps_min = 346.2;
	it.mibps_max = 346.8;
	assert_int_equal(db_iteration_end(fx->db, id, &it, NULL, 0), 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM iterations WHERE mibps_min = 327.3"
				" AND mibps_avg = 327.3 AND mibps_max = 346.8"),
			 1);

	sqlite3 *c = raw_open(fx, SQLITE_OPEN_READWRITE);
	char *msg = NULL;
	assert_int_not_equal(sqlite3_exec(c, "UPDATE iterations SET mibps_max = mibps_avg - 1",
					  NULL, NULL, &msg),
			     SQLITE_OK);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "mibps_min <= mibps_avg <= mibps_max"));
	sqlite3_free(msg);
	assert_int_equal(sqlite3_exec(c, "UPDATE iterations SET mibps_max = mibps_avg + 1", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(c);
}

/* The migration scripts (db_migrations.c), to build a file of an older version. */
extern const char *const db_migrations[];

/* A version 7 file with the old figures: migrating to 8 turns an
 * interrupted row's zeros into NULL and drops min, max and stddev that
 * missed the average (327.3 with a min of 346.2); good rows stay. */
static void test_migrate_v7_figures(void **state)
{
	struct fx *fx = *state;
	char err[512], sql[4096];

	for (int v = 1; v <= 7; v++)
		unit_exec(fx->path, db_migrations[v]);
	snprintf(sql, sizeof(sql),
		 "PRAGMA user_version = 7;"
		 " INSERT INTO targets (name, device, kind, capacity_bytes, logical_block_size)"
		 "  VALUES ('old', '/dev/sdz', 'block', 1073741824, 512);"
		 " INSERT INTO runs (pid, version) VALUES (1, '0.1.0');"
		 " INSERT INTO cycles (target_id, run_id, number) VALUES (1, 1, 1);"
		 " INSERT INTO iterations (cycle_id, run_id, target_id, number, size_index,"
		 "  size_bytes, region_offset, workload, block_size, queue_depth,"
		 "  compressibility, amount_bytes, started_at, mibps_avg, mibps_min, mibps_max,"
		 "  mibps_stddev, iops_avg, lat_p50_us, lat_p99_us, status) VALUES"
		 " (1, 1, 1, 1, 0, 1, 0, 'seqwrite', 4096, 1, 0, 1, 't', 0, 0, 0, 0, 0, 0, 0,"
		 "  'interrupted'),"
		 " (1, 1, 1, 2, 0, 1, 0, 'seqwrite', 4096, 1, 0, 1, 't', 327.3, 346.2, 346.8,"
		 "  0.4, 5, 5, 9, 'done'),"
		 " (1, 1, 1, 3, 1, 2, 0, 'seqwrite', 4096, 1, 0, 1, 't', 300, 290, 310, 4, 5, 5,"
		 "  9, 'done');");
	unit_exec(fx->path, sql);
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	assert_int_equal(qi(fx, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	assert_int_equal(qi(fx, "SELECT count(*) FROM iterations WHERE number = 1 AND"
				" coalesce(mibps_avg, mibps_min, mibps_max, mibps_stddev, iops_avg,"
				" lat_p50_us, lat_p99_us) IS NULL"),
			 1);
	assert_int_equal(qi(fx,
			    "SELECT count(*) FROM iterations WHERE number = 2 AND"
			    " mibps_avg = 327.3 AND coalesce(mibps_min, mibps_max, mibps_stddev)"
			    " IS NULL AND iops_avg = 5"),
			 1);
	assert_int_equal(qi(fx, "SELECT count(*) FROM iterations WHERE number = 3 AND"
				" mibps_min = 290 AND mibps_max = 310 AND mibps_stddev = 4"),
			 1);
	assert_int_equal(qi(fx, "SELECT count(*) FROM cycle_summary WHERE mibps_min = 290"
				" AND mibps_max = 327.3"),
			 1);
}

/* Whether a line of sql's EXPLAIN QUERY PLAN holds `what`. */
static int plan_has(const struct fx *fx, const char *sql, const char *what)
{
	sqlite3 *c = raw_open(fx, SQLITE_OPEN_READONLY);
	sqlite3_stmt *st = NULL;
	char eqp[1024];
	int found = 0;

	snprintf(eqp, sizeof(eqp), "EXPLAIN QUERY PLAN %s", sql);
	if (sqlite3_prepare_v2(c, eqp, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", eqp, sqlite3_errmsg(c));
	while (sqlite3_step(st) == SQLITE_ROW)
		found |= strstr((const char *)sqlite3_column_text(st, 3), what) != NULL;
	sqlite3_finalize(st);
	sqlite3_close(c);
	return found;
}

/* A version 17 file (figures computed by the views): migrating to 18
 * stores each cycle's figures and each done row's ratio to its baseline
 * equal to what the computing views gave, and the triggers keep them as
 * rows are written after; the worst ratios are read through the index. */
static void test_migrate_v17_stored_figures(void **state)
{
	struct fx *fx = *state;
	char err[512], after[1024];
	const char *cols = "SELECT group_concat(cycle || '|' || iterations || '|' || sizes || '|'"
			   " || mibps_min || '|' || round(mibps_avg, 6) || '|' || mibps_max || '|'"
			   " || coalesce(fill_mibps_avg, '-') || '|' || coalesce(round(ratio_avg,"
			   " 6), '-'), ';') FROM (SELECT * FROM cycle_summary ORDER BY cycle)";

	for (int v = 1; v <= 17; v++)
		unit_exec(fx->path, db_migrations[v]);
	/* cycle 1: two sizes measured and filled; cycle 2: size 0 twice (a
	 * repeat) against cycle 1's rows, size 1 cut short */
	unit_exec(fx->path,
		  "PRAGMA user_version = 17;"
		  " INSERT INTO targets (name, device, kind, capacity_bytes, logical_block_size)"
		  "  VALUES ('old', '/dev/sdz', 'block', 1073741824, 512);"
		  " INSERT INTO runs (pid, version) VALUES (1, '0.1.0');"
		  " INSERT INTO cycles (target_id, run_id, number) VALUES (1, 1, 1), (1, 1, 2);"
		  " INSERT INTO iterations (id, cycle_id, run_id, target_id, number, size_index,"
		  "  size_bytes, region_offset, workload, block_size, queue_depth,"
		  "  compressibility, amount_bytes, started_at, mibps_avg, mibps_min, mibps_max,"
		  "  phase, status, baseline_iteration_id) VALUES"
		  " (1, 1, 1, 1, 1, 0, 1, 0, 'seqwrite', 4096, 1, 0, 1, 't', 400, 380, 420,"
		  "  'fill', 'done', NULL),"
		  " (2, 1, 1, 1, 2, 0, 1, 0, 'randwrite', 4096, 1, 0, 1, 't', 200, 190, 210,"
		  "  'measure', 'done', NULL),"
		  " (3, 1, 1, 1, 3, 1, 2, 0, 'randwrite', 4096, 1, 0, 1, 't', 100, 90, 110,"
		  "  'measure', 'done', NULL),"
		  " (4, 2, 1, 1, 1, 0, 1, 0, 'randwrite', 4096, 1, 0, 1, 't', 150, 140, 160,"
		  "  'measure', 'done', 2),"
		  " (5, 2, 1, 1, 2, 0, 1, 0, 'randwrite', 4096, 1, 0, 1, 't', 50, 40, 60,"
		  "  'measure', 'done', 2),"
		  " (6, 2, 1, 1, 3, 1, 2, 0, 'randwrite', 4096, 1, 0, 1, 't', NULL, NULL, NULL,"
		  "  'measure', 'interrupted', 3);");
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	assert_int_equal(qi(fx, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	/* the figures DB_CYCLE_FIGURES_SQL gives: every size once, fill apart */
	qs(fx, after, sizeof(after), "%s", cols);
	assert_string_equal(after, "1|3|2|90.0|150.0|210.0|400.0|-;2|2|1|40.0|100.0|160.0|-|0.5");
	assert_int_equal(qi(fx, "SELECT count(*) FROM iterations WHERE ratio IS NOT NULL"), 2);
	assert_int_equal(qi(fx, "SELECT count(*) FROM degradation WHERE iteration_id = 5"
				" AND ratio = 0.25 AND baseline_mibps = 200"),
			 1);

	/* written after: the interrupted row finishes, cycle 2 follows */
	const char *finish = "UPDATE iterations SET status = 'done', mibps_avg = 80,"
			     " mibps_min = 70, mibps_max = 90 WHERE id = 6";
	int none = 0;
	assert_int_equal(db_write(fx->db, &finish, NULL, &none, 1, err, sizeof(err)), 0);
	qs(fx, after, sizeof(after), "%s", cols);
	assert_string_equal(after, "1|3|2|90.0|150.0|210.0|400.0|-;2|3|2|40.0|90.0|160.0|-|0.6");
	assert_int_equal(qi(fx, "SELECT count(*) FROM iterations WHERE id = 6 AND ratio = 0.8"), 1);
	/* the ten worst: the ratio index in order, no sort of every row */
	assert_true(plan_has(fx,
			     "SELECT iteration_id FROM degradation d WHERE d.ratio IS NOT NULL"
			     " ORDER BY d.ratio LIMIT 10",
			     "iterations_ratio"));
	assert_false(plan_has(fx,
			      "SELECT iteration_id FROM degradation d WHERE d.ratio IS NOT NULL"
			      " ORDER BY d.ratio LIMIT 10",
			      "TEMP B-TREE"));
}

/* ---- concurrency -------------------------------------------------------- */

/* A child process holds an open write transaction (uncommitted DELETE)
 * until the parent writes to the pipe. Returns its pid; ready is read end. */
static pid_t writer_process(const struct fx *fx, int *ready, int *go)
{
	int up[2], down[2];
	char c = 0;
	pid_t pid;

	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	pid = fork();
	if (pid == 0) {
		sqlite3 *w = NULL;
		int ok = sqlite3_open_v2(fx->path, &w, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
			 sqlite3_exec(w, "BEGIN IMMEDIATE; DELETE FROM samples;", NULL, NULL,
				      NULL) == SQLITE_OK;

		c = ok ? 'y' : 'n';
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
			ok = 0;
		sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(w);
		_exit(ok ? 0 : 1);
	}
	assert_true(pid > 0);
	close(up[1]);
	close(down[0]);
	*ready = up[0];
	*go = down[1];
	return pid;
}

static void test_readonly_beside_writer(void **state)
{
	struct fx *fx = *state;
	struct db_event ev = {
		.severity = "info", .kind = "t", .message = "m", .value = -1, .baseline = -1
	};
	int64_t tgt, it_id;
	int ready, go, status = 0;
	struct db *ro = NULL;
	char err[512], c = 0;
	pid_t pid;
	time_t t0;

	store_cycle(fx, &tgt, &it_id);
	pid = writer_process(fx, &ready, &go);
	assert_int_equal(read(ready, &c, 1), 1);
	assert_int_equal(c, 'y');
	t0 = time(NULL);
	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	assert_true(time(NULL) - t0 < 2);
	assert_int_equal(qi(fx, "SELECT count(*) FROM samples"), 3);
	assert_int_equal(qi(fx, "SELECT count(*) FROM history"), 1);
	assert_int_equal(db_event(ro, &ev, NULL), -EROFS);
	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready);
	close(go);
	db_close(ro);
	assert_int_equal(db_event(fx->db, &ev, NULL), 0);
}

/* Runs db_open(readonly) as user nobody, who may not create files there. */
static int open_unprivileged(const char *path)
{
	struct passwd *pw = getpwnam("nobody");
	struct db *db = NULL;
	char err[512] = "";
	int status = 0, ret;
	pid_t pid = fork();

	if (pid == 0) {
		if (geteuid() == 0 &&
		    (setgid(pw ? pw->pw_gid : 65534) != 0 || setuid(pw ? pw->pw_uid : 65534) != 0))
			_exit(2);
		ret = db_open(path, 1, &db, err, sizeof(err));
		if (ret)
			fprintf(stderr, "open as nobody: %s\n", err);
		db_close(db);
		_exit(ret == 0 ? 0 : 1);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The daemon stopped: a user who cannot write the directory still reads. */
static void test_reader_after_writer_closed(void **state)
{
	struct fx *fx = *state;
	char wal[160], shm[160];

	db_close(fx->db);
	fx->db = NULL;
	snprintf(wal, sizeof(wal), "%s-wal", fx->path);
	snprintf(shm, sizeof(shm), "%s-shm", fx->path);
	assert_int_equal(access(wal, F_OK), 0);
	assert_int_equal(access(shm, F_OK), 0);
	assert_int_equal(chmod(fx->dir, 0755), 0);
	assert_int_equal(open_unprivileged(fx->path), 0);
}

#define THREADS 4
#define EVENTS_PER_THREAD 25

static void *event_writer(void *arg)
{
	struct db *db = arg;
	struct db_event ev = {
		.severity = "info", .kind = "thread", .message = "m", .value = 1, .baseline = -1
	};
	intptr_t failures = 0;

	for (int i = 0; i < EVENTS_PER_THREAD; i++)
		failures += db_event(db, &ev, NULL) != 0;
	return (void *)failures;
}

/* BEGIN fails (another connection holds the write lock): db_write's error
 * buffer says so instead of keeping whatever bytes it held. */
static void test_write_error_when_locked(void **state)
{
	struct fx *fx = *state;
	sqlite3 *other = raw_open(fx, SQLITE_OPEN_READWRITE);
	static const char sql[] = "UPDATE runs SET hostname = 'x'";
	const char *sqls[] = { sql };
	const struct db_value *params[] = { NULL };
	int np[] = { 0 };
	char err[256];

	assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	db_set_busy_timeout(fx->db, 50);
	memset(err, 0xa5, sizeof(err));
	assert_int_equal(db_write(fx->db, sqls, params, np, 1, err, sizeof(err)), -EBUSY);
	assert_non_null(memchr(err, '\0', sizeof(err)));
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, "begin transaction: database is locked"));
	sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(other);
}

/* COMMIT fails (a deferred foreign key is checked only then): the message
 * names the commit and SQLite's reason. */
static void test_write_error_at_commit(void **state)
{
	struct fx *fx = *state;
	const char *sqls[] = {
		"PRAGMA defer_foreign_keys = ON",
		"INSERT INTO cycles (target_id, run_id, number) VALUES (999, 1, 1)"
	};
	const struct db_value *params[] = { NULL, NULL };
	int np[] = { 0, 0 };
	char err[256];

	memset(err, 0xa5, sizeof(err));
	assert_int_equal(db_write(fx->db, sqls, params, np, 2, err, sizeof(err)), -EINVAL);
	assert_non_null(memchr(err, '\0', sizeof(err)));
	assert_non_null(strstr(err, "commit: FOREIGN KEY constraint failed"));
	assert_int_equal(qi(fx, "SELECT count(*) FROM cycles"), 0);
}

/* A reader's connection refuses writes with a message, not stack bytes. */
static void test_write_error_readonly(void **state)
{
	struct fx *fx = *state;
	const char *sqls[] = { "UPDATE runs SET hostname = 'x'" };
	const struct db_value *params[] = { NULL };
	int np[] = { 0 };
	char err[256];
	struct db *ro = NULL;

	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	memset(err, 0xa5, sizeof(err));
	assert_int_equal(db_write(ro, sqls, params, np, 1, err, sizeof(err)), -EROFS);
	assert_non_null(strstr(err, "opened read-only"));
	db_close(ro);
}

/* The file deleted or replaced under an open writer is noticed. */
static void test_file_check(void **state)
{
	struct fx *fx = *state;
	char why[512], other[160];

	assert_int_equal(db_file_check(fx->db, why, sizeof(why)), 0);
	snprintf(other, sizeof(other), "%s/other", fx->dir);
	FILE *f = fopen(other, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(rename(other, fx->path), 0);
	assert_int_equal(db_file_check(fx->db, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "replaced by another file"));
	assert_int_equal(unlink(fx->path), 0);
	assert_int_equal(db_file_check(fx->db, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "was deleted"));
	struct db_iteration it = { .cycle_id = 1, .run_id = fx->run_id, .target_id = 1 };
	int64_t id;
	assert_int_equal(db_iteration_begin(fx->db, &it, &id), -ESTALE);
}

/* owned_files by device and inode; a loop device's backing file known by
 * its inode too, where both the row and the start know it. */
static void test_owned_files_and_backing_identity(void **state)
{
	struct fx *fx = *state;
	char diff[512];
	int64_t id;
	struct db_target_info t = { .name = "lp",
				    .device = "/dev/loop3",
				    .kind = TGT_BLOCK,
				    .capacity_bytes = 1 << 20,
				    .logical_block_size = 512,
				    .backing_file = "/srv/a.img" };

	assert_int_equal(db_owned_file(fx->db, 2049, 77), 0);
	assert_int_equal(db_owned_add(fx->db, 2049, 77, "f1", "/srv/f1.img"), 0);
	assert_int_equal(db_owned_file(fx->db, 2049, 77), 1);
	assert_int_equal(db_owned_file(fx->db, 2049, 78), 0);
	/* a row without the inode takes the start's silently */
	assert_int_equal(db_target_upsert(fx->db, &t, &id), 0);
	t.backing_dev = 2049;
	t.backing_ino = 100;
	assert_int_equal(db_target_identity(fx->db, &t, diff, sizeof(diff)), 0);
	assert_int_equal(db_target_upsert(fx->db, &t, &id), 0);
	assert_int_equal(db_target_identity(fx->db, &t, diff, sizeof(diff)), 0);
	t.backing_ino = 101;
	assert_int_equal(db_target_identity(fx->db, &t, diff, sizeof(diff)), 1);
	assert_string_equal(diff, "backing file identity '8:1 inode 100' -> '8:1 inode 101'");
	/* unknown now (no backing file read): not a difference */
	t.backing_ino = 0;
	assert_int_equal(db_target_identity(fx->db, &t, diff, sizeof(diff)), 0);
}

/* One daemon per database: a second lock is refused with the holder's pid
 * (a child process: POSIX locks are per process). */
static void test_lock_one_holder(void **state)
{
	struct fx *fx = *state;
	char err[512];
	int fd = -1;

	assert_int_equal(db_lock_take(fx->path, 1, &fd, err, sizeof(err)), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int cfd = -1;
		char cerr[512];
		int r = db_lock_take(fx->path, 1, &cfd, cerr, sizeof(cerr));
		char want[64];
		snprintf(want, sizeof(want), "in use by wearmond pid %ld", (long)getppid());
		if (r != -EBUSY || !strstr(cerr, want))
			fprintf(stderr, "second lock: %d %s\n", r, cerr);
		_exit(r == -EBUSY && strstr(cerr, want) && db_lock_holder(fx->path) == getppid()
			      ? 0
			      : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	db_lock_release(fd);
}

/* The lock is the file's: taken through a hard link in this very process
 * (another open file description) it is refused, naming this pid and the
 * path it was taken by; a second SQLite connection, reading and writing,
 * never meets it; released, it can be taken by the other name. */
static void test_lock_follows_the_file(void **state)
{
	struct fx *fx = *state;
	char link_path[160], err[1024], held[PATH_MAX], want[PATH_MAX + 64], real[PATH_MAX];
	struct db *other = NULL;
	int fd = -1, fd2 = -1;

	snprintf(link_path, sizeof(link_path), "%s/hard.db", fx->dir);
	assert_int_equal(link(fx->path, link_path), 0);
	assert_int_equal(db_lock_take(fx->path, 1, &fd, err, sizeof(err)), 0);
	assert_int_equal(db_lock_take(link_path, 1, &fd2, err, sizeof(err)), -EBUSY);
	assert_int_equal(fd2, -1);
	assert_non_null(realpath(fx->path, real));
	snprintf(want, sizeof(want), "which opened the same file as %s", real);
	/* our own pid is skipped: the holder looked for is another process */
	assert_null(strstr(err, want));
	assert_int_equal(db_lock_holder_path(link_path, held, sizeof(held)), 0);
	assert_int_equal(db_open(fx->path, 0, &other, err, sizeof(err)), 0);
	const char *const sqls[] = { "CREATE TABLE scratch(x)" };
	const int nparams[] = { 0 };
	assert_int_equal(db_write(other, sqls, NULL, nparams, 1, err, sizeof(err)), 0);
	db_close(other);
	db_lock_release(fd);
	assert_int_equal(db_lock_take(link_path, 1, &fd2, err, sizeof(err)), 0);
	db_lock_release(fd2);
	unlink(link_path);
}

/* A start that failed: the empty database file the lock made is removed,
 * one with content is kept. */
static void test_lock_drops_only_a_new_empty_file(void **state)
{
	struct fx *fx = *state;
	char path[160], err[512];
	int fd = -1;

	snprintf(path, sizeof(path), "%s/new.db", fx->dir);
	assert_int_equal(db_lock_take(path, 0, &fd, err, sizeof(err)), 0);
	assert_int_equal(fd, -1);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(db_lock_take(path, 1, &fd, err, sizeof(err)), 1);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(db_lock_drop_new(path, fd), 1);
	assert_int_equal(access(path, F_OK), -1);
	db_lock_release(fd);
	assert_int_equal(db_lock_take(fx->path, 1, &fd, err, sizeof(err)), 0);
	assert_int_equal(db_lock_drop_new(fx->path, fd), 0);
	assert_int_equal(access(fx->path, F_OK), 0);
	db_lock_release(fd);
}

static void test_threads_share_connection(void **state)
{
	struct fx *fx = *state;
	pthread_t th[THREADS];
	void *failures;

	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, event_writer, fx->db), 0);
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(th[i], &failures), 0);
		assert_null(failures);
	}
	assert_int_equal(qi(fx, "SELECT count(DISTINCT id) FROM events WHERE kind = 'thread'"),
			 THREADS * EVENTS_PER_THREAD);
}

/* ---- the schema document cannot go stale -------------------------------- */

static void squash(const char *in, char *out, size_t len)
{
	size_t n = 0;
	int space = 1;

	for (; *in && n + 1 < len; in++) {
		int ws = *in == ' ' || *in == '\n' || *in == '\t';

		if (!ws)
			out[n++] = *in;
		else if (!space)
			out[n++] = ' ';
		space = ws;
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

/* Every ```sql block of the doc: the one holding CREATE statements must equal
 * the live schema; every other block must run. Returns the blocks seen. */
static int check_doc_blocks(struct fx *fx, char *doc, const char *schema)
{
	sqlite3 *c = raw_open(fx, SQLITE_OPEN_READONLY);
	char *p = doc, *end;
	int blocks = 0;

	while ((p = strstr(p, "```sql\n")) && (end = strstr(p + 7, "```"))) {
		static char mine[65536];
		sqlite3_stmt *st = NULL;

		p += 7;
		*end = '\0';
		if (strncmp(p, "CREATE", 6) == 0) {
			squash(p, mine, sizeof(mine));
			assert_string_equal(mine, schema);
		} else {
			if (sqlite3_prepare_v2(c, p, -1, &st, NULL) != SQLITE_OK)
				fail_msg("doc query failed: %s\n%s", sqlite3_errmsg(c), p);
			while (sqlite3_step(st) == SQLITE_ROW)
				;
			assert_int_equal(sqlite3_finalize(st), SQLITE_OK);
		}
		blocks++;
		p = end + 3;
	}
	sqlite3_close(c);
	return blocks;
}

static void test_schema_doc(void **state)
{
	static char doc[262144], raw[65536], schema[65536];
	struct fx *fx = *state;
	int64_t tgt, it_id;
	size_t n;
	FILE *f = fopen(SCHEMA_DOC, "r");

	if (!f) {
		print_message("  %s not found (run from the source tree)\n", SCHEMA_DOC);
		skip();
	}
	n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	store_cycle(fx, &tgt, &it_id);
	qs(fx, raw, sizeof(raw),
	   "SELECT group_concat(sql || ';', ' ') FROM"
	   " (SELECT sql FROM sqlite_master WHERE sql NOT NULL ORDER BY rowid)");
	squash(raw, schema, sizeof(schema));
	assert_true(check_doc_blocks(fx, doc, schema) >= 7);
	assert_non_null(strstr(doc, "CREATE TABLE targets"));
}

static int count_rows(void *arg, int n, const struct db_value *v, const char *const *names)
{
	(void)n;
	(void)v;
	(void)names;
	++*(int *)arg;
	return 0;
}

/* A view redefined without a schema version (db_views.c): a writable open
 * puts the current text back over an older one, and a reader of a file
 * still holding the older one sees the current one as a TEMP view. */
static void test_views_current_at_open(void **state)
{
	struct fx *fx = *state;
	struct db *ro = NULL;
	char err[512];
	int rows = 0;
	const char *old = "DROP VIEW cycle_summary; CREATE VIEW cycle_summary AS"
			  " SELECT number AS cycle, id AS cycle_id FROM cycles";

	db_close(fx->db);
	fx->db = NULL;
	unit_exec(fx->path, old);
	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	/* the file keeps its text; the reader's connection has the current */
	assert_int_equal(qi(fx, "SELECT count(*) FROM pragma_table_info('cycle_summary')"), 2);
	assert_int_equal(db_query(ro, "SELECT sizes, fill_mibps_avg FROM cycle_summary", NULL, 0,
				  count_rows, &rows, err, sizeof(err)),
			 0);
	db_close(ro);
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM pragma_table_info('cycle_summary')"), 17);
	assert_int_equal(qi(fx, "SELECT count(*) FROM sqlite_master WHERE name = 'cycle_summary'"
				" AND sql LIKE '%%c.ratio_avg%%'"),
			 1);
}

/* The history view of schema 20 (db_views.c): a file holding the view
 * of an older version gets the drive's columns back at a writable open,
 * and its reader sees them before. */
static void test_history_view_current_at_open(void **state)
{
	struct fx *fx = *state;
	struct db *ro = NULL;
	char err[512];
	int rows = 0;
	const char *old = "DROP VIEW history; CREATE VIEW history AS SELECT t.name AS target,"
			  " i.id AS iteration_id FROM iterations i JOIN targets t"
			  " ON t.id = i.target_id";

	db_close(fx->db);
	fx->db = NULL;
	unit_exec(fx->path, old);
	assert_int_equal(db_open(fx->path, 1, &ro, err, sizeof(err)), 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM pragma_table_info('history')"), 2);
	assert_int_equal(db_query(ro,
				  "SELECT device_wa, device_peak_temp_c, device_throttle_seconds"
				  " FROM history",
				  NULL, 0, count_rows, &rows, err, sizeof(err)),
			 0);
	db_close(ro);
	assert_int_equal(db_open(fx->path, 0, &fx->db, err, sizeof(err)), 0);
	assert_int_equal(qi(fx, "SELECT count(*) FROM pragma_table_info('history')"), 18);
}

/* Phases are stored by one table of names; unknown is NULL. */
static void test_phase_names(void **state)
{
	(void)state;
	assert_null(db_phase_name(DB_PHASE_UNKNOWN));
	assert_string_equal(db_phase_name(DB_PHASE_FILL), "fill");
	assert_string_equal(db_phase_name(DB_PHASE_MEASURE), "measure");
	assert_string_equal(db_phase_name(DB_PHASE_VERIFY), "verify");
	assert_null(db_phase_name(DB_PHASE__COUNT));
}

/* Every statement the module keeps prepared has as many placeholders as its
 * binding code binds (the table's count, which db_bind_run checks too). */
static void test_statement_bind_counts(void **state)
{
	struct fx *fx = *state;
	sqlite3 *c = raw_open(fx, SQLITE_OPEN_READWRITE);
	int checked = 0;

	for (int id = 0; id < ST__COUNT; id++) {
		sqlite3_stmt *st = NULL;

		if (!db_stmts[id].sql)
			fail_msg("statement %d has no SQL", id);
		if (sqlite3_prepare_v2(c, db_stmts[id].sql, -1, &st, NULL) != SQLITE_OK)
			fail_msg("statement %d: %s", id, sqlite3_errmsg(c));
		if (sqlite3_bind_parameter_count(st) != db_stmts[id].nparams)
			fail_msg("statement %d binds %d values, has %d placeholders: %s", id,
				 db_stmts[id].nparams, sqlite3_bind_parameter_count(st),
				 db_stmts[id].sql);
		sqlite3_finalize(st);
		checked++;
	}
	assert_int_equal(checked, ST__COUNT);
	sqlite3_close(c);
}

/* A binding that is one value short, or one too many, is refused before it
 * runs and writes nothing; so are db_query and db_write with a wrong count. */
static void test_bind_count_refused(void **state)
{
	struct fx *fx = *state;
	struct db_value p[] = { { .type = DB_INT, .i = fx->run_id }, { .type = DB_INT, .i = 1 } };
	const char *sqls[] = { "UPDATE runs SET exit_status = ? WHERE id = ?" };
	const struct db_value *params[] = { p };
	int np[] = { 1 };
	struct db_bind b;
	char err[256];

	db_bind_start(fx->db, ST_RUN_CONFIG, &b);
	db_bind_text(&b, "key = value");
	db_bind_i64(&b, fx->run_id);
	assert_int_equal(db_bind_run(&b, "short binding"), -EINVAL);
	db_bind_start(fx->db, ST_RUN_CONFIG, &b);
	db_bind_text(&b, "key = value");
	db_bind_text(&b, "Linux");
	db_bind_i64(&b, fx->run_id);
	assert_int_equal(db_bind_run(&b, "right binding"), 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM runs WHERE kernel = 'Linux'", NULL, 0), 1);
	assert_int_equal(db_query(fx->db, "SELECT id FROM runs WHERE id = ?", p, 2, NULL, NULL, err,
				  sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "placeholders"));
	assert_int_equal(db_write(fx->db, sqls, params, np, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "placeholders"));
	assert_int_equal(q(fx, "SELECT count(*) FROM runs WHERE exit_status IS NOT NULL", NULL, 0),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_created, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_keys_enforced, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_keeps_data, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_newer_version_refused, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_database, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_8_campaigns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_sqlite_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_application_id_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_cycle, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_history_columns, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_errors_mapped, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_resume_cases, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_resume_unknown_target, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_host_stall_stored, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_action_end_with_wear, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_resume_after_action, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_resume_campaign_key, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_iteration_end_rollback, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_iteration_without_fill, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_figures_null, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_rate_bounds_enforced, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v7_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v17_stored_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_iteration_io_counts, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_readonly_beside_writer, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_reader_after_writer_closed, setup_open,
						teardown),
		cmocka_unit_test_setup_teardown(test_threads_share_connection, setup_open,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_error_when_locked, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_write_error_at_commit, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_write_error_readonly, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_owned_files_and_backing_identity, setup_open,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_check, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_lock_one_holder, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_lock_follows_the_file, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_lock_drops_only_a_new_empty_file, setup_open,
						teardown),
		cmocka_unit_test_setup_teardown(test_schema_doc, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_history_view_current_at_open, setup_open,
						teardown),
		cmocka_unit_test_setup_teardown(test_views_current_at_open, setup_open, teardown),
		cmocka_unit_test(test_phase_names),
		cmocka_unit_test_setup_teardown(test_cheap_open_and_full_check, setup_open,
						teardown),
		cmocka_unit_test_setup_teardown(test_statement_bind_counts, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_bind_count_refused, setup_open, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
