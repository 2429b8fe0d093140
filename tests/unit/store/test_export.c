/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the Kafka exporter (sk_export) against librdkafka's mock
 * cluster (one broker on 127.0.0.1, one partition per topic, so each topic
 * is one ordered log): every event exported in order with the right key and
 * value, the cursor only over what was delivered, a broker outage only
 * delays, a restart from a stale cursor re-exports (at least once).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "sk_export.h"
#include "sk_test.h"
#include "sk_test_store.h"

#define EPOCH 1764000000u
#define S     INT64_C(1000000000)

static struct sk_store *st;
static rd_kafka_t *mock_rk;
static rd_kafka_mock_cluster_t *mc;
static char bootstrap[256];

static void
setup(void)
{
	char e[256];
	rd_kafka_conf_t *c = rd_kafka_conf_new();

	sk_test_store_setup();
	st = sk_test_store_open_test("export");
	rd_kafka_conf_set(c, "log_level", "2", e, sizeof(e)); /* the outage test is noisy */
	mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, e, sizeof(e));
	ck_assert_ptr_nonnull(mock_rk);
	mc = rd_kafka_mock_cluster_new(mock_rk, 1);
	ck_assert_ptr_nonnull(mc);
	snprintf(bootstrap, sizeof(bootstrap), "%s", rd_kafka_mock_cluster_bootstraps(mc));
	ck_assert_msg(strncmp(bootstrap, "127.0.0.1:", 10) == 0, "mock on %s", bootstrap);
	ck_assert_int_eq(rd_kafka_mock_topic_create(mc, SK_EXPORT_ORDERS_TOPIC, 1, 1), 0);
	ck_assert_int_eq(rd_kafka_mock_topic_create(mc, SK_EXPORT_EVENTS_TOPIC, 1, 1), 0);
}

static void
teardown(void)
{
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(mock_rk);
	sk_store_close(st);
	sk_test_store_teardown();
}

static int64_t
mono(void)
{
	return sk_clock_ns(CLOCK_MONOTONIC);
}

/* A one-line order of user @user for item 7, or a cart line. */
static struct sk_order_rec
rec(uint32_t seq, uint64_t user, uint8_t line, uint8_t nlines)
{
	return (struct sk_order_rec){
		.id = sk_order_id_make(EPOCH, 0, 1, seq),
		.user = user,
		.price = 1999,
		.time_ns = 5 * S,
		.item = 7u + line,
		.client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 2}}, /* 198.18.0.2 */
		.qty = 1,
		.line = line,
		.nlines = nlines};
}

/* last_seq - the last event of the log. */
static int
last_cb(const struct sk_store_event *ev, void *arg)
{
	*(uint64_t *)arg = ev->seq;
	return 0;
}

static uint64_t
last_seq(void)
{
	uint64_t s = 0;

	ck_assert_int_eq(sk_store_events_foreach(st, 1, last_cb, &s), 0);
	return s;
}

/* pump - poll @ex until its cursor reaches @want (@secs at most). */
static bool
pump_for(struct sk_export *ex, uint64_t want, int64_t secs)
{
	struct sk_export_stats s;
	int64_t end = mono() + secs * S;

	do {
		ck_assert_int_ge(sk_export_poll(ex, mono(), 64), 0);
		sk_export_stats(ex, &s);
		if (s.cursor >= want)
			return true;
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	} while (mono() < end);
	return false;
}

static bool
pump(struct sk_export *ex, uint64_t want)
{
	return pump_for(ex, want, 10);
}

/* One consumed message. */
struct msg {
	char key[32];
	char value[1024];
};

/* consume - every message of @topic (partition 0) from the start, into @m. */
static unsigned
consume(const char *topic, struct msg *m, unsigned max)
{
	char e[256];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	unsigned n = 0;

	rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, e, sizeof(e));
	rd_kafka_conf_set(c, "group.id", "sk-test", e, sizeof(e));
	rd_kafka_conf_set(c, "enable.auto.commit", "false", e, sizeof(e));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, e, sizeof(e));
	ck_assert_ptr_nonnull(rk);
	rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(tp, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
	ck_assert_int_eq(rd_kafka_assign(rk, tp), 0);
	rd_kafka_topic_partition_list_destroy(tp);

	int64_t end = mono() + 10 * S, idle_end = mono() + 3 * S;
	while (n < max && mono() < end && mono() < idle_end) {
		rd_kafka_message_t *r = rd_kafka_consumer_poll(rk, 100);
		if (r == NULL)
			continue;
		if (r->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
			snprintf(m[n].key, sizeof(m[n].key), "%.*s", (int)r->key_len,
				 (const char *)r->key);
			snprintf(m[n].value, sizeof(m[n].value), "%.*s", (int)r->len,
				 (const char *)r->payload);
			n++;
			idle_end = mono() + S; /* a second without news: done */
		}
		rd_kafka_message_destroy(r);
	}
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	return n;
}

static long long
seq_of(const struct msg *m)
{
	const char *p = strstr(m->value, "\"seq\":");

	return p != NULL ? atoll(p + 6) : -1;
}

static struct sk_export *
open_export(void)
{
	char err[SK_EXPORT_ERR_MAX];
	struct sk_export *ex;
	struct sk_export_conf c = {.bootstrap = bootstrap, .window = 16};

	ck_assert_msg(sk_export_open(&ex, st, &c, err, sizeof(err)) == 0, "open: %s", err);
	return ex;
}

START_TEST(exports_every_event_in_order)
{
	struct sk_order_rec r[5] = {rec(1, 100, 0, 1), rec(2, 101, 0, 1), rec(3, 102, 0, 2),
				    rec(3, 102, 1, 2), rec(4, 103, 0, 1)};
	struct sk_store_activity a = {.item = 7,
				      .per_user_limit = 3,
				      .total = 50,
				      .price = 1999,
				      .start_ns = 1,
				      .end_ns = INT64_MAX,
				      /* quote, backslash, control, UTF-8 e-acute, a stray byte */
				      .name = "a\"b\\c\001\xc3\xa9\xff"};
	static struct msg m[64];
	uint64_t cursor = 0;
	/* The client: IPv4 (orders 1, 3), IPv6 (order 2), none (order 4). */
	static const char *const client[4] = {"198.18.0.2", "2001:db8::be:ef", "198.18.0.2", ""};

	r[1].client = (struct sk_addr){.family = SK_ADDR_V6,
				       .bytes = {0x20, 0x01, 0x0d, 0xb8, [13] = 0xbe, [15] = 0xef}};
	r[4].client = (struct sk_addr){0};
	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	ck_assert_int_eq(sk_store_put_orders(st, r, 5, 60 * S, 2 * S, NULL, NULL), 0);
	ck_assert_int_eq(
		sk_store_order_move(st, r[1].id, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 3 * S, NULL),
		0);
	ck_assert_int_eq(sk_store_activity_restock(st, 7, 9, 5, 4 * S), 0);
	uint64_t last = last_seq(); /* activity, 4 confirmed, paid, restocked */
	ck_assert_uint_eq(last, 7);

	struct sk_export *ex = open_export();
	ck_assert(pump(ex, last));
	ck_assert_int_eq(sk_export_flush(ex, 5000), 0);
	ck_assert_int_eq(sk_store_cursor_get(st, SK_EXPORT_CURSOR, &cursor), 0);
	ck_assert_uint_eq(cursor, last);
	struct sk_export_stats s;
	sk_export_stats(ex, &s);
	ck_assert_uint_eq(s.produced, 7);
	ck_assert_uint_eq(s.delivered, 7);
	ck_assert_uint_eq(s.saved, 7);
	sk_export_close(ex, 1000);

	/* orders: the four confirmed orders, in order, keyed by id, with lines */
	ck_assert_uint_eq(consume(SK_EXPORT_ORDERS_TOPIC, m, 64), 4);
	for (unsigned i = 0; i < 4; i++) {
		char key[32];
		snprintf(key, sizeof(key), "%llu",
			 (unsigned long long)sk_order_id_make(EPOCH, 0, 1, i + 1));
		ck_assert_str_eq(m[i].key, key);
		ck_assert_ptr_nonnull(strstr(m[i].value, "\"v\":1,"));
		ck_assert_ptr_nonnull(strstr(m[i].value, "\"type\":\"confirmed\""));
		char ip[64];
		snprintf(ip, sizeof(ip), "\"client_ip\":\"%s\"", client[i]);
		ck_assert_msg(strstr(m[i].value, ip) != NULL, "%s in %s", ip, m[i].value);
		if (i > 0)
			ck_assert_int_gt(seq_of(&m[i]), seq_of(&m[i - 1]));
	}
	ck_assert_ptr_nonnull(strstr(m[2].value, "\"units\":2"));
	ck_assert_ptr_nonnull(
		strstr(m[2].value, "{\"line\":1,\"item\":8,\"qty\":1,\"price\":1999}"));

	/* events: activity, paid, restocked */
	ck_assert_uint_eq(consume(SK_EXPORT_EVENTS_TOPIC, m, 64), 3);
	ck_assert_str_eq(m[0].key, "item:7");
	ck_assert_ptr_nonnull(strstr(m[0].value, "\"order\":null"));
	/* ... with its definition, the name escaped into valid JSON */
	ck_assert_ptr_nonnull(strstr(m[0].value, "\"units\":50,"));
	ck_assert_ptr_nonnull(strstr(m[0].value, ",\"limit\":3,\"price\":1999,\"start_ns\":1,"
						 "\"end_ns\":9223372036854775807,"));
	ck_assert_msg(strstr(m[0].value, ",\"name\":\"a\\\"b\\\\c\\u0001\xc3\xa9\\ufffd\"}") !=
			      NULL,
		      "%s", m[0].value);
	ck_assert_ptr_nonnull(strstr(m[1].value, "\"type\":\"paid\""));
	ck_assert_ptr_nonnull(strstr(m[2].value, "\"units\":5"));
}
END_TEST

START_TEST(outage_only_delays)
{
	static struct msg m[256];
	struct sk_export_stats s;
	struct sk_export *ex = open_export();

	/* the broker is away: events wait, the cursor does not move */
	ck_assert_int_eq(rd_kafka_mock_broker_set_down(mc, 1), 0);
	for (uint32_t i = 1; i <= 40; i++) {
		struct sk_order_rec r = rec(i, 1000 + i, 0, 1);
		ck_assert_int_eq(sk_store_put_orders(st, &r, 1, 0, S, NULL, NULL), 0);
	}
	ck_assert(!pump_for(ex, 1, 2)); /* 2 s of polling: nothing delivered */
	sk_export_stats(ex, &s);
	ck_assert_uint_eq(s.cursor, 0);
	ck_assert_uint_eq(s.delivered, 0);
	ck_assert_uint_le(s.produced, 16); /* the window */

	/* back: everything goes, in order, nothing lost */
	ck_assert_int_eq(rd_kafka_mock_broker_set_up(mc, 1), 0);
	ck_assert(pump(ex, 40));
	sk_export_close(ex, 5000);
	unsigned n = consume(SK_EXPORT_ORDERS_TOPIC, m, 256);
	ck_assert_uint_ge(n, 40);
	/* at least once: every seq 1..40 is there, each first seen in order */
	long long want = 1;
	for (unsigned i = 0; i < n; i++)
		if (seq_of(&m[i]) == want)
			want++;
	ck_assert_int_eq(want, 41);
}
END_TEST

START_TEST(restart_from_the_cursor)
{
	static struct msg m[64];
	struct sk_export *ex;
	uint64_t cursor;

	for (uint32_t i = 1; i <= 6; i++) {
		struct sk_order_rec r = rec(i, 2000 + i, 0, 1);
		ck_assert_int_eq(sk_store_put_orders(st, &r, 1, 0, S, NULL, NULL), 0);
	}
	ex = open_export();
	ck_assert(pump(ex, 6));
	sk_export_close(ex, 1000);
	ck_assert_int_eq(sk_store_cursor_get(st, SK_EXPORT_CURSOR, &cursor), 0);
	ck_assert_uint_eq(cursor, 6);

	/* a crash that left the cursor behind: 3..6 go again, then the new ones */
	ck_assert_int_eq(sk_store_cursor_set(st, SK_EXPORT_CURSOR, 2), 0);
	for (uint32_t i = 7; i <= 8; i++) {
		struct sk_order_rec r = rec(i, 2000 + i, 0, 1);
		ck_assert_int_eq(sk_store_put_orders(st, &r, 1, 0, S, NULL, NULL), 0);
	}
	ex = open_export();
	ck_assert(pump(ex, 8));
	sk_export_close(ex, 1000);
	ck_assert_uint_eq(consume(SK_EXPORT_ORDERS_TOPIC, m, 64), 6 + 4 + 2);
	ck_assert_int_eq(seq_of(&m[6]), 3); /* the re-export starts after the stale cursor */
	ck_assert_int_eq(seq_of(&m[11]), 8);

	/* bad parameters */
	char err[SK_EXPORT_ERR_MAX];
	struct sk_export_conf c = {.bootstrap = ""};
	ck_assert_int_eq(sk_export_open(&ex, st, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no bootstrap"));
	c = (struct sk_export_conf){.bootstrap = bootstrap, .window = 12};
	ck_assert_int_eq(sk_export_open(&ex, st, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "power of two"));
}
END_TEST

static Suite *
export_suite(void)
{
	Suite *s = suite_create("export");
	TCase *tc = tcase_create("export");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, exports_every_event_in_order);
	tcase_add_test(tc, outage_only_delays);
	tcase_add_test(tc, restart_from_the_cursor);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(export_suite)
