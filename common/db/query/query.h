/* query: the named reads of the history that the wearmon CLI's status,
 * history, show, alerts and export commands make. Each function holds its
 * SQL, handles the differences between schema versions once, and streams
 * its rows to a db_row_fn (db/db.h), so a caller keeps only the row it is
 * looking at. Never writes; nothing here prints.
 *
 * Every function returns 0, the callback's first nonzero value, or -errno
 * with a message naming the database in err. */
#ifndef WEARMON_QUERY_H
#define WEARMON_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "base/eol.h"
#include "db/db.h"
#include "db/query/query_named.h"

/* Where rows go, and where an error message is written. */
struct query_sink {
	db_row_fn fn; /* NULL: rows are dropped */
	void *arg;
	char *err;
	size_t errlen;
};

/* ---- lookups (query.c) ---- */

/* The target named name: one row (id, known), id NULL when there is none
 * and known the list of the targets' names ("a, b"), NULL when none. */
int query_target_lookup(struct db *db, const char *name, const struct query_sink *s);

/* Whether the database holds an iteration into *any (0 or 1). */
int query_any_iteration(struct db *db, int *any, char *err, size_t errlen);

/* The column names of a table or view, one row each (column "name"), in
 * order. */
int query_columns(struct db *db, const char *table, const struct query_sink *s);

/* Begin (begin = 1) or end (0) a read snapshot: the reads in between see
 * the same rows, whatever the daemon commits meanwhile (WAL). For a caller
 * that reads the same rows twice. */
int query_snapshot(struct db *db, int begin, char *err, size_t errlen);

/* ---- export (query.c) ---- */

/* The tables and views a user may export (name, type), SQLite's own left
 * out, tables first. */
int query_export_names(struct db *db, const struct query_sink *s);

/* Every row of the table or view name, every column (name must be one
 * query_export_names listed: it is quoted, never parsed). */
int query_export_rows(struct db *db, const char *name, const struct query_sink *s);

/* How a table or view's rows belong to a target: by its target_id, by its
 * iteration_id (through iterations, whose index finds that target's rows
 * without a scan), or not at all. */
/* How a table's or view's rows name their target: a target_id column, an
 * iteration_id column (found through that target's iterations), or only
 * the target's name (column target: cycle_summary, owned_files). */
enum query_target_key {
	QUERY_TARGET_NONE,
	QUERY_TARGET_ID,
	QUERY_TARGET_ITERATION,
	QUERY_TARGET_NAME
};

/* The SQL of query_export_target_rows, for the plan test; NULL: no memory.
 * Free it. */
char *query_export_target_sql(const char *name, enum query_target_key key);

/* The rows of name that belong to target ?1 (a name), in the order of
 * query_export_rows. Returns 0 or -errno with a message in s->err. */
int query_export_target_rows(struct db *db, const char *name, enum query_target_key key,
			     const char *target, const struct query_sink *s);

/* ---- history and alerts (query_history.c) ---- */

/* Which iterations history lists; NULL / 0 / "" : no filter. */
struct query_history_filter {
	const char *target;
	int64_t cycle;
	const char *since; /* ISO-8601 UTC, started_at >= since */
	const char *sort;  /* NULL, or a column of the statement to order by
			      first ("-name": descending) */
};

/* The history statement for this database's schema: its SQL and the names
 * of its columns (id, target, cycle, iteration, every column of
 * iterations but ids, baseline_mibps, baseline_cycle, ratio). */
struct query_history {
	char *sql;
	char **names;
	int nnames;
};

/* Builds q for f. Free it with query_history_free. */
int query_history_prepare(struct db *db, const struct query_history_filter *f,
			  struct query_history *q, char *err, size_t errlen);

/* One row per iteration that f lets through, by f->sort's column when
 * given, then by target name, cycle and iteration number. */
int query_history_run(struct db *db, const struct query_history *q,
		      const struct query_history_filter *f, const struct query_sink *s);

void query_history_free(struct query_history *q);

/* Events of severity notice and above, oldest first (target and since
 * may be NULL): id, at, target, severity, kind, cycle, iteration,
 * iteration_id, value, baseline, message, message_id. */
int query_alerts(struct db *db, const char *target, const char *since, const struct query_sink *s);

/* ---- one iteration (query_show.c) ---- */

/* The iteration id: every column of iterations, then target, device,
 * device_kind, cycle, baseline_mibps, baseline_cycle, nsizes. */
int query_show_iteration(struct db *db, int64_t id, const struct query_sink *s);

/* Its samples per phase, measure last: phase, n, t_ms (the last), lo,
 * mean, hi (MiB/s), iops (mean), p99 (worst). */
int query_show_sample_phases(struct db *db, int64_t id, const struct query_sink *s);

/* Its samples, measure last, in time order: phase, t_ms, mibps. */
int query_show_sample_trace(struct db *db, int64_t id, const struct query_sink *s);

/* Its samples, every column, in the same order. */
int query_show_samples(struct db *db, int64_t id, const struct query_sink *s);

/* The health snapshots of the iteration (schemas that store it) or else
 * of its cycle, every column, oldest first. */
int query_show_health(struct db *db, int64_t id, int64_t cycle_id, const struct query_sink *s);

/* Its events and those of its cycle that name no iteration, oldest first:
 * at, severity, kind, message, of_cycle (1: the cycle's). */
int query_show_events(struct db *db, int64_t id, int64_t cycle_id, const struct query_sink *s);

/* The same events, every column. */
int query_show_events_all(struct db *db, int64_t id, int64_t cycle_id, const struct query_sink *s);

/* The cause and evidence of its throughput-crash and -collapse alerts
 * (schema 20; none before), oldest first: event_id, at, kind,
 * iteration_id, cause, device_wa, baseline_device_wa, throttle_seconds,
 * peak_temp_c, host_stall_seconds (the members of the event's data,
 * daemon/alert.c). */
int query_show_evidence(struct db *db, int64_t id, const struct query_sink *s);

/* ---- host idle recovery (query_hir.c; table hir_bursts, schema 22;
 * hir_purges and the idle waits, schema 27) ---- */

/* The wait states of target ?1's cycles lo..hi that ran the protocol (none
 * before schema 22), by cycle and wait state: cycle, cycle_id, wait_state,
 * wait_seconds; the idle waits after the bursts (NULL before schema 27):
 * waits, idle_seconds, idle_media_bytes (the media bytes the drive wrote
 * while idle, over the waits that have the figure; NULL when none has),
 * idle_media_per_wait, idle_media_mibps, idle_host_bytes; then bursts,
 * mibps (the bursts' bytes over their seconds),
 * mibps_min, mibps_max (of single bursts), iops, lat_mean_us, lat_p99_us
 * (the worst), host_bytes, media_bytes, device_wa (media over host bytes,
 * NULL unless every burst has both), peak_temp_c, baseline_mibps (its
 * return to baseline; NULL without one). */
int query_hir_states(struct db *db, int64_t target_id, int64_t lo, int64_t hi,
		     const struct query_sink *s);

/* The precondition of the same cycles: cycle, cycle_id, rounds, mibps_min,
 * mibps_max (of the rounds), steady (1 steady, 0 not in max_rounds, NULL
 * still running). */
int query_hir_preconditions(struct db *db, int64_t target_id, int64_t lo, int64_t hi,
			    const struct query_sink *s);

/* The purges of the same cycles (none before schema 27), every attempt,
 * oldest first: cycle, cycle_id, method (secure-erase, trim, none), erase
 * (the secure_erase method), outcome, started_at, seconds, bytes, note
 * (why none ran, what was tried first, the error). */
int query_hir_purges(struct db *db, int64_t target_id, int64_t lo, int64_t hi,
		     const struct query_sink *s);
/* ---- the endurance forecast (query_forecast.c) ---- */

/* Which snapshots a forecast reads: target_id's in cycles lo..hi (lo 0:
 * from the first cycle of the campaign of cycle hi, or of the current
 * campaign when hi is 0 too; hi 0: to its latest), up to until (ISO time;
 * NULL: all): the forecast as it stood then. */
struct query_forecast_scope {
	int64_t target_id, lo, hi;
	const char *until;
};

/* The endurance forecast (common/base/eol.h) from the health snapshots of
 * scope and the rating stored with the target: the one reading of them
 * that status, show, the report and the metrics share. With readings, the
 * snapshots read (time order) go into a malloc'd *readings of *n (the
 * caller frees it). sc NULL: the facts are read now. Returns 0 or -errno
 * with a message in err. */
int query_forecast(struct db *db, const struct query_schema *sc,
		   const struct query_forecast_scope *scope, struct eol_forecast *out,
		   struct eol_reading **readings, size_t *n, char *err, size_t errlen);

/* ---- status (query_status.c) ---- */

/* Every run not known to have stopped, and the latest run of every host,
 * newest first: id, started_at, ended_at, pid, hostname, exit_status,
 * exit_reason, last_seen (see query_status.c). */
int query_status_runs(struct db *db, const struct query_sink *s);

/* What a run of the database at db_path is now: stopped (it recorded its
 * end), alive (its pid holds the database's lock), dead (it recorded no
 * end and holds no lock: killed, crashed, power lost) or elsewhere (it
 * ran on another host: this one cannot tell). The one definition of
 * "running" that status prints in every format. */
enum query_run_state {
	QUERY_RUN_ALIVE,
	QUERY_RUN_STOPPED,
	QUERY_RUN_DEAD,
	QUERY_RUN_ELSEWHERE,
};
enum query_run_state query_run_state(const char *db_path, const char *hostname, int64_t pid,
				     int ended);

/* "running", "stopped", "gone", "elsewhere". */
const char *query_run_state_name(enum query_run_state s);

/* The targets (all when name is NULL), by name: id, name, device, kind,
 * capacity_bytes. */
int query_status_targets(struct db *db, const char *name, const struct query_sink *s);

/* The target's last iteration, or its last done one: every column of
 * iterations, then cycle, cycle_status, run_host (the hostname of the
 * run that started it), baseline_mibps, baseline_cycle,
 * nsizes, cycles_cfg (the plan of its cycle: the sizes it measures and
 * the cycles configured, 0 = forever, NULL unknown; query_sql.h's
 * QS_PLAN_NSIZES_CYCLE and the like). */
int query_last_iteration(struct db *db, const struct query_schema *sc, int64_t target_id, int done,
			 const struct query_sink *s);

/* The target's progress row when it is about this cycle and iteration:
 * phase, mibps, phase_bytes (and phase_seconds, duration_seconds from
 * version 8; iteration_seconds and age, its age in wall-clock seconds,
 * from version 9). Before version 9 only a fresh row (< 10 s); from 9 any,
 * and the caller takes it when the daemon is alive or the row fresh. */
int query_fresh_progress(struct db *db, const struct query_schema *sc, int64_t target_id,
			 int64_t cycle, int64_t iteration, const struct query_sink *s);

/* The target's progress row when it names a stage of its phase (host idle
 * recovery, schema 23; none before): phase, stage, remaining_seconds
 * (what the phase's plan had left when written), cycle, age (seconds). */
int query_stage(struct db *db, const struct query_schema *sc, int64_t target_id,
		const struct query_sink *s);

/* A row of the same target, size, workload and block size: the last that
 * is done: wall (seconds), fill_seconds, cycle_id, cycle. */
struct query_same_size {
	int64_t target_id, size_bytes, block_size;
	const char *workload;
};
int query_last_same_size(struct db *db, const struct query_same_size *k,
			 const struct query_sink *s);

/* The target's last done cycle: id, number, wall (seconds), and elapsed, the
 * seconds since cycle cycle_id started. */
int query_last_done_cycle(struct db *db, int64_t target_id, int64_t cycle_id,
			  const struct query_sink *s);

/* The ETA of a target's cycle and campaign, from what remains of the plan
 * and the seconds each size took when last measured (in this cycle, else
 * in the last done cycle; a size measured in neither counts as the mean of
 * those that were), plus the time the last done cycle spent outside its
 * iterations. Rows' own wall times are summed, so that a stop and restart
 * (and the time between) leave the figures alone. The one definition of
 * the ETAs that status prints in every format. */
struct query_eta_in {
	int64_t target_id, cycle_id;   /* the cycle running */
	int64_t prev_cycle_id;         /* the last done cycle; 0 none */
	double prev_wall;              /* its wall time (seconds); <= 0 unknown */
	int size_index, nsizes;        /* the size running, of how many */
	long cycle, cycles;            /* its number; cycles planned, 0 forever */
	double iteration_elapsed;      /* seconds the running iteration has run */
	double iteration_eta;          /* its phase's own ETA; < 0 unknown */
	const struct query_schema *sc; /* the database's facts (NULL: read
					  them); without more_rows: no ETA */
};
struct query_eta {
	double cycle_eta, campaign_eta; /* seconds; NAN unknown */
	double cycle_seconds;           /* a whole cycle; NAN unknown */
	double between_seconds;         /* of it, outside iterations */
	int sizes_estimated;            /* sizes not measured yet (mean used) */
};
int query_campaign_eta(struct db *db, const struct query_eta_in *in, struct query_eta *out,
		       char *err, size_t errlen);

/* The target's last cycle: number, status, action, action_outcome. */
int query_last_cycle(struct db *db, int64_t target_id, const struct query_sink *s);

/* The target's last event of severity notice and above: at, severity,
 * kind, message, cycle, iteration, iteration_id. */
int query_last_alert(struct db *db, int64_t target_id, const struct query_sink *s);

/* ---- shared by the files of this module (query.c) ---- */

/* Run sql with params into s. */
int query_run(struct db *db, const char *sql, const struct db_value *p, int np,
	      const struct query_sink *s);

/* Run the named query q (its SQL for facts sc; NULL: read them now) with
 * params into s. */
int query_named_sink(struct db *db, const struct query_schema *sc, const struct query_named *q,
		     const struct db_value *p, int np, const struct query_sink *s);

/* How an iteration i finds its baseline in this schema: the columns
 * (baseline_mibps, baseline_cycle) and the joins that give them. From
 * schema 9 the row names its baseline (baseline_iteration_id, the fact
 * QF_BASELINE_ROW), a lookup by primary key; the view iteration_baseline would be built whole at every
 * join. Before 9, the reader's TEMP view of the same name (db_open). */
struct query_baseline {
	const char *mibps, *cycle, *join;
};
const struct query_baseline *query_baseline_of(const struct query_schema *sc);

#endif
