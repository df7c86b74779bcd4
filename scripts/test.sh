#!/bin/bash
# Sets up (packages, build, lab rootfs) and runs every test: unit tests, tests
# against a real sshd on 127.0.0.1, and end-to-end tests on a real systemd host.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -j2 "$@"
