/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The payments consumer thread (control/sk_payments_consumer.h) against an
 * in-process mock Kafka cluster, with the EAL in --no-huge mode, an arena in
 * plain memory and an LMDB store per test:
 *
 *   signatures: an unsigned refund of a paid order, one under an unknown
 *               key, one with a bit flipped and one signed too long ago are
 *               refused - the order stays paid, no unit goes back on sale,
 *               each is counted by reason and recorded as a pay_rejected
 *               event (partition, offset, reason) - while a signed message
 *               after them is applied;
 *   queued:     a paid message for an order the drain holds queued for
 *               longer than 5 s is applied once the order lands (it used to
 *               be committed unapplied after 5 s).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "sk_admin.h"
#include "sk_buy.h"
#include "sk_control.h"
#include "sk_payments_consumer.h"
#include "sk_paysig.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"
#include "sk_test_fs.h"

#define EPOCH	1764000000u
#define S	INT64_C(1000000000)
#define T0	((int64_t)EPOCH * S + 5 * S)
#define NLCORES 2
#define TOPIC	"seckill.payments"
#define SECRET	"payments-test-secret-0123456789abcdef"
#define AGE_NS	(7 * 86400 * S)

struct fx {
	struct sk_test_arena arena;
	struct sk_control *ctl;
	char dir[PATH_MAX], store[PATH_MAX + 16];
	rd_kafka_t *mrk;	     /* owns the mock cluster */
	rd_kafka_mock_cluster_t *mc; /* one broker, TOPIC with 1 partition */
	rd_kafka_t *prod;	     /* the shop */
	struct sk_paysig_keys *keys, *stranger;
	struct sk_payments *pay;
};

static struct fx F;

static void
fx_setup(void)
{
	struct sk_shm_conf c = {.nlcores = NLCORES,
				.max_items = 4,
				.dedup_slots = 1024,
				.status_bits = 10,
				.epoch = EPOCH};
	const char *kid[1] = {"shop-1"}, *kid2[1] = {"other"}, *sec[1] = {SECRET};
	size_t len[1] = {strlen(SECRET)};
	char e[256], err[SK_CONTROL_ERR_MAX];

	memset(&F, 0, sizeof(F));
	sk_test_arena_init(&F.arena, &c);
	sk_test_arena_rings(&F.arena, 256);
	ck_assert_int_eq(sk_test_tmpdir(F.dir, sizeof(F.dir), "sk-payments-test"), 0);
	snprintf(F.store, sizeof(F.store), "%s/store", F.dir);
	struct sk_control_conf cc = {
		.store_dir = F.store, .store_flags = SK_STORE_NOSYNC, .pay_timeout_ns = 600 * S};
	ck_assert_int_eq(
		sk_control_init(&F.ctl, F.arena.shm, F.arena.ring, NLCORES, &cc, err, sizeof(err)),
		0);
	F.mrk = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), e, sizeof(e));
	ck_assert_ptr_nonnull(F.mrk);
	F.mc = rd_kafka_mock_cluster_new(F.mrk, 1);
	ck_assert_ptr_nonnull(F.mc);
	ck_assert_int_eq(rd_kafka_mock_topic_create(F.mc, TOPIC, 1, 1), 0);
	rd_kafka_conf_t *pc = rd_kafka_conf_new();
	ck_assert_int_eq(rd_kafka_conf_set(pc, "bootstrap.servers",
					   rd_kafka_mock_cluster_bootstraps(F.mc), e, sizeof(e)),
			 RD_KAFKA_CONF_OK);
	F.prod = rd_kafka_new(RD_KAFKA_PRODUCER, pc, e, sizeof(e));
	ck_assert_ptr_nonnull(F.prod);
	ck_assert_int_eq(sk_paysig_keys_from(kid, sec, len, 1, &F.keys), 0);
	ck_assert_int_eq(sk_paysig_keys_from(kid2, sec, len, 1, &F.stranger), 0);
	struct sk_payments_conf conf = {.bootstrap = rd_kafka_mock_cluster_bootstraps(F.mc),
					.group = "test-payments",
					.keys = F.keys,
					.max_age_ns = AGE_NS};
	ck_assert_int_eq(sk_payments_start(&F.pay, F.ctl, &conf, e, sizeof(e)), 0);
}

static void
fx_teardown(void)
{
	sk_payments_stop(F.pay);
	rd_kafka_destroy(F.prod);
	rd_kafka_mock_cluster_destroy(F.mc);
	rd_kafka_destroy(F.mrk);
	sk_paysig_keys_free(F.keys);
	sk_paysig_keys_free(F.stranger);
	sk_control_close(F.ctl);
	sk_test_arena_fini(&F.arena);
	sk_test_rmtree(F.dir);
}

/* ----------------------------------------------------------------- helpers */

enum sig { SIGNED, UNSIGNED, STRANGER, FLIPPED, STALE };

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* publish - one payment message for @order, signed as @how; waits for delivery. */
static void
publish(const char *req, uint64_t order, const char *kind, enum sig how)
{
	char val[256], h[SK_PAYSIG_HDR_MAX + 1];
	int n = snprintf(val, sizeof(val),
			 "{\"v\":1,\"request\":\"%s\",\"order\":\"%llu\",\"kind\":\"%s\"}", req,
			 (unsigned long long)order, kind);
	rd_kafka_headers_t *hdrs = NULL;

	if (how != UNSIGNED) {
		int64_t t = now_ms() - (how == STALE ? 8 * 86400 * INT64_C(1000) : 0);
		int hl = sk_paysig_sign(how == STRANGER ? F.stranger : F.keys, TOPIC, t, val,
					(size_t)n, h);
		ck_assert_int_gt(hl, 0);
		if (how == FLIPPED)
			val[n - 3] ^= 0x01; /* "refund" -> "refune": one bit after signing */
		hdrs = rd_kafka_headers_new(1);
		rd_kafka_header_add(hdrs, SK_PAYSIG_HEADER, -1, h, hl);
	}
	ck_assert_int_eq(rd_kafka_producev(F.prod, RD_KAFKA_V_TOPIC(TOPIC),
					   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
					   RD_KAFKA_V_VALUE(val, (size_t)n),
					   RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END),
			 RD_KAFKA_RESP_ERR_NO_ERROR);
	ck_assert_int_eq(rd_kafka_flush(F.prod, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

static struct sk_control_stats
stats(void)
{
	struct sk_control_stats s;

	sk_control_stats(F.ctl, &s);
	return s;
}

/* wait_unknown - wait (30 s at most) until @n paid messages had outcome unknown. */
static void
wait_unknown(uint64_t n)
{
	for (int i = 0; i < 3000 && stats().payments[0][SK_CONTROL_PM_UNKNOWN] < n; i++)
		usleep(10000);
	ck_assert_uint_eq(stats().payments[0][SK_CONTROL_PM_UNKNOWN], n);
}

static unsigned
store_state(uint64_t id)
{
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;

	return sk_store_order_get(sk_control_store(F.ctl), id, l, SK_STORE_MAX_LINES, &n) == 0
		       ? l[0].state
		       : SK_ORDER_NONE;
}

static uint64_t
buy(struct sk_item *it, uint64_t user)
{
	struct sk_buy_line l = {.item = it, .qty = 1};
	struct sk_buy_req r = {.user = user,
			       .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 2}},
			       .now_ns = T0};
	uint64_t id;

	ck_assert_int_eq(sk_buy(&F.arena.lc[0], &r, &l, 1, &id), SK_BUY_OK);
	return id;
}

static struct sk_item *
add_item(uint32_t id, uint64_t total)
{
	struct sk_stock_conf c = {
		.id = id, .per_user_limit = 1, .end_ns = INT64_MAX, .price = 100, .total = total};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(F.arena.shm, &c, 0, &it), 0);
	return it;
}

struct rejected {
	unsigned n;
	struct sk_store_event ev[8];
};

static int
collect_rejected(const struct sk_store_event *ev, void *arg)
{
	struct rejected *r = arg;

	if (ev->type == SK_STORE_EV_PAY_REJECTED && r->n < 8)
		r->ev[r->n++] = *ev;
	return 0;
}

/* -------------------------------------------------------------- signatures */

START_TEST(unsigned_refund_refused)
{
	struct sk_item *it = add_item(1, 5);
	uint64_t id = buy(it, 7);

	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + S, SK_CONTROL_DRAIN_NOW, NULL), 1);
	ck_assert_int_eq(sk_control_pay(F.ctl, id, T0 + S, 0), SK_CONTROL_PAY_DONE);
	ck_assert_uint_eq(sk_stock_remaining(it), 4);

	publish("r-1", id, "refund", UNSIGNED);	  /* offset 0 */
	publish("r-2", id, "refund", STRANGER);	  /* offset 1 */
	publish("r-3", id, "refund", FLIPPED);	  /* offset 2 */
	publish("r-4", id, "refund", STALE);	  /* offset 3 */
	publish("probe", 999999, "paid", SIGNED); /* offset 4: read after them */
	wait_unknown(1);

	struct sk_control_stats s = stats();
	ck_assert_uint_eq(store_state(id), SK_ORDER_PAID);
	ck_assert_uint_eq(sk_stock_remaining(it), 4); /* not resold */
	ck_assert_uint_eq(s.payments[1][SK_CONTROL_PM_DONE], 0);
	ck_assert_uint_eq(s.units_refunded, 0);
	ck_assert_uint_eq(s.payments_rejected[SK_STORE_REJ_UNSIGNED], 1);
	ck_assert_uint_eq(s.payments_rejected[SK_STORE_REJ_UNKNOWN_KID], 1);
	ck_assert_uint_eq(s.payments_rejected[SK_STORE_REJ_BAD_MAC], 1);
	ck_assert_uint_eq(s.payments_rejected[SK_STORE_REJ_STALE], 1);

	struct rejected r = {0};
	ck_assert_int_eq(sk_store_events_foreach(sk_control_store(F.ctl), 1, collect_rejected, &r),
			 0);
	ck_assert_uint_eq(r.n, 4);
	static const unsigned why[] = {SK_STORE_REJ_UNSIGNED, SK_STORE_REJ_UNKNOWN_KID,
				       SK_STORE_REJ_BAD_MAC, SK_STORE_REJ_STALE};
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(r.ev[i].item, 0);  /* partition */
		ck_assert_uint_eq(r.ev[i].units, i); /* offset */
		ck_assert_uint_eq(r.ev[i].nlines, why[i]);
		ck_assert_uint_eq(r.ev[i].order, 0); /* nothing of the message itself */
		ck_assert_str_eq(r.ev[i].request, "");
	}

	struct sk_admin_reply rep;
	ck_assert_int_eq(sk_admin_handle(F.ctl, "GET", "/metrics", NULL, 0, 0, &rep), 0);
	ck_assert_ptr_nonnull(
		strstr(rep.body, "seckill_payments_rejected_total{reason=\"unsigned\"} 1\n"));
	ck_assert_ptr_nonnull(
		strstr(rep.body, "seckill_payments_rejected_total{reason=\"bad_mac\"} 1\n"));
	free(rep.body);
	/* the consumer's verdicts and the stored reasons are named alike */
	for (int v = SK_PAYSIG_MISSING; v <= SK_PAYSIG_STALE; v++)
		ck_assert_str_eq(sk_paysig_verdict_name(v), sk_store_pay_reject_name((unsigned)v));
}
END_TEST

/* ------------------------------------------------------------------ queued */

START_TEST(paid_waits_for_queued_order)
{
	struct sk_item *it = add_item(1, 5);

	publish("probe", 999999, "paid", SIGNED);
	wait_unknown(1);	  /* the consumer has joined and reads */
	uint64_t id = buy(it, 7); /* queued: nobody drains */
	publish("pay-1", id, "paid", SIGNED);
	/* The order stays queued past the 5 s the consumer used to wait. */
	sleep(6);
	ck_assert_uint_eq(store_state(id), SK_ORDER_NONE);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + S, SK_CONTROL_DRAIN_NOW, NULL), 1);
	for (int i = 0; i < 1000 && store_state(id) != SK_ORDER_PAID; i++)
		usleep(10000);
	ck_assert_uint_eq(store_state(id), SK_ORDER_PAID);
	ck_assert_uint_eq(stats().payments[0][SK_CONTROL_PM_DONE], 1);
}
END_TEST

static Suite *
payments_suite(void)
{
	Suite *s = suite_create("payments_consumer");
	TCase *tc = tcase_create("consumer");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, unsigned_refund_refused);
	tcase_add_test(tc, paid_waits_for_queued_order);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return sk_test_eal_main(payments_suite(), "test_payments");
}
