/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_eal.h - the EAL fixture of the tests, benchmarks and fuzzers that
 * need DPDK memory (rings, mempools): EAL in --no-huge mode on lcore 0, a
 * --file-prefix unique to the process, quiet logs, and the runtime folder
 * under /var/run/dpdk removed afterwards (design §8). No Check here: the
 * benchmarks use it in builds without tests (-Dtests=false).
 *
 * EAL state is per process: call these from the main thread, once.
 */
#ifndef SK_TEST_EAL_H
#define SK_TEST_EAL_H

/**
 * sk_test_eal_init - start the EAL for program @p name: --no-huge, --no-pci,
 * -m 256, -l 0, --no-shconf, --file-prefix=NAME-sk-test-PID (NAME: the last
 * component of @p name), no telemetry, EAL logs at error level. The runtime
 * folder is removed at exit even when sk_test_eal_cleanup() is not reached.
 * @return 0, or -1 if rte_eal_init() failed (rte_errno set).
 */
int sk_test_eal_init(const char *name);

/**
 * sk_test_eal_cleanup - rte_eal_cleanup(), then remove the runtime folder.
 * Whatever lives in EAL memory must be freed before.
 */
void sk_test_eal_cleanup(void);

#endif /* SK_TEST_EAL_H */
