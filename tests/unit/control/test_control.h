/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_control.h - what the files of the control suite share: the fixture (an arena in plain memory
 * with real rte_rings, a control plane on an LMDB store in a temporary directory), buys, drains,
 * state and book checks, the admin and payments helpers, the tcases each file adds. The test thread
 * only, unless a helper says otherwise.
 */
#ifndef TEST_CONTROL_H
#define TEST_CONTROL_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <rte_memzone.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_activity.h"
#include "sk_admin.h"
#include "sk_exporter.h"
#include "sk_payments_consumer.h"
#include "sk_buy.h"
#include "sk_control.h"
#include "sk_member.h"
#include "sk_recover.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"
#include "sk_test_fs.h"

#define EPOCH	 1764000000u
#define S	 INT64_C(1000000000)
#define T0	 ((int64_t)EPOCH * S + 5 * S) /* sale time of every buy */
#define TIMEOUT	 (60 * S)		      /* payment timeout of the fixture */
#define NLCORES	 2
#define RING_SZ	 1024
#define MAX_LINE 4096

/* The fixture: one per test, in F. */
struct fx {
	struct sk_test_arena arena; /* NLCORES lcores: rings, buy contexts */
	struct sk_control *ctl;
	struct sk_control_conf conf;
	char dir[PATH_MAX];
	char store[PATH_MAX + 16];
};

/* The seckillctl binary (argv[1]); NULL: its test is not run. */
extern const char *seckillctl_path;

/* The fixture of the running test (fx_setup .. fx_teardown). */
extern struct fx F;

/* ctl_open - sk_control_init() on F's arena, rings and conf (asserts success). */
void ctl_open(void);

/* ctl_restart - a new control plane on the same arena, rings and store. */
void ctl_restart(void);

/*
 * fx_setup_with - a fresh F: arena, rings, a store in a new temporary
 * directory, drains of at most @batch_max records (0: the default), a map of
 * @map_size bytes (0: the default); the control plane opened.
 */
void fx_setup_with(uint32_t batch_max, uint64_t map_size);

/* fx_setup - fx_setup_with() the defaults. */
void fx_setup(void);

/* fx_teardown - close the control plane, free the arena, remove the directory. */
void fx_teardown(void);

/* add_item - item @id of @total units, @limit per user, no end (asserts success). */
struct sk_item *add_item(uint32_t id, uint64_t total, uint32_t limit);

/* buy_lines - sk_buy() of the @n lines @l for @user on @lcore at T0; its status. */
enum sk_buy_status buy_lines(unsigned lcore, uint64_t user, struct sk_buy_line *l, unsigned n,
			     uint64_t *order);

/* buy_one - one unit of @it for @user on @lcore; the status. */
enum sk_buy_status buy_one(unsigned lcore, uint64_t user, struct sk_item *it);

/* buy - one unit of @it for @user on @lcore; the order id (asserts success). */
uint64_t buy(unsigned lcore, uint64_t user, struct sk_item *it);

/* drain_now - sk_control_drain() of every ring now, at T0 + 1 s; its return. */
int drain_now(struct sk_control_drain_info *di);

/* store_state - the order's state in LMDB (line 0), SK_ORDER_NONE if absent. */
unsigned store_state(uint64_t id);

/* arena_state - the order's status in the arena. */
unsigned arena_state(uint64_t id);

/*
 * count_confirmed_failed - of the orders ids[0..n), count in *confirmed those
 * confirmed in both the arena and the store, in *failed those failed in the
 * arena and absent from the store; any other pair fails the test.
 */
void count_confirmed_failed(const uint64_t *ids, unsigned n, unsigned *confirmed, unsigned *failed);

/* assert_store_ok - sk_store_verify() of the control plane's store passes. */
void assert_store_ok(void);

/* assert_books - arena accounting holds and the store's live units equal sold - returned. */
void assert_books(struct sk_item *it);

/* stats - the control plane's counters now. */
struct sk_control_stats stats(void);

/* race_timeout - 300 payments against the deadline pass: one winner each. */
void race_timeout(bool by_message);

/* metrics_text - the control plane's /metrics text; the caller frees it. */
char *metrics_text(void);

/* assert_metrics_parse - every line of @text is a HELP, a TYPE or a sample line. */
void assert_metrics_parse(const char *text);

/* activity - a definition for item @id: @total units from T0, no end. */
struct sk_store_activity activity(uint32_t id, uint64_t total);

/* handle_body - sk_admin_handle() with a JSON body. */
json_t *handle_body(const char *method, const char *path, const char *body, unsigned want_status);

/* error_has - the reply's "error" contains @s. */
void error_has(json_t *j, const char *s);

/* The tcases of each file, added to @s in the order of the original suite. */
void test_control_add_drain(Suite *s);
void test_control_add_crash(Suite *s);
void test_control_add_deadline(Suite *s);
void test_control_add_pay(Suite *s);
void test_control_add_activity(Suite *s);
void test_control_add_views(Suite *s);
void test_control_add_mapgrow(Suite *s);
void test_control_add_retention(Suite *s);
void test_control_add_reserve(Suite *s);

#endif /* TEST_CONTROL_H */
