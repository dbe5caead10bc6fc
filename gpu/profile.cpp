// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "profile.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace napkin::gpu {

using Json = nlohmann::ordered_json;

namespace {

Json library(const LibraryInfo& l) { return Json{{"loaded", l.loaded}, {"version", l.version}, {"error", l.error}}; }

Json result(const Result& r)
{
    Json size = Json::object();
    for (const auto& [k, v] : r.size)
        size[k] = v;
    return Json{{"id", r.id},
                {"kind", r.kind},
                {"unit", r.kind == "flops" ? "FLOP/s" : "B/s"},
                {"dtype", r.dtype},
                {"best", r.stats.best},
                {"median", r.stats.median},
                {"samples", r.stats.samples},
                {"size", size},
                {"size_bytes", r.sizeBytes},
                {"bytes_counted", r.bytesCounted},
                {"verified", r.verified},
                {"max_rel_err", r.maxRelErr},
                {"detail", r.detail}};
}

Json device(const DeviceReport& d)
{
    Json results = Json::array();
    for (const Result& r : d.results)
        results.push_back(result(r));
    Json points = Json::array();
    for (const Point& p : d.points) {
        Json j{{"series", p.series}, {"label", p.label}, {"dtype", p.dtype},
               {"flops", p.flops},   {"bytes", p.bytes}, {"seconds", p.seconds}};
        if (p.m > 0)
            j["size"] = Json{{"m", p.m}, {"n", p.n}, {"k", p.k}};
        points.push_back(j);
    }
    Json conditions = Json::array();
    for (const Conditions& c : d.conditions)
        conditions.push_back(Json{{"step", c.step},
                                  {"sm_clock_mhz", c.smClockMhz},
                                  {"memory_clock_mhz", c.memoryClockMhz},
                                  {"power_w", c.powerWatts},
                                  {"power_averaged", c.powerAveraged},
                                  {"power_limit_w", c.powerLimitWatts},
                                  {"temperature_c", c.temperatureC},
                                  {"throttle", c.throttle}});
    Json skipped = Json::array();
    for (const Skipped& s : d.skipped)
        skipped.push_back(Json{{"id", s.id}, {"reason", s.reason}});
    return Json{
        {"index", d.index},      {"name", d.name},
        {"uuid", d.uuid},        {"compute_capability", d.computeCapability},
        {"sms", d.sms},          {"memory_bytes", d.memoryBytes},
        {"l2_bytes", d.l2Bytes}, {"clocks_mhz", Json{{"sm_max", d.smClockMaxMhz}, {"memory_max", d.memoryClockMaxMhz}}},
        {"results", results},    {"points", points},
        {"skipped", skipped},    {"conditions", conditions}};
}

} // namespace

std::string toJson(const Profile& p)
{
    Json devices = Json::array();
    for (const DeviceReport& d : p.devices)
        devices.push_back(device(d));
    Json links = Json::array();
    for (const Link& l : p.links) {
        Json pts = Json::array();
        for (const LinkPoint& lp : l.points)
            pts.push_back(Json{{"bytes", lp.bytes}, {"seconds", lp.seconds}, {"algbw", lp.algbw}, {"busbw", lp.busbw}});
        links.push_back(Json{{"id", l.id}, {"ranks", l.ranks}, {"points", pts}});
    }
    const Json doc{
        {"schema", kSchema},
        {"status", statusName(p.status)},
        {"message", p.message},
        {"probe", Json{{"version", p.probeVersion},
                       {"mode", p.mode},
                       {"started_utc", p.startedUtc},
                       {"elapsed_seconds", p.elapsedSeconds}}},
        {"runtime_version", p.runtimeVersion},
        {"driver_version", p.driverVersion},
        {"libraries", Json{{"cublaslt", library(p.cublaslt)}, {"nccl", library(p.nccl)}, {"nvml", library(p.nvml)}}},
        {"devices", devices},
        {"links", links}};
    return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string formatUuid(const unsigned char bytes[16])
{
    static const char* hex = "0123456789abcdef";
    std::string s = "GPU-";
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            s += '-';
        s += hex[bytes[i] >> 4];
        s += hex[bytes[i] & 15];
    }
    return s;
}

std::string isoUtc(long long secondsSinceEpoch)
{
    const std::time_t t = static_cast<std::time_t>(secondsSinceEpoch);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

bool writeFileAtomically(const std::string& path, const std::string& text, std::string& error)
{
    std::string tmp = path + ".tmp.XXXXXX";
    const int fd = mkstemp(tmp.data());
    if (fd < 0) {
        error = "cannot write " + path + ": " + std::strerror(errno);
        return false;
    }
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            error = "cannot write " + path + ": " + std::strerror(errno);
            ::close(fd);
            ::unlink(tmp.c_str());
            return false;
        }
        done += static_cast<size_t>(w);
    }
    ::fchmod(fd, 0644); // mkstemp creates 0600; a profile is an ordinary document
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        error = "cannot write " + path + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "cannot write " + path + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

} // namespace napkin::gpu
