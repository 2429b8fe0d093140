/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kafka_opts.c - seckill-kafka's command lines: the option-table parser
 * shared by the subcommands, topic names, the 127.0.0.1-only bootstrap list.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_log.h"
#include "sk_parse.h"

#include "kafka.h"

/* kafka_topic_valid - whether @t is a legal Kafka topic name. */
bool
kafka_topic_valid(const char *t)
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
 * kafka_bootstrap_check - whether @list is one or more "127.0.0.1:PORT" separated
 * by commas, and nothing else. On failure names the bad entry in @why.
 */
bool
kafka_bootstrap_check(const char *list, char *why, size_t whylen)
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
 * kafka_opts_parse - fills @o (which holds the defaults) from @argv by the table
 * of @cmd. -1 to go on, or the exit status after printing why: --help
 * prints the usage on stdout (0), a usage error says why on stderr (2).
 */
int
kafka_opts_parse(const struct cmd *cmd, int argc, char **argv, void *o)
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
 * kafka_client_check - a client's required --bootstrap (127.0.0.1 only) and
 * --topic, after kafka_opts_parse(). -1 to go on, or EXIT_USAGE after saying why.
 */
int
kafka_client_check(const struct cmd *cmd, const char *bootstrap, const char *topic)
{
	char why[256];

	if (!bootstrap || !topic) {
		sk_log(PROG, "%s: --bootstrap and --topic are required", cmd->name);
		return EXIT_USAGE;
	}
	if (!kafka_bootstrap_check(bootstrap, why, sizeof(why))) {
		sk_log(PROG, "--bootstrap: %s (only 127.0.0.1 is allowed)", why);
		return EXIT_USAGE;
	}
	if (!kafka_topic_valid(topic)) {
		sk_log(PROG, "--topic: '%s' is not a topic name", topic);
		return EXIT_USAGE;
	}
	return -1;
}
