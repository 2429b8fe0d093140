/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_tls.h - the TLS fixture of the unit tests and the record-path
 * fuzzer: certificates made at run time, and two TCP stacks wired back to
 * back (as test_net_client.c does) with tls/ on both ends:
 *   - the server: sk_tls_accept() on every connection, then an echo app
 *     that answers each plaintext chunk with "echo:" + the chunk and
 *     gathers what it decrypted; feed_max limits the ciphertext each
 *     on_data hands to sk_tls_input() (the rest waits in TCP: a record
 *     split at that byte), and it resumes itself for the rest;
 *   - the client: sk_tls_connect() on sk_tls_client_ctx(), or raw (no TLS:
 *     whatever the test writes with sk_tcp_send() goes out as is).
 * No Check: functions return -1 (and print why) so the fuzzer can use
 * them. Time is simulated (1 GHz TSC). One fixture per process at a time.
 */
#ifndef SK_TEST_TLS_H
#define SK_TEST_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "sk_net.h"
#include "sk_tls.h"

/** Key kinds of sk_test_tls_cert(). */
enum sk_test_key { SK_TEST_KEY_EC256, SK_TEST_KEY_RSA2048, SK_TEST_KEY_RSA1024, SK_TEST_KEY_EC384 };

/**
 * sk_test_tls_cert - a self-signed certificate for @p names (subjectAltName
 * DNS, first one also the CN) with a fresh key of @p kind, valid from
 * now + @p from_days to now + @p to_days, written as PEM to
 * @p dir/@p base.pem and @p dir/@p base.key (mode 600).
 * @param cert, key  receive the paths (PATH_MAX bytes each)
 * @return 0, or -1.
 */
int sk_test_tls_cert(const char *dir, const char *base, enum sk_test_key kind,
		     const char *const *names, unsigned n_names, int from_days, int to_days,
		     char *cert, char *key);

#define SK_TEST_TLS_WIRE  4096
#define SK_TEST_TLS_GOT	  65536
#define SK_TEST_TLS_CONNS 16

struct sk_test_tls_wire {
	struct rte_mbuf *q[SK_TEST_TLS_WIRE];
	unsigned n;
};

/** One end's app area (in each connection): the TLS connection and a buffer. */
struct sk_test_tls_conn {
	struct sk_tls_conn tls;
	uint8_t plain[4096]; /* the client's plaintext buffer */
};

/** One end. */
struct sk_test_tls_end {
	struct sk_net_lcore *net;
	struct sk_test_tls_wire out;
	bool server;
	struct sk_test_tls_pair *pair;
	int opened, closed;
	struct sk_tcp_conn *live[SK_TEST_TLS_CONNS]; /* open connections (aborted at free) */
};

/** The fixture. */
struct sk_test_tls_pair {
	struct sk_test_tls_end srv, cli;
	struct sk_tls_lcore *tl; /* the server's TLS */
	SSL_CTX *cctx;		 /* the client's */
	struct sk_tls_stats cstats;
	uint64_t now;
	struct rte_ether_addr srv_mac;
	/* server behaviour and what it saw */
	size_t feed_max;      /* ciphertext per sk_tls_input() call (SIZE_MAX: all) */
	uint32_t srv_snd_buf; /* the server's TCP send buffer (sk_test_tls_pair_init: 16 KiB) */
	bool echo;	      /* answer each plaintext chunk */
	uint8_t got[SK_TEST_TLS_GOT]; /* every plaintext byte the server decrypted */
	size_t got_len;
	int srv_fail, srv_eof; /* sk_tls_input() results seen */
	unsigned resumes;      /* sk_tcp_resume() calls of the apps: the pump goes on */
	/* client side */
	bool cli_raw; /* no TLS on the client */
	const char *sni;
	SSL_SESSION *session;	       /* resume this one (not owned) */
	uint8_t cgot[SK_TEST_TLS_GOT]; /* plaintext the client decrypted */
	size_t cgot_len;
	int cli_fail, cli_eof;
	struct sk_tcp_conn *last_cli; /* the connection of the last sk_test_tls_connect() */
};

/**
 * sk_test_tls_pair_init_snd - sk_test_tls_pair_init() (both versions
 * offered) with the server's TCP send buffer @p srv_snd_buf bytes.
 */
int sk_test_tls_pair_init_snd(struct sk_test_tls_pair *p, struct rte_mempool *pool,
			      const struct sk_tls_certs *certs, uint32_t srv_snd_buf);

/**
 * sk_test_tls_pair_init - both stacks on @p pool, the server's TLS on
 * @p certs (loaded by the caller), the client's context offering
 * @p tls13_only / @p tls12_only; the client resolves the server (ARP).
 * @return 0, or -1.
 */
int sk_test_tls_pair_init(struct sk_test_tls_pair *p, struct rte_mempool *pool,
			  const struct sk_tls_certs *certs, bool tls13_only, bool tls12_only);

/** sk_test_tls_pair_free - reset the connections still open (their TLS is
 * released), free both stacks and the TLS state; nothing left in the pool. */
void sk_test_tls_pair_free(struct sk_test_tls_pair *p);

/** sk_test_tls_pump - step both stacks (1 ms of time) until quiet; -1 if never. */
int sk_test_tls_pump(struct sk_test_tls_pair *p);

/**
 * sk_test_tls_connect - a client connection from source port @p port
 * (TLS or raw per p->cli_raw); pumped until quiet.
 * @return the client's TCP connection, or NULL.
 */
struct sk_tcp_conn *sk_test_tls_connect(struct sk_test_tls_pair *p, uint16_t port);

/** sk_test_tls_cli - the client TLS connection of @p c. */
struct sk_tls_conn *sk_test_tls_cli(struct sk_tcp_conn *c);

#endif /* SK_TEST_TLS_H */
