/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_crowd_parse - seckill-crowd's body scanner and histogram (the
 * response parser is tests/unit/http's test_http_client). Tables of inputs
 * with the expected results; every input is scanned just before a PROT_NONE
 * guard page, so that a read past the end crashes. The dataplane's own
 * response writer and canned answers, parsed by the clients' parser, must
 * carry the bodies they say.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crowd_hist.h"
#include "crowd_http.h"
#include "crowd_mix.h"
#include "sk_cart_body.h"
#include "sk_http.h"
#include "sk_http_client.h"
#include "sk_test.h"

/* ------------------------------------------------------------ guard page */

static uint8_t *guard_base;

static void
guard_setup(void)
{
	guard_base = sk_test_guard_end(SK_HTTP_CLIENT_HEAD_MAX + SK_HTTP_CLIENT_BODY_MAX);
}

/* guarded - a copy of @s (@len bytes) ending right at the guard page. */
static const char *
guarded(const char *s, size_t len)
{
	return sk_test_guarded(guard_base, s, len);
}

/* ------------------------------------------------------------ bodies */

#define JSON_202 "{\"status\":\"queued\",\"order\":\"123\"}"

struct body_case {
	const char *in;
	int want; /* 0 or -EINVAL */
	enum sk_crowd_status status;
	uint64_t order; /* 0: none */
	bool duplicate;
	int64_t starts_in_ms; /* -1: none */
	int64_t remaining;    /* -1: none */
	const char *state;    /* NULL: none */
};

static const struct body_case body_cases[] = {
	{JSON_202, 0, SK_CROWD_ST_QUEUED, 123, false, -1, -1, NULL},
	{"{\"status\":\"queued\",\"order\":\"7\",\"duplicate\":true}", 0, SK_CROWD_ST_QUEUED, 7,
	 true, -1, -1, NULL},
	{"{\"status\":\"confirmed\",\"order\":\"18446744073709551615\",\"duplicate\":false}", 0,
	 SK_CROWD_ST_CONFIRMED, UINT64_MAX, false, -1, -1, NULL},
	{" \r\n\t{ \"order\" : 42 , \"status\" : \"limit\" } \n", 0, SK_CROWD_ST_LIMIT, 42, false,
	 -1, -1, NULL},
	{"{\"status\":\"sold_out\"}", 0, SK_CROWD_ST_SOLD_OUT, 0, false, -1, -1, NULL},
	{"{\"status\":\"not_started\",\"starts_in_ms\":1500}", 0, SK_CROWD_ST_NOT_STARTED, 0, false,
	 1500, -1, NULL},
	{"{\"status\":\"busy\"}", 0, SK_CROWD_ST_BUSY, 0, false, -1, -1, NULL},
	{"{\"status\":\"ended\"}", 0, SK_CROWD_ST_ENDED, 0, false, -1, -1, NULL},
	{"{\"status\":\"unavailable\"}", 0, SK_CROWD_ST_UNAVAILABLE, 0, false, -1, -1, NULL},
	{"{\"status\":\"unauthorized\"}", 0, SK_CROWD_ST_UNAUTHORIZED, 0, false, -1, -1, NULL},
	{"{\"order\":\"9\",\"status\":\"cancelled\"}", 0, SK_CROWD_ST_CANCELLED, 9, false, -1, -1,
	 NULL},
	{"{\"status\":\"gate\"}", 0, SK_CROWD_ST_GATE, 0, false, -1, -1, NULL},
	{"{\"status\":\"weird\"}", 0, SK_CROWD_ST_OTHER, 0, false, -1, -1, NULL},
	{"{\"status\":\"s\\u006fld_out\"}", 0, SK_CROWD_ST_OTHER, 0, false, -1, -1, NULL},
	{"{}", 0, SK_CROWD_ST_NONE, 0, false, -1, -1, NULL},
	{"{\"item\":7,\"state\":\"open\",\"remaining\":3,\"starts_at\":-1.5e3,\"ends_at\":null}", 0,
	 SK_CROWD_ST_NONE, 0, false, -1, 3, "open"},
	{"{\"state\":\"a_very_long_state_name\"}", 0, SK_CROWD_ST_NONE, 0, false, -1, -1,
	 "a_very_long_sta"},
	{"{\"x\":{\"a\":[1,2.5,{\"b\":null},\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"],\"c\":[]},\"status\":"
	 "\"busy\",\"s\\u0074atus\":5}",
	 0, SK_CROWD_ST_BUSY, 0, false, -1, -1, NULL},
	{"{\"a\":[[[[[[[1]]]]]]]}", 0, SK_CROWD_ST_NONE, 0, false, -1, -1, NULL},
	/* errors */
	{"", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"[]", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"status\":\"queued\"", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"status\":1}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"status\":\"a\",\"status\":\"b\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":\"0\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":0}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":\"012\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":\"12a\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":\"\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":\"1\\u0032\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":-1}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":1.5}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":1e3}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":\"18446744073709551616\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":true}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"order\":\"1\",\"order\":\"1\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"duplicate\":1}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"duplicate\":\"true\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"starts_in_ms\":\"5\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"starts_in_ms\":-5}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"remaining\":null}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":1,}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{,}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\" 1}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{a:1}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{} x", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{}{}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":\"x\ny\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":\"\\x\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":\"\\u12g4\"}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":\"\\", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":01}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":-}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":1.}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":1e}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":tru}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":nul}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":[1,]}", -EINVAL, 0, 0, false, -1, -1, NULL},
	{"{\"a\":[[[[[[[[1]]]]]]]]}", -EINVAL, 0, 0, false, -1, -1, NULL},
};

START_TEST(test_body_table)
{
	const struct body_case *tc = &body_cases[_i];
	size_t len = strlen(tc->in);
	struct sk_crowd_body b;

	int got = sk_crowd_body_scan(guarded(tc->in, len), len, &b);
	ck_assert_msg(got == tc->want, "case %d (%s): got %d", _i, tc->in, got);
	if (got != 0)
		return;
	ck_assert_int_eq(b.status, tc->status);
	ck_assert(b.has_order == (tc->order != 0));
	ck_assert_uint_eq(b.order, tc->order);
	ck_assert(b.duplicate == tc->duplicate);
	ck_assert(b.has_starts_in_ms == (tc->starts_in_ms >= 0));
	if (tc->starts_in_ms >= 0)
		ck_assert_uint_eq(b.starts_in_ms, (uint64_t)tc->starts_in_ms);
	ck_assert(b.has_remaining == (tc->remaining >= 0));
	if (tc->remaining >= 0)
		ck_assert_uint_eq(b.remaining, (uint64_t)tc->remaining);
	ck_assert(b.has_state == (tc->state != NULL));
	if (tc->state != NULL)
		ck_assert_str_eq(b.state, tc->state);

	/* a valid object cut anywhere before its closing brace is no longer valid */
	size_t end = len;
	while (end > 0 && tc->in[end - 1] != '}')
		end--;
	for (size_t k = 0; k + 1 < end; k++)
		ck_assert_msg(sk_crowd_body_scan(guarded(tc->in, k), k, &b) == -EINVAL,
			      "case %d prefix %zu accepted", _i, k);
}
END_TEST

START_TEST(test_status_names)
{
	for (unsigned s = 0; s < SK_CROWD_ST__COUNT; s++)
		ck_assert_ptr_nonnull(sk_crowd_status_str((enum sk_crowd_status)s));
	ck_assert_str_eq(sk_crowd_status_str(SK_CROWD_ST_SOLD_OUT), "sold_out");
	ck_assert_str_eq(sk_crowd_status_str(SK_CROWD_ST__COUNT), "unknown");
}
END_TEST

/* --mix: its syntax, the cart bodies (which the dataplane's reader takes as
 * they are), and a pick that keeps a buyer on one kind. */
START_TEST(test_mix)
{
	static const char *const bad[] = {
		"",	   "cart",	     "cart=",		"cart=101",   "cart=-1",
		"cart=5,", "cart=5,lines=0", "cart=5,lines=17", "cart=5,x=3", "cart=5,lines=3x",
		"buy=5"};
	struct sk_crowd_mix m = {0};
	char body[SK_CROWD_CART_BODY_MAX];

	ck_assert_int_eq(sk_crowd_mix_parse("cart=30", &m), 0);
	ck_assert_uint_eq(m.cart_pct, 30);
	ck_assert_uint_eq(m.cart_lines, SK_CROWD_CART_LINES_DEFAULT);
	ck_assert_int_eq(sk_crowd_mix_parse("cart=100,lines=16", &m), 0);
	ck_assert_uint_eq(m.cart_lines, 16);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(sk_crowd_mix_parse(bad[i], &m) == -EINVAL, "%s", bad[i]);
	ck_assert_uint_eq(m.cart_pct, 100); /* untouched */

	for (unsigned k = 1; k <= SK_CROWD_CART_LINES_MAX; k++) {
		struct sk_cart_body cb;
		struct sk_cart_error e;
		uint64_t first = UINT32_MAX - SK_CROWD_CART_LINES_MAX + 1;
		size_t n = sk_crowd_cart_body(body, sizeof(body), first, k);

		ck_assert_uint_gt(n, 0);
		ck_assert_int_eq(sk_cart_body_parse((const uint8_t *)body, n, &cb, &e), 0);
		ck_assert_uint_eq(cb.n, k);
		ck_assert_uint_eq(cb.lines[k - 1].item, first + k - 1);
		ck_assert_uint_eq(cb.lines[k - 1].qty, 1);
	}
	ck_assert_uint_eq(sk_crowd_cart_body(body, sizeof(body), UINT32_MAX, 2), 0);
	ck_assert_uint_eq(sk_crowd_cart_body(body, sizeof(body), 1, 17), 0);
	ck_assert_uint_eq(sk_crowd_cart_body(body, 20, 1, 3), 0);

	/* about PCT% of the buyers, each always the same kind */
	m = (struct sk_crowd_mix){.cart_pct = 30, .cart_lines = 3};
	unsigned carts = 0;
	for (uint64_t u = 0; u < 10000; u++) {
		bool c = sk_crowd_mix_is_cart(&m, 7, u);
		ck_assert(c == sk_crowd_mix_is_cart(&m, 7, u));
		carts += c;
	}
	ck_assert_uint_ge(carts, 2700);
	ck_assert_uint_le(carts, 3300);
	m.cart_pct = 0;
	ck_assert(!sk_crowd_mix_is_cart(&m, 7, 1));
	ck_assert_str_eq(sk_crowd_status_str(SK_CROWD_ST_DUPLICATE), "duplicate");
	ck_assert_str_eq(sk_crowd_status_str(SK_CROWD_ST_SHORT), "short");
}
END_TEST

/* ------------------------------------------------------------ the dataplane's answers */

START_TEST(test_dataplane_canned)
{
	static const enum sk_crowd_status want[SK_HTTP_CANNED_MAX] = {
		[SK_HTTP_CANNED_HEALTHZ] = SK_CROWD_ST_OTHER,
		[SK_HTTP_CANNED_BAD_REQUEST] = SK_CROWD_ST_BAD_REQUEST,
		[SK_HTTP_CANNED_UNAUTHORIZED] = SK_CROWD_ST_UNAUTHORIZED,
		[SK_HTTP_CANNED_ENDED] = SK_CROWD_ST_ENDED,
		[SK_HTTP_CANNED_NOT_FOUND] = SK_CROWD_ST_NOT_FOUND,
		[SK_HTTP_CANNED_METHOD] = SK_CROWD_ST_OTHER,
		[SK_HTTP_CANNED_LIMIT] = SK_CROWD_ST_LIMIT,
		[SK_HTTP_CANNED_SOLD_OUT] = SK_CROWD_ST_SOLD_OUT,
		[SK_HTTP_CANNED_LENGTH_REQUIRED] = SK_CROWD_ST_OTHER,
		[SK_HTTP_CANNED_BODY_TOO_LARGE] = SK_CROWD_ST_OTHER,
		[SK_HTTP_CANNED_URI_TOO_LONG] = SK_CROWD_ST_OTHER,
		[SK_HTTP_CANNED_BUSY] = SK_CROWD_ST_BUSY,
		[SK_HTTP_CANNED_HEAD_TOO_LARGE] = SK_CROWD_ST_OTHER,
		[SK_HTTP_CANNED_NOT_IMPLEMENTED] = SK_CROWD_ST_OTHER,
		[SK_HTTP_CANNED_VERSION] = SK_CROWD_ST_OTHER,
	};

	for (unsigned id = 0; id < SK_HTTP_CANNED_MAX; id++) {
		for (unsigned conn = 0; conn < SK_HTTP_CONN_MAX; conn++) {
			const struct sk_http_canned *c = sk_http_canned_get(
				(enum sk_http_canned_id)id, (enum sk_http_conn)conn);
			struct sk_http_client_resp r = {0};
			struct sk_crowd_body b;

			ck_assert_ptr_nonnull(c);
			const char *p = guarded(c->data, c->len);
			ck_assert_int_eq(sk_http_client_parse(&r, p, c->len), SK_HTTP_CLIENT_DONE);
			ck_assert_uint_eq(r.len, c->len);
			ck_assert_int_eq(sk_crowd_body_scan(p + r.head_len, r.content_len, &b), 0);
			ck_assert_msg(b.status == want[id], "canned %u: status %s", id,
				      sk_crowd_status_str(b.status));
		}
	}
}
END_TEST

/* The bodies sk_seckill.c writes (design §4), through sk_http_response_write(). */
static const struct {
	uint16_t status;
	uint32_t retry_after;
	const char *body;
	enum sk_crowd_status want;
	uint64_t order;
	bool duplicate;
} dataplane_bodies[] = {
	{202, 0, "{\"status\":\"queued\",\"order\":\"4611686018427387905\"}", SK_CROWD_ST_QUEUED,
	 4611686018427387905ull, false},
	{200, 0, "{\"status\":\"confirmed\",\"order\":\"77\",\"duplicate\":true}",
	 SK_CROWD_ST_CONFIRMED, 77, true},
	{202, 0, "{\"status\":\"queued\",\"order\":\"77\",\"duplicate\":true}", SK_CROWD_ST_QUEUED,
	 77, true},
	{409, 0, "{\"status\":\"limit\",\"order\":\"78\"}", SK_CROWD_ST_LIMIT, 78, false},
	{425, 0, "{\"status\":\"not_started\",\"starts_in_ms\":1500}", SK_CROWD_ST_NOT_STARTED, 0,
	 false},
	{429, 3, "{\"status\":\"busy\"}", SK_CROWD_ST_BUSY, 0, false},
	{503, 1, "{\"status\":\"unavailable\"}", SK_CROWD_ST_UNAVAILABLE, 0, false},
	{200, 0, "{\"order\":\"77\",\"status\":\"paid\"}", SK_CROWD_ST_PAID, 77, false},
	{200, 0,
	 "{\"item\":7,\"state\":\"sold_out\",\"remaining\":0,\"starts_at\":1700000000000,"
	 "\"ends_at\":null}",
	 SK_CROWD_ST_NONE, 0, false},
};

START_TEST(test_dataplane_written)
{
	char buf[1024], date[SK_HTTP_DATE_SIZE];
	struct sk_http_client_resp r;
	struct sk_crowd_body b;

	ck_assert_int_eq(sk_http_date_format(date, 784111777), SK_HTTP_DATE_SIZE - 1);
	for (unsigned k = 0; k < sizeof(dataplane_bodies) / sizeof(dataplane_bodies[0]); k++) {
		for (unsigned conn = 0; conn < SK_HTTP_CONN_MAX; conn++) {
			struct sk_http_response w = {
				.status = dataplane_bodies[k].status,
				.conn = (uint8_t)conn,
				.retry_after = dataplane_bodies[k].retry_after,
				.body = dataplane_bodies[k].body,
				.body_len = strlen(dataplane_bodies[k].body),
				.date = conn == 1 ? date : NULL,
			};
			int n = sk_http_response_write(buf, sizeof(buf), &w);
			ck_assert_int_gt(n, 0);
			const char *p = guarded(buf, (size_t)n);
			sk_http_client_reset(&r);
			ck_assert_int_eq(sk_http_client_parse(&r, p, (size_t)n),
					 SK_HTTP_CLIENT_DONE);
			ck_assert_uint_eq(r.len, (size_t)n);
			ck_assert_uint_eq(r.status, w.status);
			ck_assert_int_eq(sk_crowd_body_scan(p + r.head_len, r.content_len, &b), 0);
			ck_assert_int_eq(b.status, dataplane_bodies[k].want);
			ck_assert(b.has_order == (dataplane_bodies[k].order != 0));
			ck_assert_uint_eq(b.order, dataplane_bodies[k].order);
			ck_assert(b.duplicate == dataplane_bodies[k].duplicate);
		}
	}
}
END_TEST

/* ------------------------------------------------------------ histogram */

static void
check_value(uint64_t v)
{
	unsigned i = sk_crowd_hist_index(v);

	ck_assert_uint_lt(i, SK_CROWD_HIST_BUCKETS);
	ck_assert_uint_ge(sk_crowd_hist_bucket_high(i), v);
	if (i > 0)
		ck_assert_uint_lt(sk_crowd_hist_bucket_high(i - 1), v);
	ck_assert_uint_eq(sk_crowd_hist_index(sk_crowd_hist_bucket_high(i)), i);
	/* a bucket is at most 1/128 of its values wide */
	uint64_t low = i > 0 ? sk_crowd_hist_bucket_high(i - 1) + 1 : 0;
	ck_assert_uint_le(sk_crowd_hist_bucket_high(i) - low, low / 128);
}

START_TEST(test_hist_buckets)
{
	uint64_t s = 42;

	for (uint64_t v = 0; v < 5000; v++)
		check_value(v);
	for (unsigned e = 1; e < 64; e++) {
		check_value((1ull << e) - 1);
		check_value(1ull << e);
		check_value((1ull << e) + 1);
	}
	check_value(UINT64_MAX);
	for (int k = 0; k < 100000; k++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		check_value(s >> (s & 63));
	}
	ck_assert_uint_eq(sk_crowd_hist_index(UINT64_MAX), SK_CROWD_HIST_BUCKETS - 1);
}
END_TEST

START_TEST(test_hist_quantiles)
{
	static struct sk_crowd_hist h;

	sk_crowd_hist_init(&h);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 0.5), 0);
	for (uint64_t v = 1; v <= 100; v++)
		sk_crowd_hist_add(&h, v);
	ck_assert_uint_eq(h.count, 100);
	ck_assert_uint_eq(h.min, 1);
	ck_assert_uint_eq(h.max, 100);
	ck_assert_uint_eq(h.sum, 5050);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 0.0), 1);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 0.5), 50);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 0.9), 90);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 0.99), 99);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 0.999), 100);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 1.0), 100);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 7.0), 100);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, -1.0), 1);

	/* 1 us .. 1 ms in 1 us steps: within 0.8 % and never below the truth */
	sk_crowd_hist_init(&h);
	for (uint64_t v = 1; v <= 1000; v++)
		sk_crowd_hist_add(&h, v * 1000);
	const double qs[] = {0.5, 0.9, 0.99, 0.999};
	for (unsigned k = 0; k < 4; k++) {
		double truth = qs[k] * 1000 * 1000;
		double got = (double)sk_crowd_hist_quantile(&h, qs[k]);
		ck_assert_msg(got >= truth && got <= truth * 1.008, "q %.3f: %.0f vs %.0f", qs[k],
			      got, truth);
	}
	/* the top quantile is the exact max, not the bucket's end */
	sk_crowd_hist_add(&h, 123456789);
	ck_assert_uint_eq(sk_crowd_hist_quantile(&h, 1.0), 123456789);
}
END_TEST

static Suite *
crowd_suite(void)
{
	Suite *s = suite_create("crowd_parse");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, guard_setup, NULL);
	tcase_add_loop_test(tc, test_body_table, 0,
			    (int)(sizeof(body_cases) / sizeof(body_cases[0])));
	tcase_add_test(tc, test_status_names);
	tcase_add_test(tc, test_mix);
	tcase_add_test(tc, test_dataplane_canned);
	tcase_add_test(tc, test_dataplane_written);
	tcase_add_test(tc, test_hist_buckets);
	tcase_add_test(tc, test_hist_quantiles);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(crowd_suite)
