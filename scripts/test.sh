#!/usr/bin/env bash
# Run every test: installs what is missing, reserves hugepages, builds a
# release (debugoptimized), an -O3 release (built only, so that its warnings
# fail the run), a sanitizer (ASan+UBSan) build and, with clang, the fuzz
# targets; runs the lint suite (format, shellcheck, layout, docs checks),
# the integration, model and install tests on the release build, the unit
# tests under the sanitizers, and the libFuzzer targets for a bounded time.
#
#   ./scripts/test.sh            everything
#   SK_FUZZ_SECONDS=20 ./scripts/test.sh   shorter fuzzing (per target)
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
cd "$SK_ROOT"

sk_need_root
sk_install_pkgs "${SK_BUILD_PKGS[@]}" "${SK_TEST_PKGS[@]}"
sk_hugepages 1024

mkdir -p build
fail=0

sk_log "release build"
sk_build build/release -Dbuildtype=debugoptimized
sk_log "optimised build (--buildtype=release, -O3: packagers build this way)"
sk_build build/release-o3 -Dbuildtype=release
sk_log "sanitizer build (ASan + UBSan)"
sk_build build/sanitize -Db_sanitize=address,undefined -Db_lundef=false

# Check's own per-test timeout (4 s unless a suite sets one) is a guess of
# how long a test takes; on a loaded 2-core machine it fired on tests that
# were merely slow. Hangs stay bounded by meson's per-test timeouts.
export CK_DEFAULT_TIMEOUT=120

# Each test runs once, where it tells the most: the unit tests under the
# sanitizers (which also compile in the hot-path assertions), the
# integration, model and install tests on the release build the operators
# run, and the lint suite (sources and docs, whatever the build) once.
sk_log "lint, integration, model and install tests (release)"
meson test -C build/release --suite lint --suite integration --suite model --suite install \
	--print-errorlogs --num-processes 1 || fail=1

sk_log "unit tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	CK_TIMEOUT_MULTIPLIER=3 meson test -C build/sanitize --suite unit --print-errorlogs --num-processes 1 || fail=1

if command -v clang >/dev/null; then
	secs=${SK_FUZZ_SECONDS:-30}
	sk_log "fuzzing (clang libFuzzer, ${secs}s per target)"
	# Only the fuzz targets (tests/fuzz/NAME/ builds fuzz_NAME): the rest of
	# this build would repeat the others.
	targets=()
	for d in tests/fuzz/*/meson.build; do
		d=$(dirname "$d")
		targets+=(--target "$d/fuzz_$(basename "$d")")
	done
	CC=clang sk_build build/fuzz "${targets[@]}" \
		-Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Dtests=true
	found=0
	while IFS= read -r f; do
		found=1
		name=$(basename "$f")
		corpus=build/fuzz-corpus/$name
		mkdir -p "$corpus"
		dirs=("$corpus")
		[ -d "tests/fuzz/${name#fuzz_}/corpus" ] && dirs+=("tests/fuzz/${name#fuzz_}/corpus")
		if "$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			"${dirs[@]}" >"build/$name.log" 2>&1; then
			sk_log "fuzz $name: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "build/$name.log" | grep -o '[0-9]*$') runs, no crash"
		else
			tail -40 "build/$name.log"
			sk_log "FAIL: fuzz $name found a crash (build/$name.log)"
			fail=1
		fi
	done < <(find build/fuzz/tests/fuzz -type f -name 'fuzz_*' -executable | sort)
	[ "$found" = 1 ] || sk_log "no fuzz targets built"
	# A target that crashed exits before its own clean-up: remove the EAL
	# runtime folders of the fuzzers' prefixes (ours only, design §8).
	rm -rf /var/run/dpdk/sk-net-fuzz-*
fi

if [ "$fail" -ne 0 ]; then
	sk_log "SOME TESTS FAILED"
	exit 1
fi
sk_log "all tests passed"
