/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the cart body reader (http/sk_cart_body.h): every valid
 * shape, every refusal with its line and detail, whitespace, duplicates,
 * qty 0, 17 lines, numbers out of range, the Content-Type rule; every
 * input ends right before a PROT_NONE page, so an overread crashes. And a
 * whole cart request fed to the HTTP parser split at every byte offset
 * gives the same request, body and cart as when fed at once.
 */
#include <errno.h>
#include <stdio.h>

#include "sk_cart_body.h"
#include "sk_common.h"
#include "sk_http.h"
#include "sk_test.h"

static uint8_t *guard;

static int
parse(const char *s, struct sk_cart_body *b, struct sk_cart_error *e)
{
	size_t n = strlen(s);

	if (guard == NULL)
		guard = sk_test_guard_end(8192);
	ck_assert_uint_le(n, 8192);
	return sk_cart_body_parse(sk_test_guarded(guard, s, n), n, b, e);
}

/* ----------------------------------------------------------- valid shapes */

static const struct {
	const char *body;
	unsigned n;
	uint32_t item0, qty0, item_last, qty_last;
} good[] = {
	{"{\"lines\":[{\"item\":1,\"qty\":1}]}", 1, 1, 1, 1, 1},
	{"{\"lines\":[{\"qty\":2,\"item\":7}]}", 1, 7, 2, 7, 2},
	{" \t\r\n{ \"lines\" : [ { \"item\" : 3 , \"qty\" : 4 } , {\"item\":5,\"qty\":1000} ] }\n ",
	 2, 3, 4, 5, 1000},
	{"{\"lines\":[{\"item\":4294967295,\"qty\":1}]}", 1, 4294967295u, 1, 4294967295u, 1},
	{"{\"lines\":[{\"item\":10,\"qty\":1},{\"item\":20,\"qty\":2},{\"item\":30,\"qty\":3}]}", 3,
	 10, 1, 30, 3},
};

START_TEST(valid_shapes)
{
	struct sk_cart_body b;
	struct sk_cart_error e = {.line = 99, .detail = NULL};

	for (size_t i = 0; i < SK_ARRAY_SIZE(good); i++) {
		ck_assert_msg(parse(good[i].body, &b, &e) == 0, "refused %s: %d %s", good[i].body,
			      e.line, e.detail);
		ck_assert_uint_eq(b.n, good[i].n);
		ck_assert_uint_eq(b.lines[0].item, good[i].item0);
		ck_assert_uint_eq(b.lines[0].qty, good[i].qty0);
		ck_assert_uint_eq(b.lines[b.n - 1].item, good[i].item_last);
		ck_assert_uint_eq(b.lines[b.n - 1].qty, good[i].qty_last);
	}
	ck_assert_int_eq(e.line, 99); /* untouched on success */
}
END_TEST

/* 16 lines pass, 17 are refused at line 16. */
START_TEST(sixteen_lines_not_seventeen)
{
	char body[1024];
	struct sk_cart_body b;
	struct sk_cart_error e;

	for (unsigned n = 16; n <= 17; n++) {
		int at = snprintf(body, sizeof(body), "{\"lines\":[");
		for (unsigned i = 0; i < n; i++)
			at += snprintf(body + at, sizeof(body) - (size_t)at,
				       "%s{\"item\":%u,\"qty\":1}", i ? "," : "", 100 + i);
		snprintf(body + at, sizeof(body) - (size_t)at, "]}");
		if (n == 16) {
			ck_assert_int_eq(parse(body, &b, &e), 0);
			ck_assert_uint_eq(b.n, SK_CART_LINES_MAX);
			for (unsigned i = 0; i < n; i++)
				ck_assert_uint_eq(b.lines[i].item, 100 + i);
		} else {
			ck_assert_int_eq(parse(body, &b, &e), -EINVAL);
			ck_assert_int_eq(e.line, 16);
			ck_assert_str_eq(e.detail, "too many lines (at most 16)");
		}
	}
}
END_TEST

/* ------------------------------------------------------------- refusals */

static const struct {
	const char *body;
	int line;
	const char *detail;
} bad[] = {
	{"", -1, "unexpected end of body"},
	{"   ", -1, "unexpected end of body"},
	{"[]", -1, "body is not a JSON object"},
	{"{}", -1, "missing lines"},
	{"{\"lines\":[]}", -1, "no lines"},
	{"{\"lines\":{}}", -1, "lines is not an array"},
	{"{\"line\":[]}", -1, "unknown member"},
	{"{\"li\\u006ees\":[]}", -1, "unknown member"},
	{"{\"lines\":[{\"item\":1,\"qty\":1}],\"x\":1}", -1, "expected the end of the object"},
	{"{\"lines\":[{\"item\":1,\"qty\":1}]}x", -1, "bytes after the object"},
	{"{\"lines\":[{\"item\":1,\"qty\":1}]}{}", -1, "bytes after the object"},
	{"{\"lines\":[{\"item\":1,\"qty\":1}", -1, "unexpected end of body"},
	{"{\"lines\":[{\"item\":1,\"qty\":1} {\"item\":2,\"qty\":1}]}", -1,
	 "expected a comma or the end of lines"},
	{"{\"lines\":[{\"item\":1,\"qty\":1},]}", 1, "expected a line object"},
	{"{\"lines\":[1]}", 0, "expected a line object"},
	{"{\"lines\":[{}]}", 0, "missing item"},
	{"{\"lines\":[{\"qty\":1}]}", 0, "missing item"},
	{"{\"lines\":[{\"item\":1}]}", 0, "missing qty"},
	{"{\"lines\":[{\"item\":1,\"qty\":1,\"item\":2}]}", 0, "item given twice"},
	{"{\"lines\":[{\"item\":1,\"qty\":1,\"qty\":2}]}", 0, "qty given twice"},
	{"{\"lines\":[{\"item\":1,\"qty\":1,\"price\":2}]}", 0, "unknown member"},
	{"{\"lines\":[{\"item\":1,\"qty\":0}]}", 0, "qty out of range 1..1000"},
	{"{\"lines\":[{\"item\":1,\"qty\":1001}]}", 0, "qty out of range 1..1000"},
	{"{\"lines\":[{\"item\":0,\"qty\":1}]}", 0, "item out of range 1..4294967295"},
	{"{\"lines\":[{\"item\":4294967296,\"qty\":1}]}", 0, "item out of range 1..4294967295"},
	{"{\"lines\":[{\"item\":99999999999999999999999,\"qty\":1}]}", 0,
	 "item out of range 1..4294967295"},
	{"{\"lines\":[{\"item\":-1,\"qty\":1}]}", 0, "item is not an unsigned integer"},
	{"{\"lines\":[{\"item\":01,\"qty\":1}]}", 0, "item is not an unsigned integer"},
	{"{\"lines\":[{\"item\":1.0,\"qty\":1}]}", 0, "item is not an unsigned integer"},
	{"{\"lines\":[{\"item\":1e3,\"qty\":1}]}", 0, "item is not an unsigned integer"},
	{"{\"lines\":[{\"item\":\"1\",\"qty\":1}]}", 0, "item is not an unsigned integer"},
	{"{\"lines\":[{\"item\":null,\"qty\":1}]}", 0, "item is not an unsigned integer"},
	{"{\"lines\":[{\"item\":1,\"qty\":true}]}", 0, "qty is not an unsigned integer"},
	{"{\"lines\":[{\"item\":1,\"qty\":1}{\"item\":2}]}", -1,
	 "expected a comma or the end of lines"},
	{"{\"lines\":[{\"item\":1 \"qty\":1}]}", 0, "expected a comma or the end of the line"},
	{"{\"lines\":[{\"item\" 1,\"qty\":1}]}", 0, "expected a colon"},
	{"{\"lines\":[{item:1,\"qty\":1}]}", 0, "expected a member name"},
	{"{\"lines\":[{\"item\":1,\"qty\":1},{\"item\":2,\"qty\":1},{\"item\":1,\"qty\":3}]}", 2,
	 "duplicate item"},
	{"{\"lines\":[{\"item\":1,\"qty\":1},{\"item\":2,\"qty\":", 1, "unexpected end of body"},
	{"{\"lines\":[{\"item\":1,\"qty\":1},{\"item\":2,\"qty", 1, "unexpected end of body"},
	{"{\"lines\":[{\"item\":1,\"qty\":1},{\"item\":2,\"qty\":5", 1, "unexpected end of body"},
};

START_TEST(refusals_name_their_line)
{
	struct sk_cart_body b;
	struct sk_cart_error e;

	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		e = (struct sk_cart_error){.line = 99, .detail = NULL};
		ck_assert_msg(parse(bad[i].body, &b, &e) == -EINVAL, "accepted %s", bad[i].body);
		ck_assert_msg(e.line == bad[i].line && e.detail != NULL &&
				      strcmp(e.detail, bad[i].detail) == 0,
			      "%s: line %d \"%s\", want %d \"%s\"", bad[i].body, e.line,
			      e.detail ? e.detail : "(null)", bad[i].line, bad[i].detail);
		/* a detail goes into a JSON string as it is */
		ck_assert_ptr_null(strpbrk(e.detail, "\"\\"));
	}
	/* NULL with length 0 is an empty body */
	ck_assert_int_eq(sk_cart_body_parse(NULL, 0, &b, &e), -EINVAL);
	ck_assert_int_eq(e.line, -1);
}
END_TEST

/* Every proper prefix of a valid body is refused, never read past its end. */
START_TEST(every_prefix_refused)
{
	const char *s = good[2].body;
	size_t n = strlen(s);
	struct sk_cart_body b;
	struct sk_cart_error e;
	char cut[256];

	/* trailing whitespace aside, every proper prefix lacks something */
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
		n--;
	for (size_t k = 0; k < n; k++) {
		memcpy(cut, s, k);
		cut[k] = '\0';
		ck_assert_msg(parse(cut, &b, &e) == -EINVAL, "prefix %zu accepted", k);
	}
}
END_TEST

START_TEST(content_type)
{
	static const char *const ok[] = {"application/json", "Application/JSON",
					 "application/json; charset=utf-8",
					 "application/json ;charset=UTF-8"};
	static const char *const no[] = {"",
					 "text/plain",
					 "application/jsonx",
					 "application/json-patch+json",
					 "application/x-www-form-urlencoded",
					 "application/js"};

	for (size_t i = 0; i < SK_ARRAY_SIZE(ok); i++)
		ck_assert_msg(sk_cart_content_type_ok(ok[i], strlen(ok[i])), "%s", ok[i]);
	for (size_t i = 0; i < SK_ARRAY_SIZE(no); i++)
		ck_assert_msg(!sk_cart_content_type_ok(no[i], strlen(no[i])), "%s", no[i]);
	ck_assert(!sk_cart_content_type_ok(NULL, 0));
}
END_TEST

/* ------------------------------------------- cart body parsing at every split */

static const char cart_req[] = "POST /v1/cart HTTP/1.1\r\n"
			       "Host: shop.example\r\n"
			       "X-User-Id: 42\r\n"
			       "Content-Type: application/json; charset=utf-8\r\n"
			       "Content-Length: 69\r\n"
			       "\r\n"
			       "{\"lines\":[{\"item\":1,\"qty\":2},{\"item\":9,\"qty\":1},"
			       " {\"qty\":3,\"item\":4}]}";

static void
cart_of(const struct sk_http_request *r, struct sk_cart_body *b)
{
	struct sk_cart_error e;

	ck_assert_ptr_nonnull(r->content_type);
	ck_assert(sk_cart_content_type_ok(r->content_type, r->content_type_len));
	ck_assert_int_eq(sk_cart_body_parse(r->body, r->body_len, b, &e), 0);
}

START_TEST(cart_request_at_every_split)
{
	size_t len = sizeof(cart_req) - 1;
	struct sk_http_parser p;
	struct sk_http_request whole, part;
	struct sk_cart_body bw, bp;

	ck_assert_int_eq(sk_http_parser_init(&p, NULL), 0);
	ck_assert_int_eq(sk_http_parse(&p, cart_req, len, &whole), SK_HTTP_DONE);
	ck_assert_uint_eq(whole.len, len);
	ck_assert_uint_eq(whole.body_len, 69);
	cart_of(&whole, &bw);
	ck_assert_uint_eq(bw.n, 3);
	ck_assert_uint_eq(bw.lines[2].item, 4);
	ck_assert_uint_eq(bw.lines[2].qty, 3);

	for (size_t k = 1; k < len; k++) {
		enum sk_http_result r;

		ck_assert_int_eq(sk_http_parser_init(&p, NULL), 0);
		r = sk_http_parse(&p, cart_req, k, &part);
		ck_assert_msg(r == SK_HTTP_AGAIN || r == SK_HTTP_HEAD, "split %zu: %d", k, r);
		r = sk_http_parse(&p, cart_req, len, &part);
		ck_assert_msg(r == SK_HTTP_DONE, "split %zu: %d", k, r);
		ck_assert_uint_eq(part.len, whole.len);
		ck_assert_uint_eq(part.content_type_len, whole.content_type_len);
		ck_assert_ptr_eq(part.content_type, whole.content_type);
		cart_of(&part, &bp);
		ck_assert_mem_eq(&bp, &bw, sizeof(bw.n) + bw.n * sizeof(bw.lines[0]));
	}
}
END_TEST

/* Content-Type twice is refused like any identity field twice. */
START_TEST(content_type_twice)
{
	static const char req[] = "POST /v1/cart HTTP/1.1\r\nHost: h\r\n"
				  "Content-Type: application/json\r\n"
				  "content-type: text/plain\r\n"
				  "Content-Length: 0\r\n\r\n";
	struct sk_http_parser p;
	struct sk_http_request r;

	ck_assert_int_eq(sk_http_parser_init(&p, NULL), 0);
	ck_assert_int_eq(sk_http_parse(&p, req, sizeof(req) - 1, &r), SK_HTTP_E_DUPLICATE);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("cart_body");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, valid_shapes);
	tcase_add_test(tc, sixteen_lines_not_seventeen);
	tcase_add_test(tc, refusals_name_their_line);
	tcase_add_test(tc, every_prefix_refused);
	tcase_add_test(tc, content_type);
	tcase_add_test(tc, cart_request_at_every_split);
	tcase_add_test(tc, content_type_twice);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return sk_test_run(suite(), false);
}
