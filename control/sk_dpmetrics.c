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

static void
write_requests(const struct sk_shm *shm, struct sk_prom *w)
{
	sk_prom_head(
		w, "seckill_requests_total", "counter",
		"Buy requests (POST /v1/seckill/{item}) answered by the dataplane, by outcome.");
	for (unsigned k = 0; k < SK_SHM_OUTCOMES; k++)
		if (sk_shm_outcome_name(k) != NULL)
			sk_prom_printf(w, "seckill_requests_total{outcome=\"%s\"} %" PRIu64 "\n",
				       sk_shm_outcome_name(k), SUM(shm, buy_outcome[k]));
	sk_prom_head(w, "seckill_order_polls_total", "counter",
		     "Order polls (GET /v1/orders/{id}) answered by the dataplane.");
	sk_prom_printf(w, "seckill_order_polls_total %" PRIu64 "\n", SUM(shm, order_polls));
	sk_prom_head(w, "seckill_item_reads_total", "counter",
		     "Item reads (GET /v1/items/{item}) answered by the dataplane.");
	sk_prom_printf(w, "seckill_item_reads_total %" PRIu64 "\n", SUM(shm, item_reads));
}

/*
 * write_http - responses by status code, summed by code over the lcores (all
 * count the same codes in the same slots, but nothing depends on it). Codes
 * in the order first seen; "other" (code 0) last. O(lcores x slots^2), at
 * most 64 x 32 x 32 steps per scrape.
 */
static void
write_http(const struct sk_shm *shm, struct sk_prom *w)
{
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
	sk_prom_head(w, "seckill_http_responses_total", "counter",
		     "HTTP responses sent by the dataplane, by status code (other: any status "
		     "without a counter of its own).");
	for (unsigned i = 0; i < n; i++)
		sk_prom_printf(w, "seckill_http_responses_total{code=\"%u\"} %" PRIu64 "\n",
			       code[i], count[i]);
	if (other)
		sk_prom_printf(w, "seckill_http_responses_total{code=\"other\"} %" PRIu64 "\n",
			       other_count);
}

static void
write_latency(const struct sk_shm *shm, struct sk_prom *w)
{
	uint64_t count[SK_SHM_LAT_BUCKETS];

	for (unsigned b = 0; b < SK_SHM_LAT_BUCKETS; b++)
		count[b] = SUM(shm, lat_bucket[b]);
	sk_prom_histogram(w, "seckill_buy_latency_seconds",
			  "Buy answers by latency: from the dataplane's poll pass that took the "
			  "request to its answer written (parked durable winners: their parked "
			  "answer).",
			  count, sk_shm_lat_bounds_ns, SK_SHM_LAT_BUCKETS, SUM(shm, lat_sum_ns));
}

int
sk_dpmetrics_write(const struct sk_shm *shm, FILE *out)
{
	struct sk_prom w = {out, 0};

	if (shm == NULL || out == NULL)
		return -EINVAL;
	write_requests(shm, &w);
	write_http(shm, &w);
	write_latency(shm, &w);
	return w.err;
}
