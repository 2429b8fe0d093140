/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The map grown online (sk_store_map.h): measure, decide, grow. The map
 * lock every transaction holds shared is sk_store.c's (txn_begin); this
 * file closes the gate to new transactions, takes the lock exclusive
 * around mdb_env_set_mapsize(), and opens the gate again.
 */
#include <errno.h>
#include <sys/statvfs.h>
#include <time.h>

#include "sk_store_impl.h"
#include "sk_store_map.h"

int
sk_store_map_info(struct sk_store *st, struct sk_store_map_info *mi)
{
	MDB_envinfo ei;
	MDB_stat ms;
	const char *path = NULL;
	struct statvfs vfs;
	int rc;

	memset(mi, 0, sizeof(*mi));
	if (st == NULL)
		return -EINVAL;
	store_map_shared(st);
	rc = mdb_env_info(st->env, &ei);
	if (rc == 0)
		rc = mdb_env_stat(st->env, &ms);
	if (rc == 0)
		rc = mdb_env_get_path(st->env, &path);
	store_map_unshare(st);
	if (rc != 0)
		return store_lmdb_err(rc);
	mi->page_size = ms.ms_psize;
	mi->map_size = ei.me_mapsize;
	mi->used_bytes = ((uint64_t)ei.me_last_pgno + 1) * ms.ms_psize;
	if (statvfs(path, &vfs) != 0)
		return -errno;
	mi->disk_free = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	return 0;
}

uint64_t
sk_store_map_target(const struct sk_store_map_policy *p, const struct sk_store_map_info *mi)
{
	static const struct sk_store_map_policy defaults = {0};

	if (p == NULL)
		p = &defaults;
	uint32_t pct = p->grow_at_pct != 0 ? p->grow_at_pct : SK_STORE_MAP_GROW_AT_DEFAULT;
	uint64_t map = mi->map_size;

	if (map == 0 || mi->page_size == 0)
		return 0;
	/* used / map < pct / 100, without overflow for any u64 */
	if ((unsigned __int128)mi->used_bytes * 100 < (unsigned __int128)map * pct)
		return 0;
	uint64_t step = p->step != 0 ? p->step : map;
	uint64_t want = map > UINT64_MAX - step ? UINT64_MAX : map + step;
	uint64_t disk = mi->used_bytes > UINT64_MAX - mi->disk_free
				? UINT64_MAX
				: mi->used_bytes + mi->disk_free;
	if (p->max_size != 0 && want > p->max_size)
		want = p->max_size;
	if (want > disk)
		want = disk;
	want -= want % mi->page_size;
	return want > map ? want : 0;
}

/* map_lock_wait - the map lock exclusive within @wait_ns: 0 or -EBUSY. */
static int
map_lock_wait(struct sk_store *st, int64_t wait_ns)
{
	if (wait_ns <= 0)
		return pthread_rwlock_trywrlock(&st->maplock) == 0 ? 0 : -EBUSY;

	struct timespec until = store_deadline(wait_ns);
	return pthread_rwlock_clockwrlock(&st->maplock, CLOCK_MONOTONIC, &until) == 0 ? 0 : -EBUSY;
}

int
sk_store_map_grow(struct sk_store *st, uint64_t size, int64_t wait_ns, int64_t *held_ns)
{
	MDB_envinfo ei;
	MDB_stat ms;

	if (held_ns != NULL)
		*held_ns = 0;
	if (st == NULL || (st->flags & SK_STORE_RDONLY) || size > SIZE_MAX)
		return -EINVAL;
	/* Close the gate to new transactions, then wait for the open ones. */
	SK_ASSERT(pthread_mutex_lock(&st->grow_gate) == 0);
	int64_t t0 = sk_clock_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&st->grow_pending, 1, __ATOMIC_RELEASE);
	int rc = map_lock_wait(st, wait_ns);
	if (rc != 0) {
		__atomic_store_n(&st->grow_pending, 0, __ATOMIC_RELEASE);
		SK_ASSERT(pthread_mutex_unlock(&st->grow_gate) == 0);
		return rc;
	}
	rc = mdb_env_info(st->env, &ei);
	if (rc == 0)
		rc = mdb_env_stat(st->env, &ms);
	if (rc == 0 && size <= ((uint64_t)ei.me_last_pgno + 1) * ms.ms_psize)
		rc = EINVAL; /* LMDB would round it up to the data in use, silently */
	if (rc == 0)
		rc = mdb_env_set_mapsize(st->env, (size_t)size);
	SK_ASSERT(pthread_rwlock_unlock(&st->maplock) == 0);
	__atomic_store_n(&st->grow_pending, 0, __ATOMIC_RELEASE);
	SK_ASSERT(pthread_mutex_unlock(&st->grow_gate) == 0);
	if (held_ns != NULL)
		*held_ns = sk_clock_ns(CLOCK_MONOTONIC) - t0;
	return store_lmdb_err(rc);
}
