/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of sk_dpmetrics_write(): an arena in plain memory with known
 * counters in its per-lcore stats blocks; the Prometheus text is parsed
 * back and every value checked (sums over lcores, codes merged by value,
 * cumulative buckets, _count, _sum, HELP/TYPE lines), and the bucket bounds
 * of sk_shm_lat_observe() are checked at their edges. No EAL.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_dpmetrics.h"
#include "sk_test.h"
#include "sk_test_arena.h"
#include "sk_tls.h"

#define NLCORES 3

static struct {
	struct sk_test_arena arena;
	char *text;
	/* the samples of the last scrape */
	unsigned n;
	struct sample {
		char key[160];
		char val[48];
	} s[512];
} T;

static void
setup(void)
{
	struct sk_shm_conf c = {.nlcores = NLCORES,
				.max_items = 4,
				.dedup_slots = SK_SHM_DEDUP_MIN,
				.status_bits = 10,
				.epoch = SK_ORDER_EPOCH_BASE + 7};

	sk_test_arena_init(&T.arena, &c);
	T.text = NULL;
	T.n = 0;
}

static void
teardown(void)
{
	free(T.text);
	sk_test_arena_fini(&T.arena);
}

/* scrape - sk_dpmetrics_write() into T.text, samples into T.s. */
static void
scrape(void)
{
	size_t len = 0;
	FILE *f;

	free(T.text);
	T.text = NULL;
	f = open_memstream(&T.text, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sk_dpmetrics_write(T.arena.shm, f), 0);
	ck_assert_int_eq(fclose(f), 0);

	T.n = 0;
	for (char *save = NULL, *line = strtok_r(T.text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		struct sample *s;
		char *sp;

		if (line[0] == '#')
			continue;
		ck_assert_uint_lt(T.n, sizeof(T.s) / sizeof(T.s[0]));
		s = &T.s[T.n++];
		sp = strrchr(line, ' ');
		ck_assert_msg(sp != NULL, "sample without a value: %s", line);
		ck_assert_uint_lt((size_t)(sp - line), sizeof(s->key));
		ck_assert_uint_lt(strlen(sp + 1), sizeof(s->val));
		memcpy(s->key, line, (size_t)(sp - line));
		s->key[sp - line] = '\0';
		strcpy(s->val, sp + 1);
	}
}

static const struct sample *
find(const char *key)
{
	for (unsigned i = 0; i < T.n; i++)
		if (strcmp(T.s[i].key, key) == 0)
			return &T.s[i];
	return NULL;
}

/* u64 - the integer value of sample @key (which must exist, exactly once). */
static uint64_t
u64(const char *key)
{
	const struct sample *s = find(key);
	unsigned n = 0;
	char *end;
	uint64_t v;

	ck_assert_msg(s != NULL, "no sample %s", key);
	for (unsigned i = 0; i < T.n; i++)
		n += strcmp(T.s[i].key, key) == 0;
	ck_assert_msg(n == 1, "sample %s appears %u times", key, n);
	v = strtoull(s->val, &end, 10);
	ck_assert_msg(*end == '\0', "%s: not an integer: %s", key, s->val);
	return v;
}

/* count - samples whose key starts with @prefix. */
static unsigned
count(const char *prefix)
{
	unsigned n = 0;

	for (unsigned i = 0; i < T.n; i++)
		n += strncmp(T.s[i].key, prefix, strlen(prefix)) == 0;
	return n;
}

static struct sk_shm_lcore_stats *
ls(unsigned l)
{
	return sk_shm_lstats(T.arena.shm, l);
}

/* set_http - lcore @l counts codes @codes (0: other) with @counts. */
static void
set_http(unsigned l, const uint16_t *codes, const uint64_t *counts, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		ls(l)->http_code[k] = codes[k];
		ls(l)->http_status[k] = counts[k];
	}
	ls(l)->http_slots = n;
}

/* An empty arena: every family present, every value zero. */
START_TEST(empty_arena)
{
	scrape();
	ck_assert_uint_eq(count("seckill_requests_total{"), SK_SECKILL__COUNT);
	ck_assert_uint_eq(u64("seckill_requests_total{outcome=\"won\"}"), 0);
	ck_assert_uint_eq(u64("seckill_order_polls_total"), 0);
	ck_assert_uint_eq(u64("seckill_item_reads_total"), 0);
	ck_assert_uint_eq(count("seckill_http_responses_total"), 0);
	ck_assert_uint_eq(count("seckill_buy_latency_seconds_bucket{"), SK_SHM_LAT_BUCKETS);
	ck_assert_uint_eq(u64("seckill_buy_latency_seconds_bucket{le=\"+Inf\"}"), 0);
	ck_assert_uint_eq(u64("seckill_buy_latency_seconds_count"), 0);
	ck_assert_str_eq(find("seckill_buy_latency_seconds_sum")->val, "0.000000000");
	/* TLS off: its families are there, all zero */
	ck_assert_uint_eq(count("seckill_tls_handshakes_total{"), 6);
	ck_assert_uint_eq(u64("seckill_tls_handshakes_total{kind=\"full\"}"), 0);
	ck_assert_uint_eq(u64("seckill_tls_handshakes_inflight"), 0);
	ck_assert_uint_eq(count("seckill_tls_alerts_total{"), 2 * SK_TLS_ALERT_SLOTS);
	ck_assert_uint_eq(u64("seckill_tls_alerts_total{direction=\"received\",alert=\"other\"}"),
			  0);
}
END_TEST

/* Every family has its HELP and TYPE lines, before its first sample. */
START_TEST(help_and_type)
{
	static const struct {
		const char *name, *type;
	} fam[] = {
		{"seckill_requests_total", "counter"},
		{"seckill_order_polls_total", "counter"},
		{"seckill_item_reads_total", "counter"},
		{"seckill_http_responses_total", "counter"},
		{"seckill_buy_latency_seconds", "histogram"},
		{"seckill_tls_handshakes_total", "counter"},
		{"seckill_tls_handshakes_inflight", "gauge"},
		{"seckill_tls_versions_total", "counter"},
		{"seckill_tls_suites_total", "counter"},
		{"seckill_tls_alerts_total", "counter"},
		{"seckill_tls_bytes_total", "counter"},
		{"seckill_tls_records_total", "counter"},
		{"seckill_tls_tickets_total", "counter"},
		{"seckill_tls_refused_total", "counter"},
	};
	uint16_t codes[] = {200};
	uint64_t counts[] = {1};
	char want[128];

	set_http(0, codes, counts, 1);
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(sk_dpmetrics_write(T.arena.shm, f), 0);
		ck_assert_int_eq(fclose(f), 0);
		for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
			char sample[128];
			const char *help, *type, *first;

			snprintf(want, sizeof(want), "# HELP %s ", fam[i].name);
			help = strstr(text, want);
			snprintf(want, sizeof(want), "\n# TYPE %s %s\n", fam[i].name, fam[i].type);
			type = strstr(text, want);
			snprintf(sample, sizeof(sample), "\n%s", fam[i].name);
			first = text;
			/* the first sample line of the family */
			while ((first = strstr(first, sample)) != NULL &&
			       first[strlen(sample)] != ' ' && first[strlen(sample)] != '{' &&
			       first[strlen(sample)] != '_')
				first++;
			ck_assert_msg(help != NULL && type != NULL && first != NULL,
				      "family %s: HELP, TYPE or sample missing", fam[i].name);
			ck_assert_msg(help < type && type < first, "family %s: out of order",
				      fam[i].name);
		}
		free(text);
	}
}
END_TEST

/* Outcomes, polls and reads: summed over the lcores of the arena only; the
 * unused outcome slots are not exported. */
START_TEST(requests_summed)
{
	uint64_t want[SK_SHM_OUTCOMES] = {0};
	char key[96];

	for (unsigned k = 0; k < SK_SHM_OUTCOMES; k++) {
		ls(0)->buy_outcome[k] = 100 * k + 1;
		ls(1)->buy_outcome[k] = 7 * k;
		want[k] = 107 * k + 1;
	}
	ls(0)->order_polls = 11;
	ls(2)->order_polls = 4;
	ls(1)->item_reads = 9;
	/* a block beyond nlcores is not the dataplane's: never read */
	ls(NLCORES)->buy_outcome[0] = 1000000;
	ls(NLCORES)->order_polls = 1000000;
	scrape();

	ck_assert_uint_eq(count("seckill_requests_total{"), SK_SECKILL__COUNT);
	for (unsigned k = 0; k < SK_SHM_OUTCOMES; k++) {
		const char *name = sk_dpmetrics_outcome_name(k);

		if (k >= SK_SECKILL__COUNT) {
			ck_assert_ptr_null(name);
			continue;
		}
		ck_assert_ptr_nonnull(name);
		snprintf(key, sizeof(key), "seckill_requests_total{outcome=\"%s\"}", name);
		ck_assert_uint_eq(u64(key), want[k]);
	}
	ck_assert_uint_eq(u64("seckill_requests_total{outcome=\"won\"}"), 1);
	ck_assert_uint_eq(u64("seckill_requests_total{outcome=\"sold_out\"}"), 322);
	ck_assert_uint_eq(u64("seckill_requests_total{outcome=\"bad_request\"}"), 1178);
	ck_assert_uint_eq(u64("seckill_order_polls_total"), 15);
	ck_assert_uint_eq(u64("seckill_item_reads_total"), 9);
	ck_assert_ptr_null(sk_dpmetrics_outcome_name(SK_SHM_OUTCOMES));
}
END_TEST

/* Responses by code: merged by code whatever the slot; "other" last; an
 * lcore that never published its codes is skipped. */
START_TEST(http_by_code)
{
	uint16_t c0[] = {200, 202, 410, 0};
	uint64_t n0[] = {5, 6, 7, 8};
	uint16_t c1[] = {202, 200, 503, 0};
	uint64_t n1[] = {10, 20, 30, 40};

	set_http(0, c0, n0, 4);
	set_http(1, c1, n1, 4);
	ls(2)->http_status[0] = 1000; /* http_slots 0: not published */
	scrape();
	ck_assert_uint_eq(count("seckill_http_responses_total{"), 5);
	ck_assert_uint_eq(u64("seckill_http_responses_total{code=\"200\"}"), 25);
	ck_assert_uint_eq(u64("seckill_http_responses_total{code=\"202\"}"), 16);
	ck_assert_uint_eq(u64("seckill_http_responses_total{code=\"410\"}"), 7);
	ck_assert_uint_eq(u64("seckill_http_responses_total{code=\"503\"}"), 30);
	ck_assert_uint_eq(u64("seckill_http_responses_total{code=\"other\"}"), 48);
	for (unsigned i = 1; i < T.n; i++)
		if (strncmp(T.s[i].key, "seckill_buy_latency_seconds", 27) == 0) {
			ck_assert_str_eq(T.s[i - 1].key,
					 "seckill_http_responses_total{code=\"other\"}");
			break;
		}
}
END_TEST

/* The histogram: le bounds increasing and equal to the arena's, buckets
 * cumulative and non-decreasing, +Inf == _count == every answer, _sum. */
START_TEST(latency_histogram)
{
	uint64_t per[SK_SHM_LAT_BUCKETS] = {0}, total = 0, cum = 0;
	double prev_le = 0;
	unsigned b = 0;

	for (unsigned k = 0; k < SK_SHM_LAT_BUCKETS; k++) {
		ls(0)->lat_bucket[k] = k + 1;
		per[k] += k + 1;
	}
	ls(1)->lat_bucket[3] = 10;
	ls(1)->lat_bucket[SK_SHM_LAT_BUCKETS - 1] = 5;
	per[3] += 10;
	per[SK_SHM_LAT_BUCKETS - 1] += 5;
	ls(0)->lat_sum_ns = 1500000000; /* 1.5 s */
	ls(2)->lat_sum_ns = 250;
	for (unsigned k = 0; k < SK_SHM_LAT_BUCKETS; k++)
		total += per[k];
	scrape();

	for (unsigned i = 0; i < T.n; i++) {
		const char *key = T.s[i].key, *p = "seckill_buy_latency_seconds_bucket{le=\"";
		uint64_t v;

		if (strncmp(key, p, strlen(p)) != 0)
			continue;
		ck_assert_uint_lt(b, SK_SHM_LAT_BUCKETS);
		v = u64(key);
		cum += per[b];
		ck_assert_uint_eq(v, cum);
		if (b < SK_SHM_LAT_BUCKETS - 1) {
			double le = strtod(key + strlen(p), NULL);

			ck_assert_msg(le > prev_le, "le not increasing at %s", key);
			ck_assert_msg(fabs(le - (double)sk_shm_lat_bounds_ns[b] / 1e9) < 1e-12 * le,
				      "%s: bound %" PRIu64 " ns", key, sk_shm_lat_bounds_ns[b]);
			prev_le = le;
		} else {
			ck_assert_str_eq(key, "seckill_buy_latency_seconds_bucket{le=\"+Inf\"}");
		}
		b++;
	}
	ck_assert_uint_eq(b, SK_SHM_LAT_BUCKETS);
	ck_assert_uint_eq(u64("seckill_buy_latency_seconds_bucket{le=\"1e-06\"}"), 1);
	ck_assert_uint_eq(u64("seckill_buy_latency_seconds_bucket{le=\"5\"}"), total - per[21]);
	ck_assert_uint_eq(u64("seckill_buy_latency_seconds_bucket{le=\"+Inf\"}"), total);
	ck_assert_uint_eq(u64("seckill_buy_latency_seconds_count"), total);
	ck_assert_str_eq(find("seckill_buy_latency_seconds_sum")->val, "1.500000250");
}
END_TEST

/* sk_shm_lat_observe(): a bound belongs to its own bucket (le is <=). */
START_TEST(latency_bucket_edges)
{
	static const struct {
		uint64_t ns;
		const char *le; /* the first le that counts it */
	} c[] = {
		{0, "1e-06"},	   {1000, "1e-06"},   {1001, "2e-06"},
		{2000, "2e-06"},   {50001, "0.0001"}, {1000000, "0.001"},
		{4999999999, "5"}, {5000000000, "5"}, {5000000001, "+Inf"},
	};
	const size_t n = sizeof(c) / sizeof(c[0]);

	ck_assert_uint_eq(sk_shm_lat_bucket(0), 0);
	ck_assert_uint_eq(sk_shm_lat_bucket(1000), 0);
	ck_assert_uint_eq(sk_shm_lat_bucket(1001), 1);
	ck_assert_uint_eq(sk_shm_lat_bucket(UINT64_MAX), SK_SHM_LAT_BUCKETS - 1);
	for (size_t i = 0; i < n; i++) {
		char key[96], prev[96] = "";
		uint64_t before, after;

		memset(ls(1)->lat_bucket, 0, sizeof(ls(1)->lat_bucket));
		ls(1)->lat_sum_ns = 0;
		sk_shm_lat_observe(ls(1), c[i].ns);
		scrape();
		snprintf(key, sizeof(key), "seckill_buy_latency_seconds_bucket{le=\"%s\"}",
			 c[i].le);
		after = u64(key);
		ck_assert_msg(after == 1, "%" PRIu64 " ns: not counted at le=%s", c[i].ns, c[i].le);
		/* ... and not in the bucket before */
		for (unsigned k = 0; k < T.n; k++)
			if (strcmp(T.s[k].key, key) == 0 && k > 0 &&
			    strncmp(T.s[k - 1].key, "seckill_buy_latency_seconds_bucket", 34) == 0)
				strcpy(prev, T.s[k - 1].key);
		before = prev[0] != '\0' ? u64(prev) : 0;
		ck_assert_msg(before == 0, "%" PRIu64 " ns: counted below le=%s", c[i].ns, c[i].le);
		ck_assert_uint_eq(u64("seckill_buy_latency_seconds_count"), 1);
		ck_assert_uint_eq(ls(1)->lat_sum_ns, c[i].ns);
	}
}
END_TEST

/* tls - the TLS area of lcore @l's stats block, as the dataplane counts in it. */
static struct sk_tls_stats *
tls(unsigned l)
{
	return (struct sk_tls_stats *)ls(l)->tls;
}

/* TLS_AT - the offset of word @k of field @f of struct sk_tls_stats. */
#define TLS_AT(f, k) (offsetof(struct sk_tls_stats, f) + (k) * sizeof(uint64_t))

/* The one-label TLS families: the counter at @off is exported as @key. */
static const struct {
	size_t off;
	const char *key;
} tls_cases[] = {
	{TLS_AT(hs_full, 0), "seckill_tls_handshakes_total{kind=\"full\"}"},
	{TLS_AT(hs_resumed, 0), "seckill_tls_handshakes_total{kind=\"resumed\"}"},
	{TLS_AT(hs_failed, 0), "seckill_tls_handshakes_total{kind=\"failed\"}"},
	{TLS_AT(hs_timeout, 0), "seckill_tls_handshakes_total{kind=\"timeout\"}"},
	{TLS_AT(hs_limited, 0), "seckill_tls_handshakes_total{kind=\"limited\"}"},
	{TLS_AT(hs_ip_refused, 0), "seckill_tls_handshakes_total{kind=\"ip_refused\"}"},
	{TLS_AT(hs_inflight, 0), "seckill_tls_handshakes_inflight"},
	{TLS_AT(tls12, 0), "seckill_tls_versions_total{version=\"1.2\"}"},
	{TLS_AT(tls13, 0), "seckill_tls_versions_total{version=\"1.3\"}"},
	{TLS_AT(suite, SK_TLS_SUITE_AES128_GCM), "seckill_tls_suites_total{suite=\"aes128_gcm\"}"},
	{TLS_AT(suite, SK_TLS_SUITE_AES256_GCM), "seckill_tls_suites_total{suite=\"aes256_gcm\"}"},
	{TLS_AT(suite, SK_TLS_SUITE_CHACHA20), "seckill_tls_suites_total{suite=\"chacha20\"}"},
	{TLS_AT(bytes_in, 0), "seckill_tls_bytes_total{direction=\"in\"}"},
	{TLS_AT(bytes_out, 0), "seckill_tls_bytes_total{direction=\"out\"}"},
	{TLS_AT(records_in, 0), "seckill_tls_records_total{direction=\"in\"}"},
	{TLS_AT(records_out, 0), "seckill_tls_records_total{direction=\"out\"}"},
	{TLS_AT(tickets_issued, 0), "seckill_tls_tickets_total{result=\"issued\"}"},
	{TLS_AT(tickets_rejected, 0), "seckill_tls_tickets_total{result=\"rejected\"}"},
	{TLS_AT(renegotiations, 0), "seckill_tls_refused_total{what=\"renegotiation\"}"},
	{TLS_AT(early_data, 0), "seckill_tls_refused_total{what=\"early_data\"}"},
};

/* The TLS families: each counter of struct sk_tls_stats summed over the
 * lcores of the arena under its label; a block beyond nlcores not read.
 * Counter i of the table is i + 1 times the lcore's factor (1, 2, 3:
 * sums are 6 (i + 1)); alerts are 100 + slot (sent), 200 + slot. */
START_TEST(tls_counters)
{
	const size_t n = sizeof(tls_cases) / sizeof(tls_cases[0]);
	char key[128];

	for (unsigned l = 0; l <= NLCORES; l++) {
		struct sk_tls_stats *t = tls(l);
		uint64_t m = l == NLCORES ? 1000000 : l + 1;

		for (size_t i = 0; i < n; i++)
			*(uint64_t *)((char *)t + tls_cases[i].off) = (i + 1) * m;
		for (unsigned k = 0; k < SK_TLS_ALERT_SLOTS; k++) {
			t->alerts_sent[k] = (100 + k) * m;
			t->alerts_received[k] = (200 + k) * m;
		}
	}
	scrape();

	for (size_t i = 0; i < n; i++)
		ck_assert_msg(u64(tls_cases[i].key) == 6 * (i + 1), "%s: %" PRIu64 ", not %zu",
			      tls_cases[i].key, u64(tls_cases[i].key), 6 * (i + 1));
	ck_assert_uint_eq(u64("seckill_tls_handshakes_total{kind=\"full\"}"), 6);
	ck_assert_uint_eq(u64("seckill_tls_refused_total{what=\"early_data\"}"), 120);
	ck_assert_uint_eq(count("seckill_tls_alerts_total{"), 2 * SK_TLS_ALERT_SLOTS);
	for (unsigned k = 0; k < SK_TLS_ALERT_SLOTS; k++) {
		snprintf(key, sizeof(key),
			 "seckill_tls_alerts_total{direction=\"sent\",alert=\"%s\"}",
			 sk_tls_alert_name(k));
		ck_assert_uint_eq(u64(key), 6 * (100 + k));
		snprintf(key, sizeof(key),
			 "seckill_tls_alerts_total{direction=\"received\",alert=\"%s\"}",
			 sk_tls_alert_name(k));
		ck_assert_uint_eq(u64(key), 6 * (200 + k));
	}
	ck_assert_uint_eq(
		u64("seckill_tls_alerts_total{direction=\"sent\",alert=\"close_notify\"}"), 600);
	ck_assert_uint_eq(u64("seckill_tls_alerts_total{direction=\"received\",alert=\"other\"}"),
			  6 * (200 + SK_TLS_ALERT_OTHER));
}
END_TEST

START_TEST(errors)
{
	FILE *full;

	ck_assert_int_eq(sk_dpmetrics_write(NULL, stdout), -EINVAL);
	ck_assert_int_eq(sk_dpmetrics_write(T.arena.shm, NULL), -EINVAL);
	full = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(full);
	setvbuf(full, NULL, _IONBF, 0);
	ck_assert_int_eq(sk_dpmetrics_write(T.arena.shm, full), -EIO);
	fclose(full);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("dpmetrics");
	TCase *tc = tcase_create("write");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, empty_arena);
	tcase_add_test(tc, help_and_type);
	tcase_add_test(tc, requests_summed);
	tcase_add_test(tc, http_by_code);
	tcase_add_test(tc, latency_histogram);
	tcase_add_test(tc, latency_bucket_edges);
	tcase_add_test(tc, tls_counters);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(suite)
