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
 *
 * This file: the table of subcommands and main(). kafka.h lists the other
 * files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_log.h"

#include "kafka.h"

static const char usage_main[] =
	"usage: seckill-kafka broker|produce|consume [OPTIONS]   (--help on each)\n"
	"\n"
	"A Kafka broker for tests and the demo (librdkafka's mock cluster, on\n"
	"127.0.0.1 only) and a producer and a consumer to drive and check it.\n";

/* The subcommands; each gets argv from its own name on. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} subcommands[] = {
	{"broker", kafka_cmd_broker},
	{"produce", kafka_cmd_produce},
	{"consume", kafka_cmd_consume},
};

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
	for (size_t i = 0; i < SK_ARRAY_SIZE(subcommands); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].run(argc - 1, argv + 1);
	sk_log(PROG, "unknown subcommand '%s' (broker, produce, consume)", argv[1]);
	return EXIT_USAGE;
}
