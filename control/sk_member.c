/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cluster member's loop (sk_member.h, docs/cluster.md): per tick, for
 * every cluster activity of the store, resolve the journal's pending op,
 * read the Redis pool, sync after a fence, then lease, give back or report
 * dry. Between ticks it waits on the sold-out channel, so a broadcast
 * reaches the item table within one poll.
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
#include "sk_member.h"
#include "sk_prom.h"
#include "sk_store_cluster.h"

#define MS INT64_C(1000000)
#define S  INT64_C(1000000000)

#define IDLE_DEFAULT_NS (5 * S)
#define TICK_DEFAULT_NS (20 * MS)
#define LOW_WATER_S	1.0  /* lease when fewer units than this many seconds of sales */
#define LEASE_S		2.0  /* and ask for this many seconds of sales */
#define WANT_RECENT_MS	2000 /* a "dry, give back" call this recent is answered */
#define WANT_QUIET_NS	S    /* ... by a member that sold nothing for this long */
#define DRY_REPEAT_NS	S    /* a dry report is repeated at most this often */
#define RATE_WEIGHT	0.2  /* of the newest tick in the smoothed selling rate */

/* One cluster item the loop follows. */
struct mitem {
	uint32_t item; /* 0: free slot */
	bool inited;   /* sk_cpool_init() succeeded since the last -ENOENT */
	bool total_conflict_logged;
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
};

static void
count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* ------------------------------------------------------------- parsing */

int
sk_member_parse_redis(char *s, struct sk_cpool_config *c)
{
	if (strncmp(s, "unix:", 5) == 0) {
		if (s[5] == '\0')
			return -EINVAL;
		c->unix_path = s + 5;
		c->host = NULL;
		return 0;
	}
	char *colon = strrchr(s, ':'), *end;
	if (colon == NULL || colon == s || colon[1] == '\0')
		return -EINVAL;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port == 0 || port > 65535)
		return -EINVAL;
	*colon = '\0';
	c->host = s;
	c->port = (int)port;
	c->unix_path = NULL;
	return 0;
}

int
sk_member_parse_members(char *s, struct sk_member_conf *conf)
{
	char *save = NULL;

	conf->nmembers = 0;
	for (char *id = strtok_r(s, ",", &save); id != NULL; id = strtok_r(NULL, ",", &save)) {
		if (!sk_cpool_member_valid(id))
			return -EINVAL;
		for (uint32_t i = 0; i < conf->nmembers; i++)
			if (strcmp(conf->members[i], id) == 0)
				return -EINVAL;
		if (conf->nmembers == SK_CPOOL_MEMBERS_MAX)
			return -E2BIG;
		conf->members[conf->nmembers++] = id;
	}
	return conf->nmembers > 0 ? 0 : -EINVAL;
}

/* ------------------------------------------------------------ the loop */

static void
note_redis(struct sk_member *m, int rc)
{
	bool up = rc != -ENOTCONN && rc != -ETIMEDOUT;

	if (atomic_exchange(&m->redis_up, up) != up)
		sk_logf(up ? SK_LOG_NOTICE : SK_LOG_WARN, "cluster", "redis=%s msg=%s",
			up ? "up" : "down",
			up ? "leasing again" : "selling what is held, never more");
	if (rc < 0 && up)
		count(&m->errors, 1);
}

static struct mitem *
slot_of(struct sk_member *m, uint32_t item, bool add)
{
	struct mitem *free_slot = NULL;

	for (unsigned i = 0; i < SK_MEMBER_ITEMS_MAX; i++) {
		if (m->items[i].item == item)
			return &m->items[i];
		if (m->items[i].item == 0 && free_slot == NULL)
			free_slot = &m->items[i];
	}
	if (!add || free_slot == NULL)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->item = item;
	return free_slot;
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
	case -ENOENT: /* no pool: init again, then resend */
		mi->inited = false;
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

/* lease_size - how many units to ask for, from the selling rate. */
static uint64_t
lease_size(const struct sk_member *m, const struct mitem *mi, const struct sk_cpool_view *v)
{
	uint64_t cap = v->free / (2 * (uint64_t)m->conf.nmembers);
	uint64_t want = mi->rate > 0 ? (uint64_t)(mi->rate * LEASE_S) + 1 : cap;

	if (cap < 1)
		cap = 1;
	return want < 1 ? 1 : want > cap ? cap : want;
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

static void
item_tick(struct sk_member *m, struct mitem *mi, const struct sk_store_activity *a, bool stopping,
	  int64_t now)
{
	struct sk_store_cluster j;
	struct sk_cpool_view v;
	int rc;

	if (!mi->inited) {
		rc = sk_cpool_init(m->pool, a->item, a->total, m->conf.members, m->conf.nmembers);
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
			return;
		mi->inited = true;
	}
	if (sk_store_cluster_get(m->ctl->store, a->item, &j) != 0)
		return;
	if (j.pending_kind == SK_STORE_CLUSTER_LEASE)
		send_lease(m, mi, j.pending_seq, j.pending_units, now);
	else if (j.pending_kind == SK_STORE_CLUSTER_GIVEBACK)
		send_giveback(m, mi, j.pending_seq, j.pending_units, now);
	if (j.pending_kind != SK_STORE_CLUSTER_NONE &&
	    sk_store_cluster_get(m->ctl->store, a->item, &j) != 0)
		return;

	rc = sk_cpool_view(m->pool, a->item, &v);
	note_redis(m, rc);
	if (rc == -ENOENT)
		mi->inited = false;
	if (rc != 0)
		return;
	pthread_mutex_lock(&m->mu);
	mi->view = v;
	mi->view_ns = now;
	pthread_mutex_unlock(&m->mu);
	publish_flag(m, a->item, v.sold_out);

	if (v.fenced) {
		int me = member_index(&v, m->conf.redis.member);
		bool unfenced;

		if (j.pending_kind == SK_STORE_CLUSTER_LEASE || me < 0 || v.synced[me] == v.epoch)
			return;
		rc = sk_cpool_sync(m->pool, a->item, v.epoch, sk_store_cluster_held(&j), &unfenced);
		note_redis(m, rc);
		if (rc == 0) {
			uint64_t unsold = 0, sold;

			/* A fence voids the dry reports: this member's again. */
			(void)sell_numbers(m, a->item, &unsold, &sold);
			note_redis(m, sk_cpool_dry(m->pool, a->item, unsold, NULL, NULL));
			count(&m->syncs, 1);
			sk_logf(SK_LOG_NOTICE, "sync",
				"item=%" PRIu32 " epoch=%" PRIu64 " held=%" PRIu64 " rebuilt=%s",
				a->item, v.epoch, sk_store_cluster_held(&j),
				unfenced ? "true" : "false");
		} else if (rc == -EOVERFLOW) {
			count(&m->anomalies, 1);
			sk_logf(SK_LOG_CRIT, "sync",
				"item=%" PRIu32
				" msg=\"the members hold more than the total: the pool "
				"stays fenced (docs/cluster.md)\"",
				a->item);
		}
		return;
	}
	if (j.pending_kind != SK_STORE_CLUSTER_NONE)
		return; /* a give-back kept while fenced: resent next tick */

	uint64_t unsold = 0, sold = 0;
	bool in_table = sell_numbers(m, a->item, &unsold, &sold);
	/* Demand: buyers were told "restocking" here since the last tick. */
	const struct sk_item *it = sk_shm_item_find(m->ctl->shm, a->item);
	uint64_t refused = it != NULL ? sk_stock_restocking(it) : 0;
	bool demand = refused != mi->restocking_prev;
	mi->restocking_prev = refused;
	if (mi->prev_ns != 0 && now > mi->prev_ns) {
		double inst =
			(double)(sold - mi->sold_prev) * (double)S / (double)(now - mi->prev_ns);
		mi->rate = (1 - RATE_WEIGHT) * mi->rate + RATE_WEIGHT * inst;
		if (mi->rate < 0.01)
			mi->rate = 0;
	}
	if (sold > mi->sold_prev)
		mi->last_sale_ns = now;
	mi->sold_prev = sold;
	mi->prev_ns = now;

	int64_t wall = sk_clock_ns(CLOCK_REALTIME);
	bool selling = in_table && a->closed_ns == 0 && a->paused_ns == 0 && wall < a->end_ns;
	/* Idle: open for the idle time, and neither sold nor leased in it. */
	int64_t busy = mi->last_sale_ns > mi->last_lease_ns ? mi->last_sale_ns : mi->last_lease_ns;
	bool idle = wall - a->start_ns >= m->conf.idle_ns &&
		    (busy == 0 || now - busy >= m->conf.idle_ns);
	bool wanted = v.want_ms != 0 && wall / MS - v.want_ms < WANT_RECENT_MS &&
		      now - mi->last_sale_ns >= WANT_QUIET_NS;
	double low = mi->rate * LOW_WATER_S;
	bool low_water = (double)unsold < (low < 1 ? 1 : low);
	/* Leases: the first at preheat; later ones while it sells, or while
	 * buyers are told "restocking". An empty pool is asked again at most
	 * every DRY_REPEAT_NS (the ask tells the others to give back). */
	bool ask = j.ops == 0 || demand || mi->rate > 0;
	bool pool_ok =
		v.free > 0 || (demand && (mi->dry_ns == 0 || now - mi->dry_ns >= DRY_REPEAT_NS));

	if (unsold > 0 && (stopping || !selling || idle)) {
		giveback(m, mi, unsold,
			 stopping   ? "shutting down"
			 : !selling ? "not selling here"
				    : "idle",
			 now);
	} else if (unsold >= 2 && wanted) {
		giveback(m, mi, unsold / 2, "another member is dry", now);
	} else if (selling && !stopping && low_water && ask && pool_ok) {
		if (v.free == 0)
			mi->dry_ns = now;
		lease(m, mi, lease_size(m, mi, &v), now);
	} else if (unsold == 0 && v.free == 0 && !v.sold_out &&
		   (mi->dry_ns == 0 || now - mi->dry_ns >= DRY_REPEAT_NS)) {
		bool flag = false;

		rc = sk_cpool_dry(m->pool, a->item, 0, &flag, NULL);
		note_redis(m, rc);
		mi->dry_ns = now;
		if (rc == 0)
			publish_flag(m, a->item, flag);
	} else if (unsold > 0 && v.sold_out) {
		rc = sk_cpool_dry(m->pool, a->item, unsold, NULL, NULL);
		note_redis(m, rc);
		mi->dry_ns = 0;
	}
}

/* The activities of one tick: the cluster ones, open or still holding. */
struct tick_list {
	struct sk_store_activity a[SK_MEMBER_ITEMS_MAX];
	unsigned n;
};

static int
collect(const struct sk_store_activity *a, const struct sk_store_ledger *l, void *arg)
{
	struct tick_list *t = arg;

	(void)l;
	if (!a->cluster || t->n == SK_MEMBER_ITEMS_MAX)
		return 0;
	t->a[t->n++] = *a;
	return 0;
}

static void
tick(struct sk_member *m, bool stopping)
{
	static struct tick_list t; /* the loop's thread only */
	int64_t now = sk_clock_ns(CLOCK_MONOTONIC);

	t.n = 0;
	if (sk_store_activity_foreach(m->ctl->store, collect, &t) < 0)
		return;
	for (unsigned i = 0; i < t.n; i++) {
		pthread_mutex_lock(&m->mu);
		struct mitem *mi = slot_of(m, t.a[i].item, true);
		pthread_mutex_unlock(&m->mu);
		if (mi != NULL)
			item_tick(m, mi, &t.a[i], stopping, now);
	}
}

static void
on_broadcast(const struct sk_cpool_event *ev, void *arg)
{
	struct sk_member *m = arg;

	count(&m->broadcasts, 1);
	publish_flag(m, ev->item, ev->sold_out);
}

/* held_anywhere - some cluster item still holds unsold units or a pending op. */
static bool
held_anywhere(struct sk_member *m)
{
	static struct tick_list t;
	struct sk_store_cluster j;
	uint64_t unsold, sold;

	t.n = 0;
	if (sk_store_activity_foreach(m->ctl->store, collect, &t) < 0)
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
		int rc = sk_cpool_sub_poll(m->sub, poll_ms > 0 ? poll_ms : 1, on_broadcast, m,
					   &resub);

		if (rc < 0) {
			/* Down: the tick below finds out too; do not spin. */
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
	struct mitem *mi = slot_of(m, item, false);
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
