/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of sk_buy/sk_buy_cancel and the order helpers: ids, status
 * transitions, rings. Runs with the EAL in --no-huge mode (rte_ring).
 */
#include <check.h>
#include <pthread.h>
#include <errno.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_buy.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"

#define EPOCH 1764000000u

/* The arena, the two lcores' rings and buy contexts. */
static struct sk_test_arena F;

/* Two lcores, status for 2^10 orders each, rings of @ring_size records. */
static void
fx_setup(unsigned ring_size)
{
	struct sk_shm_conf c = {.nlcores = 2,
				.max_items = 2 * SK_BUY_MAX_LINES,
				.dedup_slots = 32768,
				.status_bits = 10,
				.epoch = EPOCH};

	sk_test_arena_init(&F, &c);
	sk_test_arena_rings(&F, ring_size);
}

static void
fx_teardown(void)
{
	sk_test_arena_fini(&F);
}

static void
setup_big(void)
{
	fx_setup(1024);
}

static struct sk_item *
add_item(uint32_t id, uint64_t total, uint32_t limit)
{
	struct sk_stock_conf c = {.id = id,
				  .per_user_limit = limit,
				  .end_ns = INT64_MAX,
				  .price = 1999,
				  .total = total};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(F.shm, &c, 0, &it), 0);
	return it;
}

static enum sk_buy_status
buy1(unsigned lcore, uint64_t user, struct sk_item *it, uint32_t qty, uint64_t *order)
{
	struct sk_buy_req r = {.user = user,
			       .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 1}},
			       .now_ns = 5};
	struct sk_buy_line l = {.item = it, .qty = qty};

	return sk_buy(&F.lc[lcore], &r, &l, 1, order);
}

static unsigned
drain(struct rte_ring *r, struct sk_order_rec *out, unsigned max)
{
	return rte_ring_sc_dequeue_burst_elem(r, out, sizeof(*out), max, NULL);
}

/* ------------------------------------------------------------------ ids */

START_TEST(order_id_layout)
{
	uint64_t id = sk_order_id_make(EPOCH, 0, 5, 123456);

	ck_assert_uint_eq(sk_order_id_epoch(id), EPOCH);
	ck_assert_uint_eq(sk_order_id_lcore(id), 5);
	ck_assert_uint_eq(sk_order_id_seq(id), 123456);
	ck_assert_uint_ne(sk_order_id_make(EPOCH, 0, 0, 0), sk_order_id_make(EPOCH + 1, 0, 0, 0));
	ck_assert_uint_eq(sk_order_id_lcore(sk_order_id_make(EPOCH, 0, 63, SK_ORDER_SEQ_MAX - 1)),
			  63);
	ck_assert_uint_eq(sk_order_id_seq(sk_order_id_make(EPOCH, 0, 63, SK_ORDER_SEQ_MAX - 1)),
			  SK_ORDER_SEQ_MAX - 1);
	ck_assert_uint_eq(sk_order_id_member(id), 0);
}
END_TEST

/* Two members that start in the same second mint different ids for the
 * same lcore and sequence; every field reads back, at its extremes too. */
START_TEST(order_id_members)
{
	static const uint32_t epochs[] = {SK_ORDER_EPOCH_BASE + 1, EPOCH,
					  SK_ORDER_EPOCH_BASE + (UINT32_C(1) << 30) - 1};
	static const uint32_t seqs[] = {0, 1, 123456, SK_ORDER_SEQ_MAX - 1};

	for (size_t e = 0; e < SK_ARRAY_SIZE(epochs); e++)
		for (unsigned m = 0; m <= SK_ORDER_MEMBER_MAX; m++)
			for (unsigned l = 0; l < 64; l += 21)
				for (size_t q = 0; q < SK_ARRAY_SIZE(seqs); q++) {
					uint64_t id = sk_order_id_make(epochs[e], m, l, seqs[q]);

					ck_assert_uint_ne(id, 0);
					ck_assert_uint_eq(sk_order_id_epoch(id), epochs[e]);
					ck_assert_uint_eq(sk_order_id_member(id), m);
					ck_assert_uint_eq(sk_order_id_lcore(id), l);
					ck_assert_uint_eq(sk_order_id_seq(id), seqs[q]);
					if (m > 0)
						ck_assert_uint_ne(id,
								  sk_order_id_make(epochs[e], m - 1,
										   l, seqs[q]));
				}
	/* ids sort by run first: a later start is above every member's ids */
	ck_assert_uint_lt(sk_order_id_make(EPOCH, SK_ORDER_MEMBER_MAX, 63, SK_ORDER_SEQ_MAX - 1),
			  sk_order_id_make(EPOCH + 1, 0, 0, 0));
	ck_assert(sk_order_epoch_valid(EPOCH));
	ck_assert(!sk_order_epoch_valid(SK_ORDER_EPOCH_BASE));
	ck_assert(!sk_order_epoch_valid(SK_ORDER_EPOCH_BASE + (UINT32_C(1) << 30)));
}
END_TEST

/* The buys of a member's arena carry its number; another member's id (same
 * run, lcore and sequence) is not in this arena's status table. */
START_TEST(buy_member_id)
{
	struct sk_test_arena a;
	struct sk_shm_conf c = {.nlcores = 1,
				.max_items = 1,
				.dedup_slots = SK_SHM_DEDUP_MIN,
				.status_bits = 10,
				.epoch = EPOCH,
				.member = 3};
	struct sk_shm *shm = sk_test_arena_init(&a, &c);
	struct sk_status st;

	ck_assert_ptr_nonnull(shm);
	ck_assert_uint_eq(shm->member, 3);
	sk_shm_status(shm, &st);
	ck_assert_uint_eq(st.member, 3);
	ck_assert_ptr_null(sk_status_slot(&st, sk_order_id_make(EPOCH, 3, 0, 1))); /* not made */
	atomic_store(&shm->win[0].next, sk_order_id_make(EPOCH, 3, 0, 2));	   /* seq 1 made */
	ck_assert_ptr_nonnull(sk_status_slot(&st, sk_order_id_make(EPOCH, 3, 0, 1)));
	ck_assert_ptr_null(sk_status_slot(&st, sk_order_id_make(EPOCH, 2, 0, 1)));
	ck_assert_ptr_null(sk_status_slot(&st, sk_order_id_make(EPOCH, 0, 0, 1)));
	sk_test_arena_fini(&a);
}
END_TEST

START_TEST(status_transitions)
{
	static const struct {
		unsigned from, to;
		bool ok;
	} t[] = {
		{SK_ORDER_QUEUED, SK_ORDER_CONFIRMED, true},
		{SK_ORDER_QUEUED, SK_ORDER_FAILED, true},
		{SK_ORDER_QUEUED, SK_ORDER_CANCELLED, true},
		{SK_ORDER_QUEUED, SK_ORDER_PAID, false},
		{SK_ORDER_CONFIRMED, SK_ORDER_PAID, true},
		{SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, true},
		{SK_ORDER_CONFIRMED, SK_ORDER_QUEUED, false},
		{SK_ORDER_PAID, SK_ORDER_CANCELLED, false},
		{SK_ORDER_PAID, SK_ORDER_REFUNDED, true},
		{SK_ORDER_CONFIRMED, SK_ORDER_REFUNDED, false},
		{SK_ORDER_REFUNDED, SK_ORDER_PAID, false},
		{SK_ORDER_REFUNDED, SK_ORDER_CANCELLED, false},
		{SK_ORDER_CANCELLED, SK_ORDER_REFUNDED, false},
		{SK_ORDER_CANCELLED, SK_ORDER_PAID, false},
		{SK_ORDER_FAILED, SK_ORDER_CONFIRMED, false},
		{SK_ORDER_NONE, SK_ORDER_QUEUED, false},
	};

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++)
		ck_assert_msg(sk_order_transition_ok(t[i].from, t[i].to) == t[i].ok, "row %zu", i);
	ck_assert_str_eq(sk_order_status_name(SK_ORDER_CONFIRMED), "confirmed");
	ck_assert_str_eq(sk_order_status_name(SK_ORDER_REFUNDED), "refunded");
	ck_assert_str_eq(sk_order_status_name(200), "none");
}
END_TEST

START_TEST(status_move)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t id;

	ck_assert_int_eq(buy1(0, 5, it, 1, &id), SK_BUY_OK);
	ck_assert_uint_eq(sk_status_get(&F.lc[0].status, id), SK_ORDER_QUEUED);
	ck_assert_int_eq(sk_status_move(&F.lc[0].status, id, SK_ORDER_QUEUED, SK_ORDER_PAID),
			 -EINVAL);
	ck_assert_int_eq(sk_status_move(&F.lc[0].status, id, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED),
			 0);
	ck_assert_int_eq(sk_status_move(&F.lc[0].status, id, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED),
			 -EALREADY);
	ck_assert_int_eq(sk_status_move(&F.lc[0].status, id, SK_ORDER_CONFIRMED, SK_ORDER_PAID), 0);
	ck_assert_uint_eq(sk_status_get(&F.lc[0].status, id), SK_ORDER_PAID);
	/* an id of another run, or out of range, is unknown */
	uint64_t other = sk_order_id_make(EPOCH + 1, 0, 0, sk_order_id_seq(id));
	ck_assert_uint_eq(sk_status_get(&F.lc[0].status, other), SK_ORDER_NONE);
	ck_assert_int_eq(
		sk_status_move(&F.lc[0].status, other, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED),
		-ENOENT);
	ck_assert_ptr_null(
		sk_status_slot(&F.lc[0].status, sk_order_id_make(EPOCH, 0, 0, 1u << 10)));
	ck_assert_ptr_null(sk_status_slot(&F.lc[0].status, sk_order_id_make(EPOCH, 0, 2, 1)));
}
END_TEST

/* ------------------------------------------------------------------ buy */

START_TEST(buy_ok_and_record)
{
	struct sk_item *it = add_item(3, 10, 1);
	struct sk_order_rec rec[4];
	uint64_t id;

	ck_assert_int_eq(buy1(1, 77, it, 1, &id), SK_BUY_OK);
	ck_assert_uint_eq(sk_order_id_lcore(id), 1);
	ck_assert_uint_eq(sk_order_id_epoch(id), EPOCH);
	ck_assert_uint_eq(drain(F.ring[1], rec, 4), 1);
	ck_assert_uint_eq(drain(F.ring[0], rec + 1, 3), 0);
	ck_assert_uint_eq(rec[0].id, id);
	ck_assert_uint_eq(rec[0].user, 77);
	ck_assert_uint_eq(rec[0].item, 3);
	ck_assert_uint_eq(rec[0].qty, 1);
	ck_assert_uint_eq(rec[0].price, 1999);
	ck_assert_uint_eq(rec[0].client.family, SK_ADDR_V4);
	ck_assert_mem_eq(rec[0].client.bytes, "\xc6\x12\x00\x01", 4);
	ck_assert_uint_eq(rec[0].nlines, 1);
	ck_assert_uint_eq(F.lc[1].count[SK_BUY_OK], 1);
}
END_TEST

/* An IPv6 buyer's address reaches the ring whole, as does "none". */
START_TEST(buy_record_client_v6)
{
	struct sk_item *it = add_item(3, 10, 1);
	struct sk_addr v6 = {.family = SK_ADDR_V6,
			     .bytes = {0x20, 0x01, 0x0d, 0xb8, [14] = 0x12, [15] = 0x34}};
	struct sk_buy_req r = {.user = 78, .client = v6, .now_ns = 5};
	struct sk_buy_req none = {.user = 79, .now_ns = 5};
	struct sk_buy_line l = {.item = it, .qty = 1};
	struct sk_order_rec rec[2];
	uint64_t id;

	ck_assert_int_eq(sk_buy(&F.lc[0], &r, &l, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(sk_buy(&F.lc[0], &none, &l, 1, &id), SK_BUY_OK);
	ck_assert_uint_eq(drain(F.ring[0], rec, 2), 2);
	ck_assert(sk_addr_eq(&rec[0].client, &v6));
	ck_assert_uint_eq(rec[1].client.family, SK_ADDR_NONE);
}
END_TEST

START_TEST(buy_duplicate_and_limit)
{
	struct sk_item *one = add_item(1, 10, 1);
	struct sk_item *five = add_item(2, 10, 5);
	uint64_t id, again;

	ck_assert_int_eq(buy1(0, 9, one, 1, &id), SK_BUY_OK);
	/* a retry on any lcore returns the winner's order */
	ck_assert_int_eq(buy1(1, 9, one, 1, &again), SK_BUY_DUPLICATE);
	ck_assert_uint_eq(again, id);
	ck_assert_uint_eq(sk_stock_sold(one), 1);

	ck_assert_int_eq(buy1(0, 9, five, 3, &id), SK_BUY_OK);
	ck_assert_int_eq(buy1(1, 9, five, 2, &again), SK_BUY_OK);
	ck_assert_uint_ne(again, id);
	ck_assert_int_eq(buy1(0, 9, five, 1, &id), SK_BUY_LIMIT);
	ck_assert_uint_eq(id, again);
	ck_assert_uint_eq(sk_stock_sold(five), 5);
	ck_assert_int_eq(buy1(0, 0, five, 1, &id), SK_BUY_INVALID);
	ck_assert_int_eq(buy1(0, 10, five, 0, &id), SK_BUY_INVALID);
}
END_TEST

START_TEST(buy_sold_out_and_short)
{
	struct sk_item *it = add_item(4, 3, 5);
	uint64_t id;

	ck_assert_int_eq(buy1(0, 1, it, 4, &id), SK_BUY_SHORT);
	ck_assert_uint_eq(id, 0);
	/* the short buyer holds nothing and may buy what is left */
	ck_assert_int_eq(buy1(0, 1, it, 3, &id), SK_BUY_OK);
	ck_assert_int_eq(buy1(1, 2, it, 1, &id), SK_BUY_SOLD_OUT);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_int_eq(buy1(0, 3, it, 1, &id), SK_BUY_SOLD_OUT);
	ck_assert(sk_stock_check(it));
}
END_TEST

START_TEST(buy_closed_item)
{
	struct sk_item *it = add_item(5, 3, 1);
	uint64_t id;

	atomic_store(&it->state, SK_ITEM_CLOSED);
	ck_assert_int_eq(buy1(0, 1, it, 1, &id), SK_BUY_CLOSED);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
}
END_TEST

START_TEST(ring_full_loses_nothing)
{
	struct sk_item *it = add_item(6, 100, 1);
	struct sk_order_rec rec[8];
	uint64_t id;

	/* ring of 4 holds 3 records */
	for (uint64_t u = 1; u <= 3; u++)
		ck_assert_int_eq(buy1(0, u, it, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(buy1(0, 4, it, 1, &id), SK_BUY_BUSY);
	ck_assert_uint_eq(id, 0);
	/* the refused order's id left the window again (it was in it while
	 * its record could reach the ring) */
	uint64_t refused = sk_order_id_make(EPOCH, 0, 0, 4);
	ck_assert_uint_eq(atomic_load(&F.shm->win[0].next), refused);
	ck_assert_ptr_null(sk_status_slot(&F.lc[0].status, refused));
	ck_assert_uint_eq(sk_stock_sold(it), 3);
	ck_assert_uint_eq(sk_stock_remaining(it), 97);
	ck_assert(sk_stock_check(it));
	/* the refused user holds nothing: after a drain it buys normally */
	ck_assert_uint_eq(drain(F.ring[0], rec, 8), 3);
	ck_assert_int_eq(buy1(0, 4, it, 1, &id), SK_BUY_OK);
	ck_assert_uint_eq(sk_status_get(&F.lc[0].status, id), SK_ORDER_QUEUED);
	/* the refused attempt did not burn a sequence or leave a status */
	ck_assert_uint_eq(sk_order_id_seq(id), 4);
	ck_assert_uint_eq(drain(F.ring[0], rec, 8), 1);
	ck_assert_uint_eq(rec[0].user, 4);
}
END_TEST

static void
setup_small_ring(void)
{
	fx_setup(4);
}

/* buy_settle - one winning buy on lcore 0, drained and settled at once. */
static uint64_t
buy_settle(struct sk_item *it, uint64_t user)
{
	struct sk_order_rec rec[4];
	uint64_t id;

	ck_assert_int_eq(buy1(0, user, it, 1, &id), SK_BUY_OK);
	ck_assert_uint_eq(drain(F.ring[0], rec, 4), 1);
	sk_shm_settle(F.shm, 0, id + 1);
	return id;
}

/* The status table is a ring: a slot is reused once its order settled; the
 * buy that needs an unsettled slot is refused BUSY, not FULL, with nothing
 * taken. */
START_TEST(status_ring_reuse)
{
	struct sk_item *it = add_item(7, 5000, 1);
	struct sk_order_rec rec[64];
	uint64_t id, first = 0;
	uint64_t user = 1;

	/* 2^10 slots per lcore; seq 0 unused, so 1024 buys fill the ring */
	for (; user <= 1024; user++) {
		ck_assert_int_eq(buy1(0, user, it, 1, &id), SK_BUY_OK);
		if (first == 0)
			first = id;
		while (drain(F.ring[0], rec, 64) > 0)
			;
	}
	ck_assert_uint_eq(sk_order_id_seq(id), 1024);
	ck_assert_uint_eq(sk_status_get(&F.lc[0].status, id), SK_ORDER_QUEUED);
	/* seq 1025 needs seq 1's slot: not settled yet */
	ck_assert_int_eq(buy1(0, user, it, 1, &id), SK_BUY_BUSY);
	ck_assert_uint_eq(sk_stock_remaining(it), 5000 - 1024);
	ck_assert_int_eq(buy1(1, user, it, 1, &id), SK_BUY_OK); /* other lcore unaffected */
	user++;

	ck_assert_int_eq(
		sk_status_move(&F.lc[0].status, first, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED), 0);
	sk_shm_settle(F.shm, 0, first + 1);
	ck_assert_int_eq(buy1(0, user, it, 1, &id), SK_BUY_OK);
	ck_assert_uint_eq(sk_order_id_seq(id), 1025);
	ck_assert_uint_eq(sk_status_get(&F.lc[0].status, id), SK_ORDER_QUEUED);
	/* the settled order left the table; moves on it are refused */
	ck_assert_ptr_null(sk_status_slot(&F.lc[0].status, first));
	ck_assert_uint_eq(sk_status_get(&F.lc[0].status, first), SK_ORDER_NONE);
	ck_assert_int_eq(sk_status_move(&F.lc[0].status, first, SK_ORDER_CONFIRMED, SK_ORDER_PAID),
			 -ENOENT);
	struct sk_order_rec c = {.id = first, .user = 1, .item = 7, .qty = 1, .nlines = 1};
	ck_assert_int_eq(sk_buy_cancel(F.shm, &c, 1, SK_ORDER_CANCELLED), -ENOENT);
	ck_assert(sk_stock_check(it));
}
END_TEST

/* An lcore whose sequence is used up moves to an epoch of its own and goes
 * on: ids stay unique and growing, the earlier epoch's last orders stay in
 * the table until their slots are reused. */
START_TEST(epoch_roll)
{
	struct sk_item *it = add_item(7, 10000, 1);
	uint64_t prev = 0, id = 0, user = 1;

	F.shm->win[0].seq_bits = 10; /* 2^10 sequences per epoch */
	ck_assert_int_eq(sk_buy_lcore_init(&F.lc[0], F.shm, 0, F.ring[0]), 0);
	F.shm->win[1].seq_bits = 9; /* below the status bits */
	ck_assert_int_eq(sk_buy_lcore_init(&F.lc[1], F.shm, 1, F.ring[1]), -EINVAL);

	for (unsigned i = 0; i < 3 * 1024; i++, user++) {
		id = buy_settle(it, user);
		ck_assert_uint_gt(id, prev);
		ck_assert_uint_eq(sk_status_get(&F.lc[0].status, id), SK_ORDER_QUEUED);
		if (i == 1022) { /* the last of the first epoch */
			ck_assert_uint_eq(sk_order_id_epoch(id), EPOCH);
			ck_assert_uint_eq(sk_order_id_seq(id), 1023);
		}
		if (i == 1023) { /* the first of the next: epoch + 1 (the clock is behind) */
			ck_assert_uint_eq(sk_order_id_epoch(id), EPOCH + 1);
			ck_assert_uint_eq(sk_order_id_seq(id), 0);
			/* the previous epoch's last order is still in the table */
			ck_assert_uint_eq(sk_status_get(&F.lc[0].status, prev), SK_ORDER_QUEUED);
		}
		prev = id;
	}
	ck_assert_uint_eq(sk_order_id_epoch(id), EPOCH + 3);
	/* a new epoch follows the clock once it is ahead */
	struct sk_buy_req r = {.user = user, .now_ns = (int64_t)(EPOCH + 100) * 1000000000};
	struct sk_buy_line l = {.item = it, .qty = 1};
	struct sk_order_rec rec[4];
	for (unsigned i = 0; i < 1024; i++, r.user++) {
		ck_assert_int_eq(sk_buy(&F.lc[0], &r, &l, 1, &id), SK_BUY_OK);
		ck_assert_uint_eq(drain(F.ring[0], rec, 4), 1);
		sk_shm_settle(F.shm, 0, id + 1);
	}
	ck_assert_uint_eq(sk_order_id_epoch(id), EPOCH + 100);
	ck_assert_uint_eq(sk_order_id_seq(id), 0);
	/* the real width: lcore 1, moved to just before the end of its 2^23
	 * sequences (window empty there), rolls as lcore 0 did */
	F.shm->win[1].seq_bits = SK_ORDER_SEQ_BITS;
	ck_assert_int_eq(sk_buy_lcore_init(&F.lc[1], F.shm, 1, F.ring[1]), 0);
	uint64_t far = sk_order_id_make(EPOCH, 0, 1, SK_ORDER_SEQ_MAX - 2);
	F.lc[1].next_pos = F.lc[1].oldest_pos = SK_ORDER_SEQ_MAX - 2;
	atomic_store(&F.shm->win[1].oldest, far);
	atomic_store(&F.shm->win[1].next, far);
	uint64_t ids1[3];
	for (unsigned i = 0; i < 3; i++, r.user++) {
		ck_assert_int_eq(sk_buy(&F.lc[1], &r, &l, 1, &ids1[i]), SK_BUY_OK);
		ck_assert_uint_eq(sk_status_get(&F.lc[1].status, ids1[i]), SK_ORDER_QUEUED);
	}
	ck_assert_uint_eq(ids1[0], far);
	ck_assert_uint_eq(ids1[1], far + 1);
	ck_assert_uint_eq(ids1[2], sk_order_id_make(EPOCH + 100, 0, 1, 0));
	ck_assert_uint_eq(sk_status_get(&F.lc[1].status, ids1[0]), SK_ORDER_QUEUED);
	/* an id of a skipped epoch or past the sequence is not in the table */
	ck_assert_ptr_null(sk_status_slot(&F.lc[0].status, sk_order_id_make(EPOCH + 50, 0, 0, 0)));
	ck_assert_ptr_null(
		sk_status_slot(&F.lc[0].status, sk_order_id_make(EPOCH + 3, 0, 0, 1024)));
	ck_assert(sk_stock_check(it));
}
END_TEST

START_TEST(cart_all_or_nothing)
{
	struct sk_item *a = add_item(20, 5, 1);
	struct sk_item *b = add_item(10, 1, 1);
	struct sk_buy_req r = {.user = 50, .now_ns = 1};
	struct sk_order_rec rec[4];
	uint64_t id;

	struct sk_buy_line cart[2] = {{a, 1}, {b, 1}};
	ck_assert_int_eq(sk_buy(&F.lc[0], &r, cart, 2, &id), SK_BUY_OK);
	ck_assert_ptr_eq(cart[0].item, b); /* sorted by item id */
	ck_assert_uint_eq(drain(F.ring[0], rec, 4), 2);
	ck_assert_uint_eq(rec[0].id, id);
	ck_assert_uint_eq(rec[1].id, id);
	ck_assert_uint_eq(rec[0].item, 10);
	ck_assert_uint_eq(rec[1].item, 20);
	ck_assert_uint_eq(rec[1].line, 1);
	ck_assert_uint_eq(rec[1].nlines, 2);

	/* b is sold out now: a second cart must leave a untouched */
	r.user = 51;
	struct sk_buy_line cart2[2] = {{a, 1}, {b, 1}};
	ck_assert_int_eq(sk_buy(&F.lc[1], &r, cart2, 2, &id), SK_BUY_SOLD_OUT);
	ck_assert_uint_eq(sk_stock_remaining(a), 4);

	/* fail on the second line (a short): the first line (b) rolls back */
	ck_assert_int_eq(sk_stock_add(b, 1), 0);
	struct sk_buy_line cart3[2] = {{a, 5}, {b, 1}};
	ck_assert_int_eq(sk_buy(&F.lc[1], &r, cart3, 2, &id), SK_BUY_LIMIT); /* limit 1 < 5 */
	struct sk_item *c = add_item(30, 5, 10);
	struct sk_buy_line cart4[2] = {{c, 6}, {b, 1}};
	ck_assert_int_eq(sk_buy(&F.lc[1], &r, cart4, 2, &id), SK_BUY_SHORT);
	ck_assert_uint_eq(sk_stock_remaining(b), 1);
	ck_assert_uint_eq(sk_stock_remaining(c), 5);
	ck_assert(sk_stock_check(b));
	ck_assert(sk_stock_check(c));
	uint32_t units = 9;
	struct sk_dedup d;
	sk_shm_dedup(F.shm, b, &d);
	ck_assert_int_eq(sk_dedup_lookup(&d, 51, &units, NULL), 0);
	ck_assert_uint_eq(units, 0);

	/* duplicate items in one cart are refused */
	struct sk_buy_line cart5[2] = {{c, 1}, {c, 1}};
	ck_assert_int_eq(sk_buy(&F.lc[1], &r, cart5, 2, &id), SK_BUY_INVALID);
	ck_assert_int_eq(sk_buy(&F.lc[1], &r, cart5, 0, &id), SK_BUY_INVALID);
	ck_assert_int_eq(sk_buy(&F.lc[1], &r, cart5, SK_BUY_MAX_LINES + 1, &id), SK_BUY_INVALID);
}
END_TEST

/* A cart of SK_BUY_MAX_LINES lines: one id, every line on the ring; a
 * refusal names its line (sk_buy_lines()) and leaves every unit in place. */
START_TEST(cart_max_lines)
{
	struct sk_buy_req r = {.user = 61, .now_ns = 5};
	struct sk_buy_line cart[SK_BUY_MAX_LINES];
	struct sk_order_rec rec[SK_BUY_MAX_LINES + 1];
	unsigned at;
	uint64_t id;

	for (unsigned i = 0; i < SK_BUY_MAX_LINES; i++)
		cart[i] = (struct sk_buy_line){add_item(100 + SK_BUY_MAX_LINES - i, 3, 2), 2};
	ck_assert_int_eq(sk_buy_lines(&F.lc[0], &r, cart, SK_BUY_MAX_LINES, &id, &at), SK_BUY_OK);
	ck_assert_uint_eq(at, SK_BUY_MAX_LINES);
	ck_assert_uint_eq(drain(F.ring[0], rec, SK_BUY_MAX_LINES + 1), SK_BUY_MAX_LINES);
	for (unsigned i = 0; i < SK_BUY_MAX_LINES; i++) {
		ck_assert_uint_eq(rec[i].id, id);
		ck_assert_uint_eq(rec[i].line, i);
		ck_assert_uint_eq(rec[i].nlines, SK_BUY_MAX_LINES);
		ck_assert_uint_eq(rec[i].item, 101 + i); /* in item order */
	}
	/* another user: line 7 (item 108) is short by one, nothing is taken */
	r.user = 62;
	for (unsigned i = 0; i < SK_BUY_MAX_LINES; i++)
		cart[i].qty = i == 7 ? 2 : 1;
	ck_assert_int_eq(sk_buy_lines(&F.lc[0], &r, cart, SK_BUY_MAX_LINES, &id, &at),
			 SK_BUY_SHORT);
	ck_assert_uint_eq(cart[at].item->id, 108);
	for (unsigned i = 0; i < SK_BUY_MAX_LINES; i++)
		ck_assert_uint_eq(sk_stock_remaining(cart[i].item), 1);
}
END_TEST

START_TEST(cancel_returns_once)
{
	struct sk_item *it = add_item(40, 2, 2);
	struct sk_order_rec rec[4];
	uint64_t id;

	ck_assert_int_eq(buy1(0, 8, it, 2, &id), SK_BUY_OK);
	ck_assert_int_eq(buy1(1, 9, it, 1, &id), SK_BUY_SOLD_OUT);
	ck_assert_uint_eq(drain(F.ring[0], rec, 4), 1);

	ck_assert_int_eq(sk_buy_cancel(F.shm, rec, 1, SK_ORDER_PAID), -EINVAL);
	ck_assert_int_eq(sk_buy_cancel(F.shm, rec, 1, SK_ORDER_CANCELLED), 0);
	ck_assert_uint_eq(rec[0].returned, 2);
	ck_assert_uint_eq(sk_status_get(&F.lc[0].status, rec[0].id), SK_ORDER_CANCELLED);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(sk_stock_remaining(it), 2);
	/* second cancel changes nothing */
	ck_assert_int_eq(sk_buy_cancel(F.shm, rec, 1, SK_ORDER_CANCELLED), -EALREADY);
	ck_assert_uint_eq(sk_stock_remaining(it), 2);
	/* the user may buy again, and the units sell to others */
	ck_assert_int_eq(buy1(1, 8, it, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(buy1(1, 9, it, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(buy1(1, 10, it, 1, &id), SK_BUY_SOLD_OUT);
	ck_assert(sk_stock_check(it));

	/* a paid order cannot be cancelled */
	ck_assert_uint_eq(drain(F.ring[1], rec, 4), 2);
	ck_assert_int_eq(
		sk_status_move(&F.lc[1].status, rec[0].id, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED), 0);
	ck_assert_int_eq(
		sk_status_move(&F.lc[1].status, rec[0].id, SK_ORDER_CONFIRMED, SK_ORDER_PAID), 0);
	ck_assert_int_eq(sk_buy_cancel(F.shm, rec, 1, SK_ORDER_CANCELLED), -EALREADY);
	ck_assert_uint_eq(sk_stock_sold(it), 2);
	/* unknown order / item */
	rec[1].id = sk_order_id_make(EPOCH + 1, 0, 1, 5);
	ck_assert_int_eq(sk_buy_cancel(F.shm, &rec[1], 1, SK_ORDER_CANCELLED), -ENOENT);
	rec[1].item = 999;
	ck_assert_int_eq(sk_buy_cancel(F.shm, &rec[1], 1, SK_ORDER_CANCELLED), -ENOENT);
}
END_TEST

/* held - units @user holds of @it in the dedup set (0 if no slot). */
static uint32_t
held(struct sk_item *it, uint64_t user)
{
	struct sk_dedup d;
	uint32_t units = 0;

	sk_shm_dedup(F.shm, it, &d);
	(void)sk_dedup_lookup(&d, user, &units, NULL);
	return units;
}

START_TEST(refund_returns_units)
{
	struct sk_item *one = add_item(41, 1, 1);  /* limit 1, one unit */
	struct sk_item *many = add_item(42, 5, 5); /* limit 5 */
	struct sk_order_rec rec[4];
	uint64_t id;

	/* Limit 1: paid, refunded in full; the buyer may buy again. */
	ck_assert_int_eq(buy1(0, 8, one, 1, &id), SK_BUY_OK);
	ck_assert_uint_eq(drain(F.ring[0], rec, 4), 1);
	ck_assert_int_eq(sk_status_move(&F.lc[0].status, id, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED),
			 0);
	ck_assert_int_eq(sk_status_move(&F.lc[0].status, id, SK_ORDER_CONFIRMED, SK_ORDER_PAID), 0);
	ck_assert_int_eq(buy1(0, 8, one, 1, &id), SK_BUY_DUPLICATE);
	ck_assert_int_eq(buy1(0, 9, one, 1, &id), SK_BUY_SOLD_OUT);
	ck_assert(sk_stock_is_sold_out(one));
	id = rec[0].id;
	ck_assert_int_eq(sk_buy_refund(F.shm, &rec[0], 2), -ERANGE);
	ck_assert_int_eq(sk_buy_refund(F.shm, &rec[0], 0), -EINVAL);
	ck_assert_int_eq(sk_buy_refund(F.shm, &rec[0], 1), 0);
	ck_assert_uint_eq(rec[0].returned, 1);
	ck_assert_int_eq(sk_buy_refund(F.shm, &rec[0], 1), -ERANGE); /* never above qty */
	ck_assert_int_eq(sk_status_move(&F.lc[0].status, id, SK_ORDER_PAID, SK_ORDER_REFUNDED), 0);
	ck_assert(!sk_stock_is_sold_out(one));
	ck_assert_uint_eq(sk_stock_remaining(one), 1);
	ck_assert_uint_eq(held(one, 8), 0);
	ck_assert(sk_stock_check(one));
	ck_assert_int_eq(buy1(1, 8, one, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(buy1(1, 9, one, 1, &id), SK_BUY_SOLD_OUT);
	ck_assert(sk_stock_check(one));

	/* Partial: 4 units, 1 then 2 back; the holding follows. */
	ck_assert_int_eq(buy1(0, 20, many, 4, &id), SK_BUY_OK);
	ck_assert_uint_eq(drain(F.ring[0], rec, 4), 1);
	ck_assert_int_eq(sk_buy_refund(F.shm, &rec[0], 1), 0);
	ck_assert_uint_eq(held(many, 20), 3);
	ck_assert_uint_eq(sk_stock_remaining(many), 2);
	ck_assert_int_eq(sk_buy_refund(F.shm, &rec[0], 2), 0);
	ck_assert_uint_eq(rec[0].returned, 3);
	ck_assert_uint_eq(held(many, 20), 1);
	ck_assert_uint_eq(sk_stock_remaining(many), 4);
	ck_assert_int_eq(sk_buy_refund(F.shm, &rec[0], 2), -ERANGE);
	ck_assert(sk_stock_check(many));
	/* The user buys up to the limit again: 1 held + 4. */
	ck_assert_int_eq(buy1(1, 20, many, 4, &id), SK_BUY_OK);
	ck_assert_int_eq(buy1(1, 21, many, 1, &id), SK_BUY_SOLD_OUT);
	ck_assert(sk_stock_check(many));

	/* Unknown item: nothing changes. */
	rec[0].item = 999;
	rec[0].returned = 0;
	ck_assert_int_eq(sk_buy_refund(F.shm, &rec[0], 1), -ENOENT);
}
END_TEST

START_TEST(ring_create_lookup)
{
	struct rte_ring *r = sk_order_ring_create(60, 64, SOCKET_ID_ANY);

	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_eq(sk_order_ring_lookup(60), r);
	ck_assert_ptr_null(sk_order_ring_create(60, 64, SOCKET_ID_ANY));
	ck_assert_int_eq(rte_errno, EEXIST);
	ck_assert_ptr_null(sk_order_ring_lookup(61));
	rte_ring_free(r);
	ck_assert_int_eq(sk_buy_lcore_init(&F.lc[0], F.shm, 2, F.ring[0]), -EINVAL);
	ck_assert_int_eq(sk_buy_lcore_init(&F.lc[0], F.shm, 0, NULL), -EINVAL);
	ck_assert_str_eq(sk_buy_status_name(SK_BUY_SOLD_OUT), "sold_out");
}
END_TEST

#define RACE_ORDERS 30000u

/* The control plane's side of window_covers_the_ring: dequeue, look up,
 * confirm, settle; counts the records whose id was not in the table. */
struct race {
	_Atomic unsigned done;
	unsigned seen, missing;
};

static void *
race_consumer(void *arg)
{
	struct race *rc = arg;
	struct sk_order_rec rec[64];

	while (rc->seen < RACE_ORDERS) {
		bool fin = atomic_load(&rc->done); /* before the drain: it sees every record */
		unsigned n = drain(F.ring[0], rec, 64);
		for (unsigned i = 0; i < n; i++) {
			if (sk_status_move(&F.lc[0].status, rec[i].id, SK_ORDER_QUEUED,
					   SK_ORDER_CONFIRMED) != 0)
				rc->missing++;
			sk_shm_settle(F.shm, 0, rec[i].id + 1);
		}
		rc->seen += n;
		if (n == 0 && fin)
			break;
	}
	return NULL;
}

/* A record taken from the ring the moment it is enqueued finds its order
 * in the status table (the lcore publishes the window's end first), across
 * slot reuses and epoch rolls. */
START_TEST(window_covers_the_ring)
{
	struct sk_stock_conf c = {
		.id = 9, .per_user_limit = 1u << 20, .end_ns = INT64_MAX, .total = 1u << 20};
	struct sk_item *it;
	struct race rc = {0};
	pthread_t t;
	unsigned won = 0;

	ck_assert_int_eq(sk_shm_item_add(F.shm, &c, 1024, &it), 0);
	F.shm->win[0].seq_bits = 10;
	ck_assert_int_eq(sk_buy_lcore_init(&F.lc[0], F.shm, 0, F.ring[0]), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, race_consumer, &rc), 0);
	for (unsigned tries = 0; won < RACE_ORDERS && tries < 100u * RACE_ORDERS; tries++) {
		uint64_t id;
		enum sk_buy_status st = buy1(0, 1, it, 1, &id);

		ck_assert(st == SK_BUY_OK || st == SK_BUY_BUSY);
		won += st == SK_BUY_OK;
	}
	atomic_store(&rc.done, 1);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(won, RACE_ORDERS);
	ck_assert_uint_eq(rc.seen, RACE_ORDERS);
	ck_assert_uint_eq(rc.missing, 0);
	ck_assert(sk_stock_check(it));
}
END_TEST

static Suite *
buy_suite(void)
{
	Suite *s = suite_create("buy");
	TCase *tc = tcase_create("orders");

	tcase_add_checked_fixture(tc, setup_big, fx_teardown);
	tcase_add_test(tc, order_id_layout);
	tcase_add_test(tc, order_id_members);
	tcase_add_test(tc, buy_member_id);
	tcase_add_test(tc, buy_record_client_v6);
	tcase_add_test(tc, status_transitions);
	tcase_add_test(tc, status_move);
	tcase_add_test(tc, ring_create_lookup);
	suite_add_tcase(s, tc);

	tc = tcase_create("buy");
	tcase_add_checked_fixture(tc, setup_big, fx_teardown);
	tcase_add_test(tc, buy_ok_and_record);
	tcase_add_test(tc, buy_duplicate_and_limit);
	tcase_add_test(tc, buy_sold_out_and_short);
	tcase_add_test(tc, buy_closed_item);
	tcase_add_test(tc, status_ring_reuse);
	tcase_add_test(tc, epoch_roll);
	tcase_add_test(tc, window_covers_the_ring);
	tcase_add_test(tc, cart_all_or_nothing);
	tcase_add_test(tc, cart_max_lines);
	tcase_add_test(tc, cancel_returns_once);
	tcase_add_test(tc, refund_returns_units);
	suite_add_tcase(s, tc);

	tc = tcase_create("ring_full");
	tcase_add_checked_fixture(tc, setup_small_ring, fx_teardown);
	tcase_add_test(tc, ring_full_loses_nothing);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(buy_suite, "test-buy")
