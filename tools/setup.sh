#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2025-2026 The Napkin developers
# SPDX-License-Identifier: GPL-3.0-or-later
# Napkin quick start, step 1: install what is missing (Debian 12 packages), build the release
# preset, and open the desktop app on the built-in default scenario. Without a display it prints
# the default plan with napkin-cli and renders the window to build/release/napkin-default.png.
#   tools/setup.sh            install, build, run
#   tools/setup.sh --deps     install only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build pkgconf qt6-base-dev libqcustomplot-dev nlohmann-json3-dev libfmt-dev libcli11-dev
          qt6-svg-dev xvfb xauth poppler-utils clang libclang-rt-14-dev locales-all
          clang-tidy clang-format clazy desktop-file-utils appstream dpkg-dev file)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "napkin setup: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "${1:-}" = "--deps" ] && exit 0

cmake --workflow --preset release >/dev/null
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${1:-}" != "--headless" ]; then
    exec build/release/app/gui/napkin
fi
build/release/app/cli/napkin-cli plan
build/release/app/gui/napkin --screenshot build/release/napkin-default.png --size 1280x800 2>/dev/null &&
    echo "window rendered to build/release/napkin-default.png (no display found)"
