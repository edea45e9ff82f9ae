/* iter: one size of one cycle: the fill, the measured phase(s), and their
 * rows in the database. Owns the I/O engines of a target thread. Gets all
 * it needs in one struct iter_env and reports progress through its
 * callback; it never starts or ends a cycle, runs an action, adopts a
 * reload or touches the scheduler's state or lock: that is sched's. */
#ifndef WEARMON_ITER_H
#define WEARMON_ITER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "alert.h"
#include "config/cfg.h"
#include "config/plan.h"
#include "db/db.h"
#include "device/tgt.h"
#include "watch.h"

struct engine_result;

enum it_status { IT_DONE, IT_INTERRUPTED, IT_FAILED };

/* The row (and cycle) status an iteration's end is stored as. */
enum db_status iter_db_status(enum it_status s);

/* What a row is doing, as reported to the progress callback. */
enum iter_phase { ITER_FILL, ITER_MEASURE, ITER_VERIFY };

/* One report. */
enum iter_report {
	ITER_ROW,    /* a row begins: iteration, size_index, size_bytes */
	ITER_PHASE,  /* a phase begins: phase (rate and bytes restart) */
	ITER_SAMPLE, /* a sample ended: mibps, bytes */
};

struct iter_progress {
	enum iter_report what;
	long iteration;        /* ITER_ROW: its number in the cycle */
	int size_index;        /* ITER_ROW */
	uint64_t size_bytes;   /* ITER_ROW */
	enum iter_phase phase; /* ITER_PHASE */
	uint64_t goal;         /* ITER_PHASE: bytes it moves at most (0 unknown) */
	double mibps;          /* ITER_SAMPLE: the sample's MiB/s */
	double iops;           /* ITER_SAMPLE: the sample's IOPS */
	uint64_t bytes;        /* ITER_SAMPLE: the sample's bytes */
};

/* Called from the target's thread; with jobs > 1 the samples come from
 * the jobs' threads, one call at a time. Must not call back into iter. */
typedef void (*iter_progress_fn)(void *arg, const struct iter_progress *p);

/* The rows of a size that a run before a restart finished (the size a
 * resumed cycle goes on with, db_size_rows_done): iter_run does not run
 * them again. It walks the size's rows in order and takes row[next] for
 * the row it is at when they match (phase, workload, repeat, round), its
 * figures feeding the repeats' mean and the steady-state window as if it
 * had just run; at the first that does not match it stops skipping. */
struct iter_resume {
	const struct db_done_row *row;
	size_t n;    /* rows */
	size_t next; /* the next to match */
};

/* Everything a size needs, borrowed for the call. */
struct iter_env {
	const struct cfg_target *t; /* the target's keys (= plan->t) */
	const struct plan *plan;    /* phases, specs, amounts, region, sizes */
	const struct tgt *tg;       /* the open device: fd, path, serial */
	const struct watch *watch;  /* sizes to check at each row's end; NULL: none */
	struct db *db;
	int64_t run_id, target_id;
	int64_t cycle_id; /* the cycle's row */
	long cycle;       /* its number */
	struct alert_ctx *alert;
	const atomic_int *stop;    /* nonzero: end the phase, row interrupted */
	iter_progress_fn progress; /* NULL: none */
	void *arg;                 /* for progress */
	char *error;               /* why iter_run failed */
	size_t error_len;
	struct iter_resume *resume; /* rows done before a restart; NULL: none */
};

struct iter_ctx;

/* What the engines of a target are: fixed for the process. */
struct iter_limits {
	unsigned max_qd;          /* deepest queue of any phase */
	uint64_t max_bs;          /* largest block of any phase */
	unsigned jobs;            /* engines (threads) per measured phase */
	enum engine_kind engine;  /* ioengine: auto or an engine */
	const char *engine_name;  /* its name, for messages */
	double null_mibps;        /* speed of the null engine */
	unsigned io_uring_sqpoll; /* a kernel thread takes io_uring's submissions */
};

/* The limits a plan needs (null_mibps: ENGINE_NULL_MIBPS). */
void iter_limits_of(const struct plan *p, struct iter_limits *l);

/* Whether plan p fits within limits l (a reload must, or wait for a
 * restart). Returns 1 or 0. */
int iter_within(const struct iter_limits *l, const struct plan *p);

/* Allocate engines as l says. Returns 0 or -errno (message in err). */
int iter_init(const struct iter_limits *l, char *err, size_t errlen, struct iter_ctx **out);

/* Release (NULL is fine). */
void iter_fini(struct iter_ctx *ic);

/* The first job's engine, for I/O of the target's own outside the rows
 * (host idle recovery, hir.h). */
struct engine_ctx *iter_engine(struct iter_ctx *ic);

/* Measure size number size_index of cycle e->cycle; rows are numbered from
 * *next on and *next is advanced past the last row used. Returns how the
 * size ended (IT_FAILED: reason in e->error). */
enum it_status iter_run(const struct iter_env *e, struct iter_ctx *ic, int size_index, long *next);

/* A cell's figures are final and about to be stored: the caller adds what
 * only it knows (its test's verdict, figures of the latency histogram) to
 * it, from the engine's result r. Called for a cell that ran to its end. */
typedef void (*iter_cell_fn)(void *arg, struct db_iteration *it, const struct engine_result *r);

/* One cell of a preset test (daemon/pts.h): a measured row with its own
 * access pattern, threads and depth, run for a time over the size. */
struct iter_cell {
	const struct workload_spec *spec; /* the access pattern */
	const char *workload;             /* its name, as stored */
	unsigned jobs, queue_depth;       /* within the engines' limits */
	double seconds;                   /* how long it runs */
	int precondition;                 /* the fill (fill = yes) first, */
	uint64_t fill_amount;             /* of these bytes (0: the size once) */
	int more;                         /* rows of the size follow */
	const struct db_pts *pts;         /* its place in its test, stored */
	iter_cell_fn done;                /* NULL: none */
	void *arg;                        /* for done */
};

/* Measure cell c as row *next of size size_index of cycle e->cycle on
 * ic's engines (iter_init with limits that hold it), advancing *next.
 * Returns how the row ended (IT_FAILED: reason in e->error). */
enum it_status iter_run_cell(const struct iter_env *e, struct iter_ctx *ic, int size_index,
			     long *next, const struct iter_cell *c);

/* A phase that a stop cut short: log (info) how long the drive took to
 * complete the I/Os that were in flight, the part of a stop that the
 * daemon cannot shorten. Nothing when r was not stopped. */
void iter_log_drain(const char *target, const char *phase, const struct engine_result *r);

/* Run op(arg), a database write, until it succeeds. While another
 * program holds the database's write lock (-EBUSY after the busy timeout)
 * it waits and tries again for as long as that lasts, logging a warning
 * the first time and every minute after, unless stop is set (then the
 * error is returned); other errors get 5 tries a second apart. what names
 * the write in the log. Returns 0 or the last -errno. */
int iter_db_patient(const char *target, const char *what, const atomic_int *stop, int (*op)(void *),
		    void *arg);

#endif
