/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_timer_wheel.c - the per-lcore hashed timer wheel (see sk_timer_wheel.h).
 *
 * Slots are circular doubly-linked lists with a sentinel head, so arm and
 * cancel are O(1). Advance splices a slot onto a local list and pops from
 * it, so handlers may arm any entry (including into the slot being visited)
 * without disturbing the walk.
 */
#include <errno.h>
#include <stddef.h>

#include "sk_common.h"
#include "sk_timer_wheel.h"

static inline void
list_init(struct sk_timer *h)
{
	h->next = h;
	h->prev = h;
}

static inline void
list_add_tail(struct sk_timer *h, struct sk_timer *t)
{
	t->prev = h->prev;
	t->next = h;
	h->prev->next = t;
	h->prev = t;
}

static inline void
list_del(struct sk_timer *t)
{
	t->prev->next = t->next;
	t->next->prev = t->prev;
	t->next = NULL;
	t->prev = NULL;
}

int
sk_timer_wheel_init(struct sk_timer_wheel *w, struct sk_timer *slots, uint32_t nslots)
{
	if (w == NULL || slots == NULL || !sk_is_pow2(nslots))
		return -EINVAL;
	w->slots = slots;
	w->mask = nslots - 1;
	w->cur = 0; /* the first advance sweeps every slot once (long-gap rule) */
	w->armed = 0;
	for (uint32_t i = 0; i < nslots; i++)
		list_init(&slots[i]);
	return 0;
}

void
sk_timer_wheel_arm(struct sk_timer_wheel *w, struct sk_timer *t, uint64_t expire)
{
	if (sk_timer_armed(t))
		list_del(t);
	else
		w->armed++;
	/* A past expiry goes to the slot visited next so it is not a revolution late. */
	if (expire < w->cur)
		expire = w->cur;
	t->expire = expire;
	list_add_tail(&w->slots[expire & w->mask], t);
}

void
sk_timer_wheel_cancel(struct sk_timer_wheel *w, struct sk_timer *t)
{
	if (!sk_timer_armed(t))
		return;
	list_del(t);
	w->armed--;
}

uint32_t
sk_timer_wheel_advance(struct sk_timer_wheel *w, uint64_t now, uint32_t budget, sk_timer_fn fn,
		       void *ctx)
{
	uint32_t fired = 0, visited = 0;
	uint64_t nslots = (uint64_t)w->mask + 1;

	/* After a long gap one revolution ending at now covers every slot. */
	if (now >= w->cur && now - w->cur >= nslots)
		w->cur = now - nslots + 1;

	while (w->cur <= now) {
		struct sk_timer *head = &w->slots[w->cur & w->mask];
		struct sk_timer local;

		if (w->armed == 0) {
			w->cur = now + 1;
			break;
		}
		if (head->next == head) {
			w->cur++;
			continue;
		}
		/* Splice the slot onto a local list. */
		local.next = head->next;
		local.prev = head->prev;
		local.next->prev = &local;
		local.prev->next = &local;
		list_init(head);

		while (local.next != &local) {
			struct sk_timer *t = local.next;

			if (visited >= budget) {
				/* Out of budget: put the rest back, resume here next call. */
				while (local.next != &local) {
					t = local.next;
					list_del(t);
					list_add_tail(head, t);
				}
				return fired;
			}
			visited++;
			list_del(t);
			if (t->expire <= now) {
				w->armed--;
				fired++;
				fn(ctx, t);
			} else {
				list_add_tail(head, t);
			}
		}
		w->cur++;
	}
	return fired;
}
