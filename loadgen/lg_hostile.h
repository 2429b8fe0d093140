/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The hostile modes of seckill-loadgen (--attack, docs/loadgen.md), the
 * part without DPDK: the raw SYN frame of the SYN flood and the test that
 * recognises its SYN-ACKs, the counters of an attack, and their reports.
 * lg_attack.c runs the attacks on the port; tests/unit/loadgen reaches this.
 *
 * The SYN flood's initial sequence numbers are keyed: a SYN from address
 * A, port P carries lg_syn_iss(key, A, P), so a SYN-ACK whose ACK is that
 * number + 1 answers one of the flood's SYNs and nothing else (a
 * legitimate connection's SYN-ACK matches with probability 2^-32).
 *
 * Pure functions on caller-owned buffers; no state, no allocation.
 */
#ifndef LG_HOSTILE_H
#define LG_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "crowd_hist.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The hostile modes. */
enum lg_attack_mode {
	LG_ATTACK_NONE = 0,
	LG_ATTACK_SYNFLOOD, /**< raw SYNs from spoofed sources, never completed */
	LG_ATTACK_HOLDERS,  /**< connections that say nothing (or drip a byte) */
	LG_ATTACK_GARBAGE,  /**< connections that send random bytes */
};

/** lg_attack_str - "synflood", "holders", "garbage" ("none"). */
const char *lg_attack_str(enum lg_attack_mode a);

/** lg_attack_parse - the mode named @p s, or -1. */
int lg_attack_parse(const char *s);

/** Length of the SYN frame lg_syn_build() writes: Ethernet + IPv4 + TCP + MSS option. */
#define LG_SYN_FRAME_LEN (14 + 20 + 20 + 4)

/** What a raw SYN says. Addresses and ports in host byte order. */
struct lg_syn {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint32_t src_ip;
	uint32_t dst_ip;
	uint16_t src_port;
	uint16_t dst_port;
	uint32_t seq;	 /**< the ISS (lg_syn_iss()) */
	uint16_t ip_id;	 /**< IPv4 identification */
	uint16_t mss;	 /**< MSS option */
	uint16_t window; /**< advertised window */
};

/**
 * lg_syn_build - write the Ethernet frame of @p s at @p buf: IPv4 (TTL 64,
 * DF, no options, header checksum), TCP (SYN only, data offset 6, the MSS
 * option, checksum over the pseudo-header) in network byte order.
 * @return LG_SYN_FRAME_LEN, or 0 if @p cap is smaller.
 */
size_t lg_syn_build(uint8_t *buf, size_t cap, const struct lg_syn *s);

/** lg_syn_iss - the keyed ISS of a SYN from @p ip (host order), port @p port. */
uint32_t lg_syn_iss(uint64_t key, uint32_t ip, uint16_t port);

/**
 * lg_synack_match - @p frame (Ethernet, @p len bytes) is a SYN-ACK from
 * @p server_ip:@p server_port to an address of [@p first, @p first + @p
 * count) whose ACK number is lg_syn_iss(@p key, its address, its port) + 1:
 * the answer to one of the flood's SYNs. Any IPv4 header length; checksums
 * are not checked (the frame is only counted).
 */
bool lg_synack_match(const uint8_t *frame, size_t len, uint32_t server_ip, uint16_t server_port,
		     uint32_t first, uint32_t count, uint64_t key);

/**
 * lg_frame_dst_ip - the IPv4 address a frame is for: the destination of an
 * IPv4 packet, the target of an ARP packet (host order), 0 for anything
 * else or a truncated frame.
 */
uint32_t lg_frame_dst_ip(const uint8_t *frame, size_t len);

/** lg_cksum - the Internet checksum (one's complement of the one's complement
 * sum) of @p len bytes at @p p, starting from the partial sum @p sum. */
uint16_t lg_cksum(const void *p, size_t len, uint32_t sum);

/** How an attack connection ended, as on_close found it. */
enum lg_end {
	LG_END_FIN = 0,	    /**< the server closed it (FIN) */
	LG_END_REFUSED,	    /**< RST within 1 s, nothing answered: refused at the handshake */
	LG_END_RESET,	    /**< RST later (evicted, or after an answer) */
	LG_END_SYN_REFUSED, /**< RST to the SYN */
	LG_END_TIMEOUT,	    /**< the loadgen's stack gave up (no SYN-ACK, retransmissions) */
	LG_END_OURS,	    /**< the loadgen closed it at the end of the run */
	LG_END__COUNT
};

/** lg_end_str - "fin", "refused", "reset", "syn_refused", "timeout", "ours". */
const char *lg_end_str(enum lg_end e);

/** The counters of one attack. Monotonic but held_at_end. */
struct lg_attack_stats {
	/* synflood */
	uint64_t syn_sent;    /**< SYNs the port took */
	uint64_t syn_dropped; /**< SYNs the port refused (ring full) */
	uint64_t syn_nombuf;  /**< SYNs not built: mempool empty */
	uint64_t synack_seen; /**< SYN-ACKs answering them (counted and dropped) */
	uint64_t other_rx;    /**< other frames to the flood's addresses (dropped) */
	/* holders and garbage */
	uint64_t opened;	       /**< connections opened (SYN sent) */
	uint64_t connect_errors;       /**< no free slot or tuple */
	uint64_t bytes_sent;	       /**< drip or garbage bytes queued */
	uint64_t ended[LG_END__COUNT]; /**< how they ended */
	uint64_t answered;	       /**< complete answers */
	uint64_t unparsed;	       /**< answers the parser refused */
	uint64_t status[600];	       /**< answers by status */
	uint64_t held_at_end;	       /**< still open when the load phase ended */
	uint64_t live_max;	       /**< most open at once */
	struct sk_crowd_hist life;     /**< connect to close, ns */
	struct sk_crowd_hist t408;     /**< connect to a 408 answer, ns */
};

/** lg_attack_stats_init - zero @p s, empty histograms. */
void lg_attack_stats_init(struct lg_attack_stats *s);

/** What the report says about an attack besides its counters. */
struct lg_attack_info {
	enum lg_attack_mode mode;
	double rate;	    /**< --attack-rate */
	uint32_t attackers; /**< --attackers */
	uint32_t drip_ms;   /**< --drip-ms, 0 = idle */
	uint32_t from_ip;   /**< the attack's addresses */
	uint32_t from_count;
	double seconds; /**< the load phase */
	/* the legitimate clients of the same run (--mix) */
	bool legit;
	uint64_t legit_sent, legit_answered, legit_errors;
	double legit_p50_us, legit_p99_us;
};

/** lg_attack_summary - the attack's lines of the summary, to @p out. */
void lg_attack_summary(const struct lg_attack_stats *s, const struct lg_attack_info *i, FILE *out);

/** lg_attack_json - `"attack":{...}` (no leading comma) to @p out. */
void lg_attack_json(const struct lg_attack_stats *s, const struct lg_attack_info *i, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* LG_HOSTILE_H */
