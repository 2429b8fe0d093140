/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's cluster view: GET /v1/cluster/items/{id} - the Redis
 * pool of a cluster item as this member last read it, its own durable
 * word, and the two checks of docs/cluster.md (total == free + sum of the
 * leases; this member's lease == what its LMDB says it holds).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "sk_admin_impl.h"
#include "sk_control_impl.h"
#include "sk_member.h"
#include "sk_store_cluster.h"

static const char *
kind_name(uint8_t kind)
{
	return kind == SK_STORE_CLUSTER_LEASE	   ? "lease"
	       : kind == SK_STORE_CLUSTER_GIVEBACK ? "giveback"
						   : "none";
}

int
adm_post_cluster_forget(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
			struct sk_admin_reply *r)
{
	uint64_t held = 0;
	char msg[160];
	int rc;

	if (ctl->member == NULL)
		return adm_reply_error(
			r, 404, "not a cluster member (seckill-control runs without --redis)");
	json_t *o = adm_parse_body(body, len, r, &rc);
	if (o == NULL)
		return rc;
	json_t *m = json_object_get(o, "member");
	if (!json_is_string(m) || !sk_cpool_member_valid(json_string_value(m))) {
		json_decref(o);
		return adm_reply_error(r, 400,
				       "member: required, an id of [a-z0-9_-], 1..32 chars");
	}
	int got = adm_get_u64(o, "held", 0, SK_CPOOL_UNITS_MAX, false, &held, r, &rc);
	if (got <= 0) {
		json_decref(o);
		return got == 0 ? adm_reply_error(r, 400, "held: required, the units it held") : rc;
	}
	char gone[SK_CPOOL_MEMBER_MAX + 1];
	snprintf(gone, sizeof(gone), "%s", json_string_value(m));
	json_decref(o);
	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "no such cluster item");
	rc = sk_member_forget(ctl->member, (uint32_t)id, gone, held);
	switch (rc) {
	case 0:
		return adm_reply_json(r, 200,
				      json_pack("{s:o,s:s,s:o,s:s}", "item", adm_jint(id),
						"forgotten", gone, "held", adm_jint(held), "result",
						"done"));
	case -EINVAL:
		return adm_reply_error(r, 409, "a member cannot forget itself");
	case -ENOENT:
		return adm_reply_error(r, 404, "no such cluster item in Redis, or not a member");
	case -EOVERFLOW:
		return adm_reply_error(r, 409,
				       "the members would hold more than the total: check the held "
				       "units (the item stays fenced)");
	case -ENOTCONN:
	case -ETIMEDOUT:
		r->retry_after = 1;
		return adm_reply_error(r, 503, "Redis is unreachable");
	default:
		snprintf(msg, sizeof(msg), "redis: %s", strerror(-rc));
		return adm_reply_error(r, 503, msg);
	}
}

int
adm_get_cluster_item(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	struct sk_member_item v;
	uint64_t sum = 0, mine = 0;
	bool have_mine = false;

	if (ctl->member == NULL)
		return adm_reply_error(
			r, 404, "not a cluster member (seckill-control runs without --redis)");
	if (id > UINT32_MAX || sk_member_view(ctl->member, (uint32_t)id, &v) != 0)
		return adm_reply_error(r, 404, "not a cluster item of this member (yet)");

	const struct sk_cpool_view *p = &v.pool;
	json_t *leases = json_array();
	if (leases == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->members; i++) {
		sum += p->held[i];
		if (strcmp(p->member[i], sk_member_id(ctl->member)) == 0) {
			mine = p->held[i];
			have_mine = true;
		}
		json_array_append_new(leases, json_pack("{s:s,s:o,s:o}", "member", p->member[i],
							"held", adm_jint(p->held[i]),
							"synced_epoch", adm_jint(p->synced[i])));
	}
	int64_t age_ms = v.pool_read_ns == 0
				 ? -1
				 : (sk_clock_ns(CLOCK_MONOTONIC) - v.pool_read_ns) / 1000000;
	json_t *pending =
		v.pending_seq == 0
			? json_null()
			: json_pack("{s:o,s:s,s:o}", "seq", adm_jint(v.pending_seq), "kind",
				    kind_name(v.pending_kind), "units", adm_jint(v.pending_units));
	/* The checks hold at rest: not while fenced (the pool is being
	 * rebuilt) and not while this member's op is in flight. */
	json_t *checks = json_pack(
		"{s:o,s:o}", "pool_sum",
		p->fenced ? json_null() : json_boolean(p->total == p->free + sum), "member_held",
		p->fenced || v.pending_seq != 0 || !have_mine ? json_null()
							      : json_boolean(mine == v.held));
	json_t *o =
		json_pack("{s:o,s:s,s:b,s:o,s:o,s:f,s:{s:o,s:o,s:o,s:b,s:b,s:o,s:I,s:I,s:o},s:o}",
			  "item", adm_jint(id), "member", sk_member_id(ctl->member), "redis_up",
			  v.redis_up, "held", adm_jint(v.held), "pending", pending, "rate", v.rate,
			  "pool", "total", adm_jint(p->total), "free", adm_jint(p->free), "epoch",
			  adm_jint(p->epoch), "fenced", p->fenced, "sold_out", p->sold_out,
			  "version", adm_jint(p->version), "want_ms", (json_int_t)p->want_ms,
			  "read_ms_ago", (json_int_t)age_ms, "leases", leases, "checks", checks);
	return adm_reply_json(r, 200, o);
}
