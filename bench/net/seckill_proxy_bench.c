/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill_proxy_bench.c - the cost of a PROXY protocol header per
 * connection: CPU cycles (the TSC) of sk_proxy_parser_init() plus
 * sk_proxy_parse() over one whole header, which is what the app does once
 * for each connection behind a proxy.
 *
 * Cases: version 2 PROXY over TCP/IPv4 (28 bytes) and TCP/IPv6 (52 bytes),
 * version 2 TCP/IPv6 with two TLVs (an ALPN and a unique id, as HAProxy
 * sends them), and version 1 TCP4 text for comparison. Each case times
 * --rounds batches of 1000 parses and prints the median, the 1st and the
 * 99th percentile of the cycles per header (the TSC's, so at a fixed rate
 * whatever the core's clock does).
 *
 *   seckill-proxy-bench [--rounds N] [--cpu C] [--json]
 *
 * With --json, one JSON object on stdout and nothing else.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <x86intrin.h>

#include "bench_util.h"
#include "sk_proxy.h"

#define BATCH	   1000
#define ROUNDS_MAX 100000

/* the 12-byte version 2 signature */
#define SIG "\r\n\r\n\0\r\nQUIT\n"

/* PROXY, TCP over IPv4: 198.18.5.9:40000 -> 198.18.0.1:80 */
static const uint8_t v2_tcp4[] = SIG "\x21\x11\x00\x0c"
				     "\xc6\x12\x05\x09\xc6\x12\x00\x01"
				     "\x9c\x40\x00\x50";
/* PROXY, TCP over IPv6: 2001:2::5:9 port 40000 -> 2001:2::1 port 80 */
static const uint8_t v2_tcp6[] =
	SIG "\x21\x21\x00\x24"
	    "\x20\x01\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x09"
	    "\x20\x01\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
	    "\x9c\x40\x00\x50";
/* the same with an ALPN TLV ("http/1.1") and a unique-id TLV (16 bytes) */
static const uint8_t v2_tcp6_tlv[] =
	SIG "\x21\x21\x00\x42"
	    "\x20\x01\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x09"
	    "\x20\x01\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
	    "\x9c\x40\x00\x50"
	    "\x01\x00\x08http/1.1"
	    "\x05\x00\x10"
	    "0123456789abcdef";
static const char v1_tcp4[] = "PROXY TCP4 198.18.5.9 198.18.0.1 40000 80\r\n";

struct bcase {
	const char *name;
	const uint8_t *hdr;
	size_t len;
	uint8_t family; /* the source address's, to check the parse */
};

static const struct bcase cases[] = {
	{"v2_tcp4", v2_tcp4, sizeof(v2_tcp4) - 1, 4},
	{"v2_tcp6", v2_tcp6, sizeof(v2_tcp6) - 1, 6},
	{"v2_tcp6_tlv", v2_tcp6_tlv, sizeof(v2_tcp6_tlv) - 1, 6},
	{"v1_tcp4", (const uint8_t *)v1_tcp4, sizeof(v1_tcp4) - 1, 4},
};

struct result {
	double median, p1, p99;
};

/*
 * run - @rounds batches of BATCH parses of @c's header; the cycles per
 * header of each batch into @cyc. Returns 0, or -EPROTO if the header does
 * not parse as expected.
 */
static int
run(const struct bcase *c, unsigned rounds, double *cyc, struct result *out)
{
	struct sk_proxy_parser p;
	struct sk_proxy_header h;
	uint64_t sink = 0;

	for (unsigned r = 0; r < rounds; r++) {
		uint64_t t0 = __rdtsc();

		for (int i = 0; i < BATCH; i++) {
			sk_proxy_parser_init(&p, 0);
			if (sk_proxy_parse(&p, c->hdr, c->len, &h) != SK_PROXY_DONE)
				return -EPROTO;
			sink += h.src_port;
			/* the compiler must not hoist the parse out of the loop */
			__asm__ volatile("" : : "r"(&h), "r"(c->hdr) : "memory");
		}
		cyc[r] = (double)(__rdtsc() - t0) / BATCH;
	}
	if (h.len != c->len || h.src.family != c->family || sink != 40000ull * BATCH * rounds)
		return -EPROTO;
	bench_sort(cyc, rounds);
	out->median = bench_pct(cyc, rounds, 50);
	out->p1 = bench_pct(cyc, rounds, 1);
	out->p99 = bench_pct(cyc, rounds, 99);
	return 0;
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--rounds N (default 2001)] [--cpu C] [--json]\n", prog);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"rounds", required_argument, NULL, 'r'},
		{"cpu", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct result res[sizeof(cases) / sizeof(cases[0])];
	double rounds = 2001, cpu = -1, *cyc;
	bool json = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int rc = -1;

		if (opt == 'r' && !bench_opt_range("rounds", optarg, 0, ROUNDS_MAX, &rounds))
			return 2;
		else if (opt == 'c' && !bench_opt_range("cpu", optarg, -1, 4095, &cpu))
			return 2;
		else if (opt != 'r' && opt != 'c')
			rc = bench_opt_common(opt, &json, usage, argv[0]);
		if (rc >= 0)
			return rc;
	}
	if (cpu >= 0 && bench_pin((int)cpu) != 0)
		fprintf(stderr, "warning: could not pin to cpu %d\n", (int)cpu);
	cyc = calloc((size_t)rounds, sizeof(*cyc));
	if (cyc == NULL)
		return 3;
	/* pass 0 warms the caches, the branch predictors and the clock up */
	for (size_t k = 0; k < 2 * sizeof(cases) / sizeof(cases[0]); k++) {
		size_t i = k % (sizeof(cases) / sizeof(cases[0]));

		if (run(&cases[i], (unsigned)rounds, cyc, &res[i]) != 0) {
			fprintf(stderr, "error: %s does not parse as expected\n", cases[i].name);
			free(cyc);
			return 1;
		}
	}
	free(cyc);
	if (json) {
		printf("{\"rounds\":%u,\"batch\":%d,\"cases\":{", (unsigned)rounds, BATCH);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			printf("%s\"%s\":{\"bytes\":%zu,\"cycles_median\":%.1f,\"cycles_p1\":%.1f,"
			       "\"cycles_p99\":%.1f}",
			       i ? "," : "", cases[i].name, cases[i].len, res[i].median, res[i].p1,
			       res[i].p99);
		printf("}}\n");
		return 0;
	}
	printf("PROXY header parse (init + parse), TSC cycles per header, median of %u x %d\n",
	       (unsigned)rounds, BATCH);
	printf("%-12s %6s %8s %8s %8s\n", "case", "bytes", "median", "p1", "p99");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		printf("%-12s %6zu %8.1f %8.1f %8.1f\n", cases[i].name, cases[i].len, res[i].median,
		       res[i].p1, res[i].p99);
	return 0;
}
