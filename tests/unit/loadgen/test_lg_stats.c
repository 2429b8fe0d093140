/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lg_stats - seckill-loadgen's counters and reports: TSC-to-ns
 * conversion, percentiles of known distributions (fixed seeds) against the
 * exact order statistics, wins and status counts, and the JSON object
 * (parsed back with jansson, every field checked).
 */
#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_stats.h"
#include "sk_test.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The ceil(q * n)-th smallest of @v (sorted). */
static uint64_t
exact_quantile(const uint64_t *v, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999999);

	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}

static uint64_t
rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Distributions of latencies in TSC ticks; the clock makes 2.5 ticks a ns. */
enum dist { D_UNIFORM, D_EXP, D_BIMODAL, D_CONST, D__COUNT };

static uint64_t
draw(enum dist d, uint64_t *s)
{
	switch (d) {
	case D_UNIFORM:
		return 1 + rng(s) % 250000; /* up to 100 us */
	case D_EXP:
		return 2500 << (rng(s) % 12); /* 1 us .. 2 ms in powers of two */
	case D_BIMODAL:
		return rng(s) % 100 < 99 ? 25000 + rng(s) % 2500 : 25000000 + rng(s) % 250000;
	default:
		return 12345;
	}
}

START_TEST(test_percentiles)
{
	enum { N = 100000 };
	static uint64_t v[N];
	static struct lg_stats s;
	static const double qs[] = {0.5, 0.9, 0.99, 0.999, 1.0};
	uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)_i;

	lg_stats_init(&s, 2500000000ull, 0);
	for (size_t i = 0; i < N; i++) {
		uint64_t t = draw((enum dist)_i, &seed);

		lg_stats_answer(&s, LG_REQ_HEALTHZ, 200, t);
		v[i] = (uint64_t)(((unsigned __int128)t * s.ns_mult) >> 32);
	}
	qsort(v, N, sizeof(v[0]), cmp_u64);
	ck_assert_uint_eq(s.lat.count, N);
	ck_assert_uint_eq(s.lat.max, v[N - 1]);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t want = exact_quantile(v, N, qs[i]);
		uint64_t got = sk_crowd_hist_quantile(&s.lat, qs[i]);

		/* the bucket's upper edge: never below, at most 1/128 above */
		ck_assert_msg(got >= want && (double)got <= (double)want * (1.0 + 1.0 / 128) + 1,
			      "dist %d q %g: got %llu want %llu", _i, qs[i],
			      (unsigned long long)got, (unsigned long long)want);
	}
}
END_TEST

START_TEST(test_ns_conversion)
{
	static const struct {
		uint64_t hz, tsc, ns;
	} t[] = {
		{1000000000ull, 12345, 12345},
		{2500000000ull, 2500, 1000},
		{3000000000ull, 3000000000ull, 1000000000},
		{2000000000ull, 20000000000000ull, 10000000000000ull}, /* 10 000 s: no overflow */
	};
	static struct lg_stats s;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t got;

		lg_stats_init(&s, t[i].hz, 0);
		lg_stats_answer(&s, LG_REQ_ITEM, 200, t[i].tsc);
		got = s.lat.max;
		ck_assert_msg(got + 1 >= t[i].ns && got <= t[i].ns + 1, "case %zu: %llu", i,
			      (unsigned long long)got);
	}
}
END_TEST

/* Wins: a buy (X-User-Id or JWT) answered 200 or 202; nothing else. */
START_TEST(test_counts_and_wins)
{
	static const struct {
		enum lg_req_kind k;
		uint16_t status;
	} a[] = {
		{LG_REQ_BUY, 200},     {LG_REQ_BUY, 202},     {LG_REQ_BUY_JWT, 200},
		{LG_REQ_BUY, 410},     {LG_REQ_BUY_JWT, 401}, {LG_REQ_ORDER, 200},
		{LG_REQ_HEALTHZ, 200}, {LG_REQ_ITEM, 202},    {LG_REQ_BUY, 429},
	};
	static struct lg_stats s;

	lg_stats_init(&s, 1000000000ull, 0);
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		lg_stats_answer(&s, a[i].k, a[i].status, 1000);
	ck_assert_uint_eq(s.wins_confirmed, 2);
	ck_assert_uint_eq(s.wins_queued, 1);
	ck_assert_uint_eq(s.status[200], 4);
	ck_assert_uint_eq(s.status[202], 2);
	ck_assert_uint_eq(s.status[410], 1);
	ck_assert_uint_eq(s.answered[LG_REQ_BUY], 4);
	ck_assert_uint_eq(lg_stats_sum(s.answered, LG_REQ__COUNT), 9);
	ck_assert_uint_eq(lg_stats_errors(&s, NULL), 0);
	s.lost = 2;
	s.parse_errors[SK_HTTP_CLIENT_E_FIELD] = 1;
	{
		struct lg_tcp_errors tcp = {
			.resets = 3, .timeouts = 4, .refused = 5, .retransmits = 100};

		ck_assert_uint_eq(lg_stats_errors(&s, &tcp), 2 + 1 + 3 + 4 + 5);
	}
}
END_TEST

static json_int_t
jint(json_t *o, const char *path1, const char *path2)
{
	json_t *v = json_object_get(o, path1);

	if (path2 != NULL)
		v = json_object_get(v, path2);
	ck_assert_msg(json_is_integer(v) || json_is_real(v), "%s.%s", path1, path2 ? path2 : "");
	return json_is_integer(v) ? json_integer_value(v) : (json_int_t)json_real_value(v);
}

START_TEST(test_json)
{
	static struct lg_stats s;
	struct lg_tcp_errors tcp = {.resets = 1,
				    .retransmits = 2,
				    .syn_retransmits = 3,
				    .timeouts = 4,
				    .refused = 5,
				    .tx_dropped = 6,
				    .tx_nombuf = 7,
				    .tx_waits = 8};
	struct lg_run_info run = {.seconds = 2.0, .inflight = 0, .mode = "closed"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t jerr;
	json_t *j;

	lg_stats_init(&s, 1000000000ull, 0);
	for (int i = 0; i < 1000; i++) {
		s.sent[LG_REQ_BUY]++;
		lg_stats_answer(&s, LG_REQ_BUY, i < 10 ? 200 : 410, 1000 + (uint64_t)i);
	}
	s.sent[LG_REQ_HEALTHZ] = 2;
	s.connects = 20;
	s.busy_tsc = 500000;
	lg_stats_json(&s, &tcp, &run, f);
	fclose(f);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(buf[len - 1], '\n');
	j = json_loads(buf, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: %s", jerr.text, buf);
	ck_assert_int_eq(jint(j, "sent", NULL), 1002);
	ck_assert_int_eq(jint(j, "answered", NULL), 1000);
	ck_assert_int_eq(jint(j, "rps", NULL), 500);
	ck_assert_int_eq(jint(j, "cps", NULL), 10);
	ck_assert_int_eq(jint(j, "status", "200"), 10);
	ck_assert_int_eq(jint(j, "status", "410"), 990);
	ck_assert_int_eq(jint(j, "wins", "confirmed"), 10);
	ck_assert_int_eq(jint(j, "wins", "total"), 10);
	ck_assert_int_eq(jint(j, "tcp", "resets"), 1);
	ck_assert_int_eq(jint(j, "tcp", "syn_retransmits"), 3);
	ck_assert_int_eq(jint(j, "tcp", "tx_nombuf"), 7);
	ck_assert_int_eq(jint(j, "tcp", "tx_waits"), 8);
	ck_assert_int_eq(jint(j, "errors", "total"), 1 + 4 + 5);
	ck_assert_int_eq(jint(j, "cycles_per_req", NULL), 500);
	ck_assert_int_eq(jint(json_object_get(j, "kinds"), "healthz", "sent"), 2);
	ck_assert_int_eq(jint(json_object_get(j, "kinds"), "buy", "answered"), 1000);
	ck_assert(jint(j, "latency_us", "p50") >= 1 && jint(j, "latency_us", "max") == 2);
	ck_assert(json_is_false(json_object_get(j, "all_answered")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "mode")), "closed");
	ck_assert(json_is_null(json_object_get(j, "tls")));
	json_decref(j);
	free(buf);

	/* every request answered */
	s.sent[LG_REQ_HEALTHZ] = 0;
	buf = NULL;
	f = open_memstream(&buf, &len);
	lg_stats_json(&s, NULL, &run, f);
	fclose(f);
	j = json_loads(buf, 0, &jerr);
	ck_assert_msg(j != NULL, "%s", jerr.text);
	ck_assert(json_is_true(json_object_get(j, "all_answered")));
	json_decref(j);
	free(buf);
}
END_TEST

START_TEST(test_progress_line)
{
	static struct lg_stats s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	lg_stats_init(&s, 1000000000ull, 0);
	for (int i = 0; i < 2000; i++)
		lg_stats_answer(&s, LG_REQ_HEALTHZ, 200, 10000);
	s.connects = 4;
	lg_stats_progress(&s, 2000000000ull, 3, NULL, NULL, f);
	for (int i = 0; i < 500; i++)
		lg_stats_answer(&s, LG_REQ_HEALTHZ, 200, 20000);
	lg_stats_progress(&s, 3000000000ull, 0, NULL, NULL, f);
	/* one stack among several: its tag starts the line */
	lg_stats_progress(&s, 4000000000ull, 0, NULL, "lcore=3 ", f);
	fclose(f);
	ck_assert_str_eq(buf,
			 "t=2.0s rps=1000 cps=2 p50=10.0us p99=10.0us errors=0 inflight=3\n"
			 "t=3.0s rps=500 cps=0 p50=20.0us p99=20.0us errors=0 inflight=0\n"
			 "lcore=3 t=4.0s rps=0 cps=0 p50=0.0us p99=0.0us errors=0 inflight=0\n");
	free(buf);
}
END_TEST

/* --tls: the handshakes in the JSON and the summary; a failed one is an error. */
START_TEST(test_tls)
{
	static struct lg_stats s;
	struct lg_run_info run = {
		.seconds = 1.0, .mode = "closed", .short_conns = true, .tls = true};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	json_error_t jerr;
	json_t *j;

	lg_stats_init(&s, 1000000000ull, 0);
	s.sent[LG_REQ_HEALTHZ] = 1;
	lg_stats_answer(&s, LG_REQ_HEALTHZ, 200, 1000);
	s.tls = (struct lg_tls_counts){.full = 3,
				       .resumed = 40,
				       .failed = 2,
				       .tls12 = 1,
				       .tls13 = 42,
				       .alerts_received = 2};
	ck_assert_uint_eq(lg_stats_errors(&s, NULL), 2);
	f = open_memstream(&buf, &len);
	lg_stats_json(&s, NULL, &run, f);
	fclose(f);
	j = json_loads(buf, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: %s", jerr.text, buf);
	ck_assert_int_eq(jint(j, "tls", "full"), 3);
	ck_assert_int_eq(jint(j, "tls", "resumed"), 40);
	ck_assert_int_eq(jint(j, "tls", "failed"), 2);
	ck_assert_int_eq(jint(j, "tls", "tls12"), 1);
	ck_assert_int_eq(jint(j, "tls", "tls13"), 42);
	ck_assert_int_eq(jint(j, "tls", "alerts_received"), 2);
	ck_assert_int_eq(jint(j, "errors", "total"), 2);
	json_decref(j);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	lg_stats_summary(&s, NULL, &run, f);
	fclose(f);
	ck_assert_msg(strstr(buf, "\n  tls: handshakes 3 full, 40 resumed, 2 failed (TLS 1.3 42, "
				  "TLS 1.2 1), alerts received 2\n") != NULL,
		      "%s", buf);
	free(buf);
}
END_TEST

/* json_of - the JSON report of @p s, @p tcp, @p run, parsed (caller
 * json_decref()s it). */
static json_t *
json_of(const struct lg_stats *s, const struct lg_tcp_errors *tcp, const struct lg_run_info *run)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t jerr;
	json_t *j;

	lg_stats_json(s, tcp, run, f);
	fclose(f);
	j = json_loads(buf, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: %s", jerr.text, buf);
	free(buf);
	return j;
}

/* summary_of - the summary of @p s, @p tcp, @p run (caller frees it). */
static char *
summary_of(const struct lg_stats *s, const struct lg_tcp_errors *tcp, const struct lg_run_info *run)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	lg_stats_summary(s, tcp, run, f);
	fclose(f);
	return buf;
}

/* Several stacks: the counters summed, the percentiles of the merged
 * histogram (those of one histogram fed every answer), and one "lcores"
 * entry per stack in the JSON and the summary. */
START_TEST(test_merge_lcores)
{
	static struct lg_stats a, b, sum, all;
	struct lg_tcp_errors ta = {.resets = 1, .tx_waits = 2}, tb = {.resets = 3, .timeouts = 1},
			     tcp = {0};
	struct lg_lcore_report lc[2] = {
		{.lcore = 4, .queue = 0, .sent = 600, .answered = 600, .errors = 1, .seconds = 2.0},
		{.lcore = 6, .queue = 1, .sent = 401, .answered = 400, .errors = 4, .seconds = 2.0},
	};
	struct lg_run_info run = {.seconds = 2.0, .mode = "closed", .lcores = lc, .nlcores = 2};
	char *text;
	json_t *j, *arr;

	lg_stats_init(&a, 1000000000ull, 0);
	lg_stats_init(&b, 1000000000ull, 0);
	lg_stats_init(&all, 1000000000ull, 0);
	for (int i = 0; i < 600; i++) { /* fast answers on one stack, slow on the other */
		lg_stats_answer(&a, LG_REQ_BUY, i < 5 ? 200 : 410, 1000 + (uint64_t)i);
		lg_stats_answer(&all, LG_REQ_BUY, i < 5 ? 200 : 410, 1000 + (uint64_t)i);
	}
	for (int i = 0; i < 400; i++) {
		lg_stats_answer(&b, LG_REQ_HEALTHZ, 200, 50000 + 10 * (uint64_t)i);
		lg_stats_answer(&all, LG_REQ_HEALTHZ, 200, 50000 + 10 * (uint64_t)i);
	}
	a.sent[LG_REQ_BUY] = 600;
	b.sent[LG_REQ_HEALTHZ] = 401;
	a.connects = 10;
	b.connects = 30;
	a.lost = 1;
	b.tls.full = 2;
	lg_stats_init(&sum, 1000000000ull, 0);
	lg_stats_merge(&sum, &a);
	lg_stats_merge(&sum, &b);
	lg_tcp_errors_add(&tcp, &ta);
	lg_tcp_errors_add(&tcp, &tb);
	ck_assert_uint_eq(lg_stats_sum(sum.sent, LG_REQ__COUNT), 1001);
	ck_assert_uint_eq(lg_stats_sum(sum.answered, LG_REQ__COUNT), 1000);
	ck_assert_uint_eq(sum.status[200], 405);
	ck_assert_uint_eq(sum.status[410], 595);
	ck_assert_uint_eq(sum.wins_confirmed, 5);
	ck_assert_uint_eq(sum.connects, 40);
	ck_assert_uint_eq(sum.tls.full, 2);
	ck_assert_uint_eq(tcp.resets, 4);
	ck_assert_uint_eq(tcp.timeouts, 1);
	ck_assert_uint_eq(tcp.tx_waits, 2);
	ck_assert_uint_eq(lg_stats_errors(&sum, &tcp), 1 + 4 + 1);
	ck_assert_uint_eq(sum.lat.count, all.lat.count);
	ck_assert_uint_eq(sum.lat.min, all.lat.min);
	ck_assert_uint_eq(sum.lat.max, all.lat.max);
	ck_assert_uint_eq(sum.lat.sum, all.lat.sum);
	for (double q = 0.1; q < 1.0; q += 0.1)
		ck_assert_uint_eq(sk_crowd_hist_quantile(&sum.lat, q),
				  sk_crowd_hist_quantile(&all.lat, q));
	ck_assert_uint_eq(sk_crowd_hist_quantile(&sum.lat, 0.99),
			  sk_crowd_hist_quantile(&all.lat, 0.99));

	j = json_of(&sum, &tcp, &run);
	ck_assert_int_eq(jint(j, "sent", NULL), 1001);
	ck_assert_int_eq(jint(j, "answered", NULL), 1000);
	ck_assert_int_eq(jint(j, "rps", NULL), 500);
	ck_assert_int_eq(jint(j, "cps", NULL), 20);
	arr = json_object_get(j, "lcores");
	ck_assert(json_is_array(arr));
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "lcore", NULL), 4);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "queue", NULL), 0);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "sent", NULL), 600);
	ck_assert_int_eq(jint(json_array_get(arr, 0), "rps", NULL), 300);
	ck_assert_int_eq(jint(json_array_get(arr, 1), "lcore", NULL), 6);
	ck_assert_int_eq(jint(json_array_get(arr, 1), "queue", NULL), 1);
	ck_assert_int_eq(jint(json_array_get(arr, 1), "answered", NULL), 400);
	ck_assert_int_eq(jint(json_array_get(arr, 1), "rps", NULL), 200);
	ck_assert_int_eq(jint(json_array_get(arr, 1), "errors", NULL), 4);
	ck_assert(json_is_false(json_object_get(j, "all_answered")));
	json_decref(j);
	text = summary_of(&sum, &tcp, &run);
	ck_assert_msg(strstr(text,
			     "\n  lcore 4 (queue 0): 600 sent, 600 answered (300/s), 1 errors\n"
			     "  lcore 6 (queue 1): 401 sent, 400 answered (200/s), 4 errors\n") !=
			      NULL,
		      "%s", text);
	free(text);

	/* one stack: the array has its one entry, the summary no lcore line */
	run.nlcores = 1;
	j = json_of(&a, &ta, &run);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "lcores")), 1);
	json_decref(j);
	text = summary_of(&a, &ta, &run);
	ck_assert_msg(strstr(text, "lcore") == NULL, "%s", text);
	free(text);
}
END_TEST

static Suite *
lg_stats_suite(void)
{
	Suite *s = suite_create("lg_stats");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_percentiles, 0, D__COUNT);
	tcase_add_test(tc, test_ns_conversion);
	tcase_add_test(tc, test_counts_and_wins);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_tls);
	tcase_add_test(tc, test_progress_line);
	tcase_add_test(tc, test_merge_lcores);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(lg_stats_suite)
