/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kafka_produce.c - seckill-kafka produce: one message per KEY=VALUE, in
 * order, with the idempotent producer; exit 0 only when all were delivered.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_log.h"
#include "sk_paysig.h"

#include "kafka.h"

static const char usage_produce[] =
	"usage: seckill-kafka produce --bootstrap LIST --topic NAME [--partition P]\n"
	"                             [--timeout-ms T] [--sign-key-file PATH]\n"
	"                             [--kafka-config FILE] KEY=VALUE...\n"
	"\n"
	"Produce one message per KEY=VALUE argument, in order (idempotent producer,\n"
	"acks=all), split at the first '='; an empty KEY sends no key.\n"
	"\n"
	"  --bootstrap LIST   127.0.0.1:PORT[,127.0.0.1:PORT...]\n"
	"  --topic NAME       topic to write to\n"
	"  --partition P      partition to write to (default: by key)\n"
	"  --timeout-ms T     give up on undelivered messages after T ms\n"
	"                     (default 5000)\n"
	"  --sign-key-file PATH  sign each message (header sk-sig) with the first\n"
	"                     key of PATH, as the payment service signs\n"
	"                     seckill.payments (docs/kafka.md, \"Signatures\")\n"
	"  --kafka-config FILE  librdkafka properties (security.protocol, sasl.*,\n"
	"                     ssl.*); mode 600 if it holds a secret\n"
	"\n"
	"Exit 0 when every message was delivered, 1 otherwise.\n";

struct produce_opts {
	const char *bootstrap;
	const char *topic;
	long partition; /* RD_KAFKA_PARTITION_UA: by key */
	long timeout_ms;
	const char *sign_key_file;
	const char *kafka_config;
};

static const struct opt produce_opts_table[] = {
	STR_OPT("bootstrap", produce_opts, bootstrap),
	STR_OPT("topic", produce_opts, topic),
	LONG_OPT("partition", produce_opts, partition, 0, MAX_PARTITIONS - 1, NULL),
	LONG_OPT("timeout-ms", produce_opts, timeout_ms, 1, MAX_TIMEOUT_MS, NULL),
	STR_OPT("sign-key-file", produce_opts, sign_key_file),
	STR_OPT("kafka-config", produce_opts, kafka_config),
};

static const struct cmd produce_cmd = {"produce", usage_produce, true, produce_opts_table,
				       SK_ARRAY_SIZE(produce_opts_table)};

struct produce_state {
	int delivered;
	int failed;
};

/* delivery_cb - counts deliveries and names each failure. */
static void
delivery_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct produce_state *st = opaque;

	(void)rk;
	if (m->err) {
		st->failed++;
		sk_log(PROG, "message %d (key '%.*s') not delivered: %s",
		       (int)(intptr_t)m->_private + 1, m->key ? (int)m->key_len : 0,
		       m->key ? (const char *)m->key : "", rd_kafka_err2str(m->err));
	} else {
		st->delivered++;
	}
}

int
kafka_cmd_produce(int argc, char **argv)
{
	struct produce_opts o = {.partition = RD_KAFKA_PARTITION_UA, .timeout_ms = 5000};
	struct produce_state st = {0};
	rd_kafka_conf_t *conf;
	rd_kafka_t *rk;
	char tmo[32];
	const char *const conf_kv[] = {
		"enable.idempotence", "true", "message.timeout.ms", tmo, "linger.ms", "0", NULL,
	};
	int n, r, queued = 0;

	r = kafka_opts_parse(&produce_cmd, argc, argv, &o);
	if (r < 0)
		r = kafka_client_check(&produce_cmd, o.bootstrap, o.topic);
	if (r >= 0)
		return r;
	n = argc - optind;
	if (n < 1 || n > MAX_MESSAGES) {
		sk_log(PROG, "produce: want 1..%d KEY=VALUE arguments, got %d", MAX_MESSAGES, n);
		return EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		if (!strchr(argv[i], '=')) {
			sk_log(PROG, "produce: '%s' is not KEY=VALUE", argv[i]);
			return EXIT_USAGE;
		}
	}

	struct sk_paysig_keys *keys = NULL;
	char sig[SK_PAYSIG_HDR_MAX + 1], kerr[320];
	if (o.sign_key_file != NULL &&
	    sk_paysig_keys_load(o.sign_key_file, &keys, kerr, sizeof(kerr)) != 0) {
		sk_log(PROG, "--sign-key-file: %s", kerr);
		return EXIT_USAGE;
	}

	snprintf(tmo, sizeof(tmo), "%ld", o.timeout_ms);
	conf = rd_kafka_conf_new();
	rd_kafka_conf_set_dr_msg_cb(conf, delivery_cb);
	rd_kafka_conf_set_opaque(conf, &st);
	rk = kafka_client_new(RD_KAFKA_PRODUCER, conf, o.bootstrap, PROG "-produce", conf_kv,
			      o.kafka_config);
	if (!rk) {
		sk_paysig_keys_free(keys);
		return EXIT_FAILURE;
	}

	for (int i = 0; i < n; i++) {
		const char *kv = argv[optind + i];
		const char *eq = strchr(kv, '=');
		size_t klen = (size_t)(eq - kv);
		rd_kafka_headers_t *hdrs = NULL;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		if (keys != NULL) {
			int sl = sk_paysig_sign(keys, o.topic,
						(int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
						eq + 1, strlen(eq + 1), sig);
			if (sl < 0) {
				sk_log(PROG, "message %d: too long to sign (%d bytes at most)",
				       i + 1, SK_PAYSIG_VALUE_MAX);
				st.failed++;
				break;
			}
			hdrs = rd_kafka_headers_new(1);
			rd_kafka_header_add(hdrs, SK_PAYSIG_HEADER, -1, sig, sl);
		}
		rd_kafka_resp_err_t err = rd_kafka_producev(
			rk, RD_KAFKA_V_TOPIC(o.topic), RD_KAFKA_V_PARTITION((int32_t)o.partition),
			RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
			RD_KAFKA_V_KEY(klen ? kv : NULL, klen),
			RD_KAFKA_V_VALUE((void *)(eq + 1), strlen(eq + 1)),
			RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE((void *)(intptr_t)i),
			RD_KAFKA_V_END);
		if (err && hdrs != NULL)
			rd_kafka_headers_destroy(hdrs); /* kept by librdkafka only on success */

		if (err) {
			sk_log(PROG, "message %d: %s", i + 1, rd_kafka_err2str(err));
			st.failed++;
			break;
		}
		queued++;
		rd_kafka_poll(rk, 0);
	}

	/* message.timeout.ms bounds every message; the margin covers the
	 * delivery reports. */
	if (rd_kafka_flush(rk, (int)o.timeout_ms + 2000) == RD_KAFKA_RESP_ERR__TIMED_OUT) {
		sk_log(PROG, "%d message(s) still undelivered after %ld ms, giving up",
		       rd_kafka_outq_len(rk), o.timeout_ms + 2000);
		rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		rd_kafka_flush(rk, 1000);
	}
	fprintf(stderr, "produced %d of %d messages to %s\n", st.delivered, n, o.topic);
	kafka_client_destroy(rk);
	sk_paysig_keys_free(keys);
	return st.delivered == n && queued == n ? EXIT_SUCCESS : EXIT_FAILURE;
}
