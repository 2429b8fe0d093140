/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Buy-path tokens: JWT HS256 verification (and minting) without allocation.
 *
 * A token is `base64url(header) "." base64url(payload) "." base64url(sig)`
 * (RFC 7519 / RFC 7515 compact serialisation, no padding), where sig is
 * HMAC-SHA256(secret, header "." payload). The claims understood are:
 *
 *  - `sub`  the user id: a u64 written as a decimal string ("42") or as a JSON
 *           integer (42); 1..UINT64_MAX, no sign, no leading zeros. Required.
 *  - `exp`  expiry, unix seconds (JSON number). Required: a bearer token that
 *           never expires is a replayable credential for ever.
 *  - `nbf`  not before, unix seconds (JSON number). Optional.
 *  - `item` restricts the token to one item id (u64, string or integer).
 *           Optional; absent means "any item".
 *  - `gate` the gate claim: the shop's captcha or quiz service let this
 *           user buy item N (`"gate":"N"`, a JSON string of a decimal id,
 *           1..UINT64_MAX, strict as `sub`). Optional; read in the same pass
 *           as the other claims, after the signature, and handed to the
 *           caller (sk_token_verify_claims()), which decides what an item
 *           that requires it answers. Any other shape is SK_TOKEN_E_MALFORMED.
 *
 * Every other claim is skipped (nested objects, arrays and strings with
 * escapes included, nesting depth at most SK_TOKEN_MAX_DEPTH). The header must
 * be a JSON object with `"alg":"HS256"`; `typ`, if present, must be "JWT"
 * (any case); a `crit` parameter is refused (RFC 7515 §4.1.11: we understand
 * no extension). Object keys are compared byte for byte, so a key written with
 * escapes (`"s\u0075b"`) is refused rather than guessed at, and so is a
 * duplicated key. A `kid` header parameter (1..SK_TOKEN_KID_MAX of
 * [A-Za-z0-9._-]) selects the key of a key ring (sk_token_verify_ring()).
 *
 * Verification order: length, shape, header (alg), signature (constant-time
 * compare), then claims. Nothing in the payload is parsed before the
 * signature is known to be good.
 *
 * The key (struct sk_token_key) holds the SHA-256 states after absorbing
 * K^ipad and K^opad, so a verification costs the HMAC of the message only:
 * two state copies, and SHA-256 over the signing input plus one block.
 *
 * Thread-safety: a key is immutable after sk_token_key_create(); any number
 * of lcores may verify with one key at the same time. sk_token_verify()
 * (and its variants), sk_token_mint() and sk_token_user_id_parse() allocate nothing, take no lock
 * and make no system call; their cost is bounded by SK_TOKEN_MAX_LEN.
 */
#ifndef SK_TOKEN_H
#define SK_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest token accepted (bytes of the compact form, without "Bearer "). */
#define SK_TOKEN_MAX_LEN 1024

/** Shortest secret accepted: RFC 7518 §3.2 wants a key of at least 256 bits. */
#define SK_TOKEN_SECRET_MIN 32

/** Deepest nesting of objects/arrays skipped inside unknown claims. */
#define SK_TOKEN_MAX_DEPTH 16

/** Largest exp/nbf accepted (year ~33658); keeps skew arithmetic exact. */
#define SK_TOKEN_TIME_MAX 999999999999LL

/** Largest clock skew sk_token_verify() accepts, seconds (one day). */
#define SK_TOKEN_SKEW_MAX 86400u

/** Longest key id (the header's kid), bytes. */
#define SK_TOKEN_KID_MAX 32

/** Most keys of a key ring. */
#define SK_TOKEN_RING_MAX 8

/** Bytes a key takes in caller memory (sk_token_key_init()), 8-byte aligned. */
#define SK_TOKEN_KEY_SIZE 256

/**
 * Outcome of sk_token_verify(). 0 is success; every other value is a reason
 * to answer 401. Values are dense so that telemetry can keep one counter per
 * reason (`uint64_t refused[SK_TOKEN__COUNT]`).
 */
enum sk_token_status {
	SK_TOKEN_OK = 0,	  /**< valid; *user is set */
	SK_TOKEN_E_TOO_LONG,	  /**< longer than SK_TOKEN_MAX_LEN */
	SK_TOKEN_E_MALFORMED,	  /**< not 3 non-empty segments, payload not a JSON
				     object, duplicate claim, claim of the wrong type */
	SK_TOKEN_E_BASE64,	  /**< a segment is not canonical unpadded base64url */
	SK_TOKEN_E_HEADER,	  /**< header not a JSON object, bad typ, has crit */
	SK_TOKEN_E_ALG,		  /**< alg missing or not exactly "HS256" */
	SK_TOKEN_E_SIGNATURE,	  /**< signature does not match (or not 32 bytes) */
	SK_TOKEN_E_EXPIRED,	  /**< now >= exp + skew */
	SK_TOKEN_E_NOT_YET_VALID, /**< now + skew < nbf */
	SK_TOKEN_E_WRONG_ITEM,	  /**< item claim differs from the request's item */
	SK_TOKEN_E_NO_SUB,	  /**< no sub claim */
	SK_TOKEN_E_BAD_SUB,	  /**< sub is 0, overflows u64, or not strict decimal */
	SK_TOKEN_E_NO_EXP,	  /**< no exp claim */
	SK_TOKEN_E_UNKNOWN_KID,	  /**< (key ring) no key of the header's kid, or no kid
				     and no default key */
	SK_TOKEN__COUNT		  /**< number of values above */
};

/** Opaque HMAC-SHA256 key with precomputed inner/outer states. */
struct sk_token_key;

/**
 * Claims to put into a minted token (sk_token_mint()). An all-zero struct is
 * not valid: user and exp must be set.
 */
struct sk_token_claims {
	uint64_t user; /**< sub, non-zero */
	uint64_t item; /**< item claim, written only if has_item */
	int64_t exp;   /**< expiry, unix seconds, 0..SK_TOKEN_TIME_MAX */
	int64_t nbf;   /**< not before, written only if has_nbf */
	int64_t iat;   /**< issued at, written only if has_iat (informational) */
	uint64_t gate; /**< gate claim (an item id, non-zero), written only if has_gate */
	bool has_item;
	bool has_nbf;
	bool has_iat;
	bool has_gate;
};

/** What a good token says (sk_token_verify_claims()). */
struct sk_token_verified {
	uint64_t user; /**< sub, non-zero */
	uint64_t gate; /**< the gate claim's item id; 0: the token has none */
};

/**
 * sk_token_key_create - build a verification/minting key from the secret.
 *
 * Keys longer than 64 bytes are first hashed, as HMAC (RFC 2104) says. The
 * secret bytes are not kept, only the two SHA-256 midstates (which are
 * equivalent to the secret for forging: protect the key like the secret).
 *
 * Not for the fast path: allocates.
 *
 * @param secret
 *   The shared secret (any bytes, not necessarily a string).
 * @param len
 *   Length of @p secret, at least SK_TOKEN_SECRET_MIN.
 * @param[out] out
 *   On success, the new key; the caller owns it and frees it with
 *   sk_token_key_free().
 * @return
 *   0 on success, or a negative errno:
 *   - -EINVAL: @p secret or @p out is NULL, or @p len < SK_TOKEN_SECRET_MIN.
 *   - -ENOMEM: allocation failed.
 */
int sk_token_key_create(const void *secret, size_t len, struct sk_token_key **out);

/**
 * sk_token_key_init - sk_token_key_create() into caller memory (a key
 * ring's slot, shared memory): nothing allocated.
 * @param mem   SK_TOKEN_KEY_SIZE bytes (@p size), 8-byte aligned; the
 *              caller owns it and wipes it when done
 * @return the key (== @p mem), or NULL: a NULL argument, @p size too
 *         small, @p mem misaligned, @p len < SK_TOKEN_SECRET_MIN.
 */
const struct sk_token_key *sk_token_key_init(void *mem, size_t size, const void *secret,
					     size_t len);

/**
 * sk_token_key_copy - a copy of @p src in caller memory (as sk_token_key_init()).
 * @return the copy (== @p mem), or NULL for a bad argument.
 */
const struct sk_token_key *sk_token_key_copy(void *mem, size_t size,
					     const struct sk_token_key *src);

/** One key of a ring: its id and its key (sk_token_key_init() in place). */
struct sk_token_ring_key {
	char kid[SK_TOKEN_KID_MAX + 1]; /**< NUL-terminated; "" = unused slot */
	uint8_t kid_len;
	uint64_t key[SK_TOKEN_KEY_SIZE / 8]; /**< the key (8-byte aligned storage) */
};

/**
 * A key ring: the keys accepted, which one verifies tokens without a kid
 * (@c dflt) and which one the issuers sign with (@c sign, informational:
 * the appliance only verifies). Plain data with no pointer: it can live in
 * shared memory. Read-only while verifications run.
 */
struct sk_token_ring {
	uint32_t n;   /**< keys in use (slots with a kid) */
	int32_t dflt; /**< slot of the key for tokens without a kid; -1: none */
	int32_t sign; /**< slot of the signing key; -1: none */
	uint32_t pad;
	struct sk_token_ring_key k[SK_TOKEN_RING_MAX];
};

/**
 * sk_token_ring_find - the slot of key id @p kid (@p len bytes) in @p ring,
 * or -1. At most SK_TOKEN_RING_MAX comparisons; no allocation.
 */
int sk_token_ring_find(const struct sk_token_ring *ring, const char *kid, size_t len);

/**
 * sk_token_ring_key - the key of slot @p slot of @p ring (no check).
 */
static inline const struct sk_token_key *
sk_token_ring_key(const struct sk_token_ring *ring, int slot)
{
	return (const struct sk_token_key *)ring->k[slot].key;
}

/**
 * sk_token_key_free - wipe and free a key. NULL is accepted. No verification
 * may be running with the key.
 */
void sk_token_key_free(struct sk_token_key *key);

/**
 * sk_token_verify - verify a compact HS256 token and return its user id.
 *
 * @param key
 *   Key from sk_token_key_create(); read only.
 * @param tok
 *   The token bytes (the part after "Bearer "); not NUL-terminated, may point
 *   into a receive buffer; only @p len bytes are read.
 * @param len
 *   Length of @p tok.
 * @param item
 *   The item id of the request; a token with an `item` claim is accepted only
 *   if it equals this.
 * @param now
 *   Current time, unix seconds.
 * @param skew
 *   Allowed clock skew, seconds, at most SK_TOKEN_SKEW_MAX (larger values are
 *   clamped): valid iff nbf - skew <= now < exp + skew.
 * @param[out] user
 *   On SK_TOKEN_OK, the user id (non-zero); untouched otherwise.
 * @return
 *   SK_TOKEN_OK, or the first problem found, in this order:
 *   SK_TOKEN_E_TOO_LONG, SK_TOKEN_E_MALFORMED (shape), SK_TOKEN_E_BASE64,
 *   SK_TOKEN_E_HEADER, SK_TOKEN_E_ALG, SK_TOKEN_E_SIGNATURE,
 *   SK_TOKEN_E_MALFORMED (payload), SK_TOKEN_E_NO_SUB, SK_TOKEN_E_BAD_SUB,
 *   SK_TOKEN_E_NO_EXP, SK_TOKEN_E_EXPIRED, SK_TOKEN_E_NOT_YET_VALID,
 *   SK_TOKEN_E_WRONG_ITEM.
 *   A NULL @p tok with @p len 0 gives SK_TOKEN_E_MALFORMED.
 */
enum sk_token_status sk_token_verify(const struct sk_token_key *key, const char *tok, size_t len,
				     uint64_t item, int64_t now, uint32_t skew, uint64_t *user);

/**
 * sk_token_verify_ring - sk_token_verify() with the key the token's kid
 * names in @p ring (a token without a kid: the ring's default key). The
 * kid is read from the header before the HMAC; an unknown kid costs no
 * HMAC. Same parameters and results as sk_token_verify(), plus
 * SK_TOKEN_E_UNKNOWN_KID (after SK_TOKEN_E_ALG, before the signature).
 */
enum sk_token_status sk_token_verify_ring(const struct sk_token_ring *ring, const char *tok,
					  size_t len, uint64_t item, int64_t now, uint32_t skew,
					  uint64_t *user);

/**
 * sk_token_verify_claims - sk_token_verify() that hands over what the token
 * says: its user and its gate claim, read in the one pass over the claims
 * that follows the signature check (no second HMAC, no second parse).
 * Same parameters and results as sk_token_verify(), except:
 * @param[out] out  on SK_TOKEN_OK, the user and the gate claim (0: none);
 *                  untouched otherwise
 * A gate member that is not a string of a decimal id 1..UINT64_MAX (or a
 * second gate member) is SK_TOKEN_E_MALFORMED, in the payload's place of
 * the order. Thread-safety and cost as sk_token_verify().
 */
enum sk_token_status sk_token_verify_claims(const struct sk_token_key *key, const char *tok,
					    size_t len, uint64_t item, int64_t now, uint32_t skew,
					    struct sk_token_verified *out);

/**
 * sk_token_verify_ring_claims - sk_token_verify_claims() with the key of
 * @p ring the token's kid names (as sk_token_verify_ring(), with
 * SK_TOKEN_E_UNKNOWN_KID).
 */
enum sk_token_status sk_token_verify_ring_claims(const struct sk_token_ring *ring, const char *tok,
						 size_t len, uint64_t item, int64_t now,
						 uint32_t skew, struct sk_token_verified *out);

/**
 * sk_token_mint_kid - sk_token_mint() with a kid in the header
 * (`{"alg":"HS256","typ":"JWT","kid":"<kid>"}`); @p kid NULL is
 * sk_token_mint(). -EINVAL also for a kid that is not 1..SK_TOKEN_KID_MAX
 * of [A-Za-z0-9._-].
 */
int sk_token_mint_kid(const struct sk_token_key *key, const char *kid,
		      const struct sk_token_claims *claims, char *out, size_t cap, size_t *len);

/**
 * sk_token_mint - write a signed compact token for @p claims.
 *
 * The header is `{"alg":"HS256","typ":"JWT"}`; the payload carries sub as a
 * decimal string, then item as a JSON integer, gate as a decimal string,
 * then iat, nbf, exp as JSON integers. The output is NUL-terminated.
 *
 * @param key
 *   Key from sk_token_key_create().
 * @param claims
 *   What to put in the token.
 * @param[out] out
 *   Buffer for the token; SK_TOKEN_MAX_LEN + 1 bytes is always enough.
 * @param cap
 *   Size of @p out.
 * @param[out] len
 *   If not NULL, receives the token length (without the NUL).
 * @return
 *   0 on success, or a negative errno:
 *   - -EINVAL: NULL argument, user 0, has_gate with gate 0, or a time
 *     outside 0..SK_TOKEN_TIME_MAX.
 *   - -ENOSPC: @p cap too small; @p out is left empty ("") if @p cap > 0.
 */
int sk_token_mint(const struct sk_token_key *key, const struct sk_token_claims *claims, char *out,
		  size_t cap, size_t *len);

/**
 * sk_token_nbf_jitter - the per-user delay of a spread nbf: a number in
 * [0, @p spread) that depends on @p user only (splitmix64 of the id), so a
 * token reissued to a user keeps its place in the spread (seckill-token
 * --nbf-spread: nbf = iat + sk_token_nbf_jitter(user, spread)). 0 when
 * @p spread is 0. Pure; thread-safe.
 */
static inline uint64_t
sk_token_nbf_jitter(uint64_t user, uint64_t spread)
{
	uint64_t z = user + UINT64_C(0x9e3779b97f4a7c15);

	if (spread == 0)
		return 0;
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (z ^ (z >> 31)) % spread;
}

/**
 * sk_token_user_id_parse - parse an `X-User-Id` value (used when auth is off).
 *
 * Strict: 1 to 20 ASCII digits, no sign, no blank, no leading zero, value in
 * 1..UINT64_MAX. The caller strips the header's optional whitespace.
 *
 * @param s
 *   The value; not NUL-terminated.
 * @param len
 *   Its length.
 * @param[out] user
 *   On success, the user id; untouched otherwise.
 * @return
 *   0 on success, or a negative errno:
 *   - -EINVAL: empty, not decimal, leading zero, or zero.
 *   - -ERANGE: larger than UINT64_MAX.
 */
int sk_token_user_id_parse(const char *s, size_t len, uint64_t *user);

/**
 * sk_token_peek_user - the "sub" claim of token @p tok WITHOUT checking its
 * signature or any other claim: NOT an authentication. It only lets the
 * caller decide cheaply whether a token is worth verifying (the sold-out
 * path looks the claimed user up in the dedup set and verifies the token
 * with sk_token_verify() only for a holder). No allocation; bounded work.
 * @param tok   the compact JWS; not NUL-terminated
 * @param len   its length
 * @param user  [out] the claimed user id; untouched on failure
 * @return 0, or -EINVAL (malformed, too long, or no valid sub claim).
 */
int sk_token_peek_user(const char *tok, size_t len, uint64_t *user);

/**
 * sk_token_status_str - short stable name of a status ("ok", "expired", ...),
 * suitable as a metrics label. Never NULL; "unknown" for out-of-range values.
 */
const char *sk_token_status_str(enum sk_token_status st);

#ifdef __cplusplus
}
#endif

#endif /* SK_TOKEN_H */
