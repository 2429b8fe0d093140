/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http_client - the clients' resumable response parser
 * (sk_http_client.h). Tables of inputs with expected results: every valid
 * response is parsed whole, at every split point (the buffer grows as the
 * TCP stack grows it) and byte by byte; every bad one gives its error at
 * once and for good, and no prefix of it is taken for a response; pipelined
 * streams are cut at every byte and consumed as a socket reader does; the
 * head and body limits are exact. Every input sits just before a PROT_NONE
 * guard page, so a read past the end crashes. The dataplane's canned and
 * written answers parse as what they say.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_http.h"
#include "sk_http_client.h"
#include "sk_test.h"

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ------------------------------------------------------------ guard page */

static uint8_t *guard_base;

static void
guard_setup(void)
{
	guard_base = sk_test_guard_end(SK_HTTP_CLIENT_HEAD_MAX + SK_HTTP_CLIENT_BODY_MAX + 1024);
}

/* guarded - a copy of @s (@len bytes) ending right at the guard page. */
static const uint8_t *
guarded(const void *s, size_t len)
{
	return sk_test_guarded(guard_base, s, len);
}

/* The guard faults: a parser reading past an input's end would crash. */
START_TEST(test_guard_faults)
{
	volatile const uint8_t *p = guard_base;

	(void)*p;
}
END_TEST

/* parse_fresh - a fresh parser over a guarded copy of @s[0, len). */
static enum sk_http_client_result
parse_fresh(struct sk_http_client_resp *r, const void *s, size_t len)
{
	sk_http_client_reset(r);
	return sk_http_client_parse(r, guarded(s, len), len);
}

/* ------------------------------------------------------------ good answers */

#define BODY_200 "{\"status\":\"confirmed\",\"order\":\"4611686018427387905\"}"
#define BODY_202 "{\"status\":\"queued\",\"order\":\"123\"}"
#define BODY_410 "{\"status\":\"sold_out\"}"

struct ok_case {
	const char *in;
	uint16_t status;
	bool close;
	int64_t retry_after; /* -1: none */
	const char *body;
};

static const struct ok_case ok_cases[] = {
	{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 52\r\n\r\n" BODY_200,
	 200, false, -1, BODY_200},
	{"HTTP/1.1 202 Accepted\r\nContent-Length: 33\r\n\r\n" BODY_202, 202, false, -1, BODY_202},
	{"HTTP/1.1 410 Gone\r\nContent-Length: 21\r\nConnection: close\r\n\r\n" BODY_410, 410, true,
	 -1, BODY_410},
	{"HTTP/1.1 410 Gone\r\ncontent-length: 21\r\n\r\n" BODY_410, 410, false, -1, BODY_410},
	/* status line */
	{"HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n", 200, false, -1, ""},
	{"HTTP/1.1 200\r\ncontent-length:2\r\n\r\nok", 200, false, -1, "ok"},
	{"HTTP/1.1 599 X\xff\x80 \t!\r\nX-Obs: \x80\xfe\r\nContent-Length: 0\r\n\r\n", 599, false,
	 -1, ""},
	{"HTTP/1.1 404 Not \x80 Found\r\nX-Empty:\r\nContent-Length: 1\r\n\r\nx", 404, false, -1,
	 "x"},
	/* Content-Length: OWS, copies that agree, the limit */
	{"HTTP/1.1 202 Accepted\r\nCONTENT-LENGTH: \t 3 \t\r\n\r\n{}x", 202, false, -1, "{}x"},
	{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", 200, false, -1,
	 "ok"},
	{"HTTP/1.1 200 OK\r\nContent-Length: 0004\r\n\r\nabcd", 200, false, -1, "abcd"},
	{"HTTP/1.1 200 OK\r\nContent-Lengthy: 5\r\nContent-Length: 0\r\n\r\n", 200, false, -1, ""},
	{"HTTP/1.1 200 OK\r\nX-Content-Length: 5\r\nContent-Length: 1\r\n\r\nz", 200, false, -1,
	 "z"},
	/* no body whatever the length says */
	{"HTTP/1.1 204 No Content\r\n\r\n", 204, false, -1, ""},
	{"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", 304, false, -1, ""},
	{"HTTP/1.1 100 Continue\r\n\r\n", 100, false, -1, ""},
	{"HTTP/1.1 101 Switching\r\nContent-Length: 5\r\n\r\n", 101, false, -1, ""},
	/* Connection */
	{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", 200, true, -1,
	 "{}"},
	{"HTTP/1.1 200 OK\r\nConnection:close\r\nContent-Length: 0\r\n\r\n", 200, true, -1, ""},
	{"HTTP/1.1 200 OK\r\nCONNECTION: keep-alive, Close\r\nContent-Length: 2\r\n\r\n{}", 200,
	 true, -1, "{}"},
	{"HTTP/1.1 200 OK\r\nConnection: ,\t close ,\r\nContent-Length: 0\r\n\r\n", 200, true, -1,
	 ""},
	{"HTTP/1.1 200 OK\r\nConnection: Upgrade\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
	 200, true, -1, ""},
	{"HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n", 200, false, -1, ""},
	{"HTTP/1.1 200 OK\r\nConnection: clos\r\nContent-Length: 0\r\n\r\n", 200, false, -1, ""},
	{"HTTP/1.1 200 OK\r\nConnection: xclose\r\nContent-Length: 0\r\n\r\n", 200, false, -1, ""},
	{"HTTP/1.1 200 OK\r\nConnectio: close\r\nContent-Length: 0\r\n\r\n", 200, false, -1, ""},
	{"HTTP/1.1 200 OK\r\nX: close\r\nContent-Length: 0\r\n\r\n", 200, false, -1, ""},
	{"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", 200, true, -1, "{}"},
	{"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}", 200, false, -1,
	 "{}"},
	{"HTTP/1.0 200 OK\r\nConnection: Keep-Alive, close\r\nContent-Length: 0\r\n\r\n", 200, true,
	 -1, ""},
	{"HTTP/1.0 200 OK\r\nConnection: keep-alivex\r\nContent-Length: 0\r\n\r\n", 200, true, -1,
	 ""},
	/* Retry-After: delay-seconds, OWS, saturated; an HTTP-date is ignored */
	{"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 2\r\n\r\n{}", 429,
	 false, 1, "{}"},
	{"HTTP/1.1 429 X\r\nRetry-After:  17 \r\nContent-Length: 2\r\n\r\n{}", 429, false, 17,
	 "{}"},
	{"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nConnection: keep-alive, "
	 "Close\r\nContent-Length: 0\r\n\r\n",
	 429, true, 1, ""},
	{"HTTP/1.1 503 X\r\nRetry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\nContent-Length: "
	 "2\r\n\r\n{}",
	 503, false, -1, "{}"},
	{"HTTP/1.1 503 X\r\nRetry-After: 99999999999999999999\r\nContent-Length: 0\r\n\r\n", 503,
	 false, UINT32_MAX, ""},
	{"HTTP/1.1 503 X\r\nRetry-After: 4294967295\r\nContent-Length: 0\r\n\r\n", 503, false,
	 UINT32_MAX, ""},
	{"HTTP/1.1 503 X\r\nRetry-After: 1 2\r\nContent-Length: 0\r\n\r\n", 503, false, -1, ""},
	{"HTTP/1.1 503 X\r\nRetry-After:\r\nContent-Length: 0\r\n\r\n", 503, false, -1, ""},
	{"HTTP/1.1 503 X\r\nRetry-After: 5\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n", 503,
	 false, 7, ""},
	{"HTTP/1.1 503 X\r\nRetry-After: 5\r\nRetry-After: soon\r\nContent-Length: 0\r\n\r\n", 503,
	 false, 5, ""},
	{"HTTP/1.1 503 X\r\nRetry-Afte: 5\r\nContent-Length: 0\r\n\r\n", 503, false, -1, ""},
};

/* check_ok - @r, parsed from @buf, is what @c says. */
static void
check_ok(int i, const struct ok_case *c, const struct sk_http_client_resp *r, const uint8_t *buf)
{
	size_t n = strlen(c->in), bl = strlen(c->body);

	ck_assert_msg(r->len == n, "case %d: len %u", i, r->len);
	ck_assert_uint_eq(r->off, n);
	ck_assert_uint_eq(r->status, c->status);
	ck_assert_msg(r->close == c->close, "case %d: close %u", i, r->close);
	ck_assert_uint_eq(r->content_len, bl);
	ck_assert_uint_eq(r->head_len + r->content_len, n);
	ck_assert(memcmp(buf + r->head_len, c->body, bl) == 0);
	ck_assert_msg(r->has_retry_after == (c->retry_after >= 0), "case %d: retry-after", i);
	ck_assert_uint_eq(r->retry_after, c->retry_after >= 0 ? (uint32_t)c->retry_after : 0);
}

START_TEST(test_ok_whole)
{
	const struct ok_case *c = &ok_cases[_i];
	size_t n = strlen(c->in);
	struct sk_http_client_resp r;

	ck_assert_msg(parse_fresh(&r, c->in, n) == SK_HTTP_CLIENT_DONE, "case %d", _i);
	check_ok(_i, c, &r, guard_base - n);
	/* DONE sticks: a second call says the same and moves nothing */
	ck_assert_int_eq(sk_http_client_parse(&r, guard_base - n, n), SK_HTTP_CLIENT_DONE);
	check_ok(_i, c, &r, guard_base - n);
}
END_TEST

/* Every split point: the first call sees k bytes, the second all of them
 * (what the stack does: unconsumed bytes, then the newer ones after them);
 * and every strict prefix of a fresh parse is AGAIN. */
START_TEST(test_ok_splits)
{
	const struct ok_case *c = &ok_cases[_i];
	size_t n = strlen(c->in);

	for (size_t k = 0; k < n; k++) {
		struct sk_http_client_resp r;

		ck_assert_msg(parse_fresh(&r, c->in, k) == SK_HTTP_CLIENT_AGAIN,
			      "case %d split %zu", _i, k);
		ck_assert_uint_eq(r.off, k);
		ck_assert_msg(sk_http_client_parse(&r, guarded(c->in, n), n) == SK_HTTP_CLIENT_DONE,
			      "case %d split %zu", _i, k);
		check_ok(_i, c, &r, guard_base - n);
	}
}
END_TEST

START_TEST(test_ok_bytewise)
{
	const struct ok_case *c = &ok_cases[_i];
	size_t n = strlen(c->in);
	struct sk_http_client_resp r;

	sk_http_client_reset(&r);
	for (size_t k = 0; k < n; k++)
		ck_assert_msg(sk_http_client_parse(&r, guarded(c->in, k), k) ==
				      SK_HTTP_CLIENT_AGAIN,
			      "case %d byte %zu", _i, k);
	ck_assert_int_eq(sk_http_client_parse(&r, guarded(c->in, n), n), SK_HTTP_CLIENT_DONE);
	check_ok(_i, c, &r, guard_base - n);
}
END_TEST

/* ------------------------------------------------------------ bad answers */

struct bad_case {
	const char *in;
	enum sk_http_client_result want;
	size_t len; /* 0: strlen(in) */
};

static const struct bad_case bad_cases[] = {
	/* status line */
	{"HTTP/2.0 200 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/2 200 OK\r\n\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.2 200 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"http/1.1 200 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1  200 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 20 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 20x OK\r\n\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 2000 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 099 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 600 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 200 OK\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 200 OK\n\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 200 O\x01K\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 200 OK\x7f\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"HTTP/1.1 200 OK\r\r", SK_HTTP_CLIENT_E_STATUS, 0},
	{"\r\nHTTP/1.1 200 OK\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	{"GET / HTTP/1.1\r\n", SK_HTTP_CLIENT_E_STATUS, 0},
	/* field lines */
	{"HTTP/1.1 200 OK\r\nContent-Length: 0\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nA: b\nContent-Length: 0\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\n Content-Length: 0\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\n: x\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nX(y): 1\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nX: a\x7f\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nX: a\x00\r\n\r\n", SK_HTTP_CLIENT_E_FIELD,
	 sizeof("HTTP/1.1 200 OK\r\nX: a\x00\r\n\r\n") - 1},
	{"HTTP/1.1 200 OK\r\nConnection: clo\x01se\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 1\x01\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nRetry-After: 1\x02\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nA: b\r\r\n\r\n", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\nX: 1\r\n\r\r", SK_HTTP_CLIENT_E_FIELD, 0},
	{"HTTP/1.1 200 OK\r\n\rx", SK_HTTP_CLIENT_E_FIELD, 0},
	/* Content-Length missing or invalid */
	{"HTTP/1.1 200 OK\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nbody", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nbody", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 0x1\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 1,1\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\n", SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	 SK_HTTP_CLIENT_E_LENGTH, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 02\r\nContent-Length: "
	 "3\r\n\r\n",
	 SK_HTTP_CLIENT_E_LENGTH, 0},
	/* chunked */
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", SK_HTTP_CLIENT_E_CHUNKED, 0},
	{"HTTP/1.1 200 OK\r\ntransfer-encoding: identity\r\n\r\n", SK_HTTP_CLIENT_E_CHUNKED, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding:\r\n\r\n",
	 SK_HTTP_CLIENT_E_CHUNKED, 0},
	/* too large */
	{"HTTP/1.1 200 OK\r\nContent-Length: 4097\r\n\r\n", SK_HTTP_CLIENT_E_TOO_LARGE, 0},
	{"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
	 SK_HTTP_CLIENT_E_TOO_LARGE, 0},
};

/* Every prefix is AGAIN or the error (never DONE), the whole is the error,
 * and the error sticks, also with more bytes. */
START_TEST(test_bad)
{
	const struct bad_case *c = &bad_cases[_i];
	size_t n = c->len != 0 ? c->len : strlen(c->in);
	struct sk_http_client_resp r;
	enum sk_http_client_result got;

	for (size_t k = 0; k < n; k++) {
		got = parse_fresh(&r, c->in, k);
		ck_assert_msg(got == SK_HTTP_CLIENT_AGAIN || got == c->want,
			      "case %d prefix %zu: %s", _i, k, sk_http_client_result_str(got));
	}
	got = parse_fresh(&r, c->in, n);
	ck_assert_msg(got == c->want, "case %d: %s", _i, sk_http_client_result_str(got));
	ck_assert_int_eq(sk_http_client_parse(&r, guarded(c->in, n), n), c->want);
	ck_assert_int_eq(sk_http_client_parse(&r, guarded(ok_cases[0].in, strlen(ok_cases[0].in)),
					      strlen(ok_cases[0].in)),
			 c->want);
	/* resumed byte by byte: the same verdict */
	sk_http_client_reset(&r);
	got = SK_HTTP_CLIENT_AGAIN;
	for (size_t k = 1; k <= n && got == SK_HTTP_CLIENT_AGAIN; k++)
		got = sk_http_client_parse(&r, guarded(c->in, k), k);
	ck_assert_msg(got == c->want, "case %d bytewise: %s", _i, sk_http_client_result_str(got));
}
END_TEST

/* ------------------------------------------------------------ limits */

/* fill_head - a response with a head of exactly @total bytes in @buf. */
static void
fill_head(char *buf, size_t total)
{
	static const char start[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ";
	size_t sl = sizeof(start) - 1, fill = total - sl - 4;

	memcpy(buf, start, sl);
	memset(buf + sl, 'a', fill);
	memcpy(buf + sl + fill, "\r\n\r\n", 4);
}

/* A head of HEAD_MAX bytes passes, one byte more does not, read whole or
 * resumed at every 1000 bytes; a head still open at the limit is refused,
 * not waited for. */
START_TEST(test_head_limit)
{
	static char buf[SK_HTTP_CLIENT_HEAD_MAX + 64];
	struct sk_http_client_resp r;

	for (int extra = 0; extra <= 1; extra++) {
		size_t total = SK_HTTP_CLIENT_HEAD_MAX + (size_t)extra;
		enum sk_http_client_result want =
			extra ? SK_HTTP_CLIENT_E_TOO_LARGE : SK_HTTP_CLIENT_DONE;

		fill_head(buf, total);
		ck_assert_int_eq(parse_fresh(&r, buf, total), want);
		sk_http_client_reset(&r);
		for (size_t k = 1000; k < total; k += 1000)
			ck_assert_int_eq(sk_http_client_parse(&r, guarded(buf, k), k),
					 SK_HTTP_CLIENT_AGAIN);
		ck_assert_int_eq(sk_http_client_parse(&r, guarded(buf, total), total), want);
	}
	/* the limit inside the reason phrase and inside a field name */
	memcpy(buf, "HTTP/1.1 200 ", 13);
	memset(buf + 13, 'r', sizeof(buf) - 13);
	ck_assert_int_eq(parse_fresh(&r, buf, SK_HTTP_CLIENT_HEAD_MAX - 1), SK_HTTP_CLIENT_AGAIN);
	ck_assert_int_eq(parse_fresh(&r, buf, SK_HTTP_CLIENT_HEAD_MAX), SK_HTTP_CLIENT_E_TOO_LARGE);
	ck_assert_int_eq(parse_fresh(&r, buf, sizeof(buf)), SK_HTTP_CLIENT_E_TOO_LARGE);
	memcpy(buf, "HTTP/1.1 200 OK\r\n", 17);
	memset(buf + 17, 'n', sizeof(buf) - 17);
	ck_assert_int_eq(parse_fresh(&r, buf, SK_HTTP_CLIENT_HEAD_MAX - 1), SK_HTTP_CLIENT_AGAIN);
	ck_assert_int_eq(parse_fresh(&r, buf, sizeof(buf)), SK_HTTP_CLIENT_E_TOO_LARGE);
}
END_TEST

/* A body of BODY_MAX bytes passes, and waits for its last byte. */
START_TEST(test_body_limit)
{
	static char buf[128 + SK_HTTP_CLIENT_BODY_MAX];
	struct sk_http_client_resp r;
	int hl = snprintf(buf, 128, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n",
			  SK_HTTP_CLIENT_BODY_MAX);
	size_t total = (size_t)hl + SK_HTTP_CLIENT_BODY_MAX;

	memset(buf + hl, 'b', SK_HTTP_CLIENT_BODY_MAX);
	ck_assert_int_eq(parse_fresh(&r, buf, total - 1), SK_HTTP_CLIENT_AGAIN);
	ck_assert_uint_eq(r.off, total - 1);
	ck_assert_int_eq(sk_http_client_parse(&r, guarded(buf, total), total), SK_HTTP_CLIENT_DONE);
	ck_assert_uint_eq(r.head_len, (uint32_t)hl);
	ck_assert_uint_eq(r.content_len, SK_HTTP_CLIENT_BODY_MAX);
	ck_assert_uint_eq(r.len, total);
}
END_TEST

/* ------------------------------------------------------------ pipelining */

/* Three answers in one stream: an interim 100, a keep-alive 202, a 410
 * that closes. */
static const char stream[] = "HTTP/1.1 100 Continue\r\n\r\n"
			     "HTTP/1.1 202 Accepted\r\nContent-Length: 33\r\n\r\n" BODY_202
			     "HTTP/1.1 410 Gone\r\nContent-Length: 21\r\nConnection: close\r\n\r\n"
			     "" BODY_410;
static const uint16_t stream_status[] = {100, 202, 410};

/*
 * consume - what a socket reader does: @have bytes of the stream arrived
 * (from *start on are not consumed yet); parse, consume each complete
 * answer (its status into @got), and keep the rest at the buffer's start.
 */
static void
consume(struct sk_http_client_resp *r, size_t *start, size_t have, uint16_t *got, int *ngot)
{
	while (*start < have) {
		const uint8_t *b = guarded(stream + *start, have - *start);
		enum sk_http_client_result e = sk_http_client_parse(r, b, have - *start);

		if (e == SK_HTTP_CLIENT_AGAIN)
			return;
		ck_assert_int_eq(e, SK_HTTP_CLIENT_DONE);
		ck_assert_int_lt(*ngot, NELEM(stream_status));
		got[(*ngot)++] = r->status;
		ck_assert(r->close == (r->status == 410));
		*start += r->len;
		sk_http_client_reset(r);
	}
}

START_TEST(test_pipelined_splits)
{
	size_t n = sizeof(stream) - 1;

	for (size_t k = 0; k <= n; k++) {
		struct sk_http_client_resp r;
		uint16_t got[NELEM(stream_status)];
		size_t start = 0;
		int ngot = 0;

		sk_http_client_reset(&r);
		consume(&r, &start, k, got, &ngot);
		consume(&r, &start, n, got, &ngot);
		ck_assert_msg(ngot == NELEM(stream_status), "split %zu: %d answers", k, ngot);
		ck_assert(memcmp(got, stream_status, sizeof(got)) == 0);
		ck_assert_uint_eq(start, n);
	}
}
END_TEST

START_TEST(test_pipelined_bytewise)
{
	size_t n = sizeof(stream) - 1, start = 0;
	struct sk_http_client_resp r;
	uint16_t got[NELEM(stream_status)];
	int ngot = 0;

	sk_http_client_reset(&r);
	for (size_t k = 1; k <= n; k++)
		consume(&r, &start, k, got, &ngot);
	ck_assert_int_eq(ngot, NELEM(stream_status));
	ck_assert(memcmp(got, stream_status, sizeof(got)) == 0);
}
END_TEST

/* A fresh parse of the whole stream stops at the end of the first answer. */
START_TEST(test_pipelined_stops)
{
	size_t n = sizeof(stream) - 1;
	struct sk_http_client_resp r;

	ck_assert_int_eq(parse_fresh(&r, stream, n), SK_HTTP_CLIENT_DONE);
	ck_assert_uint_eq(r.len, strlen("HTTP/1.1 100 Continue\r\n\r\n"));
	ck_assert_uint_eq(r.off, r.len);
}
END_TEST

/* ------------------------------------------------------------ names */

START_TEST(test_result_names)
{
	static const char *const want[SK_HTTP_CLIENT__COUNT] = {
		"done", "again", "status", "field", "length", "chunked", "too_large"};

	for (int i = 0; i < SK_HTTP_CLIENT__COUNT; i++)
		ck_assert_str_eq(sk_http_client_result_str((enum sk_http_client_result)i), want[i]);
	ck_assert_str_eq(sk_http_client_result_str(SK_HTTP_CLIENT__COUNT), "?");
	ck_assert_uint_eq(sizeof(struct sk_http_client_resp), 32);
}
END_TEST

/* ------------------------------------------------------------ the dataplane */

/* The dataplane's canned answers parse as what they say. */
START_TEST(test_dataplane_canned)
{
	for (unsigned id = 0; id < SK_HTTP_CANNED_MAX; id++) {
		for (unsigned conn = 0; conn < SK_HTTP_CONN_MAX; conn++) {
			const struct sk_http_canned *c = sk_http_canned_get(
				(enum sk_http_canned_id)id, (enum sk_http_conn)conn);
			struct sk_http_client_resp r;

			ck_assert_ptr_nonnull(c);
			ck_assert_int_eq(parse_fresh(&r, c->data, c->len), SK_HTTP_CLIENT_DONE);
			ck_assert_uint_eq(r.len, c->len);
			ck_assert(r.close == (conn == SK_HTTP_CONN_CLOSE));
			ck_assert(r.has_retry_after == (id == SK_HTTP_CANNED_BUSY));
		}
	}
}
END_TEST

/* What sk_http_response_write() writes parses back field for field. */
START_TEST(test_dataplane_written)
{
	static const struct {
		uint16_t status;
		uint32_t retry_after;
		const char *body;
	} w[] = {
		{200, 0, BODY_200}, {202, 0, BODY_202},
		{410, 0, BODY_410}, {429, 3, "{\"status\":\"busy\"}"},
		{503, 3600, "{}"},  {404, 0, ""},
	};
	char buf[1024], date[SK_HTTP_DATE_SIZE];

	ck_assert_int_eq(sk_http_date_format(date, 784111777), SK_HTTP_DATE_SIZE - 1);
	for (int k = 0; k < NELEM(w); k++) {
		for (unsigned conn = 0; conn < SK_HTTP_CONN_MAX; conn++) {
			struct sk_http_response resp = {
				.status = w[k].status,
				.conn = (uint8_t)conn,
				.retry_after = w[k].retry_after,
				.body = w[k].body,
				.body_len = strlen(w[k].body),
				.date = conn == 1 ? date : NULL,
			};
			int n = sk_http_response_write(buf, sizeof(buf), &resp);
			struct sk_http_client_resp r;

			ck_assert_int_gt(n, 0);
			ck_assert_int_eq(parse_fresh(&r, buf, (size_t)n), SK_HTTP_CLIENT_DONE);
			ck_assert_uint_eq(r.len, (uint32_t)n);
			ck_assert_uint_eq(r.status, resp.status);
			ck_assert(r.close == (conn == SK_HTTP_CONN_CLOSE));
			ck_assert(r.has_retry_after == (resp.retry_after != 0));
			ck_assert_uint_eq(r.retry_after, resp.retry_after);
			ck_assert_uint_eq(r.content_len, resp.body_len);
			ck_assert(memcmp(guard_base - n + r.head_len, resp.body, resp.body_len) ==
				  0);
		}
	}
	/* the 100 Continue the dataplane may send first is an interim answer */
	struct sk_http_client_resp r;

	ck_assert_int_eq(parse_fresh(&r, SK_HTTP_100_CONTINUE, SK_HTTP_100_CONTINUE_LEN),
			 SK_HTTP_CLIENT_DONE);
	ck_assert_uint_eq(r.status, 100);
	ck_assert_uint_eq(r.len, SK_HTTP_100_CONTINUE_LEN);
}
END_TEST

static Suite *
http_client_suite(void)
{
	Suite *s = suite_create("http_client");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, guard_setup, NULL);
	tcase_add_test_raise_signal(tc, test_guard_faults, SIGSEGV);
	tcase_add_loop_test(tc, test_ok_whole, 0, NELEM(ok_cases));
	tcase_add_loop_test(tc, test_ok_splits, 0, NELEM(ok_cases));
	tcase_add_loop_test(tc, test_ok_bytewise, 0, NELEM(ok_cases));
	tcase_add_loop_test(tc, test_bad, 0, NELEM(bad_cases));
	tcase_add_test(tc, test_head_limit);
	tcase_add_test(tc, test_body_limit);
	tcase_add_test(tc, test_pipelined_splits);
	tcase_add_test(tc, test_pipelined_bytewise);
	tcase_add_test(tc, test_pipelined_stops);
	tcase_add_test(tc, test_result_names);
	tcase_add_test(tc, test_dataplane_canned);
	tcase_add_test(tc, test_dataplane_written);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(http_client_suite)
