/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kafka_broker.c - seckill-kafka broker: librdkafka's mock cluster on
 * 127.0.0.1, checked to listen there only, with a ready file, driven by
 * signals (SIGUSR1 down, SIGUSR2 up, SIGINT/SIGTERM stop).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "sk_log.h"
#include "sk_parse.h"

#include "kafka.h"

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

	if (!kafka_topic_valid(arg)) {
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

int
kafka_cmd_broker(int argc, char **argv)
{
	static const char *const conf_kv[] = {"client.id", PROG "-broker", "log_level", "4", NULL};
	struct broker_opts o = {.brokers = 1, .partitions = 1};
	rd_kafka_mock_cluster_t *mc = NULL;
	rd_kafka_t *rk = NULL;
	char why[256], line[4096];
	const char *bs;
	sigset_t set;
	int rc = EXIT_FAILURE, r, nl;

	r = kafka_opts_parse(&broker_cmd, argc, argv, &o);
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
	if (!bs || !kafka_bootstrap_check(bs, why, sizeof(why))) {
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
	kafka_client_destroy(rk);
	return rc;
}
