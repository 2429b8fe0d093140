/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * token_bench.c - seckill-token-bench: cost of token verification and of a
 * rate-limit check on one core.
 *
 *   seckill-token-bench [--iters N] [--json]
 *
 * Measures, each over N calls (default 200000) after a warm-up:
 *   verify_valid    sk_token_verify() on a valid ~190-byte token
 *   verify_forged   same token, wrong signature (the usual attack)
 *   verify_alg_none refused at the header, before any HMAC
 *   hmac_precomputed the HMAC inside sk_token_verify(): low-level SHA-256
 *                   states after K^ipad / K^opad, copied per call
 *   hmac_oneshot    OpenSSL HMAC() over the same signing input: what one
 *                   verification would cost without precomputed states
 *   hmac_evp_copy   the "supported API" alternative: EVP_MD_CTX_copy_ex()
 *                   from saved inner/outer contexts (allocates per call)
 *   ratelimit_check sk_ratelimit_check() that passes (IP + item + global)
 * and prints calls/s and TSC cycles per call. --json prints one JSON object.
 * The process runs where the scheduler puts it; pin it with taskset for
 * stable figures.
 */
/* The low-level SHA256 calls mirror sk_token.c; see the comment there. */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "bench_util.h"
#include "sk_ratelimit.h"
#include "sk_token.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t
cycles(void)
{
	return __rdtsc();
}
#else
static inline uint64_t
cycles(void)
{
	return (uint64_t)bench_clock_ns(CLOCK_MONOTONIC);
}
#endif

#define NOW 1700000000LL

static const char secret[] = "bench-secret-0123456789-abcdefghijklmnop";

/* tsc_hz - cycles per second, measured against CLOCK_MONOTONIC over 100 ms. */
static double
tsc_hz(void)
{
	double t0 = bench_now_s(), t1;
	uint64_t c0 = cycles(), c1;
	struct timespec pause = {0, 100000000};

	nanosleep(&pause, NULL);
	c1 = cycles();
	t1 = bench_now_s();
	return (double)(c1 - c0) / (t1 - t0);
}

struct result {
	const char *name;
	double per_s;
	double cyc;
};

/* What each benchmark needs; one struct so the loops stay tiny. */
struct ctx {
	struct sk_token_key *key;
	const char *tok;
	size_t len;
	struct sk_ratelimit *rl;
	EVP_MD_CTX *inner, *outer, *tmp;
	SHA256_CTX ll_inner, ll_outer;
	uint64_t sink;
	int failures;
};

enum which {
	B_VALID,
	B_FORGED,
	B_NONE,
	B_PRE,
	B_ONESHOT,
	B_EVP,
	B_RL,
};

static void
one(struct ctx *c, enum which w, uint64_t i)
{
	unsigned char mac[32], ih[32];
	unsigned int ml;
	uint64_t user = 0;
	SHA256_CTX sc;

	switch (w) {
	case B_VALID:
	case B_FORGED:
	case B_NONE:
		c->sink += sk_token_verify(c->key, c->tok, c->len, 7, NOW, 30, &user) + user;
		break;
	case B_PRE:
		sc = c->ll_inner;
		SHA256_Update(&sc, c->tok, c->len);
		SHA256_Final(ih, &sc);
		sc = c->ll_outer;
		SHA256_Update(&sc, ih, 32);
		SHA256_Final(mac, &sc);
		c->sink += mac[0];
		break;
	case B_ONESHOT:
		HMAC(EVP_sha256(), secret, (int)strlen(secret), (const unsigned char *)c->tok,
		     c->len, mac, &ml);
		c->sink += mac[0];
		break;
	case B_EVP:
		if (!EVP_MD_CTX_copy_ex(c->tmp, c->inner) ||
		    !EVP_DigestUpdate(c->tmp, c->tok, c->len) ||
		    !EVP_DigestFinal_ex(c->tmp, ih, &ml) || !EVP_MD_CTX_copy_ex(c->tmp, c->outer) ||
		    !EVP_DigestUpdate(c->tmp, ih, 32) || !EVP_DigestFinal_ex(c->tmp, mac, &ml))
			c->failures++;
		c->sink += mac[0];
		break;
	case B_RL:
		/* 1 call per simulated microsecond: under every limit */
		c->sink += sk_ratelimit_check(c->rl, (uint32_t)(i & 7), (uint32_t)(i & 1023),
					      (uint64_t)i * 1000, NULL);
		break;
	}
}

static struct result
run(struct ctx *c, enum which w, const char *name, uint64_t iters, double hz)
{
	struct result r = {name, 0, 0};
	uint64_t i, c0, c1;

	for (i = 0; i < iters / 10 + 1; i++)
		one(c, w, i);
	c0 = cycles();
	for (i = 0; i < iters; i++)
		one(c, w, i);
	c1 = cycles();
	r.cyc = (double)(c1 - c0) / (double)iters;
	r.per_s = hz / r.cyc;
	return r;
}

/* evp_pads - EVP contexts holding SHA-256 after K^ipad and K^opad. */
static int
evp_pads(struct ctx *c)
{
	unsigned char pad[64];
	size_t i, n = strlen(secret);

	c->inner = EVP_MD_CTX_new();
	c->outer = EVP_MD_CTX_new();
	c->tmp = EVP_MD_CTX_new();
	if (c->inner == NULL || c->outer == NULL || c->tmp == NULL)
		return -1;
	memset(pad, 0x36, sizeof(pad));
	for (i = 0; i < n; i++)
		pad[i] ^= (unsigned char)secret[i];
	if (!EVP_DigestInit_ex(c->inner, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(c->inner, pad, 64))
		return -1;
	SHA256_Init(&c->ll_inner);
	SHA256_Update(&c->ll_inner, pad, 64);
	memset(pad, 0x5c, sizeof(pad));
	for (i = 0; i < n; i++)
		pad[i] ^= (unsigned char)secret[i];
	if (!EVP_DigestInit_ex(c->outer, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(c->outer, pad, 64))
		return -1;
	SHA256_Init(&c->ll_outer);
	SHA256_Update(&c->ll_outer, pad, 64);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"iters", required_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct sk_token_claims cl = {.user = 1234567,
				     .item = 7,
				     .has_item = true,
				     .exp = NOW + 300,
				     .iat = NOW,
				     .has_iat = true,
				     .nbf = NOW - 5,
				     .has_nbf = true};
	char valid[SK_TOKEN_MAX_LEN + 1], forged[SK_TOKEN_MAX_LEN + 1];
	static const char none[] = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0."
				   "eyJzdWIiOiI0MiIsImV4cCI6MTcwMDAwMDMwMH0.";
	struct sk_ratelimit_config rc;
	struct result res[7];
	struct ctx c = {0};
	uint64_t iters = 200000, user = 0;
	bool json = false;
	size_t vlen, i, nres = 0;
	double hz;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (!sk_parse_u64(optarg, 1, 100000000, &iters)) {
				fprintf(stderr, "seckill-token-bench: --iters: 1..100000000\n");
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: seckill-token-bench [--iters N] [--json]\n");
			return 0;
		default:
			return 2;
		}
	}

	if (sk_token_key_create(secret, strlen(secret), &c.key) != 0 ||
	    sk_token_mint(c.key, &cl, valid, sizeof(valid), &vlen) != 0 || evp_pads(&c) != 0) {
		fprintf(stderr, "seckill-token-bench: setup failed\n");
		return 1;
	}
	memcpy(forged, valid, vlen + 1);
	forged[vlen - 10] = forged[vlen - 10] == 'A' ? 'B' : 'A';
	if (sk_token_verify(c.key, valid, vlen, 7, NOW, 30, &user) != SK_TOKEN_OK ||
	    sk_token_verify(c.key, forged, vlen, 7, NOW, 30, &user) != SK_TOKEN_E_SIGNATURE ||
	    sk_token_verify(c.key, none, strlen(none), 7, NOW, 30, &user) != SK_TOKEN_E_ALG) {
		fprintf(stderr, "seckill-token-bench: self-check failed\n");
		return 1;
	}
	hz = tsc_hz();

	sk_ratelimit_config_defaults(&rc);
	rc.hz = 1000000000ULL; /* simulated clock: 1 cycle = 1 ns */
	rc.n_items = 8;
	rc.global_rate = 10000000;
	rc.item_rate = 10000000;
	rc.ip_rate = 100000;
	rc.ip_burst = 1000;
	if (sk_ratelimit_create(&rc, &c.rl) != 0) {
		fprintf(stderr, "seckill-token-bench: ratelimit setup failed\n");
		return 1;
	}

	c.tok = valid;
	c.len = vlen;
	res[nres++] = run(&c, B_VALID, "verify_valid", iters, hz);
	c.tok = forged;
	res[nres++] = run(&c, B_FORGED, "verify_forged", iters, hz);
	c.tok = none;
	c.len = strlen(none);
	res[nres++] = run(&c, B_NONE, "verify_alg_none", iters, hz);
	c.tok = valid;
	c.len = (size_t)(strrchr(valid, '.') - valid);
	res[nres++] = run(&c, B_PRE, "hmac_precomputed", iters, hz);
	res[nres++] = run(&c, B_ONESHOT, "hmac_oneshot", iters, hz);
	res[nres++] = run(&c, B_EVP, "hmac_evp_copy", iters, hz);
	res[nres++] = run(&c, B_RL, "ratelimit_check", iters, hz);
	if (c.failures != 0 || sk_ratelimit_stats_get(c.rl)->passed == 0) {
		fprintf(stderr, "seckill-token-bench: a measured call failed\n");
		return 1;
	}

	if (json) {
		printf("{\"bench\":\"token\",\"iters\":%" PRIu64
		       ",\"tsc_hz\":%.0f,\"token_len\":%zu",
		       iters, hz, vlen);
		for (i = 0; i < nres; i++)
			printf(",\"%s_per_s\":%.0f,\"%s_cycles\":%.1f", res[i].name, res[i].per_s,
			       res[i].name, res[i].cyc);
		printf("}\n");
	} else {
		printf("seckill-token-bench: %" PRIu64 " calls each, one core, TSC %.2f GHz, "
		       "token %zu bytes\n",
		       iters, hz / 1e9, vlen);
		printf("%-18s %14s %12s\n", "what", "calls/s", "cycles/call");
		for (i = 0; i < nres; i++)
			printf("%-18s %14.0f %12.1f\n", res[i].name, res[i].per_s, res[i].cyc);
	}
	sk_ratelimit_free(c.rl);
	sk_token_key_free(c.key);
	EVP_MD_CTX_free(c.inner);
	EVP_MD_CTX_free(c.outer);
	EVP_MD_CTX_free(c.tmp);
	return c.sink == 42 ? 3 : 0; /* keep the sink alive */
}
