/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Software dispatch for a port with a single RX/TX queue pair: the lcore
 * that owns the queue (the "owner") spreads received frames over all lcores
 * by sk_net_flow_hash(), through one ring per lcore, and transmits the
 * frames the other lcores queued on their TX ring. Each lcore keeps its own
 * TCP stack, exactly as with hardware RSS.
 *
 * @code
 *   owner:  rx_burst(q0) -> sk_dispatch_split() -> own frames -> sk_net_rx()
 *                                                \-> rx ring of lcore k
 *   lcore k: sk_dispatch_dequeue() -> sk_net_rx() ... sk_net_tx_flush()
 *            -> sk_dispatch_tx() (its sk_net_conf.tx_fn) -> tx ring of k
 *   owner:  sk_dispatch_tx_drain() -> tx_burst(q0)
 * @endcode
 *
 * ARP replies are copied to every lcore (each stack resolves its gateway
 * itself; the owner gets its copy through an rx ring of its own); every
 * other frame, ARP requests included, goes to exactly one lcore.
 *
 * Rings are single-producer/single-consumer (one producer: the owner for RX
 * rings, lcore k for its TX ring). Ownership of mbufs: a frame enqueued on a
 * ring belongs to the ring until dequeued; whatever a full ring refused is
 * freed on the spot and counted (drops are never silent).
 *
 * Thread-safety: sk_dispatch_create()/sk_dispatch_free() on the main lcore
 * while no lcore runs. sk_dispatch_split() and sk_dispatch_tx_drain() only
 * on the owner; sk_dispatch_dequeue(), sk_dispatch_tx() only on the lcore
 * whose index they are given. Nothing here locks, allocates (except the ARP
 * reply copies, from the packet mempool) or makes a system call.
 */
#ifndef SK_DISPATCH_H
#define SK_DISPATCH_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sk_common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sk_dispatch;

/** Counters of one lcore's side of a dispatch; written by one lcore each. */
struct sk_dispatch_stats {
	uint64_t rx_out;	/**< (owner) frames handed to another lcore */
	uint64_t rx_out_drop;	/**< (owner) frames dropped: that lcore's rx ring full */
	uint64_t arp_copy_fail; /**< (owner) ARP reply copies not made: mbufs short */
	uint64_t rx_in;		/**< (lcore) frames dequeued from its rx ring */
	uint64_t tx_in_drop;	/**< (lcore) frames refused: its tx ring full */
	uint64_t tx_out;	/**< (owner) frames of other lcores sent to the NIC */
	uint64_t tx_out_drop;	/**< (owner) of those, refused by the NIC (freed) */
} sk_cache_aligned;

/**
 * sk_dispatch_create - rings for @p nb_lcores lcores of port @p port_id.
 * @param port_id    DPDK port (queue 0 is the only one)
 * @param owner      index of the lcore that polls queue 0
 * @param nb_lcores  lcores taking part, 2..RTE_MAX_LCORE
 * @param ring_size  entries of each ring, power of two
 * @param socket     NUMA socket for the rings
 * @param pool       mempool for the ARP reply copies
 * @return the dispatch, or NULL with rte_errno set (EINVAL, ENOMEM, EEXIST
 *   if a dispatch for the same port already exists).
 */
struct sk_dispatch *sk_dispatch_create(uint16_t port_id, unsigned owner, unsigned nb_lcores,
				       unsigned ring_size, int socket, struct rte_mempool *pool);

/**
 * sk_dispatch_free - free the rings and every frame still in them. NULL is
 * a no-op. No lcore may use @p d any more.
 */
void sk_dispatch_free(struct sk_dispatch *d);

/**
 * sk_dispatch_split - (owner) send each of the @p n frames to its lcore.
 * Takes ownership of all @p n frames; those for the owner itself are
 * compacted at the front of @p pkts.
 * @return how many frames stay in @p pkts for the owner.
 */
uint16_t sk_dispatch_split(struct sk_dispatch *d, struct rte_mbuf **pkts, uint16_t n);

/**
 * sk_dispatch_dequeue - (lcore @p self) up to @p max frames the owner
 * dispatched to it; the caller owns them.
 * @return the number of frames written to @p pkts.
 */
uint16_t sk_dispatch_dequeue(struct sk_dispatch *d, unsigned self, struct rte_mbuf **pkts,
			     uint16_t max);

/**
 * sk_dispatch_tx - an sk_net_tx_fn for lcores other than the owner: queue
 * frames on the TX ring of the lcore @p ctx stands for (from
 * sk_dispatch_tx_ctx()). Takes ownership of the frames it returns the
 * count of, like rte_eth_tx_burst().
 */
uint16_t sk_dispatch_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n);

/** sk_dispatch_tx_ctx - the sk_net_conf.tx_ctx of lcore @p self. */
void *sk_dispatch_tx_ctx(struct sk_dispatch *d, unsigned self);

/**
 * sk_dispatch_tx_drain - (owner) send what the other lcores queued, at most
 * @p budget frames per lcore; frames the NIC refuses are freed and counted.
 * @param scratch  room for @p budget mbuf pointers
 * @return frames the NIC accepted.
 */
uint16_t sk_dispatch_tx_drain(struct sk_dispatch *d, struct rte_mbuf **scratch, uint16_t budget);

/** sk_dispatch_owner - index of the owner lcore. */
unsigned sk_dispatch_owner(const struct sk_dispatch *d);

/**
 * sk_dispatch_stats - counters of lcore @p self's side; valid until
 * sk_dispatch_free(). Readable from any thread (each counter atomically).
 */
const struct sk_dispatch_stats *sk_dispatch_stats(const struct sk_dispatch *d, unsigned self);

#ifdef __cplusplus
}
#endif

#endif /* SK_DISPATCH_H */
