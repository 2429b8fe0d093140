/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The lease journal of a cluster activity (docs/cluster.md): what this
 * appliance asked of the Redis pool, what it was granted and what it gave
 * back, durable in the order store before anything is sold or sent.
 *
 * One op at a time per item: an op is first recorded as pending with the
 * next sequence number (sk_store_cluster_lease_begin(),
 * sk_store_cluster_giveback_begin()), then sent to Redis with that number,
 * then ended. A crash leaves the op pending; the control plane resends it
 * with the same number (Redis replays its result) and ends it, so a lease
 * is never recorded twice.
 *
 * A grant is a restock of the activity and a give-back a removal, under the
 * stock-change id SK_STORE_CLUSTER_ID(seq), in the same transaction as the
 * journal: sk_store_activity_units() of a cluster activity is then the
 * units this appliance holds (sold ones included), which plays the part of
 * a single appliance's total (preheat, recovery and reconcile need nothing
 * else). A cluster activity takes no operator restock or removal (the
 * control plane refuses them), so these ids are the journal's alone.
 *
 * Thread-safety: as the rest of the store (sk_store.h): any thread; writes
 * serialise on LMDB's writer lock.
 */
#ifndef SK_STORE_CLUSTER_H
#define SK_STORE_CLUSTER_H

#include <stdint.h>

#include "sk_store.h"

/** The stock-change id (restock or removal) of lease op @p seq. */
#define SK_STORE_CLUSTER_ID(seq) ((UINT64_C(1) << 62) | (uint64_t)(seq))

/** Kinds of a pending op. */
enum sk_store_cluster_kind {
	SK_STORE_CLUSTER_NONE = 0,
	SK_STORE_CLUSTER_LEASE = 1,    /**< units asked, the grant not known yet */
	SK_STORE_CLUSTER_GIVEBACK = 2, /**< units off sale here, Redis not told yet */
};

/** An item's lease journal. */
struct sk_store_cluster {
	uint64_t next_seq;	/**< the number of the next op (first: 1) */
	uint8_t pending_kind;	/**< enum sk_store_cluster_kind */
	uint64_t pending_seq;	/**< the pending op's number (0 if none) */
	uint64_t pending_units; /**< units asked (lease) or given back */
	uint64_t granted;	/**< units of every recorded grant */
	uint64_t given_back;	/**< units of every give-back Redis confirmed */
	uint64_t ops;		/**< ops ended */
};

/**
 * sk_store_cluster_held - the units this appliance holds in the Redis
 * pool's eyes (its durable word at a sync): granted - given back, a pending
 * give-back still counted. Pure.
 */
static inline uint64_t
sk_store_cluster_held(const struct sk_store_cluster *c)
{
	return c->granted - c->given_back;
}

/**
 * sk_store_cluster_get - the journal of @p item (all zero with next_seq 1
 * before the first op).
 * @return 0, -ENOENT (no activity @p item), -EINVAL (not a cluster
 *         activity), -EIO (damaged record), or an LMDB error.
 */
int sk_store_cluster_get(struct sk_store *st, uint32_t item, struct sk_store_cluster *c);

/**
 * sk_store_cluster_lease_begin - record a lease of @p want units as the
 * pending op of @p item.
 * @param seq  [out] its number
 * @return 0, -EBUSY (an op is pending: end it first), -ENOENT, -EINVAL (not
 *         a cluster activity, or @p want 0), -EPERM (closed), or an LMDB
 *         error (-ENOSPC, -EACCES ...).
 */
int sk_store_cluster_lease_begin(struct sk_store *st, uint32_t item, uint64_t want, int64_t now_ns,
				 uint64_t *seq);

/**
 * sk_store_cluster_lease_end - Redis answered lease @p seq with @p granted
 * units (0: refused or none left): the grant is recorded as a restock
 * (added += granted, id SK_STORE_CLUSTER_ID(@p seq), one event) and the op
 * ends, in one transaction. A closed activity still records its grant (the
 * units are held, and must be given back).
 * @return 0, SK_STORE_UNCHANGED (@p seq ended before), -ESTALE (@p seq is
 *         not the pending lease), -ERANGE (@p granted exceeds the units
 *         asked), -EOVERFLOW, -ENOENT, -EINVAL, or an LMDB error.
 */
int sk_store_cluster_lease_end(struct sk_store *st, uint32_t item, uint64_t seq, uint64_t granted,
			       int64_t now_ns);

/**
 * sk_store_cluster_giveback_begin - take @p units unsold units of @p item off
 * sale here (a removal, id SK_STORE_CLUSTER_ID(seq), one event) and record
 * their give-back as the pending op, in one transaction. The caller has
 * already taken them out of the item table (sk_stock_remove()). Allowed on
 * a closed activity.
 * @param seq  [out] its number
 * @return 0, -EBUSY (an op is pending), -ERANGE (fewer unsold units: the
 *         live orders hold them), -ENOENT, -EINVAL, or an LMDB error.
 */
int sk_store_cluster_giveback_begin(struct sk_store *st, uint32_t item, uint64_t units,
				    int64_t now_ns, uint64_t *seq);

/**
 * sk_store_cluster_giveback_end - Redis took give-back @p seq: the op ends
 * (given_back += its units).
 * @return 0, SK_STORE_UNCHANGED (ended before), -ESTALE (not the pending
 *         give-back), -ENOENT, -EINVAL, or an LMDB error.
 */
int sk_store_cluster_giveback_end(struct sk_store *st, uint32_t item, uint64_t seq, int64_t now_ns);

/** Most members one item may have forgotten (SK_CPOOL_MEMBERS_MAX). */
#define SK_STORE_FORGOTTEN_MAX 16
/** Longest member id (SK_CPOOL_MEMBER_MAX). */
#define SK_STORE_MEMBER_ID_MAX 32

/**
 * The members an operator declared gone for good from a cluster item
 * (sk_member_forget()), with the units each held then: the Redis pool
 * counts them as held for ever, and a pool made again after Redis lost
 * everything must too, so every member keeps them (and sends them with
 * sk_cpool_init()).
 */
struct sk_store_forgotten {
	uint32_t n; /**< entries used */
	struct {
		char id[SK_STORE_MEMBER_ID_MAX + 1]; /**< NUL-terminated, not empty */
		uint64_t held;			     /**< units it held when forgotten */
	} m[SK_STORE_FORGOTTEN_MAX];
};

/**
 * sk_store_cluster_forgotten_get - the forgotten members of @p item (n 0
 * if none).
 * @return 0, -ENOENT (no activity @p item), -EINVAL (not a cluster
 *         activity), -EIO (damaged record), or an LMDB error.
 */
int sk_store_cluster_forgotten_get(struct sk_store *st, uint32_t item,
				   struct sk_store_forgotten *f);

/**
 * sk_store_cluster_forget - record member @p id of @p item as forgotten,
 * holding @p held units, in one transaction. Idempotent.
 * @return 0, SK_STORE_UNCHANGED (recorded before with the same units),
 *         -EEXIST (recorded with other units: nothing changed), -ENOSPC
 *         (SK_STORE_FORGOTTEN_MAX recorded already), -EINVAL (@p id empty
 *         or longer than SK_STORE_MEMBER_ID_MAX, or not a cluster
 *         activity), -ENOENT, -EIO, or an LMDB error.
 */
int sk_store_cluster_forget(struct sk_store *st, uint32_t item, const char *id, uint64_t held);

#endif /* SK_STORE_CLUSTER_H */
