#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2025-2026 The Napkin developers
# SPDX-License-Identifier: GPL-3.0-or-later
# Fuzz napkin's loaders with libFuzzer under ASan + UBSan.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
# Targets: fuzz_scenario fuzz_hf_config fuzz_catalog fuzz_set fuzz_quantity fuzz_calibration. Crashing inputs land
# in build/fuzz/artifacts/; each run's last status line is printed (runs, coverage, corpus).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_scenario fuzz_hf_config fuzz_catalog fuzz_set fuzz_quantity fuzz_calibration)

if [ -z "${NAPKIN_FUZZ_NOBUILD:-}" ]; then  # set it to run several fuzz.sh at once on one build
    cmake --preset fuzz >/dev/null
    cmake --build --preset fuzz >/dev/null
fi
mkdir -p build/fuzz/artifacts
status=0
for t in "${targets[@]}"; do
    seeds=tests/fuzz/corpus/${t#fuzz_}
    work=build/fuzz/corpus-${t#fuzz_}
    mkdir -p "$work"
    log=build/fuzz/$t.log
    if build/fuzz/tests/fuzz/$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/$t- "$work" "$seeds" >"$log" 2>&1; then
        echo "$t: $(grep -E '^Done [0-9]+ runs' "$log" | tail -1) $(grep -E 'cov:' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9a-zA-Z]+')"
    else
        echo "$t: FAILED, see $log and build/fuzz/artifacts/"
        status=1
    fi
done
exit $status
