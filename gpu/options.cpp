// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace napkin::gpu {

namespace {

bool parseInt(const std::string& s, int& out)
{
    if (s.empty())
        return false;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < 0 || v > 1024)
        return false;
    out = static_cast<int>(v);
    return true;
}

bool parseSeconds(const std::string& s, double& out)
{
    if (s.empty())
        return false;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (*end != '\0' || !std::isfinite(v) || v < 1 || v > 3600)
        return false;
    out = v;
    return true;
}

} // namespace

bool parseOptions(const std::vector<std::string>& args, Options& o, std::string& error)
{
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](std::string& v) {
            if (i + 1 >= args.size()) {
                error = a + " needs a value";
                return false;
            }
            v = args[++i];
            return true;
        };
        std::string v;
        if (a == "--quick")
            o.quick = true;
        else if (a == "--full")
            o.quick = false;
        else if (a == "-o" || a == "--output") {
            if (!value(o.output))
                return false;
            if (o.output.empty()) {
                error = a + ": the file name is empty";
                return false;
            }
        } else if (a == "--device") {
            if (!value(v))
                return false;
            if (!parseInt(v, o.device)) {
                error = "--device: '" + v + "' is not a device index (0 to 1024)";
                return false;
            }
        } else if (a == "--all-devices")
            o.allDevices = true;
        else if (a == "--list")
            o.list = true;
        else if (a == "--no-progress")
            o.progress = false;
        else if (a == "--time-limit") {
            if (!value(v))
                return false;
            if (!parseSeconds(v, o.timeLimitSeconds)) {
                error = "--time-limit: '" + v + "' is not a number of seconds from 1 to 3600";
                return false;
            }
        } else if (a == "--soak") {
            if (!value(v))
                return false;
            if (!parseSeconds(v, o.soakSeconds)) {
                error = "--soak: '" + v + "' is not a number of seconds from 1 to 3600";
                return false;
            }
        } else if (a == "-h" || a == "--help")
            o.help = true;
        else if (a == "--version")
            o.version = true;
        else {
            error = "unknown option '" + a + "' (see napkin-probe --help)";
            return false;
        }
    }
    return true;
}

std::string usageText()
{
    return "Usage: napkin-probe [--quick|--full] [-o FILE] [--device N | --all-devices] [--list]\n"
           "                    [--time-limit SECONDS] [--soak SECONDS] [--no-progress]\n"
           "\n"
           "Measures the local GPU (memory bandwidth, cuBLASLt GEMM peaks per dtype, CUDA-core FMA peak,\n"
           "roofline points, host links, NCCL all-reduce) and writes a napkin.calibration/2 profile\n"
           "(docs/calibration-schema.md) to stdout or FILE. Progress goes to stderr as JSON lines.\n"
           "\n"
           "  --quick            8192^3 GEMMs only and fewer samples (about 10 s on an H100)\n"
           "  --full             the whole suite, at most 60 s (default)\n"
           "  -o, --output FILE  write the profile to FILE (atomically) instead of stdout\n"
           "  --device N         measure CUDA device N (default 0)\n"
           "  --all-devices      measure every device in turn (run time multiplies)\n"
           "  --list             record the devices' identities, measure nothing\n"
           "  --time-limit S     overall time cap in seconds (default 10 quick, 60 full)\n"
           "  --soak S           run bf16 GEMMs for S seconds before measuring GEMMs, so they are\n"
           "                     measured at the clock a long training run holds (not in the cap)\n"
           "  --no-progress      no progress lines on stderr\n"
           "  --version          print the version\n"
           "\n"
           "Exit status: 0 measured; 3 no usable GPU (no driver, driver too old, no device, no kernel\n"
           "image for this GPU, device busy: the profile's status says which); 2 usage error;\n"
           "1 internal or I/O error. See docs/probe.md.\n";
}

double timeCapSeconds(const Options& o)
{
    if (o.timeLimitSeconds > 0)
        return o.timeLimitSeconds;
    return o.quick ? 10.0 : 60.0;
}

} // namespace napkin::gpu
