/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_fake_server - a stand-in for the front door, for seckill-crowd's own
 * tests only: one thread, epoll, 127.0.0.1 (::1 with --ipv6), the buy/poll/item semantics of
 * design §4 with N units and a per-user limit of 1, and switches that break
 * exactly one promise so that the client must notice.
 *
 *   crowd_fake_server [--port N] [--units N] [--item ID] [--start-in-ms N]
 *                     [--secret-file F] [--close-every N] [--busy-every N]
 *                     [--broken MODE] [--max-seconds S] [--ipv6] [--gate]
 *
 * --gate: the item requires the gate claim (with --secret-file): a token
 * without "gate":"<item>" is answered 403 {"status":"gate"}.
 *
 * Prints "port N" on stdout once it listens (--port 0, the default, picks a
 * free one), then serves until SIGTERM/SIGINT or --max-seconds (default 120).
 *
 * MODE is one of:
 *   two-orders    the first winner that retries gets a second, new order
 *   dup-mismatch  the first duplicate answer carries another order id
 *   shared-order  the second winner is given the first winner's order id
 *   poll-missing  polling the first order answers 404
 *   drop          the 50th buy request gets no answer: the connection closes
 *   garbage       the 50th buy request gets a malformed answer
 *   gate-leak     (--gate) the first buyer without the claim is let through
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sk_token.h"

#define CONNS_MAX 4096
#define IN_CAP	  16384
#define OUT_CAP	  65536
#define USERS_CAP (1u << 21) /* distinct buyers the map holds */
#define ORDER_ID0 1000000ull /* first order id: ids are ORDER_ID0 + seq */

enum broken {
	B_NONE,
	B_TWO_ORDERS,
	B_DUP_MISMATCH,
	B_SHARED,
	B_POLL_MISSING,
	B_DROP,
	B_GARBAGE,
	B_GATE_LEAK
};

struct fconn {
	int fd;
	bool closing; /* close once out[] is flushed */
	size_t in_len, out_off, out_len;
	char in[IN_CAP];
	char out[OUT_CAP];
};

struct server {
	uint64_t item, units, sold, buys, answers;
	uint64_t close_every, busy_every;
	int64_t start_ns; /* realtime ns at which the sale opens */
	enum broken broken;
	bool broken_done;
	bool gate; /* --gate */
	struct sk_token_key *key;
	uint64_t *ukeys; /* user ids, 0 = empty */
	uint64_t *uorders;
	uint64_t orders; /* order ids handed out */
	int epfd;
	struct fconn *conns[CONNS_MAX];
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t
real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static bool
parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return false;
	}
	*out = v;
	return true;
}

/* user_slot - the map slot of @user (found or empty), or NULL if full. */
static uint64_t *
user_slot(struct server *sv, uint64_t user, size_t *idx)
{
	size_t j = (size_t)((user * 0x9e3779b97f4a7c15ull) >> 43) & (USERS_CAP - 1);

	for (size_t n = 0; n < USERS_CAP; n++, j = (j + 1) & (USERS_CAP - 1)) {
		if (sv->ukeys[j] == user || sv->ukeys[j] == 0) {
			*idx = j;
			return &sv->ukeys[j];
		}
	}
	return NULL;
}

static uint64_t
new_order(struct server *sv)
{
	return ORDER_ID0 + sv->orders++;
}

/* reply - queue one answer on @c. */
static void
reply(struct server *sv, struct fconn *c, int code, const char *reason, const char *extra,
      const char *body, bool close_req)
{
	bool close = close_req || (sv->close_every && ++sv->answers % sv->close_every == 0);
	size_t room = OUT_CAP - c->out_len;
	int n = snprintf(c->out + c->out_len, room,
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\n%s%s\r\n%s",
			 code, reason, strlen(body), extra, close ? "Connection: close\r\n" : "",
			 body);
	if (n < 0 || (size_t)n >= room) {
		c->closing = true;
		return;
	}
	c->out_len += (size_t)n;
	if (close)
		c->closing = true;
}

/* header - the value of header @name in head [h, h+len), or NULL. */
static const char *
header(const char *h, size_t len, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = h, *end = h + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			break;
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			while (v < eol && *v == ' ')
				v++;
			const char *ve = eol;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
				ve--;
			*vlen = (size_t)(ve - v);
			return v;
		}
		p = eol + 1;
	}
	return NULL;
}

/* identify - the buyer, or 0; *@gate its token's gate claim (0: none). */
static uint64_t
identify(struct server *sv, const char *h, size_t hlen, uint64_t *gate)
{
	struct sk_token_verified tv = {0, 0};
	const char *v;
	size_t vlen;
	uint64_t user = 0;

	*gate = 0;
	if (sv->key == NULL) {
		v = header(h, hlen, "X-User-Id", &vlen);
		if (v == NULL || sk_token_user_id_parse(v, vlen, &user) != 0)
			return 0;
		return user;
	}
	v = header(h, hlen, "Authorization", &vlen);
	if (v == NULL || vlen < 8 || strncasecmp(v, "Bearer ", 7) != 0)
		return 0;
	if (sk_token_verify_claims(sv->key, v + 7, vlen - 7, sv->item, real_ns() / 1000000000, 5,
				   &tv) != SK_TOKEN_OK)
		return 0;
	*gate = tv.gate;
	return tv.user;
}

static void
buy(struct server *sv, struct fconn *c, const char *h, size_t hlen)
{
	char body[160];
	int64_t now = real_ns();
	uint64_t user, gate, *slot;
	size_t idx;

	sv->buys++;
	if ((sv->broken == B_DROP || sv->broken == B_GARBAGE) && sv->buys == 50) {
		if (sv->broken == B_GARBAGE) {
			const char junk[] = "HTTP/1.1 2x2 Accepted\r\n\r\n";
			memcpy(c->out + c->out_len, junk, sizeof(junk) - 1);
			c->out_len += sizeof(junk) - 1;
		}
		c->closing = true;
		return;
	}
	if (now < sv->start_ns) {
		snprintf(body, sizeof(body), "{\"status\":\"not_started\",\"starts_in_ms\":%lld}",
			 (long long)((sv->start_ns - now + 999999) / 1000000));
		reply(sv, c, 425, "Too Early", "", body, false);
		return;
	}
	user = identify(sv, h, hlen, &gate);
	if (user == 0) {
		reply(sv, c, 401, "Unauthorized", "WWW-Authenticate: Bearer\r\n",
		      "{\"status\":\"unauthorized\"}", false);
		return;
	}
	if (sv->gate && gate != sv->item) {
		if (sv->broken == B_GATE_LEAK && !sv->broken_done) {
			sv->broken_done = true;
		} else {
			reply(sv, c, 403, "Forbidden", "", "{\"status\":\"gate\"}", false);
			return;
		}
	}
	if (sv->busy_every && sv->buys % sv->busy_every == 0) {
		reply(sv, c, 429, "Too Many Requests", "Retry-After: 1\r\n",
		      "{\"status\":\"busy\"}", false);
		return;
	}
	slot = user_slot(sv, user, &idx);
	if (slot == NULL) {
		reply(sv, c, 503, "Service Unavailable", "Retry-After: 1\r\n",
		      "{\"status\":\"unavailable\"}", false);
		return;
	}
	if (*slot == user) {
		uint64_t id = sv->uorders[idx];
		bool dup = true;
		if (!sv->broken_done && sv->broken == B_TWO_ORDERS) {
			sv->broken_done = true;
			id = new_order(sv);
			dup = false;
		} else if (!sv->broken_done && sv->broken == B_DUP_MISMATCH) {
			sv->broken_done = true;
			id = new_order(sv);
		}
		snprintf(body, sizeof(body), "{\"status\":\"queued\",\"order\":\"%" PRIu64 "\"%s}",
			 id, dup ? ",\"duplicate\":true" : "");
		reply(sv, c, 202, "Accepted", "", body, false);
		return;
	}
	if (sv->sold >= sv->units) {
		reply(sv, c, 410, "Gone", "", "{\"status\":\"sold_out\"}", false);
		return;
	}
	sv->sold++;
	*slot = user;
	sv->uorders[idx] = new_order(sv);
	if (sv->broken == B_SHARED && !sv->broken_done && sv->sold == 2) {
		sv->broken_done = true;
		sv->uorders[idx] = ORDER_ID0;
	}
	snprintf(body, sizeof(body), "{\"status\":\"queued\",\"order\":\"%" PRIu64 "\"}",
		 sv->uorders[idx]);
	reply(sv, c, 202, "Accepted", "", body, false);
}

static void
poll_order(struct server *sv, struct fconn *c, const char *arg, size_t len)
{
	char body[160];
	uint64_t id;

	if (!parse_u64(arg, len, &id) || id < ORDER_ID0 || id - ORDER_ID0 >= sv->orders ||
	    (sv->broken == B_POLL_MISSING && id == ORDER_ID0)) {
		reply(sv, c, 404, "Not Found", "", "{\"status\":\"not_found\"}", false);
		return;
	}
	snprintf(body, sizeof(body), "{\"order\":\"%" PRIu64 "\",\"status\":\"queued\"}", id);
	reply(sv, c, 200, "OK", "", body, false);
}

static void
item(struct server *sv, struct fconn *c)
{
	char body[200];
	const char *state = real_ns() < sv->start_ns ? "scheduled"
			    : sv->sold >= sv->units  ? "sold_out"
						     : "open";

	snprintf(body, sizeof(body),
		 "{\"item\":%" PRIu64 ",\"state\":\"%s\",\"remaining\":%" PRIu64
		 ",\"starts_at\":%lld,\"ends_at\":null}",
		 sv->item, state, sv->units - sv->sold, (long long)(sv->start_ns / 1000000));
	reply(sv, c, 200, "OK", "", body, false);
}

/* serve - answer every complete request in c->in; false if @c must close now. */
static bool
serve(struct server *sv, struct fconn *c)
{
	size_t used = 0;

	while (!c->closing) {
		char *h = c->in + used;
		size_t avail = c->in_len - used;
		char *end = memmem(h, avail, "\r\n\r\n", 4);
		if (end == NULL)
			break;
		size_t hlen = (size_t)(end - h) + 4, blen = 0, vlen;
		const char *v = header(h, hlen, "Content-Length", &vlen);
		if (v != NULL && !parse_u64(v, vlen, &blen))
			return false;
		if (avail < hlen + blen)
			break;
		used += hlen + blen;

		char item_path[48];
		size_t il = (size_t)snprintf(item_path, sizeof(item_path),
					     "POST /v1/seckill/%" PRIu64 " ", sv->item);
		if (strncmp(h, item_path, il) == 0) {
			buy(sv, c, h, hlen);
		} else if (strncmp(h, "GET /v1/orders/", 15) == 0) {
			const char *a = h + 15, *sp = memchr(a, ' ', hlen - 15);
			if (sp == NULL)
				return false;
			poll_order(sv, c, a, (size_t)(sp - a));
		} else if (strncmp(h, "GET /v1/items/", 14) == 0) {
			uint64_t id;
			const char *a = h + 14, *sp = memchr(a, ' ', hlen - 14);
			if (sp != NULL && parse_u64(a, (size_t)(sp - a), &id) && id == sv->item)
				item(sv, c);
			else
				reply(sv, c, 404, "Not Found", "", "{\"status\":\"not_found\"}",
				      false);
		} else {
			reply(sv, c, 404, "Not Found", "", "{\"status\":\"not_found\"}", false);
		}
		if (header(h, hlen, "Connection", &vlen) != NULL && vlen == 5 &&
		    strncasecmp(header(h, hlen, "Connection", &vlen), "close", 5) == 0)
			c->closing = true;
	}
	memmove(c->in, c->in + used, c->in_len - used);
	c->in_len -= used;
	return c->in_len < IN_CAP;
}

static void
conn_free(struct server *sv, int slot)
{
	struct fconn *c = sv->conns[slot];

	close(c->fd);
	free(c);
	sv->conns[slot] = NULL;
}

/* flush - write out[]; false once @c is done (closed or failed). */
static bool
flush(struct server *sv, struct fconn *c, int slot)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT,
						 .data.u32 = (uint32_t)slot};
			epoll_ctl(sv->epfd, EPOLL_CTL_MOD, c->fd, &ev);
			return true;
		}
		conn_free(sv, slot);
		return false;
	}
	c->out_off = c->out_len = 0;
	if (c->closing) {
		conn_free(sv, slot);
		return false;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)slot};
	epoll_ctl(sv->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	return true;
}

static void
on_conn(struct server *sv, int slot, uint32_t events)
{
	struct fconn *c = sv->conns[slot];

	if (c == NULL)
		return;
	if ((events & EPOLLOUT) && !flush(sv, c, slot))
		return;
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || c->closing)
		return;
	ssize_t n = recv(c->fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(sv, slot);
		return;
	}
	c->in_len += (size_t)n;
	if (!serve(sv, c)) {
		conn_free(sv, slot);
		return;
	}
	flush(sv, c, slot);
}

static void
on_accept(struct server *sv, int lfd)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		int slot = -1;
		for (int i = 0; i < CONNS_MAX; i++) {
			if (sv->conns[i] == NULL) {
				slot = i;
				break;
			}
		}
		struct fconn *c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
		if (c == NULL) {
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		sv->conns[slot] = c;
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)slot};
		if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
			conn_free(sv, slot);
	}
}

static int
load_key(struct server *sv, const char *path)
{
	char buf[4097];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	return sk_token_key_create(buf, n, &sv->key);
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"units", required_argument, NULL, 'u'},
		{"item", required_argument, NULL, 'i'},
		{"start-in-ms", required_argument, NULL, 's'},
		{"secret-file", required_argument, NULL, 'k'},
		{"close-every", required_argument, NULL, 'c'},
		{"busy-every", required_argument, NULL, 'b'},
		{"broken", required_argument, NULL, 'B'},
		{"max-seconds", required_argument, NULL, 'm'},
		{"ipv6", no_argument, NULL, '6'},
		{"gate", no_argument, NULL, 'g'},
		{NULL, 0, NULL, 0},
	};
	static const char *const modes[] = {"none",	    "two-orders",   "dup-mismatch",
					    "shared-order", "poll-missing", "drop",
					    "garbage",	    "gate-leak"};
	static struct server sv;
	uint64_t port = 0, start_ms = 0, max_s = 120, v = 0;
	int opt;
	bool v6 = false;

	sv.units = 100;
	sv.item = 1;
	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		bool ok = true;
		switch (opt) {
		case '6':
			v6 = true;
			break;
		case 'g':
			sv.gate = true;
			break;
		case 'k':
			ok = load_key(&sv, optarg) == 0;
			break;
		case 'B':
			ok = false;
			for (unsigned m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
				if (strcmp(optarg, modes[m]) == 0) {
					sv.broken = (enum broken)m;
					ok = true;
				}
			}
			break;
		case 'p':
		case 'u':
		case 'i':
		case 's':
		case 'c':
		case 'b':
		case 'm':
			ok = parse_u64(optarg, strlen(optarg), &v);
			if (opt == 'p')
				port = v;
			else if (opt == 'u')
				sv.units = v;
			else if (opt == 'i')
				sv.item = v;
			else if (opt == 's')
				start_ms = v;
			else if (opt == 'c')
				sv.close_every = v;
			else if (opt == 'b')
				sv.busy_every = v;
			else
				max_s = v;
			break;
		default:
			ok = false;
		}
		if (!ok || port > 65535 || sv.units > 10000000) {
			fprintf(stderr, "crowd_fake_server: bad argument\n");
			return 2;
		}
	}
	sv.ukeys = calloc(USERS_CAP, sizeof(*sv.ukeys));
	sv.uorders = calloc(USERS_CAP, sizeof(*sv.uorders));
	if (sv.ukeys == NULL || sv.uorders == NULL)
		return 1;
	sv.start_ns = real_ns() + (int64_t)start_ms * 1000000;

	int lfd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0),
	    one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	struct sockaddr *sa_any = v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a;
	socklen_t alen = v6 ? sizeof(a6) : sizeof(a);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a6.sin6_addr = in6addr_loopback;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, sa_any, alen) != 0 || listen(lfd, 4096) != 0 ||
	    getsockname(lfd, sa_any, &alen) != 0) {
		perror("crowd_fake_server: listen");
		return 1;
	}
	sv.epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
	epoll_ctl(sv.epfd, EPOLL_CTL_ADD, lfd, &ev);

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	printf("port %u\n", ntohs(v6 ? a6.sin6_port : a.sin_port));
	fflush(stdout);

	int64_t end = real_ns() + (int64_t)max_s * 1000000000ll;
	struct epoll_event evs[128];
	while (!stop && real_ns() < end) {
		int n = epoll_wait(sv.epfd, evs, 128, 100);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == UINT32_MAX)
				on_accept(&sv, lfd);
			else
				on_conn(&sv, (int)evs[i].data.u32, evs[i].events);
		}
	}
	for (int i = 0; i < CONNS_MAX; i++) {
		if (sv.conns[i] != NULL)
			conn_free(&sv, i);
	}
	close(lfd);
	close(sv.epfd);
	sk_token_key_free(sv.key);
	free(sv.ukeys);
	free(sv.uorders);
	fprintf(stderr, "crowd_fake_server: %" PRIu64 " buys, %" PRIu64 " sold of %" PRIu64 "\n",
		sv.buys, sv.sold, sv.units);
	return 0;
}
