/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * DPDK telemetry commands of the dataplane, read by operators with
 * `dpdk-telemetry.py -f <file-prefix>` (or any client of the telemetry
 * socket /var/run/dpdk/<prefix>/dpdk_telemetry.v2):
 *
 *  - /seckill/stats: summed over the lcores ("total"): rx/tx
 *    packets, drops and ignored frames (not IPv4/ARP, not for us), open
 *    connections, requests and responses by HTTP
 *    status (http_200 ...), TCP events (SYN, SYN cookies sent/accepted/bad,
 *    retransmits, RST sent/received), busy and idle TSC cycles, and the buy
 *    path: outcomes (buy_won, buy_sold_out, ... by sk_seckill_outcome_name()),
 *    token checks (token_ok, token_expired, ... by sk_token_status_str()),
 *    rate limits (rl_passed, rl_refused_ip|item|global, rl_ip_overflow),
 *    token_verifies (HMACs computed),
 *    engine results (engine_ok, engine_sold_out, ... by
 *    sk_buy_status_name()), order_polls, item_reads, orders_queued (gauge:
 *    records waiting in the lcore's order ring); at the top: lcores,
 *    tsc_hz, uptime_s, the packet mempool (mbuf_total, mbuf_in_use,
 *    mbuf_idle = in use right after start, with the RX rings filled and no
 *    traffic), items, and one dict per item ("item<id>": remaining, sold,
 *    sold_out, total) for the first SK_TELEMETRY_ITEMS_MAX items. Then,
 *    for the first SK_TELEMETRY_LCORES_LISTED lcores (lcores_listed), a
 *    short dict per lcore ("lcore<id>": frames, drops, connections,
 *    requests, responses, arp_rx, dispatch, busy/idle cycles, passes,
 *    orders_queued, buy_won, buy_sold_out): the answer is capped at
 *    16 KiB, which a full dict per lcore would pass at 7 lcores.
 *  - /seckill/lcore,<lcore index>: every counter of one lcore (the fields
 *    of "total"), and "lcore" (its EAL id).
 *  - /seckill/items: the same item dicts, every item (up to 255).
 *  - /seckill/net,<lcore index>[,<port index>]: every counter of one TCP
 *    stack (struct sk_net_stats).
 *  - /seckill/tls: the TLS counters (struct sk_tls_stats) summed over the
 *    lcores, by their names; alerts as alert_sent_<name> and
 *    alert_received_<name>, suites as suite_aes128_gcm, suite_aes256_gcm,
 *    suite_chacha20; {"tls": "off"} without a [tls] section.
 *
 * Busy cycles per request under load = delta(total.busy_tsc) /
 * delta(total.requests) between two reads.
 *
 * The telemetry thread reads counters that the lcores write without
 * synchronisation: each value is read atomically, the set is not a snapshot.
 * Responses by status, buy outcomes, order_polls and item_reads are read
 * from the lcores' stats blocks in the arena (struct sk_shm_lcore_stats),
 * the same counters the control plane's /metrics exports.
 *
 * Thread-safety: sk_telemetry_start() and sk_telemetry_stop() on the main
 * thread; the callbacks run on DPDK's telemetry thread and hold a mutex
 * that sk_telemetry_stop() takes, so no callback reads freed memory after
 * it returns. DPDK cannot unregister a command: after stop they answer
 * {"state": "stopped"}. The registered source is process-wide state
 * (telemetry callbacks have no user argument); it is never touched by the
 * fast path.
 */
#ifndef SK_TELEMETRY_H
#define SK_TELEMETRY_H

#include <stdint.h>

#include <rte_mempool.h>

#include "sk_config.h"
#include "sk_dispatch.h"
#include "sk_lcore.h"
#include "sk_seckill.h"
#include "sk_tls.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Items listed in /seckill/stats (the rest: /seckill/items). */
#define SK_TELEMETRY_ITEMS_MAX 64
/** Most lcore sections /seckill/stats lists (the answer is capped at 16 KiB). */
#define SK_TELEMETRY_LCORES_LISTED 32

/** What the commands read; the arrays must outlive sk_telemetry_stop(). */
struct sk_telemetry_src {
	unsigned nb_lcores;			       /**< entries of @c lcores */
	struct sk_lcore *const *lcores;		       /**< the lcores, by index */
	uint16_t nb_ports;			       /**< configured ports */
	struct sk_dispatch *disp[SK_CONFIG_MAX_PORTS]; /**< per port; NULL: no dispatch */
	struct rte_mempool *pool;		       /**< the packet mempool */
	uint32_t mbuf_idle;			       /**< in-use mbufs at idle */
	uint64_t tsc_hz;			       /**< rte_get_tsc_hz() */
	uint64_t start_tsc;			       /**< TSC at start */
	struct sk_seckill_lcore *const *seckill;       /**< per lcore index (buy path) */
	const struct sk_shm *shm;		       /**< the arena (items) */
	struct sk_tls_lcore *const *tls;	       /**< per lcore index; NULL: no HTTPS */
};

/**
 * sk_telemetry_start - make the commands answer from @p src (copied).
 * Registers them on the first call.
 * @return 0, or a negative errno of rte_telemetry_register_cmd() (-EINVAL,
 *   -ENOENT if telemetry is disabled (--no-telemetry)), or -ENOMEM.
 */
int sk_telemetry_start(const struct sk_telemetry_src *src);

/** sk_telemetry_stop - the commands stop reading the source. Idempotent. */
void sk_telemetry_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* SK_TELEMETRY_H */
