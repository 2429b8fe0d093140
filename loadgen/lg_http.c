/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_http.c - request templates, the answer memo and the order scan of
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
	[LG_REQ_ITEM] = "item", [LG_REQ_HEALTHZ] = "healthz", [LG_REQ_CART] = "cart",
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
lg_req_tmpl_init(struct lg_req_tmpl *t, const char *host, uint64_t item, unsigned cart_lines)
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
	if (rc != 0)
		return -ENAMETOOLONG;
	/* a cart of items item..: its body follows the head's final CRLF */
	size_t blen = sk_crowd_cart_body(t->cart_body, sizeof(t->cart_body), item, cart_lines);
	if (blen == 0)
		return 0; /* no cart of these items: lg_opts refuses a mix with carts */
	t->cart_body_len = (uint16_t)blen;
	snprintf(head, sizeof(head),
		 "POST /v1/cart%sContent-Type: application/json\r\nContent-Length: %zu\r\n"
		 "X-User-Id: ",
		 hdr, blen);
	return tmpl_set(&t->kind[LG_REQ_CART], head, "\r\n", true);
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
	if (k == LG_REQ_CART) {
		memcpy(out + n, t->cart_body, t->cart_body_len);
		n += t->cart_body_len;
	}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Responses (parsed by sk_http_client.h)                                    */
/* ------------------------------------------------------------------------ */

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

enum sk_http_client_result
lg_resp_parse_memo(struct lg_resp_memo *m, struct sk_http_client_resp *r, const uint8_t *buf,
		   size_t len)
{
	bool fresh = r->off == 0 && r->state == 0;
	enum sk_http_client_result e;

	if (fresh && m->len != 0 && len >= m->len && memcmp(buf, m->bytes, m->len) == 0) {
		*r = m->result;
		m->hits++;
		return SK_HTTP_CLIENT_DONE;
	}
	m->misses += fresh;
	e = sk_http_client_parse(r, buf, len);
	if (fresh && e == SK_HTTP_CLIENT_DONE && r->len <= sizeof(m->bytes)) {
		memcpy(m->bytes, buf, r->len);
		m->len = r->len;
		m->result = *r;
	}
	return e;
}
