/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The dataplane's request metrics for /metrics: what the dataplane lcores
 * count in their stats blocks of the arena (struct sk_shm_lcore_stats,
 * sk_shm.h), written in the Prometheus text exposition format (version
 * 0.0.4), summed over the lcores (no lcore label; per-lcore figures are in
 * the dataplane's /seckill/stats telemetry):
 *
 *   - seckill_requests_total{outcome}: buy requests (POST /v1/seckill/{item})
 *     by outcome: won, duplicate, limit, sold_out, not_started, ended,
 *     unauthorized, rate_limited, busy, unavailable, not_found, bad_request
 *     (counter);
 *   - seckill_order_polls_total, seckill_item_reads_total (counters);
 *   - seckill_http_responses_total{code}: HTTP responses of the dataplane
 *     by status ("other": a status without a counter of its own) (counter);
 *   - seckill_buy_latency_seconds: buy answers by latency, from the poll pass
 *     that took the request to the answer written, parked (ack = durable)
 *     winners included (histogram: 1-2-5 buckets from 1 us to 5 s and +Inf,
 *     _sum, _count);
 *   - the HTTPS listener's counters (struct sk_tls_stats, laid over the TLS
 *     area of each stats block; all zero while the dataplane runs without
 *     [tls], the families are there all the same):
 *     seckill_tls_handshakes_total{kind}: full, resumed, failed, timeout,
 *     limited, ip_refused; seckill_tls_handshakes_inflight (gauge);
 *     seckill_tls_versions_total{version}: 1.2, 1.3;
 *     seckill_tls_suites_total{suite}: aes128_gcm, aes256_gcm, chacha20;
 *     seckill_tls_alerts_total{direction,alert}: sent, received by
 *     sk_tls_alert_name(); seckill_tls_bytes_total{direction} and
 *     seckill_tls_records_total{direction}: in, out;
 *     seckill_tls_tickets_total{result}: issued, rejected;
 *     seckill_tls_refused_total{what}: renegotiation, early_data.
 *
 * Needs only the arena: no EAL call, no allocation.
 */
#ifndef SK_DPMETRICS_H
#define SK_DPMETRICS_H

#include <stdio.h>

#include "sk_prom.h"
#include "sk_shm.h"

/**
 * sk_dpmetrics_write - write the families above, each with its HELP and
 * TYPE lines, to @p out.
 *
 * Each counter is read with a relaxed atomic load while the lcores keep
 * counting, all of them before the first line is written: the set is not a
 * snapshot of one instant, but every value is whole, the histogram's buckets are cumulative and
 * non-decreasing and its _count equals its +Inf bucket (computed from the buckets read).
 *
 * @param shm  the arena (not owned; only read)
 * @param out  where to write (not flushed, not closed)
 * @return 0, -EINVAL if @p shm or @p out is NULL, -EIO if writing to @p out
 *         failed (output then incomplete).
 *
 * Thread-safety: any thread, any number at once; the dataplane lcores may
 * be counting meanwhile.
 */
int sk_dpmetrics_write(const struct sk_shm *shm, FILE *out);

/**
 * sk_dpmetrics_outcome_name - the outcome label of slot @p outcome of
 * sk_shm_lcore_stats::buy_outcome: sk_shm_outcome_name(), the one table
 * the dataplane labels its counters with too; NULL for a slot that no
 * outcome uses. Thread-safe.
 */
const char *sk_dpmetrics_outcome_name(unsigned outcome);

/** The families above as a table (what sk_dpmetrics_write() walks, in order). */
extern const struct sk_prom_table sk_dpmetrics_table;

#endif /* SK_DPMETRICS_H */
