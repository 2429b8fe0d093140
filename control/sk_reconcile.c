/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reconcile rule (sk_reconcile.h): pure arithmetic, linked into
 * seckillctl and the control plane alike.
 */
#include "sk_reconcile.h"

void
sk_reconcile_item(const struct sk_reconcile_in *in, struct sk_reconcile_out *out)
{
	/* Modulo 2^64: no overflow to guard, exact below 2^62. */
	uint64_t have = in->remaining + in->sold - in->returned;
	int64_t d = (int64_t)(in->sold - in->returned - in->live);

	out->stock_diff = (int64_t)(in->total + in->added - in->removed - have);
	if (d < 0 || (uint64_t)d < in->inflight_min)
		out->store_diff = (int64_t)((uint64_t)d - in->inflight_min);
	else if ((uint64_t)d > in->inflight_max)
		out->store_diff = (int64_t)((uint64_t)d - in->inflight_max);
	else
		out->store_diff = 0;
	out->stock_ok = out->stock_diff == 0;
	out->store_ok = out->store_diff == 0;
}
