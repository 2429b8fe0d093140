/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tls_impl.h - private to tls/: the loaded certificates, an lcore's
 * server state, and the functions the files share (sk_tls_certs.c: the
 * loader and its checks; sk_tls_lcore.c: the SSL_CTXs and their callbacks,
 * the buffer pool; sk_tls_ticket.c: the ticket keys; sk_tls_io.c: the BIO
 * and the connection's record path). Not installed.
 */
#ifndef SK_TLS_IMPL_H
#define SK_TLS_IMPL_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "sk_tls.h"

/** Names of one certificate (SAN dNSName, or the CN without any). */
#define SK_TLS_NAMES_MAX 16
#define SK_TLS_NAME_LEN	 256

/** The TLS 1.2 suites of the policy: ECDHE with AES-GCM or ChaCha20-Poly1305. */
#define SK_TLS12_CIPHERS                                                                           \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                               \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                               \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
/** ... and the TLS 1.3 ones by default. */
#define SK_TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
/** The key-exchange groups. */
#define SK_TLS_GROUPS "X25519:P-256"

struct sk_tls_pair {
	X509 *cert;
	STACK_OF(X509) * chain; /* may be NULL */
	EVP_PKEY *key;
	int key_type; /* EVP_PKEY_EC or EVP_PKEY_RSA */
	unsigned n_names;
	char names[SK_TLS_NAMES_MAX][SK_TLS_NAME_LEN]; /* lower case */
	unsigned group;				       /* its SNI group */
};

struct sk_tls_certs {
	struct sk_tls_pair pairs[SK_TLS_CERTS_MAX];
	unsigned n_pairs;
	unsigned n_groups; /* pairs with the same names share a group: one SSL_CTX */
	unsigned group_first[SK_TLS_CERTS_MAX]; /* a pair of each group (its names) */
	char suites[256];
	int min_version;
	uint32_t handshake_timeout_ms, max_handshakes, buffers, buffer_size, max_conns;
	struct sk_tls_ticket_keys keys; /* the secret and the period; keys filled per lcore */
};

/** An entry of the idle ring: a connection (valid while its id matches). */
struct sk_tls_idle {
	struct sk_tls_conn *t;
	uint64_t id;  /* t->id when pushed */
	uint64_t tsc; /* when pushed: the ring is in this order */
};

/**
 * sk_tls_touch - @p t (server) had a record now: remember when, and put it
 * in the idle ring unless it is there (full ring: its buffers go at once).
 */
void sk_tls_touch(struct sk_tls_conn *t);

struct sk_tls_lcore {
	struct sk_tls_stats *stats; /* where to count: the caller's, or own_stats */
	const struct sk_tls_certs *certs;
	SSL_CTX *ctx[SK_TLS_CERTS_MAX]; /* one per group; [0] is the default */
	struct sk_tls_ticket_keys keys;
	EVP_CIPHER *aes; /* AES-256-CBC for the tickets, fetched once */
	uint8_t *pool;	 /* buffers x buffer_size, rte_malloc'd */
	uint8_t **free;	 /* stack of free buffers */
	uint32_t n_free;
	/* The idle ring: connections that may hold record buffers, oldest first. */
	struct sk_tls_idle *idle; /* idle_cap entries, rte_malloc'd */
	uint32_t idle_cap, idle_head, idle_count;
	uint64_t now_tsc, idle_tsc, next_id;
	struct sk_tls_stats own_stats; /* when sk_tls_lcore_create() got no stats */
};

/**
 * sk_tls_name_match - whether certificate name @p pattern ("shop.test" or
 * "*.shop.test", lower case) covers host @p host (any case): exact, or the
 * wildcard for exactly one leftmost label.
 */
bool sk_tls_name_match(const char *pattern, const char *host);

/** sk_tls_bio_method - the BIO over the TCP buffers (created once, thread-safe). */
BIO_METHOD *sk_tls_bio_method(void);

/** sk_tls_info_cb, sk_tls_msg_cb - the counting callbacks of every SSL_CTX. */
void sk_tls_info_cb(const SSL *ssl, int where, int ret);
void sk_tls_msg_cb(int write_p, int version, int content_type, const void *buf, size_t len,
		   SSL *ssl, void *arg);

/** sk_tls_buf_get, sk_tls_buf_put - take / give back a plaintext buffer. */
uint8_t *sk_tls_buf_get(struct sk_tls_lcore *tl);
void sk_tls_buf_put(struct sk_tls_lcore *tl, uint8_t *buf);

#endif /* SK_TLS_IMPL_H */
