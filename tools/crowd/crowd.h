/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * seckill-crowd's run state and the functions its files share (private to
 * tools/crowd/; the tool's manual is docs/crowd.md).
 *
 * The files, by job: crowd.c (main: setup, signals, teardown), crowd_opts.c
 * (the command line), crowd_schedule.c (who tries when), crowd_conn.c (the
 * connections: open, send, read, fail), crowd_answer.c (what an answer means;
 * the order-id map), crowd_tls.c (--tls: OpenSSL on the connections'
 * sockets, handshakes and sessions), crowd_loop.c (the epoll loop and its
 * phases), crowd_report.c (checks, the text and JSON summaries).
 *
 * Everything here runs on the one thread of the process, on one struct
 * crowd; nothing locks. crowd_interrupted is the only state a signal handler
 * writes.
 */
#ifndef SK_CROWD_H
#define SK_CROWD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "sk_common.h"

#include "crowd_hist.h"
#include "crowd_http.h"
#include "crowd_mix.h"
#include "sk_http_client.h"
#include "sk_token.h"

/* The name in every message on stderr (sk_log()). */
#define PROG "seckill-crowd"

/* Exit statuses (docs/crowd.md, "Exit status"). */
#define EXIT_CHECK     1
#define EXIT_USAGE     2
#define EXIT_RUNTIME   3
#define EXIT_TIMEBOUND 4

/* Caps of the options. */
#define CONNS_MAX    20000u
#define USERS_MAX    100000000ull
#define ATTEMPTS_MAX 200000000ull
/* Receive buffer: one whole answer fits, head and body at their limits. */
#define CONN_IN_CAP  (SK_HTTP_CLIENT_HEAD_MAX + SK_HTTP_CLIENT_BODY_MAX)
#define CONN_OUT_CAP (SK_TOKEN_MAX_LEN + 512 + SK_CROWD_CART_BODY_MAX)

/* The command line, as crowd_opts_parse() leaves it. */
struct opts {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char host[64]; /* Host header value: "ip:port" or "[ip6]:port" */
	uint64_t item;
	uint64_t users;
	uint64_t user_base;
	uint64_t attempts;
	uint64_t seed;
	uint64_t expect_units;
	struct sk_crowd_mix mix; /* --mix: the share of carts and their lines */
	double retriers;
	double max_seconds;
	double follow_seconds; /* --follow: how long the streams are read (default 5) */
	uint32_t follow;       /* --follow N: % of the winners that follow their order */
	double reserved;       /* --reserved: percent of the users in the set; < 0: off */
	uint32_t conns;
	uint32_t timeout_ms;
	uint32_t conn_requests; /* answers per connection, then reconnect; 0 = no limit */
	uint32_t gate_pct;	/* --gate: percent of the users whose token has the gate claim */
	uint16_t port;
	uint8_t tls_version; /* --tls-version: 0 any, 12 or 13 */
	int cpu;
	bool has_port;
	bool has_attempts;
	bool has_expect;
	bool has_gate; /* --gate given */
	bool wait_start;
	bool poll;
	bool tls;
	bool tls_resume;
	const char *server;
	const char *sni;    /* --sni: server_name sent, and the name verified with --cacert */
	const char *cacert; /* --cacert: verify the server's chain against this PEM file */
	const char *secret_file;
	const char *json;
	const char *orders;
	const char *reserved_file; /* --reserved-file: the reserved users' ids written here */
	bool prepare;		   /* --prepare: write --reserved-file and exit */
};

/* Per-user flags (one byte each, next to the first order id seen). */
enum {
	UF_WIN = 1u << 0,	   /* got a fresh (non-duplicate) win */
	UF_DUP = 1u << 1,	   /* got a duplicate answer */
	UF_LIMIT = 1u << 2,	   /* got a 409 limit with an order id */
	UF_WON_TWICE = 1u << 3,	   /* second fresh win seen (counted once) */
	UF_TWO_ORDERS = 1u << 4,   /* a second, different order id seen (counted once) */
	UF_GATE = 1u << 5,	   /* got a 403 gate */
	UF_SOLD_OUT = 1u << 6,	   /* got a 410 sold_out */
	UF_OTHER = 1u << 7,	   /* got an answer that is neither of these two nor a win */
	UF_NOT_RESERVED = 1u << 8, /* answered 403 not_reserved */
};

/**
 * crowd_user_has_gate - whether the token of user index @p u (user id
 * user-base + @p u) carries the gate claim under --gate PCT: the users whose
 * index ends, modulo 100, below PCT (so any block of 100 users splits
 * exactly, and a test can tell the two groups apart from the ids). Without
 * --gate, no token has it.
 */
static inline bool
crowd_user_has_gate(const struct opts *o, uint64_t u)
{
	return o->has_gate && u % 100 < o->gate_pct;
}

/* Order id -> user index, open addressing with linear probing; key 0 = empty. */
struct order_map {
	uint64_t *keys;
	uint32_t *users;
	size_t cap; /* power of two */
	size_t n;
};

/* What a connection carries, its state, the phase of the run. */
enum job_kind { JOB_NONE = 0, JOB_BUY, JOB_POLL, JOB_ITEM };

enum conn_state { CS_CLOSED = 0, CS_CONNECTING, CS_HANDSHAKE, CS_IDLE, CS_BUSY };

enum phase { PH_BUY = 0, PH_POLL, PH_ITEM, PH_DONE };

/* One keep-alive connection: at most one request in flight. */
struct conn {
	int fd;
	uint8_t state;			 /* enum conn_state */
	uint8_t kind;			 /* enum job_kind in flight (CS_BUSY) */
	uint8_t fails;			 /* consecutive failures, for the backoff */
	bool want_out;			 /* EPOLLOUT armed */
	bool tls_out;			 /* the last TLS call wanted to write */
	bool tls_offered;		 /* the handshake under way offers a session */
	uint32_t user;			 /* user index of the job in flight */
	uint32_t out_off;		 /* bytes of out[] written */
	uint32_t out_len;		 /* bytes of out[] to write */
	uint32_t in_len;		 /* bytes in in[] */
	uint32_t answers;		 /* answers read on this connection */
	uint64_t start_ns;		 /* CS_BUSY: request start; CS_CONNECTING: connect start */
	uint64_t retry_ns;		 /* CS_CLOSED: reconnect not before */
	struct ssl_st *ssl;		 /* --tls: the TLS connection on fd, or NULL */
	struct ssl_session_st *sess;	 /* --tls-resume: the last session (owned) */
	struct sk_http_client_resp resp; /* the answer being read from in[0] */
	char out[CONN_OUT_CAP];
	char in[CONN_IN_CAP];
};

/* Everything counted about the run; all zero at the start. */
struct stats {
	uint64_t sent;	    /* buy requests sent (re-sends after a 425 included) */
	uint64_t answered;  /* buy answers parsed (425s that were re-sent included) */
	uint64_t deferred;  /* 425 answers whose attempt --wait-start sent again */
	uint64_t lost;	    /* buy requests without answer (errors, timeouts) */
	uint64_t http[600]; /* buy answers by HTTP status */
	uint64_t status[SK_CROWD_ST__COUNT]; /* buy answers by body "status" */
	uint64_t fresh_wins;		     /* non-duplicate wins (answers) */
	uint64_t duplicates;		     /* answers with "duplicate":true */
	uint64_t retry_after;		     /* answers with Retry-After */
	uint64_t retry_after_max;
	uint64_t err_connect;  /* connect failed or timed out */
	uint64_t err_socket;   /* reset or other error on an open connection */
	uint64_t err_closed;   /* closed by the server with a request in flight */
	uint64_t err_timeout;  /* request timeouts */
	uint64_t err_protocol; /* unparsable answer, bad body, unsolicited bytes */
	uint64_t connects;     /* connections established */
	uint64_t reconnects;   /* reconnects after Connection: close */
	uint64_t idle_closes;  /* closed by the server while idle */
	uint64_t tls_full;     /* TLS handshakes done with a full key exchange */
	uint64_t tls_resumed;  /* ... that resumed a session */
	uint64_t tls_failed;   /* ... that failed or timed out (also connect errors) */
	uint64_t tls_offered;  /* handshakes done that had offered a session */
	uint64_t tls12, tls13; /* handshakes done, by version */
	uint64_t users_won_twice;
	uint64_t users_two_orders;
	uint64_t dup_mismatch;	/* duplicate answers whose id differs from the win's */
	uint64_t orders_shared; /* order ids also given to another user */
	uint64_t win_no_order;	/* a win without an order id (also a protocol error) */
	uint64_t waits;		/* --wait-start pauses */
	uint64_t waited_ns;
	uint64_t polls_sent;
	uint64_t polls_ok;
	uint64_t polls_missing; /* 404 */
	uint64_t polls_bad;	/* other status, bad body, wrong order, lost */
	uint64_t poll_status[SK_CROWD_ST__COUNT];
	uint64_t carts_sent;			  /* buy requests that were carts (--mix) */
	uint64_t cart_status[SK_CROWD_ST__COUNT]; /* cart answers by body "status" */
	int item_http;				  /* GET /v1/items answer, 0 if none */
	bool item_has_remaining;
	uint64_t item_remaining;
	char item_state[16];
};

/** The names of the events counted by --follow, and one slot for any other. */
enum { FOLLOW_NAMES = 7, FOLLOW_OTHER = FOLLOW_NAMES };

/** What --follow counted (all zero without it). */
struct follow_stats {
	uint64_t winners;    /* winners of the run (the pool drawn from) */
	uint64_t streams;    /* streams tried: --follow % of the winners, at most --conns */
	uint64_t opened;     /* answered 200 text/event-stream */
	uint64_t refused;    /* answered 429 (a cap of the dataplane) */
	uint64_t not_found;  /* answered 404 */
	uint64_t other_http; /* answered anything else */
	uint64_t events;     /* status events read */
	uint64_t by_name[FOLLOW_NAMES + 1];
	uint64_t keepalives;   /* keep-alive comments read */
	uint64_t closed_final; /* closed by the server after a final status */
	uint64_t closed_early; /* closed by the server before one */
	uint64_t open_at_end;  /* still open when --follow-seconds ran out */
	uint64_t errors;       /* connect, socket or protocol errors */
	double secs;	       /* the phase's length */
};

/* The whole run; one, static in main() (large: histogram and connections). */
struct crowd {
	struct opts o;
	int epfd;
	struct ssl_ctx_st *tls_ctx; /* --tls: the client context, or NULL */
	struct sk_token_key *key;
	int64_t token_exp;
	uint64_t retriers;
	/* schedule */
	uint32_t *sched;
	uint64_t cursor;
	uint32_t *requeue; /* buy jobs to send again after a --wait-start pause */
	uint32_t requeue_n;
	/* users */
	uint64_t *order; /* first order id seen per user, 0 = none */
	uint16_t *uflags;
	struct order_map omap;
	/* polls */
	uint32_t *poll_users;
	uint64_t poll_n;
	uint64_t poll_cursor;
	bool item_sent;
	/* connections */
	struct conn *conns;
	uint32_t inflight;
	bool ever_connected;
	/* time */
	enum phase phase;
	uint64_t t_start;    /* process start of the run */
	uint64_t deadline;   /* t_start + max-seconds */
	uint64_t go_ns;	     /* paused until (0: not paused) */
	uint64_t t_go;	     /* start of the measured buy phase */
	uint64_t n_go;	     /* answers counted before t_go */
	uint64_t t_last_buy; /* last buy answer */
	uint64_t t_pause;    /* start of the current --wait-start pause */
	uint64_t wait_cycles;
	/* outcome */
	const char *fatal; /* why the run could not go on (exit 3), or NULL */
	char fatal_buf[160];
	char note[160]; /* why the time bound stopped the run early, or "" */
	bool timebound; /* stopped by --max-seconds */
	struct stats st;
	struct follow_stats follow; /* --follow */
	struct sk_crowd_hist lat;
	/* precomputed request heads */
	char buy_head[192];
	size_t buy_head_len;
	char cart_head[192]; /* --mix cart: POST /v1/cart, Host, Content-Type */
	size_t cart_head_len;
	char cart_tail[SK_CROWD_CART_BODY_MAX + 32]; /* Content-Length, CRLF, the body */
	size_t cart_tail_len;
};

/* One check of the report (docs/crowd.md, "Checks"). */
struct check {
	const char *name; /* JSON key */
	int ok;		  /* 1 ok, 0 failed, -1 not applicable */
	char text[160];	  /* human form */
};

enum {
	CK_UNITS = 0,
	CK_ONE_ORDER,
	CK_DUPS,
	CK_UNIQUE,
	CK_POLLS,
	CK_ERRORS,
	CK_GATE,
	CK_RESERVED,
	CK_ANSWERED,
	CK__COUNT
};

/* What crowd_summarize() derives from a run for the reports. */
struct summary {
	uint64_t winners;     /* users holding an order id */
	uint64_t won_earlier; /* holders without a fresh win in this run */
	uint64_t errors;
	double secs;   /* measured buy phase */
	double rps;    /* answers per second over the measured phase */
	double waited; /* seconds paused by --wait-start */
	/* --gate: the users by claim, and what the users without it got */
	uint64_t gate_with, gate_without;
	uint64_t gate_claim_refused; /* users with the claim answered 403 gate (wrong) */
	uint64_t lacking_won;	     /* users without the claim holding an order (wrong) */
	uint64_t lacking_gate;	     /* users without the claim answered 403 gate */
	uint64_t lacking_sold_out;   /* ... answered only 410 (they came after the sell-out) */
	uint64_t lacking_other;	     /* ... answered anything else (wrong) */
	struct check ck[CK__COUNT];
	int exit;
};

/** Set by SIGINT/SIGTERM: the loop stops, the report says "interrupted". */
extern volatile sig_atomic_t crowd_interrupted;

/** now_ns - CLOCK_MONOTONIC in ns: the clock of every time in struct crowd. */
static inline uint64_t
now_ns(void)
{
	return (uint64_t)sk_clock_ns(CLOCK_MONOTONIC);
}

/* ---------------------------------------------------------------- crowd_opts.c */

/**
 * crowd_opts_parse - fill @p o from argv (defaults first), check the options
 * together and resolve --server into o->addr and o->host. @p o keeps
 * pointers into argv.
 * @return 0 to run; -1 after printing the usage on stdout (--help, exit 0);
 *         EXIT_USAGE after one line on stderr naming the bad option.
 */
int crowd_opts_parse(int argc, char **argv, struct opts *o);

/* ---------------------------------------------------------------- crowd_schedule.c */

/**
 * crowd_schedule_build - the order of the buy attempts: every user index
 * once, plus (attempts - users) retries spread evenly over a random subset
 * of retriers, all shuffled with o->seed. The caller frees the array.
 * @param[out] retriers  the number of users that retry
 * @return the array (o->attempts entries), or NULL when out of memory.
 */
uint32_t *crowd_schedule_build(const struct opts *o, uint64_t *retriers);

/** crowd_is_cart - whether user index @p u buys carts (--mix). */
static inline bool
crowd_is_cart(const struct crowd *cw, uint32_t u)
{
	return cw->o.mix.cart_pct > 0 && sk_crowd_mix_is_cart(&cw->o.mix, cw->o.seed, u);
}
/**
 * crowd_reserved - whether user index @p u is one of the o->reserved percent
 * of reserved users (a fixed draw from o->seed and the user id: the same
 * options give the same set). Always true when --reserved is off.
 */
bool crowd_reserved(const struct opts *o, uint64_t u);

/**
 * crowd_reserved_write - the ids of the reserved users, one per line, to
 * o->reserved_file. 0, or EXIT_RUNTIME (printed).
 */
int crowd_reserved_write(const struct opts *o);

/* ---------------------------------------------------------------- crowd_answer.c */

/**
 * crowd_order_map_init - an empty order-id map of @p cap slots (a power of
 * two). Free it with crowd_order_map_free(), also after a failure.
 * @return 0, or -ENOMEM.
 */
int crowd_order_map_init(struct order_map *m, size_t cap);

/** crowd_order_map_free - free the map's arrays and zero @p m; idempotent. */
void crowd_order_map_free(struct order_map *m);

/**
 * crowd_answer_buy - account buy answer @p r of the job on @p c (latency,
 * HTTP status, body status, wins, duplicates, the order of the user;
 * --wait-start pauses); its body is @p body (r->content_len bytes). A body
 * that does not scan is a protocol error. Sets cw->fatal if the order map
 * cannot grow.
 */
void crowd_answer_buy(struct crowd *cw, struct conn *c, const struct sk_http_client_resp *r,
		      const char *body, uint64_t now);

/** crowd_answer_poll - account poll answer @p r (body @p body) for the user of @p c. */
void crowd_answer_poll(struct crowd *cw, struct conn *c, const struct sk_http_client_resp *r,
		       const char *body);

/** crowd_answer_item - keep the status, state and remaining of the item read. */
void crowd_answer_item(struct crowd *cw, const struct sk_http_client_resp *r, const char *body);

/* ---------------------------------------------------------------- crowd_conn.c */

/**
 * crowd_conn_open - start a non-blocking connect on closed @p c, registered
 * with cw->epfd. A failure is counted as a connect error and backs off; the
 * first connect error of a run that never connected sets cw->fatal.
 */
void crowd_conn_open(struct crowd *cw, struct conn *c, uint64_t now);

/**
 * crowd_conn_close - close @p c; with @p rst, abort it (RST) so that no
 * TIME_WAIT is left behind on our side. A job in flight must have been
 * accounted for. @p c may be reopened from @p retry_ns on.
 */
void crowd_conn_close(struct crowd *cw, struct conn *c, bool rst, uint64_t retry_ns);

/**
 * crowd_conn_fail - an error on @p c: count it in @p counter (a field of
 * cw->st), lose the job in flight, close with a RST and back off.
 */
void crowd_conn_fail(struct crowd *cw, struct conn *c, uint64_t *counter, uint64_t now);

/**
 * crowd_conn_setup_failed - @p c could not be set up (connect or TLS
 * handshake), for reason @p why: a connect error, and the reason of the run's
 * failure (cw->fatal) while no connection was ever set up.
 */
void crowd_conn_setup_failed(struct crowd *cw, struct conn *c, const char *why, uint64_t now);

/**
 * crowd_conn_ready - @p c is set up (connected, and with --tls its handshake
 * done): count it, make it idle and give it a job.
 */
void crowd_conn_ready(struct crowd *cw, struct conn *c, uint64_t now);

/** crowd_conn_want_out - arm (@p want) or disarm EPOLLOUT on open @p c. */
void crowd_conn_want_out(struct crowd *cw, struct conn *c, bool want);

/** crowd_job_lost - the job in flight on @p c will get no answer; count it. */
void crowd_job_lost(struct crowd *cw, struct conn *c);

/**
 * crowd_conn_dispatch - give idle @p c the next job of the current phase
 * and send it; nothing if @p c is not idle or no job is left. Sets
 * cw->fatal if a token cannot be minted.
 */
void crowd_conn_dispatch(struct crowd *cw, struct conn *c, uint64_t now);

/** crowd_conn_event - handle epoll events @p ev of @p c at @p now. */
void crowd_conn_event(struct crowd *cw, struct conn *c, uint32_t ev, uint64_t now);

/**
 * crowd_build_identity - append the X-User-Id or "Authorization: Bearer"
 * line (a token minted for the item; with @p cart, one without an item
 * claim) of user index @p u at @p p + *@p len (room: CONN_OUT_CAP -
 * *@p len); *@p len grows.
 * @return false if the token cannot be minted.
 */
bool crowd_build_identity(struct crowd *cw, char *p, size_t *len, uint32_t u, bool cart);

/* ---------------------------------------------------------------- crowd_follow.c */

/** crowd_follow_name - the event name of slot @p k of follow_stats::by_name. */
const char *crowd_follow_name(unsigned k);

/**
 * crowd_follow - with --follow N, after the run: open GET
 * /v1/orders/{id}/events for N% of the winners (drawn with --seed, at most
 * --conns streams, plain TCP), read each stream until the server closes it
 * or --follow-seconds run out, and count into @p fs. Blocks for at most
 * --follow-seconds (plus the connects).
 * @return 0, or EXIT_RUNTIME when out of memory (after a line on stderr).
 */
int crowd_follow(struct crowd *cw, struct follow_stats *fs);

/* ---------------------------------------------------------------- crowd_tls.c */

/**
 * crowd_tls_init - with --tls, the client context in cw->tls_ctx: TLS 1.2
 * and 1.3 (or --tls-version), ALPN http/1.1, no verification unless
 * --cacert, and a session kept per connection with --tls-resume. Nothing
 * without --tls.
 * @return 0; EXIT_USAGE after a line on stderr (unreadable --cacert);
 *         EXIT_RUNTIME (out of memory).
 */
int crowd_tls_init(struct crowd *cw);

/** crowd_tls_fini - free the context and every connection's session; idempotent. */
void crowd_tls_fini(struct crowd *cw);

/**
 * crowd_tls_start - @p c just connected: put a TLS connection on its socket
 * (SNI, the session to resume) and begin the handshake (CS_HANDSHAKE).
 */
void crowd_tls_start(struct crowd *cw, struct conn *c, uint64_t now);

/**
 * crowd_tls_handshake - drive the handshake of @p c one step; when it is
 * done, count it (full or resumed) and call crowd_conn_ready(); on failure,
 * count it and crowd_conn_setup_failed().
 */
void crowd_tls_handshake(struct crowd *cw, struct conn *c, uint64_t now);

/**
 * crowd_tls_send - SSL_write() of up to @p len bytes, in send()'s terms.
 * @return bytes written (> 0); -1 with errno EAGAIN (c->tls_out says
 *         whether the socket must become writable), EPROTO (a TLS error)
 *         or the socket's errno.
 */
ssize_t crowd_tls_send(struct conn *c, const void *buf, size_t len);

/**
 * crowd_tls_recv - SSL_read() of up to @p cap bytes, in recv()'s terms.
 * @return bytes read (> 0); 0 at the end of the stream (close_notify, or
 *         a plain FIN); -1 with errno as crowd_tls_send().
 */
ssize_t crowd_tls_recv(struct conn *c, void *buf, size_t cap);

/** crowd_tls_pending - whether decrypted bytes of @p c wait inside OpenSSL. */
bool crowd_tls_pending(const struct conn *c);

/**
 * crowd_tls_close - free the TLS connection of @p c (none: nothing); with
 * @p graceful and a finished handshake, send close_notify first (one try,
 * not waited for). The socket stays open; the session is kept.
 */
void crowd_tls_close(struct conn *c, bool graceful);

/* ---------------------------------------------------------------- crowd_loop.c */

/**
 * crowd_run - open the connections and run the epoll loop until every phase
 * is done, cw->fatal is set, the time bound or a signal stops it; then close
 * every connection (a job in flight is lost). cw must come from setup in
 * crowd.c.
 */
void crowd_run(struct crowd *cw);

/* ---------------------------------------------------------------- crowd_report.c */

/** crowd_summarize - the figures, the checks and the exit status of the run. */
void crowd_summarize(const struct crowd *cw, struct summary *s);

/** crowd_report_text - the human summary on stdout (docs/crowd.md, "Output"). */
void crowd_report_text(const struct crowd *cw, const struct summary *s);

/**
 * crowd_report_json - the summary as one JSON object on one line, on @p f.
 * @return 0, or -1 on a write error.
 */
int crowd_report_json(const struct crowd *cw, const struct summary *s, FILE *f);

/**
 * crowd_write_orders - one "user order" line per winner, by user id, on @p f.
 * @return 0, or -1 on a write error.
 */
int crowd_write_orders(const struct crowd *cw, FILE *f);

#endif /* SK_CROWD_H */
