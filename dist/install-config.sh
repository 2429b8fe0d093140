#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# install-config.sh DIR FILE... - meson's install script for the example
# configuration (dist/meson.build): copy each FILE into $DESTDIR/DIR unless a
# file of that name is there already. The one there is the operator's,
# edited: a re-install (an upgrade from source) never overwrites it
# (docs/install.md says how to compare it with the new example). Packagers
# install into an empty DESTDIR, where everything is copied. Meson shows
# this script's output only when it fails.
set -eu
dir=$1
shift
dest=${DESTDIR:-}$dir
mkdir -p "$dest"
for f in "$@"; do
	t=$dest/$(basename "$f")
	[ -e "$t" ] || install -m 0644 "$f" "$t"
done
