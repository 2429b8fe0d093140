/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_logfmt_kafka.c - librdkafka's log lines re-emitted as logfmt lines
 * (sk_logfmt_kafka() in sk_logfmt.h): its log callback, instead of its own
 * "%7|1700000000.123|FAC|name| text" lines on stderr.
 */
#include <librdkafka/rdkafka.h>

#include "sk_logfmt.h"

/* kafka_log - librdkafka's log_cb: one "event=kafka" line at the level of its syslog level */
static void
kafka_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	sk_logf(sk_logfmt_from_syslog(level), "kafka", "client=%s facility=%s msg=%s",
		rk != NULL ? rd_kafka_name(rk) : "", fac, buf);
}

void
sk_logfmt_kafka(struct rd_kafka_conf_s *conf)
{
	rd_kafka_conf_set_log_cb(conf, kafka_log);
}
