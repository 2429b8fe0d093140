/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kafka export of the store's event log (sk_export.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "sk_addr.h"
#include "sk_common.h"
#include "sk_export.h"
#include "sk_logfmt.h"

/* State of a window slot (one event, indexed by seq & mask). */
enum { SLOT_FREE = 0, SLOT_SENT, SLOT_DONE };

#define VALUE_MAX (SK_STORE_MAX_LINES * 96 + 512)
/* an escaped name: at most 6 bytes per byte (a control character), and the NUL */
#define JSON_NAME_MAX (SK_STORE_NAME_MAX * 6 + 1)

struct sk_export {
	struct sk_store *st;
	rd_kafka_t *rk;
	rd_kafka_topic_t *orders, *events;
	char orders_name[256], events_name[256], bootstrap[1024];
	const struct sk_kafka_props *props; /* --kafka-config, not owned */

	uint8_t *slot; /* window states */
	uint64_t mask; /* window - 1 */
	uint64_t next; /* next event to produce */
	uint64_t cursor;
	uint64_t inflight; /* produced, no report yet */
	bool rewind;	   /* a delivery failed: produce again from the cursor */
	int64_t every_ns, saved_ns;

	struct sk_store_line lines[SK_STORE_MAX_LINES];
	char value[VALUE_MAX];
	struct sk_export_stats s; /* relaxed atomics */
};

static void
stat_set(uint64_t *v, uint64_t x)
{
	__atomic_store_n(v, x, __ATOMIC_RELAXED);
}

static void
stat_add(uint64_t *v, uint64_t n)
{
	__atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

/* on_delivery - librdkafka's delivery report, served by rd_kafka_poll() on our thread. */
static void
on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct sk_export *ex = opaque;
	uint64_t seq = (uint64_t)(uintptr_t)m->_private;

	(void)rk;
	ex->inflight--;
	if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		stat_add(&ex->s.failed, 1);
		ex->rewind = true;
		return;
	}
	if (seq > ex->cursor && seq < ex->next)
		ex->slot[seq & ex->mask] = SLOT_DONE;
	stat_add(&ex->s.delivered, 1);
}

/* producer_free - destroy the producer and its topics, dropping what is queued. */
static void
producer_free(struct sk_export *ex)
{
	if (ex->rk == NULL)
		return;
	rd_kafka_purge(ex->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
	rd_kafka_poll(ex->rk, 0); /* the purged messages' reports */
	if (ex->orders != NULL)
		rd_kafka_topic_destroy(ex->orders);
	if (ex->events != NULL)
		rd_kafka_topic_destroy(ex->events);
	rd_kafka_destroy(ex->rk);
	ex->rk = NULL;
	ex->orders = ex->events = NULL;
}

/* producer_new - the idempotent producer and its two topics. */
static int
producer_new(struct sk_export *ex, char *err, size_t errlen)
{
	static const char *const reserved[] = {SK_EXPORT_RESERVED, NULL};
	char e[256], q[32], why[SK_KAFKA_CONF_ERR_MAX];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	const struct sk_kafka_kv kv[] = {
		{"bootstrap.servers", ex->bootstrap},
		{"client.id", "seckill-control"},
		{"enable.idempotence", "true"},
		{"message.timeout.ms", "0"}, /* never expire: an outage only delays */
		{"linger.ms", "5"},
		{"queue.buffering.max.messages", q},
	};

	if (c == NULL)
		return -ENOMEM;
	sk_logfmt_kafka(c);
	snprintf(q, sizeof(q), "%" PRIu64,
		 (ex->mask + 1) * 2 < 10000000 ? (ex->mask + 1) * 2 : 10000000);
	if (sk_kafka_conf_build(c, kv, SK_ARRAY_SIZE(kv), reserved, ex->props, why, sizeof(why)) !=
	    0) {
		sk_set_err(err, errlen, "kafka: %s", why);
		rd_kafka_conf_destroy(c);
		return -EINVAL;
	}
	rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
	rd_kafka_conf_set_opaque(c, ex);
	ex->rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, e, sizeof(e));
	if (ex->rk == NULL) {
		sk_set_err(err, errlen, "kafka: cannot create the producer: %s", e);
		rd_kafka_conf_destroy(c);
		return -EINVAL;
	}
	ex->orders = rd_kafka_topic_new(ex->rk, ex->orders_name, NULL);
	ex->events = rd_kafka_topic_new(ex->rk, ex->events_name, NULL);
	if (ex->orders == NULL || ex->events == NULL) {
		sk_set_err(err, errlen, "kafka: topics %s, %s: %s", ex->orders_name,
			   ex->events_name, rd_kafka_err2str(rd_kafka_last_error()));
		producer_free(ex); /* all or nothing: ex->rk is NULL again */
		return -EINVAL;
	}
	return 0;
}

int
sk_export_open(struct sk_export **out, struct sk_store *st, const struct sk_export_conf *conf,
	       char *err, size_t errlen)
{
	uint64_t window = conf->window != 0 ? conf->window : SK_EXPORT_WINDOW_DEFAULT;
	struct sk_export *ex;
	int rc;

	if (st == NULL || conf->bootstrap == NULL || conf->bootstrap[0] == '\0') {
		sk_set_err(err, errlen, "kafka: no bootstrap servers");
		return -EINVAL;
	}
	if (!sk_is_pow2(window) || window > (UINT64_C(1) << 24)) {
		sk_set_err(err, errlen, "kafka: window %" PRIu64 " is not a power of two <= 2^24",
			   window);
		return -EINVAL;
	}
	ex = calloc(1, sizeof(*ex));
	if (ex == NULL || (ex->slot = calloc(window, 1)) == NULL) {
		free(ex);
		return -ENOMEM;
	}
	ex->st = st;
	ex->mask = window - 1;
	ex->props = conf->props;
	ex->every_ns = conf->cursor_every_ns > 0 ? conf->cursor_every_ns : INT64_C(1000000000);
	snprintf(ex->bootstrap, sizeof(ex->bootstrap), "%s", conf->bootstrap);
	snprintf(ex->orders_name, sizeof(ex->orders_name), "%s",
		 conf->orders_topic ? conf->orders_topic : SK_EXPORT_ORDERS_TOPIC);
	snprintf(ex->events_name, sizeof(ex->events_name), "%s",
		 conf->events_topic ? conf->events_topic : SK_EXPORT_EVENTS_TOPIC);

	rc = sk_store_cursor_get(st, SK_EXPORT_CURSOR, &ex->cursor);
	if (rc == -ENOENT)
		ex->cursor = 0, rc = 0;
	if (rc != 0) {
		sk_set_err(err, errlen, "kafka: cannot read the cursor %s: %s", SK_EXPORT_CURSOR,
			   strerror(-rc));
		goto fail;
	}
	ex->next = ex->cursor + 1;
	stat_set(&ex->s.cursor, ex->cursor);
	stat_set(&ex->s.saved, ex->cursor);
	stat_set(&ex->s.last_seq, ex->cursor);
	rc = producer_new(ex, err, errlen);
	if (rc == 0) {
		*out = ex;
		return 0;
	}
fail:
	producer_free(ex);
	free(ex->slot);
	free(ex);
	return rc;
}

/* advance - the cursor over the delivered run. */
static void
advance(struct sk_export *ex)
{
	while (ex->cursor + 1 < ex->next && ex->slot[(ex->cursor + 1) & ex->mask] == SLOT_DONE) {
		ex->slot[(ex->cursor + 1) & ex->mask] = SLOT_FREE;
		ex->cursor++;
	}
	stat_set(&ex->s.cursor, ex->cursor);
}

/* save - write the cursor if it moved (now, or when @force). */
static int
save(struct sk_export *ex, int64_t now_ns, bool force)
{
	int rc;

	if (ex->cursor == ex->s.saved || (!force && now_ns - ex->saved_ns < ex->every_ns))
		return 0;
	rc = sk_store_cursor_set(ex->st, SK_EXPORT_CURSOR, ex->cursor);
	if (rc != 0)
		return rc;
	ex->saved_ns = now_ns;
	stat_set(&ex->s.saved, ex->cursor);
	return 0;
}

/* order_value - the JSON of a confirmed order, with its lines. */
static int
order_value(struct sk_export *ex, const struct sk_store_event *ev)
{
	unsigned n = 0;
	int rc = sk_store_order_get(ex->st, ev->order, ex->lines, SK_STORE_MAX_LINES, &n);
	char ip[SK_ADDR_STRLEN] = "";
	size_t len;

	if (rc != 0)
		n = 0; /* unknown to the store now (cannot happen: orders stay): no lines */
	if (n > 0 && sk_addr_format(&ex->lines[0].rec.client, ip, sizeof(ip)) < 0)
		ip[0] = '\0'; /* no address: "" */
	len = (size_t)snprintf(ex->value, sizeof(ex->value),
			       "{\"v\":%d,\"seq\":%" PRIu64
			       ",\"type\":\"confirmed\",\"order\":\"%" PRIu64 "\",\"user\":%" PRIu64
			       ",\"units\":%" PRIu64 ",\"time_ns\":%" PRId64 ",\"sold_ns\":%" PRId64
			       ",\"client_ip\":\"%s\",\"lines\":[",
			       SK_EXPORT_VERSION, ev->seq, ev->order, ev->user, ev->units,
			       ev->time_ns, n > 0 ? ex->lines[0].rec.time_ns : 0, ip);
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(ex->value + len, sizeof(ex->value) - len,
					"%s{\"line\":%u,\"item\":%" PRIu32
					",\"qty\":%u,\"price\":%" PRIu64 "}",
					i ? "," : "", ex->lines[i].rec.line, ex->lines[i].rec.item,
					ex->lines[i].rec.qty, ex->lines[i].rec.price);
	len += (size_t)snprintf(ex->value + len, sizeof(ex->value) - len, "]}");
	return (int)len;
}

/*
 * utf8_len - the length of the well-formed UTF-8 sequence at @p (at most
 * @p n bytes), or 0 if it is not one (overlong, surrogate, > U+10FFFF).
 */
static size_t
utf8_len(const unsigned char *p, size_t n)
{
	size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	uint32_t cp = p[0] & (0x3f >> (len - 1));

	if (p[0] < 0xc2 || p[0] > 0xf4 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * json_str - @p s (NUL-terminated, at most SK_STORE_NAME_MAX bytes) as the
 * inside of a JSON string into @p out: '"', '\\' and control characters
 * escaped, a byte that is not well-formed UTF-8 replaced by U+FFFD (an
 * activity's name is the operator's bytes; the JSON must stay valid).
 */
static void
json_str(char out[JSON_NAME_MAX], const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), o = 0;

	for (size_t i = 0; i < n;) {
		size_t len = p[i] < 0x80 ? 1 : utf8_len(p + i, n - i);

		if (len == 0) {
			o += (size_t)snprintf(out + o, JSON_NAME_MAX - o, "\\ufffd");
			i++;
		} else if (p[i] == '"' || p[i] == '\\') {
			o += (size_t)snprintf(out + o, JSON_NAME_MAX - o, "\\%c", p[i]);
			i++;
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			o += (size_t)snprintf(out + o, JSON_NAME_MAX - o, "\\u%04x", p[i]);
			i++;
		} else {
			memcpy(out + o, p + i, len);
			o += len;
			i += len;
		}
	}
	out[o] = '\0';
}

/* event_value - the JSON of any other event. */
static int
event_value(struct sk_export *ex, const struct sk_store_event *ev)
{
	char order[32] = "null", name[JSON_NAME_MAX];
	const struct sk_store_event_def *d = &ev->def;

	if (ev->type == SK_STORE_EV_PAY_REJECTED)
		return snprintf(ex->value, sizeof(ex->value),
				"{\"v\":%d,\"seq\":%" PRIu64
				",\"type\":\"pay_rejected\",\"order\":null,\"partition\":%" PRIu32
				",\"offset\":%" PRIu64 ",\"reason\":\"%s\",\"time_ns\":%" PRId64
				"}",
				SK_EXPORT_VERSION, ev->seq, ev->item, ev->units,
				sk_store_pay_reject_name(ev->nlines), ev->time_ns);
	if (ev->order != 0)
		snprintf(order, sizeof(order), "\"%" PRIu64 "\"", ev->order);
	/* A request id is printable ASCII without '"' or '\\' (the store
	 * refuses others), so it goes into the JSON as it is. */
	int len = snprintf(
		ex->value, sizeof(ex->value),
		"{\"v\":%d,\"seq\":%" PRIu64 ",\"type\":\"%s\",\"order\":%s,\"user\":%" PRIu64
		",\"item\":%" PRIu32 ",\"units\":%" PRIu64 ",\"time_ns\":%" PRId64 "%s%s%s",
		SK_EXPORT_VERSION, ev->seq, sk_store_event_name(ev->type), order, ev->user,
		ev->item, ev->units, ev->time_ns, ev->request[0] ? ",\"request\":\"" : "",
		ev->request, ev->request[0] ? "\"" : "");
	if (d->has_def) {
		json_str(name, d->name);
		len += snprintf(ex->value + len, sizeof(ex->value) - (size_t)len,
				",\"limit\":%" PRIu32 ",\"price\":%" PRIu64 ",\"start_ns\":%" PRId64
				",\"end_ns\":%" PRId64 ",\"name\":\"%s\"",
				d->per_user_limit, d->price, d->start_ns, d->end_ns, name);
	}
	len += snprintf(ex->value + len, sizeof(ex->value) - (size_t)len, "}");
	return len;
}

struct produce_ctx {
	struct sk_export *ex;
	unsigned max, count;
};

static int
produce_one(const struct sk_store_event *ev, void *arg)
{
	struct produce_ctx *c = arg;
	struct sk_export *ex = c->ex;
	char key[32];
	int klen, vlen;

	if (ev->seq < ex->next)
		return 0;
	if (c->count == c->max || ev->seq > ex->cursor + ex->mask + 1)
		return 1; /* enough for this call, or the window is full */
	if (ev->order != 0)
		klen = snprintf(key, sizeof(key), "%" PRIu64, ev->order);
	else if (ev->type == SK_STORE_EV_PAY_REJECTED)
		klen = snprintf(key, sizeof(key), "payments:%" PRIu32, ev->item);
	else
		klen = snprintf(key, sizeof(key), "item:%" PRIu32, ev->item);
	vlen = ev->type == SK_STORE_EV_CONFIRMED ? order_value(ex, ev) : event_value(ex, ev);
	if (vlen <= 0 || (size_t)vlen >= sizeof(ex->value))
		vlen = event_value(ex, ev); /* cannot happen: lines are bounded */
	if (rd_kafka_produce(ev->type == SK_STORE_EV_CONFIRMED ? ex->orders : ex->events,
			     RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, ex->value, (size_t)vlen,
			     key, (size_t)klen, (void *)(uintptr_t)ev->seq) != 0)
		return 1; /* queue full: later */
	/* Events the log no longer holds between two (trimmed) count as sent. */
	for (uint64_t s = ex->next; s < ev->seq; s++)
		ex->slot[s & ex->mask] = SLOT_DONE;
	ex->slot[ev->seq & ex->mask] = SLOT_SENT;
	ex->next = ev->seq + 1;
	ex->inflight++;
	c->count++;
	stat_add(&ex->s.produced, 1);
	if (ev->seq > ex->s.last_seq)
		stat_set(&ex->s.last_seq, ev->seq);
	return 0;
}

/* rewind_to_cursor - after a failed delivery, once nothing is in flight: from the cursor again. */
static void
rewind_to_cursor(struct sk_export *ex)
{
	if (ex->inflight != 0)
		return;
	for (uint64_t s = ex->cursor + 1; s < ex->next; s++)
		ex->slot[s & ex->mask] = SLOT_FREE;
	ex->next = ex->cursor + 1;
	ex->rewind = false;
	stat_add(&ex->s.rewinds, 1);
	if (ex->rk != NULL && rd_kafka_fatal_error(ex->rk, NULL, 0) != RD_KAFKA_RESP_ERR_NO_ERROR)
		producer_free(ex); /* it cannot go on: sk_export_poll() makes a new one */
}

int
sk_export_poll(struct sk_export *ex, int64_t now_ns, unsigned max)
{
	struct produce_ctx c = {.ex = ex, .max = max};
	int rc;

	if (ex->rk != NULL)
		rd_kafka_poll(ex->rk, 0);
	advance(ex);
	rc = save(ex, now_ns, false);
	if (rc != 0)
		return rc;
	if (ex->rewind) {
		rewind_to_cursor(ex);
		if (ex->rewind)
			return 0; /* events still in flight */
	}
	if (ex->rk == NULL) {
		rc = producer_new(ex, NULL, 0);
		if (rc != 0)
			return rc;
	}
	if (max == 0 || ex->next > ex->cursor + ex->mask + 1)
		return 0;
	rc = sk_store_events_foreach(ex->st, ex->next, produce_one, &c);
	if (rc < 0)
		return rc;
	return (int)c.count;
}

int
sk_export_flush(struct sk_export *ex, int timeout_ms)
{
	int rc = 0;

	if (ex->rk != NULL && rd_kafka_flush(ex->rk, timeout_ms) != RD_KAFKA_RESP_ERR_NO_ERROR)
		rc = -ETIMEDOUT;
	advance(ex);
	int src = save(ex, 0, true);
	return src != 0 ? src : rc;
}

void
sk_export_close(struct sk_export *ex, int timeout_ms)
{
	if (ex == NULL)
		return;
	(void)sk_export_flush(ex, timeout_ms);
	producer_free(ex);
	free(ex->slot);
	free(ex);
}

void
sk_export_stats(const struct sk_export *ex, struct sk_export_stats *out)
{
	const uint64_t *src = (const uint64_t *)&ex->s;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
