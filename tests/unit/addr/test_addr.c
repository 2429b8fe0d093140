/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_addr.c - table-driven tests of addr/: address parse and format round
 * trips, every refusal with its error, prefixes and contains at the edges,
 * prefix lists and their error messages, the limiter key.
 *
 * Every text is parsed from a copy that ends right before a PROT_NONE page,
 * so a parser that reads one byte too far crashes the test.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sk_addr.h"
#include "sk_test.h"

static uint8_t *guard;

static void
guard_setup(void)
{
	guard = sk_test_guard_end(4096);
}

static enum sk_addr_error
parse_guarded(const char *s, struct sk_addr *a)
{
	size_t n = strlen(s);

	return sk_addr_parse(sk_test_guarded(guard, s, n), n, a);
}

static enum sk_addr_error
prefix_guarded(const char *s, struct sk_prefix *p)
{
	size_t n = strlen(s);

	return sk_prefix_parse(sk_test_guarded(guard, s, n), n, p);
}

/* ------------------------------------------------------------------------ */
/* Addresses                                                                 */
/* ------------------------------------------------------------------------ */

static const struct good_addr {
	const char *text;
	uint8_t family;
	uint8_t bytes[16];
	const char *canonical; /* NULL: the text itself */
} good[] = {
	{"198.18.0.1", 4, {198, 18, 0, 1}, NULL},
	{"198.19.255.255", 4, {198, 19, 255, 255}, NULL},
	{"0.0.0.0", 4, {0}, NULL},
	{"198.18.10.100", 4, {198, 18, 10, 100}, NULL},
	{"2001:db8::1", 6, {0x20, 0x01, 0x0d, 0xb8, [15] = 1}, NULL},
	{"2001:DB8::A", 6, {0x20, 0x01, 0x0d, 0xb8, [15] = 0xa}, "2001:db8::a"},
	{"2001:0db8:0000:0000:0000:0000:0000:0001",
	 6,
	 {0x20, 0x01, 0x0d, 0xb8, [15] = 1},
	 "2001:db8::1"},
	{"2001:db8:0:0:1:0:0:1",
	 6,
	 {0x20, 0x01, 0x0d, 0xb8, [9] = 1, [15] = 1},
	 "2001:db8::1:0:0:1"},
	{"2001:db8:0:1:1:1:1:1",
	 6,
	 {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
	 NULL},
	{"2001:db8:1:0:0:0:1:0", 6, {0x20, 0x01, 0x0d, 0xb8, 0, 1, [13] = 1}, "2001:db8:1::1:0"},
	{"2001:2::", 6, {0x20, 0x01, 0, 2}, NULL},
	{"2001:2:0:ffff::7", 6, {0x20, 0x01, 0, 2, 0, 0, 0xff, 0xff, [15] = 7}, NULL},
	{"::", 6, {0}, NULL},
	{"::2001:db8", 6, {[12] = 0x20, 0x01, 0x0d, 0xb8}, "::2001:db8"},
	{"2001:db8:1:2:3:4:5:6",
	 6,
	 {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6},
	 NULL},
	{"::ffff:198.18.0.1", 6, {[10] = 0xff, 0xff, 198, 18, 0, 1}, NULL},
	{"::FFFF:c612:1", 6, {[10] = 0xff, 0xff, 198, 18, 0, 1}, "::ffff:198.18.0.1"},
	{"2001:db8::198.18.0.1",
	 6,
	 {0x20, 0x01, 0x0d, 0xb8, [12] = 198, 18, 0, 1},
	 "2001:db8::c612:1"},
	{"2001:db8:0:0:0:0:198.18.0.1",
	 6,
	 {0x20, 0x01, 0x0d, 0xb8, [12] = 198, 18, 0, 1},
	 "2001:db8::c612:1"},
	{"2001:db8:ffff:ffff:ffff:ffff:198.19.255.255",
	 6,
	 {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 198, 19, 255,
	  255},
	 "2001:db8:ffff:ffff:ffff:ffff:c613:ffff"},
};

START_TEST(test_good_roundtrip)
{
	const struct good_addr *g = &good[_i];
	const char *canon = g->canonical ? g->canonical : g->text;
	struct sk_addr a, b;
	char buf[SK_ADDR_STRLEN];

	ck_assert_msg(parse_guarded(g->text, &a) == SK_ADDR_OK, "%s", g->text);
	ck_assert_uint_eq(a.family, g->family);
	ck_assert_mem_eq(a.bytes, g->bytes, 16);
	ck_assert_int_eq(sk_addr_format(&a, buf, sizeof(buf)), (int)strlen(canon));
	ck_assert_str_eq(buf, canon);
	ck_assert_int_eq(parse_guarded(buf, &b), SK_ADDR_OK);
	ck_assert(sk_addr_eq(&a, &b));
	/* exactly enough room, and one byte less */
	ck_assert_int_eq(sk_addr_format(&a, buf, strlen(canon) + 1), (int)strlen(canon));
	ck_assert_int_eq(sk_addr_format(&a, buf, strlen(canon)), -ENOSPC);
	ck_assert_str_eq(buf, "");
}
END_TEST

static const struct bad_addr {
	const char *text;
	enum sk_addr_error err;
} bad[] = {
	{"", SK_ADDR_EEMPTY},
	{"2001:0db8:0000:0000:0000:0000:0000:0000:0000:1", SK_ADDR_ETOOLONG},
	{"198.18.0", SK_ADDR_ECOUNT},
	{"198.18.0.1.7", SK_ADDR_ECOUNT},
	{"198", SK_ADDR_ECOUNT},
	{"198.18..1", SK_ADDR_ESYNTAX},
	{"198.18.0.", SK_ADDR_ESYNTAX},
	{".198.18.0", SK_ADDR_ESYNTAX},
	{"198.18.0.1 ", SK_ADDR_ESYNTAX},
	{" 198.18.0.1", SK_ADDR_ESYNTAX},
	{"198.18.0.1x", SK_ADDR_ESYNTAX},
	{"198.18.0.-1", SK_ADDR_ESYNTAX},
	{"198.18.0.+1", SK_ADDR_ESYNTAX},
	{"198.18.0.256", SK_ADDR_ERANGE},
	{"198.18.0.1000", SK_ADDR_ERANGE},
	{"198.18.0.00000000001", SK_ADDR_ERANGE},
	{"198.018.0.1", SK_ADDR_ELEADING0},
	{"198.18.0.01", SK_ADDR_ELEADING0},
	{"198.18.00.1", SK_ADDR_ELEADING0},
	{"0x c6.18.0.1", SK_ADDR_ESYNTAX},
	{"198.18.0.1/32", SK_ADDR_ESYNTAX},
	{"[2001:db8::1]", SK_ADDR_ESYNTAX},
	{"2001:db8::1%eth0", SK_ADDR_EZONE},
	{"2001:db8::1%", SK_ADDR_EZONE},
	{"2001:db8:1:2:3:4:5", SK_ADDR_ECOUNT},
	{"2001:db8:1:2:3:4:5:6:7", SK_ADDR_ECOUNT},
	{"2001:db8:1:2:3:4:5::6", SK_ADDR_ECOUNT},
	{"2001:db8:1:2::3:4:5:6", SK_ADDR_ECOUNT},
	{"::2001:db8:1:2:3:4:5:6", SK_ADDR_ECOUNT},
	{"2001:db8:1:2:3:4:5:6::", SK_ADDR_ECOUNT},
	{"2001:db8:1:2:3:4:5:198.18.0.1", SK_ADDR_ECOUNT},
	{"2001:db8:1:2:3:198.18.0.1", SK_ADDR_ECOUNT},
	{"2001:db8::1::2", SK_ADDR_ESYNTAX},
	{"2001:db8:::1", SK_ADDR_ESYNTAX},
	{":2001:db8::1", SK_ADDR_ESYNTAX},
	{"2001:db8::1:", SK_ADDR_ESYNTAX},
	{":", SK_ADDR_ESYNTAX},
	{":::", SK_ADDR_ESYNTAX},
	{"2001:db8::g", SK_ADDR_ESYNTAX},
	{"2001:db8:: 1", SK_ADDR_ESYNTAX},
	{"2001:db8::12345", SK_ADDR_ERANGE},
	{"2001:00db8::1", SK_ADDR_ERANGE},
	{"2001:db8::198.18.0", SK_ADDR_ECOUNT},
	{"2001:db8::198.18.0.256", SK_ADDR_ERANGE},
	{"2001:db8::198.18.0.01", SK_ADDR_ELEADING0},
	{"2001:db8::198.18.0.1:1", SK_ADDR_ESYNTAX},
	{"2001:db8::1a.18.0.1", SK_ADDR_ESYNTAX},
	{"::198.18.0.1.1", SK_ADDR_ECOUNT},
};

START_TEST(test_bad)
{
	struct sk_addr a;

	memset(&a, 0x5a, sizeof(a));
	ck_assert_msg(parse_guarded(bad[_i].text, &a) == bad[_i].err, "\"%s\": got %s",
		      bad[_i].text, sk_addr_strerror(parse_guarded(bad[_i].text, &a)));
	ck_assert_uint_eq(a.family, SK_ADDR_NONE);
	ck_assert_str_ne(sk_addr_strerror(bad[_i].err), "invalid error code");
}
END_TEST

/* An embedded NUL ends nothing: the length says where the text ends. */
START_TEST(test_length_not_nul)
{
	struct sk_addr a;

	ck_assert_int_eq(sk_addr_parse("198.18.0.1\0junk", 10, &a), SK_ADDR_OK);
	ck_assert_int_eq(sk_addr_parse("198.18.0.1\0", 11, &a), SK_ADDR_ESYNTAX);
	ck_assert_int_eq(sk_addr_parse("198.18.0.123", 10, &a), SK_ADDR_OK);
	ck_assert_uint_eq(a.bytes[3], 1);
}
END_TEST

START_TEST(test_helpers)
{
	const uint8_t v4[4] = {198, 18, 0, 1};
	const uint8_t mapped[16] = {[10] = 0xff, 0xff, 198, 18, 0, 1};
	const uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	struct sk_addr a, m, u, six, none = {0};
	uint32_t be;
	char buf[SK_ADDR_STRLEN];

	memcpy(&be, v4, 4);
	a = sk_addr_from_v4(be);
	ck_assert_uint_eq(a.family, SK_ADDR_V4);
	ck_assert_mem_eq(a.bytes, v4, 4);
	for (int i = 4; i < 16; i++)
		ck_assert_uint_eq(a.bytes[i], 0);
	m = sk_addr_from_v6(mapped);
	six = sk_addr_from_v6(v6);
	ck_assert(sk_addr_is_v4mapped(&m));
	ck_assert(!sk_addr_is_v4mapped(&a));
	ck_assert(!sk_addr_is_v4mapped(&six));
	ck_assert(!sk_addr_eq(&a, &m));
	u = sk_addr_unmap(&m);
	ck_assert(sk_addr_eq(&u, &a));
	ck_assert_mem_eq(&u, &a, sizeof(a)); /* the same bytes: memcmp-able */
	u = sk_addr_unmap(&six);
	ck_assert(sk_addr_eq(&u, &six));
	u = sk_addr_unmap(&a);
	ck_assert(sk_addr_eq(&u, &a));
	ck_assert_int_eq(sk_addr_format(&none, buf, sizeof(buf)), -EINVAL);
	ck_assert(!sk_addr_eq(&none, &a));
	ck_assert_str_eq(sk_addr_strerror(SK_ADDR_ERROR_MAX), "invalid error code");
}
END_TEST

static const struct port_case {
	const char *text;
	bool ok;
	uint16_t port;
} ports[] = {
	{"0", true, 0},	     {"1", true, 1},	  {"80", true, 80},	{"65535", true, 65535},
	{"65536", false, 0}, {"99999", false, 0}, {"123456", false, 0}, {"", false, 0},
	{"080", false, 0},   {"00", false, 0},	  {"-1", false, 0},	{"+1", false, 0},
	{"1a", false, 0},    {" 1", false, 0},	  {"1 ", false, 0},	{"0x10", false, 0},
};

START_TEST(test_port)
{
	const struct port_case *c = &ports[_i];
	size_t n = strlen(c->text);
	uint16_t port = 4242;
	bool ok = sk_addr_port_parse(sk_test_guarded(guard, c->text, n), n, &port);

	ck_assert_msg(ok == c->ok, "\"%s\"", c->text);
	ck_assert_uint_eq(port, c->ok ? c->port : 4242);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Prefixes                                                                  */
/* ------------------------------------------------------------------------ */

static const struct good_prefix {
	const char *text;
	const char *canonical; /* as sk_prefix_format() writes it */
	const char *in[3];     /* addresses inside (NULL-ended) */
	const char *out[4];    /* addresses outside, any family */
} prefixes[] = {
	{"198.18.0.0/15",
	 "198.18.0.0/15",
	 {"198.18.0.0", "198.19.255.255", "198.18.7.9"},
	 {"::ffff:198.18.0.1", "2001:2::", "2001:db8::"}},
	{"198.18.0.0/16",
	 "198.18.0.0/16",
	 {"198.18.0.0", "198.18.255.255"},
	 {"198.19.0.0", "198.19.255.255"}},
	{"198.19.0.0/16",
	 "198.19.0.0/16",
	 {"198.19.0.0", "198.19.255.255"},
	 {"198.18.255.255", "198.18.0.0"}},
	{"198.18.0.1", "198.18.0.1/32", {"198.18.0.1"}, {"198.18.0.0", "198.18.0.2", "2001:2::"}},
	{"198.18.0.1/32", "198.18.0.1/32", {"198.18.0.1"}, {"198.18.0.0", "198.18.0.2"}},
	{"198.18.0.128/25",
	 "198.18.0.128/25",
	 {"198.18.0.128", "198.18.0.255"},
	 {"198.18.0.127", "198.18.1.128"}},
	{"0.0.0.0/0",
	 "0.0.0.0/0",
	 {"198.18.0.1", "0.0.0.0", "198.19.255.255"},
	 {"::", "2001:2::1", "::ffff:198.18.0.1"}},
	{"2001:2::/48",
	 "2001:2::/48",
	 {"2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff", "2001:2::7"},
	 {"2001:db8::", "198.18.0.1", "2001:db8:0:ffff::"}},
	{"2001:db8:1::/48",
	 "2001:db8:1::/48",
	 {"2001:db8:1::", "2001:db8:1:ffff:ffff:ffff:ffff:ffff"},
	 {"2001:db8:2::", "2001:db8:0:ffff:ffff:ffff:ffff:ffff", "2001:2::"}},
	{"2001:db8::/32",
	 "2001:db8::/32",
	 {"2001:db8::", "2001:db8:ffff::1"},
	 {"2001:2::", "2001:2:0:ffff::", "198.18.0.0"}},
	{"2001:db8::1",
	 "2001:db8::1/128",
	 {"2001:db8::1"},
	 {"2001:db8::", "2001:db8::2", "198.18.0.1"}},
	{"2001:db8::1/128", "2001:db8::1/128", {"2001:db8::1"}, {"2001:db8::3"}},
	{"2001:db8::/127", "2001:db8::/127", {"2001:db8::", "2001:db8::1"}, {"2001:db8::2"}},
	{"::/0", "::/0", {"::", "2001:db8::1", "::ffff:198.18.0.1"}, {"198.18.0.1", "0.0.0.0"}},
	{"2001:db8:8000::/33",
	 "2001:db8:8000::/33",
	 {"2001:db8:8000::", "2001:db8:ffff::"},
	 {"2001:db8:7fff::", "2001:2::"}},
	/* a v4-mapped prefix is stored as the IPv4 prefix it covers */
	{"::ffff:198.18.0.0/111",
	 "198.18.0.0/15",
	 {"198.18.0.0", "198.19.0.1"},
	 {"::ffff:198.18.0.1", "2001:2::"}},
	{"::ffff:198.18.0.1", "198.18.0.1/32", {"198.18.0.1"}, {"::ffff:198.18.0.1"}},
};

START_TEST(test_prefix)
{
	const struct good_prefix *g = &prefixes[_i];
	struct sk_prefix p, q;
	struct sk_addr a;
	char buf[SK_PREFIX_STRLEN];

	ck_assert_msg(prefix_guarded(g->text, &p) == SK_ADDR_OK, "%s", g->text);
	ck_assert_int_eq(sk_prefix_format(&p, buf, sizeof(buf)), (int)strlen(g->canonical));
	ck_assert_str_eq(buf, g->canonical);
	ck_assert_int_eq(prefix_guarded(buf, &q), SK_ADDR_OK);
	ck_assert_mem_eq(&p, &q, sizeof(p));
	ck_assert_int_eq(sk_prefix_format(&p, buf, strlen(g->canonical)), -ENOSPC);
	for (int i = 0; i < 3 && g->in[i] != NULL; i++) {
		ck_assert_int_eq(parse_guarded(g->in[i], &a), SK_ADDR_OK);
		ck_assert_msg(sk_prefix_contains(&p, &a), "%s in %s", g->in[i], g->text);
	}
	for (int i = 0; i < 4 && g->out[i] != NULL; i++) {
		ck_assert_int_eq(parse_guarded(g->out[i], &a), SK_ADDR_OK);
		ck_assert_msg(!sk_prefix_contains(&p, &a), "%s not in %s", g->out[i], g->text);
	}
	a = (struct sk_addr){0};
	ck_assert(!sk_prefix_contains(&p, &a));
}
END_TEST

static const struct bad_addr bad_prefixes[] = {
	{"", SK_ADDR_EEMPTY},
	{"/15", SK_ADDR_EEMPTY},
	{"198.18.0.0/", SK_ADDR_EPREFIX},
	{"198.18.0.0/33", SK_ADDR_EPREFIX},
	{"198.18.0.0/015", SK_ADDR_EPREFIX},
	{"198.18.0.0/1x", SK_ADDR_EPREFIX},
	{"198.18.0.0/-1", SK_ADDR_EPREFIX},
	{"198.18.0.0/ 15", SK_ADDR_EPREFIX},
	{"198.18.0.0/15/15", SK_ADDR_EPREFIX},
	{"198.18.0.0/1500", SK_ADDR_EPREFIX},
	{"2001:2::/129", SK_ADDR_EPREFIX},
	{"2001:2::/00", SK_ADDR_EPREFIX},
	{"198.18.0.1/15", SK_ADDR_EHOSTBITS},
	{"198.19.0.0/16", SK_ADDR_OK},
	{"198.18.0.1/31", SK_ADDR_EHOSTBITS},
	{"2001:2::1/48", SK_ADDR_EHOSTBITS},
	{"2001:2:0:1::/48", SK_ADDR_EHOSTBITS},
	{"2001:db8::1/127", SK_ADDR_EHOSTBITS},
	{"198.18.0.0/0", SK_ADDR_EHOSTBITS},
	{"198.18.0/15", SK_ADDR_ECOUNT},
	{"198.18.0.256/32", SK_ADDR_ERANGE},
	{"[2001:2::]/48", SK_ADDR_ESYNTAX},
	{"2001:0db8:0000:0000:0000:0000:0000:0000:0001/128", SK_ADDR_ECOUNT},
	{"2001:0db8:0000:0000:0000:0000:0000:0000:0000:1/128", SK_ADDR_ETOOLONG},
};

START_TEST(test_prefix_bad)
{
	struct sk_prefix p;
	enum sk_addr_error e = prefix_guarded(bad_prefixes[_i].text, &p);

	ck_assert_msg(e == bad_prefixes[_i].err, "\"%s\": got %s", bad_prefixes[_i].text,
		      sk_addr_strerror(e));
	if (e != SK_ADDR_OK)
		ck_assert_uint_eq(p.addr.family, SK_ADDR_NONE);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Lists                                                                     */
/* ------------------------------------------------------------------------ */

START_TEST(test_list)
{
	struct sk_prefix_list l;
	struct sk_prefix_list_error w;
	struct sk_addr a;

	ck_assert_int_eq(
		sk_prefix_list_parse("198.18.0.0/15, 2001:2::/48,2001:db8::7\t198.18.0.1", &l, &w),
		SK_ADDR_OK);
	ck_assert_uint_eq(l.n, 4);
	ck_assert_uint_eq(l.p[0].len, 15);
	ck_assert_uint_eq(l.p[1].len, 48);
	ck_assert_uint_eq(l.p[2].len, 128);
	ck_assert_uint_eq(l.p[3].len, 32);
	const char *yes[] = {"198.18.0.0", "198.19.255.255", "2001:2::", "2001:2:0:1::1",
			     "2001:db8::7"};
	const char *no[] = {"2001:db8::1", "2001:db8::8", "::ffff:198.18.0.1", "::"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		ck_assert_int_eq(parse_guarded(yes[i], &a), SK_ADDR_OK);
		ck_assert_msg(sk_prefix_list_contains(&l, &a), "%s", yes[i]);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		ck_assert_int_eq(parse_guarded(no[i], &a), SK_ADDR_OK);
		ck_assert_msg(!sk_prefix_list_contains(&l, &a), "%s", no[i]);
	}
	/* empty and blank lists trust nobody */
	ck_assert_int_eq(sk_prefix_list_parse("", &l, NULL), SK_ADDR_OK);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_int_eq(sk_prefix_list_parse(" ,, \t ", &l, NULL), SK_ADDR_OK);
	ck_assert_uint_eq(l.n, 0);
	ck_assert(!sk_prefix_list_contains(&l, &a));
}
END_TEST

static const struct bad_list {
	const char *text;
	enum sk_addr_error err;
	uint32_t index;
	const char *message;
} bad_lists[] = {
	{"198.18.0.0/15, 198.18.0.1/15", SK_ADDR_EHOSTBITS, 2,
	 "entry 2 \"198.18.0.1/15\": bits set beyond the prefix length"},
	{"2001:2::/48;198.18.0.0/15", SK_ADDR_EPREFIX, 1,
	 "entry 1 \"2001:2::/48;198.18.0.0/15\": bad prefix length"},
	{"198.18.0.0/15 ,, 2001:2::/48 nonsense", SK_ADDR_ESYNTAX, 3,
	 "entry 3 \"nonsense\": not an IP address (a character or separator out of place)"},
	{"2001:2::/48, 198.18.0.0/33", SK_ADDR_EPREFIX, 2,
	 "entry 2 \"198.18.0.0/33\": bad prefix length"},
	{"2001:2::%1", SK_ADDR_EZONE, 1,
	 "entry 1 \"2001:2::%1\": an IPv6 zone index is not allowed"},
	{"198.18.0.0/15 "
	 "2001:2::2001:2:2001:2:2001:2:2001:2:2001:2:2001:2:2001:2:2001:2:2001:2:2001:2/128",
	 SK_ADDR_ETOOLONG, 2,
	 "entry 2 \"2001:2::2001:2:2001:2:2001:2:2001:2:2001:2:2001:2:2001:2:200...\": too long "
	 "for an address"},
};

START_TEST(test_list_bad)
{
	const struct bad_list *b = &bad_lists[_i];
	struct sk_prefix_list l;
	struct sk_prefix_list_error w;
	char msg[160];

	ck_assert_int_eq(sk_prefix_list_parse(b->text, &l, &w), b->err);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_int_eq(w.err, b->err);
	ck_assert_uint_eq(w.index, b->index);
	ck_assert_int_eq(sk_prefix_list_strerror(b->text, &w, msg, sizeof(msg)),
			 (int)strlen(b->message));
	ck_assert_str_eq(msg, b->message);
	ck_assert_int_eq(sk_prefix_list_parse(b->text, &l, NULL), b->err);
}
END_TEST

/* SK_PREFIX_LIST_MAX prefixes fit; one more is refused, naming it. */
START_TEST(test_list_full)
{
	static char text[SK_PREFIX_LIST_MAX * 24 + 32];
	static struct sk_prefix_list l;
	struct sk_prefix_list_error w;
	struct sk_addr a;
	size_t n = 0;
	char msg[128];

	for (int i = 0; i < SK_PREFIX_LIST_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "198.18.%d.0/24, ", i);
	ck_assert_int_eq(sk_prefix_list_parse(text, &l, &w), SK_ADDR_OK);
	ck_assert_uint_eq(l.n, SK_PREFIX_LIST_MAX);
	ck_assert_int_eq(parse_guarded("198.18.63.9", &a), SK_ADDR_OK);
	ck_assert(sk_prefix_list_contains(&l, &a));
	ck_assert_int_eq(parse_guarded("198.18.64.9", &a), SK_ADDR_OK);
	ck_assert(!sk_prefix_list_contains(&l, &a));
	snprintf(text + n, sizeof(text) - n, " 2001:2::/48");
	ck_assert_int_eq(sk_prefix_list_parse(text, &l, &w), SK_ADDR_EFULL);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_uint_eq(w.index, SK_PREFIX_LIST_MAX + 1);
	sk_prefix_list_strerror(text, &w, msg, sizeof(msg));
	ck_assert_str_eq(msg, "entry 65 \"2001:2::/48\": too many prefixes");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The limiter key                                                           */
/* ------------------------------------------------------------------------ */

static const struct key_case {
	const char *a, *b;
	unsigned v6_prefix;
	bool same;
} keys[] = {
	{"2001:2:0:1::1", "2001:2:0:1:ffff:ffff:ffff:ffff", 64, true},
	{"2001:2:0:1::1", "2001:2:0:1:8000::", 64, true},
	{"2001:2:0:1::1", "2001:2:0:2::1", 64, false},
	{"2001:2:0:1::1", "2001:2:0:1::2", 128, false},
	{"2001:2:0:1::1", "2001:2:0:1::1", 128, true},
	{"2001:2:0:1::1", "2001:2:0:2::1", 48, true},
	{"2001:db8:0:1::1", "2001:db8:1:1::1", 48, false},
	{"2001:2:0:1::1", "2001:2:0:1:0:1::1", 80, true},
	{"2001:2:0:1::1", "2001:2:0:1:0:1::1", 96, false},
	{"2001:2::1", "2001:db8::1", 0, true},
	{"2001:2::1", "2001:db8::1", 200, false},
	/* IPv4 is whole, whatever the IPv6 prefix */
	{"198.18.0.1", "198.18.0.2", 64, false},
	{"198.18.0.1", "198.18.0.2", 0, false},
	{"198.18.0.1", "198.18.0.1", 64, true},
	/* a v4-mapped address keys as its IPv4 address, not as one /64 */
	{"::ffff:198.18.0.1", "198.18.0.1", 64, true},
	{"::ffff:198.18.0.1", "::ffff:198.18.0.2", 64, false},
	{"198.18.0.1", "2001:2::", 64, false},
};

START_TEST(test_key)
{
	const struct key_case *k = &keys[_i];
	struct sk_addr a, b, ka, kb;

	ck_assert_int_eq(parse_guarded(k->a, &a), SK_ADDR_OK);
	ck_assert_int_eq(parse_guarded(k->b, &b), SK_ADDR_OK);
	ka = sk_addr_key(&a, k->v6_prefix);
	kb = sk_addr_key(&b, k->v6_prefix);
	ck_assert_msg(sk_addr_eq(&ka, &kb) == k->same, "%s vs %s /%u", k->a, k->b, k->v6_prefix);
	/* the key is an address of the same family (canonical), memcmp-able */
	ck_assert_uint_eq(ka.family, sk_addr_unmap(&a).family);
	ck_assert(sk_addr_eq(&ka, &kb) == (memcmp(&ka, &kb, sizeof(ka)) == 0));
}
END_TEST

START_TEST(test_key_value)
{
	struct sk_addr a, k, want, none = {0};

	ck_assert_int_eq(parse_guarded("2001:2:0:1:abcd:ef01:2345:6789", &a), SK_ADDR_OK);
	k = sk_addr_key(&a, SK_ADDR_KEY_V6_PREFIX_DEFAULT);
	ck_assert_int_eq(parse_guarded("2001:2:0:1::", &want), SK_ADDR_OK);
	ck_assert(sk_addr_eq(&k, &want));
	k = sk_addr_key(&a, 61); /* 0x0001 -> 0x0000 in the 4th group */
	ck_assert_int_eq(parse_guarded("2001:2::", &want), SK_ADDR_OK);
	ck_assert(sk_addr_eq(&k, &want));
	k = sk_addr_key(&a, 68);
	ck_assert_int_eq(parse_guarded("2001:2:0:1:a000::", &want), SK_ADDR_OK);
	ck_assert(sk_addr_eq(&k, &want));
	k = sk_addr_key(&none, 64);
	ck_assert_uint_eq(k.family, SK_ADDR_NONE);
}
END_TEST

static Suite *
addr_suite(void)
{
	Suite *s = suite_create("addr");
	TCase *tc = tcase_create("addr");

	tcase_add_checked_fixture(tc, guard_setup, NULL);
	tcase_add_loop_test(tc, test_good_roundtrip, 0, (int)(sizeof(good) / sizeof(good[0])));
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_length_not_nul);
	tcase_add_test(tc, test_helpers);
	tcase_add_loop_test(tc, test_port, 0, (int)(sizeof(ports) / sizeof(ports[0])));
	tcase_add_loop_test(tc, test_prefix, 0, (int)(sizeof(prefixes) / sizeof(prefixes[0])));
	tcase_add_loop_test(tc, test_prefix_bad, 0,
			    (int)(sizeof(bad_prefixes) / sizeof(bad_prefixes[0])));
	tcase_add_test(tc, test_list);
	tcase_add_loop_test(tc, test_list_bad, 0, (int)(sizeof(bad_lists) / sizeof(bad_lists[0])));
	tcase_add_test(tc, test_list_full);
	tcase_add_loop_test(tc, test_key, 0, (int)(sizeof(keys) / sizeof(keys[0])));
	tcase_add_test(tc, test_key_value);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(addr_suite)
