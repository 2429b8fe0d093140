/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dataplane's request metrics, read from the arena's per-lcore stats
 * blocks (see sk_dpmetrics.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "sk_dpmetrics.h"
#include "sk_prom.h"
#include "sk_tls.h"

const char *
sk_dpmetrics_outcome_name(unsigned outcome)
{
	return sk_shm_outcome_name(outcome);
}

/* nlcores - the stats blocks worth reading. */
static unsigned
nlcores(const struct sk_shm *shm)
{
	return shm->nlcores < SK_MAX_LCORES ? shm->nlcores : SK_MAX_LCORES;
}

/* sum - field at byte offset @off of every lcore's block, summed. */
static uint64_t
sum(const struct sk_shm *shm, size_t off)
{
	uint64_t v = 0;

	for (unsigned l = 0; l < nlcores(shm); l++)
		v += sk_shm_stat_read((const uint64_t *)((const char *)&shm->lstats[l] + off));
	return v;
}

/* SUM - @field (an lvalue of struct sk_shm_lcore_stats) summed over the lcores. */
#define SUM(shm, field)                                                                            \
	sum(shm, (size_t)((const char *)&(shm)->lstats[0].field - (const char *)&(shm)->lstats[0]))

/* The dataplane lays struct sk_tls_stats over the TLS area (sk_dp_setup.c). */
_Static_assert(sizeof(struct sk_tls_stats) <= sizeof(((struct sk_shm_lcore_stats *)0)->tls),
	       "struct sk_tls_stats must fit the TLS area of the arena's stats block");

/* TLS - word @k of field @f of struct sk_tls_stats (the TLS area) summed. */
#define TLS(shm, f, k)                                                                             \
	sum(shm, offsetof(struct sk_shm_lcore_stats, tls) + offsetof(struct sk_tls_stats, f) +     \
			 (size_t)(k) * sizeof(uint64_t))

/* Slots of the TLS families with one label (their names: tls_kinds, tls_dirs). */
enum { HS_FULL, HS_RESUMED, HS_FAILED, HS_TIMEOUT, HS_LIMITED, HS_IP_REFUSED, HS__COUNT };
enum { DIR_IN, DIR_OUT, DIR__COUNT };

/* The TLS counters summed over the lcores, in the order the rows read them. */
struct tls_snap {
	uint64_t hs[HS__COUNT];
	uint64_t inflight;
	uint64_t version[2]; /* 1.2, 1.3 */
	uint64_t suite[SK_TLS_SUITE_SLOTS];
	uint64_t alerts[2][SK_TLS_ALERT_SLOTS]; /* sent, received */
	uint64_t bytes[DIR__COUNT], records[DIR__COUNT];
	uint64_t tickets[2]; /* issued, rejected */
	uint64_t refused[2]; /* renegotiation, early data */
};

/* What the table reads: the lcores' counters summed, read once. */
struct dp_snap {
	const struct sk_shm *shm;
	uint64_t outcome[SK_SHM_OUTCOMES];
	uint64_t order_polls, item_reads;
	uint64_t lat[SK_SHM_LAT_BUCKETS], lat_sum_ns;
	struct tls_snap tls;
};

/* tls_take - the TLS area of every lcore summed into @t (zero: TLS off). */
static void
tls_take(const struct sk_shm *shm, struct tls_snap *t)
{
	t->hs[HS_FULL] = TLS(shm, hs_full, 0);
	t->hs[HS_RESUMED] = TLS(shm, hs_resumed, 0);
	t->hs[HS_FAILED] = TLS(shm, hs_failed, 0);
	t->hs[HS_TIMEOUT] = TLS(shm, hs_timeout, 0);
	t->hs[HS_LIMITED] = TLS(shm, hs_limited, 0);
	t->hs[HS_IP_REFUSED] = TLS(shm, hs_ip_refused, 0);
	t->inflight = TLS(shm, hs_inflight, 0);
	t->version[0] = TLS(shm, tls12, 0);
	t->version[1] = TLS(shm, tls13, 0);
	for (unsigned k = 0; k < SK_TLS_SUITE_SLOTS; k++)
		t->suite[k] = TLS(shm, suite, k);
	for (unsigned k = 0; k < SK_TLS_ALERT_SLOTS; k++) {
		t->alerts[0][k] = TLS(shm, alerts_sent, k);
		t->alerts[1][k] = TLS(shm, alerts_received, k);
	}
	t->bytes[DIR_IN] = TLS(shm, bytes_in, 0);
	t->bytes[DIR_OUT] = TLS(shm, bytes_out, 0);
	t->records[DIR_IN] = TLS(shm, records_in, 0);
	t->records[DIR_OUT] = TLS(shm, records_out, 0);
	t->tickets[0] = TLS(shm, tickets_issued, 0);
	t->tickets[1] = TLS(shm, tickets_rejected, 0);
	t->refused[0] = TLS(shm, renegotiations, 0);
	t->refused[1] = TLS(shm, early_data, 0);
}

static void
snap_take(const struct sk_shm *shm, struct dp_snap *sn)
{
	sn->shm = shm;
	for (unsigned k = 0; k < SK_SHM_OUTCOMES; k++)
		sn->outcome[k] = SUM(shm, buy_outcome[k]);
	sn->order_polls = SUM(shm, order_polls);
	sn->item_reads = SUM(shm, item_reads);
	for (unsigned b = 0; b < SK_SHM_LAT_BUCKETS; b++)
		sn->lat[b] = SUM(shm, lat_bucket[b]);
	sn->lat_sum_ns = SUM(shm, lat_sum_ns);
	tls_take(shm, &sn->tls);
}

static void
emit_requests(struct sk_prom *w, const struct sk_prom_metric *m, const void *arg)
{
	const struct dp_snap *sn = arg;

	for (unsigned k = 0; k < SK_SHM_OUTCOMES; k++)
		if (sk_shm_outcome_name(k) != NULL)
			sk_prom_printf(w, "%s{outcome=\"%s\"} %" PRIu64 "\n", m->name,
				       sk_shm_outcome_name(k), sn->outcome[k]);
}

/*
 * emit_http - responses by status code, summed by code over the lcores (all
 * count the same codes in the same slots, but nothing depends on it). Codes
 * in the order first seen; "other" (code 0) last. O(lcores x slots^2), at
 * most 64 x 32 x 32 steps per scrape.
 */
static void
emit_http(struct sk_prom *w, const struct sk_prom_metric *m, const void *arg)
{
	const struct sk_shm *shm = ((const struct dp_snap *)arg)->shm;
	uint16_t code[SK_SHM_HTTP_SLOTS + 1];
	uint64_t count[SK_SHM_HTTP_SLOTS + 1] = {0};
	unsigned n = 0;
	bool other = false;
	uint64_t other_count = 0;

	for (unsigned l = 0; l < nlcores(shm); l++) {
		const struct sk_shm_lcore_stats *ls = &shm->lstats[l];
		uint32_t slots = __atomic_load_n(&ls->http_slots, __ATOMIC_ACQUIRE);

		if (slots > SK_SHM_HTTP_SLOTS)
			slots = SK_SHM_HTTP_SLOTS;
		for (unsigned k = 0; k < slots; k++) {
			uint16_t c = __atomic_load_n(&ls->http_code[k], __ATOMIC_RELAXED);
			uint64_t v = sk_shm_stat_read(&ls->http_status[k]);
			unsigned i = 0;

			if (c == 0) {
				other = true;
				other_count += v;
				continue;
			}
			while (i < n && code[i] != c)
				i++;
			if (i == n) {
				if (n == SK_SHM_HTTP_SLOTS) /* more distinct codes than slots */
					continue;
				code[n++] = c;
			}
			count[i] += v;
		}
	}
	for (unsigned i = 0; i < n; i++)
		sk_prom_printf(w, "%s{code=\"%u\"} %" PRIu64 "\n", m->name, code[i], count[i]);
	if (other)
		sk_prom_printf(w, "%s{code=\"other\"} %" PRIu64 "\n", m->name, other_count);
}

/* emit_alerts - TLS alerts by direction and name: every slot, zeros too. */
static void
emit_alerts(struct sk_prom *w, const struct sk_prom_metric *m, const void *arg)
{
	static const char *const dir[2] = {"sent", "received"};
	const struct tls_snap *t = &((const struct dp_snap *)arg)->tls;

	for (unsigned d = 0; d < 2; d++)
		for (unsigned k = 0; k < SK_TLS_ALERT_SLOTS; k++)
			sk_prom_printf(w, "%s{direction=\"%s\",alert=\"%s\"} %" PRIu64 "\n",
				       m->name, dir[d], sk_tls_alert_name(k), t->alerts[d][k]);
}

_Static_assert(SK_TLS_SUITE_AES128_GCM == 0 && SK_TLS_SUITE_AES256_GCM == 1 &&
		       SK_TLS_SUITE_CHACHA20 == 2 && SK_TLS_SUITE_SLOTS == 3,
	       "tls_suites names the suite slots in their order");

static const char *const tls_kinds[HS__COUNT + 1] = {
	[HS_FULL] = "full",	  [HS_RESUMED] = "resumed", [HS_FAILED] = "failed",
	[HS_TIMEOUT] = "timeout", [HS_LIMITED] = "limited", [HS_IP_REFUSED] = "ip_refused",
};
static const char *const tls_dirs[DIR__COUNT + 1] = {[DIR_IN] = "in", [DIR_OUT] = "out"};
static const char *const tls_versions[] = {"1.2", "1.3", NULL};
static const char *const tls_suites[] = {"aes128_gcm", "aes256_gcm", "chacha20", NULL};
static const char *const tls_tickets[] = {"issued", "rejected", NULL};
static const char *const tls_refused[] = {"renegotiation", "early_data", NULL};

/* Each list of label values covers its array of struct tls_snap. */
#define NVALUES(a) (sizeof(a) / sizeof((a)[0]) - 1)
_Static_assert(NVALUES(tls_versions) == sizeof(((struct tls_snap *)0)->version) / 8 &&
		       NVALUES(tls_suites) == SK_TLS_SUITE_SLOTS &&
		       NVALUES(tls_tickets) == sizeof(((struct tls_snap *)0)->tickets) / 8 &&
		       NVALUES(tls_refused) == sizeof(((struct tls_snap *)0)->refused) / 8,
	       "a label value per counter");

/* TLS_ROW - a counter family of one label whose values are @vals at @field. */
#define TLS_ROW(n, label, vals, field, h)                                                          \
	{                                                                                          \
		.name = (n), .type = SK_PROM_COUNTER, .labels = (label), .help = (h),              \
		.off = offsetof(struct dp_snap, tls.field), .values = (vals)                       \
	}

static const struct sk_prom_metric dp_rows[] = {
	{.name = "seckill_requests_total",
	 .type = SK_PROM_COUNTER,
	 .labels = "outcome",
	 .help = "Buy requests (POST /v1/seckill/{item}) answered by the dataplane, by outcome.",
	 .emit = emit_requests},
	{.name = "seckill_order_polls_total",
	 .type = SK_PROM_COUNTER,
	 .help = "Order polls (GET /v1/orders/{id}) answered by the dataplane.",
	 .off = offsetof(struct dp_snap, order_polls)},
	{.name = "seckill_item_reads_total",
	 .type = SK_PROM_COUNTER,
	 .help = "Item reads (GET /v1/items/{item}) answered by the dataplane.",
	 .off = offsetof(struct dp_snap, item_reads)},
	{.name = "seckill_http_responses_total",
	 .type = SK_PROM_COUNTER,
	 .labels = "code",
	 .help = "HTTP responses sent by the dataplane, by status code (other: any status "
		 "without a counter of its own).",
	 .emit = emit_http},
	{.name = "seckill_buy_latency_seconds",
	 .type = SK_PROM_HISTOGRAM,
	 .help = "Buy answers by latency: from the dataplane's poll pass that took the "
		 "request to its answer written (parked durable winners: their parked "
		 "answer).",
	 .off = offsetof(struct dp_snap, lat),
	 .bounds_ns = sk_shm_lat_bounds_ns,
	 .nbuckets = SK_SHM_LAT_BUCKETS,
	 .sum_off = offsetof(struct dp_snap, lat_sum_ns)},
	/* HTTPS ([tls] in the dataplane's config; all zero without it) */
	TLS_ROW("seckill_tls_handshakes_total", "kind", tls_kinds, hs,
		"TLS handshakes of the dataplane's HTTPS listener by how they ended: full or "
		"resumed (done), failed (by alert: seckill_tls_alerts_total), timeout, limited "
		"(max_handshakes in progress: reset), ip_refused (per-IP limiter: reset)."),
	{.name = "seckill_tls_handshakes_inflight",
	 .type = SK_PROM_GAUGE,
	 .help = "TLS handshakes in progress in the dataplane.",
	 .off = offsetof(struct dp_snap, tls.inflight)},
	TLS_ROW("seckill_tls_versions_total", "version", tls_versions, version,
		"TLS handshakes done, by protocol version."),
	TLS_ROW("seckill_tls_suites_total", "suite", tls_suites, suite,
		"TLS handshakes done, by negotiated cipher suite."),
	{.name = "seckill_tls_alerts_total",
	 .type = SK_PROM_COUNTER,
	 .labels = "direction,alert",
	 .help = "TLS alerts sent to and received from clients, by description (other: one "
		 "without a counter of its own).",
	 .emit = emit_alerts},
	TLS_ROW("seckill_tls_bytes_total", "direction", tls_dirs, bytes,
		"TLS ciphertext bytes received (in) and sent (out) by the dataplane."),
	TLS_ROW("seckill_tls_records_total", "direction", tls_dirs, records,
		"TLS records received (in) and sent (out) by the dataplane."),
	TLS_ROW("seckill_tls_tickets_total", "result", tls_tickets, tickets,
		"TLS session tickets issued, and offered ones rejected (unknown or expired key)."),
	TLS_ROW("seckill_tls_refused_total", "what", tls_refused, refused,
		"TLS renegotiations and early data (0-RTT) clients asked for, refused."),
};

const struct sk_prom_table sk_dpmetrics_table = SK_PROM_TABLE(dp_rows);

int
sk_dpmetrics_write(const struct sk_shm *shm, FILE *out)
{
	struct sk_prom w = {out, 0};
	struct dp_snap sn;

	if (shm == NULL || out == NULL)
		return -EINVAL;
	snap_take(shm, &sn);
	sk_prom_write(&w, &sk_dpmetrics_table, &sn);
	return w.err;
}
