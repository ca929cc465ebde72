/*-------------------------------------------------------------------------
 *
 * filter.c
 *	  The pure Bloom filter core: sizing, hashing and the bit array.
 *
 * Sizing follows the classic formulas exactly, because the health view
 * recomputes the theoretical false-positive rate from them:
 *
 *		m = ceil(-n ln p / (ln 2)^2)		bits
 *		k = max(1, round((m / n) ln 2))		hashes
 *
 * The filter uses exactly m bit positions; the allocation rounds up to
 * whole 64-bit words, and the spare bits in the last word are never set.
 *
 * A key is reduced to 128 bits by XXH3 keyed with the filter's random seed
 * (so positions differ between filters and generations, and cannot be
 * precomputed by an adversary), and the k positions are derived from those
 * 128 bits by enhanced double hashing (Dillinger and Manolios), mapped onto
 * [0, m) with a multiply-shift rather than a modulo.
 *
 * Concurrency: bits are set with pg_atomic_fetch_or_u64().  A plain "|="
 * from two backends could lose a bit, and a lost bit is a false negative.
 * Readers use atomic reads; a reader that races with an adder may see the
 * key as absent, which is correct, because the adder has not finished
 * adding it yet.  Callers order adds before the row becomes visible.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "filter.h"
#include "port/pg_bitutils.h"

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
 * Compute m and k for capacity n and error rate p.  Returns false if the
 * result would exceed BLOOM_MAX_BITS.
 */
bool
bloom_size(double capacity, double error_rate, uint64 *nbits, int *nhashes)
{
	double		ln2 = log(2.0);
	double		m;
	double		k;

	Assert(capacity > 0 && error_rate > 0 && error_rate < 1);

	m = ceil(-capacity * log(error_rate) / (ln2 * ln2));
	if (m < 1)
		m = 1;
	if (m > (double) BLOOM_MAX_BITS)
		return false;

	k = rint((m / capacity) * ln2);
	if (k < 1)
		k = 1;
	if (k > BLOOM_MAX_HASHES)
		k = BLOOM_MAX_HASHES;

	*nbits = (uint64) m;
	*nhashes = (int) k;
	return true;
}

/* Bytes a filter of nbits bits occupies, header included. */
Size
bloom_filter_bytes(uint64 nbits)
{
	uint64		nwords = (nbits + 63) / 64;

	return offsetof(BloomFilter, words) + nwords * sizeof(pg_atomic_uint64);
}

/* Initialize an all-zero filter in memory of bloom_filter_bytes(nbits). */
void
bloom_init(BloomFilter *filter, uint64 capacity, double error_rate,
		   uint64 nbits, int nhashes, uint64 seed)
{
	uint64		i;

	filter->nhashes = nhashes;
	filter->nbits = nbits;
	filter->nwords = (nbits + 63) / 64;
	filter->capacity = capacity;
	filter->error_rate = error_rate;
	filter->seed = seed;
	pg_atomic_init_u64(&filter->n_added, 0);
	pg_atomic_init_u64(&filter->bits_set, 0);
	for (i = 0; i < filter->nwords; i++)
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

/*
 * Set the k bits of a key.  Returns how many bits went from zero to one;
 * the caller adds that to bits_set (batched, to keep the counter off the
 * hot cache line).
 */
static inline int
bloom_set_bits(BloomFilter *filter, BloomHash hash)
{
	uint64		x = hash.h1;
	uint64		y = hash.h2;
	int			newbits = 0;
	int			i;

	for (i = 0; i < filter->nhashes; i++)
	{
		uint64		pos = bloom_reduce(x, filter->nbits);
		pg_atomic_uint64 *word = &filter->words[pos >> 6];
		uint64		mask = UINT64CONST(1) << (pos & 63);

		/* read first: most bits are already set once a filter fills */
		if ((pg_atomic_read_u64(word) & mask) == 0 &&
			(pg_atomic_fetch_or_u64(word, mask) & mask) == 0)
			newbits++;
		x += y;
		y += i + 1;
	}
	return newbits;
}

/*
 * Batches compute the positions of a chunk of keys first and prefetch
 * their words, so that the cache misses of random positions in a filter
 * larger than the CPU cache overlap instead of following one another.
 */
#define BLOOM_PREFETCH_KEYS 16

/*
 * The bit positions of m keys, k each in order, into pos (room for
 * m * BLOOM_MAX_HASHES), prefetching for writing each one's 64-bit word in
 * the array at words.  The positions are bloom_set_bits()'s.  Returns how
 * many there are.
 */
static inline int
bloom_positions(const BloomFilter *shape, const BloomHash *hashes, int m,
				const void *words, uint64 *pos)
{
	int			k = shape->nhashes;
	int			npos = 0;
	int			i;
	int			j;

	for (i = 0; i < m; i++)
	{
		uint64		x = hashes[i].h1;
		uint64		y = hashes[i].h2;

		for (j = 0; j < k; j++)
		{
			uint64		p = bloom_reduce(x, shape->nbits);

			pos[npos++] = p;
#ifdef __GNUC__
			__builtin_prefetch((const char *) words + (p >> 6) * sizeof(uint64), 1, 0);
#endif
			x += y;
			y += j + 1;
		}
	}
	return npos;
}

/* Add one key. Returns the number of bits newly set. */
int
bloom_add(BloomFilter *filter, BloomHash hash)
{
	int			newbits = bloom_set_bits(filter, hash);

	pg_atomic_fetch_add_u64(&filter->n_added, 1);
	if (newbits > 0)
		pg_atomic_fetch_add_u64(&filter->bits_set, newbits);
	return newbits;
}

/*
 * Add n keys, a chunk at a time with their words prefetched (see above),
 * updating the shared counters once.
 */
void
bloom_add_batch(BloomFilter *filter, const BloomHash *hashes, int n)
{
	uint64		pos[BLOOM_PREFETCH_KEYS * BLOOM_MAX_HASHES];
	uint64		newbits = 0;
	int			base;
	int			i;

	if (n <= 0)
		return;
	for (base = 0; base < n; base += BLOOM_PREFETCH_KEYS)
	{
		int			npos = bloom_positions(filter, hashes + base,
										   Min(BLOOM_PREFETCH_KEYS, n - base),
										   filter->words, pos);

		for (i = 0; i < npos; i++)
		{
			pg_atomic_uint64 *word = &filter->words[pos[i] >> 6];
			uint64		mask = UINT64CONST(1) << (pos[i] & 63);

			/* read first: most bits are already set once a filter fills */
			if ((pg_atomic_read_u64(word) & mask) == 0 &&
				(pg_atomic_fetch_or_u64(word, mask) & mask) == 0)
				newbits++;
		}
	}
	pg_atomic_fetch_add_u64(&filter->n_added, n);
	if (newbits > 0)
		pg_atomic_fetch_add_u64(&filter->bits_set, newbits);
}

/*
 * Bulk loading.  A build owns a private bit array shaped like the
 * filter's (nbits bits, words of 64), sets bits in it with plain ORs,
 * and merges it into the shared filter at the end: no atomic operation
 * per bit.
 */

/* Set the bits of n keys in a private bit array shaped like the filter. */
void
bloom_local_add_batch(const BloomFilter *shape, uint64 *words,
					  const BloomHash *hashes, int n)
{
	uint64		pos[BLOOM_PREFETCH_KEYS * BLOOM_MAX_HASHES];
	int			base;
	int			i;

	for (base = 0; base < n; base += BLOOM_PREFETCH_KEYS)
	{
		int			npos = bloom_positions(shape, hashes + base,
										   Min(BLOOM_PREFETCH_KEYS, n - base),
										   words, pos);

		for (i = 0; i < npos; i++)
			words[pos[i] >> 6] |= UINT64CONST(1) << (pos[i] & 63);
	}
}

/*
 * OR a private bit array into the filter (one atomic per non-zero word)
 * and count nadded keys as added.
 */
void
bloom_merge(BloomFilter *filter, const uint64 *words, uint64 nadded)
{
	uint64		newbits = 0;
	uint64		i;

	for (i = 0; i < filter->nwords; i++)
	{
		uint64		w = words[i];

		if (w != 0)
		{
			uint64		old = pg_atomic_fetch_or_u64(&filter->words[i], w);

			newbits += pg_popcount64(w & ~old);
		}
	}
	pg_atomic_fetch_add_u64(&filter->n_added, nadded);
	pg_atomic_fetch_add_u64(&filter->bits_set, newbits);
}

/* Test a key: false means "definitely never added". */
bool
bloom_maybe(BloomFilter *filter, BloomHash hash)
{
	uint64		x = hash.h1;
	uint64		y = hash.h2;
	int			i;

	for (i = 0; i < filter->nhashes; i++)
	{
		uint64		pos = bloom_reduce(x, filter->nbits);
		uint64		word = pg_atomic_read_u64(&filter->words[pos >> 6]);

		if ((word & (UINT64CONST(1) << (pos & 63))) == 0)
			return false;
		x += y;
		y += i + 1;
	}
	return true;
}

/*
 * The health gauges, from a filter's numbers (the health view reports
 * them from a copy taken under the slot lock).
 */

/* Fraction of the m bits that are set. */
double
bloom_fill(uint64 nbits, uint64 bits_set)
{
	return (double) bits_set / (double) nbits;
}

/* The theoretical false-positive rate after n_added adds: (1 - e^(-k n / m))^k */
double
bloom_theoretical_fp(uint64 nbits, int nhashes, uint64 n_added)
{
	double		k = nhashes;
	double		n = (double) n_added;
	double		m = (double) nbits;

	return pow(1.0 - exp(-k * n / m), k);
}

/*
 * The distinct keys the filter holds, from its fill: -(m / k) ln(1 - fill).
 * *full is set when every bit is set and there is no estimate.
 */
double
bloom_estimated_keys(uint64 nbits, int nhashes, uint64 bits_set, bool *full)
{
	if (bits_set >= nbits)
	{
		*full = true;
		return 0;
	}
	*full = false;
	/* + 0.0 turns the -0 of an empty filter into 0 */
	return -((double) nbits / nhashes) *
		log(1.0 - (double) bits_set / (double) nbits) + 0.0;
}
