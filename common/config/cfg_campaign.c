/* cfg_campaign: which keys define a campaign, and a target's values of
 * them as one canonical text (targets.campaign_key). Values are printed
 * from the parsed fields, so "4k" and "4096" give the same text; ioengine
 * as what the drive sees (engine_kind_campaign), so that the queued
 * engines are one campaign. */
#include "config/cfg_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* What is written and measured, and what is done between cycles; the list
 * common/db/schema.md ("Resume and campaigns") and wearmond(8) give. Not here:
 * cycles (raising it extends a campaign), the device (its identity is
 * checked apart), waits (pause, idle), sampling, alerts, error policies,
 * programs and passwords. */
/* clang-format off */
static const enum key_id campaign_keys[] = {
	K_REGION_OFFSET,    K_REGION_SIZE,    K_SIZES,        K_FILL,           K_FILL_BLOCK_SIZE,
	K_FILL_QUEUE_DEPTH, K_WORKLOAD,       K_BLOCK_SIZE,   K_BLOCK_SIZES,    K_QUEUE_DEPTH,
	K_AMOUNT,           K_DURATION,       K_READ_PERCENT, K_RANDOM_PERCENT, K_STRIDE,
	K_COMPRESSIBILITY,  K_DEDUPE_PERCENT, K_JOBS,         K_MEASURE,        K_REPEAT,
	K_STEADY_STATE,     K_MAX_ROUNDS,     K_VERIFY,       K_VERIFY_PHASE,   K_BETWEEN_CYCLES,
	K_TRIM_SCOPE,       K_SECURE_ERASE,   K_FILESYSTEM,   K_MKFS_OPTIONS,   K_FORMAT_EACH_SIZE,
	K_IOENGINE,
	/* the PTS tests (daemon/pts.c) */
	K_PTS, K_PTS_VARIANT, K_PTS_CELL, K_PTS_THREADS, K_PTS_QUEUE_DEPTH, K_PTS_ACTIVE_RANGE,
	K_PTS_XSR_SEGMENT, K_PTS_WSAT_AMOUNT,
	/* where random offsets fall, where each block size starts */
	K_ACCESS, K_BLOCK_ALIGN,
};
/* clang-format on */

static void put_qty(FILE *f, const struct qty *q)
{
	if (q->is_percent)
		fprintf(f, "%.9g%%", q->percent);
	else
		fprintf(f, "%llu", (unsigned long long)q->bytes);
}

static void put_sizes(FILE *f, const struct cfg_sizes *s)
{
	if (s->is_range) {
		put_qty(f, &s->start);
		fputc(':', f);
		put_qty(f, &s->end);
		fputc(':', f);
		put_qty(f, &s->step);
		return;
	}
	for (int i = 0; i < s->n; i++) {
		fputs(i ? " " : "", f);
		put_qty(f, &s->list[i]);
	}
}

static void put_mix(FILE *f, const struct cfg_mix *m)
{
	for (unsigned i = 0; i < m->n; i++)
		fprintf(f, "%s%u/%u", i ? " " : "", m->bs[i].size, m->bs[i].weight);
}

static void put_phases(FILE *f, const struct cfg_phases *p)
{
	for (int i = 0; i < p->n; i++)
		fprintf(f, "%s%s", i ? " " : "",
			p->phase[i] == CFG_PHASE_FILL
				? "fill"
				: cfg_workload_name((enum cfg_workload)p->phase[i]));
}

static void put_actions(FILE *f, const struct cfg_actions *a)
{
	for (int i = 0; i < a->n; i++)
		fprintf(f, "%s%s", i ? " " : "", cfg_action_name(a->a[i]));
}

/* One value of key k, as parsed into field. */
static void put_value(FILE *f, const struct cfg_key *k, const void *field)
{
	switch (k->type) {
	case CT_STRING:
	case CT_DATE:
	case CT_PATH: fputs(field, f); break;
	case CT_BOOL: fputs(*(const int *)field ? "yes" : "no", f); break;
	case CT_BYTES: fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)field); break;
	case CT_QTY: put_qty(f, field); break;
	case CT_INT: fprintf(f, "%lld", *(const long long *)field); break;
	case CT_DURATION:
	case CT_REAL:
	case CT_PERCENT: fprintf(f, "%.9g", *(const double *)field); break;
	case CT_ACTION: put_actions(f, field); break;
	case CT_SIZES: put_sizes(f, field); break;
	case CT_AMOUNT: {
		const struct cfg_amount *a = field;
		if (a->is_multiple)
			fprintf(f, "%.9gx", a->multiple);
		else
			fprintf(f, "%llu", (unsigned long long)a->bytes);
		break;
	}
	case CT_ENUM: fputs(k->choices[*(const int *)field], f); break;
	case CT_MIX: put_mix(f, field); break;
	case CT_PHASES: put_phases(f, field); break;
	case CT_WAITS: {
		const struct cfg_waits *w = field;
		for (int i = 0; i < w->n; i++)
			fprintf(f, "%s%.9g", i ? " " : "", w->s[i]);
		break;
	}
	case CT_PTS: {
		const struct cfg_pts_list *p = field;
		for (int i = 0; i < p->n; i++)
			fprintf(f, "%s%s", i ? " " : "", cfg_pts_name(p->t[i]));
		break;
	}
	case CT_ACCESS: {
		char buf[160];
		fputs(access_text(field, buf, sizeof(buf)), f);
		break;
	}
	case CT__COUNT: break;
	}
}

char *cfg_campaign_key(const struct cfg_target *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(campaign_keys); i++) {
		const struct cfg_key *k = &cfg_table[campaign_keys[i]];
		fprintf(f, "%s=", k->name);
		if (campaign_keys[i] == K_IOENGINE)
			fputs(engine_kind_campaign(t->ioengine), f);
		else
			put_value(f, k, (const char *)t + k->offset);
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
