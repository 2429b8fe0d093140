/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_member_decide.c - the cluster member's rule (sk_member_impl.h): from
 * what a tick measured of an item and a view of its pool, the one step to
 * take. Pure: the loop (sk_member.c) measures, calls it on its last view
 * (whether the pool must be read) and on the fresh one (what to do), and
 * acts. Tested as a table (tests/unit/control/test_member_decide.c).
 */
#include "sk_member_impl.h"

#define WANT_RECENT_MS 2000 /* a "dry, give back" call this recent is answered */

enum sk_member_act
sk_member_decide(const struct sk_member_tick *t, const struct sk_cpool_view *v)
{
	bool wanted = t->quiet && v->want_ms != 0 && t->wall_ms - v->want_ms < WANT_RECENT_MS;

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

bool
sk_member_act_reads(enum sk_member_act act)
{
	return act == SK_MEMBER_LEASE || act == SK_MEMBER_REPORT_DRY ||
	       act == SK_MEMBER_REPORT_UNITS || act == SK_MEMBER_REPORT_OVER;
}
