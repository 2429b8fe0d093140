/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_reserve.c - reservation sets: the block's layout, the writer's heap
 * (first fit over extents sorted by offset, coalesced on free; retired
 * extents wait for the lcores), insertion, growth and publication (see
 * sk_reserve.h). The lcores' side is inline in the header.
 */
#include "sk_reserve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct sk_reserve_zone) % SK_CACHE_LINE == 0, "the heap starts aligned");
_Static_assert(sizeof(struct sk_reserve_dirent) == 32, "two entries per cache line");

size_t
sk_reserve_size(uint64_t heap_bytes)
{
	size_t heap = (size_t)heap_bytes, total;

	if (heap_bytes > SIZE_MAX - SK_CACHE_LINE ||
	    !sk_add_size(sizeof(struct sk_reserve_zone), sk_align_up(heap, SK_CACHE_LINE), &total))
		return 0;
	return total;
}

struct sk_reserve_zone *
sk_reserve_init(void *mem, size_t size, uint32_t nlcores)
{
	struct sk_reserve_zone *z = mem;

	if (mem == NULL || ((uintptr_t)mem & (SK_CACHE_LINE - 1)) != 0 || size < sizeof(*z) ||
	    nlcores == 0 || nlcores > SK_RESERVE_LCORES_MAX)
		return NULL;
	memset(z, 0, sizeof(*z));
	z->magic = SK_RESERVE_MAGIC;
	z->version = SK_RESERVE_VERSION;
	z->nlcores = nlcores;
	z->size = size & ~(size_t)(SK_CACHE_LINE - 1);
	z->heap_off = sizeof(*z);
	z->heap_len = z->size - sizeof(*z);
	if (z->heap_len != 0) {
		z->free[0] = (struct sk_reserve_ext){.off = 0, .len = z->heap_len};
		z->nfree = 1;
	}
	for (uint32_t i = 0; i < nlcores; i++)
		atomic_store_explicit(&z->lcore[i].gen, 1, memory_order_relaxed);
	atomic_store_explicit(&z->gen, 1, memory_order_release);
	return z;
}

struct sk_reserve_zone *
sk_reserve_attach(void *mem, size_t size, char *err, size_t errlen)
{
	struct sk_reserve_zone *z = mem;

	if (mem == NULL || size < sizeof(*z)) {
		sk_set_err(err, errlen, "reserve: the block is too small");
		return NULL;
	}
	if (z->magic != SK_RESERVE_MAGIC || z->version != SK_RESERVE_VERSION) {
		sk_set_err(err, errlen, "reserve: not a reservation block of version %u",
			   SK_RESERVE_VERSION);
		return NULL;
	}
	if (z->size > size || z->nlcores == 0 || z->nlcores > SK_RESERVE_LCORES_MAX ||
	    z->heap_off != sizeof(*z) || z->heap_off + z->heap_len > z->size ||
	    z->nfree > SK_RESERVE_EXTENTS || z->nretired > SK_RESERVE_EXTENTS) {
		sk_set_err(err, errlen, "reserve: the block's layout does not fit its memory");
		return NULL;
	}
	return z;
}

/* ------------------------------------------------------------ the heap */

/* heap_alloc - @len bytes (a multiple of 64) by first fit: their offset in
 * the heap, or UINT64_MAX when no free extent is large enough. */
static uint64_t
heap_alloc(struct sk_reserve_zone *z, uint64_t len)
{
	for (uint32_t i = 0; i < z->nfree; i++) {
		struct sk_reserve_ext *e = &z->free[i];
		uint64_t off = e->off;

		if (e->len < len)
			continue;
		e->off += len;
		e->len -= len;
		if (e->len == 0) {
			memmove(e, e + 1, (z->nfree - i - 1) * sizeof(*e));
			z->nfree--;
		}
		return off;
	}
	return UINT64_MAX;
}

/* heap_free - give back [@off, @off + @len), merged with its neighbours.
 * Room is certain: live tables and free extents alternate, and there are
 * fewer tables than SK_RESERVE_EXTENTS - 1. */
static void
heap_free(struct sk_reserve_zone *z, uint64_t off, uint64_t len)
{
	uint32_t i = 0;

	while (i < z->nfree && z->free[i].off < off)
		i++;
	bool left = i > 0 && z->free[i - 1].off + z->free[i - 1].len == off;
	bool right = i < z->nfree && off + len == z->free[i].off;

	if (left && right) {
		z->free[i - 1].len += len + z->free[i].len;
		memmove(&z->free[i], &z->free[i + 1], (z->nfree - i - 1) * sizeof(z->free[0]));
		z->nfree--;
	} else if (left) {
		z->free[i - 1].len += len;
	} else if (right) {
		z->free[i].off = off;
		z->free[i].len += len;
	} else {
		SK_ASSERT(z->nfree < SK_RESERVE_EXTENTS);
		memmove(&z->free[i + 1], &z->free[i], (z->nfree - i) * sizeof(z->free[0]));
		z->free[i] = (struct sk_reserve_ext){.off = off, .len = len};
		z->nfree++;
	}
}

bool
sk_reserve_quiescent(const struct sk_reserve_zone *z)
{
	struct sk_reserve_zone *w = (struct sk_reserve_zone *)z;
	uint64_t g = atomic_load_explicit(&w->gen, memory_order_relaxed);

	for (uint32_t i = 0; i < z->nlcores; i++)
		if (atomic_load_explicit(&w->lcore[i].gen, memory_order_acquire) < g)
			return false;
	return true;
}

uint64_t
sk_reserve_reclaim(struct sk_reserve_zone *z)
{
	uint64_t low = UINT64_MAX, left = 0;
	uint32_t keep = 0;

	for (uint32_t i = 0; i < z->nlcores; i++) {
		uint64_t g = atomic_load_explicit(&z->lcore[i].gen, memory_order_acquire);
		low = g < low ? g : low;
	}
	for (uint32_t i = 0; i < z->nretired; i++) {
		struct sk_reserve_ext e = z->retired[i];

		if (e.gen <= low) {
			heap_free(z, e.off, e.len);
		} else {
			z->retired[keep++] = e;
			left += e.len;
		}
	}
	z->nretired = keep;
	return left;
}

uint64_t
sk_reserve_free_bytes(const struct sk_reserve_zone *z)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < z->nfree; i++)
		n += z->free[i].len;
	return n;
}

/* ------------------------------------------------------------ tables */

static _Atomic uint64_t *
slots_at(struct sk_reserve_zone *z, uint64_t tab)
{
	return (_Atomic uint64_t *)((char *)z + z->heap_off + (tab >> 32) * 64);
}

/* slot_put - @user into the table (@slots slots, under half full): true if
 * it was new. One atomic store: a reader sees the slot empty or whole. */
static bool
slot_put(_Atomic uint64_t *s, uint64_t slots, uint64_t user)
{
	uint64_t i = (uint64_t)(((unsigned __int128)sk_reserve_mix(user) * slots) >> 64);

	for (uint64_t n = 0; n < slots; n++) {
		uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v == user)
			return false;
		if (v == 0) {
			atomic_store_explicit(&s[i], user, memory_order_relaxed);
			return true;
		}
		if (++i == slots)
			i = 0;
	}
	SK_ASSERT(!"reserve: table full");
	return false;
}

/* dir_claim - item @item's entry, claimed if new; NULL when the directory
 * is full (SK_RESERVE_ITEMS_MAX items). */
static struct sk_reserve_dirent *
dir_claim(struct sk_reserve_zone *z, uint32_t item)
{
	uint64_t key = (uint64_t)item + 1;
	uint32_t i = (uint32_t)sk_reserve_mix(key) & (SK_RESERVE_DIR - 1);

	for (uint32_t probes = 0; probes < SK_RESERVE_DIR; probes++) {
		struct sk_reserve_dirent *d = &z->dir[i];
		uint64_t k = atomic_load_explicit(&d->key, memory_order_relaxed);
		if (k == key)
			return d;
		if (k == 0) {
			if (z->items >= SK_RESERVE_ITEMS_MAX)
				return NULL;
			z->items++;
			atomic_store_explicit(&d->tab, 0, memory_order_relaxed);
			d->users = 0;
			atomic_store_explicit(&d->key, key, memory_order_release);
			return d;
		}
		i = (i + 1) & (SK_RESERVE_DIR - 1);
	}
	return NULL;
}

/* table_new - a zeroed table of @slots slots: its descriptor, or 0 with
 * -ENOSPC / -EAGAIN (room only once the lcores move on) in *@rc. */
static uint64_t
table_new(struct sk_reserve_zone *z, uint64_t slots, int *rc)
{
	uint64_t len = slots * 8, off;

	if (z->nretired >= SK_RESERVE_EXTENTS - 1)
		sk_reserve_reclaim(z);
	if (z->nretired >= SK_RESERVE_EXTENTS - 1) {
		*rc = -EAGAIN;
		return 0;
	}
	off = heap_alloc(z, len);
	if (off == UINT64_MAX && z->nretired != 0) {
		sk_reserve_reclaim(z);
		off = heap_alloc(z, len);
	}
	if (off == UINT64_MAX) {
		*rc = z->nretired != 0 ? -EAGAIN : -ENOSPC;
		return 0;
	}
	uint64_t tab = (off / 64) << 32 | slots;
	memset((void *)slots_at(z, tab), 0, len);
	return tab;
}

/* publish - make @tab (0: none) @d's table, raise the generation and
 * retire the old table's space with it. Room in retired[]: table_new(). */
static void
publish(struct sk_reserve_zone *z, struct sk_reserve_dirent *d, uint64_t tab, uint64_t users)
{
	uint64_t old = atomic_load_explicit(&d->tab, memory_order_relaxed);
	uint64_t g = atomic_load_explicit(&z->gen, memory_order_relaxed) + 1;

	atomic_store_explicit(&d->tab, tab, memory_order_release);
	d->users = users;
	atomic_store_explicit(&z->gen, g, memory_order_release);
	if (old != 0)
		z->retired[z->nretired++] = (struct sk_reserve_ext){
			.off = (old >> 32) * 64, .len = (old & 0xffffffffu) * 8, .gen = g};
}

/* slots_for - slots of a table holding @users at 1/@inv_load full, a whole
 * number of cache lines; 0 if too large. */
static uint64_t
slots_for(uint64_t users, uint64_t inv_load)
{
	if (users > SK_RESERVE_SLOTS_MAX / inv_load)
		return 0;
	uint64_t s = sk_align_up(users * inv_load, 8);
	if (s < SK_RESERVE_SLOTS_MIN)
		s = SK_RESERVE_SLOTS_MIN;
	return s <= SK_RESERVE_SLOTS_MAX ? s : 0;
}

static bool
ids_ok(const uint64_t *users, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (users[i] == 0)
			return false;
	return n <= SK_RESERVE_SLOTS_MAX / 3;
}

int
sk_reserve_add(struct sk_reserve_zone *z, uint32_t item, const uint64_t *users, size_t n,
	       uint64_t *added)
{
	struct sk_reserve_dirent *d;
	uint64_t tab, slots, fresh = 0, got = 0;
	int rc = 0;

	if (added != NULL)
		*added = 0;
	if (!ids_ok(users, n))
		return -EINVAL;
	if (n == 0)
		return 0;
	if ((d = dir_claim(z, item)) == NULL)
		return -ENOSPC;
	tab = atomic_load_explicit(&d->tab, memory_order_relaxed);
	slots = tab & 0xffffffffu;
	/* Ids not in the table yet (an upper bound: repeats within @users). */
	for (size_t i = 0; i < n; i++)
		fresh += tab == 0 || !sk_reserve_has(z, item, users[i]);
	if (tab != 0 && (d->users + fresh) * 2 <= slots) {
		_Atomic uint64_t *s = slots_at(z, tab);
		for (size_t i = 0; i < n; i++)
			got += slot_put(s, slots, users[i]);
		d->users += got;
	} else {
		/* Rebuilt beside the old table at a third full. */
		uint64_t ns = slots_for(d->users + fresh, 3), nt;
		if (ns == 0)
			return -EINVAL;
		if ((nt = table_new(z, ns, &rc)) == 0)
			return rc;
		_Atomic uint64_t *s = slots_at(z, nt);
		if (tab != 0) {
			const _Atomic uint64_t *o = slots_at(z, tab);
			for (uint64_t i = 0; i < slots; i++) {
				uint64_t v = atomic_load_explicit(&o[i], memory_order_relaxed);
				if (v != 0)
					slot_put(s, ns, v);
			}
		}
		for (size_t i = 0; i < n; i++)
			got += slot_put(s, ns, users[i]);
		publish(z, d, nt, d->users + got);
	}
	if (added != NULL)
		*added = got;
	return 0;
}

int
sk_reserve_load(struct sk_reserve_zone *z, uint32_t item, const uint64_t *users, size_t n)
{
	struct sk_reserve_dirent *d;
	uint64_t ns, nt = 0, got = 0;
	int rc = 0;

	if (!ids_ok(users, n))
		return -EINVAL;
	if (n == 0 && sk_reserve_dir_find(z, item) == NULL)
		return 0;
	if ((d = dir_claim(z, item)) == NULL)
		return -ENOSPC;
	if (n != 0) {
		if ((ns = slots_for(n, 2)) == 0)
			return -EINVAL;
		if ((nt = table_new(z, ns, &rc)) == 0)
			return rc;
		_Atomic uint64_t *s = slots_at(z, nt);
		for (size_t i = 0; i < n; i++)
			got += slot_put(s, ns, users[i]);
	} else if (z->nretired >= SK_RESERVE_EXTENTS - 1 &&
		   (sk_reserve_reclaim(z), z->nretired >= SK_RESERVE_EXTENTS - 1)) {
		return -EAGAIN;
	}
	publish(z, d, nt, got);
	return 0;
}

uint64_t
sk_reserve_count(const struct sk_reserve_zone *z, uint32_t item)
{
	const struct sk_reserve_dirent *d = sk_reserve_dir_find(z, item);

	return d != NULL ? d->users : 0;
}

uint64_t
sk_reserve_table_bytes(const struct sk_reserve_zone *z, uint32_t item)
{
	const struct sk_reserve_dirent *d = sk_reserve_dir_find(z, item);
	uint64_t t = d != NULL ? atomic_load_explicit(&((struct sk_reserve_dirent *)d)->tab,
						      memory_order_relaxed)
			       : 0;

	return (t & 0xffffffffu) * 8;
}

/* ------------------------------------------------------------ recovery */

static int
ext_cmp(const void *a, const void *b)
{
	const struct sk_reserve_ext *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

void
sk_reserve_recover(struct sk_reserve_zone *z)
{
	static struct sk_reserve_ext live[SK_RESERVE_DIR]; /* the writer's: one at a time */
	uint64_t g = atomic_load_explicit(&z->gen, memory_order_relaxed) + 1, at = 0;
	uint32_t n = 0;

	z->items = 0;
	for (uint32_t i = 0; i < SK_RESERVE_DIR; i++) {
		struct sk_reserve_dirent *d = &z->dir[i];
		uint64_t t = atomic_load_explicit(&d->tab, memory_order_relaxed), users = 0;

		if (atomic_load_explicit(&d->key, memory_order_relaxed) == 0)
			continue;
		z->items++;
		if (t != 0) {
			const _Atomic uint64_t *s = slots_at(z, t);
			for (uint64_t j = 0; j < (t & 0xffffffffu); j++)
				users += atomic_load_explicit(&s[j], memory_order_relaxed) != 0;
			live[n++] = (struct sk_reserve_ext){.off = (t >> 32) * 64,
							    .len = (t & 0xffffffffu) * 8};
		}
		d->users = users;
	}
	qsort(live, n, sizeof(live[0]), ext_cmp);
	z->nfree = z->nretired = 0;
	for (uint32_t i = 0; i <= n; i++) {
		uint64_t end = i < n ? live[i].off : z->heap_len;

		if (end > at)
			z->retired[z->nretired++] =
				(struct sk_reserve_ext){.off = at, .len = end - at, .gen = g};
		if (i < n)
			at = live[i].off + live[i].len;
	}
	atomic_store_explicit(&z->gen, g, memory_order_release);
}
