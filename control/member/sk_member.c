/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cluster member's loop (sk_member.h, docs/cluster.md). Per tick, for
 * every cluster activity of the store: settle (init the pool, resend the
 * journal's pending op), measure (the local numbers and the journal into a
 * struct sk_member_tick), decide (sk_member_decide(), pure: whether to read
 * the pool, then what to do on the fresh view) and act (read, sync after a
 * fence, lease, give back, report dry or units). Between ticks it waits on
 * the channels, so a sold-out broadcast reaches the item table within one
 * poll.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_activity.h"
#include "sk_control_impl.h"
#include "sk_logfmt.h"
#include "sk_member_impl.h"
#include "sk_store_cluster.h"

#define MS INT64_C(1000000)
#define S  INT64_C(1000000000)

#define IDLE_DEFAULT_NS	  (5 * S)
#define TICK_DEFAULT_NS	  (20 * MS)
#define LOW_WATER_S	  1.0 /* lease when fewer units than this many seconds of sales */
#define WANT_QUIET_NS	  S   /* a want is answered by a member that sold nothing this long */
#define DRY_REPEAT_NS	  S   /* a dry report is repeated at most this often */
#define RATE_WEIGHT	  0.2 /* of the newest tick in the smoothed selling rate */
#define FLIP_DELAY_MAX_NS (3600 * S) /* a broadcast's delay above this is not measured */

static void
count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* ------------------------------------------------------------ the loop */

static void
note_redis(struct sk_member *m, int rc)
{
	bool up = rc != -ENOTCONN && rc != -ETIMEDOUT;

	if (!up)
		m->claimed = false; /* the Redis that comes back may have lost it */
	if (atomic_exchange(&m->redis_up, up) != up)
		sk_logf(up ? SK_LOG_NOTICE : SK_LOG_WARN, "cluster", "redis=%s msg=%s err=\"%s\"",
			up ? "up" : "down",
			up ? "leasing again" : "selling what is held, never more",
			up ? "" : sk_cpool_errstr(m->pool));
	if (rc < 0 && up)
		count(&m->errors, 1);
}

/* end_lease - Redis's answer to lease @seq (0 if refused) into the journal. */
static void
end_lease(struct sk_member *m, struct mitem *mi, uint64_t seq, uint64_t granted, int64_t now)
{
	int rc = sk_control_cluster_lease_end(m->ctl, mi->item, seq, granted, now);

	if (rc < 0) {
		sk_logf(SK_LOG_WARN, "lease",
			"item=%" PRIu32 " seq=%" PRIu64 " granted=%" PRIu64
			" msg=\"not recorded: resent later\" err=%s",
			mi->item, seq, granted, strerror(-rc));
		count(&m->errors, 1);
		return;
	}
	if (granted > 0) {
		mi->dry_epoch = 0; /* a grant voids its dry report */
		count(&m->leases_granted, 1);
		count(&m->lease_units, granted);
		mi->last_lease_ns = now;
	}
	sk_logf(SK_LOG_INFO, "lease", "item=%" PRIu32 " seq=%" PRIu64 " granted=%" PRIu64, mi->item,
		seq, granted);
}

/* send_lease - lease @seq of @want units to Redis (first time or resent). */
static void
send_lease(struct sk_member *m, struct mitem *mi, uint64_t seq, uint64_t want, int64_t now)
{
	uint64_t granted = 0;
	int rc = sk_cpool_lease(m->pool, mi->item, seq, want, &granted);

	note_redis(m, rc);
	mi->dirty = true;
	switch (rc) {
	case 0:
		if (granted == 0)
			count(&m->leases_empty, 1);
		end_lease(m, mi, seq, granted, now);
		break;
	case -EAGAIN: /* fenced: not applied; sync first */
		count(&m->leases_refused, 1);
		end_lease(m, mi, seq, 0, now);
		break;
	case -ESTALE:
	case -EEXIST:
		/* Redis knows a later or another op under this number: this
		 * one was never granted (an anomaly, logged; nothing sold). */
		count(&m->anomalies, 1);
		sk_logf(SK_LOG_ERROR, "lease",
			"item=%" PRIu32 " seq=%" PRIu64 " msg=\"Redis knows another op under this "
			"number: closed as 0 units\" err=%s",
			mi->item, seq, strerror(-rc));
		end_lease(m, mi, seq, 0, now);
		break;
	case -ENOENT: /* no pool: init again (and claim), then resend */
		mi->inited = false;
		m->claimed = false;
		break;
	default: /* down or unsure: stays pending, resent next tick */
		break;
	}
}

/* send_giveback - give-back @seq of @units to Redis (first time or resent). */
static void
send_giveback(struct sk_member *m, struct mitem *mi, uint64_t seq, uint64_t units, int64_t now)
{
	int rc = sk_cpool_giveback(m->pool, mi->item, seq, units);

	note_redis(m, rc);
	mi->dirty = true;
	/* FENCED: not applied by this Redis, which a sync may then count as
	 * held; any other failure leaves it unknown (sync_fenced() waits). */
	mi->giveback_fenced = rc == -EAGAIN;
	if (rc == -ERANGE || rc == -ESTALE || rc == -EEXIST) {
		/* Redis cannot take them: they stay off sale (never sold
		 * twice); an anomaly for the operator. */
		count(&m->anomalies, 1);
		sk_logf(SK_LOG_ERROR, "giveback",
			"item=%" PRIu32 " seq=%" PRIu64 " units=%" PRIu64
			" msg=\"Redis cannot take them: ended, the units stay off sale\" err=%s",
			mi->item, seq, units, strerror(-rc));
	} else if (rc == -ENOENT) {
		mi->inited = false;
		m->claimed = false;
		return;
	} else if (rc != 0) {
		return; /* fenced (the sync counts it as held) or down: resent */
	}
	rc = sk_control_cluster_giveback_end(m->ctl, mi->item, seq, now);
	if (rc < 0) {
		count(&m->errors, 1);
		return;
	}
	sk_logf(SK_LOG_INFO, "giveback",
		"item=%" PRIu32 " seq=%" PRIu64 " units=%" PRIu64 " msg=\"back in the pool\"",
		mi->item, seq, units);
	count(&m->givebacks, 1);
	count(&m->giveback_units, units);
}

static void
lease(struct sk_member *m, struct mitem *mi, uint64_t want, int64_t now)
{
	uint64_t seq;
	int rc = sk_control_cluster_lease_begin(m->ctl, mi->item, want, now, &seq);

	if (rc == 0)
		send_lease(m, mi, seq, want, now);
	else if (rc != -EPERM)
		count(&m->errors, 1);
}

static void
giveback(struct sk_member *m, struct mitem *mi, uint64_t units, const char *why, int64_t now)
{
	uint64_t seq;
	int rc = sk_control_cluster_giveback_begin(m->ctl, mi->item, units, now, &seq);

	if (rc == 0) {
		sk_logf(SK_LOG_INFO, "giveback",
			"item=%" PRIu32 " seq=%" PRIu64 " units=%" PRIu64 " reason=%s", mi->item,
			seq, units, why);
		send_giveback(m, mi, seq, units, now);
	} else if (rc != -ERANGE && rc != -EAGAIN) /* the buyers moved: next tick */
		count(&m->errors, 1);
}

static int
member_index(const struct sk_cpool_view *v, const char *me)
{
	for (uint32_t i = 0; i < v->members; i++)
		if (strcmp(v->member[i], me) == 0)
			return (int)i;
	return -1;
}

/* sell_numbers - the item table's unsold units and units sold here. */
static bool
sell_numbers(struct sk_member *m, uint32_t item, uint64_t *unsold, uint64_t *sold)
{
	struct sk_control_item ci;

	if (sk_control_item_get(m->ctl, item, &ci) != 0 || !ci.in_arena)
		return false;
	*unsold = ci.remaining;
	*sold = ci.sold;
	return true;
}

static void
publish_flag(struct sk_member *m, uint32_t item, bool sold_out)
{
	struct sk_item *it = sk_shm_item_find(m->ctl->shm, item);

	if (it != NULL && it->cluster)
		atomic_store_explicit(&it->cluster_sold_out, sold_out ? 1 : 0,
				      memory_order_relaxed);
}

/* read_pool - the pool of @mi into its cached view (for the readers too);
 * false if Redis did not answer it. */
static bool
read_pool(struct sk_member *m, struct mitem *mi, int64_t now)
{
	struct sk_cpool_view v;
	int rc = sk_cpool_view(m->pool, mi->item, &v);

	note_redis(m, rc);
	if (rc == -ENOENT) {
		mi->inited = false;
		m->claimed = false; /* Redis lost the pool: the claim too */
	}
	if (rc != 0)
		return false;
	if (v.fenced && (!mi->view.fenced || mi->view.epoch != v.epoch))
		m->claimed = false; /* a new fence: Redis may have lost the claim */
	pthread_mutex_lock(&m->mu);
	mi->view = v;
	mi->view_ns = now;
	pthread_mutex_unlock(&m->mu);
	mi->dirty = false;
	publish_flag(m, mi->item, v.sold_out);
	sk_member_learn_forgotten(m, mi);
	return true;
}

/*
 * sync_fenced - the pool is fenced: this member's durable word (@t->held),
 * once per epoch, when @word (sk_member_decision.sync_word), then its dry
 * report again (a fence voids them). A forgotten member (LMDB) that the
 * pool still has as a member (Redis came back from before the forget):
 * init again first, which forgets it again.
 */
static void
sync_fenced(struct sk_member *m, struct mitem *mi, const struct sk_member_tick *t, bool word)
{
	const struct sk_cpool_view *v = &mi->view;
	int me = member_index(v, m->conf.redis.member);
	bool unfenced;
	int rc;

	for (uint32_t i = 0; i < v->active; i++) {
		if (sk_member_is_forgotten(mi, v->member[i])) {
			sk_logf(SK_LOG_NOTICE, "sync",
				"item=%" PRIu32 " member=%s msg=\"forgotten, but a member of the "
				"pool again: init forgets it again\"",
				mi->item, v->member[i]);
			mi->inited = false;
			return;
		}
	}
	if (!word || me < 0 || v->synced[me] == v->epoch)
		return;
	rc = sk_cpool_sync(m->pool, mi->item, v->epoch, t->held, &unfenced);
	note_redis(m, rc);
	mi->dirty = true;
	if (rc == 0) {
		uint64_t unsold = 0, sold;

		(void)sell_numbers(m, mi->item, &unsold, &sold);
		rc = sk_cpool_dry(m->pool, mi->item, unsold, NULL, NULL);
		note_redis(m, rc);
		mi->dry_epoch = rc == 0 && unsold == 0 ? v->epoch : 0;
		count(&m->syncs, 1);
		sk_logf(SK_LOG_NOTICE, "sync",
			"item=%" PRIu32 " epoch=%" PRIu64 " held=%" PRIu64 " rebuilt=%s", mi->item,
			v->epoch, t->held, unfenced ? "true" : "false");
	} else if (rc == -EOVERFLOW) {
		count(&m->anomalies, 1);
		sk_logf(SK_LOG_CRIT, "sync",
			"item=%" PRIu32 " msg=\"the members hold more than the total: the pool "
			"stays fenced (docs/cluster.md)\"",
			mi->item);
	}
}

/* over_at - the sale of @a is over here (closed, or its end passed). */
static bool
over_at(const struct sk_store_activity *a, int64_t wall)
{
	return a->closed_ns != 0 || wall >= a->end_ns;
}

/*
 * settle - @mi's pool made in Redis (once), and the journal's pending op
 * sent again; @j: the journal after. False when the tick ends here (Redis
 * or the store failed; retried at the next tick).
 */
static bool
settle(struct sk_member *m, struct mitem *mi, const struct sk_store_activity *a,
       struct sk_store_cluster *j, int64_t now)
{
	int rc;

	if (!mi->inited) {
		rc = sk_member_init_pool(m, mi, a->total);
		note_redis(m, rc);
		if (rc == -EEXIST && !mi->total_conflict_logged) {
			sk_logf(SK_LOG_ERROR, "cluster",
				"item=%" PRIu32 " total=%" PRIu64
				" msg=\"Redis holds another total: "
				"the members disagree on the sale; not leasing\"",
				a->item, a->total);
			mi->total_conflict_logged = true;
		}
		if (rc != 0)
			return false;
		mi->inited = true;
		mi->dirty = true;
	}
	if (sk_store_cluster_get(m->ctl->store, a->item, j) != 0)
		return false;
	if (j->pending_kind == SK_STORE_CLUSTER_NONE)
		return true;
	if (j->pending_kind == SK_STORE_CLUSTER_LEASE)
		send_lease(m, mi, j->pending_seq, j->pending_units, now);
	else
		send_giveback(m, mi, j->pending_seq, j->pending_units, now);
	return sk_store_cluster_get(m->ctl->store, a->item, j) == 0;
}

/*
 * measure - what this tick knows of item @a before any call: the item
 * table's numbers (the smoothed selling rate moves on), the demand (@refused:
 * the dataplane's "restocking" answers so far), the journal @j and the last
 * view's age. No call to Redis.
 */
static void
measure(struct sk_member *m, struct mitem *mi, const struct sk_store_activity *a,
	const struct sk_store_cluster *j, uint64_t unsold_durable, bool stopping, int64_t now,
	struct sk_member_tick *t, uint64_t *refused)
{
	uint64_t unsold = 0, sold = 0;
	bool in_table = sell_numbers(m, a->item, &unsold, &sold);
	const struct sk_item *it = sk_shm_item_find(m->ctl->shm, a->item);

	*refused = it != NULL ? sk_stock_restocking(it) : 0;
	if (in_table && sold >= mi->sold_prev && mi->prev_ns != 0 && now > mi->prev_ns) {
		double inst =
			(double)(sold - mi->sold_prev) * (double)S / (double)(now - mi->prev_ns);
		double rate = (1 - RATE_WEIGHT) * mi->rate + RATE_WEIGHT * inst;

		pthread_mutex_lock(&m->mu); /* sk_member_view() reads it */
		mi->rate = rate < 0.01 ? 0 : rate;
		pthread_mutex_unlock(&m->mu);
	}
	if (in_table) { /* out of the table, sold reads 0: keep the last figures */
		if (sold > mi->sold_prev)
			mi->last_sale_ns = now;
		mi->sold_prev = sold;
		mi->prev_ns = now;
	}

	int64_t wall = sk_clock_ns(CLOCK_REALTIME);
	/* Idle: open for the idle time, and neither sold nor leased in it. */
	int64_t busy = mi->last_sale_ns > mi->last_lease_ns ? mi->last_sale_ns : mi->last_lease_ns;
	double low = mi->rate * LOW_WATER_S;
	/* Demand: buyers were told "restocking" here since it was last spent. */
	bool demand = *refused != mi->restocking_prev;

	*t = (struct sk_member_tick){
		.unsold = unsold,
		.unsold_durable = unsold_durable,
		.held = sk_store_cluster_held(j),
		.dry_epoch = mi->dry_epoch,
		.wall_ms = wall / MS,
		.view_age_ns = mi->view_ns == 0 ? -1 : now - mi->view_ns,
		.rate = mi->rate,
		.nmembers = m->conf.nmembers,
		.over = over_at(a, wall),
		.stopping = stopping,
		.claimed = m->claimed,
		.idle = wall - a->start_ns >= m->conf.idle_ns &&
			(busy == 0 || now - busy >= m->conf.idle_ns),
		.low_water = (double)unsold < (low < 1 ? 1 : low),
		.ask = j->ops == 0 || demand || mi->rate > 0,
		.demand = demand,
		.dry_due = mi->dry_ns == 0 || now - mi->dry_ns >= DRY_REPEAT_NS,
		.quiet = now - mi->last_sale_ns >= WANT_QUIET_NS,
		.pending = j->pending_kind != SK_STORE_CLUSTER_NONE,
		.pending_fenced =
			j->pending_kind == SK_STORE_CLUSTER_GIVEBACK && mi->giveback_fenced,
		.dirty = mi->dirty,
	};
	t->selling = in_table && !t->over && a->paused_ns == 0;
}

/* act - decision @d of tick @t for @mi, on its view; @refused: as
 * measure(). True when the item's slot may go (sk_member_decision.done). */
static bool
act(struct sk_member *m, struct mitem *mi, const struct sk_member_tick *t,
    const struct sk_member_decision *d, uint64_t refused, int64_t now)
{
	const struct sk_cpool_view *v = &mi->view;
	bool flag = false, reported = false;
	int rc;

	if (d->sync)
		sync_fenced(m, mi, t, d->sync_word);
	if (d->spend_demand)
		mi->restocking_prev = refused;
	switch (d->act) {
	case SK_MEMBER_GIVE_ALL:
	case SK_MEMBER_GIVE_HALF:
		giveback(m, mi, d->units, d->why, now);
		break;
	case SK_MEMBER_LEASE:
		if (v->free == 0)
			mi->dry_ns = now;
		lease(m, mi, d->units, now);
		break;
	case SK_MEMBER_REPORT_DRY:
		rc = sk_cpool_dry(m->pool, mi->item, 0, &flag, NULL);
		note_redis(m, rc);
		mi->dry_ns = now;
		mi->dirty = true;
		if (rc == 0) {
			mi->dry_epoch = v->epoch;
			publish_flag(m, mi->item, flag);
			reported = true;
		}
		break;
	case SK_MEMBER_REPORT_UNITS:
		note_redis(m, sk_cpool_dry(m->pool, mi->item, d->units, NULL, NULL));
		mi->dry_ns = 0;
		mi->dirty = true;
		break;
	case SK_MEMBER_REPORT_OVER:
		rc = sk_cpool_dry(m->pool, mi->item, 0, NULL, NULL);
		note_redis(m, rc);
		if (rc == 0) {
			mi->dry_epoch = v->epoch;
			reported = true;
		}
		break;
	case SK_MEMBER_NOTHING:
		break;
	}
	return d->done == SK_MEMBER_DONE || (d->done == SK_MEMBER_DONE_IF_REPORTED && reported);
}

/*
 * item_tick - one tick of item @a (@unsold_durable: its units that no live
 * order holds, from the store): settle, measure, decide, act. True when the
 * sale is over here and this member owes the pool nothing; the item then
 * needs no slot until its pool says something.
 */
static bool
item_tick(struct sk_member *m, struct mitem *mi, const struct sk_store_activity *a,
	  uint64_t unsold_durable, bool stopping, int64_t now)
{
	struct sk_store_cluster j;
	struct sk_member_tick t;
	struct sk_member_decision d;
	uint64_t refused;

	if (!settle(m, mi, a, &j, now))
		return false;
	measure(m, mi, a, &j, unsold_durable, stopping, now, &t, &refused);
	d = sk_member_decide(&t, &mi->view, false);
	if (d.read) {
		if (!read_pool(m, mi, now))
			return false;
		d = sk_member_decide(&t, &mi->view, true);
	}
	return act(m, mi, &t, &d, refused, now);
}

/*
 * The activities of one tick: the cluster ones, but those over here that
 * are done (sk_member_done_has(): nothing to give back or report) and have
 * no unsold unit; open ones first when more than SK_MEMBER_ITEMS_MAX.
 */
struct tick_list {
	struct sk_member *m;
	int64_t wall;
	struct sk_store_activity a[SK_MEMBER_ITEMS_MAX];
	uint64_t unsold[SK_MEMBER_ITEMS_MAX]; /* durable: units no live order holds */
	unsigned n;
};

static int
collect(const struct sk_store_activity *a, const struct sk_store_ledger *l, void *arg)
{
	struct tick_list *t = arg;
	uint64_t units = sk_store_activity_units(a), live = sk_store_ledger_live(l);
	uint64_t unsold = units > live ? units - live : 0;
	bool over = over_at(a, t->wall);
	unsigned at = t->n;

	if (!a->cluster || (over && unsold == 0 && sk_member_done_has(t->m, a->item)))
		return 0;
	if (t->n == SK_MEMBER_ITEMS_MAX) {
		/* Full: an open sale takes the place of one that is over. */
		for (at = 0; !over && at < t->n && !over_at(&t->a[at], t->wall); at++)
			;
		if (over || at == t->n)
			return 0;
	} else {
		t->n++;
	}
	t->a[at] = *a;
	t->unsold[at] = unsold;
	return 0;
}

/* listed - @item is in @t. */
static bool
listed(const struct tick_list *t, uint32_t item)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->a[i].item == item)
			return true;
	return false;
}

/* collect_all - @t filled for this tick; false if the store failed. */
static bool
collect_all(struct sk_member *m, struct tick_list *t)
{
	t->m = m;
	t->wall = sk_clock_ns(CLOCK_REALTIME);
	t->n = 0;
	return sk_store_activity_foreach(m->ctl->store, collect, t) >= 0;
}

static void
tick(struct sk_member *m, bool stopping)
{
	static struct tick_list t; /* the loop's thread only */
	int64_t now = sk_clock_ns(CLOCK_MONOTONIC);

	if (!stopping) {
		int rc = sk_member_claim_tick(m, now);

		note_redis(m, rc == -EEXIST ? 0 : rc);
	}
	if (!collect_all(m, &t))
		return;
	/* The slots of items not listed (done, or gone) are free again. */
	for (unsigned i = 0; i < SK_MEMBER_ITEMS_MAX; i++)
		if (m->items[i].item != 0 && !listed(&t, m->items[i].item))
			sk_member_slot_free(m, &m->items[i]);
	for (unsigned i = 0; i < t.n; i++) {
		pthread_mutex_lock(&m->mu);
		struct mitem *mi = sk_member_slot(m, t.a[i].item, true);
		pthread_mutex_unlock(&m->mu);
		if (mi == NULL || !item_tick(m, mi, &t.a[i], t.unsold[i], stopping, now))
			continue;
		if (sk_member_done_add(m, mi->item))
			sk_member_slot_free(m, mi);
	}
}

/* flip_delay - a sold-out broadcast's delay from Redis's flip (its clock,
 * at_us) to the item table's flag: into the histogram and the log. */
static void
flip_delay(struct sk_member *m, const struct sk_cpool_event *ev)
{
	int64_t d = sk_clock_ns(CLOCK_REALTIME) - ev->at_us * 1000;
	unsigned b = 0;

	if (d < 0)
		d = 0; /* clocks a hair apart (another host) */
	if (d > FLIP_DELAY_MAX_NS)
		return; /* not a clock of this sale: a stranger's message */
	while (b < FLIP_BUCKETS - 1 && (uint64_t)d > sk_member_flip_bounds_ns[b])
		b++;
	count(&m->flip_hist[b], 1);
	count(&m->flip_sum_ns, (uint64_t)d);
	sk_logf(SK_LOG_INFO, "broadcast",
		"item=%" PRIu32 " sold_out=%s version=%" PRIu64 " delay_us=%" PRId64, ev->item,
		ev->sold_out ? "true" : "false", ev->version, d / 1000);
}

/* on_message - a message of the channels (the loop's thread): a flip goes
 * to the item table at once; either kind has the pool read at the next
 * tick. */
static void
on_message(const struct sk_cpool_event *ev, void *arg)
{
	struct sk_member *m = arg;
	struct mitem *mi = sk_member_slot(m, ev->item, false); /* the loop writes items[] */

	if (mi != NULL)
		mi->dirty = true;
	else
		sk_member_done_del(m, ev->item); /* its pool moved: followed again */
	if (ev->kind != SK_CPOOL_EV_FLAG)
		return;
	publish_flag(m, ev->item, ev->sold_out);
	count(&m->broadcasts, 1);
	if (ev->at_us > 0)
		flip_delay(m, ev);
}

/* view_all_next - every item's pool read at the next tick (messages may
 * have been lost: the subscriber reconnected). */
static void
view_all_next(struct sk_member *m)
{
	for (unsigned i = 0; i < SK_MEMBER_ITEMS_MAX; i++)
		m->items[i].dirty = true;
	m->ndone = 0; /* a fence of theirs may be among the lost */
}

/* held_anywhere - some cluster item still holds unsold units or a pending op. */
static bool
held_anywhere(struct sk_member *m)
{
	static struct tick_list t;
	struct sk_store_cluster j;
	uint64_t unsold, sold;

	if (!collect_all(m, &t))
		return false;
	for (unsigned i = 0; i < t.n; i++) {
		if (sk_store_cluster_get(m->ctl->store, t.a[i].item, &j) == 0 &&
		    j.pending_kind != SK_STORE_CLUSTER_NONE)
			return true;
		if (sell_numbers(m, t.a[i].item, &unsold, &sold) && unsold > 0)
			return true;
	}
	return false;
}

static void *
run(void *arg)
{
	struct sk_member *m = arg;
	int poll_ms = (int)(m->conf.tick_ns / MS);

	while (!atomic_load(&m->stop)) {
		bool resub = false;
		int rc =
			sk_cpool_sub_poll(m->sub, poll_ms > 0 ? poll_ms : 1, on_message, m, &resub);

		if (resub)
			view_all_next(m);
		if (rc < 0) {
			/* Down: the tick below finds out too; do not spin. The
			 * messages are lost meanwhile: every pool is read. */
			view_all_next(m);
			struct timespec ts = {0, m->conf.tick_ns};
			nanosleep(&ts, NULL);
		}
		tick(m, false);
		atomic_store_explicit(&m->redis_calls, sk_cpool_calls(m->pool),
				      memory_order_relaxed);
	}
	/* Shutting down: every unsold unit back, as far as Redis answers. */
	while (sk_clock_ns(CLOCK_MONOTONIC) < m->stop_deadline_ns && held_anywhere(m)) {
		tick(m, true);
		struct timespec ts = {0, m->conf.tick_ns};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* --------------------------------------------------------------- public */

int
sk_member_start(struct sk_member **out, struct sk_control *ctl, const struct sk_member_conf *conf)
{
	struct sk_member *m;
	bool found = false;
	int rc;

	if (conf->nmembers == 0 || conf->nmembers > SK_CPOOL_MEMBERS_MAX ||
	    conf->redis.member == NULL || !sk_cpool_member_valid(conf->redis.member))
		return -EINVAL;
	for (uint32_t i = 0; i < conf->nmembers; i++)
		found |= strcmp(conf->members[i], conf->redis.member) == 0;
	if (!found)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->ctl = ctl;
	m->conf = *conf;
	if (m->conf.idle_ns <= 0)
		m->conf.idle_ns = IDLE_DEFAULT_NS;
	if (m->conf.tick_ns <= 0)
		m->conf.tick_ns = TICK_DEFAULT_NS;
	rc = sk_cpool_open(&m->pool, &m->conf.redis);
	if (rc == 0)
		rc = sk_cpool_sub_open(&m->sub, &m->conf.redis);
	if (rc == 0)
		rc = -pthread_mutex_init(&m->mu, NULL);
	if (rc != 0) {
		sk_cpool_sub_close(m->sub);
		sk_cpool_close(m->pool);
		free(m);
		return rc;
	}
	sk_control_cluster_enable(ctl);
	rc = pthread_create(&m->thread, NULL, run, m);
	if (rc != 0) {
		pthread_mutex_destroy(&m->mu);
		sk_cpool_sub_close(m->sub);
		sk_cpool_close(m->pool);
		free(m);
		return -rc;
	}
	m->thread_ok = true;
	ctl->member = m;
	*out = m;
	return 0;
}

void
sk_member_stop(struct sk_member *m, int64_t giveback_ns)
{
	if (m == NULL)
		return;
	m->ctl->member = NULL; /* the admin API has stopped */
	m->stop_deadline_ns = sk_clock_ns(CLOCK_MONOTONIC) + giveback_ns;
	atomic_store(&m->stop, true);
	if (m->thread_ok)
		pthread_join(m->thread, NULL);
	pthread_mutex_destroy(&m->mu);
	sk_cpool_sub_close(m->sub);
	sk_cpool_close(m->pool);
	free(m);
}
