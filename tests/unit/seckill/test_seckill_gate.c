/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the gate check of the buy route (sk_seckill): an item with
 * gate=1 answers 403 {"status":"gate"} to a verified token without a gate
 * claim equal to the item (none, another item's), touches no stock and
 * counts the outcome "gate"; a token with the claim buys; an item without
 * the flag ignores the claim; a bad token is still 401 (identity first); a
 * winner's retry after the sell-out gets its order back; with auth off
 * (X-User-Id, no claim possible) a gated item refuses every buyer.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_seckill.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"

#define EPOCH  1764000002u
#define NOW_S  1800000000LL
#define NOW_NS (NOW_S * 1000000000LL)
#define HZ     1000000000ULL
#define SECRET "a-test-secret-of-32-bytes-length"

static struct {
	struct sk_test_arena arena;
	struct sk_token_key *key;
	struct sk_seckill_conf conf;
	struct sk_seckill_lcore lc;
} T;

static struct sk_item *
add_item(uint32_t id, uint64_t total, bool gate)
{
	struct sk_stock_conf c = {.id = id,
				  .per_user_limit = 1,
				  .start_ns = NOW_NS - 1000000000LL,
				  .end_ns = INT64_MAX,
				  .price = 500,
				  .total = total};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(T.arena.shm, &c, 0, &it), 0);
	it->gate = gate; /* as preheat copies the activity's flag */
	return it;
}

static void
setup_common(bool auth)
{
	struct sk_shm_conf c = {.nlcores = 1,
				.max_items = 8,
				.dedup_slots = 8192,
				.status_bits = 12,
				.epoch = EPOCH};

	sk_test_arena_init(&T.arena, &c);
	sk_test_arena_rings(&T.arena, 1024);
	ck_assert_int_eq(sk_token_key_create(SECRET, strlen(SECRET), &T.key), 0);
	T.conf = (struct sk_seckill_conf){.auth = auth, .token_skew_s = 5, .key = T.key};
	ck_assert_int_eq(
		sk_seckill_lcore_init(&T.lc, T.arena.shm, 0, T.arena.ring[0], &T.conf, NULL, HZ),
		0);
	add_item(1, 2, true);  /* gated */
	add_item(2, 5, false); /* open to any verified buyer */
}

static void
setup_auth(void)
{
	setup_common(true);
}

static void
setup_noauth(void)
{
	setup_common(false);
}

static void
teardown(void)
{
	sk_token_key_free(T.key);
	sk_test_arena_fini(&T.arena);
}

/* bearer - "Bearer <token of @user>", with a gate claim for @gate (0: none). */
static const char *
bearer(char *buf, size_t cap, uint64_t user, uint64_t gate)
{
	struct sk_token_claims c = {
		.user = user, .gate = gate, .has_gate = gate != 0, .exp = NOW_S + 60};

	ck_assert_uint_gt(cap, 8);
	memcpy(buf, "Bearer ", 7);
	ck_assert_int_eq(sk_token_mint(T.key, &c, buf + 7, cap - 7, NULL), 0);
	return buf;
}

static enum sk_seckill_outcome
buy_as(const char *item, const char *auth, const char *user, struct sk_seckill_reply *out)
{
	struct sk_http_request r = {.method = SK_HTTP_METHOD_POST, .version = 11};

	if (auth != NULL) {
		r.authorization = auth;
		r.authorization_len = (uint16_t)strlen(auth);
	}
	if (user != NULL) {
		r.user_id = user;
		r.user_id_len = (uint16_t)strlen(user);
	}
	return sk_seckill_buy(&T.lc, item, strlen(item), &r, 0x020012c6, NOW_NS, 1000, out);
}

static void
is_gate(const struct sk_seckill_reply *out)
{
	static const char want[] = "{\"status\":\"gate\"}";

	ck_assert_uint_eq(out->status, 403);
	ck_assert_int_eq(out->canned, -1);
	ck_assert_uint_eq(out->retry_after, 0);
	ck_assert_uint_eq(out->order, 0);
	ck_assert_uint_eq(out->body_len, sizeof(want) - 1);
	ck_assert(memcmp(out->body, want, sizeof(want) - 1) == 0);
}

static uint64_t
outcomes(enum sk_seckill_outcome o)
{
	return sk_shm_stat_read(&sk_shm_lstats(T.arena.shm, 0)->buy_outcome[o]);
}

static uint64_t
remaining(uint32_t id)
{
	return sk_stock_remaining(sk_shm_item_find(T.arena.shm, id));
}

START_TEST(gate_refuses_without_the_claim)
{
	struct sk_seckill_reply out;
	char a[SK_TOKEN_MAX_LEN + 16];

	/* no claim, and a claim of another item: 403 gate, stock untouched */
	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 10, 0), NULL, &out), SK_SECKILL_GATE);
	is_gate(&out);
	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 11, 2), NULL, &out), SK_SECKILL_GATE);
	is_gate(&out);
	ck_assert_uint_eq(remaining(1), 2);
	ck_assert_uint_eq(outcomes(SK_SECKILL_GATE), 2);
	ck_assert_uint_eq(T.lc.stats.token_verifies, 2); /* one HMAC each, no more */
	ck_assert_uint_eq(T.lc.stats.token[SK_TOKEN_OK], 2);
	ck_assert_str_eq(sk_seckill_outcome_name(SK_SECKILL_GATE), "gate");
	/* nothing was queued */
	struct sk_order_rec rec;
	ck_assert_uint_ne(rte_ring_sc_dequeue_elem(T.arena.ring[0], &rec, sizeof(rec)), 0);
}
END_TEST

START_TEST(gate_claim_buys)
{
	struct sk_seckill_reply out;
	char a[SK_TOKEN_MAX_LEN + 16];
	struct sk_order_rec rec;

	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 10, 1), NULL, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(out.status, 202);
	ck_assert_uint_eq(rte_ring_sc_dequeue_elem(T.arena.ring[0], &rec, sizeof(rec)), 0);
	ck_assert_uint_eq(rec.user, 10);
	ck_assert_uint_eq(remaining(1), 1);
	/* the same user without the claim is refused before its dedup slot */
	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 10, 0), NULL, &out), SK_SECKILL_GATE);
	/* an item without the flag ignores the claim, present or not */
	ck_assert_int_eq(buy_as("2", bearer(a, sizeof(a), 20, 0), NULL, &out), SK_SECKILL_WON);
	ck_assert_int_eq(buy_as("2", bearer(a, sizeof(a), 21, 1), NULL, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(outcomes(SK_SECKILL_WON), 3);
	ck_assert_uint_eq(outcomes(SK_SECKILL_GATE), 1);
}
END_TEST

/* The identity comes first: a bad token (a gate of the wrong shape
 * included) is 401 on a gated item, never 403 gate. */
START_TEST(gate_after_identity)
{
	struct sk_seckill_reply out;
	char a[SK_TOKEN_MAX_LEN + 16];

	ck_assert_int_eq(buy_as("1", "Bearer abc.def.ghi", NULL, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_int_eq(buy_as("1", NULL, NULL, &out), SK_SECKILL_UNAUTHORIZED);
	/* a token of another key */
	struct sk_token_key *other;
	const char *s2 = "another-secret-of-32-bytes-lengt";
	struct sk_token_claims c = {.user = 9, .gate = 1, .has_gate = true, .exp = NOW_S + 60};
	ck_assert_int_eq(sk_token_key_create(s2, strlen(s2), &other), 0);
	memcpy(a, "Bearer ", 7);
	ck_assert_int_eq(sk_token_mint(other, &c, a + 7, sizeof(a) - 7, NULL), 0);
	sk_token_key_free(other);
	ck_assert_int_eq(buy_as("1", a, NULL, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_uint_eq(outcomes(SK_SECKILL_GATE), 0);
	ck_assert_uint_eq(remaining(1), 2);
}
END_TEST

/* After the sell-out, a winner's retry gets its order back (the holder
 * path); a buyer without the claim gets 410 like anyone. */
START_TEST(gate_holder_retry)
{
	struct sk_seckill_reply out;
	char a[SK_TOKEN_MAX_LEN + 16];

	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 10, 1), NULL, &out), SK_SECKILL_WON);
	uint64_t order = out.order;
	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 11, 1), NULL, &out), SK_SECKILL_WON);
	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 12, 1), NULL, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 10, 1), NULL, &out),
			 SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.order, order);
	ck_assert_int_eq(buy_as("1", bearer(a, sizeof(a), 13, 0), NULL, &out), SK_SECKILL_SOLD_OUT);
}
END_TEST

/* Auth off: X-User-Id carries no claim, so a gated item refuses every
 * buyer (403 gate), while the other items sell. */
START_TEST(gate_noauth_refuses_all)
{
	struct sk_seckill_reply out;
	char uid[24];

	for (int u = 1; u <= 5; u++) {
		snprintf(uid, sizeof(uid), "%d", u);
		ck_assert_int_eq(buy_as("1", NULL, uid, &out), SK_SECKILL_GATE);
		is_gate(&out);
	}
	ck_assert_uint_eq(remaining(1), 2);
	ck_assert_int_eq(buy_as("2", NULL, "1", &out), SK_SECKILL_WON);
	/* a Bearer token is not read with auth off */
	ck_assert_int_eq(buy_as("1", "Bearer x.y.z", "6", &out), SK_SECKILL_GATE);
	ck_assert_uint_eq(outcomes(SK_SECKILL_GATE), 6);
	/* no identity at all is still 401 */
	ck_assert_int_eq(buy_as("1", NULL, NULL, &out), SK_SECKILL_UNAUTHORIZED);
}
END_TEST

static Suite *
gate_suite(void)
{
	Suite *s = suite_create("seckill_gate");
	TCase *tc = tcase_create("auth");

	tcase_add_checked_fixture(tc, setup_auth, teardown);
	tcase_add_test(tc, gate_refuses_without_the_claim);
	tcase_add_test(tc, gate_claim_buys);
	tcase_add_test(tc, gate_after_identity);
	tcase_add_test(tc, gate_holder_retry);
	suite_add_tcase(s, tc);

	tc = tcase_create("noauth");
	tcase_add_checked_fixture(tc, setup_noauth, teardown);
	tcase_add_test(tc, gate_noauth_refuses_all);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(gate_suite, "test-seckill-gate")
