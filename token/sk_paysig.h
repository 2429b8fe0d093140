/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Signed payment messages: the HMAC-SHA256 that the shop puts on every
 * seckill.payments message and the control plane checks before applying it
 * (docs/kafka.md, "Signatures").
 *
 * The signature travels in the Kafka header SK_PAYSIG_HEADER ("sk-sig"):
 *
 *   KID ":" T ":" HEX
 *
 * KID names the key (1..SK_PAYSIG_KID_MAX of [A-Za-z0-9._-]), T is the
 * signing time in unix milliseconds (decimal, 1..19 digits) and HEX the 64
 * lowercase hex digits of
 *
 *   HMAC-SHA256(secret, "sk-pay-v1\n" TOPIC "\n" T "\n" VALUE)
 *
 * over the exact value bytes. The topic is bound so a message signed for
 * one topic (a test topic under the same key) is refused on another; the
 * time is bound so a copy replayed after the request table forgot its
 * request id is refused as stale (sk_paysig_verify()'s @c max_age_ms). The
 * Kafka message key is not bound: it only picks the partition, and nothing
 * the consumer applies comes from it.
 *
 * The key file (sk_paysig_keys_load()) holds one or two lines "KID SECRET";
 * blank lines and lines starting with '#' are skipped. SECRET is the rest
 * of the line (trailing blanks and CR dropped), SK_PAYSIG_SECRET_MIN..
 * SK_PAYSIG_SECRET_MAX bytes, e.g. `openssl rand -hex 32`. The first key
 * signs; every key verifies, so a rotation adds the new key as a second
 * line on the consumer, moves it first on the producer, then drops the old
 * one. The file must not be readable by group or others.
 *
 * Thread-safety: a key set is immutable once loaded; sign and verify may
 * run on any number of threads with one set. They allocate nothing.
 */
#ifndef SK_PAYSIG_H
#define SK_PAYSIG_H

#include <stddef.h>
#include <stdint.h>

/** The Kafka header that carries the signature. */
#define SK_PAYSIG_HEADER "sk-sig"
/** Keys a file may hold: the signing one and one more during a rotation. */
#define SK_PAYSIG_KEYS_MAX 2
/** Longest key id. */
#define SK_PAYSIG_KID_MAX 32
/** Shortest and longest secret, bytes. */
#define SK_PAYSIG_SECRET_MIN 32
#define SK_PAYSIG_SECRET_MAX 256
/** Longest message value signed or verified, bytes (a payment is ~150). */
#define SK_PAYSIG_VALUE_MAX 4096
/** Longest topic name (Kafka's). */
#define SK_PAYSIG_TOPIC_MAX 249
/** Longest header value: KID ":" 19 digits ":" 64 hex digits. */
#define SK_PAYSIG_HDR_MAX (SK_PAYSIG_KID_MAX + 1 + 19 + 1 + 64)

/** A loaded key file. Opaque. */
struct sk_paysig_keys;

/**
 * What sk_paysig_verify() made of a message. The numbers are those of
 * enum sk_store_pay_reject (storage/sk_store.h): never renumber.
 */
enum sk_paysig_verdict {
	SK_PAYSIG_OK = 0,	   /**< signed by a key of the set, not stale */
	SK_PAYSIG_MISSING = 1,	   /**< no header */
	SK_PAYSIG_MALFORMED = 2,   /**< the header is not KID:T:HEX, or the value or
					topic is too long */
	SK_PAYSIG_UNKNOWN_KID = 3, /**< KID is not in the set */
	SK_PAYSIG_BAD_MAC = 4,	   /**< the MAC does not match (wrong key, a changed
					value, time or topic) */
	SK_PAYSIG_STALE = 5,	   /**< good MAC, but signed longer ago than allowed,
					or more than SK_PAYSIG_SKEW_MS ahead of now */
};

/** How far ahead of the verifier's clock a signing time may be, ms. */
#define SK_PAYSIG_SKEW_MS (5 * 60 * 1000)

/**
 * sk_paysig_keys_load - read the key file @p path.
 * @param[in]  path    the file
 * @param[out] out     the key set; the caller frees it with sk_paysig_keys_free()
 * @param[out] err     on error, one line naming the file, the line and the
 *                     problem (never a secret); may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0, a negative errno of open()/fstat() (-ENOENT, -EACCES, ...),
 *   -EPERM (any permission bit for group or others, or owned by another
 *   user than this process's or root), -EFBIG (over 4 KiB), -EINVAL (a
 *   bad line: kid, secret length, a repeated kid, no key, more than
 *   SK_PAYSIG_KEYS_MAX), -ENOMEM.
 */
int sk_paysig_keys_load(const char *path, struct sk_paysig_keys **out, char *err, size_t errlen);

/**
 * sk_paysig_keys_from - a key set from memory (tests, tools): @p n keys,
 * kids[i] with secrets[i] of lens[i] bytes; the first signs.
 * @return 0, -EINVAL (as for a file), -ENOMEM.
 */
int sk_paysig_keys_from(const char *const *kids, const char *const *secrets, const size_t *lens,
			unsigned n, struct sk_paysig_keys **out);

/** sk_paysig_keys_free - wipe and free @p k. NULL is ignored. */
void sk_paysig_keys_free(struct sk_paysig_keys *k);

/** sk_paysig_signing_kid - the id of the key that signs (the first). */
const char *sk_paysig_signing_kid(const struct sk_paysig_keys *k);

/**
 * sk_paysig_sign - the header value for @p val on @p topic at @p t_ms,
 * under the first key of @p k.
 * @param[out] out  SK_PAYSIG_HDR_MAX + 1 bytes, NUL-terminated
 * @return the header length, or -EINVAL (value over SK_PAYSIG_VALUE_MAX,
 *   topic over SK_PAYSIG_TOPIC_MAX, t_ms < 1).
 */
int sk_paysig_sign(const struct sk_paysig_keys *k, const char *topic, int64_t t_ms, const void *val,
		   size_t len, char out[SK_PAYSIG_HDR_MAX + 1]);

/**
 * sk_paysig_verify - check header @p hdr (@p hlen bytes; NULL = no header)
 * of value @p val received on @p topic. The MAC is compared in constant
 * time, and only a message with a good MAC is called stale: signed before
 * @p now_ms - @p max_age_ms (no age check when @p max_age_ms <= 0), or
 * after @p now_ms + SK_PAYSIG_SKEW_MS (when @p now_ms > 0: a time ahead of
 * the clock would keep a copy replayable after its request id is forgotten).
 * @return an enum sk_paysig_verdict.
 */
int sk_paysig_verify(const struct sk_paysig_keys *k, const char *topic, const void *hdr,
		     size_t hlen, const void *val, size_t len, int64_t now_ms, int64_t max_age_ms);

/** sk_paysig_verdict_name - "ok", "unsigned", "bad_header", "unknown_kid",
 *  "bad_mac", "stale"; "?" for others. */
const char *sk_paysig_verdict_name(int v);

#endif /* SK_PAYSIG_H */
