/* ftl: page-mapped FTL with greedy GC, compressed-page packing and a
 * busy-until clock per flash channel. */
#include "ftl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define MAX_CHANNELS 64u
#define MAX_CAPACITY (64ull << 30)

enum blk_state { BLK_FREE, BLK_OPEN, BLK_FULL };

/* Host data and GC moves fill separate blocks: moved (cold) data then stays
 * together, which is what keeps greedy GC from re-copying it forever. */
enum stream { STREAM_HOST, STREAM_GC, STREAM__COUNT };

struct blk {
	uint32_t wp;    /* units programmed since the last erase */
	uint32_t valid; /* units still holding current data */
	uint32_t erases;
	uint8_t state;
};

struct chan {
	uint64_t busy;  /* virtual time the channel goes idle */
	uint32_t *free; /* erased blocks (unordered) */
	uint32_t nfree;
	uint32_t open[STREAM__COUNT]; /* block being filled, or NONE */
	uint64_t bg_until;            /* busy as background GC left it: while
					 busy is still this, no host work came
					 since and GC goes on without a new wait */
};

struct ftl {
	struct ftl_config cfg;
	uint32_t upp;     /* units per page */
	uint32_t upb;     /* units per block */
	uint64_t npages;  /* host pages */
	uint32_t nblocks; /* a multiple of channels; block b is on b % channels */
	uint32_t *map;    /* lpn -> first unit address, NONE when unmapped */
	uint8_t *len;     /* lpn -> units it occupies */
	uint32_t *rmap;   /* unit address -> lpn starting there, or NONE */
	struct blk *blk;
	struct chan *chan;
	uint64_t cache_ns; /* how far ahead of flash writes are acknowledged */
	uint64_t mapped;   /* host pages mapped */
	uint64_t valid_units;
	uint64_t wear;       /* erase counts summed over the blocks */
	struct ftl_stats st; /* counters only; state fields filled on demand */
};

static uint32_t blocks_needed(const struct ftl_config *c)
{
	double phys = (double)c->capacity * (1.0 + c->spare_pct / 100.0);
	uint64_t n = (uint64_t)((phys + c->erase_block - 1) / c->erase_block);

	n = (n + c->channels - 1) / c->channels * c->channels;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int ftl_config_check(const struct ftl_config *c, const char **why)
{
	uint64_t data_blocks;

	*why = NULL;
	if (c->page < FTL_UNIT || c->page % FTL_UNIT || c->page / FTL_UNIT > 255)
		*why = "page must be a multiple of 512 bytes, at most 127.5 KiB";
	else if (c->erase_block < c->page || c->erase_block % c->page)
		*why = "erase_block must be a multiple of page";
	else if (c->channels < 1 || c->channels > MAX_CHANNELS)
		*why = "channels must be 1..64";
	else if (c->capacity == 0 || c->capacity % c->page || c->capacity > MAX_CAPACITY)
		*why = "capacity must be a multiple of page, at most 64 GiB";
	else if (c->spare_pct < 0 || c->spare_pct > 400)
		*why = "spare must be 0..400 percent";
	else if (c->gc_free < 1)
		*why = "gc_free must be at least 1";
	if (*why)
		return -EINVAL;
	/* Each channel keeps a host block, a GC block and gc_free erased
	 * blocks out of service; without that much spare GC can deadlock. */
	data_blocks = (c->capacity + c->erase_block - 1) / c->erase_block;
	if (blocks_needed(c) < data_blocks + (uint64_t)c->channels * (c->gc_free + 2)) {
		*why = "spare area too small: need channels*(gc_free+2) spare blocks";
		return -EINVAL;
	}
	return 0;
}

static void reset_layout(struct ftl *f)
{
	uint32_t c, b;

	for (c = 0; c < f->cfg.channels; c++) {
		f->chan[c].nfree = 0;
		f->chan[c].open[STREAM_HOST] = NONE;
		f->chan[c].open[STREAM_GC] = NONE;
		f->chan[c].bg_until = UINT64_MAX; /* none yet: wait bg_idle first */
	}
	for (b = 0; b < f->nblocks; b++) {
		struct chan *ch = &f->chan[b % f->cfg.channels];

		f->blk[b].wp = 0;
		f->blk[b].valid = 0;
		f->blk[b].state = BLK_FREE;
		ch->free[ch->nfree++] = b;
	}
	memset(f->map, 0xff, f->npages * sizeof(*f->map));
	memset(f->len, 0, f->npages);
	memset(f->rmap, 0xff, (size_t)f->nblocks * f->upb * sizeof(*f->rmap));
	f->mapped = 0;
	f->valid_units = 0;
}

static int alloc_arrays(struct ftl *f)
{
	uint32_t per_chan = f->nblocks / f->cfg.channels;
	uint32_t c;

	f->map = malloc(f->npages * sizeof(*f->map));
	f->len = malloc(f->npages);
	f->rmap = malloc((size_t)f->nblocks * f->upb * sizeof(*f->rmap));
	f->blk = calloc(f->nblocks, sizeof(*f->blk));
	f->chan = calloc(f->cfg.channels, sizeof(*f->chan));
	if (!f->map || !f->len || !f->rmap || !f->blk || !f->chan)
		return -ENOMEM;
	for (c = 0; c < f->cfg.channels; c++) {
		f->chan[c].free = malloc(per_chan * sizeof(uint32_t));
		if (!f->chan[c].free)
			return -ENOMEM;
	}
	return 0;
}

int ftl_create(const struct ftl_config *cfg, struct ftl **out)
{
	const char *why;
	struct ftl *f;
	int r = ftl_config_check(cfg, &why);

	*out = NULL;
	if (r < 0)
		return r;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->cfg = *cfg;
	f->upp = cfg->page / FTL_UNIT;
	f->upb = cfg->erase_block / FTL_UNIT;
	f->npages = cfg->capacity / cfg->page;
	f->nblocks = blocks_needed(cfg);
	if ((uint64_t)f->nblocks * f->upb >= NONE) {
		free(f);
		return -EINVAL;
	}
	f->cache_ns = cfg->t_prog == 0 ? 0
				       : (uint64_t)((double)cfg->cache * (double)cfg->t_prog /
						    ((double)cfg->page * cfg->channels));
	r = alloc_arrays(f);
	if (r < 0) {
		ftl_destroy(f);
		return r;
	}
	reset_layout(f);
	*out = f;
	return 0;
}

void ftl_destroy(struct ftl *f)
{
	uint32_t c;

	if (!f)
		return;
	for (c = 0; f->chan && c < f->cfg.channels; c++)
		free(f->chan[c].free);
	free(f->chan);
	free(f->blk);
	free(f->rmap);
	free(f->len);
	free(f->map);
	free(f);
}

uint32_t ftl_units_per_page(const struct ftl *f)
{
	return f->upp;
}

/* Queue cost ns of work on channel c no earlier than now; returns its end. */
static uint64_t chan_work(struct ftl *f, uint32_t c, uint64_t now, uint64_t cost)
{
	struct chan *ch = &f->chan[c];

	ch->busy = (ch->busy > now ? ch->busy : now) + cost;
	f->st.flash_busy_ns += cost;
	return ch->busy;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Programming time is proportional to the units written: compressed data
 * is packed, so a page at a quarter of its size costs a quarter program. */
static uint64_t prog_cost(const struct ftl *f, uint32_t units)
{
	return f->cfg.t_prog * units / f->upp;
}

static uint32_t chan_of(const struct ftl *f, uint32_t block)
{
	return block % f->cfg.channels;
}

/* One erase of block b counted, wear_accel times in its erase count; the
 * host bytes written so far are the end of life the first time the mean
 * count reaches the endurance. */
static void wear_block(struct ftl *f, uint32_t b)
{
	uint32_t n = f->cfg.wear_accel ? f->cfg.wear_accel : 1;

	f->blk[b].erases += n;
	f->wear += n;
	f->st.erases++;
	if (f->cfg.endurance && !f->st.life_end_host_bytes &&
	    f->wear >= (uint64_t)f->cfg.endurance * f->nblocks)
		f->st.life_end_host_bytes = f->st.host_bytes_written ? f->st.host_bytes_written : 1;
}

/* Erase block b and return it to its channel's free list; returns the end. */
static uint64_t erase_block(struct ftl *f, uint32_t b, uint64_t now)
{
	struct chan *ch = &f->chan[chan_of(f, b)];

	f->blk[b].wp = 0;
	f->blk[b].valid = 0;
	wear_block(f, b);
	f->blk[b].state = BLK_FREE;
	ch->free[ch->nfree++] = b;
	return chan_work(f, chan_of(f, b), now, f->cfg.t_erase);
}

/* Close a block that can take no more data; one already empty (all its data
 * overwritten or trimmed) is erased straight away. */
static uint64_t close_block(struct ftl *f, uint32_t b, uint64_t now)
{
	f->blk[b].state = BLK_FULL;
	return f->blk[b].valid == 0 ? erase_block(f, b, now) : now;
}

/* Take the free block with the fewest erases (static wear levelling). */
static uint32_t take_free(struct ftl *f, uint32_t c)
{
	struct chan *ch = &f->chan[c];
	uint32_t i, best = 0, b;

	for (i = 1; i < ch->nfree; i++)
		if (f->blk[ch->free[i]].erases < f->blk[ch->free[best]].erases)
			best = i;
	b = ch->free[best];
	ch->free[best] = ch->free[--ch->nfree];
	f->blk[b].state = BLK_OPEN;
	return b;
}

static void unmap(struct ftl *f, uint64_t lpn)
{
	uint32_t addr = f->map[lpn];

	f->rmap[addr] = NONE;
	f->blk[addr / f->upb].valid -= f->len[lpn];
	f->valid_units -= f->len[lpn];
	f->map[lpn] = NONE;
	f->len[lpn] = 0;
	f->mapped--;
}

static void map(struct ftl *f, uint64_t lpn, uint32_t addr, uint32_t units)
{
	f->map[lpn] = addr;
	f->len[lpn] = (uint8_t)units;
	f->rmap[addr] = (uint32_t)lpn;
	f->blk[addr / f->upb].valid += units;
	f->valid_units += units;
	f->mapped++;
}

/* Forget the current copy of lpn; returns the end of any erase it caused. */
static uint64_t invalidate(struct ftl *f, uint64_t lpn, uint64_t now)
{
	uint32_t b;

	if (f->map[lpn] == NONE)
		return now;
	b = f->map[lpn] / f->upb;
	unmap(f, lpn);
	if (f->blk[b].state == BLK_FULL && f->blk[b].valid == 0)
		return erase_block(f, b, now);
	return now;
}

static void gc(struct ftl *f, uint32_t c, uint64_t now);

/* Room for units in stream s on channel c; host writes run GC first when
 * free blocks are low and never take the last one (GC needs it). Returns 0
 * and the unit address, or -ENOSPC. */
static int alloc_units(struct ftl *f, uint32_t c, enum stream s, uint32_t units, uint64_t now,
		       uint32_t *addr)
{
	struct chan *ch = &f->chan[c];
	uint32_t b = ch->open[s];

	if (b != NONE && f->blk[b].wp + units > f->upb) {
		ch->open[s] = NONE;
		close_block(f, b, now);
		b = NONE;
	}
	if (b == NONE) {
		if (s == STREAM_HOST && ch->nfree <= f->cfg.gc_free)
			gc(f, c, now);
		if (ch->nfree == 0 || (s == STREAM_HOST && ch->nfree < 2))
			return -ENOSPC;
		b = ch->open[s] = take_free(f, c);
	}
	*addr = b * f->upb + f->blk[b].wp;
	f->blk[b].wp += units;
	return 0;
}

/* Greedy victim: the full block on channel c with the least valid data. */
static uint32_t pick_victim(const struct ftl *f, uint32_t c)
{
	uint32_t b, best = NONE, best_valid = f->upb;

	for (b = c; b < f->nblocks; b += f->cfg.channels) {
		if (f->blk[b].state == BLK_FULL && f->blk[b].valid < best_valid) {
			best = b;
			best_valid = f->blk[b].valid;
		}
	}
	return best;
}

/* Copy the valid pages of victim v to the GC stream; each costs a read and
 * a program on the channel. Returns 0 or -ENOSPC (v partly moved). */
static int move_valid(struct ftl *f, uint32_t v, uint64_t now)
{
	uint32_t c = chan_of(f, v), base = v * f->upb, u, to;

	for (u = 0; u < f->blk[v].wp && f->blk[v].valid > 0; u++) {
		uint32_t lpn = f->rmap[base + u], units;

		if (lpn == NONE)
			continue;
		units = f->len[lpn];
		if (alloc_units(f, c, STREAM_GC, units, now, &to) < 0)
			return -ENOSPC;
		unmap(f, lpn);
		map(f, lpn, to, units);
		chan_work(f, c, now, f->cfg.t_read + prog_cost(f, units));
		f->st.flash_bytes_read += f->cfg.page;
		f->st.flash_bytes_written += (uint64_t)units * FTL_UNIT;
		f->st.gc_bytes_moved += (uint64_t)units * FTL_UNIT;
		u += units - 1;
	}
	return 0;
}

/* Reclaim blocks on channel c until it has more than gc_free free blocks
 * or nothing is left to reclaim. The work lands on the channel's clock, so
 * host writes that follow wait for it. */
static void gc(struct ftl *f, uint32_t c, uint64_t now)
{
	while (f->chan[c].nfree <= f->cfg.gc_free) {
		uint32_t v = pick_victim(f, c);

		if (v == NONE || move_valid(f, v, now) < 0)
			return;
		erase_block(f, v, now);
	}
}

/* Channel time to reclaim victim v: read and program its valid data, erase. */
static uint64_t reclaim_cost(const struct ftl *f, uint32_t v)
{
	uint64_t pages = (f->blk[v].valid + f->upp - 1) / f->upp;

	return pages * f->cfg.t_read + prog_cost(f, f->blk[v].valid) + f->cfg.t_erase;
}

/* Background GC of channel c up to now (ftl_idle). A victim is reclaimed
 * only when that gains a block and the work would have ended by now. */
static void idle_channel(struct ftl *f, uint32_t c, uint64_t now)
{
	struct chan *ch = &f->chan[c];
	uint64_t start = ch->busy == ch->bg_until ? ch->busy : ch->busy + f->cfg.bg_idle;

	while (ch->nfree < f->cfg.bg_free && start <= now) {
		uint32_t v = pick_victim(f, c);
		uint64_t moved = f->st.gc_bytes_moved;

		if (v == NONE || f->blk[v].valid + f->upp > f->upb ||
		    now - start < reclaim_cost(f, v))
			break;
		ch->busy = start > ch->busy ? start : ch->busy;
		if (move_valid(f, v, ch->busy) < 0)
			break;
		erase_block(f, v, ch->busy);
		f->st.bg_gc_bytes_moved += f->st.gc_bytes_moved - moved;
		f->st.bg_gc_erases++;
		ch->bg_until = ch->busy;
		start = ch->busy;
	}
}

void ftl_idle(struct ftl *f, uint64_t now)
{
	for (uint32_t c = 0; f->cfg.bg_free && c < f->cfg.channels; c++)
		idle_channel(f, c, now);
}

/* Channel that can start soonest among those not yet tried (bit i of tried:
 * channel i). NONE if all were tried. */
static uint32_t pick_channel(const struct ftl *f, uint64_t now, uint64_t tried)
{
	uint32_t c, best = NONE;
	uint64_t best_t = 0;

	for (c = 0; c < f->cfg.channels; c++) {
		uint64_t t;

		if (tried & (1ull << c))
			continue;
		t = max64(f->chan[c].busy, now);
		if (best == NONE || t < best_t) {
			best = c;
			best_t = t;
		}
	}
	return best;
}

/* Program one host page of the given size; returns 0 or -ENOSPC and raises
 * *done to the program's end. Pages are striped over channels by number,
 * so any run of pages reads back from all channels evenly whatever GC was
 * doing when it was written; only a channel with no room passes its page
 * to the one that can take it soonest. */
static int write_page(struct ftl *f, uint64_t lpn, uint32_t units, uint64_t now, uint64_t *done)
{
	uint32_t c = (uint32_t)(lpn % f->cfg.channels), addr;
	uint64_t tried = 0;

	*done = max64(*done, invalidate(f, lpn, now));
	while (alloc_units(f, c, STREAM_HOST, units, now, &addr) < 0) {
		tried |= 1ull << c;
		c = pick_channel(f, now, tried);
		if (c == NONE)
			return -ENOSPC;
	}
	map(f, lpn, addr, units);
	*done = max64(*done, chan_work(f, c, now, prog_cost(f, units)));
	f->st.flash_bytes_written += (uint64_t)units * FTL_UNIT;
	return 0;
}

static int in_range(const struct ftl *f, uint64_t off, uint64_t len)
{
	return off <= f->cfg.capacity && len <= f->cfg.capacity - off;
}

/* Read the current copy of lpn (read-modify-write of a partial page). */
static uint64_t read_page(struct ftl *f, uint64_t lpn, uint64_t now)
{
	if (f->map[lpn] == NONE)
		return now;
	f->st.flash_bytes_read += f->cfg.page;
	return chan_work(f, chan_of(f, f->map[lpn] / f->upb), now, f->cfg.t_read);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* When the write cache has room for a new write: the first t >= now at
 * which the flash work queued on all channels, sum(busy - t), fits in what
 * the cache holds (cache_ns per channel). A pooled cache, not one per
 * channel: while one channel is stuck in a GC burst, writes keep flowing
 * to the others, as they do in a drive's DRAM buffer. */
static uint64_t cache_accept(const struct ftl *f, uint64_t now)
{
	uint64_t busy[MAX_CHANNELS], sum = 0, limit;
	uint32_t n = 0, i, j;

	for (i = 0; i < f->cfg.channels; i++) {
		uint64_t b = f->chan[i].busy;

		if (b <= now)
			continue;
		for (j = n++; j > 0 && busy[j - 1] < b; j--)
			busy[j] = busy[j - 1];
		busy[j] = b;
	}
	limit = f->cache_ns * f->cfg.channels;
	for (i = 0; i < n; i++) {
		uint64_t t, next = i + 1 < n ? busy[i + 1] : now;

		sum += busy[i];
		/* With the i+1 busiest channels above t: sum - (i+1) t <= limit. */
		t = sum > limit ? (sum - limit + i) / (i + 1) : 0;
		if (t >= next)
			return t;
	}
	return now;
}

int ftl_write(struct ftl *f, uint64_t off, uint64_t len, const uint8_t *units, uint64_t now,
	      uint64_t *ack)
{
	uint64_t page = f->cfg.page, lpn, first, last, done = now;
	int r;

	*ack = now;
	if (!in_range(f, off, len))
		return -EINVAL;
	ftl_idle(f, now);
	if (len == 0)
		return 0;
	first = off / page;
	last = (off + len - 1) / page;
	for (lpn = first; lpn <= last; lpn++) {
		uint32_t u = units ? units[lpn - first] : f->upp;

		u = u < 1 ? 1 : u > f->upp ? f->upp : u;
		if ((lpn == first && off % page) || (lpn == last && (off + len) % page))
			done = max64(done, read_page(f, lpn, now));
		r = write_page(f, lpn, u, now, &done);
		if (r < 0)
			return r;
	}
	f->st.host_bytes_written += len;
	*ack = f->cache_ns ? min64(done, cache_accept(f, now)) : done;
	return 0;
}

int ftl_read(struct ftl *f, uint64_t off, uint64_t len, uint64_t now, uint64_t *done)
{
	uint64_t lpn;

	*done = now;
	if (!in_range(f, off, len))
		return -EINVAL;
	ftl_idle(f, now);
	if (len == 0)
		return 0;
	for (lpn = off / f->cfg.page; lpn <= (off + len - 1) / f->cfg.page; lpn++)
		*done = max64(*done, read_page(f, lpn, now));
	f->st.host_bytes_read += len;
	return 0;
}

int ftl_trim(struct ftl *f, uint64_t off, uint64_t len, uint64_t now, uint64_t *done)
{
	uint64_t page = f->cfg.page, lpn, first, end;

	*done = now;
	if (!in_range(f, off, len))
		return -EINVAL;
	ftl_idle(f, now);
	first = (off + page - 1) / page;
	end = (off + len) / page;
	for (lpn = first; lpn < end; lpn++)
		*done = max64(*done, invalidate(f, lpn, now));
	if (end > first)
		f->st.trimmed_bytes += (end - first) * page;
	return 0;
}

int ftl_secure_erase(struct ftl *f, uint64_t now, uint64_t *done)
{
	uint32_t b;

	*done = now;
	for (b = 0; b < f->nblocks; b++) {
		if (f->blk[b].state == BLK_FREE)
			continue;
		wear_block(f, b);
		*done = max64(*done, chan_work(f, chan_of(f, b), now, f->cfg.t_erase));
	}
	reset_layout(f);
	return 0;
}

int ftl_flush(const struct ftl *f, uint64_t now, uint64_t *done)
{
	uint32_t c;

	*done = now;
	for (c = 0; c < f->cfg.channels; c++)
		*done = max64(*done, f->chan[c].busy);
	return 0;
}

void ftl_get_stats(const struct ftl *f, struct ftl_stats *st)
{
	uint64_t sum = 0;
	uint32_t b, c;

	*st = f->st;
	st->erase_min = UINT64_MAX;
	st->erase_max = 0;
	for (b = 0; b < f->nblocks; b++) {
		uint64_t e = f->blk[b].erases;

		sum += e;
		st->erase_min = e < st->erase_min ? e : st->erase_min;
		st->erase_max = e > st->erase_max ? e : st->erase_max;
	}
	st->erase_avg = (double)sum / f->nblocks;
	st->life_used_pct = f->cfg.endurance ? 100.0 * st->erase_avg / f->cfg.endurance : 0;
	st->free_blocks = 0;
	for (c = 0; c < f->cfg.channels; c++)
		st->free_blocks += f->chan[c].nfree;
	st->total_blocks = f->nblocks;
	st->valid_pages = f->mapped;
	st->valid_bytes_flash = f->valid_units * FTL_UNIT;
	st->block_bytes = f->cfg.erase_block;
	st->physical_bytes = (uint64_t)f->nblocks * f->cfg.erase_block;
}

/* Every mapped page must be found where the reverse map says. */
static int check_maps(const struct ftl *f, uint32_t *valid)
{
	uint64_t lpn, mapped = 0;

	for (lpn = 0; lpn < f->npages; lpn++) {
		uint32_t a = f->map[lpn];

		if (a == NONE)
			continue;
		if (f->rmap[a] != lpn || f->len[lpn] == 0 || f->len[lpn] > f->upp ||
		    a % f->upb + f->len[lpn] > f->blk[a / f->upb].wp)
			return -EUCLEAN;
		valid[a / f->upb] += f->len[lpn];
		mapped++;
	}
	return mapped == f->mapped ? 0 : -EUCLEAN;
}

int ftl_check(const struct ftl *f)
{
	uint32_t *valid = calloc(f->nblocks, sizeof(*valid));
	uint64_t units = 0, nfree = 0;
	uint32_t b, c;
	int r = valid ? check_maps(f, valid) : -ENOMEM;

	for (b = 0; r == 0 && b < f->nblocks; b++) {
		if (valid[b] != f->blk[b].valid || f->blk[b].wp > f->upb ||
		    (f->blk[b].state == BLK_FREE && f->blk[b].wp != 0) ||
		    (f->blk[b].state == BLK_FULL && f->blk[b].valid == 0))
			r = -EUCLEAN;
		units += valid[b];
		nfree += f->blk[b].state == BLK_FREE;
	}
	for (c = 0; r == 0 && c < f->cfg.channels; c++)
		nfree -= f->chan[c].nfree;
	if (r == 0 && (units != f->valid_units || nfree != 0))
		r = -EUCLEAN;
	free(valid);
	return r;
}

double ftl_fresh_write_rate(const struct ftl_config *cfg)
{
	if (cfg->t_prog == 0)
		return 0;
	return (double)cfg->channels * cfg->page * 1e9 / (double)cfg->t_prog;
}
