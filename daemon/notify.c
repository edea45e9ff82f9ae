/* notify: sd_notify wrappers that stay silent without NOTIFY_SOCKET, and the
 * STATUS= text. */
#include "notify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "base/util.h"

#define PART_MAX 256
#define MORE_RESERVE 16 /* room kept for " (+NNN more)" */

int notify_enabled(void)
{
	const char *s = getenv("NOTIFY_SOCKET");

	return s && *s;
}

/* sd_notify returns > 0 when sent, 0 without a socket, < 0 on error. */
static int send_state(const char *state)
{
	if (!notify_enabled())
		return 0;
	int rc = sd_notify(0, state);
	return rc < 0 ? rc : 0;
}

int notify_ready(const char *status)
{
	char buf[1200];

	if (!status)
		return send_state("READY=1");
	snprintf(buf, sizeof(buf), "READY=1\nSTATUS=%s", status);
	return send_state(buf);
}

int notify_reloading(void)
{
	struct timespec ts;
	char buf[64];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, sizeof(buf), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ULL +
			 (unsigned long long)ts.tv_nsec / 1000);
	return send_state(buf);
}

int notify_extend_timeout(uint64_t usec, const char *what)
{
	char buf[1200];
	int n = snprintf(buf, sizeof(buf), "EXTEND_TIMEOUT_USEC=%llu", (unsigned long long)usec);

	if (what)
		snprintf(buf + n, sizeof(buf) - (size_t)n, "\nSTATUS=%s", what);
	return send_state(buf);
}

int notify_stopping(void)
{
	return send_state("STOPPING=1");
}

int notify_status(const char *text)
{
	char buf[1200];

	snprintf(buf, sizeof(buf), "STATUS=%s", text);
	return send_state(buf);
}

int notify_watchdog(void)
{
	return send_state("WATCHDOG=1");
}

uint64_t notify_watchdog_usec(void)
{
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}

/* One target's part of the line. */
static void format_one(char *buf, size_t len, const struct notify_target *t)
{
	char sz[32];
	size_t used;

	if (t->state) {
		snprintf(buf, len, "%s: %s", t->name, t->state);
		return;
	}
	if (t->cycle < 1 || t->nsizes < 1) {
		snprintf(buf, len, "%s: %s", t->name, t->phase ? t->phase : "starting");
		return;
	}
	used = (size_t)snprintf(buf, len, "%s: cycle %ld size %d/%d (%s) %s", t->name, t->cycle,
				t->size_index + 1, t->nsizes,
				util_fmt_bytes(t->size_bytes, sz, sizeof(sz)),
				t->phase ? t->phase : "?");
	if (used < len && t->mibps > 0)
		used += (size_t)snprintf(buf + used, len - used, " %.1f MiB/s", t->mibps);
	if (used < len && t->mibps > 0 && t->baseline_mibps > 0 && t->measuring)
		snprintf(buf + used, len - used, " %.0f%% of baseline",
			 100.0 * t->mibps / t->baseline_mibps);
}

/* Names come from the configuration; a newline would end the field. */
static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

char *notify_format_status(char *buf, size_t len, const struct notify_target *v, int n)
{
	char part[PART_MAX];
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *sep = i ? "; " : "";
		format_one(part, sizeof(part), &v[i]);
		size_t need = strlen(sep) + strlen(part);
		size_t reserve = i + 1 < n ? MORE_RESERVE : 0;
		if (used + need + reserve >= len) {
			if (used + MORE_RESERVE < len || i == 0)
				snprintf(buf + used, len - used, "%s(+%d more)", sep, n - i);
			break;
		}
		memcpy(buf + used, sep, strlen(sep));
		memcpy(buf + used + strlen(sep), part, strlen(part) + 1);
		used += need;
	}
	one_line(buf);
	return buf;
}
