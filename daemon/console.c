/* console: the foreground daemon's status lines (see console.h). */
#include "console.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/log.h"
#include "base/stats.h"
#include "base/util.h"
#include "db/query/query.h"

int console_wanted(int logs_to_stderr)
{
	const char *term = getenv("TERM");

	return logs_to_stderr && isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb"));
}

void console_init(struct console *c, int on, struct db *db)
{
	char err[256];

	memset(c, 0, sizeof(*c));
	c->on = on;
	if (on && db && !query_schema_of(db, &c->sc, err, sizeof(err)))
		c->db = db;
}

/* The place of the cycle in its campaign ("cycle 1/2"): the numbers go on
 * across campaigns, the count of cycles does not. */
static long campaign_cycle(const struct sched_progress *p)
{
	return p->campaign_first > 0 ? p->cycle - p->campaign_first + 1 : p->cycle;
}

static int io_phase(const struct sched_progress *p)
{
	return p->phase == PH_FILL || p->phase == PH_MEASURE || p->phase == PH_VERIFY;
}

/* The phase's share and time left, as wearmon status has them. */
static void phase_now(const struct sched_progress *p, double now, struct stats_phase *f)
{
	double secs = p->phase_started > 0 ? now - p->phase_started : -1;
	double dur = p->phase == PH_MEASURE ? p->duration : 0;

	stats_phase_progress((double)p->phase_bytes, (double)p->phase_goal, secs, dur, p->mibps, f);
}

/* Append to buf (of len) at *used. */
static void add(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;

	if (*used >= len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

/* The phase part: an I/O phase with its share and rates, another with its
 * stage or running time. */
static void phase_part(const struct sched_progress *p, double now, char *b, size_t len, size_t *u)
{
	char t[32];
	struct stats_phase f;

	if (!io_phase(p)) {
		if (p->stage[0])
			add(b, len, u, "  %s: %s", sched_phase_name(p), p->stage);
		else
			add(b, len, u, "  %s %s", sched_phase_name(p),
			    util_fmt_duration(p->phase_started > 0 ? now - p->phase_started : NAN,
					      t, sizeof(t)));
		return;
	}
	phase_now(p, now, &f);
	if (isnan(f.fraction))
		add(b, len, u, "  %s", sched_phase_name(p));
	else
		add(b, len, u, "  %s %.0f%%", sched_phase_name(p), 100 * f.fraction);
	if (p->phase_bytes)
		add(b, len, u, "  %.1f MiB/s %.0f IOPS", p->mibps, p->iops);
	else
		add(b, len, u, "  no sample yet");
	if (!isnan(f.eta))
		add(b, len, u, "  left: phase %s", util_fmt_duration(f.eta, t, sizeof(t)));
}

void console_line(const char *name, const struct sched_progress *p, double now, double cycle_left,
		  char *buf, size_t width)
{
	char sz[32], t[32];
	size_t u = 0, len = width + 1;

	add(buf, len, &u, "%s", name);
	if (!p->cycle) {
		add(buf, len, &u, "  %s", sched_phase_name(p));
		return;
	}
	add(buf, len, &u, "  cycle %ld", campaign_cycle(p));
	if (p->cycles > 0)
		add(buf, len, &u, "/%ld", p->cycles);
	if (p->nsizes > 0 && p->size_bytes)
		add(buf, len, &u, "  size %d/%d %s", p->size_index + 1, p->nsizes,
		    util_fmt_bytes(p->size_bytes, sz, sizeof(sz)));
	phase_part(p, now, buf, len, &u);
	if (p->stage[0] && p->stage_remaining >= 0)
		add(buf, len, &u, "  left: %s",
		    util_fmt_duration(fmax(0, p->stage_remaining - (now - p->stage_started)), t,
				      sizeof(t)));
	if (!isnan(cycle_left))
		add(buf, len, &u, "%s cycle %s", strstr(buf, "left:") ? "," : "  left:",
		    util_fmt_duration(cycle_left, t, sizeof(t)));
}

static int done_cycle_row(void *arg, int n, const struct db_value *v, const char *const *names)
{
	struct console_cycle *cc = arg;

	for (int k = 0; k < n; k++) {
		if (!strcmp(names[k], "id") && v[k].type == DB_INT)
			cc->prev_id = v[k].i;
		else if (!strcmp(names[k], "wall") && v[k].type != DB_NULL)
			cc->prev_wall = v[k].type == DB_INT ? (double)v[k].i : v[k].r;
	}
	return 0;
}

/* The cycle's time left as `wearmon status` has it (NAN unknown). */
static double cycle_left(struct console *c, struct sched_target *st, int i,
			 const struct sched_progress *p, double now)
{
	struct console_cycle *cc = &c->cyc[i];
	struct query_eta eta;
	struct stats_phase f = { NAN, NAN };
	char err[256];

	if (!c->db || !p->cycle_id || i >= CONSOLE_MAX_TARGETS)
		return NAN;
	if (cc->cycle_id != p->cycle_id) {
		struct query_sink s = { done_cycle_row, cc, err, sizeof(err) };
		*cc = (struct console_cycle){ .cycle_id = p->cycle_id };
		if (query_last_done_cycle(c->db, st->target_id, p->cycle_id, &s))
			cc->prev_id = 0, cc->prev_wall = NAN;
	}
	if (io_phase(p))
		phase_now(p, now, &f);
	struct query_eta_in in = {
		.target_id = st->target_id,
		.cycle_id = p->cycle_id,
		.prev_cycle_id = cc->prev_id,
		.prev_wall = cc->prev_wall,
		.size_index = p->size_index,
		.nsizes = p->nsizes,
		.cycle = campaign_cycle(p),
		.cycles = p->cycles,
		.iteration_elapsed = p->iteration_started > 0 ? now - p->iteration_started : 0,
		.iteration_eta = isnan(f.eta) ? -1 : f.eta,
		.sc = &c->sc,
	};
	if (query_campaign_eta(c->db, &in, &eta, err, sizeof(err)))
		return NAN;
	return eta.cycle_eta;
}

/* The terminal's width less one (a full line would wrap on some). */
static size_t width_now(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		return ws.ws_col - 1 < CONSOLE_LINE ? ws.ws_col - 1 : CONSOLE_LINE;
	return 79;
}

void console_tick(struct console *c, struct sched_target *st, int n)
{
	double now = util_now();
	size_t width = width_now();
	char *text;

	if (!c->on || now < c->next_at)
		return;
	c->next_at = now + CONSOLE_EVERY;
	text = calloc((size_t)(n ? n : 1), CONSOLE_LINE + 2);
	if (!text)
		return;
	for (int i = 0, used = 0; i < n; i++) {
		struct sched_progress p;
		enum sched_state s = __atomic_load_n(&st[i].state, __ATOMIC_SEQ_CST);

		sched_progress_get(&st[i], &p);
		if (s != SCHED_RUNNING)
			snprintf(text + used, width + 1, "%s  %s", st[i].tg.name,
				 sched_state_name(s));
		else
			console_line(st[i].tg.name, &p, now, cycle_left(c, &st[i], i, &p, now),
				     text + used, width);
		used += (int)strlen(text + used);
		text[used++] = '\n';
	}
	log_status_lines(text);
	free(text);
}

void console_fini(struct console *c)
{
	if (c->on)
		log_status_lines(NULL);
	c->on = 0;
}
