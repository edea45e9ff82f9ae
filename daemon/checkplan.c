/* checkplan: `wearmond --check`'s plan: the figures (built once) and the
 * text; the JSON document is checkplan_json.c's. */
#include "checkplan.h"
#include "pts.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "base/util.h"
#include "config/plan.h"
#include "db/db.h"
#include "device/tgt.h"

/* ---- the refusals, as logged ------------------------------------------ */

static char *refusals; /* every err line since checkplan_start, malloc'd */
static size_t refusals_len;
static int printed; /* the report went out: checkplan_fail_json says nothing */

static void gather(void *arg, int priority, const char *msg)
{
	size_t n = strlen(msg);
	char *grown;

	(void)arg;
	if (priority > LOG_ERR || !(grown = realloc(refusals, refusals_len + n + 2)))
		return;
	refusals = grown;
	memcpy(refusals + refusals_len, msg, n);
	refusals_len += n;
	refusals[refusals_len++] = '\n';
	refusals[refusals_len] = '\0';
}

void checkplan_start(void)
{
	log_set_tap(gather, NULL);
}

/* "45 s", "3 min 20 s", "2 h 05 min", "3 d 04 h". */
static char *fmt_seconds(double s, char *buf, size_t len)
{
	long v = (long)(s + 0.5);
	if (s < 10)
		snprintf(buf, len, "%.1f s", s);
	else if (v < 60)
		snprintf(buf, len, "%ld s", v);
	else if (v < 3600)
		snprintf(buf, len, "%ld min %02ld s", v / 60, v % 60);
	else if (v < 86400)
		snprintf(buf, len, "%ld h %02ld min", v / 3600, v % 3600 / 60);
	else
		snprintf(buf, len, "%ld d %02ld h", v / 86400, v % 86400 / 3600);
	return buf;
}

/* ---- the device and what is on it -------------------------------------- */

/* Identity and contents of a block target; a refused one was closed before
 * its identity was read, so it is read here (read-only, as tgt does). */
static void block_facts(struct checkplan_target *p)
{
	const struct tgt *tg = &p->st->tg;
	char desc[sizeof(p->contents)];

	blkinfo_probe(tg->path, &p->bi);
	util_strlcpy(p->contents, blkinfo_describe(&p->bi, desc, sizeof(desc)),
		     sizeof(p->contents));
	p->capacity = tg->capacity ? tg->capacity : p->bi.capacity;
	util_strlcpy(p->serial, tg->serial, sizeof(p->serial));
	util_strlcpy(p->model, tg->model, sizeof(p->model));
	util_strlcpy(p->firmware, tg->firmware, sizeof(p->firmware));
	if (p->serial[0] || p->model[0] || !p->bi.sysname[0])
		return;
	struct tgt *probe = calloc(1, sizeof(*probe));
	if (!probe)
		return;
	probe->is_block = 1;
	util_strlcpy(probe->sysname, p->bi.sysname, sizeof(probe->sysname));
	if (realpath(tg->path, probe->real_path))
		tgt_read_identity(probe, p->serial, sizeof(p->serial), p->model, sizeof(p->model),
				  p->firmware, sizeof(p->firmware));
	free(probe);
}

static void file_facts(struct checkplan_target *p)
{
	const struct tgt *tg = &p->st->tg;
	const struct cfg_target *t = p->st->t;
	char a[32];
	struct stat st;

	p->capacity = tg->capacity;
	if (stat(tg->path, &st) != 0) {
		snprintf(p->contents, sizeof(p->contents),
			 "the file does not exist yet; it is created at file_size (%s)",
			 util_fmt_bytes(t->file_size, a, sizeof(a)));
		if (!p->capacity)
			p->capacity = t->file_size;
		return;
	}
	snprintf(p->contents, sizeof(p->contents), "a regular file of %s%s",
		 util_fmt_bytes((uint64_t)st.st_size, a, sizeof(a)),
		 tg->own_it ? ", made a target by wearmon earlier" : "");
}

/* How wearmond knows the device again at every start and cycle. */
static void pinned(struct checkplan_target *p)
{
	const struct cfg_target *t = p->st->t;

	if (!p->is_block)
		snprintf(p->pinned, sizeof(p->pinned),
			 "by its path, and by its device and inode once wearmon made it");
	else if (p->serial[0])
		snprintf(p->pinned, sizeof(p->pinned), "by serial \"%s\"%s", p->serial,
			 t->expect_serial[0] ? " (expect_serial)" : "");
	else
		snprintf(p->pinned, sizeof(p->pinned),
			 "the device reports no serial number: by its model, capacity%s "
			 "recorded in the database, and by its device number during a run",
			 !strncmp(p->bi.sysname, "loop", 4) ? " and backing file" : "");
}

/* ---- what will be destroyed --------------------------------------------- */

/* Whether anything of the cycle writes: a fill, a write share, an action. */
static int plan_writes(const struct checkplan_target *p)
{
	const struct cfg_target *t = p->st->t;
	if (!engine_kind_moves_data(t->ioengine))
		return 0;
	if (p->cycle_written || t->filesystem != FS_NONE)
		return 1;
	for (int i = 0; i < t->between_cycles.n; i++)
		if (t->between_cycles.a[i] == ACT_TRIM || t->between_cycles.a[i] == ACT_FITRIM ||
		    t->between_cycles.a[i] == ACT_SECURE_ERASE)
			return 1;
	return !p->have_plan; /* not known: assume it does */
}

/* What the actions between cycles reach beyond the region. */
static void beyond_region(const struct checkplan_target *p, char *out, size_t len)
{
	const struct cfg_target *t = p->st->t;

	out[0] = 0;
	if (!p->is_block)
		return; /* a file's actions stay within the file */
	if (t->filesystem != FS_NONE)
		snprintf(out, len, "; mkfs.%s formats the whole device first",
			 cfg_filesystem_name(t->filesystem));
	else if (cfg_has_action(t, ACT_TRIM) && t->trim_scope == TRIM_DEVICE)
		snprintf(out, len,
			 "; the trim between cycles discards the whole device "
			 "(trim_scope = device)");
	else if (cfg_has_action(t, ACT_SECURE_ERASE) && t->secure_erase != ERASE_COMMAND &&
		 t->secure_erase != ERASE_BLKSECDISCARD && t->secure_erase != ERASE_DISCARD_ALL)
		snprintf(out, len, "; the secure erase between cycles (%s) erases the whole drive",
			 cfg_erase_name(t->secure_erase));
	else if (cfg_has_action(t, ACT_SECURE_ERASE))
		snprintf(out, len,
			 "; the secure erase between cycles (%s) may reach beyond the region",
			 cfg_erase_name(t->secure_erase));
	else if (cfg_hir_erases(t))
		snprintf(out, len,
			 "; the host idle recovery purge (secure_erase = %s) may reach beyond "
			 "the region",
			 cfg_erase_name(t->secure_erase));
	else if (t->hir && t->hir_purge != HIR_PURGE_NONE && t->trim_scope == TRIM_DEVICE)
		snprintf(out, len,
			 "; the host idle recovery purge discards the whole device "
			 "(trim_scope = device)");
}

/* What goes with the device's data, in words: the filesystem, the
 * partition table and its partitions. */
static void lost_words(const struct blkinfo *bi, char *out, size_t len)
{
	size_t used = 0;

	if (!bi->probed) {
		snprintf(out, len, "whatever is stored there (libblkid could not read it)");
		return;
	}
	if (bi->fstype[0])
		used += (size_t)snprintf(
			out, len, "the %s %s%s%s%s and every file in it", bi->fstype,
			strcmp(bi->usage, "raid") ? "filesystem" : "RAID member",
			bi->label[0] ? " labelled \"" : "", bi->label, bi->label[0] ? "\"" : "");
	if ((bi->pttype[0] || bi->nparts) && used < len) {
		used += (size_t)snprintf(out + used, len - used, "%sthe %s partition table",
					 used ? ", " : "", bi->pttype[0] ? bi->pttype : "");
		if (bi->nparts && used < len)
			used += (size_t)snprintf(
				out + used, len - used, " and its %d%s partition%s:", bi->nparts,
				bi->more_parts ? "+" : "", bi->nparts == 1 ? "" : "s");
		for (int i = 0; i < bi->nparts && used < len; i++) {
			const struct blkinfo_part *q = &bi->part[i];
			used += (size_t)snprintf(out + used, len - used, "%s %s", i ? "," : "",
						 q->name);
			if (q->fstype[0] && used < len)
				used += (size_t)snprintf(out + used, len - used, " (%s%s%s%s)",
							 q->fstype, q->label[0] ? " \"" : "",
							 q->label, q->label[0] ? "\"" : "");
		}
	}
	if (!used)
		snprintf(out, len,
			 "whatever data is on it (libblkid finds no filesystem, RAID "
			 "member or partition table)");
}

static void destroys(struct checkplan_target *p)
{
	const struct cfg_layout *l = &p->st->plan.layout;
	const struct tgt *tg = &p->st->tg;
	char a[32], b[32], c[32], more[256];

	if (!plan_writes(p)) {
		snprintf(p->destroys, sizeof(p->destroys), "nothing: %s",
			 !engine_kind_moves_data(p->st->t->ioengine)
				 ? "ioengine = null sends no I/O to the device"
				 : "this plan only reads");
		return;
	}
	beyond_region(p, more, sizeof(more));
	if (!p->is_block) {
		snprintf(p->destroys, sizeof(p->destroys), "%s%s",
			 tg->exists && tg->size ? "the data in the file"
						: "nothing that exists now",
			 more);
		return;
	}
	if (!p->have_plan) {
		snprintf(p->destroys, sizeof(p->destroys), "everything on %s, if it were accepted",
			 tg->path);
		return;
	}
	char what[sizeof(p->contents) + 64];
	lost_words(&p->bi, what, sizeof(what));
	if (!l->region_offset && l->region_size >= l->capacity)
		snprintf(p->destroys, sizeof(p->destroys), "everything on %s (%s): %s%s", tg->path,
			 util_fmt_bytes(l->capacity, a, sizeof(a)), what, more);
	else
		snprintf(p->destroys, sizeof(p->destroys),
			 "the %s from %s to %s of %s (the region), and with it %s%s",
			 util_fmt_bytes(l->region_size, c, sizeof(c)),
			 util_fmt_bytes(l->region_offset, a, sizeof(a)),
			 util_fmt_bytes(l->region_offset + l->region_size, b, sizeof(b)), tg->path,
			 what, more);
}

/* ---- sizes, steps and estimates ------------------------------------------ */

/* The latest earlier rate of a step, and its time (all runs). */
static void estimate(struct db *db, const struct checkplan_target *p, uint64_t size,
		     struct checkplan_step *s)
{
	const struct db_rate_key k = { .target_id = p->target_id,
				       .size_bytes = size,
				       .workload = s->what,
				       .block_size = s->block_size,
				       .fill = s->is_fill };
	s->mibps = -1;
	s->seconds = -1;
	if (!db || !p->target_id || db_rate_latest(db, &k, &s->mibps, &s->rate_cycle)) {
		s->mibps = -1;
		return;
	}
	double one = (double)s->bytes / (s->mibps * 1048576.0);
	if (s->cap > 0 && one > s->cap) {
		/* cut by duration: it writes what the rate gives in that time */
		one = s->cap;
		s->written = (uint64_t)((double)s->written * s->cap * s->mibps * 1048576.0 /
					(double)s->bytes);
	}
	s->seconds = one * s->runs;
}

static void add_step(struct checkplan_size *z, struct checkplan_step s)
{
	if (z->nsteps < CHECKPLAN_MAX_STEPS)
		z->step[z->nsteps++] = s;
}

static void size_steps(const struct checkplan_target *p, int k, struct checkplan_size *z)
{
	const struct plan *pl = &p->st->plan;
	const struct cfg_target *t = p->st->t;
	uint64_t size = pl->layout.sizes[k];
	int runs = t->steady_state == STEADY_SNIA ? (int)t->max_rounds : (int)t->repeat;
	const struct checkplan_step fill = { .what = "fill",
					     .is_fill = 1,
					     .block_size = (uint32_t)t->fill_block_size,
					     .queue_depth = (unsigned)t->fill_queue_depth,
					     .bytes = size,
					     .written = size,
					     .runs = 1 };

	z->bytes = size;
	z->nsteps = 0;
	if (pl->precondition)
		add_step(z, fill);
	for (int i = 0; i < pl->nphases; i++) {
		const struct plan_phase *ph = &pl->phase[i];
		if (ph->is_fill) {
			add_step(z, fill);
			continue;
		}
		uint64_t amount = ph->amount[k];
		add_step(z, (struct checkplan_step){
				    .what = ph->name,
				    .block_size = ph->block_size,
				    .queue_depth = (unsigned)t->queue_depth,
				    .bytes = amount,
				    .written = amount * (100 - ph->spec.read_pct) / 100 *
					       (uint64_t)runs,
				    .runs = runs,
				    .up_to = t->steady_state == STEADY_SNIA,
				    .cap = t->duration,
			    });
	}
	if (pl->readback)
		add_step(z, (struct checkplan_step){ .what = "read-back",
						     .block_size = (uint32_t)t->fill_block_size,
						     .queue_depth = (unsigned)t->fill_queue_depth,
						     .bytes = size,
						     .runs = 1 });
}

/* Every size's steps, their estimates and the cycle's sums. */
static int build_sizes(struct db *db, struct checkplan_target *p)
{
	const struct cfg_layout *l = &p->st->plan.layout;

	p->size = calloc((size_t)l->nsizes, sizeof(*p->size));
	if (!p->size)
		return -ENOMEM;
	p->nsizes = l->nsizes;
	for (int k = 0; k < l->nsizes; k++) {
		struct checkplan_size *z = &p->size[k];
		size_steps(p, k, z);
		for (int i = 0; i < z->nsteps; i++) {
			struct checkplan_step *s = &z->step[i];
			estimate(db, p, z->bytes, s);
			p->cycle_written += s->written;
			p->cycle_read += s->bytes * (uint64_t)s->runs - s->written;
			if (s->seconds >= 0)
				p->known_seconds += s->seconds;
			else
				p->unknown_steps++;
			if (s->cap > 0)
				p->measured_bound += s->cap * s->runs;
		}
	}
	p->cycle_seconds = p->unknown_steps ? -1 : p->known_seconds;
	return 0;
}

/* ---- the campaign ------------------------------------------------------- */

static void state_words(struct checkplan_target *p, const struct cfg *c)
{
	const struct db_resume *r = &p->res;
	const char *name = p->st->t->name;
	long cycles = (long)p->st->t->cycles;
	char *o = p->state_text;
	size_t n = sizeof(p->state_text);

	switch (p->state) {
	case CP_NEW:
		snprintf(o, n, "new: no history of target %s in %s; cycle 1 begins", name,
			 c->database);
		break;
	case CP_NEW_CAMPAIGN:
		snprintf(o, n, "a new campaign begins at cycle %ld (%s%s)", r->cycle_number,
			 p->st->new_campaign ? "--new-campaign" : "campaign keys changed: ",
			 p->st->new_campaign ? "" : r->changed);
		break;
	case CP_RESUMES:
		if (r->next_size_index >= p->st->plan.layout.nsizes && p->have_plan)
			snprintf(o, n, "resumes cycle %ld at its between-cycles action",
				 r->cycle_number);
		else
			snprintf(o, n, "resumes cycle %ld at size %d of %d, iteration %ld",
				 r->cycle_number, r->next_size_index + 1, p->st->plan.layout.nsizes,
				 r->next_iteration);
		break;
	case CP_NEXT_CYCLE:
		if (cycles)
			snprintf(o, n,
				 "goes on with cycle %ld (%ld of %ld cycles of this campaign "
				 "done)",
				 r->cycle_number, r->campaign_cycles_done, cycles);
		else
			snprintf(o, n,
				 "goes on with cycle %ld (%ld cycles of this endless "
				 "campaign done)",
				 r->cycle_number, r->campaign_cycles_done);
		break;
	case CP_COMPLETE:
		snprintf(o, n,
			 "complete: %ld of %ld cycles done, nothing to run; to begin a new "
			 "campaign: wearmond --new-campaign %s -c %s",
			 r->campaign_cycles_done, cycles, name, c->path);
		break;
	case CP_UNKNOWN:
	case CP__COUNT:
	default: snprintf(o, n, "unknown: the database %s could not be read", c->database); break;
	}
}

static void campaign(struct db *db, struct checkplan_target *p, const struct cfg *c)
{
	struct sched_target *st = p->st;
	char *key = cfg_campaign_key(st->t);
	struct db_campaign_req q = { .cycles = (long)st->t->cycles,
				     .key = key,
				     .new_campaign = st->new_campaign,
				     .peek = 1 };
	int ret = db ? db_target_id(db, st->t->name, &p->target_id) : -ENOENT;

	if (ret == -ENOENT)
		p->state = CP_NEW;
	else if (ret || db_resume_point(db, p->target_id, &q, &p->res))
		p->state = CP_UNKNOWN;
	else if (p->res.campaign_new)
		p->state = CP_NEW_CAMPAIGN;
	else if (p->res.campaign_complete)
		p->state = CP_COMPLETE;
	else if (p->res.resume)
		p->state = CP_RESUMES;
	else
		p->state = CP_NEXT_CYCLE;
	if (p->state == CP_NEW)
		p->res.cycle_number = 1;
	free(key);
	state_words(p, c);
}

/* ---- building ----------------------------------------------------------- */

static int build(struct checkplan *cp, struct daemon *d, const struct cfg *c)
{
	struct db *db = NULL;
	char err[512];
	struct stat sb;

	cp->db_exists = !stat(c->database, &sb) && S_ISREG(sb.st_mode) && sb.st_size;
	if (cp->db_exists && db_open(c->database, 1, &db, err, sizeof(err)))
		log_msg(LOG_WARNING, "database %s: %s; the campaign state is unknown", c->database,
			err);
	cp->t = calloc((size_t)d->nst, sizeof(*cp->t));
	if (!cp->t) {
		db_close(db);
		return -ENOMEM;
	}
	cp->n = d->nst;
	for (int i = 0; i < d->nst; i++) {
		struct checkplan_target *p = &cp->t[i];
		p->st = &d->st[i];
		p->ready = !p->st->error[0];
		p->have_plan = p->ready && p->st->plan.layout.nsizes > 0;
		p->is_block = !stat(p->st->tg.path, &sb) && S_ISBLK(sb.st_mode);
		if (p->is_block)
			block_facts(p);
		else
			file_facts(p);
		pinned(p);
		if (cp->db_exists && !db) {
			p->state = CP_UNKNOWN;
			state_words(p, c);
		} else {
			campaign(db, p, c);
		}
		if (p->have_plan && build_sizes(db, p)) {
			db_close(db);
			return -ENOMEM;
		}
		destroys(p);
	}
	db_close(db);
	return 0;
}

void checkplan_free(struct checkplan *cp)
{
	for (int i = 0; i < cp->n; i++)
		free(cp->t[i].size);
	free(cp->t);
	cp->t = NULL;
	cp->n = 0;
}

/* ---- text --------------------------------------------------------------- */

/* "value" in quotes, or (none) for a fact the device did not give. */
#define QUOTED(s) (s)[0] ? "\"" : "", (s)[0] ? (s) : "(none)", (s)[0] ? "\"" : ""

static void print_device(FILE *f, const struct checkplan_target *p)
{
	const struct tgt *tg = &p->st->tg;
	char a[32];

	fprintf(f, "  device      %s", tg->path);
	if (p->is_block && p->bi.sysname[0] &&
	    strcmp(tg->path + (strncmp(tg->path, "/dev/", 5) ? 0 : 5), p->bi.sysname))
		fprintf(f, " (/dev/%s)", p->bi.sysname);
	fprintf(f, ": %s", p->is_block ? "block device" : "regular file");
	if (p->capacity)
		fprintf(f, ", %s", util_fmt_bytes(p->capacity, a, sizeof(a)));
	if (tg->logical_block_size)
		fprintf(f, ", logical block %u B", tg->logical_block_size);
	if (p->is_block)
		fprintf(f, ", %s",
			p->bi.rotational < 0 ? "rotational or not: unknown"
			: p->bi.rotational   ? "rotational"
					     : "not rotational");
	fputc('\n', f);
	if (p->is_block)
		fprintf(f, "  identity    model %s%s%s, serial %s%s%s, firmware %s%s%s\n",
			QUOTED(p->model), QUOTED(p->serial), QUOTED(p->firmware));
	fprintf(f, "  pinned      %s\n", p->pinned);
	fprintf(f, "  now on it   %s\n", p->contents);
	fprintf(f, "  destroys    %s\n", p->destroys);
}

static void print_phases(FILE *f, const struct checkplan_target *p)
{
	const struct cfg_target *t = p->st->t;
	const struct checkplan_size *z = &p->size[0];
	char a[32], b[32];

	for (int i = 0; i < z->nsteps; i++) {
		const struct checkplan_step *s = &z->step[i];
		fprintf(f, "                %d. %s: ", i + 1, s->what);
		if (s->is_fill || !strcmp(s->what, "read-back"))
			fprintf(f, "%s of the whole size",
				s->is_fill ? "sequential write" : "sequential read");
		else if (t->amount.is_multiple)
			fprintf(f, "%gx the size", t->amount.multiple);
		else
			fprintf(f, "%s", util_fmt_bytes(t->amount.bytes, a, sizeof(a)));
		fprintf(f, ", %s blocks, queue depth %u",
			util_fmt_bytes(s->block_size, b, sizeof(b)), s->queue_depth);
		if (s->runs > 1)
			fprintf(f, ", %s%d runs", s->up_to ? "up to " : "", s->runs);
		if (s->cap > 0)
			fprintf(f, ", each at most %s (duration)",
				fmt_seconds(s->cap, a, sizeof(a)));
		fputc('\n', f);
	}
}

/* pts = : the tests over the active range instead of sizes and phases. */
static void print_pts(FILE *f, const struct checkplan_target *p)
{
	const struct plan_pts *s = &p->st->plan.pts;
	const struct cfg_target *t = p->st->t;
	char a[32], b[320];
	int k = 1;

	fprintf(f,
		"  each cycle  the PTS tests (%s variant) over the active range, %s (%g%% of"
		" the region), in this order:\n",
		cfg_pts_variant_name(s->variant), util_fmt_bytes(s->range, a, sizeof(a)),
		s->active_pct);
	if (p->st->plan.precondition)
		fprintf(f,
			"                before each: fill, twice the range sequentially, %s blocks\n",
			util_fmt_bytes(t->fill_block_size, a, sizeof(a)));
	for (int i = 0; i < s->n; i++, k++) {
		pts_describe(s->test[i], s, b, sizeof(b));
		fprintf(f, "                %d. %s\n", k, b);
	}
	if (s->hir) {
		pts_describe(PTS_HIR, s, b, sizeof(b));
		fprintf(f, "                %d. %s\n", k, b);
	}
}

static void print_sizes(FILE *f, const struct checkplan_target *p)
{
	const struct cfg_layout *l = &p->st->plan.layout;
	char a[32], b[32], c[32];

	fprintf(f, "  region      %s at %s (%.0f%% of the device)\n",
		util_fmt_bytes(l->region_size, a, sizeof(a)),
		util_fmt_bytes(l->region_offset, b, sizeof(b)),
		l->capacity ? 100.0 * (double)l->region_size / (double)l->capacity : 0.0);
	if (p->st->plan.pts.active) {
		print_pts(f, p);
		return;
	}
	if (l->nsizes == 1)
		fprintf(f, "  each cycle  1 size, %s, in this order:\n",
			util_fmt_bytes(l->sizes[0], a, sizeof(a)));
	else
		fprintf(f, "  each cycle  %d sizes from %s to %s, each in this order:\n", l->nsizes,
			util_fmt_bytes(l->sizes[0], a, sizeof(a)),
			util_fmt_bytes(l->sizes[l->nsizes - 1], b, sizeof(b)));
	print_phases(f, p);
	for (int k = 0; k < p->nsizes; k++) {
		const struct checkplan_size *z = &p->size[k];
		fprintf(f, "    size %-3d  %s:", k + 1, util_fmt_bytes(z->bytes, a, sizeof(a)));
		for (int i = 0; i < z->nsteps; i++) {
			const struct checkplan_step *s = &z->step[i];
			fprintf(f, "%s %s %s", i ? ";" : "", s->what,
				util_fmt_bytes(s->bytes * (uint64_t)s->runs, b, sizeof(b)));
			if (s->seconds >= 0)
				fprintf(f, " ~%s (%.1f MiB/s in cycle %ld)",
					fmt_seconds(s->seconds, c, sizeof(c)), s->mibps,
					s->rate_cycle);
			else
				fprintf(f, " (time unknown)");
		}
		fputc('\n', f);
	}
}

static void print_estimate(FILE *f, const struct checkplan_target *p)
{
	const struct cfg_target *t = p->st->t;
	char a[32], b[32];

	if (p->st->plan.pts.active) {
		fprintf(f, "  writes      as fast as the drive goes in the tests' cells (pts), not"
			   " estimated\n");
		return;
	}
	fprintf(f, "  writes      %s per cycle%s (reads %s)\n",
		util_fmt_bytes(p->cycle_written, a, sizeof(a)),
		t->steady_state == STEADY_SNIA ? " at most" : "",
		util_fmt_bytes(p->cycle_read, b, sizeof(b)));
	if (p->cycle_seconds >= 0)
		fprintf(f,
			"  estimate    ~%s per cycle, from the rates this target measured before\n",
			fmt_seconds(p->cycle_seconds, a, sizeof(a)));
	else if (p->known_seconds > 0)
		fprintf(f,
			"  estimate    unknown: %d step%s never measured before; the others take ~%s\n",
			p->unknown_steps, p->unknown_steps == 1 ? " was" : "s were",
			fmt_seconds(p->known_seconds, a, sizeof(a)));
	else
		fprintf(f,
			"  estimate    unknown: no earlier measurement of this target at these sizes\n");
	if (p->cycle_seconds < 0 && p->measured_bound > 0)
		fprintf(f,
			"              the measured phases take at most %s per cycle (duration), "
			"the fills as long as the drive needs\n",
			fmt_seconds(p->measured_bound, a, sizeof(a)));
	if (t->hir)
		fprintf(f,
			"              plus the host idle recovery test (hir = yes, its purge %s%s), "
			"not estimated\n",
			cfg_hir_erases(t) ? "by secure_erase = " : "",
			cfg_hir_erases(t)                ? cfg_erase_name(t->secure_erase)
			: t->hir_purge == HIR_PURGE_NONE ? "none"
							 : "by TRIM");
}

static void print_actions(FILE *f, const struct checkplan_target *p)
{
	const struct cfg_target *t = p->st->t;
	char a[32];

	fprintf(f, "  then        ");
	for (int i = 0; i < t->between_cycles.n; i++) {
		enum cfg_action act = t->between_cycles.a[i];
		fprintf(f, "%s%s", i ? ", " : "", cfg_action_name(act));
		if (act == ACT_TRIM)
			fprintf(f, " (of the %s)",
				t->trim_scope == TRIM_DEVICE ? "device" : "region");
		else if (act == ACT_SECURE_ERASE)
			fprintf(f, " (%s)", cfg_erase_name(t->secure_erase));
		else if (act == ACT_IDLE)
			fprintf(f, " (%s)", fmt_seconds(t->idle, a, sizeof(a)));
	}
	fprintf(f, "%s between cycles", t->between_cycles.n > 1 ? ", in turn," : "");
	if (t->pause > 0)
		fprintf(f, ", then a pause of %s", fmt_seconds(t->pause, a, sizeof(a)));
	if (t->cycles)
		fprintf(f, "; %lld cycle%s per campaign\n", t->cycles, t->cycles == 1 ? "" : "s");
	else
		fprintf(f, "; cycles = 0: runs until stopped\n");
}

static void print_target(FILE *f, const struct checkplan_target *p)
{
	fprintf(f, "target %s: %s\n", p->st->t->name, p->ready ? "ready" : "REFUSED");
	if (!p->ready) {
		char *copy = strdup(p->st->error), *save = NULL;
		for (char *l = copy ? strtok_r(copy, "\n", &save) : NULL; l;
		     l = strtok_r(NULL, "\n", &save))
			fprintf(f, "  refused     %s\n", l);
		free(copy);
	}
	print_device(f, p);
	if (p->have_plan) {
		print_sizes(f, p);
		print_estimate(f, p);
	}
	print_actions(f, p);
	fprintf(f, "  campaign    %s\n", p->state_text);
}

static void print_text(FILE *f, const struct checkplan *cp, int refused)
{
	int bad = 0;
	for (int i = 0; i < cp->n; i++) {
		print_target(f, &cp->t[i]);
		bad += !cp->t[i].ready;
	}
	if (cp->holder)
		fprintf(f,
			"database %s is in use by wearmond pid %ld: the state above is as of now\n",
			cp->c->database, (long)cp->holder);
	if (!refused)
		fprintf(f, "configuration %s: OK, %d target%s ready\n", cp->c->path, cp->n,
			cp->n == 1 ? "" : "s");
	else if (bad)
		fprintf(f, "configuration %s: REFUSED: %d of %d target%s refused (exit 78)\n",
			cp->c->path, bad, cp->n, cp->n == 1 ? "" : "s");
	else
		fprintf(f, "configuration %s: REFUSED (exit 78): see the errors above\n",
			cp->c->path);
}

int checkplan_report(struct daemon *d, const struct cfg *c, pid_t holder, int refused, int json)
{
	struct checkplan cp = { .config = c->path, .c = c, .holder = holder, .refusals = refusals };

	if (build(&cp, d, c)) {
		log_msg(LOG_ERR, "out of memory building the plan");
		checkplan_free(&cp);
		return 1;
	}
	if (json)
		checkplan_print_json(stdout, &cp, refused);
	else
		print_text(stdout, &cp, refused);
	fflush(stdout);
	printed = 1;
	checkplan_free(&cp);
	return refused;
}

void checkplan_fail_json(const char *config)
{
	struct checkplan cp = { .config = config, .refusals = refusals };
	if (printed)
		return;
	checkplan_print_json(stdout, &cp, 1);
	fflush(stdout);
	printed = 1;
}
