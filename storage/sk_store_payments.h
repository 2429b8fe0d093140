/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The order store's payments (sk_store.h, "payments"): payment and refund
 * messages applied exactly once per request id, by compare-and-set in one
 * durable write transaction with their (request id -> outcome) record.
 * Split from sk_store.h along its seam; the threading, durability and
 * multi-process rules of sk_store.h apply unchanged.
 */
#ifndef SK_STORE_PAYMENTS_H
#define SK_STORE_PAYMENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_store.h"

/** Kinds of payment messages (sk_store_payment.kind). Stored: never renumber. */
enum sk_store_pay_kind {
	SK_STORE_PAY_PAID = 1,	 /**< the order was paid: confirmed -> paid */
	SK_STORE_PAY_REFUND = 2, /**< units of a paid order refunded */
};

/** What a payment did (sk_store_pay_result.outcome). Stored: never renumber. */
enum sk_store_pay_outcome {
	SK_STORE_PAY_DONE = 0,	   /**< paid now, or the units refunded now */
	SK_STORE_PAY_ALREADY = 1,  /**< paid: the order was paid already (success) */
	SK_STORE_PAY_CONFLICT = 2, /**< paid: the order was cancelled first; recorded
					and exported (SK_STORE_EV_PAY_CONFLICT) for
					the payment service to refund; no unit taken */
	SK_STORE_PAY_STATE = 3,	   /**< wrong state: paid of a refunded order,
					refund of an order not paid */
	SK_STORE_PAY_TOO_MANY = 4, /**< refund: more units than remain: nothing refunded */
	SK_STORE_PAY_NO_ITEM = 5,  /**< refund: the item is not in the order, or units
					of a cart asked without naming its item */
	SK_STORE_PAY_OUTCOMES
};

/** One payment message (sk_store_payment_apply()). */
struct sk_store_payment {
	const char *request; /**< request id: 1..SK_STORE_REQUEST_MAX bytes of printable
				  ASCII but '"' and '\\' (no blank), NUL-terminated */
	uint64_t order;	     /**< order id */
	uint8_t kind;	     /**< enum sk_store_pay_kind */
	uint32_t item;	     /**< refund: the line's item; 0 = the only line, or every
				  line when @c units is 0 */
	uint32_t units;	     /**< refund: units; 0 = everything left */
};

/** The outcome of a payment, first or recorded. */
struct sk_store_pay_result {
	uint8_t outcome;    /**< enum sk_store_pay_outcome */
	uint8_t state;	    /**< the order's state after the first application */
	bool duplicate;	    /**< the request id was recorded before: this is its
				 first outcome and nothing changed now */
	uint32_t units;	    /**< units paid, or refunded, by the request */
	int64_t time_ns;    /**< when the request was first applied */
	uint64_t event_seq; /**< first event of the outcome; 0 if none */
	/**
	 * Refund applied now (not for duplicates): the lines refunded, as they
	 * were before (rec.returned = units given back before) and the units
	 * refunded now, for the arena (sk_buy_refund()).
	 */
	unsigned nlines;
	struct sk_store_pay_line {
		struct sk_order_rec rec;
		uint32_t units;
	} lines[SK_STORE_PAY_LINES];
};

/**
 * sk_store_payment_apply - apply a payment message exactly once per request
 * id, in one durable write transaction that also records (request id ->
 * outcome): a repeat of the request (redelivery, retry) changes nothing and
 * returns the first outcome with @c duplicate set.
 *
 * Paid: the compare-and-set confirmed -> paid of sk_store_order_move()
 * (SK_STORE_EV_PAID, with the request id); already paid: ALREADY; cancelled:
 * CONFLICT (one SK_STORE_EV_PAY_CONFLICT event: line 0's item, every unit);
 * refunded: STATE.
 *
 * Refund (the order must be paid; else STATE): the units of one line
 * (@c item, or the only line), or with @c units 0 and @c item 0 everything
 * left of every line. Per line refunded <= qty: asking for more than remain
 * is TOO_MANY and refunds nothing (nor does asking for units when nothing
 * remains). Each line refunded: refunded and returned += units, its
 * `by_user` entry lowered (deleted at 0), the ledger's returned += units,
 * one SK_STORE_EV_REFUNDED event. When no unit of the order remains it
 * moves paid -> refunded. Write here first, then give the units back in
 * the item table (sk_buy_refund() per @c lines entry): a crash in between
 * leaves units unsold until a restart rebuilds the table from the store,
 * never sold twice.
 *
 * Every outcome but an unknown order is recorded. The table is bounded by
 * the store's conf (requests_max, requests_ttl_ns): past the bound the
 * oldest entries go, and a request older than that would apply again (a
 * second paid is ALREADY; a refund is still never above qty).
 *
 * @param st      the store
 * @param p       the message
 * @param now_ns  time of the change (wall clock)
 * @param res     [out] the outcome
 * @return 0 (outcome in @p res), -ENOENT (no such order: nothing recorded),
 *         -EEXIST (the request id was recorded for another order, kind,
 *         item or units: nothing changed; @p res holds its first outcome),
 *         -EINVAL (bad request id or kind), -E2BIG (an order of more than
 *         SK_STORE_PAY_LINES lines), -ENOSPC, -EACCES.
 */
int sk_store_payment_apply(struct sk_store *st, const struct sk_store_payment *p, int64_t now_ns,
			   struct sk_store_pay_result *res);

/**
 * sk_store_payment_get - the recorded outcome of request id @p request.
 * @param res  [out] the outcome (duplicate set, lines empty)
 * @return 0, -ENOENT (not recorded), -EINVAL (bad request id).
 */
int sk_store_payment_get(struct sk_store *st, const char *request, struct sk_store_pay_result *res);

/**
 * sk_store_request_ok - whether @p request is a valid request id (see
 * struct sk_store_payment). Pure; thread-safe.
 */
bool sk_store_request_ok(const char *request);

/** sk_store_pay_outcome_name - "done", "already", "conflict", "state",
 *  "too_many", "no_item"; "?" for unknown values. */
const char *sk_store_pay_outcome_name(unsigned outcome);

#endif /* SK_STORE_PAYMENTS_H */
