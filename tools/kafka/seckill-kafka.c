/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-kafka - a Kafka broker for tests and the demo, and the two clients
 * that drive and check it.
 *
 *   seckill-kafka broker  [--brokers N] [--partitions P] [--topic NAME]...
 *                         [--ready-file PATH] [--max-seconds S]
 *   seckill-kafka produce --bootstrap LIST --topic NAME [--partition P]
 *                         [--timeout-ms T] KEY=VALUE...
 *   seckill-kafka consume --bootstrap LIST --topic NAME [--from-beginning]
 *                         [--max N] [--timeout-ms T] [--max-seconds S] [--json]
 *
 * Debian 12 ships no Kafka broker; librdkafka's mock cluster speaks the real
 * protocol (metadata, produce, fetch, the idempotent producer) and is enough
 * for the exporter's tests and the demo. The broker listens on 127.0.0.1
 * only, and checks so at start; the clients refuse any bootstrap address but
 * 127.0.0.1 and refuse to connect to any other address a broker advertises.
 *
 * Exit status: 0 success, 1 runtime failure, 2 usage error.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "sk_common.h"
#include "sk_log.h"
#include "sk_parse.h"

#define EXIT_USAGE 2
#define PROG	   "seckill-kafka"

#define MAX_TOPICS     64
#define MAX_BROKERS    16
#define MAX_PARTITIONS 1024
#define MAX_MESSAGES   100000
#define MAX_TIMEOUT_MS 600000
#define MAX_WAIT_S     86400

static const char usage_main[] =
	"usage: seckill-kafka broker|produce|consume [OPTIONS]   (--help on each)\n"
	"\n"
	"A Kafka broker for tests and the demo (librdkafka's mock cluster, on\n"
	"127.0.0.1 only) and a producer and a consumer to drive and check it.\n";

static const char usage_broker[] =
	"usage: seckill-kafka broker [--brokers N] [--partitions P] [--topic NAME]...\n"
	"                            [--ready-file PATH] [--max-seconds S]\n"
	"\n"
	"Run a mock Kafka cluster on 127.0.0.1 until SIGINT or SIGTERM (exit 0).\n"
	"Prints 'bootstrap=127.0.0.1:PORT,...' on stdout once it listens.\n"
	"\n"
	"  --brokers N        brokers in the cluster, 1..16 (default 1)\n"
	"  --partitions P     partitions of each --topic, 1..1024 (default 1: one\n"
	"                     ordered log per topic)\n"
	"  --topic NAME       create topic NAME (repeat for more, up to 64); topics\n"
	"                     a producer names without it are auto-created with the\n"
	"                     mock's default partition count\n"
	"  --ready-file PATH  also write the bootstrap line to PATH (written to a\n"
	"                     temporary file, then renamed); removed at exit\n"
	"  --max-seconds S    exit 0 by itself after S seconds (default: never)\n"
	"\n"
	"Signals: SIGUSR1 takes every broker down (connections closed, new ones\n"
	"not served), SIGUSR2 brings them up again; both are logged on stderr.\n";

static const char usage_produce[] =
	"usage: seckill-kafka produce --bootstrap LIST --topic NAME [--partition P]\n"
	"                             [--timeout-ms T] KEY=VALUE...\n"
	"\n"
	"Produce one message per KEY=VALUE argument, in order (idempotent producer,\n"
	"acks=all), split at the first '='; an empty KEY sends no key.\n"
	"\n"
	"  --bootstrap LIST   127.0.0.1:PORT[,127.0.0.1:PORT...]\n"
	"  --topic NAME       topic to write to\n"
	"  --partition P      partition to write to (default: by key)\n"
	"  --timeout-ms T     give up on undelivered messages after T ms\n"
	"                     (default 5000)\n"
	"\n"
	"Exit 0 when every message was delivered, 1 otherwise.\n";

static const char usage_consume[] =
	"usage: seckill-kafka consume --bootstrap LIST --topic NAME [--from-beginning]\n"
	"                             [--max N] [--timeout-ms T] [--max-seconds S]\n"
	"                             [--json]\n"
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
	"\n"
	"Prints 'consumed N messages from TOPIC' on stderr at the end. Exit 0 when\n"
	"it ran (even with no message), 1 when the cluster cannot be reached in\n"
	"time or the topic does not exist.\n";

/* ----------------------------------------------------------------------------
 * Helpers shared by the subcommands
 * ------------------------------------------------------------------------- */

static int64_t
now_ms(void)
{
	return sk_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

/* topic_valid - whether @t is a legal Kafka topic name. */
static bool
topic_valid(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > 249 || !strcmp(t, ".") || !strcmp(t, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = t[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/*
 * bootstrap_check - whether @list is one or more "127.0.0.1:PORT" separated
 * by commas, and nothing else. On failure names the bad entry in @why.
 */
static bool
bootstrap_check(const char *list, char *why, size_t whylen)
{
	const char *p = list;

	if (!*list) {
		snprintf(why, whylen, "empty bootstrap list");
		return false;
	}
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		static const char host[] = "127.0.0.1:";
		char port[8];
		uint32_t v;

		if (len <= sizeof(host) - 1 || strncmp(p, host, sizeof(host) - 1) ||
		    len - (sizeof(host) - 1) >= sizeof(port)) {
			snprintf(why, whylen, "'%.*s' is not 127.0.0.1:PORT", (int)len, p);
			return false;
		}
		memcpy(port, p + sizeof(host) - 1, len - (sizeof(host) - 1));
		port[len - (sizeof(host) - 1)] = '\0';
		if (!sk_parse_u32(port, 1, 65535, &v)) {
			snprintf(why, whylen, "'%.*s': bad port", (int)len, p);
			return false;
		}
		if (!comma)
			return true;
		p = comma + 1;
	}
}

/*
 * A subcommand's options are a table: each entry names a long option, how
 * its value is checked and where in the subcommand's options it is stored.
 * opts_parse() runs getopt_long() over it, so every subcommand says what is
 * wrong in the same words.
 */
enum opt_kind {
	OPT_FLAG, /* no value: sets the bool at off */
	OPT_STR,  /* the value (const char *) at off */
	OPT_LONG, /* a decimal in [lo, hi] (long) at off, by sk_parse_i64() */
	OPT_CALL, /* call checks and stores the value */
};

struct opt {
	const char *name; /* without the leading "--" */
	enum opt_kind kind;
	size_t off;
	long lo, hi;
	const char *want; /* OPT_LONG: what a bad value is not; NULL: "LO..HI" */
	int (*call)(void *o, const char *arg); /* -1 when stored, or an exit status */
};

/* Table entries: the option @name, stored in field @f of struct @t. */
/* clang-format off */
#define FLAG_OPT(name, t, f) {name, OPT_FLAG, offsetof(struct t, f), 0, 0, NULL, NULL}
#define STR_OPT(name, t, f)  {name, OPT_STR, offsetof(struct t, f), 0, 0, NULL, NULL}
#define LONG_OPT(name, t, f, lo, hi, want) \
	{name, OPT_LONG, offsetof(struct t, f), lo, hi, want, NULL}
#define CALL_OPT(name, call) {name, OPT_CALL, 0, 0, 0, NULL, call}
/* clang-format on */

#define MAX_OPTS 8
#define OPT_VAL	 0x100 /* getopt_long() returns this + the option's index */

struct cmd {
	const char *name;  /* the subcommand */
	const char *usage; /* its --help */
	bool operands;	   /* takes arguments after the options */
	const struct opt *opts;
	size_t nopts; /* at most MAX_OPTS; --help comes after them */
};

/* opt_store - checks @arg for the option @op and stores it in @o. */
static int
opt_store(const struct opt *op, void *o, const char *arg)
{
	char *field = (char *)o + op->off;
	int64_t v;

	switch (op->kind) {
	case OPT_FLAG:
		*(bool *)field = true;
		break;
	case OPT_STR:
		*(const char **)field = arg;
		break;
	case OPT_LONG:
		if (!sk_parse_i64(arg, op->lo, op->hi, &v)) {
			if (op->want)
				sk_log(PROG, "--%s: want %s, got '%s'", op->name, op->want, arg);
			else
				sk_log(PROG, "--%s: want %ld..%ld, got '%s'", op->name, op->lo,
				       op->hi, arg);
			return EXIT_USAGE;
		}
		*(long *)field = (long)v;
		break;
	case OPT_CALL:
		return op->call(o, arg);
	}
	return -1;
}

/*
 * opts_parse - fills @o (which holds the defaults) from @argv by the table
 * of @cmd. -1 to go on, or the exit status after printing why: --help
 * prints the usage on stdout (0), a usage error says why on stderr (2).
 */
static int
opts_parse(const struct cmd *cmd, int argc, char **argv, void *o)
{
	struct option longopts[MAX_OPTS + 2] = {{0}};
	size_t i;
	int c, r;

	SK_ASSERT(cmd->nopts <= MAX_OPTS);
	for (i = 0; i < cmd->nopts; i++)
		longopts[i] = (struct option){
			.name = cmd->opts[i].name,
			.has_arg = cmd->opts[i].kind == OPT_FLAG ? no_argument : required_argument,
			.val = OPT_VAL + (int)i,
		};
	longopts[i] = (struct option){.name = "help", .has_arg = no_argument, .val = 'h'};

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(cmd->usage, stdout);
			return EXIT_SUCCESS;
		}
		if (c < OPT_VAL || c >= OPT_VAL + (int)cmd->nopts) {
			fputs(cmd->usage, stderr);
			return EXIT_USAGE;
		}
		r = opt_store(&cmd->opts[c - OPT_VAL], o, optarg);
		if (r >= 0)
			return r;
	}
	if (!cmd->operands && optind != argc) {
		sk_log(PROG, "%s: unexpected argument '%s'", cmd->name, argv[optind]);
		return EXIT_USAGE;
	}
	return -1;
}

/*
 * client_check - a client's required --bootstrap (127.0.0.1 only) and
 * --topic, after opts_parse(). -1 to go on, or EXIT_USAGE after saying why.
 */
static int
client_check(const struct cmd *cmd, const char *bootstrap, const char *topic)
{
	char why[256];

	if (!bootstrap || !topic) {
		sk_log(PROG, "%s: --bootstrap and --topic are required", cmd->name);
		return EXIT_USAGE;
	}
	if (!bootstrap_check(bootstrap, why, sizeof(why))) {
		sk_log(PROG, "--bootstrap: %s (only 127.0.0.1 is allowed)", why);
		return EXIT_USAGE;
	}
	if (!topic_valid(topic)) {
		sk_log(PROG, "--topic: '%s' is not a topic name", topic);
		return EXIT_USAGE;
	}
	return -1;
}

/*
 * loopback_connect_cb - librdkafka's connect callback: connects @sockfd only
 * when @addr is 127.0.0.1, whatever address a broker advertised. Returns 0
 * or an errno, as librdkafka expects (the socket is non-blocking, so
 * EINPROGRESS is success).
 */
static int
loopback_connect_cb(int sockfd, const struct sockaddr *addr, int addrlen, const char *id,
		    void *opaque)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

	(void)opaque;
	if (addr->sa_family != AF_INET || (size_t)addrlen < sizeof(*sin) ||
	    sin->sin_addr.s_addr != htonl(INADDR_LOOPBACK)) {
		sk_log(PROG, "refusing to connect to %s: only 127.0.0.1 is allowed", id);
		return EACCES;
	}
	if (connect(sockfd, addr, (socklen_t)addrlen) == -1 && errno != EINPROGRESS)
		return errno;
	return 0;
}

/*
 * conf_setv - sets the @kv pairs (name, value, ..., NULL) on @conf. 0, or -1
 * (reported) after destroying @conf.
 */
static int
conf_setv(rd_kafka_conf_t *conf, const char *const *kv)
{
	char errstr[256];

	for (; *kv; kv += 2) {
		if (rd_kafka_conf_set(conf, kv[0], kv[1], errstr, sizeof(errstr))) {
			sk_log(PROG, "%s", errstr);
			rd_kafka_conf_destroy(conf);
			return -1;
		}
	}
	return 0;
}

/*
 * kafka_new - a @type handle of @conf with the @kv pairs of conf_setv() set.
 * Takes @conf over, also on failure. NULL (reported) on failure.
 */
static rd_kafka_t *
kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, const char *const *kv)
{
	char errstr[256];
	rd_kafka_t *rk;

	if (conf_setv(conf, kv))
		return NULL;
	rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
	if (!rk) {
		sk_log(PROG, "rd_kafka_new: %s", errstr);
		rd_kafka_conf_destroy(conf);
	}
	return rk;
}

/*
 * client_new - kafka_new() for a client of @bootstrap (already checked)
 * named @client_id, with the loopback guard installed.
 */
static rd_kafka_t *
client_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, const char *bootstrap,
	   const char *client_id, const char *const *kv)
{
	/* broker.address.family: the loopback guard knows IPv4 only. */
	const char *const base[] = {"bootstrap.servers",     bootstrap, "client.id", client_id,
				    "broker.address.family", "v4",	NULL};

	if (conf_setv(conf, base))
		return NULL;
	rd_kafka_conf_set_connect_cb(conf, loopback_connect_cb);
	return kafka_new(type, conf, kv);
}

/* client_destroy - destroys @rk and waits (bounded) for its threads. */
static void
client_destroy(rd_kafka_t *rk)
{
	rd_kafka_destroy(rk);
	if (rd_kafka_wait_destroyed(5000) == -1)
		sk_log(PROG, "librdkafka threads still running after 5 s");
}

/* ----------------------------------------------------------------------------
 * broker: the mock cluster
 * ------------------------------------------------------------------------- */

struct broker_opts {
	long brokers;
	long partitions;
	const char *topics[MAX_TOPICS];
	int ntopics;
	const char *ready_file;
	long max_seconds; /* 0: no limit */
};

/*
 * listeners_check - walks this process's descriptors and checks that every
 * listening TCP socket is bound to 127.0.0.1. Returns the number of
 * listeners, or -1 (reported) when one listens elsewhere.
 */
static int
listeners_check(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0, bad = 0;

	if (!d) {
		sk_log(PROG, "/proc/self/fd: %s", strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		struct sockaddr_storage ss;
		socklen_t sslen = sizeof(ss);
		int fd, on = 0;
		socklen_t onlen = sizeof(on);
		uint32_t v;

		if (!sk_parse_u32(de->d_name, 0, INT_MAX, &v) || (int)v == dirfd(d))
			continue;
		fd = (int)v;
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &onlen) || !on)
			continue;
		if (getsockname(fd, (struct sockaddr *)&ss, &sslen))
			continue;
		if (ss.ss_family == AF_UNIX)
			continue;
		if (ss.ss_family == AF_INET &&
		    ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_LOOPBACK)) {
			n++;
			continue;
		}
		if (ss.ss_family == AF_INET6 &&
		    IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr)) {
			sk_log(PROG, "a listener on ::1, expected 127.0.0.1 only");
		} else {
			char a[INET6_ADDRSTRLEN] = "?";

			if (ss.ss_family == AF_INET)
				inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a,
					  sizeof(a));
			else if (ss.ss_family == AF_INET6)
				inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a,
					  sizeof(a));
			sk_log(PROG, "a listener on %s, expected 127.0.0.1 only", a);
		}
		bad = 1;
	}
	closedir(d);
	return bad ? -1 : n;
}

/* ready_file_write - writes @line to @path through a temporary file. */
static int
ready_file_write(const char *path, const char *line)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		sk_log(PROG, "--ready-file: path too long");
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f) {
		sk_log(PROG, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	if (fprintf(f, "%s\n", line) < 0 || fflush(f) || fsync(fileno(f))) {
		sk_log(PROG, "%s: %s", tmp, strerror(errno));
		fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) || rename(tmp, path)) {
		sk_log(PROG, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * broker_serve - waits for signals until SIGINT/SIGTERM or the time limit.
 * Signals are blocked in every thread and taken here with sigtimedwait(), so
 * nothing runs in a signal handler.
 */
static void
broker_serve(rd_kafka_mock_cluster_t *mc, const sigset_t *set, long max_seconds)
{
	int64_t end = max_seconds ? now_ms() + max_seconds * 1000 : INT64_MAX;
	struct timespec tick = {.tv_sec = 1};

	for (;;) {
		rd_kafka_resp_err_t err;
		int sig = sigtimedwait(set, NULL, &tick);

		if (sig == SIGINT || sig == SIGTERM) {
			fprintf(stderr, PROG ": %s, stopping\n", strsignal(sig));
			return;
		}
		if (sig == SIGUSR1) {
			err = rd_kafka_mock_broker_set_down(mc, -1);
			fprintf(stderr, PROG ": SIGUSR1: brokers down%s%s\n", err ? ": " : "",
				err ? rd_kafka_err2str(err) : "");
		} else if (sig == SIGUSR2) {
			err = rd_kafka_mock_broker_set_up(mc, -1);
			fprintf(stderr, PROG ": SIGUSR2: brokers up%s%s\n", err ? ": " : "",
				err ? rd_kafka_err2str(err) : "");
		}
		if (now_ms() >= end) {
			fprintf(stderr, PROG ": --max-seconds %ld reached, stopping\n",
				max_seconds);
			return;
		}
	}
}

/* broker_topic - --topic NAME: one more topic to create. */
static int
broker_topic(void *p, const char *arg)
{
	struct broker_opts *o = p;

	if (!topic_valid(arg)) {
		sk_log(PROG, "--topic: '%s' is not a topic name ([a-zA-Z0-9._-]{1,249})", arg);
		return EXIT_USAGE;
	}
	if (o->ntopics == MAX_TOPICS) {
		sk_log(PROG, "--topic: at most %d topics", MAX_TOPICS);
		return EXIT_USAGE;
	}
	o->topics[o->ntopics++] = arg;
	return -1;
}

/* broker_ready_file - --ready-file PATH: not empty. */
static int
broker_ready_file(void *p, const char *arg)
{
	struct broker_opts *o = p;

	if (!*arg) {
		sk_log(PROG, "--ready-file: empty path");
		return EXIT_USAGE;
	}
	o->ready_file = arg;
	return -1;
}

static const struct opt broker_opts_table[] = {
	LONG_OPT("brokers", broker_opts, brokers, 1, MAX_BROKERS, NULL),
	LONG_OPT("partitions", broker_opts, partitions, 1, MAX_PARTITIONS, NULL),
	CALL_OPT("topic", broker_topic),
	CALL_OPT("ready-file", broker_ready_file),
	LONG_OPT("max-seconds", broker_opts, max_seconds, 1, MAX_WAIT_S, NULL),
};

static const struct cmd broker_cmd = {"broker", usage_broker, false, broker_opts_table,
				      SK_ARRAY_SIZE(broker_opts_table)};

static int
cmd_broker(int argc, char **argv)
{
	static const char *const conf_kv[] = {"client.id", PROG "-broker", "log_level", "4", NULL};
	struct broker_opts o = {.brokers = 1, .partitions = 1};
	rd_kafka_mock_cluster_t *mc = NULL;
	rd_kafka_t *rk = NULL;
	char why[256], line[4096];
	const char *bs;
	sigset_t set;
	int rc = EXIT_FAILURE, r, nl;

	r = opts_parse(&broker_cmd, argc, argv, &o);
	if (r >= 0)
		return r;

	/* Blocked before librdkafka starts a thread, so every thread inherits
	 * the mask and only broker_serve() sees these signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* The handle only hosts the cluster's thread: no bootstrap servers, it
	 * never connects anywhere (log_level 4 hides the notice saying so; the
	 * mock's own errors are logged at 3 and below). */
	rk = kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), conf_kv);
	if (!rk)
		return EXIT_FAILURE;
	mc = rd_kafka_mock_cluster_new(rk, (int)o.brokers);
	if (!mc) {
		sk_log(PROG, "cannot create the mock cluster (%ld brokers)", o.brokers);
		goto err;
	}
	for (int i = 0; i < o.ntopics; i++) {
		int rf = o.brokers < 3 ? (int)o.brokers : 3;
		rd_kafka_resp_err_t e =
			rd_kafka_mock_topic_create(mc, o.topics[i], (int)o.partitions, rf);

		if (e) {
			sk_log(PROG, "topic %s: %s", o.topics[i], rd_kafka_err2str(e));
			goto err;
		}
	}

	bs = rd_kafka_mock_cluster_bootstraps(mc);
	if (!bs || !bootstrap_check(bs, why, sizeof(why))) {
		sk_log(PROG,
		       "the mock cluster's bootstrap list is not loopback (%s): refusing to run",
		       bs ? why : "none");
		goto err;
	}
	r = listeners_check();
	if (r < 0)
		goto err;
	if (r != o.brokers) {
		sk_log(PROG, "found %d listening sockets, expected %ld", r, o.brokers);
		goto err;
	}
	nl = snprintf(line, sizeof(line), "bootstrap=%s", bs);
	if (nl < 0 || (size_t)nl >= sizeof(line)) {
		sk_log(PROG, "bootstrap list too long");
		goto err;
	}
	if (o.ready_file && ready_file_write(o.ready_file, line))
		goto err;
	printf("%s\n", line);
	fflush(stdout);
	fprintf(stderr, PROG ": %ld broker(s) on %s, %d topic(s) of %ld partition(s); pid %ld\n",
		o.brokers, bs, o.ntopics, o.partitions, (long)getpid());

	broker_serve(mc, &set, o.max_seconds);
	rc = EXIT_SUCCESS;
err:
	if (o.ready_file && rc == EXIT_SUCCESS && unlink(o.ready_file) && errno != ENOENT)
		sk_log(PROG, "%s: %s", o.ready_file, strerror(errno));
	if (mc)
		rd_kafka_mock_cluster_destroy(mc);
	client_destroy(rk);
	return rc;
}

/* ----------------------------------------------------------------------------
 * produce
 * ------------------------------------------------------------------------- */

struct produce_opts {
	const char *bootstrap;
	const char *topic;
	long partition; /* RD_KAFKA_PARTITION_UA: by key */
	long timeout_ms;
};

static const struct opt produce_opts_table[] = {
	STR_OPT("bootstrap", produce_opts, bootstrap),
	STR_OPT("topic", produce_opts, topic),
	LONG_OPT("partition", produce_opts, partition, 0, MAX_PARTITIONS - 1, NULL),
	LONG_OPT("timeout-ms", produce_opts, timeout_ms, 1, MAX_TIMEOUT_MS, NULL),
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

static int
cmd_produce(int argc, char **argv)
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

	r = opts_parse(&produce_cmd, argc, argv, &o);
	if (r < 0)
		r = client_check(&produce_cmd, o.bootstrap, o.topic);
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

	snprintf(tmo, sizeof(tmo), "%ld", o.timeout_ms);
	conf = rd_kafka_conf_new();
	rd_kafka_conf_set_dr_msg_cb(conf, delivery_cb);
	rd_kafka_conf_set_opaque(conf, &st);
	rk = client_new(RD_KAFKA_PRODUCER, conf, o.bootstrap, PROG "-produce", conf_kv);
	if (!rk)
		return EXIT_FAILURE;

	for (int i = 0; i < n; i++) {
		const char *kv = argv[optind + i];
		const char *eq = strchr(kv, '=');
		size_t klen = (size_t)(eq - kv);
		rd_kafka_resp_err_t err = rd_kafka_producev(
			rk, RD_KAFKA_V_TOPIC(o.topic), RD_KAFKA_V_PARTITION((int32_t)o.partition),
			RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
			RD_KAFKA_V_KEY(klen ? kv : NULL, klen),
			RD_KAFKA_V_VALUE((void *)(eq + 1), strlen(eq + 1)),
			RD_KAFKA_V_OPAQUE((void *)(intptr_t)i), RD_KAFKA_V_END);

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
	client_destroy(rk);
	return st.delivered == n && queued == n ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ----------------------------------------------------------------------------
 * consume
 * ------------------------------------------------------------------------- */

struct consume_opts {
	const char *bootstrap;
	const char *topic;
	bool from_beginning;
	bool json;
	long max;	  /* 0: no limit */
	long timeout_ms;  /* idle limit, and the limit to reach the cluster */
	long max_seconds; /* overall limit */
};

static const struct opt consume_opts_table[] = {
	STR_OPT("bootstrap", consume_opts, bootstrap),
	STR_OPT("topic", consume_opts, topic),
	FLAG_OPT("from-beginning", consume_opts, from_beginning),
	LONG_OPT("max", consume_opts, max, 1, LONG_MAX, "a count >= 1"),
	LONG_OPT("timeout-ms", consume_opts, timeout_ms, 1, MAX_TIMEOUT_MS, NULL),
	LONG_OPT("max-seconds", consume_opts, max_seconds, 1, MAX_WAIT_S, NULL),
	FLAG_OPT("json", consume_opts, json),
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

static int
cmd_consume(int argc, char **argv)
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

	r = opts_parse(&consume_cmd, argc, argv, &o);
	if (r < 0)
		r = client_check(&consume_cmd, o.bootstrap, o.topic);
	if (r >= 0)
		return r;

	rk = client_new(RD_KAFKA_CONSUMER, rd_kafka_conf_new(), o.bootstrap, PROG "-consume",
			conf_kv);
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
	client_destroy(rk);
	return rc;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_main, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_main, stdout);
		return EXIT_SUCCESS;
	}
	if (!strcmp(argv[1], "broker"))
		return cmd_broker(argc - 1, argv + 1);
	if (!strcmp(argv[1], "produce"))
		return cmd_produce(argc - 1, argv + 1);
	if (!strcmp(argv[1], "consume"))
		return cmd_consume(argc - 1, argv + 1);
	sk_log(PROG, "unknown subcommand '%s' (broker, produce, consume)", argv[1]);
	return EXIT_USAGE;
}
