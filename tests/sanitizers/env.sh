# Sourced by scripts/test.sh and scripts/fuzz.sh: how the ASan/UBSan/LSan runtimes
# of a RATCHET_SANITIZE build behave. Stop at the first report, with a stack.
# Leak checking stays on (detect_leaks=1); lsan.supp beside this file lists the
# only leaks that are ignored, each with its reason.
# exitcode=86: a sanitizer report never looks like one of ratchet's own exit codes
# (a test expecting "1: a step failed" must not pass on an ASan abort).
_san_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=86:detect_leaks=1:check_initialization_order=1${ASAN_EXTRA:+:$ASAN_EXTRA}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86${UBSAN_EXTRA:+:$UBSAN_EXTRA}"
export LSAN_OPTIONS="suppressions=$_san_dir/lsan.supp:print_suppressions=0"
unset _san_dir
