/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_http_parse.c - the resumable, zero-copy HTTP/1.1 request parser.
 *
 * A byte-level state machine in the manner of nginx's ngx_http_parse.c: each
 * call looks only at bytes it has not seen, keeps its place as an offset and
 * returns AGAIN when input runs out. Because the net stack always hands us
 * the request from its first byte, earlier bytes can be re-read at no cost;
 * the parser uses that to interpret a field line's value only once its line
 * is complete, so the state stays a handful of 16-bit offsets.
 *
 * Character classes come from one 256-entry table (sk_http_parse_priv.h).
 * Header values, the longest part of a request (Bearer tokens), are scanned
 * 16 bytes at a time with SSE2 when available, with a scalar fallback. What
 * a complete field line means is decided in sk_http_fields.c.
 */
#include <errno.h>
#include <string.h>

#include "sk_common.h"
#include "sk_http.h"
#include "sk_http_parse_priv.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------------------ */
/* State (the states and flags are in sk_http_parse_priv.h)                  */
/* ------------------------------------------------------------------------ */

/* "HTTP/" "1" "." "1": the longest method is 7 bytes (OPTIONS, CONNECT). */
#define METHOD_MAX  7
#define VERSION_LEN 8

int
sk_http_parser_init(struct sk_http_parser *p, const struct sk_http_limits *limits)
{
	struct sk_http_limits l = {0};
	int rc = 0;

	if (limits != NULL)
		l = *limits;
	if (l.head_max == 0)
		l.head_max = SK_HTTP_HEAD_MAX_DEFAULT;
	if (l.target_max == 0)
		l.target_max = SK_HTTP_TARGET_MAX_DEFAULT < l.head_max - 16
				       ? SK_HTTP_TARGET_MAX_DEFAULT
				       : l.head_max - 16;
	if (l.body_max == 0)
		l.body_max = SK_HTTP_BODY_MAX_DEFAULT;
	if (l.fields_max == 0)
		l.fields_max = SK_HTTP_FIELDS_MAX_DEFAULT;

	if (l.head_max < 64 || l.head_max > SK_HTTP_HEAD_MAX_LIMIT || l.target_max < 1 ||
	    l.target_max > l.head_max - 16 || l.body_max > (1u << 30) || l.fields_max < 1 ||
	    l.fields_max > 1024) {
		l = (struct sk_http_limits){SK_HTTP_HEAD_MAX_DEFAULT, SK_HTTP_TARGET_MAX_DEFAULT,
					    SK_HTTP_BODY_MAX_DEFAULT, SK_HTTP_FIELDS_MAX_DEFAULT};
		rc = -EINVAL;
	}

	memset(p, 0, sizeof(*p));
	p->head_max = (uint16_t)l.head_max;
	p->target_max = (uint16_t)l.target_max;
	p->body_max = l.body_max;
	p->fields_max = (uint16_t)l.fields_max;
	p->state = ST_START;
	return rc;
}

void
sk_http_parser_reset(struct sk_http_parser *p)
{
	uint32_t body_max = p->body_max;
	uint16_t head_max = p->head_max, target_max = p->target_max, fields_max = p->fields_max;

	memset(p, 0, sizeof(*p));
	p->body_max = body_max;
	p->head_max = head_max;
	p->target_max = target_max;
	p->fields_max = fields_max;
	p->state = ST_START;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/* ------------------------------------------------------------------------ */

static const struct {
	uint16_t status;
	const char *name;
} result_info[SK_HTTP_RESULT_MAX] = {
	[SK_HTTP_DONE] = {200, "done"},
	[SK_HTTP_AGAIN] = {200, "again"},
	[SK_HTTP_HEAD] = {200, "head"},
	[SK_HTTP_E_REQUEST_LINE] = {400, "bad_request_line"},
	[SK_HTTP_E_TARGET] = {400, "bad_target"},
	[SK_HTTP_E_HEADER] = {400, "bad_header"},
	[SK_HTTP_E_FRAMING] = {400, "bad_framing"},
	[SK_HTTP_E_HOST] = {400, "bad_host"},
	[SK_HTTP_E_DUPLICATE] = {400, "duplicate_field"},
	[SK_HTTP_E_METHOD] = {405, "method_not_allowed"},
	[SK_HTTP_E_LENGTH_REQUIRED] = {411, "length_required"},
	[SK_HTTP_E_BODY_TOO_LARGE] = {413, "body_too_large"},
	[SK_HTTP_E_TARGET_TOO_LONG] = {414, "target_too_long"},
	[SK_HTTP_E_HEAD_TOO_LARGE] = {431, "head_too_large"},
	[SK_HTTP_E_METHOD_UNKNOWN] = {501, "method_unknown"},
	[SK_HTTP_E_VERSION] = {505, "version_not_supported"},
};

int
sk_http_result_status(enum sk_http_result r)
{
	if ((unsigned)r >= SK_HTTP_RESULT_MAX)
		return 500;
	return result_info[r].status;
}

const char *
sk_http_result_name(enum sk_http_result r)
{
	if ((unsigned)r >= SK_HTTP_RESULT_MAX)
		return "unknown";
	return result_info[r].name;
}

/*
 * head_end - checks that need the whole head (RFC 9112 3.2, 6.1, 6.3), in a
 * fixed order so the result does not depend on field order.
 */
static enum sk_http_result
head_end(const struct sk_http_parser *p)
{
	if (p->version == 11 && !(p->flags & F_HOST))
		return SK_HTTP_E_HOST;
	if (p->flags & F_TE) {
		if (p->version == 10 || (p->flags & F_CL))
			return SK_HTTP_E_FRAMING;
		return (p->flags & F_TE_CHUNKED) ? SK_HTTP_E_LENGTH_REQUIRED : SK_HTTP_E_FRAMING;
	}
	if (p->body_len > p->body_max)
		return SK_HTTP_E_BODY_TOO_LARGE;
	return SK_HTTP_DONE;
}

/* ------------------------------------------------------------------------ */
/* The state machine                                                         */
/* ------------------------------------------------------------------------ */

static enum sk_http_result
method_lookup(const uint8_t *m, size_t n, uint8_t *method)
{
#define M(lit) (n == sizeof(lit) - 1 && memcmp(m, lit, sizeof(lit) - 1) == 0)
	if (M("GET"))
		*method = SK_HTTP_METHOD_GET;
	else if (M("POST"))
		*method = SK_HTTP_METHOD_POST;
	else if (M("HEAD"))
		*method = SK_HTTP_METHOD_HEAD;
	else if (M("PUT") || M("DELETE") || M("PATCH") || M("OPTIONS") || M("TRACE") ||
		 M("CONNECT"))
		return SK_HTTP_E_METHOD;
	else
		return SK_HTTP_E_METHOD_UNKNOWN;
	return SK_HTTP_DONE;
#undef M
}

/* scan_value - first offset in [pos, end) that is not a field-value byte. */
static inline size_t
scan_value(const uint8_t *buf, size_t pos, size_t end)
{
	while (pos < end) {
#ifdef __SSE2__
		/* Special bytes: 0x00..0x1f (HTAB included, handled below) and 0x7f. */
		const __m128i minus1 = _mm_set1_epi8(-1);
		const __m128i space = _mm_set1_epi8(0x20);
		const __m128i del = _mm_set1_epi8(0x7f);
		while (pos + 16 <= end) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(buf + pos));
			__m128i ctl =
				_mm_and_si128(_mm_cmpgt_epi8(v, minus1), _mm_cmplt_epi8(v, space));
			int m = _mm_movemask_epi8(_mm_or_si128(ctl, _mm_cmpeq_epi8(v, del)));
			if (m != 0) {
				pos += (size_t)__builtin_ctz((unsigned)m);
				break;
			}
			pos += 16;
		}
#endif
		if (pos < end && is_class(buf[pos], C_VALUE)) {
			pos++;
			continue;
		}
		break;
	}
	return pos;
}

static void
fill_request(const struct sk_http_parser *p, const uint8_t *buf, struct sk_http_request *req)
{
	const char *b = (const char *)buf;

	if (sk_likely(p->path_len != 0)) {
		req->target = b + p->target_off;
		req->target_len = p->target_len;
		req->path_len = p->path_len;
	} else {
		/*
		 * Absolute-form with an empty path means "/" (RFC 9112 3.2.2): the
		 * second slash of "://" is one, in the buffer. A query after an
		 * empty path ("http://h?q") is not exposed: it has no "/" to follow.
		 */
		req->target = b + p->host_off - 1;
		req->target_len = 1;
		req->path_len = 1;
	}
	req->host = (p->flags & (F_HOST | F_ABSOLUTE)) ? b + p->host_off : NULL;
	req->host_len = p->host_len;
	req->authorization = (p->flags & F_AUTH) ? b + p->auth_off : NULL;
	req->authorization_len = p->auth_len;
	req->user_id = (p->flags & F_UID) ? b + p->uid_off : NULL;
	req->user_id_len = p->uid_len;
	req->content_type = (p->flags & F_CTYPE) ? b + p->ctype_off : NULL;
	req->content_type_len = p->ctype_len;
	req->head_len = p->head_len;
	req->body_len = p->body_len;
	req->len = (uint32_t)p->head_len + p->body_len;
	req->body = NULL;
	req->nfields = p->nfields;
	req->method = p->method;
	req->version = p->version;
	req->has_content_length = (p->flags & F_CL) != 0;
	req->expect_continue = p->version == 11 && (p->flags & F_EXPECT);
	if (p->version == 11) {
		req->keep_alive = !(p->flags & F_CLOSE);
		req->keep_alive_header = false;
	} else {
		req->keep_alive = (p->flags & (F_CLOSE | F_KEEPALIVE)) == F_KEEPALIVE;
		req->keep_alive_header = req->keep_alive;
	}
}

static enum sk_http_result
finish(struct sk_http_parser *p, enum sk_http_result r)
{
	p->state = ST_FINAL;
	p->result = (uint8_t)r;
	return r;
}

/* body_wait - the head is complete: DONE if the body is all there. */
static enum sk_http_result
body_wait(struct sk_http_parser *p, const uint8_t *buf, size_t len, struct sk_http_request *req,
	  bool first)
{
	if (len >= p->head_len && len - p->head_len >= p->body_len) {
		if (req != NULL) {
			fill_request(p, buf, req);
			req->body = buf + p->head_len;
		}
		return finish(p, SK_HTTP_DONE);
	}
	if (!first)
		return SK_HTTP_AGAIN;
	p->state = ST_BODY;
	if (req != NULL)
		fill_request(p, buf, req);
	return SK_HTTP_HEAD;
}

/*
 * The states are labels: the stored state is dispatched once per call, then
 * the code falls or jumps from state to state without going back through a
 * switch (an indirect jump per transition was the main cost). NEED() saves
 * the state and returns AGAIN when the input (or the head limit) runs out.
 */
#define NEED(st)                                                                                   \
	do {                                                                                       \
		if (sk_unlikely(pos >= end)) {                                                     \
			p->state = (st);                                                           \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

enum sk_http_result
sk_http_parse(struct sk_http_parser *p, const void *data, size_t len, struct sk_http_request *req)
{
	const uint8_t *buf = data;
	size_t pos = p->pos;
	size_t end = len < p->head_max ? len : p->head_max;
	enum sk_http_result r;
	uint8_t c;

	switch (p->state) {
	case ST_FINAL:
		r = (enum sk_http_result)p->result;
		if (r == SK_HTTP_DONE && req != NULL) {
			SK_DEBUG_ASSERT(len >= (size_t)p->head_len + p->body_len);
			fill_request(p, buf, req);
			req->body = buf + p->head_len;
		}
		return r;
	case ST_BODY:
		return body_wait(p, buf, len, req, false);
	case ST_START:
		goto st_start;
	case ST_START_LF:
		goto st_start_lf;
	case ST_METHOD:
		goto st_method;
	case ST_TARGET0:
		goto st_target0;
	case ST_SCHEME:
		goto st_scheme;
	case ST_AUTHORITY:
		goto st_authority;
	case ST_TARGET:
		goto st_target;
	case ST_VERSION:
		goto st_version;
	case ST_RL_LF:
		goto st_rl_lf;
	case ST_FIELD:
		goto st_field;
	case ST_NAME:
		goto st_name;
	case ST_VALUE:
		goto st_value;
	case ST_FIELD_LF:
		goto st_field_lf;
	case ST_HEAD_LF:
		goto st_head_lf;
	default:
		SK_ASSERT(0 && "sk_http_parser state corrupt");
	}

st_start:
	/* RFC 9112 2.2: ignore empty lines before the request line */
	for (;;) {
		NEED(ST_START);
		c = buf[pos];
		if (c == '\n') {
			pos++;
			continue;
		}
		if (c == '\r') {
			pos++;
			goto st_start_lf;
		}
		break;
	}
	if (!is_class(c, C_TCHAR))
		return finish(p, SK_HTTP_E_REQUEST_LINE);
	p->start = (uint16_t)pos;
	goto st_method;

st_start_lf:
	NEED(ST_START_LF);
	if (buf[pos] != '\n')
		return finish(p, SK_HTTP_E_REQUEST_LINE);
	pos++;
	goto st_start;

st_method:
	while (pos < end && is_class(buf[pos], C_TCHAR)) {
		if (pos - p->start >= METHOD_MAX)
			return finish(p, SK_HTTP_E_METHOD_UNKNOWN);
		pos++;
	}
	NEED(ST_METHOD);
	if (buf[pos] != ' ')
		return finish(p, SK_HTTP_E_REQUEST_LINE);
	r = method_lookup(buf + p->start, pos - p->start, &p->method);
	if (r != SK_HTTP_DONE)
		return finish(p, r);
	pos++;

st_target0:
	NEED(ST_TARGET0);
	c = buf[pos];
	p->target_raw = (uint16_t)pos;
	if (sk_unlikely(c != '/')) {
		if (lower(c) == 'h')
			goto st_scheme;
		/* asterisk-form and authority-form are never served */
		return finish(p,
			      (c == ' ' || c == '\t') ? SK_HTTP_E_REQUEST_LINE : SK_HTTP_E_TARGET);
	}
	p->target_off = (uint16_t)pos;
	pos++;
	goto st_target;

st_scheme:
	/* RFC 9112 3.2.2 absolute-form: "http" ["s"] "://", scheme in any case */
	for (;;) {
		NEED(ST_SCHEME);
		c = buf[pos];
		size_t i = pos - p->target_raw;
		size_t j = i - (i > 4 && lower(buf[p->target_raw + 4]) == 's');
		if (!(i == 4 && lower(c) == 's') && lower(c) != (uint8_t) "http://"[j])
			return finish(p, (c == '\r' || c == '\n') ? SK_HTTP_E_REQUEST_LINE
								  : SK_HTTP_E_TARGET);
		if (i >= p->target_max)
			return finish(p, SK_HTTP_E_TARGET_TOO_LONG);
		pos++;
		if (j == 6)
			break;
	}
	p->host_off = (uint16_t)pos;

st_authority:
	/* host [":" port] with the Host field's bytes: no userinfo (RFC 9110 4.2.4) */
	for (; pos < end && is_class(buf[pos], C_HOST); pos++)
		if (pos - p->target_raw >= p->target_max)
			return finish(p, SK_HTTP_E_TARGET_TOO_LONG);
	NEED(ST_AUTHORITY);
	c = buf[pos];
	if (c != '/' && c != '?' && c != ' ')
		return finish(p,
			      (c == '\r' || c == '\n') ? SK_HTTP_E_REQUEST_LINE : SK_HTTP_E_TARGET);
	/* RFC 9110 4.2.1: an http(s) URI with an empty host is invalid */
	if (pos == p->host_off || buf[p->host_off] == ':')
		return finish(p, SK_HTTP_E_TARGET);
	p->host_len = (uint16_t)(pos - p->host_off);
	p->flags |= F_ABSOLUTE;
	/* path and query as in origin-form, from the byte that ended the authority */
	p->target_off = (uint16_t)pos;

st_target:
	for (; pos < end; pos++) {
		c = buf[pos];
		if (sk_likely(is_class(c, C_TARGET) && p->pct == 0)) {
			if (c == '?' && !(p->flags & F_QUERY)) {
				p->flags |= F_QUERY;
				p->path_len = (uint16_t)(pos - p->target_off);
			}
		} else if (p->pct != 0) {
			if (!is_class(c, C_HEX))
				return finish(p, SK_HTTP_E_TARGET);
			p->pct--;
		} else if (c == '%') {
			p->pct = 2;
		} else if (c == ' ') {
			break;
		} else {
			return finish(p, (c == '\r' || c == '\n') ? SK_HTTP_E_REQUEST_LINE
								  : SK_HTTP_E_TARGET);
		}
		if (pos - p->target_raw >= p->target_max)
			return finish(p, SK_HTTP_E_TARGET_TOO_LONG);
	}
	NEED(ST_TARGET);
	p->target_len = (uint16_t)(pos - p->target_off);
	if (!(p->flags & F_QUERY))
		p->path_len = p->target_len;
	pos++;

st_version : {
	/* "HTTP/" DIGIT "." DIGIT, then CR LF (or a bare LF) */
	size_t vstart = (size_t)p->target_off + p->target_len + 1;

	for (;;) {
		NEED(ST_VERSION);
		c = buf[pos];
		size_t i = pos - vstart;
		if (i < 5) {
			if (c != (uint8_t) "HTTP/"[i])
				return finish(p, SK_HTTP_E_REQUEST_LINE);
		} else if (i == 5 || i == 7) {
			if (c < '0' || c > '9')
				return finish(p, SK_HTTP_E_REQUEST_LINE);
		} else if (i == 6) {
			if (c != '.')
				return finish(p, SK_HTTP_E_REQUEST_LINE);
		} else {
			if (c != '\r' && c != '\n')
				return finish(p, SK_HTTP_E_REQUEST_LINE);
			if (buf[vstart + 5] != '1')
				return finish(p, SK_HTTP_E_VERSION);
			/* RFC 9110 2.5: a higher 1.x minor is processed as 1.1 */
			p->version = buf[vstart + 7] == '0' ? 10 : 11;
			pos++;
			if (c == '\n')
				goto st_field;
			goto st_rl_lf;
		}
		pos++;
	}
}

st_rl_lf:
	NEED(ST_RL_LF);
	if (buf[pos] != '\n')
		return finish(p, SK_HTTP_E_REQUEST_LINE);
	pos++;

st_field:
	NEED(ST_FIELD);
	c = buf[pos];
	if (c == '\r') {
		pos++;
		goto st_head_lf;
	}
	if (c == '\n')
		goto head_done;
	/* SP/HTAB here is obs-fold (or space after the start line): 400 */
	if (!is_class(c, C_TCHAR))
		return finish(p, SK_HTTP_E_HEADER);
	if (p->nfields >= p->fields_max)
		return finish(p, SK_HTTP_E_HEAD_TOO_LARGE);
	p->nfields++;
	p->line = (uint16_t)pos;
	pos++;

st_name:
	while (pos < end && is_class(buf[pos], C_TCHAR))
		pos++;
	NEED(ST_NAME);
	/* whitespace before the colon (RFC 9112 5.1) and CR/LF land here */
	if (buf[pos] != ':')
		return finish(p, SK_HTTP_E_HEADER);
	p->colon = (uint16_t)pos;
	pos++;

st_value:
	pos = scan_value(buf, pos, end);
	NEED(ST_VALUE);
	c = buf[pos];
	if (c == '\r') {
		pos++;
		goto st_field_lf;
	}
	if (c != '\n')
		return finish(p, SK_HTTP_E_HEADER);
	r = sk_http_field_line(p, buf, pos);
	if (r != SK_HTTP_DONE)
		return finish(p, r);
	pos++;
	goto st_field;

st_field_lf:
	NEED(ST_FIELD_LF);
	if (buf[pos] != '\n')
		return finish(p, SK_HTTP_E_HEADER);
	r = sk_http_field_line(p, buf, pos - 1);
	if (r != SK_HTTP_DONE)
		return finish(p, r);
	pos++;
	goto st_field;

st_head_lf:
	NEED(ST_HEAD_LF);
	if (buf[pos] != '\n')
		return finish(p, SK_HTTP_E_HEADER);

head_done:
	p->head_len = (uint16_t)(pos + 1);
	p->pos = (uint32_t)(pos + 1);
	r = head_end(p);
	if (r != SK_HTTP_DONE)
		return finish(p, r);
	return body_wait(p, buf, len, req, true);

out:
	if (pos >= p->head_max)
		return finish(p, SK_HTTP_E_HEAD_TOO_LARGE);
	p->pos = (uint32_t)pos;
	return SK_HTTP_AGAIN;
}
