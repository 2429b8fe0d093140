/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_client.c - the app's decisions about who the client is
 * (dataplane/seckill/sk_client.h): a PROXY listener's verdict for trusted
 * and untrusted peers, with and without a header, whole and byte by byte;
 * the forwarded header read from a request head; the rate limit key and
 * the record's address of both families; the counters.
 */
#include <check.h>
#include <string.h>

#include "sk_client.h"
#include "sk_common.h"
#include "sk_test.h"

#define TRUSTED "198.18.0.0/24, 2001:2::/48"

static struct sk_client_conf conf;

/* be32 - a.b.c.d as a uint32_t holding the address in network order. */
static uint32_t
be32(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	const uint8_t x[4] = {a, b, c, d};
	uint32_t v;

	memcpy(&v, x, 4);
	return v;
}

static struct sk_addr
A(const char *s) {
	struct sk_addr a;

	ck_assert_int_eq(sk_addr_parse(s, strlen(s), &a), SK_ADDR_OK);
	return a;
}

static void
setup(void)
{
	memset(&conf, 0, sizeof(conf));
	ck_assert_int_eq(sk_prefix_list_parse(TRUSTED, &conf.trusted, NULL), SK_ADDR_OK);
}

/* A v2 PROXY TCP4 header 198.18.0.77:40000 -> 198.18.1.1:80, with one TLV. */
static const uint8_t v2_tcp4[] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, /* signature */
	0x21, 0x11, 0x00, 0x10,							/* PROXY TCP4 16 */
	198,  18,   0,	  77,	198,  18,   1,	  1,	0x9c, 0x40, 0x00, 0x50, /* addresses */
	0x04, 0x00, 0x01, 0x00,							/* TLV NOOP 1 */
};
/* A v2 LOCAL header (a health check of the proxy itself). */
static const uint8_t v2_local[] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51,
	0x55, 0x49, 0x54, 0x0a, 0x20, 0x00, 0x00, 0x00,
};
static const char v1_tcp4[] = "PROXY TCP4 198.18.0.88 198.18.1.1 40000 80\r\n";
static const char http[] = "POST /v1/seckill/1 HTTP/1.1\r\nHost: x\r\n\r\n";

struct proxy_case {
	const char *name;
	uint8_t version;      /* the listener's */
	const char *peer;     /* the TCP peer */
	const uint8_t *bytes; /* what it sends first */
	size_t len;
	enum sk_client_verdict want;
	const char *client; /* NULL: the peer */
	uint32_t hdr_len;
};

#define B(x)   (const uint8_t *)(x), sizeof(x) - 1
#define BIN(x) x, sizeof(x)

static const struct proxy_case proxy_cases[] = {
	{"v2 trusted", 2, "198.18.0.1", BIN(v2_tcp4), SK_CLIENT_OK, "198.18.0.77", 32},
	{"v2 LOCAL keeps the peer", 2, "198.18.0.1", BIN(v2_local), SK_CLIENT_LOCAL, NULL, 16},
	{"v1 trusted", 1, "198.18.0.1", B(v1_tcp4), SK_CLIENT_OK, "198.18.0.88", 44},
	{"v1 header on a v2 listener", 2, "198.18.0.1", B(v1_tcp4), SK_CLIENT_BAD, NULL, 0},
	{"v2 header on a v1 listener", 1, "198.18.0.1", BIN(v2_tcp4), SK_CLIENT_BAD, NULL, 0},
	{"trusted without header", 2, "198.18.0.1", B(http), SK_CLIENT_MISSING, NULL, 0},
	{"trusted, malformed v1", 1, "198.18.0.1", B("PROXY TCP4 1.2.3 4.5.6.7 1 2\r\n"),
	 SK_CLIENT_BAD, NULL, 0},
	{"untrusted forges v2", 2, "198.18.1.9", BIN(v2_tcp4), SK_CLIENT_UNTRUSTED, NULL, 0},
	{"untrusted forges v1", 1, "198.18.1.9", B(v1_tcp4), SK_CLIENT_UNTRUSTED, NULL, 0},
	{"untrusted, broken header", 1, "198.18.1.9", B("PROXY NOPE\r\n"), SK_CLIENT_UNTRUSTED,
	 NULL, 0},
	{"untrusted plain HTTP is direct", 2, "198.18.1.9", B(http), SK_CLIENT_DIRECT, NULL, 0},
};

START_TEST(test_proxy_table)
{
	const struct proxy_case *c = &proxy_cases[_i];
	struct sk_addr peer = A(c->peer), client, want = c->client ? A(c->client) : peer;
	struct sk_proxy_parser p;
	enum sk_client_verdict v = SK_CLIENT_AGAIN;
	uint32_t hdr_len;
	size_t n;

	conf.proxy = c->version;
	/* Byte by byte: AGAIN until the verdict, which is then the whole's. */
	sk_proxy_parser_init(&p, 0);
	for (n = 1; n <= c->len && v == SK_CLIENT_AGAIN; n++)
		v = sk_client_proxy(&conf, &p, &peer, c->bytes, n, &client, &hdr_len);
	ck_assert_msg(v == c->want, "%s: %s, want %s", c->name, sk_client_verdict_name(v),
		      sk_client_verdict_name(c->want));
	ck_assert_uint_eq(hdr_len, c->hdr_len);
	if (!sk_client_refused(v))
		ck_assert_msg(sk_addr_eq(&client, &want), "%s: client", c->name);
	/* Whole, with HTTP behind the header: the same verdict and length. */
	uint8_t buf[256];
	memcpy(buf, c->bytes, c->len);
	memcpy(buf + c->len, http, sizeof(http) - 1);
	sk_proxy_parser_init(&p, 0);
	v = sk_client_proxy(&conf, &p, &peer, buf, c->len + sizeof(http) - 1, &client, &hdr_len);
	ck_assert_msg(v == c->want, "%s (whole): %s", c->name, sk_client_verdict_name(v));
	ck_assert_uint_eq(hdr_len, c->hdr_len);
}
END_TEST

START_TEST(test_proxy_partial)
{
	struct sk_addr peer = A("198.18.0.1"), client;
	struct sk_proxy_parser p;
	uint32_t hdr_len = 7;

	conf.proxy = 2;
	sk_proxy_parser_init(&p, 0);
	ck_assert_int_eq(sk_client_proxy(&conf, &p, &peer, v2_tcp4, 0, &client, &hdr_len),
			 SK_CLIENT_AGAIN);
	ck_assert_uint_eq(hdr_len, 0);
	ck_assert_int_eq(sk_client_proxy(&conf, &p, &peer, v2_tcp4, 20, &client, &hdr_len),
			 SK_CLIENT_AGAIN);
}
END_TEST

struct fwd_case {
	const char *name;
	uint8_t kind; /* 1 xff, 2 forwarded */
	const char *peer;
	const char *head;
	enum sk_fwd_result want;
	const char *client;
};

static const struct fwd_case fwd_cases[] = {
	{"xff from a trusted proxy", 1, "198.18.0.2",
	 "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 198.18.5.5\r\n\r\n", SK_FWD_CLIENT,
	 "198.18.5.5"},
	{"xff name in any case, two lines", 1, "198.18.0.2",
	 "\r\nGET / HTTP/1.1\r\nx-forwarded-FOR: 198.18.9.9\r\nX-Forwarded-For: 198.18.0.3, "
	 "198.18.0.4\r\n\r\n",
	 SK_FWD_CLIENT, "198.18.9.9"},
	{"xff from an untrusted peer", 1, "198.18.1.2",
	 "GET / HTTP/1.1\r\nX-Forwarded-For: 198.18.5.5\r\n\r\n", SK_FWD_IGNORED, "198.18.1.2"},
	{"no header", 1, "198.18.0.2", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", SK_FWD_PEER,
	 "198.18.0.2"},
	{"xff not read when forwarded is set", 2, "198.18.0.2",
	 "GET / HTTP/1.1\r\nX-Forwarded-For: 198.18.5.5\r\n\r\n", SK_FWD_PEER, "198.18.0.2"},
	{"forwarded for= v6", 2, "198.18.0.2",
	 "GET / HTTP/1.1\r\nForwarded: for=\"[2001:2:0:1::5]\";proto=http\r\n\r\n", SK_FWD_CLIENT,
	 "2001:2:0:1::5"},
	{"garbage", 1, "198.18.0.2", "GET / HTTP/1.1\r\nX-Forwarded-For: 198.18.5\r\n\r\n",
	 SK_FWD_GARBAGE, "198.18.0.2"},
	{"nine lines", 1, "198.18.0.2",
	 "GET / HTTP/1.1\r\nX-Forwarded-For: 198.18.0.1\r\nX-Forwarded-For: 198.18.0.1\r\n"
	 "X-Forwarded-For: 198.18.0.1\r\nX-Forwarded-For: 198.18.0.1\r\n"
	 "X-Forwarded-For: 198.18.0.1\r\nX-Forwarded-For: 198.18.0.1\r\n"
	 "X-Forwarded-For: 198.18.0.1\r\nX-Forwarded-For: 198.18.0.1\r\n"
	 "X-Forwarded-For: 198.18.0.1\r\n\r\n",
	 SK_FWD_GARBAGE, "198.18.0.2"},
	{"body lines are not fields", 1, "198.18.0.2",
	 "GET / HTTP/1.1\r\n\r\nX-Forwarded-For: 198.18.5.5\r\n", SK_FWD_PEER, "198.18.0.2"},
};

START_TEST(test_forwarded_table)
{
	const struct fwd_case *c = &fwd_cases[_i];
	struct sk_addr peer = A(c->peer), client, want = A(c->client);
	enum sk_fwd_result r;

	conf.forwarded = c->kind;
	r = sk_client_forwarded(&conf, c->head, strlen(c->head), &peer, &client);
	ck_assert_msg(r == c->want, "%s: %s", c->name, sk_forwarded_strerror(r));
	ck_assert_msg(sk_addr_eq(&client, &want), "%s: client", c->name);
}
END_TEST

START_TEST(test_keys)
{
	struct sk_addr v4 = A("198.18.0.7"), a = A("2001:2:0:1::5"), b = A("2001:2:0:1:ffff::9"),
		       c = A("2001:2:0:2::5"), none = {0};
	struct sk_client_id id = sk_client_id_of(&v4, 64);

	/* IPv4: the address itself, network order, as the limiter had it, at
	 * any IPv6 prefix; the record keeps the address. */
	ck_assert(sk_addr_eq(&id.addr, &v4));
	ck_assert_uint_eq(id.key, be32(198, 18, 0, 7));
	ck_assert_uint_eq(sk_client_rl_key(&v4, 48), id.key);
	/* IPv6: the record keeps the address; one key per /64 by default. */
	id = sk_client_id_of(&a, 64);
	ck_assert(sk_addr_eq(&id.addr, &a));
	ck_assert_uint_eq(id.key, sk_client_rl_key(&a, 64));
	ck_assert_uint_eq(sk_client_rl_key(&a, 64), sk_client_rl_key(&b, 64));
	ck_assert_uint_ne(sk_client_rl_key(&a, 64), sk_client_rl_key(&c, 64));
	ck_assert_uint_eq(sk_client_rl_key(&none, 64), 0);
	/* A shorter prefix puts both /64s of one /48 under one key. */
	ck_assert_uint_eq(sk_client_rl_key(&a, 48), sk_client_rl_key(&c, 48));
	ck_assert_uint_eq(sk_client_id_of(&a, 48).key, sk_client_rl_key(&c, 48));
}
END_TEST

START_TEST(test_counts)
{
	struct sk_client_stats st = {0};
	struct sk_addr peer = A("198.18.0.2"), untrusted = A("198.18.1.2");
	const char head[] = "GET / HTTP/1.1\r\nX-Forwarded-For: 198.18.5.5\r\n\r\n";
	struct sk_client_id id;

	for (int v = 0; v < SK_CLIENT_VERDICT_MAX; v++)
		sk_client_proxy_count(&st, (enum sk_client_verdict)v);
	ck_assert_uint_eq(st.proxy_ok + st.proxy_local + st.proxy_direct, 3);
	ck_assert_uint_eq(st.proxy_refused_untrusted + st.proxy_missing + st.proxy_bad, 3);
	conf.forwarded = 0;
	id = sk_client_request(&conf, &st, &peer, head, sizeof(head) - 1);
	ck_assert(sk_addr_eq(&id.addr, &peer));
	ck_assert_uint_eq(st.forwarded_used + st.forwarded_ignored, 0);
	conf.forwarded = 1;
	id = sk_client_request(&conf, &st, &peer, head, sizeof(head) - 1);
	ck_assert_uint_eq(id.addr.family, SK_ADDR_V4);
	ck_assert_mem_eq(id.addr.bytes, "\xc6\x12\x05\x05", 4);
	ck_assert_uint_eq(id.key, be32(198, 18, 5, 5));
	ck_assert_uint_eq(st.forwarded_used, 1);
	id = sk_client_request(&conf, &st, &untrusted, head, sizeof(head) - 1);
	ck_assert(sk_addr_eq(&id.addr, &untrusted));
	ck_assert_uint_eq(st.forwarded_ignored, 1);
	ck_assert_uint_eq(st.forwarded_bad, 0);
}
END_TEST

static Suite *
client_suite(void)
{
	Suite *s = suite_create("client");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_loop_test(tc, test_proxy_table, 0, (int)SK_ARRAY_SIZE(proxy_cases));
	tcase_add_test(tc, test_proxy_partial);
	tcase_add_loop_test(tc, test_forwarded_table, 0, (int)SK_ARRAY_SIZE(fwd_cases));
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_counts);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(client_suite)
