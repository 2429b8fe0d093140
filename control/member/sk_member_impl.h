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
#include "sk_store_cluster.h"

/* Buckets of seckill_cluster_broadcast_delay_seconds (Redis's flip to the
 * item table's flag), ns; one more for the rest. */
#define FLIP_BUCKETS 12
extern const uint64_t sk_member_flip_bounds_ns[FLIP_BUCKETS - 1];

/* Most items remembered as done (struct sk_member.done): beyond, an item
 * over here keeps its slot. */
#define SK_MEMBER_DONE_MAX 16384

/* One cluster item the loop follows. */
struct mitem {
	uint32_t item; /* 0: free slot */
	bool inited;   /* sk_cpool_init() succeeded since the last -ENOENT */
	bool total_conflict_logged;
	bool dirty;	      /* read the pool at the next tick: an own op, a message */
	bool giveback_fenced; /* the pending give-back's last send answered FENCED */
	uint64_t dry_epoch;   /* over here: the epoch of the last dry report (0: none) */
	/* The forgotten members of the item, as this member's LMDB keeps them
	 * (loaded with the slot; sent with every init). */
	struct sk_store_forgotten forgotten;
	bool forgotten_loaded;
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
	/* Items over here that owe the pool nothing (nothing held unsold,
	 * nothing pending, synced and dry at the last epoch seen): not
	 * followed, their slots free for others. Sorted; the loop's thread
	 * only. A message of the item's pool, or a subscriber that lost
	 * messages, has them followed again. */
	uint32_t done[SK_MEMBER_DONE_MAX];
	unsigned ndone;

	/* The member's number in Redis (sk_member_conf.c; the loop's thread):
	 * no lease unless claimed; claimed again every CLAIM_REFRESH_NS and
	 * at once after Redis went down, a fence or a lost pool. */
	bool claimed;
	int64_t claim_next_ns;			    /* monotonic: the next claim, refused or not */
	atomic_bool number_claimed, claim_conflict; /* for /metrics */

	atomic_bool redis_up;
	_Atomic uint64_t leases_granted, leases_empty, leases_refused, lease_units;
	_Atomic uint64_t givebacks, giveback_units, syncs, broadcasts, anomalies, errors;
	_Atomic uint64_t redis_calls; /* sk_cpool_calls() of pool, after each tick */
	/* Broadcasts that carried Redis's clock: the delay to the flag. */
	_Atomic uint64_t flip_hist[FLIP_BUCKETS], flip_sum_ns;
};

/*
 * What one tick measured of an item (sk_member.c's measure step): the
 * local numbers, the journal, and what the member knows of its last view
 * of the pool. Plain data: the input of sk_member_decide().
 */
struct sk_member_tick {
	uint64_t unsold;	 /* the item table's unsold units here */
	uint64_t unsold_durable; /* the store's units that no live order holds */
	uint64_t held;		 /* this member's durable word (LMDB) */
	uint64_t dry_epoch;	 /* mitem.dry_epoch */
	int64_t wall_ms;	 /* wall clock (a want's age) */
	int64_t view_age_ns;	 /* since the last view was read (-1: never) */
	double rate;		 /* smoothed units sold a second here */
	uint32_t nmembers;	 /* members of the cluster (a lease's share of the pool) */
	bool selling;		 /* in the table, open, not paused */
	bool over;		 /* closed, or its end passed */
	bool stopping;		 /* the member shuts down */
	bool claimed;		 /* Redis holds this member's number (a lease needs it) */
	bool idle;		 /* open for the idle time, no sale or lease in it */
	bool low_water;		 /* fewer units than 1 s of the selling rate (at least 1) */
	bool ask;		 /* a reason to lease: the first, a rate, demand */
	bool demand;		 /* buyers told "restocking" since the last tick */
	bool dry_due;		 /* no empty lease or dry report in DRY_REPEAT_NS */
	bool quiet;		 /* no sale in WANT_QUIET_NS: a want is answered */
	bool pending;		 /* the journal has an op Redis has not answered */
	bool pending_fenced;	 /* ... a give-back whose last send Redis refused as FENCED */
	bool dirty;		 /* mitem.dirty: an own op or a message since the read */
};

/* The one step of a tick on the pool (sk_member_decision.act). */
enum sk_member_act {
	SK_MEMBER_NOTHING = 0,
	SK_MEMBER_GIVE_ALL,	/* every unsold unit back: stopping, not selling, idle */
	SK_MEMBER_GIVE_HALF,	/* half back: another member is dry (a recent want) */
	SK_MEMBER_LEASE,	/* below low water with a reason, and the pool has units
				   (or demand: ask an empty pool, at most every second) */
	SK_MEMBER_REPORT_DRY,	/* nothing here, none in the pool: a dry report */
	SK_MEMBER_REPORT_UNITS, /* units here while sold out: reopen */
	SK_MEMBER_REPORT_OVER,	/* over here, all sold, holds units: its dry report */
};

/* Whether the item's slot may go after the tick (sk_member_done_add()). */
enum sk_member_done {
	SK_MEMBER_KEEP = 0,	   /* followed at the next tick */
	SK_MEMBER_DONE,		   /* over here, owes the pool nothing */
	SK_MEMBER_DONE_IF_REPORTED /* ... once the dry report of this tick is taken */
};

/* What a tick does with an item (sk_member_decide()); the act step does it. */
struct sk_member_decision {
	bool read;	   /* read the pool first, then decide on the fresh view */
	bool sync;	   /* fenced: the forgotten check, then sync_word */
	bool sync_word;	   /* ... this member's durable word may be sent now */
	bool spend_demand; /* the "restocking" answers so far are acted on */
	enum sk_member_act act;
	uint64_t units;	 /* the lease's want, or the units given back */
	const char *why; /* a give-back's reason (the log) */
	enum sk_member_done done;
};

/**
 * sk_member_decide - the decision for tick @p t on view @p v of the pool,
 * which is @p fresh (read this tick) or the last one read. On a last view
 * the decision may be to read the pool and decide again on the fresh one;
 * a give-back of everything needs no view. Pure: every rule of the tick
 * (when to read, lease, give back, report dry or reopen, sync, let the slot
 * go) is here, in the order of docs/cluster.md.
 */
struct sk_member_decision sk_member_decide(const struct sk_member_tick *t,
					   const struct sk_cpool_view *v, bool fresh);

/**
 * sk_member_slot - the slot of @p item in m->items, or NULL; with @p add a
 * free slot is taken for it (NULL when all are used). The caller holds
 * m->mu, or is the loop's thread and only reads.
 */
struct mitem *sk_member_slot(struct sk_member *m, uint32_t item, bool add);

/** sk_member_slot_free - @p mi free again (the loop's thread; takes m->mu). */
void sk_member_slot_free(struct sk_member *m, struct mitem *mi);

/*
 * The items over here that owe the pool nothing (sk_member_items.c; the
 * loop's thread): has, add (false when SK_MEMBER_DONE_MAX are kept: the
 * item keeps its slot), del.
 */
bool sk_member_done_has(const struct sk_member *m, uint32_t item);
bool sk_member_done_add(struct sk_member *m, uint32_t item);
void sk_member_done_del(struct sk_member *m, uint32_t item);

/** sk_member_is_forgotten - @p id is a forgotten member of @p mi's item. */
bool sk_member_is_forgotten(const struct mitem *mi, const char *id);

/**
 * sk_member_init_pool - sk_cpool_init_forgotten() of @p mi's item with
 * @p total: this member, the configured ones that are not forgotten, and
 * the forgotten ones with their units (LMDB, loaded once per slot).
 * @return as sk_cpool_init_forgotten(), or an error of the store.
 */
int sk_member_init_pool(struct sk_member *m, struct mitem *mi, uint64_t total);

/**
 * sk_member_remember_forgotten - member @p id forgotten from @p item,
 * holding @p held: kept in LMDB (sk_store_cluster_forget()), logged. Any
 * thread.
 * @return 0 (kept now or before), or the store's error (logged).
 */
int sk_member_remember_forgotten(struct sk_member *m, uint32_t item, const char *id, uint64_t held);

/**
 * sk_member_learn_forgotten - the forgotten members of @p mi's last view
 * (another member's operator forgot them) that LMDB lacks, kept there.
 */
void sk_member_learn_forgotten(struct sk_member *m, struct mitem *mi);

/**
 * sk_member_claim_tick - the loop's claim of its number (sk_cpool_claim()),
 * when not claimed or due again: m->claimed set on success; a refusal is
 * logged (once until it changes), counted as an anomaly, and tried again a
 * second later. Returns sk_cpool_claim()'s result (0 when nothing was due).
 */
int sk_member_claim_tick(struct sk_member *m, int64_t now);

#endif /* SK_MEMBER_IMPL_H */
