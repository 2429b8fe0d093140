/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_member_decide.c - the cluster member's rule (sk_member_impl.h): from
 * what a tick measured of an item and a view of its pool, what to do. Pure:
 * the loop (sk_member.c) measures, decides on its last view (which may say
 * "read the pool first"), decides again on the fresh view, and acts. Every
 * condition of the tick is written here once. Tested as a table
 * (tests/unit/control/test_member_decide.c).
 */
#include "sk_member_impl.h"

#define S	       INT64_C(1000000000)
#define WANT_RECENT_MS 2000	/* a "dry, give back" call this recent is answered */
#define LEASE_S	       2.0	/* a lease asks for this many seconds of sales */
#define VIEW_PERIOD_NS S	/* the pool is read at least this often ... */
#define VIEW_ENDED_NS  (10 * S) /* ... or this, once over here and nothing held */

/* step - the one step on the pool; @quiet: a want may be answered. */
static enum sk_member_act
step(const struct sk_member_tick *t, const struct sk_cpool_view *v, bool quiet)
{
	bool wanted = quiet && v->want_ms != 0 && t->wall_ms - v->want_ms < WANT_RECENT_MS;

	if (t->unsold > 0 && (t->stopping || !t->selling || t->idle))
		return SK_MEMBER_GIVE_ALL;
	if (t->unsold >= 2 && wanted)
		return SK_MEMBER_GIVE_HALF;
	/* Leases: the first at preheat; later ones while it sells, or while
	 * buyers are told "restocking". An empty pool is asked again at most
	 * every DRY_REPEAT_NS (the ask tells the others to give back). */
	if (t->selling && !t->stopping && t->low_water && t->ask &&
	    (v->free > 0 || (t->demand && t->dry_due)))
		return SK_MEMBER_LEASE;
	if (t->unsold == 0 && v->free == 0 && !v->sold_out && t->dry_due)
		return SK_MEMBER_REPORT_DRY;
	if (t->unsold > 0 && v->sold_out)
		return SK_MEMBER_REPORT_UNITS;
	/* Over here: its last word, so that the others' sale can end sold
	 * out without it (free need not be 0 yet). */
	if (t->over && t->unsold == 0 && t->held > 0 && t->dry_epoch != v->epoch)
		return SK_MEMBER_REPORT_OVER;
	return SK_MEMBER_NOTHING;
}

/* needs_pool - @act must see the pool as it is now (read it first). */
static bool
needs_pool(enum sk_member_act act)
{
	return act == SK_MEMBER_LEASE || act == SK_MEMBER_REPORT_DRY ||
	       act == SK_MEMBER_REPORT_UNITS || act == SK_MEMBER_REPORT_OVER;
}

/* read_due - the last view is too old to go by: an own op or a message
 * since, never read, fenced, or older than the period. */
static bool
read_due(const struct sk_member_tick *t, const struct sk_cpool_view *v)
{
	bool empty_here = t->held == 0 && !t->pending;
	int64_t period = t->over && empty_here ? VIEW_ENDED_NS : VIEW_PERIOD_NS;

	return t->dirty || t->view_age_ns < 0 || v->fenced || t->view_age_ns >= period;
}

/* lease_size - how many units to ask for: 2 s of the selling rate, at most
 * a share of what the pool has free (at least 1). */
static uint64_t
lease_size(const struct sk_member_tick *t, const struct sk_cpool_view *v)
{
	uint64_t n = t->nmembers > 0 ? t->nmembers : 1;
	uint64_t cap = v->free / (2 * n);
	uint64_t want = t->rate > 0 ? (uint64_t)(t->rate * LEASE_S) + 1 : cap;

	if (cap < 1)
		cap = 1;
	return want < 1 ? 1 : want > cap ? cap : want;
}

/* done_after - whether the slot may go after @act: over here, nothing
 * unsold here or in the store, and either nothing held or a dry report
 * made at this epoch (made before, or by @act). */
static enum sk_member_done
done_after(const struct sk_member_tick *t, const struct sk_cpool_view *v, enum sk_member_act act)
{
	if (!t->over || t->stopping || t->unsold != 0 || t->unsold_durable != 0)
		return SK_MEMBER_KEEP;
	if (t->held == 0 || t->dry_epoch == v->epoch)
		return SK_MEMBER_DONE;
	if (act == SK_MEMBER_REPORT_DRY || act == SK_MEMBER_REPORT_OVER)
		return SK_MEMBER_DONE_IF_REPORTED;
	return SK_MEMBER_KEEP;
}

struct sk_member_decision
sk_member_decide(const struct sk_member_tick *t, const struct sk_cpool_view *v, bool fresh)
{
	struct sk_member_decision d = {0};

	/* Read the pool when this tick may act on it (the step on the last
	 * view, a want aside: that one is answered on a read made anyway),
	 * and otherwise at least every period. */
	if (!fresh && (read_due(t, v) || needs_pool(step(t, v, false)))) {
		d.read = true;
		return d;
	}
	if (v->fenced) {
		/* The word only with nothing pending, or a pending give-back
		 * that Redis refused as FENCED (not applied: the word counts it
		 * as held); any other may have been applied, and is resent
		 * until Redis says which. */
		d.sync = true;
		d.sync_word = !t->pending || t->pending_fenced;
		return d;
	}
	if (t->pending)
		return d; /* a give-back kept while fenced: resent next tick */

	/* The demand is spent here, where it can be acted on: not on a tick
	 * that could not read Redis, was fenced or had an op in flight. */
	d.spend_demand = true;
	d.act = step(t, v, t->quiet);
	if (d.act != SK_MEMBER_GIVE_ALL && !fresh)
		d.act = SK_MEMBER_NOTHING; /* the step needs the pool as it is now */
	if (d.act == SK_MEMBER_LEASE && !t->claimed)
		d.act = SK_MEMBER_NOTHING; /* the number first: ids no other member mints */
	switch (d.act) {
	case SK_MEMBER_GIVE_ALL:
		d.units = t->unsold;
		d.why = t->stopping ? "shutting down" : !t->selling ? "not selling here" : "idle";
		break;
	case SK_MEMBER_GIVE_HALF:
		d.units = t->unsold / 2;
		d.why = "another member is dry";
		break;
	case SK_MEMBER_LEASE:
		d.units = lease_size(t, v);
		break;
	case SK_MEMBER_REPORT_UNITS:
		d.units = t->unsold;
		break;
	default:
		break;
	}
	d.done = fresh ? done_after(t, v, d.act) : SK_MEMBER_KEEP;
	return d;
}
