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

/* What the table reads: the lcores' counters summed, read once. */
struct dp_snap {
	const struct sk_shm *shm;
	uint64_t outcome[SK_SHM_OUTCOMES];
	uint64_t order_polls, item_reads;
	uint64_t lat[SK_SHM_LAT_BUCKETS], lat_sum_ns;
};

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
