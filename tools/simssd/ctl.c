/* ctl: control-file commands, injected faults and the stats text. */
#include "ctl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

#define MAX_TOKENS 6

static int split(char *s, char **tok)
{
	char *save = NULL, *t;
	int n = 0;

	for (t = strtok_r(s, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == MAX_TOKENS)
			return -EINVAL;
		tok[n++] = t;
	}
	return n;
}

static int parse_ops(const char *s, unsigned *ops)
{
	if (!s || strcmp(s, "rw") == 0)
		*ops = CTL_OP_READ | CTL_OP_WRITE;
	else if (strcmp(s, "read") == 0)
		*ops = CTL_OP_READ;
	else if (strcmp(s, "write") == 0)
		*ops = CTL_OP_WRITE;
	else
		return -EINVAL;
	return 0;
}

/* "250" is milliseconds (the documented unit); "250us" etc. also work. */
static int parse_ms(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);

	if (end != s && *end == '\0' && v >= 0 && v < 1e7) {
		*ns = (uint64_t)(v * 1e6);
		return 0;
	}
	return opts_parse_time(s, ns);
}

static int parse_fault(char **tok, int n, struct ctl_cmd *cmd)
{
	if (n == 2 && strcmp(tok[1], "vanish") == 0) {
		cmd->kind = CTL_VANISH;
		return 0;
	}
	if (n == 2 && strcmp(tok[1], "clear") == 0) {
		cmd->kind = CTL_CLEAR;
		return 0;
	}
	if ((n == 4 || n == 5) && strcmp(tok[1], "ioerror") == 0) {
		cmd->kind = CTL_IOERROR;
		if (opts_parse_size(tok[2], &cmd->off) < 0 ||
		    opts_parse_size(tok[3], &cmd->len) < 0 || cmd->len == 0)
			return -EINVAL;
		return parse_ops(n == 5 ? tok[4] : NULL, &cmd->ops);
	}
	if (n == 4 && strcmp(tok[1], "heat") == 0) {
		char *end;
		cmd->kind = CTL_HEAT;
		cmd->heat_c = strtod(tok[2], &end);
		if (end == tok[2] || *end || !(cmd->heat_c > 0 && cmd->heat_c <= 200))
			return -EINVAL;
		/* "3" is seconds here; "500ms" etc. also work */
		double sec = strtod(tok[3], &end);
		if (end != tok[3] && !*end && sec > 0 && sec <= 86400) {
			cmd->latency_ns = (uint64_t)(sec * 1e9);
			return 0;
		}
		return opts_parse_time(tok[3], &cmd->latency_ns) < 0 || !cmd->latency_ns ? -EINVAL
											 : 0;
	}
	if ((n == 3 || n == 4) &&
	    (strcmp(tok[1], "latency") == 0 || strcmp(tok[1], "stats-latency") == 0)) {
		char *end = NULL;

		cmd->kind = tok[1][0] == 'l' ? CTL_LATENCY : CTL_STATS_LATENCY;
		if (parse_ms(tok[2], &cmd->latency_ns) < 0)
			return -EINVAL;
		if (n == 3)
			return 0;
		cmd->count = strtoull(tok[3], &end, 10);
		return (*end || tok[3][0] == '-') ? -EINVAL : 0;
	}
	return -EINVAL;
}

int ctl_parse(const char *line, struct ctl_cmd *cmd)
{
	char buf[256], *tok[MAX_TOKENS];
	int n;

	memset(cmd, 0, sizeof(*cmd));
	cmd->count = 1;
	if (strlen(line) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, line);
	n = split(buf, tok);
	if (n == 1 && strcmp(tok[0], "secure-erase") == 0) {
		cmd->kind = CTL_SECURE_ERASE;
		return 0;
	}
	if (n >= 2 && strcmp(tok[0], "fault") == 0)
		return parse_fault(tok, n, cmd);
	return -EINVAL;
}

int ctl_apply(struct ctl_faults *f, const struct ctl_cmd *cmd)
{
	switch (cmd->kind) {
	case CTL_IOERROR:
		if (f->nio == CTL_MAX_RANGES)
			return -ENOSPC;
		f->io[f->nio].off = cmd->off;
		f->io[f->nio].len = cmd->len;
		f->io[f->nio++].ops = cmd->ops;
		return 0;
	case CTL_LATENCY:
		f->latency_ns = cmd->latency_ns;
		f->latency_left = cmd->count ? cmd->count : UINT64_MAX;
		return 0;
	case CTL_STATS_LATENCY:
		f->stats_latency_ns = cmd->latency_ns;
		f->stats_latency_left = cmd->count ? cmd->count : UINT64_MAX;
		return 0;
	case CTL_VANISH: f->vanished = 1; return 0;
	case CTL_CLEAR:
		f->nio = 0;
		f->latency_ns = 0;
		f->latency_left = 0;
		f->stats_latency_ns = 0;
		f->stats_latency_left = 0;
		f->vanished = 0;
		return 0;
	case CTL_SECURE_ERASE:
	case CTL_HEAT: break;
	}
	return -EINVAL;
}

int ctl_check_io(struct ctl_faults *f, enum ctl_op op, uint64_t off, uint64_t len,
		 uint64_t *delay_ns)
{
	unsigned i;

	*delay_ns = 0;
	for (i = 0; !f->vanished && i < f->nio; i++) {
		const struct ctl_range *r = &f->io[i];

		if ((r->ops & op) && off < r->off + r->len && r->off < off + len)
			break;
	}
	if (f->vanished || i < f->nio) {
		f->errors++;
		return -EIO;
	}
	if (f->latency_left) {
		*delay_ns = f->latency_ns;
		if (f->latency_left != UINT64_MAX)
			f->latency_left--;
		f->delayed++;
	}
	return 0;
}

uint64_t ctl_stats_delay(struct ctl_faults *f)
{
	if (!f->stats_latency_left || !f->stats_latency_ns)
		return 0;
	if (f->stats_latency_left != UINT64_MAX)
		f->stats_latency_left--;
	f->stats_delayed++;
	return f->stats_latency_ns;
}

/* snprintf that appends and keeps the running length in *pos. */
static void put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, size - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos = *pos + (size_t)n < size ? *pos + (size_t)n : size - 1;
}

static void put_config(const struct ftl_config *c, int compress, char *buf, size_t size, size_t *p)
{
	put(buf, size, p, "capacity %llu\n", (unsigned long long)c->capacity);
	put(buf, size, p, "page %u\nerase_block %u\n", c->page, c->erase_block);
	put(buf, size, p, "spare_pct %.2f\nchannels %u\n", c->spare_pct, c->channels);
	put(buf, size, p, "t_prog_ns %llu\nt_read_ns %llu\nt_erase_ns %llu\n",
	    (unsigned long long)c->t_prog, (unsigned long long)c->t_read,
	    (unsigned long long)c->t_erase);
	put(buf, size, p, "cache %llu\ngc_free %u\ncompress %d\n", (unsigned long long)c->cache,
	    c->gc_free, compress);
	put(buf, size, p, "bg_gc_free %u\nbg_gc_idle_ns %llu\n", c->bg_free,
	    (unsigned long long)c->bg_idle);
	put(buf, size, p, "fresh_write_bytes_per_s %.0f\n", ftl_fresh_write_rate(c));
}

size_t ctl_format_stats(const struct ftl_config *cfg, const struct ftl_stats *s,
			const struct ctl_faults *f, int compress, char *buf, size_t size)
{
	size_t p = 0;
	double wa = s->host_bytes_written
			    ? (double)s->flash_bytes_written / (double)s->host_bytes_written
			    : 0;

	if (size == 0)
		return 0;
	buf[0] = '\0';
	put_config(cfg, compress, buf, size, &p);
	put(buf, size, &p, "physical_bytes %llu\ntotal_blocks %llu\n",
	    (unsigned long long)s->physical_bytes, (unsigned long long)s->total_blocks);
	put(buf, size, &p, "host_bytes_written %llu\nhost_bytes_read %llu\n",
	    (unsigned long long)s->host_bytes_written, (unsigned long long)s->host_bytes_read);
	put(buf, size, &p, "flash_bytes_written %llu\nflash_bytes_read %llu\n",
	    (unsigned long long)s->flash_bytes_written, (unsigned long long)s->flash_bytes_read);
	put(buf, size, &p, "gc_bytes_moved %llu\ntrimmed_bytes %llu\n",
	    (unsigned long long)s->gc_bytes_moved, (unsigned long long)s->trimmed_bytes);
	put(buf, size, &p, "bg_gc_bytes_moved %llu\nbg_gc_erases %llu\n",
	    (unsigned long long)s->bg_gc_bytes_moved, (unsigned long long)s->bg_gc_erases);
	put(buf, size, &p, "write_amplification %.4f\n", wa);
	put(buf, size, &p, "flash_busy_ns %llu\n", (unsigned long long)s->flash_busy_ns);
	put(buf, size, &p, "free_blocks %llu\nvalid_pages %llu\nvalid_bytes_flash %llu\n",
	    (unsigned long long)s->free_blocks, (unsigned long long)s->valid_pages,
	    (unsigned long long)s->valid_bytes_flash);
	put(buf, size, &p,
	    "erases %llu\nerase_count_min %llu\nerase_count_avg %.3f\n"
	    "erase_count_max %llu\n",
	    (unsigned long long)s->erases, (unsigned long long)s->erase_min, s->erase_avg,
	    (unsigned long long)s->erase_max);
	if (cfg->endurance) /* NVMe's percentage used: whole percent, at most 255 */
		put(buf, size, &p,
		    "endurance %u\nwear_accel %u\npercentage_used %u\nlife_used_pct %.4f\n"
		    "life_end_host_bytes %llu\n",
		    cfg->endurance, cfg->wear_accel ? cfg->wear_accel : 1,
		    (unsigned)fmin(floor(s->life_used_pct), 255), s->life_used_pct,
		    (unsigned long long)s->life_end_host_bytes);
	put(buf, size, &p, "fault_vanished %d\nfault_ioerror_ranges %u\n", f->vanished, f->nio);
	put(buf, size, &p, "fault_latency_ns %llu\nfault_errors %llu\nfault_delayed %llu\n",
	    (unsigned long long)(f->latency_left ? f->latency_ns : 0),
	    (unsigned long long)f->errors, (unsigned long long)f->delayed);
	put(buf, size, &p, "fault_stats_latency_ns %llu\nfault_stats_delayed %llu\n",
	    (unsigned long long)(f->stats_latency_left ? f->stats_latency_ns : 0),
	    (unsigned long long)f->stats_delayed);
	return p;
}
