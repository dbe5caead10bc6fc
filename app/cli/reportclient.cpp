// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "reportclient.h"

#include "cli.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <vector>

extern char** environ;

namespace napkin::cli::detail {

namespace {

bool isExecutable(const std::string& path)
{
    struct stat st {};
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string ownDirectory()
{
    std::array<char, 4096> buf{};
    const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    if (n <= 0)
        return {};
    std::string path(buf.data(), std::size_t(n));
    return path.substr(0, path.rfind('/'));
}

// The request goes through a private temporary file, napkin-report's messages through a pipe.
struct TempFile {
    std::string path;
    ~TempFile()
    {
        if (!path.empty())
            ::unlink(path.c_str());
    }
};

bool writeRequest(const nlohmann::json& request, TempFile& file, std::string& why)
{
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/napkin-report-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
        why =
            "cannot create a temporary file in " + pattern.substr(0, pattern.rfind('/')) + ": " + std::strerror(errno);
        return false;
    }
    file.path = name.data();
    const std::string text = request.dump();
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            why = "cannot write " + file.path + ": " + std::strerror(errno);
            ::close(fd);
            return false;
        }
        done += std::size_t(n);
    }
    ::close(fd);
    return true;
}

} // namespace

std::string findReportHelper(std::string* looked)
{
    if (const char* env = std::getenv("NAPKIN_REPORT"); env && *env) {
        if (looked)
            *looked = std::string("NAPKIN_REPORT=") + env;
        return isExecutable(env) ? std::string(env) : std::string();
    }
    const std::string dir = ownDirectory();
    // NAPKIN_RELATIVE_LIBEXEC: from the installed bin/ to libexec/napkin (CMake's GNUInstallDirs).
    const std::vector<std::string> candidates{dir + "/" NAPKIN_RELATIVE_LIBEXEC "/napkin-report",
                                              dir + "/../report/napkin-report"};
    std::string list;
    for (const auto& c : candidates) {
        list += (list.empty() ? "" : ", ") + c;
        if (isExecutable(c)) {
            if (looked)
                *looked = list;
            return c;
        }
    }
    if (looked)
        *looked = list;
    return {};
}

int runReportHelper(const nlohmann::json& request, std::ostream& err)
{
    std::string looked;
    const std::string helper = findReportHelper(&looked);
    if (helper.empty()) {
        err << "error: this format needs napkin-report, Napkin's report writer, and it was not found (looked for "
            << looked << "); install Napkin with its libexec/napkin/ folder or set NAPKIN_REPORT to its path\n";
        return InternalError;
    }
    TempFile file;
    std::string why;
    if (!writeRequest(request, file, why)) {
        err << "error: " << why << "\n";
        return InternalError;
    }
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
        err << "error: cannot start " << helper << ": " << std::strerror(errno) << "\n";
        return InternalError;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDERR_FILENO);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char*> argv{const_cast<char*>(helper.c_str()), const_cast<char*>(file.path.c_str()), nullptr};
    pid_t pid = 0;
    const int spawned = ::posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipeFds[1]);
    if (spawned != 0) {
        ::close(pipeFds[0]);
        err << "error: cannot start " << helper << ": " << std::strerror(spawned) << "\n";
        return InternalError;
    }
    std::array<char, 4096> buf{};
    for (;;) {
        const ssize_t n = ::read(pipeFds[0], buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        err.write(buf.data(), n);
    }
    ::close(pipeFds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    err << "error: " << helper << " stopped by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << "\n";
    return InternalError;
}

} // namespace napkin::cli::detail
