/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of POST /v1/cart (dataplane/seckill/sk_cart.h): a won cart is
 * one order with every line on the ring; every refusal names its item (or
 * its line, for a bad body) and leaves every unit in place; 415 without
 * JSON; identity by X-User-Id and by a token without an item claim; the
 * rate limits; outcomes counted in the arena with the buy's.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "seckill_fx.h"
#include "sk_cart.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"

#define JSON "application/json"

static struct seckill_fx T;

static void
add_item(uint32_t id, uint64_t total, uint32_t limit, int64_t start, int64_t end)
{
	seckill_fx_item(&T, id, total, limit, start, end);
}

static void
setup_common(bool auth, bool limits)
{
	struct sk_ratelimit_config rc = seckill_fx_limits();

	rc.item_rate = 1;
	rc.item_burst = 5;
	seckill_fx_setup(&T, auth, limits ? &rc : NULL);
	add_item(1, 3, 1, NOW_NS - 1000000000LL, INT64_MAX);
	add_item(2, 10, 5, NOW_NS - 1000000000LL, INT64_MAX);
	add_item(3, 5, 5, NOW_NS + 1500000000LL, INT64_MAX); /* starts in 1.5 s */
	add_item(4, 5, 5, NOW_NS - 20000000000LL, NOW_NS);   /* ended just now */
	add_item(5, 10, 5, NOW_NS - 1000000000LL, INT64_MAX);
}

static void
setup_noauth(void)
{
	setup_common(false, false);
}

static void
setup_auth(void)
{
	setup_common(true, false);
}

static void
setup_limits(void)
{
	setup_common(false, true);
}

static void
teardown(void)
{
	seckill_fx_teardown(&T);
}

/* cart - POST /v1/cart with @body, as user @user (X-User-Id, or the
 * Authorization value with auth on), Content-Type @ctype (NULL: none). */
static enum sk_seckill_outcome
cart(const char *user, const char *ctype, const char *body, struct sk_seckill_reply *out)
{
	struct sk_http_request r = {.method = SK_HTTP_METHOD_POST, .version = 11};
	struct sk_addr a = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 9}};

	if (user != NULL && T.conf.auth) {
		r.authorization = user;
		r.authorization_len = (uint16_t)strlen(user);
	} else if (user != NULL) {
		r.user_id = user;
		r.user_id_len = (uint16_t)strlen(user);
	}
	if (ctype != NULL) {
		r.content_type = ctype;
		r.content_type_len = (uint16_t)strlen(ctype);
	}
	r.body = (const uint8_t *)body;
	r.body_len = (uint32_t)strlen(body);
	return sk_cart_buy(&T.lc, &r, sk_client_id_of(&a, 64), NOW_NS, 1000, out);
}

static void
body_is(const struct sk_seckill_reply *out, const char *want)
{
	ck_assert_int_eq(out->canned, -1);
	ck_assert_msg(out->body_len == strlen(want) && memcmp(out->body, want, out->body_len) == 0,
		      "body %.*s, want %s", out->body_len, out->body, want);
}

static uint64_t
remaining(uint32_t id)
{
	return sk_stock_remaining(sk_shm_item_find(T.arena.shm, id));
}

static uint64_t
outcome(enum sk_seckill_outcome o)
{
	return sk_shm_stat_read(&T.lc.astats->buy_outcome[o]);
}

#define CART2 "{\"lines\":[{\"item\":5,\"qty\":2},{\"item\":1,\"qty\":1}]}"

START_TEST(won_is_one_order)
{
	struct sk_seckill_reply out;
	struct sk_order_rec rec[3];
	char want[96];

	ck_assert_int_eq(cart("42", JSON, CART2, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(out.status, 202);
	ck_assert_uint_eq(
		rte_ring_sc_dequeue_burst_elem(T.arena.ring[0], rec, sizeof(rec[0]), 3, NULL), 2);
	snprintf(want, sizeof(want), "{\"status\":\"queued\",\"order\":\"%llu\"}",
		 (unsigned long long)rec[0].id);
	body_is(&out, want);
	ck_assert_uint_eq(out.order, rec[0].id);
	ck_assert_uint_eq(rec[1].id, rec[0].id);
	ck_assert_uint_eq(rec[0].item, 1); /* in item order */
	ck_assert_uint_eq(rec[0].qty, 1);
	ck_assert_uint_eq(rec[1].item, 5);
	ck_assert_uint_eq(rec[1].qty, 2);
	ck_assert_uint_eq(rec[0].nlines, 2);
	ck_assert_uint_eq(rec[0].user, 42);
	ck_assert_uint_eq(remaining(1), 2);
	ck_assert_uint_eq(remaining(5), 8);
	ck_assert_uint_eq(outcome(SK_SECKILL_WON), 1);

	/* the same cart again: item 1 (limit 1) is held, in that order */
	ck_assert_int_eq(cart("42", JSON, CART2, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.status, 409);
	ck_assert_uint_eq(out.order, 0); /* nothing to park on */
	snprintf(want, sizeof(want), "{\"status\":\"duplicate\",\"item\":1,\"order\":\"%llu\"}",
		 (unsigned long long)rec[0].id);
	body_is(&out, want);
	ck_assert_uint_eq(remaining(5), 8);
}
END_TEST

/* Each refusal names its item and takes nothing from the other lines. */
START_TEST(refusals_name_the_item)
{
	static const struct {
		const char *body;
		enum sk_seckill_outcome o;
		uint16_t status;
		const char *want;
	} t[] = {
		{"{\"lines\":[{\"item\":5,\"qty\":1},{\"item\":7,\"qty\":1}]}",
		 SK_SECKILL_NOT_FOUND, 404, "{\"status\":\"not_found\",\"item\":7}"},
		{"{\"lines\":[{\"item\":5,\"qty\":1},{\"item\":3,\"qty\":1}]}",
		 SK_SECKILL_NOT_STARTED, 425,
		 "{\"status\":\"not_started\",\"item\":3,\"starts_in_ms\":1500}"},
		{"{\"lines\":[{\"item\":4,\"qty\":1},{\"item\":5,\"qty\":1}]}", SK_SECKILL_ENDED,
		 403, "{\"status\":\"ended\",\"item\":4}"},
		{"{\"lines\":[{\"item\":5,\"qty\":1},{\"item\":2,\"qty\":11}]}", SK_SECKILL_LIMIT,
		 409, "{\"status\":\"limit\",\"item\":2}"},
		{"{\"lines\":[{\"item\":5,\"qty\":1},{\"item\":2,\"qty\":5},{\"item\":1,\"qty\":4}]"
		 "}",
		 SK_SECKILL_LIMIT, 409, "{\"status\":\"limit\",\"item\":1}"},
	};
	struct sk_seckill_reply out;

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++) {
		ck_assert_int_eq(cart("7", JSON, t[i].body, &out), t[i].o);
		ck_assert_uint_eq(out.status, t[i].status);
		body_is(&out, t[i].want);
	}
	ck_assert_uint_eq(remaining(5), 10);
	ck_assert_uint_eq(remaining(2), 10);
	ck_assert_uint_eq(rte_ring_count(T.arena.ring[0]), 0);
}
END_TEST

START_TEST(short_and_sold_out)
{
	struct sk_seckill_reply out;

	/* item 1 has 3 units, limit 1 per user: three users empty it */
	ck_assert_int_eq(cart("1", JSON, "{\"lines\":[{\"item\":1,\"qty\":1}]}", &out),
			 SK_SECKILL_WON);
	ck_assert_int_eq(cart("2", JSON, "{\"lines\":[{\"item\":2,\"qty\":5}]}", &out),
			 SK_SECKILL_WON);
	ck_assert_int_eq(cart("3", JSON, "{\"lines\":[{\"item\":2,\"qty\":5}]}", &out),
			 SK_SECKILL_WON);
	ck_assert_int_eq(cart("4", JSON,
			      "{\"lines\":[{\"item\":5,\"qty\":1},{\"item\":2,\"qty\":1}]}", &out),
			 SK_SECKILL_SOLD_OUT);
	ck_assert_uint_eq(out.status, 410);
	body_is(&out, "{\"status\":\"sold_out\",\"item\":2}");
	ck_assert_int_eq(cart("5", JSON,
			      "{\"lines\":[{\"item\":5,\"qty\":5},{\"item\":1,\"qty\":1}]}", &out),
			 SK_SECKILL_WON);
	ck_assert_int_eq(cart("6", JSON,
			      "{\"lines\":[{\"item\":1,\"qty\":1},{\"item\":5,\"qty\":5}]}", &out),
			 SK_SECKILL_WON);
	/* 0 left of 5 after 10 units: item 5 is sold out; short is one unit too many */
	ck_assert_uint_eq(remaining(5), 0);
	ck_assert_uint_eq(remaining(1), 0);
	add_item(6, 2, 5, NOW_NS - 1000000000LL, INT64_MAX);
	ck_assert_int_eq(cart("8", JSON, "{\"lines\":[{\"item\":6,\"qty\":3}]}", &out),
			 SK_SECKILL_SOLD_OUT);
	body_is(&out, "{\"status\":\"short\",\"item\":6}");
	ck_assert_uint_eq(remaining(6), 2);
}
END_TEST

START_TEST(bad_body_and_media_type)
{
	struct sk_seckill_reply out;

	ck_assert_int_eq(cart("9", NULL, CART2, &out), SK_SECKILL_BAD_REQUEST);
	ck_assert_uint_eq(out.status, 415);
	body_is(&out, "{\"status\":\"unsupported_media_type\"}");
	ck_assert_int_eq(cart("9", "text/plain", CART2, &out), SK_SECKILL_BAD_REQUEST);
	ck_assert_uint_eq(out.status, 415);
	ck_assert_int_eq(
		cart("9", JSON "; charset=utf-8", "{\"lines\":[{\"item\":1,\"qty\":0}]}", &out),
		SK_SECKILL_BAD_REQUEST);
	ck_assert_uint_eq(out.status, 400);
	body_is(&out,
		"{\"status\":\"bad_request\",\"line\":0,\"detail\":\"qty out of range 1..1000\"}");
	ck_assert_int_eq(cart("9", JSON, "{\"lines\":[]}", &out), SK_SECKILL_BAD_REQUEST);
	body_is(&out, "{\"status\":\"bad_request\",\"line\":-1,\"detail\":\"no lines\"}");
	ck_assert_int_eq(cart("9", JSON, "", &out), SK_SECKILL_BAD_REQUEST);
	ck_assert_uint_eq(outcome(SK_SECKILL_BAD_REQUEST), 5);
	/* no identity: 401 after the body and item checks */
	ck_assert_int_eq(cart(NULL, JSON, CART2, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_uint_eq(out.status, 401);
	ck_assert_uint_eq(remaining(1), 3);
}
END_TEST

static void
mint(char *out, size_t cap, uint64_t user, bool has_item, uint64_t item)
{
	struct sk_token_claims c = {
		.user = user, .exp = NOW_S + 60, .has_item = has_item, .item = item};
	char tok[SK_TOKEN_MAX_LEN + 1];

	ck_assert_int_eq(sk_token_mint(T.key, &c, tok, sizeof(tok), NULL), 0);
	snprintf(out, cap, "Bearer %s", tok);
}

START_TEST(token_without_item_claim)
{
	struct sk_seckill_reply out;
	char h[SK_TOKEN_MAX_LEN + 16];

	mint(h, sizeof(h), 77, true, 5); /* a buy's token, for item 5 only */
	ck_assert_int_eq(cart(h, JSON, CART2, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_uint_eq(T.lc.stats.token[SK_TOKEN_E_WRONG_ITEM], 1);
	mint(h, sizeof(h), 77, false, 0);
	ck_assert_int_eq(cart(h, JSON, CART2, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(T.lc.stats.token_verifies, 2);
	/* a bad body costs no HMAC */
	ck_assert_int_eq(cart(h, JSON, "{}", &out), SK_SECKILL_BAD_REQUEST);
	ck_assert_uint_eq(T.lc.stats.token_verifies, 2);
}
END_TEST

/* A gated line needs the token's gate claim of its item: 403 gate naming
 * it, nothing taken; with the claim the cart buys. */
START_TEST(gated_line)
{
	struct sk_token_claims c = {.user = 78, .exp = NOW_S + 60};
	char tok[SK_TOKEN_MAX_LEN + 1], h[SK_TOKEN_MAX_LEN + 16];
	struct sk_seckill_reply out;

	sk_shm_item_find(T.arena.shm, 1)->gate = 1; /* as preheat copies the flag */
	mint(h, sizeof(h), 77, false, 0);
	ck_assert_int_eq(cart(h, JSON, CART2, &out), SK_SECKILL_GATE);
	ck_assert_uint_eq(out.status, 403);
	body_is(&out, "{\"status\":\"gate\",\"item\":1}");
	c.gate = 5, c.has_gate = true; /* the claim of the other line's item */
	ck_assert_int_eq(sk_token_mint(T.key, &c, tok, sizeof(tok), NULL), 0);
	snprintf(h, sizeof(h), "Bearer %s", tok);
	ck_assert_int_eq(cart(h, JSON, CART2, &out), SK_SECKILL_GATE);
	ck_assert_uint_eq(remaining(1), 3);
	ck_assert_uint_eq(remaining(5), 10);
	ck_assert_uint_eq(outcome(SK_SECKILL_GATE), 2);
	c.gate = 1;
	ck_assert_int_eq(sk_token_mint(T.key, &c, tok, sizeof(tok), NULL), 0);
	snprintf(h, sizeof(h), "Bearer %s", tok);
	ck_assert_int_eq(cart(h, JSON, CART2, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(remaining(1), 2);
}
END_TEST

/* A reserved_only line sells to the users of its set only: 403
 * not_reserved naming it, nothing taken; a reserved user's cart buys. */
START_TEST(reserved_line)
{
	size_t size = sk_reserve_size(1 << 16);
	void *mem = aligned_alloc(SK_CACHE_LINE, size);
	struct sk_reserve_zone *z = mem != NULL ? sk_reserve_init(mem, size, 1) : NULL;
	const uint64_t ids[] = {41, 42};
	struct sk_seckill_reply out;

	ck_assert_ptr_nonnull(z);
	sk_shm_item_find(T.arena.shm, 1)->reserved_only = 1; /* as preheat copies the flag */
	ck_assert_int_eq(sk_reserve_add(z, 1, ids, 2, NULL), 0);
	ck_assert_int_eq(cart("40", JSON, CART2, &out), SK_SECKILL_NOT_RESERVED); /* no sets yet */
	ck_assert_int_eq(sk_seckill_reserve_attach(&T.lc, z), 0);
	ck_assert_int_eq(cart("40", JSON, CART2, &out), SK_SECKILL_NOT_RESERVED);
	ck_assert_uint_eq(out.status, 403);
	body_is(&out, "{\"status\":\"not_reserved\",\"item\":1}");
	ck_assert_uint_eq(remaining(1), 3);
	ck_assert_uint_eq(remaining(5), 10);
	ck_assert_uint_eq(outcome(SK_SECKILL_NOT_RESERVED), 2);
	ck_assert_int_eq(cart("41", JSON, CART2, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(remaining(1), 2);
	T.lc.reserve = NULL;
	free(mem);
}
END_TEST

/* The address pays once per cart; each line's item limit is its own. */
START_TEST(rate_limits)
{
	struct sk_seckill_reply out;
	char user[8];

	for (unsigned i = 0; i < 3; i++) {
		snprintf(user, sizeof(user), "%u", 100 + i);
		ck_assert_int_eq(cart(user, JSON, CART2, &out), SK_SECKILL_WON);
	}
	ck_assert_int_eq(cart("200", JSON, CART2, &out), SK_SECKILL_RATE_LIMITED);
	ck_assert_uint_eq(out.status, 429);
	ck_assert_uint_gt(out.retry_after, 0);
	ck_assert_uint_eq(remaining(5), 4);
}
END_TEST

static Suite *
cart_suite(void)
{
	Suite *s = suite_create("cart");
	TCase *tc = tcase_create("noauth");

	tcase_add_checked_fixture(tc, setup_noauth, teardown);
	tcase_add_test(tc, won_is_one_order);
	tcase_add_test(tc, refusals_name_the_item);
	tcase_add_test(tc, short_and_sold_out);
	tcase_add_test(tc, bad_body_and_media_type);
	tcase_add_test(tc, reserved_line);
	suite_add_tcase(s, tc);
	tc = tcase_create("auth");
	tcase_add_checked_fixture(tc, setup_auth, teardown);
	tcase_add_test(tc, token_without_item_claim);
	tcase_add_test(tc, gated_line);
	suite_add_tcase(s, tc);
	tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, setup_limits, teardown);
	tcase_add_test(tc, rate_limits);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(cart_suite, "test-cart")
