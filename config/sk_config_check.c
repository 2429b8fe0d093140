/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_config_check.c - the configuration rules that involve several keys,
 * checked once the whole file is read (ports numbered without gaps, a
 * gateway inside its subnet, the HTTP limits against the TCP buffers, the
 * token secret when items are sold, items against the arena).
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

/* check_seckill - [seckill] and [item.<id>] rules that involve several keys. */
static int
check_seckill(struct load_ctx *ctx)
{
	struct sk_config *cfg = ctx->cfg;

	/* ack left out: durable when the control plane's store is named (the
	 * control plane is then part of the deployment), queued otherwise. */
	if (!sk_config_key_seen(ctx, SEC_SECKILL, 0, "ack"))
		cfg->ack = cfg->store[0] != '\0' ? SK_CONFIG_ACK_DURABLE : SK_CONFIG_ACK_QUEUED;
	/* Without items no buy reaches the token check: a file that only sets
	 * up the network (sandbox.ini) needs no secret. A store brings items
	 * of its own (activities added through the admin API). */
	if (cfg->auth && cfg->secret_file[0] == '\0' &&
	    (cfg->nb_items > 0 || cfg->store[0] != '\0'))
		return sk_config_fail(
			ctx, 0,
			"seckill.secret_file: required when seckill.auth = on and items "
			"are configured or come from store.path");
	if ((cfg->proxy_protocol != SK_CONFIG_PROXY_NONE || cfg->forwarded != SK_CONFIG_FWD_NONE) &&
	    cfg->trusted.n == 0)
		return sk_config_fail(
			ctx, 0,
			"proxy.trusted: required when proxy.protocol or "
			"proxy.forwarded is set (the proxies whose word is believed)");
	if (cfg->ip_rate != 0 && cfg->ip_slots == 0)
		return sk_config_fail(
			ctx, 0,
			"seckill.ip_slots: 0 leaves no room for the per-IP limit that "
			"seckill.ip_rate sets");
	if (cfg->user_rate != 0 && cfg->user_slots == 0)
		return sk_config_fail(
			ctx, 0,
			"seckill.user_slots: 0 leaves no room for the per-user limit that "
			"seckill.user_rate sets");
	if (cfg->nb_items > cfg->max_items)
		return sk_config_fail(ctx, 0,
				      "seckill.max_items: %" PRIu32 " is less than the %" PRIu32
				      " [item.<id>] sections",
				      cfg->max_items, cfg->nb_items);
	for (uint32_t i = 0; i < cfg->nb_items; i++) {
		const struct sk_config_item *it = &cfg->items[i];
		const struct sk_config_time *a = &it->start, *b = &it->end;

		if (!sk_config_key_seen(ctx, SEC_ITEM, (int)i, "total"))
			return sk_config_fail(ctx, ctx->item_line[i],
					      "item.%" PRIu32 ".total: required", it->id);
		if (!b->never && a->relative == b->relative && b->s <= a->s)
			return sk_config_fail(ctx, ctx->item_line[i],
					      "item.%" PRIu32 ".end: must be after item.%" PRIu32
					      ".start",
					      it->id, it->id);
		if (it->dedup_slots != 0 && it->dedup_slots < 1024)
			return sk_config_fail(ctx, ctx->item_line[i],
					      "item.%" PRIu32 ".dedup_slots: %" PRIu64
					      " is below the minimum slice of 1024 (0 = automatic)",
					      it->id, it->dedup_slots);
		if (it->dedup_slots > cfg->dedup_slots)
			return sk_config_fail(ctx, ctx->item_line[i],
					      "item.%" PRIu32 ".dedup_slots: %" PRIu64
					      " is more than seckill.dedup_slots (%" PRIu64 ")",
					      it->id, it->dedup_slots, cfg->dedup_slots);
	}
	return 1;
}

/* check_tls - [tls]: on when any of its keys is set; cert and key pair up. */
static int
check_tls(struct load_ctx *ctx)
{
	struct sk_config *cfg = ctx->cfg;

	cfg->tls = ctx->seen[SEC_TLS] != 0;
	if (!cfg->tls)
		return 1;
	if (cfg->tls_cert.n == 0)
		return sk_config_fail(ctx, 0, "tls.cert: required in a [tls] section");
	if (cfg->tls_key.n != cfg->tls_cert.n)
		return sk_config_fail(ctx, 0,
				      "tls.key: %" PRIu32 " keys for %" PRIu32
				      " certificates in tls.cert (one key each, same order)",
				      cfg->tls_key.n, cfg->tls_cert.n);
	if (cfg->tls_port == (cfg->tcp_port != 0 ? cfg->tcp_port : 80) &&
	    cfg->tls_plain != SK_CONFIG_PLAIN_OFF)
		return sk_config_fail(ctx, 0,
				      "tls.port: %u is tcp.port too (set tls.plain = off to "
				      "serve HTTPS only there)",
				      cfg->tls_port);
	return 1;
}

/* check_store - [store] path, or its deprecated alias [seckill] store (the
 * same field): one of them. */
static int
check_store(struct load_ctx *ctx)
{
	bool alias = sk_config_key_seen(ctx, SEC_SECKILL, 0, "store");

	if (alias && sk_config_key_seen(ctx, SEC_STORE, 0, "path"))
		return sk_config_fail(ctx, 0,
				      "seckill.store: a deprecated alias of store.path, which is "
				      "set too: keep store.path alone");
	ctx->cfg->store_alias = alias;
	return 1;
}

/* member_position - the position (from 1) of @member in the comma list
 * @members; 0 if absent. */
static uint32_t
member_position(const char *member, const char *members)
{
	size_t n = strlen(member);
	uint32_t pos = 1;

	for (const char *s = members;; pos++) {
		size_t m = strcspn(s, ",");

		if (m == n && strncmp(s, member, n) == 0)
			return pos;
		if (s[m] == '\0')
			return 0;
		s += m + 1;
	}
}

/* check_member_id - with both daemons' keys at hand: the dataplane's
 * member number is the control plane's position in the member list (the
 * control plane refuses to attach otherwise). */
static int
check_member_id(struct load_ctx *ctx)
{
	const struct sk_config_opts *o = &ctx->cfg->opts;
	uint32_t pos;

	if (o->cluster_member[0] == '\0' || o->cluster_members[0] == '\0')
		return 1;
	pos = member_position(o->cluster_member, o->cluster_members);
	if (pos == 0)
		return sk_config_fail(ctx, 0, "cluster.members: does not name cluster.member '%s'",
				      o->cluster_member);
	if (ctx->cfg->member_id != pos)
		return sk_config_fail(ctx, 0,
				      "cluster.member_id: %" PRIu32 ", but cluster.member '%s' is "
				      "number %" PRIu32 " of cluster.members (from 1)",
				      ctx->cfg->member_id, o->cluster_member, pos);
	return 1;
}

/* check_control - seckill-control's rules between the file's own keys; the
 * daemon checks them again once its flags are read (control_opts.c). */
static int
check_control(struct load_ctx *ctx)
{
	const struct sk_config_opts *o = &ctx->cfg->opts;
	bool redis = o->cluster_redis[0] != '\0', member = o->cluster_member[0] != '\0';

	if (o->admin_port[0] != '\0' && strcmp(o->admin_port, "0") != 0 &&
	    o->admin_token_file[0] == '\0')
		return sk_config_fail(ctx, 0,
				      "admin.token_file: required when admin.port is set (the "
				      "bearer token of the TCP listener)");
	if (redis != member || redis != (o->cluster_members[0] != '\0'))
		return sk_config_fail(ctx, 0,
				      "cluster.redis: a cluster member needs cluster.redis, "
				      "cluster.member and cluster.members together");
	if (o->cluster_redis_user[0] != '\0' && o->cluster_redis_password_file[0] == '\0')
		return sk_config_fail(
			ctx, 0, "cluster.redis_password_file: required with cluster.redis_user");
	if (o->kafka_bootstrap[0] != '\0' && o->ctl_payments_key_file[0] == '\0')
		return sk_config_fail(ctx, 0,
				      "control.payments_key_file: required with kafka.bootstrap "
				      "(seckill-control consumes the signed payments topic)");
	if (o->kafka_bootstrap[0] == '\0' && o->ctl_payments_key_file[0] != '\0')
		return sk_config_fail(ctx, 0, "control.payments_key_file: needs kafka.bootstrap");
	if (o->kafka_config_file[0] != '\0' && o->kafka_bootstrap[0] == '\0')
		return sk_config_fail(ctx, 0, "kafka.config_file: needs kafka.bootstrap");
	return 1;
}

int
sk_config_check(struct load_ctx *ctx)
{
	struct sk_config *cfg = ctx->cfg;
	int nports = 0;

	if (!check_store(ctx))
		return 0;
	if ((ctx->daemons & SK_CONFIG_CONTROL) != 0 && !check_control(ctx))
		return 0;
	if ((ctx->daemons & (SK_CONFIG_CONTROL | SK_CONFIG_DATAPLANE)) ==
		    (SK_CONFIG_CONTROL | SK_CONFIG_DATAPLANE) &&
	    !check_member_id(ctx))
		return 0;
	if ((ctx->daemons & SK_CONFIG_DATAPLANE) == 0)
		return 1;

	for (int i = 0; i < SK_CONFIG_MAX_PORTS; i++) {
		if (ctx->seen[SEC_PORT0 + i] == 0)
			continue;
		if (i != nports)
			return sk_config_fail(
				ctx, 0, "port%d: ports must be numbered from port0 without gaps",
				i);
		nports++;
	}
	if (nports == 0)
		return sk_config_fail(ctx, 0, "port0.device: no port configured");
	cfg->nb_ports = (uint16_t)nports;

	for (int i = 0; i < nports; i++) {
		struct sk_config_port *p = &cfg->ports[i];

		if (!sk_config_key_seen(ctx, SEC_PORT0, i, "device"))
			return sk_config_fail(ctx, 0, "port%d.device: required", i);
		if (!sk_config_key_seen(ctx, SEC_PORT0, i, "address"))
			return sk_config_fail(ctx, 0, "port%d.address: required", i);
		if (p->gateway != 0) {
			uint32_t mask = p->prefix == 32 ? UINT32_MAX : ~(UINT32_MAX >> p->prefix);

			if ((p->gateway & mask) != (p->addr & mask) || p->gateway == p->addr)
				return sk_config_fail(
					ctx, 0,
					"port%d.gateway: not a neighbour inside port%d.address", i,
					i);
		}
		for (int j = 0; j < i; j++) {
			char a[64], b[64];

			if (sk_config_port_name(p, a, sizeof(a)) == 0 &&
			    sk_config_port_name(&cfg->ports[j], b, sizeof(b)) == 0 &&
			    strcmp(a, b) == 0)
				return sk_config_fail(ctx, 0,
						      "port%d.device: same device as port%d", i, j);
			if (p->addr == cfg->ports[j].addr)
				return sk_config_fail(
					ctx, 0, "port%d.address: same address as port%d", i, j);
			if (p->has_addr6 && cfg->ports[j].has_addr6 &&
			    memcmp(p->addr6, cfg->ports[j].addr6, sizeof(p->addr6)) == 0)
				return sk_config_fail(
					ctx, 0, "port%d.address6: same address as port%d", i, j);
		}
	}
	/* rte_mempool_create() refuses a cache above n / 1.5. */
	if ((uint64_t)cfg->mbuf_cache * 3 > (uint64_t)cfg->mbufs * 2)
		return sk_config_fail(ctx, 0,
				      "dataplane.mbuf_cache: %" PRIu32
				      " is more than dataplane.mbufs / 1.5",
				      cfg->mbuf_cache);
	if (cfg->rto_min_ms != 0 && cfg->rto_max_ms != 0 && cfg->rto_min_ms > cfg->rto_max_ms)
		return sk_config_fail(ctx, 0, "tcp.rto_min_ms: above tcp.rto_max_ms");
	if (cfg->target_max != 0 && cfg->head_max != 0 && cfg->target_max + 16 > cfg->head_max)
		return sk_config_fail(ctx, 0,
				      "http.target_max: must be at most http.head_max - 16");
	if (!check_tls(ctx))
		return 0;
	return check_seckill(ctx);
}
