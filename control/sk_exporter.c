/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's export thread (sk_exporter.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "sk_common.h"
#include "sk_exporter.h"
#include "sk_logfmt.h"
#include "sk_prom.h"

#define IDLE_SLEEP_NS 2000000

struct sk_exporter {
	struct sk_export *ex;
	struct sk_store *st;
	pthread_t th;
	atomic_bool stop;
};

static void *
run(void *arg)
{
	struct sk_exporter *x = arg;
	int64_t last_log = 0;

	while (!atomic_load(&x->stop)) {
		int64_t now = sk_clock_ns(CLOCK_MONOTONIC);
		int n = sk_export_poll(x->ex, now, 1024);

		if (n < 0 && now - last_log > INT64_C(1000000000)) {
			sk_logf(SK_LOG_WARN, "export", "msg=\"store error: retrying\" err=%s",
				strerror(-n));
			last_log = now;
		}
		if (n <= 0) {
			struct timespec ts = {0, IDLE_SLEEP_NS};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int
sk_exporter_start(struct sk_exporter **out, struct sk_store *st, const struct sk_export_conf *conf,
		  char *err, size_t errlen)
{
	struct sk_exporter *x = calloc(1, sizeof(*x));
	int rc;

	if (x == NULL)
		return -ENOMEM;
	x->st = st;
	rc = sk_export_open(&x->ex, st, conf, err, errlen);
	if (rc != 0) {
		free(x);
		return rc;
	}
	rc = pthread_create(&x->th, NULL, run, x);
	if (rc != 0) {
		sk_set_err(err, errlen, "export: cannot start its thread: %s", strerror(rc));
		sk_export_close(x->ex, 0);
		free(x);
		return -rc;
	}
	*out = x;
	return 0;
}

void
sk_exporter_stop(struct sk_exporter *x, int flush_ms)
{
	if (x == NULL)
		return;
	atomic_store(&x->stop, true);
	pthread_join(x->th, NULL);
	/* Produce what the last commits added to the log (bounded by @flush_ms),
	 * then wait for it: a clean stop leaves no backlog behind. */
	int64_t end = sk_clock_ns(CLOCK_MONOTONIC) + (int64_t)flush_ms * 1000000;
	while (sk_clock_ns(CLOCK_MONOTONIC) < end &&
	       sk_export_poll(x->ex, sk_clock_ns(CLOCK_MONOTONIC), 1024) > 0)
		;
	sk_export_close(x->ex, flush_ms);
	free(x);
}

/* What the exporter's table reads. */
struct export_snap {
	struct sk_export_stats s;
	uint64_t backlog;
};

#define C(n, h, f) SK_PROM_AT(SK_PROM_COUNTER, n, h, struct export_snap, f)
#define G(n, h, f) SK_PROM_AT(SK_PROM_GAUGE, n, h, struct export_snap, f)

static const struct sk_prom_metric export_rows[] = {
	C("seckill_export_produced_total",
	  "Events handed to the Kafka producer (re-productions included).", s.produced),
	C("seckill_export_delivered_total", "Events Kafka acknowledged.", s.delivered),
	C("seckill_export_failed_total",
	  "Delivery reports with an error (the events are produced again).", s.failed),
	C("seckill_export_rewinds_total",
	  "Times the export restarted from its cursor after a failure.", s.rewinds),
	G("seckill_export_cursor", "Last event of the log delivered, with every one before it.",
	  s.cursor),
	G("seckill_export_backlog", "Events of the log not yet delivered to Kafka.", backlog),
};

const struct sk_prom_table sk_exporter_table = SK_PROM_TABLE(export_rows);

int
sk_exporter_metrics(struct sk_exporter *x, FILE *out)
{
	struct sk_prom p = {.f = out};
	struct export_snap sn;
	struct sk_store_info info;
	int rc = sk_store_info(x->st, &info);

	if (rc != 0)
		return rc;
	sk_export_stats(x->ex, &sn.s);
	sn.backlog = info.event_next - 1 > sn.s.cursor ? info.event_next - 1 - sn.s.cursor : 0;
	sk_prom_write(&p, &sk_exporter_table, &sn);
	if (fflush(out) != 0)
		p.err = -EIO;
	return p.err;
}
