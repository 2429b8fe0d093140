#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# format.sh REPO_ROOT - every C file git tracks is as clang-format (the
# .clang-format of the root) would write it. Exit 77 (skip) without
# clang-format, git, or outside a git checkout (a release tarball).
#
# Fix what it finds with: git ls-files '*.[ch]' | xargs clang-format -i
set -euo pipefail
root=${1:?usage: format.sh REPO_ROOT}
command -v clang-format >/dev/null || { echo "SKIP: needs clang-format"; exit 77; }
command -v git >/dev/null || { echo "SKIP: needs git"; exit 77; }
git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: $root is not a git checkout"; exit 77; }
cd "$root"
if ! git ls-files -z '*.c' '*.h' | xargs -0 clang-format --dry-run --Werror; then
	echo "FAIL: files not formatted (run: git ls-files '*.[ch]' | xargs clang-format -i)"
	exit 1
fi
