/* retain: moving old samples and rolling up old ones, in short steps. */
#include "retain.h"

#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "db/db.h"

#define MOVE_BATCH 16     /* iterations per transaction of the move */
#define ROLLUP_BATCH 8    /* iterations per transaction of a rollup */
#define BUSY_PAUSE 0.2    /* seconds between steps while there is work */
#define IDLE_PAUSE 60.0   /* seconds between looks when there was none */
#define LOG_EVERY 5.0     /* seconds between progress messages */
#define ERROR_PAUSE 300.0 /* after repeated failures: look again later */
#define ERRORS_TOLERATED 3

void retain_init(struct retain *r)
{
	memset(r, 0, sizeof(*r));
	r->migrating = 1;
}

/* A failed step: logged by the db module; try again soon, then seldom. */
static void step_failed(struct retain *r, const char *what, int ret, double now)
{
	r->errors++;
	log_msg(LOG_WARNING, "%s: %s; trying again %s", what, strerror(-ret),
		r->errors >= ERRORS_TOLERATED ? "in 5 minutes" : "shortly");
	r->next = now + (r->errors >= ERRORS_TOLERATED ? ERROR_PAUSE : BUSY_PAUSE * 10);
}

/* One batch of the move of schema 15's samples. Returns 1 (worked) or 0. */
static int move_step(struct retain *r, struct db *db, double now)
{
	struct db_samples_progress p;
	int ret = db_samples_migrate(db, MOVE_BATCH, &p);

	if (ret < 0) {
		step_failed(r, "migrating samples", ret, now);
		return 0;
	}
	r->errors = 0;
	if (ret == 0) {
		if (r->logged > 0)
			log_msg(LOG_INFO, "migrating samples: done");
		r->migrating = 0;
		return 0;
	}
	if (r->logged == 0 || now - r->logged >= LOG_EVERY || p.done == p.total) {
		log_msg(LOG_INFO, "migrating samples: %ld of %ld iterations", p.done, p.total);
		r->logged = now;
	}
	r->next = now + BUSY_PAUSE;
	return 1;
}

/* One batch of rollups. Returns 1 (worked) or 0. */
static int rollup_step(struct retain *r, struct db *db, double retention, double now)
{
	int64_t from = r->cursor;
	int ret = db_samples_rollup(db, retention, ROLLUP_BATCH, &r->cursor);

	if (ret < 0) {
		step_failed(r, "rolling up old samples", ret, now);
		return 0;
	}
	r->errors = 0;
	if (ret > 0)
		log_msg(LOG_DEBUG, "samples of %d iterations after id %lld rolled up into minutes",
			ret, (long long)from);
	/* a pass that went on, or did work, goes on soon; a finished idle one
	 * looks again in a while (sooner when the retention is short) */
	int more = ret > 0 || r->cursor != 0;
	double idle = retention < IDLE_PAUSE ? (retention > 1 ? retention : 1) : IDLE_PAUSE;
	r->next = now + (more ? BUSY_PAUSE : idle);
	return ret > 0;
}

int retain_tick(struct retain *r, struct db *db, double retention, double now)
{
	if (!db || now < r->next)
		return 0;
	if (r->migrating && move_step(r, db, now))
		return 1;
	if (r->migrating) /* the move failed: no rollup before it is done */
		return 0;
	if (retention <= 0) {
		r->next = now + IDLE_PAUSE;
		return 0;
	}
	return rollup_step(r, db, retention, now);
}
