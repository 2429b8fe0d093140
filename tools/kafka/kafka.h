/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * seckill-kafka's shared parts (private to tools/kafka/; the manual is
 * docs/kafka.md): the limits, the option tables of the subcommands, the
 * librdkafka client handles, and the three subcommands.
 *
 * The files: seckill-kafka.c (main: the subcommand table), kafka_opts.c
 * (option tables, topic names, the 127.0.0.1-only bootstrap list),
 * kafka_client.c (librdkafka handles with the loopback guard),
 * kafka_broker.c (the mock cluster), kafka_produce.c, kafka_consume.c.
 *
 * Every function here runs on the main thread of the process; librdkafka's
 * own threads call only the callbacks named where they are installed.
 * Messages go to stderr through sk_log(PROG, ...).
 */
#ifndef SK_KAFKA_TOOL_H
#define SK_KAFKA_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "sk_common.h"

/* Exit status of a usage error (0 success, 1 runtime failure). */
#define EXIT_USAGE 2
#define PROG	   "seckill-kafka"

/* Caps of the options. */
#define MAX_TOPICS     64
#define MAX_BROKERS    16
#define MAX_PARTITIONS 1024
#define MAX_MESSAGES   100000
#define MAX_TIMEOUT_MS 600000
#define MAX_WAIT_S     86400

/*
 * A subcommand's options are a table: each entry names a long option, how
 * its value is checked and where in the subcommand's options it is stored.
 * kafka_opts_parse() runs getopt_long() over it, so every subcommand says
 * what is wrong in the same words.
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

/* Options of one subcommand at most, --help not counted. */
#define MAX_OPTS 8
#define OPT_VAL	 0x100 /* getopt_long() returns this + the option's index */

/* A subcommand: its name, --help text and option table. */
struct cmd {
	const char *name;  /* the subcommand */
	const char *usage; /* its --help */
	bool operands;	   /* takes arguments after the options */
	const struct opt *opts;
	size_t nopts; /* at most MAX_OPTS; --help comes after them */
};

/** now_ms - CLOCK_MONOTONIC in ms: the clock of the tool's time limits. */
static inline int64_t
now_ms(void)
{
	return sk_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

/* ---------------------------------------------------------------- kafka_opts.c */

/** kafka_topic_valid - whether @p t is a legal Kafka topic name. */
bool kafka_topic_valid(const char *t);

/**
 * kafka_bootstrap_check - whether @p list is one or more "127.0.0.1:PORT"
 * separated by commas, and nothing else. On failure names the bad entry in
 * @p why (@p whylen bytes, always NUL-terminated).
 */
bool kafka_bootstrap_check(const char *list, char *why, size_t whylen);

/**
 * kafka_opts_parse - fills @p o (which holds the defaults) from @p argv by
 * the table of @p cmd (getopt_long(); optind is left after the options).
 * String options point into @p argv.
 * @return -1 to go on, or the exit status after printing why: --help prints
 *         the usage on stdout (0), a usage error says why on stderr (2).
 */
int kafka_opts_parse(const struct cmd *cmd, int argc, char **argv, void *o);

/**
 * kafka_client_check - a client's required --bootstrap (127.0.0.1 only) and
 * --topic, after kafka_opts_parse().
 * @return -1 to go on, or EXIT_USAGE after saying why.
 */
int kafka_client_check(const struct cmd *cmd, const char *bootstrap, const char *topic);

/* ---------------------------------------------------------------- kafka_client.c */

/**
 * kafka_new - a @p type handle of @p conf with the @p kv pairs (name, value,
 * ..., NULL) set. Takes @p conf over, also on failure.
 * @return the handle, or NULL (reported) on failure.
 */
rd_kafka_t *kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, const char *const *kv);

/**
 * kafka_client_new - kafka_new() for a client of @p bootstrap (already
 * checked) named @p client_id, IPv4 only, with a connect callback that
 * refuses any address but 127.0.0.1 (it runs on librdkafka's threads).
 * With @p config (--kafka-config, or NULL) its librdkafka properties come
 * first (sk_kafka_conf.h; the client's own settings and
 * broker.address.family are refused in it). Takes @p conf over.
 * @return the handle, or NULL (reported: a bad --kafka-config names its
 *         file and line).
 */
rd_kafka_t *kafka_client_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, const char *bootstrap,
			     const char *client_id, const char *const *kv, const char *config);

/** kafka_client_destroy - destroys @p rk and waits (5 s at most) for its threads. */
void kafka_client_destroy(rd_kafka_t *rk);

/* ---------------------------------------------------------------- the subcommands */

/**
 * kafka_cmd_broker, kafka_cmd_produce, kafka_cmd_consume - run a subcommand;
 * @p argv[0] is its name. See docs/kafka.md.
 * @return the exit status: 0 success, 1 runtime failure, 2 usage error.
 */
int kafka_cmd_broker(int argc, char **argv);
int kafka_cmd_produce(int argc, char **argv);
int kafka_cmd_consume(int argc, char **argv);

#endif /* SK_KAFKA_TOOL_H */
