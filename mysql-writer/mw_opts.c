/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_opts.c - seckill-mysql-writer's options: the table, the defaults, the
 * help text and the password file. Numbers go through include/sk_parse.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sk_config.h"
#include "sk_logfmt.h"
#include "sk_parse.h"

#include "mw_opts.h"

static const char usage_text[] =
	"usage: seckill-mysql-writer [run] [OPTION]...\n"
	"       seckill-mysql-writer migrate [OPTION]...\n"
	"       seckill-mysql-writer verify --store DIR [--json] [OPTION]...\n"
	"\n"
	"run      consume seckill.orders and seckill.events (one consumer group) and\n"
	"         write them into MariaDB, one transaction per poll batch; offsets are\n"
	"         committed after the transaction. Stops on SIGTERM or SIGINT (exit 0).\n"
	"migrate  apply mysql-writer/schema.sql (built in) and exit; run does it too.\n"
	"verify   compare the appliance's LMDB store (read-only) with MariaDB per item\n"
	"         and per order; print the differences; exit 0 when equal, 1 when not.\n"
	"\n"
	"MariaDB:\n"
	"  --socket PATH         unix socket (wins over --host/--port)\n"
	"  --host ADDR           server address (default 127.0.0.1)\n"
	"  --port N              server port (default 3306)\n"
	"  --user NAME           account (default root)\n"
	"  --password-file PATH  the password is the file's first line (default none)\n"
	"  --database NAME       database, created if missing (default seckill)\n"
	"Kafka (run):\n"
	"  --bootstrap LIST      bootstrap servers, host:port,... (required)\n"
	"  --group ID            consumer group (default seckill-mysql-writer)\n"
	"  --orders-topic NAME   (default seckill.orders)\n"
	"  --events-topic NAME   (default seckill.events)\n"
	"  --kafka-config PATH   librdkafka properties (security.protocol, sasl.*, ssl.*);\n"
	"                        mode 600 if it holds a secret (docs/kafka.md)\n"
	"run:\n"
	"  --batch N             most messages per transaction, 1..100000 (default 1000)\n"
	"  --metrics-port N      Prometheus text on http://127.0.0.1:N/metrics (default off)\n"
	"  --default-limit N     per-user limit of items whose activity event carries\n"
	"                        none (default 1: one live order per user and item)\n"
	"  --max-seconds S       stop after S seconds, also while MariaDB is away or a\n"
	"                        batch fails (default 0: never)\n"
	"  --park-final-seconds S  a message parked for its item still blocked S seconds\n"
	"                        after, every partition consumed, is parked for good:\n"
	"                        no longer retried (default 300)\n"
	"verify:\n"
	"  --store DIR           the appliance's LMDB store (opened read-only)\n"
	"  --json                one JSON object instead of text\n"
	"  --max-diffs N         differences listed (default 20)\n"
	"all:\n"
	"  --config FILE         read the options from FILE's [mysql], [kafka] and\n"
	"                        [store] path (seckill.ini); the options given here\n"
	"                        override it\n"
	"  --log-level LEVEL     debug, info (default), notice, warn, error or crit: the\n"
	"                        lowest level of the log lines written on stderr\n"
	"                        (logfmt, docs/logs.md)\n"
	"  --help                this text\n"
	"\n"
	"Exit status: 0 success (verify: equal), 1 failure (verify: different), 2 usage.\n"
	"See docs/mysql.md.\n";

void
mw_opts_usage(FILE *f)
{
	fputs(usage_text, f);
}

/* Option kinds: a string, or a number in [lo, hi] of a given width. */
enum kind { K_STR, K_U32, K_U64, K_FLAG, K_LEVEL };

static const struct opt {
	const char *name;
	enum kind kind;
	size_t off;
	uint64_t lo, hi;
} opts[] = {
	{"socket", K_STR, offsetof(struct mw_opts, socket), 0, 0},
	{"host", K_STR, offsetof(struct mw_opts, host), 0, 0},
	{"port", K_U32, offsetof(struct mw_opts, port), 1, 65535},
	{"user", K_STR, offsetof(struct mw_opts, user), 0, 0},
	{"password-file", K_STR, offsetof(struct mw_opts, password_file), 0, 0},
	{"database", K_STR, offsetof(struct mw_opts, database), 0, 0},
	{"bootstrap", K_STR, offsetof(struct mw_opts, bootstrap), 0, 0},
	{"group", K_STR, offsetof(struct mw_opts, group), 0, 0},
	{"orders-topic", K_STR, offsetof(struct mw_opts, orders_topic), 0, 0},
	{"events-topic", K_STR, offsetof(struct mw_opts, events_topic), 0, 0},
	{"kafka-config", K_STR, offsetof(struct mw_opts, kafka_config), 0, 0},
	{"batch", K_U32, offsetof(struct mw_opts, batch_max), 1, 100000},
	{"metrics-port", K_U32, offsetof(struct mw_opts, metrics_port), 0, 65535},
	{"default-limit", K_U32, offsetof(struct mw_opts, default_limit), 1, UINT32_MAX},
	{"max-seconds", K_U64, offsetof(struct mw_opts, max_seconds), 0, UINT32_MAX},
	{"park-final-seconds", K_U32, offsetof(struct mw_opts, park_final_s), 0, 86400 * 365},
	{"store", K_STR, offsetof(struct mw_opts, store), 0, 0},
	{"json", K_FLAG, offsetof(struct mw_opts, json), 0, 0},
	{"max-diffs", K_U32, offsetof(struct mw_opts, max_diffs), 0, 1000000},
	{"log-level", K_LEVEL, 0, 0, 0},
	{"help", K_FLAG, 0, 0, 0},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

/* store_opt - check @arg for option @op and store it in @o (--log-level: set at once). */
static int
store_opt(const struct opt *op, struct mw_opts *o, const char *arg)
{
	char *field = (char *)o + op->off;
	enum sk_log_level lv;

	switch (op->kind) {
	case K_STR:
		if (*arg == '\0')
			break;
		*(const char **)field = arg;
		return 0;
	case K_U32:
		if (sk_parse_u32(arg, (uint32_t)op->lo, (uint32_t)op->hi, (uint32_t *)field))
			return 0;
		break;
	case K_U64:
		if (sk_parse_u64(arg, op->lo, op->hi, (uint64_t *)field))
			return 0;
		break;
	case K_FLAG:
		*(bool *)field = true;
		return 0;
	case K_LEVEL:
		if (sk_logfmt_level_parse(arg, &lv) != 0)
			break;
		sk_logfmt_set_level(lv);
		return 0;
	}
	sk_logf(SK_LOG_ERROR, "usage", "option=--%s value=%s msg=\"expected %s\"", op->name, arg,
		op->kind == K_STR     ? "a non-empty string"
		: op->kind == K_LEVEL ? "debug, info, notice, warn, error or crit"
				      : "a number in range (see --help)");
	return -EINVAL;
}

/* read_password - the first line of @o->password_file into @o->password. */
static int
read_password(struct mw_opts *o)
{
	FILE *f = fopen(o->password_file, "r");
	size_t n;

	if (f == NULL) {
		sk_logf(SK_LOG_ERROR, "config", "option=--password-file path=%s err=%s",
			o->password_file, strerror(errno));
		return -EINVAL;
	}
	if (fgets(o->password, sizeof(o->password), f) == NULL)
		o->password[0] = '\0';
	fclose(f);
	n = strcspn(o->password, "\r\n");
	o->password[n] = '\0';
	return 0;
}

int
mw_opts_parse(struct mw_opts *o, const char *cmd, int argc, char **argv)
{
	struct option lo[NOPTS + 1];
	/* The merged argv outlives the call (o's strings point into it): kept
	 * here too, so that it is reachable until exit, and freed by the next
	 * call. */
	static struct sk_config_argv *merged;
	char err[SK_CONFIG_ERR_MAX];
	bool help = false;
	int c, idx;

	*o = (struct mw_opts){.host = "127.0.0.1",
			      .port = 3306,
			      .user = "root",
			      .database = "seckill",
			      .group = "seckill-mysql-writer",
			      .orders_topic = "seckill.orders",
			      .events_topic = "seckill.events",
			      .batch_max = 1000,
			      .park_final_s = 300,
			      .default_limit = 1,
			      .max_diffs = 20};
	for (size_t i = 0; i < NOPTS; i++)
		lo[i] = (struct option){opts[i].name,
					opts[i].kind == K_FLAG ? no_argument : required_argument,
					NULL, (int)i};
	lo[NOPTS] = (struct option){0};
	free(merged);
	if (sk_config_argv_merge(argc, argv, SK_CONFIG_MYSQL_WRITER, &merged, err, sizeof(err)) !=
	    0) {
		sk_logf(SK_LOG_ERROR, "config", "cmd=%s err=\"%s\"", cmd, err);
		return -EINVAL;
	}
	o->args = merged;
	argc = merged->argc;
	argv = merged->argv;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, &idx)) != -1) {
		if (c == '?' || c == ':') {
			sk_logf(SK_LOG_ERROR, "usage",
				"cmd=%s option=%s msg=\"unknown option or missing value (see "
				"--help)\"",
				cmd, argv[optind - 1]);
			return -EINVAL;
		}
		if (!strcmp(opts[c].name, "help")) {
			help = true;
			continue;
		}
		if (store_opt(&opts[c], o, optarg) != 0)
			return -EINVAL;
	}
	if (help) {
		mw_opts_usage(stdout);
		return 1;
	}
	if (optind < argc) {
		sk_logf(SK_LOG_ERROR, "usage",
			"cmd=%s arg=%s msg=\"unexpected argument (see --help)\"", cmd,
			argv[optind]);
		return -EINVAL;
	}
	if (!strcmp(cmd, "run") && o->bootstrap == NULL) {
		sk_logf(SK_LOG_ERROR, "usage",
			"cmd=run msg=\"--bootstrap is required (see --help)\"");
		return -EINVAL;
	}
	if (!strcmp(cmd, "verify") && o->store == NULL) {
		sk_logf(SK_LOG_ERROR, "usage",
			"cmd=verify msg=\"--store is required (see --help)\"");
		return -EINVAL;
	}
	if (!strcmp(cmd, "run") && o->kafka_config != NULL) {
		char err[SK_KAFKA_CONF_ERR_MAX];

		if (sk_kafka_props_load(&o->kafka_props, o->kafka_config, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "usage", "option=--kafka-config err=\"%s\"", err);
			return -EINVAL;
		}
	}
	return o->password_file != NULL ? read_password(o) : 0;
}

void
mw_opts_db(const struct mw_opts *o, struct mw_db_conf *c)
{
	*c = (struct mw_db_conf){.socket = o->socket,
				 .host = o->host,
				 .port = o->port,
				 .user = o->user,
				 .password = o->password_file != NULL ? o->password : NULL,
				 .database = o->database};
}
