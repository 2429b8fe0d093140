/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Export of the order store's event log to Kafka: how each order leaves the
 * appliance for the rest of the shop (design §6, docs/kafka.md).
 *
 * The store's event log (sk_store_events_foreach()) is append-only in commit
 * order. The exporter produces each event with librdkafka's idempotent
 * producer - a confirmed order to the orders topic with every line, every
 * other event (paid, cancelled, failed, restocked, activity, closed) to the
 * events topic - keyed by the order id (decimal text; "item:<id>" for
 * activity events), so one order's events land on one partition in order.
 * Values are one-line JSON objects with a version field "v".
 *
 * A cursor in the store (SK_EXPORT_CURSOR) holds the last event of a
 * contiguous run that Kafka acknowledged; it only moves on delivery reports.
 * A crash or a broker outage therefore only delays the export: the next
 * exporter starts after the cursor and produces again what was in flight,
 * so delivery is at least once and in order per key; consumers drop
 * duplicates by (key, "seq"). Messages never expire in the producer
 * (message.timeout.ms = 0): while the broker is away the backlog waits.
 *
 * Thread-safety: one thread drives an exporter (poll, flush, close);
 * sk_export_stats() may be called from any thread. The store is shared
 * (sk_store.h's rules).
 */
#ifndef SK_EXPORT_H
#define SK_EXPORT_H

#include <stdint.h>

#include "sk_kafka_conf.h"
#include "sk_store.h"

/** The store cursor of the exporter: last event delivered (0: none). */
#define SK_EXPORT_CURSOR "kafka.export"
/** Default topics. */
#define SK_EXPORT_ORDERS_TOPIC "seckill.orders"
#define SK_EXPORT_EVENTS_TOPIC "seckill.events"
/** Version of the JSON values ("v"). */
#define SK_EXPORT_VERSION 1
/** Default most events produced and not yet acknowledged. */
#define SK_EXPORT_WINDOW_DEFAULT 65536
/** Size of an error-message buffer that never truncates. */
#define SK_EXPORT_ERR_MAX 512

/** Parameters of sk_export_open(). */
struct sk_export_conf {
	const char *bootstrap;	  /**< bootstrap.servers, required ("127.0.0.1:9092") */
	const char *orders_topic; /**< NULL: SK_EXPORT_ORDERS_TOPIC */
	const char *events_topic; /**< NULL: SK_EXPORT_EVENTS_TOPIC */
	uint32_t window;	  /**< in-flight events, power of two; 0: default */
	int64_t cursor_every_ns;  /**< least time between two cursor writes; 0: 1 s */
	/**
	 * librdkafka settings of --kafka-config (security.protocol, sasl.*,
	 * ssl.*), or NULL; not owned, must outlive the exporter (a producer
	 * replaced after a fatal error takes them again). Refused in it:
	 * SK_EXPORT_RESERVED and the keys the exporter sets itself.
	 */
	const struct sk_kafka_props *props;
};

/**
 * The producer settings the exporter relies on without setting them, and
 * so refuses from --kafka-config (besides those it sets: client.id,
 * enable.idempotence, message.timeout.ms, linger.ms,
 * queue.buffering.max.messages): the idempotent producer's acks, retries,
 * in-flight requests and ordering, and a partitioner that keeps one key on
 * one partition.
 */
#define SK_EXPORT_RESERVED                                                                         \
	"acks", "max.in.flight", "retries", "enable.gapless.guarantee", "transactional.id",        \
		"partitioner"

/** An exporter. Opaque. */
struct sk_export;

/** Counters since sk_export_open(); read atomically one by one. */
struct sk_export_stats {
	uint64_t produced;  /**< events handed to the producer (re-productions included) */
	uint64_t delivered; /**< delivery reports without error */
	uint64_t failed;    /**< delivery reports with an error (the events are produced again) */
	uint64_t rewinds;   /**< times production restarted from the cursor */
	uint64_t cursor;    /**< last event of the delivered run (as saved or about to be) */
	uint64_t saved;	    /**< the cursor as last written to the store */
	uint64_t last_seq;  /**< last event seen in the log */
};

/**
 * sk_export_open - create the producer and read the cursor.
 * @param[out] out     the exporter; set only on success
 * @param[in]  st      the order store (shared; must outlive the exporter)
 * @param[in]  conf    parameters
 * @param[out] err     a one-line description on error; may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0, -EINVAL (no bootstrap, window not a power of two, a bad
 *         setting refused by librdkafka), -ENOMEM, or an error of the store
 *         reading the cursor.
 */
int sk_export_open(struct sk_export **out, struct sk_store *st, const struct sk_export_conf *conf,
		   char *err, size_t errlen);

/**
 * sk_export_poll - one step: serve the producer's delivery reports, move the
 * cursor over what was delivered (writing it to the store at most every
 * cursor_every_ns), then produce up to @p max new events of the log while
 * the window has room. Never blocks on the network.
 * @param ex      the exporter
 * @param now_ns  a monotonic clock, for the cursor writes' pacing
 * @param max     most events produced by this call
 * A producer that hit a fatal error is replaced here (the events from the
 * cursor on are produced again).
 * @return events produced (>= 0), or a negative errno of the store (-EIO
 *         ...) or of a replacement producer (-EINVAL, -ENOMEM); the next
 *         call retries.
 */
int sk_export_poll(struct sk_export *ex, int64_t now_ns, unsigned max);

/**
 * sk_export_flush - wait up to @p timeout_ms for every event in flight to
 * be acknowledged, and write the cursor.
 * @return 0 when nothing is in flight any more, -ETIMEDOUT if some still
 *         is (the cursor is written as far as delivered), or an error of
 *         the store.
 */
int sk_export_flush(struct sk_export *ex, int timeout_ms);

/**
 * sk_export_close - flush (up to @p timeout_ms), destroy the producer, free
 * @p ex. What was not delivered is produced again by the next exporter.
 * @param ex  the exporter, or NULL
 */
void sk_export_close(struct sk_export *ex, int timeout_ms);

/** sk_export_stats - a snapshot of the counters. Any thread. */
void sk_export_stats(const struct sk_export *ex, struct sk_export_stats *out);

#endif /* SK_EXPORT_H */
