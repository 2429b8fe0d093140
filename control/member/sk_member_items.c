/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_member_items.c - the cluster member's bookkeeping of its items
 * (sk_member_impl.h): the slots of the items it follows, the items over
 * here that owe the pool nothing (not followed: their slots free), and
 * each item's forgotten members (LMDB), sent with every init and learnt
 * from the pool. The loop's thread, but for sk_member_slot()'s readers.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "sk_control_impl.h"
#include "sk_logfmt.h"
#include "sk_member_impl.h"

/* ---------------------------------------------------------------- slots */

struct mitem *
sk_member_slot(struct sk_member *m, uint32_t item, bool add)
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

void
sk_member_slot_free(struct sk_member *m, struct mitem *mi)
{
	pthread_mutex_lock(&m->mu);
	memset(mi, 0, sizeof(*mi));
	pthread_mutex_unlock(&m->mu);
}

/* ------------------------------------------------------------ done items */

/* done_find - the index of @item in m->done, or where it would go. */
static unsigned
done_find(const struct sk_member *m, uint32_t item)
{
	unsigned lo = 0, hi = m->ndone;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (m->done[mid] < item)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool
sk_member_done_has(const struct sk_member *m, uint32_t item)
{
	unsigned i = done_find(m, item);

	return i < m->ndone && m->done[i] == item;
}

bool
sk_member_done_add(struct sk_member *m, uint32_t item)
{
	unsigned i = done_find(m, item);

	if (i < m->ndone && m->done[i] == item)
		return true;
	if (m->ndone == SK_MEMBER_DONE_MAX)
		return false;
	memmove(&m->done[i + 1], &m->done[i], (m->ndone - i) * sizeof(m->done[0]));
	m->done[i] = item;
	m->ndone++;
	return true;
}

void
sk_member_done_del(struct sk_member *m, uint32_t item)
{
	unsigned i = done_find(m, item);

	if (i < m->ndone && m->done[i] == item) {
		memmove(&m->done[i], &m->done[i + 1], (m->ndone - i - 1) * sizeof(m->done[0]));
		m->ndone--;
	}
}

/* ------------------------------------------------------------ forgotten */

/* forgotten_load - the item's forgotten members from LMDB, unless loaded. */
static int
forgotten_load(struct sk_member *m, struct mitem *mi)
{
	int rc = 0;

	if (!mi->forgotten_loaded) {
		rc = sk_store_cluster_forgotten_get(m->ctl->store, mi->item, &mi->forgotten);
		mi->forgotten_loaded = rc == 0;
	}
	return rc;
}

bool
sk_member_is_forgotten(const struct mitem *mi, const char *id)
{
	for (uint32_t i = 0; i < mi->forgotten.n; i++)
		if (strcmp(mi->forgotten.m[i].id, id) == 0)
			return true;
	return false;
}

int
sk_member_init_pool(struct sk_member *m, struct mitem *mi, uint64_t total)
{
	const char *names[SK_CPOOL_MEMBERS_MAX];
	struct sk_cpool_forgotten f[SK_STORE_FORGOTTEN_MAX];
	const char *me = m->conf.redis.member;
	uint32_t n = 0;
	int rc;

	mi->forgotten_loaded = false; /* the admin API's forget too */
	rc = forgotten_load(m, mi);

	if (rc != 0)
		return rc;
	/* This member always (init.lua leaves it out if it was forgotten). */
	names[n++] = me;
	for (uint32_t i = 0; i < m->conf.nmembers; i++)
		if (strcmp(m->conf.members[i], me) != 0 &&
		    !sk_member_is_forgotten(mi, m->conf.members[i]))
			names[n++] = m->conf.members[i];
	for (uint32_t i = 0; i < mi->forgotten.n; i++)
		f[i] = (struct sk_cpool_forgotten){mi->forgotten.m[i].id, mi->forgotten.m[i].held};
	return sk_cpool_init_forgotten(m->pool, mi->item, total, names, n, f, mi->forgotten.n);
}

int
sk_member_remember_forgotten(struct sk_member *m, uint32_t item, const char *id, uint64_t held)
{
	int rc = sk_store_cluster_forget(m->ctl->store, item, id, held);

	if (rc == 0)
		sk_logf(SK_LOG_NOTICE, "cluster",
			"item=%" PRIu32 " forgotten=%s held=%" PRIu64
			" msg=\"kept in LMDB: counted as gone by every init\"",
			item, id, held);
	else if (rc < 0)
		sk_logf(SK_LOG_ERROR, "cluster",
			"item=%" PRIu32 " forgotten=%s held=%" PRIu64
			" msg=\"not kept in LMDB: learnt again from the pool\" err=%s",
			item, id, held, strerror(-rc));
	return rc < 0 ? rc : 0;
}

void
sk_member_learn_forgotten(struct sk_member *m, struct mitem *mi)
{
	const struct sk_cpool_view *v = &mi->view;

	if (forgotten_load(m, mi) != 0)
		return;
	for (uint32_t i = v->active; i < v->members; i++) {
		if (sk_member_is_forgotten(mi, v->member[i]))
			continue;
		if (sk_member_remember_forgotten(m, mi->item, v->member[i], v->held[i]) != 0)
			continue;
		mi->forgotten_loaded = false;
		if (forgotten_load(m, mi) != 0)
			return;
	}
}
