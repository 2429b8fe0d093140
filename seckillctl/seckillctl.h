/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to seckillctl (seckillctl/seckillctl*.c): the exit codes, the
 * command line as parsed, the command table's entry, the output helpers
 * every command uses, and the command handlers by file:
 *
 *   seckillctl.c             main, options, help texts, the command table
 *   seckillctl_client.c      the admin API client (HTTP/1.1 through libcurl)
 *   seckillctl_orders.c      order show, pay, refund; orders (queries)
 *   seckillctl_items.c       items, item (and how an item is printed)
 *   seckillctl_activities.c  activity add/list/show/close/pause/resume/extend,
 *                            stock add/remove
 *   seckillctl_reconcile.c   metrics, reconcile
 *   seckillctl_config.c      config check (no daemon: the file alone)
 *   seckillctl_live.c        status, live limits/log, deny load/show/clear, keys
 *
 * Single-threaded: nothing here is shared with another thread.
 */
#ifndef SECKILLCTL_H
#define SECKILLCTL_H

#include <stdbool.h>

#include <jansson.h>

#define PROG "seckillctl"

/* CTL_UNUSED - a parameter a command handler does not need (every one gets all three). */
#define CTL_UNUSED __attribute__((unused))

enum {
	EX_OK = 0,
	EX_ERR = 1,
	EX_USAGE = 2,
	EX_UNREACHABLE = 3,
	EX_NOTFOUND = 4,
	EX_CONFLICT = 5,
};

/* Options of single commands (activity add, stock add, order refund, orders), by index. */
enum copt {
	O_TOTAL,
	O_PRICE,
	O_LIMIT,
	O_NAME,
	O_START,
	O_END,
	O_PAY_TIMEOUT,
	O_REQUEST_ID,
	O_UNITS,
	O_ITEM,
	O_REQUEST,
	O_USER,
	O_STATE,
	O_AFTER,
	O_CLUSTER, /* a flag: no value ("1" when given) */
	O_MEMBER,
	O_HELD,
	O_TOTAL_FROM,
	O_FOR,
	O_USERS,
	O_PREFIXES,
	O_FILE,
	O_GATE,	    /* a flag */
	O_RESERVED, /* a flag */
	O__N
};

/* The admin API's default unix socket (seckill-control's --admin-socket default). */
#define CTL_SOCKET_DEFAULT "/run/seckill/admin.sock"
/* The environment variable that names the token file (never the token). */
#define CTL_TOKEN_FILE_ENV "SECKILLCTL_TOKEN_FILE"

struct ctl {
	unsigned port;		 /* TCP on 127.0.0.1; 0 = the unix socket */
	const char *socket_path; /* the unix socket when port is 0 */
	char *token;		 /* bearer token sent on TCP (malloc'd); NULL = none */
	bool json;
	const char *opt[O__N]; /* command options given, NULL if not */
};

/* What a command takes after its name (and subcommand): see arg_rules. */
enum ctl_args {
	ARGS_NONE,
	ARGS_ORDER_ID,
	ARGS_ITEM_ID,
	ARGS_ITEM_UNITS,
	ARGS_FILE,
	ARGS_ITEM_FILE,
	ARGS_WORD,
	ARGS_WORDS
};

/*
 * One command of the table (as nginx's ngx_command_t): "order show ID" is
 * {"order", "show", ARGS_ORDER_ID, ...}. A command with subcommands also has
 * an entry of its own, with sub and run NULL, that holds the group's help.
 */
struct ctl_cmd {
	const char *name;   /* first word */
	const char *sub;    /* second word, NULL for none */
	enum ctl_args args; /* the words after them */
	unsigned opts;	    /* command options it takes: 1u << enum copt */
	const char *help;   /* its --help text, also shown after a usage error */
	/* run - the command, its arguments checked as @args says; an exit code */
	int (*run)(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
};

/*
 * usage_error - print "seckillctl: " and the message, then @help, on
 * stderr. Returns EX_USAGE.
 */
int usage_error(const char *help, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* jnum - member @key of @o as an integer; 0 if absent or not an integer. */
long long jnum(const json_t *o, const char *key);
/* jstr - member @key of @o as a string; "-" if absent or not a string (static). */
const char *jstr(const json_t *o, const char *key);
/* print_time - "@label YYYY-MM-DD HH:MM:SS.mmm UTC" for @ns since the epoch, "-" if <= 0. */
void print_time(const char *label, long long ns);

/* seckillctl_items.c */

/* print_item - one item object of the API (GET /v1/items/ID, /v1/activities/ID). */
void print_item(const json_t *j);
/* show_one - GET @prefix@id (an item or an activity) and print it; an exit code. */
int show_one(const struct ctl *c, const char *prefix, const char *kind, const char *id);
/*
 * show_list - GET @path, whose answer lists objects under @key, and print
 * @header then a @row for each (under --json the answer as it came). An
 * exit code, as api() returns.
 */
int show_list(const struct ctl *c, const char *path, const char *key, const char *header,
	      void (*row)(const json_t *it));

/* The command handlers (struct ctl_cmd's run), by file. */
int cmd_order_show(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_order_pay(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_order_refund(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_orders(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_items(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_item(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_activity_add(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_activity_list(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_activity_show(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_activity_close(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
/* cmd_activity_archive - activity archive ID: POST /v1/activities/ID/archive. */
int cmd_activity_archive(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_activity_pause(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_activity_reserve(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_activity_extend(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_stock_add(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_stock_remove(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_metrics(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_reconcile(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_cluster_show(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_cluster_forget(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
/* seckillctl_config.c */
int cmd_config_check(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
/* seckillctl_live.c */
int cmd_status(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_live_limits(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_live_log(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_deny_load(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_deny_show(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_deny_clear(const struct ctl *c, const struct ctl_cmd *cmd, char **args);
int cmd_keys(const struct ctl *c, const struct ctl_cmd *cmd, char **args);

#endif /* SECKILLCTL_H */
