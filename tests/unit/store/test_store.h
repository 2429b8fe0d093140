/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_store.h - what the files of the store suite share: units, order records, collectors for the
 * foreach calls, the tcases each file adds. Tests of one process, one thread.
 */
#ifndef TEST_STORE_H
#define TEST_STORE_H

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <lmdb.h>

#include "sk_store.h"
#include "sk_store_payments.h"
#include "sk_test.h"
#include "sk_test_fs.h"
#include "sk_test_store.h"

#define MS  ((int64_t)1000000)
#define MIN (60 * 1000 * MS)

/* Collectors for the foreach calls. */
struct holdings {
	struct sk_store_holding h[64];
	unsigned n;
};

struct deadlines {
	int64_t when[256];
	uint64_t order[256];
	unsigned n;
};

struct events {
	struct sk_store_event ev[64];
	unsigned n;
	unsigned stop_after; /* 0: never */
};

/* rec - a one-line order @id of @qty units of @item for @user, price 100 * @item. */
struct sk_order_rec rec(uint64_t id, uint64_t user, uint32_t item, uint16_t qty);

/* cart - lines of one order over @items (distinct), qty 1 each. */
void cart(struct sk_order_rec *out, uint64_t id, uint64_t user, const uint32_t *items, unsigned n);

/* state_of - the state of line 0 of order @id (asserts the order is there). */
unsigned state_of(struct sk_store *st, uint64_t id);

/* collect_holding - sk_store_holdings_foreach() callback into a struct holdings. */
int collect_holding(const struct sk_store_holding *h, void *arg);

/* collect_event - sk_store_events_foreach() callback into a struct events (42 at stop_after). */
int collect_event(const struct sk_store_event *ev, void *arg);

/* stamp_schema - rewrite the schema record with raw LMDB, as another build would have. */
void stamp_schema(const char *dir, uint32_t major, uint32_t minor);

/* The tcases of each file, added to @s in the order of the original suite. */
void test_store_add_basics(Suite *s);
void test_store_add_orders(Suite *s);
void test_store_add_payments(Suite *s);
void test_store_add_durability(Suite *s);
void test_store_add_clients(Suite *s);

#endif /* TEST_STORE_H */
