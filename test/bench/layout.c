/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  Measurements of bloomguard's filter core (src/filter.c) outside the
 *	  server, compiled by test/bench/run.sh against the server headers:
 *
 *	layout fp CAPACITY ERROR_RATE PROBES
 *		Fill a filter sized for CAPACITY and ERROR_RATE to loads 0.25 to 3
 *		with random keys and probe it with PROBES keys never added: the
 *		measured false-positive rate against the theoretical one, for the
 *		positions filter.c uses inside a block (a multiplied sequence) and
 *		for enhanced double hashing inside the same blocks.
 *
 *	layout speed CAPACITY KEYS
 *		Nanoseconds per key to set the bits of KEYS random keys in a filter
 *		sized for CAPACITY at 1%, in batches of 16384 as a build does: in a
 *		private array or with atomic ORs, each with the next keys' cache
 *		lines prefetched (filter.c), without prefetching, and with the batch
 *		sorted by block first.
 *
 * Output: one tab-separated line per measurement, "fp" or "speed" first.
 * Keys are uniform 128-bit hashes (what XXH3 gives a build).
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sys/mman.h>
#include <time.h>

/* the filter core itself, so that its static functions can be compared */
#include "../../src/filter.c"

#define BATCH		16384

static uint64 rng_state = UINT64CONST(0x853C49E6748FEA9B);

/* The next value of a splitmix64 generator. */
static uint64
rng_next(void)
{
	uint64		z = (rng_state += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* A random key hash. */
static BloomHash
rng_hash(void)
{
	BloomHash	h;

	h.h1 = rng_next();
	h.h2 = rng_next();
	return h;
}

/* Seconds on a monotonic clock. */
static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Enhanced double hashing inside the key's block, for comparison: what the
 * classic layout did over the whole filter.  Sets the bits with set, or
 * tests them.
 */
static bool
double_hashing(uint64 *words, const BloomFilter *f, BloomHash h, bool set)
{
	uint64	   *block = &words[bloom_block_start(f, h)];
	uint64		x = h.h2;
	uint64		y = h.h1 * BLOOM_PROBE_MULT;	/* not the block's bits */
	int			i;

	for (i = 0; i < f->nhashes; i++)
	{
		uint64		pos = bloom_reduce(x, f->block_bits);
		uint64		bit = UINT64CONST(1) << (pos & 63);

		if (set)
			block[pos >> 6] |= bit;
		else if ((block[pos >> 6] & bit) == 0)
			return false;
		x += y;
		y += i + 1;
	}
	return true;
}

/* Test a key in a private array with filter.c's positions. */
static bool
local_maybe(const uint64 *words, const BloomFilter *f, BloomHash h)
{
	const uint64 *block = &words[bloom_block_start(f, h)];
	uint64		x = h.h2 | 1;
	int			i;

	for (i = 0; i < f->nhashes; i++)
	{
		uint64		pos = bloom_reduce(x, f->block_bits);

		if ((block[pos >> 6] & (UINT64CONST(1) << (pos & 63))) == 0)
			return false;
		x *= BLOOM_PROBE_MULT;
	}
	return true;
}

/* The fp measurement (see the file header). */
static void
measure_fp(double capacity, double error_rate, long probes)
{
	static const double loads[] = {0.25, 0.5, 1, 2, 3};
	uint64		nbits;
	int			k;
	int			variant;

	if (!bloom_size(capacity, error_rate, &nbits, &k))
	{
		fprintf(stderr, "filter too large\n");
		exit(1);
	}
	for (variant = 0; variant < 2; variant++)
	{
		BloomFilter *f = malloc(bloom_filter_bytes(nbits));
		uint64	   *words = calloc(bloom_nwords(nbits), sizeof(uint64));
		double		added = 0;
		int			l;

		bloom_init(f, (uint64) capacity, error_rate, nbits, k, 0);
		for (l = 0; l < lengthof(loads); l++)
		{
			long		hits = 0;
			long		j;

			for (; added < loads[l] * capacity; added++)
			{
				BloomHash	h = rng_hash();

				if (variant == 0)
					bloom_local_add_batch(f, words, &h, 1);
				else
					double_hashing(words, f, h, true);
			}
			for (j = 0; j < probes; j++)
			{
				BloomHash	h = rng_hash();

				hits += variant == 0 ? local_maybe(words, f, h) :
					double_hashing(words, f, h, false);
			}
			printf("fp\t%s\t%.2f\t%.0f\t%lu\t%d\t%ld\t%ld\t%.6g\n",
				   variant == 0 ? "multiplied" : "double_hashing", loads[l], capacity,
				   (unsigned long) nbits, k, probes, hits,
				   bloom_theoretical_fp(nbits, k, bloom_block_bits(nbits), (uint64) added));
		}
		free(f);
		free(words);
	}
}

/* Sort a batch by block (two LSD radix passes of 16 bits of the block index). */
static void
sort_by_block(const BloomFilter *f, BloomHash *batch, BloomHash *tmp, uint64 *key,
			  uint64 *tmpkey, int n)
{
	static int	count[65536];
	int			shift;
	int			i;

	for (i = 0; i < n; i++)
		key[i] = bloom_reduce(batch[i].h1, f->nblocks);
	for (shift = 0; shift < 32; shift += 16)
	{
		int			sum = 0;
		int			b;

		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(key[i] >> shift) & 0xFFFF]++;
		for (b = 0; b < 65536; b++)
		{
			int			c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
		{
			int			d = count[(key[i] >> shift) & 0xFFFF]++;

			tmp[d] = batch[i];
			tmpkey[d] = key[i];
		}
		memcpy(batch, tmp, n * sizeof(BloomHash));
		memcpy(key, tmpkey, n * sizeof(uint64));
	}
}

/* Set bits in a private array without prefetching. */
static void
local_add_plain(const BloomFilter *f, uint64 *words, const BloomHash *batch, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		uint64	   *block = &words[bloom_block_start(f, batch[i])];
		uint64		x = batch[i].h2 | 1;
		int			j;

		for (j = 0; j < f->nhashes; j++)
		{
			uint64		pos = bloom_reduce(x, f->block_bits);

			block[pos >> 6] |= UINT64CONST(1) << (pos & 63);
			x *= BLOOM_PROBE_MULT;
		}
	}
}

/* Set bits with atomic ORs without prefetching. */
static void
atomic_add_plain(BloomFilter *f, const BloomHash *batch, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		(void) bloom_set_bits(f, batch[i]);
}

/* The speed measurement (see the file header). */
static void
measure_speed(double capacity, long nkeys)
{
	static const char *const names[] = {
		"private prefetched", "private plain", "private sorted",
		"atomic prefetched", "atomic plain", "atomic sorted"
	};
	uint64		nbits;
	int			k;
	int			variant;
	BloomHash  *batch = malloc(BATCH * sizeof(BloomHash));
	BloomHash  *tmp = malloc(BATCH * sizeof(BloomHash));
	uint64	   *key = malloc(BATCH * sizeof(uint64));
	uint64	   *tmpkey = malloc(BATCH * sizeof(uint64));

	if (!bloom_size(capacity, 0.01, &nbits, &k))
	{
		fprintf(stderr, "filter too large\n");
		exit(1);
	}
	for (variant = 0; variant < lengthof(names); variant++)
	{
		BloomFilter *f = aligned_alloc(64, TYPEALIGN(64, bloom_filter_bytes(nbits)));
		/* laid out as a build lays out its private arrays (src/build.c) */
		Size		huge = 2 * 1024 * 1024;
		Size		bytes = TYPEALIGN(huge, bloom_nwords(nbits) * sizeof(uint64));
		uint64	   *words = aligned_alloc(huge, bytes);
		double		elapsed = 0;
		double		t;
		long		done;

#ifdef MADV_HUGEPAGE
		(void) madvise(words, bytes, MADV_HUGEPAGE);
#endif
		bloom_init(f, (uint64) capacity, 0.01, nbits, k, 0);
		memset(words, 0, bytes);
		for (done = 0; done < nkeys; done += BATCH)
		{
			int			n = (int) Min((long) BATCH, nkeys - done);
			int			i;

			for (i = 0; i < n; i++)
				batch[i] = rng_hash();
			t = now();
			switch (variant)
			{
				case 0:
					bloom_local_add_batch(f, words, batch, n);
					break;
				case 1:
					local_add_plain(f, words, batch, n);
					break;
				case 2:
					sort_by_block(f, batch, tmp, key, tmpkey, n);
					local_add_plain(f, words, batch, n);
					break;
				case 3:
					bloom_add_batch(f, batch, n);
					break;
				case 4:
					atomic_add_plain(f, batch, n);
					break;
				case 5:
					sort_by_block(f, batch, tmp, key, tmpkey, n);
					atomic_add_plain(f, batch, n);
					break;
			}
			elapsed += now() - t;
		}
		/* a private array is merged into the filter at the end */
		if (variant < 3)
		{
			t = now();
			bloom_merge(f, words, 0, bloom_nwords(nbits), nkeys);
			elapsed += now() - t;
		}
		printf("speed\t%s\t%.0f\t%lu\t%ld\t%.2f\n", names[variant], capacity,
			   (unsigned long) bloom_filter_bytes(nbits), nkeys, elapsed * 1e9 / nkeys);
		free(f);
		free(words);
	}
}

int
main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "fp") == 0)
		measure_fp(atof(argv[2]), atof(argv[3]), atol(argv[4]));
	else if (argc == 4 && strcmp(argv[1], "speed") == 0)
		measure_speed(atof(argv[2]), atol(argv[3]));
	else
	{
		fprintf(stderr, "usage: layout fp CAPACITY ERROR_RATE PROBES | layout speed CAPACITY KEYS\n");
		return 2;
	}
	return 0;
}
