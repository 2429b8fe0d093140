/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Hashed timer wheel (Varghese & Lauck scheme 6), one per lcore.
 *
 * An entry is intrusive (struct sk_timer embedded in its owner) and carries
 * an absolute expiry in ticks; it sits in slot (expire & mask). Add, cancel
 * and move are O(1). sk_timer_wheel_advance() visits the slots of the ticks
 * that passed and fires the entries whose expiry is due; entries due in a
 * later revolution are skipped. Work per advance is bounded by a budget of
 * visited entries: what is left is done at the next call. Entries are fired
 * at most once per advance even if the handler re-arms them (the handler
 * must re-arm strictly in the future).
 *
 * Not thread safe: a wheel belongs to one lcore. No allocation after init.
 */
#ifndef SK_TIMER_WHEEL_H
#define SK_TIMER_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

/** A timer entry; all-zero is a valid unarmed entry. */
struct sk_timer {
	struct sk_timer *next; /**< NULL when not armed */
	struct sk_timer *prev;
	uint64_t expire; /**< absolute tick */
	uint8_t kind;	 /**< owner type, for the caller's dispatch */
};

/** Handler of a fired entry; the entry is unarmed when it is called. */
typedef void (*sk_timer_fn)(void *ctx, struct sk_timer *t);

struct sk_timer_wheel {
	struct sk_timer *slots; /**< nslots list heads (circular lists) */
	uint32_t mask;		/**< nslots - 1 */
	uint64_t cur;		/**< next tick to visit; ticks < cur are done */
	uint64_t armed;		/**< number of armed entries */
};

/**
 * Initialise @w over @slots (an array of @nslots zeroed heads, owned by the
 * caller).
 * @return 0, or -EINVAL if nslots is not a power of two.
 */
int sk_timer_wheel_init(struct sk_timer_wheel *w, struct sk_timer *slots, uint32_t nslots);

/** True if @t is armed. */
static inline bool
sk_timer_armed(const struct sk_timer *t)
{
	return t->next != NULL;
}

/** Arm (or move) @t to fire at tick @expire; a past expiry fires at the next advance. */
void sk_timer_wheel_arm(struct sk_timer_wheel *w, struct sk_timer *t, uint64_t expire);

/** Disarm @t; no-op if not armed. */
void sk_timer_wheel_cancel(struct sk_timer_wheel *w, struct sk_timer *t);

/**
 * Fire every entry due at or before tick @now, visiting at most @budget
 * entries. @return the number of entries fired.
 */
uint32_t sk_timer_wheel_advance(struct sk_timer_wheel *w, uint64_t now, uint32_t budget,
				sk_timer_fn fn, void *ctx);

#endif /* SK_TIMER_WHEEL_H */
