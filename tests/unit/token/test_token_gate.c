/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_token_gate.c - the gate claim ("gate":"<item id>"): read by
 * sk_token_verify_claims() (and the key ring's variant) in the claims pass,
 * every bad shape and a duplicate refused as malformed, minted by
 * sk_token_mint() and read back, and sk_token_verify() unchanged by it.
 * Tokens are signed here with OpenSSL's own HMAC() so the payloads can be
 * any bytes.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sk_common.h"
#include "sk_token.h"
#include "sk_test.h"

#define NOW   1700000000LL
#define SKEW  30u
#define HS256 "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

static const char secret[] = "gate-secret-0123456789-abcdefghijklmnopq";

static size_t
b64url(const void *in, size_t n, char *out)
{
	unsigned char tmp[2048];
	size_t len;

	ck_assert_uint_lt(n, 1500);
	len = (size_t)EVP_EncodeBlock(tmp, in, (int)n);
	while (len > 0 && tmp[len - 1] == '=')
		len--;
	for (size_t i = 0; i < len; i++)
		out[i] = tmp[i] == '+' ? '-' : tmp[i] == '/' ? '_' : (char)tmp[i];
	out[len] = '\0';
	return len;
}

/* sign - HS256 token of header @hdr and payload @pay under the secret. */
static size_t
sign(const char *hdr, const char *pay, char *out)
{
	unsigned char mac[32];
	unsigned int maclen = 0;
	size_t o = b64url(hdr, strlen(hdr), out);

	out[o++] = '.';
	o += b64url(pay, strlen(pay), out + o);
	HMAC(EVP_sha256(), secret, (int)strlen(secret), (unsigned char *)out, o, mac, &maclen);
	out[o++] = '.';
	o += b64url(mac, 32, out + o);
	return o;
}

static struct sk_token_key *
new_key(void)
{
	struct sk_token_key *k = NULL;

	ck_assert_int_eq(sk_token_key_create(secret, strlen(secret), &k), 0);
	return k;
}

#define P(body) "{\"sub\":\"42\",\"exp\":1700000060" body "}"

static const struct {
	const char *pay;
	enum sk_token_status want;
	uint64_t gate; /* when SK_TOKEN_OK */
} cases[] = {
	{P(""), SK_TOKEN_OK, 0},
	{P(",\"gate\":\"7\""), SK_TOKEN_OK, 7},
	{P(",\"gate\":\"9\",\"item\":7"), SK_TOKEN_OK, 9}, /* gate and item are two claims */
	{P(",\"gate\":\"18446744073709551615\""), SK_TOKEN_OK, UINT64_MAX},
	{"{\"gate\":\"3\",\"sub\":\"42\",\"exp\":1700000060}", SK_TOKEN_OK, 3}, /* first member */
	{P(",\"gate\" : \"5\" "), SK_TOKEN_OK, 5},				/* blanks */
	{P(",\"Gate\":7"), SK_TOKEN_OK, 0},	    /* another claim (keys are byte for byte) */
	{P(",\"x\":{\"gate\":7}"), SK_TOKEN_OK, 0}, /* nested: not the claim */
	/* bad shapes: malformed like any bad claim */
	{P(",\"gate\":7"), SK_TOKEN_E_MALFORMED, 0},	       /* a number, not a string */
	{P(",\"gate\":\"\""), SK_TOKEN_E_MALFORMED, 0},	       /* empty */
	{P(",\"gate\":\"0\""), SK_TOKEN_E_MALFORMED, 0},       /* no item 0 */
	{P(",\"gate\":\"07\""), SK_TOKEN_E_MALFORMED, 0},      /* leading zero */
	{P(",\"gate\":\"-7\""), SK_TOKEN_E_MALFORMED, 0},      /* sign */
	{P(",\"gate\":\"+7\""), SK_TOKEN_E_MALFORMED, 0},      /* sign */
	{P(",\"gate\":\" 7\""), SK_TOKEN_E_MALFORMED, 0},      /* blank inside */
	{P(",\"gate\":\"7a\""), SK_TOKEN_E_MALFORMED, 0},      /* not decimal */
	{P(",\"gate\":\"\\u0037\""), SK_TOKEN_E_MALFORMED, 0}, /* escaped */
	{P(",\"gate\":\"18446744073709551616\""), SK_TOKEN_E_MALFORMED, 0}, /* overflow */
	{P(",\"gate\":true"), SK_TOKEN_E_MALFORMED, 0},
	{P(",\"gate\":null"), SK_TOKEN_E_MALFORMED, 0},
	{P(",\"gate\":[\"7\"]"), SK_TOKEN_E_MALFORMED, 0},
	{P(",\"gate\":{\"item\":\"7\"}"), SK_TOKEN_E_MALFORMED, 0},
	{P(",\"gate\":\"7"), SK_TOKEN_E_MALFORMED, 0},			/* unterminated */
	{P(",\"gate\":\"7\",\"gate\":\"7\""), SK_TOKEN_E_MALFORMED, 0}, /* duplicate */
	{P(",\"gate\":\"7\",\"gate\":\"8\""), SK_TOKEN_E_MALFORMED, 0}, /* duplicate */
	{P(",\"g\\u0061te\":\"7\""), SK_TOKEN_E_MALFORMED, 0},		/* escaped key */
	/* the other claims' order is kept: a bad gate does not hide them */
	{"{\"gate\":\"7\",\"exp\":1700000060}", SK_TOKEN_E_NO_SUB, 0},
	{"{\"sub\":\"42\",\"gate\":\"7\",\"exp\":1690000000}", SK_TOKEN_E_EXPIRED, 0},
};

/* The table, through both variants and through plain sk_token_verify(). */
START_TEST(test_gate_table)
{
	struct sk_token_key *k = new_key();
	struct sk_token_ring r;
	char tok[SK_TOKEN_MAX_LEN + 1];
	size_t n = sign(HS256, cases[_i].pay, tok);
	struct sk_token_verified v = {.user = 1234, .gate = 1234};
	uint64_t user = 99;

	ck_assert_int_eq(sk_token_verify_claims(k, tok, n, 7, NOW, SKEW, &v), cases[_i].want);
	if (cases[_i].want == SK_TOKEN_OK) {
		ck_assert_uint_eq(v.user, 42);
		ck_assert_uint_eq(v.gate, cases[_i].gate);
	} else {
		ck_assert_uint_eq(v.user, 1234); /* untouched */
		ck_assert_uint_eq(v.gate, 1234);
	}
	/* the old interface: same status, same user, nothing else */
	ck_assert_int_eq(sk_token_verify(k, tok, n, 7, NOW, SKEW, &user), cases[_i].want);
	ck_assert_uint_eq(user, cases[_i].want == SK_TOKEN_OK ? 42 : 99);

	memset(&r, 0, sizeof(r));
	ck_assert_ptr_nonnull(
		sk_token_key_init(r.k[0].key, sizeof(r.k[0].key), secret, strlen(secret)));
	snprintf(r.k[0].kid, sizeof(r.k[0].kid), "k0");
	r.k[0].kid_len = 2;
	r.n = 1;
	r.dflt = 0;
	r.sign = 0;
	memset(&v, 0, sizeof(v));
	ck_assert_int_eq(sk_token_verify_ring_claims(&r, tok, n, 7, NOW, SKEW, &v), cases[_i].want);
	if (cases[_i].want == SK_TOKEN_OK)
		ck_assert_uint_eq(v.gate, cases[_i].gate);
	sk_token_key_free(k);
}
END_TEST

/* Minted with a gate claim, read back; the claim is where the doc says. */
START_TEST(test_mint_round_trip)
{
	struct sk_token_key *k = new_key();
	char tok[SK_TOKEN_MAX_LEN + 1], pay[512];
	size_t n = 0;
	struct sk_token_claims c = {.user = UINT64_MAX,
				    .item = UINT64_MAX,
				    .has_item = true,
				    .gate = UINT64_MAX,
				    .has_gate = true,
				    .iat = SK_TOKEN_TIME_MAX,
				    .has_iat = true,
				    .nbf = 0,
				    .has_nbf = true,
				    .exp = SK_TOKEN_TIME_MAX};
	struct sk_token_verified v = {0, 0};

	/* the longest payload of all: every claim at its widest */
	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), &n), 0);
	ck_assert_int_eq(sk_token_verify_claims(k, tok, n, UINT64_MAX, NOW, SKEW, &v), SK_TOKEN_OK);
	ck_assert_uint_eq(v.user, UINT64_MAX);
	ck_assert_uint_eq(v.gate, UINT64_MAX);

	const char *d1 = strchr(tok, '.'), *d2 = strchr(d1 + 1, '.');
	char b64[512];
	size_t bl = (size_t)(d2 - d1 - 1);
	memcpy(b64, d1 + 1, bl);
	for (size_t i = 0; i < bl; i++)
		b64[i] = b64[i] == '-' ? '+' : b64[i] == '_' ? '/' : b64[i];
	while (bl % 4)
		b64[bl++] = '=';
	b64[bl] = '\0';
	ck_assert_int_gt(EVP_DecodeBlock((unsigned char *)pay, (unsigned char *)b64, (int)bl), 0);
	ck_assert_ptr_nonnull(strstr(pay, ",\"gate\":\"18446744073709551615\","));

	/* a small one, and one without the claim */
	c = (struct sk_token_claims){.user = 5, .gate = 7, .has_gate = true, .exp = NOW + 60};
	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), &n), 0);
	ck_assert_int_eq(sk_token_verify_claims(k, tok, n, 7, NOW, SKEW, &v), SK_TOKEN_OK);
	ck_assert_uint_eq(v.user, 5);
	ck_assert_uint_eq(v.gate, 7);
	c.has_gate = false;
	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), &n), 0);
	ck_assert_int_eq(sk_token_verify_claims(k, tok, n, 7, NOW, SKEW, &v), SK_TOKEN_OK);
	ck_assert_uint_eq(v.gate, 0);

	/* a gate claim of item 0 is not minted */
	c.has_gate = true;
	c.gate = 0;
	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), &n), -EINVAL);
	ck_assert_str_eq(tok, "");
	sk_token_key_free(k);
}
END_TEST

/* The unverified peek at the user still reads a minted token with a gate. */
START_TEST(test_peek_with_gate)
{
	struct sk_token_key *k = new_key();
	char tok[SK_TOKEN_MAX_LEN + 1];
	uint64_t user = 0;
	struct sk_token_claims c = {.user = 77,
				    .gate = 3,
				    .has_gate = true,
				    .item = 3,
				    .has_item = true,
				    .exp = NOW + 60};

	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), NULL), 0);
	ck_assert_int_eq(sk_token_peek_user(tok, strlen(tok), &user), 0);
	ck_assert_uint_eq(user, 77);
	sk_token_key_free(k);
}
END_TEST

/* The peek's fast path stops at the sub's closing quote: ids of every
 * length (1..20 digits, so every group count) read as the full verify
 * reads them. */
START_TEST(test_peek_every_length)
{
	struct sk_token_key *k = new_key();
	char tok[SK_TOKEN_MAX_LEN + 1];
	uint64_t id = 7;

	for (unsigned digits = 1; digits <= 20; digits++) {
		struct sk_token_claims c = {.user = id, .exp = NOW + 60};
		uint64_t peeked = 0, verified = 0;

		ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), NULL), 0);
		ck_assert_int_eq(sk_token_peek_user(tok, strlen(tok), &peeked), 0);
		ck_assert_int_eq(sk_token_verify(k, tok, strlen(tok), 0, NOW, 0, &verified),
				 SK_TOKEN_OK);
		ck_assert_uint_eq(peeked, id);
		ck_assert_uint_eq(verified, id);
		id = digits < 19 ? id * 10 + 3 : UINT64_MAX; /* one digit more */
	}
	sk_token_key_free(k);
}
END_TEST

static Suite *
gate_suite(void)
{
	Suite *s = suite_create("token_gate");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_gate_table, 0, (int)SK_ARRAY_SIZE(cases));
	tcase_add_test(tc, test_mint_round_trip);
	tcase_add_test(tc, test_peek_with_gate);
	tcase_add_test(tc, test_peek_every_length);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(gate_suite)
