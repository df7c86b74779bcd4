#!/bin/bash
# Builds (if needed) and runs each libFuzzer target of tests/fuzz/ for FUZZ_SECONDS
# (default 30) on a copy of its seed corpus, with ASan, UBSan and leak checking.
# Fails on any crash, leak, sanitizer report, timeout or broken invariant; the input
# that did it is kept in BUILD/fuzz-artifacts/. Prints per target the executions and
# the final coverage line. Needs clang (scripts/setup.sh installs it).
#   scripts/fuzz.sh                          all three targets, 30 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh loader_fuzz
#   FUZZ_BUILD=build-fuzz scripts/fuzz.sh    another build directory (default build-ci)
#   FUZZ_NO_BUILD=1 scripts/fuzz.sh          run what is built (scripts/test.sh just built it)
#   FUZZ_SEED=1 scripts/fuzz.sh              a fixed mutation sequence (scripts/test.sh, CI): a
#                                            run replays the start of any longer run with the
#                                            same seed, so CI does not find what a local run of
#                                            that seed did not; without it, a new random seed
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
B=${FUZZ_BUILD:-build-ci}
SECONDS_EACH=${FUZZ_SECONDS:-30}
MAX_LEN=${FUZZ_MAX_LEN:-4096}
seed=()
[ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$FUZZ_SEED")
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(loader_fuzz template_fuzz transcript_reader_fuzz)

if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$B/CMakeCache.txt" ] || ! grep -q '^RATCHET_FUZZ:BOOL=ON' "$B/CMakeCache.txt"; then
    cmake -S . -B "$B" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
      -DRATCHET_FUZZ=ON >/dev/null
  fi
  cmake --build "$B" -j"$(nproc)" --target "${TARGETS[@]}"
fi

source tests/sanitizers/env.sh
artifacts=$root/$B/fuzz-artifacts
mkdir -p "$artifacts"
work=$(mktemp -d /tmp/ratchet-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

failed=()
for t in "${TARGETS[@]}"; do
  mkdir -p "$work/$t"
  cp -r "tests/fuzz/corpus/$t/." "$work/$t/"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  log=$work/$t.log
  start=$(date +%s)
  rc=0
  "$B/tests/fuzz/$t" "$work/$t" "${dict[@]}" "${seed[@]}" -max_total_time="$SECONDS_EACH" \
    -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-" >"$log" 2>&1 || rc=$?
  took=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1 || true)
  if [ "$rc" -eq 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; then
    printf 'fuzz: %-24s ok    %4ss  %s execs  %s\n' "$t" "$took" "${execs:-?}" "$cov"
  else
    printf 'fuzz: %-24s FAIL  %4ss  exit %s; the log ends:\n' "$t" "$took" "$rc"
    tail -60 "$log"
    for kept in "$artifacts/$t-"*; do if [ -e "$kept" ]; then echo "fuzz: input kept: $kept"; fi; done
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (reproduce: $B/tests/fuzz/TARGET $B/fuzz-artifacts/FILE)"
  exit 1
fi
