/*-------------------------------------------------------------------------
 *
 * filter.h
 *	  The pure Bloom filter core of bloomguard: sizing, hashing, bits.
 *
 * Nothing in filter.c takes a PostgreSQL lock, reads a catalog or
 * allocates memory.  The bit array lives wherever the caller puts it (in
 * bloomguard's case, the filter pool in shared memory); bits are set with
 * atomic OR so that concurrent adders never lose a bit, and read with
 * plain atomic reads.  Everything else here is arithmetic.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMGUARD_FILTER_H
#define BLOOMGUARD_FILTER_H

#include "port/atomics.h"


/* hash domains: real keys and probes never share an input */
#define BLOOM_DOMAIN_KEY		UINT64CONST(0)
#define BLOOM_DOMAIN_PROBE		UINT64CONST(1)

/* the largest filter we will size: 2^40 bits = 128 GiB */
#define BLOOM_MAX_BITS			(UINT64CONST(1) << 40)
#define BLOOM_MAX_HASHES		64

/*
 * Layouts: where a key's k bits go.  The layout is part of a filter's
 * identity: anything that carries a filter's bits outside this process
 * (a file saved at shutdown, a WAL record) must carry the layout too, and
 * must never apply bits of another layout, because the same key sets other
 * bits there.
 *
 *	CLASSIC		k positions anywhere in the m bits (bloomguard 1.0); no
 *				longer built, named so that it is never reused
 *	BLOCKED		the key's k positions inside one block of
 *				B = min(m, 512) bits, one 64-byte cache line (filter.c)
 */
#define BLOOM_LAYOUT_CLASSIC	1
#define BLOOM_LAYOUT_BLOCKED	2
#define BLOOM_LAYOUT			BLOOM_LAYOUT_BLOCKED	/* what we build */

/*
 * The version of the bit layout that saved filters and WAL records carry
 * (persist.c, wal.c): where a key's bits go, given its 128-bit hash.
 */
#define BLOOM_LAYOUT_VERSION	BLOOM_LAYOUT

#define BLOOM_BLOCK_BITS		512
#define BLOOM_BLOCK_WORDS		(BLOOM_BLOCK_BITS / 64)

/*
 * A 128-bit key hash: h1 picks the block, h2 the positions inside it, so
 * a key is hashed once however large k is.
 */
typedef struct BloomHash
{
	uint64		h1;
	uint64		h2;
} BloomHash;

/*
 * The filter: a 64-byte header followed by the bit array, so that with the
 * header on a cache line boundary every 512-bit block is one aligned cache
 * line.  Everything but n_added and bits_set is set by bloom_init() and
 * never changes; those two are maintained atomically by adders.
 */
typedef struct BloomFilter
{
	int32		nhashes;		/* k */
	uint16		layout;			/* BLOOM_LAYOUT_* */
	uint16		block_bits;		/* B: m when m <= 512, else 512 */
	uint64		nbits;			/* m: one block, or a whole number of blocks */
	uint64		nblocks;		/* m / B */
	uint64		capacity;		/* n the filter was sized for */
	double		error_rate;		/* target false-positive rate p */
	uint64		seed;			/* per-filter random hash key */
	pg_atomic_uint64 n_added;	/* adds, duplicates included */
	pg_atomic_uint64 bits_set;	/* bits that are one */
	pg_atomic_uint64 words[FLEXIBLE_ARRAY_MEMBER];
} BloomFilter;

/* 64-bit words of a filter's bit array. */
static inline uint64
bloom_nwords(uint64 nbits)
{
	return (nbits + 63) / 64;
}

extern bool bloom_size(double capacity, double error_rate,
					   uint64 *nbits, int *nhashes);
extern uint32 bloom_block_bits(uint64 nbits);
extern Size bloom_filter_bytes(uint64 nbits);
extern void bloom_init(BloomFilter *filter, uint64 capacity, double error_rate,
					   uint64 nbits, int nhashes, uint64 seed);

extern uint64 bloom_hash_bytes(const void *data, size_t len);
extern BloomHash bloom_hash_key(uint64 seed, const uint64 *colhashes, int ncols);
extern BloomHash bloom_hash_probe(uint64 seed, uint64 probe);

extern bool bloom_maybe(BloomFilter *filter, BloomHash hash);
extern void bloom_add_batch(BloomFilter *filter, const BloomHash *hashes, int n);
extern void bloom_local_add_batch(const BloomFilter *shape, uint64 *words,
								  const BloomHash *hashes, int n);
extern void bloom_merge(BloomFilter *filter, const uint64 *words, uint64 first,
						uint64 count, uint64 nadded);

extern double bloom_fill(uint64 nbits, uint64 bits_set);
extern double bloom_theoretical_fp(uint64 nbits, int nhashes, uint32 block_bits,
								   uint64 n_added);
extern double bloom_estimated_keys(uint64 nbits, int nhashes, uint32 block_bits,
								   uint64 bits_set, bool *full);

#endif							/* BLOOMGUARD_FILTER_H */
