/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_msg.h - seckill-mysql-writer's view of one exported message: the JSON
 * values of seckill.orders and seckill.events (docs/kafka.md, "v":1)
 * decoded into a flat struct, with every field checked.
 *
 * Pure: no I/O, no global state; each call works on the caller's struct,
 * so the functions are thread-safe on distinct structs.
 */
#ifndef MW_MSG_H
#define MW_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The message version this writer reads. */
#define MW_MSG_VERSION 1
/** Most lines of one order (the store's SK_STORE_MAX_LINES). */
#define MW_MSG_MAX_LINES 255
/** Longest request id kept, bytes (NUL excluded). */
#define MW_MSG_REQUEST_MAX 128
/** Longest activity name, bytes (NUL excluded). */
#define MW_MSG_NAME_MAX 64
/** Longest client address text: an IPv6 address with an IPv4 tail. */
#define MW_MSG_IP_MAX 45

/** Message types; 0 is none. */
enum mw_msg_type {
	MW_MSG_CONFIRMED = 1, /**< seckill.orders: an order and its lines */
	MW_MSG_PAID,	      /**< order paid */
	MW_MSG_CANCELLED,     /**< order cancelled, its units returned */
	MW_MSG_FAILED,	      /**< order never stored */
	MW_MSG_RESTOCKED,     /**< units added to an item */
	MW_MSG_ACTIVITY,      /**< item created or changed; units = its total */
	MW_MSG_CLOSED,	      /**< item closed */
	MW_MSG_REFUNDED,      /**< units of one line of a paid order refunded */
	MW_MSG_PAY_CONFLICT,  /**< a payment for a cancelled order */
	MW_MSG_REMOVED,	      /**< unsold units taken back from an item */
	MW_MSG_PAUSED,	      /**< item paused: no sale until resumed */
	MW_MSG_RESUMED,	      /**< item selling again */
	MW_MSG_EXTENDED,      /**< item's end moved later: end_ns */
	MW_MSG_NTYPES
};

/** One line of a confirmed order. */
struct mw_msg_line {
	uint32_t line;	/**< index in the order, 0.. */
	uint32_t item;	/**< item id, >= 1 */
	uint32_t qty;	/**< units, >= 1 */
	uint64_t price; /**< unit price, minor units */
};

/** A decoded message. Fields a type does not carry are zero. */
struct mw_msg {
	uint64_t seq;	       /**< position in the appliance's event log, >= 1 */
	enum mw_msg_type type; /**< what happened */
	uint64_t order;	       /**< order id; 0 for item events ("order":null) */
	uint64_t user;	       /**< buyer; 0 for item events */
	uint32_t item;	       /**< item (line 0's for order events) */
	uint64_t units;	       /**< units of the event (activity: total) */
	int64_t time_ns;       /**< when the appliance committed it */
	int64_t sold_ns;       /**< confirmed: when the dataplane sold it */
	char client_ip[MW_MSG_IP_MAX +
		       1]; /**< confirmed: buyer's address (IPv4 or IPv6 text), "" if none */
	char request[MW_MSG_REQUEST_MAX + 1]; /**< request id, "" if none */
	/* activity: the definition, when the message carries it; extended: end_ns */
	bool has_limit, has_price, has_name, has_start, has_end;
	uint32_t limit;				    /**< per-user limit, >= 1 */
	uint64_t price;				    /**< unit price */
	char name[MW_MSG_NAME_MAX + 1];		    /**< activity name */
	int64_t start_ns, end_ns;		    /**< sale window */
	unsigned nlines;			    /**< confirmed: lines, 1.. */
	struct mw_msg_line lines[MW_MSG_MAX_LINES]; /**< confirmed: lines 0..nlines-1 */
};

/**
 * mw_msg_decode - decode one Kafka value into @p m.
 *
 * Checks: a JSON object, "v" == MW_MSG_VERSION, "seq" >= 1, a known "type",
 * "order" a decimal string (or null for item events), integers in their
 * ranges, a confirmed order's "lines" complete (line i at position i,
 * qty >= 1, item >= 1); a refund's and a removal's "units" >= 1; an
 * extension's "end_ns" present. Unknown fields are ignored (a newer
 * exporter may add some).
 *
 * @param buf     the value; need not be NUL-terminated
 * @param len     bytes at @p buf
 * @param m       [out] overwritten; on -ENOTSUP and -ENOMSG, m->seq is
 *                set when the message had a valid one
 * @param why     [out] on error, one line saying what is wrong; may be NULL
 * @param whylen  bytes at @p why
 * @return 0, -EBADMSG (not JSON, a field missing or out of range),
 *         -EPROTO (another "v"), -ENOTSUP (an unknown "type"), -ENOMSG (a
 *         type the appliance exports for its own audit that holds nothing
 *         for MariaDB: "pay_rejected", a refused payment message).
 */
int mw_msg_decode(const char *buf, size_t len, struct mw_msg *m, char *why, size_t whylen);

/**
 * mw_msg_type_name - "confirmed", "paid", ... for @p type; "?" for a value
 * out of range. The names are the exporter's (and the order_events.type
 * column's). Pure.
 */
const char *mw_msg_type_name(unsigned type);

#endif /* MW_MSG_H */
