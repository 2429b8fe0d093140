/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_paysig.c - signed payment messages (sk_paysig.h): the key file, the
 * header "KID:T:HEX" and HMAC-SHA256 over the topic, the time and the value.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sk_paysig.h"
#include "sk_secret_file.h"
#include "sk_text.h"

#define MAC_LEN	     32
#define FILE_MAX     4096
#define DOMAIN	     "sk-pay-v1\n"
#define SIGNED_MAX   (sizeof(DOMAIN) + SK_PAYSIG_TOPIC_MAX + 1 + 20 + 1 + SK_PAYSIG_VALUE_MAX)
#define T_DIGITS_MAX 19

struct key {
	char kid[SK_PAYSIG_KID_MAX + 1];
	uint8_t secret[SK_PAYSIG_SECRET_MAX];
	size_t len;
};

struct sk_paysig_keys {
	struct key k[SK_PAYSIG_KEYS_MAX];
	unsigned n;
};

/* ------------------------------------------------------------------ keys */

static bool
kid_ok(const char *s, size_t n)
{
	if (n == 0 || n > SK_PAYSIG_KID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* add - key @kid (@klen bytes) with its secret to @ks: 0 or a reason. */
static const char *
add(struct sk_paysig_keys *ks, const char *kid, size_t klen, const void *sec, size_t slen)
{
	if (!kid_ok(kid, klen))
		return "the key id is not 1-32 of [A-Za-z0-9._-]";
	if (slen < SK_PAYSIG_SECRET_MIN || slen > SK_PAYSIG_SECRET_MAX)
		return "the secret is not 32-256 bytes";
	if (ks->n >= SK_PAYSIG_KEYS_MAX)
		return "more than 2 keys";
	for (unsigned i = 0; i < ks->n; i++)
		if (strlen(ks->k[i].kid) == klen && memcmp(ks->k[i].kid, kid, klen) == 0)
			return "the key id is repeated";
	struct key *k = &ks->k[ks->n++];
	memcpy(k->kid, kid, klen);
	k->kid[klen] = '\0';
	memcpy(k->secret, sec, slen);
	k->len = slen;
	return NULL;
}

int
sk_paysig_keys_from(const char *const *kids, const char *const *secrets, const size_t *lens,
		    unsigned n, struct sk_paysig_keys **out)
{
	struct sk_paysig_keys *ks = calloc(1, sizeof(*ks));

	if (ks == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		if (add(ks, kids[i], strlen(kids[i]), secrets[i], lens[i]) != NULL) {
			sk_paysig_keys_free(ks);
			return -EINVAL;
		}
	}
	if (ks->n == 0) {
		free(ks);
		return -EINVAL;
	}
	*out = ks;
	return 0;
}

/* parse - the lines of @buf (@n bytes) into @ks: 0, or -EINVAL with @err set. */
static int
parse(struct sk_paysig_keys *ks, char *buf, size_t n, const char *path, char *err, size_t errlen)
{
	unsigned lineno = 0;

	for (size_t at = 0; at < n;) {
		char *line = buf + at, *nl = memchr(line, '\n', n - at);
		size_t len = nl != NULL ? (size_t)(nl - line) : n - at;

		at += len + 1;
		lineno++;
		while (len > 0 &&
		       (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
			len--;
		if (len == 0 || line[0] == '#')
			continue;
		/* The line is not NUL-terminated: scan within it only. */
		size_t klen = 0;
		while (klen < len && line[klen] != ' ' && line[klen] != '\t')
			klen++;
		size_t s = klen;
		while (s < len && (line[s] == ' ' || line[s] == '\t'))
			s++;
		const char *why =
			s == klen ? "want \"KID SECRET\"" : add(ks, line, klen, line + s, len - s);
		if (why != NULL) {
			snprintf(err, errlen, "%s: line %u: %s", path, lineno, why);
			return -EINVAL;
		}
	}
	if (ks->n == 0) {
		snprintf(err, errlen, "%s: no key (want lines \"KID SECRET\")", path);
		return -EINVAL;
	}
	return 0;
}

int
sk_paysig_keys_load(const char *path, struct sk_paysig_keys **out, char *err, size_t errlen)
{
	char buf[FILE_MAX + 1], dummy[1], why[128];
	struct sk_paysig_keys *ks = NULL;
	ssize_t n = 0;
	int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (err == NULL || errlen == 0)
		err = dummy, errlen = sizeof(dummy);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = sk_secret_file_check(fd, SK_SECRET_DENY_ALL, NULL, why, sizeof(why));
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto out;
	}
	for (ssize_t r = 1; r > 0 && n <= FILE_MAX; n += r) {
		r = read(fd, buf + n, sizeof(buf) - (size_t)n);
		if (r < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
	}
	if (n > FILE_MAX) {
		rc = -EFBIG;
		snprintf(err, errlen, "%s: longer than %d bytes", path, FILE_MAX);
		goto out;
	}
	ks = calloc(1, sizeof(*ks));
	if (ks == NULL) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	rc = parse(ks, buf, (size_t)n, path, err, errlen);
	if (rc == 0) {
		*out = ks;
		ks = NULL;
	}
out:
	OPENSSL_cleanse(buf, sizeof(buf));
	sk_paysig_keys_free(ks);
	if (fd >= 0)
		close(fd);
	return rc;
}

void
sk_paysig_keys_free(struct sk_paysig_keys *k)
{
	if (k == NULL)
		return;
	OPENSSL_cleanse(k, sizeof(*k));
	free(k);
}

const char *
sk_paysig_signing_kid(const struct sk_paysig_keys *k)
{
	return k->k[0].kid;
}

/* ------------------------------------------------------------------- MAC */

/* mac - the MAC of (@topic, @t, @val) under @k; false if too long. */
static bool
mac(const struct key *k, const char *topic, int64_t t, const void *val, size_t len,
    uint8_t out[MAC_LEN])
{
	uint8_t msg[SIGNED_MAX];
	size_t tl = strnlen(topic, SK_PAYSIG_TOPIC_MAX + 1);
	unsigned ol = 0;

	if (len > SK_PAYSIG_VALUE_MAX || tl > SK_PAYSIG_TOPIC_MAX || t < 1)
		return false;
	int h = snprintf((char *)msg, sizeof(msg), DOMAIN "%s\n%" PRId64 "\n", topic, t);
	memcpy(msg + h, val, len);
	bool ok = HMAC(EVP_sha256(), k->secret, (int)k->len, msg, (size_t)h + len, out, &ol) !=
			  NULL &&
		  ol == MAC_LEN;
	OPENSSL_cleanse(msg, sizeof(msg));
	return ok;
}

int
sk_paysig_sign(const struct sk_paysig_keys *k, const char *topic, int64_t t_ms, const void *val,
	       size_t len, char out[SK_PAYSIG_HDR_MAX + 1])
{
	uint8_t m[MAC_LEN];

	if (!mac(&k->k[0], topic, t_ms, val, len, m))
		return -EINVAL;
	int n = snprintf(out, SK_PAYSIG_HDR_MAX + 1, "%s:%" PRId64 ":", k->k[0].kid, t_ms);
	for (unsigned i = 0; i < MAC_LEN; i++)
		n += snprintf(out + n, SK_PAYSIG_HDR_MAX + 1 - (size_t)n, "%02x", m[i]);
	return n;
}

int
sk_paysig_verify(const struct sk_paysig_keys *k, const char *topic, const void *hdr, size_t hlen,
		 const void *val, size_t len, int64_t now_ms, int64_t max_age_ms)
{
	const char *h = hdr, *c1, *c2;
	uint8_t want[MAC_LEN], got[MAC_LEN];
	int64_t t = 0;
	const struct key *key = NULL;

	if (h == NULL)
		return SK_PAYSIG_MISSING;
	if (hlen > SK_PAYSIG_HDR_MAX || (c1 = memchr(h, ':', hlen)) == NULL ||
	    (c2 = memchr(c1 + 1, ':', hlen - (size_t)(c1 + 1 - h))) == NULL)
		return SK_PAYSIG_MALFORMED;
	size_t klen = (size_t)(c1 - h), tlen = (size_t)(c2 - c1 - 1);
	if (!kid_ok(h, klen) || tlen == 0 || tlen > T_DIGITS_MAX ||
	    hlen - (size_t)(c2 + 1 - h) != 2 * MAC_LEN)
		return SK_PAYSIG_MALFORMED;
	for (size_t i = 0; i < tlen; i++) {
		if (c1[1 + i] < '0' || c1[1 + i] > '9' || t > (INT64_MAX - (c1[1 + i] - '0')) / 10)
			return SK_PAYSIG_MALFORMED;
		t = t * 10 + (c1[1 + i] - '0');
	}
	if (!sk_hex_decode(c2 + 1, MAC_LEN, got, SK_HEX_LOWER))
		return SK_PAYSIG_MALFORMED;
	for (unsigned i = 0; i < k->n && key == NULL; i++)
		if (strlen(k->k[i].kid) == klen && memcmp(k->k[i].kid, h, klen) == 0)
			key = &k->k[i];
	if (key == NULL)
		return SK_PAYSIG_UNKNOWN_KID;
	if (!mac(key, topic, t, val, len, want))
		return SK_PAYSIG_MALFORMED;
	if (CRYPTO_memcmp(want, got, MAC_LEN) != 0)
		return SK_PAYSIG_BAD_MAC;
	if (max_age_ms > 0 && t < now_ms - max_age_ms)
		return SK_PAYSIG_STALE;
	/* Dated ahead of our clock by more than the skew: a copy of it could be
	 * replayed until then, after the request table forgot its id. */
	if (now_ms > 0 && t > now_ms + SK_PAYSIG_SKEW_MS)
		return SK_PAYSIG_STALE;
	return SK_PAYSIG_OK;
}

const char *
sk_paysig_verdict_name(int v)
{
	static const char *const names[] = {
		[SK_PAYSIG_OK] = "ok",
		[SK_PAYSIG_MISSING] = "unsigned",
		[SK_PAYSIG_MALFORMED] = "bad_header",
		[SK_PAYSIG_UNKNOWN_KID] = "unknown_kid",
		[SK_PAYSIG_BAD_MAC] = "bad_mac",
		[SK_PAYSIG_STALE] = "stale",
	};
	return v >= 0 && (size_t)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}
