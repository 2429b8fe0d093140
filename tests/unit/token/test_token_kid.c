/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_token_kid.c - key rings: the header's kid selects the key (no kid:
 * the default key; a known kid; an unknown or removed kid: 401
 * unknown_kid, no HMAC spent; a kid of the wrong key: bad signature),
 * minting with a kid, bad kids refused, keys built in caller memory.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "sk_common.h"
#include "sk_token.h"
#include "sk_test.h"

#define NOW 1700000000LL

static const char s_old[] = "old-secret-0123456789-abcdefghijklmnopqrst";
static const char s_new[] = "new-secret-0123456789-abcdefghijklmnopqrst";

/* ring_add - put @secret under @kid in slot @i of @r. */
static void
ring_add(struct sk_token_ring *r, int i, const char *kid, const char *secret)
{
	snprintf(r->k[i].kid, sizeof(r->k[i].kid), "%s", kid);
	r->k[i].kid_len = (uint8_t)strlen(kid);
	ck_assert_ptr_nonnull(
		sk_token_key_init(r->k[i].key, sizeof(r->k[i].key), secret, strlen(secret)));
	r->n++;
}

/* mint - a token of user 42 for item 7 under @secret, with @kid (NULL: none). */
static void
mint(const char *secret, const char *kid, char *out)
{
	struct sk_token_key *key;
	struct sk_token_claims c = {.user = 42, .item = 7, .has_item = true, .exp = NOW + 60};

	ck_assert_int_eq(sk_token_key_create(secret, strlen(secret), &key), 0);
	ck_assert_int_eq(sk_token_mint_kid(key, kid, &c, out, SK_TOKEN_MAX_LEN + 1, NULL), 0);
	sk_token_key_free(key);
}

static const struct {
	const char *secret, *kid;
	enum sk_token_status want;
} cases[] = {
	{s_old, NULL, SK_TOKEN_OK},		    /* no kid: the default key */
	{s_old, "default", SK_TOKEN_OK},	    /* its kid */
	{s_new, "k2", SK_TOKEN_OK},		    /* a known kid */
	{s_new, NULL, SK_TOKEN_E_SIGNATURE},	    /* new key, no kid: default key */
	{s_old, "k2", SK_TOKEN_E_SIGNATURE},	    /* a kid of another key */
	{s_old, "k3", SK_TOKEN_E_UNKNOWN_KID},	    /* unknown */
	{s_old, "DEFAULT", SK_TOKEN_E_UNKNOWN_KID}, /* byte for byte */
	{s_old, "defaul", SK_TOKEN_E_UNKNOWN_KID},  /* a prefix is not the kid */
	{s_old, "a.b_c-9", SK_TOKEN_E_UNKNOWN_KID}, /* every allowed character */
};

START_TEST(test_kid_selects)
{
	struct sk_token_ring r;
	char tok[SK_TOKEN_MAX_LEN + 1];
	uint64_t user = 0;

	memset(&r, 0, sizeof(r));
	ring_add(&r, 0, "default", s_old);
	ring_add(&r, 3, "k2", s_new);
	r.dflt = 0;
	r.sign = 3;
	mint(cases[_i].secret, cases[_i].kid, tok);
	ck_assert_int_eq(sk_token_verify_ring(&r, tok, strlen(tok), 7, NOW, 5, &user),
			 cases[_i].want);
	if (cases[_i].want == SK_TOKEN_OK)
		ck_assert_uint_eq(user, 42);
}
END_TEST

/* A removed key, and no default key: its tokens are 401 unknown_kid. */
START_TEST(test_removed_and_no_default)
{
	struct sk_token_ring r;
	char tok[SK_TOKEN_MAX_LEN + 1], plain[SK_TOKEN_MAX_LEN + 1];
	uint64_t user = 0;

	memset(&r, 0, sizeof(r));
	ring_add(&r, 0, "default", s_old);
	ring_add(&r, 1, "k2", s_new);
	r.dflt = 0;
	mint(s_new, "k2", tok);
	mint(s_old, NULL, plain);
	ck_assert_int_eq(sk_token_verify_ring(&r, tok, strlen(tok), 7, NOW, 5, &user), SK_TOKEN_OK);
	memset(&r.k[1], 0, sizeof(r.k[1])); /* removed */
	r.n--;
	ck_assert_int_eq(sk_token_verify_ring(&r, tok, strlen(tok), 7, NOW, 5, &user),
			 SK_TOKEN_E_UNKNOWN_KID);
	ck_assert_int_eq(sk_token_verify_ring(&r, plain, strlen(plain), 7, NOW, 5, &user),
			 SK_TOKEN_OK);
	r.dflt = -1;
	ck_assert_int_eq(sk_token_verify_ring(&r, plain, strlen(plain), 7, NOW, 5, &user),
			 SK_TOKEN_E_UNKNOWN_KID);
	ck_assert_str_eq(sk_token_status_str(SK_TOKEN_E_UNKNOWN_KID), "unknown_kid");
}
END_TEST

/* A kid changes nothing for the single-key path: sk_token_verify() ignores it. */
START_TEST(test_single_key_ignores_kid)
{
	struct sk_token_key *key;
	char tok[SK_TOKEN_MAX_LEN + 1];
	uint64_t user = 0;

	mint(s_old, "whatever", tok);
	ck_assert_int_eq(sk_token_key_create(s_old, strlen(s_old), &key), 0);
	ck_assert_int_eq(sk_token_verify(key, tok, strlen(tok), 7, NOW, 5, &user), SK_TOKEN_OK);
	sk_token_key_free(key);
}
END_TEST

static const char *const bad_kids[] = {"",    "a b", "a\"b",
				       "k/2", "é",   "0123456789012345678901234567890123"};

START_TEST(test_bad_kid_refused)
{
	struct sk_token_key *key;
	struct sk_token_claims c = {.user = 42, .exp = NOW + 60};
	char tok[SK_TOKEN_MAX_LEN + 1];

	ck_assert_int_eq(sk_token_key_create(s_old, strlen(s_old), &key), 0);
	ck_assert_int_eq(sk_token_mint_kid(key, bad_kids[_i], &c, tok, sizeof(tok), NULL), -EINVAL);
	sk_token_key_free(key);
}
END_TEST

/* A header kid that is not a key id (number, escaped, empty) matches no key;
 * a duplicated kid is a bad header. */
START_TEST(test_bad_header_kid)
{
	static const char *const hdrs[] = {
		"{\"alg\":\"HS256\",\"kid\":7}",
		"{\"alg\":\"HS256\",\"kid\":\"k\\u0032\"}",
		"{\"alg\":\"HS256\",\"kid\":\"\"}",
		"{\"alg\":\"HS256\",\"kid\":\"a\",\"kid\":\"b\"}",
	};
	struct sk_token_ring r;
	char tok[256];
	uint64_t user;

	memset(&r, 0, sizeof(r));
	ring_add(&r, 0, "default", s_old);
	r.dflt = 0;
	/* base64url of the header by hand, then a payload and a dummy signature */
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	const unsigned char *h = (const unsigned char *)hdrs[_i];
	size_t hl = strlen(hdrs[_i]), o = 0;
	for (size_t i = 0; i < hl; i += 3) {
		uint32_t v = (uint32_t)h[i] << 16 | (i + 1 < hl ? (uint32_t)h[i + 1] << 8 : 0) |
			     (i + 2 < hl ? h[i + 2] : 0);
		size_t chars = i + 2 < hl ? 4 : i + 1 < hl ? 3 : 2;
		for (size_t k = 0; k < chars; k++)
			tok[o++] = alphabet[(v >> (18 - 6 * k)) & 63];
	}
	strcpy(tok + o, ".eyJzdWIiOiI0MiJ9.AAAA");
	ck_assert_int_eq(sk_token_verify_ring(&r, tok, strlen(tok), 7, NOW, 5, &user),
			 _i == 3 ? SK_TOKEN_E_HEADER : SK_TOKEN_E_UNKNOWN_KID);
}
END_TEST

START_TEST(test_key_in_place)
{
	uint64_t mem[SK_TOKEN_KEY_SIZE / 8], copy[SK_TOKEN_KEY_SIZE / 8];
	struct sk_token_key *heap;
	char tok[SK_TOKEN_MAX_LEN + 1];
	uint64_t user = 0;

	ck_assert_ptr_null(sk_token_key_init(mem, sizeof(mem), "short", 5));
	ck_assert_ptr_null(sk_token_key_init(mem, 16, s_old, strlen(s_old)));
	ck_assert_ptr_null(
		sk_token_key_init((char *)mem + 1, sizeof(mem) - 8, s_old, strlen(s_old)));
	const struct sk_token_key *k = sk_token_key_init(mem, sizeof(mem), s_old, strlen(s_old));
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(sk_token_key_create(s_old, strlen(s_old), &heap), 0);
	ck_assert_ptr_nonnull(sk_token_key_copy(copy, sizeof(copy), heap));
	mint(s_old, NULL, tok);
	ck_assert_int_eq(sk_token_verify(k, tok, strlen(tok), 7, NOW, 5, &user), SK_TOKEN_OK);
	ck_assert_int_eq(sk_token_verify((const struct sk_token_key *)copy, tok, strlen(tok), 7,
					 NOW, 5, &user),
			 SK_TOKEN_OK);
	sk_token_key_free(heap);
}
END_TEST

static Suite *
kid_suite(void)
{
	Suite *s = suite_create("token_kid");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_kid_selects, 0, (int)SK_ARRAY_SIZE(cases));
	tcase_add_test(tc, test_removed_and_no_default);
	tcase_add_test(tc, test_single_key_ignores_kid);
	tcase_add_loop_test(tc, test_bad_kid_refused, 0, (int)SK_ARRAY_SIZE(bad_kids));
	tcase_add_loop_test(tc, test_bad_header_kid, 0, 4);
	tcase_add_test(tc, test_key_in_place);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(kid_suite)
