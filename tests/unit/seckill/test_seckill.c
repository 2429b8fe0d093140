/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the seckill API logic (sk_seckill): statuses and bodies of
 * design §4 for every outcome, identity by token and by X-User-Id, the time
 * window, rate limits (checked before the token's HMAC: a forged flood is
 * refused 429 without one), that a refused request never touches stock,
 * and that every request is counted in the lcore's stats block of the
 * arena (what the control plane's /metrics exports, through
 * sk_dpmetrics_write()).
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_dpmetrics.h"
#include "seckill_fx.h"
#include "sk_seckill.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"

static struct seckill_fx T;

static struct sk_item *
add_item(uint32_t id, uint64_t total, int64_t start, int64_t end)
{
	return seckill_fx_item(&T, id, total, 1, start, end);
}

static void
setup_common(bool auth, bool limits)
{
	struct sk_ratelimit_config rc = seckill_fx_limits();

	seckill_fx_setup(&T, auth, limits ? &rc : NULL);
	add_item(1, 3, NOW_NS - 1000000000LL, INT64_MAX);
	add_item(2, 5, NOW_NS + 1500000000LL, INT64_MAX); /* starts in 1.5 s */
	add_item(3, 5, NOW_NS - 20000000000LL, NOW_NS);	  /* ended just now */
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

static struct sk_http_request
req_user(const char *user)
{
	struct sk_http_request r = {.method = SK_HTTP_METHOD_POST, .version = 11};

	if (user != NULL) {
		r.user_id = user;
		r.user_id_len = (uint16_t)strlen(user);
	}
	return r;
}

static struct sk_http_request
req_auth(const char *value)
{
	struct sk_http_request r = {.method = SK_HTTP_METHOD_POST, .version = 11};

	r.authorization = value;
	r.authorization_len = (uint16_t)strlen(value);
	return r;
}

static enum sk_seckill_outcome
buy(const char *item, const struct sk_http_request *r, struct sk_seckill_reply *out)
{
	return sk_seckill_buy(&T.lc, item, strlen(item), r, 0x020012c6, NOW_NS, 1000, out);
}

static void
body_is(const struct sk_seckill_reply *out, const char *want)
{
	ck_assert_int_eq(out->canned, -1);
	ck_assert_uint_eq(out->body_len, strlen(want));
	ck_assert_msg(memcmp(out->body, want, out->body_len) == 0, "body %.*s, want %s",
		      out->body_len, out->body, want);
}

static uint64_t
remaining(uint32_t id)
{
	return sk_stock_remaining(sk_shm_item_find(T.arena.shm, id));
}

/* ------------------------------------------------------------------ buy */

START_TEST(win_then_duplicate_then_sold_out)
{
	struct sk_seckill_reply out;
	struct sk_http_request r = req_user("42");
	char want[128];

	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(out.status, 202);
	struct sk_order_rec rec;
	ck_assert_uint_eq(rte_ring_sc_dequeue_elem(T.arena.ring[0], &rec, sizeof(rec)), 0);
	ck_assert_uint_eq(rec.user, 42);
	snprintf(want, sizeof(want), "{\"status\":\"queued\",\"order\":\"%llu\"}",
		 (unsigned long long)rec.id);
	body_is(&out, want);

	/* the retry gets the same order; once confirmed, a 200 */
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.status, 202);
	snprintf(want, sizeof(want),
		 "{\"status\":\"queued\",\"order\":\"%llu\",\"duplicate\":true}",
		 (unsigned long long)rec.id);
	body_is(&out, want);
	ck_assert_int_eq(
		sk_status_move(&T.lc.buy.status, rec.id, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED), 0);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.status, 200);
	snprintf(want, sizeof(want),
		 "{\"status\":\"confirmed\",\"order\":\"%llu\",\"duplicate\":true}",
		 (unsigned long long)rec.id);
	body_is(&out, want);

	struct sk_http_request r2 = req_user("43"), r3 = req_user("44"), r4 = req_user("45");
	ck_assert_int_eq(buy("1", &r2, &out), SK_SECKILL_WON);
	ck_assert_int_eq(buy("1", &r3, &out), SK_SECKILL_WON);
	ck_assert_int_eq(buy("1", &r4, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_uint_eq(out.status, 410);
	ck_assert_int_eq(out.canned, SK_HTTP_CANNED_SOLD_OUT);
	/* from now on the flag answers before any buy; only a holder's retry
	 * still gets its order back (a winner whose answer was lost) */
	struct sk_http_request anon = req_user(NULL);
	ck_assert_int_eq(buy("1", &anon, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.status, 200);
	ck_assert_uint_eq(out.order, rec.id);
	body_is(&out, want);
	ck_assert_int_eq(buy("1", &r4, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_uint_eq(sk_shm_lstats(T.arena.shm, 0)->buy_outcome[SK_SECKILL_WON], 3);
	ck_assert_uint_eq(sk_shm_lstats(T.arena.shm, 0)->buy_outcome[SK_SECKILL_DUPLICATE], 3);
	ck_assert_uint_eq(sk_shm_lstats(T.arena.shm, 0)->buy_outcome[SK_SECKILL_SOLD_OUT], 3);
}
END_TEST

/* A buyer at an item's per-user limit above 1 gets 409 with its order. */
START_TEST(limit_answer)
{
	struct sk_item *it = add_item(7, 10, NOW_NS - 1000000000LL, INT64_MAX);
	struct sk_http_request r = req_user("77");
	struct sk_seckill_reply out;
	struct sk_order_rec rec[2];
	char want[128];

	it->per_user_limit = 2;
	ck_assert_int_eq(buy("7", &r, &out), SK_SECKILL_WON);
	ck_assert_int_eq(buy("7", &r, &out), SK_SECKILL_WON);
	for (int i = 0; i < 2; i++)
		ck_assert_uint_eq(
			rte_ring_sc_dequeue_elem(T.arena.ring[0], &rec[i], sizeof(rec[i])), 0);
	snprintf(want, sizeof(want), "{\"status\":\"queued\",\"order\":\"%llu\"}",
		 (unsigned long long)rec[1].id);
	body_is(&out, want);
	ck_assert_int_eq(buy("7", &r, &out), SK_SECKILL_LIMIT);
	ck_assert_uint_eq(out.status, 409);
	ck_assert(out.order == rec[0].id || out.order == rec[1].id);
	snprintf(want, sizeof(want), "{\"status\":\"limit\",\"order\":\"%llu\"}",
		 (unsigned long long)out.order);
	body_is(&out, want);
	ck_assert_uint_eq(remaining(7), 8);
}
END_TEST

/* ---------------------------------------------------------- arena stats */

/* metric - the value of sample @key in @text (which must hold it once). */
static uint64_t
metric(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text, *hit = NULL;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[kl] == ' ') {
			ck_assert_msg(hit == NULL, "%s twice", key);
			hit = p;
		}
		p += kl;
	}
	ck_assert_msg(hit != NULL, "no sample %s in:\n%s", key, text);
	return strtoull(hit + kl + 1, NULL, 10);
}

/* The control plane labels the outcomes with the dataplane's names. */
START_TEST(outcome_names_match)
{
	for (unsigned k = 0; k < SK_SECKILL__COUNT; k++) {
		ck_assert_ptr_nonnull(sk_dpmetrics_outcome_name(k));
		ck_assert_str_eq(sk_dpmetrics_outcome_name(k), sk_seckill_outcome_name(k));
	}
	for (unsigned k = SK_SECKILL__COUNT; k < SK_SHM_OUTCOMES; k++)
		ck_assert_ptr_null(sk_dpmetrics_outcome_name(k));
}
END_TEST

/*
 * Every answer of sk_seckill_buy lands in the lcore's arena block, the same
 * as in lc->stats; polls and reads too; and sk_dpmetrics_write() reads them
 * back as seckill_requests_total{outcome=...}.
 */
START_TEST(requests_in_arena)
{
	static const struct {
		const char *item, *user;
		enum sk_seckill_outcome want;
	} reqs[] = {
		{"1", "10", SK_SECKILL_WON},	     {"1", "10", SK_SECKILL_DUPLICATE},
		{"1", "11", SK_SECKILL_WON},	     {"2", "10", SK_SECKILL_NOT_STARTED},
		{"3", "10", SK_SECKILL_ENDED},	     {"1", NULL, SK_SECKILL_UNAUTHORIZED},
		{"1", "0", SK_SECKILL_UNAUTHORIZED}, {"9", "10", SK_SECKILL_NOT_FOUND},
		{"1", "12", SK_SECKILL_WON},	     {"1", "13", SK_SECKILL_SOLD_OUT},
		{"1", "14", SK_SECKILL_SOLD_OUT},
	};
	const struct sk_shm_lcore_stats *ls = sk_shm_lstats(T.arena.shm, 0);
	uint64_t want[SK_SHM_OUTCOMES] = {0};
	struct sk_seckill_reply out;
	char *text = NULL;
	size_t len = 0;
	char key[96];
	FILE *f;

	for (size_t i = 0; i < SK_ARRAY_SIZE(reqs); i++) {
		struct sk_http_request r = req_user(reqs[i].user);

		ck_assert_int_eq(buy(reqs[i].item, &r, &out), reqs[i].want);
		want[reqs[i].want]++;
		for (unsigned k = 0; k < SK_SHM_OUTCOMES; k++)
			ck_assert_msg(sk_shm_stat_read(&ls->buy_outcome[k]) == want[k],
				      "request %zu: outcome %u counted %" PRIu64 ", want %" PRIu64,
				      i, k, ls->buy_outcome[k], want[k]);
	}
	sk_seckill_order(&T.lc, "1", 1, &out);
	sk_seckill_order(&T.lc, "2", 1, &out);
	sk_seckill_item(&T.lc, "1", 1, NOW_NS, &out);
	ck_assert_uint_eq(ls->order_polls, 2);
	ck_assert_uint_eq(ls->item_reads, 1);
	/* the seckill route counts no latency and no HTTP status: sk_app does */
	for (unsigned b = 0; b < SK_SHM_LAT_BUCKETS; b++)
		ck_assert_uint_eq(ls->lat_bucket[b], 0);

	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sk_dpmetrics_write(T.arena.shm, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	for (unsigned k = 0; k < SK_SECKILL__COUNT; k++) {
		snprintf(key, sizeof(key), "seckill_requests_total{outcome=\"%s\"}",
			 sk_seckill_outcome_name(k));
		ck_assert_uint_eq(metric(text, key), want[k]);
	}
	ck_assert_uint_eq(metric(text, "seckill_requests_total{outcome=\"won\"}"), 3);
	ck_assert_uint_eq(metric(text, "seckill_order_polls_total"), 2);
	ck_assert_uint_eq(metric(text, "seckill_item_reads_total"), 1);
	free(text);
}
END_TEST

START_TEST(duplicate_of_earlier_run)
{
	struct sk_seckill_reply out;
	struct sk_http_request r = req_user("77");
	struct sk_dedup d;
	uint64_t old = sk_order_id_make(EPOCH - 5, 0, 0, 3);
	char want[128];

	/* what recovery does for a winner of an earlier run */
	sk_shm_dedup(T.arena.shm, sk_shm_item_find(T.arena.shm, 1), &d);
	ck_assert_int_eq(sk_dedup_restore(&d, 77, 1, old), 0);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.status, 200);
	ck_assert_uint_eq(out.order, old);
	snprintf(want, sizeof(want),
		 "{\"status\":\"confirmed\",\"order\":\"%llu\",\"duplicate\":true}",
		 (unsigned long long)old);
	body_is(&out, want);
}
END_TEST

START_TEST(window_and_lookup)
{
	struct sk_seckill_reply out;
	struct sk_http_request r = req_user("7");

	ck_assert_int_eq(buy("2", &r, &out), SK_SECKILL_NOT_STARTED);
	ck_assert_uint_eq(out.status, 425);
	body_is(&out, "{\"status\":\"not_started\",\"starts_in_ms\":1500}");
	ck_assert_int_eq(buy("3", &r, &out), SK_SECKILL_ENDED);
	ck_assert_uint_eq(out.status, 403);
	ck_assert_int_eq(out.canned, SK_HTTP_CANNED_ENDED);
	atomic_store(&sk_shm_item_find(T.arena.shm, 1)->state, SK_ITEM_CLOSED);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_ENDED);
	atomic_store(&sk_shm_item_find(T.arena.shm, 1)->state, SK_ITEM_ACTIVE);

	static const char *const bad[] = {"9",	"0",  "01",	    "",
					  "1x", "-1", "4294967296", "99999999999999999999999"};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		ck_assert_int_eq(buy(bad[i], &r, &out), SK_SECKILL_NOT_FOUND);
		ck_assert_uint_eq(out.status, 404);
	}
	ck_assert_uint_eq(remaining(1), 3);
	ck_assert_uint_eq(remaining(2), 5);
	ck_assert_uint_eq(remaining(3), 5);
}
END_TEST

START_TEST(user_id_header)
{
	struct sk_seckill_reply out;
	static const char *const bad[] = {
		NULL, "", "0", "abc", "-5", "007", "18446744073709551616"};

	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		struct sk_http_request r = req_user(bad[i]);
		ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_UNAUTHORIZED);
		ck_assert_uint_eq(out.status, 401);
	}
	ck_assert_uint_eq(remaining(1), 3);
	struct sk_http_request r = req_user("18446744073709551615");
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
}
END_TEST

static void
mint(char *out, size_t cap, uint64_t user, int64_t exp, bool has_item, uint64_t item)
{
	struct sk_token_claims c = {.user = user, .exp = exp, .has_item = has_item, .item = item};
	char tok[SK_TOKEN_MAX_LEN + 1];

	ck_assert_int_eq(sk_token_mint(T.key, &c, tok, sizeof(tok), NULL), 0);
	snprintf(out, cap, "Bearer %s", tok);
}

START_TEST(tokens)
{
	struct sk_seckill_reply out;
	char h[SK_TOKEN_MAX_LEN + 16];

	/* X-User-Id is ignored when auth is on */
	struct sk_http_request r = req_user("5");
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_UNAUTHORIZED);

	mint(h, sizeof(h), 5, NOW_S - 10, false, 0); /* expired beyond the skew */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_uint_eq(T.lc.stats.token[SK_TOKEN_E_EXPIRED], 1);

	mint(h, sizeof(h), 5, NOW_S + 60, true, 2); /* for another item */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_uint_eq(T.lc.stats.token[SK_TOKEN_E_WRONG_ITEM], 1);

	mint(h, sizeof(h), 5, NOW_S + 60, true, 1);
	h[strlen(h) - 2] ^= 1; /* forged signature */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_uint_eq(
		T.lc.stats.token[SK_TOKEN_E_SIGNATURE] + T.lc.stats.token[SK_TOKEN_E_BASE64], 1);

	static const char *const junk[] = {"Basic dXNlcjpwdw==", "Bearer", "Bearer ",
					   "bearer x.y.z"};
	for (size_t i = 0; i < SK_ARRAY_SIZE(junk); i++) {
		r = req_auth(junk[i]);
		ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_UNAUTHORIZED);
		ck_assert_uint_eq(out.status, 401);
		ck_assert_int_eq(out.canned, SK_HTTP_CANNED_UNAUTHORIZED);
	}
	ck_assert_uint_eq(remaining(1), 3); /* stock never touched */

	mint(h, sizeof(h), 5, NOW_S + 60, true, 1);
	h[0] = 'b'; /* scheme is case-insensitive */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
	mint(h, sizeof(h), 6, NOW_S + 60, false, 0); /* a token for any item */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(remaining(1), 1);
}
END_TEST

/* After the sell-out a holder's retry gets its order; a forged claim never does. */
START_TEST(sold_out_holder_tokens)
{
	struct sk_seckill_reply out;
	struct sk_http_request r;
	char h[SK_TOKEN_MAX_LEN + 16];
	uint64_t won = 0;

	for (uint64_t u = 5; u <= 7; u++) {
		mint(h, sizeof(h), u, NOW_S + 60, true, 1);
		r = req_auth(h);
		ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
		if (u == 5)
			won = out.order;
	}
	ck_assert_uint_eq(remaining(1), 0);
	mint(h, sizeof(h), 8, NOW_S + 60, true, 1); /* finds it empty: the flag goes up */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_SOLD_OUT);

	/* a non-holder: 410 without any signature check */
	uint64_t verified = T.lc.stats.token[SK_TOKEN_OK];
	mint(h, sizeof(h), 9, NOW_S + 60, true, 1);
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_uint_eq(T.lc.stats.token[SK_TOKEN_OK], verified);

	/* the holder: verified, its order back */
	mint(h, sizeof(h), 5, NOW_S + 60, true, 1);
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.order, won);
	ck_assert_uint_eq(T.lc.stats.token[SK_TOKEN_OK], verified + 1);

	/* claims of the holder that do not verify: 410, no order leaked */
	h[strlen(h) - 2] ^= 1; /* forged signature */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_uint_eq(out.order, 0);
	mint(h, sizeof(h), 5, NOW_S - 10, true, 1); /* expired */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_SOLD_OUT);
	mint(h, sizeof(h), 5, NOW_S + 60, true, 2); /* for another item */
	r = req_auth(h);
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_SOLD_OUT);
	r = req_auth("Bearer not-a-token");
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_SOLD_OUT);

	/* the peek reads the claim only */
	uint64_t user = 0;
	mint(h, sizeof(h), 77, NOW_S + 60, false, 0);
	ck_assert_int_eq(sk_token_peek_user(h + 7, strlen(h + 7), &user), 0);
	ck_assert_uint_eq(user, 77);
	/* sub not first: the full parse; a zero sub refused; the largest id */
	static const char later[] = "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjEsInN1YiI6Ijc3In0.c2ln";
	static const char zero[] = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwIiwiZXhwIjoxfQ.c2ln";
	static const char big[] = "eyJhbGciOiJIUzI1NiJ9."
				  "eyJzdWIiOiIxODQ0Njc0NDA3MzcwOTU1MTYxNSIsImV4cCI6MX0.c2ln";
	user = 0;
	ck_assert_int_eq(sk_token_peek_user(later, strlen(later), &user), 0);
	ck_assert_uint_eq(user, 77);
	ck_assert_int_eq(sk_token_peek_user(zero, strlen(zero), &user), -EINVAL);
	ck_assert_int_eq(sk_token_peek_user(big, strlen(big), &user), 0);
	ck_assert_uint_eq(user, UINT64_MAX);
	ck_assert_int_eq(sk_token_peek_user("a.b", 3, &user), -EINVAL);
	ck_assert_int_eq(sk_token_peek_user("x..y", 4, &user), -EINVAL);
	ck_assert_int_eq(sk_token_peek_user(NULL, 0, &user), -EINVAL);
}
END_TEST

START_TEST(rate_limit)
{
	struct sk_seckill_reply out;
	char user[8];

	/* one client address: a burst of 3, then 429 with Retry-After */
	for (int i = 0; i < 3; i++) {
		snprintf(user, sizeof(user), "%d", 100 + i);
		struct sk_http_request r = req_user(user);
		ck_assert_int_ne(buy("1", &r, &out), SK_SECKILL_RATE_LIMITED);
	}
	struct sk_http_request r = req_user("200");
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_RATE_LIMITED);
	ck_assert_uint_eq(out.status, 429);
	ck_assert_uint_ge(out.retry_after, 1);
	body_is(&out, "{\"status\":\"busy\"}");
	ck_assert_uint_eq(remaining(1), 0);
	/* a second later one more passes (and finds the item sold out) */
	ck_assert_int_eq(sk_seckill_buy(&T.lc, "1", 1, &r, 0x020012c6, NOW_NS, 1000 + HZ, &out),
			 SK_SECKILL_SOLD_OUT);
	/* sold-out answers do not even reach the limiter */
	ck_assert_int_eq(sk_seckill_buy(&T.lc, "1", 1, &r, 0x020012c6, NOW_NS, 1000 + HZ, &out),
			 SK_SECKILL_SOLD_OUT);
}
END_TEST

/* ------------------------------------------------- limits before the HMAC */

/* use_limits - give the lcore a limiter with @rc's limits (1 lcore, 8 items). */
static void
use_limits(struct sk_ratelimit_config rc)
{
	rc.hz = HZ;
	rc.n_items = 8;
	rc.n_lcores = 1;
	rc.seed = 0x5eed;
	ck_assert_ptr_null(T.rl);
	ck_assert_int_eq(sk_ratelimit_create(&rc, &T.rl), 0);
	ck_assert_int_eq(
		sk_seckill_lcore_init(&T.lc, T.arena.shm, 0, T.arena.ring[0], &T.conf, T.rl, HZ),
		0);
}

static enum sk_seckill_outcome
buy_at(const char *item, const struct sk_http_request *r, uint32_t ip, uint64_t tsc,
       struct sk_seckill_reply *out)
{
	return sk_seckill_buy(&T.lc, item, strlen(item), r, ip, NOW_NS, tsc, out);
}

/* verifications - sk_token_verify() calls (HMACs at most) so far. Every
 * request of these tests carries a Bearer token, so each is also one
 * result counted in token[]. */
static uint64_t
verifications(void)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < SK_TOKEN__COUNT; k++)
		n += T.lc.stats.token[k];
	ck_assert_uint_eq(T.lc.stats.token_verifies, n);
	return T.lc.stats.token_verifies;
}

/* forge - a well-formed token of @user for item 1 whose signature is wrong
 * but canonical base64url: it costs a full HMAC to refuse. */
static void
forge(char *h, size_t cap, uint64_t user)
{
	char *sig;

	mint(h, cap, user, NOW_S + 60, true, 1);
	sig = strrchr(h, '.') + 1;
	sig[0] = sig[0] == 'A' ? 'B' : 'A';
}

static void
is_busy(const struct sk_seckill_reply *out)
{
	ck_assert_uint_eq(out->status, 429);
	ck_assert_uint_ge(out->retry_after, 1);
	body_is(out, "{\"status\":\"busy\"}");
}

/*
 * Issue 11: N forged tokens from one address with the per-IP limit on.
 * Exactly `burst` of them reach verification (401); the rest are refused
 * 429 with Retry-After before any HMAC. The stock is never touched, and the
 * flood takes nothing from the item and global limits: a real buyer from
 * another address still wins.
 */
static const struct {
	unsigned n, burst;
} forged_cases[] = {
	{1, 3}, {3, 3}, {4, 3}, {10, 3}, {200, 3}, {50, 1}, {64, 40}, {1000, 40},
};

START_TEST(forged_flood_limited_before_hmac)
{
	const unsigned n = forged_cases[_i].n, burst = forged_cases[_i].burst;
	const unsigned verified = n < burst ? n : burst;
	struct sk_ratelimit_config rc;
	struct sk_seckill_reply out;
	struct sk_http_request r;
	char h[SK_TOKEN_MAX_LEN + 16];

	sk_ratelimit_config_defaults(&rc);
	rc.ip_rate = 1;
	rc.ip_burst = burst;
	rc.item_rate = 1;
	rc.item_burst = 2;
	rc.global_rate = 1;
	rc.global_burst = 2;
	use_limits(rc);
	forge(h, sizeof(h), 5);
	r = req_auth(h);
	for (unsigned i = 0; i < n; i++) {
		uint64_t before = verifications();
		enum sk_seckill_outcome o = buy_at("1", &r, 0x0a000001, 1000 + i, &out);

		if (i < burst) {
			ck_assert_int_eq(o, SK_SECKILL_UNAUTHORIZED);
			ck_assert_uint_eq(verifications(), before + 1);
		} else {
			ck_assert_int_eq(o, SK_SECKILL_RATE_LIMITED);
			is_busy(&out);
			ck_assert_uint_eq(verifications(), before);
		}
	}
	ck_assert_uint_eq(verifications(), verified);
	ck_assert_uint_eq(T.lc.stats.token[SK_TOKEN_E_SIGNATURE], verified);
	ck_assert_uint_eq(sk_shm_lstats(T.arena.shm, 0)->buy_outcome[SK_SECKILL_UNAUTHORIZED],
			  verified);
	ck_assert_uint_eq(sk_shm_lstats(T.arena.shm, 0)->buy_outcome[SK_SECKILL_RATE_LIMITED],
			  n - verified);
	ck_assert_uint_eq(sk_ratelimit_stats_get(T.rl)->refused[SK_RL_REFUSED_IP], n - verified);
	ck_assert_uint_eq(remaining(1), 3);

	/* the item's and the lcore's buckets are whole: two buyers win at once */
	mint(h, sizeof(h), 6, NOW_S + 60, true, 1);
	r = req_auth(h);
	ck_assert_int_eq(buy_at("1", &r, 0x0a000002, 1000 + n, &out), SK_SECKILL_WON);
	mint(h, sizeof(h), 7, NOW_S + 60, true, 1);
	r = req_auth(h);
	ck_assert_int_eq(buy_at("1", &r, 0x0a000003, 1000 + n, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(remaining(1), 1);
}
END_TEST

/*
 * Once the item's or the lcore's bucket is empty, any buy would be refused
 * after the HMAC: it is refused before, at no cost, whatever the address.
 * Forged tokens while the buckets still hold tokens consume none of them.
 */
static const struct {
	bool item; /* the item limit, else the global one */
} drained_cases[] = {{true}, {false}};

START_TEST(drained_limits_refuse_before_hmac)
{
	struct sk_ratelimit_config rc;
	struct sk_seckill_reply out;
	struct sk_http_request r;
	char h[SK_TOKEN_MAX_LEN + 16];
	uint32_t ip = 0x0a000100;

	sk_ratelimit_config_defaults(&rc);
	rc.ip_rate = 0; /* per-IP off: only the shared limit */
	if (drained_cases[_i].item) {
		rc.item_rate = 1;
		rc.item_burst = 2;
	} else {
		rc.global_rate = 1;
		rc.global_burst = 2;
	}
	use_limits(rc);
	/* 20 forged tokens from 20 addresses: verified, refused, nothing charged */
	forge(h, sizeof(h), 5);
	r = req_auth(h);
	for (unsigned i = 0; i < 20; i++)
		ck_assert_int_eq(buy_at("1", &r, ip++, 1000, &out), SK_SECKILL_UNAUTHORIZED);
	ck_assert_uint_eq(verifications(), 20);
	for (uint64_t u = 6; u <= 7; u++) {
		mint(h, sizeof(h), u, NOW_S + 60, true, 1);
		r = req_auth(h);
		ck_assert_int_eq(buy_at("1", &r, ip++, 1000, &out), SK_SECKILL_WON);
	}
	ck_assert_uint_eq(verifications(), 22);
	/* drained: forged and real tokens alike get 429 with no HMAC */
	forge(h, sizeof(h), 5);
	r = req_auth(h);
	for (unsigned i = 0; i < 20; i++) {
		ck_assert_int_eq(buy_at("1", &r, ip++, 1000, &out), SK_SECKILL_RATE_LIMITED);
		is_busy(&out);
	}
	mint(h, sizeof(h), 8, NOW_S + 60, true, 1);
	r = req_auth(h);
	ck_assert_int_eq(buy_at("1", &r, ip++, 1000, &out), SK_SECKILL_RATE_LIMITED);
	ck_assert_uint_eq(verifications(), 22);
	ck_assert_uint_eq(remaining(1), 1);
	/* a second later the bucket has one token again */
	ck_assert_int_eq(buy_at("1", &r, ip++, 1000 + HZ, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(verifications(), 23);
}
END_TEST

/*
 * After the sell-out, forged claims of a holder's id (the only sold-out
 * requests that cost an HMAC) are limited per address before the HMAC too;
 * the holder itself, from its own address, still gets its order back, and
 * non-holders still get 410 without touching the limiter.
 */
START_TEST(sold_out_holder_flood)
{
	struct sk_ratelimit_config rc;
	struct sk_seckill_reply out;
	struct sk_http_request r;
	char h[SK_TOKEN_MAX_LEN + 16];
	uint64_t won = 0, v0;

	sk_ratelimit_config_defaults(&rc);
	rc.ip_rate = 1;
	rc.ip_burst = 3;
	use_limits(rc);
	for (uint64_t u = 5; u <= 8; u++) {
		mint(h, sizeof(h), u, NOW_S + 60, true, 1);
		r = req_auth(h);
		ck_assert_int_eq(buy_at("1", &r, 0x0a000000 + (uint32_t)u, 1000, &out),
				 u <= 7 ? SK_SECKILL_WON : SK_SECKILL_SOLD_OUT);
		if (u == 5)
			won = out.order;
	}
	const struct sk_ratelimit_stats *st = sk_ratelimit_stats_get(T.rl);
	uint64_t passed = st->passed;

	v0 = verifications();
	forge(h, sizeof(h), 5);
	r = req_auth(h);
	for (unsigned i = 0; i < 50; i++) {
		enum sk_seckill_outcome o = buy_at("1", &r, 0x0b000001, 2000, &out);

		if (i < 3) {
			ck_assert_int_eq(o, SK_SECKILL_SOLD_OUT);
		} else {
			ck_assert_int_eq(o, SK_SECKILL_RATE_LIMITED);
			is_busy(&out);
		}
		ck_assert_uint_eq(out.order, 0);
	}
	ck_assert_uint_eq(verifications(), v0 + 3);
	/* non-holders: 410 without the limiter or any HMAC */
	mint(h, sizeof(h), 9, NOW_S + 60, true, 1);
	r = req_auth(h);
	for (unsigned i = 0; i < 50; i++)
		ck_assert_int_eq(buy_at("1", &r, 0x0b000001, 2000, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_uint_eq(verifications(), v0 + 3);
	ck_assert_uint_eq(st->passed, passed + 3);
	/* the holder, from its own address */
	mint(h, sizeof(h), 5, NOW_S + 60, true, 1);
	r = req_auth(h);
	ck_assert_int_eq(buy_at("1", &r, 0x0a000005, 2000, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.order, won);
	ck_assert_uint_eq(verifications(), v0 + 4);
}
END_TEST

START_TEST(settled_reply)
{
	struct sk_seckill_reply out;
	struct sk_http_request r = req_user("42");
	char want[96];

	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
	uint64_t id = out.order;
	ck_assert_uint_ne(id, 0);
	sk_seckill_settled_reply(&T.lc, id, false, &out); /* the wait ran out */
	ck_assert_uint_eq(out.status, 202);
	ck_assert_uint_eq(out.order, id);
	snprintf(want, sizeof(want), "{\"status\":\"queued\",\"order\":\"%llu\"}",
		 (unsigned long long)id);
	body_is(&out, want);
	ck_assert_int_eq(sk_status_move(&T.lc.buy.status, id, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED),
			 0);
	sk_seckill_settled_reply(&T.lc, id, false, &out);
	ck_assert_uint_eq(out.status, 200);
	snprintf(want, sizeof(want), "{\"status\":\"confirmed\",\"order\":\"%llu\"}",
		 (unsigned long long)id);
	body_is(&out, want);

	struct sk_http_request r2 = req_user("43");
	ck_assert_int_eq(buy("1", &r2, &out), SK_SECKILL_WON);
	id = out.order;
	ck_assert_int_eq(sk_status_move(&T.lc.buy.status, id, SK_ORDER_QUEUED, SK_ORDER_FAILED), 0);
	sk_seckill_settled_reply(&T.lc, id, false, &out);
	ck_assert_uint_eq(out.status, 503);
	ck_assert_uint_eq(out.retry_after, 1);
	sk_seckill_settled_reply(&T.lc, id, true, &out);
	snprintf(want, sizeof(want),
		 "{\"status\":\"failed\",\"order\":\"%llu\",\"duplicate\":true}",
		 (unsigned long long)id);
	body_is(&out, want);
	/* answers that carry no order say so */
	ck_assert_int_eq(buy("9", &r, &out), SK_SECKILL_NOT_FOUND);
	ck_assert_uint_eq(out.order, 0);
}
END_TEST

/* ------------------------------------------------------------------ reads */

START_TEST(order_poll)
{
	struct sk_seckill_reply out;
	struct sk_http_request r = req_user("42");
	struct sk_order_rec rec;
	char id[24], want[96];

	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(rte_ring_sc_dequeue_elem(T.arena.ring[0], &rec, sizeof(rec)), 0);
	snprintf(id, sizeof(id), "%llu", (unsigned long long)rec.id);
	sk_seckill_order(&T.lc, id, strlen(id), &out);
	ck_assert_uint_eq(out.status, 200);
	snprintf(want, sizeof(want), "{\"order\":\"%s\",\"status\":\"queued\"}", id);
	body_is(&out, want);
	ck_assert_int_eq(
		sk_status_move(&T.lc.buy.status, rec.id, SK_ORDER_QUEUED, SK_ORDER_CONFIRMED), 0);
	sk_seckill_order(&T.lc, id, strlen(id), &out);
	snprintf(want, sizeof(want), "{\"order\":\"%s\",\"status\":\"confirmed\"}", id);
	body_is(&out, want);

	static const char *const bad[] = {"", "0", "abc", "1", "18446744073709551616"};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		sk_seckill_order(&T.lc, bad[i], strlen(bad[i]), &out);
		ck_assert_uint_eq(out.status, 404);
	}
	snprintf(id, sizeof(id), "%llu", (unsigned long long)sk_order_id_make(EPOCH + 1, 0, 0, 1));
	sk_seckill_order(&T.lc, id, strlen(id), &out);
	ck_assert_uint_eq(out.status, 404);
}
END_TEST

START_TEST(item_read)
{
	struct sk_seckill_reply out;
	struct sk_http_request r = req_user("42");

	sk_seckill_item(&T.lc, "1", 1, NOW_NS, &out);
	body_is(&out, "{\"item\":1,\"state\":\"open\",\"remaining\":3,\"starts_at\":1799999999000,"
		      "\"ends_at\":null}");
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
	sk_seckill_item(&T.lc, "1", 1, NOW_NS, &out);
	body_is(&out, "{\"item\":1,\"state\":\"open\",\"remaining\":2,\"starts_at\":1799999999000,"
		      "\"ends_at\":null}");
	sk_seckill_item(&T.lc, "2", 1, NOW_NS, &out);
	body_is(&out,
		"{\"item\":2,\"state\":\"scheduled\",\"remaining\":5,\"starts_at\":1800000001500,"
		"\"ends_at\":null}");
	sk_seckill_item(&T.lc, "3", 1, NOW_NS, &out);
	body_is(&out, "{\"item\":3,\"state\":\"ended\",\"remaining\":5,\"starts_at\":1799999980000,"
		      "\"ends_at\":1800000000000}");
	sk_seckill_item(&T.lc, "4", 1, NOW_NS, &out);
	ck_assert_uint_eq(out.status, 404);
}
END_TEST

/*
 * A paused item: every buy answered 503 {"status":"paused"} with
 * Retry-After, no unit moves, the winner's retry still gets its order, the
 * item reads "paused"; an ended or sold-out item says so first; a resume
 * sells again. Counted as outcome "paused".
 */
START_TEST(paused_answers)
{
	struct sk_seckill_reply out;
	struct sk_http_request r = req_user("42"), other = req_user("43");
	struct sk_item *it = sk_shm_item_find(T.arena.shm, 1);
	char want[128];

	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
	uint64_t won = out.order;
	ck_assert_int_eq(sk_stock_pause(it, true), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(buy("1", &other, &out), SK_SECKILL_PAUSED);
		ck_assert_uint_eq(out.status, 503);
		ck_assert_uint_eq(out.retry_after, SK_SECKILL_PAUSED_RETRY_S);
		ck_assert_uint_eq(out.retry_after, 1);
		ck_assert_int_eq(out.canned, -1);
		ck_assert_uint_eq(out.order, 0);
		body_is(&out, "{\"status\":\"paused\"}");
	}
	ck_assert_uint_eq(remaining(1), 2);
	/* A winner's retry gets its order back (limit 1), paused or not. */
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_DUPLICATE);
	ck_assert_uint_eq(out.order, won);
	snprintf(want, sizeof(want),
		 "{\"status\":\"queued\",\"order\":\"%llu\",\"duplicate\":true}",
		 (unsigned long long)won);
	body_is(&out, want);
	sk_seckill_item(&T.lc, "1", 1, NOW_NS, &out);
	body_is(&out,
		"{\"item\":1,\"state\":\"paused\",\"remaining\":2,\"starts_at\":1799999999000,"
		"\"ends_at\":null}");
	ck_assert_uint_eq(sk_shm_lstats(T.arena.shm, 0)->buy_outcome[SK_SECKILL_PAUSED], 3);
	ck_assert_str_eq(sk_seckill_outcome_name(SK_SECKILL_PAUSED), "paused");

	/* Paused before the start: paused (the start may pass meanwhile). */
	struct sk_item *later = sk_shm_item_find(T.arena.shm, 2);
	ck_assert_int_eq(sk_stock_pause(later, true), 0);
	ck_assert_int_eq(buy("2", &other, &out), SK_SECKILL_PAUSED);
	/* Ended wins over paused; so does sold out (nothing to sell anyway). */
	struct sk_item *ended = sk_shm_item_find(T.arena.shm, 3);
	ck_assert_int_eq(sk_stock_pause(ended, true), 0);
	ck_assert_int_eq(buy("3", &other, &out), SK_SECKILL_ENDED);
	ck_assert_uint_eq(out.status, 403);
	sk_seckill_item(&T.lc, "3", 1, NOW_NS, &out);
	ck_assert_ptr_nonnull(strstr(out.body, "\"state\":\"ended\""));
	sk_stock_set_end(it, NOW_NS); /* extend's opposite: only to show the order */
	ck_assert_int_eq(buy("1", &other, &out), SK_SECKILL_ENDED);
	sk_stock_set_end(it, INT64_MAX);
	ck_assert_int_eq(sk_stock_remove(it, 2, NULL), SK_STOCK_OK);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_int_eq(buy("1", &other, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_int_eq(sk_stock_unremove(it, 2), 0);
	ck_assert_int_eq(buy("1", &other, &out), SK_SECKILL_PAUSED);

	/* Resumed: selling again with the units left. */
	ck_assert_int_eq(sk_stock_pause(it, false), 0);
	ck_assert_int_eq(buy("1", &other, &out), SK_SECKILL_WON);
	ck_assert_uint_eq(remaining(1), 1);
	sk_seckill_item(&T.lc, "1", 1, NOW_NS, &out);
	ck_assert_ptr_nonnull(strstr(out.body, "\"state\":\"open\""));
}
END_TEST

/*
 * A cluster item (docs/cluster.md) that runs empty here is not sold out
 * until the cluster says so everywhere: buyers get 503 "restocking" with
 * Retry-After (units may be leased or given back by another appliance),
 * the item reads "restocking"; units leased again sell; the broadcast
 * flag turns the answer into 410. Counted as outcome "restocking".
 */
START_TEST(cluster_restocking)
{
	struct sk_seckill_reply out;
	struct sk_http_request r = req_user("42"), other = req_user("43"), third = req_user("44");
	struct sk_item *it = sk_shm_item_find(T.arena.shm, 1);

	it->cluster = 1;
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_WON);
	ck_assert_int_eq(sk_stock_remove(it, 2, NULL), SK_STOCK_OK); /* given back */
	ck_assert(sk_stock_is_sold_out(it));
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(buy("1", &other, &out), SK_SECKILL_RESTOCKING);
		ck_assert_uint_eq(out.status, 503);
		ck_assert_uint_eq(out.retry_after, 1);
		ck_assert_uint_eq(out.order, 0);
		body_is(&out, "{\"status\":\"restocking\"}");
	}
	/* The winner's retry still gets its order. */
	ck_assert_int_eq(buy("1", &r, &out), SK_SECKILL_DUPLICATE);
	sk_seckill_item(&T.lc, "1", 1, NOW_NS, &out);
	body_is(&out, "{\"item\":1,\"state\":\"restocking\",\"remaining\":0,"
		      "\"starts_at\":1799999999000,\"ends_at\":null}");
	ck_assert_uint_eq(sk_shm_lstats(T.arena.shm, 0)->buy_outcome[SK_SECKILL_RESTOCKING], 2);
	ck_assert_uint_eq(sk_stock_restocking(it), 2); /* the demand the control plane sees */
	ck_assert_str_eq(sk_seckill_outcome_name(SK_SECKILL_RESTOCKING), "restocking");

	/* A lease: the units sell again. */
	ck_assert_int_eq(sk_stock_add(it, 1), 0);
	ck_assert_int_eq(buy("1", &other, &out), SK_SECKILL_WON);
	/* Empty again, and now sold out everywhere: 410. */
	ck_assert_int_eq(buy("1", &third, &out), SK_SECKILL_RESTOCKING);
	atomic_store(&it->cluster_sold_out, 1);
	ck_assert_int_eq(buy("1", &third, &out), SK_SECKILL_SOLD_OUT);
	ck_assert_uint_eq(out.status, 410);
	sk_seckill_item(&T.lc, "1", 1, NOW_NS, &out);
	ck_assert_ptr_nonnull(strstr(out.body, "\"state\":\"sold_out\""));
	/* A single-appliance item ignores the cluster flag. */
	it->cluster = 0;
	atomic_store(&it->cluster_sold_out, 0);
	ck_assert_int_eq(buy("1", &third, &out), SK_SECKILL_SOLD_OUT);
}
END_TEST

/*
 * sk_buy() itself refuses a paused item (SK_BUY_PAUSED): the route's own
 * check may have read "active" just before the pause.
 */
START_TEST(buy_refuses_paused)
{
	struct sk_item *it = sk_shm_item_find(T.arena.shm, 1);
	struct sk_buy_req br = {.user = 9, .now_ns = NOW_NS};
	struct sk_buy_line line = {.item = it, .qty = 1};
	uint64_t order;

	ck_assert_int_eq(sk_stock_pause(it, true), 0);
	ck_assert_int_eq(sk_buy(&T.lc.buy, &br, &line, 1, &order), SK_BUY_PAUSED);
	ck_assert_str_eq(sk_buy_status_name(SK_BUY_PAUSED), "paused");
	ck_assert_uint_eq(remaining(1), 3);
	atomic_store(&it->state, SK_ITEM_CLOSED);
	ck_assert_int_eq(sk_buy(&T.lc.buy, &br, &line, 1, &order), SK_BUY_CLOSED);
}
END_TEST

static Suite *
seckill_suite(void)
{
	Suite *s = suite_create("seckill");
	TCase *tc = tcase_create("noauth");
	tcase_add_checked_fixture(tc, setup_noauth, teardown);
	tcase_add_test(tc, win_then_duplicate_then_sold_out);
	tcase_add_test(tc, window_and_lookup);
	tcase_add_test(tc, limit_answer);
	tcase_add_test(tc, user_id_header);
	tcase_add_test(tc, order_poll);
	tcase_add_test(tc, item_read);
	tcase_add_test(tc, settled_reply);
	tcase_add_test(tc, duplicate_of_earlier_run);
	tcase_add_test(tc, outcome_names_match);
	tcase_add_test(tc, requests_in_arena);
	tcase_add_test(tc, paused_answers);
	tcase_add_test(tc, buy_refuses_paused);
	tcase_add_test(tc, cluster_restocking);
	suite_add_tcase(s, tc);

	tc = tcase_create("auth");
	tcase_add_checked_fixture(tc, setup_auth, teardown);
	tcase_add_test(tc, tokens);
	tcase_add_test(tc, sold_out_holder_tokens);
	tcase_add_loop_test(tc, forged_flood_limited_before_hmac, 0,
			    (int)SK_ARRAY_SIZE(forged_cases));
	tcase_add_loop_test(tc, drained_limits_refuse_before_hmac, 0,
			    (int)SK_ARRAY_SIZE(drained_cases));
	tcase_add_test(tc, sold_out_holder_flood);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, setup_limits, teardown);
	tcase_add_test(tc, rate_limit);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(seckill_suite, "test-seckill")
