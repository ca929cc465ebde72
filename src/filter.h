/*-------------------------------------------------------------------------
 *
 * filter.h
 *	  The pure Bloom filter core of bloomguard: sizing, hashing, bits.
 *
 * Nothing in filter.c takes a PostgreSQL lock, reads a catalog or
 * allocates memory.  The bit array lives wherever the caller puts it (in
 * bloomguard's case, a dynamic shared memory area); bits are set with
 * atomic OR so that concurrent adders never lose a bit, and read with
 * plain atomic reads.  Everything else here is arithmetic.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMGUARD_FILTER_H
#define BLOOMGUARD_FILTER_H

#include "port/atomics.h"

/*
 * The version of the bit layout: where a key's bits go, given its 128-bit
 * hash.  Saved filters and WAL records carry it; bump it whenever
 * bloom_add() and bloom_maybe() would place a key's bits differently.
 */
#define BLOOM_LAYOUT_VERSION	1

/* hash domains: real keys and probes never share an input */
#define BLOOM_DOMAIN_KEY		UINT64CONST(0)
#define BLOOM_DOMAIN_PROBE		UINT64CONST(1)

/* the largest filter we will size: 2^40 bits = 128 GiB */
#define BLOOM_MAX_BITS			(UINT64CONST(1) << 40)
#define BLOOM_MAX_HASHES		64

/*
 * A 128-bit key hash.  The k bit positions are derived from it by enhanced
 * double hashing, so a key is hashed once however large k is.
 */
typedef struct BloomHash
{
	uint64		h1;
	uint64		h2;
} BloomHash;

/*
 * The filter: a fixed header followed by the bit array.  capacity,
 * error_rate, nbits, nhashes and seed never change after bloom_init();
 * n_added and bits_set are maintained atomically by adders.
 */
typedef struct BloomFilter
{
	int32		nhashes;		/* k */
	uint64		nbits;			/* m: bit positions in use */
	uint64		nwords;			/* 64-bit words allocated, ceil(m / 64) */
	uint64		capacity;		/* n the filter was sized for */
	double		error_rate;		/* target false-positive rate p */
	uint64		seed;			/* per-filter random hash key */
	pg_atomic_uint64 n_added;	/* adds, duplicates included */
	pg_atomic_uint64 bits_set;	/* bits that are one */
	pg_atomic_uint64 words[FLEXIBLE_ARRAY_MEMBER];
} BloomFilter;

extern bool bloom_size(double capacity, double error_rate,
					   uint64 *nbits, int *nhashes);
extern Size bloom_filter_bytes(uint64 nbits);
extern void bloom_init(BloomFilter *filter, uint64 capacity, double error_rate,
					   uint64 nbits, int nhashes, uint64 seed);

extern uint64 bloom_hash_bytes(const void *data, size_t len);
extern BloomHash bloom_hash_key(uint64 seed, const uint64 *colhashes, int ncols);
extern BloomHash bloom_hash_probe(uint64 seed, uint64 probe);

extern int	bloom_add(BloomFilter *filter, BloomHash hash);
extern bool bloom_maybe(BloomFilter *filter, BloomHash hash);
extern void bloom_add_batch(BloomFilter *filter, const BloomHash *hashes, int n);
extern void bloom_local_add_batch(const BloomFilter *shape, uint64 *words,
								  const BloomHash *hashes, int n);
extern void bloom_merge(BloomFilter *filter, const uint64 *words, uint64 nadded);

extern double bloom_fill(uint64 nbits, uint64 bits_set);
extern double bloom_theoretical_fp(uint64 nbits, int nhashes, uint64 n_added);
extern double bloom_estimated_keys(uint64 nbits, int nhashes, uint64 bits_set,
								   bool *full);

#endif							/* BLOOMGUARD_FILTER_H */
