/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_token.c - JWT HS256 verification and minting for the buy path.
 *
 * The token's shape, its order of checks, minting, the unverified peek at
 * the user and the status names. The parts live beside it: the key and the
 * HMAC (sk_token_key.c), base64url (sk_token_b64.c), the JSON scanner and
 * the claims (sk_token_claims.c). Everything here works on the caller's
 * bytes and on stack buffers bounded by SK_TOKEN_MAX_LEN: no allocation,
 * no lock, no syscall.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "sk_common.h"
#include "sk_token.h"
#include "sk_token_priv.h"

/* Longest payload sk_token_mint() writes: 6 claims of at most ~31 bytes. */
#define SK_MINT_PAYLOAD_MAX 224

/* ------------------------------------------------------------------------
 * Verify.
 */

int
sk_token_ring_find(const struct sk_token_ring *ring, const char *kid, size_t len)
{
	if (len == 0)
		return -1;
	for (int i = 0; i < SK_TOKEN_RING_MAX; i++)
		if (ring->k[i].kid_len == len && len != 0 && memcmp(ring->k[i].kid, kid, len) == 0)
			return i;
	return -1;
}

/* verify - the one verification: with @key, or (@key NULL) the key of
 * @ring the header's kid names; what the token says into @out. */
static enum sk_token_status
verify(const struct sk_token_key *key, const struct sk_token_ring *ring, const char *tok,
       size_t len, uint64_t item, int64_t now, uint32_t skew, struct sk_token_verified *out)
{
	uint8_t hdr[SK_SEG_MAX], pay[SK_SEG_MAX], sig[SK_SEG_MAX], mac[SK_MAC_LEN];
	const char *d1, *d2;
	ssize_t hn, pn, sn;
	size_t sig_len;
	struct sk_claims_seen c;
	enum sk_token_status st;

	const uint8_t *kid;
	size_t kid_len;

	SK_DEBUG_ASSERT((key != NULL || ring != NULL) && out != NULL);
	if (len > SK_TOKEN_MAX_LEN)
		return SK_TOKEN_E_TOO_LONG;
	if (tok == NULL || len == 0)
		return SK_TOKEN_E_MALFORMED;

	/* Shape: h "." p "." s, h and p non-empty (s may be empty: alg none). */
	d1 = memchr(tok, '.', len);
	if (d1 == NULL || d1 == tok)
		return SK_TOKEN_E_MALFORMED;
	d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok));
	if (d2 == NULL || d2 == d1 + 1)
		return SK_TOKEN_E_MALFORMED;
	sig_len = len - (size_t)(d2 + 1 - tok);
	if (memchr(d2 + 1, '.', sig_len) != NULL)
		return SK_TOKEN_E_MALFORMED;

	hn = sk_token_b64_decode(tok, (size_t)(d1 - tok), hdr, sizeof(hdr));
	pn = sk_token_b64_decode(d1 + 1, (size_t)(d2 - d1 - 1), pay, sizeof(pay));
	sn = sk_token_b64_decode(d2 + 1, sig_len, sig, sizeof(sig));
	if (hn < 0 || pn < 0 || sn < 0)
		return SK_TOKEN_E_BASE64;

	st = sk_token_check_header(hdr, (size_t)hn, &kid, &kid_len);
	if (st != SK_TOKEN_OK)
		return st;
	if (key == NULL) {
		int slot = kid != NULL ? sk_token_ring_find(ring, (const char *)kid, kid_len)
				       : ring->dflt;

		if (slot < 0)
			return SK_TOKEN_E_UNKNOWN_KID;
		key = sk_token_ring_key(ring, slot);
	}

	if (sn != SK_MAC_LEN)
		return SK_TOKEN_E_SIGNATURE;
	sk_token_hmac(key, tok, (size_t)(d2 - tok), mac);
	if (CRYPTO_memcmp(mac, sig, SK_MAC_LEN) != 0)
		return SK_TOKEN_E_SIGNATURE;

	memset(&c, 0, sizeof(c));
	st = sk_token_check_payload(pay, (size_t)pn, &c);
	if (st != SK_TOKEN_OK)
		return st;
	if (!c.has_sub)
		return SK_TOKEN_E_NO_SUB;
	if (c.bad_sub)
		return SK_TOKEN_E_BAD_SUB;
	if (!c.has_exp)
		return SK_TOKEN_E_NO_EXP;
	if (skew > SK_TOKEN_SKEW_MAX)
		skew = SK_TOKEN_SKEW_MAX;
	/* exp, nbf <= SK_TOKEN_TIME_MAX: neither side can overflow. */
	if (now >= c.exp + (int64_t)skew)
		return SK_TOKEN_E_EXPIRED;
	if (c.has_nbf && now < c.nbf - (int64_t)skew)
		return SK_TOKEN_E_NOT_YET_VALID;
	if (c.has_item && c.item != item)
		return SK_TOKEN_E_WRONG_ITEM;
	out->user = c.sub;
	out->gate = c.has_gate ? c.gate : 0;
	return SK_TOKEN_OK;
}

enum sk_token_status
sk_token_verify_claims(const struct sk_token_key *key, const char *tok, size_t len, uint64_t item,
		       int64_t now, uint32_t skew, struct sk_token_verified *out)
{
	return verify(key, NULL, tok, len, item, now, skew, out);
}

enum sk_token_status
sk_token_verify_ring_claims(const struct sk_token_ring *ring, const char *tok, size_t len,
			    uint64_t item, int64_t now, uint32_t skew,
			    struct sk_token_verified *out)
{
	return verify(NULL, ring, tok, len, item, now, skew, out);
}

enum sk_token_status
sk_token_verify(const struct sk_token_key *key, const char *tok, size_t len, uint64_t item,
		int64_t now, uint32_t skew, uint64_t *user)
{
	struct sk_token_verified v;
	enum sk_token_status st = verify(key, NULL, tok, len, item, now, skew, &v);

	if (st == SK_TOKEN_OK)
		*user = v.user;
	return st;
}

enum sk_token_status
sk_token_verify_ring(const struct sk_token_ring *ring, const char *tok, size_t len, uint64_t item,
		     int64_t now, uint32_t skew, uint64_t *user)
{
	struct sk_token_verified v;
	enum sk_token_status st = verify(NULL, ring, tok, len, item, now, skew, &v);

	if (st == SK_TOKEN_OK)
		*user = v.user;
	return st;
}

/* ------------------------------------------------------------------------
 * Mint.
 */

/* base64url of {"alg":"HS256","typ":"JWT"} */
static const char mint_header[] = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";

static bool
time_ok(int64_t t)
{
	return t >= 0 && t <= SK_TOKEN_TIME_MAX;
}

/* kid_valid - 1..SK_TOKEN_KID_MAX of [A-Za-z0-9._-]. */
static bool
kid_valid(const char *kid)
{
	size_t n = strlen(kid);

	if (n == 0 || n > SK_TOKEN_KID_MAX)
		return false;
	return strspn(kid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
	       n;
}

int
sk_token_mint(const struct sk_token_key *key, const struct sk_token_claims *claims, char *out,
	      size_t cap, size_t *len)
{
	return sk_token_mint_kid(key, NULL, claims, out, cap, len);
}

int
sk_token_mint_kid(const struct sk_token_key *key, const char *kid,
		  const struct sk_token_claims *claims, char *out, size_t cap, size_t *len)
{
	char payload[SK_MINT_PAYLOAD_MAX], hdr[96];
	uint8_t mac[SK_MAC_LEN];
	const char *head = mint_header;
	size_t hl = sizeof(mint_header) - 1, pl, need, o;
	int n;

	if (out != NULL && cap > 0)
		out[0] = '\0';
	if (key == NULL || claims == NULL || out == NULL || claims->user == 0 ||
	    (claims->has_gate && claims->gate == 0) || !time_ok(claims->exp) ||
	    (claims->has_nbf && !time_ok(claims->nbf)) ||
	    (claims->has_iat && !time_ok(claims->iat)) || (kid != NULL && !kid_valid(kid)))
		return -EINVAL;
	if (kid != NULL) {
		char json[80];
		int jn = snprintf(json, sizeof(json),
				  "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"%s\"}", kid);

		hl = sk_token_b64_encode((const uint8_t *)json, (size_t)jn, hdr);
		head = hdr;
	}

	n = snprintf(payload, sizeof(payload), "{\"sub\":\"%" PRIu64 "\"", claims->user);
	if (claims->has_item)
		n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"item\":%" PRIu64,
			      claims->item);
	if (claims->has_gate)
		n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"gate\":\"%" PRIu64 "\"",
			      claims->gate);
	if (claims->has_iat)
		n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"iat\":%" PRId64,
			      claims->iat);
	if (claims->has_nbf)
		n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"nbf\":%" PRId64,
			      claims->nbf);
	n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"exp\":%" PRId64 "}",
		      claims->exp);
	SK_ASSERT(n > 0 && (size_t)n < sizeof(payload));
	pl = (size_t)n;

	need = hl + 1 + sk_token_b64_len(pl) + 1 + sk_token_b64_len(SK_MAC_LEN);
	if (need + 1 > cap)
		return -ENOSPC;

	memcpy(out, head, hl);
	o = hl;
	out[o++] = '.';
	o += sk_token_b64_encode((const uint8_t *)payload, pl, out + o);
	sk_token_hmac(key, out, o, mac);
	out[o++] = '.';
	o += sk_token_b64_encode(mac, SK_MAC_LEN, out + o);
	SK_ASSERT(o == need);
	out[o] = '\0';
	if (len != NULL)
		*len = o;
	return 0;
}

/*
 * peek_sub_first - the fast path of sk_token_peek_user() for a payload that
 * starts with the "sub" claim as sk_token_mint() writes it
 * ({"sub":"<digits>",...): its first 8 characters are then exactly
 * "eyJzdWIi" ({"sub"), compared without decoding; the next 20 characters
 * hold :" and an id of up to 12 digits with its quote, and only a longer
 * id needs 12 more. 0 and @user, or -1 when the payload is not of that
 * shape (the caller then parses it all).
 */
static int
peek_sub_first(const char *p, size_t n, uint64_t *user)
{
	static const char head[] = "eyJzdWIi"; /* base64url of {"sub" */
	uint8_t b[24];			       /* :" + up to 20 digits + " */
	const uint8_t *q;

	if (n < sizeof(head) - 1 + 32 || memcmp(p, head, sizeof(head) - 1) != 0)
		return -1;
	p += sizeof(head) - 1;
	if (sk_token_b64_decode(p, 20, b, 15) != 15 || b[0] != ':' || b[1] != '"')
		return -1;
	q = memchr(b + 2, '"', 13);
	if (q == NULL) {
		if (sk_token_b64_decode(p + 20, 12, b + 15, 9) != 9)
			return -1;
		q = memchr(b + 15, '"', 9);
		if (q == NULL)
			return -1;
	}
	return sk_token_user_id_parse((const char *)b + 2, (size_t)(q - b) - 2, user) == 0 ? 0 : -1;
}

int
sk_token_peek_user(const char *tok, size_t len, uint64_t *user)
{
	uint8_t pay[SK_SEG_MAX];
	struct sk_claims_seen c;
	const char *d1, *d2;
	ssize_t pn;

	if (tok == NULL || len == 0 || len > SK_TOKEN_MAX_LEN)
		return -EINVAL;
	d1 = memchr(tok, '.', len);
	if (d1 == NULL)
		return -EINVAL;
	if (peek_sub_first(d1 + 1, len - (size_t)(d1 + 1 - tok), user) == 0)
		return 0;
	d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok));
	if (d2 == NULL || d2 == d1 + 1)
		return -EINVAL;
	pn = sk_token_b64_decode(d1 + 1, (size_t)(d2 - d1 - 1), pay, sizeof(pay));
	if (pn < 0)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	if (sk_token_check_payload(pay, (size_t)pn, &c) != SK_TOKEN_OK || !c.has_sub || c.bad_sub)
		return -EINVAL;
	*user = c.sub;
	return 0;
}

const char *
sk_token_status_str(enum sk_token_status st)
{
	static const char *const names[SK_TOKEN__COUNT] = {
		[SK_TOKEN_OK] = "ok",
		[SK_TOKEN_E_TOO_LONG] = "too_long",
		[SK_TOKEN_E_MALFORMED] = "malformed",
		[SK_TOKEN_E_BASE64] = "bad_base64",
		[SK_TOKEN_E_HEADER] = "bad_header",
		[SK_TOKEN_E_ALG] = "bad_alg",
		[SK_TOKEN_E_SIGNATURE] = "bad_signature",
		[SK_TOKEN_E_EXPIRED] = "expired",
		[SK_TOKEN_E_NOT_YET_VALID] = "not_yet_valid",
		[SK_TOKEN_E_WRONG_ITEM] = "wrong_item",
		[SK_TOKEN_E_NO_SUB] = "missing_sub",
		[SK_TOKEN_E_BAD_SUB] = "bad_sub",
		[SK_TOKEN_E_NO_EXP] = "missing_exp",
		[SK_TOKEN_E_UNKNOWN_KID] = "unknown_kid",
	};

	if ((unsigned)st >= SK_TOKEN__COUNT)
		return "unknown";
	return names[st];
}
