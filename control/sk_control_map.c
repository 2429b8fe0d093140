/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store's map grown online (sk_control_map_check(), see sk_control.h
 * and docs/storage.md "The map grows online"): measure the map, decide by
 * the policy (sk_store_map_target()), grow it under the write lock, so
 * between two group commits and never inside one, and count, log and time
 * each grow.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "sk_control_impl.h"
#include "sk_logfmt.h"

#define MS INT64_C(1000000)

/*
 * How long a grow waits for the store calls in progress (other threads'
 * reads, the exporter's walk) to end. The drain waits with it, so the
 * wait is part of the pause; a grow put off is retried at the next check,
 * long before the map is full (it starts at the threshold). A commit that
 * met a full map waits longer: its winners are waiting for that commit.
 */
#define GROW_WAIT_NS	    (5 * MS)
#define GROW_WAIT_URGENT_NS (50 * MS)
/* After a grow put off, the checks that are not urgent rest this long. */
#define BUSY_BACKOFF_NS (100 * MS)

int
ctl_map_grow(struct sk_control *ctl, bool urgent)
{
	struct sk_store_map_info mi;
	struct sk_store_map_policy pol = ctl->map_pol;
	int64_t held, t0 = sk_clock_ns(CLOCK_MONOTONIC);

	if (!urgent && t0 < ctl->map_rest_until_ns)
		return -EBUSY;
	int rc = sk_store_map_info(ctl->store, &mi);
	if (rc != 0)
		return rc;
	if (urgent)
		pol.grow_at_pct = 1; /* full for this commit, whatever the percentage */
	uint64_t target = sk_store_map_target(&pol, &mi);
	if (target == 0) {
		uint32_t pct =
			pol.grow_at_pct != 0 ? pol.grow_at_pct : SK_STORE_MAP_GROW_AT_DEFAULT;
		bool above = (unsigned __int128)mi.used_bytes * 100 >=
			     (unsigned __int128)mi.map_size * pct;
		if (above && __atomic_exchange_n(&ctl->st.map_capped, 1, __ATOMIC_RELAXED) == 0)
			sk_logf(SK_LOG_ERROR, "store",
				"map_bytes=%" PRIu64 " used_bytes=%" PRIu64 " max_bytes=%" PRIu64
				" disk_free_bytes=%" PRIu64
				" msg=\"the map cannot grow (its --map-max-mb or the disk): "
				"orders fail once it is full\"",
				mi.map_size, mi.used_bytes, pol.max_size, mi.disk_free);
		else if (!above)
			__atomic_store_n(&ctl->st.map_capped, 0, __ATOMIC_RELAXED);
		return above ? -ENOSPC : 0;
	}
	rc = sk_store_map_grow(ctl->store, target, urgent ? GROW_WAIT_URGENT_NS : GROW_WAIT_NS,
			       &held);
	int64_t pause = sk_clock_ns(CLOCK_MONOTONIC) - t0;
	if (rc == -EBUSY) {
		ctl->map_rest_until_ns = t0 + pause + BUSY_BACKOFF_NS;
		stat_add(&ctl->st.map_grow_busy, 1);
		return rc;
	}
	if (rc != 0) {
		stat_add(&ctl->st.map_grow_errors, 1);
		sk_logf(SK_LOG_ERROR, "store",
			"map_bytes=%" PRIu64 " new_bytes=%" PRIu64
			" msg=\"the map could not grow (retried)\" err=%s",
			mi.map_size, target, strerror(-rc));
		return rc;
	}
	stat_add(&ctl->st.map_grows, 1);
	__atomic_store_n(&ctl->st.map_grow_pause_ns, (uint64_t)pause, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->st.map_capped, 0, __ATOMIC_RELAXED);
	sk_logf(SK_LOG_NOTICE, "store",
		"old_bytes=%" PRIu64 " new_bytes=%" PRIu64 " used_bytes=%" PRIu64
		" disk_free_bytes=%" PRIu64
		" pause_ms=%.3f held_ms=%.3f urgent=%d msg=\"map grown\"",
		mi.map_size, target, mi.used_bytes, mi.disk_free, (double)pause / MS,
		(double)held / MS, urgent);
	return 1;
}

int
sk_control_map_check(struct sk_control *ctl)
{
	lock(ctl);
	int rc = ctl_map_grow(ctl, false);
	unlock(ctl);
	return rc;
}
