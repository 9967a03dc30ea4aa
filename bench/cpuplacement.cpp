// SPDX-License-Identifier: Apache-2.0
#include "cpuplacement.h"

#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace replhost::bench {

bool pinThread(pid_t tid, const std::vector<int> &cpus)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cpus)
        CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof set, &set) == 0;
}

int pinProcessTree(pid_t pid, const std::vector<int> &cpus)
{
    int pinned = 0;
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto &task : std::filesystem::directory_iterator(tasks, ec)) {
        const pid_t tid = pid_t(std::atoi(task.path().filename().c_str()));
        if (tid > 0 && pinThread(tid, cpus))
            ++pinned;
        std::ifstream children(task.path() / "children");
        for (pid_t child; children >> child;)
            pinned += pinProcessTree(child, cpus);
    }
    return pinned;
}

} // namespace replhost::bench
