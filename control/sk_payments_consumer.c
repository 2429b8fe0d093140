/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The payments consumer (sk_payments_consumer.h): seckill.payments messages read with
 * a librdkafka consumer group, parsed, applied with sk_control_payment(),
 * and their offsets committed by hand once the store has the outcome.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#include "sk_common.h"
#include "sk_logfmt.h"
#include "sk_parse.h"
#include "sk_payments_consumer.h"
#include "sk_paysig.h"

#define POLL_MS	       100
#define RETRY_NS       (100 * INT64_C(1000000))
#define QUEUED_WAIT_MS 100
#define QUEUED_LOG_NS  (5 * INT64_C(1000000000)) /* a queued order: said every 5 s */
#define NAME_MAX_LEN   249			 /* Kafka's longest topic name */

_Static_assert((int)SK_PAYSIG_MISSING == (int)SK_STORE_REJ_UNSIGNED &&
		       (int)SK_PAYSIG_MALFORMED == (int)SK_STORE_REJ_BAD_HEADER &&
		       (int)SK_PAYSIG_UNKNOWN_KID == (int)SK_STORE_REJ_UNKNOWN_KID &&
		       (int)SK_PAYSIG_BAD_MAC == (int)SK_STORE_REJ_BAD_MAC &&
		       (int)SK_PAYSIG_STALE == (int)SK_STORE_REJ_STALE,
	       "a signature verdict is stored as the reject reason of the same number");

struct sk_payments {
	rd_kafka_t *rk;
	struct sk_control *ctl;
	const struct sk_paysig_keys *keys;
	int64_t max_age_ns;
	pthread_t th;
	atomic_bool stop;
	char topic[NAME_MAX_LEN + 1];
};

/* ---------------------------------------------------------------- messages */

static int
bad(char *why, size_t whylen, const char *what)
{
	sk_set_err(why, whylen, "%s", what);
	return -EBADMSG;
}

/* get_u32 - optional integer field @name in 1..UINT32_MAX; 0 if absent. */
static int
get_u32(json_t *o, const char *name, uint32_t *out)
{
	json_t *v = json_object_get(o, name);

	*out = 0;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > (json_int_t)UINT32_MAX)
		return -EBADMSG;
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

/* get_order - the order id: a decimal string (or a JSON integer), >= 1. */
static int
get_order(json_t *o, uint64_t *id)
{
	json_t *v = json_object_get(o, "order");

	if (json_is_integer(v) && json_integer_value(v) >= 1) {
		*id = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (json_is_string(v) && sk_parse_u64(json_string_value(v), 1, UINT64_MAX, id))
		return 0;
	return -EBADMSG;
}

int
sk_payments_parse(const void *buf, size_t len, struct sk_control_payment *p,
		  char req[SK_STORE_REQUEST_MAX + 1], char *why, size_t whylen)
{
	json_error_t e;
	json_t *o = buf != NULL ? json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e) : NULL;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	req[0] = '\0';
	if (o == NULL)
		return bad(why, whylen, "not JSON");
	json_t *v = json_object_get(o, "v");
	const char *kind = json_string_value(json_object_get(o, "kind"));
	const char *r = json_string_value(json_object_get(o, "request"));
	if (!json_is_object(o))
		rc = bad(why, whylen, "not a JSON object");
	else if (!json_is_integer(v) || json_integer_value(v) != 1)
		rc = bad(why, whylen, "\"v\" is not 1");
	else if (r == NULL || !sk_store_request_ok(r))
		rc = bad(why, whylen,
			 "\"request\" missing or not 1-64 printable characters without blank, "
			 "'\"' or '\\'");
	else if (get_order(o, &p->order) != 0)
		rc = bad(why, whylen, "\"order\" missing or not a decimal id");
	else if (kind != NULL && strcmp(kind, "paid") == 0)
		p->kind = SK_STORE_PAY_PAID;
	else if (kind != NULL && strcmp(kind, "refund") == 0)
		p->kind = SK_STORE_PAY_REFUND;
	else
		rc = bad(why, whylen, "\"kind\" is not \"paid\" or \"refund\"");
	if (rc == 0 && p->kind == SK_STORE_PAY_REFUND &&
	    (get_u32(o, "units", &p->units) != 0 || get_u32(o, "item", &p->item) != 0))
		rc = bad(why, whylen, "\"units\" or \"item\" not an integer >= 1");
	if (rc == 0) {
		snprintf(req, SK_STORE_REQUEST_MAX + 1, "%s", r);
		p->request = req;
	}
	json_decref(o);
	return rc;
}

int
sk_payments_handle(struct sk_control *ctl, const void *buf, size_t len, int64_t now_ns,
		   struct sk_control_pm_result *out)
{
	static atomic_uint_fast64_t malformed;
	char req[SK_STORE_REQUEST_MAX + 1], why[160];
	struct sk_control_payment p;
	struct sk_control_pm_result res;
	int rc = sk_payments_parse(buf, len, &p, req, why, sizeof(why));

	if (rc == 0)
		rc = sk_control_payment(ctl, &p, now_ns, QUEUED_WAIT_MS, &res);
	if (rc == -EBADMSG || rc == -EINVAL) {
		uint64_t n = atomic_fetch_add(&malformed, 1) + 1;
		if (rc == -EBADMSG)
			sk_control_payment_malformed(ctl);
		if (n <= 100 || n % 1000 == 0)
			sk_logf(SK_LOG_WARN, "payments",
				"msg=\"malformed message skipped\" why=%s malformed=%" PRIu64,
				rc == -EBADMSG ? why : "refused", n);
		return SK_PAYMENTS_MALFORMED;
	}
	if (rc != 0)
		return rc;
	if (out != NULL)
		*out = res;
	return SK_PAYMENTS_APPLIED;
}

/* ------------------------------------------------------------------ thread */

static void
pause_ns(int64_t ns)
{
	struct timespec ts = {ns / 1000000000, ns % 1000000000};

	nanosleep(&ts, NULL);
}

/*
 * verdict - the signature check of @m: an enum sk_paysig_verdict. The
 * header is read as the producer wrote it; its last value wins.
 */
static int
verdict(const struct sk_payments *c, const rd_kafka_message_t *m)
{
	rd_kafka_headers_t *hdrs = NULL;
	const void *hv = NULL;
	size_t hl = 0;

	if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR ||
	    rd_kafka_header_get_last(hdrs, SK_PAYSIG_HEADER, &hv, &hl) !=
		    RD_KAFKA_RESP_ERR_NO_ERROR)
		hv = NULL;
	return sk_paysig_verify(c->keys, c->topic, hv, hl, m->payload, m->len,
				sk_clock_ns(CLOCK_REALTIME) / 1000000, c->max_age_ns / 1000000);
}

/*
 * reject - record the refusal of @m (a pay_rejected event), retrying a
 * store error until it is recorded or we stop. Logs the first 100, then
 * every 1000th. True once recorded: the offset may be committed.
 */
static bool
reject(struct sk_payments *c, const rd_kafka_message_t *m, int why)
{
	static atomic_uint_fast64_t rejected;
	uint64_t n = atomic_fetch_add(&rejected, 1) + 1;
	int64_t last_log = 0;

	if (n <= 100 || n % 1000 == 0)
		sk_logf(SK_LOG_WARN, "payments",
			"partition=%" PRId32 " offset=%" PRId64 " reason=%s rejected=%" PRIu64
			" msg=\"message refused: not applied\"",
			m->partition, m->offset, sk_paysig_verdict_name(why), n);
	while (!atomic_load(&c->stop)) {
		int rc = sk_control_payment_rejected(c->ctl, m->partition, m->offset, (unsigned)why,
						     sk_clock_ns(CLOCK_REALTIME));
		if (rc == 0)
			return true;
		int64_t now = sk_clock_ns(CLOCK_MONOTONIC);
		if (now - last_log > INT64_C(1000000000)) {
			sk_logf(SK_LOG_WARN, "payments",
				"offset=%" PRId64 " msg=\"store error recording a refusal: "
				"retrying\" err=%s",
				m->offset, strerror(-rc));
			last_log = now;
		}
		pause_ns(RETRY_NS);
	}
	return false;
}

/*
 * apply - one message until it is applied, skipped as malformed, or we
 * stop. A payment for an order still queued waits for it as long as it
 * takes (the drain confirms or fails it): its offset is never committed
 * before the store holds its outcome.
 */
static bool
apply(struct sk_payments *c, const rd_kafka_message_t *m)
{
	int64_t last_log = 0, queued_since = 0, queued_log = 0;

	while (!atomic_load(&c->stop)) {
		struct sk_control_pm_result res;
		int rc = sk_payments_handle(c->ctl, m->payload, m->len, sk_clock_ns(CLOCK_REALTIME),
					    &res);
		int64_t now = sk_clock_ns(CLOCK_MONOTONIC);
		if (rc == SK_PAYMENTS_APPLIED && res.outcome == SK_CONTROL_PM_QUEUED) {
			/* Waited 100 ms in there: the drain will commit it. */
			if (queued_since == 0)
				queued_since = queued_log = now;
			if (now - queued_log >= QUEUED_LOG_NS) {
				sk_logf(SK_LOG_WARN, "payments",
					"offset=%" PRId64 " queued_s=%" PRId64
					" msg=\"order still queued: waiting for the drain\"",
					m->offset, (now - queued_since) / INT64_C(1000000000));
				queued_log = now;
			}
			continue;
		}
		if (rc >= 0)
			return true;
		if (now - last_log > INT64_C(1000000000)) {
			sk_logf(SK_LOG_WARN, "payments",
				"offset=%" PRId64 " msg=\"store error: retrying\" err=%s",
				m->offset, strerror(-rc));
			last_log = now;
		}
		pause_ns(RETRY_NS);
	}
	return false;
}

static void *
run(void *arg)
{
	struct sk_payments *c = arg;
	int64_t last_log = 0;
	int why;

	while (!atomic_load(&c->stop)) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(c->rk, POLL_MS);

		if (m == NULL)
			continue;
		if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
			int64_t now = sk_clock_ns(CLOCK_MONOTONIC);
			if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF &&
			    now - last_log > INT64_C(1000000000)) {
				sk_logf(SK_LOG_WARN, "kafka", "topic=payments err=%s",
					rd_kafka_message_errstr(m));
				last_log = now;
			}
		} else if ((why = verdict(c, m)) != SK_PAYSIG_OK ? reject(c, m, why)
								 : apply(c, m)) {
			/* The outcome is durable: the offset may move past it.
			 * Synchronous, so a clean stop leaves nothing to redo; a
			 * failed commit only means a harmless redelivery. */
			rd_kafka_commit_message(c->rk, m, 0);
		}
		rd_kafka_message_destroy(m);
	}
	return NULL;
}

const char *
sk_payments_group(const struct sk_payments_conf *conf, char buf[SK_PAYMENTS_GROUP_MAX])
{
	if (conf->group != NULL)
		snprintf(buf, SK_PAYMENTS_GROUP_MAX, "%s", conf->group);
	else if (conf->member != NULL)
		snprintf(buf, SK_PAYMENTS_GROUP_MAX, SK_PAYMENTS_GROUP_DEFAULT "-%s", conf->member);
	else
		snprintf(buf, SK_PAYMENTS_GROUP_MAX, SK_PAYMENTS_GROUP_DEFAULT);
	return buf;
}

int
sk_payments_start(struct sk_payments **out, struct sk_control *ctl,
		  const struct sk_payments_conf *conf, char *err, size_t errlen)
{
	static const char *const reserved[] = {SK_PAYMENTS_RESERVED, NULL};
	const char *topic = conf->topic != NULL ? conf->topic : SK_PAYMENTS_TOPIC_DEFAULT;
	char e[256], group[SK_PAYMENTS_GROUP_MAX], why[SK_KAFKA_CONF_ERR_MAX];
	const struct sk_kafka_kv kv[] = {
		{"bootstrap.servers", conf->bootstrap},
		{"client.id", "seckill-control-payments"},
		{"group.id", sk_payments_group(conf, group)},
		{"enable.auto.commit", "false"},
		{"enable.auto.offset.store", "false"},
		{"auto.offset.reset", "earliest"},
		/* A restarted control plane rejoins within seconds, not 45. */
		{"session.timeout.ms", "6000"},
		{"heartbeat.interval.ms", "500"},
	};
	struct sk_payments *c;
	rd_kafka_conf_t *kc;
	int rc;

	if (conf->bootstrap == NULL || strlen(topic) == 0 || strlen(topic) > NAME_MAX_LEN ||
	    strlen(group) > NAME_MAX_LEN) {
		sk_set_err(err, errlen, "payments: bad bootstrap servers, topic or group");
		return -EINVAL;
	}
	if (conf->keys == NULL) {
		sk_set_err(err, errlen, "payments: no signing key (--payments-key-file)");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	kc = rd_kafka_conf_new();
	if (c == NULL || kc == NULL) {
		free(c);
		if (kc != NULL)
			rd_kafka_conf_destroy(kc);
		return -ENOMEM;
	}
	c->ctl = ctl;
	c->keys = conf->keys;
	c->max_age_ns = conf->max_age_ns;
	snprintf(c->topic, sizeof(c->topic), "%s", topic);
	sk_logfmt_kafka(kc);
	if (sk_kafka_conf_build(kc, kv, SK_ARRAY_SIZE(kv), reserved, conf->props, why,
				sizeof(why)) != 0) {
		sk_set_err(err, errlen, "payments: %s", why);
		rd_kafka_conf_destroy(kc);
		free(c);
		return -EINVAL;
	}
	c->rk = rd_kafka_new(RD_KAFKA_CONSUMER, kc, e, sizeof(e));
	if (c->rk == NULL) {
		sk_set_err(err, errlen, "payments: cannot create the consumer: %s", e);
		rd_kafka_conf_destroy(kc);
		free(c);
		return -EINVAL;
	}
	rd_kafka_poll_set_consumer(c->rk);
	rd_kafka_topic_partition_list_t *tl = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(tl, topic, RD_KAFKA_PARTITION_UA);
	rd_kafka_resp_err_t ke = rd_kafka_subscribe(c->rk, tl);
	rd_kafka_topic_partition_list_destroy(tl);
	if (ke != RD_KAFKA_RESP_ERR_NO_ERROR) {
		sk_set_err(err, errlen, "payments: subscribe to %s: %s", topic,
			   rd_kafka_err2str(ke));
		rd_kafka_destroy(c->rk);
		free(c);
		return -EINVAL;
	}
	rc = pthread_create(&c->th, NULL, run, c);
	if (rc != 0) {
		sk_set_err(err, errlen, "payments: cannot start its thread: %s", strerror(rc));
		rd_kafka_consumer_close(c->rk);
		rd_kafka_destroy(c->rk);
		free(c);
		return -rc;
	}
	*out = c;
	return 0;
}

void
sk_payments_stop(struct sk_payments *c)
{
	if (c == NULL)
		return;
	atomic_store(&c->stop, true);
	pthread_join(c->th, NULL);
	rd_kafka_consumer_close(c->rk);
	rd_kafka_destroy(c->rk);
	free(c);
}
