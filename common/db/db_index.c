/* db_index: the indexes the CLI's named reads (common/db/query/) need so
 * that a read of one target or one iteration does not scan samples or
 * iterations. Apart from the numbered migrations (db_migrations.c): created
 * with IF NOT EXISTS after every migration, so a database of any version
 * gets them once, and a later schema version may take them over. */
#include "db/db_int.h"

#include <errno.h>

/* clang-format off */
static const char index_sql[] =
	/* status: a target's newest iteration (ORDER BY id DESC LIMIT 1) */
	"CREATE INDEX IF NOT EXISTS iterations_target ON iterations (target_id);\n"
	/* show and status: a target's number of sizes (max(size_index)) */
	"CREATE INDEX IF NOT EXISTS iterations_target_size ON iterations (target_id, size_index);\n"
	/* history --since without --target */
	"CREATE INDEX IF NOT EXISTS iterations_started ON iterations (started_at);\n"
	/* show: the events of an iteration and of its cycle */
	"CREATE INDEX IF NOT EXISTS events_iteration ON events (iteration_id);\n"
	"CREATE INDEX IF NOT EXISTS events_cycle ON events (cycle_id);\n"
	/* show: the health snapshots of a cycle */
	"CREATE INDEX IF NOT EXISTS health_cycle ON health (cycle_id);\n"
	/* the daemon's alert baseline (db_baseline, common/db/db_read.c): the
	 * done iterations of one size, workload and block size in id order */
	"CREATE INDEX IF NOT EXISTS iterations_baseline ON iterations"
	" (target_id, size_bytes, workload, block_size, status);\n";
/* clang-format on */

int db_index_create(struct db *db, char *err, size_t errlen)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db->conn, index_sql, NULL, NULL, &msg);

	if (rc == SQLITE_OK)
		return 0;
	db_seterr(err, errlen, "database %s: cannot create the read indexes: %s", db->path,
		  msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	rc = db_map_rc(rc, sqlite3_system_errno(db->conn));
	return rc ? rc : -EIO;
}
