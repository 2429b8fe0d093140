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
#include "sk_config_priv.h"
#include "sk_text.h"

/* ------------------------------------------------------------------------ */
/* Key tables                                                                */
/* ------------------------------------------------------------------------ */

/* The dataplane's rows leave uses, ctl and mw out: 0 and NULL, its own. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

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
	{"address6", KEY_CIDR6, PORT(addr6), 1, 128},
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
	{"idle_new_ms", KEY_U32, CFG(idle_new_ms), 100, 86400000},
	{"max_conns_per_ip", KEY_U32, CFG(max_conns_per_ip), 0, 1u << 24},
	{"ip6_prefix", KEY_U32, CFG(ip6_prefix), 32, 64},
	{"time_wait_ms", KEY_U32, CFG(time_wait_ms), 1, 240000},
	{"time_wait_max", KEY_U32, CFG(time_wait_max), 1, 1u << 24},
	{"challenge_ack_per_s", KEY_U32, CFG(challenge_ack_per_s), 1, 1000000},
	{"challenge_ack_conn_ms", KEY_U32, CFG(challenge_ack_conn_ms), 0, 3600000},
	{"syncookie_secret", KEY_SECRET, CFG(syncookie_secret), 0, 0},
};

static const struct key http_keys[] = {
	{"head_max", KEY_U32, CFG(head_max), 64, 65535},
	{"target_max", KEY_U32, CFG(target_max), 1, 65535},
	{"body_max", KEY_U32, CFG(body_max), 0, 1u << 30},
	{"fields_max", KEY_U32, CFG(fields_max), 1, 1024},
	{"head_timeout_ms", KEY_U32, CFG(head_timeout_ms), 0, 3600000},
	{"body_timeout_ms", KEY_U32, CFG(body_timeout_ms), 0, 3600000},
};

/* Rates and bursts: 0 = off; at most SK_RL_BURST_MAX (sk_ratelimit.h). */
#define RATE_MAX 1000000000u

static const struct key seckill_keys[] = {
	{"auth", KEY_BOOL, CFG(auth), 0, 0},
	{"secret_file", KEY_PATH, CFG(secret_file), 0, 0},
	{"token_skew_s", KEY_U32, CFG(token_skew_s), 0, 86400},
	{"max_items", KEY_U32, CFG(max_items), 1, 65536},
	{"dedup_slots", KEY_U64, CFG(dedup_slots), 1024, UINT64_C(1) << 31},
	{"status_bits", KEY_U32, CFG(status_bits), 10, 23}, /* SK_ORDER_SEQ_BITS */
	{"order_ring", KEY_U32_POW2, CFG(order_ring), 64, 1u << 24},
	{"ack", KEY_ACK, CFG(ack), 0, 0},
	{"ack_wait_ms", KEY_U32, CFG(ack_wait_ms), 1, 60000},
	{"sse_max", KEY_U32, CFG(sse_max), 0, 1u << 24},
	{"sse_per_user", KEY_U32, CFG(sse_per_user), 1, 1024},
	/* the deprecated alias of [store] path: the same field, read by all */
	{"store", KEY_PATH, CFG(store), 0, 0, USES_DP | USES_CTL | USES_MW, NULL, NULL},
	{"global_rate", KEY_U64, CFG(global_rate), 0, RATE_MAX},
	{"global_burst", KEY_U64, CFG(global_burst), 0, RATE_MAX},
	{"item_rate", KEY_U64, CFG(item_rate), 0, RATE_MAX},
	{"item_burst", KEY_U64, CFG(item_burst), 0, RATE_MAX},
	{"ip_rate", KEY_U64, CFG(ip_rate), 0, RATE_MAX},
	{"ip_burst", KEY_U64, CFG(ip_burst), 0, RATE_MAX},
	{"ip_slots", KEY_U32_POW2Z, CFG(ip_slots), 4, 1u << 26},
	{"user_rate", KEY_U64, CFG(user_rate), 0, RATE_MAX},
	{"user_burst", KEY_U64, CFG(user_burst), 0, RATE_MAX},
	{"user_slots", KEY_U32_POW2Z, CFG(user_slots), 4, 1u << 26},
	{"deny_max", KEY_U32, CFG(deny_max), 0, 1u << 22}, /* SK_DENY_CAP_MAX */
	{"reserve_mb", KEY_U32, CFG(reserve_mb), 0, 1u << 16},
};

/*
 * The other daemons' keys. Each row: the key, its type and range (the same
 * as the daemon's option: its --help), where its text is kept, the daemons
 * that read it, and its long option in seckill-control, then in
 * seckill-mysql-writer (NULL: not that daemon's). Adding an option to the
 * file is adding a row here and a field to struct sk_config_opts.
 */
#define CTL   USES_CTL
#define MW    USES_MW
#define S_MAX (INT64_MAX / 1000000000) /* seconds that fit int64 ns */

/* [cluster]: the member number is in every order id (sk_order.h); the
 * rest is seckill-control's cluster member (docs/cluster.md). */
static const struct key cluster_keys[] = {
	{"member_id", KEY_U32, CFG(member_id), 0, 31}, /* SK_ORDER_MEMBER_MAX */
	{"redis", KEY_WORD, OPT(cluster_redis), 0, 0, CTL, "redis", NULL},
	{"redis_user", KEY_WORD, OPT(cluster_redis_user), 0, 0, CTL, "redis-user", NULL},
	{"redis_password_file", KEY_PATH, OPT(cluster_redis_password_file), 0, 0, CTL,
	 "redis-password-file", NULL},
	{"member", KEY_MEMBER, OPT(cluster_member), 0, 0, CTL, "cluster-member", NULL},
	{"members", KEY_MEMBERS, OPT(cluster_members), 0, 0, CTL, "cluster-members", NULL},
	{"idle_ms", KEY_U64, OPT(cluster_idle_ms), 100, UINT64_C(1) << 40, CTL, "cluster-idle-ms",
	 NULL},
};

/* [store]: the LMDB order store, shared (path: every daemon). */
static const struct key store_keys[] = {
	{"path", KEY_PATH, CFG(store), 0, 0, USES_DP | CTL | MW, "store", "store"},
	{"map_mb", KEY_U64, OPT(store_map_mb), 1, UINT64_C(1) << 24, CTL, "store-map-mb", NULL},
	{"nosync", KEY_BOOL, OPT(store_nosync), 0, 0, CTL, "store-nosync", NULL},
	{"batch_us", KEY_U32, OPT(store_batch_us), 0, 1000000, CTL, "batch-us", NULL},
	{"batch_max", KEY_U32, OPT(store_batch_max), 8, 1u << 24, CTL, "batch-max", NULL},
	{"map_grow_at", KEY_U32, OPT(store_map_grow_at), 1, 99, CTL, "map-grow-at", NULL},
	{"map_grow_step_mb", KEY_U64, OPT(store_map_grow_step_mb), 0, UINT64_C(1) << 24, CTL,
	 "map-grow-step-mb", NULL},
	{"map_max_mb", KEY_U64, OPT(store_map_max_mb), 0, UINT64_C(1) << 24, CTL, "map-max-mb",
	 NULL},
};

/* [control]: seckill-control's orders and payments. */
static const struct key control_keys[] = {
	{"payment_timeout_s", KEY_U64, OPT(ctl_payment_timeout_s), 0, S_MAX, CTL, "payment-timeout",
	 NULL},
	{"payments_key_file", KEY_PATH, OPT(ctl_payments_key_file), 0, 0, CTL, "payments-key-file",
	 NULL},
	{"payment_requests_max_age_s", KEY_U64, OPT(ctl_payment_requests_age_s), 1, S_MAX, CTL,
	 "payment-requests-max-age", NULL},
	{"log_level", KEY_CHOICE, OPT(ctl_log_level), CHOICE_LOG_LEVEL, 0, CTL, "log-level", NULL},
};

/* [admin]: seckill-control's admin API. */
static const struct key admin_keys[] = {
	{"socket", KEY_PATH, OPT(admin_socket), 0, 0, CTL, "admin-socket", NULL},
	{"port", KEY_U32, OPT(admin_port), 0, 65535, CTL, "admin-port", NULL},
	{"token_file", KEY_PATH, OPT(admin_token_file), 0, 0, CTL, "admin-token-file", NULL},
};

/* [kafka]: shared by the exporter and payments consumer (seckill-control)
 * and seckill-mysql-writer. Topic and group names: Kafka's 249. */
static const struct key kafka_keys[] = {
	{"bootstrap", KEY_WORD, OPT(kafka_bootstrap), 0, 0, CTL | MW, "kafka", "bootstrap"},
	{"config_file", KEY_PATH, OPT(kafka_config_file), 0, 0, CTL | MW, "kafka-config",
	 "kafka-config"},
	{"orders_topic", KEY_WORD, OPT(kafka_orders_topic), 0, 249, CTL | MW, "kafka-orders-topic",
	 "orders-topic"},
	{"events_topic", KEY_WORD, OPT(kafka_events_topic), 0, 249, CTL | MW, "kafka-events-topic",
	 "events-topic"},
	{"payments_topic", KEY_WORD, OPT(kafka_payments_topic), 0, 249, CTL, "kafka-payments-topic",
	 NULL},
	{"payments_group", KEY_WORD, OPT(kafka_payments_group), 0, 249, CTL, "kafka-payments-group",
	 NULL},
	{"payments_retention_s", KEY_U64, OPT(kafka_payments_retention_s), 1, S_MAX, CTL,
	 "kafka-payments-retention", NULL},
};

/* [retention]: seckill-control's archive policy (docs/control.md, "Retention"). */
static const struct key retention_keys[] = {
	{"keep_days", KEY_U32, OPT(retention_keep_days), 0, 36500, CTL, "retention-keep-days",
	 NULL},
};

/* [mysql]: seckill-mysql-writer's MariaDB, consumer group and run loop. */
static const struct key mysql_keys[] = {
	{"socket", KEY_PATH, OPT(mysql_socket), 0, 0, MW, NULL, "socket"},
	{"host", KEY_WORD, OPT(mysql_host), 0, 0, MW, NULL, "host"},
	{"port", KEY_U32, OPT(mysql_port), 1, 65535, MW, NULL, "port"},
	{"user", KEY_WORD, OPT(mysql_user), 0, 0, MW, NULL, "user"},
	{"password_file", KEY_PATH, OPT(mysql_password_file), 0, 0, MW, NULL, "password-file"},
	{"database", KEY_WORD, OPT(mysql_database), 0, 64, MW, NULL, "database"},
	{"group", KEY_WORD, OPT(mysql_group), 0, 249, MW, NULL, "group"},
	{"batch", KEY_U32, OPT(mysql_batch), 1, 100000, MW, NULL, "batch"},
	{"metrics_port", KEY_U32, OPT(mysql_metrics_port), 0, 65535, MW, NULL, "metrics-port"},
	{"default_limit", KEY_U32, OPT(mysql_default_limit), 1, UINT32_MAX, MW, NULL,
	 "default-limit"},
	{"park_final_s", KEY_U32, OPT(mysql_park_final_s), 0, 86400 * 365, MW, NULL,
	 "park-final-seconds"},
	{"log_level", KEY_CHOICE, OPT(mysql_log_level), CHOICE_LOG_LEVEL, 0, MW, NULL, "log-level"},
};

#undef CTL
#undef MW

static const struct key item_keys[] = {
	{"name", KEY_NAME, ITEM(name), 0, 0},
	{"total", KEY_U64, ITEM(total), 0, UINT64_C(1) << 48}, /* SK_STOCK_MAX_UNITS */
	{"price", KEY_U64, ITEM(price), 0, UINT64_C(1) << 53}, /* exact in any JSON reader */
	{"per_user_limit", KEY_U32, ITEM(per_user_limit), 1, 1000000},
	{"start", KEY_TIME, ITEM(start), 0, 0},
	{"end", KEY_TIME, ITEM(end), 0, 1},
	{"batch_max", KEY_U32, ITEM(batch_max), 0, 1u << 24},
	{"dedup_slots", KEY_U64, ITEM(dedup_slots), 0, UINT64_C(1) << 31},
	{"gate", KEY_BOOL, ITEM(gate), 0, 0},
};

/* [proxy]: who the client is behind a load balancer or a CDN. */
static const char *const proxy_protocols[] = {"none", "v1", "v2", NULL};
static const char *const forwarded_kinds[] = {"none", "xff", "forwarded", NULL};

/* [tls]: the plain port's job, the lowest version (index 0: 1.2). */
static const char *const plain_modes[] = {"serve", "redirect", "off", NULL};
static const char *const tls_versions[] = {"1.2", "1.3", NULL};
/* --log-level of every daemon (sk_logfmt.h's levels). */
static const char *const log_levels[] = {"debug", "info", "notice", "warn", "error", "crit", NULL};

const char *const *const sk_config_choices[CHOICE_MAX] = {
	[CHOICE_PROXY] = proxy_protocols, [CHOICE_FORWARDED] = forwarded_kinds,
	[CHOICE_PLAIN] = plain_modes,	  [CHOICE_TLS_VERSION] = tls_versions,
	[CHOICE_LOG_LEVEL] = log_levels,
};

static const struct key proxy_keys[] = {
	{"protocol", KEY_CHOICE, CFG(proxy_protocol), CHOICE_PROXY, 0},
	{"forwarded", KEY_CHOICE, CFG(forwarded), CHOICE_FORWARDED, 0},
	{"trusted", KEY_PREFIXES, CFG(trusted), 0, 0},
};

/* [tls]: HTTPS (docs/tls.md); the files are checked by the dataplane. */
static const struct key tls_keys[] = {
	{"port", KEY_U16, CFG(tls_port), 1, 65535},
	{"cert", KEY_PATHS, CFG(tls_cert), 0, 0},
	{"key", KEY_PATHS, CFG(tls_key), 0, 0},
	{"ticket_key_file", KEY_PATH, CFG(tls_ticket_key_file), 0, 0},
	{"ticket_rotate_s", KEY_U32, CFG(tls_ticket_rotate_s), 60, 604800},
	{"min_version", KEY_CHOICE, CFG(tls_min_version), CHOICE_TLS_VERSION, 0},
	{"ciphersuites", KEY_PATH, CFG(tls_ciphersuites), 0, 0},
	{"handshake_timeout_ms", KEY_U32, CFG(tls_handshake_timeout_ms), 100, 600000},
	{"max_handshakes", KEY_U32, CFG(tls_max_handshakes), 1, 1u << 20},
	{"buffers", KEY_U32, CFG(tls_buffers), 1, 1u << 20},
	{"plain", KEY_CHOICE, CFG(tls_plain), CHOICE_PLAIN, 0},
};

#pragma GCC diagnostic pop

/* Every table must fit the 64-bit "already set" masks below. */
_Static_assert(SK_ARRAY_SIZE(tcp_keys) <= 64, "too many keys for a seen mask");
_Static_assert(SK_ARRAY_SIZE(seckill_keys) <= 64, "too many keys for a seen mask");
_Static_assert(SK_ARRAY_SIZE(mysql_keys) <= 64, "too many keys for a seen mask");

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
	[SEC_CLUSTER] = {"cluster", cluster_keys, SK_ARRAY_SIZE(cluster_keys)},
	[SEC_PROXY] = {"proxy", proxy_keys, SK_ARRAY_SIZE(proxy_keys)},
	[SEC_TLS] = {"tls", tls_keys, SK_ARRAY_SIZE(tls_keys)},
	[SEC_STORE] = {"store", store_keys, SK_ARRAY_SIZE(store_keys)},
	[SEC_CONTROL] = {"control", control_keys, SK_ARRAY_SIZE(control_keys)},
	[SEC_ADMIN] = {"admin", admin_keys, SK_ARRAY_SIZE(admin_keys)},
	[SEC_KAFKA] = {"kafka", kafka_keys, SK_ARRAY_SIZE(kafka_keys)},
	[SEC_MYSQL] = {"mysql", mysql_keys, SK_ARRAY_SIZE(mysql_keys)},
	[SEC_RETENTION] = {"retention", retention_keys, SK_ARRAY_SIZE(retention_keys)},
};

#define ITEM_PREFIX "item."

int
sk_config_fail(struct load_ctx *ctx, int line, const char *fmt, ...)
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
	if (strncmp(name, "port", 4) == 0 && name[4] >= '0' && name[4] <= '9') {
		/* port0 .. port15: decimal, no leading zero */
		int n = name[4] - '0';

		if (name[5] >= '0' && name[5] <= '9' && name[4] != '0' && name[6] == '\0')
			n = n * 10 + (name[5] - '0');
		else if (name[5] != '\0')
			return -1;
		return n < SK_CONFIG_MAX_PORTS ? SEC_PORT0 + n : -1;
	}
	if (strncmp(name, ITEM_PREFIX, sizeof(ITEM_PREFIX) - 1) == 0)
		return SEC_ITEM;
	return -1;
}

const char *
sk_config_section_name(int id)
{
	return id >= 0 && id < (int)SK_ARRAY_SIZE(sections) ? sections[id].name : NULL;
}

const struct key *
sk_config_section_keys(int id, size_t *n)
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
	while (*s == ' ' || *s == '\t')
		s++;
	for (char *p = s; *p; p++) {
		if ((*p == '#' || *p == ';') && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
	return sk_trim(s);
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
		sk_config_fail(ctx, ctx->line, "[%s]: the item id must be a decimal 1..%" PRIu32,
			       name, UINT32_MAX);
		return false;
	}
	for (uint32_t i = 0; i < cfg->nb_items; i++) {
		if (cfg->items[i].id == id) {
			sk_config_fail(ctx, ctx->line,
				       "[%s]: item %" PRIu32 " already defined at line %d", name,
				       id, ctx->item_line[i]);
			return false;
		}
	}
	if (cfg->nb_items == SK_CONFIG_MAX_ITEMS) {
		sk_config_fail(ctx, ctx->line, "[%s]: more than %d items", name,
			       SK_CONFIG_MAX_ITEMS);
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
		sk_config_fail(ctx, ctx->line, "expected '[section]'");
		return false;
	}
	n = (size_t)(close - s - 1);
	if (n >= sizeof(name)) {
		sk_config_fail(ctx, ctx->line, "section name too long");
		return false;
	}
	memcpy(name, s + 1, n);
	name[n] = '\0';
	id = section_lookup(name);
	if (id < 0) {
		sk_config_fail(ctx, ctx->line,
			       "unknown section [%s] (known: dataplane, port0..port%d, tcp, http, "
			       "seckill, proxy, tls, cluster, item.<id>, store, control, admin, "
			       "kafka, mysql, retention)",
			       name, SK_CONFIG_MAX_PORTS - 1);
		return false;
	}
	ctx->cur_item = -1;
	if (id == SEC_ITEM && (ctx->daemons & SK_CONFIG_DATAPLANE) != 0)
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
		sk_config_fail(ctx, ctx->line, "line longer than %d characters", LINE_MAX_LEN);
		return NULL;
	}
	s = strip_line(ctx->buf);
	if (s[0] == '[' && !check_section_line(ctx, s))
		return NULL;
	n = strlen(s);
	if (num < 3 || n + 2 > (size_t)num) {
		sk_config_fail(ctx, ctx->line, "line too long for the INI parser");
		return NULL;
	}
	memcpy(str, s, n);
	str[n] = '\n';
	str[n + 1] = '\0';
	return str;
}

/* set_text - a key handed to a daemon as an option: its value is checked as
 * its type says, then kept as written. */
static int
set_text(struct load_ctx *ctx, const char *sec, const struct key *k, const char *v)
{
	union {
		uint64_t align;
		char text[SK_CONFIG_OPT_MAX];
	} scratch;
	struct key t = *k;
	size_t n = strlen(v);

	if (n >= SK_CONFIG_OPT_MAX)
		return sk_config_fail(ctx, ctx->line, "%s.%s: longer than %d characters", sec,
				      k->name, SK_CONFIG_OPT_MAX - 1);
	t.off = 0;
	if (!sk_config_set_value(ctx, sec, &t, &scratch, v))
		return 0;
	memcpy((char *)ctx->cfg + k->off, v, n + 1);
	return 1;
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
		return sk_config_fail(ctx, ctx->line, "%s: key outside any [section]", name);
	id = section_lookup(section);
	if (id < 0)
		return sk_config_fail(ctx, ctx->line, "unknown section [%s]", section);
	keys = sk_config_section_keys(id, &nkeys);
	for (size_t i = 0; i < nkeys; i++) {
		uint64_t *seen = &ctx->seen[id];
		void *base = ctx->cfg;

		if (strcmp(name, keys[i].name) != 0)
			continue;
		/* the dataplane's items: not opened for the other daemons */
		if (id == SEC_ITEM && (ctx->daemons & SK_CONFIG_DATAPLANE) == 0)
			return 1;
		if (id == SEC_ITEM) {
			/* check_section_line() opened it; it failed otherwise */
			SK_ASSERT(ctx->cur_item >= 0);
			seen = &ctx->item_seen[ctx->cur_item];
			base = &ctx->cfg->items[ctx->cur_item];
		} else if (id >= SEC_PORT0) {
			base = &ctx->cfg->ports[id - SEC_PORT0];
		}
		if (*seen & (UINT64_C(1) << i))
			return sk_config_fail(ctx, ctx->line, "%s.%s: set twice", section, name);
		*seen |= UINT64_C(1) << i;
		/* another daemon's key: its name is known, its value not ours */
		if ((sk_config_key_uses(&keys[i]) & ctx->daemons) == 0)
			return 1;
		if (keys[i].ctl != NULL || keys[i].mw != NULL)
			return set_text(ctx, section, &keys[i], value);
		return sk_config_set_value(ctx, section, &keys[i], base, value);
	}
	return sk_config_fail(ctx, ctx->line, "%s.%s: unknown key", section, name);
}

bool
sk_config_key_seen(const struct load_ctx *ctx, int sec, int index, const char *key)
{
	const struct key *keys;
	uint64_t seen;
	size_t n;

	if (sec == SEC_ITEM) {
		seen = ctx->item_seen[index];
	} else if (sec == SEC_PORT0) {
		sec += index;
		seen = ctx->seen[sec];
	} else {
		seen = ctx->seen[sec];
	}
	keys = sk_config_section_keys(sec, &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(keys[i].name, key) == 0)
			return seen & (UINT64_C(1) << i);
	return false;
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
	cfg->max_conns_per_ip = 1024; /* 0 is a value here: no cap */
	cfg->ip6_prefix = 64;
	/* 0 is a value here too: no per-connection limit */
	cfg->challenge_ack_conn_ms = 500;
	cfg->head_timeout_ms = 10000; /* 0 is a value here: no deadline */
	cfg->body_timeout_ms = 10000;
	cfg->auth = true;
	cfg->ack = SK_CONFIG_ACK_QUEUED; /* durable when a store is named, see check_seckill() */
	cfg->ack_wait_ms = 500;
	cfg->sse_max = 1024; /* 0 is a value here: no order events streams */
	cfg->sse_per_user = 4;
	cfg->token_skew_s = 5;
	cfg->max_items = 64;
	cfg->dedup_slots = 4194304;
	cfg->status_bits = 22;
	cfg->order_ring = 65536;
	cfg->ip_slots = 16384;
	cfg->user_rate = 10; /* attempts/s of one user on one item, per lcore */
	cfg->user_burst = 20;
	cfg->user_slots = 65536;
	cfg->deny_max = 65536;
	cfg->reserve_mb = 64;
	cfg->tls_port = 443;
	cfg->tls_ticket_rotate_s = 3600;
	cfg->tls_handshake_timeout_ms = 10000;
	cfg->tls_max_handshakes = 1024;
	cfg->tls_buffers = 1024;
	for (int i = 0; i < SK_CONFIG_MAX_PORTS; i++) {
		cfg->ports[i].rx_desc = 1024;
		cfg->ports[i].tx_desc = 1024;
		cfg->ports[i].rss = true;
		cfg->ports[i].csum_offload = true;
	}
}

int
sk_config_load(struct sk_config *cfg, const char *path, char *err, size_t errlen)
{
	return sk_config_load_for(cfg, path, SK_CONFIG_DATAPLANE, err, errlen);
}

int
sk_config_load_for(struct sk_config *cfg, const char *path, unsigned daemons, char *err,
		   size_t errlen)
{
	struct load_ctx *ctx;
	int rc, ret = 0;

	if ((daemons & SK_CONFIG_ALL) == 0) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: no daemon to read it for", path);
		return -EINVAL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	sk_config_defaults(cfg);
	ctx->cfg = cfg;
	ctx->daemons = daemons & SK_CONFIG_ALL;
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
		sk_config_fail(ctx, rc, "expected 'key = value' or '[section]'");
	else if (!ctx->failed && rc == -2)
		ctx->err_code = -ENOMEM;
	else if (!ctx->failed && ferror(ctx->f))
		sk_config_fail(ctx, ctx->line, "read error");
	if (!ctx->failed && ctx->err_code == 0)
		sk_config_check(ctx);

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
