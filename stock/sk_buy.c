/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buy and cancel: the composition of dedup, stock, ids, status and rings.
 */
#include <errno.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_buy.h"

static const char *const buy_names[SK_BUY_STATUS_MAX] = {
	[SK_BUY_OK] = "ok",	      [SK_BUY_DUPLICATE] = "duplicate",
	[SK_BUY_LIMIT] = "limit",     [SK_BUY_SOLD_OUT] = "sold_out",
	[SK_BUY_SHORT] = "short",     [SK_BUY_BUSY] = "busy",
	[SK_BUY_FULL] = "full",	      [SK_BUY_CLOSED] = "closed",
	[SK_BUY_INVALID] = "invalid", [SK_BUY_PAUSED] = "paused",
};

const char *
sk_buy_status_name(unsigned status)
{
	return status < SK_BUY_STATUS_MAX ? buy_names[status] : "unknown";
}

int
sk_buy_lcore_init(struct sk_buy_lcore *lc, struct sk_shm *shm, unsigned lcore,
		  struct rte_ring *ring)
{
	if (lcore >= shm->nlcores || ring == NULL || shm->win[lcore].seq_bits < shm->status_bits ||
	    shm->win[lcore].seq_bits > SK_ORDER_SEQ_BITS)
		return -EINVAL;
	*lc = (struct sk_buy_lcore){
		.shm = shm,
		.ring = ring,
		.win = &shm->win[lcore],
		.settled = &shm->progress[lcore].settled,
		.lcore = lcore,
		.seq_shift = shm->win[lcore].seq_bits,
		.epochs = {shm->epoch, shm->epoch},
		/* seq 0 of the first epoch stays unused (sk_shm_init()'s windows) */
		.next_pos = 1,
		.oldest_pos = 1,
	};
	sk_shm_status(shm, &lc->status);
	return 0;
}

/* id_at - the id of position @pos (gen << seq_shift | seq). */
static inline uint64_t
id_at(const struct sk_buy_lcore *lc, uint64_t pos)
{
	return sk_order_id_make(lc->epochs[(pos >> lc->seq_shift) & 1], lc->status.member,
				lc->lcore, (uint32_t)(pos & ((UINT64_C(1) << lc->seq_shift) - 1)));
}

/* seq_end - whether @pos is the last sequence of its epoch. */
static inline bool
seq_end(const struct sk_buy_lcore *lc, uint64_t pos)
{
	return ((pos + 1) & ((UINT64_C(1) << lc->seq_shift) - 1)) == 0;
}

/*
 * after_id - the id the lcore makes after the one at next_pos: the next
 * sequence, or seq 0 of next_epoch once the sequence is used up.
 */
static inline uint64_t
after_id(const struct sk_buy_lcore *lc)
{
	if (!seq_end(lc, lc->next_pos))
		return id_at(lc, lc->next_pos + 1);
	return sk_order_id_make(lc->next_epoch, lc->status.member, lc->lcore, 0);
}

/*
 * pick_epoch - before the last order of an epoch: choose the next epoch,
 * max(now, epoch + 1). False if none is left (2058).
 */
static bool
pick_epoch(struct sk_buy_lcore *lc, int64_t now_ns)
{
	uint32_t cur = lc->epochs[(lc->next_pos >> lc->seq_shift) & 1];
	uint32_t now = now_ns > 0 ? (uint32_t)(now_ns / 1000000000) : 0;
	uint32_t e = now > cur ? now : cur + 1;

	if (!sk_order_epoch_valid(e))
		return false;
	lc->next_epoch = e;
	return true;
}

/* advance - the order at next_pos was made: move on (win->next is published). */
static void
advance(struct sk_buy_lcore *lc)
{
	if (seq_end(lc, lc->next_pos)) {
		lc->epochs[((lc->next_pos >> lc->seq_shift) + 1) & 1] = lc->next_epoch;
		lc->next_epoch = 0;
	}
	lc->next_pos++;
}

static void
sort_lines(struct sk_buy_line *l, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && l[j - 1].item->id > l[j].item->id; j--) {
			struct sk_buy_line t = l[j];
			l[j] = l[j - 1];
			l[j - 1] = t;
		}
}

static enum sk_buy_status
from_dedup(int rc, const struct sk_item *it, uint32_t qty)
{
	switch (rc) {
	case SK_DEDUP_LIMIT:
		/* A limit-1 item bought once: the client is retrying a win. */
		return it->per_user_limit == 1 && qty == 1 ? SK_BUY_DUPLICATE : SK_BUY_LIMIT;
	case SK_DEDUP_PENDING:
		return SK_BUY_BUSY;
	case SK_DEDUP_FULL:
		return SK_BUY_FULL;
	default:
		return SK_BUY_INVALID;
	}
}

static enum sk_buy_status
from_stock(int rc)
{
	switch (rc) {
	case SK_STOCK_SOLD_OUT:
		return SK_BUY_SOLD_OUT;
	case SK_STOCK_SHORT:
		return SK_BUY_SHORT;
	case SK_STOCK_BUSY:
		return SK_BUY_BUSY;
	default:
		return SK_BUY_INVALID;
	}
}

static void
rollback(struct sk_buy_lcore *lc, struct sk_buy_line *lines, struct sk_dedup_slot **slots,
	 unsigned done, unsigned reserved)
{
	for (unsigned i = 0; i < done; i++)
		sk_stock_untake(lines[i].item, lc->lcore, lines[i].qty);
	for (unsigned i = 0; i < reserved; i++)
		sk_dedup_abort(slots[i]);
}

static enum sk_buy_status
buy(struct sk_buy_lcore *lc, const struct sk_buy_req *req, struct sk_buy_line *lines, unsigned n,
    uint64_t *order, unsigned *at)
{
	struct sk_dedup_slot *slots[SK_BUY_MAX_LINES];
	struct sk_order_rec recs[SK_BUY_MAX_LINES];
	unsigned i;
	int rc;

	*order = 0;
	*at = n;
	if (sk_unlikely(n == 0 || n > SK_BUY_MAX_LINES || req->user == 0))
		return SK_BUY_INVALID;
	for (i = 0; i < n; i++) {
		*at = i;
		if (sk_stock_is_sold_out(lines[i].item))
			return SK_BUY_SOLD_OUT;
		if (lines[i].qty == 0 || lines[i].qty > SK_STOCK_MAX_QTY)
			return SK_BUY_INVALID;
		uint32_t state = atomic_load_explicit(&lines[i].item->state, memory_order_relaxed);
		if (sk_unlikely(state != SK_ITEM_ACTIVE))
			return state == SK_ITEM_PAUSED ? SK_BUY_PAUSED : SK_BUY_CLOSED;
	}
	*at = n;
	if (sk_unlikely(seq_end(lc, lc->next_pos)) && lc->next_epoch == 0 &&
	    !pick_epoch(lc, req->now_ns))
		return SK_BUY_FULL;
	/* The slot's order must be settled before the slot is reused. */
	bool reuse = lc->next_pos - lc->oldest_pos == (UINT64_C(1) << lc->status.bits);
	if (reuse &&
	    id_at(lc, lc->oldest_pos) >= atomic_load_explicit(lc->settled, memory_order_acquire))
		return SK_BUY_BUSY;
	if (n > 1) {
		sort_lines(lines, n);
		for (i = 1; i < n; i++)
			if (lines[i].item == lines[i - 1].item) {
				*at = i;
				return SK_BUY_INVALID;
			}
	}

	for (i = 0; i < n; i++) {
		struct sk_item *it = lines[i].item;
		struct sk_dedup d;

		*at = i;
		sk_shm_dedup(lc->shm, it, &d);
		rc = sk_dedup_acquire(&d, req->user, lines[i].qty, it->per_user_limit, &slots[i],
				      order);
		if (rc != SK_DEDUP_OK) {
			rollback(lc, lines, slots, i, i);
			return from_dedup(rc, it, lines[i].qty);
		}
		rc = sk_stock_take(it, lc->lcore, lines[i].qty);
		if (rc != SK_STOCK_OK) {
			rollback(lc, lines, slots, i, i + 1);
			*order = 0;
			return from_stock(rc);
		}
	}

	*at = n;
	uint64_t id = id_at(lc, lc->next_pos);
	for (i = 0; i < n; i++)
		recs[i] = (struct sk_order_rec){
			.id = id,
			.user = req->user,
			.price = lines[i].item->price,
			.time_ns = req->now_ns,
			.item = lines[i].item->id,
			.client = req->client,
			.qty = (uint16_t)lines[i].qty,
			.line = (uint8_t)i,
			.nlines = (uint8_t)n,
		};

	/* Out of the window before the slot is written (sk_status_still()). */
	if (reuse) {
		lc->oldest_pos++;
		atomic_store_explicit(&lc->win->oldest, id_at(lc, lc->oldest_pos),
				      memory_order_release);
	}
	/* QUEUED before the enqueue: the control plane may confirm at once. */
	size_t slot = ((size_t)lc->lcore << lc->status.bits) +
		      (lc->next_pos & ((UINT64_C(1) << lc->status.bits) - 1));
	_Atomic uint8_t *st = &lc->status.base[slot];
	/* The owner's tag before the status that publishes it (SSE followers);
	 * release: a reader that sees the new tag sees the raised oldest too,
	 * so an old status never passes with the new owner's tag. */
	atomic_store_explicit(&lc->status.users[slot], sk_status_user_tag(req->user),
			      memory_order_release);
	atomic_store(st, SK_ORDER_QUEUED);
	/* In the window before the record can reach the control plane. */
	atomic_store_explicit(&lc->win->next, after_id(lc), memory_order_release);
	if (rte_ring_sp_enqueue_bulk_elem(lc->ring, recs, sizeof(recs[0]), n, NULL) != n) {
		atomic_store_explicit(&lc->win->next, id, memory_order_release);
		atomic_store(st, SK_ORDER_NONE);
		rollback(lc, lines, slots, n, n);
		*order = 0;
		return SK_BUY_BUSY;
	}
	advance(lc);
	for (i = 0; i < n; i++)
		sk_dedup_commit(slots[i], lines[i].qty, id);
	*order = id;
	return SK_BUY_OK;
}

enum sk_buy_status
sk_buy_lines(struct sk_buy_lcore *lc, const struct sk_buy_req *req, struct sk_buy_line *lines,
	     unsigned n, uint64_t *order, unsigned *at)
{
	enum sk_buy_status s = buy(lc, req, lines, n, order, at);

	lc->count[s]++;
	return s;
}

enum sk_buy_status
sk_buy(struct sk_buy_lcore *lc, const struct sk_buy_req *req, struct sk_buy_line *lines, unsigned n,
       uint64_t *order)
{
	unsigned at;

	return sk_buy_lines(lc, req, lines, n, order, &at);
}

int
sk_buy_cancel(struct sk_shm *shm, struct sk_order_rec *recs, unsigned n, unsigned to)
{
	struct sk_item *items[SK_BUY_MAX_LINES];
	struct sk_status st;
	unsigned i;

	if (n == 0 || n > SK_BUY_MAX_LINES || (to != SK_ORDER_CANCELLED && to != SK_ORDER_FAILED))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (recs[i].id != recs[0].id || recs[i].user != recs[0].user)
			return -EINVAL;
		items[i] = sk_shm_item_find(shm, recs[i].item);
		if (items[i] == NULL)
			return -ENOENT;
	}

	sk_shm_status(shm, &st);
	_Atomic uint8_t *s = sk_status_slot(&st, recs[0].id);
	if (s == NULL)
		return -ENOENT;
	uint8_t cur = atomic_load(s);
	/* A reused slot is another order's: this one is settled, and only the
	 * store can cancel it. The CAS below cannot hit the new order: a slot
	 * is reused only once its order left QUEUED, and a new order leaves
	 * QUEUED by the control plane's drain, under the lock our caller
	 * holds. */
	if (!sk_status_still(&st, recs[0].id))
		return -ENOENT;
	do {
		if (!sk_order_transition_ok(cur, to))
			return -EALREADY;
	} while (!atomic_compare_exchange_weak(s, &cur, (uint8_t)to));

	/* This caller won the order: it alone returns the units. */
	for (i = 0; i < n; i++) {
		uint32_t left = recs[i].qty - recs[i].returned;
		struct sk_dedup d;

		if (left == 0)
			continue;
		SK_ASSERT(sk_stock_return(items[i], &recs[i].returned, recs[i].qty, left) == 0);
		sk_shm_dedup(shm, items[i], &d);
		/* -ENOENT/-ERANGE: the set was rebuilt without this order
		 * (recovery); the user holds nothing more to release. */
		(void)sk_dedup_release(&d, recs[i].user, left);
	}
	return 0;
}

int
sk_buy_refund(struct sk_shm *shm, struct sk_order_rec *rec, uint32_t units)
{
	struct sk_item *it;
	struct sk_dedup d;

	if (units == 0 || rec->user == 0)
		return -EINVAL;
	if (rec->returned > rec->qty || units > (uint32_t)(rec->qty - rec->returned))
		return -ERANGE;
	it = sk_shm_item_find(shm, rec->item);
	if (it == NULL)
		return -ENOENT;
	int rc = sk_stock_return(it, &rec->returned, rec->qty, units);
	if (rc != 0)
		return rc;
	sk_shm_dedup(shm, it, &d);
	/* -ENOENT/-ERANGE: the set was rebuilt without these units
	 * (recovery); the user holds nothing more to release. */
	(void)sk_dedup_release(&d, rec->user, units);
	return 0;
}
