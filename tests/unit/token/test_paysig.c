/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_paysig.c - signed payment messages (token/sk_paysig.h): a table of
 * headers and values against a key set (good, wrong key, unknown kid,
 * truncated, a bit flipped in the value, the header or the MAC, missing,
 * the second key of a rotation, another topic, stale), every truncation of
 * a good header, and the key file loader's refusals.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sk_common.h"
#include "sk_paysig.h"
#include "sk_test.h"

#define TOPIC "seckill.payments"
#define VAL   "{\"v\":1,\"request\":\"r-1\",\"order\":\"42\",\"kind\":\"refund\"}"
#define NOW   INT64_C(1764000000000) /* ms */
#define DAY   INT64_C(86400000)
#define SEC1  "0123456789abcdef0123456789abcdef-one"
#define SEC2  "0123456789abcdef0123456789abcdef-two"

/* keys - a set of @n keys from (kid, secret) pairs. */
static struct sk_paysig_keys *
keys(unsigned n, const char *kid1, const char *sec1, const char *kid2, const char *sec2)
{
	const char *kids[2] = {kid1, kid2}, *secs[2] = {sec1, sec2};
	size_t lens[2] = {strlen(sec1), sec2 != NULL ? strlen(sec2) : 0};
	struct sk_paysig_keys *k = NULL;

	ck_assert_int_eq(sk_paysig_keys_from(kids, secs, lens, n, &k), 0);
	return k;
}

static int
verify(const struct sk_paysig_keys *k, const char *topic, const char *hdr, const char *val)
{
	return sk_paysig_verify(k, topic, hdr, hdr != NULL ? strlen(hdr) : 0, val, strlen(val), NOW,
				7 * DAY);
}

START_TEST(sign_verify_table)
{
	/* the consumer: k2 (new) and k1 (old) during a rotation */
	struct sk_paysig_keys *consumer = keys(2, "k2", SEC2, "k1", SEC1);
	struct sk_paysig_keys *shop1 = keys(1, "k1", SEC1, NULL, NULL);
	struct sk_paysig_keys *shop2 = keys(1, "k2", SEC2, NULL, NULL);
	struct sk_paysig_keys *wrong = keys(1, "k1", SEC2, NULL, NULL); /* k1's id, k2's secret */
	struct sk_paysig_keys *other = keys(1, "k9", SEC1, NULL, NULL);
	char good[SK_PAYSIG_HDR_MAX + 1], rot[SK_PAYSIG_HDR_MAX + 1],
		bad_key[SK_PAYSIG_HDR_MAX + 1];
	char unknown[SK_PAYSIG_HDR_MAX + 1], stale[SK_PAYSIG_HDR_MAX + 1];
	char trunc[SK_PAYSIG_HDR_MAX + 1], macflip[SK_PAYSIG_HDR_MAX + 1];
	char tflip[SK_PAYSIG_HDR_MAX + 1], upper[SK_PAYSIG_HDR_MAX + 1];
	char val_flip[] = VAL;

	ck_assert_int_gt(sk_paysig_sign(shop1, TOPIC, NOW - 1000, VAL, strlen(VAL), good), 0);
	ck_assert_int_gt(sk_paysig_sign(shop2, TOPIC, NOW - 1000, VAL, strlen(VAL), rot), 0);
	ck_assert_int_gt(sk_paysig_sign(wrong, TOPIC, NOW - 1000, VAL, strlen(VAL), bad_key), 0);
	ck_assert_int_gt(sk_paysig_sign(other, TOPIC, NOW - 1000, VAL, strlen(VAL), unknown), 0);
	ck_assert_int_gt(sk_paysig_sign(shop1, TOPIC, NOW - 8 * DAY, VAL, strlen(VAL), stale), 0);
	ck_assert_int_eq(strncmp(good, "k1:1763999999000:", 17), 0);
	ck_assert_uint_eq(strlen(good), 17 + 64);
	snprintf(trunc, sizeof(trunc), "%.*s", (int)strlen(good) - 1, good);
	snprintf(macflip, sizeof(macflip), "%s", good);
	char *last = &macflip[strlen(macflip) - 1];
	*last = *last == '0' ? '1' : '0'; /* still hex, one nibble off */
	snprintf(tflip, sizeof(tflip), "%s", good);
	tflip[4] = tflip[4] == '9' ? '8' : '9'; /* the signing time changed */
	snprintf(upper, sizeof(upper), "%s", good);
	for (char *p = strrchr(upper, ':'); *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	val_flip[20] ^= 0x01; /* one bit of the value */

	const struct {
		const char *name, *topic, *hdr, *val;
		int want;
	} t[] = {
		{"good", TOPIC, good, VAL, SK_PAYSIG_OK},
		{"second key during rotation", TOPIC, rot, VAL, SK_PAYSIG_OK},
		{"wrong key, right kid", TOPIC, bad_key, VAL, SK_PAYSIG_BAD_MAC},
		{"unknown kid", TOPIC, unknown, VAL, SK_PAYSIG_UNKNOWN_KID},
		{"missing header", TOPIC, NULL, VAL, SK_PAYSIG_MISSING},
		{"truncated MAC", TOPIC, trunc, VAL, SK_PAYSIG_MALFORMED},
		{"bit flipped in the MAC", TOPIC, macflip, VAL, SK_PAYSIG_BAD_MAC},
		{"bit flipped in the value", TOPIC, good, val_flip, SK_PAYSIG_BAD_MAC},
		{"signing time changed", TOPIC, tflip, VAL, SK_PAYSIG_BAD_MAC},
		{"another topic", "seckill.payments.test", good, VAL, SK_PAYSIG_BAD_MAC},
		{"stale (8 days, max 7)", TOPIC, stale, VAL, SK_PAYSIG_STALE},
		{"uppercase hex", TOPIC, upper, VAL, SK_PAYSIG_MALFORMED},
		{"empty", TOPIC, "", VAL, SK_PAYSIG_MALFORMED},
		{"no time", TOPIC, "k1::00", VAL, SK_PAYSIG_MALFORMED},
		{"bad kid", TOPIC, "k 1:1:00", VAL, SK_PAYSIG_MALFORMED},
		{"time zero", TOPIC,
		 "k1:0:0000000000000000000000000000000000000000000000000000000000000000", VAL,
		 SK_PAYSIG_MALFORMED},
		{"time not decimal", TOPIC,
		 "k1:1x:0000000000000000000000000000000000000000000000000000000000000000", VAL,
		 SK_PAYSIG_MALFORMED},
		{"time overflows", TOPIC,
		 "k1:9999999999999999999:0000000000000000000000000000000000000000000000000000000000"
		 "000000",
		 VAL, SK_PAYSIG_MALFORMED},
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++)
		ck_assert_msg(
			verify(consumer, t[i].topic, t[i].hdr, t[i].val) == t[i].want,
			"%s: got %s, want %s", t[i].name,
			sk_paysig_verdict_name(verify(consumer, t[i].topic, t[i].hdr, t[i].val)),
			sk_paysig_verdict_name(t[i].want));
	/* every prefix of a good header is refused */
	for (size_t n = 0; n < strlen(good); n++)
		ck_assert_int_ne(
			sk_paysig_verify(consumer, TOPIC, good, n, VAL, strlen(VAL), NOW, 7 * DAY),
			SK_PAYSIG_OK);
	/* after the rotation the old key is gone */
	struct sk_paysig_keys *after = keys(1, "k2", SEC2, NULL, NULL);
	ck_assert_int_eq(verify(after, TOPIC, good, VAL), SK_PAYSIG_UNKNOWN_KID);
	ck_assert_int_eq(verify(after, TOPIC, rot, VAL), SK_PAYSIG_OK);
	/* dated ahead of the clock: within the skew good, beyond it stale (a
	 * copy would stay replayable until then), with or without an age limit */
	char ahead[SK_PAYSIG_HDR_MAX + 1], far[SK_PAYSIG_HDR_MAX + 1];
	ck_assert_int_gt(
		sk_paysig_sign(shop1, TOPIC, NOW + SK_PAYSIG_SKEW_MS, VAL, strlen(VAL), ahead), 0);
	ck_assert_int_gt(
		sk_paysig_sign(shop1, TOPIC, NOW + SK_PAYSIG_SKEW_MS + 1, VAL, strlen(VAL), far),
		0);
	ck_assert_int_eq(verify(consumer, TOPIC, ahead, VAL), SK_PAYSIG_OK);
	ck_assert_int_eq(verify(consumer, TOPIC, far, VAL), SK_PAYSIG_STALE);
	ck_assert_int_eq(
		sk_paysig_verify(consumer, TOPIC, far, strlen(far), VAL, strlen(VAL), NOW, 0),
		SK_PAYSIG_STALE);
	/* no age limit: a stale signature is good */
	ck_assert_int_eq(
		sk_paysig_verify(consumer, TOPIC, stale, strlen(stale), VAL, strlen(VAL), NOW, 0),
		SK_PAYSIG_OK);
	ck_assert_str_eq(sk_paysig_signing_kid(consumer), "k2");
	sk_paysig_keys_free(after);
	sk_paysig_keys_free(consumer);
	sk_paysig_keys_free(shop1);
	sk_paysig_keys_free(shop2);
	sk_paysig_keys_free(wrong);
	sk_paysig_keys_free(other);
}
END_TEST

START_TEST(sign_refuses_what_it_cannot_bind)
{
	struct sk_paysig_keys *k = keys(1, "k1", SEC1, NULL, NULL);
	static char big[SK_PAYSIG_VALUE_MAX + 1];
	char h[SK_PAYSIG_HDR_MAX + 1], topic[SK_PAYSIG_TOPIC_MAX + 2];

	memset(big, 'x', sizeof(big));
	memset(topic, 't', sizeof(topic) - 1);
	topic[sizeof(topic) - 1] = '\0';
	ck_assert_int_eq(sk_paysig_sign(k, TOPIC, NOW, big, sizeof(big), h), -EINVAL);
	ck_assert_int_eq(sk_paysig_sign(k, topic, NOW, VAL, strlen(VAL), h), -EINVAL);
	ck_assert_int_eq(sk_paysig_sign(k, TOPIC, 0, VAL, strlen(VAL), h), -EINVAL);
	ck_assert_int_gt(sk_paysig_sign(k, TOPIC, NOW, big, sizeof(big) - 1, h), 0);
	sk_paysig_keys_free(k);
	/* sets that cannot be built */
	const char *kids[3] = {"a", "a", "b"}, *secs[3] = {SEC1, SEC2, SEC1};
	size_t lens[3] = {strlen(SEC1), strlen(SEC2), strlen(SEC1)}, shortlen[1] = {31};
	struct sk_paysig_keys *out = NULL;
	ck_assert_int_eq(sk_paysig_keys_from(kids, secs, lens, 2, &out), -EINVAL); /* repeat */
	ck_assert_int_eq(sk_paysig_keys_from(kids + 1, secs, lens, 3 - 1, &out), 0);
	sk_paysig_keys_free(out);
	ck_assert_int_eq(sk_paysig_keys_from(kids, secs, lens, 3, &out), -EINVAL); /* 3 keys */
	ck_assert_int_eq(sk_paysig_keys_from(kids, secs, shortlen, 1, &out), -EINVAL);
	ck_assert_int_eq(sk_paysig_keys_from(kids, secs, lens, 0, &out), -EINVAL);
}
END_TEST

/* load - write @text to a file of @mode, load it: the result, the error in @err. */
static int
load(const char *text, mode_t mode, char *err, size_t errlen, struct sk_paysig_keys **k)
{
	char path[] = "/tmp/sk-paysig-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
	int rc = sk_paysig_keys_load(path, k, err, errlen);
	unlink(path);
	return rc;
}

START_TEST(key_file)
{
	struct sk_paysig_keys *k = NULL, *shop = keys(1, "k1", SEC1, NULL, NULL);
	char err[512], h[SK_PAYSIG_HDR_MAX + 1];

	ck_assert_int_eq(load("# rotation: the new key first\n\nk2 " SEC2 "\r\nk1\t" SEC1 "  \n",
			      0600, err, sizeof(err), &k),
			 0);
	ck_assert_str_eq(sk_paysig_signing_kid(k), "k2");
	ck_assert_int_gt(sk_paysig_sign(shop, TOPIC, NOW, VAL, strlen(VAL), h), 0);
	ck_assert_int_eq(verify(k, TOPIC, h, VAL), SK_PAYSIG_OK); /* the second line verifies */
	sk_paysig_keys_free(k);
	ck_assert_int_eq(load("k1 " SEC1, 0400, err, sizeof(err), &k), 0); /* no newline */
	sk_paysig_keys_free(k);

	const struct {
		const char *text;
		mode_t mode;
		int rc;
		const char *err;
	} bad[] = {
		{"k1 " SEC1 "\n", 0640, -EPERM, "readable or writable by group or others"},
		{"k1 " SEC1 "\n", 0604, -EPERM, "chmod 600"},
		{"", 0600, -EINVAL, "no key"},
		{"# only a comment\n", 0600, -EINVAL, "no key"},
		{"k1\n", 0600, -EINVAL, "line 1: want \"KID SECRET\""},
		{"k1 short\n", 0600, -EINVAL, "line 1: the secret is not 32-256 bytes"},
		{"k/1 " SEC1 "\n", 0600, -EINVAL, "line 1: the key id"},
		{"k1 " SEC1 "\nk1 " SEC2 "\n", 0600, -EINVAL, "line 2: the key id is repeated"},
		{"a " SEC1 "\nb " SEC1 "\nc " SEC1 "\n", 0600, -EINVAL, "line 3: more than 2 keys"},
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		ck_assert_int_eq(load(bad[i].text, bad[i].mode, err, sizeof(err), &k), bad[i].rc);
		ck_assert_msg(strstr(err, bad[i].err) != NULL, "%zu: %s", i, err);
		ck_assert_msg(strstr(err, "0123456789abcdef") == NULL, "secret in: %s", err);
	}
	ck_assert_int_eq(sk_paysig_keys_load("/nonexistent/sk-key", &k, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/sk-key"));
	/* one word filling the whole file, no blank, no line end: the scan for
	 * the blank must stop at the file's end (ASan: no read past it) */
	static char word[4097];
	memset(word, 'k', sizeof(word) - 1);
	ck_assert_int_eq(load(word, 0600, err, sizeof(err), &k), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "want \"KID SECRET\""));
	/* owned by another user (as root only: chown needs it) */
	if (geteuid() == 0) {
		char path[] = "/tmp/sk-paysig-XXXXXX";
		int fd = mkstemp(path);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, "k1 " SEC1 "\n", strlen("k1 " SEC1 "\n")),
				 (ssize_t)strlen("k1 " SEC1 "\n"));
		ck_assert_int_eq(fchown(fd, 65534, 65534), 0);
		close(fd);
		ck_assert_int_eq(sk_paysig_keys_load(path, &k, err, sizeof(err)), -EPERM);
		ck_assert_ptr_nonnull(strstr(err, "owned by uid 65534"));
		unlink(path);
	}
	static char huge[5000];
	memset(huge, '#', sizeof(huge) - 1);
	ck_assert_int_eq(load(huge, 0600, err, sizeof(err), &k), -EFBIG);
	sk_paysig_keys_free(shop);
}
END_TEST

static Suite *
paysig_suite(void)
{
	Suite *s = suite_create("paysig");
	TCase *tc = tcase_create("paysig");

	tcase_add_test(tc, sign_verify_table);
	tcase_add_test(tc, sign_refuses_what_it_cannot_bind);
	tcase_add_test(tc, key_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return sk_test_run(paysig_suite(), false);
}
