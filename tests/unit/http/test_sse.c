/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the Server-Sent Events framing (sk_sse.h): the head, the
 * status event byte for byte, the keep-alive comment, refused names.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sk_sse.h"
#include "sk_test.h"

START_TEST(head_and_keepalive)
{
	ck_assert_str_eq(SK_SSE_HEAD, "HTTP/1.1 200 OK\r\n"
				      "Content-Type: text/event-stream\r\n"
				      "Cache-Control: no-store\r\n"
				      "Connection: close\r\n\r\n");
	ck_assert_uint_eq(SK_SSE_HEAD_LEN, strlen(SK_SSE_HEAD));
	ck_assert_ptr_null(strstr(SK_SSE_HEAD, "Content-Length"));
	ck_assert_str_eq(SK_SSE_KEEPALIVE, ": ka\n\n");
	ck_assert_uint_eq(SK_SSE_KEEPALIVE_LEN, 6);
}
END_TEST

static const struct {
	uint64_t order;
	const char *name;
	const char *want;
} events[] = {
	{1, "queued", "event: status\ndata: {\"order\":\"1\",\"status\":\"queued\"}\n\n"},
	{7320491830128771073ULL, "confirmed",
	 "event: status\ndata: {\"order\":\"7320491830128771073\",\"status\":\"confirmed\"}\n\n"},
	{UINT64_MAX, "refunded",
	 "event: status\ndata: {\"order\":\"18446744073709551615\",\"status\":\"refunded\"}\n\n"},
	{0, "settled", "event: status\ndata: {\"order\":\"0\",\"status\":\"settled\"}\n\n"},
	{42, "sixteen_bytes_ab",
	 "event: status\ndata: {\"order\":\"42\",\"status\":\"sixteen_bytes_ab\"}\n\n"},
};

START_TEST(event_bytes)
{
	char out[SK_SSE_EVENT_MAX + 8];

	memset(out, 'X', sizeof(out));
	size_t n = sk_sse_event(out, events[_i].order, events[_i].name);

	ck_assert_uint_eq(n, strlen(events[_i].want));
	ck_assert_uint_le(n, SK_SSE_EVENT_MAX);
	ck_assert_int_eq(memcmp(out, events[_i].want, n), 0);
	ck_assert_int_eq(out[n], 'X'); /* nothing written past it */
}
END_TEST

START_TEST(event_refused)
{
	char out[SK_SSE_EVENT_MAX];

	ck_assert_uint_eq(sk_sse_event(out, 1, NULL), 0);
	ck_assert_uint_eq(sk_sse_event(out, 1, ""), 0);
	ck_assert_uint_eq(sk_sse_event(out, 1, "seventeen_bytes_x"), 0);
}
END_TEST

/* The largest event fits SK_SSE_EVENT_MAX exactly. */
START_TEST(event_max)
{
	char out[SK_SSE_EVENT_MAX];

	ck_assert_uint_eq(sk_sse_event(out, UINT64_MAX, "sixteen_bytes_ab"), SK_SSE_EVENT_MAX);
}
END_TEST

static Suite *
sse_suite(void)
{
	Suite *s = suite_create("sse");
	TCase *tc = tcase_create("framing");

	tcase_add_test(tc, head_and_keepalive);
	tcase_add_loop_test(tc, event_bytes, 0, (int)(sizeof(events) / sizeof(events[0])));
	tcase_add_test(tc, event_refused);
	tcase_add_test(tc, event_max);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(sse_suite)
