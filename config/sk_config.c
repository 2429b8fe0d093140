/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_config.c - the INI configuration loader.
 *
 * libinih does the tokenising; a line reader in front of it counts lines,
 * strips comments and indentation (so an indented line is never glued to
 * the previous value, and '#' works inline too), refuses overlong lines and
 * checks section names. Keys are described by tables (name, type, offset,
 * range), one per kind of section, so adding a key is adding a row.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "sk_common.h"
#include "sk_config.h"

/* ------------------------------------------------------------------------ */
/* Key tables                                                                */
/* ------------------------------------------------------------------------ */

enum key_type {
	KEY_U16,       /* uint16_t, min..max */
	KEY_U32,       /* uint32_t, min..max */
	KEY_U32_POW2,  /* uint32_t power of two, min..max */
	KEY_BOOL,      /* bool: on/off, true/false, yes/no, 1/0 */
	KEY_QUEUES,    /* uint16_t: "auto" (0) or min..max */
	KEY_DEVICE,    /* char[SK_CONFIG_DEVICE_MAX], no blanks */
	KEY_CIDR,      /* port: addr + prefix, "A.B.C.D/P" */
	KEY_IPV4,      /* uint32_t host order, "A.B.C.D" */
	KEY_MAC,       /* port: has_mac + mac[6] */
	KEY_SECRET,    /* config: has_syncookie_secret + 32 bytes in hex */
	KEY_CORELIST,  /* char[SK_CONFIG_LCORES_MAX]: "1", "0-3", "1,3-5", ids min..max */
	KEY_U64,       /* uint64_t, min..max */
	KEY_U32_POW2Z, /* uint32_t: 0, or a power of two in min..max */
	KEY_PATH,      /* char[SK_CONFIG_PATH_MAX], no blanks or control characters */
	KEY_NAME,      /* char[SK_CONFIG_NAME_MAX], printable, no '"' or '\\' (JSON-safe) */
	KEY_ACK,       /* uint8_t enum sk_config_ack: "queued" or "durable" */
	KEY_TIME,      /* struct sk_config_time: "+N", unix seconds; "never" if max != 0 */
};

struct key {
	const char *name;
	enum key_type type;
	size_t off; /* into struct sk_config, struct sk_config_port or struct sk_config_item */
	uint64_t min, max;
};

#define CFG(field)  offsetof(struct sk_config, field)
#define PORT(field) offsetof(struct sk_config_port, field)
#define ITEM(field) offsetof(struct sk_config_item, field)

static const struct key dataplane_keys[] = {
	{"lcores", KEY_CORELIST, CFG(lcores), 0, 1023},
	{"mbufs", KEY_U32, CFG(mbufs), 255, 1u << 26},
	{"mbuf_cache", KEY_U32, CFG(mbuf_cache), 0, 512},
	{"burst", KEY_U16, CFG(burst), 1, 256},
	{"dispatch_ring", KEY_U32_POW2, CFG(dispatch_ring), 64, 1u << 20},
	{"idle_sleep_us", KEY_U32, CFG(idle_sleep_us), 0, 100000},
	{"idle_after_us", KEY_U32, CFG(idle_after_us), 0, 10000000},
};

static const struct key port_keys[] = {
	{"device", KEY_DEVICE, PORT(device), 0, 0},
	{"address", KEY_CIDR, PORT(addr), 1, 32},
	{"gateway", KEY_IPV4, PORT(gateway), 0, 0},
	{"mac", KEY_MAC, PORT(mac), 0, 0},
	{"rx_queues", KEY_QUEUES, PORT(rx_queues), 1, 128},
	{"rx_desc", KEY_U16, PORT(rx_desc), 64, 16384},
	{"tx_desc", KEY_U16, PORT(tx_desc), 64, 16384},
	{"rss", KEY_BOOL, PORT(rss), 0, 0},
	{"checksum_offload", KEY_BOOL, PORT(csum_offload), 0, 0},
};

static const struct key tcp_keys[] = {
	{"port", KEY_U16, CFG(tcp_port), 1, 65535},
	{"max_conns", KEY_U32, CFG(max_conns), 16, 1u << 24},
	{"mss", KEY_U16, CFG(mss), 536, 9000},
	{"rcv_buf_size", KEY_U32, CFG(rcv_buf_size), 1024, 65535},
	{"snd_buf_size", KEY_U32, CFG(snd_buf_size), 1024, 1u << 20},
	{"rto_initial_ms", KEY_U32, CFG(rto_initial_ms), 1, 60000},
	{"rto_min_ms", KEY_U32, CFG(rto_min_ms), 1, 60000},
	{"rto_max_ms", KEY_U32, CFG(rto_max_ms), 1, 600000},
	{"max_retries", KEY_U32, CFG(max_retries), 1, 64},
	{"idle_timeout_ms", KEY_U32, CFG(idle_timeout_ms), 100, 86400000},
	{"time_wait_ms", KEY_U32, CFG(time_wait_ms), 1, 240000},
	{"time_wait_max", KEY_U32, CFG(time_wait_max), 1, 1u << 24},
	{"syncookie_secret", KEY_SECRET, CFG(syncookie_secret), 0, 0},
};

static const struct key http_keys[] = {
	{"head_max", KEY_U32, CFG(head_max), 64, 65535},
	{"target_max", KEY_U32, CFG(target_max), 1, 65535},
	{"body_max", KEY_U32, CFG(body_max), 0, 1u << 30},
	{"fields_max", KEY_U32, CFG(fields_max), 1, 1024},
};

/* Rates and bursts: 0 = off; at most SK_RL_BURST_MAX (sk_ratelimit.h). */
#define RATE_MAX 1000000000u

static const struct key seckill_keys[] = {
	{"auth", KEY_BOOL, CFG(auth), 0, 0},
	{"secret_file", KEY_PATH, CFG(secret_file), 0, 0},
	{"token_skew_s", KEY_U32, CFG(token_skew_s), 0, 86400},
	{"max_items", KEY_U32, CFG(max_items), 1, 65536},
	{"dedup_slots", KEY_U64, CFG(dedup_slots), 1024, UINT64_C(1) << 31},
	{"status_bits", KEY_U32, CFG(status_bits), 10, 26},
	{"order_ring", KEY_U32_POW2, CFG(order_ring), 64, 1u << 24},
	{"ack", KEY_ACK, CFG(ack), 0, 0},
	{"ack_wait_ms", KEY_U32, CFG(ack_wait_ms), 1, 60000},
	{"store", KEY_PATH, CFG(store), 0, 0},
	{"global_rate", KEY_U64, CFG(global_rate), 0, RATE_MAX},
	{"global_burst", KEY_U64, CFG(global_burst), 0, RATE_MAX},
	{"item_rate", KEY_U64, CFG(item_rate), 0, RATE_MAX},
	{"item_burst", KEY_U64, CFG(item_burst), 0, RATE_MAX},
	{"ip_rate", KEY_U64, CFG(ip_rate), 0, RATE_MAX},
	{"ip_burst", KEY_U64, CFG(ip_burst), 0, RATE_MAX},
	{"ip_slots", KEY_U32_POW2Z, CFG(ip_slots), 4, 1u << 26},
};

static const struct key item_keys[] = {
	{"name", KEY_NAME, ITEM(name), 0, 0},
	{"total", KEY_U64, ITEM(total), 0, UINT64_C(1) << 48}, /* SK_STOCK_MAX_UNITS */
	{"price", KEY_U64, ITEM(price), 0, UINT64_C(1) << 53}, /* exact in any JSON reader */
	{"per_user_limit", KEY_U32, ITEM(per_user_limit), 1, 1000000},
	{"start", KEY_TIME, ITEM(start), 0, 0},
	{"end", KEY_TIME, ITEM(end), 0, 1},
	{"batch_max", KEY_U32, ITEM(batch_max), 0, 1u << 24},
	{"dedup_slots", KEY_U64, ITEM(dedup_slots), 0, UINT64_C(1) << 31},
};

/* Every table must fit the 64-bit "already set" masks below. */
_Static_assert(SK_ARRAY_SIZE(tcp_keys) <= 64, "too many keys for a seen mask");
_Static_assert(SK_ARRAY_SIZE(seckill_keys) <= 64, "too many keys for a seen mask");

enum section_id {
	SEC_DATAPLANE,
	SEC_TCP,
	SEC_HTTP,
	SEC_SECKILL,
	SEC_PORT0,
	SEC_ITEM = SEC_PORT0 + SK_CONFIG_MAX_PORTS, /* every [item.<id>]: see cur_item */
	SEC_MAX
};

struct section {
	const char *name;
	const struct key *keys;
	size_t nkeys;
};

static const struct section sections[] = {
	[SEC_DATAPLANE] = {"dataplane", dataplane_keys, SK_ARRAY_SIZE(dataplane_keys)},
	[SEC_TCP] = {"tcp", tcp_keys, SK_ARRAY_SIZE(tcp_keys)},
	[SEC_HTTP] = {"http", http_keys, SK_ARRAY_SIZE(http_keys)},
	[SEC_SECKILL] = {"seckill", seckill_keys, SK_ARRAY_SIZE(seckill_keys)},
};

#define ITEM_PREFIX "item."

/* ------------------------------------------------------------------------ */
/* Load context                                                              */
/* ------------------------------------------------------------------------ */

/* Longest accepted line, comments included. */
#define LINE_MAX_LEN 512

struct load_ctx {
	struct sk_config *cfg;
	FILE *f;
	const char *path;
	int line;				 /* lines handed to libinih so far */
	bool failed;				 /* an error is recorded below */
	int err_line;				 /* its line; 0: about the whole file */
	int err_code;				 /* its negative errno */
	char msg[SK_CONFIG_ERR_MAX];		 /* "section.key: what is wrong" */
	uint64_t seen[SEC_MAX];			 /* keys already set, per section (not SEC_ITEM) */
	uint64_t item_seen[SK_CONFIG_MAX_ITEMS]; /* keys already set, per item */
	int item_line[SK_CONFIG_MAX_ITEMS];	 /* line of each [item.<id>] */
	int cur_item;				 /* index of the [item.<id>] being read, or -1 */
	char buf[LINE_MAX_LEN + 2];
};

static int ctx_fail(struct load_ctx *ctx, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ctx_fail - record the first error (later ones are consequences); returns 0,
 * which is also what a failing libinih handler returns. */
static int
ctx_fail(struct load_ctx *ctx, int line, const char *fmt, ...)
{
	va_list ap;

	if (ctx->failed)
		return 0;
	ctx->failed = true;
	ctx->err_line = line;
	ctx->err_code = -EINVAL;
	va_start(ap, fmt);
	vsnprintf(ctx->msg, sizeof(ctx->msg), fmt, ap);
	va_end(ap);
	return 0;
}

/* section_lookup - id of section @name, or -1 if unknown. Every
 * "item.<anything>" is SEC_ITEM; its id is checked by parse_item_id(). */
static int
section_lookup(const char *name)
{
	for (int i = 0; i < (int)SK_ARRAY_SIZE(sections); i++)
		if (sections[i].name != NULL && strcmp(name, sections[i].name) == 0)
			return i;
	if (strncmp(name, "port", 4) == 0 && name[4] >= '0' &&
	    name[4] < '0' + SK_CONFIG_MAX_PORTS && name[5] == '\0')
		return SEC_PORT0 + (name[4] - '0');
	if (strncmp(name, ITEM_PREFIX, sizeof(ITEM_PREFIX) - 1) == 0)
		return SEC_ITEM;
	return -1;
}

static const struct key *
section_keys(int id, size_t *n)
{
	if (id == SEC_ITEM) {
		*n = SK_ARRAY_SIZE(item_keys);
		return item_keys;
	}
	if (id >= SEC_PORT0) {
		*n = SK_ARRAY_SIZE(port_keys);
		return port_keys;
	}
	*n = sections[id].nkeys;
	return sections[id].keys;
}

/* ------------------------------------------------------------------------ */
/* Line reader: comments, indentation, long lines, section names             */
/* ------------------------------------------------------------------------ */

/* strip_line - cut comments and surrounding blanks of @s in place. A '#' or
 * ';' starts a comment at the start of the line or after a blank. */
static char *
strip_line(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	for (char *p = s; *p; p++) {
		if ((*p == '#' || *p == ';') && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
		*--end = '\0';
	return s;
}

/* parse_item_id - the id of "item.<id>": strict decimal 1..2^32-1. */
static bool
parse_item_id(const char *name, uint32_t *id)
{
	const char *d = name + sizeof(ITEM_PREFIX) - 1;
	uint64_t v = 0;
	size_t n = strlen(d);

	if (n == 0 || n > 10 || d[0] == '0')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (d[i] < '0' || d[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(d[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*id = (uint32_t)v;
	return true;
}

/* open_item - a "[item.<id>]" line: a new item with its defaults, made
 * current for the keys that follow. Each id may appear once. */
static bool
open_item(struct load_ctx *ctx, const char *name)
{
	struct sk_config *cfg = ctx->cfg;
	struct sk_config_item *it;
	uint32_t id;

	if (!parse_item_id(name, &id)) {
		ctx_fail(ctx, ctx->line, "[%s]: the item id must be a decimal 1..%" PRIu32, name,
			 UINT32_MAX);
		return false;
	}
	for (uint32_t i = 0; i < cfg->nb_items; i++) {
		if (cfg->items[i].id == id) {
			ctx_fail(ctx, ctx->line,
				 "[%s]: item %" PRIu32 " already defined at line %d", name, id,
				 ctx->item_line[i]);
			return false;
		}
	}
	if (cfg->nb_items == SK_CONFIG_MAX_ITEMS) {
		ctx_fail(ctx, ctx->line, "[%s]: more than %d items", name, SK_CONFIG_MAX_ITEMS);
		return false;
	}
	ctx->cur_item = (int)cfg->nb_items;
	ctx->item_line[cfg->nb_items] = ctx->line;
	it = &cfg->items[cfg->nb_items++];
	memset(it, 0, sizeof(*it));
	it->id = id;
	it->per_user_limit = 1;
	it->start.relative = true; /* "+0" */
	it->end.never = true;
	return true;
}

/* check_section_line - @s starts with '['; refuse unknown sections here,
 * where the line number is known and even an empty section is seen. */
static bool
check_section_line(struct load_ctx *ctx, const char *s)
{
	const char *close = strchr(s, ']');
	char name[64];
	size_t n;
	int id;

	if (close == NULL || close[1] != '\0') {
		ctx_fail(ctx, ctx->line, "expected '[section]'");
		return false;
	}
	n = (size_t)(close - s - 1);
	if (n >= sizeof(name)) {
		ctx_fail(ctx, ctx->line, "section name too long");
		return false;
	}
	memcpy(name, s + 1, n);
	name[n] = '\0';
	id = section_lookup(name);
	if (id < 0) {
		ctx_fail(ctx, ctx->line,
			 "unknown section [%s] (known: dataplane, port0..port%d, tcp, http, "
			 "seckill, "
			 "item.<id>)",
			 name, SK_CONFIG_MAX_PORTS - 1);
		return false;
	}
	ctx->cur_item = -1;
	if (id == SEC_ITEM)
		return open_item(ctx, name);
	return true;
}

/* reader - libinih's fgets(): one cleaned line per call, or NULL to stop
 * (end of file, or an error recorded in ctx). */
static char *
reader(char *str, int num, void *stream)
{
	struct load_ctx *ctx = stream;
	char *s;
	size_t n;

	if (ctx->failed || fgets(ctx->buf, sizeof(ctx->buf), ctx->f) == NULL)
		return NULL;
	ctx->line++;
	n = strlen(ctx->buf);
	if (n > LINE_MAX_LEN && ctx->buf[n - 1] != '\n') {
		ctx_fail(ctx, ctx->line, "line longer than %d characters", LINE_MAX_LEN);
		return NULL;
	}
	s = strip_line(ctx->buf);
	if (s[0] == '[' && !check_section_line(ctx, s))
		return NULL;
	n = strlen(s);
	if (num < 3 || n + 2 > (size_t)num) {
		ctx_fail(ctx, ctx->line, "line too long for the INI parser");
		return NULL;
	}
	memcpy(str, s, n);
	str[n] = '\n';
	str[n + 1] = '\0';
	return str;
}

/* ------------------------------------------------------------------------ */
/* Value parsers                                                             */
/* ------------------------------------------------------------------------ */

/* parse_u64 - decimal digits only, no sign, no blanks. */
static bool
parse_u64(const char *v, uint64_t *out)
{
	char *end;

	if (v[0] < '0' || v[0] > '9')
		return false;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = x;
	return true;
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

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool
parse_mac(const char *v, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		int hi = hexval(v[0]), lo = hi < 0 ? -1 : hexval(v[1]);

		if (lo < 0 || v[2] != (i == 5 ? '\0' : ':'))
			return false;
		mac[i] = (uint8_t)(hi << 4 | lo);
		v += 3;
	}
	return true;
}

static bool
parse_hex(const char *v, uint8_t *out, size_t len)
{
	if (strlen(v) != 2 * len)
		return false;
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/* parse_corelist - "N", "N-M" items separated by ',', ids <= @max, N <= M. */
static bool
parse_corelist(const char *v, uint32_t max)
{
	for (;;) {
		char *end;
		unsigned long a, b;

		if (*v < '0' || *v > '9')
			return false;
		a = strtoul(v, &end, 10);
		b = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return false;
			b = strtoul(end + 1, &end, 10);
		}
		if (a > max || b > max || a > b)
			return false;
		if (*end == '\0')
			return true;
		if (*end != ',')
			return false;
		v = end + 1;
	}
}

/* parse_time - "+N" (relative), unix seconds, or "never" when @never_ok. */
static bool
parse_time(const char *v, bool never_ok, struct sk_config_time *t)
{
	uint64_t x;

	memset(t, 0, sizeof(*t));
	if (never_ok && strcmp(v, "never") == 0) {
		t->never = true;
		return true;
	}
	if (v[0] == '+') {
		if (!parse_u64(v + 1, &x) || x > (uint64_t)SK_CONFIG_TIME_REL_MAX)
			return false;
		t->relative = true;
	} else if (!parse_u64(v, &x) || x == 0 || x > (uint64_t)SK_CONFIG_TIME_ABS_MAX) {
		return false;
	}
	t->s = (int64_t)x;
	return true;
}

/* set_value - parse @v for key @k into @base; on error record it. */
static int
set_value(struct load_ctx *ctx, const char *sec, const struct key *k, void *base, const char *v)
{
	uint8_t *p = (uint8_t *)base + k->off;
	struct sk_config_port *port = base;
	uint64_t x = 0;
	uint32_t ip;

	if (v[0] == '\0')
		return ctx_fail(ctx, ctx->line, "%s.%s: empty value", sec, k->name);

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
			return ctx_fail(ctx, ctx->line, "%s.%s: '%s' is not a decimal number%s",
					sec, k->name, v, k->type == KEY_QUEUES ? " or 'auto'" : "");
		if (k->type == KEY_U32_POW2Z && x == 0) {
			*(uint32_t *)p = 0;
			return 1;
		}
		if (x < k->min || x > k->max)
			return ctx_fail(ctx, ctx->line,
					"%s.%s: %" PRIu64 " is out of range %s%" PRIu64
					"..%" PRIu64,
					sec, k->name, x, k->type == KEY_U32_POW2Z ? "0 or " : "",
					k->min, k->max);
		if ((k->type == KEY_U32_POW2 || k->type == KEY_U32_POW2Z) && !sk_is_pow2(x))
			return ctx_fail(ctx, ctx->line, "%s.%s: %" PRIu64 " is not a power of two",
					sec, k->name, x);
		if (k->type == KEY_U64)
			memcpy(p, &x, sizeof(x));
		else if (k->type == KEY_U16 || k->type == KEY_QUEUES)
			*(uint16_t *)p = (uint16_t)x;
		else
			*(uint32_t *)p = (uint32_t)x;
		return 1;
	case KEY_PATH:
		if (strlen(v) >= SK_CONFIG_PATH_MAX)
			return ctx_fail(ctx, ctx->line, "%s.%s: longer than %d characters", sec,
					k->name, SK_CONFIG_PATH_MAX - 1);
		for (const char *c = v; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == ' ' || *c == '\t')
				return ctx_fail(ctx, ctx->line,
						"%s.%s: blanks and control characters are not "
						"allowed in a path",
						sec, k->name);
		memcpy(p, v, strlen(v) + 1);
		return 1;
	case KEY_NAME:
		if (strlen(v) >= SK_CONFIG_NAME_MAX)
			return ctx_fail(ctx, ctx->line, "%s.%s: longer than %d characters", sec,
					k->name, SK_CONFIG_NAME_MAX - 1);
		for (const char *c = v; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
				return ctx_fail(ctx, ctx->line,
						"%s.%s: control characters, '\"' and '\\' are not "
						"allowed in a name",
						sec, k->name);
		memcpy(p, v, strlen(v) + 1);
		return 1;
	case KEY_ACK:
		if (strcmp(v, "queued") == 0) {
			*p = SK_CONFIG_ACK_QUEUED;
			return 1;
		}
		if (strcmp(v, "durable") == 0) {
			*p = SK_CONFIG_ACK_DURABLE;
			return 1;
		}
		return ctx_fail(ctx, ctx->line, "%s.%s: '%s' is not queued or durable", sec,
				k->name, v);
	case KEY_TIME:
		if (!parse_time(v, k->max != 0, (struct sk_config_time *)p))
			return ctx_fail(ctx, ctx->line,
					"%s.%s: '%s' is not +SECONDS (0..%" PRId64
					"), unix seconds (1..%" PRId64 ")%s",
					sec, k->name, v, SK_CONFIG_TIME_REL_MAX,
					SK_CONFIG_TIME_ABS_MAX, k->max != 0 ? " or never" : "");
		return 1;
	case KEY_BOOL:
		if (!parse_bool(v, (bool *)p))
			return ctx_fail(ctx, ctx->line, "%s.%s: '%s' is not on/off", sec, k->name,
					v);
		return 1;
	case KEY_DEVICE:
		if (strlen(v) >= SK_CONFIG_DEVICE_MAX)
			return ctx_fail(ctx, ctx->line, "%s.%s: longer than %d characters", sec,
					k->name, SK_CONFIG_DEVICE_MAX - 1);
		if (strpbrk(v, " \t\"'") != NULL || v[0] == ',')
			return ctx_fail(ctx, ctx->line,
					"%s.%s: '%s' is not a device (PCI address or vdev spec)",
					sec, k->name, v);
		memcpy(p, v, strlen(v) + 1);
		return 1;
	case KEY_CIDR: {
		const char *slash = strchr(v, '/');
		char addr[INET_ADDRSTRLEN];
		size_t n = slash ? (size_t)(slash - v) : 0;

		if (slash == NULL || n >= sizeof(addr))
			return ctx_fail(ctx, ctx->line, "%s.%s: '%s' is not A.B.C.D/prefix", sec,
					k->name, v);
		memcpy(addr, v, n);
		addr[n] = '\0';
		if (!parse_ipv4(addr, &ip) || !parse_u64(slash + 1, &x))
			return ctx_fail(ctx, ctx->line, "%s.%s: '%s' is not A.B.C.D/prefix", sec,
					k->name, v);
		if (x < k->min || x > k->max)
			return ctx_fail(ctx, ctx->line,
					"%s.%s: prefix /%" PRIu64 " is out of range 1..32", sec,
					k->name, x);
		if (ip == 0 || (ip >> 24) == 127 || (ip >> 28) >= 14)
			return ctx_fail(ctx, ctx->line, "%s.%s: %s is not a unicast host address",
					sec, k->name, addr);
		if (x <= 30) {
			uint32_t host = ip & ~(UINT32_MAX << (32 - x));

			if (host == 0 || host == ~(UINT32_MAX << (32 - x)))
				return ctx_fail(ctx, ctx->line,
						"%s.%s: %s is the network or broadcast address of "
						"/%" PRIu64,
						sec, k->name, addr, x);
		}
		port->addr = ip;
		port->prefix = (uint8_t)x;
		return 1;
	}
	case KEY_IPV4:
		if (!parse_ipv4(v, &ip) || ip == 0)
			return ctx_fail(ctx, ctx->line, "%s.%s: '%s' is not an IPv4 address", sec,
					k->name, v);
		*(uint32_t *)p = ip;
		return 1;
	case KEY_MAC:
		if (!parse_mac(v, port->mac))
			return ctx_fail(ctx, ctx->line,
					"%s.%s: '%s' is not a MAC (xx:xx:xx:xx:xx:xx)", sec,
					k->name, v);
		if ((port->mac[0] & 1) != 0 || memcmp(port->mac, "\0\0\0\0\0\0", 6) == 0)
			return ctx_fail(ctx, ctx->line, "%s.%s: %s is not a unicast MAC", sec,
					k->name, v);
		port->has_mac = true;
		return 1;
	case KEY_CORELIST:
		if (!parse_corelist(v, k->max) || strlen(v) >= SK_CONFIG_LCORES_MAX)
			return ctx_fail(
				ctx, ctx->line,
				"%s.%s: '%s' is not an lcore list like 1 or 1-3,6 (ids 0..%" PRIu64
				")",
				sec, k->name, v, k->max);
		memcpy(p, v, strlen(v) + 1);
		return 1;
	case KEY_SECRET:
		if (!parse_hex(v, p, SK_CONFIG_SECRET_LEN))
			return ctx_fail(ctx, ctx->line, "%s.%s: expected %d hex digits", sec,
					k->name, 2 * SK_CONFIG_SECRET_LEN);
		ctx->cfg->has_syncookie_secret = true;
		return 1;
	}
	return ctx_fail(ctx, ctx->line, "%s.%s: internal error (key type)", sec, k->name);
}

/* handler - libinih callback: one key = value. Returns 1 to go on, 0 on error. */
static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *ctx = user;
	const struct key *keys;
	size_t nkeys;
	int id;

	if (ctx->failed)
		return 0;
	if (section[0] == '\0')
		return ctx_fail(ctx, ctx->line, "%s: key outside any [section]", name);
	id = section_lookup(section);
	if (id < 0)
		return ctx_fail(ctx, ctx->line, "unknown section [%s]", section);
	keys = section_keys(id, &nkeys);
	for (size_t i = 0; i < nkeys; i++) {
		uint64_t *seen = &ctx->seen[id];
		void *base = ctx->cfg;

		if (strcmp(name, keys[i].name) != 0)
			continue;
		if (id == SEC_ITEM) {
			/* check_section_line() opened it; it failed otherwise */
			SK_ASSERT(ctx->cur_item >= 0);
			seen = &ctx->item_seen[ctx->cur_item];
			base = &ctx->cfg->items[ctx->cur_item];
		} else if (id >= SEC_PORT0) {
			base = &ctx->cfg->ports[id - SEC_PORT0];
		}
		if (*seen & (UINT64_C(1) << i))
			return ctx_fail(ctx, ctx->line, "%s.%s: set twice", section, name);
		*seen |= UINT64_C(1) << i;
		return set_value(ctx, section, &keys[i], base, value);
	}
	return ctx_fail(ctx, ctx->line, "%s.%s: unknown key", section, name);
}

/* ------------------------------------------------------------------------ */
/* Whole-file checks                                                         */
/* ------------------------------------------------------------------------ */

static bool
port_key_seen(const struct load_ctx *ctx, int port, const char *key)
{
	for (size_t i = 0; i < SK_ARRAY_SIZE(port_keys); i++)
		if (strcmp(port_keys[i].name, key) == 0)
			return ctx->seen[SEC_PORT0 + port] & (UINT64_C(1) << i);
	return false;
}

static bool
item_key_seen(const struct load_ctx *ctx, int item, const char *key)
{
	for (size_t i = 0; i < SK_ARRAY_SIZE(item_keys); i++)
		if (strcmp(item_keys[i].name, key) == 0)
			return ctx->item_seen[item] & (UINT64_C(1) << i);
	return false;
}

static bool
seckill_key_seen(const struct load_ctx *ctx, const char *key)
{
	for (size_t i = 0; i < SK_ARRAY_SIZE(seckill_keys); i++)
		if (strcmp(seckill_keys[i].name, key) == 0)
			return ctx->seen[SEC_SECKILL] & (UINT64_C(1) << i);
	return false;
}

/* check_seckill - [seckill] and [item.<id>] rules that involve several keys. */
static int
check_seckill(struct load_ctx *ctx)
{
	struct sk_config *cfg = ctx->cfg;

	/* ack left out: durable when the control plane's store is named (the
	 * control plane is then part of the deployment), queued otherwise. */
	if (!seckill_key_seen(ctx, "ack"))
		cfg->ack = cfg->store[0] != '\0' ? SK_CONFIG_ACK_DURABLE : SK_CONFIG_ACK_QUEUED;
	/* Without items no buy reaches the token check: a file that only sets
	 * up the network (sandbox.ini) needs no secret. A store brings items
	 * of its own (activities added through the admin API). */
	if (cfg->auth && cfg->secret_file[0] == '\0' &&
	    (cfg->nb_items > 0 || cfg->store[0] != '\0'))
		return ctx_fail(ctx, 0,
				"seckill.secret_file: required when seckill.auth = on and items "
				"are configured or come from seckill.store");
	if (cfg->ip_rate != 0 && cfg->ip_slots == 0)
		return ctx_fail(ctx, 0,
				"seckill.ip_slots: 0 leaves no room for the per-IP limit that "
				"seckill.ip_rate sets");
	if (cfg->nb_items > cfg->max_items)
		return ctx_fail(ctx, 0,
				"seckill.max_items: %" PRIu32 " is less than the %" PRIu32
				" [item.<id>] sections",
				cfg->max_items, cfg->nb_items);
	for (uint32_t i = 0; i < cfg->nb_items; i++) {
		const struct sk_config_item *it = &cfg->items[i];
		const struct sk_config_time *a = &it->start, *b = &it->end;

		if (!item_key_seen(ctx, (int)i, "total"))
			return ctx_fail(ctx, ctx->item_line[i], "item.%" PRIu32 ".total: required",
					it->id);
		if (!b->never && a->relative == b->relative && b->s <= a->s)
			return ctx_fail(ctx, ctx->item_line[i],
					"item.%" PRIu32 ".end: must be after item.%" PRIu32
					".start",
					it->id, it->id);
		if (it->dedup_slots != 0 && it->dedup_slots < 1024)
			return ctx_fail(ctx, ctx->item_line[i],
					"item.%" PRIu32 ".dedup_slots: %" PRIu64
					" is below the minimum slice of 1024 (0 = automatic)",
					it->id, it->dedup_slots);
		if (it->dedup_slots > cfg->dedup_slots)
			return ctx_fail(ctx, ctx->item_line[i],
					"item.%" PRIu32 ".dedup_slots: %" PRIu64
					" is more than seckill.dedup_slots (%" PRIu64 ")",
					it->id, it->dedup_slots, cfg->dedup_slots);
	}
	return 1;
}

/* check_whole - rules that involve several keys; errors name the file only. */
static int
check_whole(struct load_ctx *ctx)
{
	struct sk_config *cfg = ctx->cfg;
	int nports = 0;

	for (int i = 0; i < SK_CONFIG_MAX_PORTS; i++) {
		if (ctx->seen[SEC_PORT0 + i] == 0)
			continue;
		if (i != nports)
			return ctx_fail(ctx, 0,
					"port%d: ports must be numbered from port0 without gaps",
					i);
		nports++;
	}
	if (nports == 0)
		return ctx_fail(ctx, 0, "port0.device: no port configured");
	cfg->nb_ports = (uint16_t)nports;

	for (int i = 0; i < nports; i++) {
		struct sk_config_port *p = &cfg->ports[i];

		if (!port_key_seen(ctx, i, "device"))
			return ctx_fail(ctx, 0, "port%d.device: required", i);
		if (!port_key_seen(ctx, i, "address"))
			return ctx_fail(ctx, 0, "port%d.address: required", i);
		if (p->gateway != 0) {
			uint32_t mask = p->prefix == 32 ? UINT32_MAX : ~(UINT32_MAX >> p->prefix);

			if ((p->gateway & mask) != (p->addr & mask) || p->gateway == p->addr)
				return ctx_fail(
					ctx, 0,
					"port%d.gateway: not a neighbour inside port%d.address", i,
					i);
		}
		for (int j = 0; j < i; j++) {
			char a[64], b[64];

			if (sk_config_port_name(p, a, sizeof(a)) == 0 &&
			    sk_config_port_name(&cfg->ports[j], b, sizeof(b)) == 0 &&
			    strcmp(a, b) == 0)
				return ctx_fail(ctx, 0, "port%d.device: same device as port%d", i,
						j);
			if (p->addr == cfg->ports[j].addr)
				return ctx_fail(ctx, 0, "port%d.address: same address as port%d", i,
						j);
		}
	}
	/* rte_mempool_create() refuses a cache above n / 1.5. */
	if ((uint64_t)cfg->mbuf_cache * 3 > (uint64_t)cfg->mbufs * 2)
		return ctx_fail(ctx, 0,
				"dataplane.mbuf_cache: %" PRIu32
				" is more than dataplane.mbufs / 1.5",
				cfg->mbuf_cache);
	if (cfg->rto_min_ms != 0 && cfg->rto_max_ms != 0 && cfg->rto_min_ms > cfg->rto_max_ms)
		return ctx_fail(ctx, 0, "tcp.rto_min_ms: above tcp.rto_max_ms");
	if (cfg->target_max != 0 && cfg->head_max != 0 && cfg->target_max + 16 > cfg->head_max)
		return ctx_fail(ctx, 0, "http.target_max: must be at most http.head_max - 16");
	return check_seckill(ctx);
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

void
sk_config_defaults(struct sk_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mbufs = 16383;
	cfg->mbuf_cache = 256;
	cfg->burst = 32;
	cfg->dispatch_ring = 4096;
	cfg->idle_sleep_us = 0;
	cfg->idle_after_us = 1000;
	cfg->auth = true;
	cfg->ack = SK_CONFIG_ACK_QUEUED; /* durable when a store is named, see check_seckill() */
	cfg->ack_wait_ms = 500;
	cfg->token_skew_s = 5;
	cfg->max_items = 64;
	cfg->dedup_slots = 4194304;
	cfg->status_bits = 22;
	cfg->order_ring = 65536;
	cfg->ip_slots = 16384;
	for (int i = 0; i < SK_CONFIG_MAX_PORTS; i++) {
		cfg->ports[i].rx_desc = 1024;
		cfg->ports[i].tx_desc = 1024;
		cfg->ports[i].rss = true;
		cfg->ports[i].csum_offload = true;
	}
}

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

int
sk_config_load(struct sk_config *cfg, const char *path, char *err, size_t errlen)
{
	struct load_ctx *ctx;
	int rc, ret = 0;

	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	sk_config_defaults(cfg);
	ctx->cfg = cfg;
	ctx->path = path;
	ctx->cur_item = -1;
	ctx->f = fopen(path, "r");
	if (ctx->f == NULL) {
		ret = -errno;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}

	rc = ini_parse_stream(reader, ctx, handler, ctx);
	if (!ctx->failed && rc > 0)
		ctx_fail(ctx, rc, "expected 'key = value' or '[section]'");
	else if (!ctx->failed && rc == -2)
		ctx->err_code = -ENOMEM;
	else if (!ctx->failed && ferror(ctx->f))
		ctx_fail(ctx, ctx->line, "read error");
	if (!ctx->failed && ctx->err_code == 0)
		check_whole(ctx);

	if (ctx->err_code != 0) {
		ret = ctx->err_code;
		if (err == NULL || errlen == 0)
			goto out;
		if (ret == -ENOMEM)
			snprintf(err, errlen, "%s: out of memory", path);
		else if (ctx->err_line > 0)
			snprintf(err, errlen, "%s:%d: %s", path, ctx->err_line, ctx->msg);
		else
			snprintf(err, errlen, "%s: %s", path, ctx->msg);
	}
out:
	if (ctx->f != NULL)
		fclose(ctx->f);
	free(ctx);
	return ret;
}
