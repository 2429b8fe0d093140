/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The options of seckill-loadgen (the part of the command line after the
 * EAL's "--"): a table of options, each with its own parser, and the checks
 * across options. docs/loadgen.md is the user's reference; lg_opts_usage is
 * the same in short.
 *
 * Thread-safety: lg_opts_parse() keeps no state (no getopt globals); it is
 * called once at start-up.
 */
#ifndef LG_OPTS_H
#define LG_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lg_hostile.h"
#include "lg_http.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most requests in flight on one connection (--depth). */
#define LG_DEPTH_MAX 32
/** Most concurrent connections (--conns). */
#define LG_CONNS_MAX 1000000u
/** Most client addresses (the stack's ip_count limit). */
#define LG_CLIENTS_MAX 65536u
/** Most hostile connections (--attackers). */
#define LG_ATTACKERS_MAX 10000u
/** Highest attack rate (--attack-rate): SYNs or hostile connections per second. */
#define LG_ATTACK_RATE_MAX 1000000.0
/** Largest token pool (--tokens): 320 bytes each, 1.28 GB at most (several
 * lcores of buy_jwt, each request a distinct buyer). */
#define LG_TOKENS_MAX 4000000u

/** How users are picked for buys. */
enum lg_user_pick {
	LG_USER_SEQ = 0, /**< user-base, user-base + 1, ... wrapping after --users */
	LG_USER_RANDOM,	 /**< uniformly random in user-base .. user-base + users - 1 */
};

/** Load shape. */
enum lg_shape {
	LG_SHAPE_CLOSED = 0, /**< as fast as answers come back: conns x depth in flight */
	LG_SHAPE_RATE,	     /**< open loop: --rate requests/s */
	LG_SHAPE_CPS,	     /**< open loop: --cps new (short) connections/s */
};

/** Everything the command line says. lg_opts_defaults() fills the defaults. */
struct lg_opts {
	/* target and clients (host byte order) */
	bool v6;		/**< --server is IPv6: server_ip6 and client_ip6 are used; the
				   IPv4 fields then only give the stack its required address */
	uint8_t server_ip6[16]; /**< network order */
	uint8_t client_ip6[16]; /**< the one IPv6 client address, network order */
	uint32_t server_ip;
	uint16_t server_port;	/**< default 80 (443 with --tls) */
	bool server_port_given; /**< --server named the port */
	uint32_t client_ip;	/**< first client address */
	uint32_t client_count;	/**< client addresses client_ip .. + count - 1; 0 = default */
	uint8_t prefix_len;	/**< the stack's subnet: holds the server and the clients */
	uint16_t sport_min;	/**< source ports (default 1024..65535) */
	uint16_t sport_max;
	uint16_t port_id; /**< DPDK port (default 0) */
	/* requests */
	uint64_t item;		     /**< default 1 */
	uint32_t cart_lines;	     /**< --cart-lines: lines of a cart (default 3) */
	uint32_t mix[LG_REQ__COUNT]; /**< weights (default buy=1) */
	uint64_t users;		     /**< default 1000000 */
	uint64_t user_base;	     /**< default 1 */
	enum lg_user_pick user_pick;
	uint64_t order_id; /**< order polls before any win was seen (default 1) */
	const char *secret_file;
	uint32_t tokens;      /**< JWT pool size (default 1000, users user_base..) */
	uint32_t token_ttl_s; /**< default 3600 */
	uint32_t gate_pct;    /**< --gate: percent of the tokens with the item's gate claim
				   (token index mod 100 < gate_pct); default 0: none */
	/* load */
	uint32_t conns;	       /**< default 64 */
	uint32_t depth;	       /**< default 1 */
	uint64_t inflight_max; /**< --inflight; 0 = conns x depth (no cap of its own) */
	bool short_conns;
	enum lg_shape shape;
	double rate;	   /**< --rate or --cps target */
	double rate_from;  /**< rate before the step / at the ramp's start (default 0) */
	double step_s;	   /**< --step: rate_from until T, then rate */
	double ramp_s;	   /**< --ramp: rate_from to rate over T */
	double duration_s; /**< default 10 (0 with --requests: no time bound but the cap) */
	uint64_t requests; /**< 0 = no count bound */
	uint32_t drain_ms; /**< wait for answers after the load, default 3000 */
	uint32_t wait_ms;  /**< link up + ARP resolution bound, default 10000 */
	uint64_t seed;	   /**< default 1 */
	/* hostile modes (lg_hostile.h) */
	enum lg_attack_mode attack; /**< LG_ATTACK_NONE: none */
	bool mix_given;	       /**< --mix was given: legitimate clients run beside the attack */
	uint32_t attack_ip;    /**< first attack address (--attack-from) */
	uint32_t attack_count; /**< attack addresses attack_ip .. + count - 1 */
	uint8_t attack_prefix; /**< the subnet of the server and the attack's addresses */
	uint32_t attackers;    /**< holders/garbage: connections (default 64) */
	double attack_rate;    /**< SYNs/s or new hostile connections/s (default 1000) */
	uint32_t drip_ms;      /**< holders: a header byte every this many ms, 0 = idle */
	/* TLS (lg_opts_tls.c) */
	bool tls;	 /**< --tls: speak TLS to the server */
	bool tls_resume; /**< --tls-resume: a slot resumes its first session */
	int tls_version; /**< --tls-version: 0 (both offered), 12 or 13 */
	const char *sni; /**< --sni: the server name sent, or NULL */
	/* output */
	bool json;
	bool quiet;
	int log_level; /**< --log-level: an enum sk_log_level (sk_logfmt.h), default info */
};

/** Usage text, ending in a newline. */
extern const char lg_opts_usage[];

/** lg_opts_defaults - fill @p o with the defaults (no server: required). */
void lg_opts_defaults(struct lg_opts *o);

/**
 * lg_opts_parse - parse @p argc / @p argv (argv[0] is not an option) into
 * @p o, which must hold the defaults, then check the options together.
 *
 * @return 0 on success; 1 if --help was given (the caller prints the usage
 *   and exits 0); -EINVAL with a one-line message in @p err ("--depth: 0 is
 *   not in 1..32") on any error.
 */
int lg_opts_parse(struct lg_opts *o, int argc, char **argv, char *err, size_t errlen);

/**
 * lg_opts_tls - the value of --tls-version or --sni (@p name without its
 * dashes) into @p o.
 * @return 0, or -EINVAL with a message naming the option in @p err.
 */
int lg_opts_tls(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen);

/**
 * lg_opts_tls_check - the TLS options together: --tls-resume, --tls-version
 * and --sni need --tls; --tls makes the server's port 443 unless given.
 * @return 0, or -EINVAL with a message in @p err.
 */
int lg_opts_tls_check(struct lg_opts *o, char *err, size_t errlen);

/** lg_ip_str - @p ip (host order) as dotted quad into @p buf (16 bytes). */
const char *lg_ip_str(uint32_t ip, char buf[16]);

/** Room for any address lg_server_str() writes. */
#define LG_ADDR_STRLEN 48

/**
 * lg_server_str - the server's address as text into @p buf: a dotted quad,
 * or IPv6 in brackets ("[2001:2::1]") when @p bracket, as a URL's host.
 * @return @p buf.
 */
const char *lg_server_str(const struct lg_opts *o, bool bracket, char buf[LG_ADDR_STRLEN]);

#ifdef __cplusplus
}
#endif

#endif /* LG_OPTS_H */
