/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_member_read.c - what the cluster member shows (sk_member.h): its id
 * and Redis, an item's last view of the pool with this member's durable
 * word (the admin API's GET /v1/cluster/items/{id}), and /metrics. Any
 * thread; the loop's items[] are read under its mutex.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sk_control_impl.h"
#include "sk_member_impl.h"
#include "sk_prom.h"
#include "sk_store_cluster.h"

#define MS UINT64_C(1000000)

const uint64_t sk_member_flip_bounds_ns[FLIP_BUCKETS - 1] = {250000,   500000,	 1 * MS,   2 * MS,
							     5 * MS,   10 * MS,	 20 * MS,  50 * MS,
							     100 * MS, 250 * MS, 1000 * MS};

const struct sk_cpool_config *
sk_member_redis(const struct sk_member *m)
{
	return &m->conf.redis;
}

const char *
sk_member_id(const struct sk_member *m)
{
	return m->conf.redis.member;
}

int
sk_member_view(struct sk_member *m, uint32_t item, struct sk_member_item *out)
{
	struct sk_store_cluster j;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&m->mu);
	struct mitem *mi = sk_member_slot(m, item, false);
	if (mi != NULL) {
		out->item = item;
		out->pool = mi->view;
		out->pool_read_ns = mi->view_ns;
		out->rate = mi->rate;
	}
	pthread_mutex_unlock(&m->mu);
	if (mi == NULL)
		return -ENOENT;
	out->redis_up = atomic_load(&m->redis_up);
	if (sk_store_cluster_get(m->ctl->store, item, &j) == 0) {
		out->held = sk_store_cluster_held(&j);
		out->pending_seq = j.pending_seq;
		out->pending_kind = j.pending_kind;
		out->pending_units = j.pending_units;
	}
	return 0;
}

/* What the member's table reads: its counters, loaded once. */
struct member_snap {
	struct sk_member *m;
	uint64_t redis_up, claimed, conflict;
	uint64_t leases[3]; /* granted, empty, refused */
	uint64_t lease_units, givebacks, giveback_units, syncs, broadcasts, anomalies, errors;
	uint64_t redis_calls;
	uint64_t flip[FLIP_BUCKETS], flip_sum_ns;
	uint32_t ids[SK_MEMBER_ITEMS_MAX];
};

static const char *const lease_result[] = {"granted", "empty", "refused", NULL};

enum { MI_HELD, MI_FREE, MI_FENCED, MI_SOLD_OUT };

static void
emit_items(struct sk_prom *p, const struct sk_prom_metric *row, const void *arg)
{
	const struct member_snap *sn = arg;

	for (unsigned i = 0; i < SK_MEMBER_ITEMS_MAX; i++) {
		struct sk_member_item mi;
		uint32_t item = sn->ids[i];
		uint64_t v;

		if (item == 0 || sk_member_view(sn->m, item, &mi) != 0)
			continue;
		v = row->arg == MI_HELD	    ? mi.held
		    : row->arg == MI_FREE   ? mi.pool.free
		    : row->arg == MI_FENCED ? mi.pool.fenced
					    : mi.pool.sold_out;
		sk_prom_printf(p, "%s{item=\"%" PRIu32 "\"} %" PRIu64 "\n", row->name, item, v);
	}
}

#define C(n, h, f) SK_PROM_AT(SK_PROM_COUNTER, n, h, struct member_snap, f)
#define G(n, h, f) SK_PROM_AT(SK_PROM_GAUGE, n, h, struct member_snap, f)
#define I(n, h, a)                                                                                 \
	{                                                                                          \
		.name = (n), .type = SK_PROM_GAUGE, .labels = "item", .help = (h),                 \
		.emit = emit_items, .arg = (a)                                                     \
	}

static const struct sk_prom_metric member_rows[] = {
	G("seckill_redis_up", "1 if the cluster member's last Redis call got through", redis_up),
	G("seckill_cluster_number_claimed",
	  "1 while Redis holds this member's number (its order ids') as claimed: it leases only "
	  "then",
	  claimed),
	G("seckill_cluster_number_conflict",
	  "1 while Redis refuses this member's number (another member holds it, or this one "
	  "another): the members' --cluster-members disagree; no lease",
	  conflict),
	{.name = "seckill_cluster_leases_total",
	 .type = SK_PROM_COUNTER,
	 .labels = "result",
	 .help = "Leases asked of the Redis pool, by result: granted (units came), empty (the pool "
		 "had none), refused (fenced)",
	 .off = offsetof(struct member_snap, leases),
	 .values = lease_result},
	C("seckill_cluster_leased_units_total", "Units granted by leases", lease_units),
	C("seckill_cluster_givebacks_total", "Give-backs Redis took", givebacks),
	C("seckill_cluster_given_back_units_total", "Units given back to the pool", giveback_units),
	C("seckill_cluster_syncs_total", "Syncs of this member's durable word after a fence",
	  syncs),
	C("seckill_cluster_broadcasts_total", "Sold-out and reopen broadcasts received",
	  broadcasts),
	C("seckill_cluster_anomalies_total",
	  "Ops Redis could not take (logged; units stay off sale, never sold twice)", anomalies),
	C("seckill_cluster_errors_total", "Failed member steps (retried)", errors),
	C("seckill_cluster_redis_calls_total",
	  "Commands the member sent to Redis (scripts, their loads, redirections)", redis_calls),
	{.name = "seckill_cluster_broadcast_delay_seconds",
	 .type = SK_PROM_HISTOGRAM,
	 .help = "Sold-out broadcasts: Redis's flip (its clock) to this item table's flag, which "
		 "the dataplane reads on its next buy",
	 .off = offsetof(struct member_snap, flip),
	 .bounds_ns = sk_member_flip_bounds_ns,
	 .nbuckets = FLIP_BUCKETS,
	 .sum_off = offsetof(struct member_snap, flip_sum_ns)},
	I("seckill_cluster_held_units", "Units this member holds (LMDB: granted - given back)",
	  MI_HELD),
	I("seckill_cluster_pool_free_units", "Units of the Redis pool not leased (last read)",
	  MI_FREE),
	I("seckill_cluster_fenced", "1 while the item's pool is fenced (last read)", MI_FENCED),
	I("seckill_cluster_sold_out", "1 when sold out everywhere (last read)", MI_SOLD_OUT),
};

const struct sk_prom_table sk_member_table = SK_PROM_TABLE(member_rows);

int
sk_member_metrics(struct sk_member *m, FILE *out)
{
	struct sk_prom p = {.f = out};
	struct member_snap sn = {
		.m = m,
		.redis_up = atomic_load(&m->redis_up) ? 1 : 0,
		.claimed = atomic_load(&m->number_claimed) ? 1 : 0,
		.conflict = atomic_load(&m->claim_conflict) ? 1 : 0,
		.leases = {atomic_load(&m->leases_granted), atomic_load(&m->leases_empty),
			   atomic_load(&m->leases_refused)},
		.lease_units = atomic_load(&m->lease_units),
		.givebacks = atomic_load(&m->givebacks),
		.giveback_units = atomic_load(&m->giveback_units),
		.syncs = atomic_load(&m->syncs),
		.broadcasts = atomic_load(&m->broadcasts),
		.anomalies = atomic_load(&m->anomalies),
		.errors = atomic_load(&m->errors),
		.redis_calls = atomic_load(&m->redis_calls),
		.flip_sum_ns = atomic_load(&m->flip_sum_ns),
	};

	for (unsigned b = 0; b < FLIP_BUCKETS; b++)
		sn.flip[b] = atomic_load(&m->flip_hist[b]);
	pthread_mutex_lock(&m->mu);
	for (unsigned i = 0; i < SK_MEMBER_ITEMS_MAX; i++)
		sn.ids[i] = m->items[i].item;
	pthread_mutex_unlock(&m->mu);
	sk_prom_write(&p, &sk_member_table, &sn);
	return p.err;
}
