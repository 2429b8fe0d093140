/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl: the operators' command line, a thin client of the control
 * plane's admin API (sk_admin.h) over HTTP/1.1 on 127.0.0.1 or a unix
 * socket, through libcurl: one easy handle a request, never a proxy.
 *
 * Exit codes: 0 ok, 1 error or reconcile mismatch, 2 usage, 3 the daemon
 * is unreachable, 4 not found, 5 conflict (e.g. paying a cancelled order).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/un.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "sk_common.h"
#include "sk_log.h"

#define PROG "seckillctl"

enum {
	EX_OK = 0,
	EX_ERR = 1,
	EX_USAGE = 2,
	EX_UNREACHABLE = 3,
	EX_NOTFOUND = 4,
	EX_CONFLICT = 5,
};

#define DEFAULT_PORT   8081
#define MAX_RESPONSE   (64u << 20)
#define IO_TIMEOUT_S   10
#define RECONCILE_RUNS 3

/* Options of single commands (activity add, stock add), by index. */
enum copt { O_TOTAL, O_PRICE, O_LIMIT, O_NAME, O_START, O_END, O_PAY_TIMEOUT, O_REQUEST_ID, O__N };

static const char *const copt_names[O__N] = {
	[O_TOTAL] = "--total",
	[O_PRICE] = "--price",
	[O_LIMIT] = "--limit",
	[O_NAME] = "--name",
	[O_START] = "--start",
	[O_END] = "--end",
	[O_PAY_TIMEOUT] = "--pay-timeout",
	[O_REQUEST_ID] = "--request-id",
};

struct ctl {
	unsigned port;
	const char *socket_path;
	bool json;
	const char *opt[O__N]; /* command options given, NULL if not */
};

/* What a command takes after its name (and subcommand): see arg_rules. */
enum ctl_args { ARGS_NONE, ARGS_ORDER_ID, ARGS_ITEM_ID, ARGS_ITEM_UNITS };

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

/* ------------------------------------------------------------------ output */

static const char *const main_help =
	"usage: " PROG " [--port N | --socket PATH] [--json] COMMAND [ARGS]\n"
	"\n"
	"Talks to seckill-control's admin API (default 127.0.0.1:8081).\n"
	"\n"
	"commands:\n"
	"  order show ID     an order: state, deadline, every line\n"
	"  order pay ID      record a payment (idempotent)\n"
	"  items             every item: stock counters and the store's ledger\n"
	"  item ID           one item\n"
	"  activity add ID --total N [...]   create a sale (see activity --help)\n"
	"  activity list     every activity: definition, stock and ledger\n"
	"  activity show ID  one activity\n"
	"  activity close ID close a sale for good\n"
	"  stock add ID N    restock: N more units of item ID\n"
	"  metrics           the Prometheus metrics, as served\n"
	"  reconcile         check each item's counters against each other and LMDB\n"
	"\n"
	"options (anywhere on the line):\n"
	"  --port N          admin API TCP port on 127.0.0.1\n"
	"  --socket PATH     admin API unix socket instead of TCP\n"
	"  --json            print the API's JSON instead of text\n"
	"  --help            help (also after any command)\n"
	"\n"
	"exit codes: 0 ok, 1 error or mismatch, 2 usage, 3 daemon unreachable,\n"
	"            4 not found, 5 conflict\n";

static const char *const order_help =
	"usage: " PROG " order show ID\n"
	"       " PROG " order pay ID\n"
	"\n"
	"show: the order as stored in LMDB (state, payment deadline, lines), or its\n"
	"      status in the arena while it is queued; exit 4 if unknown.\n"
	"pay:  confirmed -> paid. Paying a paid order succeeds again (idempotent);\n"
	"      a cancelled, failed or still-queued order exits 5; unknown exits 4.\n";

static const char *const order_show_help = "usage: " PROG " order show ID\n"
					   "\n"
					   "Show order ID (decimal): state, deadline, lines.\n"
					   "Exit 4 if the order is unknown.\n";

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
	"  total + added == remaining + sold - returned      (stock accounting)\n"
	"  LMDB live units == sold - returned                (store vs arena)\n"
	"The check is repeated up to 3 times, 300 ms apart, so orders still queued\n"
	"in the rings do not count as a mismatch. Exit 1 on a mismatch.\n";

static const char *const activity_help =
	"usage: " PROG " activity add ID --total N [--price P] [--limit L] [--name TEXT]\n"
	"                            [--start TIME] [--end TIME] [--pay-timeout S]\n"
	"       " PROG " activity list\n"
	"       " PROG " activity show ID\n"
	"       " PROG " activity close ID\n"
	"\n"
	"An activity puts item ID on sale: stored in LMDB, then in the dataplane's\n"
	"item table at once (buyers get 425 until its start). It does not change\n"
	"afterwards: add it again with the same definition succeeds (idempotent),\n"
	"with another one exits 5; restock it with 'stock add', or close it.\n"
	"To retry an add safely, leave --start out (the sale opens now, or keeps\n"
	"its start) or give an absolute TIME: now and +N are new times each run.\n";

static const char *const activity_add_help =
	"usage: " PROG " activity add ID --total N [options]\n"
	"\n"
	"Create the activity of item ID (1..4294967295).\n"
	"  --total N          units on sale (1..2^48), required\n"
	"  --price P          unit price in minor units (cents), default 0\n"
	"  --limit L          units one user may buy, 1..1000, default 1\n"
	"  --name TEXT        display name, at most 64 bytes\n"
	"  --start TIME       when the sale opens, default now\n"
	"  --end TIME         when it ends, default never\n"
	"  --pay-timeout S    seconds an order may stay unpaid (0: the daemon's default)\n"
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

static const char *const stock_help =
	"usage: " PROG " stock add ID UNITS [--request-id R]\n"
	"\n"
	"Restock: UNITS more units of item ID, stored in LMDB, then in the pool\n"
	"(a sold-out item reopens). Each restock is applied once per request id:\n"
	"without --request-id a random one is drawn and printed; to retry a\n"
	"restock whose answer was lost, rerun it with that --request-id.\n"
	"Exit 4 unknown item, 5 closed or request id reused with other units.\n";

/* ------------------------------------------------------------- HTTP client */

/* An answer of the admin API. */
struct resp {
	int status;		   /* HTTP status */
	char *body;		   /* malloc'd, NUL-terminated */
	size_t len;		   /* bytes of body, NUL not counted */
	size_t cap;		   /* bytes allocated at body */
	int err;		   /* why resp_write() refused: -EFBIG, -ENOMEM */
	char why[CURL_ERROR_SIZE]; /* libcurl's word for an error without an errno */
};

static void
resp_free(struct resp *r)
{
	free(r->body);
	r->body = NULL;
}

/* resp_write - libcurl's write callback: append to the body, MAX_RESPONSE at most. */
static size_t
resp_write(char *p, size_t size, size_t n, void *arg)
{
	struct resp *r = arg;

	n *= size; /* size is 1 */
	if (n > MAX_RESPONSE - r->len) {
		r->err = -EFBIG;
		return 0; /* anything but n fails the transfer */
	}
	if (r->len + n >= r->cap) {
		size_t cap = r->cap;
		while (cap <= r->len + n)
			cap *= 2;
		char *nb = realloc(r->body, cap);
		if (nb == NULL) {
			r->err = -ENOMEM;
			return 0;
		}
		r->body = nb;
		r->cap = cap;
	}
	memcpy(r->body + r->len, p, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

/*
 * curl_errno - the negative errno that stands for libcurl's @cc on @h, so
 * that the daemon being away reads as it always did ("Connection refused",
 * "No such file or directory"); -EPROTO for a malformed answer, -EIO with
 * r->why set for anything else.
 */
static int
curl_errno(CURL *h, CURLcode cc, struct resp *r, const char *errbuf)
{
	long os = 0;

	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os);
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return os > 0 ? -(int)os : -ECONNREFUSED;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		return os > 0 ? -(int)os : -EPROTO;
	case CURLE_WRITE_ERROR:
		return r->err != 0 ? r->err : -EIO;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_GOT_NOTHING:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_PARTIAL_FILE:
	case CURLE_BAD_CONTENT_ENCODING:
	case CURLE_UNSUPPORTED_PROTOCOL: /* an HTTP/0.9 answer */
		return -EPROTO;
	default:
		snprintf(r->why, sizeof(r->why), "%s",
			 errbuf[0] != '\0' ? errbuf : curl_easy_strerror(cc));
		return -EIO;
	}
}

/*
 * request - one HTTP/1.1 exchange with the admin API (libcurl, one handle a
 * request), only ever to 127.0.0.1:port or the unix socket. 0 with @r
 * filled (resp_free() it), else a negative errno as curl_errno() says, with
 * @r empty.
 */
static int
request(const struct ctl *c, const char *method, const char *path, const char *body, struct resp *r)
{
	char url[128], errbuf[CURL_ERROR_SIZE] = "";
	bool post = strcmp(method, "POST") == 0;
	struct curl_slist *hdr = NULL;
	CURL *h = NULL;
	CURLcode cc;
	long status = 0;
	int rc = -ENOMEM;

	memset(r, 0, sizeof(*r));
	if (c->socket_path != NULL &&
	    strlen(c->socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	if (c->socket_path != NULL)
		snprintf(url, sizeof(url), "http://localhost%s", path);
	else
		snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", c->port, path);
	r->cap = 16384;
	r->body = malloc(r->cap);
	h = curl_easy_init();
	/* Every POST says JSON, also without a body: the API refuses any other type. */
	if (post)
		hdr = curl_slist_append(NULL, "Content-Type: application/json");
	if (r->body == NULL || h == NULL || (post && hdr == NULL))
		goto out;
	r->body[0] = '\0';

	if ((cc = curl_easy_setopt(h, CURLOPT_URL, url)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http")) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_PROXY, "")) != CURLE_OK || /* not the env's */
	    (c->socket_path != NULL &&
	     (cc = curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket_path)) != CURLE_OK) ||
	    (cc = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)IO_TIMEOUT_S)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)IO_TIMEOUT_S)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_USERAGENT, PROG)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, resp_write)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_WRITEDATA, r)) != CURLE_OK ||
	    (post && (cc = curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr)) != CURLE_OK) ||
	    (post && (cc = curl_easy_setopt(h, CURLOPT_POSTFIELDS, body != NULL ? body : "")) !=
			     CURLE_OK)) {
		snprintf(r->why, sizeof(r->why), "libcurl: %s", curl_easy_strerror(cc));
		rc = -EIO;
		goto out;
	}
	cc = curl_easy_perform(h);
	if (cc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	rc = cc != CURLE_OK ? curl_errno(h, cc, r, errbuf) : status > 0 ? 0 : -EPROTO;
	r->status = (int)status;
out:
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (rc != 0)
		resp_free(r);
	return rc;
}

/* call - request + the common error handling; returns an exit code, EX_OK with @r set. */
static int
call(const struct ctl *c, const char *method, const char *path, const char *body, struct resp *r)
{
	int rc = request(c, method, path, body, r);

	if (rc == -ECONNREFUSED || rc == -ENOENT || rc == -ETIMEDOUT || rc == -EHOSTUNREACH ||
	    rc == -ECONNRESET || rc == -EACCES || rc == -ENAMETOOLONG) {
		if (c->socket_path != NULL)
			sk_log(PROG, "cannot reach seckill-control at %s: %s", c->socket_path,
			       strerror(-rc));
		else
			sk_log(PROG, "cannot reach seckill-control at 127.0.0.1:%u: %s", c->port,
			       strerror(-rc));
		return EX_UNREACHABLE;
	}
	if (rc != 0) {
		sk_log(PROG, "%s %s: %s", method, path,
		       rc == -EPROTO ? "malformed HTTP response"
		       : r->why[0]   ? r->why
				     : strerror(-rc));
		return EX_ERR;
	}
	return EX_OK;
}

/* ------------------------------------------------------------------- JSON */

static long long
jnum(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static const char *
jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "-";
}

static void
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

/* status_exit - the exit code for an HTTP status (after printing an error). */
static int
status_exit(const struct resp *r, const char *what)
{
	json_error_t e;
	json_t *j = json_loadb(r->body, r->len, 0, &e);
	const char *msg = j != NULL ? json_string_value(json_object_get(j, "error")) : NULL;
	const char *st = j != NULL ? json_string_value(json_object_get(j, "status")) : NULL;
	int ex = r->status == 404   ? EX_NOTFOUND
		 : r->status == 409 ? EX_CONFLICT
		 : r->status == 400 ? EX_USAGE
				    : EX_ERR;

	if (st != NULL && r->status == 409)
		sk_log(PROG, "%s: %s", what, st);
	else
		sk_log(PROG, "%s: %s (HTTP %d)", what, msg != NULL ? msg : "error", r->status);
	json_decref(j);
	return ex;
}

/* What api() does with an answer's body. */
enum body_use {
	BODY_PARSE,	/* parse a 200/201 answer into *out */
	BODY_PRINT,	/* print a 200/201 answer as it came (--json, metrics) */
	BODY_PRINT_ALL, /* print every answer as it came, errors too */
};

/*
 * api - one call of the admin API: @method @path with the JSON @body
 * (consumed; NULL for none). A 200 or 201 answer is used as @use says
 * (*@out then owns the parsed JSON, NULL otherwise); any other status
 * prints an error naming @what. Returns the exit code.
 */
static int
api(const struct ctl *c, const char *method, const char *path, json_t *body, const char *what,
    enum body_use use, json_t **out)
{
	char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	struct resp r;
	int ex;

	json_decref(body);
	if (out != NULL)
		*out = NULL;
	if (body != NULL && text == NULL) {
		sk_log(PROG, "out of memory");
		return EX_ERR;
	}
	ex = call(c, method, path, text, &r);
	free(text);
	if (ex != EX_OK)
		return ex;
	bool ok = r.status == 200 || r.status == 201;
	if (use == BODY_PRINT_ALL || (use == BODY_PRINT && ok))
		fwrite(r.body, 1, r.len, stdout);
	if (!ok) {
		ex = status_exit(&r, what);
	} else if (use == BODY_PARSE) {
		json_error_t e;
		*out = json_loadb(r.body, r.len, 0, &e);
		if (*out == NULL) {
			sk_log(PROG, "malformed JSON from the daemon: %s", e.text);
			ex = EX_ERR;
		}
	}
	resp_free(&r);
	return ex;
}

/* answer_use - what a command does with a good answer: print it (--json) or parse it. */
static enum body_use
answer_use(const struct ctl *c)
{
	return c->json ? BODY_PRINT : BODY_PARSE;
}

/* One object of the API: where it is and how errors name it. */
struct target {
	char path[96]; /* "/v1/orders/42/pay" */
	char what[64]; /* "order 42" */
};

/* target_of - path @base @id @suffix ("/v1/orders/", "42", "/pay"), name "@kind @id". */
static struct target
target_of(const char *base, const char *id, const char *suffix, const char *kind)
{
	struct target t;

	snprintf(t.path, sizeof(t.path), "%s%s%s", base, id, suffix);
	snprintf(t.what, sizeof(t.what), "%s %s", kind, id);
	return t;
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

static int
cmd_order_show(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0];
	struct target t = target_of("/v1/orders/", id, "", "order");
	json_t *j;
	int ex = api(c, "GET", t.path, NULL, t.what, answer_use(c), &j);

	(void)cmd;
	if (ex != EX_OK || c->json)
		return ex;
	printf("%-11s %s\n", "order", jstr(j, "order"));
	if (!json_is_true(json_object_get(j, "in_store"))) {
		printf("%-11s %s (not in the store)\n", "status", jstr(j, "status"));
		json_decref(j);
		return EX_OK;
	}
	printf("%-11s %s (arena: %s)\n", "status", jstr(j, "status"), jstr(j, "arena_status"));
	printf("%-11s %s\n", "user", jstr(j, "user"));
	printf("%-11s %lld\n", "units", jnum(j, "units"));
	printf("%-11s %s\n", "client ip", jstr(j, "client_ip"));
	print_time("sold at", jnum(j, "time_ns"));
	print_time("stored at", jnum(j, "stored_ns"));
	print_time("updated at", jnum(j, "updated_ns"));
	print_time("deadline", jnum(j, "deadline_ns"));
	printf("lines:\n  %-5s %-10s %-6s %-12s %s\n", "LINE", "ITEM", "QTY", "PRICE", "RETURNED");
	size_t i;
	json_t *l;
	json_array_foreach(json_object_get(j, "lines"), i, l)
		printf("  %-5lld %-10lld %-6lld %-12lld %lld\n", jnum(l, "line"), jnum(l, "item"),
		       jnum(l, "qty"), jnum(l, "price"), jnum(l, "returned"));
	json_decref(j);
	return EX_OK;
}

static int
cmd_order_pay(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0];
	struct target t = target_of("/v1/orders/", id, "/pay", "order");
	json_t *j;
	int ex = api(c, "POST", t.path, NULL, t.what, c->json ? BODY_PRINT_ALL : BODY_PARSE, &j);

	(void)cmd;
	if (ex != EX_OK || c->json)
		return ex;
	printf("order %s: paid%s\n", id,
	       json_is_true(json_object_get(j, "already")) ? " (already)" : "");
	json_decref(j);
	return EX_OK;
}

static void
print_item_row(const json_t *it)
{
	const json_t *l = json_object_get(it, "ledger");

	if (!json_is_true(json_object_get(it, "in_arena"))) {
		printf("%-8lld %-8s %-8s %-10s %-8s %-10s %-10s %-9s %-10lld %lld\n",
		       jnum(it, "item"), "store", "-", "-", "-", "-", "-", "-", jnum(l, "live"),
		       jnum(l, "paid"));
		return;
	}
	printf("%-8lld %-8s %-8s %-10lld %-8lld %-10lld %-10lld %-9lld %-10lld %lld\n",
	       jnum(it, "item"), jstr(it, "state"),
	       json_is_true(json_object_get(it, "sold_out")) ? "yes" : "no", jnum(it, "total"),
	       jnum(it, "added"), jnum(it, "remaining"), jnum(it, "sold"), jnum(it, "returned"),
	       jnum(l, "live"), jnum(l, "paid"));
}

static int
cmd_items(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	json_t *j, *it;
	size_t i;
	int ex = api(c, "GET", "/v1/items", NULL, "items", answer_use(c), &j);

	(void)cmd, (void)args;
	if (ex != EX_OK || c->json)
		return ex;
	printf("%-8s %-8s %-8s %-10s %-8s %-10s %-10s %-9s %-10s %s\n", "ITEM", "STATE", "SOLD_OUT",
	       "TOTAL", "ADDED", "REMAINING", "SOLD", "RETURNED", "LMDB_LIVE", "LMDB_PAID");
	json_array_foreach(json_object_get(j, "items"), i, it) print_item_row(it);
	json_decref(j);
	return EX_OK;
}

/* print_item - one item object of the API (GET /v1/items/ID, /v1/activities/ID). */
static void
print_item(const json_t *j)
{
	printf("%-16s %lld\n", "item", jnum(j, "item"));
	if (json_is_true(json_object_get(j, "in_arena"))) {
		static const char *const keys[] = {"total",    "added", "remaining",	 "sold",
						   "returned", "price", "per_user_limit"};
		printf("%-16s %s\n", "state", jstr(j, "state"));
		printf("%-16s %s\n", "sold out",
		       json_is_true(json_object_get(j, "sold_out")) ? "yes" : "no");
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			printf("%-16s %lld\n", keys[k], jnum(j, keys[k]));
		print_time("starts", jnum(j, "start_ns"));
		if (jnum(j, "end_ns") != INT64_MAX)
			print_time("ends", jnum(j, "end_ns"));
	} else {
		printf("%-16s %s\n", "state", "not in the arena (store only)");
	}
	const json_t *a = json_object_get(j, "activity");
	if (json_is_object(a)) {
		printf("activity         \"%s\" total %lld added %lld limit %lld%s\n",
		       jstr(a, "name"), jnum(a, "total"), jnum(a, "added"),
		       jnum(a, "per_user_limit"),
		       json_is_true(json_object_get(a, "closed")) ? " (closed)" : "");
		if (jnum(a, "pay_timeout_ns") > 0)
			printf("%-16s %lld s\n", "pay timeout",
			       jnum(a, "pay_timeout_ns") / 1000000000);
	}
	const json_t *l = json_object_get(j, "ledger");
	printf("ledger           sold %lld returned %lld live %lld paid %lld lines %lld\n",
	       jnum(l, "sold"), jnum(l, "returned"), jnum(l, "live"), jnum(l, "paid"),
	       jnum(l, "lines"));
}

/* show_one - GET @prefix@id (an item or an activity) and print it. */
static int
show_one(const struct ctl *c, const char *prefix, const char *kind, const char *id)
{
	struct target t = target_of(prefix, id, "", kind);
	json_t *j;
	int ex = api(c, "GET", t.path, NULL, t.what, answer_use(c), &j);

	if (ex != EX_OK || c->json)
		return ex;
	print_item(j);
	json_decref(j);
	return EX_OK;
}

static int
cmd_item(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	(void)cmd;
	return show_one(c, "/v1/items/", "item", args[0]);
}

/* ------------------------------------------------------------- activities */

static int usage_error(const char *help, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* parse_u64 - decimal @s in [lo, hi]. */
static bool
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/*
 * parse_time - a TIME of the command line as ns since the epoch: "now",
 * "+N[smhd]", unix seconds, or "YYYY-MM-DDTHH:MM:SSZ"; "never" when
 * @never_ok (INT64_MAX).
 */
static bool
parse_time(const char *s, int64_t now_ns, bool never_ok, int64_t *out)
{
	const int64_t S = 1000000000;
	uint64_t v;

	if (strcmp(s, "now") == 0) {
		*out = now_ns;
		return true;
	}
	if (never_ok && strcmp(s, "never") == 0) {
		*out = INT64_MAX;
		return true;
	}
	if (s[0] == '+') {
		char num[24];
		size_t n = strlen(s + 1);
		int64_t unit = S;

		if (n == 0 || n >= sizeof(num))
			return false;
		memcpy(num, s + 1, n + 1);
		switch (num[n - 1]) {
		case 'd':
			unit *= 24;
			/* fall through */
		case 'h':
			unit *= 60;
			/* fall through */
		case 'm':
			unit *= 60;
			/* fall through */
		case 's':
			num[n - 1] = '\0';
			break;
		default:
			break;
		}
		if (!parse_u64(num, 0, (uint64_t)(INT64_MAX - now_ns) / (uint64_t)unit, &v))
			return false;
		*out = now_ns + (int64_t)v * unit;
		return true;
	}
	if (parse_u64(s, 0, (uint64_t)(INT64_MAX / S) - 1, &v)) {
		*out = (int64_t)v * S;
		return true;
	}
	struct tm tm = {0};
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (end == NULL || *end != '\0')
		return false;
	time_t t = timegm(&tm);
	if (t < 0)
		return false;
	*out = (int64_t)t * S;
	return true;
}

/* result_word - "created", "closed", ... for the "result" of an answer. */
static const char *
result_word(const json_t *j, const char *done)
{
	return strcmp(jstr(j, "result"), "done") == 0 ? done : "unchanged (done before)";
}

static int
cmd_activity_add(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *const *o = c->opt, *id_s = args[0];
	int64_t now = sk_clock_ns(CLOCK_REALTIME), start = now, end = INT64_MAX;
	uint64_t id, total, price = 0, limit = 1, pay = 0;
	json_t *j;

	if (!parse_u64(id_s, 1, UINT32_MAX, &id))
		return usage_error(cmd->help, "activity add: bad item ID '%s'", id_s);
	if (o[O_TOTAL] == NULL)
		return usage_error(cmd->help, "activity add: --total is required");
	if (!parse_u64(o[O_TOTAL], 1, UINT64_C(1) << 48, &total))
		return usage_error(cmd->help, "--total: '%s' is not 1..2^48", o[O_TOTAL]);
	if (o[O_PRICE] != NULL && !parse_u64(o[O_PRICE], 0, INT64_MAX, &price))
		return usage_error(cmd->help, "--price: '%s' is not a number of minor units",
				   o[O_PRICE]);
	if (o[O_LIMIT] != NULL && !parse_u64(o[O_LIMIT], 1, 1000, &limit))
		return usage_error(cmd->help, "--limit: '%s' is not 1..1000", o[O_LIMIT]);
	if (o[O_PAY_TIMEOUT] != NULL &&
	    !parse_u64(o[O_PAY_TIMEOUT], 0, INT64_MAX / 1000000000, &pay))
		return usage_error(cmd->help, "--pay-timeout: '%s' is not a number of seconds",
				   o[O_PAY_TIMEOUT]);
	if (o[O_START] != NULL && !parse_time(o[O_START], now, false, &start))
		return usage_error(cmd->help, "--start: '%s' is not a TIME", o[O_START]);
	if (o[O_END] != NULL && !parse_time(o[O_END], now, true, &end))
		return usage_error(cmd->help, "--end: '%s' is not a TIME", o[O_END]);
	if (end <= start)
		return usage_error(cmd->help, "--end: must be after --start");
	if (o[O_NAME] != NULL && strlen(o[O_NAME]) > 64)
		return usage_error(cmd->help, "--name: at most 64 bytes");

	json_t *body = json_pack("{s:I,s:I,s:I,s:I,s:I,s:s}", "item", (json_int_t)id, "total",
				 (json_int_t)total, "price", (json_int_t)price, "per_user_limit",
				 (json_int_t)limit, "pay_timeout_ns", (json_int_t)pay * 1000000000,
				 "name", o[O_NAME] != NULL ? o[O_NAME] : "");
	/* Without --start the daemon opens the sale now, or keeps the start of
	 * the activity if it exists: a rerun is then the same definition. */
	if (body != NULL && o[O_START] != NULL)
		json_object_set_new(body, "start_ns", json_integer(start));
	if (body != NULL && end != INT64_MAX)
		json_object_set_new(body, "end_ns", json_integer(end));
	char what[64];
	snprintf(what, sizeof(what), "activity %s", id_s);
	int ex = api(c, "POST", "/v1/activities", body, what, answer_use(c), &j);
	if (ex != EX_OK || c->json)
		return ex;
	printf("activity %s: %s\n", id_s, result_word(j, "created, on sale"));
	print_item(j);
	json_decref(j);
	return EX_OK;
}

static int
cmd_activity_list(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	json_t *j, *it;
	size_t i;
	int ex = api(c, "GET", "/v1/activities", NULL, "activities", answer_use(c), &j);

	(void)cmd, (void)args;
	if (ex != EX_OK || c->json)
		return ex;
	printf("%-8s %-20s %-7s %-10s %-8s %-10s %-10s %-10s %-10s %s\n", "ITEM", "NAME", "STATE",
	       "TOTAL", "ADDED", "REMAINING", "PRICE", "LMDB_LIVE", "LMDB_PAID", "STARTS");
	json_array_foreach(json_object_get(j, "activities"), i, it)
	{
		const json_t *a = json_object_get(it, "activity"),
			     *l = json_object_get(it, "ledger");
		bool arena = json_is_true(json_object_get(it, "in_arena"));
		const char *state = json_is_true(json_object_get(a, "closed"))	    ? "closed"
				    : !arena					    ? "stored"
				    : json_is_true(json_object_get(it, "sold_out")) ? "soldout"
										    : "on_sale";
		char rem[24] = "-", starts[32];
		time_t t = (time_t)(jnum(a, "start_ns") / 1000000000);
		struct tm tm;

		if (arena)
			snprintf(rem, sizeof(rem), "%lld", jnum(it, "remaining"));
		gmtime_r(&t, &tm);
		strftime(starts, sizeof(starts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		printf("%-8lld %-20.20s %-7s %-10lld %-8lld %-10s %-10lld %-10lld %-10lld %s\n",
		       jnum(it, "item"), jstr(a, "name")[0] ? jstr(a, "name") : "-", state,
		       jnum(a, "total"), jnum(a, "added"), rem, jnum(a, "price"), jnum(l, "live"),
		       jnum(l, "paid"), starts);
	}
	json_decref(j);
	return EX_OK;
}

static int
cmd_activity_show(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	(void)cmd;
	return show_one(c, "/v1/activities/", "activity", args[0]);
}

static int
cmd_activity_close(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0];
	struct target t = target_of("/v1/activities/", id, "/close", "activity");
	json_t *j;
	int ex = api(c, "POST", t.path, NULL, t.what, answer_use(c), &j);

	(void)cmd;
	if (ex != EX_OK || c->json)
		return ex;
	printf("activity %s: %s\n", id, result_word(j, "closed"));
	json_decref(j);
	return EX_OK;
}

static int
cmd_stock_add(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0], *units_s = args[1];
	uint64_t units, rid;
	json_t *j;

	if (!parse_u64(units_s, 1, UINT64_C(1) << 48, &units))
		return usage_error(cmd->help, "stock add: UNITS '%s' is not 1..2^48", units_s);
	if (c->opt[O_REQUEST_ID] != NULL) {
		if (!parse_u64(c->opt[O_REQUEST_ID], 1, INT64_MAX, &rid))
			return usage_error(cmd->help, "--request-id: '%s' is not 1..2^63-1",
					   c->opt[O_REQUEST_ID]);
	} else {
		do {
			if (getrandom(&rid, sizeof(rid), 0) != (ssize_t)sizeof(rid)) {
				sk_log(PROG, "no random request id: %s", strerror(errno));
				return EX_ERR;
			}
			rid &= INT64_MAX; /* JSON integers are signed */
		} while (rid == 0);
	}
	struct target t = target_of("/v1/activities/", id, "/restock", "stock add");
	int ex = api(
		c, "POST", t.path,
		json_pack("{s:I,s:I}", "units", (json_int_t)units, "restock_id", (json_int_t)rid),
		t.what, answer_use(c), &j);
	if (ex == EX_UNREACHABLE || (ex == EX_ERR && c->opt[O_REQUEST_ID] == NULL))
		sk_log(PROG,
		       "the restock may or may not have been applied: rerun with --request-id "
		       "%" PRIu64 " to apply it exactly once",
		       rid);
	if (ex != EX_OK || c->json)
		return ex;
	const json_t *a = json_object_get(j, "activity");
	printf("item %s: %s, %" PRIu64 " units (request id %" PRIu64
	       "); now total %lld + added %lld",
	       id, result_word(j, "restocked"), units, rid, jnum(a, "total"), jnum(a, "added"));
	if (json_is_true(json_object_get(j, "in_arena")))
		printf(", remaining %lld\n", jnum(j, "remaining"));
	else
		printf(" (not on sale in the dataplane: closed or ended)\n");
	json_decref(j);
	return EX_OK;
}

static int
cmd_metrics(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	(void)cmd, (void)args;
	return api(c, "GET", "/metrics", NULL, "metrics", BODY_PRINT, NULL);
}

/* check_items - the reconcile checks over @items; a JSON report, *bad = mismatches. */
static json_t *
check_items(const json_t *items, unsigned *bad)
{
	json_t *rep = json_array(), *it;
	size_t i;

	*bad = 0;
	json_array_foreach(items, i, it)
	{
		const json_t *l = json_object_get(it, "ledger");
		bool arena = json_is_true(json_object_get(it, "in_arena"));
		long long total = jnum(it, "total"), added = jnum(it, "added"),
			  rem = jnum(it, "remaining"), sold = jnum(it, "sold"),
			  ret = jnum(it, "returned"), live = jnum(l, "live");
		bool stock_ok = !arena || total + added == rem + sold - ret;
		bool store_ok = !arena || live == sold - ret;

		if (!stock_ok || !store_ok)
			(*bad)++;
		json_array_append_new(rep,
				      json_pack("{s:I,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b}", "item",
						jnum(it, "item"), "in_arena", arena, "total", total,
						"added", added, "remaining", rem, "sold", sold,
						"returned", ret, "lmdb_live", live, "stock_ok",
						stock_ok, "store_ok", store_ok));
	}
	return rep;
}

static int
cmd_reconcile(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	json_t *j = NULL, *rep = NULL, *it;
	unsigned bad = 0;
	size_t i;

	(void)cmd, (void)args;
	for (int run = 0; run < RECONCILE_RUNS; run++) {
		if (run > 0) {
			struct timespec ts = {0, 300 * 1000000};
			nanosleep(&ts, NULL);
		}
		json_decref(j);
		json_decref(rep);
		int ex = api(c, "GET", "/v1/items", NULL, "items", BODY_PARSE, &j);
		if (ex != EX_OK)
			return ex;
		rep = check_items(json_object_get(j, "items"), &bad);
		if (bad == 0)
			break;
	}
	if (c->json) {
		json_t *o = json_pack("{s:b,s:I,s:O}", "ok", bad == 0, "mismatches",
				      (json_int_t)bad, "items", rep);
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		json_array_foreach(rep, i, it)
		{
			long long sold = jnum(it, "sold"), ret = jnum(it, "returned");
			if (!json_is_true(json_object_get(it, "in_arena"))) {
				printf("item %lld: not in the arena (store only), LMDB live %lld\n",
				       jnum(it, "item"), jnum(it, "lmdb_live"));
				continue;
			}
			printf("item %lld: total %lld + added %lld == remaining %lld + sold %lld - "
			       "returned %lld: %s\n",
			       jnum(it, "item"), jnum(it, "total"), jnum(it, "added"),
			       jnum(it, "remaining"), sold, ret,
			       json_is_true(json_object_get(it, "stock_ok")) ? "ok" : "MISMATCH");
			printf("item %lld: LMDB live %lld == sold - returned %lld: %s\n",
			       jnum(it, "item"), jnum(it, "lmdb_live"), sold - ret,
			       json_is_true(json_object_get(it, "store_ok")) ? "ok" : "MISMATCH");
		}
		printf("reconcile: %s (%zu items)\n", bad == 0 ? "ok" : "MISMATCH",
		       json_array_size(rep));
	}
	json_decref(j);
	json_decref(rep);
	return bad == 0 ? EX_OK : EX_ERR;
}

/* ------------------------------------------------------------------- main */

static int
usage_error(const char *help, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sk_vlog(PROG, fmt, ap);
	va_end(ap);
	fputs(help, stderr);
	return EX_USAGE;
}

/* ------------------------------------------------------- the command table */

#define ACTIVITY_ADD_OPTS                                                                          \
	(1u << O_TOTAL | 1u << O_PRICE | 1u << O_LIMIT | 1u << O_NAME | 1u << O_START |            \
	 1u << O_END | 1u << O_PAY_TIMEOUT)

static const struct ctl_cmd commands[] = {
	{"order", NULL, ARGS_NONE, 0, order_help, NULL},
	{"order", "show", ARGS_ORDER_ID, 0, order_show_help, cmd_order_show},
	{"order", "pay", ARGS_ORDER_ID, 0, order_pay_help, cmd_order_pay},
	{"items", NULL, ARGS_NONE, 0, items_help, cmd_items},
	{"item", NULL, ARGS_ITEM_ID, 0, item_help, cmd_item},
	{"activity", NULL, ARGS_NONE, 0, activity_help, NULL},
	{"activity", "add", ARGS_ITEM_ID, ACTIVITY_ADD_OPTS, activity_add_help, cmd_activity_add},
	{"activity", "list", ARGS_NONE, 0, activity_list_help, cmd_activity_list},
	{"activity", "show", ARGS_ITEM_ID, 0, activity_show_help, cmd_activity_show},
	{"activity", "close", ARGS_ITEM_ID, 0, activity_close_help, cmd_activity_close},
	{"stock", NULL, ARGS_NONE, 0, stock_help, NULL},
	{"stock", "add", ARGS_ITEM_UNITS, 1u << O_REQUEST_ID, stock_help, cmd_stock_add},
	{"metrics", NULL, ARGS_NONE, 0, metrics_help, cmd_metrics},
	{"reconcile", NULL, ARGS_NONE, 0, reconcile_help, cmd_reconcile},
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
	if (nargs != arg_rules[e->args].n) {
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
	struct ctl c = {.port = DEFAULT_PORT};
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
			char *end;
			unsigned long p = v != NULL ? strtoul(v, &end, 10) : 0;
			if (v == NULL || *v == '\0' || *end != '\0' || p == 0 || p > 65535) {
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
		} else if (a[0] == '-' && a[1] == '-' && copt_index(a) >= 0) {
			int k = copt_index(a);
			size_t nl = strlen(copt_names[k]);
			const char *v =
				a[nl] == '=' ? a + nl + 1 : (i + 1 < argc ? argv[++i] : NULL);
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
	CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (cc != CURLE_OK) {
		sk_log(PROG, "cannot initialise libcurl: %s", curl_easy_strerror(cc));
		ex = EX_ERR;
		goto out;
	}
	ex = dispatch(&c, pos, npos, help);
	curl_global_cleanup();
out:
	free(pos);
	return ex;
}
