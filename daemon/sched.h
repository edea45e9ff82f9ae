/* sched: one thread per target running cycles of sizes (fill, measured
 * phase, record) and the action between cycles. Owns no configuration
 * parsing and no process-wide state besides the stop flag it reads. */
#ifndef WEARMON_SCHED_H
#define WEARMON_SCHED_H

#include <pthread.h>
#include <stdint.h>

#include "cfg.h"
#include "db.h"
#include "tgt.h"

enum sched_state { SCHED_RUNNING, SCHED_DONE, SCHED_STOPPED, SCHED_FAILED };

struct sched_target {
	const struct cfg *cfg;
	const struct cfg_target *t;
	struct tgt tg;
	struct cfg_layout layout;
	struct db *db;
	int64_t run_id, target_id;
	pthread_t thread;
	int started;
	enum sched_state state;     /* written by the thread, read after join */
	char error[1024];
};

/* Start the target's thread. Returns 0 or -errno. */
int sched_start(struct sched_target *st);

/* Wait for the thread. Returns its final state. */
enum sched_state sched_join(struct sched_target *st);

/* Name of a state ("running", "done", "stopped", "failed"). */
const char *sched_state_name(enum sched_state s);

#endif
