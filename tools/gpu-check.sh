#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2025-2026 The Napkin developers
# SPDX-License-Identifier: GPL-3.0-or-later
# GPU checks of napkin-probe, for a machine with an NVIDIA GPU (docs/probe.md, "Running the GPU checks").
# Configures a Release build with only the probe and its tests, builds, runs `ctest -L gpu` (and the
# `probe` label), then napkin-probe --quick and full, writing everything into $OUT (default
# build/gpu-check-out). Budget: about 8 minutes on a 16-core H100/H200 host (build ~2-4 min with one
# architecture, tests ~30 s, quick <= 10 s, full <= 60 s). Exit status: 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/build/gpu-check-out}
BUILD=${BUILD:-build/gpu-check}
mkdir -p "$OUT"
LOG="$OUT/gpu-check.log"
: >"$LOG"
status=0
step() { echo "[gpu-check $(date +%T)] $*" | tee -a "$LOG"; }
fail() { step "FAILED: $*"; status=1; }

nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || step "nvidia-smi not available"
# One architecture (the local GPU's) keeps the build short; CUDA_ARCH overrides it.
if [[ -z "${CUDA_ARCH:-}" ]]; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
    CUDA_ARCH=${cc:+${cc}-real}
    CUDA_ARCH=${CUDA_ARCH:-90-real}
fi
step "configure ($BUILD, CUDA architectures $CUDA_ARCH)"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
if ! cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DNAPKIN_BUILD_APP=OFF \
        -DNAPKIN_BUILD_PROBE=ON -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" >>"$LOG" 2>&1; then
    step "configure with tests failed (Qt 6 missing?); retrying without tests"
    cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DNAPKIN_BUILD_APP=OFF -DNAPKIN_BUILD_TESTS=OFF \
        -DNAPKIN_BUILD_PROBE=ON -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" >>"$LOG" 2>&1 || { fail configure; exit 1; }
fi
targets=(napkin-probe)
grep -q "tst_probegpu" "$BUILD"/tests/gpu/CTestTestfile.cmake 2>/dev/null && targets+=(tst_probehost tst_probecli tst_probegpu)
step "build ${targets[*]}"
cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}" >>"$LOG" 2>&1 || { fail build; exit 1; }
PROBE="$BUILD/gpu/napkin-probe"

if [[ ${#targets[@]} -gt 1 ]]; then
    step "ctest -L gpu"
    ctest --test-dir "$BUILD" -L gpu -V --timeout 180 >"$OUT/ctest-gpu.txt" 2>&1 || fail "ctest -L gpu"
    grep -E "PASS|FAIL|SKIP|Totals" "$OUT/ctest-gpu.txt" | tee -a "$LOG"
    step "ctest -L probe"
    ctest --test-dir "$BUILD" -L probe --output-on-failure --timeout 300 >"$OUT/ctest-probe.txt" 2>&1 || fail "ctest -L probe"
    tail -3 "$OUT/ctest-probe.txt" | tee -a "$LOG"
fi

step "napkin-probe --quick"
start=$(date +%s%N)
timeout 90 "$PROBE" --quick -o "$OUT/profile-quick.json" 2>"$OUT/probe-quick.stderr"
rc=$?
step "quick: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms wall; $(tail -1 "$OUT/probe-quick.stderr")"
[[ $rc -eq 0 ]] || fail "napkin-probe --quick"

step "napkin-probe (full)"
start=$(date +%s%N)
timeout 180 "$PROBE" -o "$OUT/profile-full.json" 2>"$OUT/probe-full.stderr"
rc=$?
step "full: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms wall; $(tail -1 "$OUT/probe-full.stderr")"
[[ $rc -eq 0 ]] || fail "napkin-probe (full)"

# Headline figures against the H200 reference (issue 4): 788 TFLOP/s bf16 at 8192^3 through PyTorch,
# 4.3 TB/s device-to-device copy counting bytes read + written.
if command -v python3 >/dev/null; then
    for f in "$OUT"/profile-quick.json "$OUT"/profile-full.json; do
        [[ -s $f ]] || continue
        python3 - "$f" <<'PY' | tee -a "$LOG"
import json, sys
p = json.load(open(sys.argv[1]))
print(f"{sys.argv[1]}: status {p['status']}, {p['probe']['elapsed_seconds']:.1f} s")
for d in p["devices"]:
    print(f"  device {d['index']}: {d['name']} cc {d['compute_capability']} {d['sms']} SMs")
    for r in d["results"]:
        ref = {"gemm_bf16": 788e12, "hbm_copy": 4.3e12, "memcpy_d2d": 4.3e12}.get(r["id"])
        share = f"  ({100 * r['best'] / ref:.1f}% of the H200 reference)" if ref else ""
        unit = 1e12
        print(f"    {r['id']:<14} best {r['best'] / unit:9.3f} T{r['unit']}  median {r['median'] / unit:9.3f}"
              f"  verified {r['verified']}{share}")
    for s in d["skipped"]:
        print(f"    skipped {s['id']}: {s['reason']}")
    for pt in d["points"]:
        if pt["series"] == "gemm_shapes":
            print(f"    shape {pt['dtype']:<9} {pt['label']:<24} {pt['flops'] / pt['seconds'] / 1e12:8.1f} TFLOP/s")
    for c in d.get("conditions", []):
        print(f"    during {c['step']:<22} SM {c['sm_clock_mhz']} MHz, {c['power_w']:.0f} W"
              f"{' (avg)' if c['power_averaged'] else ''}, {c['temperature_c']} C, {','.join(c['throttle']) or '-'}")
PY
    done
fi
step "done, status $status; files in $OUT"
exit $status
