#!/bin/bash
# Installs what ratchet needs (Debian 12), then builds it. Safe to run twice: installs
# only what is missing, rebuilds incrementally.
#   scripts/setup.sh            the demo's needs: build tools and libraries, the lab host's
#                               (systemd-nspawn, debootstrap); builds build/ratchet (plain
#                               optimized) and makes the lab rootfs
#   scripts/setup.sh package    also what scripts/package.sh needs (help2man, lintian, dpkg-dev)
#   scripts/setup.sh test       everything scripts/test.sh needs: the above, clang and its
#                               sanitizers, sshd, the shells, tools and Chromium the tests use
#                               (and npm ci in tests/report/browser)
#   SETUP_NO_BUILD=1 scripts/setup.sh ...   packages only (scripts/test.sh builds build-ci/ itself)
#   SETUP_NO_LAB=1 scripts/setup.sh ...     skip the lab rootfs (tests tagged [systemd] need it)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-demo}
case "$what" in demo|package|test) ;; *) echo "usage: scripts/setup.sh [demo|package|test]" >&2; exit 2 ;; esac

PACKAGES=(
  # build (build/ratchet: the demo's and the bench's)
  build-essential cmake ninja-build ccache pkg-config
  libssh-dev libcli11-dev libtomlplusplus-dev libfmt-dev nlohmann-json3-dev libssl-dev
  # the lab host (tests/lab/systemd-host.sh: systemd-nspawn, its rootfs, ssh to it)
  systemd-container debootstrap zstd openssh-client util-linux
)
if [ "$what" = package ] || [ "$what" = test ]; then
  PACKAGES+=(
    # the Debian package (scripts/package.sh): its man page from the binary's help, lintian
    help2man lintian dpkg-dev
  )
fi
if [ "$what" = test ]; then
  PACKAGES+=(
    # the unit tests (Catch2 v2); real sshd hosts on 127.0.0.1 and the tools the tests look with
    catch2 openssh-server psmisc procps iproute2
    # the host library is tested with BusyBox's tools too (no GNU find -printf); shellcheck lints it
    busybox-static shellcheck
    # R25: the keepalive test drops packets in a network namespace of its own
    iptables
    # R26: write keeps a file's POSIX ACL and extended attributes (getfacl/setfacl, getfattr/setfattr)
    acl attr
    # login shells a lab's users really have: the exec request and every kind are tested under each
    zsh fish tcsh csh mksh
    # the live-progress test drives ratchet in a tmux pane (a pseudo-terminal)
    tmux
    # scripts/test.sh builds build-ci/ with clang, ASan + UBSan and the libFuzzer targets:
    # clang, its sanitizer and libFuzzer runtimes, and llvm-symbolizer for readable reports
    clang libclang-rt-14-dev llvm
    # the HTML report is checked in headless Chromium (tests/e2e/report_test.cc, via puppeteer-core)
    chromium
  )
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ "$what" = test ]; then
  # node and npm drive Chromium for the report test; a nodejs from elsewhere (with its own npm) will do.
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# puppeteer-core and @taplo/cli (pinned in tests/report/browser/package-lock.json) into
# its gitignored node_modules; again only when the lock file changed. puppeteer drives
# /usr/bin/chromium and downloads no browser of its own; taplo checks playbooks against
# `ratchet schema` (tests/cli/schema_test.cc).
browser=tests/report/browser
if [ "$what" = test ] && ! cmp -s "$browser/package-lock.json" "$browser/node_modules/.ratchet-installed-lock"; then
  echo "setup: npm ci in $browser"
  (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$browser/package-lock.json" "$browser/node_modules/.ratchet-installed-lock"
fi

if [ "${SETUP_NO_BUILD:-0}" != 1 ]; then
  # The tool alone, no test target (the tests build in build-ci/ with clang: scripts/test.sh).
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
  cmake --build build -j"$(nproc)" --target ratchet
fi

# The rootfs of the real systemd lab host (tests/lab/systemd-host.sh): instant when it is
# there, ~5 s from the cached tarball, 2-3 min with debootstrap the first time.
if [ "${SETUP_NO_LAB:-0}" != 1 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO tests/lab/systemd-host.sh ensure
fi
