/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-control: the control plane process. A DPDK secondary of the
 * dataplane: attach to its arena and order rings, open the order store,
 * serve the admin API, then loop: drain (group commit), payment deadlines,
 * heartbeat, the periodic reconcile (sk_reconcile.h), and a short sleep
 * when idle (this is not a dataplane core).
 *
 *   seckill-control [EAL options] -- --store DIR [options]
 *
 * --proc-type=secondary is added to the EAL options when missing. SIGINT or
 * SIGTERM: commit what is waiting, stop the admin API, close the store,
 * exit 0. Every line it writes is a logfmt log line on stderr (sk_logfmt.h,
 * docs/logs.md), DPDK's and librdkafka's included; --help alone prints
 * plain text on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "sk_activity.h"
#include "sk_logfmt.h"
#include "sk_parse.h"
#include "sk_admin.h"
#include "sk_exporter.h"
#include "sk_payments_consumer.h"
#include "sk_paysig.h"
#include "sk_control.h"
#include "sk_member.h"
#include "sk_reconcile.h"

#define PROG "seckill-control"

#define MS INT64_C(1000000)
#define S  INT64_C(1000000000)

/* How often the deadlines are scanned, and how long the loop sleeps. */
#define EXPIRE_EVERY_NS	   (100 * MS)
#define PREHEAT_EVERY_NS   S
#define RECONCILE_EVERY_NS (5 * S)
#define SLEEP_LINGER_NS	   (50 * 1000)
#define SLEEP_BUSY_NS	   (100 * 1000)
#define SLEEP_IDLE_NS	   (1 * MS)
#define IDLE_AFTER_NS	   (1 * S)
#define PAY_AGE_DEFAULT_S  (7 * 86400) /* Kafka's default retention; the table's default age */
#define ERROR_SLEEP_NS	   (10 * MS)
#define ATTACH_WAIT_NS	   (10 * S)

static volatile sig_atomic_t stop_requested;

struct opts {
	const char *store;
	int64_t pay_timeout_s;	      /* 0 = no deadline */
	unsigned admin_port;	      /* 0 = no TCP listener */
	const char *admin_socket;     /* NULL = none ("--admin-socket none") */
	const char *admin_token_file; /* the bearer token of TCP */
	int64_t batch_us;
	unsigned batch_max;
	uint64_t map_mb;
	bool nosync;
	const char *kafka; /* bootstrap servers; NULL = no export */
	const char *kafka_orders, *kafka_events;
	const char *kafka_payments; /* topic consumed; NULL = the default */
	const char *kafka_group;    /* its consumer group; NULL = the default */
	const char *pay_key_file;   /* keys of the payment signatures */
	int64_t pay_retention_s;    /* the payments topic's retention */
	int64_t pay_requests_age_s; /* the request table's max age */
	const char *kafka_config;   /* librdkafka properties file; NULL = none */
	char *redis;		    /* cluster member: "HOST:PORT" or "unix:PATH"; NULL = alone */
	const char *redis_user, *redis_pass_file; /* Redis AUTH; NULL = none */
	const char *member;
	char *members;
	int64_t idle_ms;
};

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [EAL options] -- --store DIR [options]\n"
		"\n"
		"  --store DIR             LMDB order store directory (created if missing)\n"
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

/* parse_opts - the options after "--". 0, 1 (--help: exit 0), or -1 (error printed). */
static int
parse_opts(int argc, char **argv, struct opts *o)
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
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	enum sk_log_level lv;
	int c;
	int64_t v;

	*o = (struct opts){.pay_timeout_s = 900,
			   .admin_socket = SK_ADMIN_SOCKET_DEFAULT,
			   .batch_us = 1000,
			   .batch_max = SK_CONTROL_BATCH_MAX_DEFAULT,
			   .pay_retention_s = PAY_AGE_DEFAULT_S,
			   .pay_requests_age_s = PAY_AGE_DEFAULT_S};
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
		case O_HELP:
			usage(stdout);
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
		sk_logf(SK_LOG_ERROR, "usage", "msg=\"--store DIR is required (see --help)\"");
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

/*
 * member_conf - the cluster member's settings of @o into @p mc and its
 * number into @p number (0: standalone, without --redis): 0, or -1 with
 * the reason logged. Before the attach: the arena's member must match.
 */
static int
member_conf(struct opts *o, struct sk_member_conf *mc, uint32_t *number)
{
	int rc;

	*mc = (struct sk_member_conf){.redis = {.member = o->member,
						.timeout_ms = 1000,
						.user = o->redis_user,
						.password_file = o->redis_pass_file},
				      .idle_ns = o->idle_ms * 1000000};
	*number = 0;
	if (o->redis == NULL)
		return 0;
	if (sk_member_parse_redis(o->redis, &mc->redis) != 0) {
		sk_logf(SK_LOG_ERROR, "usage",
			"value=%s msg=\"bad value for --redis: HOST:PORT or unix:PATH (see "
			"--help)\"",
			o->redis);
		return -1;
	}
	rc = sk_member_parse_members(o->members, mc);
	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "usage", "msg=\"bad value for --cluster-members\" err=%s",
			rc == -E2BIG
				? "more than 16 members"
				: "ids of [a-z0-9_-], 1..32 chars, comma-separated, no repeat");
		return -1;
	}
	*number = sk_member_number(mc);
	if (*number == 0) {
		sk_logf(SK_LOG_ERROR, "usage",
			"msg=\"--cluster-member is not one of --cluster-members\"");
		return -1;
	}
	return 0;
}

/* member_start - the cluster member of @p mc (nothing without --redis): 0, or -1 logged. */
static int
member_start(struct sk_member **out, struct sk_control *ctl, const struct opts *o,
	     const struct sk_member_conf *mc)
{
	char err[512];
	int rc;

	if (o->redis == NULL)
		return 0;
	/* AUTH, noeviction, master_replid: refused now, with the reason; a
	 * Redis that does not answer yet is tried again by the member. */
	rc = sk_cpool_check(&mc->redis, err, sizeof(err));
	if (rc == -ENOTCONN || rc == -ETIMEDOUT) {
		sk_logf(SK_LOG_WARN, "cluster",
			"msg=\"Redis does not answer at start: the member keeps trying\" "
			"err=\"%s\"",
			err);
	} else if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "startup",
			"msg=\"Redis refused for the cluster pool\" err=\"%s\"", err);
		return -1;
	}
	rc = sk_member_start(out, ctl, mc);
	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "msg=\"cannot start the cluster member\" err=%s",
			rc == -EINVAL ? "--cluster-member is not one of --cluster-members"
				      : strerror(-rc));
		return -1;
	}
	if (mc->redis.unix_path != NULL)
		sk_logf(SK_LOG_INFO, "cluster", "member=%s number=%u members=%u redis=unix:%s",
			o->member, sk_member_number(mc), mc->nmembers, mc->redis.unix_path);
	else
		sk_logf(SK_LOG_INFO, "cluster", "member=%s number=%u members=%u redis=%s:%d",
			o->member, sk_member_number(mc), mc->nmembers, mc->redis.host,
			mc->redis.port);
	return 0;
}

static void
on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void
sleep_ns(int64_t ns)
{
	struct timespec ts = {.tv_sec = ns / S, .tv_nsec = ns % S};

	nanosleep(&ts, NULL); /* a signal cuts it short: fine */
}

/*
 * lock_dataplane - one control plane per dataplane: an exclusive flock on a
 * file in the EAL runtime directory of this --file-prefix. The rings are
 * single-consumer and attach resets their consumer heads, which is safe only
 * if no other control plane is draining them. The kernel drops the lock when
 * the process dies, kill -9 included. Returns the fd (kept open), or -1.
 */
static int
lock_dataplane(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/seckill-control.lock", rte_eal_get_runtime_dir());
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		sk_logf(SK_LOG_ERROR, "startup", "path=%s msg=\"cannot open the lock file\" err=%s",
			path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		sk_logf(SK_LOG_ERROR, "startup",
			"path=%s msg=\"another seckill-control is attached to this dataplane\"",
			path);
		close(fd);
		return -1;
	}
	return fd;
}

/* attach - sk_control_attach(), waiting a little for the dataplane to publish its rings. */
static int
attach(struct sk_control **ctl, const struct sk_control_conf *conf)
{
	char err[SK_CONTROL_ERR_MAX];
	int64_t until = sk_clock_ns(CLOCK_MONOTONIC) + ATTACH_WAIT_NS;
	int rc;

	while ((rc = sk_control_attach(ctl, conf, err, sizeof(err))) == -ENOENT &&
	       sk_clock_ns(CLOCK_MONOTONIC) < until && !stop_requested)
		sleep_ns(100 * MS);
	if (rc != 0)
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
	return rc;
}

/* records_waiting - whether a batch is filling up (the drain is lingering). */
static bool
records_waiting(const struct sk_control *ctl)
{
	for (unsigned l = 0; l < sk_control_nrings(ctl); l++)
		if (sk_control_ring_depth(ctl, l) > 0)
			return true;
	return false;
}

/*
 * preheat - bring the arena's items in line with the store's activities
 * (sk_control_preheat()): at start, then every second, so an activity
 * whose arena step a crash interrupted is finished. Logs what changed.
 */
static void
preheat(struct sk_control *ctl, int64_t now)
{
	struct sk_control_preheat_info pi;
	int rc = sk_control_preheat(ctl, now, true, &pi);

	if (rc != 0)
		sk_logf(SK_LOG_WARN, "preheat", "msg=\"store error (retried in 1 s)\" err=%s",
			strerror(-rc));
	else if (pi.recorded + pi.loaded + pi.synced > 0)
		sk_logf(SK_LOG_INFO, "preheat",
			"recorded=%" PRIu32 " loaded=%" PRIu32 " synced=%" PRIu32
			" msg=\"config items recorded as activities, activities put on sale, "
			"items restocked or closed\"",
			pi.recorded, pi.loaded, pi.synced);
}

/* export_metrics - the exporter's part of /metrics (sk_control_metrics_extra()). */
static int
export_metrics(void *arg, FILE *out)
{
	return sk_exporter_metrics(arg, out);
}

/*
 * reconcile - one periodic reconcile run (seckill_reconcile_* metrics);
 * logs when the number of items reported changes, and store errors.
 */
static void
reconcile(struct sk_control *ctl, int64_t now, uint32_t *reported)
{
	struct sk_reconcile_info ri;
	int rc = sk_control_reconcile(ctl, now, &ri);

	if (rc != 0) {
		sk_logf(SK_LOG_WARN, "reconcile", "err=%s retry_s=%d", strerror(-rc),
			(int)(RECONCILE_EVERY_NS / S));
		return;
	}
	if (ri.mismatches != *reported)
		sk_logf(ri.mismatches > 0 ? SK_LOG_ERROR : SK_LOG_NOTICE, "reconcile",
			"mismatches=%" PRIu32 " msg=%s", ri.mismatches,
			ri.mismatches > 0 ? "items do not add up (seckillctl reconcile; "
					    "docs/monitoring.md)"
					  : "every item adds up again");
	*reported = ri.mismatches;
}

/* run - the main loop, until a signal. */
static int
run(struct sk_control *ctl)
{
	int64_t last_expire = 0, last_busy = sk_clock_ns(CLOCK_MONOTONIC), last_err_log = 0;
	int64_t last_preheat = sk_clock_ns(CLOCK_MONOTONIC), last_reconcile = 0;
	uint32_t reported = 0;
	int rc;

	while (!stop_requested) {
		int64_t now = sk_clock_ns(CLOCK_REALTIME), mono = sk_clock_ns(CLOCK_MONOTONIC);
		bool busy = false, failed = false;

		rc = sk_control_drain(ctl, now, 0, NULL);
		if (rc > 0)
			busy = true;
		failed |= rc < 0;
		if (rc < 0 && mono - last_err_log > S) {
			sk_logf(SK_LOG_WARN, "drain", "msg=\"orders stay queued; retrying\" err=%s",
				strerror(-rc));
			last_err_log = mono;
		}
		if (mono - last_expire >= EXPIRE_EVERY_NS) {
			last_expire = mono;
			rc = sk_control_expire(ctl, now);
			if (rc > 0)
				busy = true;
			if (rc < 0 && mono - last_err_log > S) {
				sk_logf(SK_LOG_WARN, "expire",
					"msg=\"payment deadlines: retrying\" err=%s",
					strerror(-rc));
				last_err_log = mono;
			}
			failed |= rc < 0;
		}
		if (mono - last_preheat >= PREHEAT_EVERY_NS) {
			last_preheat = mono;
			preheat(ctl, now);
		}
		if (last_reconcile == 0 || mono - last_reconcile >= RECONCILE_EVERY_NS) {
			last_reconcile = mono;
			reconcile(ctl, now, &reported);
		}
		sk_control_heartbeat(ctl, now);

		if (busy)
			last_busy = mono;
		if (failed)
			sleep_ns(ERROR_SLEEP_NS);
		else if (!busy)
			sleep_ns(records_waiting(ctl)		    ? SLEEP_LINGER_NS
				 : mono - last_busy > IDLE_AFTER_NS ? SLEEP_IDLE_NS
								    : SLEEP_BUSY_NS);
	}
	/* Commit what is waiting so the parked winners get their answer. */
	rc = sk_control_drain(ctl, sk_clock_ns(CLOCK_REALTIME), SK_CONTROL_DRAIN_NOW, NULL);
	if (rc < 0)
		sk_logf(SK_LOG_ERROR, "drain",
			"msg=\"final drain failed: orders stay queued for the next control "
			"plane\" err=%s",
			strerror(-rc));
	return 0;
}

/* eal_args - argv[0..n) plus --proc-type=secondary if missing; NULL on ENOMEM. */
static char **
eal_args(char **argv, int n, int *eal_argc)
{
	static char secondary[] = "--proc-type=secondary";
	bool has = false;
	char **v = calloc((size_t)n + 2, sizeof(*v));

	if (v == NULL)
		return NULL;
	for (int i = 0; i < n; i++) {
		v[i] = argv[i];
		if (strncmp(argv[i], "--proc-type", 11) == 0)
			has = true;
	}
	*eal_argc = n;
	if (!has)
		v[(*eal_argc)++] = secondary;
	return v;
}

int
main(int argc, char **argv)
{
	struct sk_control *ctl = NULL;
	struct sk_admin *admin = NULL;
	struct sk_exporter *exporter = NULL;
	struct sk_payments *payments = NULL;
	struct sk_paysig_keys *pay_keys = NULL;
	struct sk_member *member = NULL;
	struct sk_kafka_props *kprops = NULL;
	struct sk_member_conf mc;
	uint32_t member_number;
	char **ev = NULL;
	struct opts o;
	int dd = argc, eal_argc, rc, status = EXIT_FAILURE, lock_fd = -1;
	bool eal_up = false;

	sk_logfmt_init(PROG);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	/* Without "--" every argument is an application option. */
	int app_first = dd < argc ? dd : 0;
	rc = parse_opts(argc - app_first, argv + app_first, &o);
	if (rc != 0)
		return rc > 0 ? EXIT_SUCCESS : 2;
	if (member_conf(&o, &mc, &member_number) != 0)
		return 2;
	if (o.kafka_config != NULL) {
		char err[SK_KAFKA_CONF_ERR_MAX];

		if (sk_kafka_props_load(&kprops, o.kafka_config, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "config", "option=--kafka-config err=\"%s\"", err);
			return 2;
		}
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ev = eal_args(argv, dd < argc ? dd : 1, &eal_argc);
	if (ev == NULL) {
		sk_logf(SK_LOG_ERROR, "startup", "err=\"out of memory\"");
		goto out;
	}
	rc = sk_logfmt_dpdk();
	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "msg=\"cannot route DPDK's log lines\" err=%s",
			strerror(-rc));
		goto out;
	}
	if (rte_eal_init(eal_argc, ev) < 0) {
		sk_logf(SK_LOG_ERROR, "startup",
			"msg=\"EAL init failed (is the dataplane running with this "
			"--file-prefix?)\" err=%s",
			rte_strerror(rte_errno));
		goto out;
	}
	eal_up = true;
	lock_fd = lock_dataplane();
	if (lock_fd < 0)
		goto out;

	struct sk_control_conf cc = {
		.store_dir = o.store,
		.store_map_size = o.map_mb << 20,
		.store_flags = o.nosync ? SK_STORE_NOSYNC : 0,
		.pay_timeout_ns = o.pay_timeout_s > 0 ? o.pay_timeout_s * S : -1,
		.batch_max = o.batch_max,
		.batch_linger_ns = o.batch_us * 1000,
		.requests_ttl_ns = o.pay_requests_age_s * S,
		.member = member_number,
	};
	if (attach(&ctl, &cc) != 0)
		goto out;
	if (o.kafka != NULL) {
		char err[SK_EXPORT_ERR_MAX];
		struct sk_export_conf kc = {.bootstrap = o.kafka,
					    .orders_topic = o.kafka_orders,
					    .events_topic = o.kafka_events,
					    .props = kprops};
		if (sk_exporter_start(&exporter, sk_control_store(ctl), &kc, err, sizeof(err)) !=
		    0) {
			sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
			goto out;
		}
		sk_control_metrics_extra(ctl, export_metrics, exporter);
		if (sk_paysig_keys_load(o.pay_key_file, &pay_keys, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "startup", "option=--payments-key-file err=\"%s\"",
				err);
			goto out;
		}
		struct sk_payments_conf pc = {.bootstrap = o.kafka,
					      .topic = o.kafka_payments,
					      .group = o.kafka_group,
					      .member = o.member,
					      .props = kprops,
					      .keys = pay_keys,
					      .max_age_ns = o.pay_requests_age_s * S};
		if (sk_payments_start(&payments, ctl, &pc, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
			goto out;
		}
	}

	/* Before the admin API: it reads the member. */
	if (member_start(&member, ctl, &o, &mc) != 0)
		goto out;
	if (o.admin_port != 0 || o.admin_socket != NULL) {
		char err[SK_CONTROL_ERR_MAX];
		struct sk_admin_conf ac = {.tcp = o.admin_port != 0,
					   .port = (uint16_t)o.admin_port,
					   .token_file = o.admin_token_file,
					   .socket_path = o.admin_socket};
		if (sk_admin_start(&admin, ctl, &ac, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
			goto out;
		}
	}
	char where[64] = "off";
	if (o.admin_port != 0)
		snprintf(where, sizeof(where), "127.0.0.1:%u", o.admin_port);
	sk_logf(SK_LOG_NOTICE, "ready",
		"msg=attached lcores=%u epoch=%" PRIu32 " member=%" PRIu32
		" store=%s admin=%s admin_socket=%s kafka=%s",
		sk_control_nrings(ctl), sk_control_shm(ctl)->epoch, member_number, o.store, where,
		o.admin_socket != NULL ? o.admin_socket : "off", o.kafka != NULL ? o.kafka : "off");

	preheat(ctl, sk_clock_ns(CLOCK_REALTIME));
	status = run(ctl) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;

	struct sk_control_stats s;
	sk_control_stats(ctl, &s);
	sk_logf(SK_LOG_NOTICE, "shutdown",
		"msg=stopped committed=%" PRIu64 " batches=%" PRIu64 " failed=%" PRIu64
		" cancelled=%" PRIu64 " paid=%" PRIu64,
		s.orders_committed, s.batches, s.orders_failed, s.cancels,
		s.pay[SK_CONTROL_PAY_DONE]);
out:
	sk_payments_stop(payments);
	sk_paysig_keys_free(pay_keys);
	sk_admin_stop(admin);
	/* Unsold cluster units back to the pool while the dataplane runs
	 * (bounded), then the member goes. */
	sk_member_stop(member, 3 * S);
	/* What the final drain committed goes out too (bounded). */
	sk_exporter_stop(exporter, 5000);
	sk_control_close(ctl);
	sk_kafka_props_free(kprops);
	if (lock_fd >= 0)
		close(lock_fd);
	if (eal_up)
		rte_eal_cleanup();
	free(ev);
	return status;
}
