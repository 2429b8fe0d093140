/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_config_value.c - one strict parser per key type of the configuration
 * (numbers, booleans, addresses, CIDR, MAC, hex secrets, core lists,
 * paths, names, times) and sk_config_set_value(), which checks ranges and
 * stores the value where the key table says; then the public helpers on
 * loaded values (an item's window, the token secret file, a port's name).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"
#include "sk_config_priv.h"
#include "sk_parse.h"
#include "sk_text.h"

/* ------------------------------------------------------------------------ */
/* Value parsers                                                             */
/* ------------------------------------------------------------------------ */

/* parse_u64 - decimal digits only, no sign, no blanks (sk_parse.h's rule). */
static bool
parse_u64(const char *v, uint64_t *out)
{
	return sk_parse_u64(v, 0, UINT64_MAX, out);
}

static bool
parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"on", "true", "yes", "1"};
	static const char *const no[] = {"off", "false", "no", "0"};

	for (size_t i = 0; i < SK_ARRAY_SIZE(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

/* parse_ipv4 - dotted quad into host byte order. */
static bool
parse_ipv4(const char *v, uint32_t *out)
{
	struct in_addr a;

	if (inet_pton(AF_INET, v, &a) != 1)
		return false;
	*out = ntohl(a.s_addr);
	return true;
}

static bool
parse_mac(const char *v, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		if (!sk_hex_decode(v, 1, &mac[i], SK_HEX_ANY_CASE) || v[2] != (i == 5 ? '\0' : ':'))
			return false;
		v += 3;
	}
	return true;
}

static bool
parse_hex(const char *v, uint8_t *out, size_t len)
{
	return strlen(v) == 2 * len && sk_hex_decode(v, len, out, SK_HEX_ANY_CASE);
}

/* parse_corelist - "N", "N-M" items separated by ',', ids <= @max, N <= M. */
static bool
parse_corelist(const char *v, uint32_t max)
{
	char item[24];

	while (*v != '\0') {
		size_t n = strcspn(v, ",");
		char *dash;
		uint32_t a, b;

		if (n == 0 || n >= sizeof(item))
			return false;
		memcpy(item, v, n);
		item[n] = '\0';
		dash = strchr(item, '-');
		if (dash != NULL)
			*dash = '\0';
		if (!sk_parse_u32(item, 0, max, &a) ||
		    !sk_parse_u32(dash != NULL ? dash + 1 : item, a, max, &b))
			return false;
		v += n;
		if (*v == ',' && *++v == '\0')
			return false; /* trailing comma */
	}
	return true;
}

/*
 * parse_time - a TIME (sk_parse_time(): "+N[smhd]", "now", unix seconds,
 * "YYYY-MM-DDTHH:MM:SSZ", "never" when @never_ok) within the config's
 * bounds: relative up to SK_CONFIG_TIME_REL_MAX, absolute up to
 * SK_CONFIG_TIME_ABS_MAX.
 */
static bool
parse_time(const char *v, bool never_ok, struct sk_config_time *t)
{
	struct sk_time st;

	if (!sk_parse_time(v, never_ok ? SK_TIME_NEVER_OK : 0, &st))
		return false;
	memset(t, 0, sizeof(*t));
	switch (st.kind) {
	case SK_TIME_NEVER:
		t->never = true;
		return true;
	case SK_TIME_REL:
		t->relative = true;
		t->s = st.s;
		return st.s <= SK_CONFIG_TIME_REL_MAX;
	case SK_TIME_ABS:
		t->s = st.s;
		return st.s <= SK_CONFIG_TIME_ABS_MAX;
	}
	return false;
}

/*
 * set_cidr6 - "X:X::X/P" into @port: a global unicast IPv6 address (not
 * ::, ::1, multicast, link-local, IPv4-mapped), prefix 1..128, not the
 * all-zeros host part of its prefix (the subnet-router anycast address).
 */
static int
set_cidr6(struct load_ctx *ctx, const char *sec, const struct key *k, struct sk_config_port *port,
	  const char *v)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t zero[15];
	const char *slash = strchr(v, '/');
	char addr[INET6_ADDRSTRLEN];
	size_t n = slash ? (size_t)(slash - v) : 0;
	uint8_t a[16];
	uint64_t x = 0;
	bool host_zero = true;

	if (slash == NULL || n >= sizeof(addr))
		return sk_config_fail(ctx, ctx->line, "%s.%s: '%s' is not X:X::X/prefix", sec,
				      k->name, v);
	memcpy(addr, v, n);
	addr[n] = '\0';
	if (inet_pton(AF_INET6, addr, a) != 1 || !parse_u64(slash + 1, &x))
		return sk_config_fail(ctx, ctx->line, "%s.%s: '%s' is not X:X::X/prefix", sec,
				      k->name, v);
	if (x < k->min || x > k->max)
		return sk_config_fail(ctx, ctx->line,
				      "%s.%s: prefix /%" PRIu64 " is out of range 1..128", sec,
				      k->name, x);
	if (a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) ||
	    memcmp(a, mapped, sizeof(mapped)) == 0 ||
	    (memcmp(a, zero, sizeof(zero)) == 0 && a[15] <= 1))
		return sk_config_fail(ctx, ctx->line, "%s.%s: %s is not a global unicast address",
				      sec, k->name, addr);
	for (unsigned i = (unsigned)x; i < 128; i++)
		if (a[i / 8] & (0x80 >> (i % 8)))
			host_zero = false;
	if (x < 128 && host_zero)
		return sk_config_fail(ctx, ctx->line,
				      "%s.%s: %s is the subnet-router anycast address of /%" PRIu64,
				      sec, k->name, addr, x);
	memcpy(port->addr6, a, sizeof(a));
	port->prefix6 = (uint8_t)x;
	port->has_addr6 = true;
	return 1;
}

/* set_value - parse @v for key @k into @base; on error record it. */
/* set_choice - @v must be one of k->choices; stores its index. */
static int
set_choice(struct load_ctx *ctx, const char *sec, const struct key *k, uint8_t *p, const char *v)
{
	const char *const *choices = sk_config_choices[k->min];
	char list[96] = "";
	size_t n = 0;

	for (uint8_t i = 0; choices[i] != NULL; i++) {
		if (strcmp(v, choices[i]) == 0) {
			*p = i;
			return 1;
		}
		n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
				      i ? ", " : "", choices[i]);
	}
	return sk_config_fail(ctx, ctx->line, "%s.%s: '%s' is not one of %s", sec, k->name, v,
			      list);
}

/* set_prefixes - @v is a list of prefixes (sk_prefix_list_parse()). */
static int
set_prefixes(struct load_ctx *ctx, const char *sec, const struct key *k, struct sk_prefix_list *p,
	     const char *v)
{
	struct sk_prefix_list_error where;
	char why[128];

	if (sk_prefix_list_parse(v, p, &where) == SK_ADDR_OK)
		return 1;
	sk_prefix_list_strerror(v, &where, why, sizeof(why));
	return sk_config_fail(ctx, ctx->line, "%s.%s: %s", sec, k->name, why);
}

/* set_paths - @v is a list of paths separated by commas or blanks. */
static int
set_paths(struct load_ctx *ctx, const char *sec, const struct key *k, struct sk_config_paths *p,
	  const char *v)
{
	p->n = 0;
	for (const char *s = v; *s != '\0';) {
		size_t n;

		s += strspn(s, ", \t");
		n = strcspn(s, ", \t");
		if (n == 0)
			break;
		if (p->n == SK_CONFIG_TLS_CERTS)
			return sk_config_fail(ctx, ctx->line, "%s.%s: more than %d paths", sec,
					      k->name, SK_CONFIG_TLS_CERTS);
		if (n >= SK_CONFIG_PATH_MAX)
			return sk_config_fail(ctx, ctx->line,
					      "%s.%s: a path longer than %d characters", sec,
					      k->name, SK_CONFIG_PATH_MAX - 1);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				return sk_config_fail(ctx, ctx->line,
						      "%s.%s: control characters in a path", sec,
						      k->name);
		memcpy(p->path[p->n], s, n);
		p->path[p->n][n] = '\0';
		p->n++;
		s += n;
	}
	if (p->n == 0)
		return sk_config_fail(ctx, ctx->line, "%s.%s: no path", sec, k->name);
	return 1;
}

/* member_ok - a cluster member id: [a-z0-9_-], 1..32 characters (as
 * seckill-control's --cluster-member). */
static bool
member_ok(const char *v, size_t n)
{
	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '_' ||
		      v[i] == '-'))
			return false;
	return true;
}

/* set_word - KEY_WORD, KEY_MEMBER, KEY_MEMBERS: text without blanks. */
static int
set_word(struct load_ctx *ctx, const char *sec, const struct key *k, char *p, const char *v)
{
	size_t n = strlen(v), max = k->max != 0 ? k->max : SK_CONFIG_OPT_MAX - 1;

	if (n > max)
		return sk_config_fail(ctx, ctx->line, "%s.%s: longer than %zu characters", sec,
				      k->name, max);
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == ' ' || *c == '\t')
			return sk_config_fail(
				ctx, ctx->line,
				"%s.%s: blanks and control characters are not allowed", sec,
				k->name);
	if (k->type == KEY_MEMBER && !member_ok(v, n))
		return sk_config_fail(
			ctx, ctx->line,
			"%s.%s: '%s' is not a member id ([a-z0-9_-], 1..32 characters)", sec,
			k->name, v);
	if (k->type == KEY_MEMBERS) {
		for (const char *s = v;; s++) {
			size_t m = strcspn(s, ",");

			if (!member_ok(s, m))
				return sk_config_fail(ctx, ctx->line,
						      "%s.%s: '%.*s' is not a member id "
						      "([a-z0-9_-], 1..32 characters, separated by "
						      "commas)",
						      sec, k->name, (int)m, s);
			s += m;
			if (*s == '\0')
				break;
		}
	}
	memcpy(p, v, n + 1);
	return 1;
}

int
sk_config_set_value(struct load_ctx *ctx, const char *sec, const struct key *k, void *base,
		    const char *v)
{
	uint8_t *p = (uint8_t *)base + k->off;
	struct sk_config_port *port = base;
	uint64_t x = 0;
	uint32_t ip;

	if (v[0] == '\0')
		return sk_config_fail(ctx, ctx->line, "%s.%s: empty value", sec, k->name);

	switch (k->type) {
	case KEY_QUEUES:
		if (strcmp(v, "auto") == 0) {
			*(uint16_t *)p = 0;
			return 1;
		}
		/* fall through */
	case KEY_U16:
	case KEY_U32:
	case KEY_U32_POW2:
	case KEY_U32_POW2Z:
	case KEY_U64:
		if (!parse_u64(v, &x))
			return sk_config_fail(ctx, ctx->line,
					      "%s.%s: '%s' is not a decimal number%s", sec, k->name,
					      v, k->type == KEY_QUEUES ? " or 'auto'" : "");
		if (k->type == KEY_U32_POW2Z && x == 0) {
			*(uint32_t *)p = 0;
			return 1;
		}
		if (x < k->min || x > k->max)
			return sk_config_fail(
				ctx, ctx->line,
				"%s.%s: %" PRIu64 " is out of range %s%" PRIu64 "..%" PRIu64, sec,
				k->name, x, k->type == KEY_U32_POW2Z ? "0 or " : "", k->min,
				k->max);
		if ((k->type == KEY_U32_POW2 || k->type == KEY_U32_POW2Z) && !sk_is_pow2(x))
			return sk_config_fail(ctx, ctx->line,
					      "%s.%s: %" PRIu64 " is not a power of two", sec,
					      k->name, x);
		if (k->type == KEY_U64)
			memcpy(p, &x, sizeof(x));
		else if (k->type == KEY_U16 || k->type == KEY_QUEUES)
			*(uint16_t *)p = (uint16_t)x;
		else
			*(uint32_t *)p = (uint32_t)x;
		return 1;
	case KEY_PATH:
		if (strlen(v) >= SK_CONFIG_PATH_MAX)
			return sk_config_fail(ctx, ctx->line, "%s.%s: longer than %d characters",
					      sec, k->name, SK_CONFIG_PATH_MAX - 1);
		for (const char *c = v; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == ' ' || *c == '\t')
				return sk_config_fail(
					ctx, ctx->line,
					"%s.%s: blanks and control characters are not "
					"allowed in a path",
					sec, k->name);
		memcpy(p, v, strlen(v) + 1);
		return 1;
	case KEY_NAME:
		if (strlen(v) >= SK_CONFIG_NAME_MAX)
			return sk_config_fail(ctx, ctx->line, "%s.%s: longer than %d characters",
					      sec, k->name, SK_CONFIG_NAME_MAX - 1);
		for (const char *c = v; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
				return sk_config_fail(
					ctx, ctx->line,
					"%s.%s: control characters, '\"' and '\\' are not "
					"allowed in a name",
					sec, k->name);
		memcpy(p, v, strlen(v) + 1);
		return 1;
	case KEY_CHOICE:
		return set_choice(ctx, sec, k, (uint8_t *)p, v);
	case KEY_PREFIXES:
		return set_prefixes(ctx, sec, k, (struct sk_prefix_list *)p, v);
	case KEY_PATHS:
		return set_paths(ctx, sec, k, (struct sk_config_paths *)p, v);
	case KEY_WORD:
	case KEY_MEMBER:
	case KEY_MEMBERS:
		return set_word(ctx, sec, k, (char *)p, v);
	case KEY_ACK:
		if (strcmp(v, "queued") == 0) {
			*p = SK_CONFIG_ACK_QUEUED;
			return 1;
		}
		if (strcmp(v, "durable") == 0) {
			*p = SK_CONFIG_ACK_DURABLE;
			return 1;
		}
		return sk_config_fail(ctx, ctx->line, "%s.%s: '%s' is not queued or durable", sec,
				      k->name, v);
	case KEY_TIME:
		if (!parse_time(v, k->max != 0, (struct sk_config_time *)p))
			return sk_config_fail(
				ctx, ctx->line,
				"%s.%s: '%s' is not +SECONDS[smhd] (0..%" PRId64
				" s), unix seconds (1..%" PRId64 "), YYYY-MM-DDTHH:MM:SSZ%s",
				sec, k->name, v, SK_CONFIG_TIME_REL_MAX, SK_CONFIG_TIME_ABS_MAX,
				k->max != 0 ? " or never" : "");
		return 1;
	case KEY_BOOL:
		if (!parse_bool(v, (bool *)p))
			return sk_config_fail(ctx, ctx->line, "%s.%s: '%s' is not on/off", sec,
					      k->name, v);
		return 1;
	case KEY_DEVICE:
		if (strlen(v) >= SK_CONFIG_DEVICE_MAX)
			return sk_config_fail(ctx, ctx->line, "%s.%s: longer than %d characters",
					      sec, k->name, SK_CONFIG_DEVICE_MAX - 1);
		if (strpbrk(v, " \t\"'") != NULL || v[0] == ',')
			return sk_config_fail(
				ctx, ctx->line,
				"%s.%s: '%s' is not a device (PCI address or vdev spec)", sec,
				k->name, v);
		memcpy(p, v, strlen(v) + 1);
		return 1;
	case KEY_CIDR: {
		const char *slash = strchr(v, '/');
		char addr[INET_ADDRSTRLEN];
		size_t n = slash ? (size_t)(slash - v) : 0;

		if (slash == NULL || n >= sizeof(addr))
			return sk_config_fail(ctx, ctx->line, "%s.%s: '%s' is not A.B.C.D/prefix",
					      sec, k->name, v);
		memcpy(addr, v, n);
		addr[n] = '\0';
		if (!parse_ipv4(addr, &ip) || !parse_u64(slash + 1, &x))
			return sk_config_fail(ctx, ctx->line, "%s.%s: '%s' is not A.B.C.D/prefix",
					      sec, k->name, v);
		if (x < k->min || x > k->max)
			return sk_config_fail(ctx, ctx->line,
					      "%s.%s: prefix /%" PRIu64 " is out of range 1..32",
					      sec, k->name, x);
		if (ip == 0 || (ip >> 24) == 127 || (ip >> 28) >= 14)
			return sk_config_fail(ctx, ctx->line,
					      "%s.%s: %s is not a unicast host address", sec,
					      k->name, addr);
		if (x <= 30) {
			uint32_t host = ip & ~(UINT32_MAX << (32 - x));

			if (host == 0 || host == ~(UINT32_MAX << (32 - x)))
				return sk_config_fail(
					ctx, ctx->line,
					"%s.%s: %s is the network or broadcast address of "
					"/%" PRIu64,
					sec, k->name, addr, x);
		}
		port->addr = ip;
		port->prefix = (uint8_t)x;
		return 1;
	}
	case KEY_CIDR6:
		return set_cidr6(ctx, sec, k, port, v);
	case KEY_IPV4:
		if (!parse_ipv4(v, &ip) || ip == 0)
			return sk_config_fail(ctx, ctx->line, "%s.%s: '%s' is not an IPv4 address",
					      sec, k->name, v);
		*(uint32_t *)p = ip;
		return 1;
	case KEY_MAC:
		if (!parse_mac(v, port->mac))
			return sk_config_fail(ctx, ctx->line,
					      "%s.%s: '%s' is not a MAC (xx:xx:xx:xx:xx:xx)", sec,
					      k->name, v);
		if ((port->mac[0] & 1) != 0 || memcmp(port->mac, "\0\0\0\0\0\0", 6) == 0)
			return sk_config_fail(ctx, ctx->line, "%s.%s: %s is not a unicast MAC", sec,
					      k->name, v);
		port->has_mac = true;
		return 1;
	case KEY_CORELIST:
		if (!parse_corelist(v, k->max) || strlen(v) >= SK_CONFIG_LCORES_MAX)
			return sk_config_fail(
				ctx, ctx->line,
				"%s.%s: '%s' is not an lcore list like 1 or 1-3,6 (ids 0..%" PRIu64
				")",
				sec, k->name, v, k->max);
		memcpy(p, v, strlen(v) + 1);
		return 1;
	case KEY_SECRET:
		if (!parse_hex(v, p, SK_CONFIG_SECRET_LEN))
			return sk_config_fail(ctx, ctx->line, "%s.%s: expected %d hex digits", sec,
					      k->name, 2 * SK_CONFIG_SECRET_LEN);
		ctx->cfg->has_syncookie_secret = true;
		return 1;
	}
	return sk_config_fail(ctx, ctx->line, "%s.%s: internal error (key type)", sec, k->name);
}

/* ------------------------------------------------------------------------ */
/* Public helpers on loaded values                                           */
/* ------------------------------------------------------------------------ */

int
sk_config_item_window(const struct sk_config_item *item, int64_t base_ns, int64_t *start_ns,
		      int64_t *end_ns)
{
	const struct sk_config_time *a = &item->start, *b = &item->end;

	/* Both fit: |s| <= SK_CONFIG_TIME_ABS_MAX, so s * 1e9 < 2^63 - base_ns
	 * for any base before year 2255. */
	*start_ns = (a->relative ? base_ns : 0) + a->s * INT64_C(1000000000);
	*end_ns = b->never ? INT64_MAX : (b->relative ? base_ns : 0) + b->s * INT64_C(1000000000);
	return *end_ns > *start_ns ? 0 : -EINVAL;
}

int
sk_config_read_secret(const char *path, uint8_t buf[SK_CONFIG_TOKEN_SECRET_MAX], size_t *len,
		      char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	size_t n;
	int rc = 0;

	if (f == NULL) {
		rc = -errno;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "seckill.secret_file: %s: %s", path, strerror(errno));
		return rc;
	}
	n = fread(buf, 1, SK_CONFIG_TOKEN_SECRET_MAX, f);
	if (ferror(f)) {
		rc = -EIO;
	} else if (n == SK_CONFIG_TOKEN_SECRET_MAX && fgetc(f) != EOF) {
		rc = -EFBIG;
	}
	fclose(f);
	if (rc == 0 && n > 0 && buf[n - 1] == '\n') {
		n--;
		if (n > 0 && buf[n - 1] == '\r')
			n--;
	}
	if (rc == 0 && n < SK_CONFIG_TOKEN_SECRET_MIN)
		rc = -EINVAL;
	if (rc != 0) {
		memset(buf, 0, SK_CONFIG_TOKEN_SECRET_MAX);
		if (err != NULL && errlen > 0) {
			if (rc == -EINVAL)
				snprintf(err, errlen,
					 "seckill.secret_file: %s: %zu bytes, at least %d are "
					 "needed",
					 path, n, SK_CONFIG_TOKEN_SECRET_MIN);
			else if (rc == -EFBIG)
				snprintf(err, errlen,
					 "seckill.secret_file: %s: longer than %d bytes", path,
					 SK_CONFIG_TOKEN_SECRET_MAX);
			else
				snprintf(err, errlen, "seckill.secret_file: %s: read error", path);
		}
		return rc;
	}
	*len = n;
	return 0;
}

int
sk_config_port_name(const struct sk_config_port *port, char *out, size_t len)
{
	size_t n = strcspn(port->device, ",");

	if (n >= len)
		return -ENOSPC;
	memcpy(out, port->device, n);
	out[n] = '\0';
	return 0;
}
