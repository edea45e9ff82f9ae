/* checkplan_json: `wearmond --check --json`: the plan checkplan.c built, as
 * one JSON document; its schema is written out in daemon/wearmond.8
 * ("CHECK"). Formats only: every figure comes from struct checkplan. */
#include "checkplan.h"
#include "pts.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "db/db.h"

const char *checkplan_state_name(enum checkplan_state s)
{
	static const char *const names[CP__COUNT] = {
		[CP_UNKNOWN] = "unknown",           [CP_NEW] = "new",
		[CP_NEW_CAMPAIGN] = "new-campaign", [CP_NEXT_CYCLE] = "next-cycle",
		[CP_RESUMES] = "resumes",           [CP_COMPLETE] = "complete",
	};
	return (unsigned)s < CP__COUNT ? names[s] : "unknown";
}

/* A JSON string (RFC 8259 escapes), or null for NULL. */
static void jstr(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* "" is null: a fact the device did not give. */
static void jopt(FILE *f, const char *s)
{
	jstr(f, s && s[0] ? s : NULL);
}

static void jkey(FILE *f, const char *k)
{
	jstr(f, k);
	fputc(':', f);
}

/* A number, or null when negative (unknown). */
static void jnum(FILE *f, double v)
{
	if (v < 0)
		fputs("null", f);
	else
		fprintf(f, "%.3f", v);
}

/* Lines of text as an array of strings. */
static void jlines(FILE *f, const char *text)
{
	const char *s = text;
	int first = 1;

	fputc('[', f);
	while (s && *s) {
		size_t n = strcspn(s, "\n");
		char line[4096];
		if (n) {
			util_strlcpy(line, s, n + 1 < sizeof(line) ? n + 1 : sizeof(line));
			fputs(first ? "" : ",", f);
			jstr(f, line);
			first = 0;
		}
		s += n + (s[n] == '\n');
	}
	fputc(']', f);
}

static void print_contents(FILE *f, const struct checkplan_target *p)
{
	const struct blkinfo *b = &p->bi;

	fputs("{", f);
	jkey(f, "summary");
	jstr(f, p->contents);
	fputs(",", f);
	jkey(f, "partition_table");
	jopt(f, b->pttype);
	fputs(",", f);
	jkey(f, "filesystem");
	jopt(f, b->fstype);
	fputs(",", f);
	jkey(f, "usage");
	jopt(f, b->usage);
	fputs(",", f);
	jkey(f, "label");
	jopt(f, b->label);
	fputs(",", f);
	jkey(f, "uuid");
	jopt(f, b->uuid);
	fputs(",", f);
	jkey(f, "mounted_at");
	jopt(f, b->mounted_at);
	fputs(",", f);
	jkey(f, "partitions");
	fputc('[', f);
	for (int i = 0; i < b->nparts; i++) {
		const struct blkinfo_part *q = &b->part[i];
		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, q->name);
		fprintf(f, ",\"size_bytes\":%llu,\"filesystem\":", (unsigned long long)q->size);
		jopt(f, q->fstype);
		fputs(",\"label\":", f);
		jopt(f, q->label);
		fputs(",\"mounted_at\":", f);
		jopt(f, q->mounted_at);
		fputc('}', f);
	}
	fputs("]}", f);
}

static void print_device(FILE *f, const struct checkplan_target *p)
{
	const struct tgt *tg = &p->st->tg;

	fputs("{", f);
	jkey(f, "path");
	jstr(f, tg->path);
	fputs(",", f);
	jkey(f, "kind");
	jstr(f, p->is_block ? "block" : "file");
	fputs(",", f);
	jkey(f, "sysname");
	jopt(f, p->is_block ? p->bi.sysname : NULL);
	fputs(",", f);
	jkey(f, "capacity_bytes");
	if (p->capacity)
		fprintf(f, "%llu", (unsigned long long)p->capacity);
	else
		fputs("null", f);
	fputs(",", f);
	jkey(f, "logical_block_size");
	if (tg->logical_block_size)
		fprintf(f, "%u", tg->logical_block_size);
	else
		fputs("null", f);
	fputs(",", f);
	jkey(f, "rotational");
	fputs(!p->is_block || p->bi.rotational < 0 ? "null"
	      : p->bi.rotational                   ? "true"
						   : "false",
	      f);
	fputs(",", f);
	jkey(f, "model");
	jopt(f, p->model);
	fputs(",", f);
	jkey(f, "serial");
	jopt(f, p->serial);
	fputs(",", f);
	jkey(f, "firmware");
	jopt(f, p->firmware);
	fputs(",", f);
	jkey(f, "pinned");
	jstr(f, p->pinned);
	fputs("}", f);
}

static void print_step(FILE *f, const struct checkplan_step *s)
{
	fputs("{", f);
	jkey(f, "phase");
	jstr(f, s->what);
	fprintf(f,
		",\"block_size\":%u,\"queue_depth\":%u,\"bytes\":%llu,\"runs\":%d,"
		"\"runs_at_most\":%s,\"written_bytes\":%llu,\"duration_limit_seconds\":",
		s->block_size, s->queue_depth, (unsigned long long)s->bytes, s->runs,
		s->up_to ? "true" : "false", (unsigned long long)s->written);
	jnum(f, s->cap > 0 ? s->cap : -1);
	fputs(",\"rate_mibps\":", f);
	jnum(f, s->mibps);
	fputs(",\"rate_cycle\":", f);
	if (s->mibps >= 0)
		fprintf(f, "%ld", s->rate_cycle);
	else
		fputs("null", f);
	fputs(",\"seconds_estimate\":", f);
	jnum(f, s->seconds);
	fputs("}", f);
}

static void print_plan(FILE *f, const struct checkplan_target *p)
{
	const struct cfg_layout *l = &p->st->plan.layout;

	if (!p->have_plan) {
		fputs("\"region\":null,\"sizes\":[],\"cycle\":null", f);
		return;
	}
	fprintf(f, "\"region\":{\"offset_bytes\":%llu,\"size_bytes\":%llu},\"sizes\":[",
		(unsigned long long)l->region_offset, (unsigned long long)l->region_size);
	for (int k = 0; k < p->nsizes; k++) {
		const struct checkplan_size *z = &p->size[k];
		fprintf(f, "%s{\"size_bytes\":%llu,\"steps\":[", k ? "," : "",
			(unsigned long long)z->bytes);
		for (int i = 0; i < z->nsteps; i++) {
			fputs(i ? "," : "", f);
			print_step(f, &z->step[i]);
		}
		fputs("]}", f);
	}
	fprintf(f, "],\"cycle\":{\"written_bytes\":%llu,\"read_bytes\":%llu,\"seconds_estimate\":",
		(unsigned long long)p->cycle_written, (unsigned long long)p->cycle_read);
	jnum(f, p->cycle_seconds);
	fputs(",\"seconds_known\":", f);
	jnum(f, p->known_seconds);
	fprintf(f, ",\"steps_unknown\":%d,\"measured_seconds_at_most\":", p->unknown_steps);
	jnum(f, p->measured_bound > 0 ? p->measured_bound : -1);
	fputs("}", f);
}

/* pts = : the tests each cycle runs, each in pts_describe's words; null
 * without them. */
static void print_pts(FILE *f, const struct checkplan_target *p)
{
	const struct plan_pts *s = &p->st->plan.pts;
	char b[320];

	fputs("\"pts\":", f);
	if (!p->have_plan || !s->active) {
		fputs("null", f);
		return;
	}
	fputs("{\"variant\":", f);
	jstr(f, cfg_pts_variant_name(s->variant));
	fprintf(f, ",\"active_range_bytes\":%llu,\"active_range_percent\":",
		(unsigned long long)s->range);
	jnum(f, s->active_pct);
	fputs(",\"tests\":[", f);
	for (int i = 0; i <= s->n; i++) {
		enum cfg_pts t = i < s->n ? s->test[i] : PTS_HIR;
		if (i == s->n && !s->hir)
			break;
		pts_describe(t, s, b, sizeof(b));
		fputs(i ? ",{\"test\":" : "{\"test\":", f);
		jstr(f, cfg_pts_name(t));
		fputs(",\"plan\":", f);
		jstr(f, b);
		fputs("}", f);
	}
	fputs("]}", f);
}

static void print_actions(FILE *f, const struct checkplan_target *p)
{
	const struct cfg_target *t = p->st->t;

	fputs("\"between_cycles\":[", f);
	for (int i = 0; i < t->between_cycles.n; i++) {
		fputs(i ? "," : "", f);
		jstr(f, cfg_action_name(t->between_cycles.a[i]));
	}
	fputs("],\"trim_scope\":", f);
	jstr(f, t->trim_scope == TRIM_DEVICE ? "device" : "region");
	fputs(",\"secure_erase\":", f);
	jstr(f, cfg_erase_name(t->secure_erase));
	fprintf(f, ",\"idle_seconds\":%.3f,\"pause_seconds\":%.3f,\"cycles\":%lld", t->idle,
		t->pause, t->cycles);
}

static void print_campaign(FILE *f, const struct checkplan_target *p)
{
	const struct db_resume *r = &p->res;
	int known = p->state != CP_UNKNOWN;
	int resumes = p->state == CP_RESUMES;

	fputs("{", f);
	jkey(f, "state");
	jstr(f, checkplan_state_name(p->state));
	fputs(",\"cycle\":", f);
	if (known)
		fprintf(f, "%ld", r->cycle_number);
	else
		fputs("null", f);
	fputs(",\"size\":", f);
	if (resumes)
		fprintf(f, "%d", r->next_size_index + 1);
	else
		fputs("null", f);
	fputs(",\"iteration\":", f);
	if (resumes)
		fprintf(f, "%ld", r->next_iteration);
	else
		fputs("null", f);
	fputs(",\"cycles_done\":", f);
	if (known)
		fprintf(f, "%ld", r->campaign_cycles_done);
	else
		fputs("null", f);
	fputs(",\"changed\":", f);
	jopt(f, p->state == CP_NEW_CAMPAIGN ? r->changed : NULL);
	fprintf(f, ",\"iterations_left_running\":%ld,", r->interrupted_marked);
	jkey(f, "summary");
	jstr(f, p->state_text);
	fputs("}", f);
}

static void print_target(FILE *f, const struct checkplan_target *p)
{
	fputs("{", f);
	jkey(f, "name");
	jstr(f, p->st->t->name);
	fprintf(f, ",\"ready\":%s,", p->ready ? "true" : "false");
	jkey(f, "refusals");
	jlines(f, p->st->error);
	fputs(",\"device\":", f);
	print_device(f, p);
	fputs(",\"contents\":", f);
	print_contents(f, p);
	fputs(",", f);
	jkey(f, "destroys");
	jstr(f, p->destroys);
	fputs(",", f);
	print_plan(f, p);
	fputs(",", f);
	print_pts(f, p);
	fputs(",", f);
	print_actions(f, p);
	fputs(",\"campaign\":", f);
	print_campaign(f, p);
	fputs("}", f);
}

void checkplan_print_json(FILE *f, const struct checkplan *cp, int refused)
{
	fputs("{", f);
	jkey(f, "config");
	jstr(f, cp->config);
	fputs(",", f);
	jkey(f, "database");
	jstr(f, cp->c ? cp->c->database : NULL);
	fprintf(f, ",\"ready\":%s,\"exit_status\":%d,", refused ? "false" : "true",
		refused ? 78 : 0);
	jkey(f, "refusals");
	jlines(f, cp->refusals);
	fputs(",\"database_in_use_by_pid\":", f);
	if (cp->holder)
		fprintf(f, "%ld", (long)cp->holder);
	else
		fputs("null", f);
	fputs(",\"targets\":[", f);
	for (int i = 0; i < cp->n; i++) {
		fputs(i ? "," : "", f);
		print_target(f, &cp->t[i]);
	}
	fputs("]}\n", f);
}
