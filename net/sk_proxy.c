/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_proxy.c - the PROXY protocol header parser, versions 1 and 2
 * (sk_proxy.h). Reads never pass the length given; every loop is bounded by
 * it, by SK_PROXY_V1_MAX or by the declared v2 length.
 */
#include <string.h>

#include "sk_proxy.h"

static const uint8_t v2_sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
				   0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
static const char v1_sig[6] = {'P', 'R', 'O', 'X', 'Y', ' '};

/* v2 command (low nibble of byte 12) and family / transport (byte 13) */
#define V2_CMD_LOCAL 0x0
#define V2_CMD_PROXY 0x1
#define V2_AF_UNSPEC 0x0
#define V2_AF_INET   0x1
#define V2_AF_INET6  0x2
#define V2_AF_UNIX   0x3
#define V2_TP_UNSPEC 0x0
#define V2_TP_STREAM 0x1
#define V2_TP_DGRAM  0x2
#define V2_ADDR4_LEN 12 /* two IPv4 addresses, two ports */
#define V2_ADDR6_LEN 36 /* two IPv6 addresses, two ports */

/* It lives in the per-connection app area (docs/tcp.md). */
_Static_assert(sizeof(struct sk_proxy_parser) == 8, "sk_proxy_parser grew");

static const char *const result_names[SK_PROXY_RESULT_MAX] = {
	[SK_PROXY_NEED_MORE] = "need more bytes",
	[SK_PROXY_DONE] = "done",
	[SK_PROXY_EBADSIG] = "not a PROXY protocol header",
	[SK_PROXY_EVERSION] = "unsupported PROXY protocol version",
	[SK_PROXY_ECOMMAND] = "unknown PROXY v2 command",
	[SK_PROXY_EFAMILY] = "unsupported address family or transport",
	[SK_PROXY_ETRUNCATED] = "PROXY v2 length shorter than its addresses",
	[SK_PROXY_ETOOLONG] = "PROXY header too long",
	[SK_PROXY_ESYNTAX] = "malformed PROXY v1 line",
	[SK_PROXY_EADDR] = "bad address in PROXY header",
	[SK_PROXY_EPORT] = "bad port in PROXY header",
	[SK_PROXY_ETLV] = "PROXY v2 TLV past the header's length",
};

const char *
sk_proxy_strerror(enum sk_proxy_result r)
{
	if ((unsigned)r >= SK_PROXY_RESULT_MAX)
		return "invalid result";
	return result_names[r];
}

void
sk_proxy_parser_init(struct sk_proxy_parser *p, uint16_t v2_len_max)
{
	memset(p, 0, sizeof(*p));
	if (v2_len_max == 0)
		v2_len_max = SK_PROXY_V2_LEN_MAX_DEFAULT;
	if (v2_len_max < SK_PROXY_V2_LEN_MAX_MIN)
		v2_len_max = SK_PROXY_V2_LEN_MAX_MIN;
	p->v2_len_max = v2_len_max;
}

static uint16_t
be16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* ------------------------------------------------------------------------ */
/* Version 1                                                                 */
/* ------------------------------------------------------------------------ */

/* decode_v1 - the line buf[0..end) (CRLF excluded), "PROXY " checked. */
static enum sk_proxy_result
decode_v1(const uint8_t *buf, size_t end, struct sk_proxy_header *out)
{
	const uint8_t *f[4];
	size_t n[4], start = sizeof(v1_sig), proto_end = start;
	int nf = 0;
	uint8_t family;

	while (proto_end < end && buf[proto_end] != ' ')
		proto_end++;
	if (proto_end - start == 7 && memcmp(buf + start, "UNKNOWN", 7) == 0) {
		/* whatever follows UNKNOWN up to the CRLF is ignored */
		out->kind = SK_PROXY_UNKNOWN;
		return SK_PROXY_DONE;
	}
	if (proto_end - start == 4 && memcmp(buf + start, "TCP4", 4) == 0)
		family = SK_ADDR_V4;
	else if (proto_end - start == 4 && memcmp(buf + start, "TCP6", 4) == 0)
		family = SK_ADDR_V6;
	else if (proto_end == start)
		return SK_PROXY_ESYNTAX;
	else
		return SK_PROXY_EFAMILY;
	/* exactly: proto SP src SP dst SP sport SP dport, no field empty */
	if (proto_end == end)
		return SK_PROXY_ESYNTAX;
	start = proto_end + 1;
	for (size_t i = start; i <= end; i++) {
		if (i < end && buf[i] != ' ')
			continue;
		if (nf == 4 || i == start)
			return SK_PROXY_ESYNTAX;
		f[nf] = buf + start;
		n[nf++] = i - start;
		start = i + 1;
	}
	if (nf != 4)
		return SK_PROXY_ESYNTAX;
	for (int k = 0; k < 2; k++) {
		struct sk_addr a;

		if (sk_addr_parse((const char *)f[k], n[k], &a) != SK_ADDR_OK || a.family != family)
			return SK_PROXY_EADDR;
		if (k == 0)
			out->src = sk_addr_unmap(&a);
		else
			out->dst = sk_addr_unmap(&a);
	}
	if (!sk_addr_port_parse((const char *)f[2], n[2], &out->src_port) ||
	    !sk_addr_port_parse((const char *)f[3], n[3], &out->dst_port))
		return SK_PROXY_EPORT;
	out->kind = SK_PROXY_PROXIED;
	return SK_PROXY_DONE;
}

/* parse_v1 - scan for the CRLF from where the last call stopped. */
static enum sk_proxy_result
parse_v1(struct sk_proxy_parser *p, const uint8_t *buf, size_t len, struct sk_proxy_header *out)
{
	/* the CR may stand at index SK_PROXY_V1_MAX - 2 at the latest */
	size_t lim = len < SK_PROXY_V1_MAX - 1 ? len : SK_PROXY_V1_MAX - 1;
	size_t i;

	for (i = p->seen; i < lim; i++) {
		if (i < sizeof(v1_sig)) {
			if (buf[i] != (uint8_t)v1_sig[i])
				return SK_PROXY_EBADSIG;
			continue;
		}
		if (buf[i] == '\n')
			return SK_PROXY_ESYNTAX;
		if (buf[i] != '\r')
			continue;
		if (i + 1 == len)
			break; /* the LF has not arrived yet */
		if (buf[i + 1] != '\n')
			return SK_PROXY_ESYNTAX;
		enum sk_proxy_result r = decode_v1(buf, i, out);

		if (r == SK_PROXY_DONE) {
			out->version = 1;
			out->len = (uint32_t)(i + 2);
		}
		return r;
	}
	if (i == SK_PROXY_V1_MAX - 1)
		return SK_PROXY_ETOOLONG;
	p->seen = (uint32_t)i;
	return SK_PROXY_NEED_MORE;
}

/* ------------------------------------------------------------------------ */
/* Version 2                                                                 */
/* ------------------------------------------------------------------------ */

/* check_v2_head - what bytes 12 and 13 allow to say, when they are there. */
static enum sk_proxy_result
check_v2_head(const uint8_t *buf, size_t len)
{
	if (len > 12) {
		if (buf[12] >> 4 != 2)
			return SK_PROXY_EVERSION;
		if ((buf[12] & 0xf) > V2_CMD_PROXY)
			return SK_PROXY_ECOMMAND;
	}
	if (len > 13) {
		unsigned af = buf[13] >> 4, tp = buf[13] & 0xf;

		if (af > V2_AF_UNIX || tp > V2_TP_DGRAM)
			return SK_PROXY_EFAMILY;
		/* a relayed connection must be TCP over IP, or say it does not know */
		if ((buf[12] & 0xf) == V2_CMD_PROXY && af != V2_AF_UNSPEC &&
		    (af == V2_AF_UNIX || tp != V2_TP_STREAM))
			return SK_PROXY_EFAMILY;
	}
	return SK_PROXY_NEED_MORE;
}

/* decode_v2 - the whole header is in buf[0..SK_PROXY_V2_HEAD + plen). */
static enum sk_proxy_result
decode_v2(const uint8_t *buf, size_t plen, struct sk_proxy_header *out)
{
	const uint8_t *a = buf + SK_PROXY_V2_HEAD;
	unsigned af = buf[13] >> 4;
	size_t alen, off;

	if ((buf[12] & 0xf) == V2_CMD_LOCAL) {
		out->kind = SK_PROXY_LOCAL; /* the block is ignored, as the spec says */
		return SK_PROXY_DONE;
	}
	if (af == V2_AF_UNSPEC) {
		out->kind = SK_PROXY_UNKNOWN;
		return SK_PROXY_DONE;
	}
	if (af == V2_AF_INET) {
		uint32_t s, d;

		alen = V2_ADDR4_LEN;
		memcpy(&s, a, 4);
		memcpy(&d, a + 4, 4);
		out->src = sk_addr_from_v4(s);
		out->dst = sk_addr_from_v4(d);
	} else {
		struct sk_addr s = sk_addr_from_v6(a), d = sk_addr_from_v6(a + 16);

		alen = V2_ADDR6_LEN;
		out->src = sk_addr_unmap(&s);
		out->dst = sk_addr_unmap(&d);
	}
	out->src_port = be16(a + alen - 4);
	out->dst_port = be16(a + alen - 2);
	/* TLVs: type (1), length (2), value; each inside the declared length */
	for (off = alen; off < plen;) {
		if (plen - off < 3)
			return SK_PROXY_ETLV;
		size_t vlen = be16(a + off + 1);

		if (vlen > plen - off - 3)
			return SK_PROXY_ETLV;
		off += 3 + vlen;
	}
	out->kind = SK_PROXY_PROXIED;
	return SK_PROXY_DONE;
}

static enum sk_proxy_result
parse_v2(struct sk_proxy_parser *p, const uint8_t *buf, size_t len, struct sk_proxy_header *out)
{
	size_t lim = len < sizeof(v2_sig) ? len : sizeof(v2_sig);
	enum sk_proxy_result r;

	for (size_t i = p->seen; i < lim; i++)
		if (buf[i] != v2_sig[i])
			return SK_PROXY_EBADSIG;
	p->seen = (uint32_t)lim;
	r = check_v2_head(buf, len);
	if (r != SK_PROXY_NEED_MORE || len < SK_PROXY_V2_HEAD)
		return r;

	size_t plen = be16(buf + 14);
	unsigned af = buf[13] >> 4;

	if (plen > p->v2_len_max)
		return SK_PROXY_ETOOLONG;
	if ((buf[12] & 0xf) == V2_CMD_PROXY && ((af == V2_AF_INET && plen < V2_ADDR4_LEN) ||
						(af == V2_AF_INET6 && plen < V2_ADDR6_LEN)))
		return SK_PROXY_ETRUNCATED;
	if (len < SK_PROXY_V2_HEAD + plen)
		return SK_PROXY_NEED_MORE;
	r = decode_v2(buf, plen, out);
	if (r == SK_PROXY_DONE) {
		out->version = 2;
		out->len = (uint32_t)(SK_PROXY_V2_HEAD + plen);
	}
	return r;
}

/* ------------------------------------------------------------------------ */

/* run - one step of @p, which has no result yet. */
static enum sk_proxy_result
run(struct sk_proxy_parser *p, const uint8_t *buf, size_t len, struct sk_proxy_header *out)
{
	enum sk_proxy_result r;

	if (len == 0)
		return SK_PROXY_NEED_MORE;
	if (p->version == 0) {
		if (buf[0] == (uint8_t)v1_sig[0])
			p->version = 1;
		else if (buf[0] == v2_sig[0])
			p->version = 2;
		else
			return SK_PROXY_EBADSIG;
	}
	r = p->version == 1 ? parse_v1(p, buf, len, out) : parse_v2(p, buf, len, out);
	if (r == SK_PROXY_DONE)
		p->seen = out->len;
	else if (r != SK_PROXY_NEED_MORE)
		memset(out, 0, sizeof(*out));
	return r;
}

enum sk_proxy_result
sk_proxy_parse(struct sk_proxy_parser *p, const uint8_t *buf, size_t len,
	       struct sk_proxy_header *out)
{
	memset(out, 0, sizeof(*out));
	if (p->result == SK_PROXY_DONE) {
		/* kept: refill @out from the same bytes */
		struct sk_proxy_parser again;

		if (len < p->seen)
			return SK_PROXY_NEED_MORE;
		sk_proxy_parser_init(&again, p->v2_len_max);
		return run(&again, buf, p->seen, out);
	}
	if (p->result != SK_PROXY_NEED_MORE)
		return (enum sk_proxy_result)p->result;
	p->result = (uint8_t)run(p, buf, len, out);
	return (enum sk_proxy_result)p->result;
}
