/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * TLS 1.3 and 1.2 over the own TCP stack, with OpenSSL 3 (docs/tls.md).
 *
 * Three levels, owned by three kinds of caller:
 *   - struct sk_tls_certs: the certificates and keys of the `[tls]`
 *     section, read and checked once by the main thread at start
 *     (sk_tls_certs_load()); read-only afterwards, shared by every lcore.
 *   - struct sk_tls_lcore: one lcore's server side: one SSL_CTX per
 *     certificate group (SNI), the ticket keys, the handshake cap, the
 *     counters, and the pool of plaintext buffers. Created by the main
 *     thread (sk_tls_lcore_create()), then used by its lcore only.
 *   - struct sk_tls_conn: one TLS connection, server (sk_tls_accept()) or
 *     client (sk_tls_connect(), the load generator's), embedded in the
 *     connection's app area. Used by the lcore of its TCP connection only.
 *
 * The record path. OpenSSL reads and writes through a BIO of our own
 * (sk_tls_io.c) over the stack's buffers: a read takes ciphertext straight
 * from the TCP receive buffer that on_data was given (what OpenSSL took is
 * what sk_tls_input() reports consumed; the rest stays in TCP's window), a
 * write appends to the TCP send buffer with sk_tcp_send(). No copy into a
 * memory BIO, no lock, no allocation on the request path: OpenSSL allocates
 * per connection (SSL_new(), its record buffers, which a busy connection
 * keeps and an idle one gives back: sk_tls_lcore_poll()), and
 * decrypted bytes go into a buffer of the lcore's pool that a connection
 * holds only while it has plaintext not yet consumed.
 *
 * Policy, fixed here: TLS 1.2 and 1.3 only, AEAD suites only (AES-GCM and
 * ChaCha20-Poly1305), groups X25519 and P-256, no renegotiation, no 0-RTT
 * (early data is refused: a replayed buy must never be a second buy), ALPN
 * "http/1.1" or none (a client that offers ALPN without it gets the
 * no_application_protocol alert), stateless session tickets only (no
 * server-side cache), encrypted with keys every lcore derives from one
 * secret and the wall clock (sk_tls_ticket_keys).
 *
 * Thread-safety: as above. Every function of a struct sk_tls_lcore or a
 * struct sk_tls_conn runs on that lcore; sk_tls_lcore_stats() may be read
 * from any thread (64-bit counters, torn reads impossible on x86-64).
 */
#ifndef SK_TLS_H
#define SK_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "sk_common.h"
#include "sk_net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Certificate/key pairs of one [tls] section. */
#define SK_TLS_CERTS_MAX 8
/** Bytes of the ticket secret file: at least MIN, fewer than MAX (the
 * buffer; a file of MAX bytes or more is refused as possibly cut). */
#define SK_TLS_TICKET_SECRET_MIN 32
#define SK_TLS_TICKET_SECRET_MAX 256
/** One line of error from the loaders. */
#define SK_TLS_ERR_MAX 512
/** Bytes a record adds to its plaintext at most (header, tag, type, padding). */
#define SK_TLS_RECORD_OVERHEAD 64

/** What an operator configures (the [tls] section; sk_tls_conf_defaults()). */
struct sk_tls_conf {
	const char *cert[SK_TLS_CERTS_MAX]; /**< PEM: leaf first, then its chain */
	const char *key[SK_TLS_CERTS_MAX];  /**< PEM private key of cert[i] */
	unsigned n_certs;		    /**< pairs, >= 1; pair 0 is the default */
	const char *ticket_key_file;	    /**< ticket secret; NULL or "": random per start */
	uint32_t ticket_rotate_s;	    /**< a ticket key's period (default 3600) */
	int min_version;		    /**< TLS1_2_VERSION (default) or TLS1_3_VERSION */
	const char *ciphersuites;	    /**< TLS 1.3 suites, OpenSSL's syntax; NULL: all 3 */
	uint32_t handshake_timeout_ms;	    /**< a handshake must end this long after
					       the connection opened (default 10000) */
	uint32_t max_handshakes;	    /**< handshakes in progress per lcore (default 1024) */
	uint32_t buffers;		    /**< plaintext buffers per lcore (default 1024) */
	uint32_t buffer_size;		    /**< bytes of one (the TCP receive buffer's size) */
	uint32_t max_conns; /**< TLS connections per lcore at most (the idle ring; default 4096) */
};

/** sk_tls_conf_defaults - fill @p conf with the defaults above (no pair). */
void sk_tls_conf_defaults(struct sk_tls_conf *conf);

/** The certificates, checked: see sk_tls_certs_load(). Opaque. */
struct sk_tls_certs;

/**
 * sk_tls_certs_load - read and check every pair and the ticket secret of
 * @p conf: each certificate parses (with its chain), is in its validity
 * period, and matches its key; a key is ECDSA P-256 or RSA of at least
 * 2048 bits; two pairs of one key type do not claim the same names; the
 * version and suites are ones the policy allows.
 * @param[in]  conf    the settings (copied; the strings are not kept)
 * @param[out] out     the result, to sk_tls_certs_free() when the lcores are gone
 * @param[out] err     on failure one line that names the [tls] key, the
 *                     file and the problem; may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0; -ENOENT/-EACCES (a file cannot be read), -EINVAL (bad PEM,
 *   mismatch, expired, weak key, bad setting), -ENOMEM.
 * Main thread, before the lcores start.
 */
int sk_tls_certs_load(const struct sk_tls_conf *conf, struct sk_tls_certs **out, char *err,
		      size_t errlen);

/** sk_tls_certs_free - free @p certs (NULL: nothing); no lcore may use it. */
void sk_tls_certs_free(struct sk_tls_certs *certs);

/** Alerts counted by name; everything else is SK_TLS_ALERT_OTHER. */
/* clang-format off */
#define SK_TLS_ALERT_LIST(X) \
	X(close_notify, 0) \
	X(unexpected_message, 10) \
	X(bad_record_mac, 20) \
	X(record_overflow, 22) \
	X(handshake_failure, 40) \
	X(bad_certificate, 42) \
	X(illegal_parameter, 47) \
	X(decode_error, 50) \
	X(decrypt_error, 51) \
	X(protocol_version, 70) \
	X(insufficient_security, 71) \
	X(internal_error, 80) \
	X(no_renegotiation, 100) \
	X(missing_extension, 109) \
	X(unrecognized_name, 112) \
	X(no_application_protocol, 120)
/* clang-format on */

enum sk_tls_alert_slot {
#define SK_TLS_ALERT_SLOT(name, code) SK_TLS_ALERT_##name,
	SK_TLS_ALERT_LIST(SK_TLS_ALERT_SLOT)
#undef SK_TLS_ALERT_SLOT
		SK_TLS_ALERT_OTHER,
	SK_TLS_ALERT_SLOTS
};

/** sk_tls_alert_name - the name of alert slot @p slot ("other" past the list). */
const char *sk_tls_alert_name(unsigned slot);

/** sk_tls_alert_slot - the slot of alert description @p code. */
unsigned sk_tls_alert_slot(uint8_t code);

/** Suites counted by name (the negotiated one of each handshake). */
enum sk_tls_suite_slot {
	SK_TLS_SUITE_AES128_GCM = 0,
	SK_TLS_SUITE_AES256_GCM,
	SK_TLS_SUITE_CHACHA20,
	SK_TLS_SUITE_SLOTS
};

/**
 * Counters of one lcore (monotonic unless marked gauge). Part of the
 * arena's ABI: the dataplane lays it over the TLS area of the lcore's stats
 * block and the control plane reads it there for /metrics
 * (stock/sk_shm_abi.h), so a change here, or to the alert or suite slots,
 * needs a SK_SHM_VERSION bump.
 */
struct sk_tls_stats {
	uint64_t hs_started;	/**< server connections that began a handshake */
	uint64_t hs_full;	/**< handshakes done with a full key exchange */
	uint64_t hs_resumed;	/**< ... resumed from a ticket */
	uint64_t hs_failed;	/**< handshakes that ended in an error (by alert below) */
	uint64_t hs_timeout;	/**< ... not done within handshake_timeout_ms (reset) */
	uint64_t hs_limited;	/**< connections reset: max_handshakes in progress */
	uint64_t hs_ip_refused; /**< connections reset: the per-IP limiter said no */
	uint64_t hs_inflight;	/**< gauge: handshakes in progress */
	uint64_t tls12, tls13;	/**< handshakes done, by version */
	uint64_t suite[SK_TLS_SUITE_SLOTS];	      /**< ... by suite */
	uint64_t alerts_sent[SK_TLS_ALERT_SLOTS];     /**< fatal and warning, by description */
	uint64_t alerts_received[SK_TLS_ALERT_SLOTS]; /**< ... from the peer */
	uint64_t tickets_issued;		      /**< session tickets encrypted */
	uint64_t tickets_rejected;	  /**< tickets offered with an unknown or expired key */
	uint64_t renegotiations;	  /**< a TLS 1.2 client asked for one (refused) */
	uint64_t early_data;		  /**< a client tried 0-RTT (refused) */
	uint64_t bytes_in, bytes_out;	  /**< ciphertext through the BIO */
	uint64_t records_in, records_out; /**< records read and written */
	uint64_t closed_notify;		  /**< connections the peer closed with close_notify */
	uint64_t buffer_wait;		  /**< reads postponed: the plaintext pool was empty */
	uint64_t buffers_used;		  /**< gauge: plaintext buffers held by connections */
	uint64_t idle_released;		  /**< connections whose record buffers were freed: idle */
} sk_cache_aligned;

/**
 * The ticket keys of one period. Every lcore (and every appliance with
 * the same ticket_key_file) derives the same keys from the secret and the
 * period number (wall-clock seconds / ticket_rotate_s), so a ticket made
 * on one lcore resumes on any; the key of the period before is accepted
 * (its tickets are renewed), older ones are not.
 */
struct sk_tls_ticket_key {
	uint64_t period;      /**< wall-clock seconds / rotate_s */
	uint8_t name[16];     /**< the key's name in the ticket */
	uint8_t aes_key[32];  /**< AES-256-CBC */
	uint8_t hmac_key[32]; /**< HMAC-SHA256 */
};

/** The keys an lcore uses now: this period's and the one before. */
struct sk_tls_ticket_keys {
	uint8_t secret[SK_TLS_TICKET_SECRET_MAX];
	size_t secret_len;
	uint32_t rotate_s;
	struct sk_tls_ticket_key cur, prev;
};

/**
 * sk_tls_ticket_keys_at - make @p k's keys those of the time @p now_s
 * (wall-clock seconds): derive them if the period changed. Never fails.
 */
void sk_tls_ticket_keys_at(struct sk_tls_ticket_keys *k, uint64_t now_s);

/**
 * sk_tls_ticket_key_find - the key named @p name among @p k's two.
 * @return the current key, the previous one (*@p renew set: the ticket
 *   should be replaced), or NULL (unknown or expired).
 */
const struct sk_tls_ticket_key *sk_tls_ticket_key_find(const struct sk_tls_ticket_keys *k,
						       const uint8_t name[16], bool *renew);

struct sk_tls_lcore;

/**
 * sk_tls_lcore_create - the server side of one lcore over @p certs.
 * @param certs   loaded certificates; must outlive the result
 * @param socket  NUMA socket of the buffer pool
 * @param stats   where the lcore counts (the dataplane passes the TLS area
 *                of the lcore's arena stats block, so the control plane
 *                reads it), zeroed by the caller and outliving the result
 *                (not owned); NULL: a block of the result's own
 * @return the state, or NULL with rte_errno set (ENOMEM, EINVAL).
 * Main thread; the result is then its lcore's only.
 */
struct sk_tls_lcore *sk_tls_lcore_create(const struct sk_tls_certs *certs, int socket,
					 struct sk_tls_stats *stats);

/** sk_tls_lcore_free - free @p tl (NULL: nothing) once its connections are gone. */
void sk_tls_lcore_free(struct sk_tls_lcore *tl);

/**
 * sk_tls_lcore_stats - the counters of @p tl: the block given to
 * sk_tls_lcore_create(), or its own (any thread may read, word by word).
 */
const struct sk_tls_stats *sk_tls_lcore_stats(const struct sk_tls_lcore *tl);

/**
 * sk_tls_lcore_poll - once per poll pass, with the pass's TSC: give back
 * the record buffers of connections idle for SK_TLS_IDLE_MS (a busy
 * connection keeps its buffers: no allocation per record; an idle one
 * holds none). Bounded: at most SK_TLS_IDLE_BATCH connections looked at.
 */
void sk_tls_lcore_poll(struct sk_tls_lcore *tl, uint64_t now_tsc);

/** A connection without records this long gives its record buffers back. */
#define SK_TLS_IDLE_MS 100
/** Idle-ring entries sk_tls_lcore_poll() looks at per pass, at most. */
#define SK_TLS_IDLE_BATCH 32

/** sk_tls_handshake_timeout_ms - handshake_timeout_ms of @p tl's settings. */
uint32_t sk_tls_handshake_timeout_ms(const struct sk_tls_lcore *tl);

/** State of a struct sk_tls_conn. */
enum sk_tls_state {
	SK_TLS_NONE = 0,  /**< not a TLS connection (zeroed app area) */
	SK_TLS_HANDSHAKE, /**< handshake in progress */
	SK_TLS_OPEN,	  /**< application data flows */
	SK_TLS_CLOSED,	  /**< close_notify sent or received, or a fatal alert */
};

/**
 * One TLS connection, embedded in the TCP connection's app area (zeroed
 * there before on_open). The fields are private to tls/.
 */
struct sk_tls_conn {
	SSL *ssl;
	struct sk_tcp_conn *tcp;
	struct sk_tls_lcore *tl;    /**< server side; NULL for a client */
	struct sk_tls_stats *stats; /**< where to count (the lcore's, or a client's) */
	uint8_t *plain;		    /**< plaintext not yet consumed; NULL: none held */
	uint32_t plain_len, plain_cap;
	const uint8_t *in; /**< the ciphertext of the current sk_tls_input() */
	size_t in_len, in_used;
	uint8_t state; /**< enum sk_tls_state */
	uint8_t peer_closed;
	uint8_t resumed;
	uint8_t renegotiating;
	uint8_t blocked;   /**< input left, or no room: resume after consuming */
	uint8_t hot;	   /**< server: in the idle ring (record buffers may be held) */
	uint64_t id;	   /**< server: this connection's number on its lcore (the ring's check) */
	uint64_t last_tsc; /**< server: the pass of its last record in or out */
};

/** What sk_tls_input() found. */
enum sk_tls_result {
	SK_TLS_AGAIN = 0, /**< nothing to act on yet (handshake or a record incomplete) */
	SK_TLS_DATA,	  /**< plaintext waits: sk_tls_plain() */
	SK_TLS_EOF,	  /**< the peer sent close_notify (plaintext may still wait) */
	SK_TLS_FAIL,	  /**< fatal: the alert, if any, is queued; close the TCP connection */
};

/**
 * sk_tls_accept - start the server side of the TCP connection @p tcp in
 * @p t (its app area) on @p tl: the per-lcore cap is checked here.
 * @return 0; -EBUSY (max_handshakes in progress: counted, reset @p tcp),
 *   -ENOMEM (SSL_new failed).
 */
int sk_tls_accept(struct sk_tls_lcore *tl, struct sk_tls_conn *t, struct sk_tcp_conn *tcp);

/**
 * sk_tls_connect - start the client side on @p tcp with @p ctx (from
 * sk_tls_client_ctx()), sending its ClientHello now.
 * @param sni      server name to send, or NULL
 * @param session  a session to resume (SSL_SESSION, kept by reference), or NULL
 * @param stats    where to count (the caller's)
 * @param buf      plaintext buffer of @p cap bytes the caller owns (a client
 *                 keeps one per connection)
 * @return 0, or -ENOMEM.
 */
int sk_tls_connect(SSL_CTX *ctx, struct sk_tls_conn *t, struct sk_tcp_conn *tcp, const char *sni,
		   SSL_SESSION *session, struct sk_tls_stats *stats, uint8_t *buf, uint32_t cap);

/**
 * sk_tls_client_ctx - a client SSL_CTX with the policy above (no
 * certificate verification: the load generator talks to its own test
 * appliance), session tickets on, ALPN "http/1.1".
 * @param tls13_only  offer TLS 1.3 only (else 1.2 only when @p tls12_only)
 * @return the context (SSL_CTX_free() it), or NULL.
 */
SSL_CTX *sk_tls_client_ctx(bool tls13_only, bool tls12_only);

/**
 * sk_tls_input - the TCP connection's receive buffer @p data (@p len
 * bytes, as on_data was given it): run the handshake, decrypt records into
 * the connection's plaintext buffer while it has room.
 * @param[out] used  ciphertext bytes taken (consume them from TCP)
 * @return see enum sk_tls_result. After SK_TLS_FAIL the connection must be
 *   closed (sk_tcp_close(): the alert goes out before the FIN).
 * On the server, a handshake that completes here leaves the cap and is
 * counted. If the plaintext buffer filled before @p data was all taken,
 * or no buffer was free (counted buffer_wait), the caller must sk_tcp_resume()
 * the connection after consuming plaintext (sk_tls_want_resume() says so).
 */
enum sk_tls_result sk_tls_input(struct sk_tls_conn *t, const uint8_t *data, size_t len,
				size_t *used);

/** sk_tls_expired - count @p t's handshake as timed out and leave the
 * handshake cap (the caller resets the connection). */
void sk_tls_expired(struct sk_tls_conn *t);

/** sk_tls_ip_refused - count a connection the per-IP limiter refused
 * before its handshake (reset by the caller). */
void sk_tls_ip_refused(struct sk_tls_lcore *tl);

/** sk_tls_want_resume - decrypted bytes wait inside OpenSSL, input was
 * left, or a handshake flight waits for send space. */
bool sk_tls_want_resume(const struct sk_tls_conn *t);

/**
 * sk_tls_plain - the plaintext not yet consumed (NULL/0 when none).
 * Valid until the next sk_tls_* call on @p t.
 */
static inline const uint8_t *
sk_tls_plain(const struct sk_tls_conn *t, size_t *len)
{
	*len = t->plain_len;
	return t->plain;
}

/**
 * sk_tls_consume - drop the first @p n plaintext bytes (n <= the length);
 * a server connection whose plaintext is all consumed gives its buffer back
 * to the pool.
 */
void sk_tls_consume(struct sk_tls_conn *t, size_t n);

/**
 * sk_tls_send - encrypt @p len bytes as one record (or more past 16 KiB)
 * into the TCP send buffer.
 * @return 0; -ENOTCONN (handshake not done, or closed), -ENOBUFS (the send
 *   buffer lacks sk_tls_send_space(): nothing sent), -EIO (OpenSSL failed:
 *   close the connection).
 */
int sk_tls_send(struct sk_tls_conn *t, const void *data, size_t len);

/** sk_tls_send_space - plaintext bytes sk_tls_send() takes now in one call. */
size_t sk_tls_send_space(const struct sk_tls_conn *t);

/**
 * sk_tls_shutdown - queue close_notify (once). The caller then closes the
 * TCP connection (FIN after it). Never fails.
 */
void sk_tls_shutdown(struct sk_tls_conn *t);

/**
 * sk_tls_release - free @p t's SSL and give back its buffer (on_close of
 * its TCP connection; also for a connection that never finished). Leaves
 * @p t zeroed. Safe on a zeroed struct.
 */
void sk_tls_release(struct sk_tls_conn *t);

/** sk_tls_session - the session of a client connection, to resume later
 * (SSL_SESSION_free() it), or NULL before the handshake is done. */
SSL_SESSION *sk_tls_session(const struct sk_tls_conn *t);

/** sk_tls_is_resumed - the handshake of @p t resumed a session. */
static inline bool
sk_tls_is_resumed(const struct sk_tls_conn *t)
{
	return t->resumed != 0;
}

#ifdef __cplusplus
}
#endif

#endif /* SK_TLS_H */
