/* log: one way to report, to the journal (structured fields) or to stderr. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include "base/log.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "base/util.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define IDENTIFIER "wearmond"
#define MSG_MAX 2048

_Static_assert(LOG_OWN_FIELDS + LOG_CONTEXT_FIELDS < LOG_MAX_FIELDS,
	       "the named context alone fills a journal entry");

/* Set by log_init before threads start; atomics keep late changes sane. */
static atomic_int sink = LOG_SINK_STDERR;
static atomic_int max_prio = LOG_INFO;
static atomic_int echo_errors;
static int stderr_journal; /* stderr is the journal's stream (log_init) */
static log_tap_fn tap;     /* log_set_tap */
static void *tap_arg;
static atomic_ulong lost; /* journal fields not written (log_fields_lost) */
static _Atomic(log_sendv_fn) sendv_fn;

static int journal_sendv(const struct iovec *iov, int n)
{
	log_sendv_fn fn = atomic_load(&sendv_fn);
	return fn ? fn(iov, n) : sd_journal_sendv(iov, n);
}

void log_set_sendv(log_sendv_fn fn)
{
	atomic_store(&sendv_fn, fn);
}

unsigned long log_fields_lost(void)
{
	return atomic_load(&lost);
}

/* systemd.exec(5): a service whose stderr goes to the journal gets
 * JOURNAL_STREAM=DEVICE:INODE of that stream. It is inherited by children
 * whose stderr may be something else, so it counts only when it names the
 * file our stderr really is. */
static int stderr_is_journal_stream(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &tail) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(enum log_sink s, int max_priority)
{
	stderr_journal = stderr_is_journal_stream();
	if (s == LOG_SINK_AUTO)
		s = stderr_journal ? LOG_SINK_JOURNAL : LOG_SINK_STDERR;
	if (s == LOG_SINK_JOURNAL && !atomic_load(&sendv_fn) && access(JOURNAL_SOCKET, F_OK) != 0)
		s = LOG_SINK_STDERR;
	atomic_store(&sink, (int)s);
	atomic_store(&max_prio, max_priority);
}

void log_set_tap(log_tap_fn fn, void *arg)
{
	tap = fn;
	tap_arg = arg;
}

int log_on_stderr(void)
{
	return atomic_load(&sink) == LOG_SINK_STDERR;
}

void log_echo_errors(int on)
{
	atomic_store(&echo_errors, on);
}

const char *log_prio_name(int priority)
{
	static const char *const names[] = {
		[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert",     [LOG_CRIT] = "crit",
		[LOG_ERR] = "err",     [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info",   [LOG_DEBUG] = "debug",
	};

	if (priority < 0 || (size_t)priority >= ARRAY_SIZE(names))
		return "unknown";
	return names[priority];
}

/* The status lines below the messages (log_status_lines): their text and
 * how many lines it holds on the screen. Guarded by stderr's own stdio
 * lock (flockfile), which every write to stderr here takes. */
static char *status_text;
static int status_rows;

/* Up to the first status line and clear to the end of the screen. */
static void status_clear(void)
{
	if (status_rows)
		fprintf(stderr, "\r\033[%dA\033[J", status_rows);
	status_rows = 0;
}

static void status_draw(void)
{
	if (!status_text)
		return;
	fputs(status_text, stderr);
	for (const char *p = status_text; *p; p++)
		status_rows += *p == '\n';
}

void log_status_lines(const char *text)
{
	char *copy = text && text[0] ? strdup(text) : NULL;

	flockfile(stderr);
	status_clear();
	free(status_text);
	status_text = copy;
	status_draw();
	fflush(stderr);
	funlockfile(stderr);
}

/* One line under stderr's lock: lines from several threads never
 * interleave, and the status lines step aside for it. Messages name their
 * target themselves ("target lab1: ..."), as they read the same in the
 * journal. */
static void to_stderr(int priority, const struct log_fields *f, const char *msg)
{
	(void)f;
	flockfile(stderr);
	status_clear();
	fprintf(stderr, "%s: %s: %s\n", IDENTIFIER, log_prio_name(priority), msg);
	status_draw();
	funlockfile(stderr);
}

struct iov_list {
	struct iovec v[LOG_MAX_FIELDS];
	int n;
	int lost; /* fields that could not be added */
};

/* Append "NAME=value" (formatted). A field that cannot be added (out of
 * memory, or past LOG_MAX_FIELDS, which is our own bug) is counted, never
 * dropped silently. */
static void add_field(struct iov_list *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_field(struct iov_list *l, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	assert(l->n < LOG_MAX_FIELDS && "more journal fields than LOG_MAX_FIELDS");
	if (l->n >= LOG_MAX_FIELDS) {
		l->lost++;
		return;
	}
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		l->lost++;
		return;
	}
	l->v[l->n].iov_base = s;
	l->v[l->n].iov_len = (size_t)n;
	l->n++;
}

static void add_text(struct iov_list *l, const char *name, const char *value)
{
	if (value)
		add_field(l, "%s=%s", name, value);
}

static void add_context(struct iov_list *l, const struct log_fields *f)
{
	add_text(l, "TARGET", f->target);
	add_text(l, "DEVICE", f->device);
	add_text(l, "SERIAL", f->serial);
	add_text(l, "MODEL", f->model);
	add_text(l, "FIRMWARE", f->firmware);
	add_text(l, "MESSAGE_ID", f->message_id);
	if (f->cycle >= 0)
		add_field(l, "CYCLE=%ld", f->cycle);
	if (f->iteration >= 0)
		add_field(l, "ITERATION=%ld", f->iteration);
	if (f->size_bytes >= 0)
		add_field(l, "SIZE_BYTES=%lld", (long long)f->size_bytes);
	if (f->mibps >= 0)
		add_field(l, "MIBPS=%.2f", f->mibps);
	if (f->baseline_mibps >= 0)
		add_field(l, "BASELINE_MIBPS=%.2f", f->baseline_mibps);
	add_text(l, "CAUSE", f->cause);
	for (size_t i = 0; i < f->nextra; i++)
		add_field(l, "%s=%s", f->extra[i].name, f->extra[i].value ? f->extra[i].value : "");
}

/* Returns 0 or a negative errno from sd_journal_sendv; *nlost: fields
 * that could not be written. */
static int to_journal(int priority, const struct log_fields *f, const char *msg, int *nlost)
{
	struct iov_list l = { .n = 0 };
	int rc;

	add_field(&l, "MESSAGE=%s", msg);
	add_field(&l, "PRIORITY=%d", priority);
	add_field(&l, "SYSLOG_IDENTIFIER=%s", IDENTIFIER);
	rc = -ENOMEM;
	if (l.n == LOG_OWN_FIELDS) {
		if (f)
			add_context(&l, f);
		rc = journal_sendv(l.v, l.n);
	}
	for (int i = 0; i < l.n; i++)
		free(l.v[i].iov_base);
	*nlost = l.lost;
	return rc < 0 ? rc : 0;
}

static void vlog(int priority, const struct log_fields *f, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vlog(int priority, const struct log_fields *f, const char *fmt, va_list ap)
{
	char msg[MSG_MAX];
	size_t n;

	if (priority > atomic_load(&max_prio))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	if (tap)
		tap(tap_arg, priority, msg);
	int nlost = 0;
	if (atomic_load(&sink) == LOG_SINK_JOURNAL && to_journal(priority, f, msg, &nlost) == 0) {
		/* A refusal at start-up also reaches the person at the terminal,
		 * unless the terminal is not there (stderr is the journal). */
		if (priority <= LOG_ERR && atomic_load(&echo_errors) && !stderr_journal)
			to_stderr(priority, f, msg);
	} else {
		to_stderr(priority, f, msg);
	}
	if (nlost) {
		atomic_fetch_add(&lost, (unsigned long)nlost);
		log_msg(LOG_ERR, "%d journal field(s) of the entry \"%.80s\" could not be written",
			nlost, msg);
	}
}

void log_msg(int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(priority, NULL, fmt, ap);
	va_end(ap);
}

void log_fields(int priority, const struct log_fields *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(priority, f, fmt, ap);
	va_end(ap);
}
