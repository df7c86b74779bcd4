#!/bin/bash
# Stages, HERE (Debian 12, x86-64), what tests/gpu/run-on-gpu.sh needs on the GPU
# machine, under tests/gpu/.stage/ (gitignored; carry it: `carry: ["tests/gpu/.stage"]`):
#   bin/sshd, bin/ssh-keygen  unpacked from Debian's openssh-server / openssh-client .debs
#                             (apt-get download: the debs stay in debs/ for provenance)
#   bin/ratchet               built here from the committed HEAD (a `git archive` export in
#                             /tmp/ratchet-gpu-src-REV, so half-made edits in the working tree
#                             stay out), stripped; BUILD_DIR=DIR takes DIR/ratchet instead
#   lib/                      every shared library those three need except glibc's own
#                             (libc, libm, libresolv, ld-linux): the GPU machine's glibc
#                             is used, which must be at least this machine's (2.36)
#   MANIFEST                  what was staged: deb versions and sha256, ratchet's commit
#
#   tests/gpu/stage.sh        (the build takes minutes; it is reused; STAGE_JOBS=N for N
#                             parallel jobs, default 1)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
S=$root/tests/gpu/.stage
rev=$(git rev-parse --short HEAD)
if [ -n "${BUILD_DIR:-}" ]; then
  build=$BUILD_DIR; from="$build (working tree as built)"
else
  src=/tmp/ratchet-gpu-src-$rev; build=$src/build-gpu; from="commit $rev (git archive, clean)"
  if [ ! -x "$build/ratchet" ]; then
    rm -rf "$src"; mkdir -p "$src"; git archive HEAD | tar -x -C "$src"
    cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    ninja -C "$build" -j"${STAGE_JOBS:-1}" ratchet   # one job by default: a shared build machine
  fi
fi
[ -x "$build/ratchet" ] || { echo "stage: $build/ratchet missing" >&2; exit 1; }

rm -rf "$S"
mkdir -p "$S/debs" "$S/unpacked" "$S/bin" "$S/lib"
(cd "$S/debs" && apt-get download openssh-server openssh-client 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
ls "$S"/debs/openssh-server_*.deb "$S"/debs/openssh-client_*.deb >/dev/null
for d in "$S"/debs/*.deb; do dpkg-deb -x "$d" "$S/unpacked"; done
cp "$S/unpacked/usr/sbin/sshd" "$S/unpacked/usr/bin/ssh-keygen" "$S/bin/"
rm -rf "$S/unpacked"
strip -o "$S/bin/ratchet" "$build/ratchet"

# Shared libraries, resolved here; glibc's own stay behind.
for b in "$S"/bin/*; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
  while read -r lib; do
    case "${lib##*/}" in libc.so.*|libm.so.*|libresolv.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) continue;; esac
    cp -L "$lib" "$S/lib/"
  done
for b in "$S"/bin/*; do
  if LD_LIBRARY_PATH=$S/lib ldd "$b" | grep -q 'not found'; then echo "stage: $b: a library is missing" >&2; exit 1; fi
done

{
  echo "staged $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release; echo "$PRETTY_NAME") $(uname -m), glibc $(getconf GNU_LIBC_VERSION | cut -d' ' -f2)"
  echo "ratchet $("$S/bin/ratchet" --version) built from $from"
  for d in "$S"/debs/*.deb; do echo "deb $(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version) sha256 $(sha256sum < "$d" | cut -d' ' -f1)"; done
  echo "libs: $(cd "$S/lib" && ls | tr '\n' ' ')"
} > "$S/MANIFEST"
cat "$S/MANIFEST"
du -sh "$S"
