/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_proxy.c - table-driven tests of the PROXY protocol parser
 * (net/sk_proxy.h), no DPDK.
 *
 * Every good header (v1 and v2: TCP4, TCP6, LOCAL, UNKNOWN, with TLVs) is
 * parsed whole with HTTP bytes after it (left unconsumed), at every split
 * point in two calls, byte by byte, and from a copy that ends right before
 * a PROT_NONE page (an overread crashes). Every bad form has its own error,
 * which no prefix contradicts.
 */
#include <check.h>
#include <string.h>

#include "sk_proxy.h"
#include "sk_test.h"

static uint8_t *guard;

static void
guard_setup(void)
{
	guard = sk_test_guard_end(8192);
}

#define SIG    0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
#define B(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})
#define S(s)   (const uint8_t *)(s), sizeof(s) - 1
#define V4A    198, 18, 0, 1
#define V4B    198, 18, 0, 2
#define V6A    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
#define V6B    0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2
#define MAPPED 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 9
#define PORTS  0x30, 0x39, 0x00, 0x50 /* 12345, 80 */

static const char http_tail[] = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n";

/* A 107-byte v1 header: the longest allowed. */
#define UNKNOWN_107                                                                                \
	"PROXY UNKNOWN 0123456789012345678901234567890123456789012345678901234567890123456789"     \
	"012345678901234567890\r\n"

static const struct good {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	uint8_t version, kind;
	const char *src, *dst; /* NULL: none */
	uint16_t sport, dport;
} good[] = {
	{"v1 tcp4", S("PROXY TCP4 198.18.0.1 198.18.0.2 12345 80\r\n"), 1, SK_PROXY_PROXIED,
	 "198.18.0.1", "198.18.0.2", 12345, 80},
	{"v1 tcp6", S("PROXY TCP6 2001:db8::1 2001:2::2 65535 0\r\n"), 1, SK_PROXY_PROXIED,
	 "2001:db8::1", "2001:2::2", 65535, 0},
	{"v1 tcp6 mapped", S("PROXY TCP6 ::ffff:198.18.0.9 2001:2::2 1 443\r\n"), 1,
	 SK_PROXY_PROXIED, "198.18.0.9", "2001:2::2", 1, 443},
	{"v1 unknown", S("PROXY UNKNOWN\r\n"), 1, SK_PROXY_UNKNOWN, NULL, NULL, 0, 0},
	{"v1 unknown+", S("PROXY UNKNOWN 2001:db8::1 junk \t x\r\n"), 1, SK_PROXY_UNKNOWN, NULL,
	 NULL, 0, 0},
	{"v1 107 bytes", S(UNKNOWN_107), 1, SK_PROXY_UNKNOWN, NULL, NULL, 0, 0},
	{"v2 tcp4", B(SIG, 0x21, 0x11, 0, 12, V4A, V4B, PORTS), 2, SK_PROXY_PROXIED, "198.18.0.1",
	 "198.18.0.2", 12345, 80},
	{"v2 tcp6", B(SIG, 0x21, 0x21, 0, 36, V6A, V6B, PORTS), 2, SK_PROXY_PROXIED, "2001:db8::1",
	 "2001:2::2", 12345, 80},
	{"v2 tcp6 mapped", B(SIG, 0x21, 0x21, 0, 36, MAPPED, V6B, PORTS), 2, SK_PROXY_PROXIED,
	 "198.18.0.9", "2001:2::2", 12345, 80},
	{"v2 tcp4 tlvs",
	 B(SIG, 0x21, 0x11, 0, 12 + 5 + 3 + 7, V4A, V4B, PORTS, 0x01, 0, 2, 'h', '2', 0x04, 0, 0,
	   0x05, 0, 4, 0xde, 0xad, 0xbe, 0xef),
	 2, SK_PROXY_PROXIED, "198.18.0.1", "198.18.0.2", 12345, 80},
	{"v2 tcp6 tlv", B(SIG, 0x21, 0x21, 0, 36 + 4, V6A, V6B, PORTS, 0xee, 0, 1, 0x0d), 2,
	 SK_PROXY_PROXIED, "2001:db8::1", "2001:2::2", 12345, 80},
	{"v2 local", B(SIG, 0x20, 0x00, 0, 0), 2, SK_PROXY_LOCAL, NULL, NULL, 0, 0},
	{"v2 local inet", B(SIG, 0x20, 0x11, 0, 12, V4A, V4B, PORTS), 2, SK_PROXY_LOCAL, NULL, NULL,
	 0, 0},
	/* LOCAL's block is ignored, even what would be a bad TLV or a UDP family */
	{"v2 local junk", B(SIG, 0x20, 0x12, 0, 3, 1, 2, 3), 2, SK_PROXY_LOCAL, NULL, NULL, 0, 0},
	{"v2 unspec", B(SIG, 0x21, 0x00, 0, 0), 2, SK_PROXY_UNKNOWN, NULL, NULL, 0, 0},
	{"v2 unspec block", B(SIG, 0x21, 0x01, 0, 4, 1, 2, 3, 4), 2, SK_PROXY_UNKNOWN, NULL, NULL,
	 0, 0},
};

/* with_tail - @g's header, then HTTP bytes, into @buf; the total length. */
static size_t
with_tail(const struct good *g, uint8_t *buf)
{
	memcpy(buf, g->bytes, g->len);
	memcpy(buf + g->len, http_tail, sizeof(http_tail) - 1);
	return g->len + sizeof(http_tail) - 1;
}

static void
check_header(const struct good *g, const struct sk_proxy_header *h)
{
	struct sk_addr want;

	ck_assert_uint_eq(h->len, g->len);
	ck_assert_uint_eq(h->version, g->version);
	ck_assert_uint_eq(h->kind, g->kind);
	ck_assert_uint_eq(h->src_port, g->sport);
	ck_assert_uint_eq(h->dst_port, g->dport);
	if (g->src == NULL) {
		ck_assert_uint_eq(h->src.family, SK_ADDR_NONE);
		ck_assert_uint_eq(h->dst.family, SK_ADDR_NONE);
		return;
	}
	ck_assert_int_eq(sk_addr_parse(g->src, strlen(g->src), &want), SK_ADDR_OK);
	ck_assert_mem_eq(&h->src, &want, sizeof(want));
	ck_assert_int_eq(sk_addr_parse(g->dst, strlen(g->dst), &want), SK_ADDR_OK);
	ck_assert_mem_eq(&h->dst, &want, sizeof(want));
}

START_TEST(test_good_whole)
{
	const struct good *g = &good[_i];
	uint8_t buf[256];
	size_t n = with_tail(g, buf);
	struct sk_proxy_parser p;
	struct sk_proxy_header h, h2;
	const uint8_t *at;

	sk_proxy_parser_init(&p, 0);
	ck_assert_msg(sk_proxy_parse(&p, buf, n, &h) == SK_PROXY_DONE, "%s", g->name);
	check_header(g, &h);
	/* what follows is the client's, untouched */
	ck_assert_mem_eq(buf + h.len, http_tail, sizeof(http_tail) - 1);
	/* kept: the same result again, also from a moved copy */
	at = sk_test_guarded(guard, buf, n);
	ck_assert_int_eq(sk_proxy_parse(&p, at, n, &h2), SK_PROXY_DONE);
	ck_assert_mem_eq(&h, &h2, sizeof(h));
	ck_assert_int_eq(sk_proxy_parse(&p, at, g->len - 1, &h2), SK_PROXY_NEED_MORE);
	/* exactly the header, ending at the guard page */
	at = sk_test_guarded(guard, g->bytes, g->len);
	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(sk_proxy_parse(&p, at, g->len, &h2), SK_PROXY_DONE);
	ck_assert_mem_eq(&h, &h2, sizeof(h));
}
END_TEST

/* In two calls, split at every point; each prefix sits at the guard page. */
START_TEST(test_good_splits)
{
	const struct good *g = &good[_i];
	uint8_t buf[256];
	size_t n = with_tail(g, buf);

	for (size_t k = 0; k <= n; k++) {
		struct sk_proxy_parser p;
		struct sk_proxy_header h;
		enum sk_proxy_result r;

		sk_proxy_parser_init(&p, 0);
		r = sk_proxy_parse(&p, sk_test_guarded(guard, buf, k), k, &h);
		if (k < g->len) {
			ck_assert_msg(r == SK_PROXY_NEED_MORE, "%s at %zu: %s", g->name, k,
				      sk_proxy_strerror(r));
			ck_assert_uint_eq(h.len, 0);
		} else {
			ck_assert_int_eq(r, SK_PROXY_DONE);
			check_header(g, &h);
		}
		r = sk_proxy_parse(&p, sk_test_guarded(guard, buf, n), n, &h);
		ck_assert_int_eq(r, SK_PROXY_DONE);
		check_header(g, &h);
	}
}
END_TEST

/* One more byte per call: DONE exactly when the last header byte arrives. */
START_TEST(test_good_bytewise)
{
	const struct good *g = &good[_i];
	uint8_t buf[256];
	size_t n = with_tail(g, buf);
	struct sk_proxy_parser p;
	struct sk_proxy_header h;

	sk_proxy_parser_init(&p, 0);
	for (size_t k = 0; k <= n; k++) {
		enum sk_proxy_result r = sk_proxy_parse(&p, buf, k, &h);

		ck_assert_int_eq(r, k < g->len ? SK_PROXY_NEED_MORE : SK_PROXY_DONE);
		if (r == SK_PROXY_DONE)
			check_header(g, &h);
	}
}
END_TEST

static const struct bad {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	enum sk_proxy_result err;
} bad[] = {
	/* either signature */
	{"http", S("GET / HTTP/1.1\r\n\r\n"), SK_PROXY_EBADSIG},
	{"tls", B(0x16, 0x03, 0x01, 0x02, 0x00), SK_PROXY_EBADSIG},
	{"v1 sig", S("PROXZ TCP4 198.18.0.1 198.18.0.2 1 2\r\n"), SK_PROXY_EBADSIG},
	{"v1 lower", S("proxy TCP4 198.18.0.1 198.18.0.2 1 2\r\n"), SK_PROXY_EBADSIG},
	{"v1 no space", S("PROXY\r\n"), SK_PROXY_EBADSIG},
	{"v2 sig",
	 B(0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0b, 0x21, 0x11, 0,
	   12, V4A, V4B, PORTS),
	 SK_PROXY_EBADSIG},
	{"v2 sig short", B(0x0d, 0x0a, 0x0d, 0x0d), SK_PROXY_EBADSIG},
	/* v1 */
	{"v1 family", S("PROXY TCP5 198.18.0.1 198.18.0.2 1 2\r\n"), SK_PROXY_EFAMILY},
	{"v1 family case", S("PROXY tcp4 198.18.0.1 198.18.0.2 1 2\r\n"), SK_PROXY_EFAMILY},
	{"v1 udp", S("PROXY UDP4 198.18.0.1 198.18.0.2 1 2\r\n"), SK_PROXY_EFAMILY},
	{"v1 unknownx", S("PROXY UNKNOWNX\r\n"), SK_PROXY_EFAMILY},
	{"v1 empty", S("PROXY \r\n"), SK_PROXY_ESYNTAX},
	{"v1 bare", S("PROXY TCP4\r\n"), SK_PROXY_ESYNTAX},
	{"v1 double space", S("PROXY  TCP4 198.18.0.1 198.18.0.2 1 2\r\n"), SK_PROXY_ESYNTAX},
	{"v1 double space 2", S("PROXY TCP4 198.18.0.1  198.18.0.2 1 2\r\n"), SK_PROXY_ESYNTAX},
	{"v1 missing", S("PROXY TCP4 198.18.0.1 198.18.0.2 1\r\n"), SK_PROXY_ESYNTAX},
	{"v1 extra", S("PROXY TCP4 198.18.0.1 198.18.0.2 1 2 3\r\n"), SK_PROXY_ESYNTAX},
	{"v1 trailing space", S("PROXY TCP4 198.18.0.1 198.18.0.2 1 2 \r\n"), SK_PROXY_ESYNTAX},
	{"v1 tcp4 space", S("PROXY TCP4 \r\n"), SK_PROXY_ESYNTAX},
	{"v1 bare lf", S("PROXY TCP4 198.18.0.1 198.18.0.2 1 2\n"), SK_PROXY_ESYNTAX},
	{"v1 cr no lf", S("PROXY TCP4 198.18.0.1 198.18.0.2 1 2\rX"), SK_PROXY_ESYNTAX},
	{"v1 unknown lf", S("PROXY UNKNOWN\n"), SK_PROXY_ESYNTAX},
	{"v1 v6 in tcp4", S("PROXY TCP4 2001:db8::1 198.18.0.2 1 2\r\n"), SK_PROXY_EADDR},
	{"v1 v4 in tcp6", S("PROXY TCP6 2001:db8::1 198.18.0.2 1 2\r\n"), SK_PROXY_EADDR},
	{"v1 bad v4", S("PROXY TCP4 198.18.0.256 198.18.0.2 1 2\r\n"), SK_PROXY_EADDR},
	{"v1 zero v4", S("PROXY TCP4 198.18.0.01 198.18.0.2 1 2\r\n"), SK_PROXY_EADDR},
	{"v1 bracket v6", S("PROXY TCP6 [2001:db8::1] 2001:2::2 1 2\r\n"), SK_PROXY_EADDR},
	{"v1 tab", S("PROXY TCP4 198.18.0.1\t198.18.0.2 1 2\r\n"), SK_PROXY_ESYNTAX},
	{"v1 port big", S("PROXY TCP4 198.18.0.1 198.18.0.2 65536 2\r\n"), SK_PROXY_EPORT},
	{"v1 port long", S("PROXY TCP4 198.18.0.1 198.18.0.2 1 123456\r\n"), SK_PROXY_EPORT},
	{"v1 port zero", S("PROXY TCP4 198.18.0.1 198.18.0.2 080 2\r\n"), SK_PROXY_EPORT},
	{"v1 port sign", S("PROXY TCP4 198.18.0.1 198.18.0.2 -1 2\r\n"), SK_PROXY_EPORT},
	{"v1 port hex", S("PROXY TCP4 198.18.0.1 198.18.0.2 1 2a\r\n"), SK_PROXY_EPORT},
	{"v1 108 bytes",
	 S("PROXY UNKNOWN 0123456789012345678901234567890123456789012345678901234567890123456789"
	   "0123456789012345678901\r\n"),
	 SK_PROXY_ETOOLONG},
	{"v1 no crlf",
	 S("PROXY TCP4 198.18.0.1 198.18.0.2 1 2 0123456789012345678901234567890123456789012345678"
	   "901234567890123456789012345678901234567890123456789"),
	 SK_PROXY_ETOOLONG},
	/* v2 */
	{"v2 version 1", B(SIG, 0x11, 0x11, 0, 12, V4A, V4B, PORTS), SK_PROXY_EVERSION},
	{"v2 version 3", B(SIG, 0x31, 0x11, 0, 12, V4A, V4B, PORTS), SK_PROXY_EVERSION},
	{"v2 command", B(SIG, 0x22, 0x11, 0, 12, V4A, V4B, PORTS), SK_PROXY_ECOMMAND},
	{"v2 command f", B(SIG, 0x2f, 0x11, 0, 12, V4A, V4B, PORTS), SK_PROXY_ECOMMAND},
	{"v2 family 4", B(SIG, 0x21, 0x41, 0, 12, V4A, V4B, PORTS), SK_PROXY_EFAMILY},
	{"v2 transport 3", B(SIG, 0x21, 0x13, 0, 12, V4A, V4B, PORTS), SK_PROXY_EFAMILY},
	{"v2 local family", B(SIG, 0x20, 0x51, 0, 0), SK_PROXY_EFAMILY},
	{"v2 udp4", B(SIG, 0x21, 0x12, 0, 12, V4A, V4B, PORTS), SK_PROXY_EFAMILY},
	{"v2 tcp unspec", B(SIG, 0x21, 0x10, 0, 12, V4A, V4B, PORTS), SK_PROXY_EFAMILY},
	{"v2 unix", B(SIG, 0x21, 0x31, 0, 0), SK_PROXY_EFAMILY},
	{"v2 tcp4 short", B(SIG, 0x21, 0x11, 0, 11, V4A, V4B, 0x30, 0x39, 0), SK_PROXY_ETRUNCATED},
	{"v2 tcp4 empty", B(SIG, 0x21, 0x11, 0, 0), SK_PROXY_ETRUNCATED},
	{"v2 tcp6 short", B(SIG, 0x21, 0x21, 0, 12, V4A, V4B, PORTS), SK_PROXY_ETRUNCATED},
	{"v2 too long", B(SIG, 0x21, 0x11, 0x02, 0x01), SK_PROXY_ETOOLONG},
	{"v2 too long max", B(SIG, 0x20, 0x00, 0xff, 0xff), SK_PROXY_ETOOLONG},
	{"v2 tlv past", B(SIG, 0x21, 0x11, 0, 12 + 4, V4A, V4B, PORTS, 0x01, 0, 2, 'h'),
	 SK_PROXY_ETLV},
	{"v2 tlv stub", B(SIG, 0x21, 0x11, 0, 12 + 2, V4A, V4B, PORTS, 0x01, 0), SK_PROXY_ETLV},
	{"v2 tlv second",
	 B(SIG, 0x21, 0x11, 0, 12 + 3 + 4, V4A, V4B, PORTS, 0x04, 0, 0, 0x01, 0, 9, 'x'),
	 SK_PROXY_ETLV},
	{"v2 tlv huge", B(SIG, 0x21, 0x11, 0, 12 + 3, V4A, V4B, PORTS, 0x01, 0xff, 0xff),
	 SK_PROXY_ETLV},
};

START_TEST(test_bad)
{
	const struct bad *b = &bad[_i];
	struct sk_proxy_parser p;
	struct sk_proxy_header h;
	enum sk_proxy_result r;

	sk_proxy_parser_init(&p, 0);
	r = sk_proxy_parse(&p, sk_test_guarded(guard, b->bytes, b->len), b->len, &h);
	ck_assert_msg(r == b->err, "%s: %s", b->name, sk_proxy_strerror(r));
	ck_assert(sk_proxy_result_is_error(r));
	ck_assert_uint_eq(h.len, 0);
	/* kept */
	ck_assert_int_eq(sk_proxy_parse(&p, b->bytes, b->len, &h), b->err);
	/* no prefix says otherwise; byte by byte ends with the same error */
	for (size_t k = 0; k < b->len; k++) {
		sk_proxy_parser_init(&p, 0);
		r = sk_proxy_parse(&p, sk_test_guarded(guard, b->bytes, k), k, &h);
		ck_assert_msg(r == SK_PROXY_NEED_MORE || r == b->err, "%s at %zu: %s", b->name, k,
			      sk_proxy_strerror(r));
	}
	sk_proxy_parser_init(&p, 0);
	r = SK_PROXY_NEED_MORE;
	for (size_t k = 0; k <= b->len && r == SK_PROXY_NEED_MORE; k++)
		r = sk_proxy_parse(&p, b->bytes, k, &h);
	ck_assert_int_eq(r, b->err);
}
END_TEST

/* Errors come as early as the bytes allow: the first byte of plain HTTP,
 * the 13th byte of a v2 header with a wrong version. */
START_TEST(test_early)
{
	struct sk_proxy_parser p;
	struct sk_proxy_header h;
	const uint8_t v2[] = {SIG, 0x11};
	const uint8_t big[] = {SIG, 0x21, 0x11, 0x10, 0x00};

	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(sk_proxy_parse(&p, (const uint8_t *)"G", 1, &h), SK_PROXY_EBADSIG);
	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(sk_proxy_parse(&p, (const uint8_t *)"PROXY", 5, &h), SK_PROXY_NEED_MORE);
	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(sk_proxy_parse(&p, v2, sizeof(v2), &h), SK_PROXY_EVERSION);
	/* a declared length above the bound is refused before its bytes come */
	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(sk_proxy_parse(&p, big, sizeof(big), &h), SK_PROXY_ETOOLONG);
	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(sk_proxy_parse(&p, big, 0, &h), SK_PROXY_NEED_MORE);
}
END_TEST

/* The v2 bound: 0 is the default, tiny values count as the minimum. */
START_TEST(test_bound)
{
	static const uint8_t tlv39[] = {SIG, 0x21, 0x21, 0, 39, V6A, V6B, PORTS, 0x04, 0, 0};
	static uint8_t local[SK_PROXY_V2_HEAD + 600] = {SIG, 0x20, 0x00};
	struct sk_proxy_parser p;
	struct sk_proxy_header h;

	sk_proxy_parser_init(&p, 0);
	ck_assert_uint_eq(p.v2_len_max, SK_PROXY_V2_LEN_MAX_DEFAULT);
	ck_assert_int_eq(sk_proxy_parse(&p, tlv39, sizeof(tlv39), &h), SK_PROXY_DONE);
	sk_proxy_parser_init(&p, 1);
	ck_assert_uint_eq(p.v2_len_max, SK_PROXY_V2_LEN_MAX_MIN);
	ck_assert_int_eq(sk_proxy_parse(&p, tlv39, sizeof(tlv39), &h), SK_PROXY_ETOOLONG);
	sk_proxy_parser_init(&p, 38);
	ck_assert_int_eq(sk_proxy_parse(&p, tlv39, SK_PROXY_V2_HEAD, &h), SK_PROXY_ETOOLONG);
	sk_proxy_parser_init(&p, 39);
	ck_assert_int_eq(sk_proxy_parse(&p, tlv39, sizeof(tlv39) - 1, &h), SK_PROXY_NEED_MORE);
	ck_assert_int_eq(sk_proxy_parse(&p, tlv39, sizeof(tlv39), &h), SK_PROXY_DONE);
	/* the default bound exactly, then one byte over */
	local[14] = SK_PROXY_V2_LEN_MAX_DEFAULT >> 8;
	local[15] = SK_PROXY_V2_LEN_MAX_DEFAULT & 0xff;
	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(
		sk_proxy_parse(&p, local, SK_PROXY_V2_HEAD + SK_PROXY_V2_LEN_MAX_DEFAULT, &h),
		SK_PROXY_DONE);
	ck_assert_uint_eq(h.len, SK_PROXY_V2_HEAD + SK_PROXY_V2_LEN_MAX_DEFAULT);
	local[15]++;
	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(sk_proxy_parse(&p, local, sizeof(local), &h), SK_PROXY_ETOOLONG);
	sk_proxy_parser_init(&p, 600);
	ck_assert_int_eq(sk_proxy_parse(&p, local, sizeof(local), &h), SK_PROXY_DONE);
}
END_TEST

START_TEST(test_strerror)
{
	for (int i = 0; i < SK_PROXY_RESULT_MAX; i++) {
		ck_assert_str_ne(sk_proxy_strerror((enum sk_proxy_result)i), "invalid result");
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(sk_proxy_strerror((enum sk_proxy_result)i),
					 sk_proxy_strerror((enum sk_proxy_result)j));
	}
	ck_assert_str_eq(sk_proxy_strerror(SK_PROXY_RESULT_MAX), "invalid result");
	ck_assert(!sk_proxy_result_is_error(SK_PROXY_NEED_MORE));
	ck_assert(!sk_proxy_result_is_error(SK_PROXY_DONE));
}
END_TEST

static Suite *
proxy_suite(void)
{
	Suite *s = suite_create("proxy");
	TCase *tc = tcase_create("proxy");
	int ngood = (int)(sizeof(good) / sizeof(good[0]));

	tcase_add_checked_fixture(tc, guard_setup, NULL);
	tcase_add_loop_test(tc, test_good_whole, 0, ngood);
	tcase_add_loop_test(tc, test_good_splits, 0, ngood);
	tcase_add_loop_test(tc, test_good_bytewise, 0, ngood);
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_early);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_strerror);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(proxy_suite)
