/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl: the operators' command line, a thin client of the control
 * plane's admin API (sk_admin.h) over HTTP/1.1 on 127.0.0.1 or a unix
 * socket, through libcurl: one easy handle a request, never a proxy.
 *
 * This file: main, the options, the help texts, the command table and
 * its dispatch, the output helpers; the client and the commands are in
 * the files seckillctl.h lists.
 *
 * Exit codes: 0 ok, 1 error or reconcile mismatch, 2 usage, 3 the daemon
 * is unreachable, 4 not found, 5 conflict (e.g. paying a cancelled order).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "sk_common.h"
#include "sk_log.h"
#include "sk_parse.h"
#include "seckillctl.h"
#include "seckillctl_client.h"

static const char *const copt_names[O__N] = {
	[O_TOTAL] = "--total",
	[O_PRICE] = "--price",
	[O_LIMIT] = "--limit",
	[O_NAME] = "--name",
	[O_START] = "--start",
	[O_END] = "--end",
	[O_UNITS] = "--units",
	[O_ITEM] = "--item",
	[O_REQUEST] = "--request",
	[O_PAY_TIMEOUT] = "--pay-timeout",
	[O_REQUEST_ID] = "--request-id",
	[O_USER] = "--user",
	[O_STATE] = "--state",
	[O_AFTER] = "--after",
	[O_CLUSTER] = "--cluster",
	[O_MEMBER] = "--member",
	[O_HELD] = "--held",
	[O_TOTAL_FROM] = "--total-from",
	[O_FOR] = "--for",
	[O_USERS] = "--users",
	[O_PREFIXES] = "--prefixes",
	[O_FILE] = "--file",
	[O_GATE] = "--gate",
	[O_RESERVED] = "--reserved-only",
};

/* is_flag - option @k takes no value. */
static bool
is_flag(int k)
{
	return k == O_CLUSTER || k == O_GATE || k == O_RESERVED;
}

/* ------------------------------------------------------------------ output */

static const char *const main_help =
	"usage: " PROG " [--socket PATH | --port N [--token-file PATH]] [--json] COMMAND [ARGS]\n"
	"\n"
	"Talks to seckill-control's admin API (default: the unix socket\n" CTL_SOCKET_DEFAULT ").\n"
	"\n"
	"commands:\n"
	"  order show ID     an order: state, deadline, every line\n"
	"  order pay ID      record a payment (idempotent)\n"
	"  order refund ID   refund units of a paid order (once per request id)\n"
	"  orders --item I --user U | --state S [--limit N] [--after ID]\n"
	"                    an item's orders by buyer or by state (from LMDB)\n"
	"  items             every item: stock counters and the store's ledger\n"
	"  item ID           one item\n"
	"  activity add ID --total N [...]   create a sale (see activity --help)\n"
	"  activity list     every activity: definition, stock and ledger\n"
	"  activity show ID  one activity\n"
	"  activity close ID close a sale for good\n"
	"  activity pause ID | resume ID   stop selling for a while, and go on\n"
	"  activity extend ID --end TIME   a later end\n"
	"  activity reserve ID FILE   add the user ids of FILE (- for stdin) to the\n"
	"                    reservation set of a reserved-only sale\n"
	"  stock add ID N    restock: N more units of item ID\n"
	"  stock remove ID N take N unsold units of item ID off the sale\n"
	"  metrics           the Prometheus metrics, as served\n"
	"  reconcile         check each item's counters against each other and LMDB\n"
	"                    (and a cluster item's Redis pool: total == free + leases)\n"
	"  cluster show ID   a cluster item: the Redis pool, leases by member, sold-out\n"
	"  cluster forget ID --member M --held N   member M is gone for good\n"
	"  config check FILE [--for D,...]   validate a configuration file\n"
	"  status            the live settings: generation, limits, log level, deny\n"
	"                    lists, each lcore's generation\n"
	"  live limits KEY=N ...   change rate limits now (see live --help)\n"
	"  live log LEVEL    the dataplane's log level now\n"
	"  deny load [--users FILE] [--prefixes FILE]   replace a deny list\n"
	"  deny show | deny clear   the deny lists' sizes; empty them\n"
	"  keys add KID --file FILE | keys sign KID | keys default KID | keys remove KID\n"
	"                    token keys by kid (rotation: see keys --help)\n"
	"\n"
	"options (anywhere on the line):\n"
	"  --socket PATH     admin API unix socket (default " CTL_SOCKET_DEFAULT ")\n"
	"  --port N          admin API on 127.0.0.1:N (TCP) instead of the socket\n"
	"  --token-file PATH the bearer token for TCP, read from this file (also\n"
	"                    from the file named by $" CTL_TOKEN_FILE_ENV "); never\n"
	"                    the token itself on the command line\n"
	"  --json            print the API's JSON instead of text\n"
	"  --help            help (also after any command)\n"
	"\n"
	"exit codes: 0 ok, 1 error or mismatch, 2 usage, 3 daemon unreachable,\n"
	"            4 not found, 5 conflict\n";

static const char *const order_help =
	"usage: " PROG " order show ID\n"
	"       " PROG " order pay ID\n"
	"       " PROG " order refund ID [--units N] [--item I] [--request R]\n"
	"\n"
	"show: the order as stored in LMDB (state, payment deadline, lines), or its\n"
	"      status in the arena while it is queued; exit 4 if unknown.\n"
	"pay:  confirmed -> paid. Paying a paid order succeeds again (idempotent);\n"
	"      a cancelled, failed or still-queued order exits 5; unknown exits 4.\n"
	"refund: units of a paid order back on sale; see 'order refund --help'.\n";

static const char *const config_help =
	"usage: " PROG " config check FILE [--for DAEMON[,DAEMON...]]\n"
	"\n"
	"Reads FILE (seckill.ini) as the daemons do, with the same code: every\n"
	"section and key, the values and the rules between keys. Prints 'FILE: ok'\n"
	"and exits 0, or prints the daemons' error (FILE:LINE: section.key: why) and\n"
	"exits 1. --for checks only what the named daemons read: dataplane, control,\n"
	"mysql-writer (default: all three; a MySQL writer's host has no [port0]).\n"
	"No daemon is contacted.\n";

static const char *const order_show_help = "usage: " PROG " order show ID\n"
					   "\n"
					   "Show order ID (decimal): state, deadline, lines.\n"
					   "Exit 4 if the order is unknown.\n";

static const char *const order_refund_help =
	"usage: " PROG " order refund ID [--units N] [--item I] [--request R]\n"
	"\n"
	"Refund N units of paid order ID (default: everything left), of the line of\n"
	"item I (a cart needs --item when --units is given; without both, every\n"
	"line). The units go back on sale; the order becomes refunded when none is\n"
	"left. Applied once per request id R (1-64 printable characters, no blank,\n"
	"'\"' or '\\'); without --request one is made up and printed: rerun with it\n"
	"to retry a refund whose answer was lost. Exit 0 when refunded (now or by an\n"
	"earlier run of R), 5 when refused (not paid, more units than remain, no\n"
	"such line, R used for another refund), 4 if the order is unknown.\n";

static const char *const orders_help =
	"usage: " PROG " orders --item I --user U [--state S] [--limit N] [--after ID]\n"
	"       " PROG " orders --item I --state S [--limit N] [--after ID]\n"
	"\n"
	"The orders of item I in LMDB: the buyer U's (every state), or those in\n"
	"state S (confirmed, paid, cancelled, refunded), or both filters at once.\n"
	"Read from the store's indexes: a page costs the same in a sale of a\n"
	"million orders. Ascending order ids (dataplane run, lcore, sequence),\n"
	"N per page (1..1000, default 100); when more remain the last line says\n"
	"so and names the --after ID that reads the next page. Orders still queued\n"
	"in the dataplane are not in LMDB yet ('order show ID' finds them).\n"
	"Exit 0 (also for no order), 2 bad input, 3 daemon unreachable.\n";

static const char *const order_pay_help =
	"usage: " PROG " order pay ID\n"
	"\n"
	"Record the payment of order ID. Exit 0 when paid (now or before), 5 when\n"
	"the order was cancelled or failed or is still queued (retry), 4 if unknown.\n";

static const char *const items_help =
	"usage: " PROG " items\n"
	"\n"
	"Every item: arena counters (total, added, remaining, sold,\n"
	"returned, sold-out flag) and the LMDB ledger (live, paid).\n";

static const char *const item_help = "usage: " PROG " item ID\n"
				     "\n"
				     "One item with its activity and ledger. Exit 4 if unknown.\n";

static const char *const metrics_help = "usage: " PROG " metrics\n"
					"\n"
					"Print /metrics (Prometheus text format).\n";

static const char *const reconcile_help =
	"usage: " PROG " reconcile\n"
	"\n"
	"For every item in the arena check\n"
	"  total + added - removed == remaining + sold - returned   (stock accounting)\n"
	"  LMDB live units == sold - returned                       (store vs arena)\n"
	"  added, removed == the LMDB activity's                    (restocks, removals)\n"
	"and for every cluster item (docs/cluster.md), from its Redis pool\n"
	"  total == free + the leases of every member               (global sum)\n"
	"  this member's lease == what its LMDB says it holds       (member vs pool)\n"
	"(run it against each member's control plane to check every member).\n"
	"The check is repeated up to 3 times, 300 ms apart, so orders still queued\n"
	"in the rings do not count as a mismatch. Exit 1 on a mismatch.\n";

static const char *const cluster_help =
	"usage: " PROG " cluster show ID\n"
	"       " PROG " cluster forget ID --member M --held N\n"
	"\n"
	"The cluster item ID as this member sees it (docs/cluster.md): the Redis\n"
	"pool (total, free, epoch, fenced, sold-out flag and version), the leases\n"
	"of every member, this member's durable word (LMDB) and pending op, and\n"
	"the two checks of 'reconcile'. Exit 4 if this control plane is not a\n"
	"cluster member or does not follow item ID.\n"
	"\n"
	"forget: member M is gone for good (its appliance will not come back):\n"
	"it held N units of item ID (its last 'cluster show', or its LMDB). The\n"
	"units stay counted as held; a pool fenced after Redis lost writes is\n"
	"rebuilt without waiting for M. Exit 4 no such item or member, 5 a member\n"
	"forgetting itself or more held than the total, 1 Redis unreachable.\n";

static const char *const activity_help =
	"usage: " PROG " activity add ID --total N|--total-from KEY [--price P] [--limit L]\n"
	"                            [--name TEXT] [--start TIME] [--end TIME]\n"
	"                            [--pay-timeout S] [--cluster] [--gate]\n"
	"                            [--reserved-only]\n"
	"       " PROG " activity list\n"
	"       " PROG " activity show ID\n"
	"       " PROG " activity close ID\n"
	"       " PROG " activity pause ID\n"
	"       " PROG " activity resume ID\n"
	"       " PROG " activity extend ID --end TIME\n"
	"       " PROG " activity reserve ID FILE\n"
	"\n"
	"An activity puts item ID on sale: stored in LMDB, then in the dataplane's\n"
	"item table at once (buyers get 425 until its start). Its definition does\n"
	"not change afterwards: add it again with the same definition succeeds\n"
	"(idempotent), with another one exits 5. A running sale can be restocked\n"
	"('stock add'), given back unsold units ('stock remove'), paused and\n"
	"resumed, extended to a later end, or closed for good.\n"
	"To retry an add safely, leave --start out (the sale opens now, or keeps\n"
	"its start) or give an absolute TIME: now and +N are new times each run.\n";

static const char *const activity_pause_help =
	"usage: " PROG " activity pause ID\n"
	"       " PROG " activity resume ID\n"
	"\n"
	"pause: stop selling item ID for now. Stored in LMDB first (a restarted\n"
	"control plane or dataplane keeps it paused), then the dataplane answers\n"
	"every buy 503 {\"status\":\"paused\"} with Retry-After: 1 and sells\n"
	"nothing (a winner's retry still gets its order back); GET /v1/items/ID\n"
	"says \"paused\". Orders, payments, timeouts, restocks and removals go on.\n"
	"resume: selling again, with the units left. Pausing a paused sale or\n"
	"resuming a selling one succeeds (unchanged). Exit 4 unknown, 5 closed or\n"
	"ended (its end has passed).\n";

static const char *const activity_extend_help =
	"usage: " PROG " activity extend ID --end TIME\n"
	"\n"
	"Move the end of the sale of item ID later: stored in LMDB, then the\n"
	"dataplane sells until the new end. TIME: now, +N[smhd] (from now), unix\n"
	"seconds, YYYY-MM-DDTHH:MM:SSZ (UTC), or never. Only later than the\n"
	"current end (exit 5 otherwise); the same end again succeeds (unchanged),\n"
	"so give an absolute TIME to retry safely (+N is a new time each run).\n"
	"A sale whose end has passed stays ended (exit 5: create a new activity);\n"
	"a closed one exits 5; unknown exits 4.\n";

static const char *const activity_add_help =
	"usage: " PROG " activity add ID --total N | --total-from KEY [options]\n"
	"\n"
	"Create the activity of item ID (1..4294967295).\n"
	"  --total N          units on sale (1..2^48); this or --total-from\n"
	"  --total-from KEY   the total read from Redis key KEY (a shop's\n"
	"                     stock:{sku}: a decimal count), once, by a control\n"
	"                     plane started with --redis\n"
	"  --price P          unit price in minor units (cents), default 0\n"
	"  --limit L          units one user may buy, 1..1000, default 1\n"
	"  --name TEXT        display name, at most 64 bytes\n"
	"  --start TIME       when the sale opens, default now\n"
	"  --end TIME         when it ends, default never\n"
	"  --pay-timeout S    seconds an order may stay unpaid (0: the daemon's default)\n"
	"  --cluster          a cluster sale (docs/cluster.md): --total is the global\n"
	"                     total in Redis, this appliance sells what it leases;\n"
	"                     add it with the same definition on every member\n"
	"  --gate             buyers need the gate claim of the item in their token\n"
	"                     (set by the shop's captcha or quiz): 403 gate without\n"
	"  --reserved-only    only users loaded with 'activity reserve' may buy:\n"
	"                     403 not_reserved for the others\n"
	"TIME: now, +N[smhd] (from now), unix seconds, or YYYY-MM-DDTHH:MM:SSZ (UTC);\n"
	"--end also takes 'never'.\n"
	"Exit 0 created (or already there, same definition), 5 exists otherwise or\n"
	"closed, 2 bad input, 1 no room in the item table.\n";

static const char *const activity_list_help =
	"usage: " PROG " activity list\n"
	"\n"
	"Every activity: id, name, state, stock, price, window, LMDB ledger.\n";

static const char *const activity_show_help =
	"usage: " PROG " activity show ID\n"
	"\n"
	"One activity with its stock counters and ledger. Exit 4 if unknown.\n";

static const char *const activity_close_help =
	"usage: " PROG " activity close ID\n"
	"\n"
	"Close the sale of item ID for good: every later buy is refused (403);\n"
	"its orders, payments and deadlines go on. Closing twice succeeds.\n"
	"Exit 4 if unknown.\n";

static const char *const activity_reserve_help =
	"usage: " PROG " activity reserve ID FILE\n"
	"\n"
	"Add the user ids of FILE (one decimal id per line, 1..2^64-1; empty\n"
	"lines skipped; - reads stdin) to the reservation set of item ID: of a\n"
	"reserved_only sale, only these users may buy. The whole file is checked\n"
	"first (a bad line is named, nothing is sent); then it goes in batches\n"
	"that fit the admin API's body limit, each added in memory and in LMDB.\n"
	"Ids already in the set count once. Prints the ids added and the set's\n"
	"total (--json: the last answer, with \"added\" over all batches).\n"
	"Exit 4 if the activity is unknown, 2 for a bad line, 1 if the sets are\n"
	"full (raise seckill.reserve_mb; the batches before stay added).\n";

static const char *const activity_archive_help =
	"usage: " PROG " activity archive ID\n"
	"\n"
	"Move the orders of the activity of item ID to its archive file\n"
	"(<store>/archive/item-ID.jsonl); they leave the store in short slices.\n"
	"Only an activity that is over (ended or closed, 5 s ago) and settled\n"
	"(no order awaits payment; with Kafka, every event exported). The\n"
	"activity is closed; its orders stay findable (orders, order).\n"
	"Exit 4 if unknown, 5 (with the reason) if it cannot be archived yet.\n";

static const char *const stock_help =
	"usage: " PROG " stock add ID UNITS [--request-id R]\n"
	"       " PROG " stock remove ID UNITS [--request-id R]\n"
	"\n"
	"add: restock, UNITS more units of item ID, stored in LMDB, then in the\n"
	"pool (a sold-out item reopens).\n"
	"remove: take UNITS unsold units of item ID off the sale (back to the\n"
	"warehouse). All or nothing, only units nobody bought: never units sold\n"
	"(queued, confirmed, paid) nor in a buyer's hands. Taken from the\n"
	"dataplane's pool and buckets first, then stored in LMDB (exported as a\n"
	"'removed' event). Fewer unsold than UNITS exits 5 and says how many are.\n"
	"Each change is applied once per request id (ids shared by add and\n"
	"remove): without --request-id a random one is drawn and printed; to retry\n"
	"one whose answer was lost, rerun it with that --request-id.\n"
	"Exit 4 unknown item, 5 closed, too few unsold (remove), ended (add) or\n"
	"request id reused otherwise, 1 busy (remove: retry).\n";

/* ------------------------------------------------------------------- JSON */

long long
jnum(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

const char *
jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "-";
}

void
print_time(const char *label, long long ns)
{
	char buf[64];

	if (ns <= 0) {
		printf("%-11s -\n", label);
		return;
	}
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	printf("%-11s %s.%03lld UTC\n", label, buf, (ns / 1000000) % 1000);
}

/* --------------------------------------------------------------- commands */

static bool
valid_id(const char *s)
{
	if (s == NULL || s[0] == '\0' || strlen(s) > 20)
		return false;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* ------------------------------------------------------------------- main */

int
usage_error(const char *help, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sk_vlog(PROG, fmt, ap);
	va_end(ap);
	fputs(help, stderr);
	return EX_USAGE;
}

static const char *const status_help =
	"usage: " PROG " status\n"
	"\n"
	"The live settings now: their generation, when and what changed last, the\n"
	"rate limits, the log level, the deny lists' sizes, and the generation each\n"
	"lcore runs on (all equal once a change is applied everywhere).\n";

static const char *const live_help =
	"usage: " PROG " live limits KEY=N [KEY=N ...]\n"
	"       " PROG " live log LEVEL\n"
	"\n"
	"limits: KEY is global_rate, global_burst, item_rate, item_burst, ip_rate,\n"
	"        ip_burst, user_rate or user_burst; N 0..1000000000 (a rate of 0 is\n"
	"        no limit, a burst of 0 one second's worth). Applied by every lcore\n"
	"        between two bursts; buckets keep what they owe. A bad key or value\n"
	"        is refused whole (exit 2) and named.\n"
	"log:    debug, info, notice, warn, error or crit.\n";

static const char *const deny_help =
	"usage: " PROG " deny load [--users FILE] [--prefixes FILE]\n"
	"       " PROG " deny show\n"
	"       " PROG " deny clear\n"
	"\n"
	"load:  replace the user list (one decimal user id a line) and/or the prefix\n"
	"       list (one IPv4 or IPv6 address[/len] a line); '#' starts a comment.\n"
	"       The control plane reads the files (give paths it can read). A bad\n"
	"       line refuses the whole load, naming the file and line. Denied\n"
	"       buyers get 403 {\"status\":\"denied\"}.\n"
	"show:  how many entries each list has.\n"
	"clear: empty both lists.\n";

static const char *const keys_help =
	"usage: " PROG " keys add KID --file FILE\n"
	"       " PROG " keys sign KID | keys default KID | keys remove KID\n"
	"\n"
	"The token keys the dataplane accepts, by kid (the JWT header's key id):\n"
	"add:     a new key, its secret read by the control plane from FILE (mode\n"
	"         0600, 32+ bytes, one trailing newline dropped); accepted at once.\n"
	"sign:    the key the issuers should sign with now (shown by status).\n"
	"default: the key of tokens without a kid (at start: \"default\", the key of\n"
	"         seckill.secret_file).\n"
	"remove:  stop accepting a key; the last key and the signing key cannot be\n"
	"         removed. Tokens of a removed or unknown kid get 401.\n"
	"Rotation without a 401: keys add k2 --file F; keys sign k2 (issuers mint\n"
	"with --kid k2); once the old tokens expired, keys remove default.\n";

/* ------------------------------------------------------- the command table */

#define ACTIVITY_ADD_OPTS                                                                          \
	(1u << O_CLUSTER | 1u << O_TOTAL | 1u << O_TOTAL_FROM | 1u << O_PRICE | 1u << O_LIMIT |    \
	 1u << O_NAME | 1u << O_START | 1u << O_END | 1u << O_PAY_TIMEOUT | 1u << O_GATE |         \
	 1u << O_RESERVED)

static const struct ctl_cmd commands[] = {
	{"status", NULL, ARGS_NONE, 0, status_help, cmd_status},
	{"live", NULL, ARGS_NONE, 0, live_help, NULL},
	{"live", "limits", ARGS_WORDS, 0, live_help, cmd_live_limits},
	{"live", "log", ARGS_WORD, 0, live_help, cmd_live_log},
	{"deny", NULL, ARGS_NONE, 0, deny_help, NULL},
	{"deny", "load", ARGS_NONE, 1u << O_USERS | 1u << O_PREFIXES, deny_help, cmd_deny_load},
	{"deny", "show", ARGS_NONE, 0, deny_help, cmd_deny_show},
	{"deny", "clear", ARGS_NONE, 0, deny_help, cmd_deny_clear},
	{"keys", NULL, ARGS_NONE, 0, keys_help, NULL},
	{"keys", "add", ARGS_WORD, 1u << O_FILE, keys_help, cmd_keys},
	{"keys", "sign", ARGS_WORD, 0, keys_help, cmd_keys},
	{"keys", "default", ARGS_WORD, 0, keys_help, cmd_keys},
	{"keys", "remove", ARGS_WORD, 0, keys_help, cmd_keys},
	{"order", NULL, ARGS_NONE, 0, order_help, NULL},
	{"order", "show", ARGS_ORDER_ID, 0, order_show_help, cmd_order_show},
	{"order", "pay", ARGS_ORDER_ID, 0, order_pay_help, cmd_order_pay},
	{"order", "refund", ARGS_ORDER_ID, 1u << O_UNITS | 1u << O_ITEM | 1u << O_REQUEST,
	 order_refund_help, cmd_order_refund},
	{"orders", NULL, ARGS_NONE,
	 1u << O_ITEM | 1u << O_USER | 1u << O_STATE | 1u << O_LIMIT | 1u << O_AFTER, orders_help,
	 cmd_orders},
	{"items", NULL, ARGS_NONE, 0, items_help, cmd_items},
	{"item", NULL, ARGS_ITEM_ID, 0, item_help, cmd_item},
	{"activity", NULL, ARGS_NONE, 0, activity_help, NULL},
	{"activity", "add", ARGS_ITEM_ID, ACTIVITY_ADD_OPTS, activity_add_help, cmd_activity_add},
	{"activity", "list", ARGS_NONE, 0, activity_list_help, cmd_activity_list},
	{"activity", "show", ARGS_ITEM_ID, 0, activity_show_help, cmd_activity_show},
	{"activity", "close", ARGS_ITEM_ID, 0, activity_close_help, cmd_activity_close},
	{"activity", "archive", ARGS_ITEM_ID, 0, activity_archive_help, cmd_activity_archive},
	{"activity", "pause", ARGS_ITEM_ID, 0, activity_pause_help, cmd_activity_pause},
	{"activity", "resume", ARGS_ITEM_ID, 0, activity_pause_help, cmd_activity_pause},
	{"activity", "extend", ARGS_ITEM_ID, 1u << O_END, activity_extend_help,
	 cmd_activity_extend},
	{"activity", "reserve", ARGS_ITEM_FILE, 0, activity_reserve_help, cmd_activity_reserve},
	{"stock", NULL, ARGS_NONE, 0, stock_help, NULL},
	{"stock", "add", ARGS_ITEM_UNITS, 1u << O_REQUEST_ID, stock_help, cmd_stock_add},
	{"stock", "remove", ARGS_ITEM_UNITS, 1u << O_REQUEST_ID, stock_help, cmd_stock_remove},
	{"metrics", NULL, ARGS_NONE, 0, metrics_help, cmd_metrics},
	{"reconcile", NULL, ARGS_NONE, 0, reconcile_help, cmd_reconcile},
	{"cluster", NULL, ARGS_NONE, 0, cluster_help, NULL},
	{"cluster", "show", ARGS_ITEM_ID, 0, cluster_help, cmd_cluster_show},
	{"cluster", "forget", ARGS_ITEM_ID, 1u << O_MEMBER | 1u << O_HELD, cluster_help,
	 cmd_cluster_forget},
	{"config", NULL, ARGS_NONE, 0, config_help, NULL},
	{"config", "check", ARGS_FILE, 1u << O_FOR, config_help, cmd_config_check},
};

/* The words a command takes, by enum ctl_args. */
static const struct {
	int n;		    /* how many */
	const char *expect; /* what the usage error says is expected */
	const char *id;	    /* the first is an ID (decimal) of this kind, or NULL */
} arg_rules[] = {
	[ARGS_NONE] = {0, NULL, NULL},
	[ARGS_ORDER_ID] = {1, "one order ID", "order"},
	[ARGS_ITEM_ID] = {1, "one item ID", "item"},
	[ARGS_ITEM_UNITS] = {2, "an item ID and UNITS", "item"},
	[ARGS_FILE] = {1, "one FILE", NULL},
	[ARGS_ITEM_FILE] = {2, "an item ID and a FILE (- for stdin)", "item"},
	[ARGS_WORD] = {1, "one word", NULL},
	[ARGS_WORDS] = {-1, "one or more KEY=N", NULL},
};

/*
 * lookup - the entry that runs "@name @sub": the command's own, or its
 * subcommand's; NULL if none. *@top is the command's own entry (for a
 * group: its help), NULL for an unknown command.
 */
static const struct ctl_cmd *
lookup(const char *name, const char *sub, const struct ctl_cmd **top)
{
	const struct ctl_cmd *e = NULL;

	*top = NULL;
	for (size_t i = 0; name != NULL && i < SK_ARRAY_SIZE(commands); i++) {
		const struct ctl_cmd *t = &commands[i];

		if (strcmp(t->name, name) != 0)
			continue;
		if (t->sub == NULL)
			*top = t;
		else if (sub != NULL && strcmp(t->sub, sub) == 0)
			e = t;
	}
	return *top != NULL && (*top)->run != NULL ? *top : e;
}

/* run - check the @nargs words at @args against @e's rule, then run @e. */
static int
run(const struct ctl *c, const struct ctl_cmd *e, char **args, int nargs)
{
	char name[32];

	snprintf(name, sizeof(name), "%s%s%s", e->name, e->sub != NULL ? " " : "",
		 e->sub != NULL ? e->sub : "");
	if (arg_rules[e->args].n < 0 ? nargs < 1 : nargs != arg_rules[e->args].n) {
		if (arg_rules[e->args].n == 0)
			return usage_error(e->help, "%s: unexpected argument '%s'", name, args[0]);
		return usage_error(e->help, "%s: expected %s", name, arg_rules[e->args].expect);
	}
	if (arg_rules[e->args].id != NULL && !valid_id(args[0]))
		return usage_error(e->help, "%s: bad %s ID '%s' (decimal)", name,
				   arg_rules[e->args].id, args[0]);
	return e->run(c, e, args);
}

/* dispatch - run the command in @pos (positional words); @help: --help was given. */
static int
dispatch(const struct ctl *c, char **pos, int npos, bool help)
{
	const char *name = npos > 0 ? pos[0] : NULL, *sub = npos > 1 ? pos[1] : NULL;
	const struct ctl_cmd *top, *e = lookup(name, sub, &top);
	unsigned allowed = e != NULL ? e->opts : 0;

	for (unsigned i = 0; i < O__N && !help; i++)
		if (c->opt[i] != NULL && (allowed & (1u << i)) == 0)
			return usage_error(main_help, "%s is not an option of '%s%s%s'",
					   copt_names[i], name != NULL ? name : "",
					   sub != NULL ? " " : "", sub != NULL ? sub : "");

	if (name == NULL || strcmp(name, "help") == 0) {
		if (help || name != NULL) {
			fputs(main_help, stdout);
			return EX_OK;
		}
		return usage_error(main_help, "no command given");
	}
	if (top == NULL)
		return usage_error(main_help, "unknown command '%s'", name);
	if (help) {
		fputs(e != NULL ? e->help : top->help, stdout);
		return EX_OK;
	}
	if (e == NULL && sub == NULL)
		return usage_error(top->help, "%s: missing subcommand", name);
	if (e == NULL)
		return usage_error(top->help, "%s: unknown subcommand '%s'", name, sub);
	return e->sub != NULL ? run(c, e, pos + 2, npos - 2) : run(c, e, pos + 1, npos - 1);
}

/* copt_index - which command option @a is ("--total" or "--total=..."), or -1. */
static int
copt_index(const char *a)
{
	for (int k = 0; k < O__N; k++) {
		size_t nl = strlen(copt_names[k]);

		if (strncmp(a, copt_names[k], nl) == 0 && (a[nl] == '\0' || a[nl] == '='))
			return k;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	struct ctl c = {.port = 0};
	const char *token_file = getenv(CTL_TOKEN_FILE_ENV);
	char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	int npos = 0, ex;
	bool help = false;

	if (pos == NULL) {
		sk_log(PROG, "out of memory");
		return EX_ERR;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			help = true;
		} else if (strcmp(a, "--json") == 0) {
			c.json = true;
		} else if (strcmp(a, "--port") == 0 || strncmp(a, "--port=", 7) == 0) {
			const char *v = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
			uint32_t p;
			if (!sk_parse_u32(v, 1, 65535, &p)) {
				ex = usage_error(main_help, "--port needs a port number 1..65535");
				goto out;
			}
			c.port = (unsigned)p;
		} else if (strcmp(a, "--socket") == 0 || strncmp(a, "--socket=", 9) == 0) {
			const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			if (v == NULL || *v == '\0') {
				ex = usage_error(main_help, "--socket needs a path");
				goto out;
			}
			c.socket_path = v;
		} else if (strcmp(a, "--token-file") == 0 || strncmp(a, "--token-file=", 13) == 0) {
			const char *v = a[12] == '=' ? a + 13 : (i + 1 < argc ? argv[++i] : NULL);
			if (v == NULL || *v == '\0') {
				ex = usage_error(main_help, "--token-file needs a path");
				goto out;
			}
			token_file = v;
		} else if (a[0] == '-' && a[1] == '-' && copt_index(a) >= 0) {
			int k = copt_index(a);
			size_t nl = strlen(copt_names[k]);
			const char *v = is_flag(k)     ? (a[nl] == '\0' ? "1" : NULL)
					: a[nl] == '=' ? a + nl + 1
						       : (i + 1 < argc ? argv[++i] : NULL);
			if (is_flag(k) && v == NULL) {
				ex = usage_error(main_help, "%s takes no value", copt_names[k]);
				goto out;
			}
			if (v == NULL) {
				ex = usage_error(main_help, "%s needs a value", copt_names[k]);
				goto out;
			}
			c.opt[k] = v;
		} else if (a[0] == '-' && a[1] != '\0') {
			ex = usage_error(main_help, "unknown option '%s'", a);
			goto out;
		} else {
			pos[npos++] = argv[i];
		}
	}
	if (c.port != 0 && c.socket_path != NULL) {
		ex = usage_error(main_help, "--port and --socket: one or the other");
		goto out;
	}
	if (c.port == 0 && c.socket_path == NULL)
		c.socket_path = CTL_SOCKET_DEFAULT;
	/* The token goes to TCP only: the socket's mode is its access control. */
	if (c.port != 0 && token_file != NULL && *token_file != '\0' && !help &&
	    (ex = ctl_load_token(&c, token_file)) != EX_OK)
		goto out;
	CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (cc != CURLE_OK) {
		sk_log(PROG, "cannot initialise libcurl: %s", curl_easy_strerror(cc));
		ex = EX_ERR;
		goto out;
	}
	ex = dispatch(&c, pos, npos, help);
	curl_global_cleanup();
out:
	if (c.token != NULL)
		memset(c.token, 0, strlen(c.token));
	free(c.token);
	free(pos);
	return ex;
}
