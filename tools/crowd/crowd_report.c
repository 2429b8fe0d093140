/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_report.c - the end of a run: the checks and the exit status
 * (summarize), the text report, the JSON summary, the --orders file.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "crowd.h"

/* summarize_gate - --gate: put user index @u in its group of @s. */
static void
summarize_gate(const struct crowd *cw, uint64_t u, struct summary *s)
{
	uint16_t f = cw->uflags[u];

	if (!cw->o.has_gate)
		return;
	if (crowd_user_has_gate(&cw->o, u)) {
		s->gate_with++;
		s->gate_claim_refused += (f & UF_GATE) != 0;
		return;
	}
	s->gate_without++;
	s->lacking_won += cw->order[u] != 0;
	s->lacking_gate += (f & UF_GATE) != 0;
	s->lacking_sold_out += (f & (UF_GATE | UF_SOLD_OUT)) == UF_SOLD_OUT;
	s->lacking_other += (f & UF_OTHER) != 0;
}

/* check_gate - --gate: nobody without the claim won or was answered
 * anything but 403 gate or 410, and nobody with it was answered 403 gate. */
static void
check_gate(const struct summary *s, struct check *ck)
{
	*ck = (struct check){
		"gate", s->lacking_won == 0 && s->lacking_other == 0 && s->gate_claim_refused == 0,
		""};
	snprintf(ck->text, sizeof(ck->text),
		 "gate: %" PRIu64 " users without the claim: %" PRIu64 " refused 403 gate, %" PRIu64
		 " sold out, %" PRIu64 " won, %" PRIu64 " other; %" PRIu64 " with it refused",
		 s->gate_without, s->lacking_gate, s->lacking_sold_out, s->lacking_won,
		 s->lacking_other, s->gate_claim_refused);
}

void
crowd_summarize(const struct crowd *cw, struct summary *s)
{
	const struct stats *st = &cw->st;

	memset(s, 0, sizeof(*s));
	for (uint64_t u = 0; u < cw->o.users; u++) {
		summarize_gate(cw, u, s);
		if (cw->order[u] == 0)
			continue;
		s->winners++;
		if (!(cw->uflags[u] & UF_WIN))
			s->won_earlier++;
	}
	s->errors = st->err_connect + st->err_socket + st->err_closed + st->err_timeout +
		    st->err_protocol;
	if (cw->t_go != 0 && cw->t_last_buy > cw->t_go) {
		s->secs = (double)(cw->t_last_buy - cw->t_go) / 1e9;
		s->rps = (double)(st->answered - cw->n_go) / s->secs;
	}
	s->waited = (double)st->waited_ns / 1e9;

	struct check *ck = s->ck;
	ck[CK_UNITS] = (struct check){"winners_eq_units", -1, ""};
	if (cw->o.has_expect) {
		ck[CK_UNITS].ok = s->winners == cw->o.expect_units;
		if (ck[CK_UNITS].ok)
			snprintf(ck[CK_UNITS].text, sizeof(ck[0].text),
				 "winners == units (%" PRIu64 ")", cw->o.expect_units);
		else
			snprintf(ck[CK_UNITS].text, sizeof(ck[0].text),
				 "winners == units (%" PRIu64 "): %" PRIu64 " winners",
				 cw->o.expect_units, s->winners);
	}
	ck[CK_ONE_ORDER] = (struct check){
		"one_order_per_user", st->users_two_orders == 0 && st->users_won_twice == 0, ""};
	snprintf(ck[CK_ONE_ORDER].text, sizeof(ck[0].text),
		 ck[CK_ONE_ORDER].ok ? "no user won twice"
				     : "no user won twice: %" PRIu64 " users with two order ids, "
				       "%" PRIu64 " won twice",
		 st->users_two_orders, st->users_won_twice);
	ck[CK_DUPS] = (struct check){"duplicates_match", st->dup_mismatch == 0, ""};
	snprintf(ck[CK_DUPS].text, sizeof(ck[0].text),
		 ck[CK_DUPS].ok ? "duplicates carry the won order"
				: "duplicates carry the won order: %" PRIu64 " do not",
		 st->dup_mismatch);
	ck[CK_UNIQUE] = (struct check){"orders_unique", st->orders_shared == 0, ""};
	snprintf(ck[CK_UNIQUE].text, sizeof(ck[0].text),
		 ck[CK_UNIQUE].ok ? "orders unique"
				  : "orders unique: %" PRIu64 " answers gave another user's order",
		 st->orders_shared);
	ck[CK_POLLS] = (struct check){"polls_ok", -1, ""};
	if (cw->o.poll) {
		/* a run stopped early fails here only for answers that were wrong */
		bool complete = cw->phase > PH_POLL;
		ck[CK_POLLS].ok = st->polls_missing == 0 && st->polls_bad == 0 &&
				  (!complete || st->polls_ok == s->winners);
		size_t l = (size_t)snprintf(ck[CK_POLLS].text, sizeof(ck[0].text),
					    "polls %" PRIu64 "/%" PRIu64, st->polls_ok, s->winners);
		for (unsigned k = 0; k < SK_CROWD_ST__COUNT && l < sizeof(ck[0].text); k++) {
			if (st->poll_status[k] != 0)
				l += (size_t)snprintf(ck[CK_POLLS].text + l, sizeof(ck[0].text) - l,
						      " %s %" PRIu64,
						      sk_crowd_status_str((enum sk_crowd_status)k),
						      st->poll_status[k]);
		}
		if (l < sizeof(ck[0].text) && (st->polls_missing || st->polls_bad))
			snprintf(ck[CK_POLLS].text + l, sizeof(ck[0].text) - l,
				 ", %" PRIu64 " missing, %" PRIu64 " bad", st->polls_missing,
				 st->polls_bad);
	}
	ck[CK_ERRORS] = (struct check){"no_errors", s->errors == 0, ""};
	snprintf(ck[CK_ERRORS].text, sizeof(ck[0].text), "errors %" PRIu64, s->errors);
	ck[CK_GATE] = (struct check){"gate", -1, ""};
	if (cw->o.has_gate)
		check_gate(s, &ck[CK_GATE]);
	uint64_t done = st->answered - st->deferred;
	ck[CK_RESERVED] = (struct check){"reserved_only", -1, ""};
	if (cw->o.reserved >= 0) {
		uint64_t strangers = 0, refused = 0, wrongly = 0;
		for (uint64_t u = 0; u < cw->o.users; u++) {
			bool r = crowd_reserved(&cw->o, u), nr = cw->uflags[u] & UF_NOT_RESERVED;
			strangers += !r && cw->order[u] != 0;
			refused += nr;
			wrongly += r && nr;
		}
		ck[CK_RESERVED].ok = strangers == 0 && wrongly == 0;
		snprintf(ck[CK_RESERVED].text, sizeof(ck[0].text),
			 "winners not reserved %" PRIu64 ", users refused not_reserved %" PRIu64
			 " (of them reserved %" PRIu64 ")",
			 strangers, refused, wrongly);
	}
	ck[CK_ANSWERED] =
		(struct check){"all_answered", done == cw->o.attempts && cw->phase == PH_DONE, ""};
	snprintf(ck[CK_ANSWERED].text, sizeof(ck[0].text), "answered %" PRIu64 "/%" PRIu64 "%s",
		 done, cw->o.attempts,
		 cw->timebound ? " (time bound)" : (crowd_interrupted ? " (interrupted)" : ""));

	bool failed = false;
	for (int i = 0; i < CK_ANSWERED; i++)
		failed |= ck[i].ok == 0;
	if (cw->fatal != NULL)
		s->exit = EXIT_RUNTIME;
	else if (failed)
		s->exit = EXIT_CHECK;
	else if (!ck[CK_ANSWERED].ok)
		s->exit = EXIT_TIMEBOUND;
	else
		s->exit = 0;
}

/* thousands - @v with thousands separators ("28,500"), in a static buffer. */
static const char *
thousands(double v, char *buf, size_t cap)
{
	char t[32];
	int n = snprintf(t, sizeof(t), "%.0f", v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < cap; i++) {
		buf[o++] = t[i];
		int left = n - 1 - i;
		if (left > 0 && left % 3 == 0 && t[i] != '-')
			buf[o++] = ',';
	}
	buf[o] = '\0';
	return buf;
}

static const char *
lat_str(uint64_t ns, char *buf, size_t cap)
{
	if (ns < 1000000)
		snprintf(buf, cap, "%.0f us", (double)ns / 1e3);
	else
		snprintf(buf, cap, "%.2f ms", (double)ns / 1e6);
	return buf;
}

/* report_follow_text - the --follow line: streams, answers, events by name, closes. */
static void
report_follow_text(const struct follow_stats *f, uint32_t percent)
{
	printf("follow: %" PRIu64 " streams (%u%% of %" PRIu64
	       " winners) in %.2f s: opened %" PRIu64 " | 429 %" PRIu64 " | 404 %" PRIu64
	       " | other %" PRIu64 " | events %" PRIu64,
	       f->streams, percent, f->winners, f->secs, f->opened, f->refused, f->not_found,
	       f->other_http, f->events);
	for (unsigned k = 0; k <= FOLLOW_NAMES; k++)
		if (f->by_name[k] != 0)
			printf(" %s %" PRIu64, crowd_follow_name(k), f->by_name[k]);
	printf(" | keep-alives %" PRIu64 " | closed after final %" PRIu64 ", before %" PRIu64
	       " | open at the end %" PRIu64 " | errors %" PRIu64 "\n",
	       f->keepalives, f->closed_final, f->closed_early, f->open_at_end, f->errors);
}

/* report_follow_json - ,"follow":{...} (null without --follow). */
static void
report_follow_json(const struct crowd *cw, FILE *f)
{
	const struct follow_stats *fs = &cw->follow;

	if (cw->o.follow == 0) {
		fprintf(f, ",\"follow\":null");
		return;
	}
	fprintf(f,
		",\"follow\":{\"percent\":%u,\"winners\":%" PRIu64 ",\"streams\":%" PRIu64
		",\"opened\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"not_found\":%" PRIu64
		",\"other_http\":%" PRIu64 ",\"events\":%" PRIu64 ",\"keepalives\":%" PRIu64
		",\"closed_final\":%" PRIu64 ",\"closed_early\":%" PRIu64
		",\"open_at_end\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"duration_s\":%.6f"
		",\"by_status\":{",
		cw->o.follow, fs->winners, fs->streams, fs->opened, fs->refused, fs->not_found,
		fs->other_http, fs->events, fs->keepalives, fs->closed_final, fs->closed_early,
		fs->open_at_end, fs->errors, fs->secs);
	for (unsigned k = 0; k <= FOLLOW_NAMES; k++)
		fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", crowd_follow_name(k), fs->by_name[k]);
	fprintf(f, "}}");
}

void
crowd_report_text(const struct crowd *cw, const struct summary *s)
{
	const struct stats *st = &cw->st;
	const struct sk_crowd_hist *h = &cw->lat;
	char a[32], b[32], c[32], d[32], e[32];

	printf("seckill-crowd: %s%s item %" PRIu64 ", %u conns, seed %" PRIu64 ", %s\n",
	       cw->o.tls ? "https " : "", cw->o.host, cw->o.item, cw->o.conns, cw->o.seed,
	       cw->key ? "JWT" : "X-User-Id");
	printf("attempts %" PRIu64, st->sent - st->deferred);
	if (st->sent - st->deferred != cw->o.attempts)
		printf(" of %" PRIu64, cw->o.attempts);
	printf(" (%" PRIu64 " users, %" PRIu64 " retrying) in %.2f s, %s req/s", cw->o.users,
	       cw->retriers, s->secs, thousands(s->rps, a, sizeof(a)));
	if (s->waited > 0)
		printf(" (after %.2f s waiting for the start)", s->waited);
	printf("; p50 %s p90 %s p99 %s p99.9 %s max %s\n",
	       lat_str(sk_crowd_hist_quantile(h, 0.5), a, sizeof(a)),
	       lat_str(sk_crowd_hist_quantile(h, 0.9), b, sizeof(b)),
	       lat_str(sk_crowd_hist_quantile(h, 0.99), c, sizeof(c)),
	       lat_str(sk_crowd_hist_quantile(h, 0.999), d, sizeof(d)),
	       lat_str(h->count ? h->max : 0, e, sizeof(e)));

	printf("winners %" PRIu64, s->winners);
	if (s->won_earlier)
		printf(" (%" PRIu64 " from an earlier run)", s->won_earlier);
	for (unsigned k = SK_CROWD_ST_QUEUED; k < SK_CROWD_ST__COUNT; k++) {
		uint64_t v = st->status[k];
		/* wins above; a cart's 409 duplicate in the duplicates below */
		if (k == SK_CROWD_ST_QUEUED || k == SK_CROWD_ST_CONFIRMED ||
		    k == SK_CROWD_ST_PAID || k == SK_CROWD_ST_DUPLICATE)
			continue;
		if (v != 0)
			printf(" | %s %" PRIu64, sk_crowd_status_str((enum sk_crowd_status)k), v);
	}
	printf(" | duplicate %" PRIu64 " | errors %" PRIu64 "\n", st->duplicates, s->errors);
	printf("http");
	for (unsigned k = 100; k < 600; k++) {
		if (st->http[k] != 0)
			printf(" %u:%" PRIu64, k, st->http[k]);
	}
	if (st->answered == 0)
		printf(" (no answer)");
	printf(" | wins %" PRIu64 " | reconnects %" PRIu64 " | idle closes %" PRIu64,
	       st->fresh_wins, st->reconnects, st->idle_closes);
	if (st->retry_after)
		printf(" | Retry-After %" PRIu64 " (max %" PRIu64 " s)", st->retry_after,
		       st->retry_after_max);
	printf("\n");
	if (cw->o.mix.cart_pct > 0) {
		printf("carts (%u%% of the users, %u lines): %" PRIu64 " sent", cw->o.mix.cart_pct,
		       cw->o.mix.cart_lines, st->carts_sent);
		for (unsigned k = SK_CROWD_ST_NONE; k < SK_CROWD_ST__COUNT; k++)
			if (st->cart_status[k] != 0)
				printf(" | %s %" PRIu64,
				       sk_crowd_status_str((enum sk_crowd_status)k),
				       st->cart_status[k]);
		printf("\n");
	}
	if (cw->o.tls)
		printf("tls: handshakes full %" PRIu64 " resumed %" PRIu64 " failed %" PRIu64
		       " (sessions offered %" PRIu64 "; TLS 1.3 %" PRIu64 ", TLS 1.2 %" PRIu64
		       ")\n",
		       st->tls_full, st->tls_resumed, st->tls_failed, st->tls_offered, st->tls13,
		       st->tls12);
	if (s->errors)
		printf("errors: connect %" PRIu64 " socket %" PRIu64 " closed %" PRIu64
		       " timeout %" PRIu64 " protocol %" PRIu64 " (lost attempts %" PRIu64 ")\n",
		       st->err_connect, st->err_socket, st->err_closed, st->err_timeout,
		       st->err_protocol, st->lost);
	if (cw->o.follow != 0)
		report_follow_text(&cw->follow, cw->o.follow);
	if (st->item_http != 0) {
		printf("item %" PRIu64 ": HTTP %d", cw->o.item, st->item_http);
		if (st->item_state[0] != '\0')
			printf(", state %s", st->item_state);
		if (st->item_has_remaining)
			printf(", remaining %" PRIu64, st->item_remaining);
		printf("\n");
	}
	printf("check:");
	bool first = true;
	for (int i = 0; i < CK__COUNT; i++) {
		if (s->ck[i].ok < 0)
			continue;
		printf("%s %s %s", first ? "" : ";", s->ck[i].text, s->ck[i].ok ? "OK" : "FAIL");
		first = false;
	}
	printf("\n");
	fflush(stdout);
}

static void
json_counts(FILE *f, const char *name, const uint64_t *v, unsigned from, unsigned to, bool st)
{
	bool first = true;

	fprintf(f, "\"%s\":{", name);
	for (unsigned k = from; k < to; k++) {
		if (v[k] == 0)
			continue;
		if (st)
			fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",",
				sk_crowd_status_str((enum sk_crowd_status)k), v[k]);
		else
			fprintf(f, "%s\"%u\":%" PRIu64, first ? "" : ",", k, v[k]);
		first = false;
	}
	fprintf(f, "}");
}

/* crowd_report_json - the summary as one JSON object on one line; 0 or -1. */
int
crowd_report_json(const struct crowd *cw, const struct summary *s, FILE *f)
{
	const struct stats *st = &cw->st;
	const struct sk_crowd_hist *h = &cw->lat;

	fprintf(f,
		"{\"server\":\"%s\",\"item\":%" PRIu64 ",\"users\":%" PRIu64
		",\"user_base\":%" PRIu64 ",\"retriers\":%" PRIu64 ",\"attempts\":%" PRIu64
		",\"conns\":%u,\"seed\":%" PRIu64 ",\"auth\":%s",
		cw->o.host, cw->o.item, cw->o.users, cw->o.user_base, cw->retriers, cw->o.attempts,
		cw->o.conns, cw->o.seed, cw->key ? "true" : "false");
	fprintf(f,
		",\"sent\":%" PRIu64 ",\"answered\":%" PRIu64 ",\"deferred\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"duration_s\":%.6f,\"waited_s\":%.6f,\"rps\":%.1f",
		st->sent, st->answered, st->deferred, st->lost, s->secs, s->waited, s->rps);
	fprintf(f,
		",\"latency_ns\":{\"count\":%" PRIu64 ",\"min\":%" PRIu64 ",\"mean\":%" PRIu64
		",\"p50\":%" PRIu64 ",\"p90\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"p999\":%" PRIu64
		",\"max\":%" PRIu64 "}",
		h->count, h->count ? h->min : 0, h->count ? h->sum / h->count : 0,
		sk_crowd_hist_quantile(h, 0.5), sk_crowd_hist_quantile(h, 0.9),
		sk_crowd_hist_quantile(h, 0.99), sk_crowd_hist_quantile(h, 0.999), h->max);
	fprintf(f, ",");
	json_counts(f, "http", st->http, 100, 600, false);
	fprintf(f, ",");
	json_counts(f, "status", st->status, 0, SK_CROWD_ST__COUNT, true);
	fprintf(f,
		",\"winners\":%" PRIu64 ",\"fresh_wins\":%" PRIu64 ",\"won_earlier\":%" PRIu64
		",\"duplicates\":%" PRIu64 ",\"retry_after\":{\"count\":%" PRIu64
		",\"max_s\":%" PRIu64 "}",
		s->winners, st->fresh_wins, s->won_earlier, st->duplicates, st->retry_after,
		st->retry_after_max);
	fprintf(f,
		",\"errors\":{\"total\":%" PRIu64 ",\"connect\":%" PRIu64 ",\"socket\":%" PRIu64
		",\"closed\":%" PRIu64 ",\"timeout\":%" PRIu64 ",\"protocol\":%" PRIu64
		",\"win_without_order\":%" PRIu64 "}",
		s->errors, st->err_connect, st->err_socket, st->err_closed, st->err_timeout,
		st->err_protocol, st->win_no_order);
	fprintf(f,
		",\"connects\":%" PRIu64 ",\"reconnects\":%" PRIu64 ",\"idle_closes\":%" PRIu64
		",\"waits\":%" PRIu64,
		st->connects, st->reconnects, st->idle_closes, st->waits);
	fprintf(f,
		",\"violations\":{\"users_two_orders\":%" PRIu64 ",\"users_won_twice\":%" PRIu64
		",\"dup_mismatch\":%" PRIu64 ",\"orders_shared\":%" PRIu64 "}",
		st->users_two_orders, st->users_won_twice, st->dup_mismatch, st->orders_shared);
	if (cw->o.tls)
		fprintf(f,
			",\"tls\":{\"version\":%s,\"sni\":%s%s%s,\"resume\":%s,\"verify\":%s"
			",\"handshakes\":{\"full\":%" PRIu64 ",\"resumed\":%" PRIu64
			",\"failed\":%" PRIu64 "},\"offered\":%" PRIu64 ",\"tls13\":%" PRIu64
			",\"tls12\":%" PRIu64 "}",
			cw->o.tls_version == 13	  ? "\"1.3\""
			: cw->o.tls_version == 12 ? "\"1.2\""
						  : "null",
			cw->o.sni ? "\"" : "", cw->o.sni ? cw->o.sni : "null",
			cw->o.sni ? "\"" : "", cw->o.tls_resume ? "true" : "false",
			cw->o.cacert ? "true" : "false", st->tls_full, st->tls_resumed,
			st->tls_failed, st->tls_offered, st->tls13, st->tls12);
	else
		fprintf(f, ",\"tls\":null");
	report_follow_json(cw, f);
	if (cw->o.mix.cart_pct > 0) {
		fprintf(f, ",\"carts\":{\"pct\":%u,\"lines\":%u,\"sent\":%" PRIu64 ",",
			cw->o.mix.cart_pct, cw->o.mix.cart_lines, st->carts_sent);
		json_counts(f, "status", st->cart_status, 0, SK_CROWD_ST__COUNT, true);
		fprintf(f, "}");
	} else {
		fprintf(f, ",\"carts\":null");
	}
	if (cw->o.has_gate)
		fprintf(f,
			",\"gate\":{\"pct\":%u,\"with_claim\":%" PRIu64 ",\"without\":%" PRIu64
			",\"refused\":%" PRIu64 ",\"claim_refused\":%" PRIu64
			",\"lacking_gate\":%" PRIu64 ",\"lacking_sold_out\":%" PRIu64
			",\"lacking_won\":%" PRIu64 ",\"lacking_other\":%" PRIu64 "}",
			cw->o.gate_pct, s->gate_with, s->gate_without, st->status[SK_CROWD_ST_GATE],
			s->gate_claim_refused, s->lacking_gate, s->lacking_sold_out, s->lacking_won,
			s->lacking_other);
	else
		fprintf(f, ",\"gate\":null");
	if (cw->o.poll) {
		fprintf(f,
			",\"polls\":{\"sent\":%" PRIu64 ",\"ok\":%" PRIu64 ",\"missing\":%" PRIu64
			",\"bad\":%" PRIu64 ",",
			st->polls_sent, st->polls_ok, st->polls_missing, st->polls_bad);
		json_counts(f, "status", st->poll_status, 0, SK_CROWD_ST__COUNT, true);
		fprintf(f, "}");
	} else {
		fprintf(f, ",\"polls\":null");
	}
	if (st->item_http != 0) {
		fprintf(f, ",\"item_read\":{\"http\":%d,\"state\":", st->item_http);
		if (st->item_state[0] != '\0') {
			/* the scanner kept raw bytes: write only plain ones */
			fputc('"', f);
			for (const char *p = st->item_state; *p != '\0'; p++)
				fputc((*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') ? *p
											   : '?',
				      f);
			fputc('"', f);
		} else {
			fprintf(f, "null");
		}
		if (st->item_has_remaining)
			fprintf(f, ",\"remaining\":%" PRIu64 "}", st->item_remaining);
		else
			fprintf(f, ",\"remaining\":null}");
	} else {
		fprintf(f, ",\"item_read\":null");
	}
	fprintf(f, ",\"checks\":{");
	for (int i = 0; i < CK__COUNT; i++)
		fprintf(f, "%s\"%s\":%s", i ? "," : "", s->ck[i].name,
			s->ck[i].ok < 0 ? "null" : (s->ck[i].ok ? "true" : "false"));
	fprintf(f, "},\"timebound\":%s,\"ok\":%s,\"exit\":%d}\n", cw->timebound ? "true" : "false",
		s->exit == 0 ? "true" : "false", s->exit);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

int
crowd_write_orders(const struct crowd *cw, FILE *f)
{
	for (uint64_t u = 0; u < cw->o.users; u++) {
		if (cw->order[u] != 0)
			fprintf(f, "%" PRIu64 " %" PRIu64 "\n", cw->o.user_base + u, cw->order[u]);
	}
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
