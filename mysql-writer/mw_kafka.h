/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_kafka.h - seckill-mysql-writer's Kafka side: one librdkafka consumer
 * in a consumer group, subscribed to the orders and events topics, offsets
 * committed by hand (enable.auto.commit=false, enable.auto.offset.store=
 * false) only for messages whose transaction committed.
 *
 * Thread-safety: a struct mw_kafka belongs to one thread.
 */
#ifndef MW_KAFKA_H
#define MW_KAFKA_H

#include <stdbool.h>
#include <stddef.h>

#include <librdkafka/rdkafka.h>

#include "mw_metrics.h"
#include "sk_kafka_conf.h"

/** Consumer parameters. Strings are borrowed for mw_kafka_open() only. */
struct mw_kafka_conf {
	const char *bootstrap;	  /**< bootstrap.servers */
	const char *group;	  /**< group.id */
	const char *orders_topic; /**< seckill.orders */
	const char *events_topic; /**< seckill.events */
	const char *prog;	  /**< name in log lines (kept) */
	/** --kafka-config's settings, or NULL; read by mw_kafka_open() only. */
	const struct sk_kafka_props *props;
};

/**
 * The consumer settings the writer relies on without setting them, refused
 * from --kafka-config (besides those it sets: bootstrap.servers, group.id,
 * client.id, enable.auto.commit, enable.auto.offset.store,
 * auto.offset.reset, session.timeout.ms, heartbeat.interval.ms): reading
 * uncommitted transactions and partition-EOF events.
 */
#define MW_KAFKA_RESERVED "isolation.level", "enable.partition.eof"

/** A consumer. Opaque. */
struct mw_kafka;

/**
 * mw_kafka_open - create the consumer and subscribe to both topics. A new
 * group starts at the earliest offsets (auto.offset.reset=earliest).
 * @param out  [out] the consumer; set only on success
 * @param mt   where consumer errors are counted; borrowed
 * @return 0, or -EINVAL (a bad parameter: @p err says which) / -ENOMEM.
 */
int mw_kafka_open(struct mw_kafka **out, const struct mw_kafka_conf *conf, struct mw_metrics *mt,
		  char *err, size_t errlen);

/**
 * mw_kafka_poll - up to @p max messages: waits up to @p timeout_ms for the
 * first, then takes what arrives within 5 ms of the previous one. Errors
 * the consumer reports (a broker down ...) are logged at most every 10 s,
 * counted and dropped, never returned.
 * @param msgs  [out] the messages, in arrival order (per partition: in
 *              offset order); the caller owns them and frees each with
 *              rd_kafka_message_destroy()
 * @return the number of messages, 0 if none.
 */
size_t mw_kafka_poll(struct mw_kafka *k, rd_kafka_message_t **msgs, size_t max, int timeout_ms);

/**
 * mw_kafka_commit - mark @p n messages consumed and commit the offsets of
 * the group synchronously. Call only once their transaction committed. A
 * commit that fails (broker away) is logged and counted; the offsets stay
 * stored and the next call commits them too.
 * @return 0 or a negative errno (-EAGAIN: the commit failed).
 */
int mw_kafka_commit(struct mw_kafka *k, rd_kafka_message_t **msgs, size_t n);

/**
 * mw_kafka_caught_up - whether this consumer has consumed every message of
 * every partition assigned to it: its position (or, before its first
 * message there, the group's committed offset) is at the partition's high
 * watermark, asked from the broker (up to @p timeout_ms each).
 * @return true if so; false if not, with no partition assigned, or when a
 *         broker does not answer.
 */
bool mw_kafka_caught_up(struct mw_kafka *k, int timeout_ms);

/**
 * mw_kafka_close - leave the group (committing nothing more) and free the
 * consumer. NULL is ignored.
 */
void mw_kafka_close(struct mw_kafka *k);

#endif /* MW_KAFKA_H */
