/*-------------------------------------------------------------------------
 *
 * pool.c
 *	  The filter pool's allocator: first fit over one arena, addressed by
 *	  offsets.
 *
 * Filters live in one arena of shared memory (shmem.c), and a filter is
 * addressed by its offset in it (BgFilterPtr), which every process can turn
 * into an address.  The arena is carved by a first-fit allocator whose
 * free list is kept in offset order, in the free chunks themselves, and
 * coalesced on free; chunks are BG_POOL_ALIGN (64-byte, a cache line)
 * aligned and rounded.  Offset 0 is never handed out: it is
 * InvalidBgFilterPtr.
 *
 * This file only keeps the free list.  What may be allocated (the memory
 * caps), the count of bytes in use, and the lock are shmem.c's: the caller
 * of every function here holds the lock that protects the pool
 * (BgShared->lock, exclusively), and no function here takes a lock, raises
 * an error or reads a setting.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "bloomguard.h"

/* A free chunk of the pool, at its own start. */
typedef struct BgFreeChunk
{
	Size		size;
	BgFilterPtr next;			/* next free chunk, in offset order */
} BgFreeChunk;

/*
 * Make the arena of size bytes at base one free chunk: the whole of it but
 * its first BG_POOL_ALIGN bytes.
 */
void
bg_pool_init(BgPool *pool, char *base, Size size)
{
	BgFreeChunk *all = (BgFreeChunk *) (base + BG_POOL_ALIGN);

	pool->size = size;
	pool->free_list = BG_POOL_ALIGN;
	all->size = size - BG_POOL_ALIGN;
	all->next = InvalidBgFilterPtr;
}

/*
 * Give the chunk of size bytes (rounded) at p back to the pool, coalescing
 * it with free neighbours.
 */
void
bg_pool_give(BgPool *pool, char *base, BgFilterPtr p, Size size)
{
	BgFilterPtr prev = InvalidBgFilterPtr;
	BgFilterPtr next = pool->free_list;
	BgFreeChunk *chunk;

	Assert(BgFilterPtrIsValid(p) && size == BG_POOL_ROUND(size));
	while (BgFilterPtrIsValid(next) && next < p)
	{
		prev = next;
		next = ((BgFreeChunk *) (base + next))->next;
	}
	chunk = (BgFreeChunk *) (base + p);
	chunk->size = size;
	chunk->next = next;
	if (BgFilterPtrIsValid(next) && p + size == next)
	{
		BgFreeChunk *n = (BgFreeChunk *) (base + next);

		chunk->size += n->size;
		chunk->next = n->next;
	}
	if (BgFilterPtrIsValid(prev))
	{
		BgFreeChunk *pc = (BgFreeChunk *) (base + prev);

		if (prev + pc->size == p)
		{
			pc->size += chunk->size;
			pc->next = chunk->next;
		}
		else
			pc->next = p;
	}
	else
		pool->free_list = p;
}

/*
 * Take size bytes from the pool, or return InvalidBgFilterPtr.  From the
 * bottom: the start of the first free chunk that is big enough.  From the
 * top: the end of the last one.  size is rounded (BG_POOL_ROUND()).
 */
BgFilterPtr
bg_pool_take(BgPool *pool, char *base, Size size, bool from_top)
{
	BgFilterPtr prev = InvalidBgFilterPtr;
	BgFilterPtr cur;
	BgFilterPtr best = InvalidBgFilterPtr;
	BgFilterPtr best_prev = InvalidBgFilterPtr;
	BgFreeChunk *chunk;

	for (cur = pool->free_list; BgFilterPtrIsValid(cur);
		 prev = cur, cur = ((BgFreeChunk *) (base + cur))->next)
	{
		if (((BgFreeChunk *) (base + cur))->size < size)
			continue;
		best = cur;
		best_prev = prev;
		if (!from_top)
			break;
	}
	if (!BgFilterPtrIsValid(best))
		return InvalidBgFilterPtr;
	chunk = (BgFreeChunk *) (base + best);
	if (from_top && chunk->size > size)
	{
		/* the chunk keeps its start and shrinks */
		chunk->size -= size;
		return best + chunk->size;
	}
	if (chunk->size > size)
	{
		/* the rest stays free where the chunk ended */
		BgFreeChunk *rest = (BgFreeChunk *) (base + best + size);

		rest->size = chunk->size - size;
		rest->next = chunk->next;
		chunk->next = best + size;
	}
	if (BgFilterPtrIsValid(best_prev))
		((BgFreeChunk *) (base + best_prev))->next = chunk->next;
	else
		pool->free_list = chunk->next;
	return best;
}
