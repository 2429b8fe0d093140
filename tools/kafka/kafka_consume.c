/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kafka_consume.c - seckill-kafka consume: every partition of a topic, no
 * consumer group, printed as KEY<TAB>VALUE or as one JSON array.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sk_log.h"

#include "kafka.h"

static const char usage_consume[] =
	"usage: seckill-kafka consume --bootstrap LIST --topic NAME [--from-beginning]\n"
	"                             [--max N] [--timeout-ms T] [--max-seconds S]\n"
	"                             [--json] [--kafka-config FILE]\n"
	"\n"
	"Read every partition of a topic (no consumer group, nothing committed) and\n"
	"print each message as KEY<TAB>VALUE on one line; bytes below 0x20 and 0x7f\n"
	"are written as \\xNN, a missing key or value as nothing.\n"
	"\n"
	"  --bootstrap LIST   127.0.0.1:PORT[,127.0.0.1:PORT...]\n"
	"  --topic NAME       topic to read\n"
	"  --from-beginning   start at each partition's first message (default:\n"
	"                     at its end, i.e. only messages produced from now on)\n"
	"  --max N            stop after N messages (default: no limit)\n"
	"  --timeout-ms T     stop when no message arrived for T ms; also the time\n"
	"                     allowed to reach the cluster (default 2000)\n"
	"  --max-seconds S    stop after S seconds in any case (default 300)\n"
	"  --json             print one JSON array of {\"partition\", \"offset\",\n"
	"                     \"key\", \"value\"} instead (key, value: strings, or\n"
	"                     null; bytes that are not UTF-8 go to \"key_hex\",\n"
	"                     \"value_hex\")\n"
	"  --kafka-config FILE  librdkafka properties (security.protocol, sasl.*,\n"
	"                     ssl.*); mode 600 if it holds a secret\n"
	"\n"
	"Prints 'consumed N messages from TOPIC' on stderr at the end. Exit 0 when\n"
	"it ran (even with no message), 1 when the cluster cannot be reached in\n"
	"time or the topic does not exist.\n";

struct consume_opts {
	const char *bootstrap;
	const char *topic;
	bool from_beginning;
	bool json;
	long max;	  /* 0: no limit */
	long timeout_ms;  /* idle limit, and the limit to reach the cluster */
	long max_seconds; /* overall limit */
	const char *kafka_config;
};

static const struct opt consume_opts_table[] = {
	STR_OPT("bootstrap", consume_opts, bootstrap),
	STR_OPT("topic", consume_opts, topic),
	FLAG_OPT("from-beginning", consume_opts, from_beginning),
	LONG_OPT("max", consume_opts, max, 1, LONG_MAX, "a count >= 1"),
	LONG_OPT("timeout-ms", consume_opts, timeout_ms, 1, MAX_TIMEOUT_MS, NULL),
	LONG_OPT("max-seconds", consume_opts, max_seconds, 1, MAX_WAIT_S, NULL),
	FLAG_OPT("json", consume_opts, json),
	STR_OPT("kafka-config", consume_opts, kafka_config),
};

static const struct cmd consume_cmd = {"consume", usage_consume, false, consume_opts_table,
				       SK_ARRAY_SIZE(consume_opts_table)};

/* print_escaped - @p[0..@n) with control bytes as \xNN. */
static void
print_escaped(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			printf("\\x%02x", p[i]);
		else
			putchar(p[i]);
	}
}

/*
 * json_bytes - sets @name on @obj to @p[0..@n) as a string, null when @p is
 * NULL, or @name_hex as hex when the bytes are not UTF-8. 0 or -1 (no memory).
 */
static int
json_bytes(json_t *obj, const char *name, const char *name_hex, const void *p, size_t n)
{
	json_t *s;
	char *hex;

	if (!p)
		return json_object_set_new(obj, name, json_null());
	s = json_stringn(p, n);
	if (s)
		return json_object_set_new(obj, name, s);
	if (n > (SIZE_MAX - 1) / 2)
		return -1;
	hex = malloc(2 * n + 1);
	if (!hex)
		return -1;
	for (size_t i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", ((const unsigned char *)p)[i]);
	s = json_stringn(hex, 2 * n);
	free(hex);
	if (json_object_set_new(obj, name, json_null()) || !s)
		return -1;
	return json_object_set_new(obj, name_hex, s);
}

/* consume_emit - prints @m (text mode) or appends it to @arr (--json). */
static int
consume_emit(const struct consume_opts *o, json_t *arr, const rd_kafka_message_t *m)
{
	json_t *obj;

	if (!o->json) {
		if (m->key)
			print_escaped(m->key, m->key_len);
		putchar('\t');
		if (m->payload)
			print_escaped(m->payload, m->len);
		putchar('\n');
		return 0;
	}
	obj = json_object();
	if (!obj || json_object_set_new(obj, "partition", json_integer(m->partition)) ||
	    json_object_set_new(obj, "offset", json_integer(m->offset)) ||
	    json_bytes(obj, "key", "key_hex", m->key, m->key_len) ||
	    json_bytes(obj, "value", "value_hex", m->payload, m->len) ||
	    json_array_append_new(arr, obj)) {
		sk_log(PROG, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * topic_partitions - the partition count of @topic from a full metadata
 * request (which never auto-creates it), or -1 (reported).
 */
static int
topic_partitions(rd_kafka_t *rk, const struct consume_opts *o)
{
	const struct rd_kafka_metadata *md;
	rd_kafka_resp_err_t err;
	int n = -1;

	err = rd_kafka_metadata(rk, 1, NULL, &md, (int)o->timeout_ms);
	if (err) {
		sk_log(PROG, "cannot reach %s within %ld ms: %s", o->bootstrap, o->timeout_ms,
		       rd_kafka_err2str(err));
		return -1;
	}
	for (int i = 0; i < md->topic_cnt; i++) {
		if (strcmp(md->topics[i].topic, o->topic))
			continue;
		if (md->topics[i].err)
			sk_log(PROG, "topic %s: %s", o->topic, rd_kafka_err2str(md->topics[i].err));
		else if (md->topics[i].partition_cnt < 1)
			sk_log(PROG, "topic %s has no partitions", o->topic);
		else
			n = md->topics[i].partition_cnt;
		break;
	}
	if (n < 0 && !md->topic_cnt)
		sk_log(PROG, "unknown topic %s (the cluster has no topics)", o->topic);
	else if (n < 0)
		sk_log(PROG, "unknown topic %s", o->topic);
	rd_kafka_metadata_destroy(md);
	return n;
}

int
kafka_cmd_consume(int argc, char **argv)
{
	static const char *const conf_kv[] = {"enable.partition.eof", "false", NULL};
	struct consume_opts o = {.timeout_ms = 2000, .max_seconds = 300};
	rd_kafka_topic_t *rkt = NULL;
	rd_kafka_queue_t *q = NULL;
	rd_kafka_t *rk;
	json_t *arr = NULL;
	int rc = EXIT_FAILURE, r, parts, started = 0;
	long count = 0;
	int64_t end, idle_end;

	r = kafka_opts_parse(&consume_cmd, argc, argv, &o);
	if (r < 0)
		r = kafka_client_check(&consume_cmd, o.bootstrap, o.topic);
	if (r >= 0)
		return r;

	rk = kafka_client_new(RD_KAFKA_CONSUMER, rd_kafka_conf_new(), o.bootstrap, PROG "-consume",
			      conf_kv, o.kafka_config);
	if (!rk)
		return EXIT_FAILURE;
	if (o.json && !(arr = json_array())) {
		sk_log(PROG, "out of memory");
		goto out;
	}
	parts = topic_partitions(rk, &o);
	if (parts < 0)
		goto out;

	rkt = rd_kafka_topic_new(rk, o.topic, NULL);
	q = rd_kafka_queue_new(rk);
	if (!rkt || !q) {
		sk_log(PROG, "topic %s: %s", o.topic, rd_kafka_err2str(rd_kafka_last_error()));
		goto out;
	}
	for (; started < parts; started++) {
		if (rd_kafka_consume_start_queue(rkt, started,
						 o.from_beginning ? RD_KAFKA_OFFSET_BEGINNING
								  : RD_KAFKA_OFFSET_END,
						 q) == -1) {
			sk_log(PROG, "topic %s partition %d: %s", o.topic, started,
			       rd_kafka_err2str(rd_kafka_last_error()));
			goto out;
		}
	}

	end = now_ms() + o.max_seconds * 1000;
	idle_end = now_ms() + o.timeout_ms;
	while (!o.max || count < o.max) {
		int64_t now = now_ms(), wait = (idle_end < end ? idle_end : end) - now;
		rd_kafka_message_t *m;

		if (wait <= 0)
			break;
		m = rd_kafka_consume_queue(q, wait < 100 ? (int)wait : 100);
		if (!m)
			continue;
		if (m->err) {
			if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
				sk_log(PROG, "topic %s partition %d: %s", o.topic,
				       (int)m->partition, rd_kafka_message_errstr(m));
			rd_kafka_message_destroy(m);
			continue;
		}
		r = consume_emit(&o, arr, m);
		rd_kafka_message_destroy(m);
		if (r)
			goto out;
		count++;
		idle_end = now_ms() + o.timeout_ms;
	}
	if (o.json) {
		if (json_dumpf(arr, stdout, JSON_COMPACT) || putchar('\n') == EOF)
			goto out;
	}
	if (fflush(stdout)) {
		sk_log(PROG, "stdout: %s", strerror(errno));
		goto out;
	}
	fprintf(stderr, "consumed %ld messages from %s\n", count, o.topic);
	rc = EXIT_SUCCESS;
out:
	while (started > 0)
		rd_kafka_consume_stop(rkt, --started);
	if (q)
		rd_kafka_queue_destroy(q);
	if (rkt)
		rd_kafka_topic_destroy(rkt);
	json_decref(arr);
	kafka_client_destroy(rk);
	return rc;
}
