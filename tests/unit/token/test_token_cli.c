/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_token_cli.c - the seckill-token CLI: exit codes for every kind of bad
 * usage, and tokens that sk_token_verify() accepts with the claims asked for.
 *
 * argv[1] is the path of the seckill-token binary (meson passes it).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sk_common.h"
#include "sk_token.h"
#include "sk_test.h"

#define NOW "1700000000"
#define SEC "cli-secret-0123456789-abcdefghijklmnopqr"

extern char **environ;

static const char *cli;

struct out {
	int status;	 /* exit status, or -1 if it did not exit normally */
	char text[2048]; /* stdout */
	size_t len;
};

/* run - spawn the CLI with @argv (NULL-terminated, argv[0] excluded). */
static struct out
run(const char *const *args)
{
	const char *argv[32];
	struct out o = {.status = -1};
	posix_spawn_file_actions_t fa;
	int fds[2], st, devnull;
	pid_t pid;
	ssize_t n;
	size_t i;

	argv[0] = cli;
	for (i = 0; args[i] != NULL; i++) {
		ck_assert_uint_lt(i + 2, SK_ARRAY_SIZE(argv));
		argv[i + 1] = args[i];
	}
	argv[i + 1] = NULL;
	ck_assert_int_eq(pipe(fds), 0);
	devnull = open("/dev/null", O_WRONLY);
	ck_assert_int_ge(devnull, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, devnull, 2);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	ck_assert_int_eq(posix_spawn(&pid, cli, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	close(devnull);
	while (o.len < sizeof(o.text) - 1 &&
	       (n = read(fds[0], o.text + o.len, sizeof(o.text) - 1 - o.len)) > 0)
		o.len += (size_t)n;
	o.text[o.len] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st))
		o.status = WEXITSTATUS(st);
	return o;
}

/* verify - the printed token (minus "\n") under SEC at @now for @item. */
static enum sk_token_status
verify(const struct out *o, uint64_t item, int64_t now, uint64_t *user)
{
	struct sk_token_key *k = NULL;
	enum sk_token_status st;

	ck_assert_uint_gt(o->len, 1);
	ck_assert_int_eq(o->text[o->len - 1], '\n');
	ck_assert_int_eq(sk_token_key_create(SEC, strlen(SEC), &k), 0);
	st = sk_token_verify(k, o->text, o->len - 1, item, now, 0, user);
	sk_token_key_free(k);
	return st;
}

/* Usage errors exit 2, runtime failures 1, and print nothing on stdout. */
static const struct {
	const char *name;
	const char *args[12];
	int want;
} bad_cases[] = {
	{"no arguments", {NULL}, 2},
	{"no sub", {"--secret", SEC, NULL}, 2},
	{"no secret", {"--sub", "1", NULL}, 2},
	{"both secrets", {"--secret", SEC, "--secret-file", "/dev/null", "--sub", "1", NULL}, 2},
	{"sub 0", {"--secret", SEC, "--sub", "0", NULL}, 2},
	{"sub junk", {"--secret", SEC, "--sub", "12x", NULL}, 2},
	{"sub overflow", {"--secret", SEC, "--sub", "18446744073709551616", NULL}, 2},
	{"item junk", {"--secret", SEC, "--sub", "1", "--item", "-3", NULL}, 2},
	{"ttl 0", {"--secret", SEC, "--sub", "1", "--ttl", "0", NULL}, 2},
	{"ttl negative", {"--secret", SEC, "--sub", "1", "--ttl", "-5", NULL}, 2},
	{"ttl junk", {"--secret", SEC, "--sub", "1", "--ttl", "5m", NULL}, 2},
	{"nbf junk", {"--secret", SEC, "--sub", "1", "--nbf", "", NULL}, 2},
	{"now junk", {"--secret", SEC, "--sub", "1", "--now", "yesterday", NULL}, 2},
	{"unknown option", {"--secret", SEC, "--sub", "1", "--alg", "none", NULL}, 2},
	{"extra argument", {"--secret", SEC, "--sub", "1", "extra", NULL}, 2},
	{"short secret", {"--secret", "0123456789abcdef0123456789abcde", "--sub", "1", NULL}, 1},
	{"missing secret file", {"--secret-file", "/nonexistent/secret", "--sub", "1", NULL}, 1},
	{"gate without item", {"--secret", SEC, "--sub", "1", "--gate", NULL}, 2},
	{"gate of item 0", {"--secret", SEC, "--sub", "1", "--item", "0", "--gate", NULL}, 2},
	{"gate-item with item",
	 {"--secret", SEC, "--sub", "1", "--item", "3", "--gate-item", "3", NULL},
	 2},
	{"gate-item with gate",
	 {"--secret", SEC, "--sub", "1", "--gate", "--gate-item", "3", NULL},
	 2},
	{"gate-item 0", {"--secret", SEC, "--sub", "1", "--gate-item", "0", NULL}, 2},
	{"nbf-spread 0", {"--secret", SEC, "--sub", "1", "--nbf-spread", "0", NULL}, 2},
	{"nbf-spread junk", {"--secret", SEC, "--sub", "1", "--nbf-spread", "9s", NULL}, 2},
	{"nbf-spread too long", {"--secret", SEC, "--sub", "1", "--nbf-spread", "86401", NULL}, 2},
	{"nbf and nbf-spread",
	 {"--secret", SEC, "--sub", "1", "--nbf", "5", "--nbf-spread", "60", NULL},
	 2},
	{"empty secret file", {"--secret-file", "/dev/null", "--sub", "1", NULL}, 1},
};

START_TEST(test_bad_usage)
{
	struct out o = run(bad_cases[_i].args);

	ck_assert_msg(o.status == bad_cases[_i].want, "%s: exit %d, want %d", bad_cases[_i].name,
		      o.status, bad_cases[_i].want);
	ck_assert_msg(o.len == 0, "%s: printed '%s'", bad_cases[_i].name, o.text);
}
END_TEST

START_TEST(test_help)
{
	const char *args[] = {"--help", NULL};
	struct out o = run(args);

	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.text, "usage: seckill-token"));
}
END_TEST

START_TEST(test_mint_item_ttl)
{
	const char *args[] = {"--secret", SEC,	"--sub", "42", "--item", "7",
			      "--ttl",	  "60", "--now", NOW,  NULL};
	struct out o = run(args), o2;
	uint64_t user = 0;

	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(verify(&o, 7, 1700000000, &user), SK_TOKEN_OK);
	ck_assert_uint_eq(user, 42);
	ck_assert_int_eq(verify(&o, 8, 1700000000, &user), SK_TOKEN_E_WRONG_ITEM);
	ck_assert_int_eq(verify(&o, 7, 1700000059, &user), SK_TOKEN_OK);
	ck_assert_int_eq(verify(&o, 7, 1700000060, &user), SK_TOKEN_E_EXPIRED);
	/* --now makes it reproducible */
	o2 = run(args);
	ck_assert_str_eq(o.text, o2.text);
}
END_TEST

START_TEST(test_mint_nbf_default_ttl)
{
	const char *args[] = {"--secret", SEC, "--sub", "18446744073709551615", "--nbf", "100",
			      "--now",	  NOW, NULL};
	struct out o = run(args);
	uint64_t user = 0;

	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(verify(&o, 1, 1700000099, &user), SK_TOKEN_E_NOT_YET_VALID);
	ck_assert_int_eq(verify(&o, 1, 1700000100, &user), SK_TOKEN_OK);
	ck_assert_uint_eq(user, UINT64_MAX);
	ck_assert_int_eq(verify(&o, 99, 1700000299, &user), SK_TOKEN_OK); /* any item */
	ck_assert_int_eq(verify(&o, 1, 1700000300, &user), SK_TOKEN_E_EXPIRED);
}
END_TEST

/* verify_claims - as verify(), with the gate claim in *@gate. */
static enum sk_token_status
verify_claims(const struct out *o, uint64_t item, int64_t now, struct sk_token_verified *v)
{
	struct sk_token_key *k = NULL;
	enum sk_token_status st;

	ck_assert_uint_gt(o->len, 1);
	ck_assert_int_eq(sk_token_key_create(SEC, strlen(SEC), &k), 0);
	st = sk_token_verify_claims(k, o->text, o->len - 1, item, now, 0, v);
	sk_token_key_free(k);
	return st;
}

/* --gate: the claim names --item; without it, no claim. */
START_TEST(test_mint_gate)
{
	const char *args[] = {"--secret", SEC,	    "--sub", "42", "--item",
			      "7",	  "--gate", "--now", NOW,  NULL};
	const char *plain[] = {"--secret", SEC, "--sub", "42", "--item", "7", "--now", NOW, NULL};
	struct sk_token_verified v = {0, 0};
	struct out o = run(args);

	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(verify_claims(&o, 7, 1700000000, &v), SK_TOKEN_OK);
	ck_assert_uint_eq(v.user, 42);
	ck_assert_uint_eq(v.gate, 7);
	o = run(plain);
	ck_assert_int_eq(verify_claims(&o, 7, 1700000000, &v), SK_TOKEN_OK);
	ck_assert_uint_eq(v.gate, 0);

	/* --gate-item: the claim without an item claim (a cart's token) */
	const char *cart[] = {"--secret", SEC,	   "--sub", "42", "--gate-item",
			      "9",	  "--now", NOW,	    NULL};
	o = run(cart);
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(verify_claims(&o, 0, 1700000000, &v), SK_TOKEN_OK);
	ck_assert_uint_eq(v.gate, 9);
	ck_assert_int_eq(verify_claims(&o, 5, 1700000000, &v), SK_TOKEN_OK); /* any item */
}
END_TEST

/* --nbf-spread: nbf = now + the user's jitter in [0, S), the same at each
 * issue, and the users spread over the window. */
START_TEST(test_mint_nbf_spread)
{
	char sub[24];
	const char *args[] = {"--secret", SEC,	   "--sub", sub, "--nbf-spread",
			      "60",	  "--now", NOW,	    NULL};
	uint64_t user = 0, early = 0, late = 0;

	for (int u = 1; u <= 40; u++) {
		int64_t j = (int64_t)sk_token_nbf_jitter((uint64_t)u, 60);
		struct out o, o2;

		snprintf(sub, sizeof(sub), "%d", u);
		o = run(args);
		ck_assert_int_eq(o.status, 0);
		ck_assert_int_lt(j, 60);
		ck_assert_int_ge(j, 0);
		if (j > 0)
			ck_assert_int_eq(verify(&o, 1, 1700000000 + j - 1, &user),
					 SK_TOKEN_E_NOT_YET_VALID);
		ck_assert_int_eq(verify(&o, 1, 1700000000 + j, &user), SK_TOKEN_OK);
		ck_assert_uint_eq(user, (uint64_t)u);
		o2 = run(args); /* a reissue: the same token, the same nbf */
		ck_assert_str_eq(o.text, o2.text);
		early += j < 30;
		late += j >= 30;
	}
	ck_assert_uint_gt(early, 5); /* spread, not piled at one end */
	ck_assert_uint_gt(late, 5);
}
END_TEST

/* A secret file's trailing newline (\n or \r\n) is not part of the secret. */
START_TEST(test_secret_file)
{
	static const char *const endings[] = {"", "\n", "\r\n"};
	char path[] = "/tmp/sk-token-cli-XXXXXX";
	const char *args[] = {"--secret-file", path, "--sub", "5", "--now", NOW, NULL};
	uint64_t user = 0;
	size_t i;

	for (i = 0; i < SK_ARRAY_SIZE(endings); i++) {
		int fd = mkstemp(path);
		struct out o;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, SEC, strlen(SEC)), (ssize_t)strlen(SEC));
		ck_assert_int_eq(write(fd, endings[i], strlen(endings[i])),
				 (ssize_t)strlen(endings[i]));
		close(fd);
		o = run(args);
		unlink(path);
		strcpy(path, "/tmp/sk-token-cli-XXXXXX");
		ck_assert_int_eq(o.status, 0);
		ck_assert_int_eq(verify(&o, 1, 1700000000, &user), SK_TOKEN_OK);
		ck_assert_uint_eq(user, 5);
	}
}
END_TEST

int
main(int argc, char **argv)
{
	Suite *s = suite_create("token_cli");
	TCase *tc = tcase_create("cli");

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-TO-seckill-token\n", argv[0]);
		return EXIT_FAILURE;
	}
	cli = argv[1];
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_bad_usage, 0, (int)SK_ARRAY_SIZE(bad_cases));
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_mint_item_ttl);
	tcase_add_test(tc, test_mint_nbf_default_ttl);
	tcase_add_test(tc, test_secret_file);
	tcase_add_test(tc, test_mint_gate);
	tcase_add_test(tc, test_mint_nbf_spread);
	suite_add_tcase(s, tc);
	return sk_test_run(s, false);
}
