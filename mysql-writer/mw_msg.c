/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_msg.c - decoding of the exported JSON messages (seckill.orders,
 * seckill.events) into struct mw_msg, with jansson. Every field is checked
 * against its range; nothing here touches the database.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "sk_addr.h"
#include "sk_parse.h"

#include "mw_msg.h"

static const char *const type_names[MW_MSG_NTYPES] = {
	[MW_MSG_CONFIRMED] = "confirmed",
	[MW_MSG_PAID] = "paid",
	[MW_MSG_CANCELLED] = "cancelled",
	[MW_MSG_FAILED] = "failed",
	[MW_MSG_RESTOCKED] = "restocked",
	[MW_MSG_ACTIVITY] = "activity",
	[MW_MSG_CLOSED] = "closed",
	[MW_MSG_REFUNDED] = "refunded",
	[MW_MSG_PAY_CONFLICT] = "pay_conflict",
	[MW_MSG_REMOVED] = "removed",
	[MW_MSG_PAUSED] = "paused",
	[MW_MSG_RESUMED] = "resumed",
	[MW_MSG_EXTENDED] = "extended",
};

const char *
mw_msg_type_name(unsigned type)
{
	return type > 0 && type < MW_MSG_NTYPES ? type_names[type] : "?";
}

static int bad(char *why, size_t whylen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* bad - write the reason into @why (if any) and return @rc. */
static int
bad(char *why, size_t whylen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && whylen > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/*
 * get_int - field @key of @o as an integer in [lo, hi] into @out.
 * Returns 0, 1 when absent and @optional, or -EBADMSG.
 */
static int
get_int(json_t *o, const char *key, bool optional, int64_t lo, int64_t hi, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	json_int_t x;

	if (v == NULL)
		return optional ? 1 : -EBADMSG;
	if (!json_is_integer(v))
		return -EBADMSG;
	x = json_integer_value(v);
	if (x < lo || x > hi)
		return -EBADMSG;
	*out = x;
	return 0;
}

/* get_str - field @key of @o as a string of at most @max bytes, copied. */
static int
get_str(json_t *o, const char *key, bool optional, char *out, size_t max)
{
	json_t *v = json_object_get(o, key);
	size_t n;

	if (v == NULL || (optional && json_is_null(v)))
		return optional ? 1 : -EBADMSG;
	if (!json_is_string(v))
		return -EBADMSG;
	n = json_string_length(v);
	if (n > max || memchr(json_string_value(v), '\0', n) != NULL)
		return -EBADMSG;
	memcpy(out, json_string_value(v), n);
	out[n] = '\0';
	return 0;
}

/* ip_ok - true if @s is "" (no address) or an IPv4 or IPv6 address. */
static bool
ip_ok(const char *s)
{
	struct sk_addr a;

	return s[0] == '\0' || sk_addr_parse(s, strlen(s), &a) == SK_ADDR_OK;
}

/* type_of - the enum value of type name @s; 0 if unknown. */
static enum mw_msg_type
type_of(const char *s)
{
	for (unsigned t = 1; t < MW_MSG_NTYPES; t++)
		if (strcmp(s, type_names[t]) == 0)
			return (enum mw_msg_type)t;
	return 0;
}

/* decode_lines - the "lines" array of a confirmed order. */
static int
decode_lines(json_t *o, struct mw_msg *m, char *why, size_t whylen)
{
	json_t *a = json_object_get(o, "lines"), *l;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > MW_MSG_MAX_LINES)
		return bad(why, whylen, -EBADMSG, "\"lines\": not an array of 1..%d lines",
			   MW_MSG_MAX_LINES);
	json_array_foreach(a, i, l)
	{
		struct mw_msg_line *ml = &m->lines[i];
		int64_t line, item, qty, price;

		if (!json_is_object(l) || get_int(l, "line", false, 0, 254, &line) != 0 ||
		    get_int(l, "item", false, 1, UINT32_MAX, &item) != 0 ||
		    get_int(l, "qty", false, 1, UINT32_MAX, &qty) != 0 ||
		    get_int(l, "price", false, 0, INT64_MAX, &price) != 0)
			return bad(why, whylen, -EBADMSG, "line %zu: line, item, qty or price bad",
				   i);
		if ((size_t)line != i)
			return bad(why, whylen, -EBADMSG, "line %zu says line %" PRId64, i, line);
		for (size_t j = 0; j < i; j++)
			if (m->lines[j].item == (uint32_t)item)
				return bad(why, whylen, -EBADMSG, "item %" PRId64 " twice", item);
		*ml = (struct mw_msg_line){(uint32_t)line, (uint32_t)item, (uint32_t)qty,
					   (uint64_t)price};
	}
	m->nlines = (unsigned)json_array_size(a);
	m->item = m->lines[0].item;
	if (get_int(o, "sold_ns", true, INT64_MIN, INT64_MAX, &m->sold_ns) < 0 ||
	    get_str(o, "client_ip", true, m->client_ip, sizeof(m->client_ip) - 1) < 0 ||
	    !ip_ok(m->client_ip))
		return bad(why, whylen, -EBADMSG, "\"sold_ns\" or \"client_ip\" bad");
	return 0;
}

/* decode_activity - the optional definition fields of an activity event. */
static int
decode_activity(json_t *o, struct mw_msg *m, char *why, size_t whylen)
{
	int64_t v;
	int rc;

	if ((rc = get_int(o, "limit", true, 1, UINT32_MAX, &v)) < 0)
		return bad(why, whylen, rc, "\"limit\" bad");
	if ((m->has_limit = rc == 0))
		m->limit = (uint32_t)v;
	if ((rc = get_int(o, "price", true, 0, INT64_MAX, &v)) < 0)
		return bad(why, whylen, rc, "\"price\" bad");
	if ((m->has_price = rc == 0))
		m->price = (uint64_t)v;
	if ((rc = get_str(o, "name", true, m->name, MW_MSG_NAME_MAX)) < 0)
		return bad(why, whylen, rc, "\"name\" bad");
	m->has_name = rc == 0;
	if ((rc = get_int(o, "start_ns", true, INT64_MIN, INT64_MAX, &m->start_ns)) < 0)
		return bad(why, whylen, rc, "\"start_ns\" bad");
	m->has_start = rc == 0;
	if ((rc = get_int(o, "end_ns", true, INT64_MIN, INT64_MAX, &m->end_ns)) < 0)
		return bad(why, whylen, rc, "\"end_ns\" bad");
	m->has_end = rc == 0;
	return 0;
}

/* decode_obj - the checks of mw_msg_decode() on a parsed object. */
static int
decode_obj(json_t *o, struct mw_msg *m, char *why, size_t whylen)
{
	char type[32], order[24];
	int64_t v, seq, user = 0, item = 0, units = 0;
	bool item_event;
	int rc;

	if (!json_is_object(o))
		return bad(why, whylen, -EBADMSG, "not a JSON object");
	if (get_int(o, "v", false, INT64_MIN, INT64_MAX, &v) != 0)
		return bad(why, whylen, -EBADMSG, "no integer \"v\"");
	if (v != MW_MSG_VERSION)
		return bad(why, whylen, -EPROTO, "version %" PRId64 ", this writer reads %d", v,
			   MW_MSG_VERSION);
	if (get_int(o, "seq", false, 1, INT64_MAX, &seq) != 0)
		return bad(why, whylen, -EBADMSG, "no \"seq\" >= 1");
	m->seq = (uint64_t)seq;
	if (get_str(o, "type", false, type, sizeof(type) - 1) != 0)
		return bad(why, whylen, -EBADMSG, "no string \"type\"");
	m->type = type_of(type);
	/* The appliance's audit of a payment it refused, of an activity's
	 * orders moved to its archive, or of a live settings change: nothing
	 * moved in MariaDB, so nothing to write; told apart from an unknown
	 * type, which may be a newer exporter's and is worth a warning. */
	if (m->type == 0 && (strcmp(type, "pay_rejected") == 0 ||
			     strcmp(type, "activity_archived") == 0 || strcmp(type, "live") == 0))
		return bad(why, whylen, -ENOMSG, "type \"%s\" holds nothing for MariaDB", type);
	if (m->type == 0)
		return bad(why, whylen, -ENOTSUP, "unknown type \"%s\"", type);
	item_event = m->type == MW_MSG_RESTOCKED || m->type == MW_MSG_ACTIVITY ||
		     m->type == MW_MSG_CLOSED || m->type >= MW_MSG_REMOVED;
	rc = get_str(o, "order", true, order, sizeof(order) - 1);
	if (rc < 0 || (rc == 1 && !item_event) ||
	    (rc == 0 && !sk_parse_u64(order, 1, UINT64_MAX, &m->order)))
		return bad(why, whylen, -EBADMSG, "\"order\" is not a decimal id%s",
			   item_event ? " or null" : "");
	if (get_int(o, "user", m->type == MW_MSG_CONFIRMED ? false : item_event, 0, INT64_MAX,
		    &user) < 0 ||
	    get_int(o, "time_ns", false, INT64_MIN, INT64_MAX, &m->time_ns) != 0)
		return bad(why, whylen, -EBADMSG, "\"user\" or \"time_ns\" missing or bad");
	m->user = (uint64_t)(user < 0 ? 0 : user);
	if (m->type == MW_MSG_CONFIRMED) {
		if (get_int(o, "units", false, 1, INT64_MAX, &units) != 0)
			return bad(why, whylen, -EBADMSG, "\"units\" missing or < 1");
		m->units = (uint64_t)units;
		return decode_lines(o, m, why, whylen);
	}
	if (get_int(o, "item", false, item_event || m->type >= MW_MSG_REFUNDED ? 1 : 0, UINT32_MAX,
		    &item) != 0 ||
	    get_int(o, "units", false,
		    m->type == MW_MSG_REFUNDED || m->type == MW_MSG_REMOVED ? 1 : 0, INT64_MAX,
		    &units) != 0)
		return bad(why, whylen, -EBADMSG, "\"item\" or \"units\" missing or out of range");
	m->item = (uint32_t)item;
	m->units = (uint64_t)units;
	if (get_str(o, "request", true, m->request, MW_MSG_REQUEST_MAX) < 0)
		return bad(why, whylen, -EBADMSG, "\"request\" not a string of <= %d bytes",
			   MW_MSG_REQUEST_MAX);
	if (m->type == MW_MSG_EXTENDED) {
		if (get_int(o, "end_ns", false, 1, INT64_MAX, &m->end_ns) != 0)
			return bad(why, whylen, -EBADMSG, "\"end_ns\" missing or < 1");
		m->has_end = true;
	}
	return m->type == MW_MSG_ACTIVITY ? decode_activity(o, m, why, whylen) : 0;
}

int
mw_msg_decode(const char *buf, size_t len, struct mw_msg *m, char *why, size_t whylen)
{
	json_error_t e;
	json_t *o;
	int rc;

	memset(m, 0, offsetof(struct mw_msg, lines));
	if (buf == NULL)
		return bad(why, whylen, -EBADMSG, "no value");
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
	if (o == NULL)
		return bad(why, whylen, -EBADMSG, "not JSON: %s (column %d)", e.text, e.column);
	rc = decode_obj(o, m, why, whylen);
	json_decref(o);
	return rc;
}
