/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_opts.h - seckill-mysql-writer's command line: the options of every
 * subcommand (run, migrate, verify), their defaults, --help, and the
 * MariaDB password file.
 *
 * For the main thread at start-up; not thread-safe (getopt).
 */
#ifndef MW_OPTS_H
#define MW_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mw_db.h"
#include "sk_kafka_conf.h"

/** The program's name in log lines. */
#define MW_PROG "seckill-mysql-writer"

struct sk_config_argv;

/** Every option; strings point into argv, into @c args or at constants. */
struct mw_opts {
	struct sk_config_argv *args; /**< --config FILE's options and argv (until the next parse) */
	/* MariaDB */
	const char *socket;	   /**< --socket PATH (wins over host/port) */
	const char *host;	   /**< --host ADDR, default 127.0.0.1 */
	uint32_t port;		   /**< --port N, default 3306 */
	const char *user;	   /**< --user NAME, default root */
	const char *password_file; /**< --password-file PATH: its first line */
	const char *database;	   /**< --database NAME, default seckill */
	char password[256];	   /**< read from password_file */
	/* Kafka */
	const char *bootstrap;		    /**< --bootstrap LIST (run: required) */
	const char *group;		    /**< --group ID, default seckill-mysql-writer */
	const char *orders_topic;	    /**< --orders-topic, default seckill.orders */
	const char *events_topic;	    /**< --events-topic, default seckill.events */
	const char *kafka_config;	    /**< --kafka-config PATH: librdkafka properties */
	struct sk_kafka_props *kafka_props; /**< loaded from kafka_config (run only; owned) */
	/* run */
	uint32_t batch_max;	/**< --batch N: messages per transaction, default 1000 */
	uint32_t metrics_port;	/**< --metrics-port N on 127.0.0.1; 0 = none */
	uint32_t default_limit; /**< --default-limit N: per-user limit if the
				     activity event has none, default 1 */
	uint64_t max_seconds;	/**< --max-seconds S: stop after S s; 0 = never */
	uint32_t park_final_s;	/**< --park-final-seconds S: a row parked for its
				     item still blocked S s after, caught up,
				     is final; default 300 */
	/* verify */
	const char *store;  /**< --store DIR: the appliance's LMDB store */
	bool json;	    /**< --json */
	uint32_t max_diffs; /**< --max-diffs N: differences printed, default 20 */
};

/**
 * mw_opts_parse - parse the options of subcommand @p cmd ("run",
 * "migrate" or "verify") from @p argv (argv[0] is the subcommand or the
 * program), check them, read the password file. The keys of a --config
 * FILE ([mysql], [kafka], [store] path) come first (sk_config_argv_merge()):
 * the options given override them. @p o's strings stay valid until the
 * next call.
 * @return 0, 1 (--help was printed on stdout: exit 0), or -EINVAL (a usage
 *         error or the file's error was logged: exit 2).
 */
int mw_opts_parse(struct mw_opts *o, const char *cmd, int argc, char **argv);

/** mw_opts_usage - the help text on @p f. */
void mw_opts_usage(FILE *f);

/** mw_opts_db - the MariaDB part of @p o as a connection config. */
void mw_opts_db(const struct mw_opts *o, struct mw_db_conf *c);

#endif /* MW_OPTS_H */
