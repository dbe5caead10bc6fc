#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2025-2026 The Napkin developers
# SPDX-License-Identifier: GPL-3.0-or-later
# Checks that a configured and built tree installs like Linux desktop software and packs into a
# working .deb (cmake/Packaging.cmake, resources/desktop/).
#   tools/package-check.sh BUILD_DIR          e.g. tools/package-check.sh build/dev
# 1. cmake --install into a temporary prefix: the executables, the desktop entry, the icons (SVG and
#    PNGs of the size their folder names), the AppStream metainfo, the MIME type, the man page and
#    the Debian copyright file are where the platform looks for them; desktop-file-validate and
#    appstreamcli validate --no-net pass on the installed files.
# 2. cpack -G DEB (into a temporary folder, not BUILD_DIR): dpkg-deb -c lists the same files under
#    /usr; the Depends line names libqt6widgets6 and libqcustomplot and no CUDA or NVIDIA package;
#    every executable in the unpacked package resolves all its libraries (ldd says no "not found");
#    appstreamcli validate-tree accepts the unpacked tree (metainfo, desktop entry and icon agree);
#    the metainfo has a <release> for the package's version.
# napkin-report and napkin-probe are expected only where BUILD_DIR has built them. Exit status 0 when
# everything passed, 1 on the first failure (with the reason), 2 on a usage error.
set -euo pipefail

APP_ID=io.github.napkin_llm.Napkin
ICON_SIZES=(16 32 48 64 128 256)

fail() { echo "package-check: FAILED: $*" >&2; exit 1; }
ok() { echo "package-check: ok: $*"; }

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
[ -f "$1/CMakeCache.txt" ] || { echo "package-check: $1 is not a configured CMake build directory" >&2; exit 2; }
build=$(cd "$1" && pwd)

for tool in cmake cpack dpkg-deb dpkg-shlibdeps desktop-file-validate appstreamcli file ldd; do
    command -v "$tool" >/dev/null ||
        fail "$tool is not installed (tools/setup.sh --deps installs cmake, dpkg-dev, desktop-file-utils, appstream, file)"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The files every install has, relative to the prefix; the helpers only where they were built.
expected=(
    bin/napkin
    bin/napkin-cli
    "share/applications/$APP_ID.desktop"
    "share/metainfo/$APP_ID.metainfo.xml"
    "share/mime/packages/$APP_ID.xml"
    "share/icons/hicolor/scalable/apps/$APP_ID.svg"
    share/man/man1/napkin-cli.1
    share/doc/napkin/copyright
)
for s in "${ICON_SIZES[@]}"; do
    expected+=("share/icons/hicolor/${s}x${s}/apps/$APP_ID.png")
done
executables=(bin/napkin bin/napkin-cli)
if [ -e "$build/app/report/napkin-report" ]; then
    expected+=(libexec/napkin/napkin-report)
    executables+=(libexec/napkin/napkin-report)
else
    echo "package-check: note: $build/app/report/napkin-report is not built: not expected"
fi
if [ -e "$build/gpu/napkin-probe" ]; then
    expected+=(libexec/napkin/napkin-probe)
    executables+=(libexec/napkin/napkin-probe)
else
    echo "package-check: note: $build/gpu/napkin-probe is not built (no nvcc): not expected"
fi

# --- 1. cmake --install -------------------------------------------------------------------------
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; fail "cmake --install $build failed"; }
for f in "${expected[@]}"; do
    [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
for f in "${executables[@]}"; do
    [ -x "$prefix/$f" ] || fail "$f is installed without execute permission"
done
for s in "${ICON_SIZES[@]}"; do
    f=share/icons/hicolor/${s}x${s}/apps/$APP_ID.png
    file -b "$prefix/$f" | grep -q "^PNG image data, $s x $s," ||
        fail "$f is not a ${s}x${s} PNG: $(file -b "$prefix/$f")"
done
# Anything else (a dependency's headers, a static library) would be packed too: say so.
(cd "$prefix" && find . -type f | sed 's|^\./||' | sort) >"$work/installed.txt"
printf '%s\n' "${expected[@]}" | sort >"$work/expected.txt"
extra=$(comm -23 "$work/installed.txt" "$work/expected.txt")
[ -z "$extra" ] || echo "package-check: note: also installed (not checked): $(echo "$extra" | tr '\n' ' ')"
ok "cmake --install: ${#expected[@]} expected files"

desktop-file-validate "$prefix/share/applications/$APP_ID.desktop" ||
    fail "desktop-file-validate share/applications/$APP_ID.desktop"
ok "desktop-file-validate share/applications/$APP_ID.desktop"
appstreamcli validate --no-net "$prefix/share/metainfo/$APP_ID.metainfo.xml" ||
    fail "appstreamcli validate --no-net share/metainfo/$APP_ID.metainfo.xml"
ok "appstreamcli validate --no-net share/metainfo/$APP_ID.metainfo.xml"

# --- 2. cpack -G DEB ----------------------------------------------------------------------------
(cd "$build" && cpack -G DEB -B "$work/cpack") >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log" >&2; fail "cpack -G DEB in $build failed"; }
debs=("$work"/cpack/*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
    cat "$work/cpack.log" >&2
    fail "cpack made no single .deb"
fi
deb=${debs[0]}
ok "cpack -G DEB: $(basename "$deb")"

# A version bump needs its release notes in the metainfo, which software centres show.
version=$(dpkg-deb -f "$deb" Version)
grep -q "<release version=\"$version\"" "$prefix/share/metainfo/$APP_ID.metainfo.xml" ||
    fail "the metainfo has no <release version=\"$version\"> (resources/desktop/$APP_ID.metainfo.xml)"
ok "the metainfo describes release $version"

dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./||' >"$work/contents.txt"
for f in "${expected[@]}"; do
    grep -qxF "usr/$f" "$work/contents.txt" || fail "the .deb does not contain /usr/$f"
done
ok "dpkg-deb -c: every expected file under /usr"

depends=$(dpkg-deb -f "$deb" Depends)
echo "package-check: Depends: $depends"
[ -n "$depends" ] || fail "the .deb has no Depends line (dpkg-shlibdeps did not run?)"
for p in libqt6widgets6 libqcustomplot; do
    grep -q "\b$p" <<<"$depends" || fail "Depends does not name $p"
done
if grep -Eiq 'cuda|nvidia|libcublas|libnccl' <<<"$depends"; then
    fail "Depends names a CUDA or NVIDIA package; napkin-probe must need only the driver"
fi
ok "Depends: libqt6widgets6 and libqcustomplot, no CUDA/NVIDIA package"

root=$work/root
dpkg-deb -x "$deb" "$root"
for f in "${executables[@]}"; do
    ldd "$root/usr/$f" >"$work/ldd.txt" 2>&1 || { cat "$work/ldd.txt" >&2; fail "ldd /usr/$f failed"; }
    if grep -q "not found" "$work/ldd.txt"; then
        grep "not found" "$work/ldd.txt" >&2
        fail "/usr/$f needs a library that is not installed"
    fi
done
ok "ldd: every library of ${executables[*]} resolves"

appstreamcli validate-tree --no-net "$root" || fail "appstreamcli validate-tree on the unpacked .deb"
ok "appstreamcli validate-tree on the unpacked .deb"

echo "package-check: passed ($(basename "$deb"))"
