/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_client.c - who the client is behind a PROXY listener or HTTP proxies;
 * the rate limit key and the order record's address (sk_client.h).
 */
#include <string.h>

#include "sk_client.h"

enum sk_client_verdict
sk_client_proxy(const struct sk_client_conf *conf, struct sk_proxy_parser *p,
		const struct sk_addr *peer, const uint8_t *buf, size_t len, struct sk_addr *client,
		uint32_t *hdr_len)
{
	struct sk_proxy_header h;
	enum sk_proxy_result r = sk_proxy_parse(p, buf, len, &h);
	bool trusted = sk_prefix_list_contains(&conf->trusted, peer);

	*hdr_len = 0;
	*client = *peer;
	if (r == SK_PROXY_NEED_MORE)
		return SK_CLIENT_AGAIN;
	if (!trusted) /* a header, even a broken one, is a forged claim */
		return r == SK_PROXY_EBADSIG ? SK_CLIENT_DIRECT : SK_CLIENT_UNTRUSTED;
	if (r == SK_PROXY_EBADSIG)
		return SK_CLIENT_MISSING;
	if (r != SK_PROXY_DONE || h.version != conf->proxy)
		return SK_CLIENT_BAD;
	*hdr_len = h.len;
	if (h.kind != SK_PROXY_PROXIED)
		return SK_CLIENT_LOCAL;
	*client = h.src;
	return SK_CLIENT_OK;
}

/* name_is - true if the field name @n (@len bytes) is @want (lower case). */
static bool
name_is(const char *n, size_t len, const char *want)
{
	size_t wl = strlen(want);

	if (len != wl)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = n[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != want[i])
			return false;
	}
	return true;
}

enum sk_fwd_result
sk_client_forwarded(const struct sk_client_conf *conf, const char *head, size_t head_len,
		    const struct sk_addr *peer, struct sk_addr *client)
{
	const char *want = conf->forwarded == 2 ? "forwarded" : "x-forwarded-for";
	struct sk_fwd_value v[SK_CLIENT_FWD_LINES_MAX];
	struct sk_fwd_client out;
	enum sk_fwd_result r;
	size_t n = 0, pos = 0;
	bool first = true;

	/* One pass over the lines of a head the parser accepted: bounded by head_len. */
	while (pos < head_len) {
		const char *line = head + pos;
		const char *nl = memchr(line, '\n', head_len - pos);
		size_t l = nl != NULL ? (size_t)(nl - line) : head_len - pos;
		const char *colon;

		pos += l + 1;
		if (l > 0 && line[l - 1] == '\r')
			l--;
		if (l == 0) {
			if (first) /* empty lines before the request line */
				continue;
			break; /* the end of the head */
		}
		if (first) { /* the request line */
			first = false;
			continue;
		}
		colon = memchr(line, ':', l);
		if (colon == NULL || !name_is(line, (size_t)(colon - line), want))
			continue;
		if (n == SK_CLIENT_FWD_LINES_MAX) {
			*client = *peer;
			return SK_FWD_GARBAGE;
		}
		v[n].p = colon + 1;
		v[n].len = l - (size_t)(colon + 1 - line);
		n++;
	}
	r = sk_forwarded_client(conf->forwarded == 2 ? SK_FWD_FORWARDED : SK_FWD_XFF, v, n, peer,
				&conf->trusted, &out);
	*client = out.addr;
	return r;
}

uint32_t
sk_client_rl_key(const struct sk_addr *a, unsigned v6_prefix)
{
	struct sk_addr k;
	uint32_t h = 2166136261u;
	uint32_t ip;

	if (a->family == SK_ADDR_V4) {
		memcpy(&ip, a->bytes, 4);
		return ip;
	}
	if (a->family != SK_ADDR_V6)
		return 0;
	k = sk_addr_key(a, v6_prefix);
	for (unsigned i = 0; i < sizeof(k.bytes); i++)
		h = (h ^ k.bytes[i]) * 16777619u;
	return h;
}

void
sk_client_proxy_count(struct sk_client_stats *st, enum sk_client_verdict v)
{
	switch (v) {
	case SK_CLIENT_OK:
		st->proxy_ok++;
		break;
	case SK_CLIENT_LOCAL:
		st->proxy_local++;
		break;
	case SK_CLIENT_DIRECT:
		st->proxy_direct++;
		break;
	case SK_CLIENT_UNTRUSTED:
		st->proxy_refused_untrusted++;
		break;
	case SK_CLIENT_MISSING:
		st->proxy_missing++;
		break;
	case SK_CLIENT_BAD:
		st->proxy_bad++;
		break;
	default:
		break;
	}
}

struct sk_client_id
sk_client_request(const struct sk_client_conf *conf, struct sk_client_stats *st,
		  const struct sk_addr *peer, const char *head, size_t head_len)
{
	struct sk_addr client;

	if (conf->forwarded == 0)
		return sk_client_id_of(peer, conf->ip6_prefix);
	switch (sk_client_forwarded(conf, head, head_len, peer, &client)) {
	case SK_FWD_CLIENT:
	case SK_FWD_OPAQUE:
		st->forwarded_used++;
		break;
	case SK_FWD_IGNORED:
		st->forwarded_ignored++;
		break;
	case SK_FWD_GARBAGE:
	case SK_FWD_TOO_MANY:
		st->forwarded_bad++;
		break;
	default:
		break;
	}
	return sk_client_id_of(&client, conf->ip6_prefix);
}

const char *
sk_client_verdict_name(enum sk_client_verdict v)
{
	static const char *const names[SK_CLIENT_VERDICT_MAX] = {
		[SK_CLIENT_AGAIN] = "again",
		[SK_CLIENT_OK] = "ok",
		[SK_CLIENT_LOCAL] = "local",
		[SK_CLIENT_DIRECT] = "direct",
		[SK_CLIENT_UNTRUSTED] = "untrusted",
		[SK_CLIENT_MISSING] = "missing",
		[SK_CLIENT_BAD] = "bad",
	};

	return (unsigned)v < SK_CLIENT_VERDICT_MAX ? names[v] : "invalid";
}
