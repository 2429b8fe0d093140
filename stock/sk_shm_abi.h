/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The shared-memory ABI: everything the dataplane (DPDK primary, creator of
 * the arena) and the control plane (secondary, sk_shm_attach()) must agree
 * on byte for byte, in one header: the memzone's name, the arena's header
 * with the per-lcore progress and stats blocks, the buy outcome numbering
 * and its names, and the layout fingerprint that proves both sides were
 * built from the same definitions.
 *
 * The items, dedup slots and status bytes in the arena are laid out by
 * their own modules (struct sk_item in sk_stock.h, struct sk_dedup_slot in
 * sk_dedup.h, enum sk_order_status in sk_order.h; the ring records are
 * struct sk_order_rec): the fingerprint covers their sizes too.
 *
 * Nothing here is a pointer. Writers: the dataplane creates the header
 * (sk_shm_init()) and writes the stats blocks, one lcore each; the control
 * plane writes the progress blocks.
 */
#ifndef SK_SHM_ABI_H
#define SK_SHM_ABI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_common.h"
#include "sk_order.h"
#include "sk_stock.h" /* SK_MAX_LCORES */

#define SK_SHM_MEMZONE "sk_shm"
#define SK_SHM_MAGIC   UINT64_C(0x736b696c6c73686d) /* "skillshm" */
/**
 * ABI version of the arena: bump it on any change the layout fingerprint
 * cannot see (a field's meaning, a counter's unit, a status value).
 */
#define SK_SHM_VERSION                                                                             \
	11 /* 11: item gate and reserved_only flags, a user tag per status slot (users_off), 24    \
	      outcome slots;                                                                       \
	      10: settled is an order id, per-lcore status windows (slot reuse, epoch roll);       \
	      9: an item's per-request fields in its first cache line; 8: TLS area in the stats    \
	      block; 7: order record 64 B, client of either family; 6: member, order id layout;    \
	      5: cluster items; 4: item state paused */

/**
 * How far the control plane got with one lcore's orders: every order of
 * that lcore with an id below @c settled is durable (confirmed) or failed.
 * Orders leave a ring in the order the lcore made them, and one lcore's ids
 * grow in that order (also across an epoch roll), so one number says it
 * all: the dataplane answers its parked winners by comparing their id with
 * it, and reuses a status slot once the order in it is below it.
 */
struct sk_shm_progress {
	_Atomic uint64_t settled;      /**< an order id; written by the control plane only */
	_Atomic uint64_t heartbeat_ns; /**< control plane's last pass (wall clock) */
} sk_cache_aligned;

/** Buy outcome slots of a stats block (enum sk_seckill_outcome fits). */
#define SK_SHM_OUTCOMES 24

/**
 * Outcomes of the buy route, one counter each: the index of
 * sk_shm_lcore_stats::buy_outcome. Part of the ABI: the dataplane counts by
 * this numbering, the control plane reads by it (sk_shm_outcome_name()).
 * Append new values before SK_SECKILL__COUNT, never renumber: either
 * changes the layout fingerprint, so a control plane of another build
 * refuses the arena instead of mislabelling its counters.
 */
enum sk_seckill_outcome {
	SK_SECKILL_WON = 0,	 /**< 202 queued */
	SK_SECKILL_DUPLICATE,	 /**< winner's retry: its order again */
	SK_SECKILL_LIMIT,	 /**< 409 */
	SK_SECKILL_SOLD_OUT,	 /**< 410 (flag, or found empty by the buy) */
	SK_SECKILL_NOT_STARTED,	 /**< 425 */
	SK_SECKILL_ENDED,	 /**< 403 (ended or closed) */
	SK_SECKILL_UNAUTHORIZED, /**< 401 */
	SK_SECKILL_RATE_LIMITED, /**< 429 from the rate limits */
	SK_SECKILL_BUSY,	 /**< 429 from the engine (pending buy, ring full) */
	SK_SECKILL_UNAVAILABLE,	 /**< 503: dedup slice or order sequence exhausted */
	SK_SECKILL_NOT_FOUND,	 /**< 404 unknown item */
	SK_SECKILL_BAD_REQUEST,	 /**< 400 */
	SK_SECKILL_PAUSED,	 /**< 503 "paused": an operator paused the sale */
	SK_SECKILL_RESTOCKING,	 /**< 503 "restocking": a cluster item empty here, not
				      everywhere (units may come from the pool) */
	SK_SECKILL_GATE,	 /**< 403 "gate": the item requires the token's gate claim for
				      it, and the buyer's token has none (or one of another item) */
	SK_SECKILL_NOT_RESERVED, /**< 403 "not_reserved": a reserved_only item, the buyer not
				      in its reservation set */
	SK_SECKILL_DENIED,	 /**< 403 "denied": the address or the user is on a deny list */
	SK_SECKILL__COUNT
};

_Static_assert(SK_SECKILL__COUNT <= SK_SHM_OUTCOMES,
	       "the outcomes must fit the arena's stats block");

/** HTTP status slots of a stats block (the slots of sk_app fit). */
#define SK_SHM_HTTP_SLOTS 32

/**
 * Buckets of the buy latency histogram: SK_SHM_LAT_BUCKETS - 1 upper bounds
 * (sk_shm_lat_bounds_ns: 1-2-5 steps from 1 us to 5 s) and +Inf.
 */
#define SK_SHM_LAT_BUCKETS 22

/** Upper bounds (inclusive, ns) of the latency buckets but the last (+Inf). */
extern const uint64_t sk_shm_lat_bounds_ns[SK_SHM_LAT_BUCKETS - 1];

/**
 * Words of the TLS area of a stats block (sk_shm_lcore_stats::tls): room
 * for the dataplane's struct sk_tls_stats (tls/sk_tls.h), which both
 * processes lay over it; the dataplane asserts at build time that it fits.
 * That struct is part of this ABI although stock/ cannot see it: a change
 * to its fields, or to the alert or suite slots, needs a SK_SHM_VERSION
 * bump.
 */
#define SK_SHM_TLS_WORDS 128

/**
 * The request counters of one dataplane lcore, for readers in other
 * processes (the control plane's /metrics). Single writer: the lcore, with
 * relaxed atomic stores (sk_shm_stat_add()); readers load each field with
 * sk_shm_stat_read() and never see a torn value, but the block is not a
 * snapshot. All counters are monotonic; zero after sk_shm_init().
 */
struct sk_shm_lcore_stats {
	/** buy requests (POST /v1/seckill/{item}) by enum sk_seckill_outcome */
	uint64_t buy_outcome[SK_SHM_OUTCOMES];
	uint64_t order_polls; /**< GET /v1/orders/{id} */
	uint64_t item_reads;  /**< GET /v1/items/{item} */
	/**
	 * HTTP responses by status: http_status[k] counts status http_code[k]
	 * (0: every status without a slot of its own) for k < http_slots. The
	 * writer fills the codes once, then publishes http_slots (release).
	 */
	uint32_t http_slots;
	uint16_t http_code[SK_SHM_HTTP_SLOTS];
	uint64_t http_status[SK_SHM_HTTP_SLOTS];
	/**
	 * Buy answers by latency (packet burst received -> answer written):
	 * lat_bucket[b] counts latencies in (bound[b-1], bound[b]], the last
	 * bucket everything above 5 s; not cumulative. The count is the sum
	 * of the buckets.
	 */
	uint64_t lat_bucket[SK_SHM_LAT_BUCKETS];
	uint64_t lat_sum_ns; /**< sum of the latencies counted, ns */
	/**
	 * The lcore's TLS counters (struct sk_tls_stats laid over the area,
	 * written by tls/ with plain stores of aligned words; readers load
	 * each word relaxed). All zero while TLS is off.
	 */
	_Alignas(SK_CACHE_LINE) uint64_t tls[SK_SHM_TLS_WORDS];
} sk_cache_aligned;

/**
 * Most high-water marks of earlier runs the arena keeps (sk_shm::marks):
 * one per (epoch, lcore) of this member with orders in the store; a nightly
 * run of 8 lcores fills it in about four months, then only the newest are
 * kept.
 */
#define SK_SHM_MARKS 1024

/** The arena's header, at offset 0. */
struct sk_shm {
	uint64_t magic;	      /**< SK_SHM_MAGIC */
	uint32_t version;     /**< SK_SHM_VERSION */
	uint32_t nlcores;     /**< dataplane lcores, 1..SK_MAX_LCORES */
	uint64_t fingerprint; /**< sk_shm_abi_fingerprint() of the creator's build */
	uint32_t max_items;
	uint32_t index_mask; /**< id hash size - 1 */
	uint32_t status_bits;
	uint32_t epoch;
	uint64_t size;	    /**< bytes of the whole arena */
	uint64_t items_off; /**< struct sk_item[max_items] */
	uint64_t index_off; /**< _Atomic uint32_t[index_mask + 1]: item index + 1, 0 = empty */
	uint64_t dedup_off; /**< struct sk_dedup_slot[dedup_slots] */
	uint64_t dedup_slots;
	uint64_t status_off;	     /**< uint8_t[nlcores << status_bits] */
	uint64_t users_off;	     /**< uint32_t[nlcores << status_bits]: each slot's user tag */
	_Atomic uint64_t dedup_used; /**< slots already handed to items */
	_Atomic uint32_t nitems;     /**< items published so far */
	uint32_t member;	     /**< cluster member number of the ids (0: standalone) */
	struct sk_shm_progress progress[SK_MAX_LCORES];	 /**< per lcore */
	struct sk_status_window win[SK_MAX_LCORES];	 /**< per lcore: ids in the status table */
	struct sk_shm_lcore_stats lstats[SK_MAX_LCORES]; /**< per dataplane lcore */
	/**
	 * Earlier runs: the highest stored order id of each (epoch, lcore) of
	 * this member (sk_recover_marks()), ascending, written once at start
	 * before any lcore sells, read-only after (sk_shm_earlier()).
	 */
	uint32_t nmarks;
	uint32_t marks_from; /**< epochs >= this are covered by the marks; 0: none */
	uint64_t marks[SK_SHM_MARKS];
};

/*
 * Each lcore's blocks on lines of their own: the control plane writes a
 * progress block and its lcore reads it, each lcore writes its stats block
 * on every request; no two lcores (nor the header's read-mostly fields)
 * share a line.
 */
_Static_assert(sizeof(struct sk_shm_progress) % SK_CACHE_LINE == 0 &&
		       sizeof(struct sk_shm_lcore_stats) % SK_CACHE_LINE == 0,
	       "per-lcore blocks must fill whole cache lines");
_Static_assert(offsetof(struct sk_shm, progress) % SK_CACHE_LINE == 0 &&
		       offsetof(struct sk_shm, lstats) % SK_CACHE_LINE == 0,
	       "per-lcore blocks must start on a cache line");

/**
 * sk_shm_outcome_name - the metrics label of buy outcome @p outcome ("won",
 * "sold_out", ...; enum sk_seckill_outcome), or NULL for a slot of
 * sk_shm_lcore_stats::buy_outcome that no outcome uses (@p outcome >=
 * SK_SECKILL__COUNT). The one table of names, used by the dataplane's
 * telemetry and by the control plane's /metrics. Thread-safe.
 */
const char *sk_shm_outcome_name(unsigned outcome);

/**
 * sk_shm_abi_fingerprint - the layout fingerprint of this build: a 64-bit
 * hash of SK_SHM_VERSION, SK_MAX_LCORES, SK_CACHE_LINE, the outcome, HTTP
 * and latency slot counts, the TLS area's size, the latency bounds, the
 * outcome names in their order, and the size and field offsets of the structs the two processes
 * share (header, progress and stats blocks, item, bucket, dedup slot, order
 * record), and the number of order states (the status byte values). Two
 * builds that disagree on any of them get different values.
 * sk_shm_init() stores it in the header, sk_shm_attach() compares it.
 * Pure: same value on every call; thread-safe; no allocation.
 */
uint64_t sk_shm_abi_fingerprint(void);

#endif /* SK_SHM_ABI_H */
