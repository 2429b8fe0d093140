/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Activities through the control plane: add, close, restock, remove,
 * pause, extend, preheat (sk_activity.h). Store first, arena second, under
 * the write lock; the changes of a stored activity go through guarded(),
 * each stating only what it refuses, its step and its store's answers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sk_activity.h"
#include "sk_control_impl.h"
#include "sk_logfmt.h"
#include "sk_preheat.h"
#include "sk_reserve_ctl.h"

static const char *const result_names[] = {
	[SK_ACTIVITY_DONE] = "done",	     [SK_ACTIVITY_UNCHANGED] = "unchanged",
	[SK_ACTIVITY_CONFLICT] = "conflict", [SK_ACTIVITY_CLOSED] = "closed",
	[SK_ACTIVITY_UNKNOWN] = "unknown",   [SK_ACTIVITY_NO_ROOM] = "no_room",
	[SK_ACTIVITY_INVALID] = "invalid",   [SK_ACTIVITY_ENDED] = "ended",
	[SK_ACTIVITY_SHORT] = "short",	     [SK_ACTIVITY_BUSY] = "busy",
	[SK_ACTIVITY_CLUSTER] = "cluster",   [SK_ACTIVITY_REDIS] = "redis",
};

const char *
sk_activity_result_name(int result)
{
	if (result < 0 || (size_t)result >= SK_ARRAY_SIZE(result_names))
		return "error";
	return result_names[result];
}

bool
sk_activity_valid(const struct sk_store_activity *a, int64_t now_ns, const char **why)
{
	const char *w = NULL;

	if (a->item == 0)
		w = "item: must be 1..4294967295";
	else if (a->total == 0 || a->total > SK_STOCK_MAX_UNITS)
		w = "total: must be 1..2^48";
	else if (a->per_user_limit == 0 || a->per_user_limit > SK_STOCK_MAX_QTY)
		w = "per_user_limit: must be 1..1000";
	else if (a->end_ns <= a->start_ns)
		w = "end: must be after start";
	else if (a->end_ns <= now_ns)
		w = "end: the sale would be over already";
	else if (a->pay_timeout_ns < 0)
		w = "pay_timeout: must not be negative";
	else if (memchr(a->name, '\0', sizeof(a->name)) == NULL)
		w = "name: longer than 64 bytes";
	if (why != NULL)
		*why = w;
	return w == NULL;
}

/* item_matches - an arena item sells what activity @a defines. */
static bool
item_matches(const struct sk_item *it, const struct sk_store_activity *a)
{
	return it->id == a->item && it->per_user_limit == a->per_user_limit &&
	       it->total == sk_store_activity_base(a) && it->price == a->price &&
	       it->start_ns == a->start_ns && sk_stock_end_ns(it) == a->end_ns &&
	       it->gate == a->gate && it->reserved_only == a->reserved_only;
}

/*
 * record_item - store an item the dataplane loaded from its config as an
 * activity (no name, the default payment timeout). Write lock held.
 */
static int
record_item(struct sk_control *ctl, const struct sk_item *it, int64_t now_ns)
{
	struct sk_store_activity a = {
		.item = it->id,
		.per_user_limit = it->per_user_limit,
		.total = it->total,
		.price = it->price,
		.start_ns = it->start_ns,
		.end_ns = sk_stock_end_ns(it),
		.gate = it->gate,
		.reserved_only = it->reserved_only,
	};

	return sk_store_activity_put(ctl->store, &a, now_ns);
}

/*
 * activity_get - the stored activity of @item; an item of the arena the
 * store does not know yet is recorded first. Write lock held.
 * @return 0, SK_ACTIVITY_UNKNOWN (neither knows it), or an error of the
 *         store (< 0).
 */
static int
activity_get(struct sk_control *ctl, uint32_t item, struct sk_store_activity *a, int64_t now_ns)
{
	int rc = sk_store_activity_get(ctl->store, item, a, NULL);
	const struct sk_item *it;

	if (rc == -ENOENT && (it = sk_shm_item_find(ctl->shm, item)) != NULL) {
		rc = record_item(ctl, it, now_ns);
		if (rc < 0)
			return rc;
		stat_add(&ctl->st.activities_recorded, 1);
		rc = sk_store_activity_get(ctl->store, item, a, NULL);
	}
	return rc == -ENOENT ? SK_ACTIVITY_UNKNOWN : rc;
}

/* sync_item - the arena's item of @a (if any) in line with @a. Write lock held. */
static int
sync_item(struct sk_control *ctl, const struct sk_store_activity *a, bool *changed)
{
	struct sk_item *it = sk_shm_item_find(ctl->shm, a->item);
	struct sk_preheat_sync s;
	int rc;

	*changed = false;
	if (it == NULL)
		return 0;
	rc = sk_preheat_sync(it, a, &s);
	if (rc != 0) {
		stat_add(&ctl->st.anomalies, 1);
		return rc;
	}
	stat_add(&ctl->st.units_restocked, s.added);
	*changed = s.added != 0 || s.removed != 0 || s.unremoved != 0 || s.closed || s.paused ||
		   s.resumed || s.extended;
	return 0;
}

void
ctl_activity_resync(struct sk_control *ctl, uint32_t item)
{
	struct sk_store_activity a;
	bool changed;

	if (sk_store_activity_get(ctl->store, item, &a, NULL) == 0)
		(void)sync_item(ctl, &a, &changed);
}

/* load_item - put stored activity @a on sale in the arena. Write lock held. */
static int
load_item(struct sk_control *ctl, const struct sk_store_activity *a)
{
	int rc = sk_preheat_item(ctl->store, ctl->shm, a, 0, 0, NULL, NULL);

	/* Its set in memory as in the store (logged if it cannot be). */
	if (rc == 0 && a->reserved_only && ctl->reserve != NULL)
		(void)sk_control_reserve_sync(ctl, a->item);
	if (rc == 0)
		stat_add(&ctl->st.activities_loaded, 1);
	else
		stat_add(&ctl->st.preheat_errors, 1);
	return rc;
}

int
sk_control_activity_add(struct sk_control *ctl, const struct sk_store_activity *a, int64_t now_ns)
{
	struct sk_store_activity cur;
	struct sk_stock_conf sc;
	struct sk_item *it;
	int rc;

	if (!sk_activity_valid(a, now_ns, NULL))
		return SK_ACTIVITY_INVALID;
	if (a->cluster && !ctl->cluster)
		return SK_ACTIVITY_CLUSTER;
	lock(ctl);
	rc = sk_store_activity_get(ctl->store, a->item, &cur, NULL);
	if (rc == 0) {
		if (cur.closed_ns != 0)
			rc = SK_ACTIVITY_CLOSED;
		else if (!sk_store_activity_same(&cur, a))
			rc = SK_ACTIVITY_CONFLICT;
		else if (sk_shm_item_find(ctl->shm, a->item) == NULL)
			/* stored by a call that died before the arena: finish it */
			rc = load_item(ctl, &cur) == 0 ? SK_ACTIVITY_UNCHANGED
						       : SK_ACTIVITY_NO_ROOM;
		else
			rc = SK_ACTIVITY_UNCHANGED;
		goto out;
	}
	if (rc != -ENOENT)
		goto out;

	it = sk_shm_item_find(ctl->shm, a->item);
	if (it != NULL) {
		/* on sale from the dataplane's config, not recorded yet */
		if (!item_matches(it, a)) {
			rc = SK_ACTIVITY_CONFLICT;
			goto out;
		}
	} else {
		/* room in the arena first: a prepared item is not reserved */
		sk_preheat_conf(a, 0, &sc);
		rc = sk_shm_item_prepare(ctl->shm, &sc, 0, &it);
		if (rc != 0) {
			rc = rc == -ENOSPC   ? SK_ACTIVITY_NO_ROOM
			     : rc == -EEXIST ? SK_ACTIVITY_CONFLICT
					     : SK_ACTIVITY_INVALID;
			goto out;
		}
		it = NULL;
	}
	rc = sk_store_activity_put(ctl->store, a, now_ns);
	if (rc == -EINVAL || rc == -ERANGE) {
		rc = SK_ACTIVITY_INVALID;
		goto out;
	}
	if (rc < 0)
		goto out;
	stat_add(&ctl->st.activities_created, 1);
	rc = SK_ACTIVITY_DONE;
	if (it == NULL && load_item(ctl, a) != 0)
		rc = SK_ACTIVITY_NO_ROOM; /* stored; the next preheat pass retries */
out:
	unlock(ctl);
	return rc;
}

/* ------------------------------------------- changes of a stored activity */

/* The store's answer to a change, as the caller reads it. */
struct store_answer {
	int err;    /* a negative errno of the store; 0 ends the table */
	int result; /* the SK_ACTIVITY_* it means */
};

/*
 * answer - the store's @rc for a change: 0 is done, SK_STORE_UNCHANGED a
 * repeat, an error of @errs its SK_ACTIVITY_* result; any other error as
 * it is.
 */
static int
answer(int rc, const struct store_answer *errs)
{
	if (rc == 0)
		return SK_ACTIVITY_DONE;
	if (rc == SK_STORE_UNCHANGED)
		return SK_ACTIVITY_UNCHANGED;
	for (; errs != NULL && errs->err != 0; errs++)
		if (rc == errs->err)
			return errs->result;
	return rc;
}

/* What a change refuses before its own step (struct change.refuse). */
enum {
	REFUSE_CLOSED = 1 << 0,	 /* a closed activity: SK_ACTIVITY_CLOSED */
	REFUSE_ENDED = 1 << 1,	 /* its end passed: SK_ACTIVITY_ENDED */
	REFUSE_CLUSTER = 1 << 2, /* a cluster activity: SK_ACTIVITY_CLUSTER */
};

/*
 * One change of a stored activity, for guarded(): what it refuses, and its
 * own step. apply() runs under the write lock with @a as stored (an item
 * of the arena the store lacked recorded first); it returns an
 * SK_ACTIVITY_* result or a negative errno of the store.
 */
struct change {
	unsigned refuse;
	int (*apply)(struct sk_control *ctl, const struct sk_store_activity *a, void *arg,
		     int64_t now_ns);
	bool resync; /* done or unchanged: the arena's item brought in line */
};

/*
 * guarded - change @c of @item's activity, under the write lock: the
 * stored activity (SK_ACTIVITY_UNKNOWN if none), what @c refuses, its
 * step, then the arena after the store (also after "unchanged": a crash may
 * have come between the two).
 */
static int
guarded(struct sk_control *ctl, const struct change *c, uint32_t item, void *arg, int64_t now_ns)
{
	struct sk_store_activity a;
	int rc;

	lock(ctl);
	rc = activity_get(ctl, item, &a, now_ns);
	if (rc != 0)
		goto out;
	if ((c->refuse & REFUSE_CLUSTER) && a.cluster)
		rc = SK_ACTIVITY_CLUSTER;
	else if ((c->refuse & REFUSE_CLOSED) && a.closed_ns != 0)
		rc = SK_ACTIVITY_CLOSED;
	else if ((c->refuse & REFUSE_ENDED) && a.end_ns <= now_ns)
		rc = SK_ACTIVITY_ENDED;
	else
		rc = c->apply(ctl, &a, arg, now_ns);
	if (c->resync && (rc == SK_ACTIVITY_DONE || rc == SK_ACTIVITY_UNCHANGED))
		ctl_activity_resync(ctl, item);
out:
	unlock(ctl);
	return rc;
}

static int
close_apply(struct sk_control *ctl, const struct sk_store_activity *a, void *arg, int64_t now_ns)
{
	int rc = sk_store_activity_close(ctl->store, a->item, now_ns);

	(void)arg;
	if (rc == 0)
		stat_add(&ctl->st.activities_closed, 1);
	return answer(rc, NULL);
}

int
sk_control_activity_close(struct sk_control *ctl, uint32_t item, int64_t now_ns)
{
	static const struct change c = {.apply = close_apply, .resync = true};

	return guarded(ctl, &c, item, NULL, now_ns);
}

/* A restock's request; a cluster activity's goes to its Redis pool. */
struct restock {
	uint64_t id, units;
};

#define RESTOCK_IN_REDIS (-1 - INT16_MAX) /* restock_apply(): not an errno */

static int
restock_apply(struct sk_control *ctl, const struct sk_store_activity *a, void *arg, int64_t now_ns)
{
	static const struct store_answer errs[] = {{-EEXIST, SK_ACTIVITY_CONFLICT},
						   {-EPERM, SK_ACTIVITY_CLOSED},
						   {-EINVAL, SK_ACTIVITY_INVALID},
						   {-EOVERFLOW, SK_ACTIVITY_INVALID},
						   {0, 0}};
	const struct restock *r = arg;

	if (a->cluster)
		return RESTOCK_IN_REDIS;
	if (a->total > SK_STOCK_MAX_UNITS || a->added > SK_STOCK_MAX_UNITS - a->total ||
	    r->units > SK_STOCK_MAX_UNITS - a->total - a->added)
		return SK_ACTIVITY_INVALID; /* more than the engine can hold */
	return answer(sk_store_activity_restock(ctl->store, a->item, r->id, r->units, now_ns),
		      errs);
}

int
sk_control_stock_add(struct sk_control *ctl, uint32_t item, uint64_t restock_id, uint64_t units,
		     int64_t now_ns)
{
	static const struct change c = {
		.refuse = REFUSE_CLOSED | REFUSE_ENDED, .apply = restock_apply, .resync = true};
	struct restock r = {.id = restock_id, .units = units};
	int rc;

	if (units == 0 || restock_id == 0 || units > SK_STOCK_MAX_UNITS)
		return SK_ACTIVITY_INVALID;
	rc = guarded(ctl, &c, item, &r, now_ns);
	if (rc == RESTOCK_IN_REDIS) /* its units go to the Redis pool: no lock held meanwhile */
		rc = sk_control_cluster_restock(ctl, item, restock_id, units);
	return rc;
}

/* A removal's request, and the units left unsold when it is short. */
struct removal {
	uint64_t id, units, left;
};

static int
remove_apply(struct sk_control *ctl, const struct sk_store_activity *a, void *arg, int64_t now_ns)
{
	static const struct store_answer errs[] = {
		{-EEXIST, SK_ACTIVITY_CONFLICT}, {-EPERM, SK_ACTIVITY_CLOSED}, {0, 0}};
	struct removal *r = arg;
	struct sk_store_activity cur;
	struct sk_store_ledger led;
	struct sk_item *it;
	uint64_t had;
	int rc;

	/* A repeat is answered from the store: the item table is not touched. */
	rc = sk_store_activity_removal(ctl->store, a->item, r->id, &had);
	if (rc == 0 || rc == -EEXIST)
		return rc == 0 && had == r->units ? SK_ACTIVITY_UNCHANGED : SK_ACTIVITY_CONFLICT;
	if (rc != -ENOENT)
		return rc;
	if (a->closed_ns != 0)
		return SK_ACTIVITY_CLOSED;
	it = sk_shm_item_find(ctl->shm, a->item);
	if (it != NULL) {
		/* The item table first: only it knows what is unsold now. */
		rc = sk_stock_remove(it, r->units, &r->left);
		if (rc != SK_STOCK_OK)
			return rc == SK_STOCK_SHORT ? SK_ACTIVITY_SHORT : SK_ACTIVITY_BUSY;
	}
	rc = sk_store_activity_remove(ctl->store, a->item, r->id, r->units, now_ns);
	if (rc != 0 && it != NULL && sk_stock_unremove(it, r->units) != 0)
		stat_add(&ctl->st.anomalies, 1);
	if (rc == SK_STORE_UNCHANGED) /* cannot be: looked up under the lock */
		return SK_ACTIVITY_CONFLICT;
	if (rc == -ERANGE) {
		/* the store's count (an item the arena lacks) */
		if (sk_store_activity_get(ctl->store, a->item, &cur, &led) == 0 &&
		    sk_store_activity_units(&cur) > sk_store_ledger_live(&led))
			r->left = sk_store_activity_units(&cur) - sk_store_ledger_live(&led);
		return SK_ACTIVITY_SHORT;
	}
	return answer(rc, errs);
}

int
sk_control_stock_remove(struct sk_control *ctl, uint32_t item, uint64_t request_id, uint64_t units,
			int64_t now_ns, uint64_t *unsold)
{
	static const struct change c = {.refuse = REFUSE_CLUSTER, .apply = remove_apply};
	struct removal r = {.id = request_id, .units = units};
	int rc;

	if (units == 0 || request_id == 0 || request_id > INT64_MAX || units > SK_STOCK_MAX_UNITS)
		return SK_ACTIVITY_INVALID;
	rc = guarded(ctl, &c, item, &r, now_ns);
	if (rc == SK_ACTIVITY_SHORT && unsold != NULL)
		*unsold = r.left;
	return rc;
}

static int
pause_apply(struct sk_control *ctl, const struct sk_store_activity *a, void *arg, int64_t now_ns)
{
	static const struct store_answer errs[] = {{-EPERM, SK_ACTIVITY_CLOSED}, {0, 0}};

	return answer(sk_store_activity_pause(ctl->store, a->item, *(const bool *)arg, now_ns),
		      errs);
}

int
sk_control_activity_pause(struct sk_control *ctl, uint32_t item, bool paused, int64_t now_ns)
{
	static const struct change c = {
		.refuse = REFUSE_CLOSED | REFUSE_ENDED, .apply = pause_apply, .resync = true};

	return guarded(ctl, &c, item, &paused, now_ns);
}

static int
extend_apply(struct sk_control *ctl, const struct sk_store_activity *a, void *arg, int64_t now_ns)
{
	static const struct store_answer errs[] = {
		{-ERANGE, SK_ACTIVITY_CONFLICT}, {-EPERM, SK_ACTIVITY_CLOSED}, {0, 0}};

	return answer(sk_store_activity_extend(ctl->store, a->item, *(const int64_t *)arg, now_ns),
		      errs);
}

int
sk_control_activity_extend(struct sk_control *ctl, uint32_t item, int64_t end_ns, int64_t now_ns)
{
	static const struct change c = {
		.refuse = REFUSE_CLOSED | REFUSE_ENDED, .apply = extend_apply, .resync = true};

	if (end_ns <= 0)
		return SK_ACTIVITY_INVALID;
	return guarded(ctl, &c, item, &end_ns, now_ns);
}

/* The activities of the store, copied out of the read transaction. */
struct act_list {
	struct sk_store_activity *a;
	size_t n, cap;
};

static int
collect(const struct sk_store_activity *a, const struct sk_store_ledger *l, void *arg)
{
	struct act_list *v = arg;

	(void)l;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		void *p = realloc(v->a, cap * sizeof(*v->a));

		if (p == NULL)
			return -ENOMEM;
		v->a = p;
		v->cap = cap;
	}
	v->a[v->n++] = *a;
	return 0;
}

int
sk_control_preheat(struct sk_control *ctl, int64_t now_ns, bool log,
		   struct sk_control_preheat_info *info)
{
	struct sk_control_preheat_info pi = {0};
	struct act_list v = {0};
	int rc = 0;

	lock(ctl);
	for (uint32_t i = 0;; i++) {
		const struct sk_item *it = sk_shm_item_at(ctl->shm, i);

		if (it == NULL)
			break;
		rc = sk_store_activity_get(ctl->store, it->id, NULL, NULL);
		if (rc == -ENOENT) {
			rc = record_item(ctl, it, now_ns);
			if (rc >= 0) {
				stat_add(&ctl->st.activities_recorded, 1);
				pi.recorded++;
			}
		}
		if (rc < 0)
			goto out;
	}

	rc = sk_store_activity_foreach(ctl->store, collect, &v);
	if (rc != 0)
		goto out;
	for (size_t i = 0; i < v.n; i++) {
		const struct sk_store_activity *a = &v.a[i];
		bool changed;

		if (sk_shm_item_find(ctl->shm, a->item) != NULL) {
			if (sync_item(ctl, a, &changed) != 0) {
				pi.failed++;
				if (log && ctl->preheat_failed_last == 0)
					sk_logf(SK_LOG_WARN, "preheat",
						"item=%" PRIu32
						" msg=\"the arena cannot follow the "
						"store's restocks or removals (more restocked "
						"units, "
						"or removed units it cannot find unsold)\"",
						a->item);
			}
			pi.synced += changed;
			continue;
		}
		if (a->closed_ns != 0 || a->end_ns <= now_ns)
			continue;
		int r = load_item(ctl, a);
		if (r == 0) {
			pi.loaded++;
			continue;
		}
		pi.failed++;
		if (log && ctl->preheat_failed_last == 0)
			sk_logf(SK_LOG_WARN, "preheat",
				"item=%" PRIu32 " msg=\"cannot put it on sale\" err=%s", a->item,
				r == -ENOSPC   ? "no item slot or dedup room left in the arena"
				: r == -ERANGE ? "the store holds more live units than its stock"
					       : strerror(-r));
	}
out:
	ctl->preheat_failed_last = pi.failed;
	stat_add(&ctl->st.preheat_passes, 1);
	unlock(ctl);
	free(v.a);
	if (info != NULL)
		*info = pi;
	return rc < 0 ? rc : 0;
}
