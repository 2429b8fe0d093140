/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_kafka.c - the consumer of seckill-mysql-writer (librdkafka, consumer
 * group, manual offset store and commit).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_logfmt.h"

#include "mw_kafka.h"

struct mw_kafka {
	rd_kafka_t *rk;
	struct mw_metrics *mt;
	const char *prog;
	time_t last_err_log; /* rate limit of the error lines */
	unsigned errs_quiet; /* errors not logged since */
};

/*
 * rebalance - the group's (eager) assignment: take it, or drop it on a
 * revoke. Runs inside rd_kafka_consumer_poll(), so between two batches:
 * whatever a batch applied is committed before its partitions can move.
 * The count is a gauge and a log line, so that an operator running N
 * writers sees who owns what.
 */
static void
rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *parts,
	  void *opaque)
{
	struct mw_kafka *k = opaque;
	bool assign = err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS;
	rd_kafka_resp_err_t rc = rd_kafka_assign(rk, assign ? parts : NULL);

	if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
		sk_logf(SK_LOG_WARN, "kafka", "op=%s partitions=%d err=%s",
			assign ? "assign" : "revoke", parts->cnt, rd_kafka_err2str(rc));
		mw_metrics_add(k->mt, MW_M_KAFKA_ERRORS, 1);
	}
	mw_metrics_set(k->mt, MW_M_PARTITIONS, assign && rc == 0 ? (uint64_t)parts->cnt : 0);
	sk_logf(SK_LOG_INFO, "kafka", "msg=%s partitions=%d", assign ? "assigned" : "revoked",
		parts->cnt);
}

int
mw_kafka_open(struct mw_kafka **out, const struct mw_kafka_conf *conf, struct mw_metrics *mt,
	      char *err, size_t errlen)
{
	static const char *const reserved[] = {MW_KAFKA_RESERVED, NULL};
	const struct sk_kafka_kv kv[] = {
		{"bootstrap.servers", conf->bootstrap},
		{"group.id", conf->group},
		{"client.id", "seckill-mysql-writer"},
		{"enable.auto.commit", "false"},
		{"enable.auto.offset.store", "false"},
		{"auto.offset.reset", "earliest"},
		/* a writer killed -9 leaves the group 10 s later: its
		 * partitions go to the others (or to itself, restarted) */
		{"session.timeout.ms", "10000"},
		{"heartbeat.interval.ms", "1000"},
	};
	struct mw_kafka *k = calloc(1, sizeof(*k));
	rd_kafka_topic_partition_list_t *topics = NULL;
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	char e[SK_KAFKA_CONF_ERR_MAX];
	rd_kafka_resp_err_t rc;

	if (k == NULL || c == NULL) {
		free(k);
		if (c != NULL)
			rd_kafka_conf_destroy(c);
		return -ENOMEM;
	}
	sk_logfmt_kafka(c);
	if (sk_kafka_conf_build(c, kv, sizeof(kv) / sizeof(kv[0]), reserved, conf->props, e,
				sizeof(e)) != 0) {
		snprintf(err, errlen, "kafka: %s", e);
		goto fail;
	}
	k->mt = mt;
	k->prog = conf->prog;
	rd_kafka_conf_set_opaque(c, k);
	rd_kafka_conf_set_rebalance_cb(c, rebalance);
	k->rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, e, sizeof(e));
	if (k->rk == NULL) {
		snprintf(err, errlen, "kafka: cannot create the consumer: %s", e);
		goto fail;
	}
	c = NULL; /* owned by k->rk now */
	rd_kafka_poll_set_consumer(k->rk);
	topics = rd_kafka_topic_partition_list_new(2);
	rd_kafka_topic_partition_list_add(topics, conf->orders_topic, RD_KAFKA_PARTITION_UA);
	rd_kafka_topic_partition_list_add(topics, conf->events_topic, RD_KAFKA_PARTITION_UA);
	rc = rd_kafka_subscribe(k->rk, topics);
	rd_kafka_topic_partition_list_destroy(topics);
	if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
		snprintf(err, errlen, "kafka: subscribe to %s, %s: %s", conf->orders_topic,
			 conf->events_topic, rd_kafka_err2str(rc));
		goto fail;
	}
	*out = k;
	return 0;
fail:
	if (c != NULL)
		rd_kafka_conf_destroy(c);
	if (k->rk != NULL)
		rd_kafka_destroy(k->rk);
	free(k);
	return -EINVAL;
}

/* consumer_error - log (rate-limited) and count an error of the consumer. */
static void
consumer_error(struct mw_kafka *k, const rd_kafka_message_t *m)
{
	time_t now = time(NULL);

	mw_metrics_add(k->mt, MW_M_KAFKA_ERRORS, 1);
	if (now - k->last_err_log < 10) {
		k->errs_quiet++;
		return;
	}
	sk_logf(SK_LOG_WARN, "kafka", "err=%s errors_since=%u", rd_kafka_message_errstr(m),
		k->errs_quiet);
	k->last_err_log = now;
	k->errs_quiet = 0;
}

size_t
mw_kafka_poll(struct mw_kafka *k, rd_kafka_message_t **msgs, size_t max, int timeout_ms)
{
	size_t n = 0;

	while (n < max) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(k->rk, n == 0 ? timeout_ms : 5);

		if (m == NULL)
			break;
		if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
			if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
				consumer_error(k, m);
			rd_kafka_message_destroy(m);
			if (n == 0)
				break;
			continue;
		}
		msgs[n++] = m;
	}
	return n;
}

int
mw_kafka_commit(struct mw_kafka *k, rd_kafka_message_t **msgs, size_t n)
{
	rd_kafka_resp_err_t rc;

	for (size_t i = 0; i < n; i++) {
		rc = rd_kafka_offset_store(msgs[i]->rkt, msgs[i]->partition, msgs[i]->offset);
		/* a partition revoked meanwhile: its new owner applies it again */
		if (rc != RD_KAFKA_RESP_ERR_NO_ERROR && rc != RD_KAFKA_RESP_ERR__STATE)
			sk_logf(SK_LOG_WARN, "kafka", "msg=\"store offset failed\" err=%s",
				rd_kafka_err2str(rc));
	}
	rc = rd_kafka_commit(k->rk, NULL, 0);
	if (rc == RD_KAFKA_RESP_ERR_NO_ERROR || rc == RD_KAFKA_RESP_ERR__NO_OFFSET)
		return 0;
	mw_metrics_add(k->mt, MW_M_COMMIT_ERRORS, 1);
	sk_logf(SK_LOG_WARN, "kafka",
		"msg=\"offset commit failed: committed with the next batch\" err=%s",
		rd_kafka_err2str(rc));
	return -EAGAIN;
}

bool
mw_kafka_caught_up(struct mw_kafka *k, int timeout_ms)
{
	rd_kafka_topic_partition_list_t *a = NULL, *c = NULL;
	bool up;

	if (rd_kafka_assignment(k->rk, &a) != RD_KAFKA_RESP_ERR_NO_ERROR || a == NULL)
		return false;
	up = a->cnt > 0 && rd_kafka_position(k->rk, a) == RD_KAFKA_RESP_ERR_NO_ERROR;
	c = rd_kafka_topic_partition_list_copy(a);
	if (up && rd_kafka_committed(k->rk, c, timeout_ms) != RD_KAFKA_RESP_ERR_NO_ERROR)
		up = false;
	for (int i = 0; up && i < a->cnt; i++) {
		int64_t lo, hi, pos = a->elems[i].offset;

		if (rd_kafka_query_watermark_offsets(k->rk, a->elems[i].topic,
						     a->elems[i].partition, &lo, &hi,
						     timeout_ms) != 0) {
			up = false;
			break;
		}
		if (pos < 0) /* nothing consumed here in this run */
			pos = c->elems[i].offset >= 0 ? c->elems[i].offset : lo;
		up = pos >= hi;
	}
	rd_kafka_topic_partition_list_destroy(c);
	rd_kafka_topic_partition_list_destroy(a);
	return up;
}

void
mw_kafka_close(struct mw_kafka *k)
{
	if (k == NULL)
		return;
	rd_kafka_consumer_close(k->rk);
	rd_kafka_destroy(k->rk);
	free(k);
}
