#!/bin/bash
# Sets up (packages, lab rootfs) and runs every test: unit tests, tests against a
# real sshd on 127.0.0.1 and end-to-end tests on a real systemd host, all built
# with clang under AddressSanitizer + UndefinedBehaviorSanitizer (leak checking on)
# in build-ci/; then each libFuzzer target for FUZZ_SECONDS (default 20 here, 30 when fuzz.sh runs alone;
# scripts/fuzz.sh). One compile gives both: build-ci is RATCHET_FUZZ=ON, which
# implies RATCHET_SANITIZE=ON. build/ (the demo's plain optimized build) is left alone.
#   scripts/test.sh [CTEST ARGS]     e.g. scripts/test.sh -R loader
#   TEST_NO_FUZZ=1 scripts/test.sh   the tests only
#   TEST_NO_PACKAGE=1 scripts/test.sh   without building and installing the .deb (scripts/package.sh)
# Every sanitizer report, also from a ratchet process a test started, goes to a
# file under build-ci/sanitizer-reports/; any such file fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SETUP_NO_BUILD=1 scripts/setup.sh test
# The host library runs under any POSIX sh (dash accepts `local`); the scripts are bash.
shellcheck -s dash src/steps/lib/*.sh src/transport/sh/*.sh
shellcheck -x scripts/*.sh .ci/run
B=build-ci
cmake -S . -B "$B" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DRATCHET_FUZZ=ON >/dev/null
cmake --build "$B" -j"$(nproc)"

source tests/sanitizers/env.sh
reports=$root/$B/sanitizer-reports
rm -rf "$reports" && mkdir -p "$reports"
export ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan"
export UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan"
rc=0
(cd "$B" && ctest --output-on-failure -j2 "$@") || rc=$?
if compgen -G "$reports/*" >/dev/null; then
  echo "test: sanitizer reports (each fails the run):"
  for f in "$reports"/*; do echo "== $f"; cat "$f"; done
  rc=1
fi
[ "$rc" -eq 0 ] || { echo "test: FAILED"; exit "$rc"; }
unset ASAN_OPTIONS UBSAN_OPTIONS
# The Debian package: built (Release, build-pkg/), lintian-clean, installed, checked, removed.
[ "${TEST_NO_PACKAGE:-0}" = 1 ] || PACKAGE_TEST=1 scripts/package.sh
# A fixed seed: CI replays the start of the mutation sequence that longer local runs
# of seed 1 passed (docs/fuzzing.md); random seeds are for scripts/fuzz.sh alone.
[ "${TEST_NO_FUZZ:-0}" = 1 ] || FUZZ_SECONDS=${FUZZ_SECONDS:-20} FUZZ_SEED=${FUZZ_SEED:-1} \
  FUZZ_BUILD=$B FUZZ_NO_BUILD=1 scripts/fuzz.sh
