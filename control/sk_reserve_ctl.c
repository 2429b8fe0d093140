/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_reserve_ctl.c - the control plane as the writer of the reservation
 * sets (see sk_reserve_ctl.h): attach, add, sync from the store, drop.
 */
#include "sk_reserve_ctl.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_memzone.h>

#include "sk_control_impl.h"
#include "sk_logfmt.h"
#include "sk_store_reserve.h"

int
sk_control_reserve_set(struct sk_control *ctl, struct sk_reserve_zone *z)
{
	if (pthread_mutex_init(&ctl->reserve_lock, NULL) != 0)
		return -ENOMEM;
	ctl->reserve_lock_ok = true;
	ctl->reserve = z;
	return 0;
}

struct sk_reserve_zone *
sk_control_reserve(const struct sk_control *ctl)
{
	return ctl->reserve;
}

int
sk_control_reserve_attach(struct sk_control *ctl, char *err, size_t errlen)
{
	const struct rte_memzone *mz = rte_memzone_lookup(SK_RESERVE_MEMZONE);
	struct sk_reserve_zone *z;
	int rc;

	if (mz == NULL) {
		sk_set_err(err, errlen, "control: no memzone '%s': reservations unavailable",
			   SK_RESERVE_MEMZONE);
		return -ENOENT;
	}
	z = sk_reserve_attach(mz->addr, mz->len, err, errlen);
	if (z == NULL)
		return -EPROTO;
	/* The last writer may have died mid-change: its allocator is rebuilt
	 * from the published tables before anything is written. */
	sk_reserve_recover(z);
	rc = sk_control_reserve_set(ctl, z);
	if (rc == 0 && (rc = sk_control_reserve_sync(ctl, 0)) != 0)
		sk_logf(SK_LOG_ERROR, "reserve", "msg=\"sets not loaded from the store: %s\"",
			strerror(-rc));
	return rc == -ENOMEM ? rc : 0;
}

/* quiescent - every lcore acknowledged the published generation, so that
 * every retired table can be reused (sk_control_wait_ms()). */
static bool
quiescent(const void *z)
{
	return sk_reserve_quiescent(z);
}

/* again - a writer's -EAGAIN: -EBUSY when the lcores did not settle in
 * time, else 0 (retry: all retired space is then reusable). */
static int
again(const struct sk_reserve_zone *z, int rc)
{
	if (rc != -EAGAIN)
		return rc;
	return sk_control_wait_ms(quiescent, z, SK_RESERVE_CTL_WAIT_MS) ? 0 : -EBUSY;
}

static int sync_one(uint32_t item, uint64_t count, void *arg);

/*
 * undo - the store refused ids the block took (@src): the block goes back
 * to what LMDB holds, so that nobody may buy who would not be reserved
 * after a restart. @src, kept for the caller. Reservation mutex held.
 */
static int
undo(struct sk_control *ctl, uint32_t item, int src)
{
	uint64_t count = 0;

	if (sk_store_reserve_count(ctl->store, item, &count) != 0 ||
	    sync_one(item, count, ctl) != 0)
		sk_logf(SK_LOG_ERROR, "reserve",
			"item=%" PRIu32 " msg=\"set ahead of the store until the next sync\"",
			item);
	return src;
}

int
sk_control_reserve_add(struct sk_control *ctl, uint32_t item, const uint64_t *users, size_t n,
		       uint64_t *added, uint64_t *total, char *err, size_t errlen)
{
	struct sk_reserve_zone *z = ctl->reserve;
	uint64_t in_mem = 0, stored = 0;
	int rc, src = 0;

	*added = *total = 0;
	if (z == NULL) {
		sk_set_err(err, errlen,
			   "reservations unavailable: no reservation block (seckill.reserve_mb)");
		return -ENODEV;
	}
	pthread_mutex_lock(&ctl->reserve_lock);
	rc = sk_reserve_add(z, item, users, n, &in_mem);
	if (rc == -EAGAIN && (rc = again(z, rc)) == 0)
		rc = sk_reserve_add(z, item, users, n, &in_mem);
	rc = rc == -EAGAIN ? -EBUSY : rc;
	if (rc == 0 && (src = sk_store_reserve_add(ctl->store, item, users, n, &stored)) != 0)
		rc = undo(ctl, item, src);
	*total = sk_reserve_count(z, item);
	pthread_mutex_unlock(&ctl->reserve_lock);
	if (src != 0)
		sk_set_err(err, errlen, "store: %s", strerror(-src));
	else if (rc == -ENOSPC)
		sk_set_err(err, errlen,
			   z->items >= SK_RESERVE_ITEMS_MAX
				   ? "reservation sets full: %u items have one"
				   : "reservation sets full: raise seckill.reserve_mb (%u items)",
			   (unsigned)z->items);
	else if (rc == -EBUSY)
		sk_set_err(err, errlen, "an lcore has not moved past the previous change yet");
	else if (rc == -EINVAL)
		sk_set_err(err, errlen, "a user id is 0");
	else if (rc != 0)
		sk_set_err(err, errlen, "store: %s", strerror(-rc));
	*added = stored;
	return rc;
}

int
sk_control_reserve_total(struct sk_control *ctl, uint32_t item, uint64_t *total)
{
	if (ctl->reserve == NULL)
		return sk_store_reserve_count(ctl->store, item, total);
	pthread_mutex_lock(&ctl->reserve_lock);
	*total = sk_reserve_count(ctl->reserve, item);
	pthread_mutex_unlock(&ctl->reserve_lock);
	return 0;
}

/* sync_one - item @item's set rebuilt from the store when its count is not
 * @count. Reservation mutex held. */
static int
sync_one(uint32_t item, uint64_t count, void *arg)
{
	struct sk_control *ctl = arg;
	uint64_t *users = NULL;
	size_t n = 0;
	int rc;

	if (sk_reserve_count(ctl->reserve, item) == count)
		return 0;
	rc = sk_store_reserve_read(ctl->store, item, &users, &n);
	if (rc == 0 && (rc = sk_reserve_load(ctl->reserve, item, users, n)) == -EAGAIN &&
	    (rc = again(ctl->reserve, rc)) == 0)
		rc = sk_reserve_load(ctl->reserve, item, users, n);
	free(users);
	if (rc != 0)
		sk_logf(SK_LOG_ERROR, "reserve", "item=%" PRIu32 " msg=\"set not loaded: %s\"",
			item, strerror(-rc));
	else
		sk_logf(SK_LOG_INFO, "reserve", "item=%" PRIu32 " users=%zu msg=\"set loaded\"",
			item, n);
	return rc;
}

/* A sync of every item: the first error kept, the walk goes on. */
struct sync_all {
	struct sk_control *ctl;
	int rc;
};

static int
sync_each(uint32_t item, uint64_t count, void *arg)
{
	struct sync_all *s = arg;
	int rc = sync_one(item, count, s->ctl);

	if (s->rc == 0)
		s->rc = rc;
	return 0;
}

int
sk_control_reserve_sync(struct sk_control *ctl, uint32_t item)
{
	uint64_t count = 0;
	int rc;

	if (ctl->reserve == NULL)
		return -ENODEV;
	pthread_mutex_lock(&ctl->reserve_lock);
	if (item == 0) {
		struct sync_all all = {.ctl = ctl};
		/* Sets of the store; then sets in memory the store lacks (a
		 * control plane that died between the two writes). */
		rc = sk_store_reserve_foreach(ctl->store, sync_each, &all);
		for (uint32_t i = 0; rc == 0 && i < SK_RESERVE_DIR; i++) {
			const struct sk_reserve_dirent *d = &ctl->reserve->dir[i];
			uint64_t k = atomic_load_explicit(&((struct sk_reserve_dirent *)d)->key,
							  memory_order_relaxed);
			if (k == 0 || d->users == 0 ||
			    sk_store_reserve_count(ctl->store, (uint32_t)(k - 1), &count) != 0 ||
			    count != 0)
				continue;
			(void)sync_each((uint32_t)(k - 1), 0, &all);
		}
		rc = rc != 0 ? rc : all.rc;
	} else {
		rc = sk_store_reserve_count(ctl->store, item, &count);
		if (rc == 0)
			rc = sync_one(item, count, ctl);
	}
	pthread_mutex_unlock(&ctl->reserve_lock);
	return rc;
}

int
sk_control_reserve_drop(struct sk_control *ctl, uint32_t item)
{
	int rc = sk_store_reserve_drop(ctl->store, item);

	if (rc < 0 || ctl->reserve == NULL)
		return rc;
	pthread_mutex_lock(&ctl->reserve_lock);
	int mr = sk_reserve_load(ctl->reserve, item, NULL, 0);
	if (mr == -EAGAIN && (mr = again(ctl->reserve, mr)) == 0)
		mr = sk_reserve_load(ctl->reserve, item, NULL, 0);
	pthread_mutex_unlock(&ctl->reserve_lock);
	if (mr != 0)
		sk_logf(SK_LOG_WARN, "reserve", "item=%" PRIu32 " msg=\"set not emptied: %s\"",
			item, strerror(-mr));
	return rc;
}
