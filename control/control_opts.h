/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_opts.h - seckill-control's options, parsed from argv after the
 * EAL's "--". Private to the seckill-control program (main.c).
 */
#ifndef CONTROL_OPTS_H
#define CONTROL_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PROG "seckill-control"

/* Kafka's default retention; the request table's default age. */
#define PAY_AGE_DEFAULT_S (7 * 86400)

struct sk_config_argv;

/* What the command line and the --config file asked for. Strings point
 * into argv or into @args. */
struct opts {
	struct sk_config_argv *args; /* the file's options and argv (valid until the next call) */
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
	/* The store's map grown online (sk_store_map.h); 0 = the default. */
	uint32_t map_grow_at;	     /* percent used */
	uint64_t map_max_mb;	     /* 0 = no cap but the disk */
	uint64_t map_step_mb;	     /* 0 = double */
	int64_t retention_keep_days; /* 0 = no automatic archive */
};

/**
 * control_usage - print the usage text on @p f. Thread-safe (stdio).
 */
void control_usage(FILE *f);

/**
 * control_parse_opts - parse @p argc / @p argv (what follows the EAL's
 * "--") into @p o, defaults included: first the keys of the --config FILE
 * given (sk_config_argv_merge()), then the options, which override it.
 * Then check the options against each other (a TCP listener needs a token file, --kafka needs a
 * payments key file, the request table must outlast the payments topic's retention...). Not
 * thread-safe (getopt_long).
 * @return 0; 1 for --help (printed on stdout); -1 on a bad option or a bad
 *         file, with one line logged that names it (event=usage; event=config
 *         with the file's error: "FILE:LINE: section.key: why"). @p o's
 *         strings stay valid until the next call.
 */
int control_parse_opts(int argc, char **argv, struct opts *o);

#endif /* CONTROL_OPTS_H */
