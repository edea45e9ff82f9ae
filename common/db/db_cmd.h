/* db_cmd: the commands table (schema 26): each command wearmond starts,
 * recorded before it execs and ended after it is reaped, and the ones an
 * earlier run left unended (common/base/cmd.h). */
#ifndef WEARMON_DB_CMD_H
#define WEARMON_DB_CMD_H

#include <stdint.h>

#include "base/proc.h"

struct db;

/* A command about to exec, as db_command_start records it. */
struct db_command_start {
	int64_t run_id;
	int64_t target_id; /* 0: none */
	const char *tag;   /* what it is: "target lab1: secure_erase_command" */
	char *const *argv; /* stored as a JSON array */
	const struct proc_ident *ident;
};

/* Record a command before it execs. Returns 0 with its row id, or -errno. */
int db_command_start(struct db *db, const struct db_command_start *c, int64_t *id);

/* Record how command id ended, now: how is cmd_end_name's text, "not
 * run", or, for one an earlier run left (by_run: the run that found it),
 * "ended at start" or "gone at start"; status < 0 stores NULL. Returns 0
 * or -errno. */
int db_command_end(struct db *db, int64_t id, const char *how, int status, int64_t by_run);

/* A command recorded and never ended (db_commands_open). */
struct db_command {
	int64_t id, run_id, target_id; /* target_id 0: none */
	const struct proc_ident *ident;
	char tag[160];
	char argv[512]; /* the JSON array, cut to fit */
	char started_at[40];
};

/* Called with each; return 0 to go on. */
typedef int (*db_command_fn)(void *arg, const struct db_command *c);

/* The commands recorded and never ended, oldest first (none before schema
 * 24). Works on a read-only connection. Returns 0, fn's value, or -errno
 * (logged). */
int db_commands_open(struct db *db, db_command_fn fn, void *arg);

#endif
