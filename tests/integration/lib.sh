# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# lib.sh - what every integration test sources first: the harness
# (lib/harness.sh: skip rules, a private sandbox per test, the one EXIT
# trap, assertions, bounded waits). A test then sources the fixtures it
# uses, each one domain:
#
#   lib/durable.sh   a control plane with a durable store: config, items,
#                    orders, metrics, reconcile, drain, kill rounds, logs
#   lib/kafka.sh     seckill-kafka's mock broker, payments key, consume
#   lib/redis.sh     a redis-server on a unix socket
#   lib/mariadb.sh   a temporary MariaDB and seckill-mysql-writer
#   lib/cluster.sh   two members on one Redis (sources lib/redis.sh)
#
#   . "$(dirname "$0")/lib.sh"
#   # shellcheck source=lib/kafka.sh
#   . "$IT_DIR/lib/kafka.sh"
#
# How to write a test: tests/README.md.
# shellcheck source=lib/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/harness.sh"
