/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to control/: the struct sk_control behind the opaque handle of
 * sk_control.h, shared by the files that implement it:
 *
 *   sk_control.c          attach, repair at attach, close, heartbeat, views
 *   sk_drain.c            the drain (peek, commit, settle, consume)
 *   sk_payment.c          payment deadlines (expire) and pay
 *   sk_control_metrics.c  stats and /metrics
 *   sk_arena_sync.c       the arena moves that follow a store write
 *   sk_activity.c         activities and preheat
 *   sk_control_reconcile.c  the periodic reconcile and its metrics
 *   sk_control_map.c      the store's map grown between group commits
 *   sk_retention.c        archive, event-log trim, keep-days policy
 *
 * Nothing outside control/ includes this.
 */
#ifndef SK_CONTROL_IMPL_H
#define SK_CONTROL_IMPL_H

#include <pthread.h>
#include <stdbool.h>

#include "sk_common.h"
#include "sk_control.h"
#include "sk_prom.h"

/* One ring's share of a drain: where its records sit in buf. */
struct seg {
	unsigned off;  /* first record in buf */
	unsigned got;  /* records peeked (consumer head moved by this much) */
	unsigned keep; /* records this drain consumes (whole carts) */
};

struct sk_control {
	struct sk_shm *shm;
	struct sk_status status; /* view of the arena's status table */
	struct sk_store *store;
	unsigned nrings;
	unsigned quota; /* records peeked per ring per drain */
	int64_t pay_timeout_ns;
	int64_t linger_ns;
	uint32_t expire_max;
	int64_t first_seen_ns; /* wall clock the waiting records were first seen; 0: none */

	struct rte_ring *ring[SK_MAX_LCORES];
	struct seg seg[SK_MAX_LCORES];
	struct sk_order_rec *buf;  /* quota * nrings: peeked records (drain, reconcile) */
	struct sk_order_rec *cbuf; /* the carts to commit, compacted from buf */
	uint8_t *outcome;	   /* per record of cbuf */
	struct expiry {
		int64_t deadline_ns;
		uint64_t id;
	} * exp; /* expire_max entries */

	/*
	 * Held around every store write and the arena moves that follow it
	 * (drain commit, expire, pay, repair). @lines is scratch under it.
	 */
	pthread_mutex_t wlock;
	bool mutex_ok;
	struct sk_store_line lines[SK_STORE_MAX_LINES];

	struct ctl_reconcile *rec; /* the periodic reconcile's state (sk_control_reconcile.c) */
	struct ctl_retention *ret; /* archive, trim and policy state (sk_retention.c) */
	bool attached;		   /* arena and rings found by name (DPDK secondary) */
	bool cluster;		   /* a cluster member: cluster activities allowed */
	struct sk_member *member;  /* the member (sk_member.h), or NULL; set before the
				      admin API starts, cleared after it stopped */

	struct sk_store_map_policy map_pol; /* when the map grows (sk_control_map.c) */
	int64_t map_rest_until_ns;	    /* monotonic: no check before (a grow put off) */

	uint32_t preheat_failed_last;	     /* failures of the last preheat pass (log once) */
	sk_control_metrics_fn extra_metrics; /* more metrics, or NULL */
	void *extra_arg;

	/* Live settings (sk_live_ctl.c): the dataplane's block, NULL: none. */
	struct sk_live_zone *live;
	pthread_mutex_t live_lock; /* one change at a time */
	bool live_lock_ok;

	/* Reservation sets (sk_reserve_ctl.c): the dataplane's block, NULL: none. */
	struct sk_reserve_zone *reserve;
	pthread_mutex_t reserve_lock; /* one writer at a time */
	bool reserve_lock_ok;

	/* Counters: written with relaxed atomic adds, read with atomic loads. */
	struct sk_control_stats st;
};

/* lock - take the write lock (store writes and the arena moves after them). */
static inline void
lock(struct sk_control *ctl)
{
	SK_ASSERT(pthread_mutex_lock(&ctl->wlock) == 0);
}

static inline void
unlock(struct sk_control *ctl)
{
	SK_ASSERT(pthread_mutex_unlock(&ctl->wlock) == 0);
}

/* stat_add - a counter of ctl->st (relaxed: readers take atomic loads). */
static inline void
stat_add(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/*
 * Arena moves that follow a store write (sk_arena_sync.c). Each is called
 * under ctl->wlock, except where a caller says otherwise; anomalies are
 * counted in ctl->st, never returned.
 */

/*
 * ctl_status_sync - walk @id's status forward to @target (confirmed, paid
 * or refunded). 0 once it is @target, -ENOENT if @id is not of this run's status
 * table, -EALREADY if the status is elsewhere (none, failed, cancelled).
 */
int ctl_status_sync(struct sk_control *ctl, uint64_t id, unsigned target);
/* ctl_lines_units - the units of the order lines recs[0..n). */
uint64_t ctl_lines_units(const struct sk_order_rec *recs, unsigned n);
/*
 * ctl_arena_cancel - end an order of this run in the arena: status -> @to
 * (cancelled or failed), its units back. True if it ends in @to.
 */
bool ctl_arena_cancel(struct sk_control *ctl, const struct sk_order_rec *in, unsigned n,
		      unsigned to);
/* ctl_release_cancelled - the store cancelled the order @lines: its units go back. */
void ctl_release_cancelled(struct sk_control *ctl, const struct sk_store_line *lines, unsigned n);
/*
 * ctl_sync_from_store - bring the arena in line with the stored order
 * @lines (replay, repair). True if its status changed.
 */
bool ctl_sync_from_store(struct sk_control *ctl, const struct sk_store_line *lines, unsigned n);

/*
 * ctl_activity_resync - the arena's item of @item in line with the store
 * after a change (restocks, removals, pause, end, close). Write lock held.
 */
void ctl_activity_resync(struct sk_control *ctl, uint32_t item);

/*
 * ctl_map_grow - sk_control_map_check() with the write lock held; @urgent
 * (a commit met a full map) grows whatever the threshold and waits longer
 * for open transactions. Same returns.
 */
int ctl_map_grow(struct sk_control *ctl, bool urgent);

/*
 * The periodic reconcile's state (sk_control_reconcile.c): made by
 * sk_control_init() (0 or -ENOMEM), freed by ctl_free() (NULL-safe).
 */
int ctl_reconcile_init(struct sk_control *ctl);
void ctl_reconcile_free(struct sk_control *ctl);
/*
 * Retention's state (sk_retention.c): made by sk_control_init() from
 * @conf (0 or -ENOMEM), freed by ctl_free() (NULL-safe; joins the policy's
 * worker) before the store closes.
 */
int ctl_retention_init(struct sk_control *ctl, const struct sk_control_conf *conf);
void ctl_retention_free(struct sk_control *ctl);
/* The reconcile's metrics table (sk_control_reconcile_metrics() writes it). */
extern const struct sk_prom_table sk_control_reconcile_table;

/**
 * sk_control_wait_ms - poll @p done(@p arg) once a millisecond, for at most
 * @p ms milliseconds: the writer's bounded wait for the lcores to
 * acknowledge a generation (live settings, reservation sets).
 * @return true once @p done held (checked once more at the end).
 * Thread-safety: as @p done; sleeps, never on an lcore.
 */
bool sk_control_wait_ms(bool (*done)(const void *arg), const void *arg, unsigned ms);

#endif /* SK_CONTROL_IMPL_H */
