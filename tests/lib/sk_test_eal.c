/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test_eal.c - EAL start-up and clean-up for tests (see sk_test_eal.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "sk_test_eal.h"
#include "sk_test_fs.h"

/* Our own --file-prefix carries this mark; nothing else is ever removed. */
#define PREFIX_MARK "-sk-test-"

static char runtime_dir[PATH_MAX];

static void
remove_runtime_dir(void)
{
	if (strstr(runtime_dir, PREFIX_MARK) != NULL)
		sk_test_rmtree(runtime_dir);
}

int
sk_test_eal_init(const char *name)
{
	const char *base = strrchr(name, '/');
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "--file-prefix=%.32s" PREFIX_MARK "%d",
		 base != NULL ? base + 1 : name, (int)getpid());
	char *argv[] = {(char *)name,
			"--no-huge",
			"--no-pci",
			"-m",
			"256",
			"-l",
			"0",
			"--no-shconf",
			prefix,
			"--log-level=lib.eal:error",
			"--no-telemetry",
			NULL};

	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		return -1;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	atexit(remove_runtime_dir);
	return 0;
}

void
sk_test_eal_cleanup(void)
{
	rte_eal_cleanup();
	remove_runtime_dir();
}
