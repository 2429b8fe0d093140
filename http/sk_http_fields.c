/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_http_fields.c - the meaning of the field lines the appliance reads
 * (Host, Expect, X-User-Id, Connection, Authorization, Content-Type,
 * Content-Length, Transfer-Encoding), run by the parser (sk_http_parse.c) once per complete
 * field line, never per byte. Values are re-read from the request buffer
 * and recorded as offsets; nothing is copied.
 */
#include "sk_common.h"
#include "sk_http.h"
#include "sk_http_parse_priv.h"

/* eq_lower - true if @s[0..n) equals the lowercase ASCII @lit, ignoring case. */
static bool
eq_lower(const uint8_t *s, size_t n, const char *lit, size_t litlen)
{
	if (n != litlen)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(s[i]) != (uint8_t)lit[i])
			return false;
	return true;
}

#define EQ_LOWER(s, n, lit) eq_lower((s), (n), (lit), sizeof(lit) - 1)

/*
 * list_next - next element of a comma-separated list in [*s, end): skips
 * empty elements and OWS, stores the element in [*es, *ee) and advances *s.
 * Returns false when the list is exhausted.
 */
static bool
list_next(const uint8_t **s, const uint8_t *end, const uint8_t **es, const uint8_t **ee)
{
	const uint8_t *c = *s;

	while (c < end && (*c == ',' || *c == ' ' || *c == '\t'))
		c++;
	if (c == end)
		return false;
	*es = c;
	while (c < end && *c != ',')
		c++;
	*s = c;
	while (c > *es && (c[-1] == ' ' || c[-1] == '\t'))
		c--;
	*ee = c;
	return true;
}

static enum sk_http_result
field_content_length(struct sk_http_parser *p, const uint8_t *v, size_t n)
{
	uint64_t cl = 0;

	if (p->flags & F_CL)
		return SK_HTTP_E_FRAMING; /* duplicates refused, even equal ones */
	if (n == 0)
		return SK_HTTP_E_FRAMING;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return SK_HTTP_E_FRAMING;
		cl = cl * 10 + (uint64_t)(v[i] - '0');
		if (cl > UINT32_MAX)
			cl = (uint64_t)UINT32_MAX + 1; /* saturate: only "too large" matters */
	}
	p->flags |= F_CL;
	/* saturated values read as UINT32_MAX, above any body_max (<= 1 GiB) */
	p->body_len = cl > UINT32_MAX ? UINT32_MAX : (uint32_t)cl;
	return SK_HTTP_DONE;
}

static enum sk_http_result
field_transfer_encoding(struct sk_http_parser *p, const uint8_t *v, size_t n)
{
	const uint8_t *s = v, *es = NULL, *ee = NULL, *last = NULL, *last_end = NULL;

	while (list_next(&s, v + n, &es, &ee)) {
		last = es;
		last_end = ee;
	}
	if (last == NULL)
		return SK_HTTP_E_FRAMING; /* 1#transfer-coding: at least one */
	p->flags |= F_TE;
	if (EQ_LOWER(last, (size_t)(last_end - last), "chunked"))
		p->flags |= F_TE_CHUNKED;
	else
		p->flags &= (uint16_t)~F_TE_CHUNKED;
	return SK_HTTP_DONE;
}

static void
field_connection(struct sk_http_parser *p, const uint8_t *v, size_t n)
{
	const uint8_t *s = v, *es = NULL, *ee = NULL;

	while (list_next(&s, v + n, &es, &ee)) {
		if (EQ_LOWER(es, (size_t)(ee - es), "close"))
			p->flags |= F_CLOSE;
		else if (EQ_LOWER(es, (size_t)(ee - es), "keep-alive"))
			p->flags |= F_KEEPALIVE;
	}
}

enum sk_http_result
sk_http_field_line(struct sk_http_parser *p, const uint8_t *buf, size_t vend)
{
	const uint8_t *name = buf + p->line;
	size_t nlen = (size_t)p->colon - p->line;
	size_t vs = (size_t)p->colon + 1, ve = vend;

	while (vs < ve && (buf[vs] == ' ' || buf[vs] == '\t'))
		vs++;
	while (ve > vs && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
		ve--;
	const uint8_t *v = buf + vs;
	size_t vlen = ve - vs;

	switch (nlen) {
	case 4:
		if (!EQ_LOWER(name, nlen, "host"))
			break;
		if (p->flags & F_HOST)
			return SK_HTTP_E_HOST;
		for (size_t i = 0; i < vlen; i++)
			if (!is_class(v[i], C_HOST))
				return SK_HTTP_E_HOST;
		p->flags |= F_HOST;
		/* RFC 9112 3.2.2: an absolute-form target's authority wins over Host */
		if (!(p->flags & F_ABSOLUTE)) {
			p->host_off = (uint16_t)vs;
			p->host_len = (uint16_t)vlen;
		}
		break;
	case 6:
		if (EQ_LOWER(name, nlen, "expect") && EQ_LOWER(v, vlen, "100-continue"))
			p->flags |= F_EXPECT;
		break;
	case 9:
		if (!EQ_LOWER(name, nlen, "x-user-id"))
			break;
		if (p->flags & F_UID)
			return SK_HTTP_E_DUPLICATE;
		p->flags |= F_UID;
		p->uid_off = (uint16_t)vs;
		p->uid_len = (uint16_t)vlen;
		break;
	case 10:
		if (EQ_LOWER(name, nlen, "connection"))
			field_connection(p, v, vlen);
		break;
	case 12:
		if (!EQ_LOWER(name, nlen, "content-type"))
			break;
		if (p->flags & F_CTYPE)
			return SK_HTTP_E_DUPLICATE;
		p->flags |= F_CTYPE;
		p->ctype_off = (uint16_t)vs;
		p->ctype_len = (uint16_t)vlen;
		break;
	case 13:
		if (!EQ_LOWER(name, nlen, "authorization"))
			break;
		if (p->flags & F_AUTH)
			return SK_HTTP_E_DUPLICATE;
		p->flags |= F_AUTH;
		p->auth_off = (uint16_t)vs;
		p->auth_len = (uint16_t)vlen;
		break;
	case 14:
		if (EQ_LOWER(name, nlen, "content-length"))
			return field_content_length(p, v, vlen);
		break;
	case 17:
		if (EQ_LOWER(name, nlen, "transfer-encoding"))
			return field_transfer_encoding(p, v, vlen);
		break;
	default:
		break;
	}
	return SK_HTTP_DONE;
}
