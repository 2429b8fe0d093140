/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The control plane's payments consumer: reads the Kafka topic
 * `seckill.payments` (a librdkafka consumer group) and applies each message
 * with sk_control_payment() (sk_control.h), exactly once by its request id.
 * Optional: seckill-control starts it with --kafka (docs/kafka.md,
 * "Payments").
 *
 * A message is one line of JSON, version 1:
 *
 *   {"v":1,"request":"REQ","order":"ID","kind":"paid"}
 *   {"v":1,"request":"REQ","order":"ID","kind":"refund","units":N,"item":I}
 *
 * "order" is the decimal order id (a string; a JSON integer is accepted
 * too); "units" (>= 1) and "item" (>= 1) are optional for a refund: without
 * units it refunds everything left, and a cart needs "item" when units are
 * given. Unknown fields are ignored.
 *
 * Every message must carry the shop's signature (token/sk_paysig.h: the
 * Kafka header "sk-sig", HMAC-SHA256 over the topic, the signing time and
 * the value). One without it, or badly signed, or signed before the request
 * table's max age, is refused: logged (rate-limited), counted
 * (sk_control_payment_rejected()), recorded as a pay_rejected event, never
 * applied, and its offset committed (a refusal is final).
 *
 * Offsets are committed by hand, only after the store committed the
 * message's outcome (or the message was found malformed and skipped, or
 * refused), so a crash redelivers at most the messages after the last
 * commit, and the request ids make those repeats change nothing. A store
 * error retries the same message every 100 ms (the partition waits,
 * nothing is skipped); a payment for an order still queued waits for the
 * drain to confirm or fail it, however long (the partition waits; the
 * offset never moves past a payment not applied); a malformed message is
 * logged, counted and skipped, never retried.
 *
 * Thread-safety: start and stop from one thread (the main one);
 * sk_payments_handle() from any thread.
 */
#ifndef SK_PAYMENTS_CONSUMER_H
#define SK_PAYMENTS_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "sk_control.h"
#include "sk_kafka_conf.h"

struct sk_paysig_keys;

/**
 * Default topic and consumer group. A cluster member's default group is
 * SK_PAYMENTS_GROUP_DEFAULT "-<member id>" (sk_payments_group()): every
 * member reads every payment, and applies those of its own orders.
 */
#define SK_PAYMENTS_TOPIC_DEFAULT "seckill.payments"
#define SK_PAYMENTS_GROUP_DEFAULT "seckill-control"
/** Size of a buffer that holds any group sk_payments_group() writes. */
#define SK_PAYMENTS_GROUP_MAX 256

/**
 * The consumer settings the payments consumer relies on without setting
 * them, refused from --kafka-config (besides those it sets: client.id,
 * group.id, enable.auto.commit, enable.auto.offset.store,
 * auto.offset.reset, session.timeout.ms, heartbeat.interval.ms): reading
 * uncommitted transactions, partition-EOF events, and a static member id
 * that two control planes could share.
 */
#define SK_PAYMENTS_RESERVED "isolation.level", "enable.partition.eof", "group.instance.id"

/** A running consumer thread. Opaque. */
struct sk_payments;

/** Parameters of sk_payments_start(). */
struct sk_payments_conf {
	const char *bootstrap; /**< bootstrap servers, "host:port[,...]" */
	const char *topic;     /**< NULL = SK_PAYMENTS_TOPIC_DEFAULT */
	const char *group;     /**< consumer group id; NULL = sk_payments_group(member) */
	const char *member;    /**< cluster member id, or NULL (standalone) */
	/** --kafka-config's settings, or NULL; not owned, read by start only. */
	const struct sk_kafka_props *props;
	/** the keys that verify (required); must outlive the consumer */
	const struct sk_paysig_keys *keys;
	/** refuse messages signed longer ago (the request table's max age); 0 = no limit */
	int64_t max_age_ns;
};

/**
 * sk_payments_group - the consumer group of @p conf: conf->group if set,
 * else SK_PAYMENTS_GROUP_DEFAULT, or SK_PAYMENTS_GROUP_DEFAULT "-MEMBER"
 * for a cluster member (conf->member set), into @p buf.
 * @return @p buf. Pure; thread-safe. @p buf holds SK_PAYMENTS_GROUP_MAX
 *         bytes; a longer group (> 249 bytes: refused by sk_payments_start)
 *         is cut.
 */
const char *sk_payments_group(const struct sk_payments_conf *conf, char buf[SK_PAYMENTS_GROUP_MAX]);

/** What sk_payments_handle() made of one message. */
enum sk_payments_verdict {
	SK_PAYMENTS_APPLIED = 0,   /**< applied (or a repeat): commit its offset */
	SK_PAYMENTS_MALFORMED = 1, /**< could not be read: logged, counted; commit, skip */
};

/**
 * sk_payments_parse - read one message into @p p.
 * @param buf, len  the message value (need not be NUL-terminated)
 * @param p         [out] the payment; p->request points into @p req
 * @param req       [out] the request id, NUL-terminated
 * @param why       [out] on -EBADMSG, what is wrong (one line); may be NULL
 * @param whylen    bytes at @p why
 * @return 0, or -EBADMSG (not JSON, "v" not 1, a field missing, of the wrong
 *         type or out of range, a bad request id). Pure; thread-safe.
 */
int sk_payments_parse(const void *buf, size_t len, struct sk_control_payment *p,
		      char req[SK_STORE_REQUEST_MAX + 1], char *why, size_t whylen);

/**
 * sk_payments_handle - parse one message and apply it (sk_control_payment(),
 * waiting up to 100 ms for an order still queued). A malformed message is
 * logged (at most 100, then every 1000th) and counted
 * (sk_control_payment_malformed()).
 * @param out  [out] the outcome when applied; may be NULL
 * @return SK_PAYMENTS_APPLIED, SK_PAYMENTS_MALFORMED, or a negative errno
 *         of the store (nothing changed: retry the message). Any thread.
 */
int sk_payments_handle(struct sk_control *ctl, const void *buf, size_t len, int64_t now_ns,
		       struct sk_control_pm_result *out);

/**
 * sk_payments_start - create the consumer (group @p conf->group, manual
 * offset commits, from the earliest offset when the group has none),
 * subscribe to the topic and start its thread.
 * @param[out] out     the consumer; set only on success
 * @param[in]  ctl     the control plane; must outlive the consumer
 * @param[in]  conf    parameters (copied)
 * @param[out] err     a one-line description on error; may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0, -EINVAL (no keys, a librdkafka setting or the subscription
 *         refused), -ENOMEM, or -errno of pthread_create().
 */
int sk_payments_start(struct sk_payments **out, struct sk_control *ctl,
		      const struct sk_payments_conf *conf, char *err, size_t errlen);

/**
 * sk_payments_stop - stop the thread (a message being applied finishes, its
 * offset is committed), leave the group and free @p p. Waits at most for
 * one store retry (100 ms) plus librdkafka's close. NULL is ignored.
 */
void sk_payments_stop(struct sk_payments *p);

#endif /* SK_PAYMENTS_CONSUMER_H */
