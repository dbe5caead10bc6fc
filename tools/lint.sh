#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2025-2026 The Napkin developers
# SPDX-License-Identifier: GPL-3.0-or-later
# Static analysis: clang-tidy (the checks in .clang-tidy) over every .cpp in core/, app/ and gpu/,
# clazy (Qt-specific checks) over app/, and clang-format --dry-run (.clang-format) over every C++ and
# CUDA source in core/, app/, gpu/ and tests/. Fails on any finding; prints a summary at the end.
#   tools/lint.sh [BUILD_DIR]     BUILD_DIR (default build/dev) holds compile_commands.json and the
#                                 generated moc files: build it first (cmake --workflow --preset dev).
# Environment: NAPKIN_LINT_JOBS (default 2) parallel jobs; CLANG_TIDY, RUN_CLANG_TIDY, CLAZY and
# CLANG_FORMAT override the tools. CUDA sources (.cu) are not linted; gpu/ files are linted when the build compiled them
# (nvcc found), and skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
build=${1:-build/dev}
build=$(cd "$build" 2>/dev/null && pwd -P) || { echo "lint: no build directory ${1:-build/dev}" >&2; exit 2; }
db="$build/compile_commands.json"
[ -f "$db" ] || { echo "lint: $db missing: configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON" >&2; exit 2; }
jobs=${NAPKIN_LINT_JOBS:-2}
tidy=${CLANG_TIDY:-clang-tidy}
runtidy=${RUN_CLANG_TIDY:-run-clang-tidy}
clazy=${CLAZY:-clazy-standalone}
fmt=${CLANG_FORMAT:-clang-format}
for t in "$tidy" "$clazy" "$fmt"; do
    command -v "$t" >/dev/null || { echo "lint: $t not found (tools/setup.sh --deps installs it)" >&2; exit 2; }
done

# clazy: all of level0 (no false positives by design) and the level1 checks that find bugs or
# needless copies/detaches in Qt code: lambdas connected without a context object, range-for over a
# detaching Qt container, emit on a non-signal, data() of a temporary, a QObject base call skipped.
clazy_checks=level0,connect-3arg-lambda,range-loop-detach,detaching-temporary,incorrect-emit,returning-data-from-temporary,skipped-base-method,const-signal-or-slot,overridden-signal,virtual-signal,qdeleteall,qproperty-without-notify,non-pod-global-static

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The files: every .cpp under core/, app/, gpu/ (sorted), split into those the compile database
# knows and those it does not.
python3 - "$db" "$root" "$work" <<'EOF'
import json, os, sys
db, root, work = sys.argv[1:]
known = {os.path.realpath(os.path.join(e["directory"], e["file"])) for e in json.load(open(db))}
lint, skipped = [], []
for top in ("core", "app", "gpu"):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if f.endswith(".cpp"):
                p = os.path.realpath(os.path.join(d, f))
                (lint if p in known else skipped).append(p)
lint.sort(); skipped.sort()
open(os.path.join(work, "tidy.txt"), "w").write("".join(p + "\n" for p in lint))
open(os.path.join(work, "clazy.txt"), "w").write(
    "".join(p + "\n" for p in lint if p.startswith(os.path.join(root, "app") + os.sep)))
open(os.path.join(work, "skipped.txt"), "w").write("".join(p + "\n" for p in skipped))
EOF

nvcc_found=0
grep -q '"file": *"[^"]*\.cu"' "$db" && nvcc_found=1
unexpected=$(grep -v "^$root/gpu/" "$work/skipped.txt" || true)
if [ -n "$unexpected" ]; then
    echo "lint: not in $db (a file no target builds, or a stale build directory):" >&2
    sed 's/^/  /' <<<"$unexpected" >&2
fi

# clang-tidy 14 does not know every GCC warning flag in the database (-Wno-error=restrict).
extra=(-extra-arg=-Wno-unknown-warning-option)
header_filter="^$root/(core|gpu|app/[a-z]+)/[^/]+\.h\$"
start=$(date +%s)
tidy_rc=0
echo "lint: clang-tidy over $(wc -l <"$work/tidy.txt") files, $jobs jobs" >&2
if command -v "$runtidy" >/dev/null; then
    # run-clang-tidy takes regexes: one anchored alternative per file.
    mapfile -t files <"$work/tidy.txt"
    regex="^($(printf '%s\n' "${files[@]}" | sed 's/[.+]/\\&/g' | paste -sd'|'))\$"
    "$runtidy" -quiet -j "$jobs" -p "$build" -clang-tidy-binary "$(command -v "$tidy")" \
        -header-filter "$header_filter" "${extra[@]}" "$regex" >"$work/tidy.log" 2>&1 || tidy_rc=$?
else
    xargs -P "$jobs" -n 1 "$tidy" --quiet -p "$build" --header-filter="$header_filter" \
        --extra-arg=-Wno-unknown-warning-option <"$work/tidy.txt" >"$work/tidy.log" 2>&1 || tidy_rc=$?
fi
tidy_s=$(($(date +%s) - start))
# run-clang-tidy 14 always passes --use-color: drop the escape sequences before reading the log.
sed -i -E 's/\x1b\[[0-9;]*m//g' "$work/tidy.log"

start=$(date +%s)
clazy_rc=0
echo "lint: clazy over $(wc -l <"$work/clazy.txt") app files, $jobs jobs" >&2
if [ -s "$work/clazy.txt" ]; then
    xargs -P "$jobs" -n 1 "$clazy" -p "$build" --checks="$clazy_checks" --header-filter="^$root/app/" \
        --ignore-dirs="^($build|/usr)/" --extra-arg=-Wno-unknown-warning-option <"$work/clazy.txt" \
        >"$work/clazy.log" 2>&1 || clazy_rc=$?
else
    : >"$work/clazy.log"
fi
clazy_s=$(($(date +%s) - start))

# The layout: .clang-format over every C++ and CUDA source (seconds).
find core app gpu tests \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' \) -print0 | sort -z |
    xargs -0 "$fmt" --dry-run 2>&1 | grep -E '^[^ ].*: (warning|error): code should be clang-formatted' |
    sed -E 's/:[0-9]+:[0-9]+: .*//' | sort | uniq -c | awk '{print $2 ": " $1 " places to reformat"}' \
    >"$work/format.findings" || true

# Findings: "path:line:col: warning|error: message [check]", each once (a header's finding repeats
# in every file that includes it). Compiler errors count as findings too: the code must parse.
finding='^/[^:]+:[0-9]+:[0-9]+: (warning|error): '
grep -E "$finding" "$work/tidy.log" | grep -v 'clang-diagnostic-unknown-warning-option' |
    sed -E 's/,-warnings-as-errors\]$/]/' | sort -t: -k1,1 -k2,2n -k3,3n | uniq >"$work/tidy.findings" || true
grep -E "$finding" "$work/clazy.log" | grep -E '\[-Wclazy-|error:' | sort -t: -k1,1 -k2,2n -k3,3n | uniq \
    >"$work/clazy.findings" || true

# A tool that failed without a finding to show for it (a crash, a bad configuration) must not read
# as a clean run.
failed=0
for tool in tidy clazy; do
    rc_var=${tool}_rc
    if [ "${!rc_var}" -ne 0 ] && [ ! -s "$work/$tool.findings" ]; then
        echo "lint: ${tool/tidy/clang-tidy} failed (exit ${!rc_var}) with no finding; the end of its log:" >&2
        grep -vE '^[0-9]+ warnings? generated\.$|^Suppressed |^Use -header-filter|^/usr/bin/clang-tidy ' \
            "$work/$tool.log" | tail -20 >&2
        failed=1
    fi
done

for tool in tidy clazy format; do
    if [ -s "$work/$tool.findings" ]; then
        echo
        name=${tool/tidy/clang-tidy}
        echo "== ${name/format/clang-format} findings"
        sed "s|^$root/||" "$work/$tool.findings"
    fi
done
tidy_n=$(wc -l <"$work/tidy.findings")
clazy_n=$(wc -l <"$work/clazy.findings")
echo
echo "== lint summary"
echo "clang-tidy: $(wc -l <"$work/tidy.txt") files, $tidy_n findings, ${tidy_s} s"
if [ "$tidy_n" -gt 0 ]; then
    grep -oE '\[[a-z0-9.,-]+\]$' "$work/tidy.findings" | sort | uniq -c | sort -rn | sed 's/^/  /'
fi
echo "clazy:      $(wc -l <"$work/clazy.txt") files, $clazy_n findings, ${clazy_s} s"
if [ "$clazy_n" -gt 0 ]; then
    grep -oE '\[-Wclazy-[a-z0-9-]+\]$' "$work/clazy.findings" | sort | uniq -c | sort -rn | sed 's/^/  /'
fi
format_n=$(wc -l <"$work/format.findings")
echo "clang-format: $format_n files to reformat (clang-format -i FILE...)"
gpu_skipped=$(grep -c "^$root/gpu/" "$work/skipped.txt" || true)
if [ "$gpu_skipped" -gt 0 ]; then
    if [ "$nvcc_found" -eq 1 ]; then
        echo "gpu/:       $gpu_skipped .cpp files not in the compile database"
    else
        echo "gpu/:       $gpu_skipped .cpp files skipped (nvcc not found: the probe is not built)"
    fi
fi
[ -n "$unexpected" ] && echo "not linted: $(wc -l <<<"$unexpected") files outside the compile database (listed above)"
if [ "$failed" -ne 0 ] || [ "$tidy_n" -gt 0 ] || [ "$clazy_n" -gt 0 ] || [ "$format_n" -gt 0 ]; then
    echo "lint: FAILED"
    exit 1
fi
echo "lint: clean"
