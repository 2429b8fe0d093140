/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-token - mint a buy-path token (JWT HS256) for tests and operators.
 *
 *   seckill-token (--secret-file F | --secret S) --sub USER [--item ID [--gate]]
 *                 [--kid KID] [--ttl SECONDS] [--nbf SECONDS | --nbf-spread SECONDS]
 *                 [--now UNIX]
 *
 * Prints the token and a newline on stdout. Exit status: 0 success,
 * 1 runtime failure (secret file unreadable, secret too short), 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "sk_config.h"
#include "sk_log.h"
#include "sk_parse.h"
#include "sk_token.h"

#define EXIT_USAGE 2
#define PROG	   "seckill-token"

_Static_assert(SK_CONFIG_TOKEN_SECRET_MIN == 32 && SK_CONFIG_TOKEN_SECRET_MAX == 4096,
	       "the secret file messages name these limits");

static const char usage[] =
	"usage: seckill-token (--secret-file FILE | --secret SECRET) --sub USER\n"
	"                     [--item ID [--gate] | --gate-item ID] [--kid KID]\n"
	"                     [--ttl SECONDS]\n"
	"                     [--nbf SECONDS | --nbf-spread SECONDS] [--now UNIX]\n"
	"\n"
	"Mint a JWT HS256 token for POST /v1/seckill/{item} and print it.\n"
	"\n"
	"  --secret-file FILE  shared secret, read from FILE (one trailing newline,\n"
	"                      \\n or \\r\\n, is dropped); at least 32 bytes\n"
	"  --secret SECRET     shared secret given inline (visible in ps: tests only)\n"
	"  --sub USER          user id, decimal 1..18446744073709551615\n"
	"  --item ID           restrict the token to item ID (default: any item)\n"
	"  --gate              add the gate claim for --item (\"gate\":\"ID\"): the user\n"
	"                      passed the shop's captcha or quiz; an item that\n"
	"                      requires it refuses tokens without it (403 gate)\n"
	"  --gate-item ID      the gate claim of item ID in a token for any item\n"
	"                      (no item claim): a cart's token, whose gated line\n"
	"                      is item ID\n"
	"  --kid KID           name the key in the header (the appliance's key ring:\n"
	"                      1-32 of A-Z a-z 0-9 . _ -); default: no kid (the\n"
	"                      appliance's default key)\n"
	"  --ttl SECONDS       lifetime: exp = now + SECONDS (default 300)\n"
	"  --nbf SECONDS       not valid before now + SECONDS (may be negative)\n"
	"  --nbf-spread SECONDS\n"
	"                      not valid before now + a per-user delay in\n"
	"                      [0, SECONDS), the same for a user at every issue\n"
	"                      (spreads a crowd's arrival; 1..86400)\n"
	"  --now UNIX          use this as the current time (reproducible tokens)\n"
	"  -h, --help          this help\n"
	"\n"
	"Exit status: 0 ok, 1 failure (secret unreadable or too short), 2 usage.\n";

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"secret-file", required_argument, NULL, 'f'},
		{"secret", required_argument, NULL, 's'},
		{"sub", required_argument, NULL, 'u'},
		{"item", required_argument, NULL, 'i'},
		{"kid", required_argument, NULL, 'k'},
		{"ttl", required_argument, NULL, 't'},
		{"nbf", required_argument, NULL, 'n'},
		{"nbf-spread", required_argument, NULL, 'S'},
		{"gate", no_argument, NULL, 'g'},
		{"gate-item", required_argument, NULL, 'G'},
		{"now", required_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *secret_file = NULL, *secret_arg = NULL, *kid = NULL;
	static uint8_t secret[SK_CONFIG_TOKEN_SECRET_MAX];
	char tok[SK_TOKEN_MAX_LEN + 1];
	struct sk_token_claims c;
	struct sk_token_key *key = NULL;
	int64_t ttl = 300, nbf_off = 0, spread = 0, now = (int64_t)time(NULL);
	bool have_sub = false, have_nbf = false, gate = false;
	uint64_t gate_item = 0;
	size_t secret_len = 0;
	int opt, rc;

	memset(&c, 0, sizeof(c));
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			secret_file = optarg;
			break;
		case 's':
			secret_arg = optarg;
			break;
		case 'u':
			if (sk_token_user_id_parse(optarg, strlen(optarg), &c.user) != 0) {
				sk_log(PROG,
				       "--sub: '%s' is not a user id "
				       "(decimal, 1..18446744073709551615)",
				       optarg);
				return EXIT_USAGE;
			}
			have_sub = true;
			break;
		case 'k':
			kid = optarg;
			break;
		case 'i':
			/* item ids are u64; 0 is allowed here, the stock module decides */
			if (strcmp(optarg, "0") == 0) {
				c.item = 0;
			} else if (sk_token_user_id_parse(optarg, strlen(optarg), &c.item) != 0) {
				sk_log(PROG, "--item: '%s' is not an item id", optarg);
				return EXIT_USAGE;
			}
			c.has_item = true;
			break;
		case 't':
			if (!sk_parse_i64(optarg, 1, SK_TOKEN_TIME_MAX, &ttl)) {
				sk_log(PROG,
				       "--ttl: '%s' is not a positive number of "
				       "seconds",
				       optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (!sk_parse_i64(optarg, -SK_TOKEN_TIME_MAX, SK_TOKEN_TIME_MAX,
					  &nbf_off)) {
				sk_log(PROG, "--nbf: '%s' is not a number of seconds", optarg);
				return EXIT_USAGE;
			}
			have_nbf = true;
			break;
		case 'S':
			if (!sk_parse_i64(optarg, 1, 86400, &spread)) {
				sk_log(PROG, "--nbf-spread: '%s' is not 1..86400 seconds", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'g':
			gate = true;
			break;
		case 'G':
			if (!sk_parse_u64(optarg, 1, UINT64_MAX, &gate_item)) {
				sk_log(PROG, "--gate-item: '%s' is not an item id (1..2^64-1)",
				       optarg);
				return EXIT_USAGE;
			}
			break;
		case 'N':
			if (!sk_parse_i64(optarg, 0, SK_TOKEN_TIME_MAX, &now)) {
				sk_log(PROG, "--now: '%s' is not a unix time", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		sk_log(PROG, "unexpected argument '%s'", argv[optind]);
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if ((secret_file == NULL) == (secret_arg == NULL)) {
		sk_log(PROG, "give exactly one of --secret-file and --secret");
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (!have_sub) {
		sk_log(PROG, "--sub is required");
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (gate_item != 0 && (gate || c.has_item)) {
		sk_log(PROG, "--gate-item: for a token without --item (use --gate with --item)");
		return EXIT_USAGE;
	}
	if (gate && (!c.has_item || c.item == 0)) {
		sk_log(PROG, "--gate needs --item (an item id, not 0): the claim names the item");
		return EXIT_USAGE;
	}
	if (have_nbf && spread != 0) {
		sk_log(PROG, "give at most one of --nbf and --nbf-spread");
		return EXIT_USAGE;
	}

	if (secret_file != NULL) {
		rc = sk_config_read_secret(secret_file, secret, &secret_len, NULL, 0);
		if (rc != 0) {
			sk_log(PROG, "%s: %s", secret_file,
			       rc == -EINVAL  ? "secret shorter than 32 bytes"
			       : rc == -EFBIG ? "secret longer than 4096 bytes"
			       : rc == -EIO   ? "read error"
					      : strerror(-rc));
			return EXIT_FAILURE;
		}
	} else {
		secret_len = strlen(secret_arg);
		if (secret_len > SK_CONFIG_TOKEN_SECRET_MAX) {
			sk_log(PROG, "--secret longer than %d bytes", SK_CONFIG_TOKEN_SECRET_MAX);
			return EXIT_USAGE;
		}
		memcpy(secret, secret_arg, secret_len);
	}
	rc = sk_token_key_create(secret, secret_len, &key);
	OPENSSL_cleanse(secret, sizeof(secret));
	if (rc == -EINVAL) {
		sk_log(PROG, "secret is %zu bytes; at least %d are required", secret_len,
		       SK_TOKEN_SECRET_MIN);
		return EXIT_FAILURE;
	}
	if (rc != 0) {
		sk_log(PROG, "cannot build key: %s", strerror(-rc));
		return EXIT_FAILURE;
	}

	c.exp = now + ttl;
	c.iat = now;
	c.has_iat = true;
	if (have_nbf) {
		c.nbf = now + nbf_off;
		c.has_nbf = true;
	} else if (spread != 0) {
		c.nbf = now + (int64_t)sk_token_nbf_jitter(c.user, (uint64_t)spread);
		c.has_nbf = true;
	}
	if (gate || gate_item != 0) {
		c.gate = gate ? c.item : gate_item;
		c.has_gate = true;
	}
	if (c.exp > SK_TOKEN_TIME_MAX || (c.has_nbf && (c.nbf < 0 || c.nbf > SK_TOKEN_TIME_MAX))) {
		sk_log(PROG, "exp or nbf out of range");
		sk_token_key_free(key);
		return EXIT_USAGE;
	}
	rc = sk_token_mint_kid(key, kid, &c, tok, sizeof(tok), NULL);
	sk_token_key_free(key);
	if (rc == -EINVAL && kid != NULL) {
		sk_log(PROG, "--kid: '%s' is not a key id (1-32 of A-Z a-z 0-9 . _ -)", kid);
		return EXIT_USAGE;
	}
	if (rc != 0) {
		sk_log(PROG, "cannot mint: %s", strerror(-rc));
		return EXIT_FAILURE;
	}
	if (printf("%s\n", tok) < 0 || fflush(stdout) != 0) {
		sk_log(PROG, "cannot write the token: %s", strerror(errno));
		return EXIT_FAILURE;
	}
	return 0;
}
