/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_cpool_sub.c - the subscriber of the pool's channels: its own
 * connection (SUBSCRIBE <prefix>:soldout <prefix>:pool), messages read
 * with poll() on the socket and hiredis' reader, so that a quiet channel
 * is not an error and the wait is bounded by the caller's timeout.
 *
 * A message that is not one of ours (what cluster/lua/common.lua
 * publishes: {"item":I,"sold_out":B,"version":V,"at_us":T} on soldout,
 * {"item":I,"free":F,"want":B,"at_us":T} on pool; at_us may be missing, as from a
 * member of an older release) is skipped: anyone may PUBLISH on a
 * channel, and a stranger must not break the member's subscriber.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_cpool_impl.h"

/* Most replies handled by one poll: the loop is bounded. */
#define SUB_BATCH_MAX 4096

struct sk_cpool_sub {
	struct sk_cpool_link link;
	char channel[SK_CPOOL_PREFIX_MAX + 16];	     /* <prefix>:soldout */
	char pool_channel[SK_CPOOL_PREFIX_MAX + 16]; /* <prefix>:pool */
};

int
sk_cpool_sub_open(struct sk_cpool_sub **out, const struct sk_cpool_config *cfg)
{
	struct sk_cpool_sub *s;
	int rc;

	*out = NULL;
	rc = sk_cpool_config_check(cfg);
	if (rc != 0)
		return rc;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	rc = sk_cpool_link_init_cfg(&s->link, cfg, NULL, 0);
	if (rc != 0) {
		free(s);
		return rc;
	}
	const char *prefix = cfg->prefix != NULL ? cfg->prefix : "seckill";
	snprintf(s->channel, sizeof(s->channel), "%s:soldout", prefix);
	snprintf(s->pool_channel, sizeof(s->pool_channel), "%s:pool", prefix);
	*out = s;
	return 0;
}

void
sk_cpool_sub_close(struct sk_cpool_sub *s)
{
	if (s == NULL)
		return;
	sk_cpool_link_fini(&s->link);
	free(s);
}

const char *
sk_cpool_sub_errstr(const struct sk_cpool_sub *s)
{
	return s->link.err;
}

/* subscribed: @r confirms the subscription to one of our channels. */
static bool
subscribed(const struct sk_cpool_sub *s, const redisReply *r)
{
	return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
	       r->element[0]->type == REDIS_REPLY_STRING &&
	       strcmp(r->element[0]->str, "subscribe") == 0 &&
	       r->element[1]->type == REDIS_REPLY_STRING &&
	       (strcmp(r->element[1]->str, s->channel) == 0 ||
		strcmp(r->element[1]->str, s->pool_channel) == 0);
}

/* subscribe: connect (backoff permitting) and SUBSCRIBE to both channels
 * (one confirmation each). 0 or an error. */
static int
subscribe_locked(struct sk_cpool_sub *s)
{
	int rc = sk_cpool_link_connect(&s->link), e;

	if (rc <= 0)
		return rc;
	if (redisAppendCommand(s->link.c, "SUBSCRIBE %s %s", s->channel, s->pool_channel) !=
	    REDIS_OK)
		return sk_cpool_link_fail(&s->link, errno);
	for (int i = 0; i < 2; i++) {
		void *reply = NULL;
		redisReply *r;

		if (redisGetReply(s->link.c, &reply) != REDIS_OK || reply == NULL) {
			e = errno;
			return sk_cpool_link_fail(&s->link, e);
		}
		r = reply;
		if (!subscribed(s, r)) {
			sk_cpool_link_seterr(
				&s->link, "SUBSCRIBE %s %s: %s", s->channel, s->pool_channel,
				r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			freeReplyObject(r);
			return sk_cpool_link_fail(&s->link, 0);
		}
		freeReplyObject(r);
	}
	sk_cpool_link_ok(&s->link);
	return 0;
}

static int
subscribe(struct sk_cpool_sub *s)
{
	struct sk_cpool_nopipe np;
	int rc;

	sk_cpool_nopipe_begin(&np);
	rc = subscribe_locked(s);
	sk_cpool_nopipe_end(&np);
	return rc;
}

/* parse_bool: true/false into @b; false if it is neither. */
static bool
parse_bool(const char *w, bool *b)
{
	if (strcmp(w, "true") == 0)
		*b = true;
	else if (strcmp(w, "false") == 0)
		*b = false;
	else
		return false;
	return true;
}

/* parse_tail: the end of a message at @p: "}" or ",\"at_us\":T}" (T into
 * @at_us, else 0); false if it is anything else, or T is 0 or so large
 * that T * 1000 (ns) would not fit an int64_t. */
static bool
parse_tail(const char *p, int64_t *at_us)
{
	long long t;
	int end = 0;

	*at_us = 0;
	if (strcmp(p, "}") == 0)
		return true;
	if (sscanf(p, ",\"at_us\":%lld}%n", &t, &end) != 1 || end == 0 || p[end] != '\0' ||
	    t <= 0 || t > INT64_MAX / 1000)
		return false;
	*at_us = t;
	return true;
}

/* parse_event: a payload of the sold-out channel or the pool one into @ev;
 * false if it is not ours. */
static bool
parse_event(const char *msg, bool soldout_channel, struct sk_cpool_event *ev)
{
	unsigned long long version = 0;
	unsigned long item;
	char flag[6];
	int end = 0;

	memset(ev, 0, sizeof(*ev));
	/* No field of ours is negative: a '-' anywhere is a stranger's
	 * (sscanf's %lu would take "-1" as a huge number). */
	if (strncmp(msg, "{\"item\":", 8) != 0 || strchr(msg, '-') != NULL)
		return false;
	if (soldout_channel) {
		if (sscanf(msg, "{\"item\":%lu,\"sold_out\":%5[a-z],\"version\":%llu%n", &item,
			   flag, &version, &end) != 3 ||
		    end == 0 || !parse_bool(flag, &ev->sold_out))
			return false;
		ev->kind = SK_CPOOL_EV_FLAG;
	} else {
		unsigned long long free;

		if (sscanf(msg, "{\"item\":%lu,\"free\":%llu,\"want\":%5[a-z]%n", &item, &free,
			   flag, &end) != 3 ||
		    end == 0 || !parse_bool(flag, &ev->want))
			return false;
		ev->kind = SK_CPOOL_EV_POOL;
		ev->free = free;
	}
	if (item > UINT32_MAX || !parse_tail(msg + end, &ev->at_us))
		return false;
	ev->item = (uint32_t)item;
	ev->version = version;
	return true;
}

/* deliver: @r if it is a message of our channel; 1 if an event was delivered. */
static int
deliver(const struct sk_cpool_sub *s, const redisReply *r,
	void (*cb)(const struct sk_cpool_event *ev, void *arg), void *arg)
{
	struct sk_cpool_event ev;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3)
		return 0;
	for (int i = 0; i < 3; i++) {
		if (r->element[i]->type != REDIS_REPLY_STRING)
			return 0;
	}
	if (strcmp(r->element[0]->str, "message") != 0)
		return 0;
	bool flag = strcmp(r->element[1]->str, s->channel) == 0;
	if (!flag && strcmp(r->element[1]->str, s->pool_channel) != 0)
		return 0;
	if (!parse_event(r->element[2]->str, flag, &ev))
		return 0;
	cb(&ev, arg);
	return 1;
}

int
sk_cpool_sub_poll(struct sk_cpool_sub *s, int timeout_ms,
		  void (*cb)(const struct sk_cpool_event *ev, void *arg), void *arg,
		  bool *resubscribed)
{
	int64_t deadline = sk_cpool_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int n = 0, rc;

	if (resubscribed != NULL)
		*resubscribed = false;
	if (s->link.c == NULL) {
		/* Down: wait for the backoff within the caller's time, then try. */
		int64_t now = sk_cpool_now_ms();

		if (s->link.next_try_ms > now) {
			int64_t wait = s->link.next_try_ms - now;

			if (wait > deadline - now)
				wait = deadline - now;
			if (wait > 0)
				poll(NULL, 0, (int)wait);
		}
		rc = subscribe(s);
		if (rc != 0)
			return rc;
		/* The caller reads the state keys now, not after the timeout. */
		if (resubscribed != NULL)
			*resubscribed = true;
		deadline = sk_cpool_now_ms();
	}
	for (int i = 0; i < SUB_BATCH_MAX; i++) {
		void *reply = NULL;
		struct pollfd pfd = {.fd = s->link.c->fd, .events = POLLIN};
		int64_t left;

		if (redisGetReplyFromReader(s->link.c, &reply) != REDIS_OK) {
			sk_cpool_link_seterr(&s->link, "subscriber: %s", s->link.c->errstr);
			return sk_cpool_link_fail(&s->link, 0);
		}
		if (reply != NULL) {
			n += deliver(s, reply, cb, arg);
			freeReplyObject(reply);
			continue;
		}
		if (n > 0)
			break; /* what arrived together is delivered together */
		left = deadline - sk_cpool_now_ms();
		if (left < 0)
			left = 0;
		rc = poll(&pfd, 1, (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			int e = errno;

			sk_cpool_link_seterr(&s->link, "subscriber: poll: %s", strerror(e));
			return sk_cpool_link_fail(&s->link, 0);
		}
		if (rc == 0)
			break;
		if (redisBufferRead(s->link.c) != REDIS_OK) {
			int e = errno;

			sk_cpool_link_seterr(&s->link, "subscriber: %s", s->link.c->errstr);
			return sk_cpool_link_fail(&s->link, e == EAGAIN ? 0 : e);
		}
	}
	return n;
}
