/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layout of the shared arena (see sk_shm.h): header, items, id hash, dedup
 * slots, status bytes - each section cache-line aligned. Also the ABI's
 * two definitions (sk_shm_abi.h): the outcome names and the layout
 * fingerprint, and the attach check that compares it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "sk_shm.h"

#define MAX_PROBE 64

const uint64_t sk_shm_lat_bounds_ns[SK_SHM_LAT_BUCKETS - 1] = {
	1000,	  2000,	     5000,	10000,	   20000,      50000,	   100000,
	200000,	  500000,    1000000,	2000000,   5000000,    10000000,   20000000,
	50000000, 100000000, 200000000, 500000000, 1000000000, 2000000000, 5000000000,
};

static const char *const outcome_names[SK_SECKILL__COUNT] = {
	[SK_SECKILL_WON] = "won",
	[SK_SECKILL_DUPLICATE] = "duplicate",
	[SK_SECKILL_LIMIT] = "limit",
	[SK_SECKILL_SOLD_OUT] = "sold_out",
	[SK_SECKILL_NOT_STARTED] = "not_started",
	[SK_SECKILL_ENDED] = "ended",
	[SK_SECKILL_UNAUTHORIZED] = "unauthorized",
	[SK_SECKILL_RATE_LIMITED] = "rate_limited",
	[SK_SECKILL_BUSY] = "busy",
	[SK_SECKILL_UNAVAILABLE] = "unavailable",
	[SK_SECKILL_NOT_FOUND] = "not_found",
	[SK_SECKILL_BAD_REQUEST] = "bad_request",
	[SK_SECKILL_PAUSED] = "paused",
	[SK_SECKILL_RESTOCKING] = "restocking",
	[SK_SECKILL_GATE] = "gate",
	[SK_SECKILL_NOT_RESERVED] = "not_reserved",
	[SK_SECKILL_DENIED] = "denied",
};

const char *
sk_shm_outcome_name(unsigned outcome)
{
	return outcome < SK_SECKILL__COUNT ? outcome_names[outcome] : NULL;
}

/* ------------------------------------------------------------------------
 * Layout fingerprint: FNV-1a (64-bit) over the values below, each as 8
 * little-endian bytes, and over the outcome names with their NULs.
 */

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME  UINT64_C(0x100000001b3)

static uint64_t
fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

static uint64_t
fnv_u64(uint64_t h, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * FNV_PRIME;
	return h;
}

/* The size of @type and the offset of each of the listed members. */
#define SZ(type)	 (uint64_t)sizeof(struct type)
#define OFF(type, field) (uint64_t) offsetof(struct type, field)

uint64_t
sk_shm_abi_fingerprint(void)
{
	const uint64_t v[] = {
		SK_SHM_VERSION,
		SK_MAX_LCORES,
		SK_CACHE_LINE,
		SK_SHM_OUTCOMES,
		SK_SECKILL__COUNT,
		SK_SHM_HTTP_SLOTS,
		SK_SHM_LAT_BUCKETS,
		SK_SHM_TLS_WORDS,
		SK_ORDER_SEQ_BITS,
		SK_ORDER_LCORE_BITS,
		SK_ORDER_MEMBER_BITS,
		SK_ORDER_EPOCH_BITS,
		SK_ORDER_EPOCH_BASE,
		/* the header */
		SZ(sk_shm),
		OFF(sk_shm, magic),
		OFF(sk_shm, version),
		OFF(sk_shm, nlcores),
		OFF(sk_shm, fingerprint),
		OFF(sk_shm, max_items),
		OFF(sk_shm, index_mask),
		OFF(sk_shm, status_bits),
		OFF(sk_shm, epoch),
		OFF(sk_shm, size),
		OFF(sk_shm, items_off),
		OFF(sk_shm, index_off),
		OFF(sk_shm, dedup_off),
		OFF(sk_shm, dedup_slots),
		OFF(sk_shm, status_off),
		OFF(sk_shm, users_off),
		OFF(sk_shm, dedup_used),
		OFF(sk_shm, nitems),
		OFF(sk_shm, member),
		OFF(sk_shm, progress),
		OFF(sk_shm, win),
		OFF(sk_shm, lstats),
		OFF(sk_shm, nmarks),
		OFF(sk_shm, marks_from),
		OFF(sk_shm, marks),
		SK_SHM_MARKS,
		/* the per-lcore blocks */
		SZ(sk_status_window),
		OFF(sk_status_window, oldest),
		OFF(sk_status_window, next),
		OFF(sk_status_window, seq_bits),
		SZ(sk_shm_progress),
		OFF(sk_shm_progress, settled),
		OFF(sk_shm_progress, heartbeat_ns),
		SZ(sk_shm_lcore_stats),
		OFF(sk_shm_lcore_stats, buy_outcome),
		OFF(sk_shm_lcore_stats, order_polls),
		OFF(sk_shm_lcore_stats, item_reads),
		OFF(sk_shm_lcore_stats, http_slots),
		OFF(sk_shm_lcore_stats, http_code),
		OFF(sk_shm_lcore_stats, http_status),
		OFF(sk_shm_lcore_stats, lat_bucket),
		OFF(sk_shm_lcore_stats, lat_sum_ns),
		OFF(sk_shm_lcore_stats, tls),
		/* what the other modules lay out in the arena and the rings */
		SZ(sk_item),
		OFF(sk_item, state),
		OFF(sk_item, sold_out),
		OFF(sk_item, end_ns),
		OFF(sk_item, total),
		OFF(sk_item, nlcores),
		OFF(sk_item, dedup_off),
		OFF(sk_item, dedup_mask),
		OFF(sk_item, cluster),
		OFF(sk_item, cluster_sold_out),
		OFF(sk_item, batch_max),
		OFF(sk_item, pool),
		OFF(sk_item, returned),
		OFF(sk_item, added),
		OFF(sk_item, removed),
		OFF(sk_item, bucket),
		SZ(sk_bucket),
		OFF(sk_bucket, sold),
		OFF(sk_bucket, restocking),
		SZ(sk_dedup_slot),
		OFF(sk_dedup_slot, ctl),
		OFF(sk_dedup_slot, order),
		SZ(sk_order_rec),
		SK_ORDER_STATUS_COUNT,
	};
	uint64_t h = FNV_OFFSET;

	for (size_t i = 0; i < SK_ARRAY_SIZE(v); i++)
		h = fnv_u64(h, v[i]);
	for (size_t i = 0; i < SK_ARRAY_SIZE(sk_shm_lat_bounds_ns); i++)
		h = fnv_u64(h, sk_shm_lat_bounds_ns[i]);
	for (unsigned k = 0; k < SK_SECKILL__COUNT; k++)
		h = fnv_bytes(h, outcome_names[k], strlen(outcome_names[k]) + 1);
	return h;
}

#undef SZ
#undef OFF

static inline _Atomic uint32_t *
index_base(const struct sk_shm *shm)
{
	return (_Atomic uint32_t *)((uintptr_t)shm + shm->index_off);
}

static inline struct sk_item *
item_base(const struct sk_shm *shm)
{
	return (struct sk_item *)((uintptr_t)shm + shm->items_off);
}

static inline uint32_t
id_hash(uint32_t id)
{
	return id * UINT32_C(0x9e3779b1);
}

static uint32_t
pow2_at_least(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < (UINT32_C(1) << 31))
		p <<= 1;
	return p;
}

/* Offsets of each section for @conf; false on overflow. */
static bool
layout(const struct sk_shm_conf *conf, struct sk_shm *l)
{
	size_t off = sk_align_up(sizeof(struct sk_shm), SK_CACHE_LINE), n;

	l->index_mask = pow2_at_least(2 * (uint64_t)conf->max_items) - 1;
	l->items_off = off;
	if (!sk_mul_size(conf->max_items, sizeof(struct sk_item), &n) || !sk_add_size(off, n, &off))
		return false;
	l->index_off = off;
	if (!sk_add_size(off, ((size_t)l->index_mask + 1) * sizeof(uint32_t), &off))
		return false;
	off = sk_align_up(off, SK_CACHE_LINE);
	l->dedup_off = off;
	if (!sk_mul_size(conf->dedup_slots, sizeof(struct sk_dedup_slot), &n) ||
	    !sk_add_size(off, n, &off))
		return false;
	l->status_off = off;
	if (!sk_add_size(off, (size_t)conf->nlcores << conf->status_bits, &off))
		return false;
	/* status_bits >= 10: the bytes above end on a 4-byte boundary */
	l->users_off = off;
	if (!sk_mul_size((size_t)conf->nlcores << conf->status_bits, sizeof(uint32_t), &n) ||
	    !sk_add_size(off, n, &off))
		return false;
	l->size = sk_align_up(off, SK_CACHE_LINE);
	return l->size >= off;
}

static bool
conf_valid(const struct sk_shm_conf *c)
{
	return c->nlcores >= 1 && c->nlcores <= SK_MAX_LCORES && c->max_items >= 1 &&
	       c->max_items <= (UINT32_C(1) << 20) && c->dedup_slots >= SK_SHM_DEDUP_MIN &&
	       c->status_bits >= 10 && c->status_bits <= SK_ORDER_SEQ_BITS &&
	       sk_order_epoch_valid(c->epoch) && c->member <= SK_ORDER_MEMBER_MAX;
}

size_t
sk_shm_size(const struct sk_shm_conf *conf)
{
	struct sk_shm l;

	if (!conf_valid(conf) || !layout(conf, &l))
		return 0;
	return l.size;
}

struct sk_shm *
sk_shm_init(void *mem, size_t len, const struct sk_shm_conf *conf)
{
	struct sk_shm l = {0};

	if (!conf_valid(conf) || !layout(conf, &l) || len < l.size ||
	    ((uintptr_t)mem & (SK_CACHE_LINE - 1)))
		return NULL;
	memset(mem, 0, l.size);

	struct sk_shm *shm = mem;
	shm->magic = SK_SHM_MAGIC;
	shm->version = SK_SHM_VERSION;
	shm->nlcores = conf->nlcores;
	shm->fingerprint = sk_shm_abi_fingerprint();
	shm->max_items = conf->max_items;
	shm->index_mask = l.index_mask;
	shm->status_bits = conf->status_bits;
	shm->epoch = conf->epoch;
	shm->member = conf->member;
	shm->size = l.size;
	shm->items_off = l.items_off;
	shm->index_off = l.index_off;
	shm->dedup_off = l.dedup_off;
	shm->dedup_slots = conf->dedup_slots;
	shm->status_off = l.status_off;
	shm->users_off = l.users_off;
	for (unsigned i = 0; i < conf->nlcores; i++) {
		/* seq 0 of the run's first epoch stays unused: an empty window */
		uint64_t first = sk_order_id_make(conf->epoch, conf->member, i, 1);
		atomic_store(&shm->win[i].oldest, first);
		atomic_store(&shm->win[i].next, first);
		shm->win[i].seq_bits = SK_ORDER_SEQ_BITS;
		atomic_store(&shm->progress[i].settled, first);
	}
	return shm;
}

struct sk_shm *
sk_shm_attach(void *mem, size_t len, char *err, size_t errlen)
{
	struct sk_shm *shm = mem;
	uint64_t fp = sk_shm_abi_fingerprint();

	/* magic, version and fingerprint sit in the first 24 bytes of every version */
	if (mem == NULL || len < offsetof(struct sk_shm, fingerprint) + sizeof(shm->fingerprint) ||
	    shm->magic != SK_SHM_MAGIC) {
		sk_set_err(err, errlen, "not a seckill arena (no magic)");
		return NULL;
	}
	if (shm->version != SK_SHM_VERSION) {
		sk_set_err(err, errlen,
			   "arena ABI version %" PRIu32 ", this program's is %d: the dataplane "
			   "and this program were built from another version: rebuild both",
			   shm->version, SK_SHM_VERSION);
		return NULL;
	}
	if (shm->fingerprint != fp) {
		sk_set_err(err, errlen,
			   "arena layout fingerprint 0x%016" PRIx64 ", this program's is "
			   "0x%016" PRIx64 ": the dataplane and this program were built from "
			   "another version: rebuild both",
			   shm->fingerprint, fp);
		return NULL;
	}
	if (len < sizeof(*shm) || shm->nlcores == 0 || shm->nlcores > SK_MAX_LCORES ||
	    shm->size > len) {
		sk_set_err(err, errlen,
			   "arena header damaged: %" PRIu32 " lcores, %" PRIu64
			   " bytes in a mapping of %zu",
			   shm->nlcores, shm->size, len);
		return NULL;
	}
	return shm;
}

/* index_slot - a free slot of the id hash for @id, or UINT32_MAX. */
static uint32_t
index_slot(const struct sk_shm *shm, uint32_t id)
{
	_Atomic uint32_t *index = index_base(shm);
	uint32_t h = id_hash(id);

	for (uint32_t i = 0; i < MAX_PROBE && i <= shm->index_mask; i++)
		if (atomic_load(&index[(h + i) & shm->index_mask]) == 0)
			return (h + i) & shm->index_mask;
	return UINT32_MAX;
}

struct sk_item *
sk_shm_item_find(const struct sk_shm *shm, uint32_t id)
{
	_Atomic uint32_t *index = index_base(shm);
	uint32_t h = id_hash(id);

	for (uint32_t i = 0; i < MAX_PROBE && i <= shm->index_mask; i++) {
		uint32_t v = atomic_load_explicit(&index[(h + i) & shm->index_mask],
						  memory_order_acquire);
		if (v == 0)
			return NULL;
		struct sk_item *it = &item_base(shm)[v - 1];
		if (it->id == id)
			return it;
	}
	return NULL;
}

struct sk_item *
sk_shm_item_at(const struct sk_shm *shm, uint32_t i)
{
	if (i >= atomic_load_explicit(&((struct sk_shm *)shm)->nitems, memory_order_acquire))
		return NULL;
	return &item_base(shm)[i];
}

int
sk_shm_item_prepare(struct sk_shm *shm, const struct sk_stock_conf *conf, uint64_t dedup,
		    struct sk_item **out)
{
	if (conf->id == 0)
		return -EINVAL;
	if (sk_shm_item_find(shm, conf->id) != NULL)
		return -EEXIST;

	uint32_t n = atomic_load(&shm->nitems);
	if (n >= shm->max_items)
		return -ENOSPC;

	uint64_t used = atomic_load(&shm->dedup_used);
	uint64_t left = shm->dedup_slots - used;
	if (dedup == 0) {
		dedup = conf->total > left / 8 ? left : conf->total * 8;
		if (dedup < SK_SHM_DEDUP_MIN)
			dedup = SK_SHM_DEDUP_MIN;
		/* the largest power of two that fits what is asked and left */
		uint64_t p = pow2_at_least(dedup);
		while (p > left && p > 1)
			p >>= 1;
		dedup = p;
	} else {
		dedup = pow2_at_least(dedup);
	}
	if (dedup > left || dedup < SK_SHM_DEDUP_MIN)
		return -ENOSPC;
	if (index_slot(shm, conf->id) == UINT32_MAX)
		return -ENOSPC;

	struct sk_stock_conf c = *conf;
	c.nlcores = shm->nlcores;
	struct sk_item *it = &item_base(shm)[n];
	int rc = sk_stock_init(it, &c);
	if (rc != 0)
		return rc;
	it->dedup_off = used;
	it->dedup_mask = (uint32_t)(dedup - 1); /* pow2_at_least(): at most 2^31 */
	memset((char *)shm + shm->dedup_off + used * sizeof(struct sk_dedup_slot), 0,
	       dedup * sizeof(struct sk_dedup_slot));
	*out = it;
	return 0;
}

int
sk_shm_item_publish(struct sk_shm *shm, struct sk_item *it)
{
	uint32_t n = atomic_load(&shm->nitems);

	if (n >= shm->max_items || it != &item_base(shm)[n] ||
	    it->dedup_off != atomic_load(&shm->dedup_used))
		return -EINVAL;
	uint32_t slot = index_slot(shm, it->id);
	if (slot == UINT32_MAX)
		return -ENOSPC;

	atomic_store(&shm->dedup_used, it->dedup_off + it->dedup_mask + 1);
	atomic_store_explicit(&shm->nitems, n + 1, memory_order_release);
	atomic_store_explicit(&index_base(shm)[slot], n + 1, memory_order_release);
	return 0;
}

int
sk_shm_item_add(struct sk_shm *shm, const struct sk_stock_conf *conf, uint64_t dedup,
		struct sk_item **out)
{
	struct sk_item *it;
	int rc = sk_shm_item_prepare(shm, conf, dedup, &it);

	if (rc == 0)
		rc = sk_shm_item_publish(shm, it);
	if (rc == 0 && out != NULL)
		*out = it;
	return rc;
}

void
sk_shm_dedup(const struct sk_shm *shm, const struct sk_item *it, struct sk_dedup *d)
{
	d->slot = (struct sk_dedup_slot *)((uintptr_t)shm + shm->dedup_off) + it->dedup_off;
	d->mask = it->dedup_mask;
}

void
sk_shm_status(const struct sk_shm *shm, struct sk_status *st)
{
	st->base = (_Atomic uint8_t *)((uintptr_t)shm + shm->status_off);
	st->users = (_Atomic uint32_t *)((uintptr_t)shm + shm->users_off);
	st->win = shm->win;
	st->nlcores = shm->nlcores;
	st->bits = shm->status_bits;
	st->epoch = shm->epoch;
	st->member = shm->member;
}

int
sk_shm_set_marks(struct sk_shm *shm, const uint64_t *marks, uint32_t n, bool more)
{
	if (n > SK_SHM_MARKS)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (sk_order_id_member(marks[i]) != shm->member ||
		    (i > 0 && marks[i] <= marks[i - 1]))
			return -EINVAL;
	memcpy(shm->marks, marks, n * sizeof(marks[0]));
	shm->nmarks = n;
	shm->marks_from = n == 0 ? 0 : sk_order_id_epoch(marks[0]) + (more ? 1 : 0);
	return 0;
}

enum sk_shm_earlier
sk_shm_earlier(const struct sk_shm *shm, uint64_t id)
{
	uint32_t e = sk_order_id_epoch(id);

	if (sk_order_id_member(id) != shm->member || e >= shm->epoch || shm->nmarks == 0 ||
	    e < shm->marks_from)
		return SK_SHM_EARLIER_UNKNOWN;
	/* the first mark at or above the start of id's (epoch, lcore) group */
	uint64_t group = id & ~(uint64_t)(SK_ORDER_SEQ_MAX - 1);
	uint32_t lo = 0, hi = shm->nmarks;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (shm->marks[mid] < group)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < shm->nmarks && (shm->marks[lo] & ~(uint64_t)(SK_ORDER_SEQ_MAX - 1)) == group &&
	    id <= shm->marks[lo])
		return SK_SHM_EARLIER_STORED;
	return SK_SHM_EARLIER_LOST;
}
