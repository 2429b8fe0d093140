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

int
sk_member_metrics(struct sk_member *m, FILE *out)
{
	struct sk_prom p = {.f = out};
	uint32_t ids[SK_MEMBER_ITEMS_MAX];
	uint64_t v;

	sk_prom_gauge(&p, "seckill_redis_up",
		      "1 if the cluster member's last Redis call got through",
		      atomic_load(&m->redis_up) ? 1 : 0);
	sk_prom_gauge(&p, "seckill_cluster_number_claimed",
		      "1 while Redis holds this member's number (its order ids') as claimed: it "
		      "leases only then",
		      atomic_load(&m->number_claimed) ? 1 : 0);
	sk_prom_gauge(&p, "seckill_cluster_number_conflict",
		      "1 while Redis refuses this member's number (another member holds it, or "
		      "this one another): the members' --cluster-members disagree; no lease",
		      atomic_load(&m->claim_conflict) ? 1 : 0);
	sk_prom_head(&p, "seckill_cluster_leases_total", "counter",
		     "Leases asked of the Redis pool, by result: granted (units came), empty (the "
		     "pool had none), refused (fenced)");
	sk_prom_printf(&p, "seckill_cluster_leases_total{result=\"granted\"} %" PRIu64 "\n",
		       atomic_load(&m->leases_granted));
	sk_prom_printf(&p, "seckill_cluster_leases_total{result=\"empty\"} %" PRIu64 "\n",
		       atomic_load(&m->leases_empty));
	sk_prom_printf(&p, "seckill_cluster_leases_total{result=\"refused\"} %" PRIu64 "\n",
		       atomic_load(&m->leases_refused));
	sk_prom_counter(&p, "seckill_cluster_leased_units_total", "Units granted by leases",
			atomic_load(&m->lease_units));
	sk_prom_counter(&p, "seckill_cluster_givebacks_total", "Give-backs Redis took",
			atomic_load(&m->givebacks));
	sk_prom_counter(&p, "seckill_cluster_given_back_units_total",
			"Units given back to the pool", atomic_load(&m->giveback_units));
	sk_prom_counter(&p, "seckill_cluster_syncs_total",
			"Syncs of this member's durable word after a fence",
			atomic_load(&m->syncs));
	sk_prom_counter(&p, "seckill_cluster_broadcasts_total",
			"Sold-out and reopen broadcasts received", atomic_load(&m->broadcasts));
	sk_prom_counter(&p, "seckill_cluster_anomalies_total",
			"Ops Redis could not take (logged; units stay off sale, never sold twice)",
			atomic_load(&m->anomalies));
	sk_prom_counter(&p, "seckill_cluster_errors_total", "Failed member steps (retried)",
			atomic_load(&m->errors));
	sk_prom_counter(&p, "seckill_cluster_redis_calls_total",
			"Commands the member sent to Redis (scripts, their loads, redirections)",
			atomic_load(&m->redis_calls));
	uint64_t hist[FLIP_BUCKETS];
	for (unsigned b = 0; b < FLIP_BUCKETS; b++)
		hist[b] = atomic_load(&m->flip_hist[b]);
	sk_prom_histogram(
		&p, "seckill_cluster_broadcast_delay_seconds",
		"Sold-out broadcasts: Redis's flip (its clock) to this item table's flag, "
		"which the dataplane reads on its next buy",
		hist, sk_member_flip_bounds_ns, FLIP_BUCKETS, atomic_load(&m->flip_sum_ns));

	static const char *const fam[][3] = {
		{"seckill_cluster_held_units", "gauge",
		 "Units this member holds (LMDB: granted - given back)"},
		{"seckill_cluster_pool_free_units", "gauge",
		 "Units of the Redis pool not leased (last read)"},
		{"seckill_cluster_fenced", "gauge",
		 "1 while the item's pool is fenced (last read)"},
		{"seckill_cluster_sold_out", "gauge", "1 when sold out everywhere (last read)"},
	};
	pthread_mutex_lock(&m->mu);
	for (unsigned i = 0; i < SK_MEMBER_ITEMS_MAX; i++)
		ids[i] = m->items[i].item;
	pthread_mutex_unlock(&m->mu);
	for (size_t f = 0; f < SK_ARRAY_SIZE(fam); f++) {
		sk_prom_head(&p, fam[f][0], fam[f][1], fam[f][2]);
		for (unsigned i = 0; i < SK_MEMBER_ITEMS_MAX; i++) {
			struct sk_member_item mi;
			uint32_t item = ids[i];

			if (item == 0 || sk_member_view(m, item, &mi) != 0)
				continue;
			v = f == 0   ? mi.held
			    : f == 1 ? mi.pool.free
			    : f == 2 ? mi.pool.fenced
				     : mi.pool.sold_out;
			sk_prom_printf(&p, "%s{item=\"%" PRIu32 "\"} %" PRIu64 "\n", fam[f][0],
				       item, v);
		}
	}
	return p.err;
}
