/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill_http_bench.c - requests/s of the HTTP parser (and response writer)
 * on one core over an in-memory corpus.
 *
 * Corpus: the three requests a flash sale is made of - the buy call (POST
 * with a JWT Bearer token, as curl/wrk would send it), the order poll (GET
 * with browser-like fields) and the health check. Each case parses its
 * requests in a loop for a bounded time (init + parse + reset per request,
 * the work the dataplane does), then prints requests/s and ns/request per
 * second of CPU time of the single benchmark thread.
 *
 *   seckill-http-bench [--seconds S] [--json]
 *
 * With --json, one JSON object on stdout and nothing else.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "sk_http.h"

#define TOKEN                                                                                      \
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."                                                    \
	"eyJzdWIiOiI0MjQyNDI0MiIsIml0ZW0iOjcsImV4cCI6MTkwMDAw"                                     \
	"MDAwMCwibmJmIjoxNzAwMDAwMDAwfQ.8rN0cB7mJ6c1mFZ0aG8b1jX2v3mQyqk0Yk2K1g8kP7o"

static const char req_buy[] = "POST /v1/seckill/7 HTTP/1.1\r\n"
			      "Host: shop.example.com\r\n"
			      "User-Agent: curl/7.88.1\r\n"
			      "Accept: */*\r\n"
			      "Authorization: Bearer " TOKEN "\r\n"
			      "Content-Length: 0\r\n"
			      "\r\n";

static const char req_poll[] =
	"GET /v1/orders/7205759403792793601 HTTP/1.1\r\n"
	"Host: shop.example.com\r\n"
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 "
	"Firefox/115.0\r\n"
	"Accept: application/json\r\n"
	"Accept-Language: en-US,en;q=0.5\r\n"
	"Accept-Encoding: gzip, deflate, br\r\n"
	"Connection: keep-alive\r\n"
	"\r\n";

static const char req_healthz[] = "GET /healthz HTTP/1.1\r\nHost: 198.18.0.1\r\n\r\n";

struct bcase {
	const char *name;
	const char *const *reqs;
	size_t nreqs;
};

static const char *const only_buy[] = {req_buy};
static const char *const only_poll[] = {req_poll};
static const char *const only_healthz[] = {req_healthz};
/* a flash-sale mix: mostly buys, then polls, a few health checks */
static const char *const mix[] = {req_buy, req_buy,  req_buy,  req_buy,	 req_buy,
				  req_buy, req_poll, req_poll, req_poll, req_healthz};

static const struct bcase cases[] = {
	{"buy", only_buy, 1},
	{"poll", only_poll, 1},
	{"healthz", only_healthz, 1},
	{"mix", mix, sizeof(mix) / sizeof(mix[0])},
};

struct result {
	const char *name;
	double req_per_s;
	double ns_per_req;
	double mb_per_s;
	double avg_bytes;
};

/*
 * result_set - the rates of @n requests of @bytes in all that took @dt
 * seconds. Rates are computed on the thread's CPU time, not the wall clock:
 * on a shared machine the scheduler may give this thread only part of a
 * core, and "requests/s on one core" means per second of that core. The wall
 * clock still bounds the run.
 */
static void
result_set(struct result *out, const char *name, uint64_t n, uint64_t bytes, double dt)
{
	out->name = name;
	out->req_per_s = (double)n / dt;
	out->ns_per_req = dt * 1e9 / (double)n;
	out->mb_per_s = (double)bytes / dt / 1e6;
	out->avg_bytes = (double)bytes / (double)n;
}

/* run_parse - parse the case's requests round-robin for about @seconds. */
static int
run_parse(const struct bcase *c, double seconds, struct result *out)
{
	size_t lens[16];
	uint64_t n = 0, bytes = 0, sink = 0;
	struct sk_http_parser p;
	struct sk_http_request req;

	for (size_t i = 0; i < c->nreqs; i++)
		lens[i] = strlen(c->reqs[i]);
	if (sk_http_parser_init(&p, NULL) != 0)
		return -EINVAL;

	double t0 = bench_now_s(), t1 = t0, c0 = bench_cpu_s();
	/* bounded in time and in count */
	while (t1 - t0 < seconds && n < 2000000000ull) {
		for (int batch = 0; batch < 4096; batch++) {
			size_t i = n % c->nreqs;

			sk_http_parser_reset(&p);
			if (sk_http_parse(&p, c->reqs[i], lens[i], &req) != SK_HTTP_DONE)
				return -EPROTO;
			sink += req.len + req.target_len + req.authorization_len;
			bytes += lens[i];
			n++;
		}
		t1 = bench_now_s();
	}
	if (sink == 0)
		return -EPROTO;
	result_set(out, c->name, n, bytes, bench_cpu_s() - c0);
	return 0;
}

/* run_writer - sk_http_response_write() of a 202 with an order id. */
static int
run_writer(double seconds, struct result *out)
{
	static const char body[] = "{\"status\":\"queued\",\"order\":\"7205759403792793601\"}";
	struct sk_http_response r = {.status = 202, .body = body, .body_len = sizeof(body) - 1};
	char buf[512];
	uint64_t n = 0, bytes = 0;

	double t0 = bench_now_s(), t1 = t0, c0 = bench_cpu_s();
	while (t1 - t0 < seconds && n < 2000000000ull) {
		for (int batch = 0; batch < 4096; batch++) {
			int len = sk_http_response_write(buf, sizeof(buf), &r);
			if (len <= 0)
				return -EPROTO;
			bytes += (uint64_t)len;
			n++;
			r.conn = (uint8_t)(n & 1);
		}
		t1 = bench_now_s();
	}
	result_set(out, "write_202", n, bytes, bench_cpu_s() - c0);
	return 0;
}

static void
usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--seconds S (0.05..60, default 1)] [--json]\n", argv0);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seconds", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct result res[sizeof(cases) / sizeof(cases[0]) + 1];
	size_t nres = 0;
	double seconds = 1.0;
	bool json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "s:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (!sk_parse_double(optarg, 0.05, 60, &seconds)) {
				usage(argv[0]);
				return 2;
			}
			break;
		default:
			rc = bench_opt_common(opt, &json, usage, argv[0]);
			if (rc >= 0)
				return rc;
		}
	}

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = run_parse(&cases[i], seconds, &res[nres]);
		if (rc != 0) {
			fprintf(stderr, "case %s failed: %d\n", cases[i].name, rc);
			return 1;
		}
		nres++;
	}
	rc = run_writer(seconds, &res[nres]);
	if (rc != 0) {
		fprintf(stderr, "writer failed: %d\n", rc);
		return 1;
	}
	nres++;

	if (json) {
		printf("{\"bench\":\"http\",\"clock\":\"thread_cputime\",\"seconds_per_case\":%.2f,"
		       "\"cases\":[",
		       seconds);
		for (size_t i = 0; i < nres; i++)
			printf("%s{\"name\":\"%s\",\"req_per_s\":%.0f,\"ns_per_req\":%.1f,"
			       "\"mb_per_s\":%.1f,\"avg_bytes\":%.1f}",
			       i ? "," : "", res[i].name, res[i].req_per_s, res[i].ns_per_req,
			       res[i].mb_per_s, res[i].avg_bytes);
		printf("]}\n");
		return 0;
	}
	printf("HTTP parser on one core, in-memory corpus, %.2f s per case (rates per CPU "
	       "second)\n",
	       seconds);
	printf("%-10s %14s %10s %10s %10s\n", "case", "requests/s", "ns/req", "MB/s", "bytes");
	for (size_t i = 0; i < nres; i++)
		printf("%-10s %14.0f %10.1f %10.1f %10.1f\n", res[i].name, res[i].req_per_s,
		       res[i].ns_per_req, res[i].mb_per_s, res[i].avg_bytes);
	return 0;
}
