/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_list - print a daemon's metric families from the tables its
 * /metrics is written from, one line each: "name type labels" (labels
 * comma separated, "-" for none). tests/lib/python/monitoring.py compares
 * the lists with docs/monitoring.md and the alert rules and dashboard.
 *
 *     metrics_list control    seckill-control (sk_control_metrics_list())
 *     metrics_list mysql      seckill-mysql-writer (mw_metrics_list())
 */
#include <stdio.h>
#include <string.h>

#include "mw_metrics.h"
#include "sk_control.h"

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "control") == 0)
		return sk_control_metrics_list(stdout) == 0 ? 0 : 1;
	if (argc == 2 && strcmp(argv[1], "mysql") == 0)
		return mw_metrics_list(stdout) == 0 ? 0 : 1;
	fprintf(stderr, "usage: metrics_list control|mysql\n");
	return 2;
}
