// SPDX-License-Identifier: Apache-2.0
#include "siblingexecutable.h"

#include <Poco/Path.h>

#include <algorithm>
#include <cstdlib>
#include <unistd.h>

namespace replhost::cli {

namespace {

bool isExecutable(const std::string &path)
{
    return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

} // namespace

std::string siblingExecutable(const std::string &name)
{
    char self[4096];
    const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (length > 0) {
        const std::string beside = Poco::Path(std::string(self, size_t(length))).parent().toString() + name;
        if (isExecutable(beside))
            return beside;
    }
    const char *path = std::getenv("PATH");
    const std::string directories = path ? path : "";
    size_t start = 0;
    while (start <= directories.size()) {
        const size_t end = std::min(directories.find(':', start), directories.size());
        const std::string directory = directories.substr(start, end - start);
        if (!directory.empty() && isExecutable(directory + "/" + name))
            return directory + "/" + name;
        start = end + 1;
    }
    return {};
}

} // namespace replhost::cli
