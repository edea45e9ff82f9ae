/* db_cmd: the commands table (schema 26): each command wearmond starts,
 * recorded before it execs and ended after it is reaped, and the ones an
 * earlier run left unended, for the next start to look for. */
#include "db/db_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

/* argv as a JSON array of strings (malloc'd), or NULL without memory. */
static char *argv_json(char *const argv[])
{
	size_t len = 3;
	for (size_t i = 0; argv[i]; i++)
		len += strlen(argv[i]) * 6 + 3; /* every byte as \u00XX at worst */
	char *out = malloc(len), *p = out;
	if (!out)
		return NULL;
	*p++ = '[';
	for (size_t i = 0; argv[i]; i++) {
		p += sprintf(p, "%s\"", i ? "," : "");
		for (const unsigned char *c = (const unsigned char *)argv[i]; *c; c++) {
			if (*c == '"' || *c == '\\')
				p += sprintf(p, "\\%c", *c);
			else if (*c < 0x20)
				p += sprintf(p, "\\u%04x", *c);
			else
				*p++ = (char)*c;
		}
		*p++ = '"';
	}
	*p++ = ']';
	*p = '\0';
	return out;
}

int db_command_start(struct db *db, const struct db_command_start *c, int64_t *id)
{
	struct db_bind b;
	char *json = argv_json(c->argv);
	if (!json)
		return -ENOMEM;
	int ret = db_enter(db);
	if (ret) {
		free(json);
		return ret;
	}
	db_bind_start(db, ST_CMD_START, &b);
	db_bind_i64(&b, c->run_id);
	db_bind_id(&b, c->target_id);
	db_bind_text(&b, c->tag);
	db_bind_text(&b, json);
	db_bind_i64(&b, c->ident->pid);
	db_bind_i64(&b, c->ident->sid);
	db_bind_u64(&b, c->ident->start);
	db_bind_text(&b, c->ident->boot_id);
	ret = db_bind_run(&b, "record a command");
	if (ret == 0)
		*id = sqlite3_last_insert_rowid(db->conn);
	db_leave(db);
	free(json);
	return ret;
}

int db_command_end(struct db *db, int64_t id, const char *how, int status, int64_t by_run)
{
	struct db_bind b;
	int ret = db_enter(db);
	if (ret)
		return ret;
	db_bind_start(db, by_run ? ST_CMD_LEFTOVER : ST_CMD_END, &b);
	db_bind_text(&b, how);
	db_bind_opt_i64(&b, status);
	if (by_run)
		db_bind_i64(&b, by_run);
	db_bind_i64(&b, id);
	ret = db_bind_run(&b, "record a command's end");
	db_leave(db);
	return ret;
}

struct open_args {
	db_command_fn fn;
	void *arg;
};

static int each_open(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct open_args *a = arg;
	struct proc_ident id = {
		.pid = (pid_t)v[4].i,
		.sid = (pid_t)v[5].i,
		.start = (uint64_t)v[6].i,
	};
	struct db_command c = {
		.id = v[0].i,
		.run_id = v[1].i,
		.target_id = v[2].type == DB_INT ? v[2].i : 0,
		.ident = &id,
	};
	util_strlcpy(id.boot_id, v[7].type == DB_TEXT ? v[7].s : "", sizeof(id.boot_id));
	util_strlcpy(c.tag, v[3].type == DB_TEXT ? v[3].s : "", sizeof(c.tag));
	util_strlcpy(c.started_at, v[8].type == DB_TEXT ? v[8].s : "", sizeof(c.started_at));
	util_strlcpy(c.argv, v[9].type == DB_TEXT ? v[9].s : "", sizeof(c.argv));
	return a->fn(a->arg, &c);
}

static int has_table(void *arg, int n, const struct db_value *v, const char *const *names)
{
	*(int *)arg = 1;
	return 0;
}

int db_commands_open(struct db *db, db_command_fn fn, void *arg)
{
	static const char probe[] =
		"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'commands'";
	/* through the partial index commands_open: only the unended */
	static const char sql[] = "SELECT id, run_id, target_id, tag, pid, session_id,"
				  " start_ticks, boot_id, started_at, argv FROM commands"
				  " WHERE ended_at IS NULL ORDER BY id";
	struct open_args a = { fn, arg };
	char err[256];
	int found = 0;
	int ret = db_query(db, probe, NULL, 0, has_table, &found, err, sizeof(err));
	if (!ret && found) /* before schema 26 no command was recorded */
		ret = db_query(db, sql, NULL, 0, each_open, &a, err, sizeof(err));
	if (ret < 0)
		log_msg(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
	return ret;
}
