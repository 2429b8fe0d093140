/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_member_ops.c - the operator's one-off Redis calls of a cluster member
 * (sk_member.h): forget a member gone for good, restock a cluster sale,
 * read a shop's stock key. Each opens a connection of its own (the
 * member's loop keeps its own to itself), so the admin API's threads never
 * share one; each blocks for at most the Redis timeout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sk_logfmt.h"
#include "sk_member_impl.h"

int
sk_member_forget(struct sk_member *m, uint32_t item, const char *gone, uint64_t held)
{
	struct sk_cpool *p;

	if (!sk_cpool_member_valid(gone) || strcmp(gone, sk_member_redis(m)->member) == 0)
		return -EINVAL;
	int rc = sk_cpool_open(&p, sk_member_redis(m));
	if (rc != 0)
		return rc;
	rc = sk_cpool_forget(p, item, gone, held);
	sk_cpool_close(p);
	if (rc != 0)
		return rc;
	sk_logf(SK_LOG_NOTICE, "cluster",
		"item=%" PRIu32 " forgotten=%s held=%" PRIu64
		" msg=\"an operator declared the member gone\"",
		item, gone, held);
	/* Kept in LMDB too (every init sends it: a pool made again after
	 * Redis lost everything still counts the units); if the store
	 * fails, the loop learns it from the pool's view. */
	(void)sk_member_remember_forgotten(m, item, gone, held);
	return 0;
}

int
sk_member_restock(struct sk_member *m, uint32_t item, uint64_t request_id, uint64_t units,
		  bool *repeat)
{
	struct sk_cpool *p;
	int rc = sk_cpool_open(&p, sk_member_redis(m));

	if (rc != 0)
		return rc;
	rc = sk_cpool_restock(p, item, request_id, units, repeat);
	if (rc != 0)
		sk_logf(SK_LOG_WARN, "cluster",
			"item=%" PRIu32 " restock=%" PRIu64 " units=%" PRIu64 " err=\"%s\"", item,
			request_id, units, sk_cpool_errstr(p));
	else if (repeat == NULL || !*repeat)
		sk_logf(SK_LOG_NOTICE, "cluster",
			"item=%" PRIu32 " restock=%" PRIu64 " units=%" PRIu64
			" msg=\"units added to the Redis pool\"",
			item, request_id, units);
	sk_cpool_close(p);
	return rc;
}

int
sk_member_get_units(struct sk_member *m, const char *key, uint64_t *units, char *why, size_t cap)
{
	struct sk_cpool *p;
	int rc = sk_cpool_open(&p, sk_member_redis(m));

	if (rc != 0) {
		snprintf(why, cap, "total_from: %s", strerror(-rc));
		return rc;
	}
	rc = sk_cpool_get_units(p, key, units);
	switch (rc) {
	case 0:
		sk_logf(SK_LOG_NOTICE, "cluster", "key=\"%s\" units=%" PRIu64 " msg=\"total read\"",
			key, *units);
		snprintf(why, cap, "%s", "");
		break;
	case -ENOENT:
		snprintf(why, cap, "total_from: Redis has no key %.256s", key);
		break;
	case -ENOTCONN:
	case -ETIMEDOUT:
		snprintf(why, cap,
			 "total_from: Redis is not reachable (%.200s): nothing made, retry",
			 sk_cpool_errstr(p));
		break;
	default:
		snprintf(why, cap, "total_from: %.300s", sk_cpool_errstr(p));
		break;
	}
	sk_cpool_close(p);
	return rc;
}
