#!/bin/bash
# Builds the Debian package (cmake/Packaging.cmake; README.md, "Install") in build-pkg/:
# a Release build with Debian's hardening flags (dpkg-buildflags), `cpack -G DEB`, and
# lintian, which must report no error. With PACKAGE_TEST=1 it then installs the .deb
# (dpkg -i), checks what a user gets, and removes it again (dpkg -r), even on failure:
# `ratchet --version`, `man -w ratchet`, and bash completing a host name of an inventory.
#   scripts/package.sh                 build-pkg/ratchet_VERSION_ARCH.deb
#   PACKAGE_TEST=1 scripts/package.sh  as CI does (scripts/test.sh): as root
set -euo pipefail
cd "$(dirname "$0")/.."
SETUP_NO_BUILD=1 SETUP_NO_LAB=1 scripts/setup.sh package  # help2man, lintian, dpkg-dev, the build's
B=build-pkg
cxxflags="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DRATCHET_PACKAGE=ON \
  -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$(dpkg-buildflags --get LDFLAGS)" >/dev/null
cmake --build "$B" -j"${PACKAGE_JOBS:-$(nproc)}"
version=$(sed -n 's/^project(ratchet VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
top=$(dpkg-parsechangelog -l packaging/changelog -S Version)
[ "$top" = "$version" ] || { echo "package: packaging/changelog's top entry is $top, the project is $version: add an entry"; exit 1; }
rm -f "$B"/ratchet_*.deb
(cd "$B" && cpack -G DEB >/dev/null)
deb=$(echo "$B"/ratchet_"$version"_*.deb)
echo "package: $deb ($(du -k "$deb" | cut -f1) KiB)"
lintian --fail-on error "$deb" | sed 's/^/package: lintian: /'
[ "${PACKAGE_TEST:-0}" = 1 ] || exit 0

dpkg -i "$deb" >/dev/null
trap 'dpkg -r ratchet >/dev/null' EXIT
got=$(/usr/bin/ratchet --version)
[ "$got" = "$version" ] || { echo "package: ratchet --version says '$got', not $version"; exit 1; }
man -w ratchet | grep -qx /usr/share/man/man1/ratchet.1.gz || { echo "package: man -w ratchet: $(man -w ratchet 2>&1)"; exit 1; }
# bash's completion function, driven as bash drives it: COMP_WORDS and COMP_CWORD.
# shellcheck disable=SC2016
reply=$(cd examples && bash -c 'source /usr/share/bash-completion/completions/ratchet
  COMP_WORDS=(ratchet run ../playbooks/gpu-release.toml -i inventory.toml --limit gpu-box-)
  COMP_CWORD=6; _ratchet; printf "%s\n" "${COMPREPLY[@]}"')
[ "$reply" = $'gpu-box-2' ] || { echo "package: bash completed --limit gpu-box- to '$reply', not gpu-box-2"; exit 1; }
echo "package: installed, ratchet --version, man -w ratchet and bash completion ok; removed"
