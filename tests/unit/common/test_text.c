/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_text.c - the small shared helpers of include/: hex digits and
 * bytes, trimming (sk_text.h), and the secret file check
 * (sk_secret_file.h). Tables of inputs with their expected results.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "sk_common.h"
#include "sk_secret_file.h"
#include "sk_test.h"
#include "sk_text.h"

START_TEST(hex_digits)
{
	static const struct {
		char c;
		int any, lower;
	} t[] = {
		{'0', 0, 0},   {'9', 9, 9},    {'a', 10, 10}, {'f', 15, 15},
		{'A', 10, -1}, {'F', 15, -1},  {'g', -1, -1}, {'G', -1, -1},
		{'/', -1, -1}, {':', -1, -1},  {'@', -1, -1}, {'`', -1, -1},
		{' ', -1, -1}, {'\0', -1, -1}, {'x', -1, -1}, {(char)0xc3, -1, -1},
	};

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++) {
		ck_assert_int_eq(sk_hex_digit(t[i].c, SK_HEX_ANY_CASE), t[i].any);
		ck_assert_int_eq(sk_hex_digit(t[i].c, SK_HEX_LOWER), t[i].lower);
	}
}
END_TEST

START_TEST(hex_decode)
{
	static const struct {
		const char *s;
		size_t n;
		enum sk_hex_case cs;
		bool ok;
		uint8_t want[4];
	} t[] = {
		{"", 0, SK_HEX_ANY_CASE, true, {0}},
		{"00ff7a", 3, SK_HEX_ANY_CASE, true, {0x00, 0xff, 0x7a}},
		{"DEADbeef", 4, SK_HEX_ANY_CASE, true, {0xde, 0xad, 0xbe, 0xef}},
		{"DEADbeef", 4, SK_HEX_LOWER, false, {0}},
		{"deadbeef", 4, SK_HEX_LOWER, true, {0xde, 0xad, 0xbe, 0xef}},
		{"0g", 1, SK_HEX_ANY_CASE, false, {0}},
		{"a", 1, SK_HEX_ANY_CASE, false, {0}}, /* the NUL stops it */
		{"abc", 2, SK_HEX_ANY_CASE, false, {0}},
		{"ab:cd", 1, SK_HEX_ANY_CASE, true, {0xab}}, /* what follows is the caller's */
	};

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++) {
		uint8_t out[4] = {0};

		ck_assert_msg(sk_hex_decode(t[i].s, t[i].n, out, t[i].cs) == t[i].ok, "row %zu", i);
		if (t[i].ok)
			ck_assert_msg(memcmp(out, t[i].want, t[i].n) == 0, "row %zu", i);
	}
}
END_TEST

START_TEST(trim)
{
	static const struct {
		const char *in, *want;
	} t[] = {
		{"", ""},	    {"a", "a"},
		{"  a b\t", "a b"}, {"\t\tkey = v \r\n", "key = v"},
		{" \r\n", ""},	    {"\r\na", "\r\na"}, /* CR and LF are cut at the end only */
		{"a\n\n", "a"},
	};

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%s", t[i].in);
		ck_assert_str_eq(sk_trim(buf), t[i].want);
	}
}
END_TEST

/* check_mode - sk_secret_file_check() of a fresh file of @mode. */
static int
check_mode(mode_t mode, mode_t deny, char *why, size_t cap)
{
	char path[] = "/tmp/sk_test_secret_XXXXXX";
	int fd = mkstemp(path);
	int rc;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	rc = sk_secret_file_check(fd, deny, NULL, why, cap);
	close(fd);
	unlink(path);
	return rc;
}

START_TEST(secret_file_modes)
{
	static const struct {
		mode_t mode, deny;
		int rc;
		const char *why;
	} t[] = {
		{0600, SK_SECRET_DENY_ALL, 0, ""},
		{0400, SK_SECRET_DENY_ALL, 0, ""},
		{0640, SK_SECRET_DENY_ALL, -EPERM,
		 "mode 0640: readable or writable by group or others (chmod 600)"},
		{0604, SK_SECRET_DENY_ALL, -EPERM, "mode 0604: readable or writable"},
		{0610, SK_SECRET_DENY_ALL, -EPERM, "mode 0610"},
		{0644, SK_SECRET_DENY_WRITE, 0, ""},
		{0620, SK_SECRET_DENY_WRITE, -EPERM,
		 "mode 0620: writable by group or others (chmod 600)"},
		{0602, SK_SECRET_DENY_WRITE, -EPERM, "mode 0602: writable by group"},
	};

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++) {
		char why[128] = "";

		ck_assert_int_eq(check_mode(t[i].mode, t[i].deny, why, sizeof(why)), t[i].rc);
		ck_assert_msg(strstr(why, t[i].why) != NULL, "mode %o: %s", (unsigned)t[i].mode,
			      why);
	}
	/* No buffer for the reason: still the answer. */
	ck_assert_int_eq(check_mode(0640, SK_SECRET_DENY_ALL, NULL, 0), -EPERM);
}
END_TEST

START_TEST(secret_file_kinds)
{
	char why[128] = "", path[] = "/tmp/sk_test_secret_XXXXXX";
	struct stat sb = {0};
	int fd;

	/* A directory is not a regular file. */
	fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(sk_secret_file_check(fd, SK_SECRET_DENY_ALL, NULL, why, sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why, "not a regular file");
	close(fd);
	/* A closed descriptor: fstat's error. */
	ck_assert_int_eq(sk_secret_file_check(fd, SK_SECRET_DENY_ALL, NULL, why, sizeof(why)),
			 -EBADF);
	/* The stat comes back. */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0600), 0);
	ck_assert_int_eq(sk_secret_file_check(fd, SK_SECRET_DENY_ALL, &sb, why, sizeof(why)), 0);
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_uint_eq(sb.st_mode & 07777, 0600);
	/* Owned by another user (as root only: chown needs it). */
	if (geteuid() == 0) {
		ck_assert_int_eq(fchown(fd, 65534, 65534), 0);
		ck_assert_int_eq(
			sk_secret_file_check(fd, SK_SECRET_DENY_ALL, NULL, why, sizeof(why)),
			-EPERM);
		ck_assert_str_eq(why, "owned by uid 65534, neither this user nor root (chown it)");
	}
	close(fd);
	unlink(path);
}
END_TEST

static Suite *
text_suite(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("helpers");

	tcase_add_test(tc, hex_digits);
	tcase_add_test(tc, hex_decode);
	tcase_add_test(tc, trim);
	tcase_add_test(tc, secret_file_modes);
	tcase_add_test(tc, secret_file_kinds);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(text_suite)
