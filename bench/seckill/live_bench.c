/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * live-bench: what the buy path's live checks cost, in TSC cycles per
 * check (no EAL, no network):
 *
 *   live-bench [--seconds S] [--runs R] [--cpu N] [--entries N] [--json]
 *
 * Deny lists of N entries (default 1M) of each kind - user ids; IPv4
 * prefixes of three lengths (/32, /24, /16); IPv6 prefixes of three
 * lengths (/128, /64, /48) - then, per check, over two request streams:
 *
 *   crowd  1M random keys, none listed (the common case of a sale: a
 *          miss): users and IPv4 addresses from the whole space, IPv6
 *          addresses of 65,536 /48s; read sequentially from an array
 *   hot    1,024 keys repeated (a burst of repeat clients: the table
 *          lines they touch are cached)
 *
 *   deny_user       sk_deny_user()
 *   deny_v4         sk_deny_addr() of an IPv4 address (3 lengths: 3 probes)
 *   deny_v6         sk_deny_addr() of an IPv6 address (3 probes)
 *   deny_v4_listed  sk_deny_addr() of addresses in the /24s (a hit)
 *   user_limit      sk_ratelimit_user_take(), 65,536-entry table, 10/s
 *                   burst 20 (the defaults), users of the stream on one item
 *
 * The cost is the loop's TSC cycles divided by the checks: independent
 * checks overlap their cache misses as a core overlaps the requests of a
 * burst. Figures are medians over R runs. --json prints one JSON object.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "bench_util.h"
#include "sk_common.h"
#include "sk_deny.h"
#include "sk_ratelimit.h"

#define STREAM (1u << 20)
#define HOT    1024u

static struct {
	struct sk_deny *deny;
	struct sk_ratelimit *rl;
	uint64_t *users;      /* STREAM user ids, none listed */
	struct sk_addr *v4;   /* STREAM IPv4 addresses, none listed */
	struct sk_addr *v6;   /* STREAM IPv6 addresses, none listed */
	struct sk_addr *v4in; /* STREAM IPv4 addresses in a listed /24 */
	uint64_t now, sink;
} B;

static uint64_t
rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return sk_deny_mix(*s);
}

static struct sk_addr
v4(uint32_t ip)
{
	struct sk_addr a = {.family = SK_ADDR_V4,
			    .bytes = {(uint8_t)(ip >> 24), (uint8_t)(ip >> 16), (uint8_t)(ip >> 8),
				      (uint8_t)ip}};
	return a;
}

static struct sk_addr
v6(uint64_t hi, uint64_t lo)
{
	struct sk_addr a = {.family = SK_ADDR_V6};

	for (int i = 0; i < 8; i++) {
		a.bytes[i] = (uint8_t)(hi >> (56 - 8 * i));
		a.bytes[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
	return a;
}

/* setup - the lists (entries of each kind) and the request streams. */
static void
setup(uint32_t entries)
{
	size_t size = sk_deny_size(entries);
	uint64_t s = 1;

	B.deny = sk_deny_init(bench_huge_alloc(size, NULL), size, entries);
	B.users = bench_huge_alloc(STREAM * sizeof(*B.users), NULL);
	B.v4 = bench_huge_alloc(STREAM * sizeof(*B.v4), NULL);
	B.v6 = bench_huge_alloc(STREAM * sizeof(*B.v6), NULL);
	B.v4in = bench_huge_alloc(STREAM * sizeof(*B.v4in), NULL);
	if (B.deny == NULL || !B.users || !B.v4 || !B.v6 || !B.v4in) {
		fprintf(stderr, "live-bench: out of memory\n");
		exit(1);
	}
	/* Listed: odd user ids; 20.0.0.0/8 as /32, /24 and /16 thirds;
	 * 2001:db8::/32 likewise at /128, /64, /48. Streams: even users,
	 * any IPv4 address but 20/8 and 21/8, and 2001:f00::/32 - never listed. */
	for (uint32_t i = 0; i < entries; i++) {
		struct sk_prefix p4 = {.addr = v4(0x14000000u + i * 256u), .len = 24};
		struct sk_prefix p6 = {.addr = v6(0x20010db800000000ULL | i, 0), .len = 64};

		sk_deny_add_user(B.deny, rnd(&s) | 1);
		if (i % 3 == 0) {
			p4.addr = v4(0x14000000u + i);
			p4.len = 32;
			p6.addr = v6(0x20010db8ffff0000ULL, i);
			p6.len = 128;
		} else if (i % 3 == 2) {
			p4.addr = v4(0x15000000u + (i << 16));
			p4.len = 16;
			p6.addr = v6(0x20010db800000000ULL | (uint64_t)i << 16, 0);
			p6.len = 48;
		}
		if (sk_deny_add_prefix(B.deny, &p4) != 0 || sk_deny_add_prefix(B.deny, &p6) != 0) {
			fprintf(stderr, "live-bench: a list is full\n");
			exit(1);
		}
	}
	for (uint32_t i = 0; i < STREAM; i++) {
		uint64_t r = rnd(&s);

		B.users[i] = r & ~1ULL ? r & ~1ULL : 2;
		uint32_t ip = (uint32_t)(r >> 16);

		if ((ip >> 25) == (0x14000000u >> 25)) /* 20/8, 21/8: listed */
			ip ^= 0x80000000u;
		B.v4[i] = v4(ip);
		B.v6[i] = v6(0x20010f0000000000ULL | (r >> 32), r);
		B.v4in[i] = v4(0x14000000u + (uint32_t)(r % entries) * 256u + 7);
	}
	struct sk_ratelimit_config c;
	sk_ratelimit_config_defaults(&c);
	c.hz = 1000000000ULL;
	c.n_items = 1;
	if (sk_ratelimit_create(&c, &B.rl) != 0) {
		fprintf(stderr, "live-bench: no limiter\n");
		exit(1);
	}
}

enum kind { K_USER, K_V4, K_V6, K_V4_IN, K_LIMIT };

/* run - @n checks of @k over the first @span keys of its stream; cycles. */
static uint64_t
run(enum kind k, uint32_t span, uint64_t n)
{
	uint64_t t0 = __rdtsc(), sink = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint32_t j = (uint32_t)(i & (span - 1));

		switch (k) {
		case K_USER:
			sink += sk_deny_user(B.deny, B.users[j]);
			break;
		case K_V4:
			sink += sk_deny_addr(B.deny, &B.v4[j]);
			break;
		case K_V6:
			sink += sk_deny_addr(B.deny, &B.v6[j]);
			break;
		case K_V4_IN:
			sink += sk_deny_addr(B.deny, &B.v4in[j]);
			break;
		case K_LIMIT:
			/* a second apart per pass over the stream: users stay under their limit */
			sink += sk_ratelimit_user_take(B.rl, B.users[j], 0, B.now + i * 1000, NULL);
			break;
		}
	}
	B.sink += sink;
	return __rdtsc() - t0;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		enum kind k;
	} cases[] = {{"deny_user", K_USER},
		     {"deny_v4", K_V4},
		     {"deny_v6", K_V6},
		     {"deny_v4_listed", K_V4_IN},
		     {"user_limit", K_LIMIT}};
	static const struct option opts[] = {{"seconds", required_argument, NULL, 's'},
					     {"runs", required_argument, NULL, 'r'},
					     {"cpu", required_argument, NULL, 'c'},
					     {"entries", required_argument, NULL, 'n'},
					     {"json", no_argument, NULL, 'j'},
					     {NULL, 0, NULL, 0}};
	double seconds = 2;
	uint32_t runs = 3, entries = 1u << 20;
	int cpu = -1, opt;
	bool json = false;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			seconds = atof(optarg);
			break;
		case 'r':
			runs = (uint32_t)atoi(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'n':
			entries = (uint32_t)atoi(optarg);
			break;
		case 'j':
			json = true;
			break;
		default:
			fprintf(stderr, "usage: live-bench [--seconds S] [--runs R] [--cpu N] "
					"[--entries N] [--json]\n");
			return 2;
		}
	}
	if (runs == 0 || runs > 99 || seconds <= 0 || entries == 0 || entries > SK_DENY_CAP_MAX) {
		fprintf(stderr, "live-bench: bad --runs, --seconds or --entries\n");
		return 2;
	}
	if (cpu >= 0 && bench_pin(cpu) != 0)
		return 1;
	setup(entries);
	/* per case and stream: n sized so that a run lasts about S / R / 10 s */
	double per = seconds / runs / 10;
	uint64_t n = (uint64_t)(per * 2e8);
	if (n < STREAM)
		n = STREAM;
	double med[SK_ARRAY_SIZE(cases)][2];
	for (size_t c = 0; c < SK_ARRAY_SIZE(cases); c++)
		for (int hot = 0; hot < 2; hot++) {
			double v[99];

			for (uint32_t r = 0; r < runs; r++)
				v[r] = (double)run(cases[c].k, hot ? HOT : STREAM, n) / (double)n;
			med[c][hot] = bench_median(v, runs);
		}
	if (json) {
		printf("{\"entries\":%u", entries);
		for (size_t c = 0; c < SK_ARRAY_SIZE(cases); c++)
			printf(",\"%s\":{\"crowd_cycles\":%.1f,\"hot_cycles\":%.1f}", cases[c].name,
			       med[c][0], med[c][1]);
		printf("}\n");
	} else {
		printf("%u entries of each kind; TSC cycles per check, median of %u runs\n",
		       entries, runs);
		printf("%-16s %8s %8s\n", "check", "crowd", "hot");
		for (size_t c = 0; c < SK_ARRAY_SIZE(cases); c++)
			printf("%-16s %8.1f %8.1f\n", cases[c].name, med[c][0], med[c][1]);
	}
	return B.sink == UINT64_MAX; /* keep the checks */
}
