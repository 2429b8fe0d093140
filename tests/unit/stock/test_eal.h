/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL start-up for unit tests that need rte_ring: no hugepages, no PCI, a
 * file prefix unique to the process, quiet logs.
 */
#ifndef SK_TEST_EAL_H
#define SK_TEST_EAL_H

#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>

static inline int
sk_test_eal_init(const char *name)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s-%d", name, (int)getpid());
	char *argv[] = {(char *)name,	 "--no-huge",	"--no-pci", "-m",
			"256",		 "--no-shconf", prefix,	    "--log-level=lib.eal:error",
			"--no-telemetry"};
	int argc = (int)(sizeof(argv) / sizeof(argv[0]));

	return rte_eal_init(argc, argv) < 0 ? -1 : 0;
}

#endif /* SK_TEST_EAL_H */
