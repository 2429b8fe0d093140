/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-control's command line (control_opts.h): the usage text and the
 * parser with its cross-option checks. Each refusal is one logfmt line
 * naming the option (docs/control.md, "seckill-control").
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_opts.h"
#include "sk_admin.h"
#include "sk_config.h"
#include "sk_exporter.h"
#include "sk_logfmt.h"
#include "sk_member.h"
#include "sk_parse.h"
#include "sk_payments_consumer.h"

#define S INT64_C(1000000000)

void
control_usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [EAL options] -- [--config FILE] --store DIR [options]\n"
		"\n"
		"  --config FILE           read the options from FILE's [store], [control],\n"
		"                          [admin], [kafka] and [cluster] (seckill.ini; the\n"
		"                          options given here override it)\n"
		"  --store DIR             LMDB order store directory (created if missing;\n"
		"                          store.path in FILE)\n"
		"  --payment-timeout S     seconds an order may stay unpaid (default 900; 0 = "
		"none)\n"
		"  --admin-socket PATH     admin API on this unix socket, mode 0600 (default\n"
		"                          " SK_ADMIN_SOCKET_DEFAULT "; none = no socket)\n"
		"  --admin-port N          admin API on 127.0.0.1:N too, e.g. %d (default 0 =\n"
		"                          none); needs --admin-token-file\n"
		"  --admin-token-file PATH the bearer token every TCP request must carry\n"
		"                          (mode 0600; /healthz, /metrics, /dashboard open)\n"
		"  --batch-us N            longest wait for a group commit to fill (default 1000)\n"
		"  --batch-max N           most order records per group commit (default %d)\n"
		"  --store-map-mb N        LMDB map size in MiB (default 1024)\n"
		"  --store-nosync          no fsync per commit (tests only: not power-loss safe)\n"
		"  --map-grow-at PCT       grow the map online once PCT %% of it is used\n"
		"                          (1..99, default 80)\n"
		"  --map-grow-step-mb N    MiB a grow adds (default 0: double the map)\n"
		"  --map-max-mb N          the largest the map grows to (default 0: no cap but\n"
		"                          the free space of the store's file system)\n"
		"  --kafka SERVERS         export the event log to Kafka (bootstrap servers)\n"
		"  --kafka-orders-topic T  topic of confirmed orders "
		"(default " SK_EXPORT_ORDERS_TOPIC ")\n"
		"  --kafka-events-topic T  topic of the other events "
		"(default " SK_EXPORT_EVENTS_TOPIC ")\n"
		"  --kafka-payments-topic T  topic of payments and refunds consumed "
		"(default " SK_PAYMENTS_TOPIC_DEFAULT ")\n"
		"  --kafka-payments-group G  its consumer group (default " SK_PAYMENTS_GROUP_DEFAULT
		";\n"
		"                          a cluster member's: " SK_PAYMENTS_GROUP_DEFAULT "-ID)\n"
		"  --kafka-config FILE     librdkafka properties (security.protocol, sasl.*, "
		"ssl.*)\n"
		"                          of every Kafka client; mode 600 if it holds a secret\n"
		"  --payments-key-file PATH  keys that sign seckill.payments (required with\n"
		"                          --kafka; docs/kafka.md, \"Signatures\")\n"
		"  --kafka-payments-retention S  retention of that topic, seconds (default\n"
		"                          604800, Kafka's): at most the request table's age\n"
		"  --payment-requests-max-age S  how long a payment request id is remembered\n"
		"                          (default 604800)\n"
		"  --redis HOST:PORT|unix:PATH  be a cluster member: lease cluster sales' units\n"
		"                          from this Redis (docs/cluster.md)\n"
		"  --redis-password-file PATH  AUTH to Redis with the password in PATH\n"
		"                          (mode 600 or 400: refused if group/others may read)\n"
		"  --redis-user NAME       AUTH as this Redis ACL user (needs the file above)\n"
		"  --cluster-member ID     this member's id ([a-z0-9_-], 1..32 chars)\n"
		"  --cluster-members A,B   every member's id, this one included\n"
		"  --cluster-idle-ms N     give unsold units back after N ms without a sale\n"
		"                          (default 5000)\n"
		"  --log-level LEVEL       debug, info (default), notice, warn, error or crit:\n"
		"                          the lowest level of the log lines written "
		"(docs/logs.md)\n"
		"  --retention-keep-days N archive the orders of activities over for N days,\n"
		"                          once settled (default 0 = off; docs/control.md)\n"
		"  --help                  this text\n"
		"\n"
		"EAL options: at least --file-prefix of the dataplane; --proc-type=secondary is\n"
		"added when missing.\n",
		SK_ADMIN_PORT_DEFAULT, SK_CONTROL_BATCH_MAX_DEFAULT);
}

/*
 * pay_opts_check - the payments consumer's options: --kafka needs the key
 * file (an unsigned consumer is the hole the signatures close: there is no
 * way around it), and the request table must remember a request id at
 * least as long as the topic keeps its message, or a redelivery or replay
 * after the table forgot it would apply twice. 0, or -1 with why logged.
 */
static int
pay_opts_check(const struct opts *o)
{
	if (o->kafka != NULL && o->pay_key_file == NULL) {
		sk_logf(SK_LOG_ERROR, "usage",
			"msg=\"--kafka consumes seckill.payments and needs --payments-key-file "
			"PATH (docs/kafka.md, Signatures)\"");
		return -1;
	}
	if (o->kafka == NULL && o->pay_key_file != NULL) {
		sk_logf(SK_LOG_ERROR, "usage", "msg=\"--payments-key-file needs --kafka\"");
		return -1;
	}
	if (o->pay_requests_age_s < o->pay_retention_s) {
		sk_logf(SK_LOG_ERROR, "usage",
			"requests_max_age_s=%" PRId64 " retention_s=%" PRId64
			" msg=\"--payment-requests-max-age is shorter than "
			"--kafka-payments-retention: a payment redelivered after its request id "
			"was forgotten would apply twice; raise it to at least the retention\"",
			o->pay_requests_age_s, o->pay_retention_s);
		return -1;
	}
	return 0;
}

/* control_parse_opts - see control_opts.h. */
int
control_parse_opts(int argc, char **argv, struct opts *o)
{
	enum {
		O_STORE = 256,
		O_TIMEOUT,
		O_PORT,
		O_SOCKET,
		O_TOKEN,
		O_BATCH_US,
		O_BATCH_MAX,
		O_MAP,
		O_NOSYNC,
		O_KAFKA,
		O_KAFKA_ORDERS,
		O_KAFKA_EVENTS,
		O_KAFKA_PAYMENTS,
		O_KAFKA_GROUP,
		O_KAFKA_CONFIG,
		O_REDIS,
		O_REDIS_USER,
		O_REDIS_PASS,
		O_MEMBER,
		O_MEMBERS,
		O_IDLE,
		O_LOG_LEVEL,
		O_PAY_KEY,
		O_PAY_RETENTION,
		O_PAY_AGE,
		O_MAP_GROW_AT,
		O_MAP_STEP,
		O_MAP_MAX,
		O_KEEP_DAYS,
		O_HELP
	};
	static const struct option lo[] = {
		{"store", required_argument, NULL, O_STORE},
		{"payment-timeout", required_argument, NULL, O_TIMEOUT},
		{"admin-port", required_argument, NULL, O_PORT},
		{"admin-socket", required_argument, NULL, O_SOCKET},
		{"admin-token-file", required_argument, NULL, O_TOKEN},
		{"batch-us", required_argument, NULL, O_BATCH_US},
		{"batch-max", required_argument, NULL, O_BATCH_MAX},
		{"store-map-mb", required_argument, NULL, O_MAP},
		{"store-nosync", no_argument, NULL, O_NOSYNC},
		{"kafka", required_argument, NULL, O_KAFKA},
		{"kafka-orders-topic", required_argument, NULL, O_KAFKA_ORDERS},
		{"kafka-events-topic", required_argument, NULL, O_KAFKA_EVENTS},
		{"kafka-payments-topic", required_argument, NULL, O_KAFKA_PAYMENTS},
		{"kafka-payments-group", required_argument, NULL, O_KAFKA_GROUP},
		{"kafka-config", required_argument, NULL, O_KAFKA_CONFIG},
		{"redis", required_argument, NULL, O_REDIS},
		{"redis-user", required_argument, NULL, O_REDIS_USER},
		{"redis-password-file", required_argument, NULL, O_REDIS_PASS},
		{"cluster-member", required_argument, NULL, O_MEMBER},
		{"cluster-members", required_argument, NULL, O_MEMBERS},
		{"cluster-idle-ms", required_argument, NULL, O_IDLE},
		{"log-level", required_argument, NULL, O_LOG_LEVEL},
		{"payments-key-file", required_argument, NULL, O_PAY_KEY},
		{"kafka-payments-retention", required_argument, NULL, O_PAY_RETENTION},
		{"payment-requests-max-age", required_argument, NULL, O_PAY_AGE},
		{"map-grow-at", required_argument, NULL, O_MAP_GROW_AT},
		{"map-grow-step-mb", required_argument, NULL, O_MAP_STEP},
		{"map-max-mb", required_argument, NULL, O_MAP_MAX},
		{"retention-keep-days", required_argument, NULL, O_KEEP_DAYS},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	enum sk_log_level lv;
	int c;
	int64_t v = 0;

	/* The merged argv outlives the call (o's strings point into it): kept
	 * here too, so that it is reachable until exit, and freed by the next
	 * call. */
	static struct sk_config_argv *merged;
	char err[SK_CONFIG_ERR_MAX];

	*o = (struct opts){.pay_timeout_s = 900,
			   .admin_socket = SK_ADMIN_SOCKET_DEFAULT,
			   .batch_us = 1000,
			   .batch_max = SK_CONTROL_BATCH_MAX_DEFAULT,
			   .pay_retention_s = PAY_AGE_DEFAULT_S,
			   .pay_requests_age_s = PAY_AGE_DEFAULT_S};
	free(merged);
	if (sk_config_argv_merge(argc, argv, SK_CONFIG_CONTROL, &merged, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "config", "err=\"%s\"", err);
		return -1;
	}
	o->args = merged;
	argc = merged->argc;
	argv = merged->argv;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		const char *bad = NULL;

		switch (c) {
		case O_STORE:
			o->store = optarg;
			if (optarg[0] == '\0')
				bad = "--store";
			break;
		case O_TIMEOUT:
			if (sk_parse_i64(optarg, 0, INT64_MAX / S, &v))
				o->pay_timeout_s = v;
			else
				bad = "--payment-timeout";
			break;
		case O_PORT:
			if (sk_parse_i64(optarg, 0, 65535, &v))
				o->admin_port = (unsigned)v;
			else
				bad = "--admin-port";
			break;
		case O_SOCKET:
			o->admin_socket = strcmp(optarg, "none") == 0 ? NULL : optarg;
			if (optarg[0] == '\0')
				bad = "--admin-socket";
			break;
		case O_TOKEN:
			o->admin_token_file = optarg;
			if (optarg[0] == '\0')
				bad = "--admin-token-file";
			break;
		case O_BATCH_US:
			if (sk_parse_i64(optarg, 0, 1000000, &v))
				o->batch_us = v;
			else
				bad = "--batch-us";
			break;
		case O_BATCH_MAX:
			if (sk_parse_i64(optarg, 8, 1 << 24, &v))
				o->batch_max = (unsigned)v;
			else
				bad = "--batch-max";
			break;
		case O_MAP:
			if (sk_parse_i64(optarg, 1, INT64_C(1) << 24, &v))
				o->map_mb = (uint64_t)v;
			else
				bad = "--store-map-mb";
			break;
		case O_NOSYNC:
			o->nosync = true;
			break;
		case O_KAFKA:
			o->kafka = optarg;
			if (optarg[0] == '\0')
				bad = "--kafka";
			break;
		case O_KAFKA_ORDERS:
		case O_KAFKA_EVENTS:
			*(c == O_KAFKA_ORDERS ? &o->kafka_orders : &o->kafka_events) = optarg;
			if (optarg[0] == '\0' || strlen(optarg) > 249)
				bad = c == O_KAFKA_ORDERS ? "--kafka-orders-topic"
							  : "--kafka-events-topic";
			break;
		case O_KAFKA_CONFIG:
			o->kafka_config = optarg;
			if (optarg[0] == '\0')
				bad = "--kafka-config";
			break;
		case O_REDIS:
			o->redis = optarg;
			break;
		case O_REDIS_USER:
		case O_REDIS_PASS:
			*(c == O_REDIS_USER ? &o->redis_user : &o->redis_pass_file) = optarg;
			if (optarg[0] == '\0')
				bad = c == O_REDIS_USER ? "--redis-user" : "--redis-password-file";
			break;
		case O_MEMBER:
			o->member = optarg;
			if (!sk_cpool_member_valid(optarg))
				bad = "--cluster-member";
			break;
		case O_MEMBERS:
			o->members = optarg;
			break;
		case O_IDLE:
			if (sk_parse_i64(optarg, 100, INT64_C(1) << 40, &v))
				o->idle_ms = v;
			else
				bad = "--cluster-idle-ms";
			break;
		case O_KAFKA_PAYMENTS:
		case O_KAFKA_GROUP:
			*(c == O_KAFKA_PAYMENTS ? &o->kafka_payments : &o->kafka_group) = optarg;
			if (optarg[0] == '\0' || strlen(optarg) > 249)
				bad = c == O_KAFKA_PAYMENTS ? "--kafka-payments-topic"
							    : "--kafka-payments-group";
			break;
		case O_LOG_LEVEL:
			if (sk_logfmt_level_parse(optarg, &lv) == 0)
				sk_logfmt_set_level(lv);
			else
				bad = "--log-level";
			break;
		case O_PAY_KEY:
			o->pay_key_file = optarg;
			if (optarg[0] == '\0')
				bad = "--payments-key-file";
			break;
		case O_PAY_RETENTION:
		case O_PAY_AGE:
			if (!sk_parse_i64(optarg, 1, INT64_MAX / S, &v))
				bad = c == O_PAY_AGE ? "--payment-requests-max-age"
						     : "--kafka-payments-retention";
			*(c == O_PAY_AGE ? &o->pay_requests_age_s : &o->pay_retention_s) = v;
			break;
		/* The map grown online. */
		case O_MAP_GROW_AT:
			if (sk_parse_i64(optarg, 1, 99, &v))
				o->map_grow_at = (uint32_t)v;
			else
				bad = "--map-grow-at";
			break;
		case O_MAP_STEP:
		case O_MAP_MAX:
			if (!sk_parse_i64(optarg, 0, INT64_C(1) << 30, &v))
				bad = c == O_MAP_STEP ? "--map-grow-step-mb" : "--map-max-mb";
			*(c == O_MAP_STEP ? &o->map_step_mb : &o->map_max_mb) = (uint64_t)v;
			break;
		case O_KEEP_DAYS:
			if (sk_parse_i64(optarg, 0, 36500, &v))
				o->retention_keep_days = v;
			else
				bad = "--retention-keep-days";
			break;
		case O_HELP:
			control_usage(stdout);
			return 1;
		case ':':
			sk_logf(SK_LOG_ERROR, "usage",
				"option=%s msg=\"the option needs a value (see --help)\"",
				argv[optind - 1]);
			return -1;
		default:
			sk_logf(SK_LOG_ERROR, "usage",
				"option=%s msg=\"unknown option (EAL options go before --; see "
				"--help)\"",
				argv[optind - 1]);
			return -1;
		}
		if (bad != NULL) {
			sk_logf(SK_LOG_ERROR, "usage",
				"option=%s value=%s msg=\"bad value (see --help)\"", bad, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		sk_logf(SK_LOG_ERROR, "usage", "arg=%s msg=\"unexpected argument (see --help)\"",
			argv[optind]);
		return -1;
	}
	if (o->store == NULL) {
		sk_logf(SK_LOG_ERROR, "usage",
			"msg=\"--store DIR (or store.path of --config FILE) is required (see "
			"--help)\"");
		return -1;
	}
	if ((o->redis != NULL) != (o->member != NULL) ||
	    (o->redis != NULL) != (o->members != NULL)) {
		sk_logf(SK_LOG_ERROR, "usage",
			"msg=\"a cluster member needs --redis, --cluster-member and "
			"--cluster-members together (see --help)\"");
		return -1;
	}
	if ((o->redis_user != NULL || o->redis_pass_file != NULL) && o->redis == NULL) {
		sk_logf(SK_LOG_ERROR, "usage",
			"msg=\"--redis-user and --redis-password-file need --redis (see --help)\"");
		return -1;
	}
	if (o->redis_user != NULL && o->redis_pass_file == NULL) {
		sk_logf(SK_LOG_ERROR, "usage",
			"option=--redis-user msg=\"needs --redis-password-file (see --help)\"");
		return -1;
	}
	if (pay_opts_check(o) != 0)
		return -1;
	if (o->map_max_mb != 0 && o->map_max_mb < (o->map_mb != 0 ? o->map_mb : 1024)) {
		sk_logf(SK_LOG_ERROR, "usage",
			"option=--map-max-mb msg=\"below the map's starting size (--store-map-mb, "
			"default 1024)\"");
		return -1;
	}
	if (o->admin_port != 0 && o->admin_token_file == NULL) {
		sk_logf(SK_LOG_ERROR, "usage",
			"option=--admin-port msg=\"TCP needs --admin-token-file PATH: the bearer "
			"token its clients send (see --help)\"");
		return -1;
	}
	if (o->admin_port == 0 && o->admin_token_file != NULL)
		sk_logf(SK_LOG_NOTICE, "config",
			"option=--admin-token-file msg=\"no TCP listener (--admin-port): the "
			"token is not used\"");
	if (o->kafka_config != NULL && o->kafka == NULL) {
		sk_logf(SK_LOG_ERROR, "usage", "msg=\"--kafka-config needs --kafka (see --help)\"");
		return -1;
	}
	if (o->admin_port == 0 && o->admin_socket == NULL)
		sk_logf(SK_LOG_NOTICE, "config",
			"msg=\"admin API disabled (no --admin-port and --admin-socket none)\"");
	return 0;
}
