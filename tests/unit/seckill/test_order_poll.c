/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the order poll and the answers to a winner for orders that
 * are no longer in the status table: a settled order whose slot was reused
 * (200 "settled", a holder's retry still 200 "confirmed"), and orders of an
 * earlier run judged by the store's high-water marks (200 "settled" at or
 * below its lcore's mark, 410 "not_placed" above it: lost with a crash);
 * and who may follow an order's events stream (sk_seckill_follow(): only
 * its own user, by X-User-Id or a token of any item).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_seckill.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"

#define EPOCH  1764000002u
#define NOW_NS (1800000000LL * 1000000000LL)
#define HZ     1000000000ULL

static struct {
	struct sk_test_arena arena; /* one lcore, 2^10 status slots and sequences */
	struct sk_seckill_conf conf;
	struct sk_seckill_lcore lc;
	struct sk_item *it;
} T;

static void
setup(void)
{
	struct sk_shm_conf c = {.nlcores = 1,
				.max_items = 2,
				.dedup_slots = 8192,
				.status_bits = 10,
				.epoch = EPOCH};
	struct sk_stock_conf ic = {
		.id = 1, .per_user_limit = 1, .end_ns = INT64_MAX, .price = 5, .total = 3000};

	sk_test_arena_init(&T.arena, &c);
	sk_test_arena_rings(&T.arena, 1024);
	T.arena.shm->win[0].seq_bits = 10;
	T.conf = (struct sk_seckill_conf){.auth = false};
	ck_assert_int_eq(
		sk_seckill_lcore_init(&T.lc, T.arena.shm, 0, T.arena.ring[0], &T.conf, NULL, HZ),
		0);
	ck_assert_int_eq(sk_shm_item_add(T.arena.shm, &ic, 0, &T.it), 0);
}

static void
teardown(void)
{
	sk_test_arena_fini(&T.arena);
}

/* buy - user @user buys item 1: its outcome, the reply in @out. */
static enum sk_seckill_outcome
buy(uint64_t user, struct sk_seckill_reply *out)
{
	char u[24];
	struct sk_http_request r = {.method = SK_HTTP_METHOD_POST, .version = 11};

	snprintf(u, sizeof(u), "%llu", (unsigned long long)user);
	r.user_id = u;
	r.user_id_len = (uint16_t)strlen(u);
	return sk_seckill_buy(&T.lc, "1", 1, &r, 0x020012c6, NOW_NS, 1000, out);
}

/* poll - GET /v1/orders/@id: the status; the body in @body. */
static unsigned
poll(uint64_t id, char *body, size_t len)
{
	struct sk_seckill_reply out;
	char s[24];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)id);
	sk_seckill_order(&T.lc, s, strlen(s), &out);
	snprintf(body, len, "%.*s", out.canned < 0 ? out.body_len : 0, out.body);
	return out.status;
}

static void
body_is(const char *body, const char *fmt, uint64_t id)
{
	char want[128];

	snprintf(want, sizeof(want), fmt, (unsigned long long)id);
	ck_assert_str_eq(body, want);
}

/* A settled order whose slot was reused: the poll says "settled", a holder's
 * retry still gets its order, confirmed. */
START_TEST(recycled_slot)
{
	struct sk_seckill_reply out;
	struct sk_order_rec rec;
	char body[128];
	uint64_t first = 0;

	for (uint64_t u = 1; u <= 1100; u++) {
		ck_assert_int_eq(buy(u, &out), SK_SECKILL_WON);
		ck_assert_uint_eq(out.status, 202);
		if (first == 0)
			first = out.order;
		ck_assert_uint_eq(rte_ring_sc_dequeue_elem(T.arena.ring[0], &rec, sizeof(rec)), 0);
		ck_assert_int_eq(sk_status_move(&T.lc.buy.status, rec.id, SK_ORDER_QUEUED,
						SK_ORDER_CONFIRMED),
				 0);
		sk_shm_settle(T.arena.shm, 0, rec.id + 1);
	}
	/* 1100 orders crossed an epoch roll of 2^10 sequences: to the clock */
	ck_assert_uint_eq(sk_order_id_epoch(out.order), NOW_NS / 1000000000);
	ck_assert_uint_eq(poll(out.order, body, sizeof(body)), 200);
	body_is(body, "{\"order\":\"%llu\",\"status\":\"confirmed\"}", out.order);
	ck_assert_uint_eq(poll(first, body, sizeof(body)), 200);
	body_is(body, "{\"order\":\"%llu\",\"status\":\"settled\"}", first);

	ck_assert_int_eq(buy(1, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.status, 200);
	ck_assert_uint_eq(out.order, first);
	snprintf(body, sizeof(body), "%.*s", out.body_len, out.body);
	body_is(body, "{\"status\":\"confirmed\",\"order\":\"%llu\",\"duplicate\":true}", first);

	sk_seckill_settled_reply(&T.lc, first, false, &out);
	ck_assert_uint_eq(out.status, 200);
	snprintf(body, sizeof(body), "%.*s", out.body_len, out.body);
	body_is(body, "{\"status\":\"settled\",\"order\":\"%llu\"}", first);
	/* made by no lcore yet */
	ck_assert_uint_eq(
		poll(sk_order_id_make(NOW_NS / 1000000000, 0, 0, 900), body, sizeof(body)), 404);
}
END_TEST

/* Orders of earlier runs, by the store's marks. */
START_TEST(earlier_runs)
{
	uint64_t marks[] = {
		sk_order_id_make(EPOCH - 10, 0, 0, 5),
		sk_order_id_make(EPOCH - 10, 0, 3, 7),
		sk_order_id_make(EPOCH - 5, 0, 0, 100),
	};
	char body[128];

	/* refused: not ascending, another member's */
	uint64_t bad[] = {marks[1], marks[0]};
	ck_assert_int_eq(sk_shm_set_marks(T.arena.shm, bad, 2, false), -EINVAL);
	bad[0] = sk_order_id_make(EPOCH - 10, 2, 0, 5);
	ck_assert_int_eq(sk_shm_set_marks(T.arena.shm, bad, 1, false), -EINVAL);
	ck_assert_int_eq(sk_shm_set_marks(T.arena.shm, marks, 3, false), 0);

	static const struct {
		uint32_t epoch;
		unsigned lcore;
		uint32_t seq;
		unsigned status;
	} cases[] = {
		{EPOCH - 10, 0, 1, 200}, {EPOCH - 10, 0, 5, 200},  {EPOCH - 10, 0, 6, 410},
		{EPOCH - 10, 3, 7, 200}, {EPOCH - 10, 3, 8, 410},  {EPOCH - 10, 1, 1, 410},
		{EPOCH - 7, 0, 1, 410},	 {EPOCH - 5, 0, 100, 200}, {EPOCH - 5, 0, 101, 410},
		{EPOCH - 11, 0, 1, 404}, /* older than every mark */
		{EPOCH, 0, 5, 404},	 /* this run, not made */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t id = sk_order_id_make(cases[i].epoch, 0, cases[i].lcore, cases[i].seq);
		unsigned st = poll(id, body, sizeof(body));

		ck_assert_msg(st == cases[i].status, "case %zu: %u", i, st);
		if (st == 410)
			body_is(body,
				"{\"order\":\"%llu\",\"status\":\"not_placed\",\"detail\":\"buy "
				"again\"}",
				id);
		else if (st == 200)
			body_is(body, "{\"order\":\"%llu\",\"status\":\"settled\"}", id);
	}
	/* another member's id */
	ck_assert_uint_eq(poll(sk_order_id_make(EPOCH - 10, 1, 0, 9), body, sizeof(body)), 404);

	/* marks cut short: the oldest epoch kept may be partial, so it is not judged */
	ck_assert_int_eq(sk_shm_set_marks(T.arena.shm, marks, 3, true), 0);
	ck_assert_uint_eq(poll(sk_order_id_make(EPOCH - 10, 0, 0, 6), body, sizeof(body)), 404);
	ck_assert_uint_eq(poll(sk_order_id_make(EPOCH - 5, 0, 0, 101), body, sizeof(body)), 410);
}
END_TEST

/* ------------------------------------------------------------ follow */

/* req_of - a request of user @user ("" for none), its X-User-Id in @u. */
static struct sk_http_request
req_of(const char *u)
{
	struct sk_http_request r = {.method = SK_HTTP_METHOD_GET, .version = 11};

	if (*u != '\0') {
		r.user_id = u;
		r.user_id_len = (uint16_t)strlen(u);
	}
	return r;
}

/* follow - user @u follows order @id: 1 or 0, *@f and *@out as sk_seckill_follow(). */
static int
follow(const char *u, uint64_t id, struct sk_seckill_follow *f, struct sk_seckill_reply *out)
{
	struct sk_http_request r = req_of(u);
	struct sk_client_id cl = {0};
	char s[24];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)id);
	return sk_seckill_follow(&T.lc, s, strlen(s), &r, cl, NOW_NS, 1000, f, out);
}

/* won - user @u (decimal) buys item 1 and wins: the order. */
static uint64_t
won(const char *u)
{
	struct sk_seckill_reply out;

	ck_assert_int_eq(buy(strtoull(u, NULL, 10), &out), SK_SECKILL_WON);
	return out.order;
}

/* Only the order's own user follows it; a stranger, a bad id and an unknown
 * order get the same 404; no identity: 401. */
START_TEST(follow_owner_only)
{
	struct sk_seckill_follow f;
	struct sk_seckill_reply out;
	uint64_t o7 = won("7"), o8 = won("4294967303"); /* 8 + 2^32: another tag */

	ck_assert_int_eq(follow("7", o7, &f, &out), 1);
	ck_assert_uint_eq(f.order, o7);
	ck_assert_uint_eq(f.user, 7);
	ck_assert_uint_eq(f.status, SK_ORDER_QUEUED);
	ck_assert_int_eq(follow("8", o7, &f, &out), 0);
	ck_assert_uint_eq(out.status, 404);
	ck_assert_int_eq(follow("7", o8, &f, &out), 0);
	ck_assert_uint_eq(out.status, 404);
	ck_assert_int_eq(follow("4294967303", o8, &f, &out), 1);
	ck_assert_int_eq(follow("7", o7 + 1000, &f, &out), 0); /* not made yet */
	ck_assert_uint_eq(out.status, 404);
	ck_assert_int_eq(follow("", o7, &f, &out), 0);
	ck_assert_uint_eq(out.status, 401);
	struct sk_http_request r = req_of("7");
	ck_assert_int_eq(sk_seckill_follow(&T.lc, "12x", 3, &r, (struct sk_client_id){0}, NOW_NS,
					   1000, &f, &out),
			 0);
	ck_assert_uint_eq(out.status, 404);
	/* the control plane moves it on: the follower sees the new status */
	ck_assert_int_eq(sk_status_move(&T.lc.buy.status, o7, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED),
			 0);
	ck_assert_int_eq(follow("7", o7, &f, &out), 1);
	ck_assert_uint_eq(f.status, SK_ORDER_CONFIRMED);
}
END_TEST

/* An order settled and its slot reused: followed as settled (as the poll tells anyone). */
START_TEST(follow_settled)
{
	struct sk_seckill_follow f;
	struct sk_seckill_reply out;
	struct sk_order_rec rec;
	uint64_t first = 0;
	char u[24];

	for (unsigned i = 1; i <= 1100; i++) {
		snprintf(u, sizeof(u), "%u", i);
		uint64_t o = won(u);
		if (first == 0)
			first = o;
		ck_assert_uint_eq(rte_ring_sc_dequeue_elem(T.arena.ring[0], &rec, sizeof(rec)), 0);
		ck_assert_int_eq(sk_status_move(&T.lc.buy.status, rec.id, SK_ORDER_QUEUED,
						SK_ORDER_CONFIRMED),
				 0);
		sk_shm_settle(T.arena.shm, 0, rec.id + 1);
	}
	ck_assert_int_eq(follow("1", first, &f, &out), 1);
	ck_assert_uint_eq(f.status, SK_ORDER_NONE);
	/* the slot's new order is user 1025's, not user 1's */
	ck_assert_int_eq(follow("1100", first, &f, &out), 1); /* settled: no owner to check */
}
END_TEST

/* token - a JWT of @user (item claim @item, none if 0) in @buf; its length. */
static size_t
token(struct sk_token_key *key, uint64_t user, uint64_t item, char *buf, size_t cap)
{
	struct sk_token_claims cl = {.user = user,
				     .item = item,
				     .has_item = item != 0,
				     .exp = NOW_NS / 1000000000 + 600};
	size_t len;

	ck_assert_int_eq(sk_token_mint(key, &cl, buf, cap, &len), 0);
	return len;
}

/* jwt_follow - follow @id with "Bearer @tok"; 1 or the answer's status. */
static int
jwt_follow(const char *tok, size_t len, uint64_t id, struct sk_seckill_follow *f)
{
	char auth[600], s[24];
	struct sk_http_request r = {.method = SK_HTTP_METHOD_GET, .version = 11};
	struct sk_seckill_reply out;

	snprintf(auth, sizeof(auth), "Bearer %.*s", (int)len, tok);
	r.authorization = auth;
	r.authorization_len = (uint16_t)strlen(auth);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)id);
	if (sk_seckill_follow(&T.lc, s, strlen(s), &r, (struct sk_client_id){0}, NOW_NS, 1000, f,
			      &out) == 1)
		return 1;
	return out.status;
}

/* With auth on: the token's user, whatever item its claim names; a token
 * of another user 404, a forged one 401. */
START_TEST(follow_jwt_any_item)
{
	static const char secret[] = "sse-test-secret-0123456789-abcdefghijkl";
	struct sk_token_key *key;
	struct sk_seckill_follow f;
	char tok[512];
	size_t len;
	uint64_t o7 = won("7");

	ck_assert_int_eq(sk_token_key_create(secret, strlen(secret), &key), 0);
	T.conf.auth = true;
	T.conf.key = key;
	T.conf.token_skew_s = 5;
	len = token(key, 7, 1, tok, sizeof(tok)); /* the item it bought */
	ck_assert_int_eq(jwt_follow(tok, len, o7, &f), 1);
	ck_assert_uint_eq(f.user, 7);
	len = token(key, 7, 99, tok, sizeof(tok)); /* another item */
	ck_assert_int_eq(jwt_follow(tok, len, o7, &f), 1);
	len = token(key, 7, 0, tok, sizeof(tok)); /* no item claim */
	ck_assert_int_eq(jwt_follow(tok, len, o7, &f), 1);
	len = token(key, 8, 1, tok, sizeof(tok));
	ck_assert_int_eq(jwt_follow(tok, len, o7, &f), 404);
	len = token(key, 7, 99, tok, sizeof(tok));
	tok[len - 2] = tok[len - 2] == 'A' ? 'B' : 'A'; /* a forged signature */
	ck_assert_int_eq(jwt_follow(tok, len, o7, &f), 401);
	T.conf.auth = false;
	sk_token_key_free(key);
}
END_TEST

static Suite *
order_poll_suite(void)
{
	Suite *s = suite_create("order_poll");
	TCase *tc = tcase_create("order_poll");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, recycled_slot);
	tcase_add_test(tc, earlier_runs);
	tcase_add_test(tc, follow_owner_only);
	tcase_add_test(tc, follow_settled);
	tcase_add_test(tc, follow_jwt_any_item);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(order_poll_suite, "test-order-poll")
