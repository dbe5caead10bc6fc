// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// A stand-in for napkin-probe in the app tests (NAPKIN_PROBE points here). FAKE_PROBE_MODE picks
// the behaviour: good (progress lines, then the profile in FAKE_PROBE_PROFILE on stdout, exit 0),
// crash (abort after one progress line), hang (progress, then sleep), garbage (not JSON, exit 0),
// no_driver (the probe's no_driver document, exit 3, as docs/probe.md says), slow (progress every
// 50 ms for 30 s: for Cancel).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

namespace {

void progress(int step, int of, const char* id)
{
    std::fprintf(stderr, "{\"event\":\"progress\",\"step\":%d,\"of\":%d,\"id\":\"%s\",\"fraction\":%.4f}\n", step, of,
                 id, double(step) / of);
    std::fflush(stderr);
}

void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

} // namespace

int main()
{
    const char* env = std::getenv("FAKE_PROBE_MODE");
    const std::string mode = env ? env : "good";
    if (mode == "good") {
        const char* ids[] = {"hbm", "gemm", "gemm_m_sweep", "intensity_sweep"};
        for (int i = 0; i < 4; ++i) {
            progress(i, 4, ids[i]);
            sleepMs(30);
        }
        const char* file = std::getenv("FAKE_PROBE_PROFILE");
        std::ifstream in(file ? file : "");
        if (!in) {
            std::fprintf(stderr, "fake_probe: FAKE_PROBE_PROFILE not readable\n");
            return 1;
        }
        std::ostringstream s;
        s << in.rdbuf();
        std::cout << s.str();
        progress(4, 4, "done");
        return 0;
    }
    if (mode == "crash") {
        progress(1, 4, "hbm");
        std::fprintf(stderr, "fake_probe: about to crash\n");
        std::fflush(stderr);
        std::abort();
    }
    if (mode == "hang") {
        progress(1, 4, "hbm");
        sleepMs(600000);
        return 0;
    }
    if (mode == "garbage") {
        std::cout << "Segmentation fault? no: this is not a profile {\n";
        return 0;
    }
    if (mode == "no_driver") {
        std::cout
            << R"({"schema":"napkin.calibration/1","status":"no_driver","message":"No NVIDIA driver found: install the driver (>= 580 for CUDA 13), then run napkin-probe again.","probe":{"version":"0.1.0","mode":"quick","started_utc":"2026-03-02T10:14:07Z","elapsed_seconds":0.01},"runtime_version":13000,"driver_version":0,"libraries":{"cublaslt":{"loaded":false,"version":0,"error":"not loaded"},"nccl":{"loaded":false,"version":0,"error":"not loaded"}},"devices":[],"links":[]})"
            << "\n";
        std::fprintf(stderr, "napkin-probe: no_driver: No NVIDIA driver found\n");
        return 3;
    }
    if (mode == "slow") {
        for (int i = 0; i < 600; ++i) {
            progress(i, 600, "slow");
            sleepMs(50);
        }
        return 0;
    }
    std::fprintf(stderr, "fake_probe: unknown FAKE_PROBE_MODE %s\n", mode.c_str());
    return 2;
}
