/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_hostile.c - raw SYN frames, SYN-ACK matching, attack counters and
 * reports of seckill-loadgen (see lg_hostile.h).
 */
#include <inttypes.h>
#include <string.h>

#include "lg_hostile.h"

#define ETH_HLEN     14
#define ETH_P_IPV4   0x0800
#define ETH_P_ARP    0x0806
#define IPPROTO_TCP_ 6
#define TCP_SYN	     0x02
#define TCP_RST	     0x04
#define TCP_ACK	     0x10

static const char *const attack_names[] = {"none", "synflood", "holders", "garbage"};
static const char *const end_names[LG_END__COUNT] = {"fin",	    "refused", "reset",
						     "syn_refused", "timeout", "ours"};

const char *
lg_attack_str(enum lg_attack_mode a)
{
	return (unsigned)a < sizeof(attack_names) / sizeof(attack_names[0]) ? attack_names[a] : "?";
}

int
lg_attack_parse(const char *s)
{
	for (int i = 1; i < (int)(sizeof(attack_names) / sizeof(attack_names[0])); i++)
		if (strcmp(s, attack_names[i]) == 0)
			return i;
	return -1;
}

const char *
lg_end_str(enum lg_end e)
{
	return (unsigned)e < LG_END__COUNT ? end_names[e] : "?";
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                    */
/* ------------------------------------------------------------------------ */

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint16_t
lg_cksum(const void *p, size_t len, uint32_t sum)
{
	const uint8_t *b = p;
	uint64_t s = sum;

	for (; len >= 2; b += 2, len -= 2)
		s += (uint32_t)(b[0] << 8 | b[1]);
	if (len == 1)
		s += (uint32_t)b[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

size_t
lg_syn_build(uint8_t *buf, size_t cap, const struct lg_syn *s)
{
	uint8_t *ip = buf + ETH_HLEN, *th = ip + 20;
	uint32_t pseudo;

	if (cap < LG_SYN_FRAME_LEN)
		return 0;
	memcpy(buf, s->dst_mac, 6);
	memcpy(buf + 6, s->src_mac, 6);
	put16(buf + 12, ETH_P_IPV4);
	/* IPv4: version 4, IHL 5, total 44, DF, TTL 64, TCP */
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, 20 + 24);
	put16(ip + 4, s->ip_id);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = IPPROTO_TCP_;
	put16(ip + 10, 0);
	put32(ip + 12, s->src_ip);
	put32(ip + 16, s->dst_ip);
	put16(ip + 10, lg_cksum(ip, 20, 0));
	/* TCP: SYN, data offset 6 words, MSS option */
	put16(th, s->src_port);
	put16(th + 2, s->dst_port);
	put32(th + 4, s->seq);
	put32(th + 8, 0);
	th[12] = 6 << 4;
	th[13] = TCP_SYN;
	put16(th + 14, s->window);
	put16(th + 16, 0);
	put16(th + 18, 0);
	th[20] = 2; /* kind MSS */
	th[21] = 4;
	put16(th + 22, s->mss);
	pseudo = (s->src_ip >> 16) + (s->src_ip & 0xffff) + (s->dst_ip >> 16) +
		 (s->dst_ip & 0xffff) + IPPROTO_TCP_ + 24;
	put16(th + 16, lg_cksum(th, 24, pseudo));
	return LG_SYN_FRAME_LEN;
}

uint32_t
lg_syn_iss(uint64_t key, uint32_t ip, uint16_t port)
{
	/* splitmix64's finaliser over the key and the source */
	uint64_t x = key ^ ((uint64_t)ip << 16 | port) ^ 0x9E3779B97F4A7C15ULL;

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	x ^= x >> 31;
	return (uint32_t)(x ^ (x >> 32));
}

bool
lg_synack_match(const uint8_t *frame, size_t len, uint32_t server_ip, uint16_t server_port,
		uint32_t first, uint32_t count, uint64_t key)
{
	const uint8_t *ip = frame + ETH_HLEN, *th;
	size_t ihl;
	uint32_t dst;
	uint16_t dport;

	if (len < ETH_HLEN + 20 || get16(frame + 12) != ETH_P_IPV4 || (ip[0] >> 4) != 4)
		return false;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20 || len < ETH_HLEN + ihl + 20 || ip[9] != IPPROTO_TCP_ ||
	    (get16(ip + 6) & 0x3fff) != 0) /* a fragment */
		return false;
	th = ip + ihl;
	dst = get32(ip + 16);
	dport = get16(th + 2);
	if (get32(ip + 12) != server_ip || get16(th) != server_port || dst - first >= count ||
	    (th[13] & (TCP_SYN | TCP_ACK | TCP_RST)) != (TCP_SYN | TCP_ACK))
		return false;
	return get32(th + 8) == lg_syn_iss(key, dst, dport) + 1u;
}

uint32_t
lg_frame_dst_ip(const uint8_t *frame, size_t len)
{
	if (len < ETH_HLEN + 20)
		return 0;
	if (get16(frame + 12) == ETH_P_IPV4)
		return get32(frame + ETH_HLEN + 16);
	if (get16(frame + 12) == ETH_P_ARP && len >= ETH_HLEN + 28)
		return get32(frame + ETH_HLEN + 24); /* target protocol address */
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Counters and reports                                                      */
/* ------------------------------------------------------------------------ */

void
lg_attack_stats_init(struct lg_attack_stats *s)
{
	memset(s, 0, sizeof(*s));
	sk_crowd_hist_init(&s->life);
	sk_crowd_hist_init(&s->t408);
}

static double
ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double
pct(uint64_t a, uint64_t b)
{
	return b != 0 ? 100.0 * (double)a / (double)b : 0.0;
}

static void
ip_str(uint32_t ip, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
}

void
lg_attack_summary(const struct lg_attack_stats *s, const struct lg_attack_info *i, FILE *out)
{
	char ip[16];
	double secs = i->seconds > 0 ? i->seconds : 1e-9;

	ip_str(i->from_ip, ip);
	fprintf(out, "  attack: %s from %s + %u addresses, at most %.0f/s", lg_attack_str(i->mode),
		ip, i->from_count, i->rate);
	if (i->mode == LG_ATTACK_SYNFLOOD) {
		fprintf(out,
			"\n    syns: %" PRIu64 " sent (%.0f/s), %" PRIu64
			" refused by the port, %" PRIu64 " no mbuf; syn-acks seen %" PRIu64
			" (%.1f%%, dropped)\n",
			s->syn_sent, (double)s->syn_sent / secs, s->syn_dropped, s->syn_nombuf,
			s->synack_seen, pct(s->synack_seen, s->syn_sent));
	} else {
		fprintf(out, ", %u connections%s", i->attackers,
			i->mode == LG_ATTACK_HOLDERS ? (i->drip_ms ? ", dripping" : ", idle") : "");
		if (i->drip_ms)
			fprintf(out, " a byte every %u ms", i->drip_ms);
		fprintf(out,
			"\n    connections: %" PRIu64 " opened, %" PRIu64
			" held at the end, %" PRIu64 " open at most, %" PRIu64
			" connect errors\n    ended:",
			s->opened, s->held_at_end, s->live_max, s->connect_errors);
		for (int e = 0; e < LG_END__COUNT; e++)
			fprintf(out, " %s %" PRIu64, lg_end_str((enum lg_end)e), s->ended[e]);
		fprintf(out, "\n    answers: %" PRIu64 " (", s->answered);
		for (unsigned c = 100; c < 600; c++)
			if (s->status[c] != 0)
				fprintf(out, "%u=%" PRIu64 " ", c, s->status[c]);
		fprintf(out, "unparsed %" PRIu64 "), %" PRIu64 " bytes sent\n", s->unparsed,
			s->bytes_sent);
		fprintf(out, "    lived: min %.1f ms, p50 %.1f ms, max %.1f ms",
			ms(s->life.count ? s->life.min : 0),
			ms(sk_crowd_hist_quantile(&s->life, 0.5)), ms(s->life.max));
		if (s->t408.count != 0)
			fprintf(out, "; 408 after min %.1f ms, p50 %.1f ms, max %.1f ms",
				ms(s->t408.min), ms(sk_crowd_hist_quantile(&s->t408, 0.5)),
				ms(s->t408.max));
		fputc('\n', out);
	}
	if (i->legit)
		fprintf(out,
			"  legitimate clients during the attack: %" PRIu64 "/%" PRIu64
			" answered (%.2f%%), p50 %.1f us, p99 %.1f us, %" PRIu64 " errors\n",
			i->legit_answered, i->legit_sent, pct(i->legit_answered, i->legit_sent),
			i->legit_p50_us, i->legit_p99_us, i->legit_errors);
}

void
lg_attack_json(const struct lg_attack_stats *s, const struct lg_attack_info *i, FILE *out)
{
	char ip[16];
	const char *sep = "";

	ip_str(i->from_ip, ip);
	fprintf(out,
		"\"attack\":{\"mode\":\"%s\",\"rate\":%.0f,\"attackers\":%u,\"drip_ms\":%u,"
		"\"from\":\"%s\",\"from_count\":%u,\"seconds\":%.3f",
		lg_attack_str(i->mode), i->rate, i->attackers, i->drip_ms, ip, i->from_count,
		i->seconds);
	fprintf(out,
		",\"syn_sent\":%" PRIu64 ",\"syn_dropped\":%" PRIu64 ",\"syn_nombuf\":%" PRIu64
		",\"synack_seen\":%" PRIu64 ",\"other_rx\":%" PRIu64,
		s->syn_sent, s->syn_dropped, s->syn_nombuf, s->synack_seen, s->other_rx);
	fprintf(out,
		",\"opened\":%" PRIu64 ",\"connect_errors\":%" PRIu64 ",\"held_at_end\":%" PRIu64
		",\"live_max\":%" PRIu64 ",\"bytes_sent\":%" PRIu64 ",\"ended\":{",
		s->opened, s->connect_errors, s->held_at_end, s->live_max, s->bytes_sent);
	for (int e = 0; e < LG_END__COUNT; e++)
		fprintf(out, "%s\"%s\":%" PRIu64, e ? "," : "", lg_end_str((enum lg_end)e),
			s->ended[e]);
	fprintf(out, "},\"answered\":%" PRIu64 ",\"unparsed\":%" PRIu64 ",\"status\":{",
		s->answered, s->unparsed);
	for (unsigned c = 100; c < 600; c++) {
		if (s->status[c] == 0)
			continue;
		fprintf(out, "%s\"%u\":%" PRIu64, sep, c, s->status[c]);
		sep = ",";
	}
	fprintf(out,
		"},\"lifetime_ms\":{\"count\":%" PRIu64 ",\"min\":%.1f,\"p50\":%.1f,\"max\":%.1f}"
		",\"t408_ms\":{\"count\":%" PRIu64 ",\"min\":%.1f,\"p50\":%.1f,\"max\":%.1f}",
		s->life.count, ms(s->life.count ? s->life.min : 0),
		ms(sk_crowd_hist_quantile(&s->life, 0.5)), ms(s->life.max), s->t408.count,
		ms(s->t408.count ? s->t408.min : 0), ms(sk_crowd_hist_quantile(&s->t408, 0.5)),
		ms(s->t408.max));
	if (i->legit)
		fprintf(out,
			",\"legit\":{\"sent\":%" PRIu64 ",\"answered\":%" PRIu64
			",\"success_pct\":%.3f,\"errors\":%" PRIu64
			",\"p50_us\":%.1f,\"p99_us\":%.1f}",
			i->legit_sent, i->legit_answered, pct(i->legit_answered, i->legit_sent),
			i->legit_errors, i->legit_p50_us, i->legit_p99_us);
	else
		fprintf(out, ",\"legit\":null");
	fputc('}', out);
}
