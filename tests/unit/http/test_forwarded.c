/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_forwarded.c - table-driven tests of the X-Forwarded-For / Forwarded
 * rules (http/sk_forwarded.h): trusted and untrusted peers, chains through
 * trusted proxies, all trusted, spaces, case, quoting, IPv6 brackets,
 * ports, obfuscated and unknown nodes, garbage, the hop bound.
 *
 * The trusted proxies are 198.18.0.0/24 and 2001:2::/48; clients are other
 * addresses of 198.18.0.0/15 and 2001:db8::/32. Every value is parsed from
 * a copy that ends right before a PROT_NONE page (an overread crashes).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sk_forwarded.h"
#include "sk_test.h"

#define NVAL 3

static uint8_t *guards[NVAL];
static struct sk_prefix_list trusted;

static void
setup(void)
{
	for (int i = 0; i < NVAL; i++)
		guards[i] = sk_test_guard_end(16384);
	ck_assert_int_eq(sk_prefix_list_parse("198.18.0.0/24, 2001:2::/48", &trusted, NULL),
			 SK_ADDR_OK);
}

static struct sk_addr
addr_of(const char *s)
{
	struct sk_addr a;

	ck_assert_msg(sk_addr_parse(s, strlen(s), &a) == SK_ADDR_OK, "%s", s);
	return a;
}

#define TP "198.18.0.1"	 /* a trusted peer */
#define UP "198.18.1.99" /* an untrusted peer */
#define X  SK_FWD_XFF
#define F  SK_FWD_FORWARDED

static const struct fcase {
	const char *name;
	enum sk_fwd_kind kind;
	const char *values[NVAL]; /* NULL-ended */
	const char *peer;
	enum sk_fwd_result result;
	const char *addr; /* NULL: the peer (unmapped) */
	uint16_t port;
	uint8_t hops;
} cases[] = {
	/* who is believed */
	{"untrusted peer", X, {"198.18.1.1"}, UP, SK_FWD_IGNORED, NULL, 0, 0},
	{"untrusted peer fwd", F, {"for=198.18.1.1"}, UP, SK_FWD_IGNORED, NULL, 0, 0},
	{"untrusted peer empty", X, {""}, UP, SK_FWD_IGNORED, NULL, 0, 0},
	{"untrusted no header", X, {NULL}, UP, SK_FWD_PEER, NULL, 0, 0},
	{"trusted no header", X, {NULL}, TP, SK_FWD_PEER, NULL, 0, 0},
	{"trusted empty", X, {" , ,"}, TP, SK_FWD_PEER, NULL, 0, 0},
	{"trusted v6 peer", X, {"2001:db8::7"}, "2001:2::1", SK_FWD_CLIENT, "2001:db8::7", 0, 1},
	{"untrusted v6 peer", X, {"2001:db8::7"}, "2001:db8::99", SK_FWD_IGNORED, NULL, 0, 0},
	{"mapped peer", X, {"198.18.1.1"}, "::ffff:198.18.0.1", SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	/* X-Forwarded-For */
	{"one hop", X, {"198.18.1.1"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"chain", X, {"198.18.1.1, 198.18.0.7, 198.18.0.8"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 3},
	{"spoofed left",
	 X,
	 {"198.18.1.66, 198.18.1.1, 198.18.0.7"},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 2},
	{"garbage left", X, {"garbage!!, \"x, 198.18.1.1"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"all trusted", X, {"198.18.0.5, 198.18.0.6"}, TP, SK_FWD_CLIENT, "198.18.0.5", 0, 2},
	{"spaces", X, {"  198.18.1.1 ,\t198.18.0.7  "}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 2},
	{"empty elements", X, {", ,198.18.1.1,,"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"v4 port", X, {"198.18.1.1:4711"}, TP, SK_FWD_CLIENT, "198.18.1.1", 4711, 1},
	{"v6 bare", X, {"2001:db8::1"}, TP, SK_FWD_CLIENT, "2001:db8::1", 0, 1},
	{"v6 brackets", X, {"[2001:db8::1]"}, TP, SK_FWD_CLIENT, "2001:db8::1", 0, 1},
	{"v6 port", X, {"[2001:DB8::1]:443"}, TP, SK_FWD_CLIENT, "2001:db8::1", 443, 1},
	{"v6 chain",
	 X,
	 {"2001:db8::1, 2001:2::5"},
	 "2001:2::1",
	 SK_FWD_CLIENT,
	 "2001:db8::1",
	 0,
	 2},
	{"mixed chain",
	 X,
	 {"2001:db8::1, 198.18.0.9"},
	 "2001:2::1",
	 SK_FWD_CLIENT,
	 "2001:db8::1",
	 0,
	 2},
	{"mapped hop", X, {"198.18.1.1, ::ffff:198.18.0.9"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 2},
	{"mapped client", X, {"::ffff:198.18.1.1"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"unknown", X, {"unknown, 198.18.0.7"}, TP, SK_FWD_OPAQUE, "198.18.0.7", 0, 2},
	{"unknown first", X, {"198.18.1.1, UNKNOWN"}, TP, SK_FWD_OPAQUE, NULL, 0, 1},
	{"two lines", X, {"198.18.1.1", "198.18.0.7"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 2},
	{"three lines",
	 X,
	 {"198.18.1.66, 198.18.1.1", "198.18.0.7, 198.18.0.8", ""},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 3},
	{"garbage", X, {"198.18.1.1, nonsense"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage port", X, {"198.18.1.1:65536"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage port zero", X, {"198.18.1.1:080"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"port zero", X, {"198.18.1.1:0"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"garbage empty port", X, {"198.18.1.1:"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage bracket", X, {"[2001:db8::1]x"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage open", X, {"[2001:db8::1"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage v4 bracket", X, {"[198.18.1.1]"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage prefix", X, {"198.18.1.0/24"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage obf xff", X, {"_hidden"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage inner space", X, {"198.18.1.1 198.18.1.2"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"garbage trusted then", X, {"nonsense, 198.18.0.7"}, TP, SK_FWD_GARBAGE, NULL, 0, 2},
	/* Forwarded */
	{"fwd one", F, {"for=198.18.1.1"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"fwd case",
	 F,
	 {"For=198.18.1.1;PROTO=https;by=198.18.0.1"},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 1},
	{"fwd quoted v4", F, {"for=\"198.18.1.1\""}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"fwd v4 port", F, {"for=\"198.18.1.1:8080\""}, TP, SK_FWD_CLIENT, "198.18.1.1", 8080, 1},
	{"fwd v6 port",
	 F,
	 {"for=\"[2001:db8:cafe::17]:4711\""},
	 TP,
	 SK_FWD_CLIENT,
	 "2001:db8:cafe::17",
	 4711,
	 1},
	{"fwd v6", F, {"for=\"[2001:db8::1]\""}, TP, SK_FWD_CLIENT, "2001:db8::1", 0, 1},
	{"fwd escaped", F, {"for=\"\\[2001:db8::1\\]\""}, TP, SK_FWD_CLIENT, "2001:db8::1", 0, 1},
	{"fwd chain",
	 F,
	 {"for=198.18.1.1, for=198.18.0.7;proto=http, for=\"[2001:2::3]\""},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 3},
	{"fwd all trusted",
	 F,
	 {"for=198.18.0.5, for=198.18.0.6"},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.0.5",
	 0,
	 2},
	{"fwd two lines",
	 F,
	 {"for=198.18.1.1", "for=198.18.0.7"},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 2},
	{"fwd spaces",
	 F,
	 {" for=198.18.1.1 ;proto=https , for=198.18.0.7 "},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 2},
	{"fwd empty pairs", F, {";for=198.18.1.1;;"}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"fwd comma quoted",
	 F,
	 {"for=198.18.1.1;ext=\"a,b\", for=198.18.0.7"},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 2},
	{"fwd escaped quote",
	 F,
	 {"for=198.18.1.1;ext=\"x\\\"y,z\\\\\", for=198.18.0.7"},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 2},
	{"fwd obf", F, {"for=\"_gazonk\""}, TP, SK_FWD_OPAQUE, NULL, 0, 1},
	{"fwd obf token",
	 F,
	 {"for=_gazonk, for=198.18.0.7"},
	 TP,
	 SK_FWD_OPAQUE,
	 "198.18.0.7",
	 0,
	 2},
	{"fwd obf port", F, {"for=\"198.18.1.1:_p1\""}, TP, SK_FWD_CLIENT, "198.18.1.1", 0, 1},
	{"fwd unknown", F, {"for=unknown"}, TP, SK_FWD_OPAQUE, NULL, 0, 1},
	{"fwd unknown port",
	 F,
	 {"for=\"unknown:99\", for=198.18.0.7"},
	 TP,
	 SK_FWD_OPAQUE,
	 "198.18.0.7",
	 0,
	 2},
	{"fwd no for", F, {"by=198.18.0.1;proto=http"}, TP, SK_FWD_OPAQUE, NULL, 0, 1},
	{"fwd unterminated left",
	 F,
	 {"for=\"x, for=198.18.1.1"},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 1},
	{"fwd unterminated line",
	 F,
	 {"for=\"x", "for=198.18.1.1"},
	 TP,
	 SK_FWD_CLIENT,
	 "198.18.1.1",
	 0,
	 1},
	{"fwd garbage unterminated",
	 F,
	 {"for=\"x, for=198.18.0.7"},
	 TP,
	 SK_FWD_GARBAGE,
	 NULL,
	 0,
	 2},
	{"fwd garbage bracket token", F, {"for=[2001:db8::1]"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage v6 token", F, {"for=2001:db8::1"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage v6 bare", F, {"for=\"2001:db8::1\""}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage twice", F, {"for=198.18.1.1;for=198.18.1.2"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage empty", F, {"for="}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage no name", F, {"=198.18.1.1"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage no eq", F, {"for 198.18.1.1"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage tail", F, {"for=198.18.1.1 x"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage ctl", F, {"for=\"198.18.1.1\x01\""}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage escape end", F, {"for=\"198.18.1.1\\"}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage long",
	 F,
	 {"for=\"_0123456789012345678901234567890123456789012345678901234567890123456789\""},
	 TP,
	 SK_FWD_GARBAGE,
	 NULL,
	 0,
	 1},
	{"fwd garbage port", F, {"for=\"198.18.1.1:x\""}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
	{"fwd garbage obf", F, {"for=\"_\""}, TP, SK_FWD_GARBAGE, NULL, 0, 1},
};

static enum sk_fwd_result
run_case(const struct fcase *c, struct sk_fwd_client *out)
{
	struct sk_fwd_value v[NVAL];
	struct sk_addr peer = addr_of(c->peer);
	size_t n = 0;

	for (; n < NVAL && c->values[n] != NULL; n++) {
		v[n].len = strlen(c->values[n]);
		v[n].p = sk_test_guarded(guards[n], c->values[n], v[n].len);
	}
	return sk_forwarded_client(c->kind, v, n, &peer, &trusted, out);
}

START_TEST(test_cases)
{
	const struct fcase *c = &cases[_i];
	struct sk_fwd_client out;
	struct sk_addr want = c->addr ? addr_of(c->addr) : addr_of(c->peer);
	enum sk_fwd_result r = run_case(c, &out);

	ck_assert_msg(r == c->result, "%s: %s", c->name, sk_forwarded_strerror(r));
	want = sk_addr_unmap(&want);
	ck_assert_msg(sk_addr_eq(&out.addr, &want), "%s: wrong address", c->name);
	ck_assert_uint_eq(out.port, c->port);
	ck_assert_msg(out.hops == c->hops, "%s: %u hops", c->name, out.hops);
}
END_TEST

/*
 * The hop bound: @trusted_hops trusted addresses, then (if @client) one
 * untrusted address to their left.
 */
static enum sk_fwd_result
run_hops(enum sk_fwd_kind kind, int trusted_hops, bool client, struct sk_fwd_client *out)
{
	static char text[8192];
	struct sk_fwd_value v;
	struct sk_addr peer = addr_of(TP);
	size_t n = 0;

	if (client)
		n += (size_t)snprintf(text, sizeof(text), "%s198.18.1.1",
				      kind == SK_FWD_FORWARDED ? "for=" : "");
	for (int i = 0; i < trusted_hops; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s198.18.0.%d",
				      n > 0 ? ", " : "", kind == SK_FWD_FORWARDED ? "for=" : "",
				      i + 2);
	v.len = n;
	v.p = sk_test_guarded(guards[0], text, n);
	return sk_forwarded_client(kind, &v, 1, &peer, &trusted, out);
}

START_TEST(test_hops)
{
	enum sk_fwd_kind kind = _i ? SK_FWD_FORWARDED : SK_FWD_XFF;
	struct sk_fwd_client out;
	struct sk_addr a;

	/* SK_FWD_HOPS_MAX trusted: the leftmost is the client */
	ck_assert_int_eq(run_hops(kind, SK_FWD_HOPS_MAX, false, &out), SK_FWD_CLIENT);
	ck_assert_uint_eq(out.hops, SK_FWD_HOPS_MAX);
	a = addr_of("198.18.0.2");
	ck_assert(sk_addr_eq(&out.addr, &a));
	/* the client as the last hop examined */
	ck_assert_int_eq(run_hops(kind, SK_FWD_HOPS_MAX - 1, true, &out), SK_FWD_CLIENT);
	a = addr_of("198.18.1.1");
	ck_assert(sk_addr_eq(&out.addr, &a));
	ck_assert_uint_eq(out.hops, SK_FWD_HOPS_MAX);
	/* one hop too far: refused, the peer is given */
	ck_assert_int_eq(run_hops(kind, SK_FWD_HOPS_MAX, true, &out), SK_FWD_TOO_MANY);
	a = addr_of(TP);
	ck_assert(sk_addr_eq(&out.addr, &a));
	ck_assert_uint_eq(out.hops, SK_FWD_HOPS_MAX);
	ck_assert_int_eq(run_hops(kind, 200, false, &out), SK_FWD_TOO_MANY);
}
END_TEST

/* A header that is mostly commas or quotes is scanned, bounded, and
 * answered (no element: the peer; a quote swallowing the rest: garbage). */
START_TEST(test_long_values)
{
	static char text[8192];
	struct sk_fwd_value v = {.p = text, .len = sizeof(text)};
	struct sk_addr peer = addr_of(TP);
	struct sk_fwd_client out;

	memset(text, ',', sizeof(text));
	v.p = sk_test_guarded(guards[0], text, sizeof(text));
	ck_assert_int_eq(sk_forwarded_client(SK_FWD_XFF, &v, 1, &peer, &trusted, &out),
			 SK_FWD_PEER);
	ck_assert_int_eq(sk_forwarded_client(SK_FWD_FORWARDED, &v, 1, &peer, &trusted, &out),
			 SK_FWD_PEER);
	memset(text, '"', sizeof(text));
	v.p = sk_test_guarded(guards[0], text, sizeof(text));
	ck_assert_int_eq(sk_forwarded_client(SK_FWD_FORWARDED, &v, 1, &peer, &trusted, &out),
			 SK_FWD_GARBAGE);
	memset(text, '\\', sizeof(text));
	text[sizeof(text) - 1] = '"';
	v.p = sk_test_guarded(guards[0], text, sizeof(text));
	ck_assert_int_eq(sk_forwarded_client(SK_FWD_FORWARDED, &v, 1, &peer, &trusted, &out),
			 SK_FWD_GARBAGE);
}
END_TEST

START_TEST(test_strerror)
{
	for (int i = 0; i < SK_FWD_RESULT_MAX; i++)
		ck_assert_str_ne(sk_forwarded_strerror((enum sk_fwd_result)i), "invalid result");
	ck_assert_str_eq(sk_forwarded_strerror(SK_FWD_RESULT_MAX), "invalid result");
}
END_TEST

static Suite *
forwarded_suite(void)
{
	Suite *s = suite_create("forwarded");
	TCase *tc = tcase_create("forwarded");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_loop_test(tc, test_cases, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_loop_test(tc, test_hops, 0, 2);
	tcase_add_test(tc, test_long_values);
	tcase_add_test(tc, test_strerror);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(forwarded_suite)
