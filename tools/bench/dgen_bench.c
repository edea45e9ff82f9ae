/* dgen_bench: throughput of the data generator on one core, as the engine
 * uses it: datagen_block_over into queue_depth slot buffers in turn, every
 * block fresh, each buffer with the tag of its last fill (so the zeros of a
 * compressible block already in place are kept), with non-temporal stores
 * (datagen_stream); and, for comparison, one case with every byte written
 * (datagen_block); and the ceiling: the same buffers written by 16-byte
 * non-temporal stores of a constant and nothing else, as fast as this core
 * streams them to memory, which a generator, however cheap its arithmetic,
 * can at best match. Here no other CPU reads the buffers, so plain stores
 * would stay in this core's caches and be faster; in wearmond a device or
 * the loop worker reads every block, and there non-temporal stores are the
 * cheaper (tools/bench/results/2026-12-04-engine-changes.md, item 12).
 * Prints one line per case: compressibility (or "no generator"), block
 * size, GiB per second of this thread's CPU time (what one core does, even
 * on a loaded machine) and per second of wall-clock time.
 * Usage: dgen_bench [seconds per case] */
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/datagen.h"
#include "base/util.h"

static double now(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define QD_MAX 32

enum how { OVER, ALL, STORES };

typedef uint64_t v4u64 __attribute__((vector_size(32)));

/* n bytes (a multiple of 128) of v at p, 32-byte aligned: the generator's
 * stores without its arithmetic (non-temporal ones, as datagen_stream's,
 * where the compiler offers them). */
UTIL_AVX2_CLONES static void store_only(unsigned char *p, size_t n, uint64_t v)
{
#ifdef __SSE2__
	__m128i x = _mm_set1_epi64x((long long)v);
	for (size_t i = 0; i < n; i += 128)
		for (size_t k = 0; k < 128; k += 16)
			_mm_stream_si128((__m128i *)(void *)(p + i + k), x);
	_mm_sfence();
#else
	v4u64 x = { v, v, v, v };
	for (size_t i = 0; i < n; i += 128) {
		memcpy(p + i, &x, 32);
		memcpy(p + i + 32, &x, 32);
		memcpy(p + i + 64, &x, 32);
		memcpy(p + i + 96, &x, 32);
	}
#endif
}

/* GiB/s of blocks made at p% into qd buffers of bs bytes for secs of wall
 * time (OVER: the engine's way; ALL: every byte written; STORES: vector
 * stores of a new value, the ceiling): per CPU second in *cpu, per wall second
 * returned; -1: no memory. */
static double rate(unsigned p, unsigned d, size_t bs, unsigned qd, enum how how, double secs,
		   double *cpu)
{
	size_t len;
	unsigned char *mem = util_buf_alloc(bs * qd, &len); /* as the engine's */
	uint64_t tag[QD_MAX] = { 0 };
	struct datagen g;
	double t0, c0, t;
	size_t bytes = 0;

	if (!mem)
		return -1;
	memset(mem, 0, bs * qd); /* fault the pages in before timing */
	datagen_init(&g, p, d, 1);
	datagen_stream(&g, 1);
	t0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_THREAD_CPUTIME_ID);
	do {
		for (unsigned i = 0; i < qd; i++) {
			if (how == STORES)
				store_only(mem + i * bs, bs, bytes + i);
			else if (how == ALL)
				datagen_block(&g, mem + i * bs, bs);
			else
				tag[i] = datagen_block_over(&g, mem + i * bs, bs, tag[i]);
		}
		bytes += bs * qd;
		t = now(CLOCK_MONOTONIC);
	} while (t - t0 < secs);
	*cpu = (double)bytes / (now(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)(1u << 30);
	util_buf_free(mem, len);
	return (double)bytes / (t - t0) / (double)(1u << 30);
}

int main(int argc, char **argv)
{
	static const struct {
		unsigned p, d;
		size_t bs;
		unsigned qd;
		enum how how;
	} cases[] = {
		{ 0, 0, 1 << 20, 8, OVER },  { 50, 0, 1 << 20, 8, OVER },
		{ 98, 0, 1 << 20, 8, OVER }, { 0, 0, 4096, 32, OVER },
		{ 50, 0, 4096, 32, OVER },   { 0, 20, 1 << 20, 8, OVER },
		{ 50, 0, 1 << 20, 8, ALL },  { 0, 0, 1 << 20, 8, STORES },
		{ 0, 0, 4096, 32, STORES },
	};
	static const char *const suffix[] = { "", " every byte", " stores alone" };
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double cpu = 0;
		double wall = rate(cases[i].p, cases[i].d, cases[i].bs, cases[i].qd, cases[i].how,
				   secs, &cpu);
		if (cases[i].how == STORES)
			printf("no generator, block %zu qd %u%s", cases[i].bs, cases[i].qd,
			       suffix[cases[i].how]);
		else
			printf("compressibility %u dedupe %u block %zu qd %u%s", cases[i].p,
			       cases[i].d, cases[i].bs, cases[i].qd, suffix[cases[i].how]);
		printf(": %.2f GiB/s cpu %.2f GiB/s wall\n", cpu, wall);
	}
	return 0;
}
