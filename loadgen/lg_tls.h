/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The TLS client side of seckill-loadgen (--tls): one client SSL_CTX for
 * the run, and per *client slot* (one of --conns) a plaintext buffer and,
 * with --tls-resume, the session of the slot's first handshake. The record
 * path is tls/'s (sk_tls_connect(), sk_tls_input(), sk_tls_send(): no
 * second BIO here); this file holds what the loadgen owns around it: the
 * slots, the session kept for resumption, and the handshake counts.
 *
 * A connection takes a free slot when it opens (lg_tls_open()) and gives it
 * back when it closes (lg_tls_closed()), so that at most --conns slots are
 * in use, and a slot's later connections resume its session.
 *
 * Thread-safety: a struct lg_tls belongs to the lcore that runs the load;
 * nothing here locks. Allocation: at lg_tls_create() only, plus what
 * OpenSSL allocates per connection (SSL_new(), its record buffers).
 */
#ifndef LG_TLS_H
#define LG_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_tls.h"

#include "lg_opts.h"
#include "lg_stats.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lg_tls;

/** The TLS part of a connection, in the loadgen's per-connection app area. */
struct lg_tls_conn {
	struct sk_tls_conn t; /**< tls/'s connection (zeroed app area: SK_TLS_NONE) */
	uint32_t slot;	      /**< the client slot it holds (when active) */
	uint8_t active;	      /**< lg_tls_open() succeeded: a slot and an SSL are held */
	uint8_t hs_done;      /**< the handshake completed */
	uint8_t failed;	      /**< sk_tls_input() said SK_TLS_FAIL */
};

/**
 * lg_tls_create - the client side for @p o (--tls-version, --sni,
 * --tls-resume) with @p o->conns slots of @p buf_size plaintext bytes each.
 * The buffers are reserved, not touched: a slot's pages are mapped when its
 * first answer arrives.
 * @return the state, or NULL with a message in @p err (OpenSSL's context,
 *   or out of memory).
 */
struct lg_tls *lg_tls_create(const struct lg_opts *o, uint32_t buf_size, int socket, char *err,
			     size_t errlen);

/** lg_tls_free - free @p lt and the sessions it keeps. NULL is a no-op. */
void lg_tls_free(struct lg_tls *lt);

/**
 * lg_tls_open - start the client side on @p tcp (just connected, its app
 * area zeroed) in @p tc: take a free slot, send the ClientHello (with the
 * slot's session to resume, if any).
 * @return 0; -ENOSPC (no free slot: more connections than --conns),
 *   -ENOMEM (OpenSSL). On failure @p tc holds nothing: abort @p tcp.
 */
int lg_tls_open(struct lg_tls *lt, struct lg_tls_conn *tc, struct sk_tcp_conn *tcp);

/**
 * lg_tls_input - sk_tls_input() on @p tc (tls/ counts the handshake that
 * completes here in @p lt's counters, full or resumed, by version).
 * @param[out] used    ciphertext taken (consume it from TCP)
 * @param[out] opened  the handshake completed in this call: requests may go
 * @return sk_tls_input()'s result; SK_TLS_FAIL marks @p tc failed.
 */
enum sk_tls_result lg_tls_input(struct lg_tls *lt, struct lg_tls_conn *tc, const uint8_t *data,
				size_t len, size_t *used, bool *opened);

/**
 * lg_tls_closed - @p tc's TCP connection closed (on_close): keep its
 * session for the slot (--tls-resume: when the slot has none, or this
 * handshake did not resume it), count a failed handshake (one that did not
 * complete and that the loadgen did not close itself: @p ours), free the
 * SSL and give the slot back. Leaves @p tc zeroed; no-op if it holds nothing.
 */
void lg_tls_closed(struct lg_tls *lt, struct lg_tls_conn *tc, bool ours);

/** lg_tls_counts - the handshakes so far, as the reports show them, into @p out. */
void lg_tls_counts(const struct lg_tls *lt, struct lg_tls_counts *out);

#ifdef __cplusplus
}
#endif

#endif /* LG_TLS_H */
