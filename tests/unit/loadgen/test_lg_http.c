/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lg_http - seckill-loadgen's request templates, its answer memo and
 * its order scan (the response parser itself is tests/unit/http's
 * test_http_client). Every input sits just before a PROT_NONE guard page,
 * so a read past the end crashes. The requests must parse with the
 * dataplane's own parser; the memo must give what the parser gives.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_http.h"
#include "sk_cart_body.h"
#include "sk_http.h"
#include "sk_test.h"

/* ------------------------------------------------------------ guard page */

static uint8_t *guard_base;

static void
guard_setup(void)
{
	guard_base = sk_test_guard_end(SK_HTTP_CLIENT_HEAD_MAX + SK_HTTP_CLIENT_BODY_MAX +
				       2 * LG_REQ_MAX);
}

/* guarded - a copy of @s (@len bytes) ending right at the guard page. */
static const uint8_t *
guarded(const void *s, size_t len)
{
	return sk_test_guarded(guard_base, s, len);
}

/* ------------------------------------------------------------ responses */

#define BODY_200 "{\"status\":\"confirmed\",\"order\":\"4611686018427387905\"}"
#define BODY_410 "{\"status\":\"sold_out\"}"

struct ok_case {
	const char *in;
	uint16_t status;
	bool close;
	uint32_t content_len;
	uint64_t order; /* lg_resp_order() of the body */
};

/* A few answers of each shape (the parser's own table is in test_http_client). */
static const struct ok_case ok_cases[] = {
	{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 52\r\n\r\n" BODY_200,
	 200, false, 52, 4611686018427387905ull},
	{"HTTP/1.1 410 Gone\r\nContent-Length: 21\r\nConnection: close\r\n\r\n" BODY_410, 410, true,
	 21, 0},
	{"HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n", 200, false, 0, 0},
	{"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 200, true, 0, 0},
	{"HTTP/1.1 204 No Content\r\n\r\n", 204, false, 0, 0},
	{"HTTP/1.1 599 X\xff\x80 \t!\r\nX-Obs: \x80\xfe\r\nContent-Length: 0\r\n\r\n", 599, false,
	 0, 0},
	{"HTTP/1.1 202 Accepted\r\nContent-Length: "
	 "31\r\n\r\n{\"status\":\"queued\",\"order\":\"7\"}",
	 202, false, 31, 7},
};

/* check_ok - @r is what @c says. */
static void
check_ok(const struct ok_case *c, const struct sk_http_client_resp *r, const uint8_t *buf)
{
	size_t n = strlen(c->in);

	ck_assert_uint_eq(r->len, n);
	ck_assert_uint_eq(r->off, n);
	ck_assert_uint_eq(r->status, c->status);
	ck_assert_uint_eq(r->close, c->close);
	ck_assert_uint_eq(r->content_len, c->content_len);
	ck_assert_uint_eq(r->head_len + r->content_len, n);
	ck_assert_uint_eq(lg_resp_order(buf + r->head_len, r->content_len), c->order);
}

struct bad_case {
	const char *in;
	enum sk_http_client_result want;
	size_t len; /* 0: strlen(in) */
};

static const struct bad_case bad_cases[] = {
	{"HTTP/2.0 200 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 200 OK\r\nX: a\x00\r\n\r\n", SK_HTTP_CLIENT_E_FIELD,
	 sizeof("HTTP/1.1 200 OK\r\nX: a\x00\r\n\r\n") - 1},
	{"HTTP/1.1 200 OK\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	 SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", SK_HTTP_CLIENT_E_CHUNKED, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 4097\r\n\r\n", SK_HTTP_CLIENT_E_TOO_LARGE, 0},
};

/* The memo: every ok case, parsed twice through one memo, gives the same
 * result both times (the second from the memo), every split of it too;
 * a bad case after a good one is still refused; a response differing in
 * one byte is parsed, not matched. */
START_TEST(test_resp_memo)
{
	const struct ok_case *c = &ok_cases[_i];
	size_t n = strlen(c->in);
	struct lg_resp_memo m = {0};
	struct sk_http_client_resp r;
	const uint8_t *buf;

	for (int pass = 0; pass < 2; pass++) {
		buf = guarded(c->in, n);
		sk_http_client_reset(&r);
		ck_assert_int_eq(lg_resp_parse_memo(&m, &r, buf, n), SK_HTTP_CLIENT_DONE);
		check_ok(c, &r, buf);
	}
	ck_assert_uint_eq(m.hits, n <= LG_RESP_MEMO_MAX ? 1 : 0);
	/* split: a prefix is never a hit, the rest is the same parse */
	for (size_t k = 1; k < n; k++) {
		sk_http_client_reset(&r);
		ck_assert_int_eq(lg_resp_parse_memo(&m, &r, guarded(c->in, k), k),
				 SK_HTTP_CLIENT_AGAIN);
		buf = guarded(c->in, n);
		ck_assert_int_eq(lg_resp_parse_memo(&m, &r, buf, n), SK_HTTP_CLIENT_DONE);
		check_ok(c, &r, buf);
	}
	/* every bad case is refused as without the memo */
	for (size_t b = 0; b < sizeof(bad_cases) / sizeof(bad_cases[0]); b++) {
		size_t bn = bad_cases[b].len != 0 ? bad_cases[b].len : strlen(bad_cases[b].in);

		sk_http_client_reset(&r);
		ck_assert_int_eq(lg_resp_parse_memo(&m, &r, guarded(bad_cases[b].in, bn), bn),
				 bad_cases[b].want);
	}
}
END_TEST

START_TEST(test_resp_memo_one_byte)
{
	static const char a[] = "HTTP/1.1 202 Accepted\r\nContent-Length: 31\r\n\r\n"
				"{\"status\":\"queued\",\"order\":\"7\"}";
	char b[sizeof(a)];
	struct lg_resp_memo m = {0};
	struct sk_http_client_resp r;
	const uint8_t *buf;

	memcpy(b, a, sizeof(a));
	b[sizeof(a) - 4] = '8'; /* order 8: same length, other bytes */
	sk_http_client_reset(&r);
	ck_assert_int_eq(lg_resp_parse_memo(&m, &r, guarded(a, sizeof(a) - 1), sizeof(a) - 1),
			 SK_HTTP_CLIENT_DONE);
	sk_http_client_reset(&r);
	buf = guarded(b, sizeof(b) - 1);
	ck_assert_int_eq(lg_resp_parse_memo(&m, &r, buf, sizeof(b) - 1), SK_HTTP_CLIENT_DONE);
	ck_assert_uint_eq(m.hits, 0);
	ck_assert_uint_eq(m.misses, 2);
	ck_assert_uint_eq(lg_resp_order(buf + r.head_len, r.content_len), 8);
	/* a status line changed in one byte is an error, not the memo's 202 */
	b[sizeof(a) - 4] = '7';
	b[9] = '9';
	sk_http_client_reset(&r);
	ck_assert_int_eq(lg_resp_parse_memo(&m, &r, guarded(b, sizeof(b) - 1), sizeof(b) - 1),
			 SK_HTTP_CLIENT_E_STATUS);
	/* pipelined: two of the same in one buffer, the second a hit */
	char two[2 * sizeof(a)];
	memcpy(two, a, sizeof(a) - 1);
	memcpy(two + sizeof(a) - 1, a, sizeof(a) - 1);
	buf = guarded(two, 2 * (sizeof(a) - 1));
	sk_http_client_reset(&r);
	ck_assert_int_eq(lg_resp_parse_memo(&m, &r, buf, 2 * (sizeof(a) - 1)), SK_HTTP_CLIENT_DONE);
	ck_assert_uint_eq(r.len, sizeof(a) - 1);
	sk_http_client_reset(&r);
	ck_assert_int_eq(lg_resp_parse_memo(&m, &r, buf + r.len, sizeof(a) - 1),
			 SK_HTTP_CLIENT_DONE);
	ck_assert_uint_eq(r.status, 202);
	ck_assert_uint_eq(m.hits, 1); /* the memo held order 8: the first a was parsed */
	ck_assert_uint_eq(m.misses, 4);
}
END_TEST

START_TEST(test_resp_order_scan)
{
	static const struct {
		const char *body;
		uint64_t want;
	} t[] = {
		{"{\"order\":\"1\"}", 1},
		{"{\"status\":\"confirmed\",\"order\":\"18446744073709551615\"}", UINT64_MAX},
		{"{\"order\":\"18446744073709551616\"}", 0},
		{"{\"order\":12}", 0},
		{"{\"status\":\"sold_out\"}", 0},
		{"{\"order\":\"", 0},
		{"", 0},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = strlen(t[i].body);

		ck_assert_msg(lg_resp_order(guarded(t[i].body, n), n) == t[i].want, "case %zu", i);
	}
}
END_TEST

/* ------------------------------------------------------------ requests */

struct req_case {
	enum lg_req_kind kind;
	uint64_t num;
	const char *tok;
	bool close;
	const char *want;
};

#define H " HTTP/1.1\r\nHost: 198.18.0.1\r\n"

static const struct req_case req_cases[] = {
	{LG_REQ_BUY, 42, NULL, false, "POST /v1/seckill/1001" H "X-User-Id: 42\r\n\r\n"},
	{LG_REQ_BUY, UINT64_MAX, NULL, true,
	 "POST /v1/seckill/1001" H "X-User-Id: 18446744073709551615\r\nConnection: close\r\n\r\n"},
	{LG_REQ_BUY, 0, NULL, false, "POST /v1/seckill/1001" H "X-User-Id: 0\r\n\r\n"},
	{LG_REQ_BUY_JWT, 0, "aaa.bbb.ccc", false,
	 "POST /v1/seckill/1001" H "Authorization: Bearer aaa.bbb.ccc\r\n\r\n"},
	{LG_REQ_ORDER, 123456789, NULL, false, "GET /v1/orders/123456789" H "\r\n"},
	{LG_REQ_ITEM, 0, NULL, true, "GET /v1/items/1001" H "Connection: close\r\n\r\n"},
	{LG_REQ_HEALTHZ, 0, NULL, false, "GET /healthz" H "\r\n"},
};

START_TEST(test_req_build)
{
	const struct req_case *c = &req_cases[_i];
	struct lg_req_tmpl t;
	char out[LG_REQ_MAX];
	size_t n;

	ck_assert_int_eq(lg_req_tmpl_init(&t, "198.18.0.1", 1001, 3), 0);
	n = lg_req_build(&t, c->kind, c->num, c->tok, c->tok ? strlen(c->tok) : 0, c->close, out);
	ck_assert_uint_eq(n, strlen(c->want));
	ck_assert_msg(memcmp(out, c->want, n) == 0, "case %d: %.*s", _i, (int)n, out);
}
END_TEST

/* Every kind, with and without close, parses with the dataplane's parser
 * into the fields it means. */
START_TEST(test_req_dataplane_parses)
{
	static char tok[1024 + 1];
	struct lg_req_tmpl t;
	char out[LG_REQ_MAX];

	memset(tok, 'a', 1024);
	ck_assert_int_eq(lg_req_tmpl_init(&t, "198.18.0.1:8080", 7, 16), 0);
	for (int k = 0; k < LG_REQ__COUNT; k++) {
		for (int close = 0; close <= 1; close++) {
			struct sk_http_parser p;
			struct sk_http_request req;
			size_t n = lg_req_build(&t, (enum lg_req_kind)k, 99, tok, 1024, close, out);
			const uint8_t *buf = guarded(out, n);

			ck_assert_uint_gt(n, 0);
			ck_assert_int_eq(sk_http_parser_init(&p, NULL), 0);
			ck_assert_msg(sk_http_parse(&p, buf, n, &req) == SK_HTTP_DONE, "kind %s",
				      lg_req_kind_str((enum lg_req_kind)k));
			ck_assert_uint_eq(req.len, n);
			ck_assert(req.keep_alive == !close);
			ck_assert_uint_eq(req.host_len, strlen("198.18.0.1:8080"));
			ck_assert_uint_eq(req.method, k <= LG_REQ_BUY_JWT || k == LG_REQ_CART
							      ? SK_HTTP_METHOD_POST
							      : SK_HTTP_METHOD_GET);
			if (k == LG_REQ_CART) {
				struct sk_cart_body cb;
				struct sk_cart_error e;

				ck_assert(sk_cart_content_type_ok(req.content_type,
								  req.content_type_len));
				ck_assert_int_eq(
					sk_cart_body_parse(req.body, req.body_len, &cb, &e), 0);
				ck_assert_uint_eq(cb.n, 16);
				ck_assert_uint_eq(cb.lines[15].item, 7 + 15);
			}
			if (k == LG_REQ_BUY || k == LG_REQ_CART)
				ck_assert(req.user_id_len == 2 &&
					  memcmp(req.user_id, "99", 2) == 0);
			if (k == LG_REQ_BUY_JWT)
				ck_assert_uint_eq(req.authorization_len, 7 + 1024);
		}
	}
}
END_TEST

START_TEST(test_req_errors)
{
	static char host[300];
	struct lg_req_tmpl t;
	static char tok[LG_REQ_MAX];
	char out[LG_REQ_MAX];

	ck_assert_int_eq(lg_req_tmpl_init(&t, "", 1, 3), -EINVAL);
	ck_assert_int_eq(lg_req_tmpl_init(&t, "a b", 1, 3), -EINVAL);
	ck_assert_int_eq(lg_req_tmpl_init(&t, "a\r\nX: y", 1, 3), -EINVAL);
	ck_assert_int_eq(lg_req_tmpl_init(NULL, "a", 1, 3), -EINVAL);
	memset(host, 'h', sizeof(host) - 1);
	ck_assert_int_eq(lg_req_tmpl_init(&t, host, 1, 3), -ENAMETOOLONG);
	ck_assert_int_eq(lg_req_tmpl_init(&t, "198.18.0.1", UINT64_MAX, 3), 0);
	ck_assert_uint_eq(t.cart_body_len, 0); /* no cart of items past UINT32_MAX */
	ck_assert_int_eq(lg_req_tmpl_init(&t, "198.18.0.1", 1, 17), 0);
	ck_assert_uint_eq(t.cart_body_len, 0);
	memset(tok, 'a', sizeof(tok));
	ck_assert_uint_eq(lg_req_build(&t, LG_REQ_BUY_JWT, 0, tok, sizeof(tok), true, out), 0);
	ck_assert_uint_gt(lg_req_build(&t, LG_REQ_BUY_JWT, 0, tok, 1024, true, out), 1024);
}
END_TEST

START_TEST(test_req_kind_names)
{
	for (int k = 0; k < LG_REQ__COUNT; k++) {
		const char *s = lg_req_kind_str((enum lg_req_kind)k);

		ck_assert_int_eq(lg_req_kind_parse(s, strlen(s)), k);
	}
	ck_assert_int_eq(lg_req_kind_parse("bu", 2), -1);
	ck_assert_int_eq(lg_req_kind_parse("buyy", 4), -1);
	ck_assert_int_eq(lg_req_kind_parse("", 0), -1);
}
END_TEST

static Suite *
lg_http_suite(void)
{
	Suite *s = suite_create("lg_http");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, guard_setup, NULL);
	tcase_add_loop_test(tc, test_resp_memo, 0, (int)(sizeof(ok_cases) / sizeof(ok_cases[0])));
	tcase_add_test(tc, test_resp_memo_one_byte);
	tcase_add_test(tc, test_resp_order_scan);
	tcase_add_loop_test(tc, test_req_build, 0, (int)(sizeof(req_cases) / sizeof(req_cases[0])));
	tcase_add_test(tc, test_req_dataplane_parses);
	tcase_add_test(tc, test_req_errors);
	tcase_add_test(tc, test_req_kind_names);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(lg_http_suite)
