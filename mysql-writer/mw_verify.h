/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_verify.h - "seckill-mysql-writer verify": the appliance's LMDB store
 * (opened read-only, beside a running control plane) against MariaDB, per
 * item (total, added, sold, returned, paid; lines per state) and per order
 * (present on both sides, same user, units and state), plus the parked
 * table (messages not applied yet).
 *
 * For one thread; O(orders) memory and time.
 */
#ifndef MW_VERIFY_H
#define MW_VERIFY_H

#include <stdbool.h>
#include <stdio.h>

#include "mw_db.h"

/**
 * mw_verify - compare the store at @p store_dir with the database of
 * @p db and print the report on @p out: text, or one JSON object with
 * @p json ({"equal", "items": [...], "orders": {...}, "parked",
 * "differences": [...]}). At most @p max_diffs differences are listed
 * (all are counted).
 * @return 0 (equal), 1 (different), or a negative errno (the store or the
 *         database could not be read; logged).
 */
int mw_verify(struct mw_db *db, const char *store_dir, bool json, unsigned max_diffs, FILE *out);

#endif /* MW_VERIFY_H */
