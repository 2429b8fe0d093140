/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_http_client.c - the resumable HTTP/1.1 response parser of the clients
 * (see sk_http_client.h). One byte at a time through a small state machine,
 * with fast scans over reason phrases and the values of fields it ignores.
 */
#include <stdbool.h>

#include "sk_http_cclass.h"
#include "sk_http_client.h"

enum {
	ST_VERSION = 0, /* sub: bytes of "HTTP/1." matched */
	ST_MINOR,
	ST_SP,
	ST_CODE, /* sub: digits read */
	ST_AFTER_CODE,
	ST_REASON,
	ST_STATUS_LF,
	ST_FIELD_START,
	ST_NAME,  /* field: mask of candidate names, sub: bytes matched */
	ST_VALUE, /* field: which field */
	ST_FIELD_LF,
	ST_HEAD_LF,
	ST_BODY,
	ST_ERROR, /* sub: the error */
};

/* Known field names (ST_NAME candidates, then the field of ST_VALUE). */
enum { F_OTHER = 0, F_LENGTH = 1, F_CONN = 2, F_TE = 4, F_RETRY = 8, F_ALL = 15 };
/* Connection tokens being matched (ST_VALUE with F_CONN): sub is the
 * position, these say which word. */
enum { F_CONN_CLOSE = 16, F_CONN_KA = 32 };

static const struct {
	const char *name; /* lower case */
	uint8_t len;
	uint8_t bit;
} names[] = {
	{"content-length", 14, F_LENGTH},
	{"connection", 10, F_CONN},
	{"transfer-encoding", 17, F_TE},
	{"retry-after", 11, F_RETRY},
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static const char tok_close[] = "close";
static const char tok_ka[] = "keep-alive";

static const char *const result_names[SK_HTTP_CLIENT__COUNT] = {
	[SK_HTTP_CLIENT_DONE] = "done",
	[SK_HTTP_CLIENT_AGAIN] = "again",
	[SK_HTTP_CLIENT_E_STATUS] = "status",
	[SK_HTTP_CLIENT_E_FIELD] = "field",
	[SK_HTTP_CLIENT_E_LENGTH] = "length",
	[SK_HTTP_CLIENT_E_CHUNKED] = "chunked",
	[SK_HTTP_CLIENT_E_TOO_LARGE] = "too_large",
};

const char *
sk_http_client_result_str(enum sk_http_client_result r)
{
	return (unsigned)r < SK_HTTP_CLIENT__COUNT ? result_names[r] : "?";
}

/* fail - make the error sticky and return it. */
static enum sk_http_client_result
fail(struct sk_http_client_resp *r, enum sk_http_client_result e)
{
	r->state = ST_ERROR;
	r->sub = (uint8_t)e;
	return e;
}

/* name_step - narrow the candidate names by byte @c at position r->sub. */
static inline void
name_step(struct sk_http_client_resp *r, uint8_t c)
{
	uint8_t i = r->sub;

	c = lower(c);
	for (unsigned k = 0; k < NNAMES; k++)
		if ((r->field & names[k].bit) && (i >= names[k].len || names[k].name[i] != c))
			r->field &= (uint8_t)~names[k].bit;
	r->sub = (uint8_t)(i < 255 ? i + 1 : 255);
}

/* name_end - the field named by the candidates left at ':'. */
static inline uint8_t
name_end(const struct sk_http_client_resp *r)
{
	for (unsigned k = 0; k < NNAMES; k++)
		if ((r->field & names[k].bit) && r->sub == names[k].len)
			return names[k].bit;
	return F_OTHER;
}

/* conn_token_end - a Connection token ended: note close / keep-alive. */
static inline void
conn_token_end(struct sk_http_client_resp *r)
{
	if (!r->tok_bad && r->field == F_CONN_CLOSE && r->sub == sizeof(tok_close) - 1)
		r->close = 1;
	if (!r->tok_bad && r->field == F_CONN_KA && r->sub == sizeof(tok_ka) - 1)
		r->keep_alive = 1;
	r->field = F_CONN;
	r->sub = 0;
	r->tok_bad = 0;
}

/* conn_byte - one byte of a Connection value (not CR). */
static inline void
conn_byte(struct sk_http_client_resp *r, uint8_t c)
{
	if (c == ',' || c == ' ' || c == '\t') {
		if (r->field != F_CONN)
			conn_token_end(r);
		return;
	}
	c = lower(c);
	if (r->field == F_CONN) {
		r->field = c == 'c' ? F_CONN_CLOSE : F_CONN_KA;
		r->tok_bad = c != 'c' && c != 'k';
	}
	const char *w = r->field == F_CONN_CLOSE ? tok_close : tok_ka;
	size_t wl = r->field == F_CONN_CLOSE ? sizeof(tok_close) - 1 : sizeof(tok_ka) - 1;

	if (r->sub >= wl || (uint8_t)w[r->sub] != c)
		r->tok_bad = 1;
	if (r->sub < 255)
		r->sub++;
}

/* Number values (Content-Length, Retry-After): sub says where we are. */
enum { NUM_BEFORE = 0, NUM_IN, NUM_AFTER, NUM_BAD };

/* num_byte - one byte of a decimal value with OWS around it (not CR):
 * NUM_BAD on a byte that does not fit; r->acc saturates at UINT32_MAX. */
static inline void
num_byte(struct sk_http_client_resp *r, uint8_t c)
{
	if (r->sub == NUM_BAD)
		return;
	if (c == ' ' || c == '\t') {
		if (r->sub == NUM_IN)
			r->sub = NUM_AFTER;
		return;
	}
	if (c < '0' || c > '9' || r->sub == NUM_AFTER) {
		r->sub = NUM_BAD;
		return;
	}
	uint32_t d = (uint32_t)(c - '0');

	r->sub = NUM_IN;
	r->acc = r->acc > (UINT32_MAX - d) / 10 ? UINT32_MAX : r->acc * 10 + d;
}

/* value_end - CR ends the value of the current field. */
static inline enum sk_http_client_result
value_end(struct sk_http_client_resp *r)
{
	bool num_ok = r->sub == NUM_IN || r->sub == NUM_AFTER;

	if (r->field == F_LENGTH) {
		if (!num_ok || (r->has_len && r->acc != r->content_len))
			return SK_HTTP_CLIENT_E_LENGTH;
		r->content_len = r->acc;
		r->has_len = 1;
	} else if (r->field == F_RETRY) {
		if (num_ok) {
			r->retry_after = r->acc;
			r->has_retry_after = 1;
		}
	} else if (r->field & (F_CONN | F_CONN_CLOSE | F_CONN_KA)) {
		if (r->field != F_CONN)
			conn_token_end(r);
	}
	return SK_HTTP_CLIENT_AGAIN;
}

/* head_end - the empty line was read: decide the body length. */
static enum sk_http_client_result
head_end(struct sk_http_client_resp *r, size_t off)
{
	r->head_len = (uint32_t)off;
	if (r->status < 200 || r->status == 204 || r->status == 304)
		r->content_len = 0;
	else if (!r->has_len)
		return SK_HTTP_CLIENT_E_LENGTH;
	if (r->minor == 0 && !r->keep_alive)
		r->close = 1;
	r->len = r->head_len + r->content_len;
	r->state = ST_BODY;
	return SK_HTTP_CLIENT_AGAIN;
}

/* skip_text - the end of the run of value bytes from @i (at most @len). */
static inline size_t
skip_text(const uint8_t *buf, size_t i, size_t len)
{
	while (i < len && is_class(buf[i], C_VALUE))
		i++;
	return i;
}

enum sk_http_client_result
sk_http_client_parse(struct sk_http_client_resp *r, const void *data, size_t len)
{
	static const char version[] = "HTTP/1.";
	const uint8_t *buf = data;
	size_t i = r->off;
	enum sk_http_client_result e;

	if (r->state == ST_ERROR)
		return (enum sk_http_client_result)r->sub;
	while (i < len && r->state != ST_BODY) {
		uint8_t c = buf[i];

		if (i >= SK_HTTP_CLIENT_HEAD_MAX)
			return fail(r, SK_HTTP_CLIENT_E_TOO_LARGE);
		switch (r->state) {
		case ST_VERSION:
			if (c != (uint8_t)version[r->sub])
				return fail(r, SK_HTTP_CLIENT_E_STATUS);
			if (++r->sub == sizeof(version) - 1)
				r->state = ST_MINOR;
			break;
		case ST_MINOR:
			if (c != '0' && c != '1')
				return fail(r, SK_HTTP_CLIENT_E_STATUS);
			r->minor = c == '1';
			r->state = ST_SP;
			break;
		case ST_SP:
			if (c != ' ')
				return fail(r, SK_HTTP_CLIENT_E_STATUS);
			r->state = ST_CODE;
			r->sub = 0;
			break;
		case ST_CODE:
			if (c < '0' || c > '9' || (r->sub == 0 && (c < '1' || c > '5')))
				return fail(r, SK_HTTP_CLIENT_E_STATUS);
			r->status = (uint16_t)(r->status * 10 + (c - '0'));
			if (++r->sub == 3)
				r->state = ST_AFTER_CODE;
			break;
		case ST_AFTER_CODE:
			if (c == '\r')
				r->state = ST_STATUS_LF;
			else if (c == ' ')
				r->state = ST_REASON;
			else
				return fail(r, SK_HTTP_CLIENT_E_STATUS);
			break;
		case ST_REASON:
			i = skip_text(buf, i, len);
			if (i == len)
				continue;
			if (i >= SK_HTTP_CLIENT_HEAD_MAX)
				return fail(r, SK_HTTP_CLIENT_E_TOO_LARGE);
			if (buf[i] != '\r')
				return fail(r, SK_HTTP_CLIENT_E_STATUS);
			r->state = ST_STATUS_LF;
			break;
		case ST_STATUS_LF:
		case ST_FIELD_LF:
			if (c != '\n')
				return fail(r, r->state == ST_STATUS_LF ? SK_HTTP_CLIENT_E_STATUS
									: SK_HTTP_CLIENT_E_FIELD);
			r->state = ST_FIELD_START;
			break;
		case ST_FIELD_START:
			if (c == '\r') {
				r->state = ST_HEAD_LF;
				break;
			}
			if (!is_class(c, C_TCHAR))
				return fail(r, SK_HTTP_CLIENT_E_FIELD);
			r->state = ST_NAME;
			r->field = F_ALL;
			r->sub = 0;
			name_step(r, c);
			break;
		case ST_NAME:
			if (c == ':') {
				r->field = name_end(r);
				if (r->field == F_TE)
					return fail(r, SK_HTTP_CLIENT_E_CHUNKED);
				r->sub = 0;
				r->acc = 0;
				r->tok_bad = 0;
				r->state = ST_VALUE;
				break;
			}
			if (!is_class(c, C_TCHAR))
				return fail(r, SK_HTTP_CLIENT_E_FIELD);
			name_step(r, c);
			break;
		case ST_VALUE:
			if (r->field == F_OTHER) {
				i = skip_text(buf, i, len);
				if (i == len)
					continue;
				if (i >= SK_HTTP_CLIENT_HEAD_MAX)
					return fail(r, SK_HTTP_CLIENT_E_TOO_LARGE);
				c = buf[i];
			}
			if (c == '\r') {
				e = value_end(r);
				if (e != SK_HTTP_CLIENT_AGAIN)
					return fail(r, e);
				r->state = ST_FIELD_LF;
				break;
			}
			if (!is_class(c, C_VALUE))
				return fail(r, SK_HTTP_CLIENT_E_FIELD);
			if (r->field == F_LENGTH) {
				num_byte(r, c);
				if (r->sub == NUM_BAD)
					return fail(r, SK_HTTP_CLIENT_E_LENGTH);
				if (r->acc > SK_HTTP_CLIENT_BODY_MAX)
					return fail(r, SK_HTTP_CLIENT_E_TOO_LARGE);
			} else if (r->field == F_RETRY) {
				num_byte(r, c);
			} else if (r->field != F_OTHER) {
				conn_byte(r, c);
			}
			break;
		case ST_HEAD_LF:
			if (c != '\n')
				return fail(r, SK_HTTP_CLIENT_E_FIELD);
			e = head_end(r, i + 1);
			if (e != SK_HTTP_CLIENT_AGAIN)
				return fail(r, e);
			break;
		default:
			return fail(r, SK_HTTP_CLIENT_E_STATUS);
		}
		i++;
	}
	if (r->state != ST_BODY) {
		if (i >= SK_HTTP_CLIENT_HEAD_MAX)
			return fail(r, SK_HTTP_CLIENT_E_TOO_LARGE);
		r->off = (uint32_t)i;
		return SK_HTTP_CLIENT_AGAIN;
	}
	if (len >= r->len) {
		r->off = r->len;
		return SK_HTTP_CLIENT_DONE;
	}
	r->off = (uint32_t)len;
	return SK_HTTP_CLIENT_AGAIN;
}
