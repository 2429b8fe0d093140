/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Configuration of the appliance: an INI file read with libinih into one
 * plain struct sk_config.
 *
 * File format
 * -----------
 * @code
 *	# comments start a line with '#' or ';'; a " #" or " ;" ends a value
 *	[dataplane]
 *	mbufs = 16383            # mbufs in the packet pool
 *
 *	[port0]                  # port0 .. port15, in order, no gaps
 *	device  = net_tap0,iface=sktap0   # vdev spec, or a PCI address
 *	address = 198.18.0.1/24
 *
 *	[tcp]
 *	max_conns = 16384        # connection table per lcore
 *
 *	[http]
 *	head_max = 8192
 *
 *	[seckill]
 *	auth = on
 *	secret_file = /etc/seckill/token.secret
 *
 *	[item.1001]              # one section per activity, id 1..4294967295
 *	name  = phone
 *	total = 1000
 *	price = 99900            # minor units (cents)
 *	start = +10              # 10 s after the process starts, or unix seconds
 *	end   = never
 * @endcode
 *
 * One file configures every daemon: besides the dataplane's sections above,
 * [store] (path, shared: the LMDB store), [control], [admin], [kafka],
 * [cluster] (the member's keys) and [mysql] hold the options of
 * seckill-control and seckill-mysql-writer (struct sk_config_opts). Each
 * daemon loads the file for itself (sk_config_load_for()): every name is
 * checked, only its own values are; sk_config_argv_merge() hands it its
 * keys as options.
 *
 * Every key is listed with its range and default in docs/operations.md and
 * in config/seckill.ini. Unknown sections and keys, keys set twice, values
 * out of range and lines that are neither "[section]" nor "key = value" are
 * errors: the loader stops at the first one and describes it in one line
 * that names the file, the line and the key ("seckill.ini:12: tcp.mss: 80
 * is out of range 536..9000"). A config either loads completely or not at
 * all; nothing in it is applied half.
 *
 * [seckill] holds the buy path's settings (identity, arena sizes, rate
 * limits) and every [item.<id>] section one activity; a section name that
 * appears twice is an error for items (the id would be ambiguous).
 *
 * Numeric keys of [tcp] and [http] that are absent stay 0, which means "the
 * module's own default" (sk_net_conf_defaults(), sk_http_parser_init()), so
 * the defaults live in one place. Sizes are plain integers (no suffixes);
 * durations are in milliseconds and their key says so (_ms).
 *
 * The loader allocates nothing that outlives a call and needs no DPDK: the
 * control plane and the unit tests use it without an EAL.
 *
 * Thread-safety: functions here touch only the struct they are given; use
 * one struct per thread or lock around it.
 */
#ifndef SK_CONFIG_H
#define SK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_addr.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most ports one dataplane drives ([port0] .. [port15]). */
#define SK_CONFIG_MAX_PORTS 16
/** Longest device string (devargs), NUL included. */
#define SK_CONFIG_DEVICE_MAX 256
/** Bytes of the SYN-cookie secret ([tcp] syncookie_secret, 32 hex digits). */
#define SK_CONFIG_SECRET_LEN 16
/** Longest lcore list ([dataplane] lcores), NUL included. */
#define SK_CONFIG_LCORES_MAX 128
/** Size of an error-message buffer that never truncates a key name. */
#define SK_CONFIG_ERR_MAX 512
/** Most [item.<id>] sections in one file. */
#define SK_CONFIG_MAX_ITEMS 256
/** Longest item name, NUL included. */
#define SK_CONFIG_NAME_MAX 64
/** Longest path ([seckill] secret_file), NUL included. */
#define SK_CONFIG_PATH_MAX 256
/** Shortest token secret (RFC 7518 §3.2; same as SK_TOKEN_SECRET_MIN). */
#define SK_CONFIG_TOKEN_SECRET_MIN 32
/** Largest token secret file read by sk_config_read_secret(). */
#define SK_CONFIG_TOKEN_SECRET_MAX 4096
/** Largest absolute time accepted (unix seconds, year 2255: ns fit int64). */
#define SK_CONFIG_TIME_ABS_MAX INT64_C(9000000000)
/** Largest relative time accepted ("+N" seconds: ten years). */
#define SK_CONFIG_TIME_REL_MAX INT64_C(315360000)

/** One [portN] section. */
struct sk_config_port {
	/** devargs: "net_tap0,iface=sktap0", "net_memif0,role=server", a PCI address */
	char device[SK_CONFIG_DEVICE_MAX];
	uint32_t addr;	    /**< IPv4 address, host byte order (address = A.B.C.D/P) */
	uint32_t gateway;   /**< IPv4 gateway, host byte order; 0: none (gateway) */
	uint8_t prefix;	    /**< prefix length 1..32 */
	bool has_addr6;	    /**< address6 was set: the port also speaks IPv6 */
	uint8_t addr6[16];  /**< IPv6 address, network byte order (address6 = X:X::X/P) */
	uint8_t prefix6;    /**< its prefix length 1..128 */
	bool has_mac;	    /**< mac was set: program it into the port */
	uint8_t mac[6];	    /**< mac = 02:00:00:00:00:01 */
	uint16_t rx_queues; /**< rx_queues = N, or 0 for "auto" (RSS if possible) */
	uint16_t rx_desc;   /**< RX descriptors per queue (rx_desc) */
	uint16_t tx_desc;   /**< TX descriptors per queue (tx_desc) */
	bool rss;	    /**< rss = on|off: allowed to use several RX queues */
	bool csum_offload;  /**< checksum_offload = on|off: use the port's offloads */
};

/** Which PROXY protocol header every connection starts with ([proxy] protocol). */
enum sk_config_proxy {
	SK_CONFIG_PROXY_NONE = 0, /**< none: the TCP peer is the client */
	SK_CONFIG_PROXY_V1,	  /**< version 1 (text) from the trusted proxies */
	SK_CONFIG_PROXY_V2,	  /**< version 2 (binary) from the trusted proxies */
};

/** Which header names the client of a request ([proxy] forwarded). */
enum sk_config_forwarded {
	SK_CONFIG_FWD_NONE = 0,	 /**< none: headers are not read */
	SK_CONFIG_FWD_XFF,	 /**< X-Forwarded-For */
	SK_CONFIG_FWD_FORWARDED, /**< Forwarded (RFC 7239) */
};

/** When the dataplane answers a winner ([seckill] ack). */
enum sk_config_ack {
	SK_CONFIG_ACK_QUEUED = 0, /**< 202 queued at once */
	SK_CONFIG_ACK_DURABLE,	  /**< park the winner: 200 once its order is in LMDB, 202 after
				       ack_wait_ms (needs the control plane to ever say 200) */
};

/**
 * A point in time of an activity: "+N" seconds after the process started,
 * absolute unix seconds, or (end only) "never".
 */
struct sk_config_time {
	int64_t s;     /**< seconds: offset when @c relative, else unix time */
	bool relative; /**< written "+N" */
	bool never;    /**< written "never": no end */
};

/** One [item.<id>] section: an activity. */
struct sk_config_item {
	uint32_t id;		       /**< from the section name, 1..2^32-1 */
	uint32_t per_user_limit;       /**< units one user may hold (default 1) */
	char name[SK_CONFIG_NAME_MAX]; /**< display name (default "") */
	uint64_t total;		       /**< units on sale (required) */
	uint64_t price;		       /**< unit price, minor units (default 0) */
	uint32_t batch_max;	       /**< pool -> bucket refill cap; 0: engine default */
	uint64_t dedup_slots;	       /**< dedup slice; 0: automatic (8 x total) */
	struct sk_config_time start;   /**< default "+0": at process start */
	struct sk_config_time end;     /**< default "never" */
	bool gate;		       /**< buyers need the item's gate claim (default off) */
};

/** Certificate/key pairs of [tls] (sk_tls.h's SK_TLS_CERTS_MAX). */
#define SK_CONFIG_TLS_CERTS 8

/** A list of paths ([tls] cert, key): separated by commas or blanks. */
struct sk_config_paths {
	uint32_t n;
	char path[SK_CONFIG_TLS_CERTS][SK_CONFIG_PATH_MAX];
};

/** What the plain port does when TLS is on ([tls] plain). */
enum sk_config_plain {
	SK_CONFIG_PLAIN_SERVE = 0, /**< serves the API over plain HTTP as before */
	SK_CONFIG_PLAIN_REDIRECT,  /**< answers every request 308 to https:// */
	SK_CONFIG_PLAIN_OFF,	   /**< does not listen */
};

/** Longest value of a daemon key (struct sk_config_opts), NUL included. */
#define SK_CONFIG_OPT_MAX SK_CONFIG_PATH_MAX

/**
 * The keys of the daemons other than the dataplane: [store], [control],
 * [admin], [kafka], [cluster] (all but member_id) and [mysql]. Each is kept
 * as written ("" = not set), once its value is checked, and is handed to
 * the daemon as one of its long options by sk_config_argv_merge(); the key
 * tables of sk_config.c say which option of which daemon. Defaults are the
 * daemons' own (their --help), so they live in one place.
 */
struct sk_config_opts {
	/* [store] (path is sk_config::store) */
	char store_map_mb[SK_CONFIG_OPT_MAX];		/**< --store-map-mb */
	char store_nosync[SK_CONFIG_OPT_MAX];		/**< --store-nosync (on/off) */
	char store_batch_us[SK_CONFIG_OPT_MAX];		/**< --batch-us */
	char store_batch_max[SK_CONFIG_OPT_MAX];	/**< --batch-max */
	char store_map_grow_at[SK_CONFIG_OPT_MAX];	/**< --map-grow-at */
	char store_map_grow_step_mb[SK_CONFIG_OPT_MAX]; /**< --map-grow-step-mb */
	char store_map_max_mb[SK_CONFIG_OPT_MAX];	/**< --map-max-mb */
	char retention_keep_days[SK_CONFIG_OPT_MAX];	/**< --retention-keep-days */
	/* [control] */
	char ctl_payment_timeout_s[SK_CONFIG_OPT_MAX];	    /**< --payment-timeout */
	char ctl_payments_key_file[SK_CONFIG_OPT_MAX];	    /**< --payments-key-file */
	char ctl_payment_requests_age_s[SK_CONFIG_OPT_MAX]; /**< --payment-requests-max-age */
	char ctl_log_level[SK_CONFIG_OPT_MAX];		    /**< --log-level */
	/* [admin] */
	char admin_socket[SK_CONFIG_OPT_MAX];	  /**< --admin-socket (a path or none) */
	char admin_port[SK_CONFIG_OPT_MAX];	  /**< --admin-port */
	char admin_token_file[SK_CONFIG_OPT_MAX]; /**< --admin-token-file */
	/* [kafka]: shared by seckill-control and seckill-mysql-writer */
	char kafka_bootstrap[SK_CONFIG_OPT_MAX];      /**< --kafka / --bootstrap */
	char kafka_config_file[SK_CONFIG_OPT_MAX];    /**< --kafka-config */
	char kafka_orders_topic[SK_CONFIG_OPT_MAX];   /**< --kafka-orders-topic / --orders-topic */
	char kafka_events_topic[SK_CONFIG_OPT_MAX];   /**< --kafka-events-topic / --events-topic */
	char kafka_payments_topic[SK_CONFIG_OPT_MAX]; /**< --kafka-payments-topic */
	char kafka_payments_group[SK_CONFIG_OPT_MAX]; /**< --kafka-payments-group */
	char kafka_payments_retention_s[SK_CONFIG_OPT_MAX]; /**< --kafka-payments-retention */
	/* [cluster] */
	char cluster_redis[SK_CONFIG_OPT_MAX];		     /**< --redis */
	char cluster_redis_user[SK_CONFIG_OPT_MAX];	     /**< --redis-user */
	char cluster_redis_password_file[SK_CONFIG_OPT_MAX]; /**< --redis-password-file */
	char cluster_member[SK_CONFIG_OPT_MAX];		     /**< --cluster-member */
	char cluster_members[SK_CONFIG_OPT_MAX];	     /**< --cluster-members */
	char cluster_idle_ms[SK_CONFIG_OPT_MAX];	     /**< --cluster-idle-ms */
	/* [mysql]: seckill-mysql-writer */
	char mysql_socket[SK_CONFIG_OPT_MAX];	     /**< --socket */
	char mysql_host[SK_CONFIG_OPT_MAX];	     /**< --host */
	char mysql_port[SK_CONFIG_OPT_MAX];	     /**< --port */
	char mysql_user[SK_CONFIG_OPT_MAX];	     /**< --user */
	char mysql_password_file[SK_CONFIG_OPT_MAX]; /**< --password-file */
	char mysql_database[SK_CONFIG_OPT_MAX];	     /**< --database */
	char mysql_group[SK_CONFIG_OPT_MAX];	     /**< --group (the Kafka consumer group) */
	char mysql_batch[SK_CONFIG_OPT_MAX];	     /**< --batch */
	char mysql_metrics_port[SK_CONFIG_OPT_MAX];  /**< --metrics-port */
	char mysql_default_limit[SK_CONFIG_OPT_MAX]; /**< --default-limit */
	char mysql_park_final_s[SK_CONFIG_OPT_MAX];  /**< --park-final-seconds */
	char mysql_log_level[SK_CONFIG_OPT_MAX];     /**< --log-level */
};

/** The daemons that read the file, as a mask for sk_config_load_for(). */
enum sk_config_daemon {
	SK_CONFIG_DATAPLANE = 1u << 0,	  /**< seckill-dataplane */
	SK_CONFIG_CONTROL = 1u << 1,	  /**< seckill-control (and its cluster member) */
	SK_CONFIG_MYSQL_WRITER = 1u << 2, /**< seckill-mysql-writer */
};

/** Every daemon: what seckillctl config check validates. */
#define SK_CONFIG_ALL (SK_CONFIG_DATAPLANE | SK_CONFIG_CONTROL | SK_CONFIG_MYSQL_WRITER)

/** The whole configuration. All-zero is not valid: use sk_config_defaults(). */
struct sk_config {
	/* [dataplane] */
	char lcores[SK_CONFIG_LCORES_MAX]; /**< EAL lcore list ("1", "1-3,6"); "": from -l */
	uint32_t mbufs;			   /**< mbufs in the pool of each NUMA socket used */
	uint32_t mbuf_cache;		   /**< per-lcore mempool cache, 0..512 */
	uint16_t burst;			   /**< RX/TX burst size, 1..256 */
	uint32_t dispatch_ring;		   /**< per-lcore software-dispatch ring, power of two */
	uint32_t idle_sleep_us;		   /**< sleep this long when idle; 0: pure polling */
	uint32_t idle_after_us;		   /**< ... after this long without a packet */

	/* [port0] .. [port15] */
	uint16_t nb_ports;
	struct sk_config_port ports[SK_CONFIG_MAX_PORTS];

	/* [tcp] - 0 means the net stack's default */
	uint16_t tcp_port;	   /**< listening TCP port */
	uint32_t max_conns;	   /**< connection table size per lcore and port */
	uint16_t mss;		   /**< MSS announced, 536..9000 */
	uint32_t rcv_buf_size;	   /**< per-connection receive buffer, bytes */
	uint32_t snd_buf_size;	   /**< per-connection unacked-send buffer, bytes */
	uint32_t rto_initial_ms;   /**< RTO before any RTT sample */
	uint32_t rto_min_ms;	   /**< lower bound of the RTO */
	uint32_t rto_max_ms;	   /**< upper bound of the RTO after backoff */
	uint32_t max_retries;	   /**< retransmissions of a segment before a reset */
	uint32_t idle_timeout_ms;  /**< keep-alive idle timeout */
	uint32_t idle_new_ms;	   /**< idle timeout before a connection's first request */
	uint32_t max_conns_per_ip; /**< connections of one client address per lcore and port,
				      TIME_WAIT excluded; 0 = no cap (default 1024) */
	uint32_t ip6_prefix;	   /**< the per-address limits (max_conns_per_ip, ip_rate) count an
				      IPv6 client by this prefix of its address, 32..64 (default 64) */
	uint32_t time_wait_ms;	   /**< TIME_WAIT duration */
	uint32_t time_wait_max;	   /**< TIME_WAIT entries per lcore */
	bool has_syncookie_secret; /**< false: random secret at start */
	uint8_t syncookie_secret[SK_CONFIG_SECRET_LEN];
	/* RFC 5961 section 7: the challenge-ACK limits */
	uint32_t challenge_ack_per_s;	/**< per second per lcore, on average */
	uint32_t challenge_ack_conn_ms; /**< at most one per connection per this many ms; 0 = no
					   per-connection limit (default 500) */

	/* [http] - 0 means the parser's default */
	uint32_t head_max;	  /**< request head bytes (431 above) */
	uint32_t target_max;	  /**< request-target bytes (414 above) */
	uint32_t body_max;	  /**< Content-Length limit (413 above) */
	uint32_t fields_max;	  /**< header field lines (431 above) */
	uint32_t head_timeout_ms; /**< a request head must be complete this long after its first
				     byte, else 408; 0 = no deadline (default 10000) */
	uint32_t body_timeout_ms; /**< ... its body this long after the head (default 10000) */

	/* [seckill]; a rate of 0 is no limit, a burst of 0 is one second's worth
	 * (= the rate) */
	bool auth;			/**< on: Bearer JWT; off: X-User-Id */
	uint8_t ack;			/**< enum sk_config_ack; default: durable if store */
	uint32_t ack_wait_ms;		/**< ack = durable: longest park, then 202 */
	uint32_t sse_max;		/**< open order events streams per lcore; 0 = route off */
	uint32_t sse_per_user;		/**< ... of one user, per lcore */
	char store[SK_CONFIG_PATH_MAX]; /**< control plane's LMDB dir: recovery; "" none */
	char secret_file[SK_CONFIG_PATH_MAX]; /**< token secret; needed for auth with items */
	uint32_t token_skew_s;		      /**< clock skew allowed on exp/nbf */
	uint32_t max_items;		      /**< item slots of the arena */
	uint64_t dedup_slots;		      /**< dedup slots shared by all items */
	uint32_t status_bits;		      /**< log2 of orders per lcore per run */
	uint32_t order_ring;		      /**< records per lcore order ring (power of 2) */
	uint64_t global_rate, global_burst;   /**< buys/s of the appliance; 0 = off */
	uint64_t item_rate, item_burst;	      /**< buys/s of each item; 0 = off */
	uint64_t ip_rate, ip_burst;	      /**< buys/s of one client IP per lcore; 0 = off */
	uint32_t ip_slots; /**< per-IP limiter entries per lcore (power of 2); 0 = IP limit off */
	uint64_t user_rate,
		user_burst;  /**< attempts/s of one user on one item per lcore; 0 = off */
	uint32_t user_slots; /**< per-user limiter entries per lcore (power of 2); 0 = off for good
			      */
	uint32_t deny_max;   /**< entries of each deny list (users, prefixes); 0 = no deny lists */
	uint32_t reserve_mb; /**< MiB of the reservation sets' heap; 0 = no reservations */

	/* [proxy]: the client behind a load balancer or a CDN */
	uint8_t proxy_protocol; /**< enum sk_config_proxy: PROXY header on every connection */
	uint8_t forwarded;	/**< enum sk_config_forwarded: header read on each request */
	struct sk_prefix_list trusted; /**< the proxies believed; required with either on */

	/* [tls]: HTTPS at the front door (docs/tls.md); on when the section is there */
	bool tls;			 /**< a [tls] key was set */
	uint16_t tls_port;		 /**< the HTTPS listener (default 443) */
	uint8_t tls_plain;		 /**< enum sk_config_plain (default serve) */
	uint8_t tls_min_version;	 /**< 12 or 13 (default 12) */
	struct sk_config_paths tls_cert; /**< PEM chains, leaf first; [0] the default */
	struct sk_config_paths tls_key;	 /**< their keys, same order */
	char tls_ticket_key_file[SK_CONFIG_PATH_MAX]; /**< "": random secret per start */
	char tls_ciphersuites[SK_CONFIG_PATH_MAX];    /**< TLS 1.3 suites; "": all three */
	uint32_t tls_ticket_rotate_s;		      /**< ticket key period (default 3600) */
	uint32_t tls_handshake_timeout_ms;	      /**< default 10000 */
	uint32_t tls_max_handshakes;		      /**< in progress per lcore (default 1024) */
	uint32_t tls_buffers;			      /**< plaintext buffers per lcore (1024) */

	/* [cluster] */
	uint32_t member_id; /**< cluster member number in the order ids, 0..31; 0 = standalone */

	/* [store]: shared. path is the LMDB directory of the control plane (its
	 * --store), the dataplane's recovery source and mysql-writer verify's
	 * --store; [seckill] store is its deprecated alias (store_alias). */
	bool store_alias; /**< the path came from [seckill] store: log that it is deprecated */

	/** The keys of seckill-control and seckill-mysql-writer, as written. */
	struct sk_config_opts opts;

	/* [item.<id>], in file order */
	uint32_t nb_items;
	struct sk_config_item items[SK_CONFIG_MAX_ITEMS];
};

/**
 * sk_config_defaults - fill @p cfg with the defaults of every key and no port.
 * @param[out] cfg  configuration to initialise
 */
void sk_config_defaults(struct sk_config *cfg);

/**
 * sk_config_load - read the INI file @p path into @p cfg.
 *
 * @p cfg is first reset with sk_config_defaults(); keys of the file then
 * override the defaults. At least one port must be configured.
 *
 * @param[out] cfg     configuration; on error its content is unspecified
 * @param[in]  path    file to read
 * @param[out] err     on error, a one-line NUL-terminated description that
 *                     names the file, the line and the key; may be NULL
 * @param[in]  errlen  bytes at @p err (SK_CONFIG_ERR_MAX never truncates)
 * @return 0 on success, or
 *   -ENOENT (or another negative errno) if the file cannot be opened,
 *   -EINVAL if the file is malformed, names an unknown section or key, sets
 *           a key twice, has a value out of range, or lacks a required key,
 *   -ENOMEM if the parser ran out of memory.
 */
int sk_config_load(struct sk_config *cfg, const char *path, char *err, size_t errlen);

/**
 * sk_config_load_for - read the INI file @p path as the daemons of @p daemons
 * read it.
 *
 * Every daemon knows every section and key name: an unknown section or
 * key, a key set twice or a malformed line is an error for all of them.
 * Values, and the rules between keys, are checked only for the keys that
 * one of @p daemons reads, so that a daemon never refuses a file because of
 * another daemon's settings (the dataplane's [port0] is not the control
 * plane's business). sk_config_load() is the dataplane's call; seckillctl
 * config check passes SK_CONFIG_ALL.
 *
 * @param[out] cfg      as for sk_config_load(); the keys of the other
 *                      daemons are left at their defaults
 * @param[in]  path     file to read
 * @param[in]  daemons  a non-zero mask of enum sk_config_daemon
 * @param[out] err      as for sk_config_load()
 * @param[in]  errlen   bytes at @p err
 * @return as sk_config_load().
 */
int sk_config_load_for(struct sk_config *cfg, const char *path, unsigned daemons, char *err,
		       size_t errlen);

/** The command line of a daemon with its file's keys in front (sk_config_argv_merge()). */
struct sk_config_argv {
	int argc;    /**< arguments in argv */
	char **argv; /**< argv[argc] is NULL; the file's options are inside this
			  allocation, the others are the caller's argv strings */
};

/**
 * sk_config_argv_merge - the command line of daemon @p daemon as if the
 * keys of its configuration file had been given first.
 *
 * Looks for "--config FILE" (or "--config=FILE") in @p argv[1..argc); with
 * none, the result is a copy of @p argv. With one, FILE is read with
 * sk_config_load_for(@p daemon), and the result is @p argv[0], one long
 * option per key the daemon reads that the file sets ("--store=/var/lib/
 * seckill/orders", a flag such as "--store-nosync" for a boolean that is
 * on), then @p argv[1..argc) without the --config pair. An option given on
 * the command line therefore comes after the file's and overrides it with
 * getopt_long(), which keeps the last value.
 *
 * @param[in]  argc, argv  the daemon's options (argv[0]: the program, or
 *                         the word before the options); not modified
 * @param[in]  daemon      SK_CONFIG_CONTROL or SK_CONFIG_MYSQL_WRITER
 * @param[out] out         on success a malloc'd result; the caller frees
 *                         it with free() once it no longer needs any of
 *                         its strings
 * @param[out] err         on error, one line: the file's error as
 *                         sk_config_load() words it, or what is wrong with
 *                         --config; may be NULL
 * @param[in]  errlen      bytes at @p err
 * @return 0; -EINVAL (--config without a file or given twice, or a bad
 *   file), -ENOENT or another negative errno of fopen(), or -ENOMEM.
 * Not thread-safe only in that it reads files; touches no global.
 */
int sk_config_argv_merge(int argc, char *const *argv, unsigned daemon, struct sk_config_argv **out,
			 char *err, size_t errlen);

/**
 * sk_config_item_window - the sale window of @p item in wall-clock ns, with
 * relative times ("+N") counted from @p base_ns (the process start).
 * @param[in]  item      a loaded item
 * @param[in]  base_ns   process start, ns since the epoch, >= 0
 * @param[out] start_ns  when the sale opens
 * @param[out] end_ns    when it ends; INT64_MAX for "never"
 * @return 0, or -EINVAL if the end is not after the start (possible only
 *   when one is relative and the other absolute; the loader refuses the
 *   other cases).
 * Thread-safe (pure).
 */
int sk_config_item_window(const struct sk_config_item *item, int64_t base_ns, int64_t *start_ns,
			  int64_t *end_ns);

/**
 * sk_config_read_secret - read the token secret file @p path: its bytes,
 * minus one trailing newline ("\n" or "\r\n"), as tools/seckill-token does.
 * @param[in]  path    the file ([seckill] secret_file)
 * @param[out] buf     SK_CONFIG_TOKEN_SECRET_MAX bytes; the caller wipes it
 * @param[out] len     bytes of secret in @p buf
 * @param[out] err     on error, one line naming the key, the file and the
 *                     problem; may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0, or a negative errno of fopen() (-ENOENT, -EACCES, ...), -EIO
 *   (read error), -EFBIG (more than SK_CONFIG_TOKEN_SECRET_MAX bytes), or
 *   -EINVAL (fewer than SK_CONFIG_TOKEN_SECRET_MIN bytes).
 * Allocates nothing; thread-safe.
 */
int sk_config_read_secret(const char *path, uint8_t buf[SK_CONFIG_TOKEN_SECRET_MAX], size_t *len,
			  char *err, size_t errlen);

/**
 * sk_config_port_name - the DPDK device name of @p port: its device string
 * up to the first ',' ("net_tap0" for "net_tap0,iface=sktap0").
 * @param[in]  port  a configured port
 * @param[out] out   destination, NUL-terminated on success
 * @param[in]  len   bytes at @p out
 * @return 0 on success, -ENOSPC if the name does not fit in @p len.
 */
int sk_config_port_name(const struct sk_config_port *port, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SK_CONFIG_H */
