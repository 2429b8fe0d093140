/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-crowd - a flash-sale crowd in one process.
 *
 * N users press "buy" on one item through C keep-alive connections; a subset
 * of them retries several times. The run is one epoll loop over non-blocking
 * kernel sockets, one request in flight per connection. Every answer is
 * parsed (sk_http_client.h, its body by crowd_http.h), counted, and checked
 * against what the front door promises (design §1, §4): one order per user,
 * duplicates that carry the won order, order ids never shared, winners ==
 * units, every order pollable.
 *
 *   seckill-crowd --server IP [--port N] [--item ID] [--users N] [--attempts N]
 *                 [--conns N] [--poll] [--expect-units N] [--json FILE] ...
 *
 * Exit status: 0 every check passed; 1 a check failed; 2 usage error;
 * 3 could not run (no connection ever, resource or file error); 4 the time
 * bound (or SIGINT) stopped the run before every attempt was answered and no
 * check failed otherwise. docs/crowd.md has the details.
 *
 * This file: setup (limits, CPU, secret, allocations), signals, teardown,
 * main. crowd.h lists the other files of the tool.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "sk_common.h"
#include "sk_log.h"

#include "crowd.h"
#include "sk_config.h"

/* Tokens live for this long (s): longer than any run (--max-seconds <= 3600). */
#define TOKEN_TTL_S 600
_Static_assert(SK_CONFIG_TOKEN_SECRET_MIN == 32 && SK_CONFIG_TOKEN_SECRET_MAX == 4096,
	       "the --secret-file messages name these limits");

volatile sig_atomic_t crowd_interrupted;

static void
on_sigint(int sig)
{
	(void)sig;
	crowd_interrupted = 1;
}

/* open_out - open an output file early, so a bad path fails before the load. */
static FILE *
open_out(const char *path, const char *opt)
{
	FILE *f;

	if (path == NULL)
		return NULL;
	if (strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "w");
	if (f == NULL)
		sk_log(PROG, "--%s %s: %s", opt, path, strerror(errno));
	return f;
}

static int
setup(struct crowd *cw)
{
	struct opts *o = &cw->o;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)o->conns + 32) {
		rl.rlim_cur = rl.rlim_max;
		if (rl.rlim_cur < (rlim_t)o->conns + 32 || setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			sk_log(PROG,
			       "--conns %u needs %u file descriptors, the "
			       "limit is %llu",
			       o->conns, o->conns + 32, (unsigned long long)rl.rlim_max);
			return EXIT_USAGE;
		}
	}
	if (o->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(o->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0) {
			sk_log(PROG, "--cpu %d: %s", o->cpu, strerror(errno));
			return EXIT_USAGE;
		}
	}
	if (o->secret_file != NULL) {
		static uint8_t secret[SK_CONFIG_TOKEN_SECRET_MAX];
		size_t len = 0;
		int rc = sk_config_read_secret(o->secret_file, secret, &len, NULL, 0);
		if (rc == 0)
			rc = sk_token_key_create(secret, len, &cw->key);
		memset(secret, 0, sizeof(secret));
		if (rc != 0) {
			sk_log(PROG, "--secret-file %s: %s", o->secret_file,
			       rc == -EINVAL  ? "secret shorter than 32 bytes"
			       : rc == -EFBIG ? "longer than 4096 bytes"
			       : rc == -EIO   ? "read error"
					      : strerror(-rc));
			return EXIT_USAGE;
		}
		cw->token_exp = (int64_t)time(NULL) + TOKEN_TTL_S;
	}

	cw->sched = crowd_schedule_build(o, &cw->retriers);
	cw->order = calloc(o->users, sizeof(*cw->order));
	cw->uflags = calloc(o->users, sizeof(*cw->uflags));
	cw->requeue = calloc(o->conns, sizeof(*cw->requeue));
	cw->conns = calloc(o->conns, sizeof(*cw->conns));
	if (cw->sched == NULL || cw->order == NULL || cw->uflags == NULL || cw->requeue == NULL ||
	    cw->conns == NULL || crowd_order_map_init(&cw->omap, 1024) != 0) {
		sk_log(PROG, "out of memory for %" PRIu64 " users, %" PRIu64 " attempts", o->users,
		       o->attempts);
		return EXIT_RUNTIME;
	}
	for (uint32_t i = 0; i < o->conns; i++)
		cw->conns[i].fd = -1;
	int rc = crowd_tls_init(cw);
	if (rc != 0)
		return rc;
	cw->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cw->epfd < 0) {
		sk_log(PROG, "epoll_create1: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	cw->buy_head_len = (size_t)snprintf(cw->buy_head, sizeof(cw->buy_head),
					    "POST /v1/seckill/%" PRIu64 " HTTP/1.1\r\nHost: %s\r\n",
					    o->item, o->host);
	if (o->mix.cart_pct > 0) {
		char body[SK_CROWD_CART_BODY_MAX];
		size_t n = sk_crowd_cart_body(body, sizeof(body), o->item, o->mix.cart_lines);

		SK_ASSERT(n > 0); /* the items were checked with the options */
		cw->cart_head_len = (size_t)snprintf(
			cw->cart_head, sizeof(cw->cart_head),
			"POST /v1/cart HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n",
			o->host);
		cw->cart_tail_len = (size_t)snprintf(cw->cart_tail, sizeof(cw->cart_tail),
						     "Content-Length: %zu\r\n\r\n%s", n, body);
	}
	sk_crowd_hist_init(&cw->lat);
	cw->t_start = now_ns();
	cw->deadline = cw->t_start + (uint64_t)(o->max_seconds * 1e9);
	return 0;
}

static void
teardown(struct crowd *cw)
{
	crowd_tls_fini(cw);
	if (cw->epfd > 0)
		close(cw->epfd);
	sk_token_key_free(cw->key);
	free(cw->sched);
	free(cw->order);
	free(cw->uflags);
	free(cw->requeue);
	free(cw->conns);
	free(cw->poll_users);
	crowd_order_map_free(&cw->omap);
}

int
main(int argc, char **argv)
{
	static struct crowd cw; /* large: the histogram and the connection table */
	struct summary s;
	FILE *json = NULL, *orders = NULL;
	int rc;

	rc = crowd_opts_parse(argc, argv, &cw.o);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (cw.o.reserved_file != NULL && (rc = crowd_reserved_write(&cw.o)) != 0)
		return rc;
	if (cw.o.prepare)
		return 0;
	cw.epfd = -1;
	if (cw.o.json != NULL && (json = open_out(cw.o.json, "json")) == NULL)
		return EXIT_USAGE;
	if (cw.o.orders != NULL && (orders = open_out(cw.o.orders, "orders")) == NULL)
		return EXIT_USAGE;
	rc = setup(&cw);
	if (rc != 0) {
		teardown(&cw);
		return rc;
	}

	struct sigaction sa = {.sa_handler = on_sigint};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	crowd_run(&cw);
	if (cw.o.follow != 0 && cw.fatal == NULL && !crowd_interrupted) {
		rc = crowd_follow(&cw, &cw.follow);
		if (rc != 0) {
			teardown(&cw);
			return rc;
		}
	}

	if (cw.fatal != NULL)
		sk_log(PROG, "%s", cw.fatal);
	else if (cw.note[0] != '\0')
		sk_log(PROG, "%s", cw.note);
	crowd_summarize(&cw, &s);
	crowd_report_text(&cw, &s);
	if (json != NULL && crowd_report_json(&cw, &s, json) != 0) {
		sk_log(PROG, "--json %s: write error", cw.o.json);
		if (s.exit == 0)
			s.exit = EXIT_RUNTIME;
	}
	if (orders != NULL && crowd_write_orders(&cw, orders) != 0) {
		sk_log(PROG, "--orders %s: write error", cw.o.orders);
		if (s.exit == 0)
			s.exit = EXIT_RUNTIME;
	}
	if (json != NULL && json != stdout)
		fclose(json);
	if (orders != NULL && orders != stdout)
		fclose(orders);
	teardown(&cw);
	return s.exit;
}
