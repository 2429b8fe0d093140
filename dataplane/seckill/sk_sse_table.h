/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The open order-event streams of one lcore (GET /v1/orders/{id}/events):
 * a fixed table of streams, a count of open streams per user, and the
 * decision of what each stream sends next. Plain C, no DPDK: the caller
 * gives the memory (sk_sse_table_size() bytes, allocated once at start) and
 * does the sending.
 *
 * Bounded work: the table keeps its open streams dense (slots 0..n-1 of a
 * permutation), so sk_sse_table_scan() hands out a bounded slice of them
 * per call, round robin; a change of an order's status reaches its stream
 * within n / slice calls. Opening, closing and the per-user count are O(1)
 * expected (open addressing, at most half full).
 *
 * Memory: sk_sse_table_size() = about 80 bytes per stream of @c max (the
 * stream, two permutation words, two user-count entries).
 *
 * Thread-safety: one table per lcore, used by that lcore only.
 */
#ifndef SK_SSE_TABLE_H
#define SK_SSE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_order.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The pseudo-status of an order that left the status table (its slot reused). */
#define SK_SSE_SETTLED SK_ORDER_STATUS_COUNT

/** Most streams sk_sse_table_scan() hands out per call. */
#define SK_SSE_SCAN_MAX 64

/** One open stream. */
struct sk_sse_stream {
	void *conn;	 /**< the caller's connection handle */
	uint64_t order;	 /**< the order followed */
	uint64_t user;	 /**< its owner, the follower */
	uint64_t ka_due; /**< TSC when the keep-alive comment is due */
	uint8_t last;	 /**< the status last sent (enum sk_order_status, SK_SSE_SETTLED) */
};

/** Counters (monotonic, but @c open: a gauge). */
struct sk_sse_stats {
	uint64_t open;	       /**< gauge: streams open now */
	uint64_t opened;       /**< streams opened */
	uint64_t refused_max;  /**< refused: the lcore's cap (sse_max) */
	uint64_t refused_user; /**< refused: the user's cap (sse_per_user) */
	uint64_t events;       /**< status events pushed */
	uint64_t keepalives;   /**< keep-alive comments sent */
	uint64_t finished;     /**< streams closed after a final status */
};

/** A user's count of open streams (private). */
struct sk_sse_user {
	uint64_t user; /**< 0: empty entry */
	uint32_t count;
	uint32_t pad;
};

/** The table (its arrays follow it in the caller's memory). */
struct sk_sse_table {
	uint32_t max;		    /**< streams at most */
	uint32_t per_user;	    /**< streams of one user at most */
	uint32_t n;		    /**< open streams: slots perm[0..n) */
	uint32_t cursor;	    /**< next index of perm to scan */
	uint32_t umask;		    /**< user entries - 1 (a power of two >= 2 * max) */
	uint64_t ka_tsc;	    /**< keep-alive period, TSC cycles */
	struct sk_sse_stream *s;    /**< max streams, by slot */
	uint32_t *perm;		    /**< max: open slots first, then free ones */
	uint32_t *pos;		    /**< max: slot -> its index in perm */
	struct sk_sse_user *users;  /**< umask + 1 */
	struct sk_sse_stats *stats; /**< the counters: @c own, or where the owner points it
				       (e.g. its stats block) before the first open */
	struct sk_sse_stats own;
};

/** What a stream sends next (sk_sse_step()). */
enum sk_sse_action {
	SK_SSE_ACT_NOTHING = 0, /**< nothing due */
	SK_SSE_ACT_EVENT,	/**< a status event; the stream stays open */
	SK_SSE_ACT_LAST,	/**< a status event, then close: a final status */
	SK_SSE_ACT_KEEPALIVE,	/**< the keep-alive comment */
};

/**
 * sk_sse_table_size - bytes of a table of @p max streams (0 if @p max is 0
 * or above 2^24).
 */
size_t sk_sse_table_size(uint32_t max);

/**
 * sk_sse_table_init - lay a table out in @p mem (sk_sse_table_size(@p max)
 * bytes, 8-byte aligned, any content; it is zeroed).
 * @param per_user  streams of one user at most (>= 1)
 * @param ka_tsc    keep-alive period in TSC cycles (> 0)
 * @return the table, or NULL if an argument is out of range.
 */
struct sk_sse_table *sk_sse_table_init(void *mem, size_t len, uint32_t max, uint32_t per_user,
				       uint64_t ka_tsc);

/**
 * sk_sse_table_open - open a stream of @p user on @p order, with @p status
 * sent already (the caller sent its first event with the head).
 * @param slot  on 0: the stream's slot, stable until sk_sse_table_close()
 * @return 0, -EBUSY (the table is full: counted refused_max) or -EUSERS
 *   (@p user has per_user streams open: counted refused_user).
 */
int sk_sse_table_open(struct sk_sse_table *t, void *conn, uint64_t user, uint64_t order,
		      unsigned status, uint64_t now_tsc, uint32_t *slot);

/** sk_sse_table_close - free open slot @p slot (its user's count goes down). */
void sk_sse_table_close(struct sk_sse_table *t, uint32_t slot);

/** sk_sse_table_user_count - streams @p user has open. */
uint32_t sk_sse_table_user_count(const struct sk_sse_table *t, uint64_t user);

/**
 * sk_sse_table_scan - the next at most @p budget (<= SK_SSE_SCAN_MAX) open
 * slots, round robin from where the last call stopped, into @p out (each
 * once per call). The slots stay valid while the caller closes some of
 * them.
 * @return how many were written (at most the open streams).
 */
uint32_t sk_sse_table_scan(struct sk_sse_table *t, uint32_t budget, uint32_t *out);

/** sk_sse_final - whether @p status (enum sk_order_status or SK_SSE_SETTLED) ends a stream. */
bool sk_sse_final(unsigned status);

/**
 * sk_sse_status_name - the event name of @p status: "queued", "confirmed",
 * "paid", "cancelled", "failed", "refunded", "settled"; NULL for anything else.
 */
const char *sk_sse_status_name(unsigned status);

/**
 * sk_sse_step - what stream @p s sends now, its order's status being
 * @p status (sk_status_get(); SK_ORDER_NONE: no longer in the table,
 * which for a stream already open means settled). EVENT or LAST when the
 * status differs from the last sent (*@p send_status: what to send), else
 * KEEPALIVE once ka_due passed, else NOTHING. Pure: the caller calls
 * sk_sse_table_sent() once it sent.
 */
enum sk_sse_action sk_sse_step(const struct sk_sse_stream *s, unsigned status, uint64_t now_tsc,
			       unsigned *send_status);

/**
 * sk_sse_table_sent - record that stream @p slot sent @p action (status
 * @p status for an event): its last status, its next keep-alive, counters.
 */
void sk_sse_table_sent(struct sk_sse_table *t, uint32_t slot, enum sk_sse_action action,
		       unsigned status, uint64_t now_tsc);

/**
 * What sk_sse_table_poll() sends with: write @p len bytes of a stream on
 * connection @p conn. Returns 0 when written, -EAGAIN when there is no room
 * now (the stream tries again at its next turn), another negative errno
 * when the connection cannot take it (closing).
 */
typedef int (*sk_sse_send_fn)(void *arg, void *conn, const void *data, size_t len);

/**
 * What sk_sse_table_poll() calls once a stream sent its final event: the
 * owner frees @p slot (sk_sse_table_close()) and closes @p conn.
 */
typedef void (*sk_sse_end_fn)(void *arg, void *conn, uint32_t slot);

/**
 * sk_sse_table_poll - one turn of the streams: the next @p budget (<=
 * SK_SSE_SCAN_MAX) open streams (sk_sse_table_scan()) read their order's
 * status in @p st and send what sk_sse_step() says through @p send (the
 * event, or the keep-alive comment), then sk_sse_table_sent(); a final
 * event is followed by @p end. No allocation; bounded by @p budget.
 * @return the events and keep-alive comments sent.
 */
uint32_t sk_sse_table_poll(struct sk_sse_table *t, const struct sk_status *st, uint32_t budget,
			   uint64_t now_tsc, sk_sse_send_fn send, sk_sse_end_fn end, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* SK_SSE_TABLE_H */
