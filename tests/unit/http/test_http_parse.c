/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http_parse.c - table-driven tests of the HTTP request parser.
 *
 * Every input is placed so that its last byte sits right before a PROT_NONE
 * guard page: a parser that reads one byte too far crashes the test. The
 * tables cover valid requests (each one also as every truncated prefix, fed
 * in two pieces at every split point, and byte by byte), malformed requests
 * with the exact error expected, every control byte in every part of the
 * request, the size limits, and pipelined pairs.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sk_http.h"
#include "sk_test.h"

/* ------------------------------------------------------------------------ */
/* Guard page                                                                */
/* ------------------------------------------------------------------------ */

#define GUARD_AREA (128 * 1024)

static uint8_t *guard_base; /* GUARD_AREA bytes, then a PROT_NONE page */
static size_t page_size;

static void
guard_setup(void)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, GUARD_AREA + page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mprotect(m + GUARD_AREA, page_size, PROT_NONE), 0);
	guard_base = m;
}

static void
guard_teardown(void)
{
	munmap(guard_base, GUARD_AREA + page_size);
	guard_base = NULL;
}

/* at_guard - copy @len bytes of @s so that they end right at the guard page. */
static const uint8_t *
at_guard(const void *s, size_t len)
{
	ck_assert_uint_le(len, GUARD_AREA);
	uint8_t *d = guard_base + GUARD_AREA - len;
	memmove(d, s, len);
	return d;
}

/* The guard really is there: reading one byte past an input faults. */
START_TEST(test_guard_faults)
{
	const volatile uint8_t *buf = at_guard("GET", 3);

	(void)buf[3];
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static enum sk_http_result
parse_once(const void *buf, size_t len, struct sk_http_request *req)
{
	struct sk_http_parser p;

	ck_assert_int_eq(sk_http_parser_init(&p, NULL), 0);
	return sk_http_parse(&p, buf, len, req);
}

/*
 * parse_bytewise - feed @buf one more byte per call, the way a slow client's
 * segments arrive; checks the result sequence (AGAIN..., at most one HEAD,
 * AGAIN..., final) and returns the final result.
 */
static enum sk_http_result
parse_bytewise(const uint8_t *buf, size_t len, struct sk_http_request *req)
{
	struct sk_http_parser p;
	enum sk_http_result r = SK_HTTP_AGAIN;
	int heads = 0;

	sk_http_parser_init(&p, NULL);
	for (size_t k = 0; k <= len; k++) {
		r = sk_http_parse(&p, buf, k, req);
		if (r == SK_HTTP_HEAD) {
			heads++;
			continue;
		}
		if (r != SK_HTTP_AGAIN)
			break;
	}
	ck_assert_int_le(heads, 1);
	return r;
}

/* Compares two parsed requests field by field, pointers as offsets. */
static void
req_eq(const struct sk_http_request *a, const uint8_t *abase, const struct sk_http_request *b,
       const uint8_t *bbase)
{
#define OFF(r, base, f) ((r)->f == NULL ? -1 : (long)((const uint8_t *)(r)->f - (base)))
	ck_assert_int_eq(OFF(a, abase, target), OFF(b, bbase, target));
	ck_assert_int_eq(OFF(a, abase, host), OFF(b, bbase, host));
	ck_assert_int_eq(OFF(a, abase, authorization), OFF(b, bbase, authorization));
	ck_assert_int_eq(OFF(a, abase, user_id), OFF(b, bbase, user_id));
	ck_assert_int_eq(OFF(a, abase, body), OFF(b, bbase, body));
#undef OFF
	ck_assert_uint_eq(a->target_len, b->target_len);
	ck_assert_uint_eq(a->path_len, b->path_len);
	ck_assert_uint_eq(a->host_len, b->host_len);
	ck_assert_uint_eq(a->authorization_len, b->authorization_len);
	ck_assert_uint_eq(a->user_id_len, b->user_id_len);
	ck_assert_uint_eq(a->head_len, b->head_len);
	ck_assert_uint_eq(a->body_len, b->body_len);
	ck_assert_uint_eq(a->len, b->len);
	ck_assert_uint_eq(a->nfields, b->nfields);
	ck_assert_uint_eq(a->method, b->method);
	ck_assert_uint_eq(a->version, b->version);
	ck_assert_int_eq(a->keep_alive, b->keep_alive);
	ck_assert_int_eq(a->keep_alive_header, b->keep_alive_header);
	ck_assert_int_eq(a->expect_continue, b->expect_continue);
	ck_assert_int_eq(a->has_content_length, b->has_content_length);
}

static void
field_eq(const char *got, size_t got_len, const char *want)
{
	if (want == NULL) {
		ck_assert_ptr_null(got);
		ck_assert_uint_eq(got_len, 0);
		return;
	}
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(got_len, strlen(want));
	ck_assert(memcmp(got, want, got_len) == 0);
}

/* ------------------------------------------------------------------------ */
/* Valid requests                                                            */
/* ------------------------------------------------------------------------ */

struct valid_case {
	const char *raw;
	uint8_t method;
	const char *target;
	size_t path_len;
	uint8_t version;
	bool keep_alive;
	bool ka_header;
	bool expect;
	uint32_t body_len;
	const char *host;
	const char *auth;
	const char *uid;
	uint16_t nfields;
	const char *body;
};

#define TOKEN                                                                                      \
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."                                                    \
	"eyJzdWIiOiI0MiIsIml0ZW0iOjcsImV4cCI6MTkwMDAwMDAwMH0."                                     \
	"dGhpcy1pcy1ub3QtYS1yZWFsLXNpZ25hdHVyZS1idXQtbG9uZw"

static const struct valid_case valid[] = {
	{"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", SK_HTTP_METHOD_GET, "/healthz", 8, 11, true,
	 false, false, 0, "a", NULL, NULL, 1, NULL},
	{"POST /v1/seckill/7 HTTP/1.1\r\nHost: shop.example:8080\r\nAuthorization: Bearer " TOKEN
	 "\r\nContent-Length: 0\r\nUser-Agent: wrk\r\n\r\n",
	 SK_HTTP_METHOD_POST, "/v1/seckill/7", 13, 11, true, false, false, 0, "shop.example:8080",
	 "Bearer " TOKEN, NULL, 4, NULL},
	/* POST without Content-Length: body length 0 */
	{"POST /v1/seckill/7 HTTP/1.1\r\nHost: h\r\nX-User-Id: 123456789\r\n\r\n",
	 SK_HTTP_METHOD_POST, "/v1/seckill/7", 13, 11, true, false, false, 0, "h", NULL,
	 "123456789", 2, NULL},
	/* body, Expect: 100-continue, OWS around values, mixed case names */
	{"POST /v1/seckill/9?q=1&r=%2F HTTP/1.1\r\nhOsT:\t h \t\r\ncontent-LENGTH:   5 \r\n"
	 "EXPECT: 100-Continue\r\nx-user-id:42\r\n\r\nhello",
	 SK_HTTP_METHOD_POST, "/v1/seckill/9?q=1&r=%2F", 13, 11, true, false, true, 5, "h", NULL,
	 "42", 4, "hello"},
	/* HTTP/1.1 Connection: close (token list, any case) */
	{"GET /v1/orders/99 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, CLOSE\r\n\r\n",
	 SK_HTTP_METHOD_GET, "/v1/orders/99", 13, 11, false, false, false, 0, "x", NULL, NULL, 2,
	 NULL},
	/* HTTP/1.0: close by default, no Host needed */
	{"GET /v1/items/1 HTTP/1.0\r\n\r\n", SK_HTTP_METHOD_GET, "/v1/items/1", 11, 10, false,
	 false, false, 0, NULL, NULL, NULL, 0, NULL},
	/* HTTP/1.0 keep-alive; Expect ignored in 1.0 */
	{"GET / HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n\r\n",
	 SK_HTTP_METHOD_GET, "/", 1, 10, true, true, false, 0, NULL, NULL, NULL, 2, NULL},
	/* HTTP/1.0 keep-alive and close: close wins */
	{"GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n",
	 SK_HTTP_METHOD_GET, "/", 1, 10, false, false, false, 0, NULL, NULL, NULL, 2, NULL},
	/* bare LF line ends, leading empty lines, HEAD */
	{"\r\n\nHEAD /healthz HTTP/1.1\nHost: a\n\n", SK_HTTP_METHOD_HEAD, "/healthz", 8, 11, true,
	 false, false, 0, "a", NULL, NULL, 1, NULL},
	/* HTTP/1.2 is processed as 1.1 (RFC 9110 2.5) */
	{"GET /x HTTP/1.2\r\nHost: a\r\n\r\n", SK_HTTP_METHOD_GET, "/x", 2, 11, true, false, false,
	 0, "a", NULL, NULL, 1, NULL},
	/* empty values, obs-text in a value, empty Host, GET with a body */
	{"GET /a?b?c HTTP/1.1\r\nHost:\r\nX-Empty:\r\nX-Obs: caf\xc3\xa9\r\nContent-Length: 3\r\n"
	 "\r\nabc",
	 SK_HTTP_METHOD_GET, "/a?b?c", 2, 11, true, false, false, 3, "", NULL, NULL, 4, "abc"},
	/* every target byte class */
	{"GET /AZaz09-._~!$&'()*+,;=:@/%aF?/? HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
	 SK_HTTP_METHOD_GET, "/AZaz09-._~!$&'()*+,;=:@/%aF?/?", 28, 11, true, false, false, 0,
	 "[::1]:80", NULL, NULL, 1, NULL},
	/* body at the limit, Content-Length with leading zeros */
	{"POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 0010\r\n\r\n0123456789",
	 SK_HTTP_METHOD_POST, "/b", 2, 11, true, false, false, 10, "a", NULL, NULL, 2,
	 "0123456789"},
	/* Transfer-Encoding-like names are not Transfer-Encoding */
	{"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encodings: chunked\r\nTE: trailers\r\n\r\n",
	 SK_HTTP_METHOD_GET, "/", 1, 11, true, false, false, 0, "a", NULL, NULL, 3, NULL},
	/*
	 * absolute-form (RFC 9112 3.2.2): target is the path and query after the
	 * authority, as for origin-form; host is the authority, not the Host field
	 */
	{"POST http://shop.example:8080/v1/seckill/1 HTTP/1.1\r\nHost: other\r\n"
	 "Content-Length: 2\r\n\r\nhi",
	 SK_HTTP_METHOD_POST, "/v1/seckill/1", 13, 11, true, false, false, 2, "shop.example:8080",
	 NULL, NULL, 2, "hi"},
	/* scheme in any case, https, query, escapes */
	{"GET HtTpS://A.example/v1/orders/5?x=%2F&y HTTP/1.1\r\nHost: A.example\r\n\r\n",
	 SK_HTTP_METHOD_GET, "/v1/orders/5?x=%2F&y", 12, 11, true, false, false, 0, "A.example",
	 NULL, NULL, 1, NULL},
	/* empty path means "/"; Host field after the target's authority is ignored */
	{"GET http://h HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", SK_HTTP_METHOD_GET, "/", 1, 11, true,
	 false, false, 0, "h", NULL, NULL, 1, NULL},
	/* empty path with a query: path "/" (the query has no "/" to hang on) */
	{"HEAD http://h:80?x=1 HTTP/1.0\r\n\r\n", SK_HTTP_METHOD_HEAD, "/", 1, 10, false, false,
	 false, 0, "h:80", NULL, NULL, 0, NULL},
	/* IP-literal authority; HTTP/1.0 needs no Host field */
	{"GET http://[::1]:80/healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	 SK_HTTP_METHOD_GET, "/healthz", 8, 10, true, true, false, 0, "[::1]:80", NULL, NULL, 1,
	 NULL},
	/* a path that looks like a scheme stays origin-form */
	{"GET /http://a/b HTTP/1.1\r\nHost: a\r\n\r\n", SK_HTTP_METHOD_GET, "/http://a/b", 11, 11,
	 true, false, false, 0, "a", NULL, NULL, 1, NULL},
};

static void
check_valid(const struct valid_case *v, const uint8_t *buf, const struct sk_http_request *req)
{
	size_t len = strlen(v->raw);

	ck_assert_uint_eq(req->method, v->method);
	field_eq(req->target, req->target_len, v->target);
	ck_assert_uint_eq(req->path_len, v->path_len);
	ck_assert_uint_eq(req->version, v->version);
	ck_assert_int_eq(req->keep_alive, v->keep_alive);
	ck_assert_int_eq(req->keep_alive_header, v->ka_header);
	ck_assert_int_eq(req->expect_continue, v->expect);
	ck_assert_uint_eq(req->body_len, v->body_len);
	field_eq(req->host, req->host_len, v->host);
	field_eq(req->authorization, req->authorization_len, v->auth);
	field_eq(req->user_id, req->user_id_len, v->uid);
	ck_assert_uint_eq(req->nfields, v->nfields);
	ck_assert_uint_eq(req->len, len);
	ck_assert_uint_eq(req->head_len + req->body_len, len);
	ck_assert_ptr_eq(req->body, buf + req->head_len);
	if (v->body != NULL)
		ck_assert(memcmp(req->body, v->body, v->body_len) == 0);
	/* pointers stay inside the request */
	ck_assert(req->target >= (const char *)buf &&
		  req->target + req->target_len <= (const char *)buf + req->head_len);
}

START_TEST(test_valid_oneshot)
{
	const struct valid_case *v = &valid[_i];
	size_t len = strlen(v->raw);
	const uint8_t *buf = at_guard(v->raw, len);
	struct sk_http_request req;

	ck_assert_int_eq(parse_once(buf, len, &req), SK_HTTP_DONE);
	check_valid(v, buf, &req);
}
END_TEST

/* Every truncated prefix is AGAIN before the head ends, HEAD after it. */
START_TEST(test_valid_prefixes)
{
	const struct valid_case *v = &valid[_i];
	size_t len = strlen(v->raw);
	struct sk_http_request full, req;

	ck_assert_int_eq(parse_once(v->raw, len, &full), SK_HTTP_DONE);
	for (size_t k = 0; k < len; k++) {
		const uint8_t *buf = at_guard(v->raw, k);
		enum sk_http_result r = parse_once(buf, k, &req);

		if (k < full.head_len) {
			ck_assert_msg(r == SK_HTTP_AGAIN, "case %d prefix %zu: %s", _i, k,
				      sk_http_result_name(r));
		} else {
			ck_assert_msg(r == SK_HTTP_HEAD, "case %d prefix %zu: %s", _i, k,
				      sk_http_result_name(r));
			ck_assert_ptr_null(req.body);
		}
	}
}
END_TEST

/* Two pieces at every split point give the one-shot result; so does byte by byte. */
START_TEST(test_valid_splits)
{
	const struct valid_case *v = &valid[_i];
	size_t len = strlen(v->raw);
	const uint8_t *buf = at_guard(v->raw, len);
	struct sk_http_request full, req;

	ck_assert_int_eq(parse_once(buf, len, &full), SK_HTTP_DONE);
	for (size_t k = 0; k <= len; k++) {
		struct sk_http_parser p;
		enum sk_http_result r;

		sk_http_parser_init(&p, NULL);
		r = sk_http_parse(&p, buf, k, &req);
		if (k < len)
			ck_assert(r == SK_HTTP_AGAIN || r == SK_HTTP_HEAD);
		if (r != SK_HTTP_DONE)
			r = sk_http_parse(&p, buf, len, &req);
		ck_assert_int_eq(r, SK_HTTP_DONE);
		req_eq(&req, buf, &full, buf);
		/* sticky: a further call returns DONE again with the same request */
		ck_assert_int_eq(sk_http_parse(&p, buf, len, &req), SK_HTTP_DONE);
		req_eq(&req, buf, &full, buf);
	}
	ck_assert_int_eq(parse_bytewise(buf, len, &req), SK_HTTP_DONE);
	req_eq(&req, buf, &full, buf);
	check_valid(v, buf, &req);
}
END_TEST

/*
 * The net stack may move the buffer between calls: the parser keeps offsets
 * only, so a request started in one buffer finishes in another.
 */
START_TEST(test_valid_moved_buffer)
{
	const struct valid_case *v = &valid[_i];
	size_t len = strlen(v->raw);
	uint8_t *a = malloc(len + 1), *b = malloc(len + 1);
	struct sk_http_request req;
	struct sk_http_parser p;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	memcpy(a, v->raw, len);
	memcpy(b, v->raw, len);
	sk_http_parser_init(&p, NULL);
	ck_assert_int_eq(sk_http_parse(&p, a, len / 2, &req), SK_HTTP_AGAIN);
	memset(a, 'Z', len); /* the old copy is gone */
	ck_assert_int_eq(sk_http_parse(&p, b, len, &req), SK_HTTP_DONE);
	check_valid(v, b, &req);
	free(a);
	free(b);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Malformed and refused requests                                            */
/* ------------------------------------------------------------------------ */

struct bad_case {
	const char *raw;
	enum sk_http_result want;
};

#define H "Host: a\r\n"

static const struct bad_case bad[] = {
	/* request line */
	{"GET  / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET\t/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{" GET / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{"\rGET / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET /\r\n\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET / \r\n\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET / http/1.1\r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET / HTTP/1.10\r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET / HTTP/11\r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET / HTTP/1.1 \r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET / HTTP/1.1\rX" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET / HTTP/1.1\n\r" H, SK_HTTP_E_HEADER},
	{"G(T / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_REQUEST_LINE},
	/* methods */
	{"get / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD_UNKNOWN},
	{"FOO / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD_UNKNOWN},
	{"POSTED / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD_UNKNOWN},
	{"ABCDEFGHIJKLMNOPQRSTUVWXYZ / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD_UNKNOWN},
	{"PUT /v1/seckill/1 HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD},
	{"DELETE / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD},
	{"PATCH / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD},
	{"OPTIONS * HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD},
	{"TRACE / HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD},
	{"CONNECT a:443 HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD},
	/* targets: origin-form and absolute-form only */
	{"GET * HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET a:80 HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET h:80 HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET ftp://a/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET httpx://a/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http:/a/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET https:a/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http:// HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http:///a HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://?a HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://:80/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://user@a/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://user:pw@a/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://a#f HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://a{b}/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://a/b#f HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://a/b%zz HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET http://a\r\n\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET http://a/\r\n\r\n", SK_HTTP_E_REQUEST_LINE},
	{"GET http://a HTTP/2.0\r\n" H "\r\n", SK_HTTP_E_VERSION},
	{"OPTIONS http://a/ HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_METHOD},
	{"GET /a#f HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET /a\"b HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET /a|b HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET /a{b} HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET /caf\xc3\xa9 HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET /a%zz HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET /a%2 HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	{"GET /a% HTTP/1.1\r\n" H "\r\n", SK_HTTP_E_TARGET},
	/* versions */
	{"GET / HTTP/2.0\r\n" H "\r\n", SK_HTTP_E_VERSION},
	{"GET / HTTP/0.9\r\n" H "\r\n", SK_HTTP_E_VERSION},
	{"GET / HTTP/3.0\n\n", SK_HTTP_E_VERSION},
	/* field syntax */
	{"GET / HTTP/1.1\r\nHost : a\r\n\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\n" H "X-A: b\r\n  folded\r\n\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\n" H "X-A: b\r\n\tfolded\r\n\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\n " H "\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\n: empty-name\r\n" H "\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\nNoColon\r\n" H "\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\nX(A): b\r\n" H "\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\nX-A: b\rc\r\n" H "\r\n", SK_HTTP_E_HEADER},
	{"GET / HTTP/1.1\r\n" H "\r\r\n", SK_HTTP_E_HEADER},
	/* Host */
	{"GET / HTTP/1.1\r\n\r\n", SK_HTTP_E_HOST},
	{"GET / HTTP/1.1\r\nX-A: b\r\n\r\n", SK_HTTP_E_HOST},
	{"GET / HTTP/1.1\r\n" H H "\r\n", SK_HTTP_E_HOST},
	{"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", SK_HTTP_E_HOST},
	{"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", SK_HTTP_E_HOST},
	/* absolute-form: Host is still required and checked (RFC 9112 3.2) */
	{"GET http://a/ HTTP/1.1\r\n\r\n", SK_HTTP_E_HOST},
	{"GET http://a/ HTTP/1.1\r\n" H H "\r\n", SK_HTTP_E_HOST},
	{"GET http://a/ HTTP/1.1\r\nHost: a b\r\n\r\n", SK_HTTP_E_HOST},
	/* duplicates of the identity fields */
	{"GET / HTTP/1.1\r\n" H "Authorization: a\r\nauthorization: b\r\n\r\n",
	 SK_HTTP_E_DUPLICATE},
	{"GET / HTTP/1.1\r\n" H "X-User-Id: 1\r\nX-User-Id: 1\r\n\r\n", SK_HTTP_E_DUPLICATE},
	/* Content-Length */
	{"POST / HTTP/1.1\r\n" H "Content-Length: abc\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length: -1\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length: +1\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length: 1 1\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length: 1,1\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length: 0x10\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length:\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length: 1\r\nContent-Length: 1\r\n\r\n",
	 SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length: 1025\r\n\r\n", SK_HTTP_E_BODY_TOO_LARGE},
	{"POST / HTTP/1.1\r\n" H "Content-Length: 4294967296\r\n\r\n", SK_HTTP_E_BODY_TOO_LARGE},
	{"POST / HTTP/1.1\r\n" H "Content-Length: 99999999999999999999999999\r\n\r\n",
	 SK_HTTP_E_BODY_TOO_LARGE},
	/* Transfer-Encoding */
	{"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	 SK_HTTP_E_LENGTH_REQUIRED},
	{"POST / HTTP/1.1\r\n" H "Transfer-Encoding: gzip, CHUNKED\r\n\r\n",
	 SK_HTTP_E_LENGTH_REQUIRED},
	{"POST / HTTP/1.1\r\n" H "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
	 SK_HTTP_E_LENGTH_REQUIRED},
	{"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked, gzip\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Transfer-Encoding: gzip\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Transfer-Encoding:\r\n\r\n", SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
	 SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.1\r\n" H "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	 SK_HTTP_E_FRAMING},
	{"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", SK_HTTP_E_FRAMING},
};

START_TEST(test_bad)
{
	const struct bad_case *b = &bad[_i];
	size_t len = strlen(b->raw);
	const uint8_t *buf = at_guard(b->raw, len);
	struct sk_http_request req;
	enum sk_http_result r;

	r = parse_once(buf, len, &req);
	ck_assert_msg(r == b->want, "case %d: got %s want %s", _i, sk_http_result_name(r),
		      sk_http_result_name(b->want));
	ck_assert(sk_http_result_is_error(r));
	ck_assert_int_eq(parse_bytewise(buf, len, &req), b->want);
	/* a prefix is either not far enough yet, or already the same error */
	for (size_t k = 0; k < len; k++) {
		const uint8_t *pb = at_guard(b->raw, k);

		r = parse_once(pb, k, &req);
		ck_assert_msg(r == SK_HTTP_AGAIN || r == b->want, "case %d prefix %zu: %s", _i, k,
			      sk_http_result_name(r));
	}
}
END_TEST

/* Errors are sticky: more bytes do not revive a failed parser. */
START_TEST(test_error_sticky)
{
	static const char raw[] = "GET / HTTP/9.9\r\nHost: a\r\n\r\n";
	struct sk_http_parser p;
	struct sk_http_request req;

	sk_http_parser_init(&p, NULL);
	ck_assert_int_eq(sk_http_parse(&p, raw, 16, &req), SK_HTTP_E_VERSION);
	ck_assert_int_eq(sk_http_parse(&p, raw, sizeof(raw) - 1, &req), SK_HTTP_E_VERSION);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(sk_http_parse(&p, "GET / HTTP/1.0\r\n\r\n", 18, &req), SK_HTTP_DONE);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Control bytes                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Each template has one '@' where the control byte goes. want_ctl is the
 * result for every control byte, with the exceptions listed.
 */
struct ctl_case {
	const char *tmpl;
	enum sk_http_result want;
	enum sk_http_result want_crlf; /* for CR and LF */
	enum sk_http_result want_tab;  /* for HTAB */
};

static const struct ctl_case ctl[] = {
	/* method */
	{"G@ET / HTTP/1.1\r\nHost: a\r\n\r\n", SK_HTTP_E_REQUEST_LINE, SK_HTTP_E_REQUEST_LINE,
	 SK_HTTP_E_REQUEST_LINE},
	/* target */
	{"GET /v1/@x HTTP/1.1\r\nHost: a\r\n\r\n", SK_HTTP_E_TARGET, SK_HTTP_E_REQUEST_LINE,
	 SK_HTTP_E_TARGET},
	/* absolute-form: scheme, authority, path */
	{"GET ht@p://a/ HTTP/1.1\r\nHost: a\r\n\r\n", SK_HTTP_E_TARGET, SK_HTTP_E_REQUEST_LINE,
	 SK_HTTP_E_TARGET},
	{"GET http://a@b/ HTTP/1.1\r\nHost: a\r\n\r\n", SK_HTTP_E_TARGET, SK_HTTP_E_REQUEST_LINE,
	 SK_HTTP_E_TARGET},
	{"GET http://a/v1/@x HTTP/1.1\r\nHost: a\r\n\r\n", SK_HTTP_E_TARGET, SK_HTTP_E_REQUEST_LINE,
	 SK_HTTP_E_TARGET},
	/* version */
	{"GET / HTTP/1@1\r\nHost: a\r\n\r\n", SK_HTTP_E_REQUEST_LINE, SK_HTTP_E_REQUEST_LINE,
	 SK_HTTP_E_REQUEST_LINE},
	/* header name */
	{"GET / HTTP/1.1\r\nHost: a\r\nX-F@oo: b\r\n\r\n", SK_HTTP_E_HEADER, SK_HTTP_E_HEADER,
	 SK_HTTP_E_HEADER},
	/* header value: HTAB is allowed inside a value */
	{"GET / HTTP/1.1\r\nHost: a\r\nX-Foo: b@c\r\n\r\n", SK_HTTP_E_HEADER, SK_HTTP_E_HEADER,
	 SK_HTTP_DONE},
	/* value of a field the parser interprets */
	{"GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer @x\r\n\r\n", SK_HTTP_E_HEADER,
	 SK_HTTP_E_HEADER, SK_HTTP_DONE},
	/* Host value: HTAB inside a host name is not a valid Host */
	{"GET / HTTP/1.1\r\nHost: a@b\r\n\r\n", SK_HTTP_E_HEADER, SK_HTTP_E_HEADER, SK_HTTP_E_HOST},
};

START_TEST(test_control_bytes)
{
	const struct ctl_case *t = &ctl[_i];
	size_t len = strlen(t->tmpl);
	const char *at = strchr(t->tmpl, '@');
	char raw[256];

	ck_assert_ptr_nonnull(at);
	ck_assert_uint_lt(len, sizeof(raw));
	for (unsigned b = 0; b <= 0x7f; b++) {
		struct sk_http_request req;
		enum sk_http_result want, r;
		const uint8_t *buf;

		if (b >= 0x20 && b != 0x7f)
			continue;
		memcpy(raw, t->tmpl, len);
		raw[at - t->tmpl] = (char)b;
		want = (b == '\r' || b == '\n') ? t->want_crlf : b == '\t' ? t->want_tab : t->want;
		buf = at_guard(raw, len);
		r = parse_once(buf, len, &req);
		ck_assert_msg(r == want, "case %d byte 0x%02x: got %s want %s", _i, b,
			      sk_http_result_name(r), sk_http_result_name(want));
		ck_assert_int_eq(parse_bytewise(buf, len, &req), want);
	}
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Limits                                                                    */
/* ------------------------------------------------------------------------ */

/* make_head - a GET whose head is exactly @head_len bytes (one padding field). */
static size_t
make_head(char *out, size_t head_len)
{
	static const char pre[] = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: ";
	size_t n = sizeof(pre) - 1;

	ck_assert_uint_ge(head_len, n + 4);
	memcpy(out, pre, n);
	memset(out + n, 'p', head_len - n - 4);
	memcpy(out + head_len - 4, "\r\n\r\n", 4);
	return head_len;
}

START_TEST(test_head_limit)
{
	static char raw[SK_HTTP_HEAD_MAX_DEFAULT + 64];
	struct sk_http_request req;
	const uint8_t *buf;
	size_t len;

	/* exactly at the limit: fine */
	len = make_head(raw, SK_HTTP_HEAD_MAX_DEFAULT);
	buf = at_guard(raw, len);
	ck_assert_int_eq(parse_once(buf, len, &req), SK_HTTP_DONE);
	ck_assert_uint_eq(req.head_len, SK_HTTP_HEAD_MAX_DEFAULT);
	ck_assert_int_eq(parse_bytewise(buf, len, &req), SK_HTTP_DONE);

	/* one byte over: 431 as soon as head_max bytes are in, not before */
	len = make_head(raw, SK_HTTP_HEAD_MAX_DEFAULT + 1);
	buf = at_guard(raw, len);
	ck_assert_int_eq(parse_once(buf, len, &req), SK_HTTP_E_HEAD_TOO_LARGE);
	ck_assert_int_eq(parse_once(buf, SK_HTTP_HEAD_MAX_DEFAULT - 1, &req), SK_HTTP_AGAIN);
	ck_assert_int_eq(parse_once(buf, SK_HTTP_HEAD_MAX_DEFAULT, &req), SK_HTTP_E_HEAD_TOO_LARGE);
	ck_assert_int_eq(parse_bytewise(buf, len, &req), SK_HTTP_E_HEAD_TOO_LARGE);

	/* a flood of empty lines counts too */
	memset(raw, '\n', sizeof(raw));
	buf = at_guard(raw, sizeof(raw));
	ck_assert_int_eq(parse_once(buf, sizeof(raw), &req), SK_HTTP_E_HEAD_TOO_LARGE);
}
END_TEST

START_TEST(test_fields_limit)
{
	static char raw[4096];
	struct sk_http_request req;
	size_t n;

	/* Host + 63 fields = 64: fine; one more: 431 */
	for (int extra = 63; extra <= 64; extra++) {
		n = (size_t)snprintf(raw, sizeof(raw), "GET / HTTP/1.1\r\nHost: a\r\n");
		for (int i = 0; i < extra; i++)
			n += (size_t)snprintf(raw + n, sizeof(raw) - n, "X-%d: v\r\n", i);
		n += (size_t)snprintf(raw + n, sizeof(raw) - n, "\r\n");
		const uint8_t *buf = at_guard(raw, n);
		enum sk_http_result r = parse_once(buf, n, &req);
		if (extra == 63) {
			ck_assert_int_eq(r, SK_HTTP_DONE);
			ck_assert_uint_eq(req.nfields, 64);
		} else {
			ck_assert_int_eq(r, SK_HTTP_E_HEAD_TOO_LARGE);
		}
	}
}
END_TEST

START_TEST(test_target_limit)
{
	static char raw[SK_HTTP_TARGET_MAX_DEFAULT + 64];
	struct sk_http_request req;

	for (size_t tlen = SK_HTTP_TARGET_MAX_DEFAULT; tlen <= SK_HTTP_TARGET_MAX_DEFAULT + 1;
	     tlen++) {
		size_t n = 0;
		memcpy(raw, "GET ", 4);
		n = 4;
		memset(raw + n, '/', tlen);
		n += tlen;
		static const char tail[] = " HTTP/1.1\r\nHost: a\r\n\r\n";
		memcpy(raw + n, tail, sizeof(tail) - 1);
		n += sizeof(tail) - 1;
		const uint8_t *buf = at_guard(raw, n);
		enum sk_http_result r = parse_once(buf, n, &req);
		if (tlen == SK_HTTP_TARGET_MAX_DEFAULT) {
			ck_assert_int_eq(r, SK_HTTP_DONE);
			ck_assert_uint_eq(req.target_len, tlen);
		} else {
			ck_assert_int_eq(r, SK_HTTP_E_TARGET_TOO_LONG);
			ck_assert_int_eq(parse_bytewise(buf, n, &req), SK_HTTP_E_TARGET_TOO_LONG);
		}
	}
}
END_TEST

/* The limit counts the whole absolute-form target, scheme and authority included. */
START_TEST(test_target_limit_absolute)
{
	static char raw[SK_HTTP_TARGET_MAX_DEFAULT + 64];
	static const char scheme[] = "http://a";
	static const char tail[] = " HTTP/1.1\r\nHost: a\r\n\r\n";
	struct sk_http_request req;

	for (size_t tlen = SK_HTTP_TARGET_MAX_DEFAULT; tlen <= SK_HTTP_TARGET_MAX_DEFAULT + 1;
	     tlen++) {
		size_t n = 0, plen = tlen - (sizeof(scheme) - 1);

		memcpy(raw, "GET ", 4);
		n = 4;
		memcpy(raw + n, scheme, sizeof(scheme) - 1);
		n += sizeof(scheme) - 1;
		memset(raw + n, '/', plen);
		n += plen;
		memcpy(raw + n, tail, sizeof(tail) - 1);
		n += sizeof(tail) - 1;
		const uint8_t *buf = at_guard(raw, n);
		enum sk_http_result r = parse_once(buf, n, &req);
		if (tlen == SK_HTTP_TARGET_MAX_DEFAULT) {
			ck_assert_int_eq(r, SK_HTTP_DONE);
			ck_assert_uint_eq(req.target_len, plen);
			ck_assert_uint_eq(req.path_len, plen);
		} else {
			ck_assert_int_eq(r, SK_HTTP_E_TARGET_TOO_LONG);
			ck_assert_int_eq(parse_bytewise(buf, n, &req), SK_HTTP_E_TARGET_TOO_LONG);
		}
	}
}
END_TEST

START_TEST(test_body_limit)
{
	static char raw[2048];
	struct sk_http_request req;
	int n;

	n = snprintf(raw, sizeof(raw),
		     "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1024\r\n\r\n");
	memset(raw + n, 'b', 1024);
	const uint8_t *buf = at_guard(raw, (size_t)n + 1024);
	ck_assert_int_eq(parse_once(buf, (size_t)n + 1024, &req), SK_HTTP_DONE);
	ck_assert_uint_eq(req.body_len, 1024);
	/* 413 is known at the end of the head, before any body byte arrives */
	n = snprintf(raw, sizeof(raw),
		     "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1025\r\n\r\n");
	buf = at_guard(raw, (size_t)n);
	ck_assert_int_eq(parse_once(buf, (size_t)n, &req), SK_HTTP_E_BODY_TOO_LARGE);
}
END_TEST

struct limits_case {
	struct sk_http_limits l;
	int rc;
};

static const struct limits_case limits_cases[] = {
	{{0, 0, 0, 0}, 0},
	{{128, 100, 0, 4}, 0},
	{{65535, 65519, 1u << 30, 1024}, 0},
	{{63, 0, 0, 0}, -EINVAL},
	{{65536, 0, 0, 0}, -EINVAL},
	{{128, 113, 0, 0}, -EINVAL},
	{{0, 0, (1u << 30) + 1, 0}, -EINVAL},
	{{0, 0, 0, 1025}, -EINVAL},
};

START_TEST(test_limits_init)
{
	const struct limits_case *c = &limits_cases[_i];
	struct sk_http_parser p;

	ck_assert_int_eq(sk_http_parser_init(&p, &c->l), c->rc);
	if (c->rc != 0 || c->l.head_max == 0) {
		ck_assert_uint_eq(p.head_max, SK_HTTP_HEAD_MAX_DEFAULT);
	} else {
		ck_assert_uint_eq(p.head_max, c->l.head_max);
	}
	/* the parser is usable in every case */
	ck_assert_int_eq(sk_http_parse(&p, "GET / HTTP/1.0\r\n\r\n", 18, NULL), SK_HTTP_DONE);
}
END_TEST

/* Small custom limits are enforced exactly. */
#define PARSE_LIT(p, lit, req) sk_http_parse((p), (lit), sizeof(lit) - 1, (req))

START_TEST(test_custom_limits)
{
	struct sk_http_limits l = {.head_max = 64, .target_max = 8, .body_max = 4, .fields_max = 2};
	struct sk_http_parser p;
	struct sk_http_request req;

	ck_assert_int_eq(sk_http_parser_init(&p, &l), 0);
	ck_assert_int_eq(PARSE_LIT(&p, "GET /1234567 HTTP/1.0\r\n\r\n", &req), SK_HTTP_DONE);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "GET /12345678 HTTP/1.0\r\n\r\n", &req),
			 SK_HTTP_E_TARGET_TOO_LONG);
	sk_http_parser_reset(&p);
	/* absolute-form: 8 bytes in the scheme, the authority or the path */
	ck_assert_int_eq(PARSE_LIT(&p, "GET http://a HTTP/1.0\r\n\r\n", &req), SK_HTTP_DONE);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "GET http://ab HTTP/1.0\r\n\r\n", &req),
			 SK_HTTP_E_TARGET_TOO_LONG);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "GET http://a/ HTTP/1.0\r\n\r\n", &req),
			 SK_HTTP_E_TARGET_TOO_LONG);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "GET http://a? HTTP/1.0\r\n\r\n", &req),
			 SK_HTTP_E_TARGET_TOO_LONG);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "GET https://a HTTP/1.0\r\n\r\n", &req),
			 SK_HTTP_E_TARGET_TOO_LONG);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "POST / HTTP/1.0\r\nContent-Length: 4\r\n\r\nbody", &req),
			 SK_HTTP_DONE);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n", &req),
			 SK_HTTP_E_BODY_TOO_LARGE);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "GET / HTTP/1.0\r\nA: 1\r\nB: 2\r\n\r\n", &req),
			 SK_HTTP_DONE);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(PARSE_LIT(&p, "GET / HTTP/1.0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", &req),
			 SK_HTTP_E_HEAD_TOO_LARGE);
	sk_http_parser_reset(&p);
	ck_assert_int_eq(
		PARSE_LIT(&p,
			  "GET / HTTP/1.0\r\nA: 01234567890123456789012345678901234567890123456789"
			  "\r\n\r\n",
			  &req),
		SK_HTTP_E_HEAD_TOO_LARGE);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Pipelining, HEAD result, body                                             */
/* ------------------------------------------------------------------------ */

/* Every ordered pair of valid requests in one buffer parses as two requests. */
START_TEST(test_pipelined_pairs)
{
	const struct valid_case *a = &valid[_i];
	size_t alen = strlen(a->raw);
	static uint8_t raw[8192];

	for (size_t j = 0; j < sizeof(valid) / sizeof(valid[0]); j++) {
		const struct valid_case *b = &valid[j];
		size_t blen = strlen(b->raw);
		struct sk_http_parser p;
		struct sk_http_request req;

		memcpy(raw, a->raw, alen);
		memcpy(raw + alen, b->raw, blen);
		const uint8_t *buf = at_guard(raw, alen + blen);

		sk_http_parser_init(&p, NULL);
		ck_assert_int_eq(sk_http_parse(&p, buf, alen + blen, &req), SK_HTTP_DONE);
		ck_assert_uint_eq(req.len, alen);
		check_valid(a, buf, &req);
		sk_http_parser_reset(&p);
		ck_assert_int_eq(sk_http_parse(&p, buf + alen, blen, &req), SK_HTTP_DONE);
		ck_assert_uint_eq(req.len, blen);
		check_valid(b, buf + alen, &req);

		/* the same stream arriving byte by byte, consumed as a net app would */
		size_t used = 0, done = 0;
		sk_http_parser_init(&p, NULL);
		for (size_t k = 1; k <= alen + blen; k++) {
			enum sk_http_result r;
			while ((r = sk_http_parse(&p, buf + used, k - used, &req)) ==
			       SK_HTTP_DONE) {
				check_valid(done == 0 ? a : b, buf + used, &req);
				used += req.len;
				done++;
				sk_http_parser_reset(&p);
			}
			ck_assert(r == SK_HTTP_AGAIN || r == SK_HTTP_HEAD);
		}
		ck_assert_uint_eq(done, 2);
		ck_assert_uint_eq(used, alen + blen);
	}
}
END_TEST

/* The bytes after a request are never looked at, even garbage. */
START_TEST(test_trailing_garbage)
{
	static const char raw[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n\x01\x02garbage";
	struct sk_http_request req;
	const uint8_t *buf = at_guard(raw, sizeof(raw) - 1);

	ck_assert_int_eq(parse_once(buf, sizeof(raw) - 1, &req), SK_HTTP_DONE);
	ck_assert_uint_eq(req.len, 27);
}
END_TEST

START_TEST(test_expect_continue_flow)
{
	static const char raw[] = "POST /v1/seckill/1 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n"
				  "Expect: 100-continue\r\n\r\nbody";
	size_t len = sizeof(raw) - 1, head = len - 4;
	struct sk_http_parser p;
	struct sk_http_request req;

	sk_http_parser_init(&p, NULL);
	ck_assert_int_eq(sk_http_parse(&p, raw, head - 1, &req), SK_HTTP_AGAIN);
	memset(&req, 0, sizeof(req));
	ck_assert_int_eq(sk_http_parse(&p, raw, head, &req), SK_HTTP_HEAD);
	ck_assert(req.expect_continue);
	ck_assert_uint_eq(req.head_len, head);
	ck_assert_uint_eq(req.body_len, 4);
	ck_assert_ptr_null(req.body);
	/* HEAD is reported once */
	ck_assert_int_eq(sk_http_parse(&p, raw, head, &req), SK_HTTP_AGAIN);
	ck_assert_int_eq(sk_http_parse(&p, raw, head + 3, &req), SK_HTTP_AGAIN);
	ck_assert_int_eq(sk_http_parse(&p, raw, len, &req), SK_HTTP_DONE);
	ck_assert_ptr_eq(req.body, (const uint8_t *)raw + head);
	ck_assert(memcmp(req.body, "body", 4) == 0);
	ck_assert_uint_eq(req.len, len);
}
END_TEST

START_TEST(test_results_table)
{
	static const int want[SK_HTTP_RESULT_MAX] = {
		[SK_HTTP_DONE] = 200,
		[SK_HTTP_AGAIN] = 200,
		[SK_HTTP_HEAD] = 200,
		[SK_HTTP_E_REQUEST_LINE] = 400,
		[SK_HTTP_E_TARGET] = 400,
		[SK_HTTP_E_HEADER] = 400,
		[SK_HTTP_E_FRAMING] = 400,
		[SK_HTTP_E_HOST] = 400,
		[SK_HTTP_E_DUPLICATE] = 400,
		[SK_HTTP_E_METHOD] = 405,
		[SK_HTTP_E_LENGTH_REQUIRED] = 411,
		[SK_HTTP_E_BODY_TOO_LARGE] = 413,
		[SK_HTTP_E_TARGET_TOO_LONG] = 414,
		[SK_HTTP_E_HEAD_TOO_LARGE] = 431,
		[SK_HTTP_E_METHOD_UNKNOWN] = 501,
		[SK_HTTP_E_VERSION] = 505,
	};

	for (int r = 0; r < SK_HTTP_RESULT_MAX; r++) {
		ck_assert_int_eq(sk_http_result_status((enum sk_http_result)r), want[r]);
		ck_assert_str_ne(sk_http_result_name((enum sk_http_result)r), "unknown");
		ck_assert_int_eq(sk_http_result_is_error((enum sk_http_result)r),
				 r >= SK_HTTP_E_FIRST);
	}
	ck_assert_int_eq(sk_http_result_status(SK_HTTP_RESULT_MAX), 500);
	ck_assert_str_eq(sk_http_result_name(SK_HTTP_RESULT_MAX), "unknown");
	ck_assert_uint_le(sizeof(struct sk_http_parser), 128);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Random splits and mutations (fixed seed)                                  */
/* ------------------------------------------------------------------------ */

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Mutate valid requests (flip, insert, delete bytes), then check that
 * random-sized pieces give the same final result and request as one shot.
 */
START_TEST(test_random_mutations)
{
	static const uint8_t alphabet[] = " \t\r\n:/%?,;0123456789aZ\x7f\x80\x00";
	uint64_t seed = 0x5eed5eedULL;
	uint8_t raw[512];

	for (int iter = 0; iter < 20000; iter++) {
		const struct valid_case *v =
			&valid[xorshift(&seed) % (sizeof(valid) / sizeof(valid[0]))];
		size_t len = strlen(v->raw);
		memcpy(raw, v->raw, len);
		int nmut = 1 + (int)(xorshift(&seed) % 3);
		for (int m = 0; m < nmut && len > 1; m++) {
			size_t at = xorshift(&seed) % len;
			uint8_t c = alphabet[xorshift(&seed) % (sizeof(alphabet) - 1)];
			switch (xorshift(&seed) % 3) {
			case 0:
				raw[at] = c;
				break;
			case 1:
				if (len + 1 < sizeof(raw)) {
					memmove(raw + at + 1, raw + at, len - at);
					raw[at] = c;
					len++;
				}
				break;
			default:
				memmove(raw + at, raw + at + 1, len - at - 1);
				len--;
				break;
			}
		}
		const uint8_t *buf = at_guard(raw, len);
		struct sk_http_request one, inc;
		enum sk_http_result r1 = parse_once(buf, len, &one), r2 = SK_HTTP_AGAIN;
		struct sk_http_parser p;

		sk_http_parser_init(&p, NULL);
		size_t k = 0;
		while (k < len) {
			k += 1 + xorshift(&seed) % 16;
			if (k > len)
				k = len;
			r2 = sk_http_parse(&p, buf, k, &inc);
			if (r2 != SK_HTTP_AGAIN && r2 != SK_HTTP_HEAD)
				break;
		}
		/* an incomplete body reads HEAD once, then AGAIN: both mean "not yet" */
		if (r1 == SK_HTTP_HEAD)
			r1 = SK_HTTP_AGAIN;
		if (r2 == SK_HTTP_HEAD)
			r2 = SK_HTTP_AGAIN;
		ck_assert_msg(r1 == r2, "iter %d: %s vs %s", iter, sk_http_result_name(r1),
			      sk_http_result_name(r2));
		if (r1 == SK_HTTP_DONE) {
			req_eq(&one, buf, &inc, buf);
			ck_assert_uint_le(one.len, len);
		}
	}
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *
http_parse_suite(void)
{
	Suite *s = suite_create("http_parse");
	TCase *tc = tcase_create("parse");
	int nvalid = (int)(sizeof(valid) / sizeof(valid[0]));

	tcase_add_checked_fixture(tc, guard_setup, guard_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test_raise_signal(tc, test_guard_faults, SIGSEGV);
	tcase_add_loop_test(tc, test_valid_oneshot, 0, nvalid);
	tcase_add_loop_test(tc, test_valid_prefixes, 0, nvalid);
	tcase_add_loop_test(tc, test_valid_splits, 0, nvalid);
	tcase_add_loop_test(tc, test_valid_moved_buffer, 0, nvalid);
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_error_sticky);
	tcase_add_loop_test(tc, test_control_bytes, 0, (int)(sizeof(ctl) / sizeof(ctl[0])));
	tcase_add_test(tc, test_head_limit);
	tcase_add_test(tc, test_fields_limit);
	tcase_add_test(tc, test_target_limit);
	tcase_add_test(tc, test_target_limit_absolute);
	tcase_add_test(tc, test_body_limit);
	tcase_add_loop_test(tc, test_limits_init, 0,
			    (int)(sizeof(limits_cases) / sizeof(limits_cases[0])));
	tcase_add_test(tc, test_custom_limits);
	tcase_add_loop_test(tc, test_pipelined_pairs, 0, nvalid);
	tcase_add_test(tc, test_trailing_garbage);
	tcase_add_test(tc, test_expect_continue_flow);
	tcase_add_test(tc, test_results_table);
	tcase_add_test(tc, test_random_mutations);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(http_parse_suite)
