/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's handle (see sk_control.h): attach, the repair at
 * attach, close, the heartbeat, and the read-only views behind the admin
 * API and /metrics. The rest of sk_control.h is in sk_drain.c (the drain),
 * sk_payment.c (deadlines and pay), sk_control_metrics.c (stats and
 * metrics) and sk_arena_sync.c (the arena moves they share); activities in
 * sk_activity.c.
 *
 * Sections: heartbeat, attach and repair, views.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_buy.h"
#include "sk_control.h"
#include "sk_control_impl.h"
#include "sk_live_ctl.h"
#include "sk_reserve_ctl.h"

void
sk_control_heartbeat(struct sk_control *ctl, int64_t now_ns)
{
	atomic_store_explicit(&ctl->shm->progress[0].heartbeat_ns, (uint64_t)now_ns,
			      memory_order_relaxed);
}

/* ------------------------------------------------------- attach and repair */

/*
 * reset_heads - undo the peek of a control plane that died between
 * dequeue_start and dequeue_finish: its consumer head is ahead of the
 * tail, and a new peek would start at the head and skip those records.
 * finish(0) sets head = tail (rte_ring_peek_elem_pvt.h). Correct only
 * because this process is the rings' single consumer: no other consumer
 * can own the gap between head and tail.
 */
static void
reset_heads(struct sk_control *ctl)
{
	for (unsigned l = 0; l < ctl->nrings; l++)
		rte_ring_dequeue_elem_finish(ctl->ring[l], 0);
}

/*
 * repair - orders still in the status table below their lcore's settled id
 * whose status says confirmed or paid are checked against the store: one
 * cancelled, paid or refunded there by a predecessor that died before the
 * arena move is brought in line (units returned for a cancel; for a refund
 * only the status: how many of its units the arena took back is not known,
 * the next dataplane rebuild counts them). Orders at or above settled are
 * still in the rings and are handled by the next drain (replay). Orders
 * whose slot was reused are settled and live in the store only.
 */
static int
repair(struct sk_control *ctl)
{
	for (unsigned l = 0; l < ctl->nrings; l++) {
		const struct sk_status_window *w = &ctl->status.win[l];
		uint64_t settled = sk_shm_settled(ctl->shm, l);
		uint64_t next = atomic_load(&w->next);

		for (uint64_t id = atomic_load(&w->oldest); id < settled && id < next;
		     id = sk_status_window_step(next, w->seq_bits, id)) {
			unsigned nl = 0;

			unsigned st = sk_status_get(&ctl->status, id);
			if (st != SK_ORDER_CONFIRMED && st != SK_ORDER_PAID)
				continue;
			int rc = sk_store_order_get(ctl->store, id, ctl->lines, SK_STORE_MAX_LINES,
						    &nl);
			if (rc == -ENOENT) {
				stat_add(&ctl->st.anomalies, 1);
				continue;
			}
			if (rc != 0)
				return rc;
			if (ctl->lines[0].state != st && ctl_sync_from_store(ctl, ctl->lines, nl))
				stat_add(&ctl->st.repaired, 1);
		}
	}
	return 0;
}

/* ctl_free - free @ctl and whatever of it was set up. */
static void
ctl_free(struct sk_control *ctl)
{
	if (ctl == NULL)
		return;
	ctl_retention_free(ctl);
	sk_store_close(ctl->store);
	ctl_reconcile_free(ctl);
	if (ctl->mutex_ok)
		pthread_mutex_destroy(&ctl->wlock);
	if (ctl->live_lock_ok)
		pthread_mutex_destroy(&ctl->live_lock);
	if (ctl->reserve_lock_ok)
		pthread_mutex_destroy(&ctl->reserve_lock);
	free(ctl->buf);
	free(ctl->cbuf);
	free(ctl->outcome);
	free(ctl->exp);
	free(ctl);
}

int
sk_control_init(struct sk_control **out, struct sk_shm *shm, struct rte_ring *const *rings,
		unsigned nrings, const struct sk_control_conf *conf, char *err, size_t errlen)
{
	char serr[SK_STORE_ERR_MAX];
	struct sk_control *ctl = NULL;
	uint32_t batch;
	int rc = -EINVAL;

	if (out == NULL || shm == NULL || rings == NULL || conf == NULL ||
	    conf->store_dir == NULL || conf->store_dir[0] == '\0') {
		sk_set_err(err, errlen, "control: missing arena, rings or store directory");
		goto err;
	}
	if (nrings != shm->nlcores || nrings == 0 || nrings > SK_MAX_LCORES) {
		sk_set_err(err, errlen, "control: %u rings for an arena of %u lcores", nrings,
			   shm->nlcores);
		goto err;
	}
	for (unsigned l = 0; l < nrings; l++)
		if (rings[l] == NULL || rte_ring_get_cons_sync_type(rings[l]) != RTE_RING_SYNC_ST) {
			sk_set_err(err, errlen,
				   "control: ring of lcore %u missing or not single-consumer", l);
			goto err;
		}
	if (conf->map_grow.grow_at_pct > 99) {
		sk_set_err(err, errlen, "control: map_grow.grow_at_pct %" PRIu32 " is above 99",
			   conf->map_grow.grow_at_pct);
		goto err;
	}
	if (shm->member != conf->member) {
		sk_set_err(err, errlen,
			   "control: the dataplane mints order ids as cluster member %" PRIu32
			   " ([cluster] member_id), this control plane is member %" PRIu32
			   " (0: standalone; else the position of --cluster-member in "
			   "--cluster-members): make them match",
			   shm->member, conf->member);
		rc = -EXDEV;
		goto err;
	}
	batch = conf->batch_max ? conf->batch_max : SK_CONTROL_BATCH_MAX_DEFAULT;
	if (batch > (UINT32_C(1) << 24) || conf->batch_linger_ns < 0) {
		sk_set_err(err, errlen,
			   "control: batch of %" PRIu32 " records or linger out of range", batch);
		goto err;
	}

	rc = -ENOMEM;
	ctl = calloc(1, sizeof(*ctl));
	if (ctl == NULL)
		goto err;
	ctl->shm = shm;
	sk_shm_status(shm, &ctl->status);
	ctl->nrings = nrings;
	memcpy(ctl->ring, rings, nrings * sizeof(rings[0]));
	ctl->quota = batch / nrings;
	if (ctl->quota < SK_BUY_MAX_LINES)
		ctl->quota = SK_BUY_MAX_LINES;
	ctl->pay_timeout_ns = conf->pay_timeout_ns == 0	 ? SK_CONTROL_PAY_TIMEOUT_DEFAULT_NS
			      : conf->pay_timeout_ns < 0 ? 0
							 : conf->pay_timeout_ns;
	ctl->linger_ns = conf->batch_linger_ns;
	ctl->expire_max = conf->expire_max ? conf->expire_max : SK_CONTROL_EXPIRE_MAX_DEFAULT;
	size_t nbuf = (size_t)ctl->quota * nrings;
	ctl->buf = calloc(nbuf, sizeof(*ctl->buf));
	ctl->cbuf = calloc(nbuf, sizeof(*ctl->cbuf));
	ctl->outcome = calloc(nbuf, 1);
	ctl->exp = calloc(ctl->expire_max, sizeof(*ctl->exp));
	if (ctl->buf == NULL || ctl->cbuf == NULL || ctl->outcome == NULL || ctl->exp == NULL ||
	    pthread_mutex_init(&ctl->wlock, NULL) != 0) {
		sk_set_err(err, errlen, "control: out of memory");
		goto err;
	}
	ctl->mutex_ok = true;
	if (ctl_reconcile_init(ctl) != 0 || ctl_retention_init(ctl, conf) != 0) {
		sk_set_err(err, errlen, "control: out of memory");
		goto err;
	}

	struct sk_store_conf sc = {.map_size = conf->store_map_size,
				   .flags = conf->store_flags,
				   .requests_ttl_ns = conf->requests_ttl_ns};
	rc = sk_store_open(&ctl->store, conf->store_dir, &sc, serr, sizeof(serr));
	if (rc != 0) {
		sk_set_err(err, errlen, "%s", serr);
		goto err;
	}

	ctl->map_pol = conf->map_grow;
	reset_heads(ctl);
	lock(ctl);
	rc = repair(ctl);
	/* A store reopened with its data near the configured map grows now. */
	if (rc == 0)
		(void)ctl_map_grow(ctl, false);
	unlock(ctl);
	if (rc != 0) {
		sk_set_err(err, errlen, "control: repair at attach: %s", strerror(-rc));
		goto err;
	}
	*out = ctl;
	return 0;

err:
	ctl_free(ctl);
	return rc;
}

int
sk_control_attach(struct sk_control **out, const struct sk_control_conf *conf, char *err,
		  size_t errlen)
{
	struct rte_ring *rings[SK_MAX_LCORES];
	const struct rte_memzone *mz = rte_memzone_lookup(SK_SHM_MEMZONE);

	if (mz == NULL) {
		sk_set_err(err, errlen,
			   "control: no memzone '%s': is the dataplane running with the same "
			   "--file-prefix?",
			   SK_SHM_MEMZONE);
		return -ENOENT;
	}
	char why[256];
	struct sk_shm *shm = sk_shm_attach(mz->addr, mz->len, why, sizeof(why));
	if (shm == NULL) {
		sk_set_err(err, errlen, "control: memzone '%s': %s", SK_SHM_MEMZONE, why);
		return -EPROTO;
	}
	for (unsigned l = 0; l < shm->nlcores; l++) {
		rings[l] = sk_order_ring_lookup(l);
		if (rings[l] == NULL) {
			sk_set_err(err, errlen, "control: no order ring 'sk_orders_%u' (%s)", l,
				   rte_strerror(rte_errno));
			return -ENOENT;
		}
	}
	int rc = sk_control_init(out, shm, rings, shm->nlcores, conf, err, errlen);

	if (rc == 0) {
		(*out)->attached = true;
		/* An older dataplane has no live block: live changes are then
		 * refused, everything else works. */
		rc = sk_control_live_attach(*out, why, sizeof(why));
		/* Likewise the reservation sets (seckill.reserve_mb = 0): then
		 * additions are refused; the store's sets are loaded here. */
		if (rc != -EPROTO)
			rc = sk_control_reserve_attach(*out, why, sizeof(why));
		if (rc == -EPROTO || rc == -ENOMEM) {
			sk_set_err(err, errlen, "%s", why);
			sk_control_close(*out);
			*out = NULL;
			return rc;
		}
		rc = 0;
	}
	return rc;
}

void
sk_control_close(struct sk_control *ctl)
{
	ctl_free(ctl);
}

/* ------------------------------------------------------------------- views */

struct sk_shm *
sk_control_shm(const struct sk_control *ctl)
{
	return ctl->shm;
}

struct sk_store *
sk_control_store(const struct sk_control *ctl)
{
	return ctl->store;
}

unsigned
sk_control_nrings(const struct sk_control *ctl)
{
	return ctl->nrings;
}

unsigned
sk_control_ring_depth(const struct sk_control *ctl, unsigned lcore)
{
	return lcore < ctl->nrings ? rte_ring_count(ctl->ring[lcore]) : 0;
}

unsigned
sk_control_order_status(const struct sk_control *ctl, uint64_t id)
{
	return sk_status_get(&ctl->status, id);
}

void
sk_control_order_counts(const struct sk_control *ctl, uint64_t counts[SK_ORDER_STATUS_COUNT])
{
	memset(counts, 0, SK_ORDER_STATUS_COUNT * sizeof(counts[0]));
	for (unsigned l = 0; l < ctl->nrings; l++) {
		const struct sk_status_window *w = &ctl->status.win[l];
		uint64_t next = atomic_load(&w->next);

		for (uint64_t id = atomic_load(&w->oldest); id < next;
		     id = sk_status_window_step(next, w->seq_bits, id)) {
			unsigned v = sk_status_get(&ctl->status, id);
			if (v < SK_ORDER_STATUS_COUNT)
				counts[v]++;
		}
	}
	counts[SK_ORDER_NONE] = 0;
}

static void
item_from_arena(struct sk_control_item *out, const struct sk_item *it)
{
	out->in_arena = true;
	out->state = atomic_load(&((struct sk_item *)it)->state);
	out->sold_out = sk_stock_is_sold_out(it);
	out->per_user_limit = it->per_user_limit;
	out->start_ns = it->start_ns;
	out->end_ns = sk_stock_end_ns(it);
	out->price = it->price;
	out->total = it->total;
	out->added = atomic_load(&((struct sk_item *)it)->added);
	out->removed = atomic_load(&((struct sk_item *)it)->removed);
	out->returned = atomic_load(&((struct sk_item *)it)->returned);
	out->remaining = sk_stock_remaining(it);
	out->sold = 0;
	for (uint32_t c = 0; c < it->nlcores; c++)
		out->sold += atomic_load(&((struct sk_item *)it)->bucket[c].sold);
}

static int
item_fill(struct sk_control *ctl, uint32_t id, const struct sk_item *it,
	  struct sk_control_item *out)
{
	memset(out, 0, sizeof(*out));
	out->id = id;
	if (it != NULL)
		item_from_arena(out, it);
	int rc = sk_store_activity_get(ctl->store, id, &out->activity, &out->ledger);
	if (rc == 0)
		out->has_activity = true;
	else if (rc != -ENOENT)
		return rc;
	return 0;
}

int
sk_control_item_get(struct sk_control *ctl, uint32_t id, struct sk_control_item *out)
{
	const struct sk_item *it = id != 0 ? sk_shm_item_find(ctl->shm, id) : NULL;
	int rc = item_fill(ctl, id, it, out);

	if (rc != 0)
		return rc;
	return out->in_arena || out->has_activity ? 0 : -ENOENT;
}

struct foreach_ctx {
	struct sk_control *ctl;
	sk_control_item_cb cb;
	void *arg;
};

static int
store_only_item(const struct sk_store_activity *a, const struct sk_store_ledger *ledger, void *arg)
{
	struct foreach_ctx *fc = arg;
	struct sk_control_item ci = {.id = a->item, .has_activity = true};

	if (sk_shm_item_find(fc->ctl->shm, a->item) != NULL)
		return 0;
	ci.activity = *a;
	ci.ledger = *ledger;
	return fc->cb(&ci, fc->arg);
}

int
sk_control_items_foreach(struct sk_control *ctl, sk_control_item_cb cb, void *arg)
{
	struct foreach_ctx fc = {ctl, cb, arg};
	struct sk_control_item ci;
	const struct sk_item *it;

	for (uint32_t i = 0; (it = sk_shm_item_at(ctl->shm, i)) != NULL; i++) {
		int rc = item_fill(ctl, it->id, it, &ci);
		if (rc == 0)
			rc = cb(&ci, arg);
		if (rc != 0)
			return rc;
	}
	return sk_store_activity_foreach(ctl->store, store_only_item, &fc);
}

bool
sk_control_wait_ms(bool (*done)(const void *arg), const void *arg, unsigned ms)
{
	const struct timespec tick = {0, 1000000};

	for (unsigned i = 0; i < ms; i++) {
		if (done(arg))
			return true;
		nanosleep(&tick, NULL);
	}
	return done(arg);
}
