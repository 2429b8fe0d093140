/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http_response.c - response writer and canned responses: exact bytes,
 * -ENOSPC at every too-small capacity, canned == writer byte for byte, and
 * every canned response parses back as a well-formed HTTP/1.1 response.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_http.h"
#include "sk_test.h"

struct write_case {
	struct sk_http_response r;
	const char *want;
};

static const char date[] = "Sun, 06 Nov 1994 08:49:37 GMT";

static const struct write_case writes[] = {
	{{.status = 200, .body = "{\"status\":\"ok\"}", .body_len = 15},
	 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
	 "{\"status\":\"ok\"}"},
	{{.status = 202,
	  .conn = SK_HTTP_CONN_CLOSE,
	  .body = "{\"status\":\"queued\",\"order\":\"12\"}",
	  .body_len = 32},
	 "HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 32\r\n"
	 "Connection: close\r\n\r\n{\"status\":\"queued\",\"order\":\"12\"}"},
	{{.status = 429,
	  .conn = SK_HTTP_CONN_KEEP_ALIVE_10,
	  .retry_after = 3600,
	  .body = "{\"status\":\"busy\"}",
	  .body_len = 17,
	  .date = date},
	 "HTTP/1.1 429 Too Many Requests\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
	 "Content-Type: application/json\r\nContent-Length: 17\r\nConnection: keep-alive\r\n"
	 "Retry-After: 3600\r\n\r\n{\"status\":\"busy\"}"},
	/* HEAD: Content-Length of the body that is not sent */
	{{.status = 200, .no_body = true, .body = "{\"status\":\"ok\"}", .body_len = 15},
	 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"},
	/* extra fields, empty body, unlisted status */
	{{.status = 599, .extra = "X-A: 1\r\nX-B: 2\r\n", .extra_len = 16},
	 "HTTP/1.1 599 \r\nContent-Type: application/json\r\nContent-Length: 0\r\nX-A: 1\r\n"
	 "X-B: 2\r\n\r\n"},
};

START_TEST(test_write_exact)
{
	const struct write_case *c = &writes[_i];
	size_t want = strlen(c->want);
	char buf[512];

	memset(buf, 0xa5, sizeof(buf));
	ck_assert_int_eq(sk_http_response_write(buf, sizeof(buf), &c->r), (int)want);
	ck_assert(memcmp(buf, c->want, want) == 0);
	ck_assert_uint_eq((uint8_t)buf[want], 0xa5); /* nothing written past the end */

	/* exactly enough room works; one byte less, and every smaller size, fails */
	ck_assert_int_eq(sk_http_response_write(buf, want, &c->r), (int)want);
	for (size_t cap = 0; cap < want; cap++) {
		char *small = malloc(cap + 1);
		ck_assert_ptr_nonnull(small);
		small[cap] = 0x5a;
		ck_assert_int_eq(sk_http_response_write(small, cap, &c->r), -ENOSPC);
		ck_assert_uint_eq((uint8_t)small[cap], 0x5a);
		free(small);
	}
}
END_TEST

START_TEST(test_write_invalid)
{
	static const struct sk_http_response bad[] = {
		{.status = 0},
		{.status = 100},
		{.status = 199},
		{.status = 204},
		{.status = 304},
		{.status = 600},
		{.status = 200, .conn = SK_HTTP_CONN_MAX},
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(sk_http_response_write(buf, sizeof(buf), &bad[i]), -EINVAL);
}
END_TEST

struct canned_case {
	enum sk_http_canned_id id;
	uint16_t status;
	const char *body;
	const char *extra;
	uint32_t retry_after;
};

static const struct canned_case canned_cases[] = {
	{SK_HTTP_CANNED_HEALTHZ, 200, "{\"status\":\"ok\"}", NULL, 0},
	{SK_HTTP_CANNED_BAD_REQUEST, 400, "{\"status\":\"bad_request\"}", NULL, 0},
	{SK_HTTP_CANNED_UNAUTHORIZED, 401, "{\"status\":\"unauthorized\"}",
	 "WWW-Authenticate: Bearer\r\n", 0},
	{SK_HTTP_CANNED_ENDED, 403, "{\"status\":\"ended\"}", NULL, 0},
	{SK_HTTP_CANNED_NOT_FOUND, 404, "{\"status\":\"not_found\"}", NULL, 0},
	{SK_HTTP_CANNED_METHOD, 405, "{\"status\":\"method_not_allowed\"}",
	 "Allow: GET, HEAD, POST\r\n", 0},
	{SK_HTTP_CANNED_LIMIT, 409, "{\"status\":\"limit\"}", NULL, 0},
	{SK_HTTP_CANNED_SOLD_OUT, 410, "{\"status\":\"sold_out\"}", NULL, 0},
	{SK_HTTP_CANNED_LENGTH_REQUIRED, 411, "{\"status\":\"length_required\"}", NULL, 0},
	{SK_HTTP_CANNED_BODY_TOO_LARGE, 413, "{\"status\":\"body_too_large\"}", NULL, 0},
	{SK_HTTP_CANNED_URI_TOO_LONG, 414, "{\"status\":\"uri_too_long\"}", NULL, 0},
	{SK_HTTP_CANNED_BUSY, 429, "{\"status\":\"busy\"}", NULL, 1},
	{SK_HTTP_CANNED_HEAD_TOO_LARGE, 431, "{\"status\":\"header_too_large\"}", NULL, 0},
	{SK_HTTP_CANNED_NOT_IMPLEMENTED, 501, "{\"status\":\"not_implemented\"}", NULL, 0},
	{SK_HTTP_CANNED_VERSION, 505, "{\"status\":\"version_not_supported\"}", NULL, 0},
};

/* Each canned response equals what the writer produces, in all three flavours. */
START_TEST(test_canned_matches_writer)
{
	const struct canned_case *c = &canned_cases[_i];
	char buf[512];

	ck_assert_int_eq(sizeof(canned_cases) / sizeof(canned_cases[0]), SK_HTTP_CANNED_MAX);
	ck_assert_int_eq(c->id, _i);
	for (int conn = 0; conn < SK_HTTP_CONN_MAX; conn++) {
		const struct sk_http_canned *k = sk_http_canned_get(c->id, (enum sk_http_conn)conn);
		struct sk_http_response r = {
			.status = c->status,
			.conn = (uint8_t)conn,
			.retry_after = c->retry_after,
			.body = c->body,
			.body_len = strlen(c->body),
			.extra = c->extra,
			.extra_len = c->extra != NULL ? strlen(c->extra) : 0,
		};
		int n = sk_http_response_write(buf, sizeof(buf), &r);

		ck_assert_ptr_nonnull(k);
		ck_assert_int_eq(n, k->len);
		ck_assert_msg(memcmp(buf, k->data, k->len) == 0, "canned %d/%d differs", _i, conn);
		ck_assert_uint_eq(k->head_len + strlen(c->body), k->len);
		ck_assert(memcmp(k->data + k->head_len - 4, "\r\n\r\n", 4) == 0);

		r.no_body = true;
		ck_assert_int_eq(sk_http_response_write(buf, sizeof(buf), &r), k->head_len);
		ck_assert(memcmp(buf, k->data, k->head_len) == 0);
	}
}
END_TEST

START_TEST(test_canned_lookup)
{
	ck_assert_ptr_null(sk_http_canned_get(SK_HTTP_CANNED_MAX, SK_HTTP_CONN_CLOSE));
	ck_assert_ptr_null(sk_http_canned_get(SK_HTTP_CANNED_HEALTHZ, SK_HTTP_CONN_MAX));
	ck_assert_ptr_null(sk_http_canned_error(SK_HTTP_DONE));
	ck_assert_ptr_null(sk_http_canned_error(SK_HTTP_AGAIN));
	ck_assert_ptr_null(sk_http_canned_error(SK_HTTP_HEAD));
	ck_assert_ptr_null(sk_http_canned_error(SK_HTTP_RESULT_MAX));

	/* every parser error has a close-flavoured canned answer with its status */
	for (int r = SK_HTTP_E_FIRST; r < SK_HTTP_RESULT_MAX; r++) {
		const struct sk_http_canned *k = sk_http_canned_error((enum sk_http_result)r);
		char want[32];

		ck_assert_ptr_nonnull(k);
		snprintf(want, sizeof(want), "HTTP/1.1 %d ",
			 sk_http_result_status((enum sk_http_result)r));
		ck_assert(memcmp(k->data, want, strlen(want)) == 0);
		ck_assert(memmem(k->data, k->head_len, "\r\nConnection: close\r\n", 21) != NULL);
	}
}
END_TEST

START_TEST(test_continue)
{
	ck_assert_uint_eq(SK_HTTP_100_CONTINUE_LEN, 25);
	ck_assert(memcmp(SK_HTTP_100_CONTINUE, "HTTP/1.1 100 Continue\r\n\r\n", 25) == 0);
}
END_TEST

struct date_case {
	time_t t;
	const char *want;
};

static const struct date_case dates[] = {
	{0, "Thu, 01 Jan 1970 00:00:00 GMT"},
	{784111777, "Sun, 06 Nov 1994 08:49:37 GMT"},
	{951782400, "Tue, 29 Feb 2000 00:00:00 GMT"},
	{1735689599, "Tue, 31 Dec 2024 23:59:59 GMT"},
	{253402300799, "Fri, 31 Dec 9999 23:59:59 GMT"},
};

START_TEST(test_date)
{
	char out[SK_HTTP_DATE_SIZE];

	memset(out, 'x', sizeof(out));
	ck_assert_int_eq(sk_http_date_format(out, dates[_i].t), 29);
	ck_assert_str_eq(out, dates[_i].want);
}
END_TEST

START_TEST(test_date_out_of_range)
{
	char out[SK_HTTP_DATE_SIZE];

	ck_assert_int_eq(sk_http_date_format(out, (time_t)253402300800), -EINVAL);
}
END_TEST

static Suite *
http_response_suite(void)
{
	Suite *s = suite_create("http_response");
	TCase *tc = tcase_create("response");

	tcase_add_loop_test(tc, test_write_exact, 0, (int)(sizeof(writes) / sizeof(writes[0])));
	tcase_add_test(tc, test_write_invalid);
	tcase_add_loop_test(tc, test_canned_matches_writer, 0,
			    (int)(sizeof(canned_cases) / sizeof(canned_cases[0])));
	tcase_add_test(tc, test_canned_lookup);
	tcase_add_test(tc, test_continue);
	tcase_add_loop_test(tc, test_date, 0, (int)(sizeof(dates) / sizeof(dates[0])));
	tcase_add_test(tc, test_date_out_of_range);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(http_response_suite)
