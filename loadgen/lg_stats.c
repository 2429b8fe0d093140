/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_stats.c - counters and reports of seckill-loadgen (see lg_stats.h).
 */
#include <inttypes.h>
#include <string.h>

#include "lg_stats.h"

void
lg_stats_init(struct lg_stats *s, uint64_t tsc_hz, uint64_t start_tsc)
{
	memset(s, 0, sizeof(*s));
	sk_crowd_hist_init(&s->lat);
	sk_crowd_hist_init(&s->lat_sec);
	s->tsc_hz = tsc_hz != 0 ? tsc_hz : 1;
	s->ns_mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / s->tsc_hz);
	s->start_tsc = start_tsc;
	s->prev_tsc = start_tsc;
}

uint64_t
lg_stats_sum(const uint64_t *v, unsigned n)
{
	uint64_t t = 0;

	for (unsigned i = 0; i < n; i++)
		t += v[i];
	return t;
}

uint64_t
lg_stats_errors(const struct lg_stats *s, const struct lg_tcp_errors *tcp)
{
	uint64_t e = lg_stats_sum(s->parse_errors, SK_HTTP_CLIENT__COUNT) + s->lost +
		     s->send_errors + s->connect_errors + s->failed + s->early_close +
		     s->tls.failed;

	if (tcp != NULL)
		e += tcp->resets + tcp->timeouts + tcp->refused;
	return e;
}

/* us - nanoseconds as microseconds. */
static double
us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

void
lg_stats_progress(struct lg_stats *s, uint64_t now_tsc, uint64_t inflight,
		  const struct lg_tcp_errors *tcp, const char *tag, FILE *out)
{
	uint64_t answered = lg_stats_sum(s->answered, LG_REQ__COUNT);
	uint64_t errors = lg_stats_errors(s, tcp);
	double dt = (double)(now_tsc - s->prev_tsc) / (double)s->tsc_hz;
	double t = (double)(now_tsc - s->start_tsc) / (double)s->tsc_hz;

	if (dt <= 0)
		dt = 1e-9;
	fprintf(out,
		"%st=%.1fs rps=%.0f cps=%.0f p50=%.1fus p99=%.1fus errors=%" PRIu64
		" inflight=%" PRIu64 "\n",
		tag != NULL ? tag : "", t, (double)(answered - s->prev_answered) / dt,
		(double)(s->connects - s->prev_connects) / dt,
		us(sk_crowd_hist_quantile(&s->lat_sec, 0.5)),
		us(sk_crowd_hist_quantile(&s->lat_sec, 0.99)), errors - s->prev_errors, inflight);
	fflush(out);
	s->prev_answered = answered;
	s->prev_connects = s->connects;
	s->prev_errors = errors;
	s->prev_tsc = now_tsc;
	sk_crowd_hist_init(&s->lat_sec);
}

void
lg_stats_merge(struct lg_stats *dst, const struct lg_stats *src)
{
	struct sk_crowd_hist *h = &dst->lat;

	for (unsigned k = 0; k < LG_REQ__COUNT; k++) {
		dst->sent[k] += src->sent[k];
		dst->answered[k] += src->answered[k];
	}
	for (unsigned c = 0; c <= LG_STATUS_MAX; c++) {
		dst->status[c] += src->status[c];
		dst->cart_status[c] += src->cart_status[c];
	}
	for (unsigned e = 0; e < SK_HTTP_CLIENT__COUNT; e++)
		dst->parse_errors[e] += src->parse_errors[e];
	dst->wins_confirmed += src->wins_confirmed;
	dst->wins_queued += src->wins_queued;
	dst->lost += src->lost;
	dst->send_errors += src->send_errors;
	dst->connects += src->connects;
	dst->connect_errors += src->connect_errors;
	dst->established += src->established;
	dst->closed += src->closed;
	dst->failed += src->failed;
	dst->early_close += src->early_close;
	dst->busy_tsc += src->busy_tsc;
	dst->tls.full += src->tls.full;
	dst->tls.resumed += src->tls.resumed;
	dst->tls.failed += src->tls.failed;
	dst->tls.tls12 += src->tls.tls12;
	dst->tls.tls13 += src->tls.tls13;
	dst->tls.alerts_received += src->tls.alerts_received;
	if (src->lat.count == 0)
		return;
	for (unsigned b = 0; b < SK_CROWD_HIST_BUCKETS; b++)
		h->bucket[b] += src->lat.bucket[b];
	h->count += src->lat.count;
	h->sum += src->lat.sum;
	h->min = h->min < src->lat.min ? h->min : src->lat.min;
	h->max = h->max > src->lat.max ? h->max : src->lat.max;
}

void
lg_tcp_errors_add(struct lg_tcp_errors *dst, const struct lg_tcp_errors *src)
{
	dst->resets += src->resets;
	dst->retransmits += src->retransmits;
	dst->syn_retransmits += src->syn_retransmits;
	dst->timeouts += src->timeouts;
	dst->refused += src->refused;
	dst->tx_dropped += src->tx_dropped;
	dst->tx_waits += src->tx_waits;
	dst->tx_nombuf += src->tx_nombuf;
}

/* lcores_json - the "lcores" array of @p run, with its leading comma. */
static void
lcores_json(const struct lg_run_info *run, FILE *out)
{
	fprintf(out, ",\"lcores\":[");
	for (unsigned i = 0; i < run->nlcores; i++) {
		const struct lg_lcore_report *r = &run->lcores[i];

		fprintf(out,
			"%s{\"lcore\":%u,\"queue\":%u,\"sent\":%" PRIu64 ",\"answered\":%" PRIu64
			",\"rps\":%.0f,\"errors\":%" PRIu64 "}",
			i == 0 ? "" : ",", r->lcore, r->queue, r->sent, r->answered,
			(double)r->answered / (r->seconds > 0 ? r->seconds : 1e-9), r->errors);
	}
	fputc(']', out);
}

/* attack_info - the run's attack info with the legitimate clients' figures. */
static struct lg_attack_info
attack_info(const struct lg_stats *s, const struct lg_tcp_errors *tcp,
	    const struct lg_run_info *run)
{
	struct lg_attack_info i = run->attack_info;

	i.legit = run->legit;
	i.legit_sent = lg_stats_sum(s->sent, LG_REQ__COUNT);
	i.legit_answered = lg_stats_sum(s->answered, LG_REQ__COUNT);
	i.legit_errors = lg_stats_errors(s, tcp);
	i.legit_p50_us = us(sk_crowd_hist_quantile(&s->lat, 0.5));
	i.legit_p99_us = us(sk_crowd_hist_quantile(&s->lat, 0.99));
	return i;
}

void
lg_stats_summary(const struct lg_stats *s, const struct lg_tcp_errors *tcp,
		 const struct lg_run_info *run, FILE *out)
{
	uint64_t sent = lg_stats_sum(s->sent, LG_REQ__COUNT);
	uint64_t answered = lg_stats_sum(s->answered, LG_REQ__COUNT);
	double secs = run->seconds > 0 ? run->seconds : 1e-9;

	fprintf(out, "seckill-loadgen: %s loop%s, %.2f s\n", run->mode,
		run->short_conns ? ", short connections" : ", keep-alive", run->seconds);
	fprintf(out,
		"  requests: %" PRIu64 " sent, %" PRIu64 " answered (%.0f/s), %" PRIu64
		" unanswered\n",
		sent, answered, (double)answered / secs, run->inflight + s->lost);
	fprintf(out,
		"  connections: %" PRIu64 " opened (%.0f/s), %" PRIu64 " established, %" PRIu64
		" closed, %" PRIu64 " failed\n",
		s->connects, (double)s->connects / secs, s->established, s->closed, s->failed);
	fprintf(out,
		"  latency: p50 %.1f us, p90 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us\n",
		us(sk_crowd_hist_quantile(&s->lat, 0.5)), us(sk_crowd_hist_quantile(&s->lat, 0.9)),
		us(sk_crowd_hist_quantile(&s->lat, 0.99)),
		us(sk_crowd_hist_quantile(&s->lat, 0.999)), us(s->lat.count ? s->lat.max : 0));
	fprintf(out, "  status:");
	for (unsigned c = LG_STATUS_MIN; c <= LG_STATUS_MAX; c++)
		if (s->status[c] != 0)
			fprintf(out, " %u=%" PRIu64, c, s->status[c]);
	if (s->answered[LG_REQ_CART] != 0) {
		fprintf(out, "\n  carts:");
		for (unsigned c = LG_STATUS_MIN; c <= LG_STATUS_MAX; c++)
			if (s->cart_status[c] != 0)
				fprintf(out, " %u=%" PRIu64, c, s->cart_status[c]);
	}
	fprintf(out, "\n  wins: %" PRIu64 " confirmed (200), %" PRIu64 " queued (202)\n",
		s->wins_confirmed, s->wins_queued);
	fprintf(out,
		"  errors: %" PRIu64 " (parse %" PRIu64 ", lost %" PRIu64 ", send %" PRIu64
		", connect %" PRIu64 ", early close %" PRIu64 ")\n",
		lg_stats_errors(s, tcp), lg_stats_sum(s->parse_errors, SK_HTTP_CLIENT__COUNT),
		s->lost, s->send_errors, s->connect_errors, s->early_close);
	if (tcp != NULL)
		fprintf(out,
			"  tcp: resets %" PRIu64 ", retransmits %" PRIu64
			", syn retransmits %" PRIu64 ", timeouts %" PRIu64 ", refused %" PRIu64
			", tx dropped %" PRIu64 ", tx waits %" PRIu64 "\n",
			tcp->resets, tcp->retransmits, tcp->syn_retransmits, tcp->timeouts,
			tcp->refused, tcp->tx_dropped, tcp->tx_waits);
	if (run->tls)
		fprintf(out,
			"  tls: handshakes %" PRIu64 " full, %" PRIu64 " resumed, %" PRIu64
			" failed (TLS 1.3 %" PRIu64 ", TLS 1.2 %" PRIu64
			"), alerts received %" PRIu64 "\n",
			s->tls.full, s->tls.resumed, s->tls.failed, s->tls.tls13, s->tls.tls12,
			s->tls.alerts_received);
	if (answered != 0)
		fprintf(out, "  cost: %.0f busy cycles per answer on the loadgen's core\n",
			(double)s->busy_tsc / (double)answered);
	for (unsigned i = 0; run->nlcores > 1 && i < run->nlcores; i++) {
		const struct lg_lcore_report *r = &run->lcores[i];

		fprintf(out,
			"  lcore %u (queue %u): %" PRIu64 " sent, %" PRIu64 " answered (%.0f/s), "
			"%" PRIu64 " errors\n",
			r->lcore, r->queue, r->sent, r->answered,
			(double)r->answered / (r->seconds > 0 ? r->seconds : 1e-9), r->errors);
	}
	if (run->attack != NULL) {
		struct lg_attack_info i = attack_info(s, tcp, run);

		lg_attack_summary(run->attack, &i, out);
	}
}

void
lg_stats_json(const struct lg_stats *s, const struct lg_tcp_errors *tcp,
	      const struct lg_run_info *run, FILE *out)
{
	static const struct lg_tcp_errors none;
	uint64_t sent = lg_stats_sum(s->sent, LG_REQ__COUNT);
	uint64_t answered = lg_stats_sum(s->answered, LG_REQ__COUNT);
	double secs = run->seconds > 0 ? run->seconds : 1e-9;
	const char *sep = "";

	if (tcp == NULL)
		tcp = &none;
	fprintf(out,
		"{\"mode\":\"%s\",\"short_conns\":%s,\"seconds\":%.3f,\"sent\":%" PRIu64
		",\"answered\":%" PRIu64 ",\"rps\":%.0f,\"cps\":%.0f",
		run->mode, run->short_conns ? "true" : "false", run->seconds, sent, answered,
		(double)answered / secs, (double)s->connects / secs);
	fprintf(out,
		",\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p99_9\":%.1f,"
		"\"max\":%.1f,\"mean\":%.1f}",
		us(sk_crowd_hist_quantile(&s->lat, 0.5)), us(sk_crowd_hist_quantile(&s->lat, 0.9)),
		us(sk_crowd_hist_quantile(&s->lat, 0.99)),
		us(sk_crowd_hist_quantile(&s->lat, 0.999)), us(s->lat.count ? s->lat.max : 0),
		s->lat.count ? us(s->lat.sum / s->lat.count) : 0.0);
	fprintf(out, ",\"status\":{");
	for (unsigned c = LG_STATUS_MIN; c <= LG_STATUS_MAX; c++) {
		if (s->status[c] == 0)
			continue;
		fprintf(out, "%s\"%u\":%" PRIu64, sep, c, s->status[c]);
		sep = ",";
	}
	fprintf(out, "},\"kinds\":{");
	sep = "";
	for (unsigned k = 0; k < LG_REQ__COUNT; k++) {
		if (s->sent[k] == 0 && s->answered[k] == 0)
			continue;
		fprintf(out, "%s\"%s\":{\"sent\":%" PRIu64 ",\"answered\":%" PRIu64 "}", sep,
			lg_req_kind_str((enum lg_req_kind)k), s->sent[k], s->answered[k]);
		sep = ",";
	}
	fprintf(out, "},\"cart_status\":{");
	sep = "";
	for (unsigned c = LG_STATUS_MIN; c <= LG_STATUS_MAX; c++) {
		if (s->cart_status[c] == 0)
			continue;
		fprintf(out, "%s\"%u\":%" PRIu64, sep, c, s->cart_status[c]);
		sep = ",";
	}
	fprintf(out,
		"},\"wins\":{\"confirmed\":%" PRIu64 ",\"queued\":%" PRIu64 ",\"total\":%" PRIu64
		"}",
		s->wins_confirmed, s->wins_queued, s->wins_confirmed + s->wins_queued);
	fprintf(out,
		",\"connections\":{\"opened\":%" PRIu64 ",\"established\":%" PRIu64
		",\"closed\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"connect_errors\":%" PRIu64 "}",
		s->connects, s->established, s->closed, s->failed, s->connect_errors);
	fprintf(out,
		",\"errors\":{\"total\":%" PRIu64 ",\"parse\":%" PRIu64 ",\"lost\":%" PRIu64
		",\"send\":%" PRIu64 ",\"early_close\":%" PRIu64 "}",
		lg_stats_errors(s, tcp), lg_stats_sum(s->parse_errors, SK_HTTP_CLIENT__COUNT),
		s->lost, s->send_errors, s->early_close);
	fprintf(out,
		",\"tcp\":{\"resets\":%" PRIu64 ",\"retransmits\":%" PRIu64
		",\"syn_retransmits\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"refused\":%" PRIu64
		",\"tx_dropped\":%" PRIu64 ",\"tx_nombuf\":%" PRIu64 ",\"tx_waits\":%" PRIu64 "}",
		tcp->resets, tcp->retransmits, tcp->syn_retransmits, tcp->timeouts, tcp->refused,
		tcp->tx_dropped, tcp->tx_nombuf, tcp->tx_waits);
	if (run->tls)
		fprintf(out,
			",\"tls\":{\"full\":%" PRIu64 ",\"resumed\":%" PRIu64 ",\"failed\":%" PRIu64
			",\"tls12\":%" PRIu64 ",\"tls13\":%" PRIu64 ",\"alerts_received\":%" PRIu64
			"}",
			s->tls.full, s->tls.resumed, s->tls.failed, s->tls.tls12, s->tls.tls13,
			s->tls.alerts_received);
	else
		fprintf(out, ",\"tls\":null");
	if (run->attack != NULL) {
		struct lg_attack_info i = attack_info(s, tcp, run);

		fputc(',', out);
		lg_attack_json(run->attack, &i, out);
	}
	if (run->lcores != NULL)
		lcores_json(run, out);
	fprintf(out,
		",\"unanswered\":%" PRIu64 ",\"backlog_max\":%" PRIu64
		",\"cycles_per_req\":%.0f,\"all_answered\":%s}\n",
		run->inflight + s->lost, run->backlog_max,
		answered ? (double)s->busy_tsc / (double)answered : 0.0,
		sent == answered && sent > 0 ? "true" : "false");
	fflush(out);
}
