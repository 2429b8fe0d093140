/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_timer_wheel.c - the per-lcore two-level timer wheel (see
 * sk_timer_wheel.h).
 *
 * Slots are circular doubly-linked lists with a sentinel head, so arm and
 * cancel are O(1). The near level holds the entries due before cur + nslots,
 * each in the slot of its own tick; the far level holds the later ones, in
 * the slot of their revolution (tick >> shift). When the wheel enters
 * revolution r, far slot r is moved down before any near slot of r is
 * visited; its entries of later far revolutions stay. Advance splices a slot
 * onto a local list and pops from it, so handlers may arm any entry
 * (including into the slot being visited) without disturbing the walk.
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

static inline bool
list_empty(const struct sk_timer *h)
{
	return h->next == h;
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

/* list_splice - move every entry of @from to the tail of @to; @from becomes empty. */
static inline void
list_splice(struct sk_timer *to, struct sk_timer *from)
{
	if (list_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	list_init(from);
}

int
sk_timer_wheel_init(struct sk_timer_wheel *w, struct sk_timer *slots, uint32_t nslots)
{
	if (w == NULL || slots == NULL || !sk_is_pow2(nslots))
		return -EINVAL;
	w->slots = slots;
	w->mask = nslots - 1;
	w->shift = (uint32_t)__builtin_ctz(nslots);
	w->cur = 0; /* the first advance re-files every entry once (long-gap rule) */
	w->next_rev = 0;
	w->armed = 0;
	for (uint32_t i = 0; i < nslots; i++)
		list_init(&slots[i]);
	for (uint32_t i = 0; i < SK_TIMER_FAR_SLOTS; i++)
		list_init(&w->far[i]);
	return 0;
}

/* file - put @t (unlinked, expire >= cur) on the level its expiry belongs to. */
static inline void
file(struct sk_timer_wheel *w, struct sk_timer *t)
{
	if (t->expire - w->cur <= w->mask)
		list_add_tail(&w->slots[t->expire & w->mask], t);
	else
		list_add_tail(&w->far[(t->expire >> w->shift) & (SK_TIMER_FAR_SLOTS - 1)], t);
}

void
sk_timer_wheel_arm(struct sk_timer_wheel *w, struct sk_timer *t, uint64_t expire)
{
	if (sk_timer_armed(t))
		list_del(t);
	else
		w->armed++;
	/* A past expiry goes to the slot visited next so it is not a revolution late. */
	t->expire = expire < w->cur ? w->cur : expire;
	file(w, t);
}

void
sk_timer_wheel_cancel(struct sk_timer_wheel *w, struct sk_timer *t)
{
	if (!sk_timer_armed(t))
		return;
	list_del(t);
	w->armed--;
}

/*
 * rebase - after a gap of a revolution or more: move the wheel to @now and
 * file every entry again (a due one in now's slot). O(nslots + armed).
 */
static void
rebase(struct sk_timer_wheel *w, uint64_t now)
{
	struct sk_timer all;

	list_init(&all);
	for (uint32_t i = 0; i <= w->mask; i++)
		list_splice(&all, &w->slots[i]);
	for (uint32_t i = 0; i < SK_TIMER_FAR_SLOTS; i++)
		list_splice(&all, &w->far[i]);
	w->cur = now;
	w->next_rev = (now >> w->shift) + 1; /* filing below puts this revolution near */
	while (!list_empty(&all)) {
		struct sk_timer *t = all.next;

		list_del(t);
		if (t->expire < now)
			t->expire = now;
		file(w, t);
	}
}

/*
 * move_down - move the entries of far slot @rev that belong to revolution
 * @rev into the near level; later revolutions' entries stay. Counts moves in
 * *@spent; false if the budget ran out (the rest stays for the next call).
 */
static bool
move_down(struct sk_timer_wheel *w, uint64_t rev, uint32_t budget, uint32_t *spent)
{
	struct sk_timer *head = &w->far[rev & (SK_TIMER_FAR_SLOTS - 1)];
	struct sk_timer local;

	list_init(&local);
	list_splice(&local, head);
	while (!list_empty(&local)) {
		struct sk_timer *t = local.next;

		if (*spent >= budget) {
			list_splice(head, &local);
			return false;
		}
		list_del(t);
		if ((t->expire >> w->shift) <= rev) {
			(*spent)++;
			if (t->expire < w->cur)
				t->expire = w->cur;
			list_add_tail(&w->slots[t->expire & w->mask], t);
		} else {
			list_add_tail(head, t); /* a later far revolution */
		}
	}
	return true;
}

uint32_t
sk_timer_wheel_advance(struct sk_timer_wheel *w, uint64_t now, uint32_t budget, sk_timer_fn fn,
		       void *ctx)
{
	uint32_t fired = 0, spent = 0;

	if (now >= w->cur && now - w->cur > w->mask)
		rebase(w, now);

	while (w->cur <= now) {
		uint64_t rev = w->cur >> w->shift;
		struct sk_timer *head = &w->slots[w->cur & w->mask];
		struct sk_timer local;

		if (w->armed == 0) {
			w->cur = now + 1;
			w->next_rev = (w->cur >> w->shift) + 1;
			break;
		}
		if (rev >= w->next_rev) {
			SK_DEBUG_ASSERT(rev == w->next_rev);
			if (!move_down(w, rev, budget, &spent))
				return fired;
			w->next_rev = rev + 1;
		}
		if (list_empty(head)) {
			w->cur++;
			continue;
		}
		/* Splice the slot onto a local list: its entries are all due. */
		list_init(&local);
		list_splice(&local, head);
		while (!list_empty(&local)) {
			struct sk_timer *t = local.next;

			if (spent >= budget) {
				/* Out of budget: put the rest back, resume here next call. */
				list_splice(head, &local);
				return fired;
			}
			spent++;
			list_del(t);
			if (t->expire <= now) {
				w->armed--;
				fired++;
				fn(ctx, t);
			} else {
				file(w,
				     t); /* not due: only if re-armed into this very tick's slot */
			}
		}
		w->cur++;
	}
	return fired;
}
