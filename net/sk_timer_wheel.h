/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Hashed timer wheel with two levels, one per lcore.
 *
 * An entry is intrusive (struct sk_timer embedded in its owner) and carries
 * an absolute expiry in ticks. The near level has nslots slots of one tick:
 * it holds exactly the entries due within one revolution (nslots ticks) of
 * the wheel's position, so every entry of the slot being visited is due.
 * Entries due later sit in the far level, SK_TIMER_FAR_SLOTS slots of one
 * revolution each; a far slot is moved down into the near level when the
 * wheel enters its revolution. So an entry is touched at most twice before
 * it fires, whatever the mix of deadlines, and no slot can hold not-yet-due
 * entries that a budget would have to skip (Varghese & Lauck scheme 7).
 * Only entries more than SK_TIMER_FAR_SLOTS revolutions ahead (over 17 min
 * with 4096 slots of 1 ms) are looked at once per far revolution.
 *
 * Add, cancel and move are O(1). sk_timer_wheel_advance() visits the slots
 * of the ticks that passed and fires the entries that are due. Its work is
 * bounded by a budget of entries fired or moved down: what is left is done
 * at the next call. Entries are fired at most once per advance even if the
 * handler re-arms them (the handler must re-arm strictly in the future).
 *
 * Not thread safe: a wheel belongs to one lcore. No allocation after init;
 * the wheel holds pointers into itself, so it must not be moved after init.
 */
#ifndef SK_TIMER_WHEEL_H
#define SK_TIMER_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

/** Far-level slots, each one revolution of the near level. Power of two. */
#define SK_TIMER_FAR_SLOTS 256

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
	struct sk_timer *slots; /**< near level: nslots list heads (circular lists) */
	uint32_t mask;		/**< nslots - 1 */
	uint32_t shift;		/**< log2(nslots): tick >> shift = revolution */
	uint64_t cur;		/**< next tick to visit; ticks < cur are done */
	uint64_t next_rev;	/**< first revolution whose far slot is not yet moved down */
	uint64_t armed;		/**< number of armed entries */
	struct sk_timer far[SK_TIMER_FAR_SLOTS]; /**< far level (list heads) */
};

/**
 * Initialise @w over @slots (an array of @nslots heads, owned by the caller,
 * which must outlive the wheel). The wheel must not move after this call.
 * @return 0, or -EINVAL if @w or @slots is NULL or nslots is not a power of
 * two.
 */
int sk_timer_wheel_init(struct sk_timer_wheel *w, struct sk_timer *slots, uint32_t nslots);

/** True if @t is armed. */
static inline bool
sk_timer_armed(const struct sk_timer *t)
{
	return t->next != NULL;
}

/** Arm (or move) @t to fire at tick @expire; a past expiry fires at the next advance. O(1). */
void sk_timer_wheel_arm(struct sk_timer_wheel *w, struct sk_timer *t, uint64_t expire);

/** Disarm @t; no-op if not armed. O(1). */
void sk_timer_wheel_cancel(struct sk_timer_wheel *w, struct sk_timer *t);

/**
 * Fire every entry due at or before tick @now, firing or moving down at most
 * @budget entries; the rest is done by the next call. After a gap longer
 * than one revolution (the first call, or an lcore that stalled) every
 * armed entry is re-filed once, outside the budget: O(nslots + armed).
 * @return the number of entries fired.
 */
uint32_t sk_timer_wheel_advance(struct sk_timer_wheel *w, uint64_t now, uint32_t budget,
				sk_timer_fn fn, void *ctx);

#endif /* SK_TIMER_WHEEL_H */
