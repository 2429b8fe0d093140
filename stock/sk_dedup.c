/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lock-free per-item user set with claim-once slots (see sk_dedup.h).
 */
#include <errno.h>

#include "sk_dedup.h"

/* Murmur3's 64-bit finaliser: user ids are often sequential. */
static inline uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/*
 * find_slot - the slot holding @user, claiming an empty one if @claim.
 * Returns NULL if the probe limit is hit (or the user is absent and
 * !claim).
 */
static struct sk_dedup_slot *
find_slot(const struct sk_dedup *d, uint64_t user, bool claim)
{
	uint64_t h = mix64(user);
	uint64_t probes = d->mask + 1 < SK_DEDUP_MAX_PROBE ? d->mask + 1 : SK_DEDUP_MAX_PROBE;

	for (uint64_t i = 0; i < probes; i++) {
		struct sk_dedup_slot *s = &d->slot[(h + i) & d->mask];
		uint64_t u = atomic_load(&s->user);

		if (u == user)
			return s;
		if (u != 0)
			continue;
		if (!claim)
			return NULL;
		if (atomic_compare_exchange_strong(&s->user, &u, user))
			return s;
		if (u == user) /* the same user won the race on another lcore */
			return s;
	}
	return NULL;
}

int
sk_dedup_acquire(const struct sk_dedup *d, uint64_t user, uint32_t qty, uint32_t limit,
		 struct sk_dedup_slot **slot, uint64_t *order)
{
	if (user == 0 || qty == 0)
		return -EINVAL;

	struct sk_dedup_slot *s = find_slot(d, user, true);
	if (s == NULL)
		return SK_DEDUP_FULL;
	*slot = s;

	uint32_t c = atomic_load(&s->ctl);
	for (int i = 0; i < 4; i++) {
		if (c & SK_DEDUP_CTL_PENDING)
			return SK_DEDUP_PENDING;
		if (c + (uint64_t)qty > limit) {
			*order = atomic_load(&s->order);
			return SK_DEDUP_LIMIT;
		}
		/* Only the slot's user races here; a failed CAS means that
		 * user's other request moved first: re-evaluate once more. */
		if (atomic_compare_exchange_strong(&s->ctl, &c, c | SK_DEDUP_CTL_PENDING))
			return SK_DEDUP_OK;
	}
	return SK_DEDUP_PENDING;
}

void
sk_dedup_commit(struct sk_dedup_slot *slot, uint32_t qty, uint64_t order)
{
	SK_DEBUG_ASSERT(atomic_load(&slot->ctl) & SK_DEDUP_CTL_PENDING);
	atomic_store(&slot->order, order);
	/* One add clears the pending bit (known set) and adds the units, so a
	 * concurrent sk_dedup_release() is never lost. */
	atomic_fetch_add(&slot->ctl, qty - SK_DEDUP_CTL_PENDING);
}

void
sk_dedup_abort(struct sk_dedup_slot *slot)
{
	SK_DEBUG_ASSERT(atomic_load(&slot->ctl) & SK_DEDUP_CTL_PENDING);
	atomic_fetch_sub(&slot->ctl, SK_DEDUP_CTL_PENDING);
}

int
sk_dedup_release(const struct sk_dedup *d, uint64_t user, uint32_t qty)
{
	struct sk_dedup_slot *s = find_slot(d, user, false);

	if (s == NULL)
		return -ENOENT;
	uint32_t c = atomic_load(&s->ctl);
	do {
		/* Allowed while a buy is pending: commit and abort are single
		 * atomic adds that compose with this CAS. */
		if ((c & ~SK_DEDUP_CTL_PENDING) < qty)
			return -ERANGE;
	} while (!atomic_compare_exchange_weak(&s->ctl, &c, c - qty));
	return 0;
}

int
sk_dedup_lookup(const struct sk_dedup *d, uint64_t user, uint32_t *units, uint64_t *order)
{
	struct sk_dedup_slot *s = find_slot(d, user, false);

	if (s == NULL)
		return -ENOENT;
	if (units != NULL)
		*units = atomic_load(&s->ctl) & ~SK_DEDUP_CTL_PENDING;
	if (order != NULL)
		*order = atomic_load(&s->order);
	return 0;
}

int
sk_dedup_restore(const struct sk_dedup *d, uint64_t user, uint32_t units, uint64_t order)
{
	if (user == 0)
		return -EINVAL;
	struct sk_dedup_slot *s = find_slot(d, user, true);
	if (s == NULL)
		return SK_DEDUP_FULL;
	atomic_store(&s->order, order);
	atomic_store(&s->ctl, units);
	return 0;
}
