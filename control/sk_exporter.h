/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The control plane's export thread: runs an sk_export (storage/sk_export.h)
 * over the control plane's store until stopped, and shows its counters in
 * /metrics. Optional: seckill-control starts it with --kafka.
 *
 * Thread-safety: start and stop from one thread (the main one);
 * sk_exporter_metrics() from any thread while the exporter runs.
 */
#ifndef SK_EXPORTER_H
#define SK_EXPORTER_H

#include <stdio.h>

#include "sk_export.h"
#include "sk_prom.h"

/** A running export thread. Opaque. */
struct sk_exporter;

/**
 * sk_exporter_start - open the exporter and start its thread. The thread
 * polls the exporter (at most 1024 events a call; 2 ms sleeps when there is
 * nothing to do) and logs a store error at most once a second.
 * @param[out] out     the export thread; set only on success
 * @param[in]  st      the store; must outlive the thread
 * @param[in]  conf    the exporter's parameters (copied)
 * @param[out] err     a one-line description on error; may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0, an error of sk_export_open(), or -errno of pthread_create().
 */
int sk_exporter_start(struct sk_exporter **out, struct sk_store *st,
		      const struct sk_export_conf *conf, char *err, size_t errlen);

/**
 * sk_exporter_stop - stop the thread, produce what the log holds beyond the
 * exporter's position and wait for its delivery, each for up to
 * @p flush_ms, write the cursor, free @p x. NULL is ignored.
 */
void sk_exporter_stop(struct sk_exporter *x, int flush_ms);

/**
 * sk_exporter_metrics - the exporter's counters in the Prometheus text
 * format: produced, delivered, failed, rewinds, the cursor and the backlog
 * (events of the log after the cursor).
 * @return 0, -EIO (write failed), or an error of the store.
 */
int sk_exporter_metrics(struct sk_exporter *x, FILE *out);

/** The exporter's metrics table (what sk_exporter_metrics() writes, in order). */
extern const struct sk_prom_table sk_exporter_table;

#endif /* SK_EXPORTER_H */
