/* log: one way to report, to the journal (structured fields) or to stderr.
 * Never decides policy; callers choose the priority (syslog levels). */
#ifndef WEARMON_LOG_H
#define WEARMON_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <syslog.h>

/* One further journal field: NAME (upper case, as the journal wants it)
 * and its text; an empty value is written as an empty field. */
struct log_field {
	const char *name;
	const char *value;
};

/* Structured context attached to a message; unset fields are NULL / < 0. */
struct log_fields {
	const char *target;
	const char *device;
	const char *serial;
	const char *model;
	const char *firmware;
	const char *message_id;        /* 32 hex digits, alerts only */
	long cycle;                    /* < 0: not set */
	long iteration;                /* < 0: not set */
	int64_t size_bytes;            /* < 0: not set */
	double mibps;                  /* < 0: not set */
	double baseline_mibps;         /* < 0: not set */
	const char *cause;             /* CAUSE= of a crash alert; NULL: not set */
	const struct log_field *extra; /* nextra further fields (the evidence) */
	size_t nextra;
};

#define LOG_FIELDS_INIT                                                                            \
	{                                                                                          \
		.cycle = -1, .iteration = -1, .size_bytes = -1, .mibps = -1.0,                     \
		.baseline_mibps = -1.0                                                             \
	}

/* Fields log.c itself writes (MESSAGE, PRIORITY, SYSLOG_IDENTIFIER) and
 * the named members of struct log_fields: a caller's extra fields come on
 * top of these. */
#define LOG_OWN_FIELDS 3
#define LOG_CONTEXT_FIELDS 12
/* The most fields one journal entry holds, far above what any message
 * sends (alert.c checks its own catalogue against it at compile time); a
 * field beyond it is a bug: it asserts and is counted (log_fields_lost). */
#define LOG_MAX_FIELDS 64

/* LOG_SINK_AUTO: the journal (structured fields) when stderr is the
 * journal stream systemd gave the service (JOURNAL_STREAM, systemd.exec(5)),
 * stderr otherwise, so a person who runs the program sees its messages. */
enum log_sink { LOG_SINK_STDERR, LOG_SINK_JOURNAL, LOG_SINK_AUTO };

/* Choose where messages go; LOG_SINK_JOURNAL falls back to stderr when no
 * journal socket exists. Also sets the lowest priority printed. */
void log_init(enum log_sink sink, int max_priority);

/* While on, messages of priority err and worse sent to the journal are also
 * printed on stderr, unless stderr is the journal stream (start-up refusals
 * must reach the terminal whatever the sink). */
void log_echo_errors(int on);

/* Log a plain message. */
void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Log a message with structured fields (may be NULL). */
void log_fields(int priority, const struct log_fields *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Told of every message that passes the priority filter, whatever the
 * sink, with its priority and text (no newline): `wearmond --check
 * --json` gathers its refusals so. Set before threads start. */
typedef void (*log_tap_fn)(void *arg, int priority, const char *msg);

/* Set (or, with NULL, remove) the tap. */
void log_set_tap(log_tap_fn fn, void *arg);
/* Journal fields that could not be written since start (out of memory,
 * or beyond LOG_MAX_FIELDS): each is also reported by an err line of its
 * own. Returns the count. */
unsigned long log_fields_lost(void);

/* Where journal entries go: sd_journal_sendv, or a test's stand-in (NULL
 * restores sd_journal_sendv). The stand-in returns 0 or -errno. */
typedef int (*log_sendv_fn)(const struct iovec *iov, int n);
void log_set_sendv(log_sendv_fn fn);

/* The terminal's status lines (the foreground daemon's progress, one line
 * per target, each ending in a newline): kept below the messages on
 * stderr, cleared before each message printed there and drawn again after
 * it, so that neither garbles the other. Drawn at once; NULL or "" clears
 * them. For a terminal only: the caller checks that stderr is one. */
void log_status_lines(const char *text);

/* Whether messages go to stderr (the sink log_init chose). Returns 1 or 0. */
int log_on_stderr(void);

/* Syslog name of a priority: "crit", "err", "warning", ... */
const char *log_prio_name(int priority);

#endif
