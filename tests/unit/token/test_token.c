/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_token.c - sk_token: the verification table, mint round trips, the
 * HMAC cross-check against OpenSSL's one-shot HMAC(), X-User-Id parsing.
 *
 * Every token under test is copied so that it ends right before a PROT_NONE
 * page: any read past its length crashes the test.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sk_common.h"
#include "sk_token.h"
#include "sk_test.h"

#define NOW  1700000000LL
#define SKEW 30u

static const char secret[] = "test-secret-0123456789-abcdefghijklmnop";
static const char other_secret[] = "another-secret-0123456789-abcdefghijklm";

/* ------------------------------------------------------------------------
 * Helpers: base64url, signing with OpenSSL's HMAC(), guard-page buffers.
 */

static size_t
b64url(const void *in, size_t n, char *out)
{
	unsigned char tmp[4096];
	size_t i, len;

	ck_assert_uint_lt(n, 3000);
	len = (size_t)EVP_EncodeBlock(tmp, in, (int)n);
	while (len > 0 && tmp[len - 1] == '=')
		len--;
	for (i = 0; i < len; i++)
		out[i] = tmp[i] == '+' ? '-' : tmp[i] == '/' ? '_' : (char)tmp[i];
	out[len] = '\0';
	return len;
}

enum sig_mode { SIG_GOOD, SIG_WRONG_KEY, SIG_EMPTY, SIG_FLIP };

/* make_token - b64url(hdr) "." b64url(pay) "." sig into @out. */
static size_t
make_token(const char *hdr, const char *pay, enum sig_mode mode, char *out)
{
	unsigned char mac[32];
	unsigned int maclen = 0;
	size_t o = 0;
	const char *k = mode == SIG_WRONG_KEY ? other_secret : secret;

	o += b64url(hdr, strlen(hdr), out + o);
	out[o++] = '.';
	o += b64url(pay, strlen(pay), out + o);
	HMAC(EVP_sha256(), k, (int)strlen(k), (unsigned char *)out, o, mac, &maclen);
	ck_assert_uint_eq(maclen, 32);
	out[o++] = '.';
	if (mode != SIG_EMPTY) {
		size_t s = o;

		o += b64url(mac, 32, out + o);
		if (mode == SIG_FLIP)
			out[s + 5] = out[s + 5] == 'A' ? 'B' : 'A';
	}
	out[o] = '\0';
	return o;
}

struct guard {
	char *base;
	size_t size;
};

/* guarded - a copy of @p (@n bytes) ending right before a PROT_NONE page. */
static const char *
guarded(struct guard *g, const char *p, size_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t data = ((n + (size_t)pg - 1) / (size_t)pg + 1) * (size_t)pg;
	char *dst;

	g->size = data + (size_t)pg;
	g->base = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(g->base, MAP_FAILED);
	ck_assert_int_eq(mprotect(g->base + data, (size_t)pg, PROT_NONE), 0);
	dst = g->base + data - n;
	memcpy(dst, p, n);
	return dst;
}

static void
unguard(struct guard *g)
{
	munmap(g->base, g->size);
}

static struct sk_token_key *
new_key(const char *s)
{
	struct sk_token_key *k = NULL;

	ck_assert_int_eq(sk_token_key_create(s, strlen(s), &k), 0);
	ck_assert_ptr_nonnull(k);
	return k;
}

static enum sk_token_status
verify_guarded(const struct sk_token_key *k, const char *tok, size_t len, uint64_t item,
	       int64_t now, uint32_t skew, uint64_t *user)
{
	struct guard g;
	enum sk_token_status st;

	st = sk_token_verify(k, guarded(&g, tok, len), len, item, now, skew, user);
	unguard(&g);
	return st;
}

/* ------------------------------------------------------------------------
 * The verification table.
 */

#define HS256	"{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
#define EXP_OK	"1700000060"
#define P(body) "{\"sub\":\"42\",\"exp\":" EXP_OK body "}"

struct vcase {
	const char *name;
	const char *hdr;   /* JSON header, or NULL when raw is used */
	const char *pay;   /* JSON payload */
	enum sig_mode sig; /* how to sign */
	const char *raw;   /* literal token instead of hdr/pay */
	uint64_t item;	   /* request item */
	int64_t now;
	uint32_t skew;
	enum sk_token_status want;
	uint64_t want_user;
};

static const struct vcase vcases[] = {
	/* valid */
	{"sub string", HS256, P(""), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_OK, 42},
	{"sub number", HS256, "{\"sub\":42,\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_OK, 42},
	{"sub max u64", HS256, "{\"sub\":\"18446744073709551615\",\"exp\":" EXP_OK "}", SIG_GOOD,
	 NULL, 7, NOW, SKEW, SK_TOKEN_OK, UINT64_MAX},
	{"sub max u64 number", HS256, "{\"sub\":18446744073709551615,\"exp\":" EXP_OK "}", SIG_GOOD,
	 NULL, 7, NOW, SKEW, SK_TOKEN_OK, UINT64_MAX},
	{"typ absent", "{\"alg\":\"HS256\"}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_OK, 42},
	{"typ lower case", "{\"typ\":\"jwt\",\"alg\":\"HS256\"}", P(""), SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_OK, 42},
	{"header kid skipped", "{\"alg\":\"HS256\",\"kid\":\"k1\\\"x\"}", P(""), SIG_GOOD, NULL, 7,
	 NOW, SKEW, SK_TOKEN_OK, 42},
	{"header whitespace", " { \"alg\" : \"HS256\" } \n", P(""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_OK, 42},
	{"unknown claims skipped", HS256,
	 "{\"x\":{\"a\":[1,-2.5e3,{\"b\":\"c\\\"}]\\\\\"}],\"d\":null,\"e\":true,\"f\":false},"
	 "\"sub\":\"5\",\"y\":\"\\u00e9\\n\\/\",\"z\":[],\"w\":{},\"exp\":" EXP_OK "}",
	 SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_OK, 5},
	{"unknown claim with utf-8", HS256, P(",\"name\":\"\xe7\xa7\x92\xe6\x9d\x80\""), SIG_GOOD,
	 NULL, 7, NOW, SKEW, SK_TOKEN_OK, 42},
	{"item matches", HS256, P(",\"item\":7"), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_OK, 42},
	{"item string matches", HS256, P(",\"item\":\"7\""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_OK, 42},
	{"item 0 matches", HS256, P(",\"item\":0"), SIG_GOOD, NULL, 0, NOW, SKEW, SK_TOKEN_OK, 42},
	{"nbf in the past", HS256, P(",\"nbf\":1699999000"), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_OK, 42},
	{"exp fraction", HS256, "{\"sub\":\"42\",\"exp\":1700000060.75}", SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_OK, 42},

	/* exp / nbf at the skew edges: valid iff nbf - skew <= now < exp + skew */
	{"exp = now - skew + 1", HS256, "{\"sub\":\"42\",\"exp\":1699999971}", SIG_GOOD, NULL, 7,
	 NOW, SKEW, SK_TOKEN_OK, 42},
	{"exp = now - skew", HS256, "{\"sub\":\"42\",\"exp\":1699999970}", SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_E_EXPIRED, 0},
	{"exp = now, no skew", HS256, "{\"sub\":\"42\",\"exp\":1700000000}", SIG_GOOD, NULL, 7, NOW,
	 0, SK_TOKEN_E_EXPIRED, 0},
	{"exp = now + 1, no skew", HS256, "{\"sub\":\"42\",\"exp\":1700000001}", SIG_GOOD, NULL, 7,
	 NOW, 0, SK_TOKEN_OK, 42},
	{"exp = now + 0.5 rounds down", HS256, "{\"sub\":\"42\",\"exp\":1700000000.5}", SIG_GOOD,
	 NULL, 7, NOW, 0, SK_TOKEN_E_EXPIRED, 0},
	{"exp long ago", HS256, "{\"sub\":\"42\",\"exp\":0}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_EXPIRED, 0},
	{"nbf = now + skew", HS256, P(",\"nbf\":1700000030"), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_OK, 42},
	{"nbf = now + skew + 1", HS256, P(",\"nbf\":1700000031"), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_NOT_YET_VALID, 0},
	{"nbf = now, no skew", HS256, P(",\"nbf\":1700000000"), SIG_GOOD, NULL, 7, NOW, 0,
	 SK_TOKEN_OK, 42},
	{"nbf = now + 0.5 rounds up", HS256, P(",\"nbf\":1700000000.5"), SIG_GOOD, NULL, 7, NOW, 0,
	 SK_TOKEN_E_NOT_YET_VALID, 0},
	{"skew clamped to a day", HS256, "{\"sub\":\"42\",\"exp\":1699913601}", SIG_GOOD, NULL, 7,
	 NOW, UINT32_MAX, SK_TOKEN_OK, 42},
	{"beyond clamped skew", HS256, "{\"sub\":\"42\",\"exp\":1699913600}", SIG_GOOD, NULL, 7,
	 NOW, UINT32_MAX, SK_TOKEN_E_EXPIRED, 0},

	/* each claim wrong */
	{"no sub", HS256, "{\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_NO_SUB,
	 0},
	{"empty payload object", HS256, "{}", SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_NO_SUB, 0},
	{"sub \"0\"", HS256, "{\"sub\":\"0\",\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_BAD_SUB, 0},
	{"sub 0", HS256, "{\"sub\":0,\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_BAD_SUB, 0},
	{"sub overflow", HS256, "{\"sub\":\"18446744073709551616\",\"exp\":" EXP_OK "}", SIG_GOOD,
	 NULL, 7, NOW, SKEW, SK_TOKEN_E_BAD_SUB, 0},
	{"sub 21 digits", HS256, "{\"sub\":\"100000000000000000000\",\"exp\":" EXP_OK "}", SIG_GOOD,
	 NULL, 7, NOW, SKEW, SK_TOKEN_E_BAD_SUB, 0},
	{"sub negative", HS256, "{\"sub\":-1,\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_BAD_SUB, 0},
	{"sub leading zero", HS256, "{\"sub\":\"042\",\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_E_BAD_SUB, 0},
	{"sub fraction", HS256, "{\"sub\":4.2,\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_BAD_SUB, 0},
	{"sub exponent", HS256, "{\"sub\":4e2,\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_BAD_SUB, 0},
	{"sub empty", HS256, "{\"sub\":\"\",\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_BAD_SUB, 0},
	{"sub blank", HS256, "{\"sub\":\" 42\",\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_BAD_SUB, 0},
	{"sub escaped digit", HS256, "{\"sub\":\"\\u0034\",\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7,
	 NOW, SKEW, SK_TOKEN_E_BAD_SUB, 0},
	{"sub bool", HS256, "{\"sub\":true,\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_BAD_SUB, 0},
	{"sub object", HS256, "{\"sub\":{\"id\":42},\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_E_BAD_SUB, 0},
	{"no exp", HS256, "{\"sub\":\"42\"}", SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_NO_EXP, 0},
	{"exp string", HS256, "{\"sub\":\"42\",\"exp\":\"" EXP_OK "\"}", SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"exp negative", HS256, "{\"sub\":\"42\",\"exp\":-1}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"exp exponent", HS256, "{\"sub\":\"42\",\"exp\":1.7e9}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"exp too far", HS256, "{\"sub\":\"42\",\"exp\":1000000000000}", SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"exp null", HS256, "{\"sub\":\"42\",\"exp\":null}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"nbf string", HS256, P(",\"nbf\":\"1\""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"wrong item", HS256, P(",\"item\":8"), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_WRONG_ITEM,
	 0},
	{"wrong item string", HS256, P(",\"item\":\"70\""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_WRONG_ITEM, 0},
	{"item not a number", HS256, P(",\"item\":\"seven\""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"item negative", HS256, P(",\"item\":-7"), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"expired beats wrong item", HS256, "{\"sub\":\"42\",\"exp\":1,\"item\":8}", SIG_GOOD, NULL,
	 7, NOW, SKEW, SK_TOKEN_E_EXPIRED, 0},

	/* payload JSON */
	{"duplicate sub", HS256, "{\"sub\":\"42\",\"sub\":\"43\",\"exp\":" EXP_OK "}", SIG_GOOD,
	 NULL, 7, NOW, SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"duplicate exp", HS256, P(",\"exp\":1800000000"), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"escaped key", HS256, "{\"s\\u0075b\":\"42\",\"exp\":" EXP_OK "}", SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"payload array", HS256, "[1]", SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"payload not json", HS256, "sub=42", SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_MALFORMED,
	 0},
	{"payload trailing garbage", HS256, P("") "x", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"payload two objects", HS256, P("") "{}", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"payload trailing whitespace ok", HS256, P("") " \r\n\t", SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_OK, 42},
	{"payload unterminated", HS256, "{\"sub\":\"42\",\"exp\":" EXP_OK, SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"payload trailing comma", HS256, P(","), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"payload bad escape", HS256, P(",\"x\":\"\\q\""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"payload short \\u", HS256, P(",\"x\":\"\\u12\""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"payload control char", HS256, P(",\"x\":\"a\tb\""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"payload bad literal", HS256, P(",\"x\":tru"), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"payload bad number", HS256, P(",\"x\":01"), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"payload nesting 16 ok", HS256, P(",\"x\":[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]"), SIG_GOOD,
	 NULL, 7, NOW, SKEW, SK_TOKEN_OK, 42},
	{"payload nesting 17", HS256, P(",\"x\":[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]"), SIG_GOOD,
	 NULL, 7, NOW, SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"payload unbalanced", HS256, P(",\"x\":[{]}"), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},

	/* header and alg */
	{"alg none, no signature", "{\"alg\":\"none\",\"typ\":\"JWT\"}", P(""), SIG_EMPTY, NULL, 7,
	 NOW, SKEW, SK_TOKEN_E_ALG, 0},
	{"alg none, signed", "{\"alg\":\"none\"}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_ALG, 0},
	{"alg RS256", "{\"alg\":\"RS256\",\"typ\":\"JWT\"}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_ALG, 0},
	{"alg HS512", "{\"alg\":\"HS512\"}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_ALG,
	 0},
	{"alg lower case", "{\"alg\":\"hs256\"}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_ALG, 0},
	{"alg escaped", "{\"alg\":\"HS\\u0032\\u0035\\u0036\"}", P(""), SIG_GOOD, NULL, 7, NOW,
	 SKEW, SK_TOKEN_E_ALG, 0},
	{"alg not a string", "{\"alg\":256}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_ALG,
	 0},
	{"no alg", "{\"typ\":\"JWT\"}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_ALG, 0},
	{"empty header object", "{}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_ALG, 0},
	{"alg twice", "{\"alg\":\"HS256\",\"alg\":\"none\"}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_HEADER, 0},
	{"typ JWS", "{\"alg\":\"HS256\",\"typ\":\"JWS\"}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_HEADER, 0},
	{"crit", "{\"alg\":\"HS256\",\"crit\":[\"exp\"]}", P(""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_HEADER, 0},
	{"header not json", "alg=HS256", P(""), SIG_GOOD, NULL, 7, NOW, SKEW, SK_TOKEN_E_HEADER, 0},
	{"header trailing garbage", HS256 "]", P(""), SIG_GOOD, NULL, 7, NOW, SKEW,
	 SK_TOKEN_E_HEADER, 0},

	/* signature */
	{"wrong key", HS256, P(""), SIG_WRONG_KEY, NULL, 7, NOW, SKEW, SK_TOKEN_E_SIGNATURE, 0},
	{"flipped signature", HS256, P(""), SIG_FLIP, NULL, 7, NOW, SKEW, SK_TOKEN_E_SIGNATURE, 0},
	{"empty signature", HS256, P(""), SIG_EMPTY, NULL, 7, NOW, SKEW, SK_TOKEN_E_SIGNATURE, 0},
	{"forged, bad payload: signature first", HS256, "not json at all", SIG_WRONG_KEY, NULL, 7,
	 NOW, SKEW, SK_TOKEN_E_SIGNATURE, 0},
	{"forged, expired: signature first", HS256, "{\"sub\":\"1\",\"exp\":1}", SIG_WRONG_KEY,
	 NULL, 7, NOW, SKEW, SK_TOKEN_E_SIGNATURE, 0},

	/* shape and base64url (raw tokens) */
	{"empty", NULL, NULL, SIG_GOOD, "", 7, NOW, SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"one segment", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9", 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"two segments", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e30", 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"four segments", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e30.AAAA.AAAA", 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"empty header segment", NULL, NULL, SIG_GOOD, ".e30.AAAA", 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"empty payload segment", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9..AAAA", 7, NOW, SKEW,
	 SK_TOKEN_E_MALFORMED, 0},
	{"only dots", NULL, NULL, SIG_GOOD, "..", 7, NOW, SKEW, SK_TOKEN_E_MALFORMED, 0},
	{"padding", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e30=.AAAA", 7, NOW, SKEW,
	 SK_TOKEN_E_BASE64, 0},
	{"standard alphabet +", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e3+0.AAAA", 7, NOW,
	 SKEW, SK_TOKEN_E_BASE64, 0},
	{"standard alphabet /", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e30/.AAAA", 7, NOW,
	 SKEW, SK_TOKEN_E_BASE64, 0},
	{"length 1 mod 4", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e30AA.AAAA", 7, NOW, SKEW,
	 SK_TOKEN_E_BASE64, 0},
	{"non-canonical tail bits", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e31.AAAA", 7, NOW,
	 SKEW, SK_TOKEN_E_BASE64, 0},
	{"space inside", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e3 0.AAAA", 7, NOW, SKEW,
	 SK_TOKEN_E_BASE64, 0},
	{"NUL inside", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e3\0000.AAAA", 7, NOW, SKEW,
	 SK_TOKEN_E_BASE64, 0},
	{"bad base64 in signature", NULL, NULL, SIG_GOOD, "eyJhbGciOiJIUzI1NiJ9.e30.AA*A", 7, NOW,
	 SKEW, SK_TOKEN_E_BASE64, 0},
};

/* Raw cases with an embedded NUL need their real length. */
static size_t
raw_len(const struct vcase *c)
{
	if (strcmp(c->name, "NUL inside") == 0)
		return sizeof("eyJhbGciOiJIUzI1NiJ9.e3\0000.AAAA") - 1;
	return strlen(c->raw);
}

START_TEST(test_verify_table)
{
	const struct vcase *c = &vcases[_i];
	struct sk_token_key *k = new_key(secret);
	char tok[4096];
	size_t len;
	uint64_t user = 0xdeadbeef;
	enum sk_token_status st;

	if (c->raw != NULL) {
		len = raw_len(c);
		memcpy(tok, c->raw, len);
	} else {
		len = make_token(c->hdr, c->pay, c->sig, tok);
	}
	st = verify_guarded(k, tok, len, c->item, c->now, c->skew, &user);
	ck_assert_msg(st == c->want, "case '%s': got %s, want %s", c->name, sk_token_status_str(st),
		      sk_token_status_str(c->want));
	if (c->want == SK_TOKEN_OK)
		ck_assert_msg(user == c->want_user, "case '%s': user %" PRIu64, c->name, user);
	else
		ck_assert_msg(user == 0xdeadbeef, "case '%s': user written on failure", c->name);
	sk_token_key_free(k);
}
END_TEST

/* Trailing bytes after a valid token, and every truncated prefix of it. */
START_TEST(test_trailing_and_prefixes)
{
	struct sk_token_key *k = new_key(secret);
	char tok[2048];
	size_t len, n;
	uint64_t user;
	enum sk_token_status st;
	static const char *const tails[] = {" ", "\r\n", ".", "A", "=", "\t"};

	len = make_token(HS256, P(""), SIG_GOOD, tok);
	ck_assert_int_eq(verify_guarded(k, tok, len, 7, NOW, SKEW, &user), SK_TOKEN_OK);
	for (n = 0; n < SK_ARRAY_SIZE(tails); n++) {
		char t[2048];

		memcpy(t, tok, len);
		memcpy(t + len, tails[n], strlen(tails[n]));
		st = verify_guarded(k, t, len + strlen(tails[n]), 7, NOW, SKEW, &user);
		ck_assert_msg(st != SK_TOKEN_OK, "tail '%s' accepted", tails[n]);
	}
	for (n = 0; n < len; n++) {
		st = verify_guarded(k, tok, n, 7, NOW, SKEW, &user);
		ck_assert_msg(st != SK_TOKEN_OK, "prefix of %zu bytes accepted", n);
	}
	sk_token_key_free(k);
}
END_TEST

/* Oversized: a token of up to SK_TOKEN_MAX_LEN bytes passes, a longer one not. */
START_TEST(test_length_limit)
{
	struct sk_token_key *k = new_key(secret);
	char pay[1024], tok[2048];
	size_t len, best = 0;
	uint64_t user = 0;
	int pad;

	/* grow an ignored claim until the token is just over SK_TOKEN_MAX_LEN */
	for (pad = 1; pad < 800; pad++) {
		snprintf(pay, sizeof(pay), "{\"sub\":\"9\",\"exp\":%s,\"pad\":\"%0*d\"}", EXP_OK,
			 pad, 0);
		len = make_token(HS256, pay, SIG_GOOD, tok);
		if (len > SK_TOKEN_MAX_LEN) {
			ck_assert_int_eq(verify_guarded(k, tok, len, 7, NOW, SKEW, &user),
					 SK_TOKEN_E_TOO_LONG);
			break;
		}
		user = 0;
		ck_assert_int_eq(verify_guarded(k, tok, len, 7, NOW, SKEW, &user), SK_TOKEN_OK);
		ck_assert_uint_eq(user, 9);
		best = len;
	}
	ck_assert_int_lt(pad, 800);
	ck_assert_uint_ge(best, SK_TOKEN_MAX_LEN - 2); /* base64 grows by 1-2 chars a byte */
	ck_assert_int_eq(sk_token_verify(k, tok, 1u << 20, 7, NOW, SKEW, &user),
			 SK_TOKEN_E_TOO_LONG);
	ck_assert_int_eq(sk_token_verify(k, NULL, 0, 7, NOW, SKEW, &user), SK_TOKEN_E_MALFORMED);
	sk_token_key_free(k);
}
END_TEST

/* ------------------------------------------------------------------------
 * Mint round trips and the HMAC cross-check.
 */

/* xorshift64*, fixed seed: reproducible "random" inputs. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

START_TEST(test_mint_roundtrip)
{
	struct sk_token_key *k = new_key(secret);
	uint64_t seed = 0x5eed0001, user;
	char tok[SK_TOKEN_MAX_LEN + 1];
	size_t len;
	int i;

	for (i = 0; i < 2000; i++) {
		struct sk_token_claims c = {0};
		uint64_t item = rnd(&seed);

		c.user = rnd(&seed) >> (rnd(&seed) % 64);
		if (c.user == 0)
			c.user = 1;
		c.exp = NOW + 1 + (int64_t)(rnd(&seed) % 100000);
		c.has_item = rnd(&seed) & 1;
		c.item = item;
		c.has_nbf = rnd(&seed) & 1;
		c.nbf = NOW - (int64_t)(rnd(&seed) % 1000);
		c.has_iat = rnd(&seed) & 1;
		c.iat = NOW;
		ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), &len), 0);
		ck_assert_uint_eq(len, strlen(tok));
		user = 0;
		ck_assert_int_eq(verify_guarded(k, tok, len, item, NOW, 0, &user), SK_TOKEN_OK);
		ck_assert_uint_eq(user, c.user);
		if (c.has_item)
			ck_assert_int_eq(verify_guarded(k, tok, len, item + 1, NOW, 0, &user),
					 SK_TOKEN_E_WRONG_ITEM);
		ck_assert_int_eq(verify_guarded(k, tok, len, item, c.exp, 0, &user),
				 SK_TOKEN_E_EXPIRED);
	}
	sk_token_key_free(k);
}
END_TEST

START_TEST(test_mint_errors)
{
	struct sk_token_key *k = new_key(secret);
	struct sk_token_claims c = {.user = 1, .exp = NOW};
	char tok[SK_TOKEN_MAX_LEN + 1];
	size_t len;

	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), &len), 0);
	ck_assert_int_eq(sk_token_mint(k, &c, tok, len, NULL), -ENOSPC);
	ck_assert_str_eq(tok, "");
	ck_assert_int_eq(sk_token_mint(k, &c, tok, len + 1, NULL), 0);
	c.user = 0;
	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), NULL), -EINVAL);
	c.user = 1;
	c.exp = -1;
	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), NULL), -EINVAL);
	c.exp = SK_TOKEN_TIME_MAX + 1;
	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), NULL), -EINVAL);
	c.exp = NOW;
	c.has_nbf = true;
	c.nbf = -5;
	ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), NULL), -EINVAL);
	ck_assert_int_eq(sk_token_mint(NULL, &c, tok, sizeof(tok), NULL), -EINVAL);
	ck_assert_int_eq(sk_token_mint(k, NULL, tok, sizeof(tok), NULL), -EINVAL);
	sk_token_key_free(k);
}
END_TEST

/*
 * Random secrets (32..200 bytes: both sides of the 64-byte block) and random
 * claims: the signature sk_token_mint() writes equals OpenSSL's HMAC() over
 * the signing input, and tokens signed by HMAC() over random payloads with
 * random unknown claims verify.
 */
START_TEST(test_hmac_cross_check)
{
	uint64_t seed = 0xc0ffee42, user;
	int i;

	for (i = 0; i < 500; i++) {
		unsigned char sec[200], mac[32];
		unsigned int maclen;
		char tok[SK_TOKEN_MAX_LEN + 1], sig[64], pay[512], junk[128];
		struct sk_token_claims c = {0};
		struct sk_token_key *k = NULL;
		size_t slen = 32 + rnd(&seed) % 169, len, j, jl;
		const char *d2;

		for (j = 0; j < slen; j++)
			sec[j] = (unsigned char)rnd(&seed);
		ck_assert_int_eq(sk_token_key_create(sec, slen, &k), 0);

		c.user = rnd(&seed) | 1;
		c.exp = NOW + 100;
		ck_assert_int_eq(sk_token_mint(k, &c, tok, sizeof(tok), &len), 0);
		d2 = strrchr(tok, '.');
		HMAC(EVP_sha256(), sec, (int)slen, (unsigned char *)tok, (size_t)(d2 - tok), mac,
		     &maclen);
		b64url(mac, 32, sig);
		ck_assert_str_eq(d2 + 1, sig);

		/* other direction: HMAC()-signed, random printable junk claim */
		jl = rnd(&seed) % 100;
		for (j = 0; j < jl; j++) {
			char ch = (char)(' ' + rnd(&seed) % 95);

			junk[j] = (ch == '"' || ch == '\\') ? '_' : ch;
		}
		junk[jl] = '\0';
		snprintf(pay, sizeof(pay), "{\"junk\":\"%s\",\"sub\":%" PRIu64 ",\"exp\":%lld}",
			 junk, c.user, NOW + 100);
		{
			char h[1024];
			size_t o = 0;

			o += b64url(HS256, strlen(HS256), h + o);
			h[o++] = '.';
			o += b64url(pay, strlen(pay), h + o);
			HMAC(EVP_sha256(), sec, (int)slen, (unsigned char *)h, o, mac, &maclen);
			h[o++] = '.';
			o += b64url(mac, 32, h + o);
			user = 0;
			ck_assert_int_eq(verify_guarded(k, h, o, 1, NOW, 0, &user), SK_TOKEN_OK);
			ck_assert_uint_eq(user, c.user);
		}
		sk_token_key_free(k);
	}
}
END_TEST

START_TEST(test_key_create)
{
	struct sk_token_key *k = NULL;
	char s[SK_TOKEN_SECRET_MIN] = {0};

	ck_assert_int_eq(sk_token_key_create(s, SK_TOKEN_SECRET_MIN - 1, &k), -EINVAL);
	ck_assert_ptr_null(k);
	ck_assert_int_eq(sk_token_key_create(NULL, 64, &k), -EINVAL);
	ck_assert_int_eq(sk_token_key_create(s, sizeof(s), NULL), -EINVAL);
	ck_assert_int_eq(sk_token_key_create(s, sizeof(s), &k), 0);
	sk_token_key_free(k);
	sk_token_key_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------------
 * X-User-Id and status names.
 */

static const struct {
	const char *in;
	int want;
	uint64_t user;
} uid_cases[] = {
	{"1", 0, 1},
	{"42", 0, 42},
	{"18446744073709551615", 0, UINT64_MAX},
	{"18446744073709551616", -ERANGE, 0},
	{"99999999999999999999", -ERANGE, 0},
	{"100000000000000000000", -ERANGE, 0},
	{"0", -EINVAL, 0},
	{"00", -EINVAL, 0},
	{"042", -EINVAL, 0},
	{"", -EINVAL, 0},
	{"-1", -EINVAL, 0},
	{"+1", -EINVAL, 0},
	{" 1", -EINVAL, 0},
	{"1 ", -EINVAL, 0},
	{"1a", -EINVAL, 0},
	{"0x10", -EINVAL, 0},
	{"1.0", -EINVAL, 0},
};

START_TEST(test_user_id_parse)
{
	uint64_t user = 7;
	struct guard g;
	const char *in = uid_cases[_i].in;
	size_t n = strlen(in);
	int rc;

	rc = sk_token_user_id_parse(guarded(&g, in, n), n, &user);
	unguard(&g);
	ck_assert_msg(rc == uid_cases[_i].want, "'%s': rc %d", in, rc);
	ck_assert_uint_eq(user, rc == 0 ? uid_cases[_i].user : 7);
}
END_TEST

START_TEST(test_user_id_not_nul_terminated)
{
	uint64_t user = 0;

	ck_assert_int_eq(sk_token_user_id_parse("12345", 3, &user), 0);
	ck_assert_uint_eq(user, 123);
	ck_assert_int_eq(sk_token_user_id_parse(NULL, 0, &user), -EINVAL);
}
END_TEST

START_TEST(test_status_str)
{
	int i, j;

	for (i = 0; i < SK_TOKEN__COUNT; i++) {
		const char *s = sk_token_status_str((enum sk_token_status)i);

		ck_assert_ptr_nonnull(s);
		ck_assert_str_ne(s, "unknown");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(s, sk_token_status_str((enum sk_token_status)j));
	}
	ck_assert_str_eq(sk_token_status_str(SK_TOKEN__COUNT), "unknown");
	ck_assert_str_eq(sk_token_status_str((enum sk_token_status) - 1), "unknown");
}
END_TEST

static Suite *
token_suite(void)
{
	Suite *s = suite_create("token");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_verify_table, 0, (int)SK_ARRAY_SIZE(vcases));
	tcase_add_test(tc, test_trailing_and_prefixes);
	tcase_add_test(tc, test_length_limit);
	tcase_add_test(tc, test_mint_roundtrip);
	tcase_add_test(tc, test_mint_errors);
	tcase_add_test(tc, test_hmac_cross_check);
	tcase_add_test(tc, test_key_create);
	tcase_add_loop_test(tc, test_user_id_parse, 0, (int)SK_ARRAY_SIZE(uid_cases));
	tcase_add_test(tc, test_user_id_not_nul_terminated);
	tcase_add_test(tc, test_status_str);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(token_suite)
