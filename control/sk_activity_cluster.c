/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A cluster activity's stock moves (sk_activity.h, docs/cluster.md): the
 * lease journal of the store (sk_store_cluster.h) under the control plane's
 * write lock, with the item table kept in line - a grant goes on sale after
 * the store recorded it, a give-back leaves the sale before; a restock,
 * which goes to the Redis pool.
 */
#include <errno.h>

#include "sk_activity.h"
#include "sk_control_impl.h"
#include "sk_member.h"
#include "sk_store_cluster.h"

void
sk_control_cluster_enable(struct sk_control *ctl)
{
	ctl->cluster = true;
}

int
sk_control_cluster_lease_begin(struct sk_control *ctl, uint32_t item, uint64_t want, int64_t now_ns,
			       uint64_t *seq)
{
	lock(ctl);
	int rc = sk_store_cluster_lease_begin(ctl->store, item, want, now_ns, seq);
	unlock(ctl);
	return rc;
}

int
sk_control_cluster_lease_end(struct sk_control *ctl, uint32_t item, uint64_t seq, uint64_t granted,
			     int64_t now_ns)
{
	lock(ctl);
	int rc = sk_store_cluster_lease_end(ctl->store, item, seq, granted, now_ns);
	if (rc == 0 || rc == SK_STORE_UNCHANGED) {
		/* Durable first, then on sale (also after "unchanged": a crash
		 * may have come between the two). */
		ctl_activity_resync(ctl, item);
	}
	unlock(ctl);
	return rc;
}

int
sk_control_cluster_giveback_begin(struct sk_control *ctl, uint32_t item, uint64_t units,
				  int64_t now_ns, uint64_t *seq)
{
	struct sk_item *it;
	int rc;

	lock(ctl);
	it = sk_shm_item_find(ctl->shm, item);
	if (it != NULL) {
		/* The item table first: only it knows what is unsold now. */
		rc = sk_stock_remove(it, units, NULL);
		if (rc != SK_STOCK_OK) {
			rc = rc == SK_STOCK_SHORT ? -ERANGE : rc == SK_STOCK_BUSY ? -EAGAIN : rc;
			goto out;
		}
	}
	rc = sk_store_cluster_giveback_begin(ctl->store, item, units, now_ns, seq);
	if (rc != 0 && it != NULL && sk_stock_unremove(it, units) != 0)
		stat_add(&ctl->st.anomalies, 1);
out:
	unlock(ctl);
	return rc;
}

int
sk_control_cluster_giveback_end(struct sk_control *ctl, uint32_t item, uint64_t seq, int64_t now_ns)
{
	lock(ctl);
	int rc = sk_store_cluster_giveback_end(ctl->store, item, seq, now_ns);
	unlock(ctl);
	return rc;
}

int
sk_control_cluster_restock(struct sk_control *ctl, uint32_t item, uint64_t restock_id,
			   uint64_t units)
{
	bool repeat = false;
	int rc;

	if (ctl->member == NULL)
		return SK_ACTIVITY_CLUSTER;
	rc = sk_member_restock(ctl->member, item, restock_id, units, &repeat);
	switch (rc) {
	case 0:
		return repeat ? SK_ACTIVITY_UNCHANGED : SK_ACTIVITY_DONE;
	case -EEXIST:
		return SK_ACTIVITY_CONFLICT;
	case -EINVAL:
	case -EOVERFLOW:
		return SK_ACTIVITY_INVALID;
	default:
		return SK_ACTIVITY_REDIS; /* -ENOENT, -ENOTCONN, ... */
	}
}
