/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Orders as the dataplane hands them to the control plane: 64-bit ids made
 * without coordination, fixed-size records carried by one
 * single-producer/single-consumer rte_ring per lcore, and the status table
 * (one byte per order) through which the control plane tells the dataplane
 * what became of each order.
 *
 * Order id layout (most significant first):
 *
 *     | epoch: 30 bits | member: 5 bits | lcore: 6 bits | sequence: 23 bits |
 *
 * The epoch is the dataplane's start time in unix seconds, stored as the
 * seconds since SK_ORDER_EPOCH_BASE (2024-01-01 UTC; 30 bits last until
 * 2058). Each lcore starts at the run's epoch and, once its sequence is
 * used up, moves to an epoch of its own: max(now, its epoch + 1); a run
 * starts above every epoch found in the store. So ids never collide, within
 * a run or across runs. The member is the appliance's number in a cluster
 * (1..SK_ORDER_MEMBER_MAX; 0 standalone), so two members that start in the
 * same second never mint the same id. Lcore and the low bits of the
 * sequence index the status table. Ids sort by epoch, then member, then
 * lcore, then sequence; one lcore's ids grow in the order it makes them.
 * They are never 0.
 *
 * Thread-safety: the id helpers are pure. A status table may be read and
 * written from any thread (bytes are atomic); the lcore that owns a window
 * (struct sk_status_window) writes it and QUEUED/NONE into its slots, the
 * control plane moves orders on with compare-and-set. Rings are SP/SC: one
 * lcore enqueues, one control thread dequeues.
 */
#ifndef SK_ORDER_H
#define SK_ORDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sk_addr.h"
#include "sk_common.h"

struct rte_ring;

#define SK_ORDER_SEQ_BITS    23
#define SK_ORDER_LCORE_BITS  6
#define SK_ORDER_MEMBER_BITS 5
#define SK_ORDER_EPOCH_BITS  30
#define SK_ORDER_SEQ_MAX     (UINT32_C(1) << SK_ORDER_SEQ_BITS)
/** Largest member number an id carries (0: standalone). */
#define SK_ORDER_MEMBER_MAX ((1u << SK_ORDER_MEMBER_BITS) - 1)
/** Unix second of epoch field 0: 2024-01-01T00:00:00Z. */
#define SK_ORDER_EPOCH_BASE   UINT32_C(1704067200)
#define SK_ORDER_MEMBER_SHIFT (SK_ORDER_SEQ_BITS + SK_ORDER_LCORE_BITS)
#define SK_ORDER_EPOCH_SHIFT  (SK_ORDER_MEMBER_SHIFT + SK_ORDER_MEMBER_BITS)

_Static_assert(SK_ORDER_EPOCH_SHIFT + SK_ORDER_EPOCH_BITS == 64, "order id must fill 64 bits");

/** What became of an order. Stored as one byte. */
enum sk_order_status {
	SK_ORDER_NONE = 0,    /**< no such order (in this run) */
	SK_ORDER_QUEUED,      /**< sold, handed to the control plane, not yet on disk */
	SK_ORDER_CONFIRMED,   /**< durable in the order store */
	SK_ORDER_PAID,	      /**< payment received */
	SK_ORDER_CANCELLED,   /**< unpaid at its deadline; units returned */
	SK_ORDER_FAILED,      /**< could not be stored; units returned */
	SK_ORDER_REFUNDED,    /**< paid, then every unit refunded; units returned */
	SK_ORDER_STATUS_COUNT /**< number of states (not a state) */
};

/**
 * An order line: what the dataplane enqueues. A cart of n items produces n
 * records with the same id and line = 0..n-1. 64 bytes (one cache line; 48
 * before the client became an address of either family), no pointers.
 */
struct sk_order_rec {
	uint64_t id;	       /**< order id (shared by the lines of one cart) */
	uint64_t user;	       /**< buyer */
	uint64_t price;	       /**< unit price at sale time, minor units */
	int64_t time_ns;       /**< wall clock of the sale */
	uint32_t item;	       /**< item id */
	uint32_t returned;     /**< units returned so far (control plane's copy) */
	uint16_t qty;	       /**< units of this line */
	uint8_t line;	       /**< index of this line in the cart */
	uint8_t nlines;	       /**< lines in the cart, >= 1 */
	struct sk_addr client; /**< the buyer's address, IPv4 or IPv6; SK_ADDR_NONE if unknown */
	uint8_t reserved[3];   /**< zero */
};

_Static_assert(sizeof(struct sk_order_rec) == 64, "order record must stay 64 bytes");

/**
 * sk_order_cart_len - records of the cart starting at @p r, among the
 * @p left records from @p r on (@p left >= 1): the run of adjacent records
 * with r[0]'s id whose line is not 0. A new line 0 starts a new cart (a
 * replay of the same order within one batch). The one home of this rule:
 * the dataplane enqueues a cart as such a run, the control plane and the
 * store cut batches with it. Checks nothing else (see the store for a
 * cart's validity). Pure; thread-safe.
 * @return 1..@p left
 */
static inline size_t
sk_order_cart_len(const struct sk_order_rec *r, size_t left)
{
	size_t len = 1;

	while (len < left && r[len].id == r[0].id && r[len].line != 0)
		len++;
	return len;
}

/**
 * sk_order_epoch_valid - true if @p epoch (unix seconds) can be an id's
 * run: after SK_ORDER_EPOCH_BASE and less than 2^30 s after it.
 */
static inline bool
sk_order_epoch_valid(uint32_t epoch)
{
	return epoch > SK_ORDER_EPOCH_BASE &&
	       (uint64_t)epoch - SK_ORDER_EPOCH_BASE < (UINT64_C(1) << SK_ORDER_EPOCH_BITS);
}

/**
 * sk_order_id_make - build an id. Pure.
 * @param epoch   the run, unix seconds; sk_order_epoch_valid() must hold
 * @param member  the cluster member number, 0..SK_ORDER_MEMBER_MAX
 * @param lcore   the lcore, < 2^SK_ORDER_LCORE_BITS
 * @param seq     the lcore's sequence; bits above SK_ORDER_SEQ_BITS are dropped
 */
static inline uint64_t
sk_order_id_make(uint32_t epoch, unsigned member, unsigned lcore, uint32_t seq)
{
	return (uint64_t)(epoch - SK_ORDER_EPOCH_BASE) << SK_ORDER_EPOCH_SHIFT |
	       (uint64_t)member << SK_ORDER_MEMBER_SHIFT | (uint64_t)lcore << SK_ORDER_SEQ_BITS |
	       (seq & (SK_ORDER_SEQ_MAX - 1));
}

/** sk_order_id_epoch - the epoch of @p id (its run's start, or its lcore's roll), unix seconds. */
static inline uint32_t
sk_order_id_epoch(uint64_t id)
{
	return (uint32_t)(id >> SK_ORDER_EPOCH_SHIFT) + SK_ORDER_EPOCH_BASE;
}

/** sk_order_id_member - the cluster member number that made @p id (0: standalone). */
static inline unsigned
sk_order_id_member(uint64_t id)
{
	return (unsigned)(id >> SK_ORDER_MEMBER_SHIFT) & SK_ORDER_MEMBER_MAX;
}

/** sk_order_id_lcore - the lcore that made @p id. */
static inline unsigned
sk_order_id_lcore(uint64_t id)
{
	return (unsigned)(id >> SK_ORDER_SEQ_BITS) & ((1u << SK_ORDER_LCORE_BITS) - 1);
}

/** sk_order_id_seq - the lcore's sequence number of @p id. */
static inline uint32_t
sk_order_id_seq(uint64_t id)
{
	return (uint32_t)id & (SK_ORDER_SEQ_MAX - 1);
}

/** sk_order_status_name - "queued", "confirmed", ...; "none" for unknown values. */
const char *sk_order_status_name(unsigned status);

/**
 * sk_order_transition_ok - whether an order may move from @p from to @p to:
 * queued -> confirmed | failed | cancelled, confirmed -> paid | cancelled,
 * paid -> refunded (the last of its units refunded; a partial refund leaves
 * it paid). Everything else (including leaving cancelled, failed or
 * refunded) is refused.
 */
bool sk_order_transition_ok(unsigned from, unsigned to);

/**
 * The ids lcore @c l holds in the status table: those of its ids in
 * [oldest, next) whose epoch is that of @c oldest or of @c next (an lcore
 * that rolled to a new epoch still holds the last orders of the one before;
 * the ids of the epochs in between were never made). At most 2^bits of them,
 * one per slot: id -> slot (seq & (2^bits - 1)). Written by the lcore only
 * (sk_buy()), read by anyone. @c next is the id the lcore makes next: its
 * epoch is the lcore's current epoch.
 */
struct sk_status_window {
	_Atomic uint64_t oldest; /**< first id still in the table (raised before a reuse) */
	_Atomic uint64_t next;	 /**< first id not made yet */
	/**
	 * log2 of the sequences of one epoch: SK_ORDER_SEQ_BITS, set by
	 * sk_shm_init(). Tests may lower it (to >= the status bits) before the
	 * lcore's sk_buy_lcore_init() to cross epoch rolls quickly.
	 */
	uint32_t seq_bits;
} sk_cache_aligned;

/**
 * A view of the status table: per lcore, a ring of 2^bits bytes indexed by
 * seq & (2^bits - 1); a slot is reused once its order is settled (durable
 * or failed), so an order's status is in the table only while its slot is
 * not reused (sk_status_window). The bytes and windows live in shared
 * memory (sk_shm); the view is a per-process handle and owns nothing.
 */
struct sk_status {
	_Atomic uint8_t *base;		    /**< nlcores << bits bytes */
	_Atomic uint32_t *users;	    /**< nlcores << bits user tags, same index */
	const struct sk_status_window *win; /**< nlcores windows */
	uint32_t nlcores;
	uint32_t bits;	 /**< log2 of the bytes per lcore */
	uint32_t epoch;	 /**< the run's first epoch (every lcore's until it rolls) */
	uint32_t member; /**< only ids of this member number are in the table */
};

/**
 * sk_status_window_has - whether @p id (of the window's lcore and member)
 * is in [@p oldest, @p next), of the epoch of either end and a sequence
 * below 2^@p seq_bits. Pure.
 */
static inline bool
sk_status_window_has(uint64_t oldest, uint64_t next, uint32_t seq_bits, uint64_t id)
{
	uint32_t e = sk_order_id_epoch(id);

	return id >= oldest && id < next && (sk_order_id_seq(id) >> seq_bits) == 0 &&
	       (e == sk_order_id_epoch(oldest) || e == sk_order_id_epoch(next));
}

/**
 * sk_status_window_step - the id the window's lcore made after @p id (in
 * the window): the next sequence, or seq 0 of the next epoch (@p next's)
 * once the sequence is used up. Pure.
 */
static inline uint64_t
sk_status_window_step(uint64_t next, uint32_t seq_bits, uint64_t id)
{
	uint32_t seq = sk_order_id_seq(id) + 1;

	if ((seq >> seq_bits) == 0)
		return id + 1;
	return sk_order_id_make(sk_order_id_epoch(next), sk_order_id_member(id),
				sk_order_id_lcore(id), 0);
}

/**
 * sk_status_slot - the status byte of @p id, or NULL if @p id is not in the
 * table now: of another member, lcore out of range, of an earlier run or
 * epoch, not made yet, or its slot reused by a later order (then it is
 * settled: durable or failed, and the store has its state). A slot returned
 * may be reused right after; sk_status_get() and sk_status_move() check
 * again after their access.
 */
static inline _Atomic uint8_t *
sk_status_slot(const struct sk_status *st, uint64_t id)
{
	unsigned lc = sk_order_id_lcore(id);

	if (sk_order_id_member(id) != st->member || lc >= st->nlcores)
		return NULL;
	const struct sk_status_window *w = &st->win[lc];
	uint64_t oldest = atomic_load_explicit(&w->oldest, memory_order_acquire);
	uint64_t next = atomic_load_explicit(&w->next, memory_order_acquire);
	if (!sk_status_window_has(oldest, next, w->seq_bits, id))
		return NULL;
	return &st->base[((size_t)lc << st->bits) + (sk_order_id_seq(id) & ((1u << st->bits) - 1))];
}

/**
 * sk_status_still - whether @p id is still in the table (its slot not
 * reused since sk_status_slot() returned it). Call after an acquire access
 * of the slot: the lcore raises @c oldest before it writes a reused slot, so
 * a read that saw the new order's byte sees the raised @c oldest here.
 */
static inline bool
sk_status_still(const struct sk_status *st, uint64_t id)
{
	const struct sk_status_window *w = &st->win[sk_order_id_lcore(id)];

	return id >= atomic_load_explicit(&w->oldest, memory_order_acquire);
}

/** sk_status_get - status of @p id; SK_ORDER_NONE if not in the table now. */
static inline unsigned
sk_status_get(const struct sk_status *st, uint64_t id)
{
	_Atomic uint8_t *s = sk_status_slot(st, id);

	if (s == NULL)
		return SK_ORDER_NONE;
	unsigned v = atomic_load(s);
	return sk_status_still(st, id) ? v : SK_ORDER_NONE;
}

/**
 * sk_status_user_tag - the 32-bit tag of user @p user kept beside its
 * order's status byte (the two halves folded). Pure. Two users may share a
 * tag (one chance in 2^32 for a given pair): the tag says who may follow
 * an order, it is no proof of identity by itself.
 */
static inline uint32_t
sk_status_user_tag(uint64_t user)
{
	return (uint32_t)(user ^ (user >> 32));
}

/**
 * sk_status_get_user - status of @p id and, when it is not SK_ORDER_NONE,
 * the user tag its lcore wrote with it (*@p tag; untouched otherwise).
 * SK_ORDER_NONE if @p id is not in the table now (also: its slot was
 * reused during the call). The selling lcore writes the tag before it
 * publishes QUEUED, so a status read here always comes with its order's
 * tag. Thread-safe, lock-free.
 */
static inline unsigned
sk_status_get_user(const struct sk_status *st, uint64_t id, uint32_t *tag)
{
	_Atomic uint8_t *s = sk_status_slot(st, id);

	if (s == NULL)
		return SK_ORDER_NONE;
	unsigned v = atomic_load(s);
	/* acquire: pairs with the seller's release of the tag, which follows
	 * its raise of oldest - a reused slot's new tag fails the check below */
	uint32_t t = atomic_load_explicit(&st->users[s - st->base], memory_order_acquire);

	if (v == SK_ORDER_NONE || !sk_status_still(st, id))
		return SK_ORDER_NONE;
	*tag = t;
	return v;
}

/**
 * sk_status_move - compare-and-set @p id from @p from to @p to, only along
 * an allowed transition (sk_order_transition_ok()).
 * @return 0, -ENOENT if @p id is not in the table (also: its slot was reused
 *         during the call; a move made just before the reuse is lost with
 *         the slot, the store holds the order's state), -EINVAL if the
 *         transition is not allowed, -EALREADY if the order was not in @p from (another
 *         writer moved it first).
 */
int sk_status_move(const struct sk_status *st, uint64_t id, unsigned from, unsigned to);

/**
 * sk_order_ring_create - create lcore @p lcore's order ring ("sk_orders_<n>")
 * of @p count records (a power of two), SP/SC. Needs an initialised EAL.
 * @return the ring, or NULL with rte_errno set (EEXIST, ENOMEM, EINVAL).
 */
struct rte_ring *sk_order_ring_create(unsigned lcore, unsigned count, int socket);

/**
 * sk_order_ring_lookup - the ring of @p lcore made by another process
 * (control plane, DPDK secondary). @return the ring or NULL (rte_errno).
 */
struct rte_ring *sk_order_ring_lookup(unsigned lcore);

#endif /* SK_ORDER_H */
