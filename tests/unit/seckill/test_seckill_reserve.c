/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the reservation check of the buy route (sk_seckill): a
 * reserved_only item sells to the users of its set only and answers the
 * others 403 {"status":"not_reserved"}, counted apart, stock untouched;
 * the check comes after identity and the window (401, 425, 403 ended win);
 * other items do not look; no sets attached refuses everyone; ids added
 * while the lcore runs are seen; the lcore acknowledges a grown set's
 * generation once per burst; with tokens, the user claimed before the HMAC
 * (the prefetch's) never decides.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sk_reserve.h"
#include "sk_seckill.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"

#define EPOCH  1764000002u
#define NOW_NS (1800000000LL * 1000000000LL)
#define HZ     1000000000ULL

static struct {
	struct sk_test_arena arena;
	struct sk_seckill_conf conf;
	struct sk_seckill_lcore lc;
	struct sk_reserve_zone *z;
	void *mem;
} T;

static void
add_item(uint32_t id, uint64_t total, int64_t start, bool reserved_only)
{
	struct sk_stock_conf c = {.id = id,
				  .per_user_limit = 1,
				  .start_ns = start,
				  .end_ns = INT64_MAX,
				  .price = 500,
				  .total = total,
				  .reserved_only = reserved_only};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(T.arena.shm, &c, 0, &it), 0);
}

static void
setup(void)
{
	struct sk_shm_conf c = {.nlcores = 1,
				.max_items = 8,
				.dedup_slots = 8192,
				.status_bits = 12,
				.epoch = EPOCH};
	size_t size = sk_reserve_size(1 << 20);

	sk_test_arena_init(&T.arena, &c);
	sk_test_arena_rings(&T.arena, 1024);
	T.conf = (struct sk_seckill_conf){.auth = false, .token_skew_s = 5};
	ck_assert_int_eq(
		sk_seckill_lcore_init(&T.lc, T.arena.shm, 0, T.arena.ring[0], &T.conf, NULL, HZ),
		0);
	T.mem = aligned_alloc(SK_CACHE_LINE, size);
	ck_assert_ptr_nonnull(T.mem);
	T.z = sk_reserve_init(T.mem, size, 1);
	ck_assert_ptr_nonnull(T.z);
	add_item(1, 3, NOW_NS - 1000000000LL, true);  /* reserved only */
	add_item(2, 3, NOW_NS - 1000000000LL, false); /* open to all */
	add_item(3, 3, NOW_NS + 1500000000LL, true);  /* reserved, not started */
	add_item(4, 1, NOW_NS - 1000000000LL, true);  /* reserved, one unit */
	const uint64_t ids[] = {10, 11, 12};
	ck_assert_int_eq(sk_reserve_add(T.z, 1, ids, 3, NULL), 0);
	ck_assert_int_eq(sk_reserve_add(T.z, 4, ids, 3, NULL), 0);
}

static void
teardown(void)
{
	sk_test_arena_fini(&T.arena);
	free(T.mem);
}

static enum sk_seckill_outcome
buy(const char *item, const char *user, struct sk_seckill_reply *out)
{
	struct sk_http_request r = {.method = SK_HTTP_METHOD_POST, .version = 11};

	if (user != NULL) {
		r.user_id = user;
		r.user_id_len = (uint16_t)strlen(user);
	}
	return sk_seckill_buy(&T.lc, item, strlen(item), &r, 0x020012c6, NOW_NS, 1000, out);
}

static void
is_not_reserved(const struct sk_seckill_reply *out)
{
	static const char want[] = "{\"status\":\"not_reserved\"}";

	ck_assert_uint_eq(out->status, 403);
	ck_assert_int_eq(out->canned, -1);
	ck_assert_uint_eq(out->order, 0);
	ck_assert_uint_eq(out->body_len, sizeof(want) - 1);
	ck_assert(memcmp(out->body, want, sizeof(want) - 1) == 0);
}

static uint64_t
counted(enum sk_seckill_outcome o)
{
	return sk_shm_lstats(T.arena.shm, 0)->buy_outcome[o];
}

static uint64_t
remaining(uint32_t id)
{
	return sk_stock_remaining(sk_shm_item_find(T.arena.shm, id));
}

START_TEST(reserved_buys_others_refused)
{
	struct sk_seckill_reply out;

	ck_assert_int_eq(sk_seckill_reserve_attach(&T.lc, T.z), 0);
	ck_assert_int_eq(buy("1", "99", &out), SK_SECKILL_NOT_RESERVED);
	is_not_reserved(&out);
	ck_assert_uint_eq(remaining(1), 3); /* a refusal never touches stock */
	ck_assert_int_eq(buy("1", "10", &out), SK_SECKILL_WON);
	ck_assert_uint_eq(out.status, 202);
	ck_assert_int_eq(buy("1", "10", &out), SK_SECKILL_DUPLICATE);
	ck_assert_int_eq(buy("1", "98", &out), SK_SECKILL_NOT_RESERVED);
	ck_assert_uint_eq(counted(SK_SECKILL_NOT_RESERVED), 2);
	ck_assert_uint_eq(counted(SK_SECKILL_WON), 1);
	ck_assert_uint_eq(remaining(1), 2);
	ck_assert_str_eq(sk_seckill_outcome_name(SK_SECKILL_NOT_RESERVED), "not_reserved");
	/* An item that is not reserved_only never looks at a set. */
	ck_assert_int_eq(buy("2", "99", &out), SK_SECKILL_WON);
}
END_TEST

/* Cheaper refusals first: identity, window; sold out before everything. */
START_TEST(order_of_checks)
{
	struct sk_seckill_reply out;

	ck_assert_int_eq(sk_seckill_reserve_attach(&T.lc, T.z), 0);
	ck_assert_int_eq(buy("1", NULL, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_int_eq(buy("3", "99", &out), SK_SECKILL_NOT_STARTED);
	ck_assert_int_eq(buy("4", "11", &out), SK_SECKILL_WON);
	ck_assert_int_eq(buy("4", "12", &out), SK_SECKILL_SOLD_OUT); /* finds it empty */
	ck_assert_int_eq(buy("4", "99", &out), SK_SECKILL_SOLD_OUT); /* the flag, first */
	ck_assert_uint_eq(counted(SK_SECKILL_NOT_RESERVED), 0);
}
END_TEST

START_TEST(no_sets_refuse_everyone)
{
	struct sk_seckill_reply out;

	/* Not attached (seckill.reserve_mb = 0): a reserved_only item sells to nobody. */
	ck_assert_int_eq(buy("1", "10", &out), SK_SECKILL_NOT_RESERVED);
	is_not_reserved(&out);
	ck_assert_int_eq(buy("2", "10", &out), SK_SECKILL_WON);
	ck_assert_int_eq(sk_seckill_reserve_attach(&T.lc, NULL), -EINVAL);
}
END_TEST

/* Ids added while the lcore runs are seen at once; a grown table is
 * published under it and its generation acknowledged at the next poll. */
START_TEST(added_while_running)
{
	enum { N = 5000 };
	struct sk_seckill_reply out;
	static uint64_t ids[N];

	ck_assert_int_eq(sk_seckill_reserve_attach(&T.lc, T.z), 0);
	ck_assert_int_eq(buy("1", "5001", &out), SK_SECKILL_NOT_RESERVED);
	for (uint64_t i = 0; i < N; i++)
		ids[i] = 1000 + i;
	uint64_t g = atomic_load(&T.z->gen);
	ck_assert_int_eq(sk_reserve_add(T.z, 1, ids, N, NULL), 0); /* grows */
	ck_assert_uint_gt(atomic_load(&T.z->gen), g);
	ck_assert(!sk_reserve_quiescent(T.z));
	ck_assert_int_eq(buy("1", "5001", &out), SK_SECKILL_WON);
	(void)sk_seckill_live_poll(&T.lc); /* between bursts */
	ck_assert(sk_reserve_quiescent(T.z));
	ck_assert_uint_eq(T.lc.reserve_gen, atomic_load(&T.z->gen));
}
END_TEST

/* jwt_buy - buy item 1 with a Bearer token of @user signed by @key; the
 * signature's first character changed if @forge. */
static enum sk_seckill_outcome
jwt_buy(const struct sk_token_key *key, uint64_t user, bool forge, struct sk_seckill_reply *out)
{
	struct sk_token_claims cl = {.user = user,
				     .item = 1,
				     .has_item = true,
				     .iat = NOW_NS / 1000000000 - 60,
				     .has_iat = true,
				     .exp = NOW_NS / 1000000000 + 3600};
	char auth[SK_TOKEN_MAX_LEN + 8] = "Bearer ";
	size_t len;

	ck_assert_int_eq(sk_token_mint(key, &cl, auth + 7, sizeof(auth) - 7, &len), 0);
	if (forge) {
		char *sig = strrchr(auth, '.') + 1;

		sig[0] = sig[0] == 'A' ? 'B' : 'A';
	}
	struct sk_http_request r = {.method = SK_HTTP_METHOD_POST,
				    .version = 11,
				    .authorization = auth,
				    .authorization_len = (uint16_t)(len + 7)};
	return sk_seckill_buy(&T.lc, "1", 1, &r, 0x020012c6, NOW_NS, 1000, out);
}

/* With auth on, the set's line is prefetched for the token's claimed sub
 * before the HMAC, but only the verified user decides: a forged token of a
 * reserved user is 401, a good token of another user 403, and neither
 * takes a unit. */
START_TEST(jwt_claimed_user_never_decides)
{
	static const char secret[] = "reserve-test-secret-0123456789-abcdef";
	struct sk_token_key *key;
	struct sk_seckill_reply out;

	ck_assert_int_eq(sk_token_key_create(secret, sizeof(secret) - 1, &key), 0);
	T.conf.auth = true;
	T.conf.key = key;
	ck_assert_int_eq(sk_seckill_reserve_attach(&T.lc, T.z), 0);
	ck_assert_int_eq(jwt_buy(key, 10, true, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_int_eq(jwt_buy(key, 99, false, &out), SK_SECKILL_NOT_RESERVED);
	is_not_reserved(&out);
	ck_assert_uint_eq(remaining(1), 3);
	ck_assert_int_eq(jwt_buy(key, 10, false, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(remaining(1), 2);
	sk_token_key_free(key);
}
END_TEST

static Suite *
seckill_reserve_suite(void)
{
	Suite *s = suite_create("seckill_reserve");
	TCase *tc = tcase_create("route");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reserved_buys_others_refused);
	tcase_add_test(tc, order_of_checks);
	tcase_add_test(tc, no_sets_refuse_everyone);
	tcase_add_test(tc, jwt_claimed_user_never_decides);
	tcase_add_test(tc, added_while_running);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(seckill_reserve_suite, "test-seckill-reserve")
