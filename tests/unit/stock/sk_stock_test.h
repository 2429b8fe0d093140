/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hook points inside sk_stock.c, compiled in only for the interleaving
 * tests (SK_STOCK_TEST_HOOKS).
 */
#ifndef SK_STOCK_TEST_H
#define SK_STOCK_TEST_H

struct sk_item;

enum sk_stock_hook_point {
	SK_STOCK_HOOK_GATHERED,	   /**< units held privately, before the credit */
	SK_STOCK_HOOK_FLAG_RAISED, /**< sold-out flag just set, before the re-scan */
};

typedef void sk_stock_test_hook_fn(struct sk_item *it, unsigned lcore,
				   enum sk_stock_hook_point point);

/** Set by a test; called at each hook point while non-NULL. */
extern sk_stock_test_hook_fn *sk_stock_test_hook;

#endif /* SK_STOCK_TEST_H */
