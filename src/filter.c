/*-------------------------------------------------------------------------
 *
 * filter.c
 *	  The pure Bloom filter core: layout, sizing, hashing, the bit array
 *	  and the health formulas.
 *
 * Layout (BLOOM_LAYOUT_BLOCKED).  The m bits are cut into blocks of
 * B = min(m, 512) bits; a block of 512 bits is one 64-byte cache line,
 * aligned because the header is 64 bytes and the pool hands out
 * 64-byte-aligned chunks.  A key is reduced to 128 bits (h1, h2) by XXH3
 * keyed with the filter's random seed (so positions differ between
 * filters and generations, and cannot be precomputed by an adversary).
 * h1 picks the key's block, reduce(h1, m / B), and h2 its k bit positions
 * inside that block: x_0 = h2 | 1, x_(i+1) = x_i * 0x9E3779B97F4A7C15
 * (mod 2^64), position_i = reduce(x_i, B), where reduce(x, r) is the
 * multiply-shift floor(x * r / 2^64) rather than a modulo.  Adding or
 * asking about a key touches one cache line: one memory access, where
 * the classic layout touched k.  This is the cache-local Bloom filter of
 * Putze, Sanders and Singler, in the shape of RocksDB's FastLocalBloom
 * (which also multiplies by the golden ratio between probes).
 *
 * Why not enhanced double hashing (x_(i+1) = x_i + y_i, as before) inside
 * the block: reduce() keeps only the top log2(B) bits, and an increment
 * y_i whose top bits are near 0 or near a simple fraction of 2^64 (one
 * key in a few hundred at B = 512) puts all k probes on one or two
 * positions; such keys alone would set the false-positive rate at low
 * loads.  Repeated multiplication by an odd constant mixes every bit of
 * x_i into the top bits of x_(i+1).
 *
 * A filter with m <= 512 bits is one block holding every key: that is
 * exactly a classic Bloom filter of m bits, sized and judged with the
 * classic formulas.  Above 512 bits, m is a whole number of blocks (the
 * sizing below rounds it up), so there is no partial block.
 *
 * Sizing.  For capacity n and target false-positive rate p, the classic
 * sizing gives
 *
 *		m0 = ceil(-n ln p / (ln 2)^2)		k0 = max(1, round((m0 / n) ln 2))
 *
 * If m0 <= 512 that is the filter (one block, classic).  Otherwise the
 * filter gets the fewest blocks b >= 2, and then the k, for which the
 * theoretical rate below at n keys is at most p: blocks holding more keys
 * than average push the rate up, so a blocked filter needs a little more
 * memory than a classic one for the same rate (README, "The filter").
 *
 * The health formulas describe the layout exactly.  With n adds, fill
 * f = (bits set) / m, and lambda = B n / m keys per block on average:
 *
 *	one block:		FP = (1 - e^(-k n / m))^k
 *					n^ = -(m / k) ln(1 - f)
 *	several:		FP = sum_i Pois(i; lambda) (1 - e^(-k i / B))^k
 *					n^ = -(m / B) ln(1 - f) / (1 - (1 - 1/B)^k)
 *
 * Keys land in blocks as a Poisson process; a block holding i keys is a
 * classic filter of B bits, whence the mixture.  The expected zero bits
 * of a block holding i keys are B (1 - 1/B)^(k i); averaged over
 * i ~ Pois(lambda) that is B e^(-lambda (1 - (1 - 1/B)^k)), which solved
 * for n gives n^.  The mixture is summed from the mode outwards until
 * the terms left cannot change the sum (bloom_mixture_fp()).
 *
 * Concurrency: bits are set with pg_atomic_fetch_or_u64().  A plain "|="
 * from two backends could lose a bit, and a lost bit is a false negative.
 * Readers use atomic reads; a reader that races with an adder may see the
 * key as absent, which is correct, because the adder has not finished
 * adding it yet.  Callers order adds before the row becomes visible.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "filter.h"
#include "port/pg_bitutils.h"

StaticAssertDecl(offsetof(BloomFilter, words) == 64,
				 "the filter header must be one cache line, so that blocks are aligned");

/* the multiplier between a key's probes: 2^64 / golden ratio, odd */
#define BLOOM_PROBE_MULT		UINT64CONST(0x9E3779B97F4A7C15)

/* keys ahead whose block a batch add prefetches */
#define BLOOM_PREFETCH_DISTANCE	32

#ifdef __GNUC__
#define bloom_prefetch(addr)	__builtin_prefetch((addr), 1, 3)
#else
#define bloom_prefetch(addr)	((void) 0)
#endif

/* Map a 64-bit hash onto [0, range) without division. */
static inline uint64
bloom_reduce(uint64 x, uint64 range)
{
#ifdef HAVE_INT128
	return (uint64) (((uint128) x * (uint128) range) >> 64);
#else
	return x % range;
#endif
}

/*
 * The false-positive rate of one block of B bits holding i keys, k bits
 * each: the classic (1 - e^(-k i / B))^k.
 */
static inline double
bloom_block_fp(double i, int k, double B)
{
	return pow(1.0 - exp(-(double) k * i / B), k);
}

/*
 * sum_i Pois(i; lambda) bloom_block_fp(i, k, B), the false-positive rate of
 * a blocked filter with lambda keys per block on average.  The Poisson
 * weights are computed from the mode outwards by their recurrence; each
 * side stops once what it has left cannot reach 1e-17 of the sum (the
 * block rate is at most 1 and increases with i).
 */
static double
bloom_mixture_fp(double lambda, int k, double B)
{
	double		mode;
	double		w_mode;
	double		sum = 0;
	double		w;
	double		i;

	if (lambda <= 0)
		return 0;
	mode = floor(lambda);

	/*
	 * Far above a block's capacity every block is saturated: the terms that
	 * matter, within 40 standard deviations of lambda, are all 1.
	 */
	if (bloom_block_fp(Max(0.0, lambda - 40.0 * sqrt(lambda)), k, B) >= 1.0 - 1e-16)
		return bloom_block_fp(lambda, k, B);

	w_mode = exp(mode * log(lambda) - lambda - lgamma(mode + 1.0));

	/* upwards: the rest is at most w (1 + r + r^2 ...), r = lambda / (i + 1) */
	for (i = mode, w = w_mode; w > 0; i += 1.0)
	{
		double		r = lambda / (i + 1.0);

		sum += w * bloom_block_fp(i, k, B);
		if (r < 1.0 && w * r / (1.0 - r) < 1e-17 * sum)
			break;
		w *= r;
	}
	/* downwards: both the weights and the block rates shrink */
	for (i = mode - 1.0, w = w_mode * mode / lambda; i >= 0 && w > 0; i -= 1.0)
	{
		double		term = w * bloom_block_fp(i, k, B);

		sum += term;
		if (term < 1e-17 * sum)
			break;
		w *= i / lambda;
	}
	return sum;
}

/*
 * The lowest blocked rate for lambda keys per 512-bit block, over k, and
 * that k (the smaller one on a tie).  The rate is unimodal in k: walk from
 * the classic optimum (B / lambda) ln 2 to the best neighbour.
 */
static double
bloom_best_blocked_fp(double lambda, int *best_k)
{
	double		B = BLOOM_BLOCK_BITS;
	double		k0 = rint(B / lambda * log(2.0));
	int			k = (int) Max(1, Min(BLOOM_MAX_HASHES, k0));
	bool		down = false;
	double		best;
	double		fp;

	best = bloom_mixture_fp(lambda, k, B);
	while (k > 1 && (fp = bloom_mixture_fp(lambda, k - 1, B)) <= best)
	{
		best = fp;
		k--;
		down = true;
	}
	while (!down && k < BLOOM_MAX_HASHES &&
		   (fp = bloom_mixture_fp(lambda, k + 1, B)) < best)
	{
		best = fp;
		k++;
	}
	*best_k = k;
	return best;
}

/*
 * Compute m and k for capacity n and error rate p (see the file header).
 * Returns false if the result would exceed BLOOM_MAX_BITS.
 */
bool
bloom_size(double capacity, double error_rate, uint64 *nbits, int *nhashes)
{
	double		ln2 = log(2.0);
	double		m;
	double		k;
	double		lo;
	double		hi;
	double		blocks;
	int			best_k;
	int			i;

	Assert(capacity > 0 && error_rate > 0 && error_rate < 1);

	m = ceil(-capacity * log(error_rate) / (ln2 * ln2));
	if (m < 1)
		m = 1;
	if (m <= BLOOM_BLOCK_BITS)
	{
		/* one block: the classic filter */
		k = rint((m / capacity) * ln2);
		*nbits = (uint64) m;
		*nhashes = (int) Max(1, Min(BLOOM_MAX_HASHES, k));
		return true;
	}
	if (m > (double) BLOOM_MAX_BITS)
		return false;

	/*
	 * Several blocks: the rate depends on the keys per block, lambda = n / b.
	 * Find the largest lambda that meets p by bisection (the best rate rises
	 * with lambda), then the fewest blocks b >= 2 that meet it exactly.
	 */
	lo = 0;
	hi = 1;
	while (hi < 1e9 && bloom_best_blocked_fp(hi, &best_k) <= error_rate)
	{
		lo = hi;
		hi *= 2;
	}
	for (i = 0; i < 64; i++)
	{
		double		mid = (lo + hi) / 2;

		if (bloom_best_blocked_fp(mid, &best_k) <= error_rate)
			lo = mid;
		else
			hi = mid;
	}
	if (lo <= 0)
		return false;
	blocks = Max(2, ceil(capacity / lo));
	while (blocks > 2 && bloom_best_blocked_fp(capacity / (blocks - 1), &best_k) <= error_rate)
		blocks--;
	while (bloom_best_blocked_fp(capacity / blocks, &best_k) > error_rate)
		blocks++;
	if (blocks * BLOOM_BLOCK_BITS > (double) BLOOM_MAX_BITS)
		return false;
	(void) bloom_best_blocked_fp(capacity / blocks, &best_k);
	*nbits = (uint64) blocks * BLOOM_BLOCK_BITS;
	*nhashes = best_k;
	return true;
}

/* B, the bits of a block, for a filter of nbits bits. */
uint32
bloom_block_bits(uint64 nbits)
{
	return (uint32) Min(nbits, (uint64) BLOOM_BLOCK_BITS);
}

/* Bytes a filter of nbits bits occupies, header included. */
Size
bloom_filter_bytes(uint64 nbits)
{
	return offsetof(BloomFilter, words) + bloom_nwords(nbits) * sizeof(pg_atomic_uint64);
}

/*
 * Initialize an all-zero filter in memory of bloom_filter_bytes(nbits).
 * nbits is one block (at most 512) or a whole number of blocks.
 */
void
bloom_init(BloomFilter *filter, uint64 capacity, double error_rate,
		   uint64 nbits, int nhashes, uint64 seed)
{
	uint64		nwords = bloom_nwords(nbits);
	uint64		i;

	Assert(nbits <= BLOOM_BLOCK_BITS || nbits % BLOOM_BLOCK_BITS == 0);
	filter->nhashes = nhashes;
	filter->layout = BLOOM_LAYOUT;
	filter->block_bits = (uint16) bloom_block_bits(nbits);
	filter->nbits = nbits;
	filter->nblocks = nbits / filter->block_bits;
	filter->capacity = capacity;
	filter->error_rate = error_rate;
	filter->seed = seed;
	pg_atomic_init_u64(&filter->n_added, 0);
	pg_atomic_init_u64(&filter->bits_set, 0);
	for (i = 0; i < nwords; i++)
		pg_atomic_init_u64(&filter->words[i], 0);
}

/* Unkeyed 64-bit hash of raw bytes (one key column's canonical bytes). */
uint64
bloom_hash_bytes(const void *data, size_t len)
{
	return XXH3_64bits(data, len);
}

/*
 * The 128-bit hash of a key, given one 64-bit hash per key column.  The
 * input is prefixed with the key domain tag, so no key can produce the
 * input of a probe, and combines the columns in order, so (1,'x') and
 * (1,'y') differ.
 */
BloomHash
bloom_hash_key(uint64 seed, const uint64 *colhashes, int ncols)
{
	uint64		buf[1 + 32];
	XXH128_hash_t h;
	BloomHash	result;

	Assert(ncols >= 1 && ncols <= 32);
	buf[0] = BLOOM_DOMAIN_KEY;
	memcpy(&buf[1], colhashes, ncols * sizeof(uint64));
	h = XXH3_128bits_withSeed(buf, (ncols + 1) * sizeof(uint64), seed);
	result.h1 = h.low64;
	result.h2 = h.high64;
	return result;
}

/* The 128-bit hash of probe number "probe": a key no real key can be. */
BloomHash
bloom_hash_probe(uint64 seed, uint64 probe)
{
	uint64		buf[2];
	XXH128_hash_t h;
	BloomHash	result;

	buf[0] = BLOOM_DOMAIN_PROBE;
	buf[1] = probe;
	h = XXH3_128bits_withSeed(buf, sizeof(buf), seed);
	result.h1 = h.low64;
	result.h2 = h.high64;
	return result;
}

/* The index of a key's first word: the start of its block. */
static inline uint64
bloom_block_start(const BloomFilter *filter, BloomHash hash)
{
	return bloom_reduce(hash.h1, filter->nblocks) * BLOOM_BLOCK_WORDS;
}

/*
 * Set the k bits of a key.  The bits are gathered per word of the block
 * first, so each word takes at most one atomic OR, and none if its bits
 * are set already (most are, once a filter fills).  Returns how many bits
 * went from zero to one; the caller adds that to bits_set (batched, to
 * keep the counter off the hot cache line).
 */
static inline int
bloom_set_bits(BloomFilter *filter, BloomHash hash)
{
	pg_atomic_uint64 *block = &filter->words[bloom_block_start(filter, hash)];
	uint64		masks[BLOOM_BLOCK_WORDS] = {0};
	uint64		x = hash.h2 | 1;
	uint32		B = filter->block_bits;
	int			newbits = 0;
	int			i;

	for (i = 0; i < filter->nhashes; i++)
	{
		uint64		pos = bloom_reduce(x, B);

		masks[pos >> 6] |= UINT64CONST(1) << (pos & 63);
		x *= BLOOM_PROBE_MULT;
	}
	/* a one-block filter of fewer than 512 bits has no mask past its words */
	for (i = 0; i < BLOOM_BLOCK_WORDS; i++)
	{
		uint64		mask = masks[i];

		if (mask != 0 && (pg_atomic_read_u64(&block[i]) & mask) != mask)
			newbits += pg_popcount64(mask & ~pg_atomic_fetch_or_u64(&block[i], mask));
	}
	return newbits;
}

/*
 * Add n keys, updating the shared counters once.  Each key is one cache
 * line; the line of the key BLOOM_PREFETCH_DISTANCE ahead is prefetched, so
 * that the misses of a filter larger than the CPU caches overlap.
 */
void
bloom_add_batch(BloomFilter *filter, const BloomHash *hashes, int n)
{
	uint64		newbits = 0;
	int			i;

	if (n <= 0)
		return;
	for (i = 0; i < n; i++)
	{
		if (i + BLOOM_PREFETCH_DISTANCE < n)
			bloom_prefetch(&filter->words[bloom_block_start(filter, hashes[i + BLOOM_PREFETCH_DISTANCE])]);
		newbits += bloom_set_bits(filter, hashes[i]);
	}
	pg_atomic_fetch_add_u64(&filter->n_added, n);
	if (newbits > 0)
		pg_atomic_fetch_add_u64(&filter->bits_set, newbits);
}

/*
 * Bulk loading.  A build owns a private bit array shaped like the
 * filter's, sets bits in it with plain ORs, and merges it into the shared
 * filter at the end: no atomic operation per bit.  Prefetched like
 * bloom_add_batch().
 */
void
bloom_local_add_batch(const BloomFilter *shape, uint64 *words,
					  const BloomHash *hashes, int n)
{
	uint32		B = shape->block_bits;
	int			k = shape->nhashes;
	int			i;

	for (i = 0; i < n; i++)
	{
		uint64	   *block = &words[bloom_block_start(shape, hashes[i])];
		uint64		x = hashes[i].h2 | 1;
		int			j;

		if (i + BLOOM_PREFETCH_DISTANCE < n)
			bloom_prefetch(&words[bloom_block_start(shape, hashes[i + BLOOM_PREFETCH_DISTANCE])]);
		for (j = 0; j < k; j++)
		{
			uint64		pos = bloom_reduce(x, B);

			block[pos >> 6] |= UINT64CONST(1) << (pos & 63);
			x *= BLOOM_PROBE_MULT;
		}
	}
}

/*
 * OR the words [first, first + count) of a private bit array into the
 * filter (one atomic per word that adds a bit), and count nadded keys as
 * added.
 */
void
bloom_merge(BloomFilter *filter, const uint64 *words, uint64 first, uint64 count,
			uint64 nadded)
{
	uint64		newbits = 0;
	uint64		i;

	Assert(first + count <= bloom_nwords(filter->nbits));
	for (i = first; i < first + count; i++)
	{
		uint64		w = words[i];

		if (w != 0 && (pg_atomic_read_u64(&filter->words[i]) & w) != w)
			newbits += pg_popcount64(w & ~pg_atomic_fetch_or_u64(&filter->words[i], w));
	}
	if (nadded > 0)
		pg_atomic_fetch_add_u64(&filter->n_added, nadded);
	if (newbits > 0)
		pg_atomic_fetch_add_u64(&filter->bits_set, newbits);
}

/* Test a key: false means "definitely never added". */
bool
bloom_maybe(BloomFilter *filter, BloomHash hash)
{
	pg_atomic_uint64 *block = &filter->words[bloom_block_start(filter, hash)];
	uint64		x = hash.h2 | 1;
	uint32		B = filter->block_bits;
	int			i;

	for (i = 0; i < filter->nhashes; i++)
	{
		uint64		pos = bloom_reduce(x, B);

		if ((pg_atomic_read_u64(&block[pos >> 6]) & (UINT64CONST(1) << (pos & 63))) == 0)
			return false;
		x *= BLOOM_PROBE_MULT;
	}
	return true;
}

/*
 * The health gauges, from a filter's numbers (the health view reports
 * them from a copy taken under the slot lock).  The file header has the
 * formulas and why they are exact for this layout.
 */

/* Fraction of the m bits that are set. */
double
bloom_fill(uint64 nbits, uint64 bits_set)
{
	return (double) bits_set / (double) nbits;
}

/* The theoretical false-positive rate after n_added adds. */
double
bloom_theoretical_fp(uint64 nbits, int nhashes, uint32 block_bits, uint64 n_added)
{
	double		k = nhashes;
	double		n = (double) n_added;
	double		m = (double) nbits;

	if (block_bits >= nbits)
		return pow(1.0 - exp(-k * n / m), k);
	return bloom_mixture_fp((double) block_bits * n / m, nhashes, (double) block_bits);
}

/*
 * The distinct keys the filter holds, from its fill.  *full is set when
 * every bit is set and there is no estimate.
 */
double
bloom_estimated_keys(uint64 nbits, int nhashes, uint32 block_bits,
					 uint64 bits_set, bool *full)
{
	double		m = (double) nbits;
	double		B = (double) block_bits;
	double		zeros;

	if (bits_set >= nbits)
	{
		*full = true;
		return 0;
	}
	*full = false;
	zeros = log(1.0 - (double) bits_set / m);
	/* + 0.0 turns the -0 of an empty filter into 0 */
	if (block_bits >= nbits)
		return -(m / nhashes) * zeros + 0.0;
	return -(m / B) * zeros / (1.0 - pow(1.0 - 1.0 / B, nhashes)) + 0.0;
}
