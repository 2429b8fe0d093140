#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tests/lint/shellcheck.sh REPO_ROOT - every shell script git tracks (and .ci/run)
# passes shellcheck with the settings of the root's .shellcheckrc: a new
# finding fails the test (fix it, or disable it on that line with a
# one-line reason). Exit 77 (skip) without shellcheck, git, or outside a
# git checkout (a release tarball).
set -euo pipefail
root=${1:?usage: shellcheck.sh REPO_ROOT}
command -v shellcheck >/dev/null || { echo "SKIP: needs shellcheck"; exit 77; }
command -v git >/dev/null || { echo "SKIP: needs git"; exit 77; }
git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: $root is not a git checkout"; exit 77; }
cd "$root"
git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck
