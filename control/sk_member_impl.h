/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_member_impl.h - the cluster member's state, shared by its loop
 * (sk_member.c) and its readers (sk_member_read.c: the admin view and
 * /metrics). Not a public interface: sk_member.h is.
 *
 * Threads: the loop's thread alone writes items[] (slots are added under
 * mu, which the readers take); counters are atomics any thread reads.
 */
#ifndef SK_MEMBER_IMPL_H
#define SK_MEMBER_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sk_member.h"

/* Buckets of seckill_cluster_broadcast_delay_seconds (Redis's flip to the
 * item table's flag), ns; one more for the rest. */
#define FLIP_BUCKETS 12
extern const uint64_t sk_member_flip_bounds_ns[FLIP_BUCKETS - 1];

/* One cluster item the loop follows. */
struct mitem {
	uint32_t item; /* 0: free slot */
	bool inited;   /* sk_cpool_init() succeeded since the last -ENOENT */
	bool total_conflict_logged;
	bool dirty; /* read the pool at the next tick: an own op, a message */
	uint64_t sold_prev;
	uint64_t restocking_prev; /* the dataplane's "restocking" answers of the item */
	int64_t prev_ns, last_sale_ns, last_lease_ns, dry_ns;
	double rate;
	/* Read by sk_member_view() under m->mu. */
	struct sk_cpool_view view;
	int64_t view_ns;
};

struct sk_member {
	struct sk_control *ctl;
	struct sk_member_conf conf;
	struct sk_cpool *pool;
	struct sk_cpool_sub *sub;
	pthread_t thread;
	bool thread_ok;
	atomic_bool stop;
	int64_t stop_deadline_ns; /* monotonic: give back until then */
	pthread_mutex_t mu;	  /* items[] for the readers */
	struct mitem items[SK_MEMBER_ITEMS_MAX];

	atomic_bool redis_up;
	_Atomic uint64_t leases_granted, leases_empty, leases_refused, lease_units;
	_Atomic uint64_t givebacks, giveback_units, syncs, broadcasts, anomalies, errors;
	_Atomic uint64_t redis_calls; /* sk_cpool_calls() of pool, after each tick */
	/* Broadcasts that carried Redis's clock: the delay to the flag. */
	_Atomic uint64_t flip_hist[FLIP_BUCKETS], flip_sum_ns;
};

/**
 * sk_member_slot - the slot of @p item in m->items, or NULL; with @p add a
 * free slot is taken for it (NULL when all are used). The caller holds
 * m->mu, or is the loop's thread and only reads.
 */
struct mitem *sk_member_slot(struct sk_member *m, uint32_t item, bool add);

#endif /* SK_MEMBER_IMPL_H */
