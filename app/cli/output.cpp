// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace napkin::cli {

std::string writeFileAtomically(const std::string& path, const std::string& content)
{
    std::string tmpl = path + ".tmp.XXXXXX";
    const int fd = mkstemp(tmpl.data());
    if (fd < 0)
        return "cannot write " + path + ": " + std::strerror(errno);
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(tmpl.c_str());
            std::string message = "cannot write " + path;
            message += ": ";
            message += why;
            return message;
        }
        p += n;
        left -= std::size_t(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        return "cannot write " + path + ": " + why;
    }
    ::chmod(tmpl.c_str(), 0644);
    if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        return "cannot write " + path + ": " + why;
    }
    return {};
}

} // namespace napkin::cli
