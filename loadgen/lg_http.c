/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_http.c - request templates and the resumable response parser of
 * seckill-loadgen (see lg_http.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sk_common.h"

#include "lg_http.h"

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */
/* ------------------------------------------------------------------------ */

static const char *const kind_names[LG_REQ__COUNT] = {
	[LG_REQ_BUY] = "buy",	[LG_REQ_BUY_JWT] = "buy_jwt", [LG_REQ_ORDER] = "order",
	[LG_REQ_ITEM] = "item", [LG_REQ_HEALTHZ] = "healthz",
};

const char *
lg_req_kind_str(enum lg_req_kind k)
{
	return (unsigned)k < LG_REQ__COUNT ? kind_names[k] : "?";
}

int
lg_req_kind_parse(const char *name, size_t len)
{
	for (int k = 0; k < LG_REQ__COUNT; k++)
		if (strlen(kind_names[k]) == len && memcmp(kind_names[k], name, len) == 0)
			return k;
	return -1;
}

/* tmpl_set - render one template; -ENAMETOOLONG if a part does not fit. */
static int
tmpl_set(struct lg_tmpl *t, const char *head, const char *tail, bool has_var)
{
	size_t hl = strlen(head), tl = strlen(tail);

	if (hl >= sizeof(t->head) || tl >= sizeof(t->tail))
		return -ENAMETOOLONG;
	memcpy(t->head, head, hl + 1);
	memcpy(t->tail, tail, tl + 1);
	t->head_len = (uint16_t)hl;
	t->tail_len = (uint16_t)tl;
	t->has_var = has_var;
	return 0;
}

int
lg_req_tmpl_init(struct lg_req_tmpl *t, const char *host, uint64_t item)
{
	char head[2 * LG_TMPL_PART_MAX];
	char hdr[LG_TMPL_PART_MAX];
	int rc = 0, n;

	if (t == NULL || host == NULL || host[0] == '\0')
		return -EINVAL;
	for (const char *p = host; *p != '\0'; p++)
		if (*p <= ' ' || *p >= 0x7f)
			return -EINVAL;
	memset(t, 0, sizeof(*t));
	n = snprintf(hdr, sizeof(hdr), " HTTP/1.1\r\nHost: %s\r\n", host);
	if (n < 0 || (size_t)n >= sizeof(hdr))
		return -ENAMETOOLONG;

	snprintf(head, sizeof(head), "POST /v1/seckill/%llu%sX-User-Id: ", (unsigned long long)item,
		 hdr);
	rc |= tmpl_set(&t->kind[LG_REQ_BUY], head, "\r\n", true);
	snprintf(head, sizeof(head), "POST /v1/seckill/%llu%sAuthorization: Bearer ",
		 (unsigned long long)item, hdr);
	rc |= tmpl_set(&t->kind[LG_REQ_BUY_JWT], head, "\r\n", true);
	rc |= tmpl_set(&t->kind[LG_REQ_ORDER], "GET /v1/orders/", hdr, true);
	snprintf(head, sizeof(head), "GET /v1/items/%llu%s", (unsigned long long)item, hdr);
	rc |= tmpl_set(&t->kind[LG_REQ_ITEM], head, "", false);
	snprintf(head, sizeof(head), "GET /healthz%s", hdr);
	rc |= tmpl_set(&t->kind[LG_REQ_HEALTHZ], head, "", false);
	return rc != 0 ? -ENAMETOOLONG : 0;
}

static const char conn_close[] = "Connection: close\r\n";

size_t
lg_req_build(const struct lg_req_tmpl *t, enum lg_req_kind k, uint64_t num, const char *tok,
	     size_t tok_len, bool close, char *out)
{
	const struct lg_tmpl *tp = &t->kind[k];
	size_t n = tp->head_len;

	if (k == LG_REQ_BUY_JWT &&
	    tok_len > LG_REQ_MAX - 2 * LG_TMPL_PART_MAX - sizeof(conn_close) - 2)
		return 0;
	memcpy(out, tp->head, n);
	if (tp->has_var) {
		if (k == LG_REQ_BUY_JWT) {
			memcpy(out + n, tok, tok_len);
			n += tok_len;
		} else {
			n += sk_u64_dec(out + n, num);
		}
	}
	memcpy(out + n, tp->tail, tp->tail_len);
	n += tp->tail_len;
	if (close) {
		memcpy(out + n, conn_close, sizeof(conn_close) - 1);
		n += sizeof(conn_close) - 1;
	}
	out[n++] = '\r';
	out[n++] = '\n';
	return n;
}

/* ------------------------------------------------------------------------ */
/* Response parser                                                           */
/* ------------------------------------------------------------------------ */

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
enum { F_OTHER = 0, F_LENGTH = 1, F_CONN = 2, F_TE = 4, F_ALL = 7 };
/* Connection tokens being matched (ST_VALUE with F_CONN): sub is the
 * position, these say which word. */
enum { F_CONN_CLOSE = 8, F_CONN_KA = 16 };

static const char name_length[] = "content-length";
static const char name_conn[] = "connection";
static const char name_te[] = "transfer-encoding";
static const char tok_close[] = "close";
static const char tok_ka[] = "keep-alive";

/* Character classes (RFC 9110 §5.6.2 tchar; field-value bytes). */
#define C_TOKEN 1
#define C_VALUE 2 /* HTAB, SP, VCHAR, obs-text */

static const uint8_t cls[256] = {
	['\t'] = C_VALUE,
	[' '] = C_VALUE,
	['!'] = C_TOKEN | C_VALUE,
	['"'] = C_VALUE,
	['#' ... '\''] = C_TOKEN | C_VALUE,
	['(' ... ')'] = C_VALUE,
	['*' ... '+'] = C_TOKEN | C_VALUE,
	[','] = C_VALUE,
	['-' ... '.'] = C_TOKEN | C_VALUE,
	['/'] = C_VALUE,
	['0' ... '9'] = C_TOKEN | C_VALUE,
	[':' ... '@'] = C_VALUE,
	['A' ... 'Z'] = C_TOKEN | C_VALUE,
	['[' ... ']'] = C_VALUE,
	['^' ... '`'] = C_TOKEN | C_VALUE,
	['a' ... 'z'] = C_TOKEN | C_VALUE,
	['{'] = C_VALUE,
	['|'] = C_TOKEN | C_VALUE,
	['}'] = C_VALUE,
	['~'] = C_TOKEN | C_VALUE,
	[0x80 ... 0xff] = C_VALUE,
};

static const char *const result_names[LG_RESP__COUNT] = {
	[LG_RESP_DONE] = "done",
	[LG_RESP_AGAIN] = "again",
	[LG_RESP_E_STATUS] = "status",
	[LG_RESP_E_FIELD] = "field",
	[LG_RESP_E_LENGTH] = "length",
	[LG_RESP_E_CHUNKED] = "chunked",
	[LG_RESP_E_TOO_LARGE] = "too_large",
};

const char *
lg_resp_result_str(enum lg_resp_result r)
{
	return (unsigned)r < LG_RESP__COUNT ? result_names[r] : "?";
}

static inline uint8_t
lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c | 0x20) : c;
}

/* fail - make the error sticky and return it. */
static enum lg_resp_result
fail(struct lg_resp *r, enum lg_resp_result e)
{
	r->state = ST_ERROR;
	r->sub = (uint8_t)e;
	return e;
}

/* name_step - narrow the candidate names by byte @c at position r->sub. */
static inline void
name_step(struct lg_resp *r, uint8_t c)
{
	uint8_t m = r->field, i = r->sub;

	c = lower(c);
	if ((m & F_LENGTH) && (i >= sizeof(name_length) - 1 || name_length[i] != c))
		m &= (uint8_t)~F_LENGTH;
	if ((m & F_CONN) && (i >= sizeof(name_conn) - 1 || name_conn[i] != c))
		m &= (uint8_t)~F_CONN;
	if ((m & F_TE) && (i >= sizeof(name_te) - 1 || name_te[i] != c))
		m &= (uint8_t)~F_TE;
	r->field = m;
	r->sub = (uint8_t)(i < 255 ? i + 1 : 255);
}

/* name_end - the field named by the candidates left at ':'. */
static inline uint8_t
name_end(const struct lg_resp *r)
{
	if ((r->field & F_LENGTH) && r->sub == sizeof(name_length) - 1)
		return F_LENGTH;
	if ((r->field & F_CONN) && r->sub == sizeof(name_conn) - 1)
		return F_CONN;
	if ((r->field & F_TE) && r->sub == sizeof(name_te) - 1)
		return F_TE;
	return F_OTHER;
}

/* conn_token_end - a Connection token ended: note close / keep-alive. */
static inline void
conn_token_end(struct lg_resp *r)
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
conn_byte(struct lg_resp *r, uint8_t c)
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
	{
		const char *w = r->field == F_CONN_CLOSE ? tok_close : tok_ka;
		size_t wl = r->field == F_CONN_CLOSE ? sizeof(tok_close) - 1 : sizeof(tok_ka) - 1;

		if (r->sub >= wl || (uint8_t)w[r->sub] != c)
			r->tok_bad = 1;
		if (r->sub < 255)
			r->sub++;
	}
}

/* length_byte - one byte of a Content-Length value (not CR).
 * sub: 0 before the digits, 1 in them, 2 after them. */
static inline enum lg_resp_result
length_byte(struct lg_resp *r, uint8_t c)
{
	if (c == ' ' || c == '\t') {
		if (r->sub == 1)
			r->sub = 2;
		return LG_RESP_AGAIN;
	}
	if (c < '0' || c > '9' || r->sub == 2)
		return LG_RESP_E_LENGTH;
	r->sub = 1;
	r->acc = r->acc * 10 + (uint32_t)(c - '0');
	if (r->acc > LG_RESP_BODY_MAX)
		return LG_RESP_E_TOO_LARGE;
	return LG_RESP_AGAIN;
}

/* value_end - CR ends the value of the current field. */
static inline enum lg_resp_result
value_end(struct lg_resp *r)
{
	if (r->field == F_LENGTH) {
		if (r->sub == 0 || (r->has_len && r->acc != r->content_len))
			return LG_RESP_E_LENGTH;
		r->content_len = r->acc;
		r->has_len = 1;
	} else if (r->field & (F_CONN | F_CONN_CLOSE | F_CONN_KA)) {
		if (r->field != F_CONN)
			conn_token_end(r);
	}
	return LG_RESP_AGAIN;
}

/* head_end - the empty line was read: decide the body length. */
static enum lg_resp_result
head_end(struct lg_resp *r, size_t off)
{
	r->head_len = (uint32_t)off;
	if (r->status < 200 || r->status == 204 || r->status == 304)
		r->content_len = 0;
	else if (!r->has_len)
		return LG_RESP_E_LENGTH;
	if (r->minor == 0 && !r->keep_alive)
		r->close = 1;
	r->len = r->head_len + r->content_len;
	r->state = ST_BODY;
	return LG_RESP_AGAIN;
}

enum lg_resp_result
lg_resp_parse(struct lg_resp *r, const uint8_t *buf, size_t len)
{
	static const char version[] = "HTTP/1.";
	size_t i = r->off;
	enum lg_resp_result e;

	if (r->state == ST_ERROR)
		return (enum lg_resp_result)r->sub;
	while (i < len && r->state != ST_BODY) {
		uint8_t c = buf[i];

		if (i >= LG_RESP_HEAD_MAX)
			return fail(r, LG_RESP_E_TOO_LARGE);
		switch (r->state) {
		case ST_VERSION:
			if (c != (uint8_t)version[r->sub])
				return fail(r, LG_RESP_E_STATUS);
			if (++r->sub == sizeof(version) - 1)
				r->state = ST_MINOR;
			break;
		case ST_MINOR:
			if (c != '0' && c != '1')
				return fail(r, LG_RESP_E_STATUS);
			r->minor = c == '1';
			r->state = ST_SP;
			break;
		case ST_SP:
			if (c != ' ')
				return fail(r, LG_RESP_E_STATUS);
			r->state = ST_CODE;
			r->sub = 0;
			break;
		case ST_CODE:
			if (c < '0' || c > '9' || (r->sub == 0 && (c < '1' || c > '5')))
				return fail(r, LG_RESP_E_STATUS);
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
				return fail(r, LG_RESP_E_STATUS);
			break;
		case ST_REASON:
			while (i < len && (cls[buf[i]] & C_VALUE))
				i++;
			if (i == len)
				continue;
			if (i >= LG_RESP_HEAD_MAX)
				return fail(r, LG_RESP_E_TOO_LARGE);
			if (buf[i] != '\r')
				return fail(r, LG_RESP_E_STATUS);
			r->state = ST_STATUS_LF;
			break;
		case ST_STATUS_LF:
		case ST_FIELD_LF:
			if (c != '\n')
				return fail(r, r->state == ST_STATUS_LF ? LG_RESP_E_STATUS
									: LG_RESP_E_FIELD);
			r->state = ST_FIELD_START;
			break;
		case ST_FIELD_START:
			if (c == '\r') {
				r->state = ST_HEAD_LF;
				break;
			}
			if (!(cls[c] & C_TOKEN))
				return fail(r, LG_RESP_E_FIELD);
			r->state = ST_NAME;
			r->field = F_ALL;
			r->sub = 0;
			name_step(r, c);
			break;
		case ST_NAME:
			if (c == ':') {
				r->field = name_end(r);
				if (r->field == F_TE)
					return fail(r, LG_RESP_E_CHUNKED);
				r->sub = 0;
				r->acc = 0;
				r->tok_bad = 0;
				r->state = ST_VALUE;
				break;
			}
			if (!(cls[c] & C_TOKEN))
				return fail(r, LG_RESP_E_FIELD);
			name_step(r, c);
			break;
		case ST_VALUE:
			if (r->field == F_OTHER) {
				while (i < len && (cls[buf[i]] & C_VALUE))
					i++;
				if (i == len)
					continue;
				if (i >= LG_RESP_HEAD_MAX)
					return fail(r, LG_RESP_E_TOO_LARGE);
				c = buf[i];
			}
			if (c == '\r') {
				e = value_end(r);
				if (e != LG_RESP_AGAIN)
					return fail(r, e);
				r->state = ST_FIELD_LF;
				break;
			}
			if (!(cls[c] & C_VALUE))
				return fail(r, LG_RESP_E_FIELD);
			if (r->field == F_LENGTH) {
				e = length_byte(r, c);
				if (e != LG_RESP_AGAIN)
					return fail(r, e);
			} else if (r->field != F_OTHER) {
				conn_byte(r, c);
			}
			break;
		case ST_HEAD_LF:
			if (c != '\n')
				return fail(r, LG_RESP_E_FIELD);
			e = head_end(r, i + 1);
			if (e != LG_RESP_AGAIN)
				return fail(r, e);
			break;
		default:
			return fail(r, LG_RESP_E_STATUS);
		}
		i++;
	}
	if (r->state != ST_BODY) {
		if (i >= LG_RESP_HEAD_MAX)
			return fail(r, LG_RESP_E_TOO_LARGE);
		r->off = (uint32_t)i;
		return LG_RESP_AGAIN;
	}
	if (len >= r->len) {
		r->off = r->len;
		return LG_RESP_DONE;
	}
	r->off = (uint32_t)len;
	return LG_RESP_AGAIN;
}

uint64_t
lg_resp_order(const uint8_t *body, size_t len)
{
	static const char key[] = "\"order\":\"";
	const size_t kl = sizeof(key) - 1;
	uint64_t v = 0;

	for (size_t i = 0; i + kl < len; i++) {
		if (body[i] != '"' || memcmp(body + i, key, kl) != 0)
			continue;
		for (size_t j = i + kl; j < len && body[j] >= '0' && body[j] <= '9'; j++) {
			uint64_t d = (uint64_t)(body[j] - '0');

			if (v > (UINT64_MAX - d) / 10)
				return 0;
			v = v * 10 + d;
		}
		return v;
	}
	return 0;
}

enum lg_resp_result
lg_resp_parse_memo(struct lg_resp_memo *m, struct lg_resp *r, const uint8_t *buf, size_t len)
{
	bool fresh = r->off == 0 && r->state == 0;
	enum lg_resp_result e;

	if (fresh && m->len != 0 && len >= m->len && memcmp(buf, m->bytes, m->len) == 0) {
		*r = m->result;
		m->hits++;
		return LG_RESP_DONE;
	}
	m->misses += fresh;
	e = lg_resp_parse(r, buf, len);
	if (fresh && e == LG_RESP_DONE && r->len <= sizeof(m->bytes)) {
		memcpy(m->bytes, buf, r->len);
		m->len = r->len;
		m->result = *r;
	}
	return e;
}
