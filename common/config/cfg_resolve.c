/* cfg_resolve: a target's region and sizes once its device's capacity and
 * logical block size are known, and the checks between keys. */
#include "config/cfg_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/workload.h"

/* ---- resolution against a device ---- */

struct resolver {
	struct errs e;
	const struct cfg_target *t;
	struct cfg_layout *out;
	uint32_t lbs;
	uint64_t grid; /* percent sizes align down to it */
};

/* Line for messages about key k: where it was set, else the [target]. */
int cfg_key_line(const struct cfg_target *t, int k)
{
	return cfg_set_has(&t->set, k) ? t->lines[k] : t->section_line;
}

/* Absolute values must already be aligned; percentages were aligned down. */
static int check_aligned(struct resolver *r, int k, const char *what, uint64_t v)
{
	char b[48];

	if (v % r->lbs == 0)
		return 0;
	cfg_err_add(&r->e, cfg_key_line(r->t, k), cfg_table[k].name,
		    "%s%s is not a multiple of "
		    "the logical block size %u",
		    what, cfg_fmt_both(v, b, sizeof(b)), r->lbs);
	return -EINVAL;
}

static void resolve_region(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	struct cfg_layout *o = r->out;
	char b1[48], b2[48], b3[48], b4[48];
	uint64_t off = util_qty_resolve(&t->region_offset, o->capacity, r->lbs);
	uint64_t size = util_qty_resolve(&t->region_size, o->capacity, r->lbs);
	int blame = off >= o->capacity || !cfg_set_has(&t->set, K_REGION_SIZE) ? K_REGION_OFFSET
									       : K_REGION_SIZE;

	o->region_offset = off;
	o->region_size = size;
	check_aligned(r, K_REGION_OFFSET, "", off);
	check_aligned(r, K_REGION_SIZE, "", size);
	if (size == 0)
		cfg_err_add(&r->e, cfg_key_line(t, K_REGION_SIZE), "region_size",
			    "the region is "
			    "empty (0 bytes of a device of %s)",
			    cfg_fmt_both(o->capacity, b1, sizeof(b1)));
	else if (off > o->capacity || size > o->capacity - off)
		cfg_err_add(&r->e, cfg_key_line(t, blame), cfg_table[blame].name,
			    "region_offset %s + "
			    "region_size %s ends at %s, past the device end at %s",
			    cfg_fmt_both(off, b1, sizeof(b1)), cfg_fmt_both(size, b2, sizeof(b2)),
			    cfg_fmt_both(off + size, b3, sizeof(b3)),
			    cfg_fmt_both(o->capacity, b4, sizeof(b4)));
}

/* A range of percentages steps in percent space, so 10%:100%:10% gives
 * exactly 10%, 20% .. 100% of the region, each aligned down. */
static uint64_t percent_range(struct resolver *r, uint64_t *v)
{
	const struct cfg_sizes *s = &r->t->sizes;
	long long a = llround(s->start.percent * 1e6), b = llround(s->end.percent * 1e6);
	long long step = llround(s->step.percent * 1e6);
	uint64_t n;

	if (step <= 0) {
		cfg_err_add(&r->e, cfg_key_line(r->t, K_SIZES), "sizes", "step is 0%%");
		return UINT64_MAX;
	}
	n = a > b ? 0 : (uint64_t)((b - a) / step) + 1;
	for (uint64_t i = 0; i < n && i < CFG_MAX_SIZES; i++) {
		struct qty q = { .percent = (double)(a + (long long)i * step) / 1e6,
				 .is_percent = 1 };
		v[i] = util_qty_resolve(&q, r->out->region_size, r->grid);
	}
	return n;
}

/* Ranges with a byte count anywhere step in bytes. */
static uint64_t byte_range(struct resolver *r, uint64_t *v)
{
	const struct cfg_sizes *s = &r->t->sizes;
	uint64_t region = r->out->region_size;
	uint64_t a = util_qty_resolve(&s->start, region, r->grid);
	uint64_t b = util_qty_resolve(&s->end, region, r->grid);
	uint64_t step = util_qty_resolve(&s->step, region, r->lbs);
	uint64_t n;

	if (step == 0 || check_aligned(r, K_SIZES, "step ", step) < 0) {
		if (step == 0)
			cfg_err_add(&r->e, cfg_key_line(r->t, K_SIZES), "sizes",
				    "step is 0 bytes "
				    "in a region of %llu bytes",
				    (unsigned long long)region);
		return UINT64_MAX;
	}
	n = a > b ? 0 : (b - a) / step + 1;
	for (uint64_t i = 0; i < n && i < CFG_MAX_SIZES; i++)
		v[i] = a + i * step;
	return n;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static uint64_t lcm_add(uint64_t grid, uint64_t bs)
{
	if (!bs || grid % bs == 0)
		return grid;
	return grid / gcd(grid, bs) * bs;
}

/* Percent sizes round down to a grid every phase can run on: the logical
 * block size and every block size of the fill and the measured phases
 * (the engine moves whole blocks over a span). Bad block sizes are
 * reported by their own checks; they are left out here. */
static uint64_t size_grid(const struct cfg_target *t, uint32_t lbs)
{
	int phases[CFG_MAX_PHASES], n;
	char msg[MSG_MAX];
	struct workload_spec spec;
	uint64_t grid = lbs;

	n = cfg_measure_phases(t, phases, msg, sizeof(msg));
	int filled = t->fill || t->verify != VERIFY_NONE;
	for (int p = 0; p < n; p++) {
		if (phases[p] == CFG_PHASE_FILL) {
			filled = 1;
			continue;
		}
		if (cfg_workload_spec(t, (enum cfg_workload)phases[p], &spec, msg, sizeof(msg)))
			continue;
		/* with an alignment, sizes start on its grid or the sector's,
		 * inside a span of whole largest blocks */
		uint32_t max = workload_max_bs(&spec);
		for (unsigned i = 0; i < spec.nbs; i++) {
			uint32_t bs = spec.align ? max : spec.bs[i].size;
			grid = lcm_add(grid, bs % 512 ? 0 : bs);
		}
	}
	if (filled && t->fill_block_size > 0 && t->fill_block_size % 512 == 0)
		grid = lcm_add(grid, (uint64_t)t->fill_block_size);
	return grid;
}

/* Expand sizes into out->sizes. Returns 0 or -EINVAL (error added). */
static int expand_sizes(struct resolver *r)
{
	const struct cfg_sizes *s = &r->t->sizes;
	struct cfg_layout *o = r->out;
	int line = cfg_key_line(r->t, K_SIZES);
	uint64_t n;

	if (!s->is_range) {
		for (int i = 0; i < s->n; i++)
			o->sizes[i] = util_qty_resolve(&s->list[i], o->region_size, r->grid);
		o->nsizes = s->n;
		return 0;
	}
	if (s->start.is_percent && s->end.is_percent && s->step.is_percent)
		n = percent_range(r, o->sizes);
	else
		n = byte_range(r, o->sizes);
	if (n == UINT64_MAX)
		return -EINVAL;
	if (n == 0) {
		cfg_err_add(&r->e, line, "sizes", "the range is empty: start is larger than end");
		return -EINVAL;
	}
	if (n > CFG_MAX_SIZES) {
		cfg_err_add(&r->e, line, "sizes", "the range gives %llu sizes, more than %d",
			    (unsigned long long)n, CFG_MAX_SIZES);
		return -EINVAL;
	}
	o->nsizes = (int)n;
	return 0;
}

static void check_sizes(struct resolver *r)
{
	const struct cfg_layout *o = r->out;
	int line = cfg_key_line(r->t, K_SIZES);
	char b1[48], b2[48];

	for (int i = 0; i < o->nsizes; i++) {
		uint64_t v = o->sizes[i];

		if (v == 0)
			cfg_err_add(&r->e, line, "sizes", "size %d is 0 bytes (the region has %s)",
				    i + 1, cfg_fmt_both(o->region_size, b1, sizeof(b1)));
		else if (v > o->region_size)
			cfg_err_add(&r->e, line, "sizes", "size %s is larger than the region of %s",
				    cfg_fmt_both(v, b1, sizeof(b1)),
				    cfg_fmt_both(o->region_size, b2, sizeof(b2)));
		else if (check_aligned(r, K_SIZES, "size ", v) < 0)
			continue;
		else if (i > 0 && v <= o->sizes[i - 1])
			cfg_err_add(&r->e, line, "sizes",
				    "sizes must be strictly increasing: %s "
				    "follows %s",
				    cfg_fmt_both(v, b1, sizeof(b1)),
				    cfg_fmt_both(o->sizes[i - 1], b2, sizeof(b2)));
	}
}

/* Block sizes fit the device and the smallest size. */
static void check_block(struct resolver *r, int k, uint64_t bs)
{
	char b1[48], b2[48];

	if (check_aligned(r, k, "", bs) < 0 || r->out->nsizes == 0)
		return;
	if (bs > r->out->sizes[0])
		cfg_err_add(&r->e, cfg_key_line(r->t, k), cfg_table[k].name,
			    "%s is larger than the "
			    "smallest size %s",
			    cfg_fmt_both(bs, b1, sizeof(b1)),
			    cfg_fmt_both(r->out->sizes[0], b2, sizeof(b2)));
}

/* The critical threshold lies under the warning one (0 turns either off). */
static void check_alerts(struct resolver *r)
{
	const struct cfg_target *t = r->t;

	if (t->alert_critical > 0 && t->alert_below <= 0)
		cfg_err_add(&r->e, cfg_key_line(t, K_ALERT_CRITICAL), "alert_critical",
			    "%g%% while alert_below = 0 turns crash alerts off; set "
			    "alert_critical = 0 too, or alert_below at or above %g%%",
			    t->alert_critical, t->alert_critical);
	else if (t->alert_critical > 0 && t->alert_critical > t->alert_below)
		cfg_err_add(&r->e, cfg_key_line(t, K_ALERT_CRITICAL), "alert_critical",
			    "%g%% is above "
			    "alert_below %g%%; the critical threshold must be the lower one",
			    t->alert_critical, t->alert_below);
}

/* Actions and filesystem mode: keys that only make sense together. */
static void check_actions(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	int fs = t->filesystem != FS_NONE;

	if (cfg_has_action(t, ACT_SECURE_ERASE) && t->secure_erase == ERASE_NONE)
		cfg_err_add(&r->e, cfg_key_line(t, K_SECURE_ERASE), "secure_erase",
			    "between_cycles = "
			    "secure-erase needs a method: ata, ata-enhanced, nvme-format, "
			    "nvme-crypto-format, nvme-sanitize-block, nvme-sanitize-crypto, "
			    "scsi-sanitize-block, scsi-sanitize-crypto, scsi-format, "
			    "blksecdiscard, discard-all or command");
	if (t->secure_erase == ERASE_COMMAND && !t->secure_erase_command[0])
		cfg_err_add(&r->e, cfg_key_line(t, K_SECURE_ERASE_COMMAND), "secure_erase_command",
			    "secure_erase = command needs the program to run");
	if (cfg_has_action(t, ACT_FITRIM) && !fs)
		cfg_err_add(
			&r->e, cfg_key_line(t, K_BETWEEN_CYCLES), "between_cycles",
			"fitrim needs "
			"a filesystem: set filesystem = ext4 or xfs (or use trim on the raw device)");
	if (cfg_has_action(t, ACT_TRIM) && fs)
		cfg_err_add(&r->e, cfg_key_line(t, K_BETWEEN_CYCLES), "between_cycles",
			    "trim would "
			    "discard under the mounted filesystem; use fitrim in filesystem mode");
	if (t->format_each_size && !fs)
		cfg_err_add(&r->e, cfg_key_line(t, K_FORMAT_EACH_SIZE), "format_each_size",
			    "needs "
			    "filesystem = ext4 or xfs");
	if (fs && r->out->region_offset)
		cfg_err_add(&r->e, cfg_key_line(t, K_REGION_OFFSET), "region_offset",
			    "must be 0 in "
			    "filesystem mode: the sizes are of the test file");
	if (fs && !cfg_workload_is_write(t->workload) && !t->fill)
		cfg_err_add(&r->e, cfg_key_line(t, K_FILL), "fill",
			    "a read workload on a new file "
			    "needs fill = yes in filesystem mode");
}

static const struct workload_preset *named_workload(enum cfg_workload w)
{
	unsigned n;
	const struct workload_preset *v = workload_presets(&n);

	return (unsigned)w < n ? &v[w] : &v[0];
}

/* read_percent and random_percent shape the mixes and the presets only. */
static int workload_mixes(enum cfg_workload w)
{
	return w >= WL_RANDRW;
}

/* The measured workload: its block sizes fit the device and the smallest
 * size, its stride fits the smallest size. read_percent, random_percent and
 * stride are ignored by workloads they do not shape (one example file can
 * set them all). */
static void check_workload(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	struct workload_spec spec;

	cfg_workload_spec(t, t->workload, &spec, NULL, 0);
	for (unsigned i = 0; i < t->block_sizes.n; i++)
		check_block(r, K_BLOCK_SIZES, t->block_sizes.bs[i].size);
	if (t->block_align)
		check_aligned(r, K_BLOCK_ALIGN, "", t->block_align);
	if (r->out->nsizes == 0 || spec.order != WO_STRIDE)
		return;
	uint64_t blocks = r->out->sizes[0] / workload_max_bs(&spec);
	if ((uint64_t)t->stride > blocks)
		cfg_err_add(&r->e, cfg_key_line(t, K_STRIDE), "stride",
			    "%lld is larger than the "
			    "%llu blocks of the smallest size",
			    t->stride, (unsigned long long)blocks);
}

/* Every phase of the measure list against every size: the workload's own
 * reason (workload_check) for refusing a span, or a size off its block grid. */
static void check_phases(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	int phases[CFG_MAX_PHASES];
	char msg[MSG_MAX], b1[48];
	struct workload_spec spec;
	int n = cfg_measure_phases(t, phases, msg, sizeof(msg));
	int filled = t->fill || t->verify != VERIFY_NONE;

	for (int p = 0; p < n; p++)
		filled |= phases[p] == CFG_PHASE_FILL;
	for (int i = 0; filled && t->fill_block_size > 0 && i < r->out->nsizes; i++) {
		if (r->out->sizes[i] % (uint64_t)t->fill_block_size == 0)
			continue;
		cfg_err_add(&r->e, cfg_key_line(t, K_FILL_BLOCK_SIZE), "fill_block_size",
			    "size %d "
			    "(%s) is not a multiple of the fill block size %s: the fill cannot run",
			    i + 1, cfg_fmt_both(r->out->sizes[i], b1, sizeof(b1)),
			    cfg_fmt_both((uint64_t)t->fill_block_size, msg, sizeof(msg)));
		break;
	}
	for (int p = 0; p < n; p++) {
		if (phases[p] < 0 ||
		    cfg_workload_spec(t, (enum cfg_workload)phases[p], &spec, msg, sizeof(msg)) < 0)
			continue;
		spec.sector = r->lbs; /* as plan_build gives it */
		const char *name = cfg_workload_name((enum cfg_workload)phases[p]);
		for (int i = 0; i < r->out->nsizes; i++) {
			uint64_t size = r->out->sizes[i];
			int bad = workload_check(&spec, size, msg, sizeof(msg)) != 0;
			if (!bad && size % workload_max_bs(&spec)) {
				snprintf(msg, sizeof(msg),
					 "the size is not a multiple of its "
					 "largest block size %u",
					 workload_max_bs(&spec));
				bad = 1;
			}
			if (!bad)
				continue;
			cfg_err_add(&r->e, cfg_key_line(t, t->measure.n ? K_MEASURE : K_WORKLOAD),
				    t->measure.n ? "measure" : "workload",
				    "phase %s cannot run "
				    "at size %d (%s): %s",
				    name, i + 1, cfg_fmt_both(size, b1, sizeof(b1)), msg);
			break;
		}
	}
}

/* Keys of the method that exclude each other. */
static void check_method(struct resolver *r)
{
	const struct cfg_target *t = r->t;

	if (t->steady_state == STEADY_SNIA && t->repeat > 1)
		cfg_err_add(&r->e, cfg_key_line(t, K_REPEAT), "repeat",
			    "%lld with steady_state = "
			    "snia: rounds already repeat each phase; use one or the other",
			    t->repeat);
	if (t->hir && t->filesystem != FS_NONE)
		cfg_err_add(&r->e, cfg_key_line(t, K_HIR), "hir",
			    "yes with filesystem = %s: the protocol writes the raw region; use "
			    "one or the other",
			    cfg_filesystem_name(t->filesystem));
	if (t->hir && t->hir_purge == HIR_PURGE_SECURE_ERASE && t->secure_erase == ERASE_NONE)
		cfg_err_add(&r->e, cfg_key_line(t, K_HIR_PURGE), "hir_purge",
			    "secure-erase needs a method: set secure_erase (or use hir_purge = "
			    "auto, which trims without one)");
	if (t->hir && r->out->region_size && r->out->region_size < HIR_BLOCK)
		cfg_err_add(&r->e, cfg_key_line(t, K_HIR), "hir",
			    "the region is smaller than one %u-byte block of its bursts",
			    HIR_BLOCK);
	if (t->dedupe_percent > 0 && t->verify != VERIFY_NONE)
		cfg_err_add(&r->e, cfg_key_line(t, K_DEDUPE_PERCENT), "dedupe_percent",
			    "%lld%% "
			    "with verify: a repeated block would carry another offset in its "
			    "header; use one or the other",
			    t->dedupe_percent);
}

double cfg_pts_active_pct(const struct cfg_target *t)
{
	if (t->pts_active_range > 0)
		return t->pts_active_range;
	return t->pts_variant == PTS_CLIENT ? 75.0 : 100.0;
}

uint64_t cfg_pts_range(const struct cfg_target *t, uint64_t region_size)
{
	uint64_t b = (uint64_t)((double)region_size * cfg_pts_active_pct(t) / 100.0);
	return b / CFG_PTS_GRID * CFG_PTS_GRID;
}

/* The PTS tests: a raw region that holds their largest block and that the
 * fill can cover. */
static void check_pts(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	char b1[48], b2[48];

	if (!t->pts.n)
		return;
	if (t->filesystem != FS_NONE)
		cfg_err_add(&r->e, cfg_key_line(t, K_PTS), "pts",
			    "with filesystem = %s: the tests address the raw region; use one or "
			    "the other",
			    cfg_filesystem_name(t->filesystem));
	uint64_t range = cfg_pts_range(t, r->out->region_size);
	int k = cfg_set_has(&t->set, K_PTS_ACTIVE_RANGE) ? K_PTS_ACTIVE_RANGE : K_PTS;
	if (r->out->region_size && !range)
		cfg_err_add(&r->e, cfg_key_line(t, k), cfg_table[k].name,
			    "the active range (%g%% of the region of %s) holds no %s block of "
			    "the tests",
			    cfg_pts_active_pct(t),
			    cfg_fmt_both(r->out->region_size, b1, sizeof(b1)),
			    cfg_fmt_both(CFG_PTS_GRID, b2, sizeof(b2)));
	else if (range && t->fill && CFG_PTS_GRID % t->fill_block_size)
		cfg_err_add(&r->e, cfg_key_line(t, K_FILL_BLOCK_SIZE), "fill_block_size",
			    "%s does not divide the %s grid of the PTS active range: the fill "
			    "cannot cover it",
			    cfg_fmt_both(t->fill_block_size, b1, sizeof(b1)),
			    cfg_fmt_both(CFG_PTS_GRID, b2, sizeof(b2)));
}

/* The rated endurance: one rating, DWPD with its years, and a TBW that is
 * not a unit left out (600 is bytes: less than one write of the drive). */
static void check_rating(struct resolver *r)
{
	const struct cfg_target *t = r->t;
	char b1[48], b2[48];

	if (t->rated_tbw && t->rated_dwpd > 0)
		cfg_err_add(&r->e, cfg_key_line(t, K_RATED_DWPD), "rated_dwpd",
			    "%g with rated_tbw: set one rating, not both", t->rated_dwpd);
	if (t->rated_dwpd > 0 && !(t->warranty_years > 0))
		cfg_err_add(&r->e, cfg_key_line(t, K_RATED_DWPD), "rated_dwpd",
			    "%g without warranty_years: the rating in bytes is DWPD x capacity x "
			    "365 x warranty_years",
			    t->rated_dwpd);
	if (t->rated_tbw && t->rated_tbw < r->out->capacity)
		cfg_err_add(&r->e, cfg_key_line(t, K_RATED_TBW), "rated_tbw",
			    "%s is less than one write of the drive (%s): give the unit, e.g. "
			    "600TB",
			    cfg_fmt_both(t->rated_tbw, b1, sizeof(b1)),
			    cfg_fmt_both(r->out->capacity, b2, sizeof(b2)));
}

int cfg_resolve(const struct cfg *c, const struct cfg_target *t, uint64_t capacity, uint32_t lbs,
		struct cfg_layout *out, char *err, size_t errlen)
{
	struct resolver r = { .e = { .file = c->path }, .t = t, .out = out, .lbs = lbs };

	memset(out, 0, sizeof(*out));
	out->capacity = capacity;
	out->logical_block_size = lbs;
	if (lbs < 512 || (lbs & (lbs - 1)) || capacity == 0) {
		cfg_err_add(&r.e, t->section_line, "device",
			    "device reports capacity %llu and "
			    "logical block size %u; need a capacity and a power of two >= 512",
			    (unsigned long long)capacity, lbs);
		return cfg_errs_finish(&r.e, err, errlen);
	}
	resolve_region(&r);
	r.grid = size_grid(t, lbs);
	if (!r.e.n && expand_sizes(&r) == 0)
		check_sizes(&r);
	check_block(&r, K_BLOCK_SIZE, t->block_size);
	if (t->fill)
		check_block(&r, K_FILL_BLOCK_SIZE, t->fill_block_size);
	check_alerts(&r);
	check_actions(&r);
	check_workload(&r);
	if (!r.e.n)
		check_phases(&r);
	check_method(&r);
	check_pts(&r);
	check_rating(&r);
	return cfg_errs_finish(&r.e, err, errlen);
}

int cfg_workload_spec(const struct cfg_target *t, enum cfg_workload w, struct workload_spec *out,
		      char *msg, size_t len)
{
	const struct workload_preset *n = named_workload(w);

	(void)msg, (void)len;
	memset(out, 0, sizeof(*out));
	out->order = n->order;
	out->read_pct = n->read_pct;
	out->random_pct = n->random_pct;
	out->stride = (uint64_t)t->stride;
	if (workload_mixes(w) && cfg_set_has(&t->set, K_READ_PERCENT))
		out->read_pct = (unsigned)t->read_percent;
	if (workload_mixes(w) && cfg_set_has(&t->set, K_RANDOM_PERCENT))
		out->random_pct = (unsigned)t->random_percent;
	out->align = cfg_set_has(&t->set, K_BLOCK_ALIGN) ? (uint32_t)t->block_align : n->align;
	out->access = cfg_set_has(&t->set, K_ACCESS) ? t->access : n->access;
	if (t->block_sizes.n) {
		memcpy(out->bs, t->block_sizes.bs, sizeof(out->bs));
		out->nbs = t->block_sizes.n;
	} else if (n->nbs) {
		memcpy(out->bs, n->bs, sizeof(out->bs));
		out->nbs = n->nbs;
	} else {
		out->nbs = 1;
		out->bs[0].size = (uint32_t)t->block_size;
		out->bs[0].weight = 1;
	}
	return 0;
}

int cfg_workload_is_write(enum cfg_workload w)
{
	return named_workload(w)->read_pct == 0;
}

int cfg_workload_is_random(enum cfg_workload w)
{
	const struct workload_preset *n = named_workload(w);

	return n->order == WO_RANDOM && n->random_pct == 100;
}
