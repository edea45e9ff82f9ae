/* sqltrace: an LD_PRELOAD library that appends the text of every statement
 * a program prepares through SQLite to the file named by WEARMON_SQLTRACE,
 * one statement per record (ending in a line "-- end"), and at exit the
 * virtual machine steps and full-scan steps all statements took (a line
 * "-- steps VM FULLSCAN"): work counted the same on any machine. The
 * scale test (tests/integration/test_scale.py) and the bench
 * (tools/bench/scale.py) run the CLI with it, to read the query plans of
 * exactly the SQL the CLI runs and how its work grows. Changes nothing
 * else. */
#include <dlfcn.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*prepare_v2_fn)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
typedef int (*prepare_v3_fn)(sqlite3 *, const char *, int, unsigned int, sqlite3_stmt **,
			     const char **);

typedef int (*stmt_fn)(sqlite3_stmt *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long vm_steps, scan_steps;

/* Append the statement's text (its first len bytes when len >= 0). */
static void record(const char *sql, int len)
{
	const char *path = getenv("WEARMON_SQLTRACE");
	size_t n = len >= 0 ? strnlen(sql, (size_t)len) : strlen(sql);

	if (!path || !*path)
		return;
	pthread_mutex_lock(&lock);
	FILE *f = fopen(path, "a");
	if (f) {
		fwrite(sql, 1, n, f);
		fputs("\n-- end\n", f);
		fclose(f);
	}
	pthread_mutex_unlock(&lock);
}

int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int len, sqlite3_stmt **st, const char **tail)
{
	prepare_v2_fn next = (prepare_v2_fn)dlsym(RTLD_NEXT, "sqlite3_prepare_v2");

	if (!next)
		return SQLITE_ERROR;
	if (sql)
		record(sql, len);
	return next(db, sql, len, st, tail);
}

int sqlite3_prepare_v3(sqlite3 *db, const char *sql, int len, unsigned int flags, sqlite3_stmt **st,
		       const char **tail)
{
	prepare_v3_fn next = (prepare_v3_fn)dlsym(RTLD_NEXT, "sqlite3_prepare_v3");

	if (!next)
		return SQLITE_ERROR;
	if (sql)
		record(sql, len);
	return next(db, sql, len, flags, st, tail);
}

/* Count a statement's steps so far (and start its counters again). */
static void count(sqlite3_stmt *st)
{
	if (!st)
		return;
	pthread_mutex_lock(&lock);
	vm_steps += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 1);
	scan_steps += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
	pthread_mutex_unlock(&lock);
}

int sqlite3_reset(sqlite3_stmt *st)
{
	stmt_fn next = (stmt_fn)dlsym(RTLD_NEXT, "sqlite3_reset");

	count(st);
	return next ? next(st) : SQLITE_ERROR;
}

int sqlite3_finalize(sqlite3_stmt *st)
{
	stmt_fn next = (stmt_fn)dlsym(RTLD_NEXT, "sqlite3_finalize");

	count(st);
	return next ? next(st) : SQLITE_ERROR;
}

__attribute__((destructor)) static void steps_at_exit(void)
{
	const char *path = getenv("WEARMON_SQLTRACE");
	FILE *f = path && *path ? fopen(path, "a") : NULL;

	if (!f)
		return;
	fprintf(f, "-- steps %lld %lld\n", vm_steps, scan_steps);
	fclose(f);
}
